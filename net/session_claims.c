/*
 * session_claims.c — the claims this session made, for stores that cannot
 * look a run up by token without changing it (see session_claims.h).
 */
#include <string.h>

#include "session_claims.h"

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
