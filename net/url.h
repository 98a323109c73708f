/*
 * url.h — store URLs, parsed once for every network store.
 *
 *   redis://[user:pass@]host[:port][/db]?strategy=lease&prefix=cron
 *   amqp://user:pass@host[:port]/vhost?slot_ttl_ms=...
 *   nats://[token@]host[:port]?stream=CRON&duplicate_window_ms=...
 *
 * User, password, path and parameter values are percent-decoded.  Errors name
 * the part that is wrong and never repeat the user's credentials.  A store
 * names itself in its messages with an_url_name(); any other text that shows
 * a whole URL shows an_redact_url()'s form of it (redact.h).
 */
#ifndef ANARCHON_URL_H
#define ANARCHON_URL_H

#include <stddef.h>
#include <stdint.h>

#include "tls.h"

#define AN_URL_MAX_PARAMS 16
#define AN_URL_MAX_SERVERS 8

typedef struct an_url_kv
{
	char	   *name;
	char	   *value;
	int			used;            /* set by the an_url_* readers */
} an_url_kv;

/* One server of a URL that names several: scheme://h1:p1,h2:p2/... */
typedef struct an_url_server
{
	char	   *host;
	int			port;            /* 0 when absent */
} an_url_server;

typedef struct an_url
{
	char	   *scheme;          /* "redis", "amqp", "nats" (lower case) */
	char	   *user;            /* NULL when absent */
	char	   *password;        /* NULL when absent */
	char	   *host;            /* never empty; IPv6 without brackets */
	int			port;            /* 0 when absent */
	int			nservers;        /* 1, or more when the URL lists servers */
	an_url_server servers[AN_URL_MAX_SERVERS];	/* servers[0] is host, port */
	char	   *path;            /* after the first '/', decoded; NULL when absent */
	int			nparams;
	an_url_kv	params[AN_URL_MAX_PARAMS];
	char	   *buf;             /* owns every string above */
} an_url;

/*
 * The '@' that ends the credentials of a URL whose authority (the text after
 * "://") starts at authority, or NULL when it has none: the last '@' of the
 * whole URL, so that a password with an unencoded '/', '?' or '#' is still a
 * password.  The parser and every redaction of a raw URL use this one rule.
 */
const char *an_url_credentials_end(const char *authority);

/* Parse url into u.  On error returns -1 with a message in err; u needs no free. */
int			an_url_parse(const char *url, an_url *u, an_err *err);
void		an_url_free(an_url *u);

/*
 * The store's name for its messages: "scheme://host:port/path" (every
 * server, separated by commas), made from the parsed parts that are not
 * secret.  No userinfo and no query, so nothing of a credential; where the
 * whole URL must be shown (its query included), an_redact_url is the rule.
 */
void		an_url_name(const an_url *u, char *out, size_t outlen);

/* The raw value of a query parameter, or NULL; marks it used. */
const char *an_url_param(an_url *u, const char *name);

/*
 * Read an integer parameter in [min, max], def when absent.  Returns -1 with a
 * message naming the parameter and its range when it is not such a number.
 */
int			an_url_int(an_url *u, const char *name, int64_t def, int64_t min,
					   int64_t max, int64_t *out, an_err *err);

/*
 * Refuse parameters nobody read: call after reading all known ones.  `known`
 * lists them for the message ("strategy, prefix, timeout_ms").
 */
int			an_url_no_unknown(const an_url *u, const char *known, an_err *err);

/*
 * A prefix parameter (default "cron"): 1–64 bytes of [A-Za-z0-9_-], so it is
 * safe in Redis keys, queue names and NATS subjects alike.
 */
int			an_url_prefix(an_url *u, const char **out, an_err *err);

/*
 * The durability parameter, the same on every store: "crash-safe" (the
 * default: a server that would forget an acknowledged claim when it crashes
 * is refused) or "accept-loss" (the caller takes that risk).  Sets
 * *accept_loss; -1 with a message naming both values for anything else.
 */
int			an_url_durability(an_url *u, int *accept_loss, an_err *err);

/*
 * The max_skew_ms parameter of the stores that judge a first claim's
 * lateness on the host's clock but forget on the server's (RabbitMQ, NATS,
 * Redis idmp): how far apart the instances' clocks may be.  The store's
 * memory must cover max_late_ms plus twice this (an_wonlost_memory_ok).
 * Default AN_SKEW_DEFAULT_MS; 0 up to AN_MAX_LATE_MS_MAX.
 */
#define AN_SKEW_DEFAULT_MS INT64_C(10000)
int			an_url_skew(an_url *u, int64_t *skew_ms, an_err *err);

/*
 * The TLS parameters, named alike on every store (url_tls.c): ca, cert, key,
 * servername and insecure_skip_verify=true.  allowed: the URL may use TLS
 * (its scheme asks for it, rediss://, amqps://, tls://, or the server may
 * demand it, as NATS's can); otherwise any of them is refused, since it
 * would silently do nothing.  cert and key go together.  cfg's strings are
 * u's.  *any is set when one of them was given.
 */
#define AN_URL_TLS_PARAMS "ca, cert, key, servername, insecure_skip_verify"
int			an_url_tls(an_url *u, int allowed, an_tls_config *cfg, int *any, an_err *err);

/*
 * Credentials never go in clear outside this machine.  secret names what
 * the URL would send that a listener could reuse ("password", "token",
 * "sentinel_password"; NULL: nothing); tls: every connection of the store
 * is TLS.  Without TLS, a secret to any server that is not a loopback
 * address (127.0.0.0/8, ::1, or the name localhost) is refused — before any
 * connection, so nothing is sent — unless the URL says plaintext_auth=true.
 * Reads plaintext_auth (true or false), so call it before
 * an_url_no_unknown.  Returns 0, -1 for a bad plaintext_auth, or 1 with
 * the refusal in err (the caller adds AN_PLAINTEXT_AUTH_HINT).
 */
int			an_url_plaintext_auth(an_url *u, int tls, const char *secret, an_err *err);
#define AN_PLAINTEXT_AUTH_HINT "Use TLS (rediss://, amqps://, tls://), or, on a network you trust, accept that the secret is readable on the way with plaintext_auth=true in the URL."

/* Is host (as in a URL, IPv6 without brackets) a loopback address? */
int			an_host_is_loopback(const char *host);

#endif							/* ANARCHON_URL_H */
