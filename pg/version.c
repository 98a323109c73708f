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
 * The answer is kept until the transaction ends (a callback forgets it), so
 * a claim costs one index probe of pg_extension per transaction, and a
 * session sees an update as soon as its next transaction starts.  Only a
 * match is kept: a refusal is asked again.
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
#include "utils/rel.h"

#include "config.h"

/* anarchon's SQLSTATE for a library and SQL objects of different versions. */
#define AN_PG_ERRCODE_VERSION MAKE_SQLSTATE('A', 'N', '0', '0', '2')

static bool matched_in_xact;
static bool callback_registered;

static void
forget_at_xact_end(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
		matched_in_xact = false;
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

	if (matched_in_xact || creating_extension)
		return;
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
	if (!callback_registered)
	{
		RegisterXactCallback(forget_at_xact_end, NULL);
		callback_registered = true;
	}
	matched_in_xact = true;
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
