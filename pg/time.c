/*
 * time.c — the database clock, and slots between milliseconds and timestamptz.
 *
 * The store interface counts milliseconds since the Unix epoch; PostgreSQL
 * counts microseconds since 2000-01-01.  Slots and lease ends are stored as
 * timestamptz with whole milliseconds, so the two convert without loss.
 */
#include "anarchon_pg.h"

/* The database clock (clock_timestamp(), not the transaction's start), in ms. */
int64
an_pg_now_ms(void)
{
	return an_pg_ts_to_ms(GetCurrentTimestamp());
}

TimestampTz
an_pg_ms_to_ts(int64 ms)
{
	return (ms - AN_PG_EPOCH_MS) * 1000;
}

/* Rounds down (toward the past) for timestamps before 2000 too. */
int64
an_pg_ts_to_ms(TimestampTz ts)
{
	int64		ms = ts / 1000;

	if (ts % 1000 < 0)
		ms--;
	return ms + AN_PG_EPOCH_MS;
}
