/*
 * schedule.h — from a schedule (cron expression or interval) to slots.
 *
 * Users think "0 3 * * *, once, fleet-wide"; claims speak slots (ms since the
 * epoch, UTC).  This is the one parser and calculator both database hosts use
 * for anarchon_slot(), anarchon_next_slot() and anarchon_slots().  No host
 * headers; the only allocation is the time-zone cache the host lends (tz.h).
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
 * Time zones: a cron schedule or an interval may start with
 * 'CRON_TZ=<IANA zone> ' (or 'TZ=<zone> '), e.g. 'CRON_TZ=Europe/Berlin 0 3 * * *':
 * its fields are then read on that zone's wall clock.  Without it a schedule
 * is in UTC.  Slots stay UTC instants either way.  An interval in a zone
 * counts its multiples from 1970-01-01 00:00 on the zone's wall clock (so
 * 'CRON_TZ=Europe/Berlin 1 days' is every Berlin midnight).
 *
 * Daylight saving (Vixie cron's rule, made exact).  A schedule is
 * fixed-time when none of its second, minute and hour fields starts with '*'
 * (a 5-field schedule's second is 0) and it is not an interval; @hourly is
 * '0 * * * *', so it is not.  For a fixed-time schedule, each matching wall
 * time is one slot: at its first occurrence when the clocks go back and it
 * happens twice, and at the first instant after the gap when the clocks go
 * forward over it (all the skipped times of one gap are that one slot).
 * Every other schedule follows the wall clock as it runs: a repeated wall
 * time is a slot at each occurrence, a skipped one is none.
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
#include "tz.h"

/* Longest schedule text accepted after its time zone, in bytes. */
#define AN_SCHEDULE_TEXT_MAX 256
/* Longest whole text a host needs to keep to recognise a schedule again. */
#define AN_SCHEDULE_INPUT_MAX 512

/* Most slots one range may list (anarchon_slots, anarchon_missed). */
#define AN_SCHEDULE_RANGE_MAX 1000000

/* Longest interval: 365 days in ms. */
#define AN_SCHEDULE_INTERVAL_MAX INT64_C(31536000000)

typedef enum an_schedule_kind
{
	AN_SCHEDULE_CRON = 1,
	AN_SCHEDULE_INTERVAL
} an_schedule_kind;

/*
 * A parsed schedule: one bit per allowed value, and its zone.  Plain data, so
 * a host may copy it or cache it for as long as the an_tz_cache it was parsed
 * with lives.
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
	uint8_t		fixed_time;      /* 1: fixed-time (see above); 0: follows the wall clock */
	an_tz	   *tz;              /* the CRON_TZ zone, owned by the cache; NULL: UTC */
} an_schedule;

/*
 * an_schedule_parse reads len bytes of text (need not be NUL-terminated),
 * finding its zone, if it names one, in zones.  Returns AN_OK, or AN_E_INPUT
 * with a message in err naming the offending field, e.g. "schedule field 3
 * (day of month) '32': 32 is out of range, allowed 1-31", or the zone's
 * error (tz.h: AN_E_UNSUPPORTED without a source of zone data); *s is
 * unspecified on error.
 */
an_error	an_schedule_parse(const char *text, size_t len, an_tz_cache *zones,
							  an_schedule *s, an_err *err);

/*
 * an_schedule_slot: the latest scheduled time <= at (ms).  Sets *found to 0
 * when there is none at or after 1970-01-01.  AN_E_INPUT (message in err)
 * when at is outside the slot range.
 */
an_error	an_schedule_slot(const an_schedule *s, int64_t at, int64_t *slot,
							 int *found, an_err *err);

/*
 * an_schedule_next_slot: the earliest scheduled time > after (ms).  Sets
 * *found to 0 when there is none up to 9999-12-31 23:59:59.999.
 */
an_error	an_schedule_next_slot(const an_schedule *s, int64_t after, int64_t *slot,
								  int *found, an_err *err);

/*
 * an_schedule_range: every slot with from <= slot < to, in order, handed to
 * emit, which returns 0 to go on, 1 to stop there (AN_OK) or -1 when out of
 * memory (AN_E_NOMEM).  from and to are instants of
 * the slot range; from == to is an empty range; from > to is refused
 * (AN_E_INPUT) before anything is emitted.  A range that holds more than
 * AN_SCHEDULE_RANGE_MAX slots fails (AN_E_INPUT) when the one past the limit
 * is found, after AN_SCHEDULE_RANGE_MAX emits: hosts keep what emit gives
 * them until the call returns, and drop it on failure, so a caller sees the
 * error and no slot.
 */
an_error	an_schedule_range(const an_schedule *s, int64_t from, int64_t to,
							  int (*emit) (void *arg, int64_t slot), void *arg,
							  an_err *err);

/*
 * an_fire_at: when to act on a slot, spread over [slot, slot + max_jitter_ms)
 * by a hash of (job, slot) that every instance computes alike (see
 * schedule_fire.c for the exact function).  max_jitter_ms must be 0 (the
 * slot itself) up to max_late_ms, the setting in force: a claim made later
 * than that after its slot would be answered 'late'.  AN_E_INPUT otherwise,
 * or for a bad job or slot.
 */
an_error	an_fire_at(const char *job, size_t job_len, int64_t slot, int64_t max_jitter_ms,
					   int64_t max_late_ms, int64_t *fire_at, an_err *err);

#endif							/* ANARCHON_SCHEDULE_H */
