/*
 * missed.c — anarchon_missed's filter (missed.h).
 */
#include <stdlib.h>

#include "missed.h"

size_t
an_missed_mark(const int64_t *slots, size_t n, size_t next, int64_t ran, unsigned char *has_run)
{
	while (next < n && slots[next] < ran)
		next++;
	if (next < n && slots[next] == ran)
		has_run[next] = 1;
	return next;
}

/* A store without a recall method: it keeps no run to look up. */
static int
cannot_recall(an_store *st)
{
	an_store_fail(st, AN_E_UNSUPPORTED,
				  "the %s store cannot tell which slots were missed: it keeps no runs that can be looked up by slot",
				  st->m->name);
	return an_store_hintf(st, "anarchon_missed works on the local store and on Redis with strategy=lease.");
}

int
an_missed_can_recall(an_store *st, const an_request *rq)
{
	int			(*recall) (an_store *, const an_request *, const int64_t *, size_t,
						   unsigned char *) = AN_STORE_METHOD(st, recall);

	an_store_clear(st);
	return recall == NULL ? cannot_recall(st) : recall(st, rq, NULL, 0, NULL);
}

int
an_missed_recall(an_store *st, const an_request *rq, int64_t *slots, size_t *n)
{
	int			(*recall) (an_store *, const an_request *, const int64_t *, size_t,
						   unsigned char *) = AN_STORE_METHOD(st, recall);
	unsigned char *has_run;
	size_t		keep = 0;
	int			rc;

	if (recall == NULL)
		return cannot_recall(st);
	if (*n == 0)
		return AN_OK;
	if ((has_run = malloc(*n)) == NULL)
		return an_store_fail(st, AN_E_NOMEM, "out of memory asking the %s store for %zu slots", st->m->name, *n);
	an_store_clear(st);
	if ((rc = recall(st, rq, slots, *n, has_run)) == AN_OK)
	{
		for (size_t i = 0; i < *n; i++)
			if (!has_run[i])
				slots[keep++] = slots[i];
		*n = keep;
	}
	free(has_run);
	return rc;
}
