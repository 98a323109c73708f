/*
 * version.c — the library's version against its SQL objects' version.
 *
 * The library (anarchon.so) and the SQL objects (the tables and functions
 * CREATE EXTENSION made, at pg_extension.extversion) are installed apart:
 * a package upgrade replaces the library at once, while the objects of each
 * database keep their version until ALTER EXTENSION anarchon UPDATE.  A
 * library that ran its queries on objects of another version could meet a
 * table that is not there yet ("relation does not exist") or, worse, one of
 * another shape.  So before the library touches its SQL objects (as_owner.c
 * and run_lookup.c call an_pg_require_sql_version), it compares the two and
 * refuses a mismatch with SQLSTATE AN002, both versions named, and what to
 * run: ALTER EXTENSION anarchon UPDATE when the objects are older, the
 * matching package when the library is.
 *
 * What the check never stands in the way of:
 *   - extension scripts (CREATE/ALTER EXTENSION, creating_extension): the
 *     update itself, whatever the session did before;
 *   - statements that do not call anarchon, DROP EXTENSION and pg_dump: none
 *     of them reaches this code;
 *   - loading the library (_PG_init: GUCs, shared memory), the functions
 *     that read no SQL object (anarchon_slot, anarchon_token, ...), and
 *     anarchon_version(), which says what is wrong.
 *
 * A match is kept for the session, until something could have changed the
 * version: pg_extension has no system cache and so sends no invalidation of
 * its own, but nothing changes extversion without creating or dropping
 * functions (CREATE and DROP EXTENSION; ALTER EXTENSION UPDATE runs an update
 * script, and every one of ours replaces functions: test/build checks it), and
 * every such change invalidates pg_proc's cache in every backend.  So any
 * invalidation of pg_proc or pg_namespace, a reset of the caches, or the
 * abort of a transaction forgets the match.  Invalidations are taken in at
 * the start of each transaction, so a session still sees an update as soon
 * as its next transaction starts (test/upgrade: a session that matched,
 * then another session's update to a later release, then new objects), and
 * a claim no longer probes pg_extension in every transaction (which was 3 %
 * of a check's time and of a remote claim's backend).  Only a match is kept:
 * a refusal is asked again.
 */
#include "anarchon_pg.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "config.h"

/* anarchon's SQLSTATE for a library and SQL objects of different versions. */
#define AN_PG_ERRCODE_VERSION MAKE_SQLSTATE('A', 'N', '0', '0', '2')

static bool matched;
static bool callbacks_registered;

static void
forget_at_abort(XactEvent event, void *arg)
{
	/* What an aborted transaction made was never anyone's objects. */
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		matched = false;
}

static void
forget_on_invalidation(Datum arg, int cacheid, uint32 hashvalue)
{
	matched = false;
}

/* pg_extension.extversion of anarchon in this database (palloc'd), or NULL. */
static char *
sql_objects_version(void)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	char	   *version = NULL;

	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("anarchon"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, Anum_pg_extension_extversion,
									 RelationGetDescr(rel), &isnull);

		if (!isnull)
			version = text_to_cstring(DatumGetTextPP(d));
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return version;
}

/*
 * Compare two versions made of dot-separated numbers (0.2.0, 0.10.1): <0, 0
 * or >0.  A part that is not a number compares as 0; only the direction of
 * the hint depends on it.
 */
static int
version_cmp(const char *a, const char *b)
{
	while (*a || *b)
	{
		long		x = strtol(a, (char **) &a, 10);
		long		y = strtol(b, (char **) &b, 10);

		if (x != y)
			return x < y ? -1 : 1;
		while (*a && *a != '.')
			a++;
		while (*b && *b != '.')
			b++;
		if (*a == '.')
			a++;
		if (*b == '.')
			b++;
	}
	return 0;
}

void
an_pg_require_sql_version(void)
{
	char	   *objects;

	if (matched || creating_extension)
		return;
	/* Before the read: an update committed after it must still reach us. */
	if (!callbacks_registered)
	{
		CacheRegisterSyscacheCallback(PROCOID, forget_on_invalidation, (Datum) 0);
		CacheRegisterSyscacheCallback(NAMESPACEOID, forget_on_invalidation, (Datum) 0);
		RegisterXactCallback(forget_at_abort, NULL);
		callbacks_registered = true;
	}
	objects = sql_objects_version();
	if (objects == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("anarchon library %s has no SQL objects in this database", AN_VERSION),
				 errhint("Run CREATE EXTENSION anarchon.")));
	if (strcmp(objects, AN_VERSION) != 0)
	{
		bool		objects_older = version_cmp(objects, AN_VERSION) < 0;

		ereport(ERROR,
				(errcode(AN_PG_ERRCODE_VERSION),
				 errmsg("anarchon library %s does not match its SQL objects %s",
						AN_VERSION, objects),
				 errdetail(objects_older
						   ? "The library was upgraded; this database's tables and functions are still those of %s."
						   : "The SQL objects of this database are those of %s, newer than the library the server loaded.",
						   objects),
				 objects_older
				 ? errhint("Run ALTER EXTENSION anarchon UPDATE.")
				 : errhint("Install the anarchon %s package (its library), and restart the server if anarchon is in shared_preload_libraries.",
						   objects)));
	}
	pfree(objects);
	matched = true;
}

/*
 * anarchon_version(): the library's version; when the SQL objects are of
 * another version, both, and what to run.  Never refused: it is how one
 * finds out what the refusal above is about.
 */
PG_FUNCTION_INFO_V1(anarchon_version);
Datum
anarchon_version(PG_FUNCTION_ARGS)
{
	char	   *objects = sql_objects_version();

	if (objects == NULL || strcmp(objects, AN_VERSION) == 0)
		PG_RETURN_TEXT_P(cstring_to_text(AN_VERSION));
	PG_RETURN_TEXT_P(cstring_to_text(psprintf("%s (SQL objects %s: %s)", AN_VERSION, objects,
											  version_cmp(objects, AN_VERSION) < 0
											  ? "run ALTER EXTENSION anarchon UPDATE"
											  : "install the library of the same version")));
}
