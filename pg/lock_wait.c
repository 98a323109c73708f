/*
 * lock_wait.c — a statement that may wait for a row lock, waiting at most
 * busy_timeout_ms: the job's lock and run rows of the local store, and the
 * owner row a job's first claim inserts (job_rights.c).
 *
 * The bound is lock_timeout's variable itself, set for the statement and
 * restored after it, on success and on error alike.  Going through
 * set_config_option instead (a GUC nest level per statement) cost a walk of
 * every GUC twice per claim, for the same effect: nothing between here and
 * the restore can read lock_timeout but the lock manager.  A lock timeout
 * becomes an error that says which job's lock was busy and which setting
 * bounds the wait, and counts as errors_busy in anarchon.stats.
 */
#include "anarchon_pg.h"

#include "storage/proc.h"

void
an_pg_raise_job_busy(const char *job, int64 timeout_ms)
{
	ereport(ERROR,
			(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
			 errmsg("job \"%s\" is locked by another session for longer than busy_timeout_ms (" INT64_FORMAT " ms)",
					job, timeout_ms),
			 errdetail("Another transaction is claiming this job, or claimed it and has not committed yet."),
			 errhint("Commit transactions that call anarchon_claim promptly, or raise anarchon.busy_timeout_ms.")));
}

uint64
an_pg_lock_bounded(uint64 (*statement) (void *arg), void *arg, an_store *st, const char *job,
				   int64 timeout_ms)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	int			saved = LockTimeout;
	uint64		n = 0;

	/* lock_timeout = 0 would mean "wait forever": 0 here means "hardly wait". */
	LockTimeout = (int) Min(Max(timeout_ms, (int64) 1), (int64) INT_MAX);
	PG_TRY();
	{
		n = statement(arg);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		LockTimeout = saved;
		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE)
			PG_RE_THROW();
		FlushErrorState();
		an_pg_stats_busy(st);
		an_pg_raise_job_busy(job, timeout_ms);
	}
	PG_END_TRY();
	LockTimeout = saved;
	return n;
}
