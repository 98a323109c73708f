/*
 * redis_format.c — which format a prefix's keys are in: the key <prefix>:format.
 *
 * What anarchon stores under a prefix may change between releases (0.2.0
 * added the lease strategy's job memory and kept set, and a run's promise).
 * A host must not decide on keys written in a format it does not know: a
 * later release's keys could hold what makes a slot taken in a place this
 * host never reads.  So the prefix records its format in one string key,
 * "<format> <first release of that format>":
 *
 *   1   0.1.0, which wrote no marker: a prefix without the key is format 1
 *   2   0.2.0: the lease memory, the kept set, the promise; it reads
 *       format 1's runs as they are (doc/architecture.md, "Redis, 0.1.0
 *       beside 0.2.0"), so a format 1 prefix needs no migration, only the
 *       marker
 *
 * At open, after connecting, a host reads the key; when it is missing it
 * writes its own with SET NX and, when another host's SET came first, reads
 * again.  A format newer than this host's is refused (AN_E_CONFIG, exit 78 in
 * the command), naming both formats and both releases; so is a value it
 * cannot read.  The marker never goes back: a host of an older format than
 * the marker's is the one refused.  One GET per open (two round trips the
 * first time): a claim through the command opens once per run, a database's
 * session once per connection, which is also when it notices a marker
 * raised meanwhile.  0.1.0 never reads the key, so it keeps working beside
 * 0.2.0 on a marked prefix.  The key has no hash tag: in a cluster it lives
 * on the node of its own hash slot.  The marker is judged by
 * format_marker.c, shared with the NATS store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format_marker.h"
#include "redis.h"

/* A longer marker than this is cut: it is only shown. */
#define FORMAT_VALUE_MAX 64

/* format_call: one command on the format key (its own hash slot, no job). */
static int
format_call(an_store *st, rds_store *rs, rds_cmd *c, redisReply **r)
{
	rs->tag[0] = '\0';
	rs->hslot = rds_key_hash_slot(c->argv[1], c->len[1]);
	return rds_call(st, rs, c, r);
}

/* read_format: GET the key; *found 0 when it is missing, else its value in buf. */
static int
read_format(an_store *st, rds_store *rs, const char *key, char *buf, size_t size, int *found)
{
	rds_cmd		c;
	redisReply *r;
	int			rc;

	rds_cmd_init(&c);
	rds_cmd_add(&c, "GET");
	rds_cmd_add(&c, key);
	if ((rc = format_call(st, rs, &c, &r)) != AN_OK)
		return rc;
	*found = r->type == REDIS_REPLY_STRING;
	if (*found)
		snprintf(buf, size, "%.*s", (int) (r->len < size ? r->len : size - 1), r->str);
	else if (r->type != REDIS_REPLY_NIL)
		rc = rds_reply_fail(st, rs, r, "GET of the prefix's format");
	freeReplyObject(r);
	return rc;
}

int
rds_format_check(an_store *st, rds_store *rs)
{
	char		key[sizeof(rs->prefix) + 8];
	char		value[FORMAT_VALUE_MAX];
	char		mine[32];
	char		place[sizeof(rs->prefix) + 8];
	char		marker[sizeof(key) + 8];
	char		who[sizeof(rs->conn.where) + 16];
	rds_cmd		c;
	redisReply *r;
	int			rc, found;

	snprintf(key, sizeof(key), "%s:format", rs->prefix);
	if ((rc = read_format(st, rs, key, value, sizeof(value), &found)) != AN_OK)
		return rc;
	if (!found)
	{
		/* A new prefix, or one of 0.1.0's (format 1, which this host reads as it is). */
		an_format_marker_mine(mine, sizeof(mine));
		rds_cmd_init(&c);
		rds_cmd_add(&c, "SET");
		rds_cmd_add(&c, key);
		rds_cmd_add(&c, mine);
		rds_cmd_add(&c, "NX");
		if ((rc = format_call(st, rs, &c, &r)) != AN_OK)
			return rc;
		found = r->type == REDIS_REPLY_NIL;		/* another host's SET came first */
		freeReplyObject(r);
		if (!found)
			return AN_OK;
		if ((rc = read_format(st, rs, key, value, sizeof(value), &found)) != AN_OK)
			return rc;
		if (!found)
			return AN_OK;		/* deleted meanwhile by hand: the next open writes it */
	}
	snprintf(who, sizeof(who), "redis store %s", rs->conn.where);
	snprintf(place, sizeof(place), "prefix %s", rs->prefix);
	snprintf(marker, sizeof(marker), "the key %s", key);
	return an_format_marker_judge(st, who, place, marker, value);
}
