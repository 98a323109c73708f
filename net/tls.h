/*
 * tls.h — TLS on a socket of sock.h, with every wait bounded and cancellable.
 *
 * One implementation for the stores whose sockets the project owns, on
 * OpenSSL (which PostgreSQL itself links, so a backend loads no second TLS
 * library).  The socket stays non-blocking: when OpenSSL wants to read or
 * write, the wait is an_wait_socket's, so a deadline or the host's cancel
 * ends a handshake or a read as it ends a plain one.
 *
 * Verification is on unless the store's settings turn it off: the chain
 * against the system's CA bundle or the `ca` file, and the name the
 * connection was made to (or `servername`), as a host name or an IP address,
 * found in the certificate's subjectAltName only, as browsers do: the
 * subject's CN is never read, and a '*' of the certificate covers one whole
 * label (*.example.test is a.example.test, not a.b.example.test nor
 * example.test).
 */
#ifndef ANARCHON_TLS_H
#define ANARCHON_TLS_H

#include <stddef.h>

#include "wait.h"

typedef struct an_tls_config
{
	const char *ca;              /* PEM file of trusted CAs; NULL: the system's */
	const char *cert;            /* client certificate (PEM), for mutual TLS */
	const char *key;             /* its private key (PEM) */
	const char *servername;      /* SNI and the name verified; NULL: the host connected to */
	int			insecure;        /* nonzero: verify nothing (tests only) */
} an_tls_config;

/*
 * Why servername cannot be used, or NULL when it can: it must name one host
 * exactly.  A leading '.' (which X509_check_host reads as "any subdomain")
 * or a '*' anywhere is refused.  url_tls.c, so that a URL is refused when it
 * is read; an_tls_ctx_new asks again for callers that skip the URL.
 */
const char *an_tls_servername_refused(const char *name);

/* A store's TLS settings, made once: the CA, the client certificate and key. */
typedef struct an_tls_ctx an_tls_ctx;

/* One connection's TLS state. */
typedef struct an_tls an_tls;

/*
 * Load cfg (its files are read here, once): AN_E_CONFIG naming the file and
 * what was wrong with it.  `who` names the store in messages.
 */
int			an_tls_ctx_new(an_store *st, const an_tls_config *cfg, const char *who, an_tls_ctx **out);
void		an_tls_ctx_free(an_tls_ctx *ctx);

/*
 * Run the handshake on the connected socket fd to host within the deadline.
 * A refused certificate is AN_E_CONNECT with the reason ("certificate has
 * expired", "hostname mismatch"); a server that does not speak TLS too.
 */
int			an_tls_connect(an_store *st, an_tls_ctx *ctx, int fd, const char *host,
						   const an_deadline *d, const char *who, an_tls **out);

/* As an_sock_send and an_sock_recv (sock.h), through TLS. */
int			an_tls_send(an_store *st, an_tls *t, const char *buf, size_t len,
						const an_deadline *d, const char *who, const char *what);
int			an_tls_recv(an_store *st, an_tls *t, char *buf, size_t cap, size_t *got,
						const an_deadline *d, const char *who, const char *what);

/*
 * Free the connection's TLS state.  notify: send the close alert first if
 * the socket takes it at once (never waits); 0 after fork, when the
 * connection is the parent's and must be left alone.
 */
void		an_tls_free(an_tls *t, int notify);

#endif							/* ANARCHON_TLS_H */
