/*
 * local_pause.c — pauses on the SQLite local store: anarchon_pauses, one
 * row per pause, kept after it ends (local_store.h has the table).
 *
 * A pause is current while until is NULL or ahead of the store's clock (the
 * database's VFS, the clock of its claims).  Pause and resume write inside
 * BEGIN IMMEDIATE, like a claim, so two of them at once are ordered; a
 * claim reads the pause inside its own BEGIN IMMEDIATE, with the same kept
 * statement (an_sqlite_local_paused_at), so a pause is either committed
 * before the claim's write lock or waits for the claim's commit.
 */
#include <string.h>

#include "local_store.h"

SQLITE_EXTENSION_INIT3

static const char *const sql_paused =
"SELECT max(coalesce(until, 9223372036854775807)) FROM anarchon_pauses"
" WHERE job = ?1 AND (until IS NULL OR until > ?2)";
static const char *const sql_pauses =
"SELECT since, coalesce(until, 9223372036854775807) FROM anarchon_pauses"
" WHERE job = ?1 AND since < ?3 AND (until IS NULL OR until > ?2) ORDER BY since";
static const char *const sql_extend =
"UPDATE anarchon_pauses SET until = ?3 WHERE job = ?1 AND (until IS NULL OR until > ?2)";
static const char *const sql_start =
"INSERT INTO anarchon_pauses (job, since, until) VALUES (?1, ?2, ?3)"
" ON CONFLICT (job, since) DO UPDATE SET until = excluded.until";
static const char *const sql_end =
"UPDATE anarchon_pauses SET until = ?2 WHERE job = ?1 AND (until IS NULL OR until > ?2)";

/* What one call carries into its body. */
typedef struct pause_call
{
	const an_request *rq;
	int64_t		until;           /* pause: 0 = until resumed; paused: the answer */
	int64_t		from,
				to;
	an_pause_span *spans;
	size_t		max,
				n;
	int			changed;         /* resume: a pause was ended */
} pause_call;

/* Statement id with ?1 job, ?2 the store's clock; NULL (and AN_OK) without a table. */
static int
prepare(an_store *st, int id, const char *sql, const pause_call *c, sqlite3_stmt **s)
{
	int			rc = an_sqlite_local_stmt(st, id, sql, s);

	if (rc != AN_OK || *s == NULL)
		return rc;
	sqlite3_bind_text(*s, 1, c->rq->job, -1, SQLITE_STATIC);
	sqlite3_bind_int64(*s, 2, an_sqlite_local_now(st));
	return AN_OK;
}

/* Step a statement that returns no rows; *changed = rows it changed. */
static int
write_step(an_store *st, sqlite3_stmt *s, const char *what, int *changed)
{
	int			rc = sqlite3_step(s);

	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return an_sqlite_local_fail(st, what);
	*changed = sqlite3_changes(sqlite3_db_handle(s));
	return AN_OK;
}

static void
bind_until(sqlite3_stmt *s, int64_t until)
{
	if (until == 0)
		sqlite3_bind_null(s, 3);
	else
		sqlite3_bind_int64(s, 3, until);
}

static int
do_pause(an_store *st, void *arg)
{
	pause_call *c = arg;
	sqlite3_stmt *s;
	int			changed = 0;
	int			rc;

	if (c->until != 0 && c->until <= an_sqlite_local_now(st))
		return an_store_fail(st, AN_E_INPUT, "until must be in the future");
	if ((rc = prepare(st, AN_LOCAL_EXTEND, sql_extend, c, &s)) != AN_OK)
		return rc;
	bind_until(s, c->until);
	if ((rc = write_step(st, s, "anarchon_pause", &changed)) != AN_OK || changed > 0)
		return rc;
	if ((rc = prepare(st, AN_LOCAL_START, sql_start, c, &s)) != AN_OK)
		return rc;
	bind_until(s, c->until);
	return write_step(st, s, "anarchon_pause", &changed);
}

static int
do_resume(an_store *st, void *arg)
{
	pause_call *c = arg;
	sqlite3_stmt *s;
	int			rc;

	if ((rc = prepare(st, AN_LOCAL_END, sql_end, c, &s)) != AN_OK)
		return rc;
	return write_step(st, s, "anarchon_resume", &c->changed);
}

int
an_sqlite_local_paused_at(an_store *st, const char *job, int64_t now, int64_t *until)
{
	sqlite3_stmt *s;
	int			rc;

	*until = 0;
	if ((rc = an_sqlite_local_stmt(st, AN_LOCAL_PAUSED, sql_paused, &s)) != AN_OK || s == NULL)
		return rc;
	sqlite3_bind_text(s, 1, job, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, now);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*until = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? AN_OK : an_sqlite_local_fail(st, "reading the pause of a job");
}

static int
do_paused(an_store *st, void *arg)
{
	pause_call *c = arg;

	return an_sqlite_local_paused_at(st, c->rq->job, an_sqlite_local_now(st), &c->until);
}

static int
do_pauses(an_store *st, void *arg)
{
	pause_call *c = arg;
	sqlite3_stmt *s;
	int			rc;

	c->n = 0;
	if ((rc = prepare(st, AN_LOCAL_PAUSES, sql_pauses, c, &s)) != AN_OK || s == NULL)
		return rc;
	/* The range, not the clock: ?2 is from, ?3 to. */
	sqlite3_bind_int64(s, 2, c->from);
	sqlite3_bind_int64(s, 3, c->to);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
	{
		if (c->n < c->max)
		{
			c->spans[c->n].start = sqlite3_column_int64(s, 0);
			c->spans[c->n].end = sqlite3_column_int64(s, 1);
		}
		c->n++;
	}
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? AN_OK : an_sqlite_local_fail(st, "reading the pauses of a job");
}

int
an_sqlite_local_pause(an_store *st, const an_request *rq, int64_t until)
{
	pause_call	c = {.rq = rq, .until = until};

	return an_sqlite_local_call(st, "anarchon_pause", rq->settings, 1, do_pause, &c);
}

int
an_sqlite_local_resume(an_store *st, const an_request *rq, int *was_paused)
{
	pause_call	c = {.rq = rq};
	int			rc = an_sqlite_local_call(st, "anarchon_resume", rq->settings, 1, do_resume, &c);

	*was_paused = rc == AN_OK && c.changed > 0;
	return rc;
}

int
an_sqlite_local_paused(an_store *st, const an_request *rq, int64_t *until)
{
	pause_call	c = {.rq = rq};
	int			rc = an_sqlite_local_call(st, NULL, rq->settings, 0, do_paused, &c);

	*until = rc == AN_OK ? c.until : 0;
	return rc;
}

int
an_sqlite_local_pauses(an_store *st, const an_request *rq, int64_t from, int64_t to,
					   an_pause_span *spans, size_t max, size_t *n)
{
	pause_call	c = {.rq = rq, .from = from, .to = to, .spans = spans, .max = max};
	int			rc = an_sqlite_local_call(st, NULL, rq->settings, 0, do_pauses, &c);

	*n = c.n;
	return rc;
}
