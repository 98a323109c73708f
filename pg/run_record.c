/*
 * run_record.c — what anarchon.run writes besides the claim: its log row
 * (anarchon.run_log) and the job's schedule (anarchon.run_schedules, which
 * anarchon.missed_runs watches).
 *
 * anarchon.run runs as its caller (it commits, so it cannot be SECURITY
 * DEFINER), and its caller may not write those tables.  These two functions
 * write them for it, as the owner of schema anarchon (as_owner.c), but only
 * for a job the current user may act on (job_rights.c): otherwise any role
 * could write false history, or point a job's watch at another schedule to
 * hide its missed slots.
 */
#include "anarchon_pg.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(anarchon_run_log_add);
PG_FUNCTION_INFO_V1(anarchon_run_schedule_note);

/* The job argument, checked by the job rule and the job's rights. */
static char *
job_arg(FunctionCallInfo fcinfo)
{
	an_err		err;
	char	   *job;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("job must not be NULL")));
	job = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (an_validate_job(job, strlen(job), &err) != AN_OK)
		an_pg_raise_rule(ERRCODE_INVALID_PARAMETER_VALUE, &err);
	an_pg_require_job_right(job, AN_PG_JOB_ACT, NULL);
	return job;
}

/* Run sql with the function's arguments, as the schema's owner. */
static void
write_as_owner(FunctionCallInfo fcinfo, const char *sql, int nargs, Oid *types)
{
	Datum		values[8];
	char		nulls[8];

	for (int i = 0; i < nargs; i++)
	{
		values[i] = PG_ARGISNULL(i) ? (Datum) 0 : PG_GETARG_DATUM(i);
		nulls[i] = PG_ARGISNULL(i) ? 'n' : ' ';
	}
	an_pg_spi_as_owner(sql, nargs, types, values, nulls, NULL);
}

/* run_log_add(job, slot, outcome, status, error, started_at): one row of anarchon.run_log. */
Datum
anarchon_run_log_add(PG_FUNCTION_ARGS)
{
	Oid			types[6] = {TEXTOID, TIMESTAMPTZOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID};

	job_arg(fcinfo);
	write_as_owner(fcinfo,
				   "INSERT INTO anarchon.run_log (job, slot, outcome, status, error, run_by, "
				   "application_name, started_at) VALUES ($1, $2, $3, $4, $5, session_user, "
				   "pg_catalog.current_setting('application_name'), $6)", 6, types);
	PG_RETURN_VOID();
}

/*
 * run_schedule_note(job, schedule): record the job's schedule, writing only
 * when it changed (a fleet calling anarchon.run every minute costs one
 * index probe).
 */
Datum
anarchon_run_schedule_note(PG_FUNCTION_ARGS)
{
	Oid			types[2] = {TEXTOID, TEXTOID};

	job_arg(fcinfo);
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("schedule must not be NULL")));
	write_as_owner(fcinfo,
				   "INSERT INTO anarchon.run_schedules AS r (job, schedule) VALUES ($1, $2) "
				   "ON CONFLICT (job) DO UPDATE SET schedule = excluded.schedule, since = excluded.since "
				   "WHERE r.schedule IS DISTINCT FROM excluded.schedule", 2, types);
	PG_RETURN_VOID();
}
