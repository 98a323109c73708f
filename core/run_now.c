/*
 * run_now.c — a manual run of a job: its slot, its rule, and the lease
 * stores' way of choosing it (run_now.h says why the slot is off the second).
 */
#include <stdio.h>

#include "run_now.h"

int
an_slot_is_manual(int64_t slot)
{
	return slot >= AN_SLOT_MIN && slot <= AN_SLOT_MAX && slot % 1000 == AN_MANUAL_OFFSET_MS;
}

int64_t
an_manual_slot(int64_t now)
{
	return now - now % 1000 + AN_MANUAL_OFFSET_MS;
}

an_error
an_validate_run_slot(int64_t slot, an_err *err)
{
	if (an_slot_is_manual(slot))
		return AN_OK;
	return an_validate_slot(slot, err);
}

int
an_run_now_check(an_store *st, const an_settings *s)
{
	if (s->max_late_ms >= 1000)
		return AN_OK;
	an_store_fail(st, AN_E_INPUT, "max_late_ms (%lld) is too short to run a job now",
				  (long long) s->max_late_ms);
	an_store_detailf(st, "A run-now claims a slot up to a second before the request, and callers"
					 " within max_late_ms of one request share its run.");
	return an_store_hintf(st, "Set %s to at least 1000.", an_store_setting(st, "max_late_ms"));
}

/* What pick_manual is given: the store's look-up (a function pointer is no void *). */
typedef struct manual_finder
{
	an_manual_find find;
} manual_finder;

/* an_lease_pick of a run-now: the current request's slot, or a new one. */
static int
pick_manual(an_store *st, void *arg, const an_request *rq, int64_t now, int64_t *slot)
{
	const manual_finder *mf = arg;
	int			found = 0;
	int			rc;

	if ((rc = mf->find(st, rq->job, now - rq->settings->max_late_ms, slot, &found)) != AN_OK)
		return rc;
	if (!found)
		*slot = an_manual_slot(now);
	return AN_OK;
}

int
an_lease_run_now(an_store *st, const an_lease_ops *ops, an_manual_find find,
				 const an_request *rq, an_claim_result *res, int64_t *slot)
{
	manual_finder mf = {find};

	return an_lease_claim_picked(st, ops, rq, pick_manual, &mf, res, slot);
}
