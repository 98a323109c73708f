/*
 * redis_store.c — an_redis_methods: the Redis store as the hosts see it.
 *
 *   redis://[user:password@]host[:port][/db]?strategy=lease|stream-id|idmp|script
 *       &prefix=cron&timeout_ms=2000&durability=crash-safe&window_ms=300000 (script)&duration_sec=300 (idmp)
 *   rediss://...  and  rediss+sentinel://...  the same over TLS, with
 *       ca=, cert=, key=, servername=, insecure_skip_verify=true (url.h)
 *   redis+sentinel://, rediss+sentinel://  also sentinel_user=, sentinel_password=
 *
 * With rediss every connection of the store is TLS: the server, the
 * sentinels, the master they name, every cluster node.  The TLS settings
 * (the CA, the client certificate and key) are read once, when the store
 * opens, and shared by its connections, which are kept across calls: a claim
 * pays no handshake.
 *
 * open parses the URL and connects once; the connection is reused by every
 * call and reopened by the next call after it dropped.  A call whose open
 * connection dropped under it (Redis restarted, a proxy cut it) is sent once
 * more on a fresh connection, within the same timeout_ms: a claim carries the
 * same token, so if its first copy was decided, the second finds its own
 * token and answers won again.  Timeouts and cancels are not retried.
 *
 * Every connect also asks Redis how it persists (redis_durable.c) and
 * refuses a server that would forget claims in a crash, unless the URL says
 * durability=accept-loss; and a forked child never uses its parent's
 * connection (fork.h, redis_conn.c).
 */
#include <stdlib.h>
#include <string.h>

#include "wonlost.h"
#include "redis.h"
#include "remote.h"
#include "url.h"

static const rds_strategy *const strategies[] = {
	&rds_strategy_lease, &rds_strategy_stream_id, &rds_strategy_idmp, &rds_strategy_script
};

#define KNOWN_PARAMS "strategy, prefix, timeout_ms, durability, max_skew_ms, replicas, cluster, window_ms (strategy=script), duration_sec (strategy=idmp), sentinel_user and sentinel_password (redis+sentinel), plaintext_auth, and with rediss " AN_URL_TLS_PARAMS
#define RDS_REPLICAS_MAX 5

static const rds_strategy *
find_strategy(const char *name)
{
	for (size_t i = 0; i < sizeof(strategies) / sizeof(strategies[0]); i++)
		if (strcmp(strategies[i]->name, name) == 0)
			return strategies[i];
	return NULL;
}

/* A strategy parameter given to a strategy that has no use for it is a mistake. */
static int
only_for(an_url *u, const char *param, const rds_strategy *owner, const rds_store *rs,
		 an_err *err)
{
	if (rs->strategy != owner && an_url_param(u, param) != NULL)
	{
		an_errf(err, "store URL parameter %s applies to strategy=%s only, not to strategy=%s",
				param, owner->name, rs->strategy->name);
		return -1;
	}
	return 0;
}

/* The database number of a URL's path (p): "" or absent is 0. */
static int
parse_db(const char *p, long *db, an_err *err)
{
	*db = 0;
	if (p == NULL || *p == '\0')
		return 0;
	if (strlen(p) > 9 || strspn(p, "0123456789") != strlen(p))
	{
		an_errf(err, "store URL path must be a Redis database number, as in redis://host:6379/0");
		return -1;
	}
	*db = strtol(p, NULL, 10);
	return 0;
}

static char *
dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* The URL's sentinels, and what they are asked to log in with. */
static int
keep_servers(rds_servers *sv, const an_url *u, const char *user, const char *password)
{
	sv->user = dup_or_null(user);
	sv->password = dup_or_null(password);
	if ((user && !sv->user) || (password && !sv->password))
		return -1;
	sv->rot.n = u->nservers;
	for (int i = 0; i < u->nservers; i++)
	{
		sv->port[i] = u->servers[i].port ? u->servers[i].port : 26379;
		if ((sv->host[i] = strdup(u->servers[i].host)) == NULL)
			return -1;
	}
	return 0;
}

/*
 * How the URL reaches Redis: one server; cluster=yes, the nodes of a Redis
 * Cluster (redis_cluster.c); redis+sentinel://, the sentinels and the
 * master's name (redis_sentinel.c).  The path is the database number, after
 * the master's name for Sentinel.
 */
static int
parse_topology(rds_store *rs, an_url *u, an_err *err)
{
	const char *cluster = an_url_param(u, "cluster");
	const char *path = u->path;
	int			sentinel = strstr(u->scheme, "+sentinel") != NULL;
	const char *sentinel_user = an_url_param(u, "sentinel_user");
	const char *sentinel_password = an_url_param(u, "sentinel_password");

	if (!sentinel && (sentinel_user || sentinel_password))
	{
		an_errf(err, "store URL parameters sentinel_user and sentinel_password are for the sentinels of a %s+sentinel:// URL",
				u->scheme);
		return -1;
	}
	if (sentinel_user && !sentinel_password)
	{
		an_errf(err, "store URL parameter sentinel_user needs sentinel_password");
		return -1;
	}
	if (cluster && strcmp(cluster, "yes") != 0 && strcmp(cluster, "no") != 0)
	{
		an_errf(err, "store URL parameter cluster must be yes or no");
		return -1;
	}
	if (cluster && strcmp(cluster, "yes") == 0)
	{
		if (sentinel)
		{
			an_errf(err, "a %s:// URL cannot also say cluster=yes: Redis Cluster fails over by itself, without sentinels",
					u->scheme);
			return -1;
		}
		if (path && *path && strcmp(path, "0") != 0)
		{
			an_errf(err, "store URL with cluster=yes must not name a database: a Redis Cluster has database 0 only");
			return -1;
		}
		if ((rs->cluster = calloc(1, sizeof(*rs->cluster))) == NULL)
			goto oom;
		/* Any node can tell the map; a replica redirects a command to its master. */
		rs->conn.any_role = 1;
		/* The seed nodes, in the URL's order; their connections are made as needed. */
		for (int i = 0; i < u->nservers; i++)
		{
			an_store	scratch = {0};

			rs->conn.port = u->servers[i].port ? u->servers[i].port : 6379;
			if (rds_cluster_node(&scratch, rs->cluster, &rs->conn, u->servers[i].host, rs->conn.port) < 0)
				goto oom;
		}
		rs->cluster->nseeds = rs->cluster->nodes.n;
		return 0;
	}
	if (sentinel)
	{
		const char *slash = path ? strchr(path, '/') : NULL;

		if (path == NULL || *path == '\0' || slash == path)
		{
			an_errf(err, "a %s:// URL names the master after the sentinels, as in %s://h1:26379,h2:26379/mymaster[/db]",
					u->scheme, u->scheme);
			return -1;
		}
		rs->master_name = slash ? strndup(path, (size_t) (slash - path)) : strdup(path);
		if (rs->master_name == NULL || keep_servers(&rs->sentinels, u, sentinel_user, sentinel_password) < 0)
			goto oom;
		rs->conn.sentinels = &rs->sentinels;
		rs->sentinels.resolve = rds_sentinel_resolve;
		rs->conn.master_name = rs->master_name;
		return parse_db(slash ? slash + 1 : NULL, &rs->conn.db, err);
	}
	if (u->nservers > 1)
	{
		an_errf(err, "redis store URL names %d servers: add cluster=yes for the nodes of a Redis Cluster, or use redis+sentinel://sentinels/master for a master found by Sentinel",
				u->nservers);
		return -1;
	}
	rs->conn.port = u->port ? u->port : 6379;
	if ((rs->conn.host = strdup(u->host)) == NULL)
		goto oom;
	return parse_db(path, &rs->conn.db, err);
oom:
	an_errf(err, "out of memory");
	return -1;
}

/*
 * Everything the URL says, into rs; on error st failed (AN_E_CONFIG).  With
 * tls (open, not check_url) a rediss URL's TLS settings are loaded here,
 * once for every connection of the store: its files are read now.
 */
static int
parse_url(an_store *st, rds_store *rs, const char *url, int tls)
{
	an_url		u;
	const char *name;
	const char *prefix;
	int64_t		timeout_ms;
	int64_t		replicas;
	an_tls_config tcfg;
	int			tls_any;
	int			rediss;
	an_err		err;
	int			rc = AN_E_CONFIG;
	int			plain = 0;

	if (an_url_parse(url, &u, &err) < 0)
		return an_store_adopt(st, AN_E_CONFIG, &err);
	if (strcmp(u.scheme, "redis") != 0 && strcmp(u.scheme, "redis+sentinel") != 0 &&
		strcmp(u.scheme, "rediss") != 0 && strcmp(u.scheme, "rediss+sentinel") != 0)
	{
		an_errf(&err, "store URL for the redis store must start with redis://, rediss://, redis+sentinel:// or rediss+sentinel://");
		goto done;
	}
	rediss = strncmp(u.scheme, "rediss", 6) == 0;
	name = an_url_param(&u, "strategy");
	if (name == NULL)
		name = "lease";
	if ((rs->strategy = find_strategy(name)) == NULL)
	{
		an_errf(&err, "unknown redis strategy \"%.40s\": the strategies are lease, stream-id, idmp and script",
				name);
		goto done;
	}
	if (an_url_prefix(&u, &prefix, &err) < 0 ||
		an_url_int(&u, "timeout_ms", RDS_TIMEOUT_MS_DEFAULT, 1, 600000, &timeout_ms, &err) < 0 ||
		only_for(&u, "window_ms", &rds_strategy_script, rs, &err) < 0 ||
		only_for(&u, "duration_sec", &rds_strategy_idmp, rs, &err) < 0 ||
		an_url_int(&u, "window_ms", RDS_WINDOW_MS_DEFAULT, 1, AN_MAX_LATE_MS_MAX, &rs->window_ms, &err) < 0 ||
		an_url_int(&u, "duration_sec", RDS_DURATION_DEFAULT, 1, RDS_DURATION_MAX, &rs->duration_sec, &err) < 0 ||
		an_url_durability(&u, &rs->conn.accept_loss, &err) < 0 ||
		an_url_skew(&u, &rs->skew_ms, &err) < 0 ||
		an_url_int(&u, "replicas", 0, 0, RDS_REPLICAS_MAX, &replicas, &err) < 0)
		goto done;
	strcpy(rs->prefix, prefix);
	rds_mark_init(rs);
	rs->replicas = (int) replicas;
	rs->conn.timeout_ms = (int) timeout_ms;
	rs->conn.user = dup_or_null(u.user);
	rs->conn.password = dup_or_null(u.password);
	if ((u.user && !rs->conn.user) || (u.password && !rs->conn.password))
	{
		an_errf(&err, "out of memory");
		goto done;
	}
	an_url_name(&u, rs->conn.where, sizeof(rs->conn.where));
	if (an_url_tls(&u, rediss, &tcfg, &tls_any, &err) < 0)
		goto done;
	if (tls && rediss)
	{
		char		who[sizeof(rs->conn.where) + 16];
		int			trc;

		snprintf(who, sizeof(who), "redis store %s", rs->conn.where);
		if ((trc = an_conn_tls_new(st, &tcfg, who, &rs->tls)) != AN_OK)
		{
			an_url_free(&u);
			return trc;
		}
		rs->conn.tls = rs->tls;
	}
	/* The nodes of a cluster copy the connection's settings: they come last. */
	if (parse_topology(rs, &u, &err) < 0 ||
		(plain = an_url_plaintext_auth(&u, rediss, u.password ? "password" :
									   an_url_param(&u, "sentinel_password") ? "sentinel_password" : NULL,
									   &err)) != 0 ||
		an_url_no_unknown(&u, KNOWN_PARAMS, &err) < 0)
		goto done;
	rc = AN_OK;
done:
	an_url_free(&u);
	if (rc != AN_OK)
	{
		an_store_adopt(st, AN_E_CONFIG, &err);
		if (plain == 1)
			an_store_hintf(st, "%s", AN_PLAINTEXT_AUTH_HINT);
		return AN_E_CONFIG;
	}
	return AN_OK;
}

/* Free a password, wiped first: the memory may be reused by anything. */
static void
forget(char *password)
{
	if (password)
		memset(password, 0, strlen(password));
	free(password);
}

static void
redis_close(an_store *st)
{
	rds_store  *rs = st->impl;

	if (rs == NULL)
		return;
	rds_ahead_clear(&rs->ahead);
	rds_conn_close(&rs->conn);
	if (rs->cluster)
		rds_cluster_free(rs->cluster);
	for (int i = 0; i < rs->sentinels.rot.n; i++)
		free(rs->sentinels.host[i]);
	free(rs->master_name);
	free(rs->conn.host);
	forget(rs->conn.password);
	free(rs->conn.user);
	forget(rs->sentinels.password);
	free(rs->sentinels.user);
	an_conn_tls_free(rs->tls);
	free(rs);
	st->impl = NULL;
}

/*
 * The part of open that needs no server: allocate the store and read its
 * URL; with tls, load a rediss URL's TLS settings.
 */
static int
prepare(an_store *st, const char *url, int tls)
{
	rds_store  *rs;

	an_store_clear(st);
	if ((rs = calloc(1, sizeof(*rs))) == NULL)
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	st->impl = rs;
	return parse_url(st, rs, url, tls);
}

static int
redis_open(an_store *st, const char *url, void *arg)
{
	rds_store  *rs;
	int			rc;

	(void) arg;
	if ((rc = prepare(st, url, 1)) != AN_OK)
		return rc;
	rs = st->impl;
	if (rs->strategy != &rds_strategy_lease)
	{
		char		why[48];

		/* A run-now claims a slot off the schedule: only lease keeps runs whose slots need not rise. */
		snprintf(why, sizeof(why), "with strategy %s", rs->strategy->name);
		an_store_lacks(st, AN_CAP_RUN_NOW, why);
	}
	an_deadline_start(&rs->deadline, rs->conn.timeout_ms);
	if (rs->cluster)
	{
		/* The map, and a node's version for the strategy's needs below. */
		rds_conn   *node;

		if ((rc = rds_cluster_route(st, rs, 0, &node)) != AN_OK ||
			(rc = rds_conn_ensure(st, node, &rs->deadline)) != AN_OK)
			return rc;
		memcpy(rs->conn.version, node->version, sizeof(node->version));
	}
	else if ((rc = rds_conn_ensure(st, &rs->conn, &rs->deadline)) != AN_OK)
		return rc;
	if (rs->strategy == &rds_strategy_idmp &&
		RDS_LACKS_IDMP(&rs->conn))
		return rds_idmp_unsupported(st, rs);
	return rds_format_check(st, rs);
}

/* check_url: what open would refuse in the URL, without connecting. */
static int
redis_check_url(an_store *st, const char *url)
{
	int			rc = prepare(st, url, 0);

	redis_close(st);
	return rc;
}

static int
redis_validate(an_store *st, const an_settings *s)
{
	rds_store  *rs = st->impl;
	int64_t		memory;
	char		what[96];

	an_store_clear(st);
	if (rs == NULL)
		return an_store_fail(st, AN_E_STATE, "the redis store is not open");
	snprintf(what, sizeof(what), "redis strategy %s", rs->strategy->name);
	if (rs->strategy->wonlost && an_wonlost_refuse_replace(st, what, s) != AN_OK)
		return st->err.code;
	memory = rs->strategy->memory_ms(rs);
	if (memory < 0)
		return AN_OK;
	snprintf(what, sizeof(what), "%s (how long the redis %s strategy remembers a claim)",
			 rs->strategy->memory_param, rs->strategy->name);
	return an_wonlost_memory_ok(st, what, rs->strategy->memory_param,
								memory, rs->strategy->wonlost && rs->strategy->wonlost->late_on_host ? rs->skew_ms : 0, s);
}

/*
 * A claim of rq->slot, or (manual not NULL) a run-now's request and the claim
 * of its slot (redis_run_now.c), sent once more together after a dropped
 * connection.
 */
static int
claim_or_run_now(an_store *st, const an_request *rq, an_claim_result *res, int64_t *manual)
{
	rds_store  *rs = rds_begin(st);
	int			tries = 0;
	int			rc;

	if (rs == NULL)
		return st->err.code;
	memset(res, 0, sizeof(*res));
	/* Hosts validate before a claim; a claim that skipped it must not be unsafe. */
	if ((rc = redis_validate(st, rq->settings)) != AN_OK)
		return rc;
	do
		rc = manual ? rds_run_now(st, rs, rq, res, manual) : rs->strategy->claim(st, rs, rq, res);
	while (an_resend_once(st, rc, rs->conn.dropped, &tries));
	return rc;
}

/* A run-now is a claim of kind manual: only with strategy lease (redis_open gives it up otherwise). */
static int
redis_claim(an_store *st, const an_request *rq, an_claim_result *res)
{
	return claim_or_run_now(st, rq, res, rq->kind == AN_CLAIM_MANUAL ? &res->slot : NULL);
}

/*
 * A batch: with the host's requests, each strategy's claim is recorded up to
 * its script call, the calls go out in one write per server, and the host's
 * claims (one) are then answered from the replies (redis_ahead.c).  Redis
 * has no unit over several keys of different jobs, so each claim stands
 * alone, as it would one by one; the first error one returns ends the batch.
 */
static int
redis_batch(an_store *st, const an_settings *s, const an_request *rqs, size_t n,
			int (*one) (an_store *st, void *arg, size_t i), void *arg)
{
	rds_store  *rs = st->impl;
	int			rc = AN_OK;

	(void) s;
	if (rs != NULL && rqs != NULL && n > 1)
	{
		an_claim_result res;

		rds_ahead_clear(&rs->ahead);
		rs->ahead.mode = RDS_AHEAD_RECORD;
		for (size_t i = 0; i < n; i++)
			if (rqs[i].job != NULL)
				(void) claim_or_run_now(st, &rqs[i], &res, NULL);
		rs->ahead.mode = RDS_AHEAD_REPLAY;
		if (rds_begin(st) != NULL)
			rds_ahead_send(st, rs, &rs->ahead);
	}
	for (size_t i = 0; i < n && rc == AN_OK; i++)
		rc = one(st, arg, i);
	if (rs != NULL)
		rds_ahead_clear(&rs->ahead);
	return rc;
}

static int
redis_heartbeat(an_store *st, const an_request *rq, int *owned)
{
	rds_store  *rs = rds_begin(st);
	int			tries = 0;
	int			rc;

	*owned = 0;
	if (rs == NULL)
		return st->err.code;
	do
		rc = rs->strategy->heartbeat(st, rs, rq, owned);
	while (an_resend_once(st, rc, rs->conn.dropped, &tries));
	return rc;
}

static int
redis_finish(an_store *st, const an_request *rq, an_run_state status, int *owned)
{
	rds_store  *rs = rds_begin(st);
	int			tries = 0;
	int			rc;

	*owned = 0;
	if (rs == NULL)
		return st->err.code;
	if (status != AN_RUN_SUCCEEDED && status != AN_RUN_FAILED)
		return an_store_fail(st, AN_E_INPUT, "finish status must be 'succeeded' or 'failed'");
	do
		rc = rs->strategy->finish(st, rs, rq, status, owned);
	while (an_resend_once(st, rc, rs->conn.dropped, &tries));
	return rc;
}

static int
redis_check(an_store *st, const an_request *rq, an_check_result *res)
{
	rds_store  *rs = rds_begin(st);
	int			tries = 0;
	int			rc;

	if (rs == NULL)
		return st->err.code;
	memset(res, 0, sizeof(*res));
	do
		rc = rs->strategy->check(st, rs, rq, res);
	while (an_resend_once(st, rc, rs->conn.dropped, &tries));
	return rc;
}

/* No prune: runs expire by themselves (doc/stores.md). */
static const an_store_admin redis_admin = {
	.pause = rds_pause,          /* every strategy (redis_pause.c) */
	.resume = rds_resume,
	.paused = rds_paused,
	.pauses = rds_pauses,
};

const an_store_methods an_redis_methods = {
	.version = AN_STORE_VERSION,
	.name = "redis",
	.open = redis_open,
	.claim = redis_claim,
	.heartbeat = redis_heartbeat,
	.finish = redis_finish,
	.check = redis_check,
	.validate = redis_validate,
	.close = redis_close,
	.check_url = redis_check_url,
	.recall = rds_recall,        /* anarchon_missed, strategy lease (redis_missed.c) */
	.fence = NULL,               /* the hosts ask heartbeat (an_store_fence) */
	.batch = redis_batch,        /* the claims sent ahead (redis_ahead.c) */
	.caps = AN_CAP_PAUSE | AN_CAP_PAUSED | AN_CAP_PAUSES |
		AN_CAP_RUN_NOW,              /* strategy lease: a manual claim (redis_run_now.c) */
	.admin = &redis_admin,
};
