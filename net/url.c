/*
 * url.c — the store URL parser (see url.h).
 *
 * The URL is copied once into u->buf and cut in place; every field points
 * into that copy, so an_url_free is one free().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anarchon.h"
#include "url.h"
#include "hex.h"

/* Percent-decode s in place; -1 on a malformed escape or an encoded NUL. */
static int
decode(char *s)
{
	char	   *w = s;

	for (char *r = s; *r; r++)
	{
		if (*r == '%')
		{
			int			hi = an_hexval(r[1]);
			int			lo = hi < 0 ? -1 : an_hexval(r[2]);

			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return -1;
			*w++ = (char) (hi * 16 + lo);
			r += 2;
		}
		else
			*w++ = *r;
	}
	*w = '\0';
	return 0;
}

static int
parse_port(const char *s, int *port)
{
	char	   *end;
	long		v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno || v < 1 || v > 65535)
		return -1;
	*port = (int) v;
	return 0;
}

static int
parse_query(an_url *u, char *q, an_err *err)
{
	while (q && *q)
	{
		char	   *amp = strchr(q, '&');
		char	   *eq;

		if (amp)
			*amp = '\0';
		eq = strchr(q, '=');
		if (eq == NULL || eq == q)
		{
			an_errf(err, "store URL has a malformed query parameter \"%.40s\": expected name=value", q);
			return -1;
		}
		*eq = '\0';
		if (u->nparams == AN_URL_MAX_PARAMS)
		{
			an_errf(err, "store URL has more than %d query parameters", AN_URL_MAX_PARAMS);
			return -1;
		}
		for (int i = 0; i < u->nparams; i++)
			if (strcmp(u->params[i].name, q) == 0)
			{
				an_errf(err, "store URL repeats the query parameter \"%.40s\"", q);
				return -1;
			}
		if (decode(eq + 1) < 0)
		{
			an_errf(err, "store URL parameter \"%.40s\" has a malformed %%-escape", q);
			return -1;
		}
		u->params[u->nparams].name = q;
		u->params[u->nparams].value = eq + 1;
		u->params[u->nparams].used = 0;
		u->nparams++;
		q = amp ? amp + 1 : NULL;
	}
	return 0;
}

/* Split "user:pass@" off the authority; credentials are never echoed. */
static int
parse_userinfo(an_url *u, char *userinfo, an_err *err)
{
	char	   *colon = strchr(userinfo, ':');

	if (colon)
	{
		*colon = '\0';
		u->password = colon + 1;
	}
	u->user = userinfo;
	if (decode(u->user) < 0 || (u->password && decode(u->password) < 0))
	{
		an_errf(err, "store URL has a malformed %%-escape in its user or password");
		return -1;
	}
	if (*u->user == '\0')
		u->user = NULL;
	return 0;
}

static int
parse_hostport(an_url *u, char *hp, an_err *err)
{
	char	   *portstr = NULL;

	if (*hp == '[')
	{
		char	   *close = strchr(hp, ']');

		if (close == NULL)
		{
			an_errf(err, "store URL has an unclosed '[' in its host");
			return -1;
		}
		*close = '\0';
		u->host = hp + 1;
		if (close[1] == ':')
			portstr = close + 2;
		else if (close[1] != '\0')
		{
			an_errf(err, "store URL has text after the IPv6 host's ']'");
			return -1;
		}
	}
	else
	{
		char	   *colon = strrchr(hp, ':');

		if (colon)
		{
			*colon = '\0';
			portstr = colon + 1;
		}
		u->host = hp;
	}
	if (*u->host == '\0')
	{
		an_errf(err, "store URL has no host: expected scheme://host[:port]");
		return -1;
	}
	for (const char *c = u->host; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			  (*c >= '0' && *c <= '9') || *c == '.' || *c == '-' || *c == ':' || *c == '_'))
		{
			an_errf(err, "store URL host has a character that is not allowed in a host name");
			return -1;
		}
	if (portstr && parse_port(portstr, &u->port) < 0)
	{
		an_errf(err, "store URL port \"%.10s\" is not a number from 1 to 65535", portstr);
		return -1;
	}
	return 0;
}

const char *
an_url_credentials_end(const char *authority)
{
	return strrchr(authority, '@');
}

int
an_url_parse(const char *url, an_url *u, an_err *err)
{
	char	   *p;
	char	   *sep;
	char	   *authority;
	char	   *at;
	const char *cred_end;
	char	   *query;
	char	   *slash;

	memset(u, 0, sizeof(*u));
	if (url == NULL || *url == '\0')
	{
		an_errf(err, "store URL is empty");
		return -1;
	}
	if (strlen(url) > 4096)
	{
		an_errf(err, "store URL is longer than 4096 bytes");
		return -1;
	}
	u->buf = strdup(url);
	if (u->buf == NULL)
	{
		an_errf(err, "out of memory");
		return -1;
	}
	p = u->buf;
	sep = strstr(p, "://");
	if (sep == NULL || sep == p)
	{
		an_errf(err, "store URL has no scheme: expected 'local' or scheme://host[:port] with scheme redis, rediss, amqp, amqps, nats or tls");
		goto fail;
	}
	*sep = '\0';
	u->scheme = p;
	for (char *c = u->scheme; *c; c++)
	{
		if (*c >= 'A' && *c <= 'Z')
			*c = (char) (*c - 'A' + 'a');
		/* Letters, and a '+' between them as in redis+sentinel. */
		if (!(*c >= 'a' && *c <= 'z') && !(*c == '+' && c > u->scheme && c[1] != '\0'))
		{
			an_errf(err, "store URL scheme has a character other than a letter (or a '+' between letters)");
			goto fail;
		}
	}
	authority = sep + 3;

	/*
	 * The last '@' of the whole URL ends the credentials, before anything else
	 * is cut: a password with an unencoded '/', '?' or '#' then still parses as
	 * a password, and no later error message can quote a piece of it.
	 */
	cred_end = an_url_credentials_end(authority);
	/* The same place in the copy being cut, without casting away const. */
	at = cred_end ? authority + (cred_end - authority) : NULL;
	if (at)
	{
		*at = '\0';
		if (parse_userinfo(u, authority, err) < 0)
			goto fail;
		authority = at + 1;
	}

	query = strchr(authority, '?');
	if (query)
		*query++ = '\0';
	if (strchr(authority, '#'))
	{
		an_errf(err, "store URL must not have a '#' fragment");
		goto fail;
	}
	slash = strchr(authority, '/');
	if (slash)
	{
		*slash = '\0';
		u->path = slash + 1;
		if (decode(u->path) < 0)
		{
			an_errf(err, "store URL path has a malformed %%-escape");
			goto fail;
		}
	}
	/* Servers separated by commas: a cluster's nodes, tried in turn. */
	for (char *hp = authority; hp; u->nservers++)
	{
		char	   *comma = strchr(hp, ',');

		if (u->nservers == AN_URL_MAX_SERVERS)
		{
			an_errf(err, "store URL names more than %d servers", AN_URL_MAX_SERVERS);
			goto fail;
		}
		if (comma)
			*comma = '\0';
		u->port = 0;
		if (parse_hostport(u, hp, err) < 0)
			goto fail;
		u->servers[u->nservers].host = u->host;
		u->servers[u->nservers].port = u->port;
		hp = comma ? comma + 1 : NULL;
	}
	u->host = u->servers[0].host;
	u->port = u->servers[0].port;
	if (parse_query(u, query, err) < 0)
		goto fail;
	return 0;

fail:
	an_url_free(u);
	return -1;
}

void
an_url_free(an_url *u)
{
	free(u->buf);
	memset(u, 0, sizeof(*u));
}

void
an_url_name(const an_url *u, char *out, size_t outlen)
{
	size_t		w;

	w = (size_t) snprintf(out, outlen, "%s://", u->scheme ? u->scheme : "?");
	for (int i = 0; i < (u->nservers ? u->nservers : 1) && w < outlen; i++)
	{
		const char *host = u->nservers ? u->servers[i].host : u->host;
		int			port = u->nservers ? u->servers[i].port : u->port;
		int			v6 = host && strchr(host, ':') != NULL;
		char		portstr[16] = "";

		if (port)
			snprintf(portstr, sizeof(portstr), ":%d", port);
		w += (size_t) snprintf(out + w, outlen - w, "%s%s%s%s%s", i ? "," : "", v6 ? "[" : "",
							   host ? host : "?", v6 ? "]" : "", portstr);
	}
	if (u->path && w < outlen)
		snprintf(out + w, outlen - w, "/%s", u->path);
}

const char *
an_url_param(an_url *u, const char *name)
{
	for (int i = 0; i < u->nparams; i++)
		if (strcmp(u->params[i].name, name) == 0)
		{
			u->params[i].used = 1;
			return u->params[i].value;
		}
	return NULL;
}

int
an_url_int(an_url *u, const char *name, int64_t def, int64_t min, int64_t max,
		   int64_t *out, an_err *err)
{
	const char *v = an_url_param(u, name);
	char	   *end;
	long long	n;

	if (v == NULL)
	{
		*out = def;
		return 0;
	}
	errno = 0;
	n = strtoll(v, &end, 10);
	if (*v == '\0' || *end != '\0' || errno || n < min || n > max)
	{
		an_errf(err, "store URL parameter %s must be a whole number from %lld to %lld",
				name, (long long) min, (long long) max);
		return -1;
	}
	*out = n;
	return 0;
}

int
an_url_no_unknown(const an_url *u, const char *known, an_err *err)
{
	for (int i = 0; i < u->nparams; i++)
		if (!u->params[i].used)
		{
			an_errf(err, "store URL parameter \"%.40s\" is not known to %s stores: the parameters are %s",
					u->params[i].name, u->scheme, known);
			return -1;
		}
	return 0;
}

int
an_url_prefix(an_url *u, const char **out, an_err *err)
{
	const char *v = an_url_param(u, "prefix");
	size_t		len;

	if (v == NULL)
	{
		*out = "cron";
		return 0;
	}
	len = strlen(v);
	if (len == 0 || len > 64)
		goto bad;
	for (size_t i = 0; i < len; i++)
	{
		char		c = v[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '-'))
			goto bad;
	}
	*out = v;
	return 0;
bad:
	an_errf(err, "store URL parameter prefix must be 1 to 64 bytes of letters, digits, '_' and '-'");
	return -1;
}

int
an_url_skew(an_url *u, int64_t *skew_ms, an_err *err)
{
	return an_url_int(u, "max_skew_ms", AN_SKEW_DEFAULT_MS, 0, AN_MAX_LATE_MS_MAX, skew_ms, err);
}

int
an_url_durability(an_url *u, int *accept_loss, an_err *err)
{
	const char *v = an_url_param(u, "durability");

	*accept_loss = 0;
	if (v == NULL || strcmp(v, "crash-safe") == 0)
		return 0;
	if (strcmp(v, "accept-loss") == 0)
	{
		*accept_loss = 1;
		return 0;
	}
	an_errf(err, "store URL parameter durability must be crash-safe (the default) or accept-loss");
	return -1;
}
