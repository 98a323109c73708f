/*
 * run_lookup.c — read one run of anarchon.runs by its primary key, without
 * SPI: the whole of anarchon_check with the local store.
 *
 * A check is the backup's cheap read: one plain read, no row lock, no
 * write.  Through SPI it paid for a connection, a plan-cache lookup and an
 * executor start and end around a single index probe; here it is that probe:
 * an index scan of runs_pkey under the same snapshot SPI would take (the
 * command counter advanced, then the transaction's snapshot: the latest
 * committed state in READ COMMITTED, the transaction's own in REPEATABLE
 * READ, and this transaction's own claims either way).
 *
 * No query text is involved, so no search_path can redirect anything, and no
 * table privilege is checked: the caller needs EXECUTE on anarchon_check, not
 * SELECT on the table, and learns the state only (never the token).
 */
#include "anarchon_pg.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "executor/tuptable.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "compat.h"
#include "lease.h"

/* The attribute number of column name, which the table must have. */
static AttrNumber
column(Relation rel, const char *name)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		if (!a->attisdropped && strcmp(NameStr(a->attname), name) == 0)
			return a->attnum;
	}
	elog(ERROR, "anarchon.runs has no column \"%s\"", name);
	return InvalidAttrNumber;	/* not reached */
}

/* Copy the run in slot into run. */
static void
read_row(Relation rel, TupleTableSlot *slot, an_run *run)
{
	bool		isnull;
	char		state[16];

	slot_getallattrs(slot);
	run->attempt = DatumGetInt32(slot_getattr(slot, column(rel, "attempt"), &isnull));
	text_to_cstring_buffer(DatumGetTextPP(slot_getattr(slot, column(rel, "token"), &isnull)),
						   run->token, sizeof(run->token));
	/* anarchon.run_state is a domain over text. */
	text_to_cstring_buffer(DatumGetTextPP(slot_getattr(slot, column(rel, "state"), &isnull)),
						   state, sizeof(state));
	run->state = an_run_state_parse(state);
	run->lease_until = an_pg_ts_to_ms(DatumGetTimestampTz(slot_getattr(slot, column(rel, "lease_until"), &isnull)));
	if (run->state == AN_RUN_NONE)
		elog(ERROR, "run has an unknown state \"%s\" in anarchon.runs", state);
}

void
an_pg_lookup_run(const char *job, int64 slot_ms, an_run *run)
{
	Oid			nsp;
	Oid			relid;
	Relation	rel;
	Relation	idx;
	Oid			idxid;
	ScanKeyData key[2];
	IndexScanDesc scan;
	TupleTableSlot *slot;
	Snapshot	snap;

	/* No SPI here, so not through as_owner.c: the same version check. */
	an_pg_require_sql_version();
	nsp = get_namespace_oid("anarchon", false);
	relid = get_relname_relid("runs", nsp);
	memset(run, 0, sizeof(*run));
	run->state = AN_RUN_NONE;
	if (!OidIsValid(relid))
		elog(ERROR, "table anarchon.runs does not exist");

	rel = table_open(relid, AccessShareLock);
	idxid = an_pg_primary_key_index(rel);
	if (!OidIsValid(idxid))
		elog(ERROR, "anarchon.runs has no primary key");
	idx = index_open(idxid, AccessShareLock);

	/* The primary key is (job, slot); compare job in the index's collation. */
	ScanKeyEntryInitialize(&key[0], 0, 1, BTEqualStrategyNumber, InvalidOid,
						   idx->rd_indcollation[0], F_TEXTEQ,
						   CStringGetTextDatum(job));
	ScanKeyEntryInitialize(&key[1], 0, 2, BTEqualStrategyNumber, InvalidOid,
						   idx->rd_indcollation[1], F_TIMESTAMPTZ_EQ,
						   TimestampTzGetDatum(an_pg_ms_to_ts(slot_ms)));

	/* The snapshot a non-read-only SPI statement would take. */
	CommandCounterIncrement();
	snap = RegisterSnapshot(GetTransactionSnapshot());

	slot = table_slot_create(rel, NULL);
	scan = an_pg_index_beginscan(rel, idx, snap, 2, 0);
	index_rescan(scan, key, 2, NULL, 0);
	if (index_getnext_slot(scan, ForwardScanDirection, slot))
		read_row(rel, slot, run);
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	UnregisterSnapshot(snap);

	index_close(idx, AccessShareLock);
	table_close(rel, AccessShareLock);
}
