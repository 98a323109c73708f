/*
 * local_store.c — the local store: runs in anarchon.runs, decided in this
 * database under a per-job row lock.
 *
 * A claim takes these steps: a loser's look at the run and the pause
 * (run_view.c), the upsert of the job's row in anarchon.runs_jobs (the lock,
 * held until the caller's transaction ends), the clock read after it, the
 * job's pause and the run (probes; a run that exists read again FOR
 * UPDATE), then the decision table, which lives in core/lease.c; this file
 * supplies its steps (an_lease_ops), with SPI for what writes or locks.
 * Each query is prepared once per backend and kept, and runs as the owner
 * of the tables with search_path pinned (as_owner.c).  A check runs no
 * query: it probes the primary key (run_lookup.c).
 *
 * The claim runs inside the caller's transaction: a function cannot commit.
 * In autocommit (the usual `SELECT anarchon_claim(...)`) that transaction
 * ends with the statement.  Anywhere else a rollback could take back a
 * `won`, so the claim is refused there unless the caller opted in
 * (claim_txn.c); then the decision becomes visible, and the job's lock is
 * released, at the caller's COMMIT, and a ROLLBACK undoes it as if the claim
 * had never been made.
 *
 * Waiting for a lock is bounded by busy_timeout_ms: each statement that can
 * wait for a row lock runs with lock_timeout set to it (and restored after
 * it), and a lock timeout becomes a lock_not_available error that names the
 * job and the setting.
 *
 * Errors here are ereports (this is PostgreSQL code); the ops never return a
 * failure to the engine, so it never has to roll back a half-done claim: an
 * error aborts the caller's transaction (or subtransaction), which undoes
 * everything the claim wrote.
 */
#include "anarchon_pg.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"

#include "run_now.h"

typedef enum local_query
{
	Q_LOCK_JOB,
	Q_READ_RUN,
	Q_OTHER_LIVE,
	Q_INSERT_RUN,
	Q_TAKEOVER,
	Q_INTERRUPT,
	Q_REPLACE,
	Q_HEARTBEAT,
	Q_FINISH,
	Q_FENCE,
	Q_PRUNE,
	Q_PRUNE_PAUSES,
	Q_PRUNED_MARK,
	Q_MANUAL,
	Q_COUNT
} local_query;

typedef struct query_def
{
	const char *sql;
	int			nargs;
	Oid			types[6];
} query_def;

/*
 * The queries, all schema-qualified.  The first is the job's lock: its
 * upsert holds the job's row until the caller's transaction ends.  Every
 * claim really writes the row (last_claim_at) rather than only locking it
 * with DO UPDATE ... WHERE false, which would be cheaper: a REPEATABLE READ
 * or SERIALIZABLE claim whose snapshot predates another claim of the job
 * fails with a serialization error only if that other claim -- in whatever
 * isolation level -- left a new version of the row behind.  Without it, the
 * older snapshot would not see the other run and would try to insert it too.
 */
static const query_def queries[Q_COUNT] = {
	[Q_LOCK_JOB] = {
		"INSERT INTO anarchon.runs_jobs (job, last_claim_at) VALUES ($1, clock_timestamp()) "
		"ON CONFLICT (job) DO UPDATE SET last_claim_at = EXCLUDED.last_claim_at",
		1, {TEXTOID}},
	[Q_READ_RUN] = {
		"SELECT attempt, token, state, lease_until FROM anarchon.runs "
		"WHERE job = $1 AND slot = $2 FOR UPDATE",
		2, {TEXTOID, TIMESTAMPTZOID}},
	[Q_OTHER_LIVE] = {
		"SELECT 1 FROM anarchon.runs "
		"WHERE job = $1 AND state = 'running' AND lease_until >= $3 AND slot <> $2 LIMIT 1",
		3, {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID}},
	[Q_INSERT_RUN] = {
		"INSERT INTO anarchon.runs (job, slot, attempt, token, state, lease_until, claimed_at) "
		"VALUES ($1, $2, 1, $3, 'running', $4, $5)",
		5, {TEXTOID, TIMESTAMPTZOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID}},
	[Q_TAKEOVER] = {
		"UPDATE anarchon.runs SET attempt = $4, token = $3, lease_until = $5, claimed_at = $6 "
		"WHERE job = $1 AND slot = $2",
		6, {TEXTOID, TIMESTAMPTZOID, TEXTOID, INT4OID, TIMESTAMPTZOID, TIMESTAMPTZOID}},
	[Q_INTERRUPT] = {
		"UPDATE anarchon.runs SET state = 'interrupted', finished_at = $3 "
		"WHERE job = $1 AND slot = $2",
		3, {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID}},
	/* The runs Q_OTHER_LIVE finds (runs_live_idx): 'replace' ends what 'skip' would wait for. */
	[Q_REPLACE] = {
		"UPDATE anarchon.runs SET state = 'replaced', finished_at = $3 "
		"WHERE job = $1 AND state = 'running' AND lease_until >= $3 AND slot <> $2",
		3, {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID}},
	/*
	 * Fencing: only the token that owns a running run may touch it.  A lease
	 * that has ended stays ended (core/lease.h, AN_LEASE_RENEWAL): the clock
	 * is read after the row's lock is granted, as a claim reads it.
	 */
	[Q_HEARTBEAT] = {
		"UPDATE anarchon.runs "
		"SET lease_until = date_trunc('milliseconds', clock_timestamp()) + $4 * interval '1 millisecond' "
		"WHERE job = $1 AND slot = $2 AND token = $3 AND state = 'running' "
		"AND lease_until >= date_trunc('milliseconds', clock_timestamp())",
		4, {TEXTOID, TIMESTAMPTZOID, TEXTOID, INT8OID}},
	/* The owner's finish sent again with the same status is true, as on every store. */
	[Q_FINISH] = {
		"UPDATE anarchon.runs "
		"SET state = $4, finished_at = CASE WHEN state = 'running' "
		"THEN date_trunc('milliseconds', clock_timestamp()) ELSE finished_at END "
		"WHERE job = $1 AND slot = $2 AND token = $3 AND state IN ('running', $4)",
		4, {TEXTOID, TIMESTAMPTZOID, TEXTOID, TEXTOID}},
	/*
	 * The fence: the owner's run, locked until the caller's transaction ends.
	 * KEY SHARE conflicts with the claim's FOR UPDATE (a takeover waits) but
	 * not with the UPDATE of a heartbeat or finish (no key column changes).
	 */
	[Q_FENCE] = {
		"SELECT 1 FROM anarchon.runs "
		"WHERE job = $1 AND slot = $2 AND token = $3 AND state = 'running' FOR KEY SHARE",
		3, {TEXTOID, TIMESTAMPTZOID, TEXTOID}},
	/*
	 * A run whose lease is still alive stays, however old its slot.  Joined
	 * with runs_jobs so that each job's old runs are a range of the primary key.
	 */
	[Q_PRUNE] = {
		"DELETE FROM anarchon.runs r USING anarchon.runs_jobs j "
		"WHERE r.job = j.job AND r.slot < $1 AND (r.state <> 'running' OR r.lease_until < $2)",
		2, {TIMESTAMPTZOID, TIMESTAMPTZOID}},
	/*
	 * Pauses that ended before the same cutoff: no claim, anarchon_missed or
	 * anarchon_due can ask about their slots any more.  An open pause (until
	 * NULL) never compares true; an ended one is before now.
	 */
	[Q_PRUNE_PAUSES] = {
		"DELETE FROM anarchon.pauses WHERE until < $1",
		1, {TIMESTAMPTZOID}},
	/*
	 * The largest cutoff any prune used, recorded before it deletes (in the
	 * same transaction): a first claim of an older slot answers late
	 * (core/lease.c), so a host with a longer max_late_ms never wins a slot
	 * a shorter host's prune forgot.
	 */
	[Q_PRUNED_MARK] = {
		"INSERT INTO anarchon.pruned AS p (id, slot_before) VALUES (1, $1) "
		"ON CONFLICT (id) DO UPDATE "
		"SET slot_before = GREATEST(p.slot_before, EXCLUDED.slot_before)",
		1, {TIMESTAMPTZOID}},
	/* The job's current manual request: its newest manual slot (core/run_now.h). */
	[Q_MANUAL] = {
		"SELECT slot FROM anarchon.runs WHERE job = $1 AND slot >= $2 "
		"AND slot = pg_catalog.date_trunc('second', slot) + $3 * interval '1 millisecond' "
		"ORDER BY slot DESC LIMIT 1",
		3, {TEXTOID, TIMESTAMPTZOID, INT4OID}},
};

static SPIPlanPtr plans[Q_COUNT];

/* The kept plan of query q, prepared on first use in this backend. */
static SPIPlanPtr
plan_for(local_query q)
{
	if (plans[q] == NULL)
	{
		SPIPlanPtr	p = SPI_prepare(queries[q].sql, queries[q].nargs,
									(Oid *) queries[q].types);

		if (p == NULL)
			elog(ERROR, "could not prepare a query of the local store: %s",
				 SPI_result_code_string(SPI_result));
		if (SPI_keepplan(p) != 0)
			elog(ERROR, "could not keep a query plan of the local store");
		plans[q] = p;
	}
	return plans[q];
}

/* Run query q; returns the number of rows processed. */
static uint64
run(local_query q, Datum *values, int expect)
{
	int			rc = SPI_execute_plan(plan_for(q), values, NULL, false, 0);

	if (rc != expect)
		elog(ERROR, "a query of the local store failed: %s",
			 SPI_result_code_string(rc));
	return SPI_processed;
}

/* One query for an_pg_lock_bounded. */
typedef struct locking_query
{
	local_query q;
	Datum	   *values;
	int			expect;
} locking_query;

static uint64
run_query(void *arg)
{
	locking_query *lq = arg;

	return run(lq->q, lq->values, lq->expect);
}

/* Run query q, which may wait for a row lock, waiting at most timeout_ms (lock_wait.c). */
static uint64
run_locking(an_store *st, local_query q, Datum *values, int expect, const char *job,
			int64 timeout_ms)
{
	locking_query lq = {q, values, expect};

	return an_pg_lock_bounded(run_query, &lq, st, job, timeout_ms);
}

/*
 * The local store writes anarchon.runs: say so plainly on a standby or in a
 * read-only transaction (where a remote store would still work), and make the
 * commit flush the write (and a configured synchronous standby receive it)
 * before it returns, whatever synchronous_commit says (durable.c).
 */
static void
require_writable(const char *what)
{
	/* A standby's transactions are read-only too: name the real cause. */
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("%s writes anarchon.runs and this server is a standby", what),
				 errdetail("A standby replays the primary's runs and cannot decide a claim."),
				 errhint("Claim on the primary. With libpq, name every server of the cluster in the connection string and add target_session_attrs=read-write, so that a session finds the primary after a failover.")));
	if (XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("%s writes anarchon.runs and cannot run in a read-only transaction", what),
				 errhint("Claim on the primary, outside of READ ONLY transactions, or set anarchon.store to a remote store.")));

	/* What decides an owner is on disk before it is answered (durable.c). */
	an_pg_commit_durably();
}

/* SPI, as the owner of the tables with search_path pinned (as_owner.c). */
static void
connect_spi(an_pg_owner_state *owner)
{
	an_pg_owner_enter(owner);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

static void
finish_spi(const an_pg_owner_state *owner)
{
	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "SPI_finish failed");
	an_pg_owner_leave(owner);
}

/* Read the run of the first row of SPI_tuptable into run (copied out of SPI memory). */
static void
read_run_row(an_run *run)
{
	HeapTuple	tup = SPI_tuptable->vals[0];
	TupleDesc	desc = SPI_tuptable->tupdesc;
	bool		isnull;
	char	   *token;
	char	   *state;

	run->attempt = DatumGetInt32(SPI_getbinval(tup, desc, 1, &isnull));
	token = TextDatumGetCString(SPI_getbinval(tup, desc, 2, &isnull));
	strlcpy(run->token, token, sizeof(run->token));
	state = TextDatumGetCString(SPI_getbinval(tup, desc, 3, &isnull));
	run->state = an_run_state_parse(state);
	run->lease_until = an_pg_ts_to_ms(DatumGetTimestampTz(SPI_getbinval(tup, desc, 4, &isnull)));
	if (run->state == AN_RUN_NONE)
		elog(ERROR, "run has an unknown state \"%s\" in anarchon.runs", state);
}

/* ---------------------------------------------------------------- the lease steps */

static int
op_lock(an_store *st, const an_request *rq)
{
	Datum		v[1] = {CStringGetTextDatum(rq->job)};

	run_locking(st, Q_LOCK_JOB, v, SPI_OK_INSERT, rq->job, rq->settings->busy_timeout_ms);
	return AN_OK;
}

static int
op_now(an_store *st, int64_t *now_ms)
{
	*now_ms = an_pg_now_ms();
	return AN_OK;
}

static int
op_read(an_store *st, const an_request *rq, an_run *run)
{
	Datum		v[2] = {CStringGetTextDatum(rq->job), TimestampTzGetDatum(an_pg_ms_to_ts(rq->slot))};

	if (run_locking(st, Q_READ_RUN, v, SPI_OK_SELECT, rq->job, rq->settings->busy_timeout_ms) > 0)
		read_run_row(run);
	else
		run->state = AN_RUN_NONE;
	return AN_OK;
}

static int
op_other_live(an_store *st, const an_request *rq, int64_t now, int *live)
{
	Datum		v[3] = {CStringGetTextDatum(rq->job), TimestampTzGetDatum(an_pg_ms_to_ts(rq->slot)),
	TimestampTzGetDatum(an_pg_ms_to_ts(now))};

	*live = run(Q_OTHER_LIVE, v, SPI_OK_SELECT) > 0;
	return AN_OK;
}

static int
op_insert(an_store *st, const an_request *rq, int64_t now, int64_t lease_until)
{
	Datum		v[5] = {CStringGetTextDatum(rq->job), TimestampTzGetDatum(an_pg_ms_to_ts(rq->slot)),
		CStringGetTextDatum(rq->token), TimestampTzGetDatum(an_pg_ms_to_ts(lease_until)),
	TimestampTzGetDatum(an_pg_ms_to_ts(now))};

	run(Q_INSERT_RUN, v, SPI_OK_INSERT);
	return AN_OK;
}

static int
op_takeover(an_store *st, const an_request *rq, int32_t attempt, int64_t now,
			int64_t lease_until)
{
	Datum		v[6] = {CStringGetTextDatum(rq->job), TimestampTzGetDatum(an_pg_ms_to_ts(rq->slot)),
		CStringGetTextDatum(rq->token), Int32GetDatum(attempt),
	TimestampTzGetDatum(an_pg_ms_to_ts(lease_until)), TimestampTzGetDatum(an_pg_ms_to_ts(now))};

	run(Q_TAKEOVER, v, SPI_OK_UPDATE);
	return AN_OK;
}

static int
op_interrupt(an_store *st, const an_request *rq, int64_t now)
{
	Datum		v[3] = {CStringGetTextDatum(rq->job), TimestampTzGetDatum(an_pg_ms_to_ts(rq->slot)),
	TimestampTzGetDatum(an_pg_ms_to_ts(now))};

	run(Q_INTERRUPT, v, SPI_OK_UPDATE);
	return AN_OK;
}

/*
 * The job's lock is held, so no claim of the job runs meanwhile; a
 * heartbeat or finish of a replaced run waits for its row and then finds it
 * no longer running.
 */
static int
op_replace_others(an_store *st, const an_request *rq, int64_t now)
{
	Datum		v[3] = {CStringGetTextDatum(rq->job), TimestampTzGetDatum(an_pg_ms_to_ts(rq->slot)),
	TimestampTzGetDatum(an_pg_ms_to_ts(now))};

	run_locking(st, Q_REPLACE, v, SPI_OK_UPDATE, rq->job, rq->settings->busy_timeout_ms);
	return AN_OK;
}

/* anarchon.pruned's slot_before, in ms, into arg (an int64_t). */
static void
read_slot_before(Relation rel, TupleTableSlot *slot, void *arg)
{
	bool		isnull;
	Datum		d = slot_getattr(slot, an_pg_column(rel, "slot_before"), &isnull);

	if (!isnull)
		*(int64_t *) arg = an_pg_ts_to_ms(DatumGetTimestampTz(d));
}

/*
 * Read after the run was read FOR UPDATE, under a snapshot of its own (a new
 * one in READ COMMITTED): a claim that found no run because a prune had just
 * deleted it waited for that prune's commit, and so sees its cutoff.  A probe
 * of the table's key (key_lookup.c: the command counter advanced, then the
 * transaction's snapshot, as a statement of SPI would take it), not a
 * statement: one executor start and end fewer in every first claim.
 */
static int
op_pruned_before(an_store *st, const an_request *rq, int64_t *before)
{
	Datum		key = Int32GetDatum(1);
	RegProcedure eq = F_INT4EQ;

	*before = INT64_MIN;
	(void) an_pg_key_lookup("pruned", 1, &key, &eq, read_slot_before, before);
	return AN_OK;
}

/*
 * The pause and the run, with the job's lock held, as a view of probes
 * (run_view.c) under the snapshot a statement would take now: in READ
 * COMMITTED it sees a pause that committed while the claim waited for the
 * lock.  A paused claim answers from it and writes nothing.  A first claim
 * finds no run, so there is no row to lock and the view is the whole
 * answer; every run is inserted under the job's lock, which this claim
 * holds, so none can appear before the claim's insert.  A run that exists is
 * read again FOR UPDATE (op_read): a fenced transaction holding it makes the
 * claim wait, and a prune deleting it is waited for and leaves no run.
 */
static int
op_read_gated(an_store *st, const an_request *rq, int64_t now, int *paused, an_run *run)
{
	an_pg_run_view(rq->job, rq->slot, now, run, paused);
	if (*paused)
		run->state = AN_RUN_NONE;
	if (run->state == AN_RUN_NONE)
		return AN_OK;
	return op_read(st, rq, run);
}

/*
 * A loser's claim without the job's lock (core/lease.c), by index probes
 * under one snapshot (run_view.c): only in READ COMMITTED, where that snapshot
 * is taken now.  An older
 * snapshot (REPEATABLE READ, SERIALIZABLE, in a caller's transaction) could
 * show a run as it was before the call, and such a claim must also leave
 * the write that makes a concurrent claim's older snapshot fail (Q_LOCK_JOB).
 */
static int
op_peek(an_store *st, const an_request *rq, an_run *found, int *paused,
		int64_t *now_before, int64_t *now_after, int *ok)
{
	*ok = 0;
	if (XactIsoLevel != XACT_READ_COMMITTED)
		return AN_OK;
	*now_before = an_pg_now_ms();
	an_pg_run_view(rq->job, rq->slot, *now_before, found, paused);
	*now_after = an_pg_now_ms();
	*ok = 1;
	return AN_OK;
}

/*
 * Commit belongs to the caller.  A rollback request cannot happen (the steps
 * above ereport instead of returning errors); if it ever did, aborting the
 * caller's transaction is the only way to take back what the claim wrote.
 */
static int
op_unlock(an_store *st, int commit)
{
	char		detail[AN_ERRMAX];

	if (!commit)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("the claim failed half-way and was rolled back"),
				 errdetail("%s", an_pg_sentence(st->err.msg, detail, sizeof(detail)))));
	return AN_OK;
}

static const an_lease_ops local_ops = {
	.lock = op_lock,
	.now = op_now,
	.read = op_read,
	.other_live = op_other_live,
	.insert = op_insert,
	.takeover = op_takeover,
	.interrupt = op_interrupt,
	.unlock = op_unlock,
	.replace_others = op_replace_others,
	.pruned_before = op_pruned_before,
	.read_gated = op_read_gated,
	.peek = op_peek,
};

/* an_manual_find: read with the job's row lock held. */
static int
find_manual(an_store *st, const char *job, int64_t since, int64_t *slot, int *found)
{
	Datum		v[3] = {CStringGetTextDatum(job), TimestampTzGetDatum(an_pg_ms_to_ts(since)),
	Int32GetDatum(AN_MANUAL_OFFSET_MS)};
	bool		isnull;

	*found = run(Q_MANUAL, v, SPI_OK_SELECT) > 0;
	if (*found)
		*slot = an_pg_ts_to_ms(DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0],
																 SPI_tuptable->tupdesc, 1, &isnull)));
	return AN_OK;
}

/* ---------------------------------------------------------------- the store methods */

static int
local_open(an_store *st, const char *url, void *arg)
{
	return AN_OK;
}

/* A claim, or a run-now (a claim of the manual slot chosen under the job's lock). */
static int
local_claim(an_store *st, const an_request *rq, an_claim_result *res)
{
	const char *fn = rq->kind == AN_CLAIM_MANUAL ? "anarchon_run_now" : "anarchon_claim";
	an_pg_owner_state owner;
	int			rc;

	require_writable(fn);
	an_pg_require_fsync(fn);
	connect_spi(&owner);
	if (rq->kind == AN_CLAIM_MANUAL)
		rc = an_lease_run_now(st, &local_ops, find_manual, rq, res, &res->slot);
	else
		rc = an_lease_claim(st, &local_ops, rq, res);
	finish_spi(&owner);
	return rc;
}

static int
local_heartbeat(an_store *st, const an_request *rq, int *owned)
{
	Datum		v[4] = {CStringGetTextDatum(rq->job), TimestampTzGetDatum(an_pg_ms_to_ts(rq->slot)),
	CStringGetTextDatum(rq->token), Int64GetDatum(rq->settings->lease_ms)};
	an_pg_owner_state owner;

	require_writable("anarchon_heartbeat");
	connect_spi(&owner);
	*owned = run_locking(st, Q_HEARTBEAT, v, SPI_OK_UPDATE, rq->job, rq->settings->busy_timeout_ms) > 0;
	finish_spi(&owner);
	return AN_OK;
}

static int
local_finish(an_store *st, const an_request *rq, an_run_state status, int *owned)
{
	Datum		v[4] = {CStringGetTextDatum(rq->job), TimestampTzGetDatum(an_pg_ms_to_ts(rq->slot)),
	CStringGetTextDatum(rq->token), CStringGetTextDatum(an_run_state_name(status))};
	an_pg_owner_state owner;

	require_writable("anarchon_finish");
	connect_spi(&owner);
	*owned = run_locking(st, Q_FINISH, v, SPI_OK_UPDATE, rq->job, rq->settings->busy_timeout_ms) > 0;
	finish_spi(&owner);
	return AN_OK;
}

static int
local_fence(an_store *st, const an_request *rq, int *owned)
{
	Datum		v[3] = {CStringGetTextDatum(rq->job), TimestampTzGetDatum(an_pg_ms_to_ts(rq->slot)),
	CStringGetTextDatum(rq->token)};
	an_pg_owner_state owner;

	require_writable("anarchon_fence");
	connect_spi(&owner);
	*owned = run_locking(st, Q_FENCE, v, SPI_OK_SELECT, rq->job, rq->settings->busy_timeout_ms) > 0;
	finish_spi(&owner);
	return AN_OK;
}

/* The backup's shortcut: one plain read, no row lock, no write (run_lookup.c). */
static int
local_check(an_store *st, const an_request *rq, an_check_result *res)
{
	an_run		r;

	an_pg_lookup_run(rq->job, rq->slot, &r);
	res->state = an_lease_check_state(&r, an_pg_now_ms());
	res->attempt = r.attempt;
	res->lease_until = r.lease_until;
	return AN_OK;
}

/*
 * Runs, and pauses that ended, before the cutoff; *deleted counts the runs.
 * The cutoff is recorded first (anarchon.pruned): claims of older slots are
 * late from the prune's commit on, on every host.
 * A cutoff before the first timestamptz (a retention longer than PostgreSQL
 * can count back) leaves nothing older to delete: keep everything.
 */
static int
local_prune(an_store *st, int64_t before, int64_t *deleted)
{
	Datum		v[2];
	an_pg_owner_state owner;

	*deleted = 0;
	if (an_pg_ms_range(before) < 0)
		return AN_OK;
	v[0] = TimestampTzGetDatum(an_pg_ms_to_ts(before));
	v[1] = TimestampTzGetDatum(an_pg_ms_to_ts(an_pg_now_ms()));
	connect_spi(&owner);
	(void) run(Q_PRUNED_MARK, v, SPI_OK_INSERT);
	*deleted = (int64_t) run(Q_PRUNE, v, SPI_OK_DELETE);
	(void) run(Q_PRUNE_PAUSES, v, SPI_OK_DELETE);
	finish_spi(&owner);
	return AN_OK;
}

static void
local_close(an_store *st)
{
}

static const an_store_admin local_admin = {
	.prune = local_prune,
	.pause = an_pg_local_pause,		/* local_pause.c */
	.resume = an_pg_local_resume,
	.paused = an_pg_local_paused,
	.pauses = an_pg_local_pauses,
};

const an_store_methods an_pg_local_methods = {
	.version = AN_STORE_VERSION,
	.name = "local",
	.open = local_open,
	.claim = local_claim,
	.heartbeat = local_heartbeat,
	.finish = local_finish,
	.check = local_check,
	.validate = NULL,
	.close = local_close,
	.fence = local_fence,
	.recall = an_pg_local_recall,	/* local_recall.c */
	.caps = AN_CAP_CALLER_TXN | AN_CAP_DUTIES,	/* run-now: a manual claim (local_claim) */
	.admin = &local_admin,
};
