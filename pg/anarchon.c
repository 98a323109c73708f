/*
 * anarchon.c — the module's entry point: PG_MODULE_MAGIC and _PG_init.
 *
 * Loading the library (on the first call of any anarchon function in a
 * backend, or through session_preload_libraries) defines the anarchon.*
 * GUCs and reserves their prefix, so a misspelt anarchon.lese_ms is an
 * error instead of a silently ignored placeholder.  Loading it through
 * shared_preload_libraries also gives anarchon_stats() its shared memory.  From PostgreSQL 18 on
 * the magic block also carries the module's name and version (compat.h).
 */
#include "anarchon_pg.h"

AN_PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	/* Before the prefix is reserved (guc.c), so that placeholders still apply. */
	an_pg_define_job_limits();
	an_pg_define_durability();
	an_pg_define_gucs();
	an_pg_stats_init();
}
