/*
 * redis_durable.c — refusing a Redis that would forget claims on a crash.
 *
 * A claim Redis acknowledged must survive Redis: were it forgotten, the
 * slot could be won a second time.  At every connect the handshake asks
 * CONFIG GET append* (and INFO persistence, which managed services usually
 * still answer when they disable CONFIG), and this file judges the answers:
 *
 *   appendonly no        refused: a crash or restart forgets every claim
 *                        since the last snapshot.
 *   appendfsync no       refused: the operating system writes the file when
 *                        it likes (commonly within 30 s), so a crash of the
 *                        machine forgets the claims of that time.
 *   appendfsync everysec accepted: a crash of Redis loses nothing (every
 *                        write reaches the operating system before the
 *                        reply), a crash of the machine about the last
 *                        second.  Redis's own recommendation.
 *   appendfsync always   accepted: nothing is lost.
 * Where CONFIG is not allowed, INFO's aof_enabled still tells appendonly;
 * where neither answers, the claim goes ahead (doc/stores.md says so).
 * durability=accept-loss in the URL skips the questions altogether.
 */
#include <string.h>

#include "redis.h"

/* The value of name in a CONFIG GET answer (name, value, name, value...), or NULL. */
static const char *
config_value(const redisReply *r, const char *name)
{
	if (r->type != REDIS_REPLY_ARRAY)
		return NULL;
	for (size_t i = 0; i + 1 < r->elements; i += 2)
		if (r->element[i]->type == REDIS_REPLY_STRING && r->element[i + 1]->type == REDIS_REPLY_STRING &&
			strcmp(r->element[i]->str, name) == 0)
			return r->element[i + 1]->str;
	return NULL;
}

/* "no", "yes" or NULL from INFO persistence's aof_enabled. */
static const char *
info_aof(const redisReply *r)
{
	const char *v;

	if (r->type != REDIS_REPLY_STRING)
		return NULL;
	if ((v = strstr(r->str, "aof_enabled:")) == NULL)
		return NULL;
	return v[strlen("aof_enabled:")] == '0' ? "no" : "yes";
}

int
rds_durability_check(an_store *st, const rds_conn *cn, const redisReply *config,
					 const redisReply *persistence)
{
	const char *aof = config_value(config, "appendonly");
	const char *fsync = config_value(config, "appendfsync");

	if (aof == NULL)
		aof = info_aof(persistence);
	if (aof && strcmp(aof, "no") == 0)
	{
		an_store_fail(st, AN_E_CONFIG,
					  "redis store %s runs with appendonly no: a crash or restart of Redis forgets every claim made since its last snapshot, and a forgotten slot can be won a second time",
					  cn->where);
		return an_store_hintf(st, "Turn the append-only file on (appendonly yes in redis.conf, or CONFIG SET appendonly yes), or add durability=accept-loss to the store URL to take the risk.");
	}
	if (fsync && strcmp(fsync, "no") == 0)
	{
		an_store_fail(st, AN_E_CONFIG,
					  "redis store %s runs with appendfsync no: the operating system decides when the append-only file reaches the disk, so a crash of the machine can forget the claims of the last 30 seconds or more, and a forgotten slot can be won a second time",
					  cn->where);
		return an_store_hintf(st, "Set appendfsync everysec (about the last second at risk) or always (nothing at risk) on the server, or add durability=accept-loss to the store URL to take the risk.");
	}
	return AN_OK;
}
