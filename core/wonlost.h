/*
 * wonlost.h — the claim of a won/lost store, written once.
 *
 * Redis stream-id, idmp and script and NATS JetStream keep the first claim
 * of a slot and never a second: a claim is appended under a key made of the
 * job and the slot, and the store either stores it or says that the key is
 * taken.  Whoever's token the stored claim holds has won, so a claim sent
 * again after its reply was lost finds its own token and is told `won` again.
 * The table, in the order the engine applies it:
 *
 *   judged on the host's clock, more than max_late_ms after the slot
 *       → read the stored claim: ours → won; anyone's or none → late
 *   the append stored it                       → won (attempt 1)
 *   the key was taken, the stored token is ours → won (attempt 1)
 *   the key was taken by another token          → lost
 *   the store refused the slot, holding none    → late
 *   the job is paused (read in the append's own step) → paused
 *
 * A store supplies the append and the read-back (an_wonlost_ops); it decides
 * nothing itself.  RabbitMQ is a won/lost store too, but its gate cannot be
 * read back without changing it, so it uses only the clock and memory rules
 * below (see doc/stores-amqp-nats.md).
 *
 * Lateness.  A store without a clock, or whose append cannot read one, judges
 * lateness on the host database's clock (an_wonlost_late) before sending
 * anything; the script strategy judges it inside Redis, on TIME.  A claim
 * judged late on the host appends nothing and only reads: a store that
 * holds pauses is asked its pause first there (its paused method), so that
 * a late claim of a paused job answers paused, as one in time does.
 *
 * Memory.  A store that forgets a claim before a late claim of the same slot
 * stops coming would let the slot be won twice: an_wonlost_memory_ok refuses
 * such a configuration, allowing for the clock skew between instances.
 */
#ifndef ANARCHON_WONLOST_H
#define ANARCHON_WONLOST_H

#include "store.h"

/* What an append-once store answered to an append of a claim. */
typedef enum an_append_result
{
	AN_APPEND_STORED,            /* the claim is stored: the slot is this token's */
	AN_APPEND_TAKEN,             /* the slot's key already holds a claim */
	AN_APPEND_REFUSED,           /* the store refused the slot and holds no claim of it */
	AN_APPEND_PAUSED             /* the job is paused: nothing appended (core/pause.h) */
} an_append_result;

/* The two steps a won/lost store provides, and how it judges lateness. */
typedef struct an_wonlost_ops
{
	/* Nonzero: lateness is judged on the host's clock, before the append. */
	int			late_on_host;

	/*
	 * Append the claim (rq->job, rq->slot, rq->token) under the slot's key.
	 * On AN_APPEND_TAKEN, copy the stored claim's token into winner
	 * (AN_TOKEN_MAX + 1 bytes), or leave it "" when the stored claim could not
	 * be read: a claim that cannot be read is not ours.
	 */
	int			(*append) (an_store *st, const an_request *rq, an_append_result *result,
						   char *winner);

	/* Read the stored claim of (job, slot): its token into winner, *found = 0 when none. */
	int			(*find) (an_store *st, const an_request *rq, char *winner, int *found);

	/* Optional: told every decided claim (NATS remembers its session's claims). */
	void		(*decided) (an_store *st, const an_request *rq, const an_claim_result *res);
} an_wonlost_ops;

/* Run one claim through ops. */
int			an_wonlost_claim(an_store *st, const an_wonlost_ops *ops,
							 const an_request *rq, an_claim_result *res);

/*
 * The rest of a run on a won/lost store.  There is no lease: the winner is
 * whoever's token the stored claim holds, for as long as the store keeps it,
 * and a finish status is recorded once, next to the claim.
 *
 *   heartbeat  the stored claim is ours and no status is recorded → true
 *              anything else (another's, none, finished)          → false
 *   finish     the stored claim is not ours (or none)             → false
 *              the status is recorded by this call                → true
 *              a status was recorded before: the same one         → true
 *                                                 (our finish sent again)
 *                                    another one                  → false
 *   check      no stored claim                                    → none
 *              a status recorded                                  → it, attempt 1
 *              else                                               → running, attempt 1
 *
 * A store supplies three reads and writes; find is the claim's read-back.
 */
typedef struct an_wonlost_run_ops
{
	/* As an_wonlost_ops.find: the stored claim's token, *found = 0 when none. */
	int			(*find) (an_store *st, const an_request *rq, char *winner, int *found);

	/* The status recorded for the run: AN_RUN_RUNNING when none. */
	int			(*status) (an_store *st, const an_request *rq, an_run_state *state);

	/*
	 * Record status for the run unless one is recorded already: *recorded =
	 * 1 when this call stored it, 0 when another was there first (whatever
	 * it says).  Must not store a second status for a run, ever.
	 */
	int			(*record) (an_store *st, const an_request *rq, an_run_state status, int *recorded);
} an_wonlost_run_ops;

int			an_wonlost_heartbeat(an_store *st, const an_wonlost_run_ops *ops,
								 const an_request *rq, int *owned);
int			an_wonlost_finish(an_store *st, const an_wonlost_run_ops *ops,
							  const an_request *rq, an_run_state status, int *owned);
int			an_wonlost_check(an_store *st, const an_wonlost_run_ops *ops,
							 const an_request *rq, an_check_result *res);

/* Nonzero when, by the host's clock, the claim comes more than max_late_ms after its slot. */
int			an_wonlost_late(const an_store *st, const an_request *rq);

/*
 * AN_OK when memory_ms (how long the store remembers a claim, on the server's
 * clock) covers max_late_ms plus twice skew_ms; else AN_E_CONFIG naming
 * `what`, with a hint naming the parameter `param` to raise.
 *
 * Why twice: lateness is judged on each instance's own clock.  An instance
 * whose clock is skew_ms ahead can win a slot skew_ms before it comes, and
 * one whose clock is skew_ms behind still thinks the slot is not late
 * max_late_ms + skew_ms after it; the store must remember the win for the
 * whole of that span.  skew_ms is 0 for a store that judges lateness on the
 * server's own clock.
 */
int			an_wonlost_memory_ok(an_store *st, const char *what, const char *param,
								 int64_t memory_ms, int64_t skew_ms, const an_settings *s);

/*
 * AN_OK unless s asks for overlap 'replace', which a won/lost store cannot
 * honour: it keeps who won each slot, not a running run that a later win
 * could end, so an earlier run could neither be stopped nor fenced.  Else
 * AN_E_UNSUPPORTED naming `store` ("the nats store", "redis strategy
 * stream-id"), with a hint.  Every won/lost store's validate calls it.
 */
int			an_wonlost_refuse_replace(an_store *st, const char *store, const an_settings *s);

#endif							/* ANARCHON_WONLOST_H */
