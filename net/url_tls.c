/*
 * url_tls.c — the TLS parameters of a store URL, read the same way for
 * every store, so that `ca`, `cert`, `key`, `servername` and
 * `insecure_skip_verify` mean one thing whichever store reads them, and
 * the one rule for credentials without TLS (an_url_plaintext_auth).
 */
#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

#include "anarchon.h"
#include "url.h"

const char *
an_tls_servername_refused(const char *name)
{
	if (name == NULL)
		return NULL;
	if (name[0] == '.')
		return "it starts with '.', which OpenSSL would take as \"any name under this domain\"";
	if (strchr(name, '*') != NULL)
		return "it holds a '*': a wildcard belongs in a certificate, not in the name asked for";
	return NULL;
}

int
an_url_tls(an_url *u, int allowed, an_tls_config *cfg, int *any, an_err *err)
{
	static const char *const names[] = {"ca", "cert", "key", "servername", "insecure_skip_verify"};
	const char *insecure;

	memset(cfg, 0, sizeof(*cfg));
	cfg->ca = an_url_param(u, "ca");
	cfg->cert = an_url_param(u, "cert");
	cfg->key = an_url_param(u, "key");
	cfg->servername = an_url_param(u, "servername");
	insecure = an_url_param(u, "insecure_skip_verify");
	*any = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
	{
		const char *v = NULL;

		for (int j = 0; j < u->nparams; j++)
			if (strcmp(u->params[j].name, names[i]) == 0)
				v = u->params[j].value;
		if (v == NULL)
			continue;
		*any = 1;
		if (!allowed)
		{
			an_errf(err, "store URL parameter %s is a TLS parameter, and this URL does not use TLS: use %s://",
					names[i], strcmp(u->scheme, "nats") == 0 ? "tls" : strcmp(u->scheme, "amqp") == 0 ? "amqps" : "rediss");
			return -1;
		}
		if (v[0] == '\0')
		{
			an_errf(err, "store URL parameter %s must not be empty", names[i]);
			return -1;
		}
	}
	if (an_tls_servername_refused(cfg->servername) != NULL)
	{
		an_errf(err, "store URL parameter servername must be one exact host name: %s",
				an_tls_servername_refused(cfg->servername));
		return -1;
	}
	if ((cfg->cert == NULL) != (cfg->key == NULL))
	{
		an_errf(err, "store URL parameters cert and key go together: the client certificate and its private key");
		return -1;
	}
	if (insecure != NULL)
	{
		if (strcmp(insecure, "true") != 0 && strcmp(insecure, "false") != 0)
		{
			an_errf(err, "store URL parameter insecure_skip_verify must be true or false");
			return -1;
		}
		cfg->insecure = strcmp(insecure, "true") == 0;
	}
	return 0;
}

int
an_host_is_loopback(const char *host)
{
	unsigned char a[16];
	static const unsigned char v6_loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

	if (inet_pton(AF_INET, host, a) == 1)
		return a[0] == 127;
	if (inet_pton(AF_INET6, host, a) == 1)
		return memcmp(a, v6_loopback, 16) == 0;
	return strcasecmp(host, "localhost") == 0;
}

int
an_url_plaintext_auth(an_url *u, int tls, const char *secret, an_err *err)
{
	const char *v = an_url_param(u, "plaintext_auth");
	int			allowed = 0;

	if (v != NULL)
	{
		if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
		{
			an_errf(err, "store URL parameter plaintext_auth must be true or false");
			return -1;
		}
		allowed = strcmp(v, "true") == 0;
	}
	if (tls || secret == NULL || allowed)
		return 0;
	for (int i = 0; i < u->nservers; i++)
		if (!an_host_is_loopback(u->servers[i].host))
		{
			an_errf(err, "store URL would send its %s in clear to %.100s, which is not a loopback address",
					secret, u->servers[i].host);
			return 1;
		}
	return 0;
}
