/*
 * redact.h — the one rule that turns a store's address into text a user may
 * see: every host (PostgreSQL, SQLite, the command) and every message, log
 * line or counter row that shows a store URL goes through an_redact_url.
 *
 * What it hides, in every scheme the project reads (redis, rediss,
 * redis+sentinel, amqp, amqps, nats, tls, postgresql, postgres, sqlite,
 * with one server or several separated by commas), and in libpq's
 * keyword=value connection strings:
 *
 *   - the password of the userinfo: everything after the user's first ':'
 *     up to the LAST '@' of the URL, the separator the URL parser uses
 *     (an_url_credentials_end), so a password holding a raw '@', '/', '?',
 *     '#' or ':' is hidden whole: redis://u:p@ss@h → redis://u:***@h;
 *   - a userinfo without ':' whole, except where the scheme makes it a
 *     login name (amqp, amqps, postgresql, postgres): in nats://TOKEN@h
 *     and tls://TOKEN@h it is the token, and in any other scheme it may be;
 *   - the value of every secret parameter (an_redact_secret_param), in the
 *     query of a URL or as a keyword of a connection string.
 *
 * Host, port, path (database, vhost, master name) and the other parameters
 * stay visible.  The text is never decoded: a secret is hidden in the form
 * it was written, percent-encoded or not.
 */
#ifndef ANARCHON_REDACT_H
#define ANARCHON_REDACT_H

#include <stddef.h>

/*
 * Write text redacted into out (outlen bytes, always terminated when outlen
 * > 0; a cut result is cut, never less redacted).  Returns the length of
 * the whole redacted text, as snprintf does, so an_redact_url(t, NULL, 0)
 * sizes a buffer.  NULL text is written as "".
 */
size_t		an_redact_url(const char *text, char *out, size_t outlen);

/* The same, in a malloc'd string (NULL when out of memory). */
char	   *an_redact_url_dup(const char *text);

/*
 * Is the parameter name (len bytes, any case) a secret?  password,
 * sentinel_password, token, auth_token, sslpassword (libpq), and the NATS
 * credentials nkey, seed, creds and jwt: those name files, but a seed or a
 * JWT pasted where its file's path belongs must not be shown either.  The
 * TLS parameters ca, cert and key are paths of files whose contents are not
 * in the URL, and stay visible.
 */
int			an_redact_secret_param(const char *name, size_t len);

/* "password, sentinel_password, ...": the list above, for documents and messages. */
#define AN_REDACT_SECRET_PARAMS "password, sentinel_password, token, auth_token, sslpassword, nkey, seed, creds, jwt"

#endif							/* ANARCHON_REDACT_H */
