/*
 * schedule_range.c — every slot of a schedule in a range [from, to), for
 * anarchon_slots and anarchon_missed.
 *
 * The range is walked with an_schedule_next_slot, so it holds exactly the
 * slots that anarchon_slot and anarchon_next_slot would give one by one, time
 * zones and daylight saving included.  The count is capped: a range that
 * would list more than AN_SCHEDULE_RANGE_MAX slots is an error, not a result
 * that fills the caller's memory.
 */
#include "schedule.h"

an_error
an_schedule_range(const an_schedule *s, int64_t from, int64_t to,
				  int (*emit) (void *arg, int64_t slot), void *arg,
				  an_err *err)
{
	int64_t		slot;
	int			found;
	long		count = 0;
	an_error	rc;

	if (an_validate_instant(from, err) != AN_OK ||
		an_validate_instant(to, err) != AN_OK)
	{
		an_errf(err, "the range [%lld, %lld) is out of bounds: from and to are instants in milliseconds since 1970-01-01 UTC, from 0 to %lld",
				(long long) from, (long long) to, (long long) AN_SLOT_MAX);
		return AN_E_INPUT;
	}
	if (from > to)
	{
		an_errf(err, "the range is reversed: its start (%lld) is after its end (%lld); the slots listed are those with from <= slot < to, so give the earlier time first",
				(long long) from, (long long) to);
		return AN_E_INPUT;
	}
	if (from == to)
		return AN_OK;
	/* The first slot at or after from. */
	if ((rc = an_schedule_slot(s, from, &slot, &found, err)) != AN_OK)
		return rc;
	if (!found || slot != from)
	{
		if ((rc = an_schedule_next_slot(s, from, &slot, &found, err)) != AN_OK)
			return rc;
	}
	while (found && slot < to)
	{
		int			stop;

		if (count == AN_SCHEDULE_RANGE_MAX)
		{
			an_errf(err, "the range [%lld, %lld) holds more than %d slots (the next one is %lld): ask for a shorter range",
					(long long) from, (long long) to, AN_SCHEDULE_RANGE_MAX, (long long) slot);
			return AN_E_INPUT;
		}
		if ((stop = emit(arg, slot)) != 0)
			return stop < 0 ? AN_E_NOMEM : AN_OK;
		count++;
		if ((rc = an_schedule_next_slot(s, slot, &slot, &found, err)) != AN_OK)
			return rc;
	}
	return AN_OK;
}
