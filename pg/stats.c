/*
 * stats.c — anarchon_stats(), the view anarchon.stats,
 * anarchon_stats_latency() and anarchon_stats_reset(): the counters of store
 * calls (core/stats.h).
 *
 * With the library in shared_preload_libraries the table lives in shared
 * memory and every backend (the keep-alive workers too) counts into the same
 * rows: scope 'server'.  Loaded later, a backend cannot add shared memory, so
 * it counts on its own: scope 'backend', and each session sees its own calls.
 * A row is a store as anarchon.store names it: 'local' or a foreign server.
 * anarchon.stats = off (superuser) stops counting a session's calls, for the
 * benchmark that measures what counting costs.
 */
#include "anarchon_pg.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "stats.h"

static an_stats_table *shared;   /* in shared memory, when preloaded */
static an_stats_table *own;      /* this backend's, otherwise */
static bool counting = true;     /* anarchon.stats */
static LWLock *adding;           /* held to add a row to the shared table */

#if PG_VERSION_NUM >= 150000
static shmem_request_hook_type prev_shmem_request;
#endif
static shmem_startup_hook_type prev_shmem_startup;

static void
stats_shmem_request(void)
{
#if PG_VERSION_NUM >= 150000
	if (prev_shmem_request)
		prev_shmem_request();
#endif
	RequestAddinShmemSpace(MAXALIGN(sizeof(an_stats_table)));
	RequestNamedLWLockTranche("anarchon stats", 1);
}

static void
stats_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup)
		prev_shmem_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("anarchon stats", sizeof(an_stats_table), &found);
	if (!found)
		an_stats_init(shared, an_pg_now_ms());
	adding = &GetNamedLWLockTranche("anarchon stats")->lock;
	LWLockRelease(AddinShmemInitLock);
}

void
an_pg_stats_init(void)
{
	DefineCustomBoolVariable("anarchon.stats",
							 "Count this session's store calls in anarchon_stats().",
							 NULL, &counting, true, PGC_SUSET, 0, NULL, NULL, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;
#if PG_VERSION_NUM >= 150000
	prev_shmem_request = shmem_request_hook;
	shmem_request_hook = stats_shmem_request;
#else
	stats_shmem_request();
#endif
	prev_shmem_startup = shmem_startup_hook;
	shmem_startup_hook = stats_shmem_startup;
}

static an_stats_table *
table(void)
{
	if (shared)
		return shared;
	if (own == NULL)
	{
		own = MemoryContextAlloc(TopMemoryContext, sizeof(an_stats_table));
		an_stats_init(own, an_pg_now_ms());
	}
	return own;
}

/* A row of this server's table; a backend's own table needs no lock. */
static an_stats_row *
row_for(const char *name, const char *kind)
{
	an_stats_table *t = table();
	an_stats_row *r;

	if ((r = an_stats_row_find(t, name)) != NULL)
		return r;
	if (t != shared)
		return an_stats_row_add(t, name, kind);
	LWLockAcquire(adding, LW_EXCLUSIVE);
	r = an_stats_row_add(t, name, kind);
	LWLockRelease(adding);
	return r;
}

void
an_pg_stats_attach(an_store *st, an_stats_row **row, const char *name)
{
	if (*row == NULL)
		*row = row_for(name, st->m->name);
	st->stats = counting ? *row : NULL;
}

/*
 * A store that could not be opened, or a setting that names no usable store:
 * the call's failure counts in that store's row all the same, so that a host
 * misconfigured from the start does not look idle to monitoring.
 */
void
an_pg_stats_failed(const char *name, const char *kind, an_error code)
{
	if (counting)
		an_stats_error_seen(row_for(name, kind), code);
}

/* A claim's busy lock, which the local store raises instead of returning. */
void
an_pg_stats_busy(an_store *st)
{
	an_stats_error_seen(st->stats, AN_E_BUSY);
}

static Datum
datum_of(const an_stats_value *v, an_stats_type type)
{
	switch (type)
	{
		case AN_STATS_TEXT:
			return CStringGetTextDatum(v->text);
		case AN_STATS_MS:
			return Float8GetDatum(v->d);
		case AN_STATS_TIME:
			return TimestampTzGetDatum(an_pg_ms_to_ts(v->i));
		default:
			return Int64GetDatum(v->i);
	}
}

PG_FUNCTION_INFO_V1(anarchon_stats);
Datum
anarchon_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	an_stats_table *t = table();
	Datum	   *values = palloc(sizeof(Datum) * an_stats_ncolumns);
	bool	   *nulls = palloc(sizeof(bool) * an_stats_ncolumns);

	InitMaterializedSRF(fcinfo, 0);
	/* The SQL definition and core's column list must agree, or no row is right. */
	if (rsinfo->setDesc->natts != an_stats_ncolumns)
		elog(ERROR, "anarchon_stats has %d columns in SQL but %d in the library: reinstall the extension",
			 rsinfo->setDesc->natts, an_stats_ncolumns);
	for (size_t i = 0; i < an_stats_rows(t); i++)
	{
		an_stats_view view;

		an_stats_read(t, i, &view);
		view.scope = shared ? "server" : "backend";
		for (int c = 0; c < an_stats_ncolumns; c++)
		{
			an_stats_value v;

			an_stats_value_of(&view, c, &v);
			nulls[c] = v.null;
			values[c] = v.null ? (Datum) 0 : datum_of(&v, an_stats_columns[c].type);
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * anarchon_stats_latency() → TABLE (store, le_ms, count): each store's
 * latency histogram, cumulative, at every power of two of microseconds from
 * 16 us to 33.6 s and at Infinity (every call), in that order.  The bounds
 * are bucket boundaries, so the counts are exact; each store's rows come
 * from one read of its row, so they never decrease along le_ms.  Prometheus
 * reads a histogram this way (pg/prometheus/anarchon-queries.yaml).
 */
PG_FUNCTION_INFO_V1(anarchon_stats_latency);
Datum
anarchon_stats_latency(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	an_stats_table *t = table();

	InitMaterializedSRF(fcinfo, 0);
	for (size_t i = 0; i < an_stats_rows(t); i++)
	{
		an_stats_view view;
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		an_stats_read(t, i, &view);
		values[0] = CStringGetTextDatum(view.name);
		for (int b = 0; b <= AN_STATS_LE; b++)
		{
			values[1] = Float8GetDatum(b < AN_STATS_LE ? an_stats_le_ms(b) : get_float8_infinity());
			values[2] = Int64GetDatum((int64) (b < AN_STATS_LE ? view.le[b] : view.calls));
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(anarchon_stats_reset);
Datum
anarchon_stats_reset(PG_FUNCTION_ARGS)
{
	an_stats_reset(table(), an_pg_now_ms());
	PG_RETURN_VOID();
}
