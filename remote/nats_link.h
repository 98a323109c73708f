/*
 * nats_link.h — one connection to a NATS server, and requests on it whose
 * wait is bounded and cancellable.
 *
 * nats.c runs its own threads (reader, flusher, reconnect timers).  This
 * file uses only its synchronous calls; no callback is installed, so those
 * threads never run any code of ours or of the host.  A request is a
 * publish with a reply subject unique to it (<inbox>.<n>) on one wildcard
 * subscription opened with the connection; the wait for the answer is
 * natsSubscription_NextMsg in short slices, so a query cancel is noticed
 * within AN_WAIT_SLICE_MS, and an answer to an earlier, abandoned request
 * is recognised by its subject and dropped.
 */
#ifndef ANARCHON_NATS_LINK_H
#define ANARCHON_NATS_LINK_H

#include <nats/nats.h>

#include "wait.h"

typedef struct nats_link
{
	natsConnection *nc;          /* NULL when not connected */
	natsSubscription *sub;       /* <inbox>.* */
	char		inbox[96];
	uint64_t	nreq;            /* requests sent, for unique reply subjects */
	char		who[160];        /* "NATS at nats://host:port", for messages */
} nats_link;

/*
 * Connect to host:port (token may be NULL) within the deadline's time.
 * Fails st with AN_E_AUTH, AN_E_CONNECT or AN_E_TIMEOUT.
 */
int			nats_link_open(an_store *st, nats_link *l, const char *host, int port,
						   const char *token, const an_deadline *d);

/* Close and free; the link can be opened again. */
void		nats_link_close(nats_link *l);

/*
 * Send body to subject (with a Nats-Msg-Id header when msgid is not NULL)
 * and wait for the answer until the deadline.  On AN_OK *reply holds the
 * answer's data, NUL-terminated, to be freed with free().  A "no responders"
 * answer fails st with AN_E_CONFIG and the text of noresp.
 */
int			nats_link_request(an_store *st, nats_link *l, const an_deadline *d,
							  const char *what, const char *subject, const char *msgid,
							  const char *body, const char *noresp, char **reply);

#endif							/* ANARCHON_NATS_LINK_H */
