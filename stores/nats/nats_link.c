/*
 * nats_link.c — the NATS client protocol on a socket of our own, just what
 * the store needs (see nats_link.h).
 *
 *   server: INFO {...}                          on connect, and at any time
 *   client: (TLS handshake, when INFO says tls_required or the URL asks)
 *   client: CONNECT {...}  SUB <inbox>.* 1  PING
 *   server: PONG                                (or -ERR 'Authorization Violation')
 *   client: PUB <subject> <reply> <n>\r\n<body>
 *           HPUB <subject> <reply> <h> <n>\r\nNATS/1.0\r\nNats-Msg-Id: <id>\r\n\r\n<body>
 *   server: MSG <subject> <sid> [reply] <n>\r\n<data>
 *           HMSG <subject> <sid> [reply] <h> <n>\r\n<headers><data>
 *           ("NATS/1.0 503" headers and no data: no responders)
 *   both:   PING, answered PONG
 * Every line ends in \r\n; so does every message's data.  With
 * tls_handshake_first the TLS handshake comes first and INFO after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

#include "nats_json.h"
#include "nats_link.h"

#define BUF_FIRST 4096
#define BUF_MAX   NATS_IN_MAX    /* nats_codec.h */

void
nats_link_init(nats_link *l)
{
	memset(l, 0, sizeof(*l));
	l->conn = AN_CONN_NONE;
}

void
nats_link_close(nats_link *l)
{
	/*
	 * NATS needs no goodbye: closing the socket is the end (with TLS's
	 * close alert).  In a child that inherited the parent's connection this
	 * closes the child's copy of the descriptor only, and sends nothing on
	 * the parent's TLS session.
	 */
	an_conn_close(&l->conn, !an_fork_foreign(l->proc));
	l->proc = 0;
	free(l->buf);
	l->buf = NULL;
	l->len = l->cap = 0;
}

void
nats_link_free(nats_link *l)
{
	nats_link_close(l);
	if (l->tls)
		an_conn_tls_free(l->tls);
	l->tls = NULL;
}

/* Close the connection after a failure rc (already recorded on the store); returns rc. */
static int
closed(nats_link *l, int rc)
{
	nats_link_close(l);
	return rc;
}

static int
send_all(an_store *st, nats_link *l, const char *buf, size_t len, const an_deadline *d,
		 const char *what)
{
	int			rc = an_conn_send(st, l->who, &l->conn, buf, len, d, what);

	return rc == AN_OK ? rc : closed(l, rc);
}

/* Read more bytes into the buffer, growing it when full. */
static int
fill(an_store *st, nats_link *l, const an_deadline *d, const char *what)
{
	size_t		got;
	int			rc;

	if (l->len == l->cap)
	{
		size_t		cap = l->cap ? l->cap * 2 : BUF_FIRST;
		char	   *grown;

		if (cap > BUF_MAX)
			return closed(l, an_store_fail(st, AN_E_STORE, "%s sent a line or message longer than %d bytes, the most anarchon accepts, while anarchon waited for %s",
										   l->who, BUF_MAX, what));
		if ((grown = realloc(l->buf, cap)) == NULL)
			return closed(l, an_store_fail(st, AN_E_NOMEM, "out of memory reading from %s", l->who));
		l->buf = grown;
		l->cap = cap;
	}
	rc = an_conn_recv(st, l->who, &l->conn, l->buf + l->len, l->cap - l->len, &got, d, what);
	if (rc != AN_OK)
		return closed(l, rc);
	l->len += got;
	return AN_OK;
}

/* Drop the first n bytes of the buffer. */
static void
consume(nats_link *l, size_t n)
{
	memmove(l->buf, l->buf + n, l->len - n);
	l->len -= n;
}

/*
 * The server's -ERR to our CONNECT (text: after "-ERR "): a refused login,
 * which names what was sent and never the secret itself.  The server's text
 * is its own ("'Authorization Violation'", "'User Authentication Expired'").
 */
static int
refused_login(an_store *st, nats_link *l, const char *text)
{
	size_t		n = strcspn(text, "\r\n");

	if (n > 0 && text[0] == '\'' && text[n - 1] == '\'')
	{
		text++;
		n -= n >= 2 ? 2 : 1;
	}
	an_store_fail(st, AN_E_AUTH, "%s refused the login: %.*s", l->who, (int) (n > 200 ? 200 : n), text);
	if (l->auth == NULL || l->auth->kind == NULL)
		return an_store_hintf(st, "No credentials were sent: the server asks for them.  Give user:password@ or token@ in the URL (in PostgreSQL, a user mapping), or nkey= or creds=.");
	return an_store_hintf(st, "The server did not accept %s given in the store URL%s.",
						  l->auth->kind, l->auth->user || l->auth->token ? " (in PostgreSQL, the user mapping)" : "");
}

/*
 * The next thing the server sends, reading as needed.  PING is answered
 * here; PONG, INFO and +OK are passed over unless want_pong.  -ERR closes
 * the connection and fails st: an authorization error as AN_E_AUTH, any
 * other as AN_E_CONNECT (the server drops us after it, e.g. a stale
 * connection: a kept connection is then replaced).
 */
static int
next_in(an_store *st, nats_link *l, const an_deadline *d, const char *what, int want_pong,
		nats_in *in)
{
	for (;;)
	{
		int			p;
		int			slice;
		int			rc;

		/*
		 * Every pass, whether or not it reads: PINGs, PONGs, INFOs and
		 * unrelated messages already in the buffer never end the loop by
		 * themselves, so the deadline and the host's cancel must.
		 */
		if ((rc = an_wait_tick(st, d, l->who, what, &slice)) != AN_OK)
			return closed(l, rc);
		p = nats_parse(l->buf, l->len, in);
		if (p == NATS_PARSE_TOO_BIG)
			return closed(l, an_store_fail(st, AN_E_STORE, "%s announced a message larger than %d bytes, the most anarchon accepts, while anarchon waited for %s",
										   l->who, BUF_MAX, what));
		if (p < 0)
			return closed(l, an_store_fail(st, AN_E_STORE, "%s sent something that is not the NATS protocol while anarchon waited for %s",
										   l->who, what));
		if (p == 0)
		{
			if ((rc = fill(st, l, d, what)) != AN_OK)
				return rc;
			continue;
		}
		if (in->kind == NATS_IN_ERR)
		{
			const char *text = in->line + 4;

			while (*text == ' ')
				text++;
			if (strstr(text, "uthoriz") || strstr(text, "uthentic") || strstr(text, "xpired"))
				return closed(l, refused_login(st, l, text));
			return closed(l, an_store_fail(st, AN_E_CONNECT, "%s closed the connection: %.200s", l->who, text));
		}
		if (in->kind == NATS_IN_MSG)
			return AN_OK;		/* consumed by the caller once read */
		consume(l, in->used);
		if (in->kind == NATS_IN_PING)
		{
			if ((rc = send_all(st, l, "PONG\r\n", 6, d, what)) != AN_OK)
				return rc;
		}
		else if (in->kind == NATS_IN_PONG && want_pong)
			return AN_OK;
	}
}

/* A fresh inbox name from the kernel's random source: never a parent's. */
static int
new_inbox(an_store *st, nats_link *l)
{
	unsigned char r[16];
	char		hex[AN_TOKEN_HEX + 1];

	if (getrandom(r, sizeof(r), 0) != (ssize_t) sizeof(r))
		return an_store_fail(st, AN_E_INTERNAL, "could not draw a random inbox name for %s", l->who);
	an_token_hex(r, hex);
	snprintf(l->inbox, sizeof(l->inbox), "_INBOX.%s", hex);
	return AN_OK;
}

/* What the server's INFO line says it requires. */
typedef struct nats_info
{
	int			tls_required;
	int			tls_available;   /* TLS offered, not required (allow_non_tls) */
	int			auth_required;
	int			have_nonce;
	char		nonce[128];      /* to sign with an nkey */
} nats_info;

/* The server's INFO line, the first thing it sends (after TLS with tls_first). */
static int
read_info(an_store *st, nats_link *l, const an_deadline *d, nats_info *info)
{
	char		text[8192];
	char	   *eol;
	size_t		n;
	int			rc;

	while ((eol = l->len ? memchr(l->buf, '\n', l->len) : NULL) == NULL)
		if ((rc = fill(st, l, d, "the connection")) != AN_OK)
		{
			/* A server with handshake_first says nothing until the client starts TLS. */
			if (rc == AN_E_TIMEOUT && !l->tls_first)
				an_store_hintf(st, "A server set up with handshake_first sends nothing before the TLS handshake: add tls_handshake_first=true to the store URL.");
			return rc;
		}
	n = (size_t) (eol - l->buf);
	if (n < 5 || strncmp(l->buf, "INFO ", 5) != 0)
		return closed(l, an_store_fail(st, AN_E_CONNECT, "%s does not speak the NATS protocol: it did not start with INFO",
									   l->who));
	snprintf(text, sizeof(text), "%.*s", (int) (n - 5), l->buf + 5);
	consume(l, n + 1);
	if (nj_bool(text, "headers") != 1)
		return closed(l, an_store_fail(st, AN_E_UNSUPPORTED,
									   "%s does not support message headers: the NATS store needs nats-server 2.2 or later",
									   l->who));
	info->tls_required = nj_bool(text, "tls_required") == 1;
	info->tls_available = nj_bool(text, "tls_available") == 1;
	info->auth_required = nj_bool(text, "auth_required") == 1;
	info->have_nonce = nj_str(text, "nonce", info->nonce, sizeof(info->nonce)) == 0;
	return AN_OK;
}

/* The link's TLS settings, made at the first TLS connection and kept. */
static int
tls_ctx(an_store *st, nats_link *l)
{
	if (l->tls != NULL)
		return AN_OK;
	return an_conn_tls_new(st, &l->tlscfg, l->who, &l->tls);
}

/*
 * After INFO in clear: upgrade to TLS when the server requires it or the
 * URL wants it and the server offers it; refuse a server without TLS when
 * the URL wants it (never fall back to plaintext).
 */
static int
upgrade(an_store *st, nats_link *l, const char *host, const nats_info *info, const an_deadline *d)
{
	int			rc;

	if (!info->tls_required && !(l->tls_want && info->tls_available))
	{
		if (!l->tls_want)
			return AN_OK;
		an_store_fail(st, AN_E_CONNECT, "%s does not offer TLS, and the store URL asks for it", l->who);
		return an_store_hintf(st, "Give the server a tls block, or use nats:// without TLS parameters for a plaintext server.");
	}
	if ((rc = tls_ctx(st, l)) != AN_OK)
		return rc;
	if (l->len != 0)
		return an_store_fail(st, AN_E_CONNECT, "%s sent more than INFO before the TLS handshake", l->who);
	return an_conn_start_tls(st, l->who, &l->conn, l->tls, host, d);
}

/*
 * INFO (TLS first or after it), then CONNECT with the credentials the
 * server asks for, the answers' subscription and a PING, answered by PONG.
 */
static int
handshake(an_store *st, nats_link *l, const char *host, const an_deadline *d)
{
	nats_info	info;
	char	   *auth = NULL;
	char	   *msg;
	size_t		n;
	nats_in		in;
	int			rc;

	memset(&info, 0, sizeof(info));
	if ((rc = read_info(st, l, d, &info)) != AN_OK)
		return rc;
	if (l->conn.tls == NULL && (rc = upgrade(st, l, host, &info, d)) != AN_OK)
		return closed(l, rc);
	if ((rc = new_inbox(st, l)) != AN_OK)
		return closed(l, rc);
	/* Credentials go only to a server that asks for them. */
	if (info.auth_required && l->auth != NULL &&
		(rc = nats_auth_fields(st, l->auth, l->who, info.have_nonce ? info.nonce : NULL, &auth)) != AN_OK)
		return closed(l, rc);
	if ((msg = malloc((auth ? strlen(auth) : 0) + 512)) == NULL)
	{
		nats_auth_wipe_free(auth);
		return closed(l, an_store_fail(st, AN_E_NOMEM, "out of memory connecting to %s", l->who));
	}
	n = (size_t) sprintf(msg,
						 "CONNECT {\"verbose\":false,\"pedantic\":false,\"tls_required\":%s,\"name\":\"anarchon\","
						 "\"lang\":\"c\",\"version\":\"%s\",\"protocol\":1,\"headers\":true,\"no_responders\":true%s}\r\n"
						 "SUB %s.* 1\r\nPING\r\n",
						 l->conn.tls ? "true" : "false", AN_VERSION, auth ? auth : "", l->inbox);
	rc = send_all(st, l, msg, n, d, "the connection");
	/* The credentials are secrets: no copy of them is left behind in freed memory. */
	nats_auth_wipe_free(auth);
	nats_auth_wipe_free(msg);
	if (rc != AN_OK)
		return rc;
	/* PONG comes once the server has taken CONNECT and SUB; -ERR instead when it refuses. */
	if ((rc = next_in(st, l, d, "the connection", 1, &in)) != AN_OK)
		return rc;
	if (in.kind == NATS_IN_MSG)
		return closed(l, an_store_fail(st, AN_E_STORE, "%s sent a message before the connection was set up", l->who));
	return AN_OK;
}

/* Connect to server s and say hello (rotate.h tries each in turn). */
static int
try_server(an_store *st, void *ctx, int s, const an_deadline *each)
{
	nats_link  *l = ctx;
	int			rc;

	if (l->tls_first && (rc = tls_ctx(st, l)) != AN_OK)
		return rc;
	if ((rc = an_conn_open(st, l->who, l->hosts[s], l->ports[s], l->tls_first ? l->tls : NULL, each, &l->conn)) != AN_OK)
		return rc;
	an_fork_own(&l->proc);
	l->len = 0;
	if ((rc = handshake(st, l, l->hosts[s], each)) != AN_OK)
		nats_link_close(l);
	return rc;
}

int
nats_link_connect(an_store *st, nats_link *l, const an_deadline *d)
{
	if (an_fork_foreign(l->proc))
		nats_link_close(l);		/* the parent's connection: ours is a new one */
	if (l->conn.fd >= 0)
		return AN_OK;
	/* A refused login or an unusable TLS file is the same on every server: stop. */
	return an_rotate(st, &l->rot, d, AN_ROTATE_STOP_CONFIG, try_server, l, l->who, "server");
}

/* Is this HMSG a "no responders" status (NATS/1.0 503)? */
static int
no_responders(const nats_in *in)
{
	return in->hdr && in->hdrlen >= 12 && strncmp(in->hdr, "NATS/1.0 503", 12) == 0;
}

/* PUB or HPUB of body to subject, answers to rsubj. */
static int
publish(an_store *st, nats_link *l, const an_deadline *d, const char *what,
		const char *subject, const char *rsubj, const char *msgid, const char *body)
{
	size_t		blen = strlen(body);
	char		hdr[AN_JOB_MAX + 96];
	size_t		room = strlen(subject) + strlen(rsubj) + sizeof(hdr) + blen + 64;
	char	   *out = malloc(room);
	size_t		hlen = 0;
	size_t		n;
	int			rc;

	if (out == NULL)
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	if (msgid)
	{
		hlen = (size_t) snprintf(hdr, sizeof(hdr), "NATS/1.0\r\nNats-Msg-Id: %s\r\n\r\n", msgid);
		n = (size_t) snprintf(out, room, "HPUB %s %s %zu %zu\r\n%s", subject, rsubj, hlen, hlen + blen, hdr);
	}
	else
		n = (size_t) snprintf(out, room, "PUB %s %s %zu\r\n", subject, rsubj, blen);
	memcpy(out + n, body, blen);
	memcpy(out + n + blen, "\r\n", 2);
	rc = send_all(st, l, out, n + blen + 2, d, what);
	free(out);
	return rc;
}

/* exchange()'s answer when nobody listens on the subject: no error set yet. */
#define NO_RESPONDERS (-1)

/* One request on a connected link: publish, then read until its answer. */
static int
exchange(an_store *st, nats_link *l, const an_deadline *d, const char *what,
		 const char *subject, const char *msgid, const char *body, char **reply)
{
	char		rsubj[sizeof(l->inbox) + 24];
	nats_in		in;
	int			rc;

	snprintf(rsubj, sizeof(rsubj), "%s.%llu", l->inbox, (unsigned long long) ++l->nreq);
	if ((rc = publish(st, l, d, what, subject, rsubj, msgid, body)) != AN_OK)
		return rc;
	for (;;)
	{
		if ((rc = next_in(st, l, d, what, 0, &in)) != AN_OK)
		{
			/* A timeout or cancel leaves the answer in flight: start afresh next time. */
			nats_link_close(l);
			return rc;
		}
		if (strcmp(in.subject, rsubj) != 0)
		{
			/* The answer to an earlier request that was given up. */
			consume(l, in.used);
			continue;
		}
		if (no_responders(&in))
		{
			consume(l, in.used);
			return NO_RESPONDERS;
		}
		if ((*reply = malloc(in.datalen + 1)) == NULL)
			return an_store_fail(st, AN_E_NOMEM, "out of memory");
		memcpy(*reply, in.data, in.datalen);
		(*reply)[in.datalen] = '\0';
		consume(l, in.used);
		return AN_OK;
	}
}

int
nats_link_request(an_store *st, nats_link *l, const an_deadline *d,
				  const char *what, const char *subject, const char *msgid,
				  const char *body, const char *noresp, char **reply)
{
	int64_t		listen_until = an_mono_ms() + an_deadline_left(d) / 4;

	*reply = NULL;
	for (int tries = 0;;)
	{
		int			kept;
		int			rc;

		if (an_fork_foreign(l->proc))
			nats_link_close(l);
		kept = l->conn.fd >= 0;
		if ((rc = nats_link_connect(st, l, d)) != AN_OK)
			return rc;
		rc = exchange(st, l, d, what, subject, msgid, body, reply);
		if (rc == NO_RESPONDERS)
		{
			if (an_mono_ms() + AN_WAIT_SLICE_MS > listen_until)
				return an_store_fail(st, AN_E_CONFIG, "%s: %s", l->who, noresp);
			if (an_wait_until(st, an_mono_ms() + AN_WAIT_SLICE_MS, l->who, what) != AN_OK)
				return st->err.code;
			tries = 0;
			continue;
		}
		/* A kept connection found broken: once more on a new one (see nats_link.h). */
		if (!an_resend_once(st, rc, kept, &tries))
		{
			/* Closed after a failure (a timeout: maybe a frozen server): begin elsewhere next time. */
			if (rc != AN_OK && l->conn.fd < 0)
				an_rotation_failed(&l->rot);
			return rc;
		}
	}
}
