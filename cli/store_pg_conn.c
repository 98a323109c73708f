/*
 * store_pg_conn.c — the PostgreSQL store's connection and round trips.
 *
 * Everything goes through libpq's non-blocking API (PQconnectStartParams and
 * PQconnectPoll, PQsendQueryParams, PQconsumeInput), and every wait on the
 * socket is an_wait_socket: bounded by a deadline, and ended at once when the
 * host asks to stop (store.h's duty).  libpq's own connect_timeout is enforced
 * only by its blocking calls, so the bound of a connection is kept here.
 *
 * A connection that was lost, timed out or abandoned is dropped; the next
 * call connects again (store_pg_errors.c says what the other errors are).
 */
#include <stdio.h>
#include <string.h>

#include "store_pg_int.h"

#define WHO_MAX (AN_PG_WHERE_MAX + 20)

static const char *
who(const an_pg *pg, char *buf)
{
	snprintf(buf, WHO_MAX, "PostgreSQL at %s", pg->where);
	return buf;
}

void
an_pg_drop(an_pg *pg)
{
	if (pg->conn)
		PQfinish(pg->conn);
	pg->conn = NULL;
}

/* Wait for the socket; on a timeout the caller says what ran out. */
static int
wait_socket(an_store *st, an_pg *pg, const an_deadline *d, const char *what, int for_write)
{
	char		w[WHO_MAX];
	int			fd = PQsocket(pg->conn);

	if (fd < 0)
		return an_store_fail(st, AN_E_CONNECT, "lost the connection to PostgreSQL at %s during %s",
							 pg->where, what);
	return an_wait_socket(st, d, who(pg, w), what, fd, for_write);
}

/* The connection went away during what: drop it, so the next call connects again. */
static int
lost(an_store *st, an_pg *pg, const char *what, const PGresult *res)
{
	const char *m = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	char		first[AN_ERRMAX],
				rest[AN_ERRMAX];

	an_pg_libpq_text(pg, m ? m : PQerrorMessage(pg->conn), first, rest);
	an_pg_drop(pg);
	return an_store_fail(st, AN_E_CONNECT, "lost the connection to PostgreSQL at %s during %s: %s",
						 pg->where, what, first);
}

/* A query that ran out of time, or that the host gave up: cancel it and drop the connection. */
static int
abandon(an_store *st, an_pg *pg, const char *what, int rc, const an_deadline *d)
{
	an_pg_cancel(pg->conn);
	an_pg_drop(pg);
	if (rc != AN_E_TIMEOUT)
		return rc;
	an_store_fail(st, AN_E_TIMEOUT, "PostgreSQL at %s did not answer %s within %lld ms", pg->where, what,
				  (long long) d->timeout_ms);
	return an_store_detailf(st, "The query was canceled and the connection closed; the next call connects again.");
}

/* Send sql on the open connection and wait, until d, for its one result. */
static int
exec_by(an_store *st, an_pg *pg, const an_deadline *d, const char *what, const char *sql,
		int nparams, const char *const *values, PGresult **out)
{
	PGresult   *keep = NULL,
			   *r;
	int			rc,
				f;

	*out = NULL;
	if (!PQsendQueryParams(pg->conn, sql, nparams, NULL, values, NULL, NULL, 0))
		return lost(st, pg, what, NULL);
	while ((f = PQflush(pg->conn)) != 0)
	{
		if (f < 0)
			return lost(st, pg, what, NULL);
		if ((rc = wait_socket(st, pg, d, what, 1)) != AN_OK)
			return abandon(st, pg, what, rc, d);
	}
	for (;;)
	{
		while (PQisBusy(pg->conn))
		{
			if ((rc = wait_socket(st, pg, d, what, 0)) != AN_OK)
			{
				PQclear(keep);
				return abandon(st, pg, what, rc, d);
			}
			if (!PQconsumeInput(pg->conn))
			{
				rc = lost(st, pg, what, keep);
				PQclear(keep);
				return rc;
			}
		}
		if ((r = PQgetResult(pg->conn)) == NULL)
			break;
		/* One statement, one result; an error after it (a lost connection) wins. */
		if (keep == NULL || (PQresultStatus(keep) == PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_TUPLES_OK))
		{
			PQclear(keep);
			keep = r;
		}
		else
			PQclear(r);
	}
	if (PQstatus(pg->conn) != CONNECTION_OK || keep == NULL)
		rc = lost(st, pg, what, keep);
	else if (PQresultStatus(keep) != PGRES_TUPLES_OK)
		rc = an_pg_server_error(st, pg, keep);
	else
	{
		*out = keep;
		return AN_OK;
	}
	PQclear(keep);
	return rc;
}

/*
 * The server's notices and warnings are dropped: libpq would print each on
 * stderr, where the command writes one line per error and nothing else.
 */
static void
drop_notice(void *arg, const PGresult *res)
{
	(void) arg;
	(void) res;
}

int
an_pg_connect(an_store *st, an_pg *pg, const an_deadline *call)
{
	static const char *const keys[] = {"fallback_application_name", "dbname", NULL};
	const char *values[] = {"anarchon", pg->url, NULL};
	PostgresPollingStatusType ps = PGRES_POLLING_WRITING;
	an_deadline d;
	PGresult   *res;
	int			rc;

	an_pg_drop(pg);
	an_deadline_start(&d, pg->connect_timeout_ms);
	if (call && call->end_ms < d.end_ms)
		d = *call;
	/* expand_dbname: the URL is libpq's own connection URI; its parameters override ours. */
	if ((pg->conn = PQconnectStartParams(keys, values, 1)) == NULL)
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	if (PQstatus(pg->conn) == CONNECTION_BAD)
		return an_pg_connect_failed(st, pg);
	PQsetNoticeReceiver(pg->conn, drop_notice, NULL);
	/* libpq's protocol: start as if PQconnectPoll had asked to write. */
	while (ps != PGRES_POLLING_OK)
	{
		if (ps == PGRES_POLLING_FAILED)
			return an_pg_connect_failed(st, pg);
		if ((rc = wait_socket(st, pg, &d, "the connection", ps == PGRES_POLLING_WRITING)) != AN_OK)
		{
			an_pg_drop(pg);
			if (rc != AN_E_TIMEOUT)
				return rc;
			an_store_fail(st, AN_E_TIMEOUT, "cannot connect to PostgreSQL at %s: no answer within %lld ms",
						  pg->where, (long long) d.timeout_ms);
			an_store_detailf(st, "connect_timeout of the URL bounds a connection (%d s when it gives none).",
							 AN_PG_CONNECT_TIMEOUT_MS / 1000);
			return an_store_hintf(st, "Check that the server runs and can be reached, or raise connect_timeout.");
		}
		ps = PQconnectPoll(pg->conn);
	}
	if (PQsetnonblocking(pg->conn, 1) != 0)
		return lost(st, pg, "the connection", NULL);

	/* A database without the extension is a configuration error, said at open. */
	if (call == NULL)
		an_deadline_start(&d, AN_PG_SLACK_MS);
	else
		d = *call;
	if ((rc = exec_by(st, pg, &d, "the check for the extension",
					  "SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'anarchon'", 0, NULL, &res)) != AN_OK)
		return rc;
	rc = PQntuples(res);
	PQclear(res);
	if (rc > 0)
		return AN_OK;
	an_store_fail(st, AN_E_CONFIG, "the anarchon extension is not installed in database \"%s\" of PostgreSQL at %s",
				  PQdb(pg->conn), pg->where);
	an_pg_drop(pg);
	return an_store_hintf(st, "Run CREATE EXTENSION anarchon in that database (as a role that may create it).");
}

int
an_pg_query(an_store *st, an_pg *pg, const char *what, const char *sql, int nparams,
			const char *const *values, int64_t timeout_ms, PGresult **res)
{
	an_deadline d;
	int			rc;

	*res = NULL;
	/* The last AN_PG_CANCEL_WAIT_MS of the bound are kept for a cancel. */
	an_deadline_start(&d, timeout_ms - AN_PG_CANCEL_WAIT_MS);
	d.timeout_ms = timeout_ms;
	for (int tries = 0;; tries++)
	{
		int			reused = pg->conn != NULL && PQstatus(pg->conn) == CONNECTION_OK;

		if (!reused)
			an_pg_drop(pg);
		if (pg->conn == NULL && (rc = an_pg_connect(st, pg, &d)) != AN_OK)
			return rc;
		rc = exec_by(st, pg, &d, what, sql, nparams, values, res);

		/*
		 * A kept connection that had died while idle (a server restart, an
		 * idle timeout) fails at once: one more try, on a new one.  Each
		 * function is safe to call twice with one token: a claim resent is
		 * recognised as ours, a heartbeat extends the lease again, a finish
		 * of the same run by the same token answers as the first did.
		 */
		if (rc != AN_E_CONNECT || !reused || pg->conn != NULL || tries > 0 || an_deadline_left(&d) == 0)
			return rc;
		an_store_clear(st);
	}
}
