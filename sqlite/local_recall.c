/*
 * local_recall.c — recall on the SQLite local store: which of a job's slots
 * anarchon_runs holds a run for, in any state (anarchon_missed,
 * anarchon_due, the command's catch-up).  The same method as every other
 * store's (core/store.h), so that no host asks which store it has.
 *
 * A read on the store's connection, like the pause read: before the first
 * write of a database there is no table, and no slot has a run.  A run
 * deleted by anarchon_prune is gone by the operator's choice: its slot
 * reads as one without a run, as it always has here.
 */
#include <string.h>

#include "local_store.h"
#include "missed.h"

SQLITE_EXTENSION_INIT3

static const char *const sql_recall =
"SELECT slot FROM anarchon_runs WHERE job = ?1 AND slot >= ?2 AND slot <= ?3 ORDER BY slot";

typedef struct recall_call
{
	const an_request *rq;
	const int64_t *slots;
	size_t		n;
	unsigned char *has_run;
} recall_call;

static int
do_recall(an_store *st, void *arg)
{
	recall_call *c = arg;
	sqlite3_stmt *s;
	size_t		i = 0;
	int			rc;

	if ((rc = an_sqlite_local_stmt(st, AN_LOCAL_RECALL, sql_recall, &s)) != AN_OK || s == NULL)
		return rc;
	sqlite3_bind_text(s, 1, c->rq->job, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, c->slots[0]);
	sqlite3_bind_int64(s, 3, c->slots[c->n - 1]);
	/* Both lists ascend: one merge. */
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
	{
		int64_t		ran = sqlite3_column_int64(s, 0);

		i = an_missed_mark(c->slots, c->n, i, ran, c->has_run);
	}
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? AN_OK : an_sqlite_local_fail(st, "reading the runs of a job");
}

int
an_sqlite_local_recall(an_store *st, const an_request *rq, const int64_t *slots, size_t n,
					   unsigned char *has_run)
{
	recall_call c = {rq, slots, n, has_run};

	if (n == 0)
		return AN_OK;
	memset(has_run, 0, n);
	return an_sqlite_local_call(st, NULL, rq->settings, 0, do_recall, &c);
}
