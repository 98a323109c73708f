/*
 * redis_lease.c — strategy lease: the lease stores' claim table, decided by a Lua script.
 *
 * Each operation is one script call (redis_scripts.c); this file only packs
 * the arguments and reads the answers.  The claim's script also keeps the
 * job to this strategy (redis_mark.c).  The run is a hash with its own
 * expiry, the overlap test reads one member of the job's live set, and every
 * won attempt is appended to the job's history stream.
 */
#include <string.h>

#include "redis.h"

/*
 * KEYS of every lease script: the run, the job's live set, its history; and,
 * for the claim, the job's strategy marker (redis_mark.c).
 */
static void
lease_keys(rds_cmd *c, rds_store *rs, const an_request *rq, int marker)
{
	rds_eval_init(c, marker ? 4 : 3);
	rds_cmd_slot_key(c, rs, rq->job, "run", rq->slot);
	rds_cmd_key(c, rs, rq->job, "live");
	rds_cmd_key(c, rs, rq->job, "history");
	if (marker)
		rds_cmd_key(c, rs, rq->job, "strategy");
	rds_cmd_addf(c, "%lld", (long long) rq->slot);
}

static int
lease_claim(an_store *st, rds_store *rs, const an_request *rq, an_claim_result *res)
{
	const an_settings *s = rq->settings;
	rds_cmd		c;
	redisReply *r = NULL;
	int64_t		v[3];
	int			rc;

	lease_keys(&c, rs, rq, 1);
	rds_cmd_add(&c, rq->token);
	rds_cmd_addf(&c, "%lld", (long long) s->lease_ms);
	rds_cmd_addf(&c, "%lld", (long long) s->max_late_ms);
	rds_cmd_addf(&c, "%d", (int) s->attempts);
	rds_cmd_add(&c, s->overlap_replace ? "2" : s->overlap_skip ? "1" : "0");
	rds_cmd_addf(&c, "%lld", (long long) an_settings_retention_ms(s));
	rds_cmd_mark_args(&c, rs, s);
	if ((rc = rds_eval(st, rs, &rds_lua_lease_claim, &c, &r)) != AN_OK)
		return rc;
	if (rds_is_marked(r))
	{
		rc = rds_mark_refused(st, rs, rq, r);
		freeReplyObject(r);
		return rc;
	}
	for (int i = 0; i < 3 && rc == AN_OK; i++)
		rc = rds_array_int(st, rs, r, (size_t) i, &v[i], "the lease claim");
	freeReplyObject(r);
	if (rc != AN_OK)
		return rc;
	if (v[0] < AN_WON || v[0] > AN_OVERLAP)
		return an_store_fail(st, AN_E_STORE, "redis store %s: the lease claim answered an unknown outcome %lld",
							 rs->conn.where, (long long) v[0]);
	res->outcome = (an_outcome) v[0];
	res->attempt = (int32_t) v[1];
	res->lease_until = v[2];
	return AN_OK;
}

static int
lease_heartbeat(an_store *st, rds_store *rs, const an_request *rq, int *owned)
{
	rds_cmd		c;
	redisReply *r = NULL;
	int64_t		v = 0;
	int			rc;

	lease_keys(&c, rs, rq, 0);
	rds_cmd_add(&c, rq->token);
	rds_cmd_addf(&c, "%lld", (long long) rq->settings->lease_ms);
	rds_cmd_addf(&c, "%lld", (long long) an_settings_retention_ms(rq->settings));
	if ((rc = rds_eval(st, rs, &rds_lua_lease_heartbeat, &c, &r)) != AN_OK)
		return rc;
	rc = rds_array_int(st, rs, r, 0, &v, "the lease heartbeat");
	freeReplyObject(r);
	*owned = v == 1;
	return rc;
}

static int
lease_finish(an_store *st, rds_store *rs, const an_request *rq, an_run_state status,
			 int *owned)
{
	rds_cmd		c;
	redisReply *r = NULL;
	int			rc;

	lease_keys(&c, rs, rq, 0);
	rds_cmd_add(&c, rq->token);
	rds_cmd_add(&c, an_run_state_name(status));
	rds_cmd_addf(&c, "%lld", (long long) an_settings_retention_ms(rq->settings));
	if ((rc = rds_eval(st, rs, &rds_lua_lease_finish, &c, &r)) != AN_OK)
		return rc;
	if (r->type != REDIS_REPLY_INTEGER)
		rc = an_store_fail(st, AN_E_STORE, "redis store %s gave an unexpected answer to the lease finish",
						   rs->conn.where);
	else
		*owned = r->integer == 1;
	freeReplyObject(r);
	return rc;
}

static int
lease_check(an_store *st, rds_store *rs, const an_request *rq, an_check_result *res)
{
	rds_cmd		c;
	redisReply *r = NULL;
	int64_t		v[3];
	int			rc;

	rds_eval_init(&c, 1);
	rds_cmd_slot_key(&c, rs, rq->job, "run", rq->slot);
	if ((rc = rds_eval(st, rs, &rds_lua_lease_check, &c, &r)) != AN_OK)
		return rc;
	for (int i = 0; i < 3 && rc == AN_OK; i++)
		rc = rds_array_int(st, rs, r, (size_t) i, &v[i], "the lease check");
	freeReplyObject(r);
	if (rc != AN_OK)
		return rc;
	if (v[0] < AN_CHECK_NONE || v[0] > AN_CHECK_REPLACED)
		return an_store_fail(st, AN_E_STORE, "redis store %s: the lease check answered an unknown state %lld",
							 rs->conn.where, (long long) v[0]);
	res->state = (an_check_state) v[0];
	res->attempt = (int32_t) v[1];
	res->lease_until = v[2];
	return AN_OK;
}

/* A run is kept until no claim can ask about it: no limit to refuse. */
static int64_t
lease_memory(const rds_store *rs)
{
	(void) rs;
	return -1;
}

const rds_strategy rds_strategy_lease = {
	"lease", lease_claim, lease_heartbeat, lease_finish, lease_check, lease_memory, NULL, NULL
};
