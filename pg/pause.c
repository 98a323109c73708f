/*
 * pause.c — pausing a job from PostgreSQL, on the store anarchon.store names
 * (the local store's anarchon.pauses, or a remote store's own):
 *
 *   anarchon_pause(job [, until timestamptz])  -> void
 *   anarchon_resume(job)                       -> boolean: it was paused
 *   anarchon_paused(job)                       -> timestamptz: the pause's end,
 *                                                 'infinity' until resumed,
 *                                                 NULL when not paused
 *   anarchon_pauses(job, from_at, to_at)       -> TABLE (since, until): the
 *                                                 pauses, past and current, that
 *                                                 overlap [from, to)
 *
 * Pause and resume are the job's owner's (job_rights.c, AN_PG_JOB_PAUSE);
 * reading a pause is open to pg_monitor too.  core/pause.c does the rest.
 */
#include "anarchon_pg.h"
#include "schedule_pg.h"

#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(anarchon_pause);
PG_FUNCTION_INFO_V1(anarchon_resume);
PG_FUNCTION_INFO_V1(anarchon_paused);
PG_FUNCTION_INFO_V1(anarchon_pauses);

/* The request for the job of argument 0, checked, with the rights use needs. */
static an_store *
pause_request(FunctionCallInfo fcinfo, an_pg_job_use use, an_request *rq, an_settings *settings)
{
	an_err		err;
	text	   *t;
	char	   *job;
	an_store   *st;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("job must not be NULL")));
	t = PG_GETARG_TEXT_PP(0);
	if (an_validate_job(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &err) != AN_OK)
		an_pg_raise_rule(ERRCODE_INVALID_PARAMETER_VALUE, &err);
	job = text_to_cstring(t);
	an_pg_current_settings(settings);
	memset(rq, 0, sizeof(*rq));
	rq->job = job;
	rq->settings = settings;
	an_pg_require_job_right(job, use, settings);
	st = an_pg_store();
	an_store_clear(st);
	return st;
}

/* anarchon_pause(job, until DEFAULT NULL): NULL is until anarchon_resume. */
Datum
anarchon_pause(PG_FUNCTION_ARGS)
{
	an_request	rq;
	an_settings settings;
	an_store   *st;
	int64		until = 0;
	an_err		err;

	if (PG_NARGS() > 1 && !PG_ARGISNULL(1))
	{
		until = an_pg_arg_instant(fcinfo, 1, false, "until");
		if (an_pause_check_until(until, an_pg_now_ms(), &err) != AN_OK)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("until must be in the future"),
					 errdetail("%s is not after the database clock's now.",
							   timestamptz_to_str(PG_GETARG_TIMESTAMPTZ(1))),
					 errhint("Pass a later time, or NULL to pause the job until anarchon_resume.")));
	}
	st = pause_request(fcinfo, AN_PG_JOB_PAUSE, &rq, &settings);
	if (an_pause_set(st, &rq, until) != AN_OK)
		an_pg_raise(st);
	PG_RETURN_VOID();
}

/* ms as a timestamptz, AN_PAUSE_OPEN as 'infinity'. */
static TimestampTz
pause_time(int64 ms)
{
	return ms == AN_PAUSE_OPEN ? DT_NOEND : an_pg_ms_to_ts(ms);
}

/* resume (true when the job was paused) and paused (its end: 'infinity', or NULL). */
static Datum
ask(FunctionCallInfo fcinfo, bool resume)
{
	an_request	rq;
	an_settings settings;
	an_store   *st = pause_request(fcinfo, resume ? AN_PG_JOB_PAUSE : AN_PG_JOB_READ, &rq, &settings);
	int64		until = 0;
	int			was_paused = 0;

	if ((resume ? an_pause_end(st, &rq, &was_paused) : an_pause_read(st, &rq, &until)) != AN_OK)
		an_pg_raise(st);
	if (resume)
		PG_RETURN_BOOL(was_paused != 0);
	if (until == 0)
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMPTZ(pause_time(until));
}

Datum
anarchon_resume(PG_FUNCTION_ARGS)
{
	return ask(fcinfo, true);
}

Datum
anarchon_paused(PG_FUNCTION_ARGS)
{
	return ask(fcinfo, false);
}

/*
 * anarchon_pauses(job, from_at, to_at): what anarchon_missed skips, from the
 * store in force (the command's PostgreSQL store reads it too).
 */
Datum
anarchon_pauses(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	an_request	rq;
	an_settings settings;
	an_store   *st = pause_request(fcinfo, AN_PG_JOB_READ, &rq, &settings);
	int64		from = an_pg_arg_instant(fcinfo, 1, false, "from_at");
	int64		to = an_pg_arg_instant(fcinfo, 2, false, "to_at");
	an_pause_span *spans;
	size_t		n = 0;

	InitMaterializedSRF(fcinfo, 0);
	/* A store that keeps no pauses has none to list. */
	if (from >= to || !AN_STORE_HAS(st, AN_CAP_PAUSES))
		return (Datum) 0;
	spans = palloc(AN_PAUSE_SPANS_MAX * sizeof(*spans));
	if (st->m->admin->pauses(st, &rq, from, to, spans, AN_PAUSE_SPANS_MAX, &n) != AN_OK)
		an_pg_raise(st);
	if (n > AN_PAUSE_SPANS_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("job \"%s\" has %zu pauses in the range, more than %d", rq.job, n, AN_PAUSE_SPANS_MAX),
				 errhint("Ask about a shorter range.")));
	for (size_t i = 0; i < n; i++)
	{
		Datum		values[2] = {TimestampTzGetDatum(pause_time(spans[i].start)),
		TimestampTzGetDatum(pause_time(spans[i].end))};
		bool		nulls[2] = {false, false};

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
