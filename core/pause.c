/*
 * pause.c — the pause of a job as every host sees it (pause.h): the calls
 * of the store's pause methods, and the filter of missed slots.  A claim
 * reads no pause here: the store's claim decides it (core/store.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pause.h"


an_error
an_pause_check_until(int64_t until, int64_t now, an_err *err)
{
	if (until <= now)
	{
		an_errf(err, "until must be in the future: %lld is not after now (%lld)",
				 (long long) until, (long long) now);
		return AN_E_INPUT;
	}
	if (until > AN_SLOT_MAX)
	{
		an_errf(err, "until must be no later than 9999-12-31 23:59:59.999 UTC (%lld ms)",
				 (long long) AN_SLOT_MAX);
		return AN_E_INPUT;
	}
	return AN_OK;
}

int
an_pause_set(an_store *st, const an_request *rq, int64_t until)
{
	const an_store_admin *a;

	an_store_clear(st);
	return (a = an_store_admin_for(st, AN_CAP_PAUSE)) ? a->pause(st, rq, until) : (int) st->err.code;
}

int
an_pause_end(an_store *st, const an_request *rq, int *was_paused)
{
	const an_store_admin *a;

	*was_paused = 0;
	an_store_clear(st);
	return (a = an_store_admin_for(st, AN_CAP_PAUSE)) ? a->resume(st, rq, was_paused) : (int) st->err.code;
}

int
an_pause_read(an_store *st, const an_request *rq, int64_t *until)
{
	const an_store_admin *a;

	*until = 0;
	an_store_clear(st);
	return (a = an_store_admin_for(st, AN_CAP_PAUSED)) ? a->paused(st, rq, until) : (int) st->err.code;
}

size_t
an_pause_drop(int64_t *slots, size_t n, const an_pause_span *spans, size_t nspans)
{
	size_t		keep = 0;

	for (size_t i = 0; i < n; i++)
	{
		int			inside = 0;

		/* Spans may overlap (a pause extended while another was read): test them all. */
		for (size_t j = 0; j < nspans && spans[j].start <= slots[i] && !inside; j++)
			inside = slots[i] < spans[j].end;
		if (!inside)
			slots[keep++] = slots[i];
	}
	return keep;
}

int
an_pause_filter(an_store *st, const an_request *rq, int64_t *slots, size_t *n)
{
	an_pause_span *spans;
	size_t		found = 0;
	int			rc;

	/* A store that keeps no pauses has none to drop. */
	if (*n == 0 || !AN_STORE_HAS(st, AN_CAP_PAUSES))
		return AN_OK;
	if ((spans = malloc(AN_PAUSE_SPANS_MAX * sizeof(*spans))) == NULL)
		return an_store_fail(st, AN_E_NOMEM, "out of memory reading the pauses of a job");
	an_store_clear(st);
	rc = st->m->admin->pauses(st, rq, slots[0], slots[*n - 1] + 1, spans, AN_PAUSE_SPANS_MAX, &found);
	if (rc == AN_OK && found > AN_PAUSE_SPANS_MAX)
	{
		an_store_fail(st, AN_E_UNSUPPORTED, "job \"%s\" has %zu pauses in the range asked about, more than %d",
					  rq->job, found, AN_PAUSE_SPANS_MAX);
		rc = an_store_hintf(st, "Ask about a shorter range.");
	}
	if (rc == AN_OK)
		*n = an_pause_drop(slots, *n, spans, found);
	free(spans);
	return rc;
}
