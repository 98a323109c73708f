/*
 * store_select.c — the store that anarchon.store names, opened once per backend.
 *
 * 'local' is this database's anarchon.runs.  The SQL functions get their
 * store here and talk to it only through its methods, so a remote store
 * replaces the local one without any change to them.
 */
#include "anarchon_pg.h"

#include "miscadmin.h"

static int64_t
host_now(void *ctx)
{
	return an_pg_now_ms();
}

/* A pending cancel or termination, reported without acting on it. */
static int
host_interrupted(void *ctx)
{
	return QueryCancelPending || ProcDiePending;
}

const an_host an_pg_host = {
	.ctx = NULL,
	.now_ms = host_now,
	.interrupted = host_interrupted,
};

static an_store local_store;
static bool local_open;

static an_store *
local(void)
{
	if (!local_open)
	{
		an_store_init(&local_store, &an_pg_local_methods, &an_pg_host);
		if (local_store.m->open(&local_store, "local", NULL) != AN_OK)
			an_pg_raise(&local_store);
		local_open = true;
	}
	return &local_store;
}

an_store *
an_pg_store(void)
{
	const char *name = an_pg_store_name();

	if (strcmp(name, "local") == 0)
		return local();
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("anarchon: store \"%s\" is not available in this build", name),
			 errhint("Set anarchon.store to 'local'.")));
}
