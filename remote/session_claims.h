/*
 * noclock.h — what the RabbitMQ and NATS stores share: they decide a claim
 * without a clock and without a lease.
 *
 *  - `late` is judged on the host database's clock before the store is asked
 *    (they have no clock of their own), so a late claim writes nothing.
 *  - A store that forgets a run before max_late_ms has passed would let a
 *    late claim win a slot a second time: an_noclock_memory_ok refuses that.
 *  - Neither server can look a run up by token without changing it, so each
 *    store keeps a small memory of the claims this session made (an_claims),
 *    used by heartbeat and finish; see doc/stores-amqp-nats.md.
 */
#ifndef ANARCHON_NOCLOCK_H
#define ANARCHON_NOCLOCK_H

#include "store.h"

/* Nonzero when the claim comes more than max_late_ms after its slot. */
int			an_noclock_late(const an_store *st, const an_request *rq);

/*
 * AN_OK when memory_ms (how long the store remembers a run, on the server's
 * clock) covers max_late_ms plus twice skew_ms; else AN_E_CONFIG naming
 * `what`, with a hint naming the parameter to raise.
 *
 * Why twice: lateness is judged on each instance's own clock.  An instance
 * whose clock is skew_ms ahead can win a slot skew_ms before it comes, and
 * one whose clock is skew_ms behind still thinks the slot is not late
 * max_late_ms + skew_ms after it; the store must remember the win for the
 * whole of that span.  skew_ms is 0 for a store that judges lateness on the
 * server's own clock.
 */
int			an_noclock_memory_ok(an_store *st, const char *what, const char *param,
								 int64_t memory_ms, int64_t skew_ms, const an_settings *s);

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

#endif							/* ANARCHON_NOCLOCK_H */
