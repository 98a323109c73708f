/*
 * schedule.c — schedules as slots in PostgreSQL.
 *
 *   anarchon_slot(schedule text [, at timestamptz]) → timestamptz
 *   anarchon_slot(schedule text, at bigint)         → bigint (ms)
 *   anarchon_next_slot(schedule text [, after timestamptz]) → timestamptz
 *   anarchon_next_slot(schedule text, after bigint)         → bigint (ms)
 *
 * The latest scheduled time at or before `at`, and the earliest one after
 * `after`, in UTC; without the instant, the database clock
 * (clock_timestamp(), the clock the claim uses).  The parser and the search
 * are core/schedule.h's, shared with SQLite.  NULL when the slot range
 * (1970 … 9999) holds no such time; a bad schedule is an error naming the
 * offending field.  A parsed schedule is kept in fn_extra, so a query over
 * many rows with one schedule parses it once.
 */
#include "anarchon_pg.h"

#include "utils/builtins.h"

#include "schedule.h"

PG_FUNCTION_INFO_V1(anarchon_slot);
PG_FUNCTION_INFO_V1(anarchon_slot_ms);
PG_FUNCTION_INFO_V1(anarchon_next_slot);
PG_FUNCTION_INFO_V1(anarchon_next_slot_ms);

typedef an_error (*search_fn) (const an_schedule *s, int64_t t, int64_t *slot,
							   int *found, char *err, size_t errlen);

/* The parse cached for one call site: the text it came from and the result. */
typedef struct schedule_cache
{
	int			len;
	char		text[AN_SCHEDULE_TEXT_MAX];
	an_schedule parsed;
} schedule_cache;

/* The schedule of argument 0, parsed or taken from this call site's cache. */
static const an_schedule *
arg_schedule(FunctionCallInfo fcinfo, const char *fn)
{
	schedule_cache *cache = (schedule_cache *) fcinfo->flinfo->fn_extra;
	text	   *t;
	int			len;
	char		err[AN_ERRMAX];

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s: schedule must not be NULL", fn),
				 errhint("Give a cron expression such as '0 3 * * *', a macro such as '@hourly' or an interval such as '10 seconds'.")));
	t = PG_GETARG_TEXT_PP(0);
	len = VARSIZE_ANY_EXHDR(t);
	if (cache != NULL && cache->len == len && memcmp(cache->text, VARDATA_ANY(t), len) == 0)
		return &cache->parsed;
	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(*cache));
		cache->len = -1;
		fcinfo->flinfo->fn_extra = cache;
	}
	if (an_schedule_parse(VARDATA_ANY(t), (size_t) len, &cache->parsed, err, sizeof(err)) != AN_OK)
	{
		cache->len = -1;
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: %s", fn, err)));
	}
	/* Only a text that fits is remembered; a longer one was refused above. */
	cache->len = len;
	memcpy(cache->text, VARDATA_ANY(t), len);
	return &cache->parsed;
}

/* The instant of argument 1 as ms, or the database clock without one. */
static int64
arg_instant(FunctionCallInfo fcinfo, const char *fn, bool as_ms)
{
	TimestampTz ts;

	if (PG_NARGS() < 2)
		return an_pg_now_ms();
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s: the instant must not be NULL", fn),
				 errhint("Leave it out to use the database clock.")));
	if (as_ms)
		return PG_GETARG_INT64(1);
	ts = PG_GETARG_TIMESTAMPTZ(1);
	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: the instant must be a finite time from 1970-01-01 to 9999-12-31 UTC", fn)));
	return an_pg_ts_to_ms(ts);
}

/* The shared body: parse, read the instant, search; NULL when none. */
static Datum
schedule_call(FunctionCallInfo fcinfo, const char *fn, search_fn search, bool as_ms)
{
	const an_schedule *s = arg_schedule(fcinfo, fn);
	int64		t = arg_instant(fcinfo, fn, as_ms);
	int64_t		slot;
	int			found;
	char		err[AN_ERRMAX];

	if (search(s, t, &slot, &found, err, sizeof(err)) != AN_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: %s", fn, err)));
	if (!found)
		PG_RETURN_NULL();
	if (as_ms)
		PG_RETURN_INT64(slot);
	PG_RETURN_TIMESTAMPTZ(an_pg_ms_to_ts(slot));
}

/* anarchon_slot(schedule [, at timestamptz]): the latest scheduled time <= at. */
Datum
anarchon_slot(PG_FUNCTION_ARGS)
{
	return schedule_call(fcinfo, "anarchon_slot", an_schedule_slot, false);
}

/* anarchon_slot(schedule, at bigint): the same in ms since the epoch. */
Datum
anarchon_slot_ms(PG_FUNCTION_ARGS)
{
	return schedule_call(fcinfo, "anarchon_slot", an_schedule_slot, true);
}

/* anarchon_next_slot(schedule [, after timestamptz]): the earliest time > after. */
Datum
anarchon_next_slot(PG_FUNCTION_ARGS)
{
	return schedule_call(fcinfo, "anarchon_next_slot", an_schedule_next_slot, false);
}

/* anarchon_next_slot(schedule, after bigint): the same in ms since the epoch. */
Datum
anarchon_next_slot_ms(PG_FUNCTION_ARGS)
{
	return schedule_call(fcinfo, "anarchon_next_slot", an_schedule_next_slot, true);
}
