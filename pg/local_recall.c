/*
 * local_recall.c — recall on the PostgreSQL local store: which of a job's
 * slots anarchon.runs holds a run for, in any state (anarchon_missed,
 * anarchon_due).  The same method as every other store's (core/store.h), so
 * that no function asks which store it has.
 *
 * A run deleted by anarchon_prune is gone by the operator's choice: its slot
 * reads as one without a run, as it always has here.
 */
#include "anarchon_pg.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "missed.h"

static SPIPlanPtr runs_plan;

int
an_pg_local_recall(an_store *st, const an_request *rq, const int64_t *slots, size_t n,
				   unsigned char *has_run)
{
	an_pg_owner_state owner;
	Datum		values[3];
	size_t		i = 0;

	(void) st;
	if (n == 0)
		return AN_OK;
	memset(has_run, 0, n);
	an_pg_owner_enter(&owner);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (runs_plan == NULL)
	{
		Oid			types[3] = {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID};
		SPIPlanPtr	p = SPI_prepare("SELECT slot FROM anarchon.runs WHERE job = $1 AND slot >= $2 AND slot <= $3 ORDER BY slot",
									3, types);

		if (p == NULL || SPI_keepplan(p) != 0)
			elog(ERROR, "could not prepare the query of the runs of a job: %s",
				 SPI_result_code_string(SPI_result));
		runs_plan = p;
	}
	values[0] = CStringGetTextDatum(rq->job);
	values[1] = TimestampTzGetDatum(an_pg_ms_to_ts(slots[0]));
	values[2] = TimestampTzGetDatum(an_pg_ms_to_ts(slots[n - 1]));
	if (SPI_execute_plan(runs_plan, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "the query of the runs of a job failed");
	/* Both lists ascend: one merge. */
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bool		isnull;
		int64		ran = an_pg_ts_to_ms(DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[r],
																			SPI_tuptable->tupdesc, 1, &isnull)));

		i = an_missed_mark(slots, n, i, ran, has_run);
	}
	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "SPI_finish failed");
	an_pg_owner_leave(&owner);
	return AN_OK;
}
