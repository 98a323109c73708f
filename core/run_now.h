/*
 * run_now.h — a manual run of a job ("run now"), decided like any claim.
 *
 * A run-now asks for one extra run of a job, exactly once across the fleet,
 * however many instances ask at the same moment.  It is an ordinary claim of
 * a slot the store chooses under the job's lock: the slot of the job's
 * current manual request when there is one (a request made less than
 * max_late_ms ago: the callers join it), else a new one at the request's
 * time.  Every caller then claims that same slot, so the store's one-winner
 * rule decides: one `won`, the others `running` or `done`.
 *
 * A manual slot is the second of the request plus one millisecond.  No
 * schedule has a slot that is not a whole second, so a manual run never
 * takes a scheduled slot, anarchon_missed never lists it, and the history
 * tells it apart by its slot alone, the same in every store.  A claim
 * refuses such a slot (an_validate_slot); heartbeat, finish, check and fence
 * take it (an_validate_run_slot), since the run's owner must reach it.
 */
#ifndef ANARCHON_RUN_NOW_H
#define ANARCHON_RUN_NOW_H

#include "lease.h"

/* How far a manual slot sits past its whole second, in ms. */
#define AN_MANUAL_OFFSET_MS 1

/* Is slot a manual one (a run-now's), rather than a schedule's? */
int			an_slot_is_manual(int64_t slot);

/* The manual slot of a request made at now (ms). */
int64_t		an_manual_slot(int64_t now);

/*
 * The slot rule of the calls that address a run (heartbeat, finish, check,
 * fence): a schedule's slot (an_validate_slot) or a manual one in range.
 */
an_error	an_validate_run_slot(int64_t slot, an_err *err);

/*
 * Settings a run-now needs: max_late_ms of at least a second, so that a new
 * request's slot (up to 999 ms before now) is never late.  AN_OK, or
 * AN_E_INPUT with what to do on the store.
 */
int			an_run_now_check(an_store *st, const an_settings *s);

/*
 * The newest manual slot of job at or after `since`, for a lease store to
 * supply: *found = 0 when there is none.  Called with the job's lock held.
 */
typedef int (*an_manual_find) (an_store *st, const char *job, int64_t since,
							   int64_t *slot, int *found);

/*
 * run_now of a transactional lease store: under the job's lock, join the
 * current manual request or make one (find), then run the lease table on its
 * slot for rq->token (rq->slot is not read).  *slot is the slot claimed.
 */
int			an_lease_run_now(an_store *st, const an_lease_ops *ops, an_manual_find find,
							 const an_request *rq, an_claim_result *res, int64_t *slot);

/*
 * A host asks for a run-now with an_store_claim and rq->kind
 * AN_CLAIM_MANUAL (core/store.h): counted as a claim, refused with
 * AN_E_UNSUPPORTED and a hint by a store that cannot, and the manual slot in
 * res->slot.
 */

#endif							/* ANARCHON_RUN_NOW_H */
