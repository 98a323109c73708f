/*
 * redis_route.c — where a command goes, and when its answer is safe to give.
 *
 * Every command of the Redis store passes here (rds_call_any).  It goes to
 * the URL's one server, to the master the sentinels name, or to the cluster
 * node that serves the call's job (redis_cluster.c), and this file follows
 * what a cluster answers back:
 *
 *   MOVED slot host:port   the slot lives elsewhere for good: the map is
 *                          corrected and the command sent there
 *   ASK slot host:port     the slot is being migrated: the command goes
 *                          there once, after ASKING, and the map stays
 *   READONLY               the server became a replica (a failover): the
 *                          connection is dropped, so the store's one resend
 *                          finds the new master
 *
 * replicas=N.  Redis replicates asynchronously, so a master that dies can
 * take with it a claim it already answered; the promoted replica would then
 * let the slot be won again.  With replicas=N each command is followed, in
 * the same round trip, by a small write of the job's own and WAIT N: WAIT returns once N replicas have everything this
 * connection wrote, and that write came after everything the master held
 * when it answered, the claims of other instances included.  So a won or
 * lost is given only when N replicas hold what it was decided on; when fewer
 * confirm in time, the answer is an error that says the win is not yet safe,
 * and the claim sent again with the same token is recognised as ours (every
 * strategy answers won to its own token).  The write is needed because
 * WAIT alone waits for the connection's own writes only: a resent claim that
 * finds its run writes nothing, and would be answered at once.
 *
 * That write is "<prefix>:{<job>}:synced", one small key per job kept for
 * good, so that it lives wherever the job's other keys live: in a cluster
 * it moves with them when their slot is migrated, and a node that answers
 * the claim from the job's keys also holds this key (a key that came and
 * went would draw an ASK on its own while the slot is migrating).  SCRIPT
 * LOAD, which touches no data, is sent without it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis.h"

#define RDS_REDIRECTS_MAX 5

/* "MOVED 3999 127.0.0.1:6381": the slot and the address; -1 when it is not that. */
static int
parse_redirect(const char *s, size_t skip, int *slot, char *host, size_t hostlen, int *port)
{
	const char *sp = strchr(s + skip, ' ');
	const char *colon;

	*slot = atoi(s + skip);
	if (sp == NULL || (colon = strrchr(sp, ':')) == NULL || (size_t) (colon - sp - 1) >= hostlen ||
		*slot < 0 || *slot >= RDS_HASH_SLOTS)
		return -1;
	memcpy(host, sp + 1, (size_t) (colon - sp - 1));
	host[colon - sp - 1] = '\0';
	*port = atoi(colon + 1);
	return *port > 0 ? 0 : -1;
}

/* The commands sent for one try: [ASKING] command [[ASKING] SET synced, WAIT]. */
typedef struct rds_batch
{
	int			n;
	int			argc[5];
	const char **argv[5];
	const size_t *lens[5];
	const char *extra[4][4];
	size_t		extra_len[4][4];
	char		key[sizeof(((rds_store *) 0)->tag) + 8];
	char		wait_n[12];
	char		wait_ms[24];
} rds_batch;

static void
batch_add(rds_batch *b, int argc, const char **argv, const size_t *lens)
{
	b->argc[b->n] = argc;
	b->argv[b->n] = argv;
	b->lens[b->n] = lens;
	b->n++;
}

/* A command of fixed words, kept in the batch (extra k). */
static void
batch_words(rds_batch *b, int k, int argc, const char *const *words)
{
	for (int i = 0; i < argc; i++)
	{
		b->extra[k][i] = words[i];
		b->extra_len[k][i] = strlen(words[i]);
	}
	batch_add(b, argc, b->extra[k], b->extra_len[k]);
}

/* Free every reply but keep, and return the one at index keep. */
static redisReply *
keep_one(redisReply **rep, int n, int keep)
{
	for (int i = 0; i < n; i++)
		if (i != keep)
			freeReplyObject(rep[i]);
	return keep >= 0 ? rep[keep] : NULL;
}

/* The WAIT pair's answers, judged: AN_OK when enough replicas confirmed. */
static int
judge_wait(an_store *st, rds_store *rs, const redisReply *set, const redisReply *wait)
{
	if (set && set->type == REDIS_REPLY_ERROR &&
		(strncmp(set->str, "ASK ", 4) == 0 || strncmp(set->str, "MOVED ", 6) == 0 ||
		 strncmp(set->str, "TRYAGAIN", 8) == 0))
	{
		/* The job's keys are split between two nodes for now (a migration). */
		if (rs->cluster)
			rs->cluster->stale = 1;
		an_store_fail(st, AN_E_BUSY,
					  "redis store %s: the job's hash slot is being migrated between nodes (%.80s), so the answer cannot be confirmed on replicas yet",
					  rs->conn.where, set->str);
		return an_store_hintf(st, "Send the call again.");
	}
	if (set && set->type == REDIS_REPLY_ERROR)
		return rds_reply_fail(st, rs, set, "the write that WAIT waits for (SET)");
	if (wait->type == REDIS_REPLY_ERROR)
		return rds_reply_fail(st, rs, wait, "WAIT");
	if (wait->type != REDIS_REPLY_INTEGER)
		return an_store_fail(st, AN_E_STORE, "redis store %s gave an unexpected answer to WAIT", rs->conn.where);
	if (wait->integer >= rs->replicas)
		return AN_OK;
	an_store_fail(st, AN_E_TIMEOUT,
				  "redis store %s: the answer is not yet safe: only %lld of the %d replicas asked for (replicas=%d) confirmed the write within timeout_ms, and a failover now could forget a win",
				  rs->conn.where, (long long) wait->integer, rs->replicas, rs->replicas);
	return an_store_hintf(st, "Send the call again with the same token: a claim that won is recognised as yours.  If this persists, the master has fewer replicas connected than replicas= asks for (INFO replication).");
}

/*
 * An error reply that says where to go instead, or that the server is a
 * replica now; 1 = try again (a redirect was recorded), 0 = give the reply
 * to the caller, or an error code.
 */
static int
redirected(an_store *st, rds_store *rs, rds_conn *cn, const redisReply *r,
		   char *ask_host, size_t ask_len, int *ask_port)
{
	rds_cluster *cl = rs->cluster;
	int			slot;
	int			port;
	char		host[256];
	int			idx;

	if (strncmp(r->str, "MOVED ", 6) == 0 || strncmp(r->str, "ASK ", 4) == 0)
	{
		int			ask = r->str[0] == 'A';

		if (cl == NULL)
		{
			an_store_fail(st, AN_E_CONFIG, "redis store %s is a node of a Redis Cluster (it answered %.80s)",
						  rs->conn.where, r->str);
			return an_store_hintf(st, "Add cluster=yes to the store URL; it may name several of the cluster's nodes.");
		}
		if (parse_redirect(r->str, ask ? 4 : 6, &slot, host, sizeof(host), &port) < 0)
			return an_store_fail(st, AN_E_STORE, "redis store %s answered %.120s", rs->conn.where, r->str);
		if (ask)
		{
			snprintf(ask_host, ask_len, "%s", host);
			*ask_port = port;
			return 1;
		}
		*ask_port = 0;
		if ((idx = rds_cluster_node(st, cl, &rs->conn, host, port)) < 0)
			return st->err.code;
		cl->slot_node[slot] = (unsigned char) (idx + 1);
		cl->moved = 1;
		return 1;
	}
	if (strncmp(r->str, "READONLY", 8) == 0)
	{
		an_store_fail(st, AN_E_CONNECT, "redis store %s: %s:%d is a replica, not the master (it answered READONLY)",
					  rs->conn.where, cn->host, cn->port);
		an_store_hintf(st, "After a failover the store finds the new master through Sentinel (redis+sentinel://) or the cluster's map (cluster=yes); a URL that names one server must name the master.");
		rds_conn_close(cn);
		cn->dropped = 1;
		if (cl)
			cl->stale = 1;
		return AN_E_CONNECT;
	}
	if (cl && (strncmp(r->str, "CLUSTERDOWN", 11) == 0 || strncmp(r->str, "TRYAGAIN", 8) == 0))
		cl->stale = 1;
	return 0;
}

/*
 * A call that has followed RDS_REDIRECTS_MAX redirects: a node that sends
 * it to itself, two nodes that send it to each other, a migration that
 * never ends.  Following on would spend the whole of timeout_ms going
 * round, so the call ends here and names the last hop.
 */
static int
redirect_loop(an_store *st, rds_store *rs, const rds_conn *from, const char *last)
{
	an_store_fail(st, AN_E_STORE,
				  "redis store %s: the cluster redirected one command %d times, the most anarchon follows in a call (the last: %s:%d answered %.80s)",
				  rs->conn.where, RDS_REDIRECTS_MAX, from->host, from->port, last);
	return an_store_hintf(st, "Its nodes send the job's hash slot round in a loop, or it moves faster than a call can follow: compare CLUSTER SLOTS on every node.");
}

int
rds_route(an_store *st, rds_store *rs, const int argc, const char **argv, const size_t *lens,
		  redisReply **reply)
{
	rds_cluster *cl = rs->cluster;
	char		ask_host[256] = "";
	int			ask_port = 0;
	char		last[128] = "";  /* the last redirect's text, for redirect_loop */

	*reply = NULL;
	if (cl && cl->moved)
	{
		cl->moved = 0;
		cl->stale = 1;
	}
	for (int tries = 0;; tries++)
	{
		rds_conn   *cn = &rs->conn;
		rds_batch	b;
		redisReply *rep[5] = {NULL};
		int			main;
		int			set = -1;
		int			wait = -1;
		int			generation;
		int			rc;

		b.n = 0;
		if (cl && ask_port)
		{
			int			idx = rds_cluster_node(st, cl, &rs->conn, ask_host, ask_port);

			if (idx < 0)
				return st->err.code;
			cn = &cl->node[idx];
			batch_words(&b, 0, 1, (const char *[]) {"ASKING"});
		}
		else if (cl && (rc = rds_cluster_route(st, rs, rs->hslot < 0 ? 0 : rs->hslot, &cn)) != AN_OK)
			return rc;
		main = b.n;
		batch_add(&b, argc, argv, lens);
		if (rs->replicas > 0 && strcmp(argv[0], "SCRIPT") != 0)
		{
			int64_t		left = an_deadline_left(&rs->deadline);

			if (rs->tag[0])
			{
				/* ASKING holds for one command: the write needs its own. */
				if (cl && ask_port)
					batch_words(&b, 1, 1, (const char *[]) {"ASKING"});
				snprintf(b.key, sizeof(b.key), "%s:synced", rs->tag);
				set = b.n;
				batch_words(&b, 2, 3, (const char *[]) {"SET", b.key, "1"});
			}
			/*
			 * Never WAIT 0, which waits for ever.  Redis ends a WAIT on its
			 * timer ticks (100 ms apart by default), so leave a quarter of the
			 * time left, and at least 150 ms, to read its answer.
			 */
			int64_t		margin = left / 4 > 150 ? left / 4 : 150;

			snprintf(b.wait_n, sizeof(b.wait_n), "%d", rs->replicas);
			snprintf(b.wait_ms, sizeof(b.wait_ms), "%lld", (long long) (left > margin ? left - margin : 1));
			wait = b.n;
			batch_words(&b, 3, 3, (const char *[]) {"WAIT", b.wait_n, b.wait_ms});
		}
		generation = cn->generation;
		/* A batch's script calls: kept to be sent ahead, or answered from what came back. */
		if (tries == 0 && ask_port == 0 && rs->ahead.mode != RDS_AHEAD_OFF && strcmp(argv[0], "EVALSHA") == 0)
		{
			if (rs->ahead.mode == RDS_AHEAD_RECORD)
				return rds_ahead_keep(st, &rs->ahead, cn, b.n, main, b.argc, b.argv, b.lens);
			if (rds_ahead_take(&rs->ahead, b.n, main, b.argc, b.argv, b.lens, rep))
				rc = AN_OK;
			else
				rc = rds_conn_pipeline(st, cn, &rs->deadline, b.n, b.argc, b.argv, b.lens, rep);
		}
		else
			rc = rds_conn_pipeline(st, cn, &rs->deadline, b.n, b.argc, b.argv, b.lens, rep);
		if (cn != &rs->conn)
		{
			/* What the store's resend and idmp cache go by, for a node's connection. */
			rs->conn.dropped = cn->dropped;
			if (cn->generation != generation)
				rs->conn.generation++;
		}
		if (rc != AN_OK)
		{
			if (cl)
				cl->stale = 1;
			return rc;
		}
		if (rep[main]->type == REDIS_REPLY_ERROR)
		{
			rc = redirected(st, rs, cn, rep[main], ask_host, sizeof(ask_host), &ask_port);
			snprintf(last, sizeof(last), "%s", rep[main]->str);
			if (rc == 0)
			{
				*reply = keep_one(rep, b.n, main);
				return AN_OK;
			}
			keep_one(rep, b.n, -1);
			if (rc != 1)
				return rc;
			if (tries + 1 >= RDS_REDIRECTS_MAX)
				return redirect_loop(st, rs, cn, last);
			continue;
		}
		if (wait >= 0 && (rc = judge_wait(st, rs, set >= 0 ? rep[set] : NULL, rep[wait])) != AN_OK)
		{
			keep_one(rep, b.n, -1);
			return rc;
		}
		*reply = keep_one(rep, b.n, main);
		return AN_OK;
	}
}
