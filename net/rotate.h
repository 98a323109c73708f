/*
 * rotate.h — trying a store's servers in turn, and sending a call once more.
 *
 * Every network store that names several servers (NATS and RabbitMQ
 * clusters, Redis sentinels, the nodes asked for a Redis Cluster's slot map)
 * goes through an_rotate; each store supplies only "try server i within this
 * deadline".  The rules, the same for every store:
 *
 *   - Order: the server that answered last first, then the others in turn.
 *   - Time: each server gets its share of the time left (left / servers not
 *     yet tried; the last one gets all that is left), so a frozen server
 *     (whose kernel still accepts the connection) cannot use up the call.
 *   - At least one server is tried, even when the time is nearly up: a
 *     caller with no time left gets the server's own timeout message.
 *   - Stop: a cancel always ends the rotation; a store may also say that
 *     refused logins and configuration errors end it (AN_ROTATE_STOP_CONFIG:
 *     they are the same on every server) or that only a connection failure
 *     or a timeout goes on to the next server (AN_ROTATE_ONLY_NET).
 *   - Cursor: a server that answered is tried first next time; a server that
 *     failed is tried last next time.  When none answered the cursor moves
 *     past the first one tried (when every server was tried) or past the
 *     last one tried (when the rotation stopped early).
 *   - Message: a failure always comes with one.  No server at all, or none
 *     that could be tried, says so; a try that failed without a message gets
 *     "every <noun> failed".
 *
 * The four copies this replaces disagreed; the careful choice was kept: the
 * Sentinel and Cluster loops made no try when the time was already up (now
 * one try), NATS left the cursor on the first server when all failed and
 * Redis left it unchanged (now past the failed one, as RabbitMQ did).
 *
 * an_resend_once is the other shared rule: a call whose kept connection
 * dropped under it (the server restarted, a proxy cut it) is sent once more
 * on a new connection, within the same deadline; a timeout, a cancel or a
 * connection made for this call is never sent again.
 */
#ifndef ANARCHON_ROTATE_H
#define ANARCHON_ROTATE_H

#include "wait.h"

typedef struct an_rotation
{
	int			n;               /* servers */
	int			next;            /* the one tried first next time */
} an_rotation;

/* What a try may answer besides an an_error: this server is not to be tried now. */
#define AN_ROTATE_SKIP (-1)

#define AN_ROTATE_STOP_CONFIG 1  /* AN_E_CONFIG and AN_E_AUTH end the rotation */
#define AN_ROTATE_ONLY_NET    2  /* only AN_E_CONNECT and AN_E_TIMEOUT go on */

/* Try server i within share: AN_OK, an an_error (st failed), or AN_ROTATE_SKIP. */
typedef int (*an_try_server) (an_store *st, void *ctx, int i, const an_deadline *share);

/*
 * Try the servers of r in turn within d, as the header comment says.  who
 * names the store in messages ("redis store redis://h:6379/"), noun its
 * servers ("sentinel", "server", "node").
 */
int			an_rotate(an_store *st, an_rotation *r, const an_deadline *d, int flags,
					  an_try_server try_one, void *ctx, const char *who, const char *noun);

/* After a failure on a server that was connected: begin with the next one next time. */
void		an_rotation_failed(an_rotation *r);

/*
 * After a failed try of a call: 1 when it is to be sent once more (rc is
 * AN_E_CONNECT on a connection kept from before, and it is the first resend;
 * st is cleared), else 0.  *tries starts at 0.
 */
int			an_resend_once(an_store *st, int rc, int kept, int *tries);

#endif							/* ANARCHON_ROTATE_H */
