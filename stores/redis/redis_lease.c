/*
 * redis_lease.c — strategy lease: the lease stores' claim table, decided by a Lua script.
 *
 * Each operation is one script call (redis_scripts.c); this file only packs
 * the arguments and reads the answers.  The claim's script also reads the
 * job's pause (redis_pause.c) and keeps the job to this strategy
 * (redis_mark.c).  The run is a hash with its own
 * expiry, the overlap test reads one member of the job's live set, and every
 * won attempt is appended to the job's history stream.
 */
#include <string.h>

#include "redis.h"

/*
 * KEYS of every lease script: the run, the job's live set, its history; and,
 * for the claim, the job's strategy marker (redis_mark.c), its memory, its
 * kept set (how long its runs are kept: redis_scripts.c) and its pause
 * (redis_pause.c).
 */
static void
lease_keys(rds_cmd *c, rds_store *rs, const an_request *rq, int claim)
{
	rds_eval_init(c, claim ? 7 : 3);
	rds_cmd_slot_key(c, rs, rq->job, "run", rq->slot);
	rds_cmd_key(c, rs, rq->job, "live");
	rds_cmd_key(c, rs, rq->job, "history");
	if (claim)
	{
		rds_cmd_key(c, rs, rq->job, "strategy");
		rds_cmd_key(c, rs, rq->job, "memory");
		rds_cmd_key(c, rs, rq->job, "kept");
		rds_cmd_key(c, rs, rq->job, "paused");
	}
	rds_cmd_addf(c, "%lld", (long long) rq->slot);
}

/*
 * The slot's run was written by a 0.1.0 host, which keeps a run on its own
 * settings only, and it is forgotten at expiry_ms, before this host's late
 * claims of the slot stop: a claim then would find no run and win the slot a
 * second time.  Refused until the older hosts are gone (their runs expire).
 */
static int
old_run_refused(an_store *st, rds_store *rs, const an_request *rq, int64_t expiry_ms)
{
	an_store_fail(st, AN_E_CONFIG,
				  "redis store %s: job %s has a run written by anarchon 0.1.0, kept shorter than this host's max_late_ms",
				  rs->conn.where, rq->job);
	an_store_detailf(st, "The run of slot %lld is forgotten at %lld, and this host may claim the slot until %lld: 0.1.0 keeps a run on its winner's settings alone, 0.2.0 on the longest any host asked for.",
					 (long long) rq->slot, (long long) expiry_ms,
					 (long long) (rq->slot + rq->settings->max_late_ms));
	return an_store_hintf(st, "Upgrade every host that claims on prefix %s to 0.2.0, or give the 0.1.0 hosts the same max_late_ms, lease_ms and attempts as this one; the refusals end when the 0.1.0 hosts' runs have expired.",
						  rs->prefix);
}

int
rds_lease_claim(an_store *st, rds_store *rs, const an_request *rq, an_claim_result *res, int pause)
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
	rds_cmd_add(&c, pause ? "1" : "0");
	if ((rc = rds_eval(st, rs, &rds_lua_lease_claim, &c, &r)) != AN_OK)
		return rc;
	if (rds_is_marked(r))
	{
		rc = rds_mark_refused(st, rs, rq, r);
		freeReplyObject(r);
		return rc;
	}
	if (rds_pause_answer(st, rs, rq, r, AN_PAUSED) < 0)
	{
		freeReplyObject(r);
		return st->err.code;
	}
	for (int i = 0; i < 3 && rc == AN_OK; i++)
		rc = rds_array_int(st, rs, r, (size_t) i, &v[i], "the lease claim");
	freeReplyObject(r);
	if (rc != AN_OK)
		return rc;
	if (v[0] == RDS_OLD_RUN)
		return old_run_refused(st, rs, rq, v[1]);
	if ((v[0] < AN_WON || v[0] > AN_OVERLAP) && v[0] != AN_PAUSED)
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

/* The strategy's claim: the job's pause holds it. */
static int
lease_claim(an_store *st, rds_store *rs, const an_request *rq, an_claim_result *res)
{
	return rds_lease_claim(st, rs, rq, res, 1);
}

/* A run is kept until no claim can ask about it: no limit to refuse. */
static int64_t
lease_memory(const rds_store *rs)
{
	(void) rs;
	return -1;
}

const rds_strategy rds_strategy_lease = {
	"lease", lease_claim, lease_heartbeat, lease_finish, lease_check, lease_memory, NULL, NULL, NULL
};
