/*
 * tls_bio.c — OpenSSL's socket BIO with a write that never raises SIGPIPE
 * (see tls_bio.h).
 */
#include <errno.h>
#include <pthread.h>
#include <sys/socket.h>

#include "tls_bio.h"

static BIO_METHOD *method;
static pthread_once_t method_once = PTHREAD_ONCE_INIT;

static int
nosignal_write(BIO *b, const char *buf, int len)
{
	int			fd = -1;
	ssize_t		n;

	BIO_get_fd(b, &fd);
	BIO_clear_retry_flags(b);
	errno = 0;
	n = send(fd, buf, (size_t) len, MSG_NOSIGNAL);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		BIO_set_retry_write(b);
	return (int) n;
}

/*
 * Made once per process and kept: OpenSSL holds a pointer to it in every
 * BIO made from it.  Everything but the write is the socket BIO's own, so
 * reads, the descriptor and the retry rules stay OpenSSL's.
 */
static void
make_method(void)
{
	const BIO_METHOD *sock = BIO_s_socket();
	BIO_METHOD *m = BIO_meth_new(BIO_TYPE_SOCKET, "anarchon socket");

	if (m == NULL)
		return;
	if (!BIO_meth_set_write(m, nosignal_write) ||
		!BIO_meth_set_read(m, BIO_meth_get_read(sock)) ||
		!BIO_meth_set_puts(m, BIO_meth_get_puts(sock)) ||
		!BIO_meth_set_ctrl(m, BIO_meth_get_ctrl(sock)) ||
		!BIO_meth_set_create(m, BIO_meth_get_create(sock)) ||
		!BIO_meth_set_destroy(m, BIO_meth_get_destroy(sock)) ||
		!BIO_meth_set_callback_ctrl(m, BIO_meth_get_callback_ctrl(sock)))
	{
		BIO_meth_free(m);
		return;
	}
	method = m;
}

BIO *
an_tls_bio_new(int fd)
{
	BIO		   *b;

	if (pthread_once(&method_once, make_method) != 0 || method == NULL)
		return NULL;
	if ((b = BIO_new(method)) == NULL)
		return NULL;
	BIO_set_fd(b, fd, BIO_NOCLOSE);
	return b;
}
