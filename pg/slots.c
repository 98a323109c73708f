/*
 * slots.c — the set-returning schedule functions of PostgreSQL.
 *
 *   anarchon_slots(schedule, from, to)          → TABLE (slot)
 *       every slot of schedule with from <= slot < to, in order
 *   anarchon_missed(job, schedule, from, to)    → TABLE (slot)
 *       the slots of schedule in [from, to) that can no longer be claimed
 *       (clock_timestamp() - slot > anarchon.max_late_ms) and of which the
 *       store holds no run: the runs every instance missed
 *   anarchon_due(job, schedule [, now])         → TABLE (slot)
 *       the slots to claim now under anarchon.catch_up (schedule/due.h), oldest
 *       first: missed ones of the last catch_up_ms, then the current slot
 *   anarchon_zones()                            → TABLE (name)
 *       the zone names a CRON_TZ schedule may use
 *
 * from, to and slot are timestamptz, or bigint ms in the _ms forms.  The rows
 * are materialized (a tuplestore) before the first is returned, so a range
 * over AN_SCHEDULE_RANGE_MAX slots is an error and never a partial answer.
 * anarchon_missed reads anarchon.runs with a kept plan, as the owner of the
 * tables (as_owner.c), or asks a network store through its recall method
 * (core/store.h); a store without one cannot tell, and says so.
 */
#include "anarchon_pg.h"

#include "access/tupdesc.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "due.h"
#include "missed.h"
#include "schedule_pg.h"

PG_FUNCTION_INFO_V1(anarchon_slots);
PG_FUNCTION_INFO_V1(anarchon_slots_ms);
PG_FUNCTION_INFO_V1(anarchon_missed);
PG_FUNCTION_INFO_V1(anarchon_missed_ms);
PG_FUNCTION_INFO_V1(anarchon_due);
PG_FUNCTION_INFO_V1(anarchon_due_ms);
PG_FUNCTION_INFO_V1(anarchon_zones);

/* Slots collected before any is returned (palloc'd in the call's context). */
typedef struct slot_list
{
	int64	   *slots;
	size_t		n,
				cap;
	int64		cutoff;			/* anarchon_missed: slots from here on are not missed yet */
} slot_list;

static int
emit_slot(void *arg, int64_t slot)
{
	slot_list  *l = arg;

	if (slot >= l->cutoff)
		return 1;
	/* A long list stays cancellable; the search holds nothing to release. */
	if ((l->n & 4095) == 0)
		CHECK_FOR_INTERRUPTS();
	if (l->n == l->cap)
	{
		l->cap = l->cap ? l->cap * 2 : 256;
		l->slots = l->slots ? repalloc_huge(l->slots, l->cap * sizeof(int64))
			: palloc(l->cap * sizeof(int64));
	}
	l->slots[l->n++] = slot;
	return 0;
}

/* Every slot of the schedule of argument sched_arg in [from, to) below l->cutoff. */
static void
collect(FunctionCallInfo fcinfo, int sched_arg, bool as_ms, slot_list *l)
{
	const an_schedule *s = an_pg_arg_schedule(fcinfo, sched_arg);
	int64		from = an_pg_arg_instant(fcinfo, sched_arg + 1, as_ms, "from");
	int64		to = an_pg_arg_instant(fcinfo, sched_arg + 2, as_ms, "to");
	an_err		err;
	an_error	rc;

	if (sched_arg > 0 && from < AN_SLOT_MIN && from <= to)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the range starts before the first slot a claim accepts"),
				 errdetail("from is %lld ms; no run can exist before 100000000000 (1973-03-03).",
						   (long long) from),
				 errhint("Start the range later (if you gave seconds, multiply by 1000).")));
	if ((rc = an_schedule_range(s, from, to, emit_slot, l, &err)) != AN_OK)
		an_pg_raise_schedule(rc, &err);
}

/*
 * Set up materialize mode for rows of one column of type `type`.  These
 * functions return TABLE (one column), whose result type is that column's
 * scalar type, which InitMaterializedSRF does not take: the descriptor is
 * made here.
 */
static ReturnSetInfo *
materialize(FunctionCallInfo fcinfo, Oid type, const char *column)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext old;
	TupleDesc	desc;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));
	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	desc = CreateTemplateTupleDesc(1);
	TupleDescInitEntry(desc, (AttrNumber) 1, column, type, -1, 0);
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = tuplestore_begin_heap(true, false, work_mem);
	rsinfo->setDesc = desc;
	MemoryContextSwitchTo(old);
	return rsinfo;
}

/* Return the list as rows of one column, timestamptz or bigint. */
static void
return_slots(FunctionCallInfo fcinfo, const slot_list *l, bool as_ms)
{
	ReturnSetInfo *rsinfo = materialize(fcinfo, as_ms ? INT8OID : TIMESTAMPTZOID, "slot");
	for (size_t i = 0; i < l->n; i++)
	{
		Datum		value = as_ms ? Int64GetDatum(l->slots[i])
			: TimestampTzGetDatum(an_pg_ms_to_ts(l->slots[i]));
		bool		isnull = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
	}
}

static Datum
slots_call(FunctionCallInfo fcinfo, bool as_ms)
{
	slot_list	l = {NULL, 0, 0, PG_INT64_MAX};

	collect(fcinfo, 0, as_ms, &l);
	return_slots(fcinfo, &l, as_ms);
	return (Datum) 0;
}

/* anarchon_slots(schedule, from timestamptz, to timestamptz) */
Datum
anarchon_slots(PG_FUNCTION_ARGS)
{
	return slots_call(fcinfo, false);
}

/* anarchon_slots(schedule, from bigint, to bigint) */
Datum
anarchon_slots_ms(PG_FUNCTION_ARGS)
{
	return slots_call(fcinfo, true);
}

/* ---------------------------------------------------------------- anarchon_missed */

/* The job of argument 0, checked, into job; the caller may read it. */
static void
job_arg(FunctionCallInfo fcinfo, char job[AN_JOB_MAX + 1])
{
	an_err		err;
	text	   *t;
	size_t		len;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("job must not be NULL")));
	t = PG_GETARG_TEXT_PP(0);
	len = VARSIZE_ANY_EXHDR(t);
	if (an_validate_job(VARDATA_ANY(t), len, &err) != AN_OK)
		an_pg_raise_rule(ERRCODE_INVALID_PARAMETER_VALUE, &err);
	memcpy(job, VARDATA_ANY(t), len);
	job[len] = '\0';
	an_pg_require_job_right(job, AN_PG_JOB_READ, NULL);
}

/* Keep in l the slots of which the store in force holds no run. */
static void
drop_runs(slot_list *l, const char *job, const an_settings *settings)
{
	an_store   *st = an_pg_store();
	an_request	rq;

	memset(&rq, 0, sizeof(rq));
	rq.job = job;
	rq.settings = settings;
	an_store_clear(st);
	if (an_missed_recall(st, &rq, (int64_t *) l->slots, &l->n) != AN_OK)
		an_pg_raise(st);
	/* Nothing ran in a pause, and nothing was meant to: not missed (core/pause.h). */
	an_store_clear(st);
	if (an_pause_filter(st, &rq, (int64_t *) l->slots, &l->n) != AN_OK)
		an_pg_raise(st);
}

static Datum
missed_call(FunctionCallInfo fcinfo, bool as_ms)
{
	an_settings settings;
	slot_list	l = {NULL, 0, 0, 0};
	char		job[AN_JOB_MAX + 1];

	job_arg(fcinfo, job);
	an_pg_current_settings(&settings);
	l.cutoff = an_pg_now_ms() - settings.max_late_ms;
	collect(fcinfo, 1, as_ms, &l);
	drop_runs(&l, job, &settings);
	return_slots(fcinfo, &l, as_ms);
	return (Datum) 0;
}

/* ---------------------------------------------------------------- anarchon_due */

/*
 * The policy is schedule/'s (schedule/due.h): this lists the plan's range, keeps what
 * core trims it to, drops the slots with a run as anarchon_missed does, and
 * returns core's pick.
 */
static Datum
due_call(FunctionCallInfo fcinfo, bool as_ms)
{
	an_settings settings;
	an_due_plan plan;
	slot_list	l = {NULL, 0, 0, PG_INT64_MAX};
	slot_list	due = {NULL, 0, 0, 0};
	char		job[AN_JOB_MAX + 1];
	an_err		err;
	const an_schedule *s;
	int64		now;
	an_error	rc;

	job_arg(fcinfo, job);
	s = an_pg_arg_schedule(fcinfo, 1);
	now = PG_ARGISNULL(2) ? an_pg_now_ms() : an_pg_arg_instant(fcinfo, 2, as_ms, "now");
	an_pg_current_settings(&settings);
	/* Checked here, where both settings are known: GUCs may be set in either order. */
	if (an_settings_check_catch_up(&settings, &err) != AN_OK)
		an_pg_raise_rule(ERRCODE_INVALID_PARAMETER_VALUE, &err);
	if ((rc = an_due_plan_make(s, &settings, now, &plan, &err)) != AN_OK)
		an_pg_raise_schedule(rc, &err);
	if (plan.look_back)
	{
		if ((rc = an_schedule_range(s, plan.from, plan.to, emit_slot, &l, &err)) != AN_OK)
			an_pg_raise_schedule(rc, &err);
		l.n = an_due_trim(&plan, &settings, (int64_t *) l.slots, l.n);
		drop_runs(&l, job, &settings);
	}
	due.slots = palloc(AN_DUE_MAX * sizeof(int64));
	due.n = an_due_pick(&plan, (const int64_t *) l.slots, l.n, (int64_t *) due.slots);
	return_slots(fcinfo, &due, as_ms);
	return (Datum) 0;
}

/* anarchon_due(job, schedule, now timestamptz DEFAULT NULL): NULL is the database clock */
Datum
anarchon_due(PG_FUNCTION_ARGS)
{
	return due_call(fcinfo, false);
}

/* anarchon_due(job, schedule, now_ms bigint) */
Datum
anarchon_due_ms(PG_FUNCTION_ARGS)
{
	return due_call(fcinfo, true);
}

/* anarchon_missed(job, schedule, from timestamptz, to timestamptz) */
Datum
anarchon_missed(PG_FUNCTION_ARGS)
{
	return missed_call(fcinfo, false);
}

/* anarchon_missed(job, schedule, from bigint, to bigint) */
Datum
anarchon_missed_ms(PG_FUNCTION_ARGS)
{
	return missed_call(fcinfo, true);
}

/* ---------------------------------------------------------------- anarchon_zones */

static int
emit_zone(void *arg, const char *name)
{
	ReturnSetInfo *rsinfo = arg;
	Datum		value = CStringGetTextDatum(name);
	bool		isnull = false;

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
	return 0;
}

/* anarchon_zones(): every name a CRON_TZ schedule accepts. */
Datum
anarchon_zones(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = materialize(fcinfo, TEXTOID, "name");
	an_err		err;

	if (an_tz_each_name(emit_zone, rsinfo, &err) != 0)
		an_pg_raise_schedule(AN_E_UNSUPPORTED, &err);
	return (Datum) 0;
}
