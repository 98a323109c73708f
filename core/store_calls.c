/*
 * store_calls.c — the hosts' calls of a store's methods: each method timed
 * and counted in the store's statistics row, what a store cannot do refused
 * in one place (a manual claim of a store without run-now, a fence of a
 * store without a way to check an owner), and a batch of claims as one unit
 * where the store has one.
 */
#include <string.h>

#include "run_now.h"
#include "store.h"

int
an_store_claim(an_store *st, const an_request *rq, an_claim_result *res)
{
	int64_t		start;
	int			rc;

	memset(res, 0, sizeof(*res));
	if (rq->kind == AN_CLAIM_MANUAL &&
		(!an_store_can(st, AN_CAP_RUN_NOW) || an_run_now_check(st, rq->settings) != AN_OK))
		return st->err.code;
	start = an_stats_start();
	rc = st->m->claim(st, rq, res);
	if (rq->kind != AN_CLAIM_MANUAL)
		res->slot = rq->slot;
	an_stats_count(st->stats, AN_STATS_CLAIM, start, rc, rc == AN_OK ? (int) res->outcome : -1, 0);
	return rc;
}

int
an_store_heartbeat(an_store *st, const an_request *rq, int *owned)
{
	int64_t		start = an_stats_start();
	int			rc = st->m->heartbeat(st, rq, owned);

	an_stats_count(st->stats, AN_STATS_HEARTBEAT, start, rc, 0, rc == AN_OK && *owned);
	return rc;
}

int
an_store_finish(an_store *st, const an_request *rq, an_run_state status, int *owned)
{
	int64_t		start = an_stats_start();
	int			rc = st->m->finish(st, rq, status, owned);

	an_stats_count(st->stats, AN_STATS_FINISH, start, rc, 0, rc == AN_OK && *owned);
	return rc;
}

int
an_store_check(an_store *st, const an_request *rq, an_check_result *res)
{
	int64_t		start = an_stats_start();
	int			rc = st->m->check(st, rq, res);

	an_stats_count(st->stats, AN_STATS_CHECK, start, rc, 0, 0);
	return rc;
}

int
an_store_fence(an_store *st, const an_request *rq, int *owned)
{
	int64_t		start = an_stats_start();
	int			rc;

	*owned = 0;
	if (AN_STORE_METHOD(st, fence) != NULL)
		rc = st->m->fence(st, rq, owned);
	else if (st->m->heartbeat == NULL)
		return an_store_fail(st, AN_E_UNSUPPORTED, "store \"%s\" cannot check who owns a run", st->m->name);
	else
		rc = st->m->heartbeat(st, rq, owned);
	an_stats_count(st->stats, AN_STATS_FENCE, start, rc, 0, rc == AN_OK && *owned);
	return rc;
}

int
an_store_batch(an_store *st, const an_settings *s, const an_request *rqs, size_t n,
			   int (*one) (an_store *st, void *arg, size_t i), void *arg)
{
	int			rc = AN_OK;

	if (AN_STORE_METHOD(st, batch) != NULL)
		return st->m->batch(st, s, rqs, n, one, arg);
	for (size_t i = 0; i < n && rc == AN_OK; i++)
		rc = one(st, arg, i);
	return rc;
}
