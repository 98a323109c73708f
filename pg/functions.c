/*
 * functions.c — the SQL functions of the PostgreSQL extension.
 *
 *   anarchon_claim(job, slot, token [, lease_ms, max_late_ms, attempts,
 *                  overlap, busy_timeout_ms])                    -> text
 *   anarchon_claim_info(same arguments)          -> (outcome, attempt, lease_until)
 *   anarchon_heartbeat(job, slot, token [, lease_ms])           -> boolean
 *   anarchon_finish(job, slot, token [, status])                -> boolean
 *   anarchon_check(job, slot)                                   -> text
 *   anarchon_token()                                            -> text
 *   anarchon_prune([keep_ms])                                   -> bigint
 *
 * slot is a timestamptz or bigint milliseconds since the Unix epoch (one C
 * entry point each).  Each function reads and validates its arguments, takes
 * the store anarchon.store names, and calls one of its methods; nothing here
 * knows which store it is.
 */
#include "anarchon_pg.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(anarchon_claim);
PG_FUNCTION_INFO_V1(anarchon_claim_ms);
PG_FUNCTION_INFO_V1(anarchon_claim_info);
PG_FUNCTION_INFO_V1(anarchon_claim_info_ms);
PG_FUNCTION_INFO_V1(anarchon_heartbeat);
PG_FUNCTION_INFO_V1(anarchon_heartbeat_ms);
PG_FUNCTION_INFO_V1(anarchon_finish);
PG_FUNCTION_INFO_V1(anarchon_finish_ms);
PG_FUNCTION_INFO_V1(anarchon_check);
PG_FUNCTION_INFO_V1(anarchon_check_ms);
PG_FUNCTION_INFO_V1(anarchon_token);
PG_FUNCTION_INFO_V1(anarchon_prune);

/* The optional arguments of a claim, after job, slot and token. */
static const struct
{
	const char *name;
	Oid			type;
}			claim_overrides[] = {
	{"lease_ms", INT8OID},
	{"max_late_ms", INT8OID},
	{"attempts", INT4OID},
	{"overlap", TEXTOID},
	{"busy_timeout_ms", INT8OID},
};

/* The store for this call, with a missing optional method refused by name. */
static an_store *
store_with(const void *method, const char *what)
{
	an_store   *st = an_pg_store();

	if (method == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("store \"%s\" does not support %s", st->m->name, what)));
	an_store_clear(st);
	return st;
}

void
an_pg_claim_overrides(FunctionCallInfo fcinfo, int first, an_pg_call *call)
{
	for (int i = 0; i < (int) lengthof(claim_overrides); i++)
		an_pg_override(fcinfo, first + i, claim_overrides[i].type, claim_overrides[i].name, call);
}

void
an_pg_claim_call_checks(FunctionCallInfo fcinfo, an_store *st, const an_pg_call *call)
{
	an_pg_require_claim_limits(&call->rq);
	/* Only a store that decides inside the caller's transaction (the local one). */
	if (AN_STORE_HAS(st, AN_CAP_CALLER_TXN))
		an_pg_require_final_claim(fcinfo);
	if (st->m->validate && st->m->validate(st, &call->settings) != AN_OK)
		an_pg_raise(st);
}

an_store *
an_pg_claim_store(FunctionCallInfo fcinfo, const an_pg_call *call)
{
	an_store   *st = an_pg_store();

	an_store_clear(st);
	an_pg_require_job_right(call->job, AN_PG_JOB_CLAIM, &call->settings);
	an_pg_claim_call_checks(fcinfo, st, call);
	return st;
}

/* Claim the run the arguments name; the common body of the claim functions. */
static void
claim(FunctionCallInfo fcinfo, an_pg_slot_kind kind, an_claim_result *res)
{
	an_pg_call	call;
	an_store   *st;
	an_err		err;
	int64		sent_ms;

	an_pg_read_call(fcinfo, kind, true, &call);
	/* A manual slot is claimed by anarchon_run_now only (core/run_now.h). */
	if (an_validate_slot(call.rq.slot, &err) != AN_OK)
		an_pg_raise_rule(ERRCODE_INVALID_PARAMETER_VALUE, &err);
	an_pg_claim_overrides(fcinfo, 3, &call);

	st = an_pg_claim_store(fcinfo, &call);
	/* Read before the claim is sent: a lease it wins started no earlier. */
	sent_ms = an_pg_mono_ms();
	if (an_store_claim(st, &call.rq, res) != AN_OK)
		an_pg_raise(st);
	if (res->outcome == AN_WON)
		an_pg_keepalive_claimed(&call.rq, sent_ms, res->lease_until != 0);
}

static Datum
claim_text(FunctionCallInfo fcinfo, an_pg_slot_kind kind)
{
	an_claim_result res;

	claim(fcinfo, kind, &res);
	PG_RETURN_TEXT_P(cstring_to_text(an_outcome_name(res.outcome)));
}

static Datum
claim_info(FunctionCallInfo fcinfo, an_pg_slot_kind kind)
{
	an_claim_result res;
	TupleDesc	desc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "anarchon_claim_info must return a composite type");
	desc = BlessTupleDesc(desc);

	claim(fcinfo, kind, &res);
	values[0] = CStringGetTextDatum(an_outcome_name(res.outcome));
	/* 0 means "none": nothing was claimed, or the store keeps no leases. */
	values[1] = Int32GetDatum(res.attempt);
	nulls[1] = res.attempt == 0;
	values[2] = TimestampTzGetDatum(an_pg_ms_to_ts(res.lease_until));
	nulls[2] = res.lease_until == 0;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

/* anarchon_claim: the outcome, 'won', 'running', 'done', 'late', 'overlap' or 'lost'. */
Datum
anarchon_claim(PG_FUNCTION_ARGS)
{
	return claim_text(fcinfo, AN_PG_SLOT_TS);
}

Datum
anarchon_claim_ms(PG_FUNCTION_ARGS)
{
	return claim_text(fcinfo, AN_PG_SLOT_MS);
}

/* anarchon_claim_info: the outcome with the attempt and the lease end. */
Datum
anarchon_claim_info(PG_FUNCTION_ARGS)
{
	return claim_info(fcinfo, AN_PG_SLOT_TS);
}

Datum
anarchon_claim_info_ms(PG_FUNCTION_ARGS)
{
	return claim_info(fcinfo, AN_PG_SLOT_MS);
}

/* anarchon_heartbeat: true when the lease was extended, false when fenced. */
static Datum
heartbeat(FunctionCallInfo fcinfo, an_pg_slot_kind kind)
{
	an_pg_call	call;
	an_store   *st;
	int			owned = 0;

	an_pg_read_call(fcinfo, kind, true, &call);
	an_pg_override(fcinfo, 3, INT8OID, "lease_ms", &call);
	an_pg_require_lease_limit(&call.settings);
	an_pg_require_job_right(call.job, AN_PG_JOB_ACT, NULL);
	st = store_with(an_pg_store()->m->heartbeat, "heartbeat");
	if (an_store_heartbeat(st, &call.rq, &owned) != AN_OK)
		an_pg_raise(st);
	PG_RETURN_BOOL(owned != 0);
}

Datum
anarchon_heartbeat(PG_FUNCTION_ARGS)
{
	return heartbeat(fcinfo, AN_PG_SLOT_TS);
}

Datum
anarchon_heartbeat_ms(PG_FUNCTION_ARGS)
{
	return heartbeat(fcinfo, AN_PG_SLOT_MS);
}

/* anarchon_finish: true when the run was marked, false when fenced. */
static Datum
finish(FunctionCallInfo fcinfo, an_pg_slot_kind kind)
{
	an_pg_call	call;
	an_store   *st;
	an_run_state status = AN_RUN_SUCCEEDED;
	int			owned = 0;

	an_pg_read_call(fcinfo, kind, true, &call);
	if (PG_NARGS() > 3)
	{
		char	   *name;

		if (PG_ARGISNULL(3))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("status must not be NULL"),
					 errdetail("A status is 'succeeded' or 'failed'.")));
		name = text_to_cstring(PG_GETARG_TEXT_PP(3));
		status = an_run_state_parse(name);
		if (status != AN_RUN_SUCCEEDED && status != AN_RUN_FAILED)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid status"),
					 errdetail("A status is 'succeeded' or 'failed'.")));
	}
	an_pg_require_job_right(call.job, AN_PG_JOB_ACT, NULL);
	st = store_with(an_pg_store()->m->finish, "finish");
	if (an_store_finish(st, &call.rq, status, &owned) != AN_OK)
		an_pg_raise(st);
	PG_RETURN_BOOL(owned != 0);
}

Datum
anarchon_finish(PG_FUNCTION_ARGS)
{
	return finish(fcinfo, AN_PG_SLOT_TS);
}

Datum
anarchon_finish_ms(PG_FUNCTION_ARGS)
{
	return finish(fcinfo, AN_PG_SLOT_MS);
}

/* anarchon_check: 'none', 'running', 'expired', 'succeeded', 'failed', 'interrupted' or 'replaced'. */
static Datum
check(FunctionCallInfo fcinfo, an_pg_slot_kind kind)
{
	an_pg_call	call;
	an_store   *st;
	an_check_result res;

	an_pg_read_call(fcinfo, kind, false, &call);
	an_pg_require_job_right(call.job, AN_PG_JOB_READ, NULL);
	st = store_with(an_pg_store()->m->check, "check");
	if (an_store_check(st, &call.rq, &res) != AN_OK)
		an_pg_raise(st);
	PG_RETURN_TEXT_P(cstring_to_text(an_check_state_name(res.state)));
}

Datum
anarchon_check(PG_FUNCTION_ARGS)
{
	return check(fcinfo, AN_PG_SLOT_TS);
}

Datum
anarchon_check_ms(PG_FUNCTION_ARGS)
{
	return check(fcinfo, AN_PG_SLOT_MS);
}

/* anarchon_token: 32 lowercase hex digits from the strong random source. */
Datum
anarchon_token(PG_FUNCTION_ARGS)
{
	unsigned char random16[16];
	char		out[AN_TOKEN_HEX + 1];

	if (!pg_strong_random(random16, sizeof(random16)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate a random token")));
	an_token_hex(random16, out);
	PG_RETURN_TEXT_P(cstring_to_text(out));
}

/*
 * anarchon_prune: delete runs no claim can ask about any more; returns how
 * many.  keep_ms may lengthen the retention the settings imply, never
 * shorten it: a younger run could still be claimed, and a claim that found
 * it gone would win it a second time.  A keep_ms reaching back before the
 * first timestamptz keeps everything (the store deletes nothing), however
 * large: the cutoff is never converted by overflowing arithmetic.
 */
Datum
anarchon_prune(PG_FUNCTION_ARGS)
{
	an_settings s;
	int64		keep;
	int64		deleted = 0;
	an_err		err;
	an_store   *st;
	const an_store_admin *admin;

	an_pg_current_settings(&s);
	keep = an_settings_retention_ms(&s);
	if (!PG_ARGISNULL(0))
	{
		keep = PG_GETARG_INT64(0);
		if (an_settings_check_keep(&s, keep, &err) != AN_OK)
			an_pg_raise_rule(ERRCODE_INVALID_PARAMETER_VALUE, &err);
	}
	st = an_pg_store();
	an_store_clear(st);
	if ((admin = an_store_admin_for(st, AN_CAP_PRUNE)) == NULL ||
		admin->prune(st, an_retention_cutoff(an_pg_now_ms(), keep), &deleted) != AN_OK)
		an_pg_raise(st);
	PG_RETURN_INT64(deleted);
}
