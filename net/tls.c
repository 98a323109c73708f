/*
 * tls.c — TLS on a non-blocking socket with OpenSSL (see tls.h).
 *
 * Every OpenSSL call runs on the non-blocking socket; SSL_ERROR_WANT_READ
 * and _WANT_WRITE become an_wait_socket, which is the host's wait, so the
 * deadline and a cancel end a TLS wait as they end any other.  Before each
 * call the error queue is cleared, because SSL_get_error reads it and a
 * stale entry from another connection of the same thread would be taken for
 * this one's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tls.h"
#include "tls_bio.h"
#include "tls_lib.h"

struct an_tls_ctx
{
	SSL_CTX    *ctx;
	char	   *servername;
	int			insecure;
};

struct an_tls
{
	SSL		   *ssl;
	int			fd;
	int			verifying;       /* in a handshake that verifies the server */
};

/* A key protected by a passphrase is refused, never prompted for on a terminal. */
static int
no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void) buf;
	(void) size;
	(void) rwflag;
	(void) u;
	return 0;
}

/* The reason OpenSSL gave last, or what the caller says when it gave none. */
static const char *
openssl_reason(const char *otherwise)
{
	unsigned long e = ERR_peek_last_error();
	const char *r;

	if (e == 0)
		return otherwise;
	/* OpenSSL 3 queues a failed socket call as a system error, with no reason string. */
	if (ERR_SYSTEM_ERROR(e))
		return strerror(ERR_GET_REASON(e));
	r = ERR_reason_error_string(e);
	return r ? r : otherwise;
}

/*
 * The errno of a connection that failed under OpenSSL (0: the peer closed
 * it), or -1 when the failure was TLS's own.  OpenSSL 3 queues the socket's
 * errno as a system error; older versions leave it in errno.
 */
static int
socket_errno(int e)
{
	unsigned long q = ERR_peek_last_error();

	if (e != SSL_ERROR_SYSCALL)
		return -1;
	if (q == 0)
		return errno;
	return ERR_SYSTEM_ERROR(q) ? ERR_GET_REASON(q) : -1;
}

/* A file of the settings that cannot be used: which, and why. */
static int
bad_file(an_store *st, const char *who, const char *option, const char *path, const char *why)
{
	an_store_fail(st, AN_E_CONFIG, "%s: the %s file \"%s\" cannot be used: %s", who, option, path, why);
	ERR_clear_error();
	return st->err.code;
}

/* fopen says why a file cannot be read better than OpenSSL does. */
static int
readable(an_store *st, const char *who, const char *option, const char *path)
{
	FILE	   *f = fopen(path, "r");

	if (f == NULL)
		return bad_file(st, who, option, path, strerror(errno));
	fclose(f);
	return AN_OK;
}

static int
load_files(an_store *st, SSL_CTX *ctx, const an_tls_config *cfg, const char *who)
{
	if (cfg->ca)
	{
		if (readable(st, who, "ca", cfg->ca) != AN_OK)
			return st->err.code;
		if (SSL_CTX_load_verify_locations(ctx, cfg->ca, NULL) != 1)
			return bad_file(st, who, "ca", cfg->ca, openssl_reason("no certificate in it"));
	}
	else if (SSL_CTX_set_default_verify_paths(ctx) != 1)
		return bad_file(st, who, "system CA", "(default)", openssl_reason("not found"));
	if ((cfg->cert == NULL) != (cfg->key == NULL))
		return an_store_fail(st, AN_E_CONFIG, "%s: a client certificate needs both cert and key", who);
	if (cfg->cert == NULL)
		return AN_OK;
	if (readable(st, who, "cert", cfg->cert) != AN_OK || readable(st, who, "key", cfg->key) != AN_OK)
		return st->err.code;
	if (SSL_CTX_use_certificate_chain_file(ctx, cfg->cert) != 1)
		return bad_file(st, who, "cert", cfg->cert, openssl_reason("no certificate in it"));
	if (SSL_CTX_use_PrivateKey_file(ctx, cfg->key, SSL_FILETYPE_PEM) != 1)
		return bad_file(st, who, "key", cfg->key, openssl_reason("no usable private key in it (a key with a passphrase is not supported)"));
	if (SSL_CTX_check_private_key(ctx) != 1)
		return bad_file(st, who, "key", cfg->key, "it is not the key of the cert file's certificate");
	return AN_OK;
}

int
an_tls_ctx_new(an_store *st, const an_tls_config *cfg, const char *who, an_tls_ctx **out)
{
	an_tls_ctx *t;

	*out = NULL;
	/* Every other function here is given what this one made: OpenSSL is loaded. */
	if (an_tls_lib_load(&st->err) != AN_OK)
		return st->err.code;
	t = calloc(1, sizeof(*t));
	ERR_clear_error();
	if (an_tls_servername_refused(cfg->servername) != NULL)
	{
		free(t);
		return an_store_fail(st, AN_E_CONFIG, "%s: servername \"%s\" must be one exact host name: %s", who,
							 cfg->servername, an_tls_servername_refused(cfg->servername));
	}
	if (t == NULL || (cfg->servername && (t->servername = strdup(cfg->servername)) == NULL))
	{
		an_tls_ctx_free(t);
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	}
	t->insecure = cfg->insecure;
	if ((t->ctx = SSL_CTX_new(TLS_client_method())) == NULL)
	{
		an_tls_ctx_free(t);
		return an_store_fail(st, AN_E_NOMEM, "%s: TLS could not be set up: %s", who, openssl_reason("out of memory"));
	}
	SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
	SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	/*
	 * Read what the socket has in one call, not a record's header and then
	 * its body: a reply costs one read, as in plaintext.  Bytes OpenSSL has
	 * buffered are always asked for first (an_tls_recv reads before it
	 * waits), so a buffered reply is never left waiting on the socket.
	 */
	SSL_CTX_set_read_ahead(t->ctx, 1);
	SSL_CTX_set_default_passwd_cb(t->ctx, no_passphrase);
	SSL_CTX_set_verify(t->ctx, t->insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, NULL);
	if (load_files(st, t->ctx, cfg, who) != AN_OK)
	{
		an_tls_ctx_free(t);
		return st->err.code;
	}
	*out = t;
	return AN_OK;
}

void
an_tls_ctx_free(an_tls_ctx *t)
{
	if (t == NULL)
		return;
	SSL_CTX_free(t->ctx);
	free(t->servername);
	free(t);
}

static int
is_ip(const char *name)
{
	unsigned char buf[16];

	return inet_pton(AF_INET, name, buf) == 1 || inet_pton(AF_INET6, name, buf) == 1;
}

/* The name to present (SNI, never an address) and to verify. */
static int
set_names(SSL *ssl, const char *name, int verify)
{
	if (!is_ip(name) && SSL_set_tlsext_host_name(ssl, name) != 1)
		return 0;
	if (!verify)
		return 1;
	/*
	 * The name is looked for in the subjectAltName only, never in the
	 * subject's CN (which OpenSSL reads when a certificate has no DNS name):
	 * a CN-only certificate is refused, as browsers and Go refuse it.  No
	 * opt-in: every publicly trusted certificate has carried a SAN since
	 * 2017, a private CA's can be reissued with one, and tests have
	 * insecure_skip_verify.  A '*' must be the whole leftmost label.
	 */
	SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS | X509_CHECK_FLAG_NEVER_CHECK_SUBJECT);
	if (is_ip(name))
		return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name) == 1;
	return SSL_set1_host(ssl, name) == 1;
}

/*
 * An OpenSSL call that did not complete: wait when it wants the socket
 * (AN_OK: call again), else fail st with what went wrong while `doing`.
 */
static int
after(an_store *st, an_tls *t, int ret, const an_deadline *d, const char *who, const char *doing)
{
	int			e = SSL_get_error(t->ssl, ret);
	int			sys;
	long		v;

	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return an_wait_socket(st, d, who, doing, t->fd, e == SSL_ERROR_WANT_WRITE);
	if (e == SSL_ERROR_ZERO_RETURN)
		return an_store_fail(st, AN_E_CONNECT, "lost the connection to %s during %s: the server closed it", who, doing);
	if (t->verifying && (v = SSL_get_verify_result(t->ssl)) != X509_V_OK)
		return an_store_fail(st, AN_E_CONNECT, "%s: the server's certificate was refused: %s",
							 who, X509_verify_cert_error_string(v));
	if ((sys = socket_errno(e)) >= 0)
		return an_store_fail(st, AN_E_CONNECT, "lost the connection to %s during %s: %s", who, doing,
							 sys ? strerror(sys) : "the server closed it");
	return an_store_fail(st, AN_E_CONNECT, "TLS with %s failed during %s: %s", who, doing,
						 openssl_reason("an error without a reason"));
}

int
an_tls_connect(an_store *st, an_tls_ctx *ctx, int fd, const char *host,
			   const an_deadline *d, const char *who, an_tls **out)
{
	an_tls	   *t = calloc(1, sizeof(*t));
	const char *name = ctx->servername ? ctx->servername : host;
	BIO		   *bio;
	int			rc = AN_OK;

	*out = NULL;
	ERR_clear_error();
	if (t == NULL || (t->ssl = SSL_new(ctx->ctx)) == NULL)
	{
		free(t);
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	}
	t->fd = fd;
	t->verifying = !ctx->insecure;
	if ((bio = an_tls_bio_new(fd)) == NULL)
	{
		an_tls_free(t, 0);
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	}
	/* The SSL owns the BIO from here, also when what follows fails. */
	SSL_set_bio(t->ssl, bio, bio);
	if (!set_names(t->ssl, name, !ctx->insecure))
	{
		an_tls_free(t, 0);
		return an_store_fail(st, AN_E_CONFIG, "%s: \"%s\" cannot be used as the TLS server name: %s",
							 who, name, openssl_reason("refused"));
	}
	for (;;)
	{
		int			ret;

		ERR_clear_error();
		errno = 0;
		if ((ret = SSL_connect(t->ssl)) == 1)
			break;
		if ((rc = after(st, t, ret, d, who, "the TLS handshake")) != AN_OK)
			break;
	}
	t->verifying = 0;
	if (rc != AN_OK)
	{
		if (st->err.code == AN_E_CONNECT && strstr(st->err.msg, "wrong version number"))
			an_store_hintf(st, "The server did not answer in TLS: is the port a TLS port?");
		an_tls_free(t, 0);
		return rc;
	}
	*out = t;
	return AN_OK;
}

int
an_tls_send(an_store *st, an_tls *t, const char *buf, size_t len,
			const an_deadline *d, const char *who, const char *what)
{
	while (len > 0)
	{
		size_t		n = 0;
		int			ret;
		int			rc;

		ERR_clear_error();
		errno = 0;
		if ((ret = SSL_write_ex(t->ssl, buf, len, &n)) == 1)
		{
			buf += n;
			len -= n;
			continue;
		}
		if ((rc = after(st, t, ret, d, who, what)) != AN_OK)
			return rc;
	}
	return AN_OK;
}

int
an_tls_recv(an_store *st, an_tls *t, char *buf, size_t cap, size_t *got,
			const an_deadline *d, const char *who, const char *what)
{
	*got = 0;
	for (;;)
	{
		int			slice;
		int			ret;
		int			rc;

		/* As an_sock_recv: the deadline is asked even when records keep coming. */
		if ((rc = an_wait_tick(st, d, who, what, &slice)) != AN_OK)
			return rc;
		ERR_clear_error();
		errno = 0;
		if ((ret = SSL_read_ex(t->ssl, buf, cap, got)) == 1)
			return AN_OK;
		if ((rc = after(st, t, ret, d, who, what)) != AN_OK)
			return rc;
	}
}

void
an_tls_free(an_tls *t, int notify)
{
	if (t == NULL)
		return;
	/* One try: a close alert the socket does not take at once is not waited for. */
	if (notify)
	{
		ERR_clear_error();
		(void) SSL_shutdown(t->ssl);
	}
	SSL_free(t->ssl);
	ERR_clear_error();
	free(t);
}
