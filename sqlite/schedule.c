/*
 * schedule.c — schedules as slots in SQLite.
 *
 *   anarchon_slot(schedule [, at])        the latest scheduled time <= at
 *   anarchon_next_slot(schedule [, after]) the earliest scheduled time > after
 *
 * schedule is text: a cron expression (5 fields, or 6 with leading seconds),
 * a macro such as '@hourly', or an interval such as '10 seconds' (its slots
 * are multiples of the interval since 1970-01-01 UTC); see core/schedule.h.
 * at / after are integer milliseconds since 1970-01-01 UTC, as slots are in
 * SQLite; omitted, they are the database clock (anarchon_now()).  The answer
 * is a slot (integer ms, UTC), or NULL when the slot range (1970 … 9999) has
 * no such time.  A bad schedule is an error naming the offending field.
 *
 * The forms with an instant are pure (DETERMINISTIC, INNOCUOUS); the forms
 * without read the clock.  A parsed schedule is cached with the statement
 * (sqlite3_set_auxdata), so a query over many rows parses it once.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "host.h"
#include "schedule.h"
#include "../core/schedule.h"

SQLITE_EXTENSION_INIT3

typedef an_error (*search_fn) (const an_schedule *s, int64_t t, int64_t *slot,
							   int *found, char *err, size_t errlen);

/*
 * The parsed schedule of v into *out: from the statement's cache, or parsed
 * now and offered to the cache.  0 after setting the error result.
 */
static int
arg_schedule(sqlite3_context *ctx, const char *fn, sqlite3_value *v, an_schedule *out)
{
	const an_schedule *cached = sqlite3_get_auxdata(ctx, 0);
	an_schedule *keep;
	const char *text;
	char		err[AN_ERRMAX];

	if (cached != NULL)
	{
		*out = *cached;
		return 1;
	}
	if (sqlite3_value_type(v) != SQLITE_TEXT)
	{
		snprintf(err, sizeof(err), "schedule must be text such as '0 3 * * *', '@hourly' or '10 seconds', got %s",
				 an_sqlite_type_name(sqlite3_value_type(v)));
		an_sqlite_error(ctx, SQLITE_MISMATCH, fn, err);
		return 0;
	}
	text = (const char *) sqlite3_value_text(v);
	if (text == NULL)
	{
		sqlite3_result_error_nomem(ctx);
		return 0;
	}
	if (an_schedule_parse(text, (size_t) sqlite3_value_bytes(v), out, err, sizeof(err)) != AN_OK)
	{
		an_sqlite_error(ctx, SQLITE_ERROR, fn, err);
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
	char		err[AN_ERRMAX];

	if (!arg_schedule(ctx, fn, argv[0], &s))
		return;
	if (argc == 2)
	{
		if (!an_sqlite_arg_instant(ctx, fn, argv[1], "the instant", &t))
			return;
	}
	else
		t = an_sqlite_now(sqlite3_context_db_handle(ctx));
	if (search(&s, t, &slot, &found, err, sizeof(err)) != AN_OK)
	{
		an_sqlite_error(ctx, SQLITE_ERROR, fn, err);
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

int
an_sqlite_schedule_register(sqlite3 *db)
{
	static const struct
	{
		const char *name;
		int			nargs;
		int			flags;
		void		(*fn) (sqlite3_context *, int, sqlite3_value **);
	}			fns[] = {
		/* with an instant: a pure function of its arguments */
		{"anarchon_slot", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, fn_slot},
		{"anarchon_next_slot", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, fn_next_slot},
		/* without: reads the clock, so not deterministic */
		{"anarchon_slot", 1, SQLITE_UTF8 | SQLITE_INNOCUOUS, fn_slot},
		{"anarchon_next_slot", 1, SQLITE_UTF8 | SQLITE_INNOCUOUS, fn_next_slot},
	};

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
	{
		int			rc = sqlite3_create_function_v2(db, fns[i].name, fns[i].nargs, fns[i].flags,
													NULL, fns[i].fn, NULL, NULL, NULL);

		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}
