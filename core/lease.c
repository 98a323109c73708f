/*
 * lease.c — the claim's decision table for transactional lease stores.
 *
 * Every answer is decided while the store's lock is held and with the store's
 * clock read after it was granted: a claim that waited behind another must
 * judge the lease with the time it got the lock, not the time it asked.
 */
#include <string.h>

#include "lease.h"

int64_t
an_lease_end(int64_t now, int64_t lease_ms)
{
	if (lease_ms > INT64_MAX - now)
		return INT64_MAX;
	return now + lease_ms;
}

int64_t
an_lease_stop_margin(int64_t lease_ms)
{
	int64_t		margin = lease_ms / 10;

	if (margin < 100)
		margin = lease_ms / 2 < 100 ? lease_ms / 2 : 100;
	if (margin > 5000)
		margin = 5000;
	return margin;
}

int64_t
an_lease_stop_at(int64_t sent_ms, int64_t lease_ms)
{
	return an_lease_end(sent_ms, lease_ms - an_lease_stop_margin(lease_ms));
}

an_check_state
an_lease_check_state(const an_run *run, int64_t now)
{
	switch (run->state)
	{
		case AN_RUN_NONE:
			return AN_CHECK_NONE;
		case AN_RUN_RUNNING:
			return run->lease_until >= now ? AN_CHECK_RUNNING : AN_CHECK_EXPIRED;
		case AN_RUN_SUCCEEDED:
			return AN_CHECK_SUCCEEDED;
		case AN_RUN_FAILED:
			return AN_CHECK_FAILED;
		case AN_RUN_INTERRUPTED:
			return AN_CHECK_INTERRUPTED;
		case AN_RUN_REPLACED:
			return AN_CHECK_REPLACED;
	}
	return AN_CHECK_NONE;
}

/*
 * A slot won under overlap 'replace' ends the runs skip would have waited
 * for, in the same transaction as the win: their owners' next heartbeat or
 * finish is fenced, and nobody can see the new run beside a live old one.
 */
static int
won(an_store *st, const an_lease_ops *ops, const an_request *rq, int64_t now,
	int32_t attempt, int64_t lease_until, an_claim_result *res)
{
	int			rc;

	if (rq->settings->overlap_replace &&
		(rc = ops->replace_others(st, rq, now)) != AN_OK)
		return rc;
	res->outcome = AN_WON;
	res->attempt = attempt;
	res->lease_until = lease_until;
	return AN_OK;
}

/*
 * The answers for a run that exists which write nothing: done for a run that
 * ended, won for the owner's own claim sent again, running under another
 * token's live lease.  -1: the lease ran out, and the table must write.
 */
static int
existing_run_answer(const an_run *run, const an_request *rq, int64_t now)
{
	if (run->state != AN_RUN_RUNNING)
		return AN_DONE;
	/* Our own claim, sent again after a lost reply: still ours. */
	if (strcmp(run->token, rq->token) == 0)
		return AN_WON;
	if (run->lease_until >= now)
		return AN_RUNNING;
	return -1;
}

/* decide runs the table on a locked run; it writes through ops where the table says so. */
static int
decide(an_store *st, const an_lease_ops *ops, const an_request *rq,
	   const an_run *run, int64_t now, an_claim_result *res)
{
	const an_settings *s = rq->settings;
	int64_t		lease_until = an_lease_end(now, s->lease_ms);
	int			rc;

	res->attempt = run->attempt;
	res->lease_until = run->lease_until;

	if (run->state == AN_RUN_NONE)
	{
		int			live = 0;
		int64_t		pruned = INT64_MIN;

		/*
		 * Lateness only stops a first claim: a run that exists is answered
		 * below.  A slot whose run may have been pruned is late too, whatever
		 * this host's max_late_ms: the host that pruned may have kept runs for
		 * less (hosts may differ), and a run it deleted would be won again.
		 */
		if (now - rq->slot <= s->max_late_ms && ops->pruned_before &&
			(rc = ops->pruned_before(st, rq, &pruned)) != AN_OK)
			return rc;
		if (now - rq->slot > s->max_late_ms || rq->slot < pruned)
		{
			res->outcome = AN_LATE;
			res->attempt = 0;
			res->lease_until = 0;
			return AN_OK;
		}
		if (s->overlap_skip)
		{
			if ((rc = ops->other_live(st, rq, now, &live)) != AN_OK)
				return rc;
			if (live)
			{
				res->outcome = AN_OVERLAP;
				res->attempt = 0;
				res->lease_until = 0;
				return AN_OK;
			}
		}
		if ((rc = ops->insert(st, rq, now, lease_until)) != AN_OK)
			return rc;
		return won(st, ops, rq, now, 1, lease_until, res);
	}

	if ((rc = existing_run_answer(run, rq, now)) >= 0)
	{
		res->outcome = (an_outcome) rc;
		return AN_OK;
	}

	/* The lease ran out: take over if the run has attempts left. */
	if (run->attempt < s->attempts)
	{
		if ((rc = ops->takeover(st, rq, run->attempt + 1, now, lease_until)) != AN_OK)
			return rc;
		return won(st, ops, rq, now, run->attempt + 1, lease_until, res);
	}

	if ((rc = ops->interrupt(st, rq, now)) != AN_OK)
		return rc;
	res->outcome = AN_DONE;
	return AN_OK;
}

/*
 * The claim under the store's lock: of rq->slot, paused or not (gate), or of
 * the slot pick chooses (a run-now, which no pause holds).
 */
static int
claim_locked(an_store *st, const an_lease_ops *ops, const an_request *in, int gate,
			 an_lease_pick pick, void *arg, an_claim_result *res, int64_t *slot)
{
	an_request	picked = *in;
	const an_request *rq = &picked;
	an_run		run;
	int64_t		now = 0;
	int			paused = 0;
	int			rc;
	int			urc;

	memset(res, 0, sizeof(*res));
	memset(&run, 0, sizeof(run));

	if ((rc = ops->lock(st, rq)) != AN_OK)
		return rc;

	rc = ops->now(st, &now);
	/*
	 * The local stores decide on the database's clock, which is the host's
	 * own; anarchon_stats shows the offset all the same (0), measured.
	 */
	if (rc == AN_OK && st->stats)
	{
		int64_t		host = an_store_host_now(st);

		an_store_saw_clock(st, now, host, host);
	}
	/* The slot is chosen where the decision is: under the lock, on its clock. */
	if (rc == AN_OK && pick)
		rc = pick(st, arg, rq, now, &picked.slot);
	if (rc == AN_OK && slot)
		*slot = picked.slot;
	/* The pause, in the claim's own step: under the lock, on its clock. */
	if (rc == AN_OK && gate && ops->read_gated)
		rc = ops->read_gated(st, rq, now, &paused, &run);
	else
	{
		if (rc == AN_OK && gate && ops->paused)
			rc = ops->paused(st, rq, now, &paused);
		if (rc == AN_OK && !paused)
			rc = ops->read(st, rq, &run);
	}
	if (rc == AN_OK && paused)
		res->outcome = AN_PAUSED;
	else if (rc == AN_OK)
		rc = decide(st, ops, rq, &run, now, res);

	if (rc != AN_OK)
	{
		/* Keep the first error: the rollback's own message would hide the cause. */
		an_err		first = st->err;

		(void) ops->unlock(st, 0);
		st->err = first;
		return rc;
	}

	/* A claim is only an answer once it is committed. */
	if ((urc = ops->unlock(st, 1)) != AN_OK)
		return urc;
	return AN_OK;
}

/*
 * A loser's claim answered without the lock (ops->peek): *answered = 1 when
 * the committed state, read in one view, gives an answer that writes
 * nothing.  It is the table's answer at the moment of that view: the pause
 * first, then the run.  The lease must still be live on the clock read
 * after the view, so no moment between the view and the answer could have
 * let this claim take the run over.  A first claim, an expired lease and
 * the owner's own claim sent again take the lock: they may write, or (the
 * owner's) must be answered only from what the lock shows is durable.
 */
static int
claim_unlocked(an_store *st, const an_lease_ops *ops, const an_request *rq,
			   an_claim_result *res, int *answered)
{
	an_run		run;
	int			paused = 0;
	int			ok = 0;
	int64_t		before = 0;
	int64_t		after = 0;
	int			rc;
	int			outcome;

	*answered = 0;
	memset(&run, 0, sizeof(run));
	if ((rc = ops->peek(st, rq, &run, &paused, &before, &after, &ok)) != AN_OK || !ok)
		return rc;
	outcome = paused ? AN_PAUSED
		: run.state == AN_RUN_NONE ? -1 : existing_run_answer(&run, rq, after);
	if (outcome != AN_PAUSED && outcome != AN_DONE && outcome != AN_RUNNING)
		return AN_OK;
	if (st->stats)
	{
		int64_t		host = an_store_host_now(st);

		an_store_saw_clock(st, after, host, host);
	}
	memset(res, 0, sizeof(*res));
	res->outcome = (an_outcome) outcome;
	if (outcome != AN_PAUSED)
	{
		res->attempt = run.attempt;
		res->lease_until = run.lease_until;
	}
	*answered = 1;
	return AN_OK;
}

int
an_lease_claim(an_store *st, const an_lease_ops *ops, const an_request *rq,
			   an_claim_result *res)
{
	int			answered = 0;
	int			rc;

	if (ops->peek && (rc = claim_unlocked(st, ops, rq, res, &answered)) != AN_OK)
		return rc;
	if (answered)
		return AN_OK;
	return claim_locked(st, ops, rq, 1, NULL, NULL, res, NULL);
}

int
an_lease_claim_picked(an_store *st, const an_lease_ops *ops, const an_request *rq,
					  an_lease_pick pick, void *arg, an_claim_result *res, int64_t *slot)
{
	return claim_locked(st, ops, rq, 0, pick, arg, res, slot);
}
