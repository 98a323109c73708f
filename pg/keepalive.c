/*
 * keepalive.c — the lease keep-alive of CALL anarchon.run: a background
 * worker that heartbeats the running run while its command works, and stops
 * the command when the lease could end.
 *
 * anarchon.run wins a slot, commits, then calls anarchon.keepalive_start()
 * before its command and anarchon.keepalive_stop() after it.  Start registers
 * a dynamic background worker that connects to the same database as the same
 * user and, every lease_ms / 3, calls anarchon.anarchon_heartbeat(job, slot,
 * token, lease_ms) through the store anarchon.store named at start: the
 * local store or a foreign server, the same fenced heartbeat every caller
 * has.
 *
 * The stop deadline (the rule of core/lease.h, an_lease_stop_at, and of the
 * command-line host): the lease is counted from when the claim or the last
 * CONFIRMED renewal was SENT, read on the host's monotonic clock before the
 * request left (the store started the lease it confirmed no earlier); the
 * command is stopped at that time + lease_ms - a margin.  The claim's send
 * time is noted by the claim itself (an_pg_keepalive_claimed); a keep-alive
 * started for a run this backend did not just win counts from its own start.
 * A store that keeps no leases (won/lost: its run is never taken over) has
 * no deadline.
 * A renewal that fails, blocks or is refused extends nothing.  The worker
 * wakes at the earlier of the next renewal and the deadline, and a timer at
 * the deadline runs while a heartbeat is under way, so a heartbeat blocked on
 * a row lock or a frozen store does not delay the stop: the timer cancels
 * the backend's statement, then the heartbeat itself (the local store's
 * lock wait ends at once; a remote store's call ends at its own timeout).
 *
 * The worker stops
 *   - when the backend says so (keepalive_stop, or the end of the backend's
 *     transaction, committed or aborted: a cancelled command never leaves a
 *     worker renewing a run nobody works on);
 *   - when the backend is gone (terminated, crashed): checked before every
 *     heartbeat, so a backup takes over one lease (plus at most a third) later;
 *   - when a heartbeat answers false: the run is no longer this token's (a
 *     later slot won under overlap 'replace', or the run was taken over).
 *     The command then has no reason to go on: its finish would be refused
 *     and its effects rolled back.  So the worker records that it was fenced
 *     and cancels the backend's statement as pg_cancel_backend would
 *     (SIGINT); anarchon.run catches that cancel, asks keepalive_fenced()
 *     whether it was ours, and records the run as replaced or fenced;
 *   - when the deadline passes with no newer confirmed renewal: the same
 *     cancel, recorded as lost (keepalive_lost()); anarchon.run rolls the
 *     command back and records the run fenced, leaving it to its lease.
 * A cancel is sent only while the backend has not said stop; a stop that
 * comes between that test and the signal (microseconds) lets the cancel hit
 * anarchon.run's finish instead, which then fails the call, the run being
 * given up either way.
 *
 * Parameters reach the worker in a dynamic shared memory segment whose handle
 * is the worker's main argument.  Without a free background worker slot
 * (max_worker_processes) the run goes on without a keep-alive, with a WARNING.
 */
#include "anarchon_pg.h"
#include "lease.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/procarray.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timeout.h"
#include "utils/wait_event.h"

PG_FUNCTION_INFO_V1(anarchon_keepalive_start);
PG_FUNCTION_INFO_V1(anarchon_keepalive_stop);
PG_FUNCTION_INFO_V1(anarchon_keepalive_fenced);
PG_FUNCTION_INFO_V1(anarchon_keepalive_lost);
PGDLLEXPORT void anarchon_keepalive_main(Datum arg);

/* What the backend tells its worker. */
typedef struct keepalive_shared
{
	int			backend_pid;
	Oid			dbid;
	Oid			userid;
	int64		slot_ms;
	int64		lease_ms;
	/* The lease the worker starts from: sent on an_pg_mono_ms, for first_lease_ms. */
	int64		sent_ms;
	int64		first_lease_ms;
	bool		has_lease;       /* false: a won/lost store, no deadline */
	volatile bool stop;
	volatile bool fenced;        /* set by the worker: a heartbeat answered false */
	volatile bool lost;          /* set by the worker: the stop deadline passed */
	char		job[AN_JOB_MAX + 1];
	char		token[AN_TOKEN_MAX + 1];
	char		store[NAMEDATALEN + 8];
} keepalive_shared;

/* The run this backend last won, and when its claim was sent. */
static struct
{
	char		job[AN_JOB_MAX + 1];
	int64		slot_ms;
	char		token[AN_TOKEN_MAX + 1];
	int64		lease_ms;
	int64		sent_ms;
	bool		has_lease;
}			last_claim;

void
an_pg_keepalive_claimed(const an_request *rq, int64 sent_ms, bool has_lease)
{
	strlcpy(last_claim.job, rq->job, sizeof(last_claim.job));
	last_claim.slot_ms = rq->slot;
	strlcpy(last_claim.token, rq->token, sizeof(last_claim.token));
	last_claim.lease_ms = rq->settings->lease_ms;
	last_claim.sent_ms = sent_ms;
	last_claim.has_lease = has_lease;
}

/* This backend's worker, if one runs; at most one (anarchon.run does not nest). */
static BackgroundWorkerHandle *worker;
static dsm_segment *segment;
static bool callback_registered;

static void
stop_worker(void)
{
	if (segment != NULL)
		((keepalive_shared *) dsm_segment_address(segment))->stop = true;
	if (worker != NULL)
	{
		TerminateBackgroundWorker(worker);
		pfree(worker);
		worker = NULL;
	}
}

/* The transaction that started the worker ended: whatever happened, stop it. */
static void
at_xact_end(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT)
		stop_worker();
}

/*
 * keepalive_start(job, slot, token, lease_ms): true when a worker was
 * started; lease_ms NULL is anarchon.lease_ms.
 */
Datum
anarchon_keepalive_start(PG_FUNCTION_ARGS)
{
	an_pg_call	call;
	keepalive_shared *ks;
	BackgroundWorker bgw;
	MemoryContext old;
	bool		started;

	an_pg_read_call(fcinfo, AN_PG_SLOT_TS, true, &call);
	an_pg_override(fcinfo, 3, INT8OID, "lease_ms", &call);
	an_pg_require_lease_limit(&call.settings);
	an_pg_require_job_right(call.job, AN_PG_JOB_ACT, NULL);
	stop_worker();
	if (segment != NULL)
	{
		dsm_detach(segment);
		segment = NULL;
	}
	if (!callback_registered)
	{
		RegisterXactCallback(at_xact_end, NULL);
		callback_registered = true;
	}

	segment = dsm_create(sizeof(keepalive_shared), 0);
	dsm_pin_mapping(segment);
	ks = dsm_segment_address(segment);
	memset(ks, 0, sizeof(*ks));
	ks->backend_pid = MyProcPid;
	ks->dbid = MyDatabaseId;
	ks->userid = GetUserId();
	ks->slot_ms = call.rq.slot;
	ks->lease_ms = call.settings.lease_ms;
	strlcpy(ks->job, call.job, sizeof(ks->job));
	strlcpy(ks->token, call.token, sizeof(ks->token));
	strlcpy(ks->store, an_pg_store_name(), sizeof(ks->store));
	/* The lease is this backend's own claim's when it is that run's (see the top). */
	if (strcmp(last_claim.job, call.job) == 0 && last_claim.slot_ms == call.rq.slot &&
		strcmp(last_claim.token, call.token) == 0)
	{
		ks->sent_ms = last_claim.sent_ms;
		ks->first_lease_ms = last_claim.lease_ms;
		ks->has_lease = last_claim.has_lease;
	}
	else
	{
		ks->sent_ms = an_pg_mono_ms();
		ks->first_lease_ms = call.settings.lease_ms;
		ks->has_lease = true;
	}

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(bgw.bgw_library_name, sizeof(bgw.bgw_library_name), "anarchon");
	snprintf(bgw.bgw_function_name, sizeof(bgw.bgw_function_name), "anarchon_keepalive_main");
	snprintf(bgw.bgw_name, sizeof(bgw.bgw_name), "anarchon keep-alive of job %s for pid %d",
			 call.job, MyProcPid);
	snprintf(bgw.bgw_type, sizeof(bgw.bgw_type), "anarchon keep-alive");
	bgw.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(segment));
	bgw.bgw_notify_pid = MyProcPid;

	old = MemoryContextSwitchTo(TopMemoryContext);
	started = RegisterDynamicBackgroundWorker(&bgw, &worker);
	MemoryContextSwitchTo(old);
	if (!started)
	{
		worker = NULL;
		ereport(WARNING,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("no background worker slot for the keep-alive of job \"%s\"", call.job),
				 errdetail("The run goes on without it: its lease is not renewed while the command works."),
				 errhint("Raise max_worker_processes, or set lease_ms above the command's longest run.")));
	}
	PG_RETURN_BOOL(started);
}

/* keepalive_stop(): stop this backend's worker, if one runs. */
Datum
anarchon_keepalive_stop(PG_FUNCTION_ARGS)
{
	bool		had = worker != NULL;

	stop_worker();
	PG_RETURN_BOOL(had);
}

/*
 * keepalive_fenced(): true when this backend's last keep-alive found its run
 * fenced (and so cancelled the command); still answers after keepalive_stop.
 */
Datum
anarchon_keepalive_fenced(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(segment != NULL && ((keepalive_shared *) dsm_segment_address(segment))->fenced);
}

/*
 * keepalive_lost(): true when this backend's last keep-alive cancelled the
 * command because its lease could end (no renewal confirmed in time).
 */
Datum
anarchon_keepalive_lost(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(segment != NULL && ((keepalive_shared *) dsm_segment_address(segment))->lost);
}

/* ---------------------------------------------------------------- the worker */

/* The worker's segment, and whether a heartbeat is under way (for the timer). */
static keepalive_shared *shared;
static volatile sig_atomic_t beating;

/*
 * Cancel the backend's statement, the run being given up (fenced or lost,
 * already recorded in shared).  Also called from the deadline's signal
 * handler: only a barrier, a flag test and kill().
 */
static void
cancel_backend(void)
{
	pg_memory_barrier();
	if (!shared->stop)
		(void) kill(shared->backend_pid, SIGINT);
}

/* The deadline passed with no newer confirmed renewal: the lease could end. */
static void
give_up(void)
{
	shared->lost = true;
	cancel_backend();
}

/*
 * The deadline's timer (a signal handler): give up, then cancel the
 * worker's own heartbeat, as statement_timeout would, should it still wait.
 */
static void
deadline_passed(void)
{
	give_up();
	if (beating)
	{
		InterruptPending = true;
		QueryCancelPending = true;
	}
	SetLatch(MyLatch);
}


/* One heartbeat in a transaction of its own: 1 owned, 0 fenced, -1 failed. */
static int
beat(const keepalive_shared *ks)
{
	Oid			types[4] = {TEXTOID, INT8OID, TEXTOID, INT8OID};
	Datum		values[4];
	volatile int result = -1;

	values[0] = CStringGetTextDatum(ks->job);
	values[1] = Int64GetDatum(ks->slot_ms);
	values[2] = CStringGetTextDatum(ks->token);
	values[3] = Int64GetDatum(ks->lease_ms);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PG_TRY();
	{
		bool		isnull;

		SPI_connect();
		PushActiveSnapshot(GetTransactionSnapshot());
		pgstat_report_activity(STATE_RUNNING, "anarchon keep-alive: heartbeat");
		if (SPI_execute_with_args("SELECT anarchon.anarchon_heartbeat($1, $2, $3, $4)",
								  4, types, values, NULL, false, 1) == SPI_OK_SELECT &&
			SPI_processed == 1)
			result = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
												&isnull)) ? 1 : 0;
		SPI_finish();
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		/*
		 * Say why in the server log, then try again at the next beat; a
		 * heartbeat the deadline cut short is said below, once.
		 */
		if (!shared->lost)
			EmitErrorReport();
		FlushErrorState();
		AbortCurrentTransaction();
		result = -1;
	}
	PG_END_TRY();
	pgstat_report_activity(STATE_IDLE, NULL);
	return result;
}

void
anarchon_keepalive_main(Datum arg)
{
	dsm_segment *seg;
	keepalive_shared ks;
	TimeoutId	deadline;
	int64		interval;
	int64		stop_at;
	int64		next_beat;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	seg = dsm_attach(DatumGetUInt32(arg));
	if (seg == NULL)
		proc_exit(0);			/* the backend is already gone */
	shared = dsm_segment_address(seg);
	memcpy(&ks, shared, sizeof(ks));
	BackgroundWorkerInitializeConnectionByOid(ks.dbid, ks.userid, 0);
	SetConfigOption("anarchon.store", ks.store, PGC_USERSET, PGC_S_SESSION);
	deadline = RegisterTimeout(USER_TIMEOUT, deadline_passed);

	interval = Max(ks.lease_ms / 3, 1);
	/* A won/lost store's run never runs out: nothing to stop the command for. */
	stop_at = ks.has_lease ? an_lease_stop_at(ks.sent_ms, ks.first_lease_ms) : INT64_MAX;
	next_beat = ks.sent_ms + interval;
	for (;;)
	{
		int64		now = an_pg_mono_ms();
		int64		sent;
		int			result;

		if (!shared->lost && now >= stop_at)
			give_up();
		/* Before any interrupt: the timer may have cancelled us as well. */
		if (shared->lost)
			break;
		CHECK_FOR_INTERRUPTS();
		if (shared->stop || BackendPidGetProc(ks.backend_pid) == NULL)
			break;
		if (now < next_beat)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 Min(next_beat, stop_at) - now, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			continue;
		}

		/* The renewal's send time is read before it is sent, as the claim's was. */
		sent = now;
		next_beat = sent + interval;
		enable_timeout_after(deadline, (int) Min(stop_at - now, (int64) INT_MAX));
		beating = true;
		result = beat(&ks);
		beating = false;
		disable_timeout(deadline, false);
		if (result == 1 && !shared->lost && ks.has_lease)
			stop_at = an_lease_stop_at(sent, ks.lease_ms);
		else if (result == 0 && !shared->lost)
		{
			/* fenced: the run is another token's now (see the top of the file) */
			shared->fenced = true;
			cancel_backend();
			break;
		}
		/* -1: the heartbeat failed; it extends nothing, the next one may */
	}
	if (shared->lost)
		ereport(LOG,
				(errmsg("anarchon keep-alive of job \"%s\": no renewal of its lease was confirmed in time, so the command of backend %d was cancelled",
						ks.job, ks.backend_pid),
				 errdetail("The command is stopped " INT64_FORMAT " ms before a lease of " INT64_FORMAT " ms, counted from the send of the last renewal the store confirmed, could end.",
						   an_lease_stop_margin(ks.lease_ms), ks.lease_ms)));
	proc_exit(0);
}
