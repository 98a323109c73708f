/*
 * fuzz_nats.c — the NATS protocol reader of stores/nats/nats_link.c: everything
 * a server sends after the handshake (INFO, +OK, PING, PONG, -ERR, MSG,
 * HMSG, no-responders status, answers to other requests), read the way the
 * store reads it, through nats_link_request.
 *
 * The parser itself is stores/nats/nats_codec.c (its table of cases is
 * test/remote/nats_codec_test.c); what the link does with each thing it
 * reads (next_in: PING answered, answers to other requests dropped, the
 * deadline) is static in nats_link.c and only reached through a link with a
 * socket.  So the link is handed one end
 * of a socketpair, as if connected (conn.fd, pid and inbox set, as
 * nats_link_connect leaves them; no handshake, no TCP), and a thread plays
 * the server on the other end: it writes the input, closes its sending side
 * and keeps reading whatever the link sends.  Nothing in nats_link.c is
 * changed or copied.  Not reached this way: the handshake (read_info,
 * CONNECT, the PONG wait), connect and reconnect (nservers is 0, so a link
 * whose connection failed stays closed), and nats.c's use of the answers
 * (static; the JSON it reads is fuzz_json.c's).
 *
 * Beyond "no crash, no leak, no read past the buffer", each input checks:
 *
 *   answer     AN_OK comes with a NUL-terminated answer whose text is in
 *              the input, from an input that holds the request's reply
 *              subject; any failure comes with no answer, and a known code.
 *   sent       the link sends nothing but its own requests ("PUB subject
 *              _INBOX.fuzz.N 2" and the body, N counting up from 1) and
 *              "PONG": no input makes it write anything else, and it never
 *              sends more PONGs than the input has lines starting with PING.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"
#include "nats_link.h"
#include "store.h"

#define SUBJECT "$JS.API.fuzz"
#define BODY "{}"
/* What the link may send, kept up to this much. */
#define SENT_MAX (1 << 20)

static const an_store_methods methods = {.version = AN_STORE_VERSION, .name = "nats"};

/* What the link sent, for check_sent: one buffer for every input. */
static char sent_buf[SENT_MAX];

/* The server's end of the socketpair. */
typedef struct server
{
	int			fd;
	const uint8_t *data;
	size_t		size;
	char	   *sent;
	size_t		sentlen;
} server;

/* Write the input, then read what the link sends until it closes its end. */
static void
serve(server *sv)
{
	size_t		off = 0;
	int			writing = 1;

	if (sv->size == 0)
	{
		shutdown(sv->fd, SHUT_WR);
		writing = 0;
	}
	for (;;)
	{
		struct pollfd p = {sv->fd, POLLIN | (writing ? POLLOUT : 0), 0};
		ssize_t		n;

		if (poll(&p, 1, 10000) <= 0)
			break;
		if (writing && (p.revents & POLLOUT))
		{
			n = send(sv->fd, sv->data + off, sv->size - off, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n > 0)
				off += (size_t) n;
			if ((n < 0 && errno != EAGAIN && errno != EINTR) || off == sv->size)
			{
				shutdown(sv->fd, SHUT_WR);
				writing = 0;
			}
		}
		if (p.revents & (POLLIN | POLLHUP | POLLERR))
		{
			char		buf[4096];

			n = recv(sv->fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				break;
			if (n > 0 && sv->sentlen + (size_t) n <= SENT_MAX)
			{
				memcpy(sv->sent + sv->sentlen, buf, (size_t) n);
				sv->sentlen += (size_t) n;
			}
		}
	}
}

/*
 * The server thread lives as long as the process and serves one input at a
 * time: a thread per input would cost more than the input's own work.
 */
static server the_server;
static sem_t serve_start,
			serve_done;

static void *
server_thread(void *arg)
{
	(void) arg;
	for (;;)
	{
		while (sem_wait(&serve_start) != 0)
			;
		serve(&the_server);
		sem_post(&serve_done);
	}
	return NULL;
}

static void
start_server_thread(void)
{
	static int	started;
	pthread_t	th;

	if (started)
		return;
	if (sem_init(&serve_start, 0, 0) != 0 || sem_init(&serve_done, 0, 0) != 0 ||
		pthread_create(&th, NULL, server_thread, NULL) != 0)
		abort();
	pthread_detach(th);
	started = 1;
}

/* Lines of the input that start with PING, in any case: the most PONGs allowed. */
static size_t
ping_lines(const uint8_t *data, size_t size)
{
	size_t		n = 0;

	for (size_t i = 0; i + 4 <= size; i++)
		if ((i == 0 || data[i - 1] == '\n') && strncasecmp((const char *) data + i, "PING", 4) == 0)
			n++;
	return n;
}

/* What the link sent is its requests and PONGs only (see the header). */
static void
check_sent(const char *s, size_t len, size_t pings)
{
	size_t		pongs = 0;
	unsigned	req = 0;

	while (len > 0)
	{
		char		pub[128];
		size_t		n;

		if (len >= 6 && memcmp(s, "PONG\r\n", 6) == 0)
		{
			pongs++;
			s += 6;
			len -= 6;
			continue;
		}
		n = (size_t) snprintf(pub, sizeof(pub), "PUB %s _INBOX.fuzz.%u %zu\r\n%s\r\n", SUBJECT, ++req,
							  strlen(BODY), BODY);
		FUZZ_CHECK(len >= n && memcmp(s, pub, n) == 0, "the link sent \"%.*s\", not request %u or PONG",
				   (int) (len < 80 ? len : 80), s, req);
		s += n;
		len -= n;
	}
	FUZZ_CHECK(req >= 1, "the link sent no request");
	FUZZ_CHECK(pongs <= pings, "%zu PONGs for %zu PINGs", pongs, pings);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	an_store	st;
	nats_link	l;
	an_deadline d;
	server	   *sv = &the_server;
	int			fds[2];
	char	   *reply = NULL;
	int			rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
		abort();
	start_server_thread();
	sv->fd = fds[1];
	sv->data = data;
	sv->size = size;
	sv->sentlen = 0;
	sv->sent = sent_buf;
	sem_post(&serve_start);

	an_store_init(&st, &methods, NULL);
	nats_link_init(&l);
	snprintf(l.who, sizeof(l.who), "NATS at nats://fuzz");
	/* Connected, as nats_link_connect leaves a link after the handshake. */
	l.conn.fd = fds[0];
	an_fork_own(&l.proc);
	snprintf(l.inbox, sizeof(l.inbox), "_INBOX.fuzz");
	/*
	 * A quarter of 160 ms is less than one wait slice, so a no-responders
	 * answer fails at once instead of asking again after a sleep.
	 */
	an_deadline_start(&d, 160);
	rc = nats_link_request(&st, &l, &d, "the fuzz request", SUBJECT, NULL, BODY, "nobody listens", &reply);
	nats_link_close(&l);
	while (sem_wait(&serve_done) != 0)
		;
	close(fds[1]);

	FUZZ_CHECK(rc == AN_OK || rc == AN_E_CONNECT || rc == AN_E_STORE || rc == AN_E_AUTH ||
			   rc == AN_E_CONFIG || rc == AN_E_TIMEOUT || rc == AN_E_NOMEM, "rc %d", rc);
	if (rc == AN_OK)
	{
		FUZZ_CHECK(reply != NULL, "AN_OK without an answer");
		FUZZ_CHECK(memmem(data, size, "_INBOX.fuzz.", 12) != NULL, "an answer without its reply subject");
		FUZZ_CHECK(memmem(data, size, reply, strlen(reply)) != NULL, "answer \"%.80s\" is not in the input", reply);
	}
	else
		FUZZ_CHECK(reply == NULL, "a failure (%d) with an answer", rc);
	check_sent(sv->sent, sv->sentlen, ping_lines(data, size));
	free(reply);
	return 0;
}
