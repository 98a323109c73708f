/*
 * pause.h — pausing a job, written once for every host and store.
 *
 * A pause lives in the store (store.h, version 5), so that every host
 * sharing the store sees it.  A claim of a paused job answers AN_PAUSED
 * from the store's own claim, which reads the pause inside its atomic step
 * (a Redis claim script, SQLite's BEGIN IMMEDIATE, PostgreSQL's job row
 * lock): no claim reads the pause before that step, which would cost a
 * round trip and miss a pause written between the read and the step.
 * Hosts do two things with it here: anarchon_pause and anarchon_resume call
 * the store through an_pause_set / an_pause_end (and the paused verb and
 * function read it through an_pause_read); anarchon_missed and anarchon_due
 * drop the slots that fell inside a pause with an_pause_filter.
 *
 * Order: a claim whose atomic step comes after anarchon_pause returned
 * answers paused; one whose step came before it is ordered before the pause
 * and may have won.  A slot is "inside a pause" when start <= slot < end.
 */
#ifndef ANARCHON_PAUSE_H
#define ANARCHON_PAUSE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* The most pauses of one job anarchon_missed or anarchon_due reads for one range. */
#define AN_PAUSE_SPANS_MAX 4096

/*
 * Check an until given to anarchon_pause against the host's clock now: a
 * time ahead of now and no later than AN_SLOT_MAX (0, the start of time, is
 * in the past like any other).  AN_E_INPUT with a message otherwise.  A
 * pause without until is not checked: the hosts pass 0 to the store.
 */
an_error	an_pause_check_until(int64_t until, int64_t now, an_err *err);

/*
 * The hosts' anarchon_pause, anarchon_resume and anarchon_paused: the
 * store's method, or AN_E_UNSUPPORTED with a message naming the store and
 * a hint when it cannot hold a pause.
 */
int			an_pause_set(an_store *st, const an_request *rq, int64_t until);
int			an_pause_end(an_store *st, const an_request *rq, int *was_paused);
int			an_pause_read(an_store *st, const an_request *rq, int64_t *until);

/*
 * Keep in slots[0..n) (ascending) those outside every span (ascending by
 * start); returns how many are left, at the start of slots, in order.
 */
size_t		an_pause_drop(int64_t *slots, size_t n, const an_pause_span *spans, size_t nspans);

/*
 * Drop from slots[0..*n) (ascending) those that fell inside a pause of
 * rq->job, past or current, as the store keeps them (its pauses method).
 * A store that cannot hold a pause has none: nothing is dropped.
 */
int			an_pause_filter(an_store *st, const an_request *rq, int64_t *slots, size_t *n);

#endif							/* ANARCHON_PAUSE_H */
