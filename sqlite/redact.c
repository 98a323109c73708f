/*
 * redact.c — a store URL as a user may see it: the password replaced by
 * "***", for messages and for the rows of anarchon_stats().
 */
#include <string.h>

#include "host.h"
#include "url.h"

SQLITE_EXTENSION_INIT3

static char *redacted_credentials(const char *url);

/* Query parameters whose value is a secret: replaced by "***" too. */
static const char *const secret_params[] = {"password", "sentinel_password", "token", NULL};

/* url with the value of every secret query parameter replaced by "***"; sqlite3_malloc'd. */
static char *
without_secret_params(char *url)
{
	char	   *q = url ? strchr(url, '?') : NULL;

	while (q)
	{
		char	   *name = q + 1;
		char	   *eq = strchr(name, '=');
		char	   *end = name + strcspn(name, "&#");

		q = *end == '&' ? end : NULL;
		if (eq == NULL || eq > end)
			continue;
		for (int i = 0; secret_params[i]; i++)
			if ((size_t) (eq - name) == strlen(secret_params[i]) &&
				strncmp(name, secret_params[i], (size_t) (eq - name)) == 0)
			{
				char	   *masked = sqlite3_mprintf("%.*s***%s", (int) (eq + 1 - url), url, end);

				if (masked == NULL)
				{
					sqlite3_free(url);
					return NULL;
				}
				q = q ? masked + (eq + 1 - url) + 3 : NULL;
				sqlite3_free(url);
				url = masked;
				break;
			}
	}
	return url;
}

/*
 * The credentials end where the URL parser says they do (an_url_credentials_end),
 * so a password holding '/', '?', '#' or '@' can never be shown.
 */
char *
an_sqlite_redacted_url(const char *url)
{
	return without_secret_params(redacted_credentials(url));
}

static char *
redacted_credentials(const char *url)
{
	const char *auth = strstr(url, "://");
	const char *at;
	const char *colon;

	if (auth == NULL)
		return sqlite3_mprintf("%s", url);
	auth += 3;
	if ((at = an_url_credentials_end(auth)) == NULL)
		return sqlite3_mprintf("%s", url);
	colon = memchr(auth, ':', (size_t) (at - auth));
	/* nats://TOKEN@host: the whole user part is the secret. */
	if (colon == NULL)
		return sqlite3_mprintf("%.*s***%s", (int) (auth - url), url, at);
	return sqlite3_mprintf("%.*s***%s", (int) (colon + 1 - url), url, at);
}
