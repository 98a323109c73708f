/*
 * wait.c — deadlines, and the waits on sockets and time that honour them
 * and the host's cancel (see wait.h).
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
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
an_wait_socket(an_store *st, const an_deadline *d, const char *who, const char *what, int fd,
			   int for_write)
{
	const an_host *h = st->host;

	for (;;)
	{
		int			slice;
		int			n;
		int			rc;

		if ((rc = an_wait_tick(st, d, who, what, &slice)) != AN_OK)
			return rc;
		if (h && h->wait_socket)
		{
			int64_t		left = an_deadline_left(d);

			/* The host wakes for a cancel by itself: no slices needed. */
			n = h->wait_socket(h->ctx, fd, for_write, left > 3600000 ? 3600000 : (int) left);
		}
		else
		{
			struct pollfd p = {.fd = fd,.events = for_write ? POLLOUT : POLLIN};

			n = poll(&p, 1, slice);
		}
		if (n > 0)
			return AN_OK;
		if (n < 0 && errno != EINTR)
			return an_store_fail(st, AN_E_CONNECT, "waiting for %s to answer %s failed: %s", who, what,
								 strerror(errno));
	}
}

int
an_wait_until(an_store *st, int64_t until_ms, const char *who, const char *what)
{
	const an_host *h = st->host;

	for (;;)
	{
		int64_t		left = until_ms - an_mono_ms();
		struct timespec ts;

		if (an_store_interrupted(st))
			return an_store_fail(st, AN_E_CANCELED, "canceled while waiting for %s to %s", who, what);
		if (left <= 0)
			return AN_OK;
		if (h && h->sleep_ms)
		{
			/* The host wakes for a cancel by itself: no slices needed. */
			h->sleep_ms(h->ctx, left > 3600000 ? 3600000 : (int) left);
			continue;
		}
		if (left > AN_WAIT_SLICE_MS)
			left = AN_WAIT_SLICE_MS;
		ts.tv_sec = 0;
		ts.tv_nsec = (long) left * 1000000L;
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
}
