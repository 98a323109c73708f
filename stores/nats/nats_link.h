/*
 * nats_link.h — one connection to a NATS server, spoken directly (the NATS
 * client protocol over a TCP socket), and requests on it whose wait is
 * bounded and cancellable.
 *
 * Why not nats.c: that library keeps process-wide state (its inbox name
 * generator, a garbage collector, timer and callback threads) that a forked
 * child inherits half-alive — every child drew the same inbox names, so
 * JetStream's answers went to the wrong processes and several were told
 * `won` for one slot; the collector thread does not exist in the child, so
 * every message it frees would leak.  The store needs little of the
 * protocol: CONNECT, one subscription for answers, PUB/HPUB with a reply
 * subject, and reading MSG/HMSG/PING.  Spoken here it has no threads and no
 * global state, so a child simply connects anew (fork.h), and a PostgreSQL
 * backend runs no thread of a library.
 *
 * A request is a publish with a reply subject unique to it (<inbox>.<n>,
 * the inbox drawn from the kernel's random source at every connect) on the
 * connection's one subscription <inbox>.*; an answer to an earlier request
 * that was given up is recognised by its subject and dropped.  A request on a
 * kept connection that turns out to be broken (the server restarted, or
 * dropped us as idle) is sent once more on a new connection within the same
 * deadline: every request of the store is safe to repeat (a claim carries
 * the same Nats-Msg-Id and token, so a repeat of a stored claim is found to
 * be our own).  A timeout or cancel closes the connection.
 */
#ifndef ANARCHON_NATS_LINK_H
#define ANARCHON_NATS_LINK_H

#include <stdint.h>
#include <sys/types.h>

#include "conn.h"
#include "fork.h"
#include "nats_auth.h"
#include "nats_codec.h"
#include "rotate.h"


typedef struct nats_link
{
	/*
	 * where to connect: set by the store before the first request.  The
	 * servers of a cluster are tried in turn from the last one that
	 * answered, so a link goes on through another when its server is gone.
	 */
	const char *const *hosts;
	const int  *ports;
	an_rotation rot;             /* the servers' count, and the one tried first */
	const nats_auth *auth;       /* the credentials, sent when the server asks */
	char		who[160];        /* "NATS at nats://host:port", for messages */

	/*
	 * TLS: tls_want (tls:// or a TLS parameter) refuses a server that does
	 * not offer it; a server whose INFO says tls_required gets it anyway,
	 * as every NATS client does.  tls_first: the handshake comes before
	 * the server's INFO (the server's handshake_first).  tls is made from
	 * tlscfg at the first TLS connection and kept until the store closes,
	 * so the files are read once.
	 */
	int			tls_want;
	int			tls_first;
	an_tls_config tlscfg;
	an_tls_ctx *tls;

	an_conn		conn;            /* conn.fd is -1 when not connected */
	an_fork_mark proc;        /* the process that connected it (fork.h) */
	char		inbox[48];       /* _INBOX.<32 hex digits> */
	uint64_t	nreq;            /* requests sent, for unique reply subjects */
	char	   *buf;             /* bytes received and not yet parsed */
	size_t		len;
	size_t		cap;
} nats_link;

/* A link that is not connected; hosts, ports, auth, TLS and who are set after. */
void		nats_link_init(nats_link *l);

/*
 * Connect unless connected (a parent's connection is forgotten first): to
 * the current server, else to each other in turn while the deadline lasts;
 * the last one's error when none answers.
 */
int			nats_link_connect(an_store *st, nats_link *l, const an_deadline *d);

/*
 * Close and free the connection; the link can connect again.  A parent's
 * connection (fork.h) is closed without a word on it.
 */
void		nats_link_close(nats_link *l);

/* Close, and free the TLS settings: the link is done. */
void		nats_link_free(nats_link *l);

/*
 * Send body to subject (with a Nats-Msg-Id header when msgid is not NULL)
 * and wait for the answer until the deadline, connecting first if needed.
 * On AN_OK *reply holds the answer's data, NUL-terminated, to be freed with
 * free().  A "no responders" answer is asked again every slice while a
 * quarter of the deadline lasts (a stream another instance has just created
 * can take a moment to listen; nothing was stored, so asking again is
 * safe), then fails st with AN_E_CONFIG and the text of noresp.
 */
int			nats_link_request(an_store *st, nats_link *l, const an_deadline *d,
							  const char *what, const char *subject, const char *msgid,
							  const char *body, const char *noresp, char **reply);

#endif							/* ANARCHON_NATS_LINK_H */
