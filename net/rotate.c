/*
 * rotate.c — the one rotation over a store's servers, and the one resend
 * rule (rotate.h).
 */
#include "rotate.h"

static int
stops(int rc, int flags)
{
	if (rc == AN_E_CANCELED)
		return 1;
	if ((flags & AN_ROTATE_STOP_CONFIG) && (rc == AN_E_CONFIG || rc == AN_E_AUTH))
		return 1;
	return (flags & AN_ROTATE_ONLY_NET) && rc != AN_E_CONNECT && rc != AN_E_TIMEOUT;
}

int
an_rotate(an_store *st, an_rotation *r, const an_deadline *d, int flags,
		  an_try_server try_one, void *ctx, const char *who, const char *noun)
{
	int			first = r->n > 0 ? r->next % r->n : 0;
	int			last = -1;
	int			rc = AN_E_CONNECT;
	int			k;

	if (r->n <= 0)
		return an_store_fail(st, AN_E_CONNECT, "%s: no %s to connect to", who, noun);
	for (k = 0; k < r->n; k++)
	{
		int			i = (first + k) % r->n;
		an_deadline share = *d;
		int64_t		left = an_deadline_left(d);
		int			one;

		/* At least one try: the time may be up only after the first. */
		if (last >= 0 && (left <= 0 || an_store_interrupted(st)))
			break;
		if (k + 1 < r->n)
			share.end_ms = an_mono_ms() + left / (r->n - k);
		an_store_clear(st);
		if ((one = try_one(st, ctx, i, &share)) == AN_ROTATE_SKIP)
			continue;
		rc = one;
		last = i;
		if (rc == AN_OK)
		{
			r->next = i;
			return AN_OK;
		}
		if (stops(rc, flags))
			break;
	}
	/* None answered: the failed one first tried goes last next time. */
	r->next = (last < 0 || k >= r->n ? first + 1 : last + 1) % r->n;
	if (last < 0)
		return an_store_fail(st, AN_E_CONNECT, "%s: no %s could be tried", who, noun);
	if (st->err.msg[0] == '\0')
		return an_store_fail(st, rc, "%s: every %s failed", who, noun);
	return rc;
}

void
an_rotation_failed(an_rotation *r)
{
	if (r->n > 1)
		r->next = (r->next + 1) % r->n;
}

int
an_resend_once(an_store *st, int rc, int kept, int *tries)
{
	if (rc != AN_E_CONNECT || !kept || ++*tries > 1)
		return 0;
	an_store_clear(st);
	return 1;
}
