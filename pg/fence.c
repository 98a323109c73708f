/*
 * fence.c — anarchon_fence(job, slot, token): the fencing token checked where
 * the work lands.
 *
 * Called as a statement of its own in autocommit it protects nothing and is
 * refused (25P01, claim_txn.c), as in SQLite.
 * Called inside the job's own transaction, it raises SQLSTATE AN001 unless
 * token owns the running run.  With the local store it also locks the run's
 * row (FOR KEY SHARE) until that transaction ends: a takeover reads the run
 * FOR UPDATE and so waits for the job's transaction, then sees how it ended.
 * The job's writes therefore commit only while it owns the run, and no
 * takeover can be decided in between.  A network store holds nothing for a
 * PostgreSQL transaction: there the check is the store's heartbeat, true at
 * the moment it was answered (an_store_fence; doc/running-to-the-end.md).
 */
#include "anarchon_pg.h"

#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(anarchon_fence);
PG_FUNCTION_INFO_V1(anarchon_fence_ms);

static Datum
fence(FunctionCallInfo fcinfo, an_pg_slot_kind kind)
{
	an_pg_call	call;
	an_store   *st;
	int			owned = 0;

	an_pg_read_call(fcinfo, kind, true, &call);
	an_pg_require_fence_in_transaction(fcinfo);
	an_pg_require_job_right(call.job, AN_PG_JOB_ACT, NULL);
	st = an_pg_store();
	an_store_clear(st);
	if (an_store_fence(st, &call.rq, &owned) != AN_OK)
		an_pg_raise(st);
	if (!owned)
		ereport(ERROR,
				(errcode(AN_PG_ERRCODE_FENCED),
				 errmsg("the token does not own the running run of job \"%s\" at %s",
						call.job, timestamptz_to_str(an_pg_ms_to_ts(call.rq.slot))),
				 errdetail("The run's lease ran out and another caller took it over, or the run is no "
						   "longer running (finished, interrupted or replaced)."),
				 errhint("Roll back this transaction: its writes belong to a run that is no longer "
						 "this caller's.")));
	PG_RETURN_BOOL(true);
}

Datum
anarchon_fence(PG_FUNCTION_ARGS)
{
	return fence(fcinfo, AN_PG_SLOT_TS);
}

Datum
anarchon_fence_ms(PG_FUNCTION_ARGS)
{
	return fence(fcinfo, AN_PG_SLOT_MS);
}
