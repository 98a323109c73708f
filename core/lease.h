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
 *   lock → now → read the run → decide → [other live run?] → write
 *        → [replace the other live runs] → unlock
 *
 * Redis's lease strategy runs the same table in a Lua script, because there
 * the whole decision must execute inside Redis; the lease claim script in
 * remote/redis/redis_scripts.c is the only other copy, and its tests replay the same rows.
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
} an_lease_ops;

/* Run one claim through ops.  The store's lock is released before it returns. */
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
 * rq->slot is not read.  *slot (when not NULL) is the slot claimed.
 */
int			an_lease_claim_picked(an_store *st, const an_lease_ops *ops, const an_request *rq,
								  an_lease_pick pick, void *arg, an_claim_result *res,
								  int64_t *slot);

/* What anarchon_check says of a run read at `now`. */
an_check_state an_lease_check_state(const an_run *run, int64_t now);

/* lease_until for a lease taken or renewed at now, saturating at the slot limit. */
int64_t		an_lease_end(int64_t now, int64_t lease_ms);

#endif							/* ANARCHON_LEASE_H */
