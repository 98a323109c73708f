/*
 * due.h — anarchon_due's policy, written once for every host: which slots an
 * instance should claim now under the catch_up setting.
 *
 * The hosts do only the I/O.  an_due_plan says which slot is current and
 * which range may hold missed slots; the host lists the range's slots,
 * an_due_trim keeps the newest of them that the policy looks at, the host
 * drops those the store holds a run for, with anarchon_missed's filter
 * (missed.h), and an_due_pick appends the current slot.  Under 'none'
 * nothing is asked of the store: plan.look_back is 0.
 *
 * The slots looked at are chosen by the clock alone (the newest one of the
 * window under 'latest', the catch_up_max newest under 'all'), and only then
 * filtered by the store: instances that come back together and ask at
 * slightly different moments look at the same slots, so the one that asks
 * after another has caught the newest up does not reach further back for
 * an older one.  Each slot is then an ordinary claim: won once.
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
							 an_due_plan *p, an_err *err);

/*
 * an_due_trim: slots[0..n) are the slots of [from, to) in ascending order;
 * keep at their start the ones the policy looks at (the newest one under
 * 'latest', the catch_up_max newest under 'all', none under 'none') and
 * return how many.  The host then drops those with a run.
 */
size_t		an_due_trim(const an_due_plan *p, const an_settings *st, int64_t *slots, size_t n);

/*
 * an_due_pick: write to out the slots to claim, oldest first: missed[0..n)
 * (what an_due_trim kept, less the slots with a run), then the current slot
 * when it is due.  Returns how many.
 */
size_t		an_due_pick(const an_due_plan *p, const int64_t *missed, size_t n,
						int64_t out[AN_DUE_MAX]);

#endif							/* ANARCHON_DUE_H */
