/*
 * as_owner.c — run the local store's queries as the extension's owner, with
 * a search_path nobody can change.
 *
 * The SQL functions are plain C functions, not SECURITY DEFINER: fmgr's
 * SECURITY DEFINER wrapper sets and restores search_path through the GUC
 * machinery on every call (a GUC nest level, a parse of the path, a walk of
 * every GUC at the end, and a recomputed search path for the caller's next
 * statement), which was a measurable part of a claim.  Instead the local
 * store switches user only around its own SPI work:
 *
 *   - the user becomes the owner of schema anarchon (the role that ran
 *     CREATE EXTENSION, which owns the tables), exactly as SECURITY DEFINER
 *     would switch to the functions' owner, with SECURITY_LOCAL_USERID_CHANGE
 *     so that nothing inside can SET ROLE;
 *   - the search path is pushed as an override of pg_catalog alone, without
 *     the temporary schema: no caller's search_path, temporary table,
 *     function or operator can change what a query means.  Plans are kept
 *     with this path and re-planned with it (plancache.c), never with the
 *     caller's.
 *
 * An error between enter and leave needs no cleanup here: the (sub)
 * transaction's abort restores the user and pops the override path.
 */
#include "anarchon_pg.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

/* The pinned path: pg_catalog only (built once, copied by each push). */
static OverrideSearchPath *pinned;

/* The owner of schema anarchon: the role the tables belong to. */
static Oid
owner(void)
{
	HeapTuple	tup = SearchSysCache1(NAMESPACENAME, CStringGetDatum("anarchon"));
	Oid			role;

	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_SCHEMA),
				 errmsg("anarchon: schema anarchon does not exist"),
				 errhint("CREATE EXTENSION anarchon creates it.")));
	role = ((Form_pg_namespace) GETSTRUCT(tup))->nspowner;
	ReleaseSysCache(tup);
	return role;
}

void
an_pg_owner_enter(an_pg_owner_state *s)
{
	Oid			role = owner();

	if (pinned == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
		OverrideSearchPath *p = palloc0(sizeof(OverrideSearchPath));

		p->schemas = list_make1_oid(PG_CATALOG_NAMESPACE);
		p->addCatalog = false;
		p->addTemp = false;
		MemoryContextSwitchTo(old);
		pinned = p;
	}
	GetUserIdAndSecContext(&s->userid, &s->sec_context);
	SetUserIdAndSecContext(role, s->sec_context | SECURITY_LOCAL_USERID_CHANGE);
	PushOverrideSearchPath(pinned);
}

void
an_pg_owner_leave(const an_pg_owner_state *s)
{
	PopOverrideSearchPath();
	SetUserIdAndSecContext(s->userid, s->sec_context);
}
