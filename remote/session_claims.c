/*
 * noclock.c — lateness, memory length and the session's claims for stores
 * without a clock or a lease (see noclock.h).
 */
#include <string.h>

#include "noclock.h"

int
an_noclock_late(const an_store *st, const an_request *rq)
{
	return an_store_host_now(st) - rq->slot > rq->settings->max_late_ms;
}

int
an_noclock_memory_ok(an_store *st, const char *what, const char *param,
					 int64_t memory_ms, int64_t skew_ms, const an_settings *s)
{
	int64_t		need = s->max_late_ms + 2 * skew_ms;

	if (memory_ms >= need)
		return AN_OK;
	if (skew_ms == 0)
		return an_store_fail(st, AN_E_CONFIG,
							 "%s (%lld ms) is shorter than max_late_ms (%lld ms): a late claim could win a slot "
							 "the store has already forgotten; raise %s to at least max_late_ms or lower max_late_ms",
							 what, (long long) memory_ms, (long long) s->max_late_ms, param);
	an_store_fail(st, AN_E_CONFIG,
				  "%s (%lld ms) is shorter than max_late_ms (%lld ms) plus twice the clock skew allowed "
				  "between instances (max_skew_ms = %lld): a late claim could win a slot the store has "
				  "already forgotten",
				  what, (long long) memory_ms, (long long) s->max_late_ms, (long long) skew_ms);
	return an_store_hintf(st, "Raise %s to at least %lld ms, or lower max_late_ms; or, if every instance's clock "
						  "is kept closer than %lld ms to the others', lower max_skew_ms in the store URL.",
						  param, (long long) need, (long long) skew_ms);
}

static an_claim_memo *
find(an_claims *c, const char *job, int64_t slot)
{
	for (int i = 0; i < AN_CLAIM_MEMOS; i++)
		if (c->m[i].used && c->m[i].slot == slot && strcmp(c->m[i].job, job) == 0)
			return &c->m[i];
	return NULL;
}

void
an_claims_put(an_claims *c, const char *job, int64_t slot, const char *token,
			  int64_t aux, int won)
{
	an_claim_memo *m = find(c, job, slot);

	/* A run's winner stays remembered: a later losing claim of it must not hide it. */
	if (m != NULL && m->won && !won)
		return;
	if (m == NULL)
	{
		m = &c->m[c->next];
		c->next = (c->next + 1) % AN_CLAIM_MEMOS;
	}
	/* job and token were validated by the host: they fit. */
	strncpy(m->job, job, AN_JOB_MAX);
	m->job[AN_JOB_MAX] = '\0';
	strncpy(m->token, token, AN_TOKEN_MAX);
	m->token[AN_TOKEN_MAX] = '\0';
	m->slot = slot;
	m->aux = aux;
	m->finished = AN_RUN_NONE;
	m->won = won;
	m->used = 1;
}

an_claim_memo *
an_claims_get(an_claims *c, const char *job, int64_t slot)
{
	return find(c, job, slot);
}
