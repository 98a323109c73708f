/*
 * schedule_search.c — a schedule's times on a wall clock, UTC's or a
 * zone's: the first at or after one time and the last at or before one,
 * bounded on both sides (an_wall_next, an_wall_prev), for schedule_slot.c
 * and schedule_zone.c.
 *
 * Interval schedules are arithmetic: multiples of the interval since the
 * epoch.  Cron schedules are searched field by field on the calendar,
 * from the month down to the second: a field that does not match jumps
 * straight to the next (or previous) allowed value of that field, resetting
 * the fields below it.  So the cost is bounded by the months and days
 * between two runs, never by the minutes: "0 0 29 2 *" costs about 30 steps
 * per year it skips.  The parser has already refused schedules that never
 * run, and the search stops at the ends of the slot range either way.
 *
 * The calendar conversions are the proleptic Gregorian day-count formulas
 * (days since 1970-01-01), in integers only, valid far beyond 0000-9999.
 * A wall clock east or west of UTC reaches a day past either end of the
 * slot range, so the calendar here runs from 1969 to 10000; the bounds each
 * search is given keep its answers inside the range it was asked about.
 */
#include "schedule_wall.h"

#define MS_PER_DAY INT64_C(86400000)
#define YEAR_FIRST 1969
#define YEAR_LAST 10000

/* A UTC calendar instant, to the second. */
typedef struct civil
{
	int			y,
				mo,
				d,
				h,
				mi,
				s;
} civil;

static int
is_leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int
days_in_month(int y, int mo)
{
	static const int days[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	return mo == 2 && is_leap(y) ? 29 : days[mo];
}

/* Days from 1970-01-01 to y-mo-d. */
static int64_t
days_from_civil(int y, int mo, int d)
{
	int64_t		yy = y - (mo <= 2);
	int64_t		era = (yy >= 0 ? yy : yy - 399) / 400;
	int64_t		yoe = yy - era * 400;
	int64_t		doy = (153 * (mo > 2 ? mo - 3 : mo + 9) + 2) / 5 + d - 1;
	int64_t		doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + doe - 719468;
}

/* The date of a day count from 1970-01-01 (z >= -719468, the year 0, here). */
static void
civil_from_days(int64_t z, civil *c)
{
	int64_t		era,
				doe,
				yoe,
				doy,
				mp;

	z += 719468;
	era = z / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	c->d = (int) (doy - (153 * mp + 2) / 5 + 1);
	c->mo = (int) (mp < 10 ? mp + 3 : mp - 9);
	c->y = (int) (yoe + era * 400 + (c->mo <= 2));
}

static void
civil_from_ms(int64_t ms, civil *c)
{
	int64_t		day = an_floor_div(ms, MS_PER_DAY);
	int64_t		secs = (ms - day * MS_PER_DAY) / 1000;

	civil_from_days(day, c);
	c->h = (int) (secs / 3600);
	c->mi = (int) (secs / 60 % 60);
	c->s = (int) (secs % 60);
}

static int64_t
civil_to_ms(const civil *c)
{
	return days_from_civil(c->y, c->mo, c->d) * MS_PER_DAY
		+ ((int64_t) c->h * 3600 + c->mi * 60 + c->s) * 1000;
}

/* 0 = Sunday; 1970-01-01 was a Thursday. */
static int
weekday(int y, int mo, int d)
{
	return (int) ((days_from_civil(y, mo, d) % 7 + 11) % 7);
}

/* The smallest set bit of mask in [from, hi], or -1. */
static int
bit_at_or_after(uint64_t mask, int from, int hi)
{
	for (int v = from; v <= hi; v++)
		if (mask & (UINT64_C(1) << v))
			return v;
	return -1;
}

/* The largest set bit of mask in [lo, from], or -1. */
static int
bit_at_or_before(uint64_t mask, int from, int lo)
{
	for (int v = from; v >= lo; v--)
		if (mask & (UINT64_C(1) << v))
			return v;
	return -1;
}

static int
day_matches(const an_schedule *s, int y, int mo, int d)
{
	int			by_mday = (s->mdays & (UINT32_C(1) << d)) != 0
		|| (s->mday_last && d == days_in_month(y, mo));
	int			by_wday = (s->wdays & (1u << weekday(y, mo, d))) != 0;

	return s->either_day ? (by_mday || by_wday) : (by_mday && by_wday);
}

/* Forward steps: to the start of the next day, hour, minute. */
static void
next_day(civil *c)
{
	c->h = c->mi = c->s = 0;
	if (++c->d <= days_in_month(c->y, c->mo))
		return;
	c->d = 1;
	if (++c->mo <= 12)
		return;
	c->mo = 1;
	c->y++;
}

static void
next_hour(civil *c)
{
	c->mi = c->s = 0;
	if (++c->h > 23)
		next_day(c);
}

static void
next_minute(civil *c)
{
	c->s = 0;
	if (++c->mi > 59)
		next_hour(c);
}

/* Backward steps: to the last second of the previous day, hour, minute. */
static void
prev_day(civil *c)
{
	c->h = 23;
	c->mi = c->s = 59;
	if (--c->d >= 1)
		return;
	if (--c->mo < 1)
	{
		c->mo = 12;
		c->y--;
	}
	c->d = c->y >= YEAR_FIRST ? days_in_month(c->y, c->mo) : 1;
}

static void
prev_hour(civil *c)
{
	c->mi = c->s = 59;
	if (--c->h < 0)
		prev_day(c);
}

static void
prev_minute(civil *c)
{
	c->s = 59;
	if (--c->mi < 0)
		prev_hour(c);
}

/* The earliest matching second at or after c and at or before limit; 0 when none. */
static int
search_forward(const an_schedule *s, civil c, int64_t limit, int64_t *out)
{
	for (;;)
	{
		int			v;

		if (c.y > YEAR_LAST || civil_to_ms(&c) > limit)
			return 0;
		if ((v = bit_at_or_after(s->months, c.mo, 12)) < 0)
		{
			c.y++;
			c.mo = c.d = 1;
			c.h = c.mi = c.s = 0;
			continue;
		}
		if (v != c.mo)
		{
			c.mo = v;
			c.d = 1;
			c.h = c.mi = c.s = 0;
		}
		if (!day_matches(s, c.y, c.mo, c.d) ||
			(v = bit_at_or_after(s->hours, c.h, 23)) < 0)
		{
			next_day(&c);
			continue;
		}
		if (v != c.h)
		{
			c.h = v;
			c.mi = c.s = 0;
		}
		if ((v = bit_at_or_after(s->minutes, c.mi, 59)) < 0)
		{
			next_hour(&c);
			continue;
		}
		if (v != c.mi)
		{
			c.mi = v;
			c.s = 0;
		}
		if ((v = bit_at_or_after(s->seconds, c.s, 59)) < 0)
		{
			next_minute(&c);
			continue;
		}
		c.s = v;
		*out = civil_to_ms(&c);
		return *out <= limit;
	}
}

/* The latest matching second at or before c and at or after floor; 0 when none. */
static int
search_backward(const an_schedule *s, civil c, int64_t floor, int64_t *out)
{
	for (;;)
	{
		int			v;

		if (c.y < YEAR_FIRST || civil_to_ms(&c) < floor)
			return 0;
		if ((v = bit_at_or_before(s->months, c.mo, 1)) < 0)
		{
			c.y--;
			c.mo = 12;
			c.d = 31;
			c.h = 23;
			c.mi = c.s = 59;
			continue;
		}
		if (v != c.mo)
		{
			c.mo = v;
			c.d = days_in_month(c.y, c.mo);
			c.h = 23;
			c.mi = c.s = 59;
		}
		if (!day_matches(s, c.y, c.mo, c.d) ||
			(v = bit_at_or_before(s->hours, c.h, 0)) < 0)
		{
			prev_day(&c);
			continue;
		}
		if (v != c.h)
		{
			c.h = v;
			c.mi = c.s = 59;
		}
		if ((v = bit_at_or_before(s->minutes, c.mi, 0)) < 0)
		{
			prev_hour(&c);
			continue;
		}
		if (v != c.mi)
		{
			c.mi = v;
			c.s = 59;
		}
		if ((v = bit_at_or_before(s->seconds, c.s, 0)) < 0)
		{
			prev_minute(&c);
			continue;
		}
		c.s = v;
		*out = civil_to_ms(&c);
		return *out >= floor;
	}
}

int
an_wall_next(const an_schedule *s, int64_t lo, int64_t hi, int64_t *w)
{
	civil		c;
	int64_t		t;

	if (lo < AN_WALL_MIN)
		lo = AN_WALL_MIN;
	if (hi > AN_WALL_MAX)
		hi = AN_WALL_MAX;
	if (s->kind == AN_SCHEDULE_INTERVAL)
	{
		t = -an_floor_div(-lo, s->interval_ms) * s->interval_ms;
		*w = t;
		return t <= hi;
	}
	/* The first whole second at or after lo. */
	t = -an_floor_div(-lo, 1000) * 1000;
	if (t > hi)
		return 0;
	civil_from_ms(t, &c);
	return search_forward(s, c, hi, w);
}

int
an_wall_prev(const an_schedule *s, int64_t hi, int64_t lo, int64_t *w)
{
	civil		c;
	int64_t		t;

	if (lo < AN_WALL_MIN)
		lo = AN_WALL_MIN;
	if (hi > AN_WALL_MAX)
		hi = AN_WALL_MAX;
	if (s->kind == AN_SCHEDULE_INTERVAL)
	{
		t = an_floor_div(hi, s->interval_ms) * s->interval_ms;
		*w = t;
		return t >= lo;
	}
	t = an_floor_div(hi, 1000) * 1000;
	if (t < lo)
		return 0;
	civil_from_ms(t, &c);
	return search_backward(s, c, lo, w);
}
