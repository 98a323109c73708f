/*
 * url_tls.c — the TLS parameters of a store URL, read the same way for
 * every store, so that `ca`, `cert`, `key`, `servername` and
 * `insecure_skip_verify` mean one thing whichever store reads them.
 */
#include <string.h>

#include "anarchon.h"
#include "url.h"

int
an_url_tls(an_url *u, int allowed, an_tls_config *cfg, int *any, char *err, size_t errlen)
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
			an_errf(err, errlen, "store URL parameter %s is a TLS parameter, and this URL does not use TLS: use %s://",
					names[i], strcmp(u->scheme, "nats") == 0 ? "tls" : strcmp(u->scheme, "amqp") == 0 ? "amqps" : "rediss");
			return -1;
		}
		if (v[0] == '\0')
		{
			an_errf(err, errlen, "store URL parameter %s must not be empty", names[i]);
			return -1;
		}
	}
	if ((cfg->cert == NULL) != (cfg->key == NULL))
	{
		an_errf(err, errlen, "store URL parameters cert and key go together: the client certificate and its private key");
		return -1;
	}
	if (insecure != NULL)
	{
		if (strcmp(insecure, "true") != 0 && strcmp(insecure, "false") != 0)
		{
			an_errf(err, errlen, "store URL parameter insecure_skip_verify must be true or false");
			return -1;
		}
		cfg->insecure = strcmp(insecure, "true") == 0;
	}
	return 0;
}
