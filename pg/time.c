/*
 * time.c — the database clock, and times between milliseconds and timestamptz.
 *
 * The store interface counts milliseconds since the Unix epoch in an int64;
 * PostgreSQL counts microseconds since 2000-01-01, and its timestamptz covers
 * only 4714 BC to 294276 AD.  So not every millisecond count is a timestamp:
 * a count outside that range must never be multiplied into one (it would
 * wrap around to some other time, and a "keep everything" retention would
 * become "delete everything").  Every conversion here checks the range;
 * the other way, every finite timestamptz fits in milliseconds, and the
 * infinities become the ends of int64.
 */
#include "anarchon_pg.h"

#include <time.h>

/* The range of timestamptz, in ms since the Unix epoch (MIN_TIMESTAMP is a whole ms). */
#define TS_MIN_MS	(MIN_TIMESTAMP / 1000 + AN_PG_EPOCH_MS)
#define TS_MAX_MS	((END_TIMESTAMP - 1) / 1000 + AN_PG_EPOCH_MS)

/* The database clock (clock_timestamp(), not the transaction's start), in ms. */
int64
an_pg_now_ms(void)
{
	return an_pg_ts_to_ms(GetCurrentTimestamp());
}

/*
 * The host's monotonic clock, in ms: the keep-alive's deadlines, which a
 * step of the wall clock must not move.  CLOCK_MONOTONIC is one clock for
 * every process of the host, so a backend and its worker can compare.
 */
int64
an_pg_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
an_pg_ms_range(int64 ms)
{
	if (ms < TS_MIN_MS)
		return -1;
	if (ms > TS_MAX_MS)
		return 1;
	return 0;
}

TimestampTz
an_pg_ms_to_ts(int64 ms)
{
	if (an_pg_ms_range(ms) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("time " INT64_FORMAT " ms is out of the range of timestamptz", ms),
				 errdetail("A time in milliseconds since 1970-01-01 UTC becomes a timestamptz only from "
						   INT64_FORMAT " to " INT64_FORMAT ".", (int64) TS_MIN_MS, (int64) TS_MAX_MS)));
	/* In range, so neither the subtraction nor the product can overflow. */
	return (ms - AN_PG_EPOCH_MS) * 1000;
}

/* Rounds down (toward the past) for timestamps before 2000 too. */
int64
an_pg_ts_to_ms(TimestampTz ts)
{
	int64		ms;

	if (TIMESTAMP_IS_NOBEGIN(ts))
		return PG_INT64_MIN;
	if (TIMESTAMP_IS_NOEND(ts))
		return PG_INT64_MAX;
	ms = ts / 1000;
	if (ts % 1000 < 0)
		ms--;
	return ms + AN_PG_EPOCH_MS;
}
