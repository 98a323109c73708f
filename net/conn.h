/*
 * conn.h — one connection to a server, plain or TLS, for every store that
 * owns its socket.
 *
 * The stores send and receive through an_conn and never ask which it is:
 * TLS plugs in here once (tls.h), and a plain connection is sock.h's.  Every
 * wait of either is bounded by the deadline and ended by the host's cancel.
 */
#ifndef ANARCHON_CONN_H
#define ANARCHON_CONN_H

#include <stddef.h>

#include "sock.h"
#include "tls.h"

typedef struct an_conn
{
	int			fd;              /* -1: not connected */
	an_tls	   *tls;             /* NULL: plaintext */
} an_conn;

#define AN_CONN_NONE ((an_conn) {-1, NULL})

/*
 * A store's TLS settings, made once when the store opens: as an_tls_ctx_new,
 * and AN_E_CONFIG naming libssl-dev in a build without OpenSSL.
 */
int			an_conn_tls_new(an_store *st, const an_tls_config *cfg, const char *who, an_tls_ctx **out);
void		an_conn_tls_free(an_tls_ctx *ctx);

/*
 * Connect to host:port; then, when tls is not NULL, run the handshake
 * (verifying the server as tls says).  On failure c stays AN_CONN_NONE.
 */
int			an_conn_open(an_store *st, const char *who, const char *host, int port,
						 an_tls_ctx *tls, const an_deadline *d, an_conn *c);

/*
 * Upgrade a plaintext connection to TLS, for protocols that first talk in
 * clear (NATS's INFO).  On failure the connection is closed.
 */
int			an_conn_start_tls(an_store *st, const char *who, an_conn *c, an_tls_ctx *tls,
							  const char *host, const an_deadline *d);

/* As an_sock_send and an_sock_recv, through TLS when the connection has it. */
int			an_conn_send(an_store *st, const char *who, an_conn *c, const char *buf, size_t len,
						 const an_deadline *d, const char *what);
int			an_conn_recv(an_store *st, const char *who, an_conn *c, char *buf, size_t cap,
						 size_t *got, const an_deadline *d, const char *what);

/*
 * Close, and leave c AN_CONN_NONE.  notify: send TLS's close alert if the
 * socket takes it at once; 0 in a forked child, whose connection state is a
 * copy of its parent's and must not speak on the parent's session.
 */
void		an_conn_close(an_conn *c, int notify);

#endif							/* ANARCHON_CONN_H */
