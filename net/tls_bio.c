/*
 * tls_bio.c — a socket BIO for OpenSSL whose write never raises SIGPIPE
 * (see tls_bio.h).
 *
 * A BIO of its own, not OpenSSL's socket BIO with its write replaced: the
 * accessors that would copy the socket BIO's other methods are deprecated
 * since OpenSSL 3.5.  It does what a non-blocking socket BIO must: read and
 * write with the retry flags set on EAGAIN, hold the descriptor (BIO_set_fd,
 * BIO_get_fd), and answer flush.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tls_bio.h"

static BIO_METHOD *method;
static pthread_once_t method_once = PTHREAD_ONCE_INIT;

static int
fd_of(BIO *b)
{
	return (int) (intptr_t) BIO_get_data(b);
}

/* A call that would block: tell OpenSSL to retry it (the caller waits). */
static int
retry(int rc, BIO *b, int writing)
{
	if (rc < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
	{
		if (writing)
			BIO_set_retry_write(b);
		else
			BIO_set_retry_read(b);
	}
	return rc;
}

static int
bio_write(BIO *b, const char *buf, int len)
{
	BIO_clear_retry_flags(b);
	errno = 0;
	return retry((int) send(fd_of(b), buf, (size_t) len, MSG_NOSIGNAL), b, 1);
}

/*
 * The end of the stream is remembered as OpenSSL's socket BIO does: OpenSSL
 * 3 asks BIO_eof to tell a peer that closed the connection ("unexpected eof
 * while reading") from other failures.
 */
static int
bio_read(BIO *b, char *buf, int len)
{
	int			n;

	BIO_clear_retry_flags(b);
	errno = 0;
	n = retry((int) recv(fd_of(b), buf, (size_t) len, 0), b, 0);
#ifdef BIO_FLAGS_IN_EOF
	if (n == 0 && len > 0)
		BIO_set_flags(b, BIO_FLAGS_IN_EOF);
#endif
	return n;
}

static int
bio_puts(BIO *b, const char *s)
{
	size_t		n = 0;

	while (s[n])
		n++;
	return bio_write(b, s, (int) n);
}

static long
bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	switch (cmd)
	{
		case BIO_C_SET_FD:
			BIO_set_data(b, (void *) (intptr_t) *(int *) ptr);
			BIO_set_shutdown(b, (int) num);
			BIO_set_init(b, 1);
			return 1;
		case BIO_C_GET_FD:
			if (!BIO_get_init(b))
				return -1;
			if (ptr != NULL)
				*(int *) ptr = fd_of(b);
			return fd_of(b);
		case BIO_CTRL_GET_CLOSE:
			return BIO_get_shutdown(b);
		case BIO_CTRL_SET_CLOSE:
			BIO_set_shutdown(b, (int) num);
			return 1;
		case BIO_CTRL_DUP:
		case BIO_CTRL_FLUSH:
			return 1;
#ifdef BIO_FLAGS_IN_EOF
		case BIO_CTRL_EOF:
			return BIO_test_flags(b, BIO_FLAGS_IN_EOF) != 0;
#endif
		default:
			return 0;
	}
}

static int
bio_create(BIO *b)
{
	BIO_set_data(b, (void *) (intptr_t) -1);
	BIO_set_init(b, 0);
	return 1;
}

static int
bio_destroy(BIO *b)
{
	if (b == NULL)
		return 0;
	if (BIO_get_shutdown(b) && BIO_get_init(b) && fd_of(b) >= 0)
		close(fd_of(b));
	BIO_set_init(b, 0);
	return 1;
}

/* Made once per process and kept: every BIO made from it points to it. */
static void
make_method(void)
{
	int			type = BIO_get_new_index();
	BIO_METHOD *m;

	if (type == -1 ||
		(m = BIO_meth_new(type | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR, "anarchon socket")) == NULL)
		return;
	if (!BIO_meth_set_write(m, bio_write) || !BIO_meth_set_read(m, bio_read) ||
		!BIO_meth_set_puts(m, bio_puts) || !BIO_meth_set_ctrl(m, bio_ctrl) ||
		!BIO_meth_set_create(m, bio_create) || !BIO_meth_set_destroy(m, bio_destroy))
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
