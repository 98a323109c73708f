/*
 * run_lookup.c — read one run of anarchon.runs by its primary key, without
 * SPI (key_lookup.c): the whole of anarchon_check with the local store, and
 * the run a loser's claim looks at first (run_view.c).
 *
 * A check is the backup's cheap read: one plain read, no row lock, no
 * write.  The caller needs EXECUTE on anarchon_check, not SELECT on the
 * table, and learns the state only (never the token).
 */

#include "anarchon_pg.h"

#include "executor/tuptable.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "lease.h"

/* Copy the run in slot into arg (an an_run). */
static void
read_row(Relation rel, TupleTableSlot *slot, void *arg)
{
	an_run	   *run = arg;
	bool		isnull;
	char		state[16];

	run->attempt = DatumGetInt32(slot_getattr(slot, an_pg_column(rel, "attempt"), &isnull));
	text_to_cstring_buffer(DatumGetTextPP(slot_getattr(slot, an_pg_column(rel, "token"), &isnull)),
						   run->token, sizeof(run->token));
	/* anarchon.run_state is a domain over text. */
	text_to_cstring_buffer(DatumGetTextPP(slot_getattr(slot, an_pg_column(rel, "state"), &isnull)),
						   state, sizeof(state));
	run->state = an_run_state_parse(state);
	run->lease_until = an_pg_ts_to_ms(DatumGetTimestampTz(slot_getattr(slot, an_pg_column(rel, "lease_until"), &isnull)));
	if (run->state == AN_RUN_NONE)
		elog(ERROR, "run has an unknown state \"%s\" in anarchon.runs", state);
}

void
an_pg_lookup_run(const char *job, int64 slot_ms, an_run *run)
{
	Snapshot	snap = an_pg_probe_snapshot();

	an_pg_lookup_run_in(snap, job, slot_ms, run);
	UnregisterSnapshot(snap);
}

void
an_pg_lookup_run_in(Snapshot snap, const char *job, int64 slot_ms, an_run *run)
{
	Datum		keys[2] = {CStringGetTextDatum(job), TimestampTzGetDatum(an_pg_ms_to_ts(slot_ms))};
	RegProcedure eq[2] = {F_TEXTEQ, F_TIMESTAMPTZ_EQ};

	memset(run, 0, sizeof(*run));
	run->state = AN_RUN_NONE;
	(void) an_pg_key_lookup_in("runs", snap, 2, keys, eq, read_row, run);
}
