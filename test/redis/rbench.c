/*
 * rbench.c — one client of the Redis bench: claims for SECONDS, then prints
 * "COUNT ELAPSED_US" and writes each call's latency (µs) to LATFILE.
 *
 *   rbench setnx  URL SECONDS ID LATFILE   SET key NX PX 60000 from C (baseline)
 *   rbench c      URL SECONDS ID LATFILE   claim through the store interface
 *   rbench sqlite URL SECONDS ID LATFILE   SELECT anarchon_claim(...) in SQLite
 *                                          (extension: $RBENCH_EXT)
 *   rbench pg     SERVER SECONDS ID LATFILE SELECT anarchon_claim(...) through
 *                                          PostgreSQL (PG* environment; SERVER
 *                                          is the foreign server's name)
 *   rbench pg-floor - SECONDS ID LATFILE   the same prepared call with the same
 *                                          three arguments, answered by
 *                                          PostgreSQL alone (no store): what
 *                                          the driver and a round trip cost
 *
 * Every call is a new run: a fresh slot of one of 1000 jobs per client, so
 * each job's slots rise (stream-id) and each job's stream stays short
 * (script), as with many jobs on one Redis.  overlap is 'allow'.
 */
#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "anarchon.h"
#include "remote.h"
#include "store.h"
#include "url.h"

#include "../testutil.h"

#define JOBS 1000

/* The n-th call of client id: its job, slot and token. */
static void
nth(int id, long n, int64_t base, char *job, size_t joblen, int64_t *slot, char *token, size_t toklen)
{
	snprintf(job, joblen, "bench-%d-%ld", id, n % JOBS);
	*slot = base + n / JOBS * 1000;	/* slots are whole seconds */
	snprintf(token, toklen, "t%d-%ld", id, n);
}

/* One operation of each mode; returns 0 on success. */
typedef int (*op_fn) (void *state, const char *job, int64_t slot, const char *token);

static int
op_setnx(void *state, const char *job, int64_t slot, const char *token)
{
	char		key[256];
	redisReply *r;
	int			ok;

	snprintf(key, sizeof(key), "bench:{%s}:%lld", job, (long long) slot);
	r = redisCommand(state, "SET %s %s NX PX 60000", key, token);
	ok = r && r->type != REDIS_REPLY_ERROR;
	if (r)
		freeReplyObject(r);
	return ok ? 0 : -1;
}

static an_settings settings;
static int bench_id;              /* this client's number: its jobs are bench-<id>-<n> */

static int
op_c(void *state, const char *job, int64_t slot, const char *token)
{
	an_store   *st = state;
	an_request	rq = {.job = job,.slot = slot,.token = token,.settings = &settings};
	an_claim_result res;

	if (st->m->validate(st, &settings) != AN_OK || st->m->claim(st, &rq, &res) != AN_OK)
		die("claim", st->err.msg);
	return 0;
}

static int
op_sqlite(void *state, const char *job, int64_t slot, const char *token)
{
	sqlite3_stmt *s = state;

	sqlite3_bind_text(s, 1, job, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, slot);
	sqlite3_bind_text(s, 3, token, -1, SQLITE_STATIC);
	if (sqlite3_step(s) != SQLITE_ROW)
		die("sqlite claim", sqlite3_errmsg(sqlite3_db_handle(s)));
	sqlite3_reset(s);
	return 0;
}

static int
op_pg(void *state, const char *job, int64_t slot, const char *token)
{
	char		slotbuf[24];
	const char *params[3] = {job, slotbuf, token};
	PGresult   *r;

	snprintf(slotbuf, sizeof(slotbuf), "%lld", (long long) slot);
	r = PQexecPrepared(state, "claim", 3, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		die("pg claim", PQerrorMessage(state));
	PQclear(r);
	return 0;
}

static void *
setup(const char *mode, const char *target, op_fn *op)
{
	static an_host host = {.now_ms = host_now_ms};

	an_settings_default(&settings);
	settings.overlap_skip = 0;
	if (strcmp(mode, "setnx") == 0)
	{
		an_url		u;
		an_err		err;
		redisContext *c;

		if (an_url_parse(target, &u, &err) < 0)
			die("url", err.msg);
		c = redisConnect(u.host, u.port ? u.port : 6379);
		an_url_free(&u);
		if (c == NULL || c->err)
			die("connect", c ? c->errstr : "out of memory");
		*op = op_setnx;
		return c;
	}
	if (strcmp(mode, "c") == 0)
	{
		an_store   *st = calloc(1, sizeof(*st));
		an_err		err;
		const an_store_methods *m = an_remote_find(target, &err);

		if (m == NULL)
			die("store", err.msg);
		an_store_init(st, m, &host);
		if (m->open(st, target, NULL) != AN_OK)
			die("open", st->err.msg);
		*op = op_c;
		return st;
	}
	if (strcmp(mode, "sqlite") == 0)
	{
		sqlite3    *db;
		sqlite3_stmt *s;
		char	   *err = NULL;
		char		sql[1200];

		if (sqlite3_open(":memory:", &db) != SQLITE_OK)
			die("sqlite", "cannot open");
		sqlite3_enable_load_extension(db, 1);
		if (sqlite3_load_extension(db, getenv("RBENCH_EXT"), NULL, &err) != SQLITE_OK)
			die("load extension", err ? err : "?");
		snprintf(sql, sizeof(sql), "SELECT anarchon_config('overlap', 'allow'), anarchon_config('store', '%s')", target);
		if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
			die("store", err ? err : "?");
		if (sqlite3_prepare_v2(db, "SELECT anarchon_claim(?1, ?2, ?3)", -1, &s, NULL) != SQLITE_OK)
			die("prepare", sqlite3_errmsg(db));
		*op = op_sqlite;
		return s;
	}
	if (strcmp(mode, "pg") == 0 || strcmp(mode, "pg-floor") == 0)
	{
		int			floor = strcmp(mode, "pg-floor") == 0;
		PGconn	   *c = PQconnectdb("");
		PGresult   *r;
		char		sql[300];

		if (PQstatus(c) != CONNECTION_OK)
			die("pg connect", PQerrorMessage(c));
		snprintf(sql, sizeof(sql), "SET anarchon.store = '%s'; SET anarchon.overlap = 'allow'", target);
		r = PQexec(c, floor ? "SELECT 1" : sql);
		if (PQresultStatus(r) != (floor ? PGRES_TUPLES_OK : PGRES_COMMAND_OK))
			die("pg set", PQerrorMessage(c));
		PQclear(r);
		r = PQprepare(c, "claim", floor ? "SELECT length($1) + $2::bigint + length($3)"
					  : "SELECT anarchon_claim($1, $2::bigint, $3)", 3, NULL);
		if (PQresultStatus(r) != PGRES_COMMAND_OK)
			die("pg prepare", PQerrorMessage(c));
		PQclear(r);
		/*
		 * The client's jobs are owned before it is timed, as a fleet's are
		 * after their first claim: otherwise a run of a few seconds measures
		 * mostly the first claims, each of which commits a new owner.
		 */
		snprintf(sql, sizeof(sql), "SELECT anarchon.set_job_owner('bench-%d-' || i, current_user::regrole) "
				 "FROM generate_series(0, %d) AS i", bench_id, JOBS - 1);
		r = PQexec(c, floor ? "SELECT 1" : sql);
		if (PQresultStatus(r) != PGRES_TUPLES_OK)
			die("pg owners", PQerrorMessage(c));
		PQclear(r);
		*op = op_pg;
		return c;
	}
	die("mode", "expected setnx, c, sqlite, pg or pg-floor");
	return NULL;
}

int
main(int argc, char **argv)
{
	op_fn		op = NULL;
	void	   *state;
	FILE	   *lat;
	int64_t		start, end, t0;
	int64_t		base;
	long		n = 0;
	int			id;

	if (argc != 6)
		die("usage", "rbench setnx|c|sqlite|pg|pg-floor URL|SERVER|- SECONDS ID LATFILE");
	id = bench_id = atoi(argv[4]);
	if ((lat = fopen(argv[5], "w")) == NULL)
		die("latency file", argv[5]);
	state = setup(argv[1], argv[2], &op);
	base = host_now_ms(NULL) / 1000 * 1000;
	start = mono_us();
	end = start + (int64_t) atoi(argv[3]) * 1000000;
	for (t0 = start; t0 < end; n++)
	{
		char		job[64];
		char		token[64];
		int64_t		slot;
		int64_t		t1;

		nth(id, n, base, job, sizeof(job), &slot, token, sizeof(token));
		if (op(state, job, slot, token) != 0)
			die("operation", "failed");
		t1 = mono_us();
		fprintf(lat, "%lld\n", (long long) (t1 - t0));
		t0 = t1;
	}
	printf("%ld %lld\n", n, (long long) (t0 - start));
	fclose(lat);
	return 0;
}
