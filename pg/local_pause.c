/*
 * local_pause.c — pauses on the PostgreSQL local store: anarchon.pauses,
 * one row per pause, kept after it ends (pg/sql/65-pause.sql).
 *
 * A pause is current while until is NULL or ahead of the database clock.
 * The queries are kept plans run as the schema's owner, like the local
 * store's own.  Two pauses of one job at once may both insert a row: a job
 * is paused while any row is current, and resume ends them all, so the
 * answer is the same as with one.  A pause is visible to claims once the
 * caller's transaction commits (in autocommit, when anarchon_pause returns),
 * and that commit is flushed whatever synchronous_commit says (durable.c).
 * anarchon_prune deletes the pauses that ended before its cutoff
 * (local_store.c), with the runs of that time.
 */
#include "anarchon_pg.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

typedef enum pause_query
{
	P_PAUSED, P_PAUSES, P_EXTEND, P_START, P_END, P_COUNT
} pause_query;

/* $1 job, $2 the database clock, $3 the pause's end (NULL: until resumed) or the range's end. */
static const char *const pause_sql[P_COUNT] = {
	[P_PAUSED] = "SELECT max(coalesce(until, 'infinity')) FROM anarchon.pauses"
	" WHERE job = $1 AND (until IS NULL OR until > $2)",
	[P_PAUSES] = "SELECT since, coalesce(until, 'infinity') FROM anarchon.pauses"
	" WHERE job = $1 AND since < $3 AND (until IS NULL OR until > $2) ORDER BY since",
	[P_EXTEND] = "UPDATE anarchon.pauses SET until = $3 WHERE job = $1 AND (until IS NULL OR until > $2)",
	[P_START] = "INSERT INTO anarchon.pauses (job, since, until) VALUES ($1, $2, $3)"
	" ON CONFLICT (job, since) DO UPDATE SET until = EXCLUDED.until",
	[P_END] = "UPDATE anarchon.pauses SET until = $2 WHERE job = $1 AND (until IS NULL OR until > $2)",
};

static SPIPlanPtr pause_plans[P_COUNT];

/*
 * Run query q as the schema's owner with (job, at, end); end 0 is NULL.
 * Leaves SPI connected: the caller reads SPI_tuptable, then calls done().
 */
static uint64
run(pause_query q, an_pg_owner_state *owner, const char *job, int64 at, int64 end)
{
	Oid			types[3] = {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID};
	Datum		v[3] = {CStringGetTextDatum(job), TimestampTzGetDatum(an_pg_ms_to_ts(at)), 0};
	char		nulls[3] = {' ', ' ', end == 0 ? 'n' : ' '};
	int			rc;

	if (end != 0)
		v[2] = TimestampTzGetDatum(end == AN_PAUSE_OPEN ? DT_NOEND : an_pg_ms_to_ts(end));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	an_pg_owner_enter(owner);
	if (pause_plans[q] == NULL)
	{
		SPIPlanPtr	p = SPI_prepare(pause_sql[q], q == P_END ? 2 : 3, types);

		if (p == NULL || SPI_keepplan(p) != 0)
			elog(ERROR, "could not prepare a query of anarchon.pauses: %s",
				 SPI_result_code_string(SPI_result));
		pause_plans[q] = p;
	}
	rc = SPI_execute_plan(pause_plans[q], v, nulls, false, 0);
	if (rc < 0)
		elog(ERROR, "a query of anarchon.pauses failed: %s", SPI_result_code_string(rc));
	return SPI_processed;
}

static void
done(const an_pg_owner_state *owner)
{
	an_pg_owner_leave(owner);
	SPI_finish();
}

/* Column col of row r as ms; 'infinity' as AN_PAUSE_OPEN. */
static int64
ms_at(uint64 r, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, col, &isnull);

	if (isnull)
		return 0;
	return TIMESTAMP_NOT_FINITE(DatumGetTimestampTz(d)) ? AN_PAUSE_OPEN : an_pg_ts_to_ms(DatumGetTimestampTz(d));
}

int
an_pg_local_pause(an_store *st, const an_request *rq, int64_t until)
{
	an_pg_owner_state owner;
	int64		now = an_pg_now_ms();

	an_pg_commit_durably();
	if (run(P_EXTEND, &owner, rq->job, now, until) == 0)
	{
		done(&owner);
		run(P_START, &owner, rq->job, now, until);
	}
	done(&owner);
	return AN_OK;
}

int
an_pg_local_resume(an_store *st, const an_request *rq, int *was_paused)
{
	an_pg_owner_state owner;

	an_pg_commit_durably();
	*was_paused = run(P_END, &owner, rq->job, an_pg_now_ms(), 0) > 0;
	done(&owner);
	return AN_OK;
}

int
an_pg_local_paused(an_store *st, const an_request *rq, int64_t *until)
{
	an_pg_owner_state owner;

	*until = run(P_PAUSED, &owner, rq->job, an_pg_now_ms(), AN_PAUSE_OPEN) > 0 ? ms_at(0, 1) : 0;
	done(&owner);
	return AN_OK;
}

int
an_pg_local_pauses(an_store *st, const an_request *rq, int64_t from, int64_t to,
				   an_pause_span *spans, size_t max, size_t *n)
{
	an_pg_owner_state owner;
	uint64		rows = run(P_PAUSES, &owner, rq->job, from, to);

	for (uint64 r = 0; r < rows && r < max; r++)
	{
		spans[r].start = ms_at(r, 1);
		spans[r].end = ms_at(r, 2);
	}
	*n = (size_t) rows;
	done(&owner);
	return AN_OK;
}
