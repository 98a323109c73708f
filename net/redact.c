/*
 * redact.c — the one redaction of a store's address (see redact.h).
 *
 * It reads the raw text, never the parsed URL, so that a URL the parser
 * refuses, or one only libpq reads, is shown by the same rule; and it finds
 * the end of the credentials with the parser's own function, so the two can
 * never disagree about where a password ends.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "redact.h"
#include "url.h"

static const char *const secret_params[] = {
	"password", "sentinel_password", "token", "auth_token", "sslpassword",
	"nkey", "seed", "creds", "jwt", NULL
};

/* Schemes whose userinfo without ':' is a login name, not a secret. */
static const char *const login_schemes[] = {"amqp", "amqps", "postgresql", "postgres", NULL};

#define HIDDEN "***"

int
an_redact_secret_param(const char *name, size_t len)
{
	for (int i = 0; secret_params[i]; i++)
		if (strlen(secret_params[i]) == len && strncasecmp(name, secret_params[i], len) == 0)
			return 1;
	return 0;
}

/* The output: what fits is written, everything is counted. */
typedef struct out
{
	char	   *buf;
	size_t		cap;
	size_t		n;
} out;

static void
put(out *o, const char *s, size_t len)
{
	if (o->cap > 0 && o->n < o->cap - 1)
	{
		size_t		room = o->cap - 1 - o->n;

		memcpy(o->buf + o->n, s, len < room ? len : room);
	}
	o->n += len;
}

static int
login_scheme(const char *scheme, size_t len)
{
	for (int i = 0; login_schemes[i]; i++)
		if (strlen(login_schemes[i]) == len && strncasecmp(scheme, login_schemes[i], len) == 0)
			return 1;
	return 0;
}

/* "name=value&name=value...", from after the '?' to the end. */
static void
put_query(out *o, const char *q)
{
	while (*q)
	{
		size_t		len = strcspn(q, "&");
		const char *eq = memchr(q, '=', len);

		if (eq && an_redact_secret_param(q, (size_t) (eq - q)))
		{
			put(o, q, (size_t) (eq + 1 - q));
			put(o, HIDDEN, strlen(HIDDEN));
		}
		else
			put(o, q, len);
		q += len;
		if (*q == '&')
			put(o, q++, 1);
	}
}

/*
 * scheme://[userinfo@]servers[/path][?query].  The userinfo is everything
 * before the last '@' (an_url_credentials_end).  A user name is shown only
 * when it is plainly one: before a ':', or the whole userinfo in a scheme
 * where that is a login, and with no '/', '?', '#', '&' or '=' in it (those
 * would mean the '@' belonged to a path or a query, and the "user" is
 * something else).
 */
static void
put_url(out *o, const char *text, const char *sep)
{
	const char *auth = sep + 3;
	const char *at = an_url_credentials_end(auth);
	const char *rest = auth;
	const char *q;

	if (at)
	{
		const char *colon = memchr(auth, ':', (size_t) (at - auth));
		const char *user_end = colon ? colon : at;
		size_t		user_len = (size_t) (user_end - auth);
		int			plain_user = strcspn(auth, "/?#&=") >= user_len;

		if (plain_user && (colon || login_scheme(text, (size_t) (sep - text))))
		{
			put(o, text, (size_t) (user_end - text));
			if (colon)
			{
				put(o, ":", 1);
				put(o, HIDDEN, strlen(HIDDEN));
			}
		}
		else
		{
			put(o, text, (size_t) (auth - text));
			put(o, HIDDEN, strlen(HIDDEN));
		}
		rest = at;
	}
	else
		put(o, text, (size_t) (auth - text));
	q = strchr(rest, '?');
	put(o, rest, q ? (size_t) (q - rest) : strlen(rest));
	if (q)
	{
		put(o, "?", 1);
		put_query(o, q + 1);
	}
}

/*
 * libpq's keyword = value connection string: the value of a secret keyword
 * (bare, or single-quoted with backslash escapes) becomes "***".  Anything
 * that is not such a pair is copied as it is.
 */
static void
put_keywords(out *o, const char *p)
{
	int			word_start = 1;

	while (*p)
	{
		size_t		klen = 0;
		const char *v;

		while (word_start && (isalnum((unsigned char) p[klen]) || p[klen] == '_'))
			klen++;
		v = p + klen;
		while (klen > 0 && isspace((unsigned char) *v))
			v++;
		if (klen == 0 || *v != '=' || !an_redact_secret_param(p, klen))
		{
			word_start = isspace((unsigned char) *p) != 0;
			put(o, p++, 1);
			continue;
		}
		for (v++; isspace((unsigned char) *v); v++)
			;
		put(o, p, (size_t) (v - p));
		put(o, HIDDEN, strlen(HIDDEN));
		if (*v == '\'')
		{
			for (v++; *v && *v != '\''; v++)
				if (*v == '\\' && v[1])
					v++;
			if (*v == '\'')
				v++;
		}
		else
			while (*v && !isspace((unsigned char) *v))
				v++;
		p = v;
		word_start = 0;
	}
}

size_t
an_redact_url(const char *text, char *buf, size_t outlen)
{
	out			o = {buf, outlen, 0};
	const char *sep;

	if (text == NULL)
		text = "";
	sep = strstr(text, "://");
	/* A scheme is letters and '+': "password=a://b" is a keyword string. */
	if (sep && sep > text && strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+") == (size_t) (sep - text))
		put_url(&o, text, sep);
	else
		put_keywords(&o, text);
	if (outlen > 0)
		buf[o.n < outlen ? o.n : outlen - 1] = '\0';
	return o.n;
}

char *
an_redact_url_dup(const char *text)
{
	size_t		n = an_redact_url(text, NULL, 0) + 1;
	char	   *s = malloc(n);

	if (s)
		an_redact_url(text, s, n);
	return s;
}
