/*
 * redis_missed.c — the Redis store's recall method (core/store.h), for
 * anarchon_missed: which slots of a job have a run.
 *
 * Only strategy lease keeps one key per run (<prefix>:{<job>}:run:<slot>,
 * redis.h), so only it can be asked "was this slot run?": one EXISTS per
 * slot, pipelined.  A run key lives until max(slot, lease end) + keep_ms
 * (keep_ms = max_late_ms + lease_ms * attempts, redis_scripts.c), so a slot
 * older than keep_ms may have had a run that Redis has since forgotten; such
 * a slot is refused, with how far back the store can answer, rather than
 * reported missed.  The age is judged on the host's clock, as lateness is
 * where a store has none of its own; the run keys expire on Redis's clock,
 * so the two clocks should agree to well within lease_ms * attempts.
 */
#include <stdlib.h>

#include "redis.h"

/* Slots asked about per round trip. */
#define BATCH 64

/* EXISTS for slots[0..n) (n <= BATCH) into has_run; one pipelined round trip. */
static int
exists_batch(an_store *st, rds_store *rs, const char *job, const int64_t *slots, size_t n,
			 unsigned char *has_run, rds_cmd *cmds)
{
	int			argc[BATCH];
	const char **argv[BATCH];
	const size_t *lens[BATCH];
	redisReply *replies[BATCH];
	int			rc;

	for (size_t i = 0; i < n; i++)
	{
		rds_cmd_init(&cmds[i]);
		rds_cmd_add(&cmds[i], "EXISTS");
		rds_cmd_slot_key(&cmds[i], rs, job, "run", slots[i]);
		argc[i] = cmds[i].argc;
		argv[i] = cmds[i].argv;
		lens[i] = cmds[i].len;
	}
	an_deadline_start(&rs->deadline, rs->conn.timeout_ms);
	if ((rc = rds_conn_pipeline(st, &rs->conn, &rs->deadline, (int) n, argc,
								(const char **const *) argv, (const size_t *const *) lens,
								replies)) != AN_OK)
		return rc;
	for (size_t i = 0; i < n; i++)
	{
		if (rc == AN_OK && replies[i]->type != REDIS_REPLY_INTEGER)
			rc = rds_reply_fail(st, rs, replies[i], "EXISTS of a run");
		else if (rc == AN_OK)
			has_run[i] = replies[i]->integer > 0;
		freeReplyObject(replies[i]);
	}
	return rc;
}

int
rds_recall(an_store *st, const an_request *rq, const int64_t *slots, size_t n,
		   unsigned char *has_run)
{
	rds_store  *rs = st->impl;
	int64_t		keep,
				oldest;
	rds_cmd    *cmds;
	int			rc = AN_OK;

	an_store_clear(st);
	if (rs == NULL)
		return an_store_fail(st, AN_E_STATE, "the redis store is not open");
	if (rs->strategy != &rds_strategy_lease)
	{
		an_store_fail(st, AN_E_UNSUPPORTED,
					  "redis strategy %s cannot tell which slots were missed: it keeps claims in a stream, not a run per slot that can be looked up",
					  rs->strategy->name);
		return an_store_hintf(st, "Use strategy=lease, whose runs anarchon_missed can read, or the local store.");
	}
	if (n == 0)
		return AN_OK;
	/* A job another strategy decides has no lease runs here: every slot would look missed. */
	an_deadline_start(&rs->deadline, rs->conn.timeout_ms);
	if ((rc = rds_mark_job(st, rs, rq, 0, NULL)) != AN_OK)
		return rc;
	keep = an_settings_retention_ms(rq->settings);
	oldest = an_store_host_now(st) - keep;
	if (slots[0] < oldest)
	{
		an_store_fail(st, AN_E_UNSUPPORTED,
					  "redis store %s keeps a run only max_late_ms + lease_ms * attempts = %lld ms after its slot, and slot %lld is older: a run of it may have been forgotten",
					  rs->conn.where, (long long) keep, (long long) slots[0]);
		return an_store_hintf(st, "Ask about slots from %lld on (the last %lld ms), or keep runs longer with a larger %s or %s.",
							  (long long) oldest, (long long) keep, an_store_setting(st, "lease_ms"),
							  an_store_setting(st, "attempts"));
	}
	if ((cmds = malloc(BATCH * sizeof(*cmds))) == NULL)
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	for (size_t i = 0; i < n && rc == AN_OK; i += BATCH)
	{
		size_t		m = n - i < BATCH ? n - i : BATCH;
		int			tries = 0;

		/* A connection that dropped is opened again, once, as the other calls do. */
		while ((rc = exists_batch(st, rs, rq->job, slots + i, m, has_run + i, cmds)) == AN_E_CONNECT &&
			   rs->conn.dropped && tries++ == 0)
			an_store_clear(st);
	}
	free(cmds);
	return rc;
}
