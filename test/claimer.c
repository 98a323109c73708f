/*
 * claimer.c — one instance of an application using anarchon on SQLite.
 *
 * The contention and takeover tests, the demo and the bench run many of these
 * as separate processes against one database file, the way a fleet of
 * replicas would.  Every mode loads the extension and talks to it only through
 * its SQL functions.
 *
 *   claimer contend DB JOB FIRST NSLOTS STEP       claim every slot once; print "SLOT OUTCOME"
 *   claimer hold DB JOB SLOT                       claim; if won, print "won TOKEN" and hang
 *   claimer backup DB JOB SLOT                     check until expired, claim; print the result
 *   claimer demo DB NAME SECONDS PERIOD_MS [crash] run a schedule; "crash" dies once mid-run
 *   claimer bench DB SECONDS ID KIND LATFILE       KIND: claim|insert|check|select; print ops
 *   claimer log DB JOB SLOT0 N STEP TRIES TAG WALL0 WALL_STEP
 *                                                  the fault suite's claimer through SQLite:
 *                                                  one line of its log per answer
 *
 * Settings may be passed as ANARCHON_<NAME>=value in the environment
 * (e.g. ANARCHON_OVERLAP=allow), applied with anarchon_config.
 */
#include <signal.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

static sqlite3 *db;

/* A statement that failed: what it was and what SQLite said. */
static void
die_db(const char *what)
{
	die(what, db ? sqlite3_errmsg(db) : "no database");
}

static sqlite3_stmt *
prepare(const char *sql)
{
	sqlite3_stmt *s;

	if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK)
		die_db(sql);
	return s;
}

/* Run a statement with text/int64 arguments given as a format ("tI": text, int64). */
static const char *
run(sqlite3_stmt *s, const char *fmt, ...)
{
	static char result[128];
	va_list		ap;
	int			rc;

	sqlite3_reset(s);
	va_start(ap, fmt);
	for (int i = 0; fmt[i]; i++)
	{
		if (fmt[i] == 't')
			sqlite3_bind_text(s, i + 1, va_arg(ap, const char *), -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_int64(s, i + 1, va_arg(ap, int64_t));
	}
	va_end(ap);
	result[0] = '\0';
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if (result[0] == '\0' && sqlite3_column_text(s, 0))
			snprintf(result, sizeof(result), "%s", (const char *) sqlite3_column_text(s, 0));
	if (rc != SQLITE_DONE)
		die_db(sqlite3_sql(s));
	return result;
}

static void
exec(const char *sql)
{
	char	   *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
	{
		fprintf(stderr, "claimer: %s: %s\n", sql, err);
		exit(2);
	}
}

/* Apply ANARCHON_<SETTING> variables of the environment. */
static void
configure(void)
{
	static const char *names[] = {"lease_ms", "max_late_ms", "attempts", "overlap", "busy_timeout_ms", "store", "stats"};
	sqlite3_stmt *s = prepare("SELECT anarchon_config(?1, ?2)");

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
	{
		char		var[64];
		const char *v;

		snprintf(var, sizeof(var), "ANARCHON_%s", names[i]);
		for (char *c = var; *c; c++)
			if (*c >= 'a' && *c <= 'z')
				*c = (char) (*c - 'a' + 'A');
		if ((v = getenv(var)) != NULL)
			run(s, "tt", names[i], v);
	}
	sqlite3_finalize(s);
}

static void
open_db(const char *path)
{
	char	   *err = NULL;
	const char *ext = getenv("ANARCHON_EXTENSION");

	if (sqlite3_open(path, &db) != SQLITE_OK)
		die_db("open");
	sqlite3_busy_timeout(db, 60000);
	sqlite3_enable_load_extension(db, 1);
	if (sqlite3_load_extension(db, (ext && *ext) ? ext : "./sqlite/anarchon", "sqlite3_anarchon_init", &err) != SQLITE_OK)
	{
		fprintf(stderr, "claimer: cannot load the extension: %s\n", err);
		exit(2);
	}
	configure();
}

static void
new_token(sqlite3_stmt *tok, char *out, size_t len)
{
	snprintf(out, len, "%s", run(tok, ""));
}

/* The attempt number of a run (the table exists once anything was claimed). */
static const char *
attempt_of(const char *job, int64_t slot)
{
	static sqlite3_stmt *attempt;

	if (attempt == NULL)
		attempt = prepare("SELECT attempt FROM anarchon_runs WHERE job = ?1 AND slot = ?2");
	return run(attempt, "tI", job, slot);
}

/* contend: claim slots FIRST, FIRST+STEP, … with a fresh token each; finish what we win. */
static int
mode_contend(char **argv)
{
	const char *job = argv[3];
	int64_t		first = atoll(argv[4]);
	int			n = atoi(argv[5]);
	int64_t		step = atoll(argv[6]);
	sqlite3_stmt *claim = prepare("SELECT anarchon_claim(?1, ?2, ?3)");
	sqlite3_stmt *finish = prepare("SELECT anarchon_finish(?1, ?2, ?3)");
	sqlite3_stmt *tok = prepare("SELECT anarchon_token()");
	char		token[64];

	for (int i = 0; i < n; i++)
	{
		int64_t		slot = first + i * step;
		char		outcome[32];

		new_token(tok, token, sizeof(token));
		snprintf(outcome, sizeof(outcome), "%s", run(claim, "tIt", job, slot, token));
		printf("%lld %s\n", (long long) slot, outcome);
		if (strcmp(outcome, "won") == 0 && strcmp(run(finish, "tIt", job, slot, token), "1") != 0)
		{
			fprintf(stderr, "claimer: finish of a won slot was refused\n");
			return 1;
		}
	}
	return 0;
}

/* hold: win the slot, say so, then hang until killed (a runner that dies mid-run). */
static int
mode_hold(char **argv)
{
	sqlite3_stmt *tok = prepare("SELECT anarchon_token()");
	char		token[64];
	const char *outcome;

	new_token(tok, token, sizeof(token));
	outcome = run(prepare("SELECT anarchon_claim(?1, ?2, ?3)"), "tIt", argv[3],
				  (int64_t) atoll(argv[4]), token);
	printf("%s %s\n", outcome, token);
	fflush(stdout);
	if (strcmp(outcome, "won") != 0)
		return 1;
	for (;;)
		pause();
}

/* backup: poll check until the lease ran out, then claim; print outcome, attempt, token. */
static int
mode_backup(char **argv)
{
	const char *job = argv[3];
	int64_t		slot = atoll(argv[4]);
	sqlite3_stmt *check = prepare("SELECT anarchon_check(?1, ?2)");
	sqlite3_stmt *claim = prepare("SELECT anarchon_claim(?1, ?2, ?3)");
	sqlite3_stmt *tok = prepare("SELECT anarchon_token()");
	char		token[64];
	int64_t		deadline = wall_us() + 60 * 1000000LL;

	new_token(tok, token, sizeof(token));
	while (wall_us() < deadline)
	{
		const char *state = run(check, "tI", job, slot);

		if (strcmp(state, "running") == 0 || strcmp(state, "none") == 0)
		{
			sleep_ms(10);
			continue;
		}
		if (strcmp(state, "expired") == 0)
		{
			char		outcome[32];

			snprintf(outcome, sizeof(outcome), "%s", run(claim, "tIt", job, slot, token));
			if (strcmp(outcome, "running") == 0)
				continue;		/* another backup took it first; keep watching */
			printf("%s %s %s\n", outcome, attempt_of(job, slot), token);
			/* Finish what we won, so the other backups stop watching. */
			if (strcmp(outcome, "won") == 0)
				run(prepare("SELECT anarchon_finish(?1, ?2, ?3)"), "tIt", job, slot, token);
			return 0;
		}
		printf("%s - %s\n", state, token);
		return 0;
	}
	printf("gave-up - %s\n", token);
	return 1;
}

/* ---------------------------------------------------------------- log */

/*
 * A statement that may fail, as a store call through SQLite may: its first
 * column into `out`, or the error's class (busy, canceled, timeout,
 * connection, store) into `out` and a non-zero result.
 */
static int
try_run(sqlite3_stmt *s, char *out, size_t len, const char *job, int64_t slot, const char *token)
{
	const char *msg;
	int			rc;

	sqlite3_reset(s);
	sqlite3_bind_text(s, 1, job, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, slot);
	sqlite3_bind_text(s, 3, token, -1, SQLITE_TRANSIENT);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
	{
		snprintf(out, len, "%s", (const char *) sqlite3_column_text(s, 0));
		sqlite3_reset(s);
		return 0;
	}
	rc = sqlite3_reset(s);
	msg = sqlite3_errmsg(db);
	snprintf(out, len, "%s", (rc & 0xff) == SQLITE_BUSY ? "busy" :
			 (rc & 0xff) == SQLITE_INTERRUPT ? "canceled" :
			 (strstr(msg, "timed out") || strstr(msg, "timeout")) ? "timeout" :
			 strstr(msg, "connect") ? "connection" : "store");
	return 1;
}

/*
 * log: the fault suite's claimer (test/fault), through the SQLite host and
 * whatever store ANARCHON_STORE names.  The same log line as mq-driver's:
 *
 *   PROC STORE FAULT JOB SLOT TOKEN OUTCOME ATTEMPT TRY WALL_MS
 *
 * Slots are claimed as the plan says (test/testutil.h).  A claim that ends
 * in an error is sent again with the same token; a won
 * run is finished at once.  ATTEMPT is the local store's; network stores
 * behind SQLite are won/lost stores, or lease stores whose lease outlives
 * this run, so 0 there.
 */
static int
mode_log(char **argv)
{
	const char *job = argv[3];
	fault_plan	p = fault_plan_read(argv + 4);
	const char *store = getenv("ANARCHON_STORE");
	int			local = store == NULL || *store == '\0' || strcmp(store, "local") == 0;
	sqlite3_stmt *claim = prepare("SELECT anarchon_claim(?1, ?2, ?3)");
	sqlite3_stmt *finish = prepare("SELECT anarchon_finish(?1, ?2, ?3)");
	sqlite3_stmt *tok = prepare("SELECT anarchon_token()");

	for (long i = 0; i < p.n; i++)
	{
		int64_t		slot = p.slot0 + i * p.step;
		char		token[64];
		char		out[64];

		fault_plan_wait(&p, i);
		new_token(tok, token, sizeof(token));
		for (int t = 1; t <= p.tries; t++)
		{
			int			failed = try_run(claim, out, sizeof(out), job, slot, token);
			const char *attempt = !failed && local ? attempt_of(job, slot) : "0";
			char		done[64];

			printf("%s %s %lld %s %s%s %s %d %lld\n", p.tag, job, (long long) slot, token,
				   failed ? "error:" : "", out, *attempt ? attempt : "0", t, (long long) (wall_us() / 1000));
			if (failed)
				printf("# %s\n", sqlite3_errmsg(db));
			if (!failed)
			{
				/* Finish what we won, retried as the claim is, so the next slot is free. */
				for (int f = 1; strcmp(out, "won") == 0 && f <= p.tries; f++)
					if (try_run(finish, done, sizeof(done), job, slot, token) == 0)
						break;
				break;
			}
			retry_pause(t);
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- demo */

typedef struct watched
{
	int64_t		slot;
	int			active;
} watched;

/* Win → work for a while with heartbeats → finish.  "crash" dies in the middle once. */
static void
demo_run(const char *name, int64_t slot, const char *token, int crash, sqlite3_stmt *hb,
		 sqlite3_stmt *finish)
{
	printf("%lld %s won %s\n", (long long) slot, name, attempt_of("nightly", slot));
	fflush(stdout);
	for (int i = 0; i < 3; i++)
	{
		sleep_ms(100);
		if (crash && i == 1)
		{
			printf("%lld %s killed mid-run\n", (long long) slot, name);
			fflush(stdout);
			raise(SIGKILL);
		}
		run(hb, "tIt", "nightly", slot, token);
	}
	run(finish, "tIt", "nightly", slot, token);
}

static int
mode_demo(char **argv)
{
	const char *name = argv[3];
	int64_t		end = wall_us() + atoll(argv[4]) * 1000000LL;
	int64_t		period = atoll(argv[5]);
	int			crash = argv[6] && strcmp(argv[6], "crash") == 0;
	sqlite3_stmt *claim = prepare("SELECT anarchon_claim('nightly', ?1, ?2)");
	sqlite3_stmt *check = prepare("SELECT anarchon_check('nightly', ?1)");
	sqlite3_stmt *hb = prepare("SELECT anarchon_heartbeat(?1, ?2, ?3)");
	sqlite3_stmt *finish = prepare("SELECT anarchon_finish(?1, ?2, ?3)");
	sqlite3_stmt *tok = prepare("SELECT anarchon_token()");
	watched		w[64] = {{0, 0}};
	int64_t		last = -1;
	int			wins = 0;
	char		token[64];

	while (wall_us() < end)
	{
		int64_t		slot = wall_us() / 1000 / period * period;

		if (slot != last)
		{
			char		outcome[32];

			last = slot;
			new_token(tok, token, sizeof(token));
			snprintf(outcome, sizeof(outcome), "%s", run(claim, "It", slot, token));
			if (strcmp(outcome, "won") == 0)
				demo_run(name, slot, token, crash && ++wins == 2, hb, finish);
			else
			{
				printf("%lld %s %s\n", (long long) slot, name, outcome);
				/* A backup keeps an eye on runs it lost, to take over a dead one. */
				if (strcmp(outcome, "running") == 0)
					w[(slot / period) % 64] = (watched) {slot, 1};
			}
			fflush(stdout);
		}
		for (int i = 0; i < 64; i++)
		{
			const char *state;

			if (!w[i].active)
				continue;
			state = run(check, "I", w[i].slot);
			if (strcmp(state, "expired") == 0)
			{
				new_token(tok, token, sizeof(token));
				if (strcmp(run(claim, "It", w[i].slot, token), "won") == 0)
				{
					w[i].active = 0;
					demo_run(name, w[i].slot, token, 0, hb, finish);
				}
			}
			else if (strcmp(state, "running") != 0)
				w[i].active = 0;
		}
		/* The instance that will crash looks more often, so it surely wins early. */
		sleep_ms(crash ? 5 : 20);
	}
	return 0;
}

/* ---------------------------------------------------------------- bench */

static int
mode_bench(char **argv)
{
	int64_t		seconds = atoll(argv[3]);
	const char *id = argv[4];
	const char *kind = argv[5];
	FILE	   *lat = fopen(argv[6], "w");
	sqlite3_stmt *op[3] = {NULL, NULL, NULL};
	char		job[64];
	/* A whole second in the future (never late); slots are whole seconds. */
	int64_t		base = (wall_us() / 1000000 + 10000) * 1000;
	int64_t		start,
				end,
				n = 0;

	if (lat == NULL)
		die_db("latency file");
	snprintf(job, sizeof(job), "bench-%s", id);
	if (strcmp(kind, "claim") == 0)
		op[0] = prepare("SELECT anarchon_claim(?1, ?2, 'benchtoken')");
	else if (strcmp(kind, "insert") == 0)
	{
		/* The bare primitive the claim is measured against. */
		exec("CREATE TABLE IF NOT EXISTS bench_runs (job TEXT, slot INTEGER, token TEXT, PRIMARY KEY (job, slot)) WITHOUT ROWID");
		op[0] = prepare("BEGIN IMMEDIATE");
		op[1] = prepare("INSERT OR IGNORE INTO bench_runs VALUES (?1, ?2, 'benchtoken')");
		op[2] = prepare("COMMIT");
	}
	else if (strcmp(kind, "check") == 0)
		op[0] = prepare("SELECT anarchon_check(?1, ?2)");
	else
		op[0] = prepare("SELECT state, lease_until FROM anarchon_runs WHERE job = ?1 AND slot = ?2");

	start = wall_us();
	end = start + seconds * 1000000;
	for (;;)
	{
		int64_t		t0 = wall_us();
		/* Reads look up runs that exist; writes make new ones. */
		int			reads = strcmp(kind, "check") == 0 || strcmp(kind, "select") == 0;

		if (t0 >= end)
			break;
		if (op[1])
		{
			run(op[0], "");
			run(op[1], "tI", job, base + n * 1000);
			run(op[2], "");
		}
		else if (reads)
			run(op[0], "tI", "bench-read", INT64_C(4102444800000) + n % 1000 * 1000);
		else
			run(op[0], "tI", job, base + n * 1000);
		fprintf(lat, "%lld\n", (long long) (wall_us() - t0));
		n++;
	}
	fclose(lat);
	printf("%lld %lld\n", (long long) n, (long long) (wall_us() - start));
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc < 4)
	{
		fprintf(stderr, "usage: claimer contend|hold|backup|demo|bench|log DB ...\n");
		return 2;
	}
	open_db(argv[2]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(argv[1], "contend") == 0 && argc >= 7)
		return mode_contend(argv);
	if (strcmp(argv[1], "hold") == 0 && argc >= 5)
		return mode_hold(argv);
	if (strcmp(argv[1], "backup") == 0 && argc >= 5)
		return mode_backup(argv);
	if (strcmp(argv[1], "demo") == 0 && argc >= 6)
		return mode_demo(argv);
	if (strcmp(argv[1], "bench") == 0 && argc >= 7)
		return mode_bench(argv);
	if (strcmp(argv[1], "log") == 0 && argc >= 11)
		return mode_log(argv);
	fprintf(stderr, "claimer: bad arguments for %s\n", argv[1]);
	return 2;
}
