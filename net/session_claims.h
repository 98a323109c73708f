/*
 * session_claims.h — the claims this session made, for the RabbitMQ and NATS
 * stores.  Neither server can look a run up by token without changing it
 * (RabbitMQ's gate only by taking its message; NATS's stream by a search),
 * so each store keeps a small memory of this session's latest claims, used by
 * heartbeat and finish; see doc/stores-amqp-nats.md.  Their lateness and
 * memory rules are core/wonlost.h's.
 */
#ifndef ANARCHON_SESSION_CLAIMS_H
#define ANARCHON_SESSION_CLAIMS_H

#include "store.h"

/* One claim made by this session. */
typedef struct an_claim_memo
{
	char		job[AN_JOB_MAX + 1];
	int64_t		slot;
	char		token[AN_TOKEN_MAX + 1];
	int64_t		aux;             /* the store's reference: NATS stream sequence */
	an_run_state finished;       /* RabbitMQ: the status this session's finish gave, or AN_RUN_NONE */
	int			won;
	int			used;
} an_claim_memo;

#define AN_CLAIM_MEMOS 128

/* The latest AN_CLAIM_MEMOS claims of a session, oldest overwritten first. */
typedef struct an_claims
{
	an_claim_memo m[AN_CLAIM_MEMOS];
	int			next;
} an_claims;

/* Remember the claim of (job, slot); a won claim is not replaced by a lost one. */
void		an_claims_put(an_claims *c, const char *job, int64_t slot,
						  const char *token, int64_t aux, int won);

/* The remembered claim of (job, slot), or NULL. */
an_claim_memo *an_claims_get(an_claims *c, const char *job, int64_t slot);

#endif							/* ANARCHON_SESSION_CLAIMS_H */
