/*
 * redis_reply.c — what a Redis reply means for a call: its error code, an
 * error that ends by itself (the hosts' "try again"), and the store's error
 * for a reply it did not want.  The layers below and above the commands
 * (connections, sentinels, routes, scripts) all read replies through these,
 * and these call none of them.
 */
#include <stdio.h>
#include <string.h>

#include "redis.h"

void
rds_reply_code(const redisReply *r, char *out, size_t outlen)
{
	size_t		n = strcspn(r->str, " ");

	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, r->str, n);
	out[n] = '\0';
}

/*
 * The error replies that say "not now" rather than "no": the server is
 * loading its data set after a restart (LOADING), runs a script past
 * busy-reply-threshold (BUSY), a cluster is resharding or failing over
 * (TRYAGAIN, CLUSTERDOWN), a replica lost its master (MASTERDOWN), a master
 * has fewer replicas than min-replicas-to-write (NOREPLICAS).  Each ends by
 * itself, so the call failed with AN_E_BUSY, the hosts' "try again" class
 * (exit 75, SQLSTATE 55P03, SQLITE_BUSY), not as an error of the store's.
 * READONLY, a master become replica, is the failover's other face: the
 * route drops the connection for it (redis_route.c), AN_E_CONNECT.
 * doc/cli.md has the table of every store's replies and their class.
 */
static const char *const transient_codes[] = {
	"LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "NOREPLICAS"
};

int
rds_reply_transient(const redisReply *r)
{
	char		code[32];

	if (r->type != REDIS_REPLY_ERROR)
		return 0;
	rds_reply_code(r, code, sizeof(code));
	for (size_t i = 0; i < sizeof(transient_codes) / sizeof(transient_codes[0]); i++)
		if (strcmp(code, transient_codes[i]) == 0)
			return 1;
	return 0;
}

int
rds_transient_fail(an_store *st, const char *where, const redisReply *r, const char *what)
{
	an_store_fail(st, AN_E_BUSY, "redis store %s cannot serve %s now: %.200s", where, what, r->str);
	an_store_detailf(st, "The server answered with an error that ends by itself (a restart still loading its data, a long script, a failover or a resharding).");
	return an_store_hintf(st, "Try again later; nothing was decided.");
}

int
rds_reply_fail(an_store *st, rds_store *rs, const redisReply *r, const char *what)
{
	if (r->type != REDIS_REPLY_ERROR)
		return an_store_fail(st, AN_E_STORE, "redis store %s gave an unexpected answer to %s",
							 rs->conn.where, what);
	/* A server that started to want a password after we connected. */
	if (strncmp(r->str, "NOAUTH", 6) == 0)
		return an_store_fail(st, AN_E_AUTH, RDS_MSG_NOAUTH, rs->conn.where);
	if (rds_reply_transient(r))
		return rds_transient_fail(st, rs->conn.where, r, what);
	return an_store_fail(st, AN_E_STORE, "redis store %s answered %s with an error: %.200s",
						 rs->conn.where, what, r->str);
}
