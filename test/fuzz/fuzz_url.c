/*
 * fuzz_url.c — the store URL parser (net/url.c): an_url_parse,
 * an_url_name and the parameter readers.
 *
 * The input is one URL (cut at its first NUL).  Beyond "no crash, no leak,
 * no read past a buffer", each input checks:
 *
 *   credentials   the URL is parsed a second time with every byte of its
 *                 user and password replaced (escapes %XY and the ':' that
 *                 splits them kept, so that both parse alike): the result,
 *                 the error message and the redacted form must be the same.
 *                 So neither an error nor an_url_name can ever show a
 *                 credential, whatever the password holds ('@', '/', '?').
 *   shape         a parsed URL has a lower-case scheme of letters and '+',
 *                 1 to AN_URL_MAX_SERVERS servers with non-empty hosts of
 *                 host-name characters, ports 0-65535, unique parameter
 *                 names, and every string inside the URL's own copy.
 *   redacted      an_url_name into a buffer of every small size is a
 *                 NUL-terminated prefix of the full form; the full form
 *                 parses again to the same scheme, servers and path (when
 *                 the path has no character that needs an escape).
 *   parameters    an_url_no_unknown refuses exactly while a parameter is
 *                 unread; an accepted prefix follows its rule.
 *   errors        a refusal leaves a non-empty, terminated message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "url.h"


static int
host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '.' || c == '-' || c == ':' || c == '_';
}

static int
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * The URL with its credentials replaced, found by the documented rule (the
 * text between "://" and the last '@'), written here again rather than
 * called, so that a change of the parser's rule shows as a failure.  Every
 * byte becomes 'Q' except the first ':' and each valid escape %XY, so that
 * the replaced URL decodes exactly when the original does.  NULL when the
 * URL has no credentials.
 */
static char *
replace_credentials(const char *url)
{
	const char *sep = strstr(url, "://");
	char	   *copy;
	char	   *start;
	char	   *at;
	int			colon_seen = 0;

	if (sep == NULL || strrchr(sep + 3, '@') == NULL)
		return NULL;
	copy = strdup(url);
	if (copy == NULL)
		abort();
	start = copy + (sep - url) + 3;
	at = strrchr(start, '@');
	for (char *p = start; p < at; p++)
	{
		if (*p == ':' && !colon_seen)
			colon_seen = 1;
		else if (*p == '%' && p + 2 < at && is_hex(p[1]) && is_hex(p[2]))
			p += 2;
		else if (*p != '%')
			*p = 'Q';
	}
	return copy;
}

/* The length of the URL being checked: u->buf is its copy, cut in place. */
static size_t url_len;

static int
inside(const an_url *u, const char *s)
{
	return s >= u->buf && s <= u->buf + url_len;
}

static void
check_shape(const an_url *u)
{
	FUZZ_CHECK(u->scheme && *u->scheme && inside(u, u->scheme), "no scheme");
	for (const char *c = u->scheme; *c; c++)
		FUZZ_CHECK((*c >= 'a' && *c <= 'z') || (*c == '+' && c > u->scheme && c[1]),
				   "scheme \"%s\" has '%c'", u->scheme, *c);
	FUZZ_CHECK(u->nservers >= 1 && u->nservers <= AN_URL_MAX_SERVERS, "%d servers", u->nservers);
	FUZZ_CHECK(u->host == u->servers[0].host && u->port == u->servers[0].port, "host is not servers[0]");
	for (int i = 0; i < u->nservers; i++)
	{
		const char *h = u->servers[i].host;

		FUZZ_CHECK(h && *h && inside(u, h), "server %d has no host", i);
		for (const char *c = h; *c; c++)
			FUZZ_CHECK(host_char(*c), "host \"%s\" has byte 0x%02x", h, (unsigned char) *c);
		FUZZ_CHECK(u->servers[i].port >= 0 && u->servers[i].port <= 65535, "port %d", u->servers[i].port);
	}
	FUZZ_CHECK(u->user == NULL || (*u->user && inside(u, u->user)), "empty user kept");
	FUZZ_CHECK(u->password == NULL || inside(u, u->password), "password outside the URL's copy");
	FUZZ_CHECK(u->path == NULL || inside(u, u->path), "path outside the URL's copy");
	FUZZ_CHECK(u->nparams >= 0 && u->nparams <= AN_URL_MAX_PARAMS, "%d params", u->nparams);
	for (int i = 0; i < u->nparams; i++)
	{
		FUZZ_CHECK(*u->params[i].name && inside(u, u->params[i].name) && inside(u, u->params[i].value),
				   "parameter %d", i);
		for (int j = 0; j < i; j++)
			FUZZ_CHECK(strcmp(u->params[i].name, u->params[j].name) != 0, "parameter %s twice",
					   u->params[i].name);
	}
}

/* an_url_name in buffers of exact sizes: a terminated prefix of the whole. */
static void
check_redacted(const an_url *u, char *full, size_t fulllen)
{
	size_t		n;

	an_url_name(u, full, fulllen);
	FUZZ_CHECK(fuzz_terminated(full, fulllen), "redacted form not terminated");
	n = strlen(full);
	for (size_t len = 0; len <= n + 1 && len <= 80; len++)
	{
		char	   *small = malloc(len ? len : 1);

		if (small == NULL)
			abort();
		an_url_name(u, small, len);
		if (len > 0)
			FUZZ_CHECK(fuzz_terminated(small, len) && strncmp(small, full, len - 1) == 0 &&
					   strlen(small) == (n < len - 1 ? n : len - 1),
					   "redacted into %zu bytes: \"%s\" is not a prefix of \"%s\"", len, small, full);
		free(small);
	}
}

/* The redacted form read again names the same servers (see the header). */
static void
check_reparse(const an_url *u, const char *redacted)
{
	an_url		r;
	an_err		err;

	if (strlen(redacted) > 4096)
		return;					/* brackets added to IPv6 hosts can pass the limit */
	if (u->path)
		for (const char *c = u->path; *c; c++)
			if (!host_char(*c) || *c == ':')
				return;
	FUZZ_CHECK(an_url_parse(redacted, &r, &err) == 0,
			   "redacted form \"%s\" does not parse: %s", redacted, err.msg);
	FUZZ_CHECK(strcmp(r.scheme, u->scheme) == 0 && r.nservers == u->nservers &&
			   (r.path == NULL) == (u->path == NULL) && (r.path == NULL || strcmp(r.path, u->path) == 0),
			   "redacted form \"%s\" reads back otherwise", redacted);
	for (int i = 0; i < u->nservers; i++)
		FUZZ_CHECK(strcmp(r.servers[i].host, u->servers[i].host) == 0 &&
				   r.servers[i].port == u->servers[i].port,
				   "server %d of \"%s\" reads back as %s:%d", i, redacted, r.servers[i].host, r.servers[i].port);
	an_url_free(&r);
}

static void
check_params(an_url *u)
{
	an_err		err;
	const char *prefix;
	int64_t		v;
	int			loss;
	int			unknown = an_url_no_unknown(u, "nothing", &err);

	FUZZ_CHECK((unknown < 0) == (u->nparams > 0), "no_unknown says %d with %d parameters", unknown, u->nparams);
	if (an_url_prefix(u, &prefix, &err) == 0)
	{
		size_t		n = strlen(prefix);

		FUZZ_CHECK(n >= 1 && n <= 64 && strspn(prefix, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n,
				   "prefix \"%s\" accepted", prefix);
	}
	if (an_url_int(u, "timeout_ms", 7, 1, 1000000, &v, &err) == 0)
		FUZZ_CHECK(v >= 1 && v <= 1000000, "timeout_ms %lld accepted", (long long) v);
	(void) an_url_durability(u, &loss, &err);
	(void) an_url_skew(u, &v, &err);
	for (int i = 0; i < u->nparams; i++)
		FUZZ_CHECK(an_url_param(u, u->params[i].name) == u->params[i].value, "param %s", u->params[i].name);
	FUZZ_CHECK(an_url_no_unknown(u, "nothing", &err) == 0, "a read parameter still unknown");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *url = fuzz_cstring(data, size);
	char	   *other = replace_credentials(url);
	an_err		err;
	an_err		err2;
	char		red[5000];
	char		red2[5000];
	an_url		u;
	an_url		u2;
	int			rc;

	url_len = strlen(url);
	memset(&err, 0x7f, sizeof(err));
	rc = an_url_parse(url, &u, &err);
	if (rc != 0)
		FUZZ_CHECK(fuzz_terminated(err.msg, sizeof(err.msg)) && err.msg[0] != '\0', "a refusal without a message");
	else
	{
		check_shape(&u);
		check_redacted(&u, red, sizeof(red));
		check_reparse(&u, red);
	}
	if (other)
	{
		int			rc2 = an_url_parse(other, &u2, &err2);

		FUZZ_CHECK(rc == rc2, "the credentials decide whether the URL parses (%d, %d): %s", rc, rc2,
				   rc ? err.msg : err2.msg);
		if (rc != 0)
			FUZZ_CHECK(strcmp(err.msg, err2.msg) == 0, "an error depends on the credentials:\n  %s\n  %s", err.msg, err2.msg);
		else
		{
			an_url_name(&u2, red2, sizeof(red2));
			FUZZ_CHECK(strcmp(red, red2) == 0, "the redacted form depends on the credentials:\n  %s\n  %s",
					   red, red2);
			an_url_free(&u2);
		}
	}
	if (rc == 0)
	{
		check_params(&u);
		an_url_free(&u);
	}
	free(other);
	free(url);
	return 0;
}
