/*
 * schedule_slot.c — the slot of any schedule at or before an instant, and
 * the next one after it (schedule.h): a schedule in UTC is searched on its
 * own calendar (schedule_search.c), one with a time zone span by span
 * (schedule_zone.c), which searches the same way on its wall clock.
 */
#include "schedule_wall.h"

an_error
an_schedule_slot(const an_schedule *s, int64_t at, int64_t *slot, int *found,
				 an_err *err)
{
	an_error	rc;

	*found = 0;
	if ((rc = an_validate_instant(at, err)) != AN_OK)
		return rc;
	if (s->tz != NULL)
		return an_zone_slot(s, at, slot, found, err);
	*found = an_wall_prev(s, at, 0, slot);
	return AN_OK;
}

an_error
an_schedule_next_slot(const an_schedule *s, int64_t after, int64_t *slot, int *found,
					  an_err *err)
{
	an_error	rc;

	*found = 0;
	if ((rc = an_validate_instant(after, err)) != AN_OK)
		return rc;
	if (s->tz != NULL)
		return an_zone_next_slot(s, after, slot, found, err);
	*found = an_wall_next(s, after + 1, AN_SLOT_MAX, slot);
	return AN_OK;
}
