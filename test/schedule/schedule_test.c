/*
 * schedule_test.c — the schedule parser and slot search against answers
 * worked out by hand, then against a slow, obviously-correct oracle.
 *
 * Part 1 is a table: a schedule, an instant, the slot at or before it and the
 * next slot after it, all written as UTC calendar times (converted with the C
 * library's timegm, not with the code under test).  Part 1b is the
 * daylight-saving table: the two changes of a year in several zones, each
 * slot of a range worked out by hand, for fixed-time and wall-clock
 * schedules, walked forward and backward.  Part 2 is the table of refusals:
 * each bad schedule and a piece of the message it must produce.  Part 3
 * draws random schedules and instants and compares the search with a
 * day-by-day scan that uses gmtime for the calendar.  Part 5 checks
 * anarchon_fire_at's spread.
 *
 * Prints one "ok - ..." or "not ok - ..." line per check, as the suites do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedule.h"

static int failures;
static int checks;

/* The zones the schedules name, found once for the whole run. */
static an_tz_cache *zones;

/* "YYYY-MM-DD HH:MM:SS[.mmm]" (UTC) to ms; "none" to -1. */
static int64_t
ms_of(const char *iso)
{
	struct tm	tm;
	int			ms = 0;

	if (strcmp(iso, "none") == 0)
		return -1;
	memset(&tm, 0, sizeof(tm));
	if (sscanf(iso, "%d-%d-%d %d:%d:%d.%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
			   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) < 6)
	{
		fprintf(stderr, "bad instant in the table: %s\n", iso);
		exit(2);
	}
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t) timegm(&tm) * 1000 + ms;
}

static void
iso_of(int64_t ms, int found, char *buf, size_t len)
{
	time_t		t;
	struct tm	tm;

	if (!found)
	{
		snprintf(buf, len, "none");
		return;
	}
	t = (time_t) (ms / 1000);
	gmtime_r(&t, &tm);
	snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d.%03d", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (ms % 1000));
}

static void
result(int good, const char *name, const char *detail)
{
	checks++;
	if (good)
		printf("ok - %s\n", name);
	else
	{
		printf("not ok - %s\n#   %s\n", name, detail);
		failures++;
	}
}

/* ------------------------------------------------------------ part 1 */

typedef struct slot_case
{
	const char *schedule;
	const char *at;
	const char *slot;            /* latest <= at */
	const char *next;            /* earliest > at */
	const char *why;
} slot_case;

static const slot_case slot_cases[] = {
	/* plain times, inclusive "at or before", exclusive "after" */
	{"0 3 * * *", "2024-03-10 02:59:59.999", "2024-03-09 03:00:00", "2024-03-10 03:00:00", "daily at 03:00, just before"},
	{"0 3 * * *", "2024-03-10 03:00:00", "2024-03-10 03:00:00", "2024-03-11 03:00:00", "daily at 03:00, exactly on it"},
	{"0 3 * * *", "2024-03-10 03:00:00.001", "2024-03-10 03:00:00", "2024-03-11 03:00:00", "daily at 03:00, a ms after"},
	{"*/15 * * * *", "2024-05-05 10:44:59", "2024-05-05 10:30:00", "2024-05-05 10:45:00", "every 15 minutes"},
	{"* * * * *", "2024-12-31 23:59:30", "2024-12-31 23:59:00", "2025-01-01 00:00:00", "every minute across a year end"},
	/* month ends */
	{"0 0 31 * *", "2024-04-15 00:00:00", "2024-03-31 00:00:00", "2024-05-31 00:00:00", "the 31st skips 30-day months"},
	{"0 0 $ * *", "2024-02-15 00:00:00", "2024-01-31 00:00:00", "2024-02-29 00:00:00", "'$' is the last day, 29 Feb in a leap year"},
	{"0 0 $ * *", "2023-02-28 12:00:00", "2023-02-28 00:00:00", "2023-03-31 00:00:00", "'$' is 28 Feb in a common year"},
	{"30 23 30 * *", "2024-03-01 00:00:00", "2024-01-30 23:30:00", "2024-03-30 23:30:00", "the 30th skips February"},
	/* 29 February */
	{"0 0 29 2 *", "2025-06-01 00:00:00", "2024-02-29 00:00:00", "2028-02-29 00:00:00", "29 February, every 4 years"},
	{"0 0 29 2 *", "2100-03-01 00:00:00", "2096-02-29 00:00:00", "2104-02-29 00:00:00", "29 February skips 2100"},
	{"0 0 29 2 *", "2000-02-29 00:00:00", "2000-02-29 00:00:00", "2004-02-29 00:00:00", "29 February in 2000 (divisible by 400)"},
	/* day of month x day of week: either, when both are restricted */
	{"0 0 13 * 5", "2024-09-10 12:00:00", "2024-09-06 00:00:00", "2024-09-13 00:00:00", "13th or Friday: the Friday before"},
	{"0 0 13 * 5", "2024-10-12 00:00:00", "2024-10-11 00:00:00", "2024-10-13 00:00:00", "13th or Friday: a Sunday 13th"},
	{"0 0 29 2 1", "2025-03-01 00:00:00", "2025-02-24 00:00:00", "2026-02-02 00:00:00", "29 Feb or a Monday of February"},
	{"0 0 29 2 1", "2024-02-27 00:00:00", "2024-02-26 00:00:00", "2024-02-29 00:00:00", "29 Feb (a Thursday) or a Monday of February"},
	/* ... and both, when either starts with '*' (Vixie cron's rule) */
	{"0 0 */2 * 1", "2024-01-02 00:00:00", "2024-01-01 00:00:00", "2024-01-15 00:00:00", "odd day AND Monday"},
	{"0 0 */31 2 1", "2024-06-01 00:00:00", "2021-02-01 00:00:00", "2027-02-01 00:00:00", "1 February on a Monday, years apart"},
	{"0 0 * * 1", "2024-01-03 00:00:00", "2024-01-01 00:00:00", "2024-01-08 00:00:00", "every Monday"},
	/* steps over ranges, lists */
	{"10-40/15 * * * *", "2024-01-01 12:41:00", "2024-01-01 12:40:00", "2024-01-01 13:10:00", "minutes 10,25,40"},
	{"0 9-17/4 * * *", "2024-01-01 16:59:00", "2024-01-01 13:00:00", "2024-01-01 17:00:00", "hours 9,13,17"},
	{"0 9-17/4 * * *", "2024-01-01 17:00:01", "2024-01-01 17:00:00", "2024-01-02 09:00:00", "hours 9,13,17, next day"},
	{"5,10-12,*/30 * * * *", "2024-01-01 00:13:00", "2024-01-01 00:12:00", "2024-01-01 00:30:00", "a mixed list"},
	{"0 0 * * */2", "2024-01-02 12:00:00", "2024-01-02 00:00:00", "2024-01-04 00:00:00", "weekdays 0,2,4,6"},
	/* names */
	{"0 12 * jan,jul mon-fri", "2024-06-15 00:00:00", "2024-01-31 12:00:00", "2024-07-01 12:00:00", "weekdays of January and July"},
	{"0 0 * * SUN", "2024-01-03 00:00:00", "2023-12-31 00:00:00", "2024-01-07 00:00:00", "Sunday by name"},
	{"0 0 * * 7", "2024-01-03 00:00:00", "2023-12-31 00:00:00", "2024-01-07 00:00:00", "Sunday as 7"},
	{"0 0 * * fri-7", "2024-01-03 00:00:00", "2023-12-31 00:00:00", "2024-01-05 00:00:00", "Friday to Sunday"},
	{"0 0 1 Mar-May/2 *", "2024-04-15 00:00:00", "2024-03-01 00:00:00", "2024-05-01 00:00:00", "months by name with a step"},
	/* macros */
	{"@hourly", "2024-01-01 10:30:00", "2024-01-01 10:00:00", "2024-01-01 11:00:00", "@hourly"},
	{"@daily", "2024-01-01 10:30:00", "2024-01-01 00:00:00", "2024-01-02 00:00:00", "@daily"},
	{"@midnight", "2024-01-01 00:00:00", "2024-01-01 00:00:00", "2024-01-02 00:00:00", "@midnight"},
	{"@weekly", "2024-01-03 00:00:00", "2023-12-31 00:00:00", "2024-01-07 00:00:00", "@weekly is Sunday 00:00"},
	{"@monthly", "2024-02-15 00:00:00", "2024-02-01 00:00:00", "2024-03-01 00:00:00", "@monthly"},
	{"@yearly", "2024-06-01 00:00:00", "2024-01-01 00:00:00", "2025-01-01 00:00:00", "@yearly"},
	{"@annually", "2024-01-01 00:00:00", "2024-01-01 00:00:00", "2025-01-01 00:00:00", "@annually"},
	/* a seconds field */
	{"*/10 * * * * *", "2024-01-01 12:00:05.500", "2024-01-01 12:00:00", "2024-01-01 12:00:10", "every 10 seconds"},
	{"30 0 3 * * *", "2024-01-01 03:00:29", "2023-12-31 03:00:30", "2024-01-01 03:00:30", "03:00:30 daily"},
	{"59 59 23 31 12 *", "2024-12-31 23:59:59.999", "2024-12-31 23:59:59", "2025-12-31 23:59:59", "the last second of a year"},
	/* a skipped fixed time: the next slot asked 1 ms before the gap is the gap's own (issue 20) */
	{"CRON_TZ=America/New_York 30 2 * * *", "2026-03-08 06:59:59.999", "2026-03-07 07:30:00", "2026-03-08 07:00:00", "New York's skipped 02:30, asked 1 ms before the gap"},
	{"CRON_TZ=America/New_York 30 2 * * *", "2026-03-08 07:00:00", "2026-03-08 07:00:00", "2026-03-09 06:30:00", "New York's skipped 02:30, asked at the gap's end"},
	/* intervals: multiples since the epoch */
	{"10 seconds", "2023-11-14 22:13:25.123", "2023-11-14 22:13:20", "2023-11-14 22:13:30", "10 seconds"},
	{"5 minutes", "2024-01-01 00:07:00", "2024-01-01 00:05:00", "2024-01-01 00:10:00", "5 minutes"},
	{"2 hours", "1970-01-01 03:00:00", "1970-01-01 02:00:00", "1970-01-01 04:00:00", "2 hours"},
	{"7 days", "2024-01-01 00:00:00", "2023-12-28 00:00:00", "2024-01-04 00:00:00", "7 days count from Thursday 1970-01-01"},
	{"1 second", "2024-01-01 00:00:00", "2024-01-01 00:00:00", "2024-01-01 00:00:01", "1 second"},
	{"  90seconds  ", "1970-01-01 00:02:59", "1970-01-01 00:01:30", "1970-01-01 00:03:00", "90seconds, no space, padded"},
	/* the ends of the slot range */
	{"0 3 * * *", "1970-01-01 00:00:00", "none", "1970-01-01 03:00:00", "nothing before the epoch"},
	{"0 0 * * *", "1970-01-01 00:00:00", "1970-01-01 00:00:00", "1970-01-02 00:00:00", "slot 0 itself"},
	{"0 0 1 1 *", "9999-06-01 00:00:00", "9999-01-01 00:00:00", "none", "nothing after 9999"},
	{"59 23 31 12 *", "9999-12-31 23:58:00", "9998-12-31 23:59:00", "9999-12-31 23:59:00", "the last minute of 9999"},
	{"* * * * * *", "9999-12-31 23:59:59.999", "9999-12-31 23:59:59", "none", "the last second of the range"},
	{"10 seconds", "9999-12-31 23:59:59.999", "9999-12-31 23:59:50", "none", "interval at the end of the range"},
};

static void
run_slot_cases(void)
{
	for (size_t i = 0; i < sizeof(slot_cases) / sizeof(slot_cases[0]); i++)
	{
		const slot_case *c = &slot_cases[i];
		an_schedule s;
		an_err		err = {0};
		char		name[300];
		char		got_slot[64],
					got_next[64],
					want_slot[64],
					want_next[64],
					detail[600];
		int64_t		at = ms_of(c->at),
					slot = 0,
					next = 0;
		int			found_slot = 0,
					found_next = 0;

		snprintf(name, sizeof(name), "'%s' at %s: %s", c->schedule, c->at, c->why);
		if (an_schedule_parse(c->schedule, strlen(c->schedule), zones, &s, &err) != AN_OK)
		{
			result(0, name, err.msg);
			continue;
		}
		if (an_schedule_slot(&s, at, &slot, &found_slot, &err) != AN_OK ||
			an_schedule_next_slot(&s, at, &next, &found_next, &err) != AN_OK)
		{
			result(0, name, err.msg);
			continue;
		}
		iso_of(slot, found_slot, got_slot, sizeof(got_slot));
		iso_of(next, found_next, got_next, sizeof(got_next));
		iso_of(ms_of(c->slot), strcmp(c->slot, "none") != 0, want_slot, sizeof(want_slot));
		iso_of(ms_of(c->next), strcmp(c->next, "none") != 0, want_next, sizeof(want_next));
		snprintf(detail, sizeof(detail), "slot %s (want %s), next %s (want %s)",
				 got_slot, want_slot, got_next, want_next);
		result(strcmp(got_slot, want_slot) == 0 && strcmp(got_next, want_next) == 0, name, detail);
	}
}

/* ------------------------------------------------------------ part 1b */

#define MAX_SLOTS 12

typedef struct dst_case
{
	const char *schedule;
	const char *from;            /* UTC */
	const char *to;              /* UTC, exclusive */
	const char *slots[MAX_SLOTS];	/* UTC, in order; NULL-terminated */
	const char *why;             /* the wall times, by hand */
} dst_case;

static const dst_case dst_cases[] = {
	/* Europe/Berlin: 2024-03-31 01:00Z CET -> CEST (02:00 -> 03:00); 2024-10-27 01:00Z CEST -> CET (03:00 -> 02:00) */
	{"CRON_TZ=Europe/Berlin 30 2 * * *", "2024-03-30 00:00:00", "2024-04-01 12:00:00",
		{"2024-03-30 01:30:00", "2024-03-31 01:00:00", "2024-04-01 00:30:00"},
	"Berlin spring, fixed: 02:30 CET; 02:30 skipped -> 03:00 CEST; 02:30 CEST"},
	{"CRON_TZ=Europe/Berlin 0,30 2 * * *", "2024-03-30 00:00:00", "2024-04-01 12:00:00",
		{"2024-03-30 01:00:00", "2024-03-30 01:30:00", "2024-03-31 01:00:00", "2024-04-01 00:00:00", "2024-04-01 00:30:00"},
	"Berlin spring, fixed: 02:00 and 02:30 both skipped, one slot at 03:00 CEST"},
	{"CRON_TZ=Europe/Berlin 30 * * * *", "2024-03-30 23:00:00", "2024-03-31 03:00:00",
		{"2024-03-30 23:30:00", "2024-03-31 00:30:00", "2024-03-31 01:30:00", "2024-03-31 02:30:00"},
	"Berlin spring, wall clock: 00:30, 01:30 CET, (02:30 none), 03:30, 04:30 CEST"},
	{"CRON_TZ=Europe/Berlin */30 2 * * *", "2024-03-30 23:00:00", "2024-03-31 03:00:00", {NULL},
	"Berlin spring, wall clock in the skipped hour: no slot"},
	{"CRON_TZ=Europe/Berlin 30 2 * * *", "2024-10-26 00:00:00", "2024-10-28 12:00:00",
		{"2024-10-26 00:30:00", "2024-10-27 00:30:00", "2024-10-28 01:30:00"},
	"Berlin autumn, fixed: 02:30 CEST; 02:30 twice -> the first, CEST; 02:30 CET"},
	{"CRON_TZ=Europe/Berlin 30 * * * *", "2024-10-26 23:00:00", "2024-10-27 03:00:00",
		{"2024-10-26 23:30:00", "2024-10-27 00:30:00", "2024-10-27 01:30:00", "2024-10-27 02:30:00"},
	"Berlin autumn, wall clock: 01:30, 02:30 CEST, 02:30 CET, 03:30 CET"},
	{"CRON_TZ=Europe/Berlin */30 2 * * *", "2024-10-26 23:00:00", "2024-10-27 03:00:00",
		{"2024-10-27 00:00:00", "2024-10-27 00:30:00", "2024-10-27 01:00:00", "2024-10-27 01:30:00"},
	"Berlin autumn, wall clock in the repeated hour: each showing"},
	{"CRON_TZ=Europe/Berlin 1 days", "2024-10-26 00:00:00", "2024-10-29 00:00:00",
		{"2024-10-26 22:00:00", "2024-10-27 23:00:00", "2024-10-28 23:00:00"},
	"Berlin autumn, interval 1 day: local midnights, CEST then CET"},
	/* America/New_York: 2024-03-10 07:00Z EST -> EDT; 2024-11-03 06:00Z EDT -> EST */
	{"TZ=America/New_York 30 2 * * *", "2024-03-09 00:00:00", "2024-03-11 12:00:00",
		{"2024-03-09 07:30:00", "2024-03-10 07:00:00", "2024-03-11 06:30:00"},
	"New York spring, fixed: 02:30 EST; skipped -> 03:00 EDT; 02:30 EDT"},
	{"CRON_TZ=America/New_York @hourly", "2024-03-10 05:00:00", "2024-03-10 09:00:00",
		{"2024-03-10 05:00:00", "2024-03-10 06:00:00", "2024-03-10 07:00:00", "2024-03-10 08:00:00"},
	"New York spring, @hourly: 00:00, 01:00 EST, 03:00, 04:00 EDT"},
	{"CRON_TZ=America/New_York 30 1 * * *", "2024-11-02 00:00:00", "2024-11-04 12:00:00",
		{"2024-11-02 05:30:00", "2024-11-03 05:30:00", "2024-11-04 06:30:00"},
	"New York autumn, fixed: 01:30 EDT; twice -> the first, EDT; 01:30 EST"},
	{"CRON_TZ=America/New_York @hourly", "2024-11-03 03:00:00", "2024-11-03 08:00:00",
		{"2024-11-03 03:00:00", "2024-11-03 04:00:00", "2024-11-03 05:00:00", "2024-11-03 06:00:00", "2024-11-03 07:00:00"},
	"New York autumn, @hourly: 23:00, 00:00, 01:00 EDT, 01:00, 02:00 EST"},
	/* Australia/Lord_Howe: +10:30 standard, +11 summer: half-hour shifts */
	{"CRON_TZ=Australia/Lord_Howe 45 1 * * *", "2024-04-05 12:00:00", "2024-04-07 18:00:00",
		{"2024-04-05 14:45:00", "2024-04-06 14:45:00", "2024-04-07 15:15:00"},
	"Lord Howe autumn (02:00 +11 -> 01:30 +10:30), fixed: 01:45 +11; twice -> +11; 01:45 +10:30"},
	{"CRON_TZ=Australia/Lord_Howe 0 * * * *", "2024-04-06 13:00:00", "2024-04-06 17:00:00",
		{"2024-04-06 13:00:00", "2024-04-06 14:00:00", "2024-04-06 15:30:00", "2024-04-06 16:30:00"},
	"Lord Howe autumn, wall clock: 00:00, 01:00 +11, 02:00, 03:00 +10:30"},
	{"CRON_TZ=Australia/Lord_Howe 15 2 * * *", "2024-10-04 12:00:00", "2024-10-06 18:00:00",
		{"2024-10-04 15:45:00", "2024-10-05 15:30:00", "2024-10-06 15:15:00"},
	"Lord Howe spring (02:00 -> 02:30 +11), fixed: 02:15 +10:30; skipped -> 02:30 +11; 02:15 +11"},
	{"CRON_TZ=Australia/Lord_Howe 0 * * * *", "2024-10-05 13:00:00", "2024-10-05 18:00:00",
		{"2024-10-05 13:30:00", "2024-10-05 14:30:00", "2024-10-05 16:00:00", "2024-10-05 17:00:00"},
	"Lord Howe spring, wall clock: 00:00, 01:00 +10:30, (02:00 none), 03:00, 04:00 +11"},
	/* Europe/Dublin: negative daylight saving (GMT is its winter 'saving'), same instants as London */
	{"CRON_TZ=Europe/Dublin 30 1 * * *", "2024-03-30 00:00:00", "2024-04-01 12:00:00",
		{"2024-03-30 01:30:00", "2024-03-31 01:00:00", "2024-04-01 00:30:00"},
	"Dublin spring, fixed: 01:30 GMT; skipped -> 02:00 IST; 01:30 IST"},
	{"CRON_TZ=Europe/Dublin 30 1 * * *", "2024-10-26 00:00:00", "2024-10-28 12:00:00",
		{"2024-10-26 00:30:00", "2024-10-27 00:30:00", "2024-10-28 01:30:00"},
	"Dublin autumn, fixed: 01:30 IST; twice -> the first, IST; 01:30 GMT"},
	{"CRON_TZ=Europe/Dublin 30 * * * *", "2024-10-26 23:00:00", "2024-10-27 03:00:00",
		{"2024-10-26 23:30:00", "2024-10-27 00:30:00", "2024-10-27 01:30:00", "2024-10-27 02:30:00"},
	"Dublin autumn, wall clock: 00:30, 01:30 IST, 01:30, 02:30 GMT"},
	/* Asia/Kathmandu: 1986-01-01 00:00 +05:30 -> 00:15 +05:45 */
	{"CRON_TZ=Asia/Kathmandu 0 0 * * *", "1985-12-30 00:00:00", "1986-01-02 00:00:00",
		{"1985-12-30 18:30:00", "1985-12-31 18:30:00", "1986-01-01 18:15:00"},
	"Kathmandu, fixed: midnight +05:30; skipped -> 00:15 +05:45; midnight +05:45"},
	{"CRON_TZ=Asia/Kathmandu */10 * * * *", "1985-12-31 18:00:00", "1985-12-31 19:00:00",
		{"1985-12-31 18:00:00", "1985-12-31 18:10:00", "1985-12-31 18:20:00", "1985-12-31 18:35:00",
		"1985-12-31 18:45:00", "1985-12-31 18:55:00"},
	"Kathmandu, wall clock: 23:30, 23:40, 23:50 +05:30, (00:00, 00:10 none), 00:20, 00:30, 00:40 +05:45"},
	/* Pacific/Apia: 2011-12-30 skipped (10:00Z: Dec 29 24:00 -10 -> Dec 31 00:00 +14) */
	{"CRON_TZ=Pacific/Apia 0 3,15 * * *", "2011-12-28 00:00:00", "2012-01-01 00:00:00",
		{"2011-12-28 01:00:00", "2011-12-28 13:00:00", "2011-12-29 01:00:00", "2011-12-29 13:00:00",
		"2011-12-30 01:00:00", "2011-12-30 10:00:00", "2011-12-30 13:00:00", "2011-12-31 01:00:00",
		"2011-12-31 13:00:00"},
	"Apia, fixed: 15:00 Dec 27 .. 15:00 Dec 29 (-10); Dec 30's 03:00 and 15:00 -> one slot at 00:00 Dec 31 (+14); then +14"},
	{"CRON_TZ=Pacific/Apia 0 */6 * * *", "2011-12-30 00:00:00", "2011-12-31 00:00:00",
		{"2011-12-30 04:00:00", "2011-12-30 10:00:00", "2011-12-30 16:00:00", "2011-12-30 22:00:00"},
	"Apia, wall clock: 18:00 Dec 29 (-10), (Dec 30 none), 00:00, 06:00, 12:00 Dec 31 (+14)"},
};

static int
collect_slot(void *arg, int64_t slot)
{
	int64_t    *out = arg;

	if (out[0] >= MAX_SLOTS)
		return -1;
	out[1 + out[0]++] = slot;
	return 0;
}

static void
run_dst_cases(void)
{
	for (size_t i = 0; i < sizeof(dst_cases) / sizeof(dst_cases[0]); i++)
	{
		const dst_case *c = &dst_cases[i];
		an_schedule s;
		an_err		err = {0};
		char		name[400],
					detail[1200] = "";
		int64_t		fwd[MAX_SLOTS + 2] = {0},
					back[MAX_SLOTS];
		int			nwant = 0,
					nback = 0,
					good;
		int64_t		at = ms_of(c->to) - 1,
					slot;
		int			found;

		snprintf(name, sizeof(name), "'%s' %s .. %s: %s", c->schedule, c->from, c->to, c->why);
		if (an_schedule_parse(c->schedule, strlen(c->schedule), zones, &s, &err) != AN_OK ||
			an_schedule_range(&s, ms_of(c->from), ms_of(c->to), collect_slot, fwd, &err) != AN_OK)
		{
			result(0, name, err.msg);
			continue;
		}
		/* The same slots walked backward, one anarchon_slot at a time. */
		while (nback < MAX_SLOTS && an_schedule_slot(&s, at, &slot, &found, &err) == AN_OK &&
			   found && slot >= ms_of(c->from))
		{
			back[nback++] = slot;
			at = slot - 1;
		}
		while (nwant < MAX_SLOTS && c->slots[nwant] != NULL)
			nwant++;
		good = fwd[0] == nwant && nback == nwant;
		for (int k = 0; good && k < nwant; k++)
			good = fwd[1 + k] == ms_of(c->slots[k]) && back[nwant - 1 - k] == ms_of(c->slots[k]);
		if (!good)
		{
			size_t		len = 0;

			len += snprintf(detail + len, sizeof(detail) - len, "forward:");
			for (int k = 0; k < fwd[0] && len < sizeof(detail) - 40; k++)
			{
				char		b[64];

				iso_of(fwd[1 + k], 1, b, sizeof(b));
				len += snprintf(detail + len, sizeof(detail) - len, " %s", b);
			}
			len += snprintf(detail + len, sizeof(detail) - len, "; backward:");
			for (int k = nback - 1; k >= 0 && len < sizeof(detail) - 40; k--)
			{
				char		b[64];

				iso_of(back[k], 1, b, sizeof(b));
				len += snprintf(detail + len, sizeof(detail) - len, " %s", b);
			}
		}
		result(good, name, detail);
	}
}

/* ------------------------------------------------------------ part 2 */

typedef struct error_case
{
	const char *schedule;
	const char *message;         /* must appear in the error */
} error_case;

static const error_case error_cases[] = {
	{"0 0 32 * *", "schedule field 3 (day of month) '32': 32 is out of range, allowed 1-31"},
	{"0 0 0 * *", "field 3 (day of month) '0': 0 is out of range, allowed 1-31"},
	{"60 * * * *", "field 1 (minute) '60': 60 is out of range, allowed 0-59"},
	{"0 24 * * *", "field 2 (hour) '24': 24 is out of range, allowed 0-23"},
	{"0 0 * 13 *", "field 4 (month) '13': 13 is out of range, allowed 1-12 or jan-dec"},
	{"0 0 * * 8", "field 5 (day of week) '8': 8 is out of range, allowed 0-7 or sun-sat"},
	{"61 * * * * *", "field 1 (second) '61': 61 is out of range, allowed 0-59"},
	{"0 61 * * * *", "field 2 (minute) '61'"},
	{"0 0 * foo *", "field 4 (month) 'foo': 'foo' is not a month name"},
	{"0 0 * * monday", "'monday' is not a day of week name"},
	{"a * * * *", "field 1 (minute) 'a': 'a' is not a number: allowed 0-59"},
	{"0 0 * * 5-2", "field 5 (day of week) '5-2': range 5-2 runs backwards"},
	{"5/15 * * * *", "field 1 (minute) '5/15': a step needs '*' or a range before it"},
	{"*/0 * * * *", "field 1 (minute) '*/0': step must be at least 1"},
	{"*/ * * * *", "a step '/' must be followed by a number"},
	{"1,,2 * * * *", "field 1 (minute) '1,,2': a list has an empty element"},
	{"1, * * * *", "a list has an empty element"},
	{"0 0 * * mon#2", "field 5 (day of week) 'mon#2': unexpected '#' at position 4"},
	{"0 0 $,1 * *", "field 3 (day of month) '$,1': '$' (the month's last day) must be the whole field, not part of a list, range or step"},
	{"0 0 1-$ * *", "field 3 (day of month) '1-$': '$' (the month's last day) must be the whole field"},
	/* the day-of-month messages name '$', the way to say "the last day" */
	{"0 0 L * *", "field 3 (day of month) 'L': 'L' is not a number: allowed 1-31 or $ alone (the month's last day)"},
	{"0 0 32 * *", "32 is out of range, allowed 1-31 or $ alone (the month's last day)"},
	{"0 0 1- * *", "field 3 (day of month) '1-': a value is missing at the end"},
	{"99999999999 * * * *", "field 1 (minute) '99999999999': number is too long"},
	{"0 0 30 2 *", "field 3 (day of month) '30' with field 4 (month) '2': no such date, the schedule would never run"},
	{"0 0 31 4,6,9,11 *", "no such date, the schedule would never run"},
	{"0 0 30,31 feb *", "no such date"},
	{"* * * *", "schedule has 4 fields: a schedule is 5 cron fields"},
	{"* * * * * * *", "schedule has more than 6 fields"},
	{"", "schedule is empty"},
	{"   ", "schedule is empty"},
	{"@reboot", "'@reboot' has no scheduled times"},
	{"@fortnightly", "'@fortnightly' is not a known macro"},
	{"0 seconds", "interval '0 seconds' is out of range: allowed 1 second to 365 days"},
	{"366 days", "interval '366 days' is out of range"},
	{"10 fortnights", "interval '10 fortnights': unknown unit 'fortnights'"},
	{"0 0 * * *\x01", "schedule has byte 0x01 at position 10: only printable ASCII is allowed"},
	{"0 0 * * *\xc3\xa9", "schedule has byte 0xc3 at position 10"},
	/* time zones */
	{"CRON_TZ=Mars/Base 0 3 * * *", "time zone 'Mars/Base' is not in the time-zone database"},
	{"CRON_TZ=europe/berlin 0 3 * * *", "names are case-sensitive): list the known names with SELECT * FROM anarchon_zones()"},
	{"CRON_TZ=", "schedule names an empty time zone ('CRON_TZ=' with nothing after the '=')"},
	{"CRON_TZ= 0 3 * * *", "schedule names an empty time zone"},
	{"TZ=", "schedule names an empty time zone ('TZ='"},
	{"CRON_TZ=Europe/Berlin", "schedule has a time zone (Europe/Berlin) and nothing after it"},
	{"CRON_TZ=../../etc/passwd 0 3 * * *", "time zone '../../etc/passwd' is not an IANA zone name (position 1)"},
	{"CRON_TZ=Europe//Berlin 0 3 * * *", "is not an IANA zone name (position 7)"},
	{"CRON_TZ=/etc/localtime 0 3 * * *", "is not an IANA zone name (position 1)"},
	{"CRON_TZ=PST 0 3 * * *", "time zone 'PST' is not an IANA zone name: write the zone by its Area/Location name"},
	{"CRON_TZ=SystemV/AST4 0 3 * * *", "is not an IANA zone name"},
	{"CRON_TZ=GMT+05:00 0 3 * * *", "is not an IANA zone name (position 7)"},
	{"cron_tz=UTC 0 3 * * *", "schedule starts with 'cron_tz=': the only setting a schedule may start with is its time zone"},
	{"MAILTO=root 0 3 * * *", "schedule starts with 'MAILTO='"},
	{"CRON_TZ=Europe/Berlin 0 0 30 2 *", "no such date, the schedule would never run"},
	{"CRON_TZ=Europe/Berlin @reboot", "'@reboot' has no scheduled times"},
};

static void
run_error_cases(void)
{
	char		longtext[400];

	for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++)
	{
		const error_case *c = &error_cases[i];
		an_schedule s;
		an_err		err = {0};
		char		name[300];
		char		detail[AN_ERRMAX + 64];
		an_error	rc = an_schedule_parse(c->schedule, strlen(c->schedule), zones, &s, &err);

		snprintf(name, sizeof(name), "refused '%s'", c->schedule);
		for (char *p = name; *p; p++)
			if ((unsigned char) *p < 0x20 || (unsigned char) *p > 0x7e)
				*p = '?';
		snprintf(detail, sizeof(detail), "rc %d, message: %s", rc, err.msg);
		result(rc == AN_E_INPUT && strstr(err.msg, c->message) != NULL, name, detail);
	}

	/* Too long: described by its length, not echoed. */
	memset(longtext, '1', sizeof(longtext));
	{
		an_schedule s;
		an_err		err = {0};
		an_error	rc = an_schedule_parse(longtext, sizeof(longtext), zones, &s, &err);

		result(rc == AN_E_INPUT && strstr(err.msg, "schedule is 400 bytes long, at most 256") != NULL,
			   "refused a 400-byte schedule by its length", err.msg);
	}
	/* An 8 KB zone name: described by its length, not echoed. */
	{
		static char big[8300];
		an_schedule s;
		an_err		err = {0};
		an_error	rc;

		memcpy(big, "CRON_TZ=", 8);
		memset(big + 8, 'A', 8192);
		memcpy(big + 8 + 8192, " 0 3 * * *", 10);
		rc = an_schedule_parse(big, 8 + 8192 + 10, zones, &s, &err);
		result(rc == AN_E_INPUT && strstr(err.msg, "time zone name is 8192 bytes long") != NULL &&
			   strlen(err.msg) < 400, "refused an 8 KB zone name by its length", err.msg);
	}
	/* A long bad field is quoted cut short. */
	{
		an_schedule s;
		an_err		err = {0};
		const char *t = "0 0 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,x * *";
		an_error	rc = an_schedule_parse(t, strlen(t), zones, &s, &err);

		result(rc == AN_E_INPUT && strstr(err.msg, "...': 'x' is not a number") != NULL,
			   "a long field is quoted cut short", err.msg);
	}
	/* Instants outside the slot range are refused, not searched. */
	{
		an_schedule s;
		an_err		err = {0};
		int64_t		slot;
		int			found;

		an_schedule_parse("* * * * *", 9, zones, &s, &err);
		result(an_schedule_slot(&s, -1, &slot, &found, &err) == AN_E_INPUT &&
			   strstr(err.msg, "out of range") != NULL, "slot at -1 ms is refused", err.msg);
		result(an_schedule_next_slot(&s, AN_SLOT_MAX + 1, &slot, &found, &err) == AN_E_INPUT,
			   "next slot after the range is refused", err.msg);
	}
}

/* ------------------------------------------------------------ part 3 */

/* Does the schedule allow day `day` (days since the epoch)? gmtime decides. */
static int
oracle_day(const an_schedule *s, int64_t day)
{
	time_t		t = (time_t) (day * 86400),
				t1 = (time_t) ((day + 1) * 86400);
	struct tm	tm,
				tm1;
	int			by_mday,
				by_wday;

	gmtime_r(&t, &tm);
	gmtime_r(&t1, &tm1);
	if (!(s->months & (1u << (tm.tm_mon + 1))))
		return 0;
	by_mday = (s->mdays & (UINT32_C(1) << tm.tm_mday)) || (s->mday_last && tm1.tm_mday == 1);
	by_wday = (s->wdays & (1u << tm.tm_wday)) != 0;
	return s->either_day ? (by_mday || by_wday) : (by_mday && by_wday);
}

/* Seconds of the day the schedule allows, in order; dir +1 or -1. */
static int
oracle_second(const an_schedule *s, int sec)
{
	return (s->hours >> (sec / 3600) & 1) && (s->minutes >> (sec / 60 % 60) & 1)
		&& (s->seconds >> (sec % 60) & 1);
}

#define ORACLE_DAYS 800

/* The earliest scheduled time > after, scanning at most ORACLE_DAYS days. */
static int
oracle_next(const an_schedule *s, int64_t after, int64_t *out)
{
	for (int64_t day = after / 86400000; day < after / 86400000 + ORACLE_DAYS; day++)
	{
		if (!oracle_day(s, day))
			continue;
		for (int sec = 0; sec < 86400; sec++)
		{
			int64_t		t = day * 86400000 + (int64_t) sec * 1000;

			if (t > after && oracle_second(s, sec))
			{
				*out = t;
				return 1;
			}
		}
	}
	return 0;
}

/* The latest scheduled time <= at, scanning at most ORACLE_DAYS days back. */
static int
oracle_prev(const an_schedule *s, int64_t at, int64_t *out)
{
	for (int64_t day = at / 86400000; day > at / 86400000 - ORACLE_DAYS && day >= 0; day--)
	{
		if (!oracle_day(s, day))
			continue;
		for (int sec = 86399; sec >= 0; sec--)
		{
			int64_t		t = day * 86400000 + (int64_t) sec * 1000;

			if (t <= at && oracle_second(s, sec))
			{
				*out = t;
				return 1;
			}
		}
	}
	return 0;
}

/* A random field: '*', a value, a range, a step, or a list of those. */
static void
random_field(char *buf, size_t len, int lo, int hi)
{
	int			kind = rand() % 6;
	int			a = lo + rand() % (hi - lo + 1);
	int			b = a + rand() % (hi - a + 1);

	switch (kind)
	{
		case 0:
		case 1:
			snprintf(buf, len, "*");
			break;
		case 2:
			snprintf(buf, len, "%d", a);
			break;
		case 3:
			snprintf(buf, len, "%d-%d", a, b);
			break;
		case 4:
			snprintf(buf, len, "*/%d", 1 + rand() % 10);
			break;
		default:
			snprintf(buf, len, "%d,%d-%d/%d", lo + rand() % (hi - lo + 1), a, b, 1 + rand() % 5);
			break;
	}
}

static void
run_oracle(int rounds)
{
	int			compared = 0,
				bad = 0;
	char		first_bad[700] = "";

	srand(20240229);
	for (int i = 0; i < rounds; i++)
	{
		char		f[6][48],
					text[320];
		an_err		err;
		an_schedule s;
		int			six = rand() % 4 == 0;
		/* instants from 1970 to about 2300, to the ms */
		int64_t		at = (((int64_t) rand() << 8) ^ rand()) % INT64_C(10413792000) * 1000
			+ rand() % 1000;
		int64_t		got = 0,
					want = 0;
		int			found,
					wfound;

		random_field(f[0], sizeof(f[0]), 0, 59);
		random_field(f[1], sizeof(f[1]), 0, 59);
		random_field(f[2], sizeof(f[2]), 0, 23);
		random_field(f[3], sizeof(f[3]), 1, 31);
		random_field(f[4], sizeof(f[4]), 1, 12);
		random_field(f[5], sizeof(f[5]), 0, 7);
		if (rand() % 8 == 0)
			snprintf(f[3], sizeof(f[3]), "$");
		snprintf(text, sizeof(text), "%s%s%s %s %s %s %s", six ? f[0] : "", six ? " " : "",
				 f[1], f[2], f[3], f[4], f[5]);
		if (an_schedule_parse(text, strlen(text), zones, &s, &err) != AN_OK)
			continue;			/* a never-running date: refused, fine */
		for (int dir = 0; dir < 2; dir++)
		{
			if (dir == 0)
			{
				an_schedule_next_slot(&s, at, &got, &found, &err);
				wfound = oracle_next(&s, at, &want);
				/* beyond the oracle's window both must agree it is far */
				if (!wfound && found && got <= at + (int64_t) ORACLE_DAYS * 86400000 - 86400000)
					wfound = -1;
			}
			else
			{
				an_schedule_slot(&s, at, &got, &found, &err);
				wfound = oracle_prev(&s, at, &want);
				if (!wfound && found && got >= at - (int64_t) (ORACLE_DAYS - 1) * 86400000)
					wfound = -1;
			}
			compared++;
			if ((wfound == 1 && (!found || got != want)) || wfound == -1)
			{
				if (bad++ == 0)
					snprintf(first_bad, sizeof(first_bad), "'%s' %s %lld: got %lld (found %d), oracle %lld (found %d)",
							 text, dir == 0 ? "next after" : "slot at", (long long) at,
							 (long long) got, found, (long long) want, wfound);
			}
		}
	}
	{
		char		name[128];

		snprintf(name, sizeof(name), "%d random searches agree with a day-by-day gmtime scan", compared);
		result(bad == 0 && compared > rounds, name, first_bad);
	}
}

/* ------------------------------------------------------------ part 4 */

/*
 * Random texts from cron's alphabet (and a few bytes outside it): the parser
 * must answer AN_OK or AN_E_INPUT with a message, never crash; what it
 * accepts must search without trouble.  Best run under a sanitizer or
 * valgrind, which the suite does.
 */
static void
run_fuzz(int rounds)
{
	static const char alphabet[] = "0123456789*/-,$@ \tjanfebmonsunSECONDSminutesdays#LW?\x01\xff";
	int			accepted = 0,
				bad = 0;
	char		first_bad[700] = "";

	srand(7);
	for (int i = 0; i < rounds; i++)
	{
		char		text[64];
		an_err		err;
		size_t		len = (size_t) (rand() % 40);
		an_schedule s;
		an_error	rc;

		if (i % 2 == 0)
		{
			/* a valid schedule of the table with a few bytes changed */
			const char *base = slot_cases[rand() % (sizeof(slot_cases) / sizeof(slot_cases[0]))].schedule;

			len = strlen(base);
			memcpy(text, base, len);
			for (int m = rand() % 3; m >= 0 && len > 0; m--)
				text[rand() % len] = alphabet[rand() % (sizeof(alphabet) - 1)];
		}
		else
			for (size_t k = 0; k < len; k++)
				text[k] = alphabet[rand() % (sizeof(alphabet) - 1)];
		err.msg[0] = '\0';
		rc = an_schedule_parse(text, len, zones, &s, &err);
		if (rc == AN_OK)
		{
			int64_t		slot;
			int			found;

			accepted++;
			if (an_schedule_slot(&s, INT64_C(1704067200000), &slot, &found, &err) != AN_OK ||
				an_schedule_next_slot(&s, INT64_C(1704067200000), &slot, &found, &err) != AN_OK ||
				!found)
				rc = AN_E_INTERNAL;
		}
		else if (rc == AN_E_INPUT && err.msg[0] != '\0')
			continue;
		if (rc != AN_OK && bad++ == 0)
			snprintf(first_bad, sizeof(first_bad), "'%.*s': rc %d, %s", (int) len, text, rc, err.msg);
	}
	{
		char		name[128];

		snprintf(name, sizeof(name), "%d random texts parsed or refused with a message (%d accepted)",
				 rounds, accepted);
		result(bad == 0, name, first_bad);
	}
}

/*
 * "schedule_test bench": how long one search takes, for a few schedules
 * (printed, never asserted: tests do not judge time).
 */
static int
bench(void)
{
	static const char *const schedules[] = {
		"* * * * *", "0 3 * * *", "*/10 * * * * *", "0 0 29 2 *", "0 0 */31 2 1",
		"0 12 * jan,jul mon-fri", "10 seconds", "CRON_TZ=Europe/Berlin 0 3 * * *",
		"CRON_TZ=Europe/Berlin * * * * *", "CRON_TZ=America/New_York */15 * * * *",
		"CRON_TZ=Australia/Lord_Howe 0 2 * * *", NULL
	};

	for (int i = 0; schedules[i] != NULL; i++)
	{
		an_schedule s;
		an_err		err;
		struct timespec t0,
					t1;
		int64_t		at = INT64_C(1704067200000),
					slot = 0;
		int			found,
					n = 200000;

		if (an_schedule_parse(schedules[i], strlen(schedules[i]), zones, &s, &err) != AN_OK)
		{
			printf("# %s: %s\n", schedules[i], err.msg);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int k = 0; k < n; k++)
		{
			an_schedule_next_slot(&s, at + (int64_t) k * 7919 * 1000, &slot, &found, &err);
			an_schedule_slot(&s, at + (int64_t) k * 7919 * 1000, &slot, &found, &err);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("# %-24s %8.0f ns per search (next and previous, %d instants)\n", schedules[i],
			   ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (2.0 * n), n);
	}
	return 0;
}

/* ------------------------------------------------------------ part 5 */

/*
 * anarchon_fire_at: the same answer every time, inside [slot, slot + max),
 * the slot itself for max 0, spread evenly over the window across jobs and
 * slots, and refusals for a jitter out of [0, max_late_ms].
 */
static void
run_fire_at(void)
{
	int64_t		slot = INT64_C(1796000000000),
				a,
				b;
	an_err		err = {0};
	int			buckets[10] = {0},
				inside = 1,
				n = 0;
	char		job[32];

	result(an_fire_at("nightly", 7, slot, 60000, 60000, &a, &err) == AN_OK &&
		   an_fire_at("nightly", 7, slot, 60000, 60000, &b, &err) == AN_OK && a == b,
		   "fire_at: the same (job, slot) gives the same time", err.msg);
	result(an_fire_at("nightly", 7, slot, 0, 60000, &a, &err) == AN_OK && a == slot,
		   "fire_at: max_jitter_ms 0 is the slot itself", err.msg);
	for (int j = 0; j < 200; j++)
		for (int k = 0; k < 50; k++)
		{
			snprintf(job, sizeof(job), "job-%d", j);
			if (an_fire_at(job, strlen(job), slot + (int64_t) k * 3600000, 3600000, 3600000, &a,
						   &err) != AN_OK ||
				a < slot + (int64_t) k * 3600000 || a >= slot + (int64_t) (k + 1) * 3600000)
				inside = 0;
			else
				buckets[(a - slot - (int64_t) k * 3600000) / 360000]++;
			n++;
		}
	result(inside, "fire_at: 10000 (job, slot) pairs fall inside [slot, slot + max_jitter_ms)", err.msg);
	{
		int			lo = n,
					hi = 0;
		char		d[128];

		for (int i = 0; i < 10; i++)
		{
			lo = buckets[i] < lo ? buckets[i] : lo;
			hi = buckets[i] > hi ? buckets[i] : hi;
		}
		snprintf(d, sizeof(d), "tenths of the hour hold %d to %d of %d", lo, hi, n);
		/* 1000 expected per tenth; 850..1150 is more than 4 standard deviations. */
		result(lo > 850 && hi < 1150, "fire_at: spread evenly over the window (each tenth 850-1150 of 10000)", d);
	}
	result(an_fire_at("nightly", 7, slot, -1, 60000, &a, &err) == AN_E_INPUT &&
		   strstr(err.msg, "max_jitter_ms is negative (-1)") != NULL, "fire_at: a negative jitter is refused", err.msg);
	result(an_fire_at("nightly", 7, slot, 60001, 60000, &a, &err) == AN_E_INPUT &&
		   strstr(err.msg, "longer than max_late_ms (60000)") != NULL, "fire_at: a jitter past max_late_ms is refused", err.msg);
	result(an_fire_at("nightly", 7, slot, INT64_MAX, 60000, &a, &err) == AN_E_INPUT,
		   "fire_at: a huge jitter is refused", err.msg);
	result(an_fire_at("bad job", 7, slot, 1000, 60000, &a, &err) == AN_E_INPUT &&
		   an_fire_at("nightly", 7, slot + 1, 1000, 60000, &a, &err) == AN_E_INPUT,
		   "fire_at: a bad job or slot is refused", err.msg);
}

int
main(int argc, char **argv)
{
	int			rounds;

	if ((zones = an_tz_cache_new()) == NULL)
		return 2;
	if (argc > 1 && strcmp(argv[1], "bench") == 0)
		return bench();
	rounds = argc > 1 ? atoi(argv[1]) : 400;

	run_slot_cases();
	run_dst_cases();
	run_error_cases();
	run_fire_at();
	run_oracle(rounds);
	run_fuzz(rounds * 100);
	/* The plan at the end: a run that stopped early has none, and prove fails it. */
	printf("1..%d\n", checks);
	return failures ? 1 : 0;
}
