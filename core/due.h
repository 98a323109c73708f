/*
 * due.h — anarchon_due's policy, written once for every host: which slots an
 * instance should claim now under the catch_up setting.
 *
 * The hosts do only the I/O.  an_due_plan says which slot is current and
 * which range may hold missed slots; the host lists the range's slots and
 * drops those the store holds a run for, with anarchon_missed's filter
 * (missed.h); an_due_pick then chooses among what is left and appends the
 * current slot.  A host that asks nothing of the store (catch_up 'none')
 * skips the middle step: plan.look_back is 0.
 */
#ifndef ANARCHON_DUE_H
#define ANARCHON_DUE_H

#include <stddef.h>
#include <stdint.h>

#include "anarchon.h"
#include "schedule.h"

/* The most slots anarchon_due returns: catch_up_max missed ones and the current one. */
#define AN_DUE_MAX (AN_CATCH_UP_MAX_MAX + 1)

typedef struct an_due_plan
{
	int64_t		current;         /* the latest slot <= now (when has_current) */
	int			has_current;     /* the schedule has a slot at or before now */
	int			current_due;     /* ... and it is not late yet: it is returned */
	int			look_back;       /* ask the store about [from, to) */
	int64_t		from,
				to;
} an_due_plan;

/*
 * an_due_plan_make: the plan for schedule s at now (ms, the host's clock)
 * under settings st.  AN_E_INPUT with a message when catch_up_ms breaks its
 * rule (an_settings_check_catch_up); else the schedule's own errors.
 */
an_error	an_due_plan_make(const an_schedule *s, const an_settings *st, int64_t now,
							 an_due_plan *p, char *err, size_t errlen);

/*
 * an_due_pick: from missed[0..n), the slots of [from, to) with no run in
 * ascending order, write to out the slots to claim, oldest first: the newest
 * missed one ('latest') or up to catch_up_max newest ('all'), then the
 * current slot when it is due.  Returns how many.
 */
size_t		an_due_pick(const an_due_plan *p, const an_settings *st,
						const int64_t *missed, size_t n, int64_t out[AN_DUE_MAX]);

#endif							/* ANARCHON_DUE_H */
