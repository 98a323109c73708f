/*
 * store_pg_url.c — the PostgreSQL store's URL: read with libpq's own parser
 * (so every libpq parameter works: sslmode, target_session_attrs, host lists,
 * ...), named in messages without its password, and its connect_timeout.
 *
 * libpq's messages may repeat what they were given: a URL it cannot parse is
 * echoed whole, a bad percent-escape is echoed as the token, a port it cannot
 * read is echoed as the port.  A password in a URL is therefore kept as a list
 * of secrets, and every text from libpq is scrubbed of them before it is
 * shown (an_pg_scrub).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "redact.h"
#include "store_pg_int.h"
#include "url.h"

int
an_cli_pg_url(const char *url)
{
	return url != NULL && (strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0);
}

static void
add_secret(an_pg *pg, const char *s, size_t len, size_t min_len)
{
	if (len < min_len || pg->nsecrets >= AN_PG_SECRETS_MAX)
		return;
	if ((pg->secrets[pg->nsecrets] = strndup(s, len)) != NULL)
		pg->nsecrets++;
}

/* s (len bytes) and, when it differs, its percent-decoded form: both are secrets. */
static void
add_secret_forms(an_pg *pg, const char *s, size_t len)
{
	char		dec[AN_PG_WHERE_MAX];
	size_t		n = 0;

	add_secret(pg, s, len, 3);
	for (size_t i = 0; i < len && n < sizeof(dec) - 1; i++)
	{
		if (s[i] == '%' && i + 2 < len && isxdigit((unsigned char) s[i + 1]) && isxdigit((unsigned char) s[i + 2]))
		{
			char		hex[3] = {s[i + 1], s[i + 2], '\0'};

			dec[n++] = (char) strtol(hex, NULL, 16);
			i += 2;
		}
		else
			dec[n++] = s[i];
	}
	if (n != len)
		add_secret(pg, dec, n, 3);
}

/*
 * where is the URL as an_redact_url shows it (the one rule of every host);
 * the secrets are the values it hides, as written and percent-decoded: the
 * userinfo's password and every secret query parameter's value.
 */
static void
redact(an_pg *pg, const char *url)
{
	const char *auth = strstr(url, "://");
	const char *at = auth ? an_url_credentials_end(auth + 3) : NULL;
	const char *colon = at ? memchr(auth + 3, ':', (size_t) (at - auth - 3)) : NULL;
	const char *q = strchr(at ? at : url, '?');

	an_redact_url(url, pg->where, sizeof(pg->where));
	if (colon)
		add_secret_forms(pg, colon + 1, (size_t) (at - colon - 1));
	for (; q && *q; q += strcspn(q + 1, "&") + 1)
	{
		size_t		len = strcspn(q + 1, "&");
		const char *eq = memchr(q + 1, '=', len);

		if (eq && an_redact_secret_param(q + 1, (size_t) (eq - q - 1)))
			add_secret_forms(pg, eq + 1, (size_t) (q + 1 + len - eq - 1));
	}
}

/*
 * A raw '@', '/', '?' or '#' before the URL's last '@': the project's rule
 * (an_url_credentials_end) and libpq's (the first '@' or '/') would cut the
 * user and password differently, and libpq's messages would then quote a
 * piece of the password as a host, a port or a database.  Refused before
 * libpq sees the URL.
 */
static int
ambiguous_userinfo(an_store *st, const an_pg *pg, const char *url)
{
	const char *auth = strstr(url, "://");
	const char *at = auth ? an_url_credentials_end(auth + 3) : NULL;
	size_t		len = at ? (size_t) (at - auth - 3) : 0;

	if (at == NULL || strcspn(auth + 3, "@/?#") >= len)
		return AN_OK;
	an_store_fail(st, AN_E_CONFIG, "invalid PostgreSQL URL %s: a raw '@', '/', '?' or '#' comes before its last '@'",
				  pg->where);
	an_store_detailf(st, "libpq ends the user and password at the first '@' or '/', so it would read part of them as the host, port or database.");
	return an_store_hintf(st, "Write '@', '/', '?' and '#' in the user, the password or a parameter's value as %%40, %%2F, %%3F and %%23.");
}

/* Replace every from in buf (NUL-terminated, room for size bytes) by to. */
static void
replace_all(char *buf, size_t size, const char *from, const char *to)
{
	size_t		flen = strlen(from),
				tlen = strlen(to);
	char	   *p = buf;

	if (flen == 0)
		return;
	while ((p = strstr(p, from)) != NULL)
	{
		size_t		rest = strlen(p + flen);

		if ((size_t) (p - buf) + tlen + rest + 1 > size)
			rest = size > (size_t) (p - buf) + tlen + 1 ? size - (size_t) (p - buf) - tlen - 1 : 0;
		if ((size_t) (p - buf) + tlen + 1 > size)
		{
			*p = '\0';          /* no room even for the replacement: cut here */
			return;
		}
		memmove(p + tlen, p + flen, rest);
		p[tlen + rest] = '\0';
		memcpy(p, to, tlen);
		p += tlen;
	}
}

void
an_pg_scrub(const an_pg *pg, const char *text, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s", text);
	if (pg->url && pg->nsecrets > 0)
		replace_all(out, outlen, pg->url, pg->where);
	for (int i = 0; i < pg->nsecrets; i++)
		replace_all(out, outlen, pg->secrets[i], "***");
}

/*
 * A value libpq read from the URL that lies inside a password (a password
 * with an unencoded '/' makes libpq read part of it as the port or the
 * database): libpq may echo it, so it is a secret too.
 */
static void
add_inner_secrets(an_pg *pg, const PQconninfoOption *opts)
{
	int			n = pg->nsecrets;

	for (const PQconninfoOption *o = opts; o->keyword; o++)
	{
		if (o->val == NULL || o->val[0] == '\0')
			continue;
		if (strcmp(o->dispchar, "*") == 0)
		{
			add_secret(pg, o->val, strlen(o->val), 3);
			continue;
		}
		for (int i = 0; i < n; i++)
			if (strlen(o->val) >= 2 && strstr(pg->secrets[i], o->val))
			{
				add_secret(pg, o->val, strlen(o->val), 2);
				break;
			}
	}
}

/*
 * connect_timeout as libpq reads it: whole seconds, at least 2; the URL's,
 * else PGCONNECT_TIMEOUT's.  Zero or less means "forever" to libpq, which a
 * store may not do: the default bound then.
 */
static int
read_connect_timeout(an_store *st, an_pg *pg, const char *value)
{
	char	   *end;
	long		secs;

	pg->connect_timeout_ms = AN_PG_CONNECT_TIMEOUT_MS;
	if (value == NULL || value[0] == '\0')
		value = getenv("PGCONNECT_TIMEOUT");
	if (value == NULL || value[0] == '\0')
		return AN_OK;
	errno = 0;
	secs = strtol(value, &end, 10);
	while (isspace((unsigned char) *end))
		end++;
	if (errno != 0 || end == value || *end != '\0' || secs > 86400 * 365)
	{
		an_store_fail(st, AN_E_CONFIG, "invalid connect_timeout \"%.40s\" for PostgreSQL at %s", value,
					  pg->where);
		return an_store_detailf(st, "connect_timeout is a number of seconds, from 2 to 31536000.");
	}
	if (secs > 0)
		pg->connect_timeout_ms = (secs < 2 ? 2 : secs) * INT64_C(1000);
	return AN_OK;
}

int
an_pg_parse_url(an_store *st, const char *url, an_pg *pg)
{
	PQconninfoOption *opts;
	char	   *err = NULL;
	const char *timeout = NULL;
	char		clean[AN_ERRMAX];
	int			rc;

	redact(pg, url);
	if (!an_cli_pg_url(url))
		return an_store_fail(st, AN_E_CONFIG, "not a PostgreSQL URL: %s", pg->where);
	if (ambiguous_userinfo(st, pg, url) != AN_OK)
		return st->err.code;
	if ((opts = PQconninfoParse(url, &err)) == NULL)
	{
		an_pg_scrub(pg, err ? err : "out of memory", clean, sizeof(clean));
		PQfreemem(err);
		clean[strcspn(clean, "\n")] = '\0';
		an_store_fail(st, err ? AN_E_CONFIG : AN_E_NOMEM, "invalid PostgreSQL URL %s: %s", pg->where, clean);
		return an_store_hintf(st, "Write it as postgresql://user@host:port/dbname?param=value, with '@', '/', "
							  "':' and '?' in the user or password written %%40, %%2F, %%3A and %%3F.");
	}
	add_inner_secrets(pg, opts);
	for (const PQconninfoOption *o = opts; o->keyword; o++)
		if (strcmp(o->keyword, "connect_timeout") == 0)
			timeout = o->val;
	rc = read_connect_timeout(st, pg, timeout);
	PQconninfoFree(opts);
	return rc;
}
