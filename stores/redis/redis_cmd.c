/*
 * redis_cmd.c — commands for the Redis store: the start of a call,
 * arguments, keys, scripts (what a reply means: redis_reply.c).
 *
 * Arguments are kept with their lengths (no printf-style command strings), so
 * a value can never change the shape of a command.  Scripts are loaded once
 * per session with SCRIPT LOAD and called by SHA after that; a server that
 * lost its script cache (restart, SCRIPT FLUSH) answers NOSCRIPT, and the
 * call is repeated once as EVAL with the source, which caches it again.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "redis.h"

/* Start a call: clear the error, check the store is open, set the deadline. */
rds_store  *
rds_begin(an_store *st)
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

void
rds_cmd_init(rds_cmd *c)
{
	c->argc = 0;
	c->used = 0;
	c->overflow = 0;
}

void
rds_cmd_add(rds_cmd *c, const char *s)
{
	if (c->argc == RDS_MAXARGS)
	{
		c->overflow = 1;
		return;
	}
	c->argv[c->argc] = s;
	c->len[c->argc] = strlen(s);
	c->argc++;
}

void
rds_cmd_addf(rds_cmd *c, const char *fmt,...)
{
	va_list		ap;
	size_t		room = RDS_POOL - c->used;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(c->pool + c->used, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t) n >= room)
	{
		c->overflow = 1;
		return;
	}
	rds_cmd_add(c, c->pool + c->used);
	c->used += (size_t) n + 1;
}

/*
 * The job's keys share "<prefix>:{<job>}", and so one hash slot: remember
 * them as the call's, where rds_route sends its commands (a cluster's node)
 * and writes what WAIT waits for.
 */
static void
job_tag(rds_store *rs, const char *job)
{
	int			n = snprintf(rs->tag, sizeof(rs->tag), "%s:{%s}", rs->prefix, job);

	rs->hslot = rds_key_hash_slot(rs->tag, n < (int) sizeof(rs->tag) ? (size_t) n : sizeof(rs->tag) - 1);
}

void
rds_cmd_key(rds_cmd *c, rds_store *rs, const char *job, const char *what)
{
	job_tag(rs, job);
	rds_cmd_addf(c, "%s:%s", rs->tag, what);
}

void
rds_cmd_slot_key(rds_cmd *c, rds_store *rs, const char *job, const char *what,
				 int64_t slot)
{
	job_tag(rs, job);
	rds_cmd_addf(c, "%s:%s:%lld", rs->tag, what, (long long) slot);
}

int
rds_call_any(an_store *st, rds_store *rs, rds_cmd *c, redisReply **reply)
{
	*reply = NULL;
	if (c->overflow)
		return an_store_fail(st, AN_E_INTERNAL, "a redis command grew past its fixed size");
	return rds_route(st, rs, c->argc, c->argv, c->len, reply);
}

int
rds_call(an_store *st, rds_store *rs, rds_cmd *c, redisReply **reply)
{
	int			rc = rds_call_any(st, rs, c, reply);

	if (rc == AN_OK && (*reply)->type == REDIS_REPLY_ERROR)
	{
		rc = rds_reply_fail(st, rs, *reply, c->argv[0]);
		freeReplyObject(*reply);
		*reply = NULL;
	}
	return rc;
}

void
rds_eval_init(rds_cmd *c, int numkeys)
{
	rds_cmd_init(c);
	rds_cmd_add(c, "EVALSHA");
	rds_cmd_add(c, "");          /* the SHA, filled in by rds_eval */
	rds_cmd_addf(c, "%d", numkeys);
}

/* SCRIPT LOAD: remember the SHA Redis gives back. */
static int
load_script(an_store *st, rds_store *rs, const rds_script *script)
{
	rds_cmd		c;
	redisReply *r = NULL;
	int			rc;

	rds_cmd_init(&c);
	rds_cmd_add(&c, "SCRIPT");
	rds_cmd_add(&c, "LOAD");
	rds_cmd_add(&c, script->source);
	if ((rc = rds_call(st, rs, &c, &r)) != AN_OK)
		return rc;
	if (r->type != REDIS_REPLY_STRING || r->len != 40)
		rc = an_store_fail(st, AN_E_STORE, "redis store %s gave an unexpected answer to SCRIPT LOAD",
						   rs->conn.where);
	else
		memcpy(rs->sha[script->index], r->str, 41);
	freeReplyObject(r);
	return rc;
}

int
rds_eval(an_store *st, rds_store *rs, const rds_script *script, rds_cmd *c,
		 redisReply **reply)
{
	char	   *sha = rs->sha[script->index];
	int			rc;

	if (sha[0] == '\0' && (rc = load_script(st, rs, script)) != AN_OK)
		return rc;
	c->argv[1] = sha;
	c->len[1] = 40;
	if ((rc = rds_call_any(st, rs, c, reply)) != AN_OK)
		return rc;
	if ((*reply)->type == REDIS_REPLY_ERROR && strncmp((*reply)->str, "NOSCRIPT", 8) == 0)
	{
		freeReplyObject(*reply);
		c->argv[0] = "EVAL";
		c->len[0] = 4;
		c->argv[1] = script->source;
		c->len[1] = strlen(script->source);
		rc = rds_call_any(st, rs, c, reply);
		c->argv[0] = "EVALSHA";
		c->len[0] = 7;
		if (rc != AN_OK)
			return rc;
	}
	if ((*reply)->type == REDIS_REPLY_ERROR)
	{
		rc = rds_reply_fail(st, rs, *reply, script->name);
		freeReplyObject(*reply);
		*reply = NULL;
	}
	return rc;
}

int
rds_array_int(an_store *st, rds_store *rs, const redisReply *r, size_t i, int64_t *out,
			  const char *what)
{
	if (r->type != REDIS_REPLY_ARRAY || i >= r->elements ||
		r->element[i]->type != REDIS_REPLY_INTEGER)
		return an_store_fail(st, AN_E_STORE, "redis store %s gave an unexpected answer to %s",
							 rs->conn.where, what);
	*out = r->element[i]->integer;
	return AN_OK;
}
