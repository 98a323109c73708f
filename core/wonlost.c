/*
 * wonlost.c — the decision tables of won/lost stores (wonlost.h): the
 * claim, and the heartbeat, finish and check of the run it won.
 */
#include <string.h>

#include "pause.h"
#include "wonlost.h"

int
an_wonlost_late(const an_store *st, const an_request *rq)
{
	return an_store_host_now(st) - rq->slot > rq->settings->max_late_ms;
}

int
an_wonlost_claim(an_store *st, const an_wonlost_ops *ops, const an_request *rq,
				 an_claim_result *res)
{
	char		winner[AN_TOKEN_MAX + 1] = "";
	an_append_result result = AN_APPEND_REFUSED;
	int			found = 0;
	int			rc;

	memset(res, 0, sizeof(*res));
	if (ops->late_on_host && an_wonlost_late(st, rq))
	{
		int64_t		until = 0;

		/* Nothing is appended: only reads, the pause's first (wonlost.h). */
		if (AN_STORE_HAS(st, AN_CAP_PAUSED) && (rc = st->m->admin->paused(st, rq, &until)) != AN_OK)
			return rc;
		/* A claim of our own sent before the limit and repeated after it is still ours. */
		if (until == 0 && (rc = ops->find(st, rq, winner, &found)) != AN_OK)
			return rc;
		res->outcome = until != 0 ? AN_PAUSED : found && strcmp(winner, rq->token) == 0 ? AN_WON : AN_LATE;
	}
	else
	{
		if ((rc = ops->append(st, rq, &result, winner)) != AN_OK)
			return rc;
		switch (result)
		{
			case AN_APPEND_STORED:
				res->outcome = AN_WON;
				break;
			case AN_APPEND_TAKEN:
				res->outcome = strcmp(winner, rq->token) == 0 ? AN_WON : AN_LOST;
				break;
			case AN_APPEND_REFUSED:
				res->outcome = AN_LATE;
				break;
			case AN_APPEND_PAUSED:
				res->outcome = AN_PAUSED;
				break;
		}
	}
	res->attempt = res->outcome == AN_WON ? 1 : 0;
	if (ops->decided)
		ops->decided(st, rq, res);
	return AN_OK;
}

/* Does the stored claim of the run hold rq->token? */
static int
ours(an_store *st, const an_wonlost_run_ops *ops, const an_request *rq, int *yes)
{
	char		winner[AN_TOKEN_MAX + 1] = "";
	int			found = 0;
	int			rc;

	*yes = 0;
	if ((rc = ops->find(st, rq, winner, &found)) != AN_OK)
		return rc;
	*yes = found && strcmp(winner, rq->token) == 0;
	return AN_OK;
}

int
an_wonlost_heartbeat(an_store *st, const an_wonlost_run_ops *ops, const an_request *rq,
					 int *owned)
{
	an_run_state state;
	int			rc;

	if ((rc = ours(st, ops, rq, owned)) != AN_OK || !*owned)
		return rc;
	if ((rc = ops->status(st, rq, &state)) != AN_OK)
	{
		*owned = 0;
		return rc;
	}
	*owned = state == AN_RUN_RUNNING;
	return AN_OK;
}

int
an_wonlost_finish(an_store *st, const an_wonlost_run_ops *ops, const an_request *rq,
				  an_run_state status, int *owned)
{
	an_run_state state;
	int			recorded = 0;
	int			rc;

	if ((rc = ours(st, ops, rq, owned)) != AN_OK || !*owned)
		return rc;
	*owned = 0;
	if ((rc = ops->record(st, rq, status, &recorded)) != AN_OK)
		return rc;
	if (recorded)
	{
		*owned = 1;
		return AN_OK;
	}
	if ((rc = ops->status(st, rq, &state)) != AN_OK)
		return rc;
	*owned = state == status;
	return AN_OK;
}

int
an_wonlost_check(an_store *st, const an_wonlost_run_ops *ops, const an_request *rq,
				 an_check_result *res)
{
	char		winner[AN_TOKEN_MAX + 1] = "";
	an_run_state state;
	int			found = 0;
	int			rc;

	memset(res, 0, sizeof(*res));
	if ((rc = ops->find(st, rq, winner, &found)) != AN_OK || !found)
		return rc;
	if ((rc = ops->status(st, rq, &state)) != AN_OK)
		return rc;
	res->attempt = 1;
	res->state = state == AN_RUN_SUCCEEDED ? AN_CHECK_SUCCEEDED :
		state == AN_RUN_FAILED ? AN_CHECK_FAILED : AN_CHECK_RUNNING;
	return AN_OK;
}

int
an_wonlost_memory_ok(an_store *st, const char *what, const char *param,
					 int64_t memory_ms, int64_t skew_ms, const an_settings *s)
{
	int64_t		need = s->max_late_ms + 2 * skew_ms;

	if (memory_ms >= need)
		return AN_OK;
	if (skew_ms == 0)
	{
		an_store_fail(st, AN_E_CONFIG, "%s (%lld ms) is shorter than max_late_ms (%lld ms)",
					  what, (long long) memory_ms, (long long) s->max_late_ms);
		an_store_detailf(st, "A late claim could win a slot the store has already forgotten.");
		return an_store_hintf(st, "Raise %s to at least max_late_ms, or lower %s.", param,
							  an_store_setting(st, "max_late_ms"));
	}
	an_store_fail(st, AN_E_CONFIG,
				  "%s (%lld ms) is shorter than max_late_ms (%lld ms) plus twice max_skew_ms (%lld ms)",
				  what, (long long) memory_ms, (long long) s->max_late_ms, (long long) skew_ms);
	an_store_detailf(st, "The store must remember a slot for max_late_ms and for the clock skew allowed "
					 "between instances either way; else a late claim could win a slot it has already forgotten.");
	return an_store_hintf(st, "Raise %s to at least %lld ms, or lower %s; or, if every instance's clock "
						  "is kept closer than %lld ms to the others', lower max_skew_ms in the store URL.",
						  param, (long long) need, an_store_setting(st, "max_late_ms"), (long long) skew_ms);
}

int
an_wonlost_refuse_replace(an_store *st, const char *store, const an_settings *s)
{
	if (!s->overlap_replace)
		return AN_OK;
	an_store_fail(st, AN_E_UNSUPPORTED, "overlap 'replace' needs a store with leases, and %s has none", store);
	an_store_detailf(st, "A won/lost store keeps who won each slot, not a running run that a later win could "
					 "mark replaced: the earlier run would go on, and its heartbeats would not be fenced.");
	return an_store_hintf(st, "Use a lease store (the local store, or Redis with strategy=lease), "
						  "or set overlap to 'skip' or 'allow'.");
}
