/*
 * schedule.c — schedules as slots in PostgreSQL.
 *
 *   anarchon_slot(schedule text [, at timestamptz]) → timestamptz
 *   anarchon_slot(schedule text, at bigint)         → bigint (ms)
 *   anarchon_next_slot(schedule text [, after timestamptz]) → timestamptz
 *   anarchon_next_slot(schedule text, after bigint)         → bigint (ms)
 *   anarchon_fire_at(job text, slot timestamptz|bigint, max_jitter_ms bigint)
 *                                                   → timestamptz | bigint
 *   anarchon_tzdata_version()                       → text
 *
 * The latest scheduled time at or before `at`, and the earliest one after
 * `after`; without the instant, the database clock (clock_timestamp(), the
 * clock the claim uses).  A schedule may start with CRON_TZ=<IANA zone>; its
 * slots are UTC instants either way.  The parser and the search are core's,
 * shared with SQLite; the zones are the server's own (pg/tz_pg.c), as AT
 * TIME ZONE reads them.  NULL when the slot range (1970 …
 * 9999) holds no such time; a bad schedule is an error naming the offending
 * field or zone.  A parsed schedule is kept in fn_extra, so a query over
 * many rows with one schedule parses it once; the zones are kept for the
 * backend's life (malloc'd, pointing at PostgreSQL's own cache of zones).
 *
 * anarchon_fire_at is slot plus an offset in [0, max_jitter_ms) hashed from
 * (job, slot) (schedule/schedule_fire.c); max_jitter_ms may not exceed
 * anarchon.max_late_ms, or the claim made at that time would be 'late'.
 */
#include "anarchon_pg.h"

#include "utils/builtins.h"

#include "schedule_pg.h"

PG_FUNCTION_INFO_V1(anarchon_slot);
PG_FUNCTION_INFO_V1(anarchon_slot_ms);
PG_FUNCTION_INFO_V1(anarchon_next_slot);
PG_FUNCTION_INFO_V1(anarchon_next_slot_ms);
PG_FUNCTION_INFO_V1(anarchon_fire_at);
PG_FUNCTION_INFO_V1(anarchon_fire_at_ms);
PG_FUNCTION_INFO_V1(anarchon_tzdata_version);

typedef an_error (*search_fn) (const an_schedule *s, int64_t t, int64_t *slot,
							   int *found, an_err *err);

/* The zones this backend's schedules named; never freed (see above). */
static an_tz_cache *zones;

/* The parse cached for one call site: the text it came from and the result. */
typedef struct schedule_cache
{
	int			len;
	char		text[AN_SCHEDULE_INPUT_MAX];
	an_schedule parsed;
} schedule_cache;

void
an_pg_raise_schedule(an_error rc, const an_err *err)
{
	if (rc == AN_E_NOMEM)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	an_pg_raise_rule(rc == AN_E_UNSUPPORTED ? ERRCODE_FEATURE_NOT_SUPPORTED
					 : rc == AN_E_INPUT ? ERRCODE_INVALID_PARAMETER_VALUE
					 : ERRCODE_INTERNAL_ERROR, err);
}

const an_schedule *
an_pg_arg_schedule(FunctionCallInfo fcinfo, int argno)
{
	schedule_cache *cache = (schedule_cache *) fcinfo->flinfo->fn_extra;
	text	   *t;
	int			len;
	an_err		err;
	an_error	rc;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("schedule must not be NULL"),
				 errhint("Give a cron expression such as '0 3 * * *' (with CRON_TZ=<zone> in front for a time zone), a macro such as '@hourly' or an interval such as '10 seconds'.")));
	t = PG_GETARG_TEXT_PP(argno);
	len = VARSIZE_ANY_EXHDR(t);
	if (cache != NULL && cache->len == len && memcmp(cache->text, VARDATA_ANY(t), len) == 0)
		return &cache->parsed;
	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(*cache));
		cache->len = -1;
		fcinfo->flinfo->fn_extra = cache;
	}
	if (zones == NULL && (zones = an_tz_cache_new()) == NULL)
		an_pg_raise_schedule(AN_E_NOMEM, NULL);
	cache->len = -1;
	if ((rc = an_schedule_parse(VARDATA_ANY(t), (size_t) len, zones, &cache->parsed,
								&err)) != AN_OK)
		an_pg_raise_schedule(rc, &err);
	/* Only a text that fits is remembered; a longer one is parsed each time. */
	if (len <= (int) sizeof(cache->text))
	{
		cache->len = len;
		memcpy(cache->text, VARDATA_ANY(t), len);
	}
	return &cache->parsed;
}

int64
an_pg_arg_instant(FunctionCallInfo fcinfo, int argno, bool as_ms, const char *what)
{
	TimestampTz ts;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", what)));
	if (as_ms)
	{
		an_err		err;
		int64		ms = PG_GETARG_INT64(argno);

		/* Only the bigint form can be seconds by mistake; the range is the search's. */
		if (ms > 0 && an_validate_instant_arg(ms, &err) != AN_OK)
			an_pg_raise_rule(ERRCODE_INVALID_PARAMETER_VALUE, &err);
		return ms;
	}
	ts = PG_GETARG_TIMESTAMPTZ(argno);
	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a finite time", what),
				 errdetail("It must lie from 1970-01-01 to 9999-12-31 UTC.")));
	return an_pg_ts_to_ms(ts);
}

/* The shared body: parse, read the instant, search; NULL when none. */
static Datum
schedule_call(FunctionCallInfo fcinfo, search_fn search, bool as_ms)
{
	const an_schedule *s = an_pg_arg_schedule(fcinfo, 0);
	int64		t;
	int64_t		slot;
	int			found;
	an_err		err;
	an_error	rc;

	if (PG_NARGS() < 2)
		t = an_pg_now_ms();
	else
	{
		if (PG_ARGISNULL(1))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("the instant must not be NULL"),
					 errhint("Leave it out to use the database clock.")));
		t = an_pg_arg_instant(fcinfo, 1, as_ms, "the instant");
	}
	if ((rc = search(s, t, &slot, &found, &err)) != AN_OK)
		an_pg_raise_schedule(rc, &err);
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
	return schedule_call(fcinfo, an_schedule_slot, false);
}

/* anarchon_slot(schedule, at bigint): the same in ms since the epoch. */
Datum
anarchon_slot_ms(PG_FUNCTION_ARGS)
{
	return schedule_call(fcinfo, an_schedule_slot, true);
}

/* anarchon_next_slot(schedule [, after timestamptz]): the earliest time > after. */
Datum
anarchon_next_slot(PG_FUNCTION_ARGS)
{
	return schedule_call(fcinfo, an_schedule_next_slot, false);
}

/* anarchon_next_slot(schedule, after bigint): the same in ms since the epoch. */
Datum
anarchon_next_slot_ms(PG_FUNCTION_ARGS)
{
	return schedule_call(fcinfo, an_schedule_next_slot, true);
}

/* The shared body of anarchon_fire_at: job and slot as every function reads them. */
static int64
fire_at(FunctionCallInfo fcinfo, an_pg_slot_kind kind)
{
	an_pg_call	call;
	int64_t		fire;
	an_err		err;

	an_pg_read_call(fcinfo, kind, false, &call);
	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("max_jitter_ms must not be NULL"),
				 errhint("Give 0 for no jitter.")));
	if (an_fire_at(call.job, strlen(call.job), call.rq.slot, PG_GETARG_INT64(2),
				   call.settings.max_late_ms, &fire, &err) != AN_OK)
		an_pg_raise_rule(ERRCODE_INVALID_PARAMETER_VALUE, &err);
	return fire;
}

/* anarchon_fire_at(job, slot timestamptz, max_jitter_ms): when to act on the slot. */
Datum
anarchon_fire_at(PG_FUNCTION_ARGS)
{
	PG_RETURN_TIMESTAMPTZ(an_pg_ms_to_ts(fire_at(fcinfo, AN_PG_SLOT_TS)));
}

/* anarchon_fire_at(job, slot bigint, max_jitter_ms): the same in ms. */
Datum
anarchon_fire_at_ms(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(fire_at(fcinfo, AN_PG_SLOT_MS));
}

/* anarchon_tzdata_version(): where the zones come from, version and directory. */
Datum
anarchon_tzdata_version(PG_FUNCTION_ARGS)
{
	char		version[1024];
	an_err		err;
	an_error	rc;

	if ((rc = an_tz_data_version(version, sizeof(version), &err)) != AN_OK)
		an_pg_raise_schedule(rc, &err);
	PG_RETURN_TEXT_P(cstring_to_text(version));
}
