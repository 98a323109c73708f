/*
 * redis_mark.c — one prefix, one strategy: the job's strategy marker.
 *
 * The strategies keep a job's claims in different keys (lease: a hash per
 * run; stream-id, idmp and script: the job's stream, each reading it its own
 * way), so two strategies on one prefix would each decide the same slot, and
 * each could answer won.  A rolling change of strategy across a fleet is
 * exactly when two run side by side.  So every claim goes through the marker
 * <prefix>:{<job>}:strategy (under the job's hash tag: a Redis Cluster keeps
 * it with the job's other keys, and scripts may touch it), which holds what
 * decides the job, in the store URL's words:
 *
 *   strategy=lease, strategy=stream-id,
 *   strategy=script&window_ms=N    a shorter window trims claims a longer one counts on
 *   strategy=idmp&duration_sec=N   the stream's IDMP-DURATION is its creator's
 *
 * - A claim that finds another value is refused (AN_E_CONFIG) before it
 *   decides anything, naming both and saying how to migrate.
 * - A win sets the marker, or moves its expiry on, to max(now, slot) + keep,
 *   never nearer; keep = max_late_ms + lease_ms * attempts + max_skew_ms +
 *   timeout_ms.  Until then another strategy could still claim a slot this
 *   one decided (not yet late, on a clock up to max_skew_ms behind; a
 *   takeover within lease_ms * attempts; a call of up to timeout_ms under
 *   way), and win it again.  After it, every such slot is late everywhere,
 *   and a store of another strategy takes over by itself: a rolling change
 *   needs no key to be deleted.  Claims that lose write nothing.
 * - lease, script and stream-id read and set the marker inside the claim's
 *   own script (redis_scripts.c): atomic with the decision, in the same
 *   round trip.  idmp's decision is XADD ... IDMP itself, so it marks the job
 *   in a script of its own just before (rds_mark_job), which reads the job's
 *   pause first, as the claim scripts do: a strategy that comes
 *   after finds the marker, one that came before refuses it, and the marker
 *   outlives the XADD that follows within timeout_ms.
 *
 * A marker set by hand without an expiry pins a job to a strategy.  A new
 * prefix (or database, or server) is another place altogether, which is why
 * it is no quicker a migration: it is safe only after the same wait, once
 * nothing claims on the old one.
 */
#include <stdio.h>
#include <string.h>

#include "redis.h"

void
rds_mark_init(rds_store *rs)
{
	if (rs->strategy->mark_value != NULL)
		snprintf(rs->mark, sizeof(rs->mark), "strategy=%s&%s=%lld", rs->strategy->name,
				 rs->strategy->memory_param, rs->strategy->mark_value(rs));
	else
		snprintf(rs->mark, sizeof(rs->mark), "strategy=%s", rs->strategy->name);
}

/* How long past max(now, slot) a win keeps the marker (every term is capped, no overflow). */
static int64_t
mark_keep(const rds_store *rs, const an_settings *s)
{
	return an_settings_retention_ms(s) + rs->skew_ms + rs->conn.timeout_ms;
}

void
rds_cmd_mark_args(rds_cmd *c, rds_store *rs, const an_settings *s)
{
	rds_cmd_add(c, rs->mark);
	rds_cmd_addf(c, "%lld", (long long) mark_keep(rs, s));
}

int
rds_is_marked(const redisReply *r)
{
	return r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
		r->element[0]->type == REDIS_REPLY_INTEGER && r->element[0]->integer == RDS_MARKED;
}

int
rds_mark_refused(an_store *st, rds_store *rs, const an_request *rq, const redisReply *r)
{
	const redisReply *v = r->element[1];
	const redisReply *ttl = r->element[2];

	if (v->type != REDIS_REPLY_STRING || ttl->type != REDIS_REPLY_INTEGER)
		return an_store_fail(st, AN_E_STORE, "redis store %s gave an unexpected answer about the job's strategy marker",
							 rs->conn.where);
	an_store_fail(st, AN_E_CONFIG,
				  "redis store %s: job %s on prefix %s is decided with %.80s, and this store would decide it with %s: two strategies on one prefix would each let a slot be won",
				  rs->conn.where, rq->job, rs->prefix, v->str, rs->mark);
	if (ttl->integer < 0)
		return an_store_hintf(st, "The job's marker %s:{%s}:strategy has no expiry: it was set by hand to pin the job to %.80s.  Use that, or delete the marker once no instance uses it.",
							  rs->prefix, rq->job, v->str);
	return an_store_hintf(st, "Stop every instance that uses %.80s on prefix %s; this store takes over by itself when the job's marker %s:{%s}:strategy expires: in %lld ms if none of their claims wins meanwhile (a win keeps it max_late_ms + lease_ms * attempts + max_skew_ms + timeout_ms past its slot).  A new prefix= is no shortcut: it is safe only after the same wait, once nothing claims on this one.",
						  v->str, rs->prefix, rs->prefix, rq->job, (long long) ttl->integer);
}

int
rds_mark_job(an_store *st, rds_store *rs, const an_request *rq, int set, int *paused)
{
	rds_cmd		c;
	redisReply *r = NULL;
	int			rc;
	int			pause = 0;

	rds_eval_init(&c, paused ? 2 : 1);
	rds_cmd_key(&c, rs, rq->job, "strategy");
	if (paused)
		rds_cmd_key(&c, rs, rq->job, "paused");
	rds_cmd_mark_args(&c, rs, rq->settings);
	rds_cmd_addf(&c, "%lld", (long long) rq->slot);
	rds_cmd_add(&c, set ? "1" : "0");
	if ((rc = rds_eval(st, rs, &rds_lua_mark, &c, &r)) != AN_OK)
		return rc;
	if (rds_is_marked(r))
		rc = rds_mark_refused(st, rs, rq, r);
	else if (paused && (pause = rds_pause_answer(st, rs, rq, r, SCAN_PAUSED)) != 0)
		rc = pause < 0 ? st->err.code : AN_OK;
	else if (r->type != REDIS_REPLY_ARRAY || r->elements != 1)
		rc = an_store_fail(st, AN_E_STORE, "redis store %s gave an unexpected answer to %s",
						   rs->conn.where, rds_lua_mark.name);
	freeReplyObject(r);
	if (paused)
		*paused = pause > 0;
	return rc;
}
