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
 *   - the search path is pinned to pg_catalog: no caller's search_path,
 *     temporary table, function or operator can change what a query means.
 *     Plans are kept with this path and re-planned with it (plancache.c),
 *     never with the caller's.
 *
 * How the path is pinned depends on the server (compat.h):
 *
 *   15, 16  an override search path of pg_catalog alone, without even the
 *           temporary schema, pushed and popped around the queries.  No GUC
 *           is touched.
 *   17+     override search paths were removed; as PostgreSQL's own VACUUM
 *           and index builds do, a GUC nest level is opened and search_path
 *           set to "pg_catalog, pg_temp" (RestrictSearchPath), then the level
 *           is closed, which restores the caller's search_path.  The
 *           temporary schema is searched last and for relations and types
 *           only (never for functions or operators), and every relation the
 *           queries name is schema-qualified, so the guarantee is the same.
 *
 * An error between enter and leave needs no cleanup here: the (sub)
 * transaction's abort restores the user and pops the override path or the
 * GUC nest level.
 */
#include "anarchon_pg.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "compat.h"

/* The owner of schema anarchon: the role the tables belong to. */
static Oid
owner(void)
{
	HeapTuple	tup = SearchSysCache1(NAMESPACENAME, CStringGetDatum("anarchon"));
	Oid			role;

	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_SCHEMA),
				 errmsg("schema anarchon does not exist"),
				 errhint("CREATE EXTENSION anarchon creates it.")));
	role = ((Form_pg_namespace) GETSTRUCT(tup))->nspowner;
	ReleaseSysCache(tup);
	return role;
}

#ifdef AN_PG_OVERRIDE_SEARCH_PATH

/* The pinned path: pg_catalog only (built once, copied by each push). */
static OverrideSearchPath *pinned;

static void
pin_search_path(an_pg_owner_state *s)
{
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
	PushOverrideSearchPath(pinned);
}

static void
unpin_search_path(const an_pg_owner_state *s)
{
	PopOverrideSearchPath();
}

#else

static void
pin_search_path(an_pg_owner_state *s)
{
	s->guc_nest_level = NewGUCNestLevel();
	RestrictSearchPath();
}

static void
unpin_search_path(const an_pg_owner_state *s)
{
	/* false: also undo any setting the queries might have made. */
	AtEOXact_GUC(false, s->guc_nest_level);
}

#endif							/* AN_PG_OVERRIDE_SEARCH_PATH */

void
an_pg_owner_enter(an_pg_owner_state *s)
{
	Oid			role;

	/* Every query of the SQL objects starts here: are they this library's? */
	an_pg_require_sql_version();
	role = owner();

	GetUserIdAndSecContext(&s->userid, &s->sec_context);
	SetUserIdAndSecContext(role, s->sec_context | SECURITY_LOCAL_USERID_CHANGE);
	pin_search_path(s);
}

void
an_pg_owner_leave(const an_pg_owner_state *s)
{
	unpin_search_path(s);
	SetUserIdAndSecContext(s->userid, s->sec_context);
}

/*
 * an_pg_spi_as_owner: run one statement through SPI as the schema's owner,
 * with search_path pinned as above; true with the first column of its first
 * row in *first (when first is not NULL) if there is one and it is not NULL.
 * For the few statements that are not the local store's kept plans: job
 * owners and what anarchon.run records.
 */
bool
an_pg_spi_as_owner(const char *sql, int nargs, Oid *types, Datum *values, const char *nulls,
				   Datum *first)
{
	return an_pg_spi_as_owner_kept(NULL, sql, nargs, types, values, nulls, first);
}

/*
 * The same, with the statement's plan prepared once per backend and kept in
 * *keep (when keep is not NULL): a statement of every claim (the job's
 * owner) is not parsed and planned on each call.
 */
bool
an_pg_spi_as_owner_kept(SPIPlanPtr *keep, const char *sql, int nargs, Oid *types, Datum *values,
						const char *nulls, Datum *first)
{
	an_pg_owner_state s;
	bool		found = false;
	bool		isnull;
	int			rc;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	an_pg_owner_enter(&s);
	if (keep != NULL && *keep == NULL)
	{
		SPIPlanPtr	p = SPI_prepare(sql, nargs, types);

		if (p == NULL || SPI_keepplan(p) != 0)
			elog(ERROR, "could not prepare a statement of anarchon: %s",
				 SPI_result_code_string(SPI_result));
		*keep = p;
	}
	if (keep != NULL)
		rc = SPI_execute_plan(*keep, values, nulls, false, first ? 1 : 0);
	else
		rc = SPI_execute_with_args(sql, nargs, types, values, nulls, false, first ? 1 : 0);
	if (rc < 0)
		elog(ERROR, "a statement of anarchon failed: %s", SPI_result_code_string(rc));
	if (first != NULL && SPI_processed > 0 && SPI_tuptable != NULL)
	{
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		found = !isnull;
		if (found)
			*first = d;
	}
	an_pg_owner_leave(&s);
	SPI_finish();
	return found;
}
