/*
 * local_store.c — the SQLite local store: runs kept in anarchon_runs.
 *
 * The claim is core/lease.c's table driven through BEGIN IMMEDIATE: SQLite
 * allows one writer per database, and BEGIN IMMEDIATE takes that lock before
 * the first read, so a second claim waits at BEGIN (up to busy_timeout_ms)
 * and then reads what the first one committed.
 *
 * Which connection runs the transaction.  A SQL function cannot safely commit
 * on the caller's own connection (as measured with SQLite 3.40: inside the
 * caller's BEGIN it fails; during the caller's read in WAL mode BEGIN
 * IMMEDIATE fails with SQLITE_BUSY_SNAPSHOT; inside INSERT … SELECT a failed
 * COMMIT's ROLLBACK drops the caller's own row).  So the store opens a
 * private "claim connection" on the same file and commits there; the
 * caller's transaction is never touched.  That connection would wait on
 * ourselves, so the claim is refused up front
 *   - when the caller's connection holds the write lock (its own write
 *     transaction, or INSERT … SELECT anarchon_claim(…)), and
 *   - during a read of the caller's in rollback-journal mode (our COMMIT would
 *     wait for the caller's SHARED lock),
 * each with an error that says how to call it instead.  An in-memory database
 * cannot be opened twice; there the caller's connection is used, outside any
 * transaction of the caller, and our statements are finalized after every
 * call (a statement left on the caller's connection would keep it from
 * closing).  The claim connection is opened the way the caller's was (its
 * VFS and URI parameters), and nothing is written for a caller that may not
 * write (claim_conn.c).
 *
 * Fork.  SQLite forbids using a connection in a process other than the one
 * that opened it: a forked child has a copy of the parent's locks as SQLite
 * believes them, not the locks themselves, and closing the copy could
 * release or break what the parent holds (a checkpoint, a deleted WAL).  So
 * the store remembers the process that opened the claim connection (fork.h); in any other
 * process it never touches that handle or its statements again, not even to
 * close them: it sets them aside (kept reachable, deliberately never freed)
 * and opens a claim connection of its own.  The caller's own connection is
 * the application's to replace after a fork.
 */
#include <stdio.h>
#include <string.h>

#include "fork.h"
#include "format.h"
#include "host.h"
#include "lease.h"
#include "local_store.h"
#include "run_now.h"

SQLITE_EXTENSION_INIT3

enum stmt_id
{
	S_BEGIN,
	S_COMMIT,
	S_ROLLBACK,
	S_READ,
	S_OTHER_LIVE,
	S_INSERT,
	S_TAKEOVER,
	S_INTERRUPT,
	S_REPLACE,
	S_HEARTBEAT,
	S_FINISH,
	S_FENCE,
	S_PRUNE,
	S_PRUNE_PAUSES,
	S_PRUNED_MARK,
	S_PRUNED_READ,
	S_MANUAL,
	S_SAVEPOINT,
	S_RELEASE,
	S_ROLLBACK_TO,
	S_COUNT
};

static const char *const stmt_sql[S_COUNT] = {
	[S_BEGIN] = "BEGIN IMMEDIATE",
	[S_COMMIT] = "COMMIT",
	[S_ROLLBACK] = "ROLLBACK",
	[S_READ] = "SELECT state, attempt, lease_until, token FROM anarchon_runs"
	" WHERE job = ?1 AND slot = ?2",
	/* Served by anarchon_runs_live: only running runs of the job are indexed. */
	[S_OTHER_LIVE] = "SELECT 1 FROM anarchon_runs"
	" WHERE job = ?1 AND state = 'running' AND lease_until >= ?3 AND slot <> ?2 LIMIT 1",
	[S_INSERT] = "INSERT INTO anarchon_runs"
	" (job, slot, attempt, token, state, lease_until, claimed_at, finished_at)"
	" VALUES (?1, ?2, 1, ?3, 'running', ?5, ?4, NULL)",
	[S_TAKEOVER] = "UPDATE anarchon_runs SET attempt = ?6, token = ?3, lease_until = ?5,"
	" claimed_at = ?4 WHERE job = ?1 AND slot = ?2",
	[S_INTERRUPT] = "UPDATE anarchon_runs SET state = 'interrupted', finished_at = ?4"
	" WHERE job = ?1 AND slot = ?2",
	/* The same runs as S_OTHER_LIVE, so that 'replace' ends what 'skip' would wait for. */
	[S_REPLACE] = "UPDATE anarchon_runs SET state = 'replaced', finished_at = ?4"
	" WHERE job = ?1 AND state = 'running' AND lease_until >= ?4 AND slot <> ?2",
	/*
	 * Fencing: only the token that owns a running run may touch it, and a
	 * lease that has ended stays ended (core/lease.h, AN_LEASE_RENEWAL).
	 */
	[S_HEARTBEAT] = "UPDATE anarchon_runs SET lease_until = ?5"
	" WHERE job = ?1 AND slot = ?2 AND token = ?3 AND state = 'running' AND lease_until >= ?4",
	/*
	 * The owner's finish, sent again with the same status (its answer was
	 * lost), is answered true as every store answers it; the first finish's
	 * time is kept.
	 */
	[S_FINISH] = "UPDATE anarchon_runs SET state = ?6,"
	" finished_at = CASE WHEN state = 'running' THEN ?4 ELSE finished_at END"
	" WHERE job = ?1 AND slot = ?2 AND token = ?3 AND state IN ('running', ?6)",
	/* Changes nothing: takes the write lock for the caller's transaction (local_fence). */
	[S_FENCE] = "UPDATE anarchon_runs SET token = token"
	" WHERE job = ?1 AND slot = ?2 AND token = ?3 AND state = 'running'",
	/* A run still holding a live lease is kept, however old its slot. */
	[S_PRUNE] = "DELETE FROM anarchon_runs"
	" WHERE slot < ?1 AND (state <> 'running' OR lease_until < ?2)",
	/* Pauses that ended before the same cutoff; an open one (until NULL) never compares. */
	[S_PRUNE_PAUSES] = "DELETE FROM anarchon_pauses WHERE until < ?1",
	/*
	 * The largest cutoff any prune used, recorded before it deletes: a first
	 * claim of an older slot answers late (core/lease.c), so a host with a
	 * longer max_late_ms never wins a slot a shorter host's prune forgot.
	 */
	[S_PRUNED_MARK] = "INSERT INTO anarchon_pruned (id, slot_before) VALUES (1, ?1)"
	" ON CONFLICT (id) DO UPDATE SET slot_before = max(slot_before, excluded.slot_before)",
	[S_PRUNED_READ] = "SELECT slot_before FROM anarchon_pruned WHERE id = 1",
	/* The job's current manual request: its newest manual slot (core/run_now.h). */
	[S_MANUAL] = "SELECT slot FROM anarchon_runs"
	" WHERE job = ?1 AND slot >= ?2 AND slot % 1000 = ?3 ORDER BY slot DESC LIMIT 1",
	/* One job of a batch (local_batch): its claim's lock and unlock. */
	[S_SAVEPOINT] = "SAVEPOINT anarchon_job",
	[S_RELEASE] = "RELEASE anarchon_job",
	[S_ROLLBACK_TO] = "ROLLBACK TO anarchon_job",
};

typedef struct local_store
{
	sqlite3    *caller;          /* the caller's connection */
	sqlite3    *db;              /* where claims run: own connection, or caller */
	int			own_db;          /* db was opened by us */
	int			schema_ready;    /* the tables are in this library's format */
	int			runs_seen;       /* a check found anarchon_runs */
	int			format_read;     /* a read found the tables in a format it knows */
	an_fork_mark proc;        /* the process that opened db (fork.h) */
	int64_t		busy_timeout_ms; /* what db's busy timeout is set to */
	sqlite3_vfs *vfs;            /* db's VFS: its clock is the store's clock */
	sqlite3_stmt *stmt[S_COUNT];
	sqlite3_stmt *extra[AN_LOCAL_EXTRA];	/* local_pause.c's (an_sqlite_local_stmt) */
	int			batch;           /* inside local_batch's BEGIN IMMEDIATE */
} local_store;

/*
 * Claim connections of a parent process, set aside in a forked child (see
 * the header comment).  Kept here so that they stay reachable; a child that
 * forks again more than AN_SET_ASIDE times lets the oldest go, unfreed.
 */
#define AN_SET_ASIDE 16
static struct
{
	sqlite3    *db;
	sqlite3_stmt *stmt[S_COUNT];
	sqlite3_stmt *extra[AN_LOCAL_EXTRA];
}			set_aside[AN_SET_ASIDE];
static unsigned n_set_aside;

static int
fail_db(an_store *st, sqlite3 *db, const char *what)
{
	int			code = sqlite3_extended_errcode(db);

	if ((code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED)
	{
		an_store_fail(st, AN_E_BUSY,
					  "the database stayed locked by another writer for longer than busy_timeout_ms (%lld ms)"
					  " while %s", (long long) ((local_store *) st->impl)->busy_timeout_ms, what);
		an_store_detailf(st, "Nothing was decided.");
		return an_store_hintf(st, "Call again, or raise %s.", an_store_setting(st, "busy_timeout_ms"));
	}
	if ((code & 0xff) == SQLITE_NOMEM)
		return an_store_fail(st, AN_E_NOMEM, "out of memory while %s", what);
	return an_store_fail(st, AN_E_STORE, "anarchon_runs: %s failed: %s", what, sqlite3_errmsg(db));
}

/* Bind the request's (job, slot, token, now, lease_until) to ?1..?5 of s. */
static sqlite3_stmt *
bind_stmt(sqlite3_stmt *s, const an_request *rq, int64_t now, int64_t lease_until)
{
	int			n = sqlite3_bind_parameter_count(s);

	sqlite3_reset(s);
	sqlite3_bind_text(s, 1, rq->job, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, rq->slot);
	if (n >= 3)
	{
		if (rq->token)
			sqlite3_bind_text(s, 3, rq->token, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(s, 3);
	}
	if (n >= 4)
		sqlite3_bind_int64(s, 4, now);
	if (n >= 5)
		sqlite3_bind_int64(s, 5, lease_until);
	return s;
}

static sqlite3_stmt *
bind_req(local_store *ls, enum stmt_id id, const an_request *rq, int64_t now,
		 int64_t lease_until)
{
	return bind_stmt(ls->stmt[id], rq, now, lease_until);
}

/* Step a statement that returns no rows; reset it whatever happens. */
static int
run_write(an_store *st, sqlite3_stmt *s, const char *what)
{
	local_store *ls = st->impl;
	int			rc = sqlite3_step(s);

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE)
		return fail_db(st, ls->db, what);
	return AN_OK;
}

static void
apply_busy_timeout(local_store *ls, const an_settings *s)
{
	if (ls->busy_timeout_ms != s->busy_timeout_ms)
	{
		sqlite3_busy_timeout(ls->db, (int) s->busy_timeout_ms);
		ls->busy_timeout_ms = s->busy_timeout_ms;
	}
}

static int
journal_is_wal(sqlite3 *db)
{
	sqlite3_stmt *s;
	int			wal = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA main.journal_mode", -1, &s, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(s) == SQLITE_ROW)
		wal = sqlite3_stricmp((const char *) sqlite3_column_text(s, 0), "wal") == 0;
	sqlite3_finalize(s);
	return wal;
}

/*
 * May this call write and commit now?  Refuses, with the reason, the states of
 * the caller's connection in which our commit would deadlock or could not
 * happen (see the header comment).
 */
static int
writable_now(an_store *st, const char *fn)
{
	local_store *ls = st->impl;
	int			txn = sqlite3_txn_state(ls->caller, "main");

	if (txn == SQLITE_TXN_WRITE)
	{
		an_store_fail(st, AN_E_STATE, "cannot run while this connection holds a write transaction");
		an_store_detailf(st, "It has an open BEGIN…COMMIT that wrote, or is running INSERT/UPDATE … SELECT %s(…);"
						 " anarchon commits on its own before it answers.", fn);
		return an_store_hintf(st, "Call it in a statement of its own, outside the write transaction.");
	}
	if (!ls->own_db && !sqlite3_get_autocommit(ls->caller))
	{
		an_store_fail(st, AN_E_STATE, "cannot run inside a transaction on an in-memory database");
		an_store_detailf(st, "Anarchon commits on its own before it answers.");
		return an_store_hintf(st, "Call it outside BEGIN…COMMIT.");
	}
	if (ls->own_db && txn == SQLITE_TXN_READ && !journal_is_wal(ls->db))
	{
		an_store_fail(st, AN_E_STATE,
					  "cannot run while this connection is reading the database in rollback-journal mode");
		an_store_detailf(st, "Its commit would wait for this connection's own read lock.");
		return an_store_hintf(st, "Call it in a statement that reads no table, or use PRAGMA journal_mode=WAL.");
	}
	return AN_OK;
}

/* ---------------------------------------------------------------- statements */

/*
 * Prepare the statements once; kept for the life of our own connection.  A
 * read (anarchon_check) prepares only its own: reads do not migrate, and a
 * file an older release made lacks tables the writers' statements name
 * (anarchon_pauses before format 2, anarchon_pruned before format 4).
 */
static int
stmts_acquire(an_store *st, int read_only)
{
	local_store *ls = st->impl;

	for (int i = 0; i < S_COUNT; i++)
		if (ls->stmt[i] == NULL && (!read_only || i == S_READ) &&
			sqlite3_prepare_v3(ls->db, stmt_sql[i], -1,
							   ls->own_db ? SQLITE_PREPARE_PERSISTENT : 0,
							   &ls->stmt[i], NULL) != SQLITE_OK)
			return fail_db(st, ls->db, "preparing anarchon's statements");
	return AN_OK;
}

/* On the caller's connection nothing of ours may outlive the call. */
static void
stmts_release(local_store *ls)
{
	if (ls->own_db)
		return;
	for (int i = 0; i < S_COUNT; i++)
	{
		sqlite3_finalize(ls->stmt[i]);
		ls->stmt[i] = NULL;
	}
	for (int i = 0; i < AN_LOCAL_EXTRA; i++)
	{
		sqlite3_finalize(ls->extra[i]);
		ls->extra[i] = NULL;
	}
}

/* ---------------------------------------------------------------- lease ops */

static int
op_lock(an_store *st, const an_request *rq)
{
	local_store *ls = st->impl;
	int			rc;

	/* In a batch the write lock is held already: each job is a savepoint in it. */
	if (ls->batch)
		return run_write(st, ls->stmt[S_SAVEPOINT], "starting the job's claim (SAVEPOINT)");
	if ((rc = writable_now(st, "anarchon_claim")) != AN_OK)
		return rc;
	apply_busy_timeout(ls, rq->settings);
	return run_write(st, ls->stmt[S_BEGIN], "waiting for the write lock (BEGIN IMMEDIATE)");
}

static int
op_now(an_store *st, int64_t *now)
{
	local_store *ls = st->impl;

	*now = an_sqlite_vfs_now(ls->vfs);
	return AN_OK;
}

static int
op_read(an_store *st, const an_request *rq, an_run *run)
{
	local_store *ls = st->impl;
	sqlite3_stmt *s = bind_req(ls, S_READ, rq, 0, 0);
	int			rc = sqlite3_step(s);

	run->state = AN_RUN_NONE;
	if (rc == SQLITE_ROW)
	{
		const unsigned char *state = sqlite3_column_text(s, 0);
		const unsigned char *token = sqlite3_column_text(s, 3);
		size_t		len = (size_t) sqlite3_column_bytes(s, 3);

		run->state = an_run_state_parse(state ? (const char *) state : "");
		run->attempt = sqlite3_column_int(s, 1);
		run->lease_until = sqlite3_column_int64(s, 2);
		if (token == NULL || len > AN_TOKEN_MAX)
			len = 0;
		memcpy(run->token, token ? (const char *) token : "", len);
		run->token[len] = '\0';
		if (run->state == AN_RUN_NONE)
		{
			sqlite3_reset(s);
			return an_store_fail(st, AN_E_STORE,
								 "anarchon_runs holds a run of job \"%s\" with an unknown state", rq->job);
		}
		rc = SQLITE_DONE;
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return fail_db(st, ls->db, "reading the run");
	return AN_OK;
}

static int
op_other_live(an_store *st, const an_request *rq, int64_t now, int *live)
{
	local_store *ls = st->impl;
	sqlite3_stmt *s = bind_req(ls, S_OTHER_LIVE, rq, 0, 0);
	int			rc;

	sqlite3_bind_int64(s, 3, now);
	rc = sqlite3_step(s);
	*live = (rc == SQLITE_ROW);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail_db(st, ls->db, "looking for a live run of the job");
	return AN_OK;
}

static int
op_insert(an_store *st, const an_request *rq, int64_t now, int64_t lease_until)
{
	local_store *ls = st->impl;

	return run_write(st, bind_req(ls, S_INSERT, rq, now, lease_until), "inserting the run");
}

static int
op_takeover(an_store *st, const an_request *rq, int32_t attempt, int64_t now,
			int64_t lease_until)
{
	local_store *ls = st->impl;
	sqlite3_stmt *s = bind_req(ls, S_TAKEOVER, rq, now, lease_until);

	sqlite3_bind_int(s, 6, attempt);
	return run_write(st, s, "taking over the run");
}

static int
op_interrupt(an_store *st, const an_request *rq, int64_t now)
{
	local_store *ls = st->impl;

	return run_write(st, bind_req(ls, S_INTERRUPT, rq, now, 0), "marking the run interrupted");
}

static int
op_replace_others(an_store *st, const an_request *rq, int64_t now)
{
	local_store *ls = st->impl;

	/* A table made before 'replaced' was migrated by the call's first use (format.c). */
	return run_write(st, bind_req(ls, S_REPLACE, rq, now, 0), "marking the job's other runs replaced");
}

static int
op_unlock(an_store *st, int commit)
{
	local_store *ls = st->impl;

	/* A batch's job: kept or undone inside the batch's transaction, committed with it. */
	if (ls->batch)
	{
		if (sqlite3_get_autocommit(ls->db))
			return commit ? an_store_fail(st, AN_E_STORE, "the batch's transaction ended before its job was claimed") : AN_OK;
		if (!commit)
			(void) run_write(st, ls->stmt[S_ROLLBACK_TO], "undoing the job's claim");
		return run_write(st, ls->stmt[S_RELEASE], "ending the job's claim");
	}
	if (commit)
	{
		int			rc = run_write(st, ls->stmt[S_COMMIT], "committing the claim");

		/* A failed COMMIT leaves the transaction open: end it, report the COMMIT. */
		if (rc != AN_OK && !sqlite3_get_autocommit(ls->db))
		{
			sqlite3_step(ls->stmt[S_ROLLBACK]);
			sqlite3_reset(ls->stmt[S_ROLLBACK]);
		}
		return rc;
	}
	if (!sqlite3_get_autocommit(ls->db))
	{
		sqlite3_step(ls->stmt[S_ROLLBACK]);
		sqlite3_reset(ls->stmt[S_ROLLBACK]);
	}
	return AN_OK;
}

static int
op_pruned_before(an_store *st, const an_request *rq, int64_t *before)
{
	local_store *ls = st->impl;
	sqlite3_stmt *s = ls->stmt[S_PRUNED_READ];
	int			rc;

	(void) rq;
	*before = INT64_MIN;
	sqlite3_reset(s);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*before = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail_db(st, ls->db, "reading how far anarchon_prune has deleted");
	return AN_OK;
}

/* The pause, read inside the claim's BEGIN IMMEDIATE (local_pause.c). */
static int
op_paused(an_store *st, const an_request *rq, int64_t now, int *paused)
{
	int64_t		until = 0;
	int			rc = an_sqlite_local_paused_at(st, rq->job, now, &until);

	*paused = until != 0;
	return rc;
}

/* No peek: a claim's read and its write lock are one BEGIN IMMEDIATE here. */
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
	.paused = op_paused,
};

/* ---------------------------------------------------------------- store methods */

/* an_manual_find: read under the claim's BEGIN IMMEDIATE. */
static int
find_manual(an_store *st, const char *job, int64_t since, int64_t *slot, int *found)
{
	local_store *ls = st->impl;
	sqlite3_stmt *s = ls->stmt[S_MANUAL];
	int			rc;

	sqlite3_bind_text(s, 1, job, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, since);
	sqlite3_bind_int(s, 3, AN_MANUAL_OFFSET_MS);
	rc = sqlite3_step(s);
	*found = (rc == SQLITE_ROW);
	if (*found)
		*slot = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail_db(st, ls->db, "looking for the job's manual request");
	return AN_OK;
}

/* A claim, or a run-now (a claim of the manual slot chosen under BEGIN IMMEDIATE). */
static int
do_claim(an_store *st, const an_request *rq, an_claim_result *res)
{
	if (rq->kind == AN_CLAIM_MANUAL)
		return an_lease_run_now(st, &local_ops, find_manual, rq, res, &res->slot);
	return an_lease_claim(st, &local_ops, rq, res);
}

/* Heartbeat and finish: one fenced UPDATE each, atomic on its own. */
static int
fenced_update(an_store *st, sqlite3_stmt *s, const char *fn, int *owned)
{
	local_store *ls = st->impl;
	int			rc;

	if ((rc = writable_now(st, fn)) != AN_OK)
		return rc;
	if ((rc = run_write(st, s, fn)) != AN_OK)
		return rc;
	*owned = sqlite3_changes(ls->db) > 0;
	return AN_OK;
}

static int
do_heartbeat(an_store *st, const an_request *rq, int *owned)
{
	local_store *ls = st->impl;
	int64_t		now = an_sqlite_vfs_now(ls->vfs);

	apply_busy_timeout(ls, rq->settings);
	return fenced_update(st, bind_req(ls, S_HEARTBEAT, rq, now,
									  an_lease_end(now, rq->settings->lease_ms)),
						 "anarchon_heartbeat", owned);
}

static int
do_finish(an_store *st, const an_request *rq, an_run_state status, int *owned)
{
	local_store *ls = st->impl;
	int64_t		now = an_sqlite_vfs_now(ls->vfs);
	sqlite3_stmt *s = bind_req(ls, S_FINISH, rq, now, 0);

	apply_busy_timeout(ls, rq->settings);
	sqlite3_bind_text(s, 6, an_run_state_name(status), -1, SQLITE_STATIC);
	return fenced_update(st, s, "anarchon_finish", owned);
}

/*
 * Before a read, or a write inside the caller's transaction (where nothing
 * can be migrated): are the tables in a format this library knows?  The
 * older formats have the same columns, so these statements read and write
 * them as they are; a newer or unreadable one is refused (format.c).
 */
static int
format_known(an_store *st, sqlite3 *db)
{
	local_store *ls = st->impl;
	int			rc;

	if (ls->schema_ready || ls->format_read)
		return AN_OK;
	if ((rc = an_sqlite_format_readable(st, db)) == AN_OK)
		ls->format_read = 1;
	return rc;
}

/*
 * Inside the caller's write transaction (after anarchon_fence, typically)
 * the claim connection could not write until the caller commits, so fence,
 * heartbeat and finish run on the caller's own connection instead, as part
 * of that transaction: they commit or roll back with the caller's writes.
 * The statement is the caller connection's for this call only.  status, when
 * not NULL, is ?6.  No table yet means nothing was ever claimed: not ours.
 */
static int
caller_update(an_store *st, enum stmt_id id, const an_request *rq, const char *status,
			  const char *fn, int *owned)
{
	local_store *ls = st->impl;
	int64_t		now = an_sqlite_vfs_now(ls->vfs);
	sqlite3_stmt *s;
	int			rc;

	*owned = 0;
	if ((rc = format_known(st, ls->caller)) != AN_OK)
		return rc;
	if (sqlite3_prepare_v2(ls->caller, stmt_sql[id], -1, &s, NULL) != SQLITE_OK)
		return strstr(sqlite3_errmsg(ls->caller), "no such table") ? AN_OK : fail_db(st, ls->caller, fn);
	bind_stmt(s, rq, now, an_lease_end(now, rq->settings->lease_ms));
	if (status)
		sqlite3_bind_text(s, 6, status, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return fail_db(st, ls->caller, fn);
	*owned = sqlite3_changes(ls->caller) > 0;
	return AN_OK;
}

/* Is the caller inside a transaction that has written (or fenced)? */
static int
in_callers_write(const local_store *ls)
{
	return sqlite3_txn_state(ls->caller, "main") == SQLITE_TXN_WRITE;
}

/*
 * The fence: on the caller's connection, inside its transaction.  Its UPDATE
 * changes nothing but takes the database's write lock for that transaction,
 * and with it no claim connection can take the run over (BEGIN IMMEDIATE
 * waits) until the caller commits or rolls back: SQLite's single writer is
 * the fence.
 */
static int
local_fence(an_store *st, const an_request *rq, int *owned)
{
	local_store *ls = st->impl;

	*owned = 0;
	if (sqlite3_get_autocommit(ls->caller))
	{
		an_store_fail(st, AN_E_STATE, "must be called inside the write transaction whose writes it fences");
		an_store_detailf(st, "It holds the run for this caller only until that transaction ends.");
		return an_store_hintf(st, "BEGIN IMMEDIATE; … SELECT anarchon_fence(…); … COMMIT.");
	}
	return caller_update(st, S_FENCE, rq, NULL, "anarchon_fence", owned);
}

/* The backup's read: one SELECT by primary key, no transaction of its own. */
static int
do_check(an_store *st, const an_request *rq, an_check_result *res)
{
	local_store *ls = st->impl;
	an_run		run;
	int			rc;

	apply_busy_timeout(ls, rq->settings);
	if ((rc = op_read(st, rq, &run)) != AN_OK)
		return rc;
	res->state = an_lease_check_state(&run, an_sqlite_vfs_now(ls->vfs));
	res->attempt = run.state == AN_RUN_NONE ? 0 : run.attempt;
	res->lease_until = run.state == AN_RUN_NONE ? 0 : run.lease_until;
	return AN_OK;
}

static int
do_prune(an_store *st, int64_t before, int64_t *deleted)
{
	local_store *ls = st->impl;
	sqlite3_stmt *s = ls->stmt[S_PRUNE];
	int			rc;

	if ((rc = writable_now(st, "anarchon_prune")) != AN_OK)
		return rc;
	sqlite3_reset(ls->stmt[S_PRUNED_MARK]);
	sqlite3_bind_int64(ls->stmt[S_PRUNED_MARK], 1, before);
	if ((rc = run_write(st, ls->stmt[S_PRUNED_MARK], "anarchon_prune")) != AN_OK)
		return rc;
	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, before);
	sqlite3_bind_int64(s, 2, an_sqlite_vfs_now(ls->vfs));
	if ((rc = run_write(st, s, "anarchon_prune")) != AN_OK)
		return rc;
	*deleted = sqlite3_changes64(ls->db);
	s = ls->stmt[S_PRUNE_PAUSES];
	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, before);
	return run_write(st, s, "anarchon_prune");
}

/* ---------------------------------------------------------------- the claim connection */

static int	create_schema(an_store *st, const char *fn);

/* Busy timeout and clock of a freshly opened db. */
static void
adopt_db(local_store *ls, sqlite3 *db)
{
	ls->db = db;
	an_fork_own(&ls->proc);
	ls->vfs = an_sqlite_vfs(db);
	sqlite3_busy_timeout(db, AN_BUSY_TIMEOUT_MS_DEFAULT);
	ls->busy_timeout_ms = AN_BUSY_TIMEOUT_MS_DEFAULT;
}

/*
 * In a process other than the one that opened the claim connection, set it
 * and its statements aside untouched (see the header comment).
 */
static void
set_aside_if_inherited(local_store *ls)
{
	unsigned	slot;

	if (!ls->own_db || ls->db == NULL || !an_fork_foreign(ls->proc))
		return;
	slot = n_set_aside++ % AN_SET_ASIDE;
	set_aside[slot].db = ls->db;
	memcpy(set_aside[slot].stmt, ls->stmt, sizeof(ls->stmt));
	memcpy(set_aside[slot].extra, ls->extra, sizeof(ls->extra));
	memset(ls->stmt, 0, sizeof(ls->stmt));
	memset(ls->extra, 0, sizeof(ls->extra));
	ls->db = NULL;
}

/* The claim connection of this process, opened if it was set aside. */
static int
own_connection(an_store *st)
{
	local_store *ls = st->impl;
	sqlite3    *db;
	an_err		err;

	set_aside_if_inherited(ls);
	if (ls->db != NULL)
		return AN_OK;
	if (an_sqlite_open_twin(ls->caller, &db, &err) != SQLITE_OK)
		return an_store_adopt(st, AN_E_STORE, &err);
	adopt_db(ls, db);
	return AN_OK;
}

/*
 * Before each method: refuse a writer the caller's connection does not
 * allow (fn names it; NULL for check, a read), then this process's connection
 * and its statements, released after the call (see stmts_release).  The first
 * writer of a connection creates the table, waiting for the write lock as
 * long as its settings (s, when the method has them) allow.
 */
static int
begin_call(an_store *st, const char *fn, const an_settings *s)
{
	local_store *ls = st->impl;
	an_err		err;
	int			rc;

	if (fn && !an_sqlite_may_write(ls->caller, fn, &err))
		return an_store_adopt(st, AN_E_STATE, &err);
	if ((rc = own_connection(st)) != AN_OK)
		return rc;
	if (s)
		apply_busy_timeout(ls, s);
	if (fn && !ls->schema_ready && (rc = create_schema(st, fn)) != AN_OK)
		return rc;
	return stmts_acquire(st, fn == NULL);
}

/*
 * Is there an anarchon_runs to read?  Not before the first claim of a
 * database, when a check comes from a connection that may not create it.
 */
static int
runs_table_exists(local_store *ls)
{
	sqlite3_stmt *s;
	int			found;

	if (ls->schema_ready || ls->runs_seen)
		return 1;
	if (sqlite3_prepare_v2(ls->db, "SELECT 1 FROM sqlite_schema WHERE type = 'table'"
						   " AND name = 'anarchon_runs'", -1, &s, NULL) != SQLITE_OK)
		return 1;				/* the check's own statement reports why */
	found = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return ls->runs_seen = found;
}

#define WITH_STMTS(fn, settings, call) \
	do { \
		int			rc_ = begin_call(st, fn, settings); \
		if (rc_ == AN_OK) \
			rc_ = (call); \
		stmts_release(st->impl); \
		return rc_; \
	} while (0)

static int
local_claim(an_store *st, const an_request *rq, an_claim_result *res)
{
	WITH_STMTS(rq->kind == AN_CLAIM_MANUAL ? "anarchon_run_now" : "anarchon_claim", rq->settings,
			   do_claim(st, rq, res));
}

static int
local_heartbeat(an_store *st, const an_request *rq, int *owned)
{
	if (in_callers_write(st->impl))
		return caller_update(st, S_HEARTBEAT, rq, NULL, "anarchon_heartbeat", owned);
	WITH_STMTS("anarchon_heartbeat", rq->settings, do_heartbeat(st, rq, owned));
}

static int
local_finish(an_store *st, const an_request *rq, an_run_state status, int *owned)
{
	if (in_callers_write(st->impl))
		return caller_update(st, S_FINISH, rq, an_run_state_name(status), "anarchon_finish", owned);
	WITH_STMTS("anarchon_finish", rq->settings, do_finish(st, rq, status, owned));
}

static int
local_check(an_store *st, const an_request *rq, an_check_result *res)
{
	int			rc;

	/* No table yet: no run was ever claimed here, and check only reads. */
	if ((rc = own_connection(st)) != AN_OK)
		return rc;
	if (!runs_table_exists(st->impl))
	{
		memset(res, 0, sizeof(*res));
		res->state = AN_CHECK_NONE;
		return AN_OK;
	}
	if ((rc = format_known(st, ((local_store *) st->impl)->db)) != AN_OK)
		return rc;
	WITH_STMTS(NULL, rq->settings, do_check(st, rq, res));
}

static int
local_prune(an_store *st, int64_t before, int64_t *deleted)
{
	WITH_STMTS("anarchon_prune", NULL, do_prune(st, before, deleted));
}

static void
local_close(an_store *st)
{
	local_store *ls = st->impl;

	if (ls == NULL)
		return;
	set_aside_if_inherited(ls);
	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(ls->stmt[i]);
	for (int i = 0; i < AN_LOCAL_EXTRA; i++)
		sqlite3_finalize(ls->extra[i]);
	if (ls->own_db)
		sqlite3_close_v2(ls->db);
	sqlite3_free(ls);
	st->impl = NULL;
}

/* ---------------------------------------------------------------- for local_pause.c */

int
an_sqlite_local_call(an_store *st, const char *fn, const an_settings *s, int write,
					 int (*body) (an_store *st, void *arg), void *arg)
{
	local_store *ls = st->impl;
	int			rc;

	/* A read needs none of the store's statements: they would fail before the first write. */
	if (write)
		rc = begin_call(st, fn, s);
	else if ((rc = own_connection(st)) == AN_OK)
	{
		apply_busy_timeout(ls, s);
		rc = format_known(st, ls->db);
	}
	if (rc == AN_OK && write)
	{
		if ((rc = writable_now(st, fn)) == AN_OK &&
			(rc = run_write(st, ls->stmt[S_BEGIN], "waiting for the write lock (BEGIN IMMEDIATE)")) == AN_OK)
		{
			int			end;

			rc = body(st, arg);
			end = op_unlock(st, rc == AN_OK);
			if (rc == AN_OK)
				rc = end;
		}
	}
	else if (rc == AN_OK)
		rc = body(st, arg);
	stmts_release(ls);
	return rc;
}

/* What local_batch runs inside its BEGIN IMMEDIATE. */
typedef struct batch_call
{
	size_t		n;
	int			(*one) (an_store *st, void *arg, size_t i);
	void	   *arg;
} batch_call;

static int
batch_body(an_store *st, void *arg)
{
	local_store *ls = st->impl;
	batch_call *b = arg;
	int			rc = AN_OK;

	ls->batch = 1;
	for (size_t i = 0; i < b->n && rc == AN_OK; i++)
	{
		rc = b->one(st, b->arg, i);
		/*
		 * An error that ended the transaction itself (SQLITE_FULL, an I/O
		 * error) took the earlier jobs' claims with it: the whole batch fails.
		 */
		if (rc == AN_OK && sqlite3_get_autocommit(ls->db))
		{
			an_store_clear(st);
			rc = an_store_fail(st, AN_E_STORE, "the transaction of the batch was rolled back by SQLite");
			an_store_detailf(st, "A job's claim failed in a way that ends the whole transaction (a full disk, an I/O error), so no job of the call was claimed.");
		}
	}
	ls->batch = 0;
	/* On the caller's connection (in memory) the jobs' calls released our statements. */
	if (rc == AN_OK)
		rc = stmts_acquire(st, 0);
	return rc;
}

/*
 * The store's batch (anarchon_claim_many): one(st, arg, i) for each i < n
 * inside one BEGIN IMMEDIATE, committed at the end.  Each claim one makes
 * through the store's claim method is a savepoint of that transaction, undone
 * alone when it fails, so one's own result is AN_OK for a job that failed; an
 * error it returns, or an error that ends the transaction, fails and rolls
 * back the whole batch.
 */
static int
local_batch(an_store *st, const an_settings *s, const an_request *rqs, size_t n,
			int (*one) (an_store *st, void *arg, size_t i), void *arg)
{
	/* One file, one lock: there is nothing to send ahead. */
	(void) rqs;
	batch_call	b = {n, one, arg};

	return an_sqlite_local_call(st, "anarchon_claim_many", s, 1, batch_body, &b);
}

int
an_sqlite_local_stmt(an_store *st, int id, const char *sql, sqlite3_stmt **out)
{
	local_store *ls = st->impl;

	*out = NULL;
	if (ls->extra[id] == NULL &&
		sqlite3_prepare_v3(ls->db, sql, -1, ls->own_db ? SQLITE_PREPARE_PERSISTENT : 0,
						   &ls->extra[id], NULL) != SQLITE_OK)
	{
		/* Before the first write of a database there is no table: nothing is paused. */
		if (strstr(sqlite3_errmsg(ls->db), "no such table"))
			return AN_OK;
		return fail_db(st, ls->db, "preparing anarchon's statements");
	}
	sqlite3_reset(ls->extra[id]);
	sqlite3_clear_bindings(ls->extra[id]);
	*out = ls->extra[id];
	return AN_OK;
}

int
an_sqlite_local_fail(an_store *st, const char *what)
{
	return fail_db(st, ((local_store *) st->impl)->db, what);
}

int64_t
an_sqlite_local_now(an_store *st)
{
	return an_sqlite_vfs_now(((local_store *) st->impl)->vfs);
}

/*
 * Create the table and index; the first call of a connection that writes
 * does this once.  fn names that call in a refusal.
 */
static int
create_schema(an_store *st, const char *fn)
{
	local_store *ls = st->impl;
	int			rc;

	if ((rc = writable_now(st, fn)) != AN_OK)
		return rc;
	if ((rc = an_sqlite_format_ensure(st, ls->db)) != AN_OK)
		return rc;
	ls->schema_ready = 1;
	return AN_OK;
}

/*
 * open: arg is the caller's sqlite3 connection; url is "local".  Nothing is
 * written here: the table is created by the first call that writes (which
 * names itself if it is refused, and waits for the lock as its settings
 * say), and a check before it answers none.
 */
static int
local_open(an_store *st, const char *url, void *arg)
{
	sqlite3    *caller = arg;
	const char *file = sqlite3_db_filename(caller, "main");
	local_store *ls;

	(void) url;
	ls = sqlite3_malloc(sizeof(*ls));
	if (ls == NULL)
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	memset(ls, 0, sizeof(*ls));
	ls->caller = caller;
	st->impl = ls;

	ls->own_db = file && *file;
	if (ls->own_db)
		return own_connection(st);
	adopt_db(ls, caller);
	return AN_OK;
}

static const an_store_admin local_admin = {
	.prune = local_prune,
	.pause = an_sqlite_local_pause,
	.resume = an_sqlite_local_resume,
	.paused = an_sqlite_local_paused,
	.pauses = an_sqlite_local_pauses,
};

const an_store_methods an_sqlite_local_methods = {
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
	.recall = an_sqlite_local_recall,	/* local_recall.c */
	.batch = local_batch,
	.caps = AN_CAP_DUTIES,       /* run-now: a manual claim (do_claim) */
	.admin = &local_admin,
};
