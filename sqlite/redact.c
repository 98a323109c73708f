/*
 * redact.c — a store URL as a user may see it: the password replaced by
 * "***", for messages and for the rows of anarchon_stats().
 */
#include <string.h>

#include "host.h"
#include "url.h"

SQLITE_EXTENSION_INIT3

/*
 * The credentials end where the URL parser says they do (an_url_credentials_end),
 * so a password holding '/', '?', '#' or '@' can never be shown.
 */
char *
an_sqlite_redacted_url(const char *url)
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
