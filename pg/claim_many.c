/*
 * claim_many.c — anarchon_claim_many(jobs, slot, token [, the claim's
 * optional arguments]): one statement that claims one slot of many jobs.
 *
 * It returns one row (job, outcome, detail) per distinct job, the outcome
 * being what anarchon_claim(job, slot, token) would have answered at that
 * moment: each job goes through the same checks and the same store call as
 * the single claim (functions.c), nothing of the decision is repeated here.
 *
 * Errors of the whole call (a NULL or multidimensional array, a NULL or
 * invalid slot or token, a setting, a claim at a moment a rollback could
 * undo) are raised before any job is claimed, with anarchon_claim's
 * SQLSTATEs.  An error of one job (its name, a job owned by another role, its
 * lock busy past busy_timeout_ms, a store's failure) is that job's row:
 * outcome 'error', detail the message anarchon_claim would have raised.
 * Each job is claimed in a subtransaction of its own, as PL/pgSQL's
 * exception blocks do, so a failed job's writes are rolled back and the
 * other jobs go on; a committed subtransaction hands its locks to the
 * statement's transaction, so every job's lock is held until it ends, as a
 * single claim's is.  A cancel (statement_timeout, pg_cancel_backend) is not
 * a job's error: it ends the statement.
 *
 * The jobs are claimed in byte order of their names, duplicates once: two
 * sessions claiming overlapping sets take the jobs' row locks in the same
 * order and never deadlock.  A remote store is asked job by job, one round
 * trip per job.
 */
#include "anarchon_pg.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/resowner.h"

PG_FUNCTION_INFO_V1(anarchon_claim_many);
PG_FUNCTION_INFO_V1(anarchon_claim_many_ms);

static int
byte_order(const void *a, const void *b)
{
	/* strcmp compares as unsigned char: byte order, whatever the collation. */
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The claim of one job, as anarchon_claim makes it once the call's checks passed. */
static void
claim_one(an_store *st, an_pg_call *call, const char *job, an_claim_result *res)
{
	an_err		err;
	size_t		len = strlen(job);
	int64		sent_ms;

	if (an_validate_job(job, len, &err) != AN_OK)
		an_pg_raise_rule(ERRCODE_INVALID_PARAMETER_VALUE, &err);
	memcpy(call->job, job, len + 1);
	an_store_clear(st);
	an_pg_require_job_right(call->job, AN_PG_JOB_CLAIM, &call->settings);
	an_store_clear(st);
	sent_ms = an_pg_mono_ms();
	if (an_store_claim(st, &call->rq, res) != AN_OK)
		an_pg_raise(st);
	if (res->outcome == AN_WON)
		an_pg_keepalive_claimed(&call->rq, sent_ms, res->lease_until != 0);
}

/*
 * claim_one in a subtransaction: its outcome's name, or NULL with *message
 * set to the error it raised (rolled back with everything it wrote).
 */
static const char *
claim_guarded(an_store *st, an_pg_call *call, const char *job, char **message)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	const char *volatile outcome = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		an_claim_result res;

		claim_one(st, call, job, &res);
		outcome = an_outcome_name(res.outcome);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		/* A cancel is the statement's, not this job's. */
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED)
			ReThrowError(edata);
		*message = pstrdup(edata->message);
		FreeErrorData(edata);
	}
	PG_END_TRY();
	return outcome;
}

static void
put_row(ReturnSetInfo *rsinfo, const char *job, const char *outcome, const char *detail)
{
	Datum		values[3];
	bool		nulls[3] = {job == NULL, false, detail == NULL};

	values[0] = job ? CStringGetTextDatum(job) : (Datum) 0;
	values[1] = CStringGetTextDatum(outcome);
	values[2] = detail ? CStringGetTextDatum(detail) : (Datum) 0;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

static Datum
claim_many(FunctionCallInfo fcinfo, an_pg_slot_kind kind)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType  *jobs;
	Datum	   *elems;
	bool	   *elem_nulls;
	int			n;
	char	  **names;
	int			named = 0;
	an_pg_call	call;
	an_store   *st;
	an_err		err;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("jobs must not be NULL"),
				 errdetail("jobs is an array of job names, such as ARRAY['sync', 'report'].")));
	jobs = PG_GETARG_ARRAYTYPE_P(0);
	if (ARR_NDIM(jobs) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("jobs must be a one-dimensional array"),
				 errdetail("jobs is an array of job names, such as ARRAY['sync', 'report'].")));

	/* The call's own arguments and checks, before any job is claimed. */
	an_pg_read_batch(fcinfo, kind, &call);
	if (an_validate_slot(call.rq.slot, &err) != AN_OK)
		an_pg_raise_rule(ERRCODE_INVALID_PARAMETER_VALUE, &err);
	an_pg_claim_overrides(fcinfo, 3, &call);
	st = an_pg_store();
	an_store_clear(st);
	an_pg_claim_call_checks(fcinfo, st, &call);

	InitMaterializedSRF(fcinfo, 0);
	deconstruct_array(jobs, TEXTOID, -1, false, TYPALIGN_INT, &elems, &elem_nulls, &n);
	names = palloc(sizeof(char *) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		if (elem_nulls[i])
			continue;
		names[named++] = TextDatumGetCString(elems[i]);
	}
	/* NULL elements first, once: no job's claim can answer for them. */
	for (int i = 0; i < n; i++)
		if (elem_nulls[i])
		{
			put_row(rsinfo, NULL, "error", "job must not be NULL");
			break;
		}

	qsort(names, named, sizeof(char *), byte_order);
	for (int i = 0; i < named; i++)
	{
		const char *outcome;
		char	   *message = NULL;

		if (i > 0 && strcmp(names[i], names[i - 1]) == 0)
			continue;
		CHECK_FOR_INTERRUPTS();
		outcome = claim_guarded(st, &call, names[i], &message);
		put_row(rsinfo, names[i], outcome ? outcome : "error", message);
	}
	return (Datum) 0;
}

/* anarchon_claim_many: one row (job, outcome, detail) per distinct job. */
Datum
anarchon_claim_many(PG_FUNCTION_ARGS)
{
	return claim_many(fcinfo, AN_PG_SLOT_TS);
}

Datum
anarchon_claim_many_ms(PG_FUNCTION_ARGS)
{
	return claim_many(fcinfo, AN_PG_SLOT_MS);
}
