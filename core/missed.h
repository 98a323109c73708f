/*
 * missed.h — anarchon_missed's filter, written once for both hosts: from
 * the slots of a range that can no longer be claimed, drop those the store
 * holds a run for.  The local stores read their own table in order and
 * merge (an_missed_merge); a network store is asked through its recall
 * method (an_missed_recall).
 */
#ifndef ANARCHON_MISSED_H
#define ANARCHON_MISSED_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/*
 * A merge of the sorted slots with the sorted slots that have a run, one
 * run at a time: an_missed_merge_init, an_missed_merge_ran for each run in
 * ascending order, then an_missed_merge_end, which returns how many slots
 * are left (at the start of slots, in order).
 */
typedef struct an_missed_merge
{
	int64_t    *slots;
	size_t		n;
	size_t		next;            /* the first slot not yet compared */
	size_t		keep;            /* slots kept so far */
} an_missed_merge;

void		an_missed_merge_init(an_missed_merge *m, int64_t *slots, size_t n);
void		an_missed_merge_ran(an_missed_merge *m, int64_t ran);
size_t		an_missed_merge_end(an_missed_merge *m);

/*
 * Ask st which of slots[0..*n) hold a run of rq->job and keep the others in
 * slots, *n updated.  AN_E_UNSUPPORTED, with a message and a hint, for a
 * store that cannot tell (no recall method); else the recall's own result.
 */
int			an_missed_recall(an_store *st, const an_request *rq, int64_t *slots, size_t *n);

#endif							/* ANARCHON_MISSED_H */
