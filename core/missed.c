/*
 * missed.c — anarchon_missed's filter (missed.h).
 */
#include <stdlib.h>

#include "missed.h"

void
an_missed_merge_init(an_missed_merge *m, int64_t *slots, size_t n)
{
	m->slots = slots;
	m->n = n;
	m->next = 0;
	m->keep = 0;
}

void
an_missed_merge_ran(an_missed_merge *m, int64_t ran)
{
	for (; m->next < m->n && m->slots[m->next] < ran; m->next++)
		m->slots[m->keep++] = m->slots[m->next];
	if (m->next < m->n && m->slots[m->next] == ran)
		m->next++;
}

size_t
an_missed_merge_end(an_missed_merge *m)
{
	for (; m->next < m->n; m->next++)
		m->slots[m->keep++] = m->slots[m->next];
	return m->keep;
}

int
an_missed_recall(an_store *st, const an_request *rq, int64_t *slots, size_t *n)
{
	int			(*recall) (an_store *, const an_request *, const int64_t *, size_t,
						   unsigned char *) = AN_STORE_RECALL(st);
	unsigned char *has_run;
	size_t		keep = 0;
	int			rc;

	if (recall == NULL)
	{
		an_store_fail(st, AN_E_UNSUPPORTED,
					  "the %s store cannot tell which slots were missed: it keeps no runs that can be looked up by slot",
					  st->m->name);
		return an_store_hintf(st, "anarchon_missed works on the local store and on Redis with strategy=lease.");
	}
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
