/*
 * lease.h — the claim of a lease store, written once.
 *
 * The claim's decision table (late, overlap, own resent claim, running,
 * takeover, interrupted, done, replace) lives in lease.c and nowhere else in C.  A
 * lease store that decides inside a database transaction (SQLite's BEGIN
 * IMMEDIATE, PostgreSQL's per-job row lock) supplies only the primitive steps
 * below; the engine calls them in this order, so that every answer is decided
 * under the lock and on the clock read after it was granted:
 *
 *   lock → now → [paused?] → read the run → decide → [other live run?]
 *        → write → [replace the other live runs] → unlock
 *
 * The pause is read under the lock, like the run: a pause that committed
 * while the claim waited for the lock is seen (core/pause.h).
 *
 * Redis's lease strategy runs the same table in a Lua script, because there
 * the whole decision must execute inside Redis; the lease claim script in
 * stores/redis/redis_scripts.c is the only other copy, and its tests replay the same rows.
 */
#ifndef ANARCHON_LEASE_H
#define ANARCHON_LEASE_H

#include "store.h"

/* A stored run, as a lease store reads it. */
typedef struct an_run
{
	an_run_state state;          /* AN_RUN_NONE: no row */
	int32_t		attempt;
	int64_t		lease_until;     /* ms */
	char		token[AN_TOKEN_MAX + 1];
} an_run;

/*
 * The steps a transactional lease store provides.  Each returns AN_OK or an
 * error recorded on the store (an_store_fail).  After `lock` succeeded the
 * engine always calls `unlock`, with commit = 1 on success and 0 after any
 * error, so a failure never leaves a half-written run behind.
 */
typedef struct an_lease_ops
{
	/* Take the job's lock (BEGIN IMMEDIATE; upsert of the job's lock row). */
	int			(*lock) (an_store *st, const an_request *rq);
	/* The store's clock, read after the lock is held. */
	int			(*now) (an_store *st, int64_t *now_ms);
	/* Read the run (job, slot); run->state = AN_RUN_NONE when there is none. */
	int			(*read) (an_store *st, const an_request *rq, an_run *run);
	/* Does another run of the job (other slot) hold a lease >= now? */
	int			(*other_live) (an_store *st, const an_request *rq, int64_t now,
							   int *live);
	/* Insert attempt 1 of the run for rq->token. */
	int			(*insert) (an_store *st, const an_request *rq, int64_t now,
						   int64_t lease_until);
	/* Give the run to rq->token as attempt `attempt`. */
	int			(*takeover) (an_store *st, const an_request *rq, int32_t attempt,
							 int64_t now, int64_t lease_until);
	/* Mark the run interrupted (its lease ran out, no attempts left). */
	int			(*interrupt) (an_store *st, const an_request *rq, int64_t now);
	/* Commit (commit = 1) or roll back; must not fail silently. */
	int			(*unlock) (an_store *st, int commit);
	/*
	 * Overlap 'replace': mark the job's other runs that hold a lease >= now
	 * (the runs 'skip' would answer overlap for) replaced, finished at now.
	 */
	int			(*replace_others) (an_store *st, const an_request *rq, int64_t now);
	/*
	 * Optional (NULL: the store never deletes a run).  *before: the slot below
	 * which runs may have been deleted (anarchon_prune's cutoff, the largest
	 * it has used), INT64_MIN when none.  A first claim below it answers
	 * late: the slot may have been won and its run pruned by a host whose
	 * settings keep runs for less than this claim's max_late_ms.
	 */
	int			(*pruned_before) (an_store *st, const an_request *rq, int64_t *before);
	/*
	 * Optional (NULL: the store holds no pauses).  *paused = 1 when rq->job
	 * is paused at now; read with the lock held, before the run.  A claim
	 * of a paused job answers AN_PAUSED and writes nothing.  Not asked for
	 * a run-now (an_lease_claim_picked): a pause does not hold it.
	 */
	int			(*paused) (an_store *st, const an_request *rq, int64_t now, int *paused);
	/*
	 * Optional (NULL: paused, then read).  The pause and the run of a claim a
	 * pause holds, in one read with the lock held (one statement, where a
	 * store pays for each): *paused as paused sets it, and the run as read
	 * reads it (AN_RUN_NONE when there is none, or when *paused).
	 */
	int			(*read_gated) (an_store *st, const an_request *rq, int64_t now, int *paused,
							   an_run *run);
	/*
	 * Optional (NULL: every claim takes the lock).  A loser's claim, one
	 * that writes nothing (the job is paused, or the slot's run is finished
	 * or running under another token's lease), is answered from what is
	 * committed, without the lock and without a write: the run and whether
	 * the job is paused, read in one consistent view (one snapshot), the
	 * pause judged at *now_before (the store's clock read before that view)
	 * and *now_after read after it, on which the lease is judged.  *ok = 0
	 * when the store cannot read so for this claim (a transaction whose
	 * snapshot may be older than the call): the claim then takes the lock.
	 */
	int			(*peek) (an_store *st, const an_request *rq, an_run *run, int *paused,
						 int64_t *now_before, int64_t *now_after, int *ok);
} an_lease_ops;

/*
 * Run one claim through ops, the pause included.  The store's lock is
 * released before it returns.
 */
int			an_lease_claim(an_store *st, const an_lease_ops *ops,
						   const an_request *rq, an_claim_result *res);

/*
 * Choose the slot of a claim (run-now's manual slot, core/run_now.c) with the
 * store's lock held and its clock read: set *slot, or fail on the store.
 */
typedef int (*an_lease_pick) (an_store *st, void *arg, const an_request *rq, int64_t now,
							  int64_t *slot);

/*
 * an_lease_claim of the slot that pick (given arg) chooses under the lock;
 * rq->slot is not read.  *slot (when not NULL) is the slot claimed.  The
 * pause is not read: a run-now is not held by a pause.
 */
int			an_lease_claim_picked(an_store *st, const an_lease_ops *ops, const an_request *rq,
								  an_lease_pick pick, void *arg, an_claim_result *res,
								  int64_t *slot);

/* What anarchon_check says of a run read at `now`. */
an_check_state an_lease_check_state(const an_run *run, int64_t now);

/* lease_until for a lease taken or renewed at now, saturating at the slot limit. */
int64_t		an_lease_end(int64_t now, int64_t lease_ms);

/*
 * The renewal rule of every lease store (AN_LEASE_RENEWAL): a heartbeat
 * renews a run only while the run is running, owned by its token, and its
 * lease has not ended (lease_until >= now on the store's clock, the same
 * test by which check says `running` rather than `expired`).  A heartbeat
 * that comes after the end answers false even when nobody has taken the run
 * over yet: the lease was lost, and its owner must stop, not carry on
 * because no backup happened to be looking.  A finish is different: a finish
 * by the owning token of a run nobody took over is recorded, late or not,
 * since the work is done and the record is the truth; one after a takeover
 * is fenced as always.
 */

/*
 * When a runner that renews its lease must stop its command (the keep-alive
 * of anarchon.run): the send time of the last renewal (or claim) the store
 * confirmed, plus lease_ms, minus a margin for the stop itself to take
 * effect.  The store started the lease it confirmed no earlier than the
 * request was sent, so a lease counted from the send can only end later than
 * the runner thinks, never sooner.  The margin is lease_ms / 10, at least
 * 100 ms (but no more than half the lease) and at most 5 s.  All times are
 * on the runner's own clock (a monotonic one), never compared to the store's.
 */
int64_t		an_lease_stop_at(int64_t sent_ms, int64_t lease_ms);
int64_t		an_lease_stop_margin(int64_t lease_ms);

#endif							/* ANARCHON_LEASE_H */
