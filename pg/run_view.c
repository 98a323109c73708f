/*
 * run_view.c — the run a claim asks about and whether its job is paused,
 * read by index probes under one snapshot, without SPI and without a lock.
 *
 * Two steps of a claim on the local store read this view (local_store.c):
 *
 *   - a loser's peek (core/lease.h), before the job's lock: most claims of
 *     a slot lose, the run already running or done, and their answer writes
 *     nothing, so it needs only what was committed (core/lease.c decides
 *     whether the view is enough);
 *   - the first read under the job's lock: a paused claim answers from the
 *     view, and when the view has no run there is no row to lock either.
 *     Only a run that exists is read again FOR UPDATE.
 *
 * The two probes share the snapshot so that the view is one moment's state,
 * as the single SPI statement each replaces gave: a pause and a run read at
 * two moments could answer what was true at neither.  The pause is judged
 * as local_pause.c judges it for anarchon_paused: a pause of the job whose
 * end is missing or after now holds.
 */
#include "anarchon_pg.h"

#include "executor/tuptable.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/snapmgr.h"

#include "lease.h"

typedef struct pause_seen
{
	TimestampTz now;
	int			held;
} pause_seen;

/* A pause of the job, newest first: stop at the first that holds at now. */
static bool
visit_pause(Relation rel, TupleTableSlot *slot, void *arg)
{
	pause_seen *seen = arg;
	bool		isnull;
	Datum		until = slot_getattr(slot, an_pg_column(rel, "until"), &isnull);

	if (isnull || DatumGetTimestampTz(until) > seen->now)
		seen->held = 1;
	return seen->held;
}

void
an_pg_run_view(const char *job, int64 slot_ms, int64 now_ms, an_run *run, int *paused)
{
	Snapshot	snap = an_pg_probe_snapshot();
	Datum		key = CStringGetTextDatum(job);
	RegProcedure eq = F_TEXTEQ;
	pause_seen	seen = {an_pg_ms_to_ts(now_ms), 0};

	an_pg_lookup_run_in(snap, job, slot_ms, run);
	(void) an_pg_key_prefix_walk("pauses", snap, 1, &key, &eq, BackwardScanDirection,
								 visit_pause, &seen);
	UnregisterSnapshot(snap);
	*paused = seen.held;
}
