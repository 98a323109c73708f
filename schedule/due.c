/*
 * due.c — anarchon_due's policy (due.h).
 *
 * Why the window may not reach past max_late_ms: a missed slot is caught up
 * by an ordinary claim of (job, slot), so exactly-once rests on what every
 * store already guarantees for claims, and every store answers 'late' to a
 * first claim more than max_late_ms after its slot and keeps runs only as
 * long as that needs.  A longer window would ask for slots the store may
 * have forgotten: two instances could both win one.
 */
#include <string.h>

#include "due.h"

an_error
an_due_plan_make(const an_schedule *s, const an_settings *st, int64_t now,
				 an_due_plan *p, an_err *err)
{
	an_error	rc;
	int64_t		from;

	memset(p, 0, sizeof(*p));
	if ((rc = an_settings_check_catch_up(st, err)) != AN_OK)
		return rc;
	if ((rc = an_schedule_slot(s, now, &p->current, &p->has_current, err)) != AN_OK)
		return rc;
	if (!p->has_current)
		return AN_OK;
	/* A slot that began more than max_late_ms ago is itself missed: a claim answers 'late'. */
	p->current_due = now - p->current <= st->max_late_ms;
	if (st->catch_up == AN_CATCH_UP_NONE)
		return AN_OK;
	from = now - st->catch_up_ms;
	/* No run can exist before the first slot a claim accepts. */
	if (from < AN_SLOT_MIN)
		from = AN_SLOT_MIN;
	if (from < p->current)
	{
		p->look_back = 1;
		p->from = from;
		p->to = p->current;
	}
	return AN_OK;
}

size_t
an_due_trim(const an_due_plan *p, const an_settings *st, int64_t *slots, size_t n)
{
	size_t		want = 0;

	if (p->look_back)
		want = st->catch_up == AN_CATCH_UP_ALL ? (size_t) st->catch_up_max
			: st->catch_up == AN_CATCH_UP_LATEST ? 1 : 0;
	if (want > n)
		want = n;
	/* The newest ones, kept in ascending order: claims go oldest first. */
	if (want > 0)
		memmove(slots, slots + (n - want), want * sizeof(*slots));
	return want;
}

size_t
an_due_pick(const an_due_plan *p, const int64_t *missed, size_t n, int64_t out[AN_DUE_MAX])
{
	size_t		k = 0;

	/* an_due_trim kept at most catch_up_max (<= AN_DUE_MAX - 1) slots. */
	for (size_t i = 0; i < n && k < AN_DUE_MAX - 1; i++)
		out[k++] = missed[i];
	if (p->has_current && p->current_due)
		out[k++] = p->current;
	return k;
}
