/*
 * redis_ahead.c — a batch's claims sent ahead, in one round trip per server
 * (anarchon_claim_many, anarchon cron's second).
 *
 * The strategies build and judge their own commands (redis_lease.c and the
 * others); nothing of that is written twice here.  A batch runs each claim
 * of the strategy twice over:
 *
 *   record  the claim runs as ever up to its first script call (EVALSHA):
 *           that command, and the route's own [SET synced, WAIT] after it,
 *           is kept instead of sent, with the connection it would go to,
 *           and the claim ends there.  Commands before it (SCRIPT LOAD, the
 *           cluster's map) are sent as ever.
 *   send    the kept commands go out, each server's in one write, and their
 *           replies are kept with them.
 *   replay  the host's claims run as ever; a command byte for byte equal to
 *           one kept is answered with its kept replies, without a round
 *           trip, and everything after it (a redirect, NOSCRIPT, the WAIT's
 *           judgement, the strategy's reading of the answer) happens as for
 *           an answer that came over the wire.
 *
 * A kept command that got no reply (the connection failed, the server
 * closed it) is simply sent again when the claim is replayed: the same
 * claim with the same token, which every strategy answers as the token's
 * own if the first copy was taken (the store's resend rule).  A claim the
 * host does not replay in the end (a job that failed its host's checks)
 * was never sent: the host checks the requests before the batch.
 */
#include <stdlib.h>
#include <string.h>

#include "redis.h"

/* One kept command and the route's after it, with its replies. */
struct rds_ahead_entry
{
	rds_conn   *cn;
	int			ncmd;
	int			main;            /* which of the ncmd is the strategy's */
	int			argc[RDS_AHEAD_CMDS];
	char	  **argv[RDS_AHEAD_CMDS];	/* copies, each argv[k] one block with its strings */
	size_t	   *lens[RDS_AHEAD_CMDS];
	redisReply *rep[RDS_AHEAD_CMDS];	/* all set, or none */
	int			taken;
};

/* A copy of one command: its argv, lens and bytes in one block. */
static int
copy_cmd(struct rds_ahead_entry *e, int k, int argc, const char **argv, const size_t *lens)
{
	size_t		bytes = 0;
	char	   *block,
			   *p;

	for (int i = 0; i < argc; i++)
		bytes += lens[i] + 1;
	block = malloc(argc * (sizeof(char *) + sizeof(size_t)) + bytes);
	if (block == NULL)
		return -1;
	e->argv[k] = (char **) block;
	e->lens[k] = (size_t *) (block + argc * sizeof(char *));
	p = block + argc * (sizeof(char *) + sizeof(size_t));
	for (int i = 0; i < argc; i++)
	{
		memcpy(p, argv[i], lens[i]);
		p[lens[i]] = '\0';
		e->argv[k][i] = p;
		e->lens[k][i] = lens[i];
		p += lens[i] + 1;
	}
	e->argc[k] = argc;
	return 0;
}

static void
free_entry(struct rds_ahead_entry *e)
{
	for (int k = 0; k < e->ncmd; k++)
	{
		free(e->argv[k]);
		if (e->rep[k])
			freeReplyObject(e->rep[k]);
	}
	memset(e, 0, sizeof(*e));
}

void
rds_ahead_clear(rds_ahead *a)
{
	for (size_t i = 0; i < a->n; i++)
		free_entry(&a->e[i]);
	free(a->e);
	memset(a, 0, sizeof(*a));
}

int
rds_ahead_keep(an_store *st, rds_ahead *a, rds_conn *cn, int ncmd, int main,
			   const int *argc, const char **const *argv, const size_t *const *lens)
{
	struct rds_ahead_entry *e;

	if (ncmd > RDS_AHEAD_CMDS)
		return an_store_fail(st, AN_E_INTERNAL, "a claim sent ahead has too many commands");
	if (a->n == a->cap)
	{
		size_t		cap = a->cap ? 2 * a->cap : 64;
		struct rds_ahead_entry *grown = realloc(a->e, cap * sizeof(*grown));

		if (grown == NULL)
			return an_store_fail(st, AN_E_NOMEM, "out of memory");
		a->e = grown;
		a->cap = cap;
	}
	e = &a->e[a->n];
	memset(e, 0, sizeof(*e));
	e->cn = cn;
	e->main = main;
	for (int k = 0; k < ncmd; k++, e->ncmd++)
		if (copy_cmd(e, k, argc[k], (const char **) argv[k], lens[k]) != 0)
		{
			free_entry(e);
			return an_store_fail(st, AN_E_NOMEM, "out of memory");
		}
	a->n++;
	/* Not an error of the claim's: the record pass ends each claim here (redis_store.c). */
	return an_store_fail(st, AN_E_INTERNAL, "kept to be sent ahead");
}

void
rds_ahead_send(an_store *st, rds_store *rs, rds_ahead *a)
{
	size_t		total = 0;
	int		   *argc;
	const char ***argv;
	const size_t **lens;
	redisReply **rep;

	for (size_t i = 0; i < a->n; i++)
		total += (size_t) a->e[i].ncmd;
	argc = malloc(total * sizeof(int));
	argv = malloc(total * sizeof(*argv));
	lens = malloc(total * sizeof(*lens));
	rep = calloc(total ? total : 1, sizeof(*rep));
	/* Each server's commands in one write, in the order they were kept. */
	for (size_t first = 0; argc && argv && lens && rep && first < a->n; first++)
	{
		rds_conn   *cn = a->e[first].cn;
		int			m = 0;

		if (cn == NULL)
			continue;
		for (size_t i = first; i < a->n; i++)
			if (a->e[i].cn == cn)
				for (int k = 0; k < a->e[i].ncmd; k++, m++)
				{
					argc[m] = a->e[i].argc[k];
					argv[m] = (const char **) a->e[i].argv[k];
					lens[m] = a->e[i].lens[k];
				}
		an_store_clear(st);
		if (rds_conn_pipeline(st, cn, &rs->deadline, m, argc, argv, lens, rep) != AN_OK)
		{
			/* No reply kept: their claims are sent again, one by one, when replayed. */
			if (rs->cluster)
				rs->cluster->stale = 1;
			memset(rep, 0, (size_t) m * sizeof(*rep));
		}
		m = 0;
		for (size_t i = first; i < a->n; i++)
			if (a->e[i].cn == cn)
			{
				for (int k = 0; k < a->e[i].ncmd; k++, m++)
					a->e[i].rep[k] = rep[m];
				/* Done with this server. */
				if (i != first)
					a->e[i].cn = NULL;
			}
		a->e[first].cn = NULL;
	}
	an_store_clear(st);
	free(argc);
	free(argv);
	free(lens);
	free(rep);
}

/* Is the kept entry e the command (ncmd, main, argc, argv, lens), byte for byte? */
static int
same(const struct rds_ahead_entry *e, int ncmd, int main, const int *argc, const char **const *argv,
	 const size_t *const *lens)
{
	if (e->taken || e->ncmd != ncmd || e->main != main || e->rep[main] == NULL || e->argc[main] != argc[main])
		return 0;
	for (int i = 0; i < argc[main]; i++)
		if (e->lens[main][i] != lens[main][i] || memcmp(e->argv[main][i], argv[main][i], lens[main][i]) != 0)
			return 0;
	return 1;
}

int
rds_ahead_take(rds_ahead *a, int ncmd, int main, const int *argc, const char **const *argv,
			   const size_t *const *lens, redisReply **rep)
{
	/* The host replays in the order it gave: the next one first. */
	for (size_t j = 0; j < a->n; j++)
	{
		size_t		i = (a->next + j) % a->n;
		struct rds_ahead_entry *e = &a->e[i];

		if (!same(e, ncmd, main, argc, argv, lens))
			continue;
		for (int k = 0; k < ncmd; k++)
		{
			rep[k] = e->rep[k];
			e->rep[k] = NULL;
		}
		e->taken = 1;
		a->next = i + 1;
		return 1;
	}
	return 0;
}
