/*
 * schedule_zone.c — slots of a schedule with a time zone (CRON_TZ), daylight
 * saving included.
 *
 * A zone's time line is a row of spans, each with one UTC offset (tz.h).
 * Inside a span the wall clock is UTC plus that offset, so the schedule's
 * matches there are found by the zone-free search on wall times
 * (schedule_search.c) and turned back into instants.  What happens at the
 * joints is the daylight-saving rule of schedule.h:
 *
 *   - clocks go back (the next span's offset is smaller): the walls just
 *     before the change are shown again after it.  A fixed-time schedule
 *     takes a wall time only where it is shown first, so each candidate is
 *     checked against the spans of the two days before its own (no zone
 *     moves its clock by more than 26 hours, so nothing older can show the
 *     same wall);
 *   - clocks go forward (the next span's offset is larger): the walls in
 *     between are never shown.  For a fixed-time schedule, if any of them
 *     matches (and is not shown elsewhere nearby, which no real zone does but
 *     exactness costs one check), the change's own instant is a slot: the
 *     first instant after the gap, one slot for the whole gap.
 *
 * A schedule that follows the wall clock simply takes every match of every
 * span, and nothing from a gap.  Both directions of search (the slot at or
 * before an instant, the next one after it) apply the same rule, so the
 * slots form one set whichever way it is walked.
 */
#include "schedule_wall.h"

/* Two spans farther apart than this never show the same wall time. */
#define NEAR_MS (INT64_C(2) * 86400000)

static int64_t
max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/*
 * Is wall time w shown at some instant of [from, to)?  When it is, *where is
 * the part of the span that shows it (cut to [from, to)), so that a caller
 * can skip every wall that part shows.
 */
static an_error
wall_shown(an_tz *tz, int64_t w, int64_t from, int64_t to, int *shown, an_tz_span *where,
		   an_err *err)
{
	int64_t		t = from;

	*shown = 0;
	while (t < to)
	{
		an_tz_span	sp;
		an_error	rc = an_tz_span_at(tz, t, &sp, err);

		if (rc != AN_OK)
			return rc;
		sp.start = max64(sp.start, from);
		sp.end = min64(sp.end, to);
		if (w >= sp.start + sp.offset && w < sp.end + sp.offset)
		{
			*shown = 1;
			*where = sp;
			return AN_OK;
		}
		t = sp.end;
	}
	return AN_OK;
}

/*
 * Does a fixed-time schedule have a slot in the gap [glo, ghi] of wall times
 * skipped at instant `at`?  Some match must be shown nowhere near.
 */
static an_error
gap_has_slot(const an_schedule *s, int64_t at, int64_t glo, int64_t ghi, int *yes,
			 an_err *err)
{
	int64_t		w;

	*yes = 0;
	while (glo <= ghi && an_wall_next(s, glo, ghi, &w))
	{
		an_tz_span	where;
		int			shown;
		an_error	rc = wall_shown(s->tz, w, at - NEAR_MS, at + NEAR_MS, &shown, &where,
									err);

		if (rc != AN_OK)
			return rc;
		if (!shown)
		{
			*yes = 1;
			return AN_OK;
		}
		glo = where.end + where.offset;
	}
	return AN_OK;
}

/*
 * Does span sp open with a slot: is it a fixed-time schedule, do the clocks go
 * forward at sp->start, and does the gap they jump over hold a slot?  Both
 * searches ask this of the same spans, so they agree on the slot at
 * sp->start, the first instant after the gap.
 */
static an_error
gap_before(const an_schedule *s, const an_tz_span *sp, int *yes, an_err *err)
{
	an_tz_span	prev;
	an_error	rc;

	*yes = 0;
	if (!s->fixed_time || sp->start == AN_TZ_NEVER_BEFORE)
		return AN_OK;
	if ((rc = an_tz_span_at(s->tz, sp->start - 1, &prev, err)) != AN_OK)
		return rc;
	if (sp->offset <= prev.offset)
		return AN_OK;
	return gap_has_slot(s, sp->start, sp->start + prev.offset, sp->start + sp->offset - 1, yes,
						err);
}

/*
 * The earliest match of s in span sp with an instant in [lo, hi], taking
 * only first showings for a fixed-time schedule.
 */
static an_error
span_first(const an_schedule *s, const an_tz_span *sp, int64_t lo, int64_t hi,
		   int64_t *slot, int *found, an_err *err)
{
	int64_t		wlo = lo + sp->offset,
				whi = hi + sp->offset,
				w;

	*found = 0;
	while (wlo <= whi && an_wall_next(s, wlo, whi, &w))
	{
		an_tz_span	where;
		int			shown = 0;

		if (s->fixed_time && sp->start != AN_TZ_NEVER_BEFORE)
		{
			an_error	rc = wall_shown(s->tz, w, sp->start - NEAR_MS, sp->start, &shown,
										&where, err);

			if (rc != AN_OK)
				return rc;
		}
		if (!shown)
		{
			*slot = w - sp->offset;
			*found = 1;
			return AN_OK;
		}
		/* Every wall that part showed before is taken: go past them. */
		wlo = where.end + where.offset;
	}
	return AN_OK;
}

/* The latest such match, as span_first but from hi down. */
static an_error
span_last(const an_schedule *s, const an_tz_span *sp, int64_t lo, int64_t hi,
		  int64_t *slot, int *found, an_err *err)
{
	int64_t		wlo = lo + sp->offset,
				whi = hi + sp->offset,
				w;

	*found = 0;
	while (wlo <= whi && an_wall_prev(s, whi, wlo, &w))
	{
		an_tz_span	where;
		int			shown = 0;

		if (s->fixed_time && sp->start != AN_TZ_NEVER_BEFORE)
		{
			an_error	rc = wall_shown(s->tz, w, sp->start - NEAR_MS, sp->start, &shown,
										&where, err);

			if (rc != AN_OK)
				return rc;
		}
		if (!shown)
		{
			*slot = w - sp->offset;
			*found = 1;
			return AN_OK;
		}
		whi = where.start + where.offset - 1;
	}
	return AN_OK;
}

an_error
an_zone_next_slot(const an_schedule *s, int64_t after, int64_t *slot, int *found,
				  an_err *err)
{
	int64_t		t = after + 1;
	an_error	rc;

	*found = 0;
	while (t <= AN_SLOT_MAX)
	{
		an_tz_span	sp;
		int			gap = 0;

		if ((rc = an_tz_span_at(s->tz, t, &sp, err)) != AN_OK)
			return rc;
		/*
		 * A span that starts at t (every span after the first, and the
		 * first when `after` is the last instant before a change) may open
		 * with the slot of the gap before it, which precedes its matches.
		 */
		if (sp.start == t && (rc = gap_before(s, &sp, &gap, err)) != AN_OK)
			return rc;
		if (gap)
		{
			*slot = sp.start;
			*found = 1;
			return AN_OK;
		}
		if ((rc = span_first(s, &sp, t, min64(sp.end - 1, AN_SLOT_MAX), slot, found,
							 err)) != AN_OK || *found)
			return rc;
		if (sp.end > AN_SLOT_MAX)
			return AN_OK;
		t = sp.end;
	}
	return AN_OK;
}

an_error
an_zone_slot(const an_schedule *s, int64_t at, int64_t *slot, int *found,
			 an_err *err)
{
	int64_t		t = at;
	an_error	rc;

	*found = 0;
	while (t >= 0)
	{
		an_tz_span	sp;
		int			gap;

		if ((rc = an_tz_span_at(s->tz, t, &sp, err)) != AN_OK ||
			(rc = span_last(s, &sp, max64(sp.start, 0), t, slot, found, err)) != AN_OK ||
			*found)
			return rc;
		if (sp.start < 0)
			return AN_OK;
		/* Before the span's matches comes the slot of the gap it may open with. */
		if ((rc = gap_before(s, &sp, &gap, err)) != AN_OK)
			return rc;
		if (gap)
		{
			*slot = sp.start;
			*found = 1;
			return AN_OK;
		}
		t = sp.start - 1;
	}
	return AN_OK;
}
