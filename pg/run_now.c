/*
 * run_now.c — anarchon_run_now(job [, token [, lease_ms, max_late_ms,
 * attempts, overlap, busy_timeout_ms]]): one manual run of the job, exactly
 * once across the fleet (core/run_now.h).  The optional arguments override
 * the settings for the call, as anarchon_claim's do.
 *
 * It returns (outcome, slot, token, attempt, lease_until): 'won' tells the caller to run the job
 * now and to heartbeat and finish the manual slot with that token; anything
 * else ('running', 'done', 'overlap') means another caller has it or a run of
 * the job holds a live lease.  Without a token one is made, as
 * anarchon_token() does.  The rights are a claim's (job_rights.c), and so are
 * the rules of a transaction block (claim_txn.c).
 */
#include "anarchon_pg.h"
#include "run_now.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(anarchon_run_now);

Datum
anarchon_run_now(PG_FUNCTION_ARGS)
{
	an_pg_call	call;
	an_store   *st;
	an_claim_result res;
	TupleDesc	desc;
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "anarchon_run_now must return a composite type");
	desc = BlessTupleDesc(desc);

	memset(&call, 0, sizeof(call));
	an_pg_read_job(fcinfo, 0, call.job);
	if (PG_NARGS() > 1 && !PG_ARGISNULL(1))
		an_pg_read_token(fcinfo, 1, call.token);
	else
	{
		unsigned char random16[16];

		if (!pg_strong_random(random16, sizeof(random16)))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate a random token")));
		an_token_hex(random16, call.token);
	}
	an_pg_current_settings(&call.settings);
	call.rq.job = call.job;
	call.rq.token = call.token;
	call.rq.settings = &call.settings;
	an_pg_claim_overrides(fcinfo, 2, &call);
	/* What the limits on how far ahead a claim may reach are asked about. */
	call.rq.slot = an_manual_slot(an_pg_now_ms());
	call.rq.kind = AN_CLAIM_MANUAL;

	st = an_pg_claim_store(fcinfo, &call);
	if (an_store_claim(st, &call.rq, &res) != AN_OK)
		an_pg_raise(st);

	values[0] = CStringGetTextDatum(an_outcome_name(res.outcome));
	values[1] = TimestampTzGetDatum(an_pg_ms_to_ts(res.slot));
	values[2] = CStringGetTextDatum(call.token);
	/* As anarchon_claim_info: NULL when nothing was claimed. */
	values[3] = Int32GetDatum(res.attempt);
	nulls[3] = res.attempt == 0;
	values[4] = TimestampTzGetDatum(an_pg_ms_to_ts(res.lease_until));
	nulls[4] = res.lease_until == 0;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
