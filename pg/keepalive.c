/*
 * keepalive.c — the lease keep-alive of CALL anarchon.run: a background
 * worker that heartbeats the running run while its command works.
 *
 * anarchon.run wins a slot, commits, then calls anarchon.keepalive_start()
 * before its command and anarchon.keepalive_stop() after it.  Start registers
 * a dynamic background worker that connects to the same database as the same
 * user and, every lease_ms / 3, calls anarchon.anarchon_heartbeat(job, slot,
 * token, lease_ms) through the store anarchon.store named at start: the
 * local store or a foreign server, the same fenced heartbeat every caller
 * has.  The worker stops
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
 *     whether it was ours, and records the run as replaced or fenced.  The
 *     cancel is sent only while the backend has not said stop; a stop that
 *     comes between that test and the signal (microseconds) lets the cancel
 *     hit anarchon.run's finish instead, which then fails the call, the run
 *     being no longer ours either way.
 * A heartbeat that fails (the store is unreachable) is tried again at the next
 * beat; if the lease runs out meanwhile, the run can be taken over and the
 * command's finish is refused (fenced), as without a keep-alive.
 *
 * Parameters reach the worker in a dynamic shared memory segment whose handle
 * is the worker's main argument.  Without a free background worker slot
 * (max_worker_processes) the run goes on without a keep-alive, with a WARNING.
 */
#include "anarchon_pg.h"

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
#include "utils/wait_event.h"

PG_FUNCTION_INFO_V1(anarchon_keepalive_start);
PG_FUNCTION_INFO_V1(anarchon_keepalive_stop);
PG_FUNCTION_INFO_V1(anarchon_keepalive_fenced);
PGDLLEXPORT void anarchon_keepalive_main(Datum arg);

/* What the backend tells its worker. */
typedef struct keepalive_shared
{
	int			backend_pid;
	Oid			dbid;
	Oid			userid;
	int64		slot_ms;
	int64		lease_ms;
	volatile bool stop;
	volatile bool fenced;        /* set by the worker: a heartbeat answered false */
	char		job[AN_JOB_MAX + 1];
	char		token[AN_TOKEN_MAX + 1];
	char		store[NAMEDATALEN + 8];
} keepalive_shared;

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

/* ---------------------------------------------------------------- the worker */

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
		/* Say why in the server log, then try again at the next beat. */
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

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	seg = dsm_attach(DatumGetUInt32(arg));
	if (seg == NULL)
		proc_exit(0);			/* the backend is already gone */
	memcpy(&ks, dsm_segment_address(seg), sizeof(ks));
	BackgroundWorkerInitializeConnectionByOid(ks.dbid, ks.userid, 0);
	SetConfigOption("anarchon.store", ks.store, PGC_USERSET, PGC_S_SESSION);

	for (;;)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Max(ks.lease_ms / 3, 1), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (((keepalive_shared *) dsm_segment_address(seg))->stop ||
			BackendPidGetProc(ks.backend_pid) == NULL)
			break;
		if (beat(&ks) == 0)
		{
			keepalive_shared *shared = dsm_segment_address(seg);

			/* fenced: the run is another token's now (see the top of the file) */
			shared->fenced = true;
			pg_memory_barrier();
			if (!shared->stop)
				(void) kill(ks.backend_pid, SIGINT);
			break;
		}
	}
	proc_exit(0);
}
