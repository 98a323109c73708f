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
 * The pauses are a history, and nothing prunes a Redis store (its runs
 * expire): so each pause and resume trims, in the same script, the pauses
 * that ended more than keep_ms ago, keep_ms the longest of this host's
 * max_late_ms + lease_ms * attempts and the one the job's lease memory
 * (<prefix>:{<job>}:memory, redis_scripts.c) recorded for any claim.  No
 * claim, and no anarchon_missed (which refuses slots older than keep_ms,
 * redis_missed.c), asks about a slot that old, so a trimmed pause was one
 * nobody could see any more; SQLite and PostgreSQL drop theirs in
 * anarchon_prune by the same rule.  The members keep their form: a key
 * written before trimming existed is read as ever and trimmed at its next
 * write.
 *
 * Pause and resume are one script each, so the two keys never disagree;
 * they are sent with EVAL and their source (no cached SHA): operators call
 * them rarely.  A claim reads the pause inside its own script
 * (redis_scripts.c), which answers paused, or that the key holds no pause
 * (rds_pause_answer); the GET here is the paused method's, for the paused
 * verb and function.  The key and its value are 0.1.0's, whose hosts GET
 * it before each claim: a pause written by either release holds both.
 */
#include <stdlib.h>
#include <string.h>

#include "redis.h"

/*
 * The start of both scripts: now on Redis's clock, then the pauses that ended
 * before now - keep_ms go.  KEYS[3] the job's lease memory, ARGV[2] this
 * host's keep_ms.  Only a pause that started before the horizon can have
 * ended before it, so the scan is a range of the scores.
 */
#define LUA_NOW_AND_TRIM \
	"local t = redis.call('TIME')\n" \
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n" \
	"local keep = tonumber(ARGV[2])\n" \
	"local kept = tonumber(redis.call('HGET', KEYS[3], 'keep_ms'))\n" \
	"if kept and kept > keep then keep = kept end\n" \
	"local horizon = now - keep\n" \
	"for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', string.format('(%d', horizon))) do\n" \
	"  local e = tonumber(string.match(m, ':(%d+)$'))\n" \
	"  if e and e ~= 0 and e < horizon then redis.call('ZREM', KEYS[2], m) end\n" \
	"end\n"

/* KEYS[1] the pause, KEYS[2] the pauses; ARGV[1] until (0: until resumed). */
static const char lua_pause[] =
	LUA_NOW_AND_TRIM
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
	LUA_NOW_AND_TRIM
	"local cur = redis.call('GET', KEYS[1])\n"
	"if not cur then return {0, now} end\n"
	"local since = tonumber(string.match(cur, '^(%d+):'))\n"
	"redis.call('ZREM', KEYS[2], cur)\n"
	"redis.call('ZADD', KEYS[2], since, string.format('%d:%d', since, now))\n"
	"redis.call('DEL', KEYS[1])\n"
	"return {1, now}\n";

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

/* What one method asks, and what it learned. */
typedef struct pause_call
{
	const an_request *rq;
	const char *script;          /* pause, resume: the script; NULL: a read */
	int64_t		until;           /* pause: the argument; paused: the answer */
	int64_t		done,
				now;             /* a script's answer: did it act, Redis's clock */
	int64_t		from,
				to;              /* pauses: the range */
	an_pause_span *spans;
	size_t		max,
				n;
} pause_call;

/* One of the scripts on the job's keys: c->done and the server's clock from its answer. */
static int
run_script(an_store *st, rds_store *rs, pause_call *c)
{
	rds_cmd		cmd;
	redisReply *r = NULL;
	int			rc;

	rds_cmd_init(&cmd);
	rds_cmd_add(&cmd, "EVAL");
	rds_cmd_add(&cmd, c->script);
	rds_cmd_add(&cmd, "3");
	rds_cmd_key(&cmd, rs, c->rq->job, "paused");
	rds_cmd_key(&cmd, rs, c->rq->job, "pauses");
	rds_cmd_key(&cmd, rs, c->rq->job, "memory");
	rds_cmd_addf(&cmd, "%lld", (long long) c->until);
	rds_cmd_addf(&cmd, "%lld", (long long) an_settings_retention_ms(c->rq->settings));
	if ((rc = rds_call(st, rs, &cmd, &r)) != AN_OK)
		return rc;
	if ((rc = rds_array_int(st, rs, r, 0, &c->done, "a pause script")) == AN_OK)
		rc = rds_array_int(st, rs, r, 1, &c->now, "a pause script");
	freeReplyObject(r);
	return rc;
}

static int
unreadable(an_store *st, rds_store *rs, const pause_call *c)
{
	return an_store_fail(st, AN_E_STORE, "redis store %s holds an unreadable pause of job %s",
						 rs->conn.where, c->rq->job);
}

int
rds_pause_answer(an_store *st, rds_store *rs, const an_request *rq, const redisReply *r,
				 int64_t code)
{
	const redisReply *e;
	pause_call	c = {.rq = rq};

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 || (e = r->element[0])->type != REDIS_REPLY_INTEGER)
		return 0;
	if (e->integer == RDS_BAD_PAUSE)
	{
		unreadable(st, rs, &c);
		return -1;
	}
	return e->integer == code;
}

/* GET of the pause: c->until its end, 0 when the job is not paused. */
static int
get_pause(an_store *st, rds_store *rs, pause_call *c)
{
	rds_cmd		cmd;
	redisReply *r = NULL;
	an_pause_span sp;
	int			rc;

	c->until = 0;
	rds_cmd_init(&cmd);
	rds_cmd_add(&cmd, "GET");
	rds_cmd_key(&cmd, rs, c->rq->job, "paused");
	if ((rc = rds_call(st, rs, &cmd, &r)) != AN_OK)
		return rc;
	if (r->type == REDIS_REPLY_STRING && parse_span(r->str, &sp))
		c->until = sp.end;
	else if (r->type == REDIS_REPLY_STRING)
		rc = unreadable(st, rs, c);
	else if (r->type != REDIS_REPLY_NIL)
		rc = rds_reply_fail(st, rs, r, "GET of the pause");
	freeReplyObject(r);
	return rc;
}

/* The pauses that start before c->to and end after c->from, ascending by start. */
static int
read_pauses(an_store *st, rds_store *rs, pause_call *c)
{
	rds_cmd		cmd;
	redisReply *r = NULL;
	int			rc;

	c->n = 0;
	rds_cmd_init(&cmd);
	rds_cmd_add(&cmd, "ZRANGEBYSCORE");
	rds_cmd_key(&cmd, rs, c->rq->job, "pauses");
	rds_cmd_add(&cmd, "-inf");
	rds_cmd_addf(&cmd, "(%lld", (long long) c->to);
	if ((rc = rds_call(st, rs, &cmd, &r)) != AN_OK)
		return rc;
	if (r->type != REDIS_REPLY_ARRAY)
		rc = rds_reply_fail(st, rs, r, "ZRANGEBYSCORE of the pauses");
	for (size_t i = 0; rc == AN_OK && i < r->elements; i++)
	{
		an_pause_span sp;

		if (r->element[i]->type != REDIS_REPLY_STRING || !parse_span(r->element[i]->str, &sp))
			rc = unreadable(st, rs, c);
		else if (sp.end > c->from && c->n++ < c->max)
			c->spans[c->n - 1] = sp;
	}
	freeReplyObject(r);
	return rc;
}

/* Run op for c as every method of the store runs: once more if a kept connection dropped. */
static int
with_resend(an_store *st, int (*op) (an_store *, rds_store *, pause_call *), pause_call *c)
{
	rds_store  *rs = rds_begin(st);
	int			tries = 0;
	int			rc;

	if (rs == NULL)
		return st->err.code;
	do
		rc = op(st, rs, c);
	while (an_resend_once(st, rc, rs->conn.dropped, &tries));
	return rc;
}

int
rds_pause(an_store *st, const an_request *rq, int64_t until)
{
	pause_call	c = {.rq = rq, .script = lua_pause, .until = until};
	int			rc = with_resend(st, run_script, &c);

	if (rc == AN_OK && !c.done)
	{
		an_store_fail(st, AN_E_INPUT, "until must be in the future");
		an_store_detailf(st, "Redis store %s's clock says %lld ms, and until is %lld ms.",
						 ((rds_store *) st->impl)->conn.where, (long long) c.now, (long long) until);
		return an_store_hintf(st, "Pass a later time; the pause ends on the store's clock.");
	}
	return rc;
}

int
rds_resume(an_store *st, const an_request *rq, int *was_paused)
{
	pause_call	c = {.rq = rq, .script = lua_resume};
	int			rc = with_resend(st, run_script, &c);

	*was_paused = rc == AN_OK && c.done;
	return rc;
}

int
rds_paused(an_store *st, const an_request *rq, int64_t *until)
{
	pause_call	c = {.rq = rq};
	int			rc = with_resend(st, get_pause, &c);

	*until = rc == AN_OK ? c.until : 0;
	return rc;
}

int
rds_pauses(an_store *st, const an_request *rq, int64_t from, int64_t to,
		   an_pause_span *spans, size_t max, size_t *n)
{
	pause_call	c = {.rq = rq, .from = from, .to = to, .spans = spans, .max = max};
	int			rc = with_resend(st, read_pauses, &c);

	*n = rc == AN_OK ? c.n : 0;
	return rc;
}
