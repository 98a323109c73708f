/*
 * redis_run_now.c — run now on Redis's lease strategy (core/run_now.h).
 *
 * The job's current manual request is one key, "<prefix>:{<job>}:now",
 * holding its slot.  A script reads it and, when it is older than
 * max_late_ms (or absent), writes a new one at Redis's clock: callers within
 * the window all read the same slot.  Then the slot is claimed by the
 * ordinary lease claim, whose table gives the run to one of them.  The two
 * calls need not be one: the request only names the slot, and every caller
 * claims that same slot, so a caller that stops between them takes nothing
 * from the others.  The won/lost strategies keep no lease a manual slot could
 * be claimed under without upsetting their order (stream-id's slots must
 * rise), so they refuse it.
 */
#include "redis.h"
#include "run_now.h"

/*
 * KEYS[1] the request; ARGV[1] max_late_ms, ARGV[2] AN_MANUAL_OFFSET_MS.
 * Returns the request's slot.  The key outlives its window by a second so
 * that a caller at the window's end still reads it.
 */
const rds_script rds_lua_run_now = {RDS_SCRIPT_RUN_NOW, "the run-now request script",
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
	"local max_late = tonumber(ARGV[1])\n"
	"local cur = redis.call('GET', KEYS[1])\n"
	"cur = cur and tonumber(cur)\n"
	"if cur and now - cur <= max_late then return cur end\n"
	"local slot = now - now % 1000 + tonumber(ARGV[2])\n"
	"redis.call('SET', KEYS[1], string.format('%d', slot), 'PX', max_late + 1000)\n"
	"return slot\n"
};

int
rds_run_now(an_store *st, rds_store *rs, const an_request *rq, an_claim_result *res,
			int64_t *slot)
{
	an_request	manual = *rq;
	rds_cmd		c;
	redisReply *r = NULL;
	int			rc;

	/* Another strategy gave run-now up when the store opened (redis_open). */
	rds_eval_init(&c, 1);
	rds_cmd_key(&c, rs, rq->job, "now");
	rds_cmd_addf(&c, "%lld", (long long) rq->settings->max_late_ms);
	rds_cmd_addf(&c, "%d", AN_MANUAL_OFFSET_MS);
	if ((rc = rds_eval(st, rs, &rds_lua_run_now, &c, &r)) != AN_OK)
		return rc;
	if (r->type != REDIS_REPLY_INTEGER || !an_slot_is_manual(r->integer))
		rc = an_store_fail(st, AN_E_STORE, "redis store %s gave an unexpected answer to the run-now request",
						   rs->conn.where);
	else
		manual.slot = *slot = r->integer;
	freeReplyObject(r);
	if (rc != AN_OK)
		return rc;
	/* A run-now is not held by a pause (doc/operating.md): the claim does not read it. */
	return rds_lease_claim(st, rs, &manual, res, 0);
}
