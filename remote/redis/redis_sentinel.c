/*
 * redis_sentinel.c — finding the master through Redis Sentinel.
 *
 *   redis+sentinel://s1:26379,s2:26379,s3:26379/mymaster[/db]?replicas=1&...
 *
 * Before every connect the sentinels are asked, one at a time, where the
 * master is (SENTINEL get-master-addr-by-name); the first that knows is
 * believed, and asked first next time.  Sentinels may be wrong for a moment
 * during a failover, so the handshake also asks the server its ROLE
 * (redis_conn.c) and refuses a replica: a claim is never written where it
 * could be thrown away by a resynchronisation.  A sentinel that is down or
 * frozen costs its share of the time left, not all of it.
 *
 * The sentinels are asked without credentials: the URL's user and password
 * are the data servers'.  Sentinels that require a password are not
 * supported (doc/clusters.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis.h"

/* A question to sentinel i (ctx: the connection): the master's address, or an error. */
static int
ask_one(an_store *st, void *ctx, int i, const an_deadline *d)
{
	rds_conn   *cn = ctx;
	const rds_servers *s = cn->sentinels;
	rds_conn	q;
	const char *argv[] = {"SENTINEL", "get-master-addr-by-name", cn->master_name};
	redisReply *r = NULL;
	char	   *host;
	int			rc;

	memset(&q, 0, sizeof(q));
	q.host = s->host[i];
	q.port = s->port[i];
	q.timeout_ms = cn->timeout_ms;
	q.next_time_ms = INT64_MAX;  /* its clock is not the store's */
	strcpy(q.where, cn->where);
	if ((rc = rds_conn_open_raw(st, &q, d)) == AN_OK)
		rc = rds_conn_command(st, &q, d, 3, argv, &r);
	rds_conn_close(&q);
	if (rc != AN_OK)
		return rc;
	if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
		r->element[0]->type == REDIS_REPLY_STRING && r->element[1]->type == REDIS_REPLY_STRING &&
		(host = strdup(r->element[0]->str)) != NULL)
	{
		free(cn->host);
		cn->host = host;
		cn->port = atoi(r->element[1]->str);
	}
	else if (r->type == REDIS_REPLY_NIL || r->type == REDIS_REPLY_ARRAY)
		rc = an_store_fail(st, AN_E_CONFIG,
						   "redis store %s: the sentinel at %s:%d does not monitor a master called \"%s\" (the URL's path)",
						   cn->where, q.host, q.port, cn->master_name);
	else
		rc = an_store_fail(st, AN_E_STORE, "redis store %s: the sentinel at %s:%d answered %.160s",
						   cn->where, q.host, q.port,
						   r->type == REDIS_REPLY_ERROR ? r->str : "something other than an address");
	freeReplyObject(r);
	return rc;
}

int
rds_sentinel_resolve(an_store *st, rds_conn *cn, const an_deadline *d)
{
	char		who[sizeof(cn->where) + 16];
	int			rc;

	/* Not knowing the master is an answer; another sentinel may know better (flags 0). */
	snprintf(who, sizeof(who), "redis store %s", cn->where);
	rc = an_rotate(st, &cn->sentinels->rot, d, 0, ask_one, cn, who, "sentinel");
	if (rc == AN_E_CONNECT || rc == AN_E_TIMEOUT)
		an_store_hintf(st, "No sentinel of the URL answered; every one was tried within timeout_ms.");
	return rc;
}
