/*
 * redis_pause.c — the Redis store's pause methods (core/store.h, version 5),
 * for every strategy: a pause is about the job, not about how its claims
 * are decided.
 *
 * Keys, with the job's hash tag like the others (redis.h), so a Redis
 * Cluster keeps them on the job's node:
 *
 *   <prefix>:{<job>}:paused   "<since>:<until>" while the job is paused;
 *                             with `until`, it expires at until (PXAT), so
 *                             the pause ends by itself on Redis's clock
 *   <prefix>:{<job>}:pauses   every pause, past and current, for
 *                             anarchon_missed: a sorted set, score since,
 *                             member "<since>:<until>" (until 0 while it
 *                             lasts until resumed)
 *
 * Pause and resume are one script each, so the two keys never disagree;
 * they are sent with EVAL and their source (no cached SHA): operators call
 * them rarely.  The read before every claim is one GET.
 */
#include <stdlib.h>
#include <string.h>

#include "redis.h"

/* KEYS[1] the pause, KEYS[2] the pauses; ARGV[1] until (0: until resumed). */
static const char lua_pause[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
	"local untl = tonumber(ARGV[1])\n"
	"if untl ~= 0 and untl <= now then return {0, now} end\n"
	"local since = now\n"
	"local cur = redis.call('GET', KEYS[1])\n"
	"if cur then\n"
	"  since = tonumber(string.match(cur, '^(%d+):'))\n"
	"  redis.call('ZREM', KEYS[2], cur)\n"
	"end\n"
	"local v = string.format('%d:%d', since, untl)\n"
	"if untl == 0 then redis.call('SET', KEYS[1], v)\n"
	"else redis.call('SET', KEYS[1], v, 'PXAT', untl) end\n"
	"redis.call('ZADD', KEYS[2], since, v)\n"
	"return {1, now}\n";

/* The same keys; the pause's member gets its end, now. */
static const char lua_resume[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
	"local cur = redis.call('GET', KEYS[1])\n"
	"if not cur then return {0, now} end\n"
	"local since = tonumber(string.match(cur, '^(%d+):'))\n"
	"redis.call('ZREM', KEYS[2], cur)\n"
	"redis.call('ZADD', KEYS[2], since, string.format('%d:%d', since, now))\n"
	"redis.call('DEL', KEYS[1])\n"
	"return {1, now}\n";

/* Start a call as every method does: the error cleared, the store open, the deadline set. */
static rds_store *
begin(an_store *st)
{
	rds_store  *rs = st->impl;

	an_store_clear(st);
	if (rs == NULL)
	{
		an_store_fail(st, AN_E_STATE, "the redis store is not open");
		return NULL;
	}
	an_deadline_start(&rs->deadline, rs->conn.timeout_ms);
	return rs;
}

/* "<since>:<until>" into a span; until 0 is AN_PAUSE_OPEN. */
static int
parse_span(const char *s, an_pause_span *sp)
{
	char	   *end;

	sp->start = strtoll(s, &end, 10);
	if (*end != ':')
		return 0;
	sp->end = strtoll(end + 1, &end, 10);
	if (*end != '\0')
		return 0;
	if (sp->end == 0)
		sp->end = AN_PAUSE_OPEN;
	return 1;
}

/* One of the scripts on the job's keys: *done and the server's clock from its answer. */
static int
run_script(an_store *st, rds_store *rs, const an_request *rq, const char *source, int64_t until,
		   int64_t *done, int64_t *now)
{
	rds_cmd		c;
	redisReply *r = NULL;
	int			rc;

	rds_cmd_init(&c);
	rds_cmd_add(&c, "EVAL");
	rds_cmd_add(&c, source);
	rds_cmd_add(&c, "2");
	rds_cmd_key(&c, rs, rq->job, "paused");
	rds_cmd_key(&c, rs, rq->job, "pauses");
	rds_cmd_addf(&c, "%lld", (long long) until);
	if ((rc = rds_call(st, rs, &c, &r)) != AN_OK)
		return rc;
	if ((rc = rds_array_int(st, rs, r, 0, done, "a pause script")) == AN_OK)
		rc = rds_array_int(st, rs, r, 1, now, "a pause script");
	freeReplyObject(r);
	return rc;
}

int
rds_pause(an_store *st, const an_request *rq, int64_t until)
{
	rds_store  *rs = begin(st);
	int64_t		done = 0,
				now = 0;
	int			tries = 0;
	int			rc;

	if (rs == NULL)
		return st->err;
	do
		rc = run_script(st, rs, rq, lua_pause, until, &done, &now);
	while (an_resend_once(st, rc, rs->conn.dropped, &tries));
	if (rc == AN_OK && !done)
	{
		an_store_fail(st, AN_E_INPUT, "until must be in the future");
		an_store_detailf(st, "Redis store %s's clock says %lld ms, and until is %lld ms.",
						 rs->conn.where, (long long) now, (long long) until);
		return an_store_hintf(st, "Pass a later time; the pause ends on the store's clock.");
	}
	return rc;
}

int
rds_resume(an_store *st, const an_request *rq, int *was_paused)
{
	rds_store  *rs = begin(st);
	int64_t		done = 0,
				now = 0;
	int			tries = 0;
	int			rc;

	if (rs == NULL)
		return st->err;
	do
		rc = run_script(st, rs, rq, lua_resume, 0, &done, &now);
	while (an_resend_once(st, rc, rs->conn.dropped, &tries));
	*was_paused = rc == AN_OK && done;
	return rc;
}

static int
get_pause(an_store *st, rds_store *rs, const an_request *rq, int64_t *until)
{
	rds_cmd		c;
	redisReply *r = NULL;
	an_pause_span sp;
	int			rc;

	rds_cmd_init(&c);
	rds_cmd_add(&c, "GET");
	rds_cmd_key(&c, rs, rq->job, "paused");
	if ((rc = rds_call(st, rs, &c, &r)) != AN_OK)
		return rc;
	if (r->type == REDIS_REPLY_STRING && parse_span(r->str, &sp))
		*until = sp.end;
	else if (r->type != REDIS_REPLY_NIL)
		rc = an_store_fail(st, AN_E_STORE, "redis store %s holds an unreadable pause of job %s",
						   rs->conn.where, rq->job);
	freeReplyObject(r);
	return rc;
}

int
rds_paused(an_store *st, const an_request *rq, int64_t *until)
{
	rds_store  *rs = begin(st);
	int			tries = 0;
	int			rc;

	*until = 0;
	if (rs == NULL)
		return st->err;
	do
		rc = get_pause(st, rs, rq, until);
	while (an_resend_once(st, rc, rs->conn.dropped, &tries));
	return rc;
}

static int
read_pauses(an_store *st, rds_store *rs, const an_request *rq, int64_t from, int64_t to,
			an_pause_span *spans, size_t max, size_t *n)
{
	rds_cmd		c;
	redisReply *r = NULL;
	int			rc;

	*n = 0;
	rds_cmd_init(&c);
	rds_cmd_add(&c, "ZRANGEBYSCORE");
	rds_cmd_key(&c, rs, rq->job, "pauses");
	rds_cmd_add(&c, "-inf");
	rds_cmd_addf(&c, "(%lld", (long long) to);
	if ((rc = rds_call(st, rs, &c, &r)) != AN_OK)
		return rc;
	if (r->type != REDIS_REPLY_ARRAY)
		rc = rds_reply_fail(st, rs, r, "ZRANGEBYSCORE of the pauses");
	for (size_t i = 0; rc == AN_OK && i < r->elements; i++)
	{
		an_pause_span sp;

		if (r->element[i]->type != REDIS_REPLY_STRING || !parse_span(r->element[i]->str, &sp))
			rc = an_store_fail(st, AN_E_STORE, "redis store %s holds an unreadable pause of job %s",
							   rs->conn.where, rq->job);
		else if (sp.end > from && (*n)++ < max)
			spans[*n - 1] = sp;
	}
	freeReplyObject(r);
	return rc;
}

int
rds_pauses(an_store *st, const an_request *rq, int64_t from, int64_t to,
		   an_pause_span *spans, size_t max, size_t *n)
{
	rds_store  *rs = begin(st);
	int			tries = 0;
	int			rc;

	*n = 0;
	if (rs == NULL)
		return st->err;
	do
		rc = read_pauses(st, rs, rq, from, to, spans, max, n);
	while (an_resend_once(st, rc, rs->conn.dropped, &tries));
	return rc;
}
