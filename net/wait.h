/*
 * wait.h — bounded, cancellable waiting for network stores.
 *
 * A store called from a PostgreSQL backend must never block longer than its
 * timeout_ms and must notice a query cancel quickly.  Every wait on a socket
 * is an_wait_socket, which waits with the host's wait_socket when the host
 * lends one (PostgreSQL: its latch and the socket together, so a cancel
 * wakes it) and otherwise polls in short slices.  Between waits it asks
 * an_wait_tick whether time is left and whether the host wants to stop.
 * Timed waits (an_wait_until) sleep with the host's sleep_ms the same way.
 */
#ifndef ANARCHON_WAIT_H
#define ANARCHON_WAIT_H

#include <stdint.h>

#include "store.h"

/* The longest single sleep inside a wait: how late a cancel may be noticed. */
#define AN_WAIT_SLICE_MS 50

typedef struct an_deadline
{
	int64_t		end_ms;          /* on the monotonic clock */
	int64_t		timeout_ms;      /* what was asked, for messages */
} an_deadline;

/* Milliseconds on a clock that never jumps (CLOCK_MONOTONIC). */
int64_t		an_mono_ms(void);

void		an_deadline_start(an_deadline *d, int64_t timeout_ms);

/* Milliseconds left, never negative. */
int64_t		an_deadline_left(const an_deadline *d);

/*
 * an_wait_tick: call before each slice of a wait.  Returns AN_OK and the
 * length of the next slice in *slice_ms (at most AN_WAIT_SLICE_MS, at least
 * 1), or fails st with AN_E_CANCELED when the host asked to stop, or with
 * AN_E_TIMEOUT when the deadline passed; `who` names the server and `what`
 * the request it has not answered yet ("RabbitMQ at amqp://h:5672/",
 * "the claim's publish").
 */
int			an_wait_tick(an_store *st, const an_deadline *d, const char *who,
						 const char *what, int *slice_ms);

/*
 * an_wait_socket: wait until fd is readable (writable when for_write), the
 * deadline passes (AN_E_TIMEOUT) or the host cancels (AN_E_CANCELED), with
 * the host's wait_socket when it lends one, else with poll() in slices.
 * Failures name `who` and `what` as an_wait_tick's do; a failed wait on the
 * socket itself is AN_E_CONNECT.
 */
int			an_wait_socket(an_store *st, const an_deadline *d, const char *who,
						   const char *what, int fd, int for_write);

/*
 * Sleep until until_ms (on an_mono_ms), in slices, asking the host between
 * them whether to stop: AN_OK at the time, or AN_E_CANCELED (st failed with
 * `who` and `what` in the message).
 */
int			an_wait_until(an_store *st, int64_t until_ms, const char *who, const char *what);

#endif							/* ANARCHON_WAIT_H */
