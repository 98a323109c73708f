/*
 * conn.c — a connection that is plain or TLS behind one interface (conn.h).
 *
 * Built with or without OpenSSL: without it no store can make an an_tls_ctx
 * (a TLS URL is refused when it is read), so the TLS branches are never
 * taken and are compiled out.
 */
#include <unistd.h>

#include "conn.h"

int
an_conn_tls_new(an_store *st, const an_tls_config *cfg, const char *who, an_tls_ctx **out)
{
#ifdef AN_WITH_TLS
	return an_tls_ctx_new(st, cfg, who, out);
#else
	(void) cfg;
	*out = NULL;
	return an_store_fail(st, AN_E_CONFIG, "%s: this build of anarchon has no TLS", who);
#endif
}

void
an_conn_tls_free(an_tls_ctx *ctx)
{
#ifdef AN_WITH_TLS
	an_tls_ctx_free(ctx);
#else
	(void) ctx;
#endif
}

int
an_conn_open(an_store *st, const char *who, const char *host, int port,
			 an_tls_ctx *tls, const an_deadline *d, an_conn *c)
{
	int			rc;

	*c = AN_CONN_NONE;
	if ((rc = an_sock_connect(st, who, host, port, d, &c->fd)) != AN_OK)
		return rc;
	if (tls == NULL)
		return AN_OK;
	return an_conn_start_tls(st, who, c, tls, host, d);
}

int
an_conn_start_tls(an_store *st, const char *who, an_conn *c, an_tls_ctx *tls,
				  const char *host, const an_deadline *d)
{
#ifdef AN_WITH_TLS
	int			rc = an_tls_connect(st, tls, c->fd, host, d, who, &c->tls);

	if (rc != AN_OK)
		an_conn_close(c, 0);
	return rc;
#else
	(void) tls;
	(void) host;
	(void) d;
	an_conn_close(c, 0);
	return an_store_fail(st, AN_E_CONFIG, "%s needs TLS, and this build of anarchon has none", who);
#endif
}

int
an_conn_send(an_store *st, const char *who, an_conn *c, const char *buf, size_t len,
			 const an_deadline *d, const char *what)
{
#ifdef AN_WITH_TLS
	if (c->tls != NULL)
		return an_tls_send(st, c->tls, buf, len, d, who, what);
#endif
	return an_sock_send(st, who, c->fd, buf, len, d, what);
}

int
an_conn_recv(an_store *st, const char *who, an_conn *c, char *buf, size_t cap,
			 size_t *got, const an_deadline *d, const char *what)
{
#ifdef AN_WITH_TLS
	if (c->tls != NULL)
		return an_tls_recv(st, c->tls, buf, cap, got, d, who, what);
#endif
	return an_sock_recv(st, who, c->fd, buf, cap, got, d, what);
}

void
an_conn_close(an_conn *c, int notify)
{
#ifdef AN_WITH_TLS
	an_tls_free(c->tls, notify);
#else
	(void) notify;
#endif
	if (c->fd >= 0)
		close(c->fd);
	*c = AN_CONN_NONE;
}
