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
 * With rediss+sentinel:// the sentinels are asked over TLS too, verified
 * as the data servers are (the same ca, cert and key).  Sentinels that
 * require a password (requirepass, or ACL users on Redis 6.2 and later) get
 * the URL's sentinel_user and sentinel_password, and only they: the URL's
 * own user and password are the data servers', and are sent to the master
 * the sentinels name only after its certificate was verified (rediss).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis.h"

/*
 * A sentinel's error reply to AUTH: its code only, never its text, which
 * may repeat the arguments (an unknown command's error does) and so the
 * password.
 */
static int
sentinel_auth_error(an_store *st, const rds_conn *cn, const rds_conn *q, const redisReply *r)
{
	char		code[32];

	rds_reply_code(r, code, sizeof(code));
	if (strstr(r->str, "without any password configured"))
	{
		an_store_fail(st, AN_E_AUTH, "redis store %s: the sentinel at %s:%d has no password configured, but the store URL gives sentinel_password",
					  cn->where, q->host, q->port);
		return an_store_hintf(st, "Remove sentinel_password (and sentinel_user) from the URL, or set requirepass on the sentinels.");
	}
	an_store_fail(st, AN_E_AUTH, "redis store %s: the sentinel at %s:%d refused the sentinel_user or sentinel_password given for it (%s)",
				  cn->where, q->host, q->port, code);
	return an_store_hintf(st, "Check the sentinels' requirepass (or their ACL user) against sentinel_password and sentinel_user in the store URL.");
}

/* A sentinel's error reply to the question: a missing password, or what it said. */
static int
sentinel_error(an_store *st, const rds_conn *cn, const rds_conn *q, const redisReply *r)
{
	char		code[32];

	rds_reply_code(r, code, sizeof(code));
	if (strcmp(code, "NOAUTH") == 0)
	{
		an_store_fail(st, AN_E_AUTH, "redis store %s: the sentinel at %s:%d requires a password, and none was given for the sentinels",
					  cn->where, q->host, q->port);
		return an_store_hintf(st, "Give it as the URL parameter sentinel_password (and sentinel_user for an ACL user); the URL's own password is the data servers'.");
	}
	/* A data server (or anything but a sentinel) knows no SENTINEL command. */
	if (strcmp(code, "ERR") == 0 && strstr(r->str, "unknown command") != NULL)
	{
		an_store_fail(st, AN_E_CONFIG, "redis store %s: the server at %s:%d is not a sentinel (it does not know the SENTINEL command)",
					  cn->where, q->host, q->port);
		return an_store_hintf(st, "A redis+sentinel:// URL names the sentinels (port 26379 by default) and then the master's name, "
							  "not the data servers; for one data server, use redis://%s:%d.", q->host, q->port);
	}
	return an_store_fail(st, AN_E_STORE, "redis store %s: the sentinel at %s:%d answered %.160s",
						 cn->where, q->host, q->port, r->str);
}

/* A question to sentinel i (ctx: the connection): the master's address, or an error. */
static int
ask_one(an_store *st, void *ctx, int i, const an_deadline *d)
{
	rds_conn   *cn = ctx;
	const rds_servers *s = cn->sentinels;
	rds_conn	q;
	const char *auth[] = {"AUTH", s->user ? s->user : s->password, s->password};
	const char *ask[] = {"SENTINEL", "get-master-addr-by-name", cn->master_name};
	size_t		auth_len[3];
	size_t		ask_len[3];
	int			argc[2] = {s->user ? 3 : 2, 3};
	const char **argv[2] = {auth, ask};
	const size_t *lens[2] = {auth_len, ask_len};
	int			n = s->password ? 2 : 1;
	int			first = 2 - n;   /* the AUTH is left out without a password */
	redisReply *rep[2] = {NULL, NULL};
	redisReply *r;
	char	   *host;
	int			rc;

	memset(&q, 0, sizeof(q));
	q.host = s->host[i];
	q.port = s->port[i];
	q.tls = cn->tls;
	q.timeout_ms = cn->timeout_ms;
	q.next_time_ms = INT64_MAX;  /* its clock is not the store's */
	strcpy(q.where, cn->where);
	for (int k = 0; k < 3; k++)
	{
		auth_len[k] = auth[k] ? strlen(auth[k]) : 0;
		ask_len[k] = strlen(ask[k]);
	}
	/* AUTH and the question in one round trip. */
	if ((rc = rds_conn_open_raw(st, &q, d)) == AN_OK)
		rc = rds_conn_exchange(st, &q, d, n, argc + first, argv + first, lens + first, rep);
	rds_conn_close(&q);
	if (rc != AN_OK)
		return rc;
	r = rep[n - 1];
	if (n == 2 && rep[0]->type == REDIS_REPLY_ERROR)
		rc = sentinel_auth_error(st, cn, &q, rep[0]);
	else if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
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
	else if (r->type == REDIS_REPLY_ERROR)
		rc = sentinel_error(st, cn, &q, r);
	else
		rc = an_store_fail(st, AN_E_STORE, "redis store %s: the sentinel at %s:%d answered something other than an address",
						   cn->where, q.host, q.port);
	for (int k = 0; k < n; k++)
		freeReplyObject(rep[k]);
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
