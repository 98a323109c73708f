/*
 * amqp_link.h — one AMQP 0-9-1 connection to RabbitMQ (rabbitmq-c), with a
 * confirm-mode channel and waits that are bounded and cancellable.
 *
 * rabbitmq-c's own RPC helpers, its login included, block until an answer
 * or their timeout, and their reads go on for as long as bytes keep coming
 * (a server that sends heartbeats without end is never timed out).  Here
 * the socket is read by this file alone, through the host's wait (wait.h),
 * so the deadline and a query cancel are asked before every read; a frame
 * is checked whole (type, size against the frame_max the login agreed on,
 * at most AMQP_LINK_FRAME_MAX, and its end octet) before rabbitmq-c decodes
 * it, so a frame announcing a gigabyte is refused before any of it is kept.
 * A channel error (the broker closes the channel,
 * e.g. 404 for a missing queue, 406 for a queue declared with other
 * arguments) is answered with close-ok and the channel is reopened at the
 * next call: the connection survives it.  A timeout, a cancel or a broken
 * socket drops the connection (its state is unknown); the next call
 * reconnects.  A forked child never uses its parent's connection (fork.h):
 * amqp_link_open and amqp_link_close forget one without sending anything on
 * it, so the parent's connection goes on.
 *
 * The connection to the broker is anarchon's an_conn (conn.h), plain or TLS
 * (amqps://), never rabbitmq-c's socket: rabbitmq-c encodes what is sent
 * into one end of a local socket pair, and the link forwards those bytes to
 * the broker through an_conn within the deadline.  So rabbitmq-c never waits
 * on the network, its TLS socket (whose waits a cancel cannot end) is not
 * used, and every rabbitmq-c version works alike, since none of its private
 * socket interface is needed.
 */
#ifndef ANARCHON_AMQP_LINK_H
#define ANARCHON_AMQP_LINK_H

#include <sys/types.h>

#include "amqp_lib.h"

#include "conn.h"
#include "fork.h"

/*
 * The frame_max asked for at login, and so the most one frame may take:
 * RabbitMQ's default, and what anarchon's methods need many times over.
 */
#define AMQP_LINK_FRAME_MAX 131072

typedef struct amqp_link
{
	amqp_connection_state_t conn;	/* NULL when not connected */
	an_conn		net;             /* the broker's connection, plain or TLS (when conn) */
	int			feed;            /* our end of the pair rabbitmq-c writes into (when conn) */
	amqp_channel_t ch;           /* the channel in use, when chan_open */
	int			chan_open;       /* open and in confirm mode */
	uint64_t	next_tag;        /* delivery tag of the next publish on ch */
	uint16_t	last_code;       /* reply code of the last channel error, 0 if none */
	an_fork_mark proc;        /* the process that opened conn (fork.h) */
	unsigned char *in;           /* bytes read (AMQP_LINK_FRAME_MAX) */
	size_t		in_pos;          /* where the bytes not yet decoded begin */
	size_t		in_len;
	int			peer_closed;     /* the last read found the connection closed */
	char		who[160];        /* "RabbitMQ at amqp://host:port/vhost" */
} amqp_link;

typedef struct amqp_login_info
{
	const char *host;
	int			port;
	const char *vhost;
	const char *user;
	const char *password;        /* unused with EXTERNAL */
	an_tls_ctx *tls;             /* NULL: plaintext */
	int			external;        /* SASL EXTERNAL: the client certificate names the user */
} amqp_login_info;

/*
 * Is the link connected, by this process?  A connection of the parent of a
 * forked process is forgotten here (freed without a word to the broker) and
 * the answer is no.
 */
int			amqp_link_connected(amqp_link *l);

/*
 * Connect (with TLS when li->tls is set) and log in within the deadline;
 * AN_E_AUTH, AN_E_CONFIG (vhost), ...  A link all zeros is not connected.
 */
int			amqp_link_open(an_store *st, amqp_link *l, const amqp_login_info *li,
						   const an_deadline *d);

/*
 * Close politely (bounded by a short wait), then free; safe when closed.  A
 * parent's connection is only forgotten: the close frame would end it for
 * the parent too.
 */
void		amqp_link_close(amqp_link *l);

/* Open a channel in confirm mode unless one is open. */
int			amqp_link_channel(an_store *st, amqp_link *l, const an_deadline *d);

/*
 * Send a synchronous method on the channel and wait for its reply method
 * `expect`; *reply points into the connection's buffers until the next call.
 * A channel error fails st (l->last_code says which) and closes the channel.
 */
int			amqp_link_rpc(an_store *st, amqp_link *l, const an_deadline *d, const char *what,
						  amqp_method_number_t method, void *args,
						  amqp_method_number_t expect, void **reply);

/*
 * Publish body to the default exchange with routing key `queue`, persistent
 * and mandatory, and wait for its confirm, matched by delivery tag.  *acked
 * is 1 for an ack of a message that a queue took, 0 for a nack or for a
 * message returned unroutable (no such queue) before its ack.
 */
int			amqp_link_publish(an_store *st, amqp_link *l, const an_deadline *d,
							  const char *queue, const char *body, int *acked);

#endif							/* ANARCHON_AMQP_LINK_H */
