/*
 * compat.h — the PostgreSQL APIs anarchon uses that changed between
 * PostgreSQL 15 and 18, each behind one name, so that the rest of pg/ reads
 * the same on every version.
 *
 * The code is written against the newest API; for older servers this file
 * supplies the newer name (pg_noreturn) or a small wrapper (an_pg_*) that
 * calls what that version has.  Every guard tests PG_VERSION_NUM, as pgvector
 * and pg_cron do.  What changed, by version:
 *
 *   16  varatt.h was split out of postgres.h: VARSIZE_ANY_EXHDR, VARDATA_ANY
 *       and friends need it included.
 *   16  object_aclcheck(classid, ...) replaced the per-kind ACL checks such as
 *       pg_foreign_server_aclcheck().
 *   17  PushOverrideSearchPath()/PopOverrideSearchPath() are gone.  Code that
 *       must run with a safe search_path now opens a GUC nest level, sets
 *       search_path to "pg_catalog, pg_temp" (RestrictSearchPath()) and ends
 *       the level with AtEOXact_GUC(), as VACUUM and index builds do.
 *       as_owner.c keeps the override path where it exists (cheaper: no GUC
 *       work per call) and uses the GUC level from 17 on.
 *   18  index_beginscan() takes an IndexScanInstrumentation pointer (NULL
 *       when nobody counts).
 *   18  RelationGetPrimaryKeyIndex() asks whether a deferrable primary key
 *       may be returned.
 *   18  pg_noreturn (C11 _Noreturn, written before a declaration) replaced
 *       pg_attribute_noreturn() (written after it).
 *   18  PG_MODULE_MAGIC_EXT records the module's name and version, shown by
 *       pg_get_loaded_modules().
 *
 * Checked and unchanged from 15 to 18 for what pg/ uses: SPI (prepare,
 * keepplan, execute_plan), MarkGUCPrefixReserved (new in 15, our oldest),
 * DefineCustomStringVariable and GUC_check_errdetail, the FDW validator
 * (untransformRelOptions, defGetString, GetForeignServerByName,
 * GetUserMapping), table_open/index_open, TupleDescAttr, table_slot_create,
 * index_getnext_slot, SetUserIdAndSecContext, syscache callbacks.
 */
#ifndef ANARCHON_PG_COMPAT_H
#define ANARCHON_PG_COMPAT_H

#include "postgres.h"

#if PG_VERSION_NUM < 150000
#error "anarchon needs PostgreSQL 15 or later"
#endif

#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

#include "access/genam.h"
#include "catalog/pg_foreign_server.h"
#include "utils/acl.h"
#include "utils/rel.h"
#include "utils/relcache.h"

/* 18: noreturn is written before the declaration. */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/* 18: PG_MODULE_MAGIC_EXT names the module and its version. */
#ifdef PG_MODULE_MAGIC_EXT
#define AN_PG_MODULE_MAGIC PG_MODULE_MAGIC_EXT(.name = "anarchon", .version = AN_VERSION)
#else
#define AN_PG_MODULE_MAGIC PG_MODULE_MAGIC
#endif

/* 17: no override search path; as_owner.c pins search_path through a GUC level. */
#if PG_VERSION_NUM < 170000
#define AN_PG_OVERRIDE_SEARCH_PATH 1
#endif

/* USAGE (or another right) of roleid on a foreign server. */
static inline AclResult
an_pg_server_aclcheck(Oid serverid, Oid roleid, AclMode mode)
{
#if PG_VERSION_NUM >= 160000
	return object_aclcheck(ForeignServerRelationId, serverid, roleid, mode);
#else
	return pg_foreign_server_aclcheck(serverid, roleid, mode);
#endif
}

/* Begin an index scan that nobody instruments. */
static inline IndexScanDesc
an_pg_index_beginscan(Relation heap, Relation index, Snapshot snapshot,
					  int nkeys, int norderbys)
{
#if PG_VERSION_NUM >= 180000
	return index_beginscan(heap, index, snapshot, NULL, nkeys, norderbys);
#else
	return index_beginscan(heap, index, snapshot, nkeys, norderbys);
#endif
}

/* The primary key's index, which must not be deferrable (InvalidOid if none). */
static inline Oid
an_pg_primary_key_index(Relation rel)
{
#if PG_VERSION_NUM >= 180000
	return RelationGetPrimaryKeyIndex(rel, false);
#else
	return RelationGetPrimaryKeyIndex(rel);
#endif
}

#endif							/* ANARCHON_PG_COMPAT_H */
