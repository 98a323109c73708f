/*
 * store_pg_int.h — what the files of the command's PostgreSQL store share
 * (not for the rest of the command: it sees only store_pg.h).
 *
 *   store_pg_url.c    the URL: checked with libpq's own parser, named in
 *                     messages without its password, connect_timeout
 *   store_pg_conn.c   the connection and every round trip: libpq's
 *                     non-blocking API, bounded waits, errors
 *   store_pg_errors.c what a failure is: libpq's words at connect, the
 *                     server's SQLSTATE, message, DETAIL and HINT after
 *   store_pg_cancel.c the cancel of a query that ran out of time
 *   store_pg.c        the methods: claim, heartbeat, finish, check, recall
 *   store_pg_stats.c  `anarchon stats`: the server's anarchon_stats()
 */
#ifndef ANARCHON_CLI_STORE_PG_INT_H
#define ANARCHON_CLI_STORE_PG_INT_H

#include "store_pg_api.h"

#include "store_pg.h"
#include "wait.h"

/* What a call may take beyond busy_timeout_ms: the round trip and the server's own work. */
#define AN_PG_SLACK_MS       10000
/* Of that slack, what a timed-out call keeps for sending its cancel. */
#define AN_PG_CANCEL_WAIT_MS 1000
/* The connection's bound when the URL gives no connect_timeout. */
#define AN_PG_CONNECT_TIMEOUT_MS 10000

#define AN_PG_WHERE_MAX 320
#define AN_PG_SECRETS_MAX 8

typedef struct an_pg
{
	char	   *url;            /* as given: it may hold a password, so it is never shown */
	char		where[AN_PG_WHERE_MAX];	/* the URL without its password, for messages */
	char	   *secrets[AN_PG_SECRETS_MAX];	/* what no message may show (an_pg_scrub) */
	int			nsecrets;
	int64_t		connect_timeout_ms;
	PGconn	   *conn;           /* NULL until connected, and after a lost connection */
} an_pg;

/*
 * store_pg_url.c: parse url with libpq's parser; fill where, secrets and
 * connect_timeout_ms of pg (pg->url untouched).  On error fail st
 * with AN_E_CONFIG, never repeating a password of the URL.
 */
int			an_pg_parse_url(an_store *st, const char *url, an_pg *pg);

/* text as it may be shown: the URL's secrets replaced by "***". */
void		an_pg_scrub(const an_pg *pg, const char *text, char *out, size_t outlen);

/* The bound of a call: busy_timeout_ms, which the server may wait for a lock, plus the slack. */
int64_t		an_pg_call_timeout(const an_request *rq);

/* store_pg_pause.c: the pause methods (core/store.h, version 5). */
int			an_pg_pause(an_store *st, const an_request *rq, int64_t until);
int			an_pg_resume(an_store *st, const an_request *rq, int *was_paused);
int			an_pg_pauses(an_store *st, const an_request *rq, int64_t from, int64_t to,
						 an_pause_span *spans, size_t max, size_t *n);

/*
 * store_pg_conn.c: run sql with text parameters and wait for its one result,
 * connecting first when there is no connection.  what names the request in
 * messages ("the claim").  AN_OK with *res a PGRES_TUPLES_OK result the caller
 * clears; else st fails with the class of the server's SQLSTATE, or of the
 * failure to reach it.  The call ends within timeout_ms: then, or when the
 * host cancels, the query is canceled and the connection dropped.
 */
int			an_pg_query(an_store *st, an_pg *pg, const char *what, const char *sql,
						int nparams, const char *const *values, int64_t timeout_ms,
						PGresult **res);

/*
 * Connect, and check that the extension is installed, within connect_timeout
 * (or by the call's deadline when it ends earlier; NULL at open).
 */
int			an_pg_connect(an_store *st, an_pg *pg, const an_deadline *call);

/* Close the connection, if any; the next query connects again. */
void		an_pg_drop(an_pg *pg);

/*
 * store_pg_errors.c: fail st for the connection libpq could not make (and
 * drop it); for the error result res of the server; and split libpq's text
 * (scrubbed) into its first line, without libpq's "connection to server ...
 * failed: " and severity prefixes, and the rest as a sentence.
 */
int			an_pg_connect_failed(an_store *st, an_pg *pg);
int			an_pg_server_error(an_store *st, an_pg *pg, const PGresult *res);
void		an_pg_libpq_text(const an_pg *pg, const char *raw, char *first, char *rest);

/*
 * store_pg_cancel.c: ask the server to cancel the query running on conn, and
 * wait at most AN_PG_CANCEL_WAIT_MS for it to take the request.
 */
void		an_pg_cancel(PGconn *conn);

#endif							/* ANARCHON_CLI_STORE_PG_INT_H */
