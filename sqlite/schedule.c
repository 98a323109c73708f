/*
 * schedule.c — schedules as slots in SQLite.
 *
 *   anarchon_slot(schedule [, at])          the latest scheduled time <= at
 *   anarchon_next_slot(schedule [, after])  the earliest scheduled time > after
 *   anarchon_fire_at(job, slot, max_jitter_ms)
 *                                           when to act on the slot: slot plus
 *                                           an offset in [0, max_jitter_ms)
 *                                           hashed from (job, slot)
 *   anarchon_tzdata_version()               where the zones come from: the
 *                                           system's tz database, its version
 *                                           and directory ('2025b (/usr/share/zoneinfo)')
 *
 * schedule is text: a cron expression (5 fields, or 6 with leading seconds),
 * a macro such as '@hourly', or an interval such as '10 seconds', each with
 * an optional leading 'CRON_TZ=<IANA zone> ' (see schedule/schedule.h for the
 * daylight-saving rule).  at / after are integer milliseconds since
 * 1970-01-01 UTC, as slots are in SQLite; omitted, they are the database
 * clock (anarchon_now()).  The answer is a slot (integer ms, UTC), or NULL
 * when the slot range (1970 … 9999) has no such time.  A bad schedule is an
 * error naming the offending field or zone.
 *
 * The forms with an instant depend on their arguments and on the system's
 * tz database, which a tzdata upgrade changes under a database file that
 * outlives it: they are INNOCUOUS but not DETERMINISTIC, so that SQLite
 * refuses them in an index on an expression, a generated column or a CHECK,
 * which would go stale (PostgreSQL marks them STABLE for the same reason).
 * The forms without read the clock.  A parsed schedule is cached with the statement
 * (sqlite3_set_auxdata), so a query over many rows parses it once; the zones
 * it names are kept for the connection (an_sqlite_sched).
 * anarchon_fire_at checks max_jitter_ms against the connection's max_late_ms,
 * so it is not marked deterministic.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "schedule.h"

SQLITE_EXTENSION_INIT3

typedef an_error (*search_fn) (const an_schedule *s, int64_t t, int64_t *slot,
							   int *found, an_err *err);

void
an_sqlite_sched_release(void *p)
{
	an_sqlite_sched *sc = p;

	if (--sc->refs > 0)
		return;
	an_tz_cache_free(sc->zones);
	an_sqlite_conn_release(sc->conn);
	sqlite3_free(sc);
}

int
an_sqlite_parse_schedule(an_sqlite_sched *sc, sqlite3_value *v, an_schedule *out,
						 an_err *err)
{
	const char *text;

	if (sqlite3_value_type(v) != SQLITE_TEXT)
	{
		an_errf(err, "schedule must be text such as '0 3 * * *', 'CRON_TZ=Europe/Berlin 0 3 * * *', '@hourly' or '10 seconds', got %s",
				 an_sqlite_type_name(sqlite3_value_type(v)));
		return SQLITE_MISMATCH;
	}
	if ((text = (const char *) sqlite3_value_text(v)) == NULL)
		return SQLITE_NOMEM;
	switch (an_schedule_parse(text, (size_t) sqlite3_value_bytes(v), sc->zones, out, err))
	{
		case AN_OK:
			return SQLITE_OK;
		case AN_E_NOMEM:
			return SQLITE_NOMEM;
		default:
			return SQLITE_ERROR;
	}
}

/*
 * The parsed schedule of v into *out: from the statement's cache, or parsed
 * now and offered to the cache.  0 after setting the error result.
 */
static int
arg_schedule(sqlite3_context *ctx, const char *fn, sqlite3_value *v, an_schedule *out)
{
	const an_schedule *cached = sqlite3_get_auxdata(ctx, 0);
	an_schedule *keep;
	an_err		err;
	int			rc;

	if (cached != NULL)
	{
		*out = *cached;
		return 1;
	}
	if ((rc = an_sqlite_parse_schedule(sqlite3_user_data(ctx), v, out, &err)) != SQLITE_OK)
	{
		if (rc == SQLITE_NOMEM)
			sqlite3_result_error_nomem(ctx);
		else
			an_sqlite_fail(ctx, rc, fn, &err);
		return 0;
	}
	/* Best effort: without memory for the cache, the next row parses again. */
	if ((keep = sqlite3_malloc(sizeof(*keep))) != NULL)
	{
		*keep = *out;
		sqlite3_set_auxdata(ctx, 0, keep, sqlite3_free);
	}
	return 1;
}

static void
schedule_call(sqlite3_context *ctx, int argc, sqlite3_value **argv,
			  const char *fn, search_fn search)
{
	an_schedule s;
	int64_t		t,
				slot;
	int			found;
	an_err		err;
	an_error	rc;

	if (!arg_schedule(ctx, fn, argv[0], &s))
		return;
	if (argc == 2)
	{
		if (!an_sqlite_arg_instant(ctx, fn, argv[1], "the instant", &t))
			return;
	}
	else
		t = an_sqlite_now(sqlite3_context_db_handle(ctx));
	if ((rc = search(&s, t, &slot, &found, &err)) != AN_OK)
	{
		if (rc == AN_E_NOMEM)
			sqlite3_result_error_nomem(ctx);
		else
			an_sqlite_fail(ctx, SQLITE_ERROR, fn, &err);
		return;
	}
	if (found)
		sqlite3_result_int64(ctx, slot);
	else
		sqlite3_result_null(ctx);
}

static void
fn_slot(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	schedule_call(ctx, argc, argv, "anarchon_slot", an_schedule_slot);
}

static void
fn_next_slot(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	schedule_call(ctx, argc, argv, "anarchon_next_slot", an_schedule_next_slot);
}

/* anarchon_fire_at(job, slot, max_jitter_ms): see schedule/schedule_fire.c. */
static void
fn_fire_at(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	an_sqlite_sched *sc = sqlite3_user_data(ctx);
	const char *fn = "anarchon_fire_at";
	const char *job;
	int64_t		slot,
				fire;
	an_err		err;

	(void) argc;
	if (sqlite3_value_type(argv[0]) != SQLITE_TEXT)
	{
		an_errf(&err, "job must be text, got %s",
				 an_sqlite_type_name(sqlite3_value_type(argv[0])));
		an_sqlite_fail(ctx, SQLITE_MISMATCH, fn, &err);
		return;
	}
	if ((job = (const char *) sqlite3_value_text(argv[0])) == NULL)
	{
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (!an_sqlite_arg_slot(ctx, fn, argv[1], &slot))
		return;
	if (sqlite3_value_type(argv[2]) != SQLITE_INTEGER)
	{
		an_errf(&err, "max_jitter_ms must be an integer number of milliseconds, got %s",
				 an_sqlite_type_name(sqlite3_value_type(argv[2])));
		an_sqlite_fail(ctx, SQLITE_MISMATCH, fn, &err);
		return;
	}
	if (an_fire_at(job, (size_t) sqlite3_value_bytes(argv[0]), slot, sqlite3_value_int64(argv[2]),
				   sc->conn->settings.max_late_ms, &fire, &err) != AN_OK)
	{
		an_sqlite_fail(ctx, SQLITE_ERROR, fn, &err);
		return;
	}
	sqlite3_result_int64(ctx, fire);
}

static void
fn_tzdata_version(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	char		version[1024];
	an_err		err;

	(void) argc;
	(void) argv;
	if (an_tz_data_version(version, sizeof(version), &err) != AN_OK)
	{
		an_sqlite_fail(ctx, SQLITE_ERROR, "anarchon_tzdata_version", &err);
		return;
	}
	sqlite3_result_text(ctx, version, -1, SQLITE_TRANSIENT);
}

int
an_sqlite_schedule_register(sqlite3 *db, an_sqlite_conn *conn)
{
	static const struct
	{
		const char *name;
		int			nargs;
		int			flags;
		void		(*fn) (sqlite3_context *, int, sqlite3_value **);
	}			fns[] = {
		/* with an instant: its arguments and the tz database (see above) */
		{"anarchon_slot", 2, SQLITE_UTF8 | SQLITE_INNOCUOUS, fn_slot},
		{"anarchon_next_slot", 2, SQLITE_UTF8 | SQLITE_INNOCUOUS, fn_next_slot},
		/* without: reads the clock, so not deterministic */
		{"anarchon_slot", 1, SQLITE_UTF8 | SQLITE_INNOCUOUS, fn_slot},
		{"anarchon_next_slot", 1, SQLITE_UTF8 | SQLITE_INNOCUOUS, fn_next_slot},
		/* reads the connection's max_late_ms */
		{"anarchon_fire_at", 3, SQLITE_UTF8 | SQLITE_INNOCUOUS, fn_fire_at},
		/* TZDIR and the files may change between two statements */
		{"anarchon_tzdata_version", 0, SQLITE_UTF8 | SQLITE_INNOCUOUS, fn_tzdata_version},
	};
	an_sqlite_sched *sc = sqlite3_malloc(sizeof(*sc));
	int			rc;

	if (sc == NULL)
		return SQLITE_NOMEM;
	if ((sc->zones = an_tz_cache_new()) == NULL)
	{
		sqlite3_free(sc);
		return SQLITE_NOMEM;
	}
	/* conn lives as long as anything here can use it. */
	sc->conn = conn;
	conn->refs++;
	sc->refs = 1;				/* ours, until the registrations below hold theirs */
	rc = SQLITE_OK;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]) && rc == SQLITE_OK; i++)
	{
		sc->refs++;
		/* On failure SQLite has already called the destructor for this one. */
		rc = sqlite3_create_function_v2(db, fns[i].name, fns[i].nargs, fns[i].flags,
										sc, fns[i].fn, NULL, NULL, an_sqlite_sched_release);
	}
	if (rc == SQLITE_OK)
		rc = an_sqlite_slots_register(db, sc);
	an_sqlite_sched_release(sc);
	return rc;
}
