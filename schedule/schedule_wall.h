/*
 * schedule_wall.h — inside the schedule search: matching on a wall clock.
 *
 * schedule_search.c finds the times a schedule matches on a calendar without
 * time zones (the UTC one, or a zone's wall clock read as if it were UTC);
 * schedule_zone.c walks a zone's spans of constant offset and asks it for the
 * matches inside each.  Not for hosts: they use schedule.h.
 */
#ifndef ANARCHON_SCHEDULE_WALL_H
#define ANARCHON_SCHEDULE_WALL_H

#include "schedule.h"

/* Wall times the searches cover: a little more than the slot range, either side. */
#define AN_WALL_MIN (-INT64_C(2) * 86400000)
#define AN_WALL_MAX (AN_SLOT_MAX + INT64_C(2) * 86400000)

/*
 * The earliest wall time w, lo <= w <= hi, that s matches (whole seconds for
 * cron, multiples of the interval for intervals); 0 when there is none.
 * Bounds outside [AN_WALL_MIN, AN_WALL_MAX] are cut to it.
 */
int			an_wall_next(const an_schedule *s, int64_t lo, int64_t hi, int64_t *w);

/* The latest such wall time, hi >= w >= lo; 0 when there is none. */
int			an_wall_prev(const an_schedule *s, int64_t hi, int64_t lo, int64_t *w);

/* schedule_zone.c: an_schedule_slot and an_schedule_next_slot for s->tz != NULL. */
an_error	an_zone_slot(const an_schedule *s, int64_t at, int64_t *slot, int *found,
						 an_err *err);
an_error	an_zone_next_slot(const an_schedule *s, int64_t after, int64_t *slot, int *found,
							  an_err *err);

/* Floor division, for wall times before 1970. */
static inline int64_t
an_floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

#endif							/* ANARCHON_SCHEDULE_WALL_H */
