/*
 * property_test.c — the slot searches agree with each other in every zone.
 *
 *   property_test ZONES_FILE      one zone name a line (the system's tz database)
 *
 * doc/schedules.md promises that anarchon_slots lists exactly what
 * anarchon_next_slot gives one by one, and that anarchon_slot and
 * anarchon_next_slot describe one set of slots.  This checks it as a
 * property, around every change of UTC offset from 1990 to 2037 of every
 * zone named in ZONES_FILE, for fixed-time schedules (one slot per matching
 * wall time, at the first instant after a gap) and wall-clock ones: for every
 * slot s listed by an_schedule_range over a window around the change,
 *
 *   next_slot(s - 1 ms) = s,  slot(s) = s,  slot(s - 1 ms) < s,
 *   next_slot(s) = the slot listed after s (or one at or past the window's end),
 *
 * and the first slot of the window is next_slot(window start - 1 ms).  What the
 * slots should be (the zone's data, the daylight-saving rule) is for the
 * oracles (oracle.py); this is about the searches never skipping or
 * inventing a slot that the others give.
 *
 * Prints one "ok - ..." or "not ok - ..." line per schedule kind, and the
 * first few counterexamples.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedule.h"

#define HOUR_MS INT64_C(3600000)
#define DAY_MS (24 * HOUR_MS)

/* 1990-01-01 and 2038-01-01 UTC, in ms. */
#define FROM_MS INT64_C(631152000000)
#define TO_MS INT64_C(2145916800000)

/* The schedules, and how far either side of a change their window reaches. */
static const struct
{
	const char *fields;
	int64_t		reach;
}			kinds[] = {
	{"30 2 * * *", 2 * DAY_MS},
	{"0 3 * * *", 2 * DAY_MS},
	{"0 0 * * *", 2 * DAY_MS},
	{"30 1 * * 0", 8 * DAY_MS},
	{"*/15 * * * *", 3 * HOUR_MS},
	{"0 * * * *", 6 * HOUR_MS},
};
#define KINDS ((int) (sizeof(kinds) / sizeof(kinds[0])))

static an_tz_cache *zones;
static long checked[KINDS],
			bad[KINDS];
static int	failures;
static int	checks;

static void
iso(int64_t ms, char *buf, size_t len)
{
	time_t		t = (time_t) (ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
	struct tm	tm;

	gmtime_r(&t, &tm);
	snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d.%03d", tm.tm_year + 1900, tm.tm_mon + 1,
			 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (((ms % 1000) + 1000) % 1000));
}

static void
counterexample(int k, const char *text, const char *what, int64_t at, int64_t want,
			   int64_t got, int found)
{
	char		a[40],
				w[40],
				g[40];

	if (bad[k]++ >= 5)
		return;
	iso(at, a, sizeof(a));
	iso(want, w, sizeof(w));
	iso(got, g, sizeof(g));
	printf("#   %s: %s(%s) = %s, expected %s\n", text, what, a, found ? g : "none", w);
}

/* Collects the slots of a window. */
typedef struct list
{
	int64_t    *v;
	size_t		n,
				cap;
} list;

static int
collect(void *arg, int64_t slot)
{
	list	   *l = arg;

	if (l->n == l->cap)
	{
		size_t		cap = l->cap ? 2 * l->cap : 64;
		int64_t    *v = realloc(l->v, cap * sizeof(*v));

		if (v == NULL)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = slot;
	return 0;
}

/* The property over [from, to) for one schedule. */
static void
check_window(int k, const an_schedule *s, const char *text, int64_t from, int64_t to, list *l)
{
	an_err		err;
	int64_t		got;
	int			found;

	l->n = 0;
	if (an_schedule_range(s, from, to, collect, l, &err) != AN_OK)
	{
		if (bad[k]++ < 5)
			printf("#   %s: range failed: %s\n", text, err.msg);
		return;
	}
	if (l->n > 0)
	{
		checked[k]++;
		if (an_schedule_next_slot(s, from - 1, &got, &found, &err) != AN_OK ||
			!found || got != l->v[0])
			counterexample(k, text, "next_slot", from - 1, l->v[0], got, found);
	}
	for (size_t i = 0; i < l->n; i++)
	{
		int64_t		sl = l->v[i];

		checked[k]++;
		if (an_schedule_next_slot(s, sl - 1, &got, &found, &err) != AN_OK ||
			!found || got != sl)
			counterexample(k, text, "next_slot", sl - 1, sl, got, found);
		if (an_schedule_slot(s, sl, &got, &found, &err) != AN_OK || !found || got != sl)
			counterexample(k, text, "slot", sl, sl, got, found);
		if (an_schedule_slot(s, sl - 1, &got, &found, &err) != AN_OK ||
			(found && got >= sl))
			counterexample(k, text, "slot", sl - 1, i > 0 ? l->v[i - 1] : sl - 1, got, found);
		if (an_schedule_next_slot(s, sl, &got, &found, &err) != AN_OK ||
			(i + 1 < l->n ? (!found || got != l->v[i + 1]) : (found && got < to)))
			counterexample(k, text, "next_slot", sl, i + 1 < l->n ? l->v[i + 1] : to, got, found);
	}
}

/* Every change of offset of zone `name` from 1990 to 2037, each kind around it. */
static int
check_zone(const char *name, list *l, long *changes)
{
	an_schedule s[KINDS];
	char		text[KINDS][320];
	an_err		err;
	int64_t		t = FROM_MS;

	for (int k = 0; k < KINDS; k++)
	{
		snprintf(text[k], sizeof(text[k]), "CRON_TZ=%s %s", name, kinds[k].fields);
		if (an_schedule_parse(text[k], strlen(text[k]), zones, &s[k], &err) != AN_OK)
		{
			printf("not ok - zone %s is known: %s\n", name, err.msg);
			checks++;
			failures++;
			return 0;
		}
	}
	while (t < TO_MS)
	{
		an_tz_span	sp;

		if (an_tz_span_at(s[0].tz, t, &sp, &err) != AN_OK)
		{
			printf("not ok - zone %s: %s\n", name, err.msg);
			checks++;
			failures++;
			return 0;
		}
		if (sp.end >= TO_MS)
			break;
		(*changes)++;
		for (int k = 0; k < KINDS; k++)
			check_window(k, &s[k], text[k], sp.end - kinds[k].reach, sp.end + kinds[k].reach, l);
		t = sp.end;
	}
	return 1;
}

int
main(int argc, char **argv)
{
	FILE	   *f;
	char		name[256];
	list		l = {0};
	long		nzones = 0,
				changes = 0;
	struct timespec t0,
				t1;

	if (argc != 2 || (f = fopen(argv[1], "r")) == NULL)
	{
		fprintf(stderr, "usage: property_test ZONES_FILE\n");
		return 2;
	}
	if ((zones = an_tz_cache_new()) == NULL)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (fgets(name, sizeof(name), f) != NULL)
	{
		name[strcspn(name, "\r\n")] = '\0';
		if (name[0] == '\0')
			continue;
		nzones += check_zone(name, &l, &changes);
		/* One zone at a time: a cache of 600 zones is not what a host keeps. */
		an_tz_cache_free(zones);
		if ((zones = an_tz_cache_new()) == NULL)
			return 2;
	}
	fclose(f);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (int k = 0; k < KINDS; k++)
	{
		printf("%s - %s: next_slot(s - 1) = s, slot(s) = s, next_slot(s) = the next, for %ld slots "
			   "around %ld changes of offset (1990-2037) in %ld zones\n",
			   bad[k] == 0 && checked[k] > 0 ? "ok" : "not ok", kinds[k].fields, checked[k],
			   changes, nzones);
		checks++;
		if (bad[k] > 0 || checked[k] == 0)
			failures++;
		if (bad[k] > 0)
			printf("#   %ld counterexamples in all\n", bad[k]);
	}
	printf("# property over every zone: %.1f s\n",
		   (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	free(l.v);
	an_tz_cache_free(zones);
	/* The plan at the end: a run that stopped early has none, and prove fails it. */
	printf("1..%d\n", checks);
	return failures ? 1 : 0;
}
