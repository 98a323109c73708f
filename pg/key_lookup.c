/*
 * key_lookup.c — one row of a table of schema anarchon, found by its primary
 * key without SPI.
 *
 * The reads every call makes (the job's owner, the run a check asks about,
 * a claim's run and pause) are index probes.  Through SPI each paid for a
 * connection, a switch to the schema's owner, a plan-cache lookup and an
 * executor start and end; here it is the probe, under the snapshot a
 * non-read-only SPI statement would take (the command counter advanced,
 * then the transaction's snapshot: the latest committed state in READ
 * COMMITTED, the transaction's own in REPEATABLE READ, and this
 * transaction's own writes either way),
 * or under one the caller took that way for several probes that must agree
 * (an_pg_probe_snapshot).  A prefix walk visits the rows of the first key
 * columns in the index's order, forwards or backwards (a job's pauses,
 * newest first).
 *
 * No query text is involved, so no search_path can redirect anything, and
 * no table privilege is checked: what a caller may learn is the calling
 * function's business, as it is for SPI run as the schema's owner.
 *
 * A table's OID and its primary key's are looked up by name once and kept
 * for the session, as a plan keeps them, until the relation cache says one
 * of them may have changed (DROP or CREATE EXTENSION, REINDEX CONCURRENTLY,
 * which gives the key a new index, a reset of the caches): two catalog
 * lookups were a tenth of a probe.  The lock is still taken on each probe,
 * and the invalidations it takes in are looked at again after it.
 */
#include "anarchon_pg.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "executor/tuptable.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "compat.h"

AttrNumber
an_pg_column(Relation rel, const char *name)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		if (!a->attisdropped && strcmp(NameStr(a->attname), name) == 0)
			return a->attnum;
	}
	elog(ERROR, "anarchon.%s has no column \"%s\"", RelationGetRelationName(rel), name);
	return InvalidAttrNumber;	/* not reached */
}

/*
 * The snapshot a non-read-only SPI statement would take: the command counter
 * advanced (this transaction's own writes are seen), then the transaction's
 * snapshot.  Registered: the caller unregisters it.
 */
Snapshot
an_pg_probe_snapshot(void)
{
	CommandCounterIncrement();
	return RegisterSnapshot(GetTransactionSnapshot());
}

/* The tables probed: few (runs, pauses, job_owners, pruned). */
#define KEPT_TABLES 8

typedef struct kept_table
{
	char		name[NAMEDATALEN];
	Oid			relid;
	Oid			idxid;
} kept_table;

static kept_table kept[KEPT_TABLES];
static int	nkept;
static bool forget_registered;

/* A relcache invalidation of one of the kept relations, or of all: forget them all. */
static void
forget_kept(Datum arg, Oid relid)
{
	for (int i = 0; i < nkept; i++)
		if (!OidIsValid(relid) || kept[i].relid == relid || kept[i].idxid == relid)
		{
			nkept = 0;
			return;
		}
}

static const kept_table *
find_kept(const char *table)
{
	for (int i = 0; i < nkept; i++)
		if (strcmp(kept[i].name, table) == 0)
			return &kept[i];
	return NULL;
}

static void
keep(const char *table, Oid relid, Oid idxid)
{
	if (!forget_registered)
	{
		CacheRegisterRelcacheCallback(forget_kept, (Datum) 0);
		forget_registered = true;
	}
	if (nkept == KEPT_TABLES || strlen(table) >= NAMEDATALEN)
		return;
	strlcpy(kept[nkept].name, table, NAMEDATALEN);
	kept[nkept].relid = relid;
	kept[nkept].idxid = idxid;
	nkept++;
}

/*
 * anarchon.<table>, opened with AccessShareLock, and its primary key's
 * index OID in *idxid.
 */
static Relation
open_keyed(const char *table, Oid *idxid)
{
	const kept_table *k = find_kept(table);
	Oid			relid;
	Relation	rel;

	relid = k ? k->relid : get_relname_relid(table, get_namespace_oid("anarchon", false));
	if (!OidIsValid(relid))
		elog(ERROR, "table anarchon.%s does not exist", table);
	rel = table_open(relid, AccessShareLock);
	/* Taking the lock took in invalidations: what was kept may be gone. */
	if (k && (k = find_kept(table)) != NULL && k->relid == relid)
	{
		*idxid = k->idxid;
		return rel;
	}
	*idxid = an_pg_primary_key_index(rel);
	if (!OidIsValid(*idxid))
		elog(ERROR, "anarchon.%s has no primary key", table);
	keep(table, relid, *idxid);
	return rel;
}

/*
 * Visit the rows whose first nkeys primary-key columns equal keys, in the
 * index's order (dir), until visit returns true; returns whether it did.
 * whole: keys must be the whole primary key (one row at most).
 */
static bool
key_walk(const char *table, Snapshot snap, int nkeys, bool whole, const Datum *keys,
		 const RegProcedure *eq, ScanDirection dir, an_pg_row_visitor visit, void *arg)
{
	Relation	rel;
	Relation	idx;
	Oid			idxid;
	ScanKeyData key[AN_PG_MAX_KEYS];
	IndexScanDesc scan;
	TupleTableSlot *slot;
	bool		stopped = false;

	Assert(nkeys > 0 && nkeys <= AN_PG_MAX_KEYS);
	/* No SPI here, so not through as_owner.c: the same version check. */
	an_pg_require_sql_version();
	rel = open_keyed(table, &idxid);
	idx = index_open(idxid, AccessShareLock);
	if (whole ? IndexRelationGetNumberOfKeyAttributes(idx) != nkeys
		: IndexRelationGetNumberOfKeyAttributes(idx) <= nkeys)
		elog(ERROR, "the primary key of anarchon.%s is not of %s%d columns", table,
			 whole ? "" : "more than ", nkeys);

	/* Each column compared in the index's own collation. */
	for (int i = 0; i < nkeys; i++)
		ScanKeyEntryInitialize(&key[i], 0, i + 1, BTEqualStrategyNumber, InvalidOid,
							   idx->rd_indcollation[i], eq[i], keys[i]);

	slot = table_slot_create(rel, NULL);
	scan = an_pg_index_beginscan(rel, idx, snap, nkeys, 0);
	index_rescan(scan, key, nkeys, NULL, 0);
	while (!stopped && index_getnext_slot(scan, dir, slot))
	{
		slot_getallattrs(slot);
		stopped = visit(rel, slot, arg);
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);

	index_close(idx, AccessShareLock);
	table_close(rel, AccessShareLock);
	return stopped;
}

/* an_pg_key_lookup's reader, as a visitor that stops at the one row. */
typedef struct one_row
{
	an_pg_row_reader read;
	void	   *arg;
} one_row;

static bool
read_one(Relation rel, TupleTableSlot *slot, void *arg)
{
	one_row    *one = arg;

	one->read(rel, slot, one->arg);
	return true;
}

bool
an_pg_key_lookup(const char *table, int nkeys, const Datum *keys, const RegProcedure *eq,
				 an_pg_row_reader read, void *arg)
{
	Snapshot	snap = an_pg_probe_snapshot();
	bool		found = an_pg_key_lookup_in(table, snap, nkeys, keys, eq, read, arg);

	UnregisterSnapshot(snap);
	return found;
}

bool
an_pg_key_lookup_in(const char *table, Snapshot snap, int nkeys, const Datum *keys,
					const RegProcedure *eq, an_pg_row_reader read, void *arg)
{
	one_row		one = {read, arg};

	return key_walk(table, snap, nkeys, true, keys, eq, ForwardScanDirection, read_one, &one);
}

bool
an_pg_key_prefix_walk(const char *table, Snapshot snap, int nkeys, const Datum *keys,
					  const RegProcedure *eq, ScanDirection dir, an_pg_row_visitor visit, void *arg)
{
	return key_walk(table, snap, nkeys, false, keys, eq, dir, visit, arg);
}
