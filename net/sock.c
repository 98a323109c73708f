/*
 * sock.c — bounded, cancellable TCP I/O (see sock.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sock.h"

/* Wait until fd is ready for events; fails st on deadline or cancel. */
static int
wait_fd(an_store *st, const char *who, int fd, short events, const an_deadline *d,
		const char *what)
{
	return an_wait_socket(st, d, who, what, fd, events == POLLOUT);
}

/* One address of the list: a non-blocking connect, waited for. */
static int
connect_one(an_store *st, const char *who, const struct addrinfo *ai, const an_deadline *d,
			int *fd)
{
	int			s = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	int			soerr = 0;
	socklen_t	sl = sizeof(soerr);
	int			rc;

	if (s < 0)
		return an_store_fail(st, AN_E_CONNECT, "could not connect to %s: %s", who, strerror(errno));
	if (connect(s, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS)
	{
		rc = an_store_fail(st, AN_E_CONNECT, "could not connect to %s: %s", who, strerror(errno));
		close(s);
		return rc;
	}
	if ((rc = wait_fd(st, who, s, POLLOUT, d, "the connection")) != AN_OK)
	{
		if (rc == AN_E_TIMEOUT)
			an_store_fail(st, AN_E_TIMEOUT, "could not connect to %s within timeout_ms (%lld ms)",
						  who, (long long) d->timeout_ms);
		close(s);
		return rc;
	}
	if (getsockopt(s, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
		soerr = errno;
	if (soerr != 0)
	{
		close(s);
		return an_store_fail(st, AN_E_CONNECT, "could not connect to %s: %s", who, strerror(soerr));
	}
	*fd = s;
	return AN_OK;
}

int
an_sock_connect(an_store *st, const char *who, const char *host, int port,
				const an_deadline *d, int *fd)
{
	struct addrinfo hints;
	struct addrinfo *res = NULL;
	char		service[16];
	int			rc = AN_E_CONNECT;
	int			gai;

	*fd = -1;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(service, sizeof(service), "%d", port);
	if ((gai = getaddrinfo(host, service, &hints, &res)) != 0)
		return an_store_fail(st, AN_E_CONNECT, "could not connect to %s: %s", who, gai_strerror(gai));
	/* Every address in turn, as long as time is left; the last failure is reported. */
	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next)
	{
		an_store_clear(st);
		if ((rc = connect_one(st, who, ai, d, fd)) == AN_OK || rc == AN_E_CANCELED || rc == AN_E_TIMEOUT)
			break;
	}
	freeaddrinfo(res);
	return rc;
}

int
an_sock_send(an_store *st, const char *who, int fd, const char *buf, size_t len,
			 const an_deadline *d, const char *what)
{
	while (len > 0)
	{
		ssize_t		n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		int			rc;

		if (n > 0)
		{
			buf += n;
			len -= (size_t) n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		{
			if ((rc = wait_fd(st, who, fd, POLLOUT, d, what)) != AN_OK)
				return rc;
			continue;
		}
		return an_store_fail(st, AN_E_CONNECT, "lost the connection to %s while sending %s: %s",
							 who, what, n < 0 ? strerror(errno) : "nothing could be sent");
	}
	return AN_OK;
}

int
an_sock_recv(an_store *st, const char *who, int fd, char *buf, size_t cap, size_t *got,
			 const an_deadline *d, const char *what)
{
	*got = 0;
	for (;;)
	{
		ssize_t		n;
		int			slice;
		int			rc;

		/*
		 * The deadline and the host's cancel are asked before every read, not
		 * only when the socket is silent: a server that never pauses (endless
		 * INFO or PING, a flood of unrelated messages, a reply dripped a byte
		 * at a time) would otherwise keep the caller here past timeout_ms.
		 */
		if ((rc = an_wait_tick(st, d, who, what, &slice)) != AN_OK)
			return rc;
		n = recv(fd, buf, cap, MSG_DONTWAIT);
		if (n > 0)
		{
			*got = (size_t) n;
			return AN_OK;
		}
		if (n == 0)
			return an_store_fail(st, AN_E_CONNECT, "lost the connection to %s while waiting for %s: the server closed it",
								 who, what);
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return an_store_fail(st, AN_E_CONNECT, "lost the connection to %s while waiting for %s: %s",
								 who, what, strerror(errno));
		if ((rc = wait_fd(st, who, fd, POLLIN, d, what)) != AN_OK)
			return rc;
	}
}
