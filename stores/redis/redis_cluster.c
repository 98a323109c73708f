/*
 * redis_cluster.c — the slot map of a Redis Cluster (cluster=yes).
 *
 *   redis://n1:7000,n2:7001,n3:7002?cluster=yes&replicas=1&...
 *
 * A cluster splits keys into 16384 hash slots, each served by one master.
 * All keys of a job carry the hash tag {<job>} (redis.h), so every command
 * and script of a call goes to one node, whose connection this file finds.
 * The map comes from CLUSTER SLOTS, asked of any node that answers (the
 * URL's nodes and every node met since); a MOVED answer corrects one slot at
 * once and has the whole map read again at the next call; a connection that
 * fails, a CLUSTERDOWN or a READONLY has it read again too (redis_route.c),
 * which is how a replica promoted by the cluster's failover is found.
 *
 * CLUSTER SLOTS rather than CLUSTER SHARDS: SHARDS came in Redis 7.0, and
 * SLOTS, deprecated but kept, answers on every server the project supports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc16.h"
#include "redis.h"

int
rds_key_hash_slot(const char *key, size_t len)
{
	const char *open = memchr(key, '{', len);

	/* Only what lies between the first '{' and the next '}' counts, when not empty. */
	if (open)
	{
		const char *close = memchr(open + 1, '}', len - (size_t) (open + 1 - key));

		if (close && close > open + 1)
		{
			key = open + 1;
			len = (size_t) (close - key);
		}
	}
	return (int) (an_crc16_xmodem(key, len) & (RDS_HASH_SLOTS - 1));
}

/*
 * A node met since the URL's that serves no slot now (a master that failed
 * over, an address that changed), for a new node to take its place: a
 * process that lives through many failovers must not run out of room.
 */
static int
unused_node(rds_cluster *cl)
{
	unsigned char used[RDS_NODES_MAX] = {0};

	for (int s = 0; s < RDS_HASH_SLOTS; s++)
		if (cl->slot_node[s])
			used[cl->slot_node[s] - 1] = 1;
	for (int i = cl->nseeds; i < cl->nodes.n; i++)
		if (!used[i])
		{
			rds_conn_close(&cl->node[i]);
			free(cl->node[i].host);
			return i;
		}
	return -1;
}

int
rds_cluster_node(an_store *st, rds_cluster *cl, const rds_conn *tmpl, const char *host, int port)
{
	rds_conn   *n;

	int			i;

	for (i = 0; i < cl->nodes.n; i++)
		if (cl->node[i].host && cl->node[i].port == port && strcmp(cl->node[i].host, host) == 0)
			return i;
	if (cl->nodes.n < RDS_NODES_MAX)
		i = cl->nodes.n++;
	else if ((i = unused_node(cl)) < 0)
	{
		an_store_fail(st, AN_E_STORE, "redis store %s: the cluster has more than %d masters, more than this store can follow",
					  tmpl->where, RDS_NODES_MAX - cl->nseeds);
		return -1;
	}
	n = &cl->node[i];
	*n = *tmpl;
	n->io = AN_CONN_NONE;
	n->reader = NULL;           /* its own connection, made when first needed */
	n->dropped = 0;
	n->generation = 0;
	n->next_time_ms = 0;
	n->port = port;
	if ((n->host = strdup(host)) == NULL)
	{
		/* Left in the table without an address, which every search skips. */
		n->port = 0;
		an_store_fail(st, AN_E_NOMEM, "out of memory");
		return -1;
	}
	return i;
}

/* One CLUSTER SLOTS entry, [start, end, [host, port, ...], replicas...], into the map. */
static int
map_range(an_store *st, rds_store *rs, const redisReply *e, const char *asked)
{
	rds_cluster *cl = rs->cluster;
	const redisReply *m;
	const char *host;
	int			idx;

	if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
		e->element[0]->type != REDIS_REPLY_INTEGER || e->element[1]->type != REDIS_REPLY_INTEGER ||
		(m = e->element[2])->type != REDIS_REPLY_ARRAY || m->elements < 2 ||
		m->element[0]->type != REDIS_REPLY_STRING || m->element[1]->type != REDIS_REPLY_INTEGER ||
		e->element[0]->integer < 0 || e->element[1]->integer >= RDS_HASH_SLOTS ||
		e->element[0]->integer > e->element[1]->integer)
		return an_store_fail(st, AN_E_STORE, "redis store %s gave an unexpected answer to CLUSTER SLOTS",
							 rs->conn.where);
	/* An empty host means "the address you reached me at". */
	host = m->element[0]->str[0] ? m->element[0]->str : asked;
	if ((idx = rds_cluster_node(st, cl, &rs->conn, host, (int) m->element[1]->integer)) < 0)
		return st->err.code;
	memset(cl->slot_node + e->element[0]->integer, idx + 1,
		   (size_t) (e->element[1]->integer - e->element[0]->integer + 1));
	return AN_OK;
}

/* Ask node i for the map; AN_OK once it is read (a node without an address is skipped). */
static int
map_from(an_store *st, void *ctx, int i, const an_deadline *d)
{
	rds_store  *rs = ctx;
	rds_cluster *cl = rs->cluster;
	const char *argv[] = {"CLUSTER", "SLOTS"};
	redisReply *r = NULL;
	char		asked[256];
	int			port = cl->node[i].port;
	int			rc;

	if (cl->node[i].host == NULL)
		return AN_ROTATE_SKIP;
	if ((rc = rds_conn_ensure(st, &cl->node[i], d)) != AN_OK ||
		(rc = rds_conn_command(st, &cl->node[i], d, 2, argv, &r)) != AN_OK)
		return rc;
	/* A copy: node i may give its place to another while the map is read (unused_node). */
	snprintf(asked, sizeof(asked), "%s", cl->node[i].host);
	if (r->type == REDIS_REPLY_ERROR)
	{
		int			plain = strstr(r->str, "cluster support disabled") != NULL;

		rc = an_store_fail(st, AN_E_CONFIG,
						   plain ? "redis store %s: %s:%d is not a cluster node (%.120s)" :
						   "redis store %s: %s:%d answered CLUSTER SLOTS with an error: %.120s",
						   rs->conn.where, asked, port, r->str);
		if (plain)
			an_store_hintf(st, "Remove cluster=yes from the store URL.");
		freeReplyObject(r);
		return rc;
	}
	if (r->type != REDIS_REPLY_ARRAY)
		rc = an_store_fail(st, AN_E_STORE, "redis store %s gave an unexpected answer to CLUSTER SLOTS",
						   rs->conn.where);
	memset(cl->slot_node, 0, sizeof(cl->slot_node));
	for (size_t k = 0; rc == AN_OK && k < r->elements; k++)
		rc = map_range(st, rs, r->element[k], asked);
	freeReplyObject(r);
	return rc;
}

/*
 * Read the map from the first node that answers: the URL's nodes first (the
 * operator's choice), then every node met since (rotate.h); a node that is
 * not a cluster node ends it (AN_E_CONFIG).
 */
static int
read_map(an_store *st, rds_store *rs)
{
	char		who[sizeof(rs->conn.where) + 16];
	int			rc;

	snprintf(who, sizeof(who), "redis store %s", rs->conn.where);
	rc = an_rotate(st, &rs->cluster->nodes, &rs->deadline, AN_ROTATE_STOP_CONFIG, map_from, rs, who, "cluster node");
	if (rc == AN_OK)
		rs->cluster->stale = 0;
	return rc;
}

int
rds_cluster_route(an_store *st, rds_store *rs, int hslot, rds_conn **out)
{
	rds_cluster *cl = rs->cluster;
	int			rc;

	if ((cl->stale || cl->slot_node[hslot] == 0) && (rc = read_map(st, rs)) != AN_OK)
		return rc;
	if (cl->slot_node[hslot] == 0)
	{
		cl->stale = 1;
		return an_store_fail(st, AN_E_STORE,
							 "redis store %s: no node of the cluster serves hash slot %d now (CLUSTER SLOTS): the cluster is failing over or not fully set up",
							 rs->conn.where, hslot);
	}
	*out = &cl->node[cl->slot_node[hslot] - 1];
	return AN_OK;
}

void
rds_cluster_free(rds_cluster *cl)
{
	for (int i = 0; i < cl->nodes.n; i++)
	{
		rds_conn_close(&cl->node[i]);
		free(cl->node[i].host);
	}
	free(cl);
}
