/*
 * missed.h — anarchon_missed's filter, written once for both hosts: from
 * the slots of a range that can no longer be claimed, drop those the store
 * holds a run for.  Every store is asked through its recall method
 * (an_missed_recall); the local ones read their table in order
 * (an_missed_mark).
 */
#ifndef ANARCHON_MISSED_H
#define ANARCHON_MISSED_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/*
 * For a recall method that reads its runs in ascending order: mark in
 * has_run the slot equal to ran, if any, looking from slots[next] on, and
 * return where to look for the next (greater) run.  Both lists ascend, so
 * one pass over each answers all of them.
 */
size_t		an_missed_mark(const int64_t *slots, size_t n, size_t next, int64_t ran, unsigned char *has_run);

/*
 * Ask st which of slots[0..*n) hold a run of rq->job and keep the others in
 * slots, *n updated.  AN_E_UNSUPPORTED, with a message and a hint, for a
 * store that cannot tell (no recall method); else the recall's own result.
 */
int			an_missed_recall(an_store *st, const an_request *rq, int64_t *slots, size_t *n);

/*
 * Can st tell which slots of rq->job hold a run, before any slot is asked
 * about?  The store's recall with no slots: it answers at once, without a
 * round trip, AN_OK or AN_E_UNSUPPORTED with its message and hint (core/store.h
 * says so of recall).  What catch-up needs: the command refuses it up front
 * with this store's own words rather than when a missed slot first shows.
 */
int			an_missed_can_recall(an_store *st, const an_request *rq);

#endif							/* ANARCHON_MISSED_H */
