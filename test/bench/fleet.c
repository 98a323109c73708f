/*
 * fleet.c — a fleet of instances claiming the same jobs, for `make bench`
 * and doc/scale.md: I processes, each with its own connection to the store,
 * each claiming the same J jobs per tick for T ticks, all at once.
 *
 *   fleet URL I J T MODE BASE SERVER_PIDS
 *
 * URL is a store's URL, or "pg:CONNINFO" (CONNINFO may be empty: libpq's
 * PG* variables) for a PostgreSQL server with the extension, where a batch
 * is one anarchon_claim_many statement and a single claim one
 * anarchon_claim; the store's CPU is then each session's backend's, which
 * every instance reads from /proc itself before it disconnects, and
 * SERVER_PIDS is ignored.
 *
 * MODE is batch (a tick's J claims in one an_store_batch, which Redis sends
 * ahead in one write per server), single (J an_store_claim calls) or get
 * (Redis only: J GETs of keys of the same names, in one pipeline per tick:
 * the store's bare read, the losers' yardstick).  Tick t claims slot
 * BASE + t minutes.  SERVER_PIDS ("123,456" or "-") are the store's
 * processes, whose CPU time (utime + stime, /proc) is taken before and after.
 *
 * With FLEET_RETRY_MS=N in the environment, a batch or claim that fails (a
 * server killed, a failover) is sent again, with the same tokens, every
 * 50 ms for up to N ms: the store's resend rule makes that safe, and each
 * instance counts a (job, slot) it won once however often it was told so.
 *
 * It prints one line:
 *   calls claims elapsed_us p50_us p99_us won double missing cpu_ms retries max_us
 * where a call is a tick's batch (or one claim, or one tick's GETs), won is
 * the claims answered won, double the (job, slot) won more than once and
 * missing those won by none: the product's guarantee, counted over every
 * instance through shared memory.  It exits 1 when an instance failed.
 */
#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "anarchon.h"
#include "remote.h"
#include "store.h"
#include "url.h"

#include "../testutil.h"

typedef struct tick_ctx
{
	an_store   *st;
	const an_request *rqs;
	uint32_t   *wins;            /* shared: per (tick, job) */
	unsigned char *mine;         /* this instance's: won already counted */
	size_t		row;             /* this tick's first counter */
	long		won;
} tick_ctx;

static int
claim_one(an_store *st, void *arg, size_t i)
{
	tick_ctx   *c = arg;
	an_claim_result res;

	if (an_store_claim(st, &c->rqs[i], &res) != AN_OK)
		return st->err.code;
	if (res.outcome == AN_WON && !c->mine[c->row + i])
	{
		c->mine[c->row + i] = 1;
		__atomic_fetch_add(&c->wins[c->row + i], 1, __ATOMIC_RELAXED);
		c->won++;
	}
	return AN_OK;
}

static long
cpu_ms(const char *pids)
{
	long		total = 0;
	char	   *copy = strdup(pids),
			   *save = NULL;

	for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save))
	{
		char		path[64],
					buf[1024],
				   *s;
		FILE	   *f;
		unsigned long ut = 0,
					stime = 0;

		snprintf(path, sizeof(path), "/proc/%s/stat", p);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(buf, sizeof(buf), f) && (s = strrchr(buf, ')')) != NULL &&
			sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &stime) == 2)
			total += (long) ((ut + stime) * 1000 / (unsigned long) sysconf(_SC_CLK_TCK));
		fclose(f);
	}
	free(copy);
	return total;
}

/* A PostgreSQL session's claims of one tick: batch, or the single claim of job i (i < 0: all, one by one). */
static int
pg_claims(PGconn *pg, tick_ctx *c, int jobs, int64_t slot, int single, long *lat)
{
	char		slotbuf[24];

	snprintf(slotbuf, sizeof(slotbuf), "%lld", (long long) slot);
	if (!single)
	{
		char	   *arr;
		size_t		len = 2;
		PGresult   *r;
		const char *params[3];

		for (int j = 0; j < jobs; j++)
			len += strlen(c->rqs[j].job) + 1;
		arr = malloc(len + 1);
		strcpy(arr, "{");
		for (int j = 0; j < jobs; j++)
		{
			strcat(arr, c->rqs[j].job);
			strcat(arr, j + 1 < jobs ? "," : "}");
		}
		params[0] = arr;
		params[1] = slotbuf;
		params[2] = c->rqs[0].token;
		r = PQexecPrepared(pg, "many", 3, params, NULL, NULL, 0);
		free(arr);
		if (PQresultStatus(r) != PGRES_TUPLES_OK)
		{
			fprintf(stderr, "anarchon_claim_many: %s", PQerrorMessage(pg));
			PQclear(r);
			return -1;
		}
		for (int k = 0; k < PQntuples(r); k++)
		{
			size_t		i = (size_t) atol(PQgetvalue(r, k, 0) + 1);

			if (!c->mine[c->row + i])
			{
				c->mine[c->row + i] = 1;
				__atomic_fetch_add(&c->wins[c->row + i], 1, __ATOMIC_RELAXED);
				c->won++;
			}
		}
		PQclear(r);
		return 0;
	}
	for (int j = 0; j < jobs; j++)
	{
		const char *params[3] = {c->rqs[j].job, slotbuf, c->rqs[j].token};
		long		t0 = (long) mono_us();
		PGresult   *r = PQexecPrepared(pg, "one", 3, params, NULL, NULL, 0);

		if (PQresultStatus(r) != PGRES_TUPLES_OK)
		{
			fprintf(stderr, "anarchon_claim: %s", PQerrorMessage(pg));
			PQclear(r);
			return -1;
		}
		if (strcmp(PQgetvalue(r, 0, 0), "won") == 0 && !c->mine[c->row + (size_t) j])
		{
			c->mine[c->row + (size_t) j] = 1;
			__atomic_fetch_add(&c->wins[c->row + (size_t) j], 1, __ATOMIC_RELAXED);
			c->won++;
		}
		PQclear(r);
		lat[j] = (long) mono_us() - t0;
	}
	return 0;
}

/* The CPU time (ms) of this session's backend. */
static long
pg_backend_cpu(PGconn *pg)
{
	char		pid[24];

	snprintf(pid, sizeof(pid), "%d", PQbackendPID(pg));
	return cpu_ms(pid);
}

static int
cmp_long(const void *a, const void *b)
{
	long		x = *(const long *) a,
				y = *(const long *) b;

	return (x > y) - (x < y);
}

/* One instance: its calls' latencies (µs) into lat, its wins into the shared counters. */
/* Call fn until it succeeds or the retry budget is spent; failures counted in *retries. */
static int
with_retry(int (*fn) (tick_ctx *, size_t), tick_ctx *c, size_t i, long budget_ms, long *retries)
{
	long		start = (long) mono_ms();

	while (fn(c, i) != AN_OK)
	{
		if ((long) mono_ms() - start >= budget_ms)
			return -1;
		(*retries)++;
		sleep_ms(50);
	}
	return 0;
}

static const an_settings *batch_settings;

static int
do_batch(tick_ctx *c, size_t n)
{
	return an_store_batch(c->st, batch_settings, c->rqs, n, claim_one, c);
}

static int
do_one(tick_ctx *c, size_t i)
{
	return claim_one(c->st, c, i);
}

static int
instance(int id, const char *url, int jobs, int ticks, const char *mode, int64_t base,
		 uint32_t *wins, long *lat, long *won, long *retries, long *cpu, int ready, int go)
{
	static an_host host = {.now_ms = host_now_ms};
	an_err		err;
	char		c;
	an_settings s;
	an_request *rqs = calloc((size_t) jobs, sizeof(an_request));
	char	  (*names)[32] = calloc((size_t) jobs, 32);
	char		token[40];
	long		ncall = 0,
				budget = getenv("FLEET_RETRY_MS") ? atol(getenv("FLEET_RETRY_MS")) : 0;
	unsigned char *mine = calloc((size_t) jobs * (size_t) ticks, 1);
	an_store	st;
	redisContext *rc = NULL;
	PGconn	   *pg = NULL;

	an_settings_default(&s);
	s.overlap_skip = 0;
	s.lease_ms = 600000;
	s.max_late_ms = AN_MAX_LATE_MS_MAX;
	snprintf(token, sizeof(token), "fleet-%d", id);
	for (int j = 0; j < jobs; j++)
	{
		snprintf(names[j], 32, "f%d", j);
		rqs[j] = (an_request) {.job = names[j], .token = token, .settings = &s};
	}
	if (strncmp(url, "pg:", 3) == 0)
	{
		PGresult   *r;

		pg = PQconnectdb(url + 3);
		if (PQstatus(pg) != CONNECTION_OK)
			die("connect", PQerrorMessage(pg));
		PQclear(PQexec(pg, "SET anarchon.overlap = 'allow'; SET anarchon.lease_ms = 600000"));
		r = PQprepare(pg, "many", "SELECT job FROM anarchon_claim_many($1::text[], $2::bigint, $3) WHERE outcome = 'won'",
					  3, NULL);
		PQclear(r);
		r = PQprepare(pg, "one", "SELECT anarchon_claim($1, $2::bigint, $3)", 3, NULL);
		PQclear(r);
		*cpu = -pg_backend_cpu(pg);
	}
	else if (strcmp(mode, "get") == 0)
	{
		an_url		u;

		if (an_url_parse(url, &u, &err) < 0)
			die("url", err.msg);
		rc = redisConnect(u.host, u.port ? u.port : 6379);
		an_url_free(&u);
		if (rc == NULL || rc->err)
			die("connect", rc ? rc->errstr : "out of memory");
	}
	else
	{
		const an_store_methods *m = an_remote_find(url, &err);

		if (m == NULL)
			die("store", err.msg);
		an_store_init(&st, m, &host);
		if (m->open(&st, url, NULL) != AN_OK)
			die("open", st.err.msg);
	}
	/* Connected: say so, and wait for the start of all. */
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		return 1;
	for (int t = 0; t < ticks; t++)
	{
		int64_t		slot = base + (int64_t) t * 60000;
		tick_ctx	ctx = {&st, rqs, wins, mine, (size_t) t * (size_t) jobs, 0};
		long		t0;

		for (int j = 0; j < jobs; j++)
			rqs[j].slot = slot;
		t0 = (long) mono_us();
		if (pg)
		{
			int			single = strcmp(mode, "single") == 0;

			if (pg_claims(pg, &ctx, jobs, slot, single, single ? lat + ncall : NULL) != 0)
				die("claim", "PostgreSQL refused it (above)");
			if (single)
				ncall += jobs;
			else
				lat[ncall++] = (long) mono_us() - t0;
		}
		else if (rc)
		{
			redisReply *r;

			for (int j = 0; j < jobs; j++)
				redisAppendCommand(rc, "GET cron:{%s}:run:%lld", names[j], (long long) slot);
			for (int j = 0; j < jobs; j++)
			{
				if (redisGetReply(rc, (void **) &r) != REDIS_OK)
					die("GET", rc->errstr);
				freeReplyObject(r);
			}
			lat[ncall++] = (long) mono_us() - t0;
		}
		else if (strcmp(mode, "batch") == 0)
		{
			batch_settings = &s;
			if (with_retry(do_batch, &ctx, (size_t) jobs, budget, retries) != 0)
				die("batch", st.err.msg);
			lat[ncall++] = (long) mono_us() - t0;
		}
		else
			for (int j = 0; j < jobs; j++)
			{
				t0 = (long) mono_us();
				if (with_retry(do_one, &ctx, (size_t) j, budget, retries) != 0)
					die("claim", st.err.msg);
				lat[ncall++] = (long) mono_us() - t0;
			}
		*won += ctx.won;
	}
	if (pg)
	{
		*cpu += pg_backend_cpu(pg);
		PQfinish(pg);
	}
	else if (rc)
		redisFree(rc);
	else
		st.m->close(&st);
	free(rqs);
	free(names);
	free(mine);
	return 0;
}

int
main(int argc, char **argv)
{
	int			inst,
				jobs,
				ticks,
				pipefd[2],
				readyfd[2],
				failed = 0;
	const char *mode;
	int64_t		base;
	size_t		cells,
				per;
	uint32_t   *wins;
	long	   *lat,
			   *won,
			   *retries,
			   *cpu,
				nretries = 0,
				cpu0,
				cpu1,
				t0,
				t1,
				ncalls,
				nwon = 0,
				dbl = 0,
				missing = 0;
	pid_t	   *pids;

	if (argc != 8)
	{
		fprintf(stderr, "usage: fleet URL INSTANCES JOBS TICKS batch|single|get BASE_MS SERVER_PIDS\n");
		return 2;
	}
	inst = atoi(argv[2]);
	jobs = atoi(argv[3]);
	ticks = atoi(argv[4]);
	mode = argv[5];
	base = atoll(argv[6]);
	if (inst < 1 || jobs < 1 || ticks < 1)
		die("usage", "INSTANCES, JOBS and TICKS must be positive");
	cells = (size_t) jobs * (size_t) ticks;
	per = strcmp(mode, "single") == 0 ? cells : (size_t) ticks;
	wins = mmap(NULL, cells * sizeof(uint32_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	lat = mmap(NULL, (size_t) inst * per * sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	won = mmap(NULL, (size_t) inst * sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	retries = mmap(NULL, (size_t) inst * sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cpu = mmap(NULL, (size_t) inst * sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pids = calloc((size_t) inst, sizeof(pid_t));
	if (wins == MAP_FAILED || lat == MAP_FAILED || won == MAP_FAILED || retries == MAP_FAILED || cpu == MAP_FAILED ||
		pids == NULL ||
		pipe(pipefd) != 0 ||
		pipe(readyfd) != 0)
		die("memory", "cannot map the counters");
	for (int i = 0; i < inst; i++)
	{
		if ((pids[i] = fork()) < 0)
			die("fork", "cannot start an instance");
		if (pids[i] == 0)
		{
			close(pipefd[1]);
			close(readyfd[0]);
			_exit(instance(i, argv[1], jobs, ticks, mode, base, wins, lat + (size_t) i * per, &won[i],
						   &retries[i], &cpu[i], readyfd[1], pipefd[0]));
		}
	}
	close(pipefd[0]);
	close(readyfd[1]);
	/* Every instance connected (or ended: its end of the pipe closed), then all start together. */
	for (int i = 0; i < inst; i++)
	{
		char		c;

		if (read(readyfd[0], &c, 1) != 1)
			break;
	}
	cpu0 = cpu_ms(argv[7]);
	t0 = (long) mono_us();
	for (int i = 0; i < inst; i++)
		if (write(pipefd[1], "g", 1) != 1)
			die("start", "cannot start the instances");
	close(pipefd[1]);
	for (int i = 0; i < inst; i++)
	{
		int			status;

		waitpid(pids[i], &status, 0);
		failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	t1 = (long) mono_us();
	cpu1 = cpu_ms(argv[7]);
	ncalls = (long) ((size_t) inst * per);
	qsort(lat, (size_t) ncalls, sizeof(long), cmp_long);
	for (int i = 0; i < inst; i++)
	{
		nwon += won[i];
		nretries += retries[i];
		/* PostgreSQL: the backends' own CPU, as each instance read it. */
		if (strncmp(argv[1], "pg:", 3) == 0)
			cpu1 += cpu[i];
	}
	for (size_t k = 0; k < cells && strcmp(mode, "get") != 0; k++)
	{
		dbl += wins[k] > 1;
		missing += wins[k] == 0;
	}
	printf("%ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld\n", ncalls, (long) inst * (long) cells, t1 - t0,
		   lat[ncalls / 2], lat[ncalls * 99 / 100], nwon, dbl, missing, cpu1 - cpu0, nretries, lat[ncalls - 1]);
	return failed;
}
