/*
 * schedule.h — from a schedule (cron expression or interval) to slots.
 *
 * Users think "0 3 * * *, once, fleet-wide"; claims speak slots (ms since the
 * epoch, UTC).  This is the one parser and calculator both database hosts use
 * for anarchon_slot() and anarchon_next_slot().  Pure C: no allocation, no
 * host headers, no time zone (everything is UTC).
 *
 * Accepted schedules (the syntax pg_cron accepts, plus a seconds field):
 *
 *   five fields      minute hour day-of-month month day-of-week
 *   six fields       second minute hour day-of-month month day-of-week
 *   each field       '*', a number, a range a-b, a step '*' / n or a-b/n,
 *                    or a comma list of those; months jan-dec and weekdays
 *                    sun-sat by name (any case); weekday 0 and 7 are Sunday;
 *                    '$' alone as day of month is the last day of the month
 *   macros           @yearly @annually @monthly @weekly @daily @midnight @hourly
 *   intervals        'N seconds|minutes|hours|days' (singular too), from 1 s
 *                    to 365 days: the slots are the multiples of the interval
 *                    since 1970-01-01 00:00:00 UTC, so every instance and
 *                    every database computes the same slots without any
 *                    shared starting point.
 *
 * Day of month and day of week are combined as cron (and pg_cron) combine
 * them: when either field starts with '*', a day must match both; otherwise
 * a day matching either one is enough ("0 0 13 * 5" runs on every 13th and on
 * every Friday).
 *
 * A schedule that can never run (30 February) is refused by the parser.
 * An instant with no scheduled time before it (or after it) inside the slot
 * range 1970-01-01 … 9999-12-31 is reported as "none", not as an error.
 */
#ifndef ANARCHON_SCHEDULE_H
#define ANARCHON_SCHEDULE_H

#include "anarchon.h"

/* Longest schedule text accepted, in bytes. */
#define AN_SCHEDULE_TEXT_MAX 256

/* Longest interval: 365 days in ms. */
#define AN_SCHEDULE_INTERVAL_MAX INT64_C(31536000000)

typedef enum an_schedule_kind
{
	AN_SCHEDULE_CRON = 1,
	AN_SCHEDULE_INTERVAL
} an_schedule_kind;

/*
 * A parsed schedule: one bit per allowed value.  Plain data, so a host may
 * copy it or cache it.
 */
typedef struct an_schedule
{
	an_schedule_kind kind;
	int64_t		interval_ms;     /* AN_SCHEDULE_INTERVAL */
	uint64_t	seconds;         /* bits 0-59; just bit 0 without a seconds field */
	uint64_t	minutes;         /* bits 0-59 */
	uint32_t	hours;           /* bits 0-23 */
	uint32_t	mdays;           /* bits 1-31 */
	uint16_t	months;          /* bits 1-12 */
	uint8_t		wdays;           /* bits 0-6, 0 = Sunday */
	uint8_t		mday_last;       /* '$': the last day of each month */
	uint8_t		either_day;      /* 1: day of month OR day of week; 0: AND */
} an_schedule;

/*
 * an_schedule_parse reads len bytes of text (need not be NUL-terminated).
 * Returns AN_OK, or AN_E_INPUT with a message in err naming the offending
 * field, e.g. "schedule field 3 (day of month) '32': 32 is out of range,
 * allowed 1-31"; *s is unspecified on error.
 */
an_error	an_schedule_parse(const char *text, size_t len, an_schedule *s,
							  char *err, size_t errlen);

/*
 * an_schedule_slot: the latest scheduled time <= at (ms).  Sets *found to 0
 * when there is none at or after 1970-01-01.  AN_E_INPUT (message in err)
 * when at is outside the slot range.
 */
an_error	an_schedule_slot(const an_schedule *s, int64_t at, int64_t *slot,
							 int *found, char *err, size_t errlen);

/*
 * an_schedule_next_slot: the earliest scheduled time > after (ms).  Sets
 * *found to 0 when there is none up to 9999-12-31 23:59:59.999.
 */
an_error	an_schedule_next_slot(const an_schedule *s, int64_t after, int64_t *slot,
								  int *found, char *err, size_t errlen);

#endif							/* ANARCHON_SCHEDULE_H */
