/*
 * redis_stream.c — strategies stream-id, idmp and script: a claim is an entry
 * (slot, S, token, T) in the job's stream <prefix>:{<job>}:runs.
 *
 *   stream-id  XADD with id <slot>-0 (slot 0: 0-1, as 0-0 is not a valid id),
 *              inside a small script; Redis refuses an id not above the
 *              stream's top.
 *   idmp       XADD ... IDMP <job> <slot> * (Redis 8.6): Redis answers a
 *              repeat with the first entry's id.
 *   script     a Lua scan of the last window_ms of the stream for the slot,
 *              else an append (redis_scripts.c).
 * After the store answers, the winner is whoever's token the entry holds: a
 * claim sent again after its reply was lost finds its own token and wins.
 * The decision itself is core/wonlost.c's; this file appends and reads back.
 * Every append first reads the job's pause (redis_pause.c) and keeps the
 * job to this strategy (redis_mark.c): inside the script for stream-id and
 * script, in a call just before for idmp.
 *
 * These strategies have no lease.  heartbeat answers true while the token is
 * the recorded winner and the run is not finished, and changes nothing;
 * finish records the status once, in <prefix>:{<job>}:finished:<slot>, kept as
 * long as the strategy remembers claims; check answers none, running (claimed,
 * not finished: never expired, there is no lease), succeeded or failed.
 *
 * stream-id and idmp judge a first claim's lateness by the host database's
 * clock (an_store_host_now), before anything is sent; script judges it by
 * TIME, inside its scan.
 */
#include <stdio.h>
#include <string.h>

#include "redis.h"
#include "wonlost.h"

/* The token of an XRANGE entry [id, [slot, S, token, T]], or NULL. */
static const char *
entry_token(const redisReply *e)
{
	const redisReply *f;

	if (e->type != REDIS_REPLY_ARRAY || e->elements != 2)
		return NULL;
	f = e->element[1];
	if (f->type != REDIS_REPLY_ARRAY || f->elements < 4 ||
		f->element[2]->type != REDIS_REPLY_STRING || strcmp(f->element[2]->str, "token") != 0 ||
		f->element[3]->type != REDIS_REPLY_STRING)
		return NULL;
	return f->element[3]->str;
}

/* Copy the token of the first entry of an XRANGE answer; *found = 0 when empty. */
static int
range_token(an_store *st, rds_store *rs, const redisReply *r, char *token, int *found)
{
	const char *t;

	*found = 0;
	if (r->type != REDIS_REPLY_ARRAY)
		return an_store_fail(st, AN_E_STORE, "redis store %s gave an unexpected answer to XRANGE",
							 rs->conn.where);
	if (r->elements == 0)
		return AN_OK;
	if ((t = entry_token(r->element[0])) == NULL || strlen(t) > AN_TOKEN_MAX)
		return an_store_fail(st, AN_E_STORE,
							 "redis store %s holds an entry anarchon did not write in the job's runs stream",
							 rs->conn.where);
	strcpy(token, t);
	*found = 1;
	return AN_OK;
}

/* XRANGE key from to COUNT 1, and the token of what it finds. */
static int
xrange_token(an_store *st, rds_store *rs, const an_request *rq, const char *from,
			 const char *to, char *token, int *found)
{
	rds_cmd		c;
	redisReply *r = NULL;
	int			rc;

	rds_cmd_init(&c);
	rds_cmd_add(&c, "XRANGE");
	rds_cmd_key(&c, rs, rq->job, "runs");
	rds_cmd_add(&c, from);
	rds_cmd_add(&c, to);
	rds_cmd_add(&c, "COUNT");
	rds_cmd_add(&c, "1");
	if ((rc = rds_call(st, rs, &c, &r)) != AN_OK)
		return rc;
	rc = range_token(st, rs, r, token, found);
	freeReplyObject(r);
	return rc;
}

/*
 * A scan-coded answer ({SCAN_*[, token]}, the marker's refusal, or an
 * unreadable pause) of script, freed here; *code is SCAN_*.
 */
static int
scan_answer(an_store *st, rds_store *rs, const an_request *rq, const rds_script *script,
			redisReply *r, int *code, char *token)
{
	int64_t		v = 0;
	int			rc;

	if (rds_is_marked(r))
		rc = rds_mark_refused(st, rs, rq, r);
	else if (rds_pause_answer(st, rs, rq, r, SCAN_PAUSED) < 0)
		rc = st->err.code;
	else if ((rc = rds_array_int(st, rs, r, 0, &v, script->name)) == AN_OK)
	{
		*code = (int) v;
		if (v == SCAN_FOUND)
		{
			if (r->elements < 2 || r->element[1]->type != REDIS_REPLY_STRING ||
				r->element[1]->len > AN_TOKEN_MAX)
				rc = an_store_fail(st, AN_E_STORE, "redis store %s gave an unexpected answer to %s",
								   rs->conn.where, script->name);
			else
				strcpy(token, r->element[1]->str);
		}
	}
	freeReplyObject(r);
	return rc;
}

/*
 * The scan script, in mode 'find' or 'claim'; *code is SCAN_*.  A claim
 * also reads the job's pause (redis_pause.c) and reads and sets its
 * strategy marker (redis_mark.c); a find touches the stream only, so that
 * a cluster in the middle of a migration answers it like any one-key
 * command.
 */
static int
scan(an_store *st, rds_store *rs, const an_request *rq, const char *mode,
	 int64_t window_ms, int *code, char *token)
{
	int			claim = strcmp(mode, "claim") == 0;
	rds_cmd		c;
	redisReply *r = NULL;
	int			rc;

	rds_eval_init(&c, claim ? 3 : 1);
	rds_cmd_key(&c, rs, rq->job, "runs");
	if (claim)
	{
		rds_cmd_key(&c, rs, rq->job, "strategy");
		rds_cmd_key(&c, rs, rq->job, "paused");
	}
	rds_cmd_addf(&c, "%lld", (long long) rq->slot);
	rds_cmd_add(&c, rq->token ? rq->token : "");
	rds_cmd_addf(&c, "%lld", (long long) window_ms);
	rds_cmd_addf(&c, "%lld", (long long) rq->settings->max_late_ms);
	rds_cmd_add(&c, mode);
	rds_cmd_mark_args(&c, rs, rq->settings);
	if ((rc = rds_eval(st, rs, &rds_lua_scan, &c, &r)) != AN_OK)
		return rc;
	return scan_answer(st, rs, rq, &rds_lua_scan, r, code, token);
}

/* Who won the slot, by strategy: *found = 0 when the store knows no claim. */
static int
find_winner(an_store *st, rds_store *rs, const an_request *rq, char *token, int *found)
{
	int			code = SCAN_NONE;
	int			rc;

	if (rs->strategy == &rds_strategy_stream_id)
	{
		char		id[32];

		snprintf(id, sizeof(id), "%lld", (long long) rq->slot);
		return xrange_token(st, rs, rq, id, id, token, found);
	}
	rc = scan(st, rs, rq, "find", rs->strategy->memory_ms(rs), &code, token);
	*found = code == SCAN_FOUND;
	return rc;
}

/* The engine's read-back: the token of the slot's entry. */
static int
find_op(an_store *st, const an_request *rq, char *winner, int *found)
{
	return find_winner(st, st->impl, rq, winner, found);
}

/*
 * stream-id: XADD with the slot as the entry's id; Redis refuses an id not
 * above the top, and the slot's entry then says whose it is.  One script
 * (redis_scripts.c), so that the job's strategy marker is read and set in
 * the same step, and a loser learns the winner in the same round trip.
 */
static int
stream_id_append(an_store *st, const an_request *rq, an_append_result *result, char *winner)
{
	rds_store  *rs = st->impl;
	rds_cmd		c;
	redisReply *r = NULL;
	int			code = SCAN_NONE;
	int			rc;

	rds_eval_init(&c, 3);
	rds_cmd_key(&c, rs, rq->job, "runs");
	rds_cmd_key(&c, rs, rq->job, "strategy");
	rds_cmd_key(&c, rs, rq->job, "paused");
	rds_cmd_addf(&c, "%lld", (long long) rq->slot);
	rds_cmd_add(&c, rq->token);
	rds_cmd_addf(&c, "%lld-%d", (long long) rq->slot, rq->slot == 0 ? 1 : 0);
	rds_cmd_mark_args(&c, rs, rq->settings);
	if ((rc = rds_eval(st, rs, &rds_lua_stream_id_claim, &c, &r)) != AN_OK ||
		(rc = scan_answer(st, rs, rq, &rds_lua_stream_id_claim, r, &code, winner)) != AN_OK)
		return rc;
	switch (code)
	{
		case SCAN_APPENDED:
			*result = AN_APPEND_STORED;
			return AN_OK;
		case SCAN_FOUND:
			*result = AN_APPEND_TAKEN;
			return AN_OK;
		case SCAN_LATE:
			/* Older than the stream's newest claim, with no entry: never claimable. */
			*result = AN_APPEND_REFUSED;
			return AN_OK;
		case SCAN_PAUSED:
			*result = AN_APPEND_PAUSED;
			return AN_OK;
	}
	return an_store_fail(st, AN_E_STORE, "redis store %s: the stream-id claim script answered an unknown code %d",
						 rs->conn.where, code);
}

/* script: the scan script finds the slot's entry in the window, or appends ours. */
static int
script_append(an_store *st, const an_request *rq, an_append_result *result, char *winner)
{
	rds_store  *rs = st->impl;
	int			code = SCAN_NONE;
	int			rc;

	if ((rc = scan(st, rs, rq, "claim", rs->window_ms, &code, winner)) != AN_OK)
		return rc;
	switch (code)
	{
		case SCAN_FOUND:
			*result = AN_APPEND_TAKEN;
			return AN_OK;
		case SCAN_APPENDED:
			*result = AN_APPEND_STORED;
			return AN_OK;
		case SCAN_LATE:
			*result = AN_APPEND_REFUSED;
			return AN_OK;
		case SCAN_PAUSED:
			*result = AN_APPEND_PAUSED;
			return AN_OK;
	}
	return an_store_fail(st, AN_E_STORE, "redis store %s: the scan script answered an unknown code %d",
						 rs->conn.where, code);
}

int
rds_idmp_unsupported(an_store *st, rds_store *rs)
{
	char		which[48] = "does not accept it";

	if (rs->conn.version[0] > 0)
		snprintf(which, sizeof(which), "is Redis %d.%d", rs->conn.version[0], rs->conn.version[1]);
	an_store_fail(st, AN_E_UNSUPPORTED, "strategy idmp needs Redis 8.6 or later (XADD ... IDMP), and redis store %s %s",
				  rs->conn.where, which);
	return an_store_hintf(st, "Use strategy=script, which decides the same way with a Lua script on any Redis.");
}

/* Configure the job's stream (IDMP-DURATION) once per connection and job. */
static int
idmp_setup(an_store *st, rds_store *rs, const an_request *rq)
{
	rds_cmd		c;
	redisReply *r = NULL;
	int			rc;

	if (rs->sha_generation != rs->conn.generation)
	{
		/* A new connection may be a new server: configure again. */
		memset(rs->idmp_ready, 0, sizeof(rs->idmp_ready));
		rs->sha_generation = rs->conn.generation;
	}
	for (int i = 0; i < RDS_IDMP_CACHE; i++)
		if (strcmp(rs->idmp_ready[i], rq->job) == 0)
			return AN_OK;
	rds_eval_init(&c, 1);
	rds_cmd_key(&c, rs, rq->job, "runs");
	rds_cmd_addf(&c, "%lld", (long long) rs->duration_sec);
	rds_cmd_addf(&c, "%d", RDS_IDMP_MAXSIZE);
	if ((rc = rds_eval(st, rs, &rds_lua_idmp_setup, &c, &r)) != AN_OK)
		return rc;
	freeReplyObject(r);
	snprintf(rs->idmp_ready[rs->idmp_next], sizeof(rs->idmp_ready[0]), "%s", rq->job);
	rs->idmp_next = (rs->idmp_next + 1) % RDS_IDMP_CACHE;
	return AN_OK;
}

/* idmp: XADD ... IDMP answers the id of the slot's first entry, ours or not. */
static int
idmp_append(an_store *st, const an_request *rq, an_append_result *result, char *winner)
{
	rds_store  *rs = st->impl;
	char		id[64];
	rds_cmd		c;
	redisReply *r = NULL;
	int			found = 0;
	int			paused = 0;
	int			rc;
	int64_t		keep_from;

	if ((rc = rds_conn_ensure(st, &rs->conn, &rs->deadline)) != AN_OK)
		return rc;
	if (RDS_LACKS_IDMP(&rs->conn))
		return rds_idmp_unsupported(st, rs);
	if ((rc = idmp_setup(st, rs, rq)) != AN_OK)
		return rc;
	/*
	 * The decision is the XADD itself: the job's pause is read, and the job
	 * marked as idmp's, in one script just before (redis_mark.c).
	 */
	if ((rc = rds_mark_job(st, rs, rq, 1, &paused)) != AN_OK)
		return rc;
	if (paused)
	{
		*result = AN_APPEND_PAUSED;
		return AN_OK;
	}
	/* Trim by the host's clock, with a whole duration of margin for skew. */
	keep_from = an_store_host_now(st) - 2 * rs->duration_sec * 1000;
	rds_cmd_init(&c);
	rds_cmd_add(&c, "XADD");
	rds_cmd_key(&c, rs, rq->job, "runs");
	rds_cmd_add(&c, "IDMP");
	rds_cmd_add(&c, rq->job);
	rds_cmd_addf(&c, "%lld", (long long) rq->slot);
	rds_cmd_add(&c, "MINID");
	rds_cmd_add(&c, "~");
	rds_cmd_addf(&c, "%lld", (long long) (keep_from > 0 ? keep_from : 0));
	rds_cmd_add(&c, "*");
	rds_cmd_add(&c, "slot");
	rds_cmd_addf(&c, "%lld", (long long) rq->slot);
	rds_cmd_add(&c, "token");
	rds_cmd_add(&c, rq->token);
	if ((rc = rds_call(st, rs, &c, &r)) != AN_OK)
	{
		if (strstr(st->err.msg, "Invalid stream ID") || strstr(st->err.msg, "syntax error"))
			return rds_idmp_unsupported(st, rs);
		return rc;
	}
	if (r->type != REDIS_REPLY_STRING || r->len >= sizeof(id))
	{
		freeReplyObject(r);
		return an_store_fail(st, AN_E_STORE, "redis store %s gave an unexpected answer to XADD ... IDMP",
							 rs->conn.where);
	}
	memcpy(id, r->str, r->len + 1);
	freeReplyObject(r);
	/* The id is ours or the first claimer's: its entry says whose. */
	if ((rc = xrange_token(st, rs, rq, id, id, winner, &found)) != AN_OK)
		return rc;
	if (!found)
		return an_store_fail(st, AN_E_STORE,
							 "redis store %s: the entry XADD ... IDMP answered with is gone from the stream (trimmed or deleted)",
							 rs->conn.where);
	*result = AN_APPEND_TAKEN;
	return AN_OK;
}

/* The finish status of the slot: AN_RUN_RUNNING when none is recorded. */
static int
status_op(an_store *st, const an_request *rq, an_run_state *state)
{
	rds_store  *rs = st->impl;
	rds_cmd		c;
	redisReply *r = NULL;
	int			rc;

	rds_cmd_init(&c);
	rds_cmd_add(&c, "GET");
	rds_cmd_slot_key(&c, rs, rq->job, "finished", rq->slot);
	if ((rc = rds_call(st, rs, &c, &r)) != AN_OK)
		return rc;
	*state = r->type == REDIS_REPLY_STRING ? an_run_state_parse(r->str) : AN_RUN_RUNNING;
	if (*state == AN_RUN_NONE)
		*state = AN_RUN_RUNNING;
	freeReplyObject(r);
	return AN_OK;
}

/* The status, once: SET NX, kept as long as the strategy remembers claims. */
static int
record_op(an_store *st, const an_request *rq, an_run_state status, int *recorded)
{
	rds_store  *rs = st->impl;
	int64_t		keep = rs->strategy->memory_ms(rs);
	rds_cmd		c;
	redisReply *r = NULL;
	int			rc;

	*recorded = 0;
	rds_cmd_init(&c);
	rds_cmd_add(&c, "SET");
	rds_cmd_slot_key(&c, rs, rq->job, "finished", rq->slot);
	rds_cmd_add(&c, an_run_state_name(status));
	rds_cmd_add(&c, "NX");
	if (keep > 0)
	{
		rds_cmd_add(&c, "PX");
		rds_cmd_addf(&c, "%lld", (long long) keep);
	}
	if ((rc = rds_call(st, rs, &c, &r)) != AN_OK)
		return rc;
	*recorded = r->type == REDIS_REPLY_STATUS;
	freeReplyObject(r);
	return AN_OK;
}

static const an_wonlost_run_ops run_ops = {find_op, status_op, record_op};

/* Heartbeat, finish and check of all three: core/wonlost.c's tables. */
static int
stream_heartbeat(an_store *st, rds_store *rs, const an_request *rq, int *owned)
{
	(void) rs;
	return an_wonlost_heartbeat(st, &run_ops, rq, owned);
}

static int
stream_finish(an_store *st, rds_store *rs, const an_request *rq, an_run_state status,
			  int *owned)
{
	(void) rs;
	return an_wonlost_finish(st, &run_ops, rq, status, owned);
}

static int
stream_check(an_store *st, rds_store *rs, const an_request *rq, an_check_result *res)
{
	(void) rs;
	return an_wonlost_check(st, &run_ops, rq, res);
}

static int64_t
forever(const rds_store *rs)
{
	(void) rs;
	return -1;
}

static int64_t
window(const rds_store *rs)
{
	return rs->window_ms;
}

static int64_t
duration(const rds_store *rs)
{
	return rs->duration_sec * 1000;
}

static const an_wonlost_ops stream_id_ops = {1, stream_id_append, find_op, NULL};
static const an_wonlost_ops idmp_ops = {1, idmp_append, find_op, NULL};
static const an_wonlost_ops script_ops = {0, script_append, find_op, NULL};

/* The claim of all three: core/wonlost.c's table over the strategy's append. */
static int
wonlost_claim(an_store *st, rds_store *rs, const an_request *rq, an_claim_result *res)
{
	return an_wonlost_claim(st, rs->strategy->wonlost, rq, res);
}

static long long
mark_duration(const rds_store *rs)
{
	return (long long) rs->duration_sec;
}

static long long
mark_window(const rds_store *rs)
{
	return (long long) rs->window_ms;
}

const rds_strategy rds_strategy_stream_id = {
	"stream-id", wonlost_claim, stream_heartbeat, stream_finish, stream_check, forever, NULL, &stream_id_ops, NULL
};
const rds_strategy rds_strategy_idmp = {
	"idmp", wonlost_claim, stream_heartbeat, stream_finish, stream_check, duration, "duration_sec", &idmp_ops,
	mark_duration
};
const rds_strategy rds_strategy_script = {
	"script", wonlost_claim, stream_heartbeat, stream_finish, stream_check, window, "window_ms", &script_ops,
	mark_window
};
