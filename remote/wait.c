/*
 * wait.c — deadlines cut into short slices (see wait.h).
 */
#include <errno.h>
#include <time.h>

#include "wait.h"

int64_t
an_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
an_deadline_start(an_deadline *d, int64_t timeout_ms)
{
	d->timeout_ms = timeout_ms;
	d->end_ms = an_mono_ms() + timeout_ms;
}

int64_t
an_deadline_left(const an_deadline *d)
{
	int64_t		left = d->end_ms - an_mono_ms();

	return left > 0 ? left : 0;
}

int
an_wait_tick(an_store *st, const an_deadline *d, const char *who,
			 const char *what, int *slice_ms)
{
	int64_t		left;

	if (an_store_interrupted(st))
		return an_store_fail(st, AN_E_CANCELED, "canceled while waiting for %s to answer %s", who, what);
	left = an_deadline_left(d);
	if (left <= 0)
		return an_store_fail(st, AN_E_TIMEOUT,
							 "%s did not answer %s within timeout_ms (%lld ms)",
							 who, what, (long long) d->timeout_ms);
	*slice_ms = left < AN_WAIT_SLICE_MS ? (int) left : AN_WAIT_SLICE_MS;
	return AN_OK;
}

int
an_wait_until(an_store *st, int64_t until_ms, const char *who, const char *what)
{
	for (;;)
	{
		int64_t		left = until_ms - an_mono_ms();
		struct timespec ts;

		if (an_store_interrupted(st))
			return an_store_fail(st, AN_E_CANCELED, "canceled while waiting for %s to %s", who, what);
		if (left <= 0)
			return AN_OK;
		if (left > AN_WAIT_SLICE_MS)
			left = AN_WAIT_SLICE_MS;
		ts.tv_sec = 0;
		ts.tv_nsec = (long) left * 1000000L;
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
}
