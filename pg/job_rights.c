/*
 * job_rights.c — whose job is it, and what may a call ask of it?
 *
 * Job names are one namespace for every role that may call the functions,
 * so without owners any role could block any job (a claim with a year-long
 * lease makes every other slot of the job answer `overlap`), read its runs,
 * or grow anarchon.runs with slots far in the future.  Here:
 *
 *   - A job belongs to a role (anarchon.job_owners).  A call acts on it only
 *     when the current user has the privileges of that role: the owner
 *     itself, a member of it (with INHERIT), or a superuser.  The current
 *     user, not the session's or the outer one: inside a SECURITY DEFINER
 *     function it is the definer, as postgres_fdw checks.
 *   - Reading a job's state (anarchon_check, anarchon_missed) is open to
 *     pg_monitor too, as anarchon.runs is.
 *   - Pausing and resuming a job are its owner's: a job nobody owns cannot
 *     be paused (but by a superuser), so that a role cannot hold up a job
 *     before the role that runs it claims it for the first time.
 *   - A job nobody owns becomes the first claimer's, in the claim's own
 *     transaction (anarchon.own_new_jobs, on by default), so a fleet whose
 *     instances all connect as one role needs no configuration.  Other calls
 *     of an unowned job (a check, a heartbeat) own nothing: there is nothing
 *     of anyone's to protect.  An administrator gives or takes a job with
 *     anarchon.set_job_owner(job, role).
 *   - Limits that only a superuser can raise (PGC_SUSET): the longest lease a
 *     call may ask for, how far ahead of now a slot may be claimed, and how
 *     many jobs one role may come to own by claiming them.  Superusers are
 *     not held to them.
 *
 * The owner is read by a probe of the table's primary key (key_lookup.c),
 * and the writes run through SPI as the owner of schema anarchon
 * (as_owner.c): the caller needs no privilege on the table.
 */
#include "anarchon_pg.h"

#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "executor/tuptable.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

static bool own_new_jobs = true;
/* In ms, as int GUCs: up to 24.8 days; 0 is "no limit" for more. */
static int	max_lease_ms = 86400000;	/* one day */
static int	max_ahead_ms = 86400000;
static int	max_jobs_per_role = 10000;

void
an_pg_define_job_limits(void)
{
	DefineCustomBoolVariable("anarchon.own_new_jobs",
							 "A job nobody owns becomes the role's that claims it first.",
							 "Off: only anarchon.set_job_owner gives jobs, and claims of unowned jobs are refused.",
							 &own_new_jobs, true, PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("anarchon.max_lease_ms",
							"The longest lease a call of a role that is not a superuser may ask for, in ms (0: no limit).",
							NULL, &max_lease_ms, 86400000, 0, INT_MAX, PGC_SUSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("anarchon.max_ahead_ms",
							"How far ahead of now a role that is not a superuser may claim a slot, in ms (0: no limit).",
							NULL, &max_ahead_ms, 86400000, 0, INT_MAX, PGC_SUSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("anarchon.max_jobs_per_role",
							"How many jobs a role that is not a superuser may come to own by claiming them (0: no limit).",
							NULL, &max_jobs_per_role, 10000, 0, INT_MAX, PGC_SUSET, 0,
							NULL, NULL, NULL);
}

/* Run one query as the schema's owner (as_owner.c); its first value, if any, in *out. */
static bool
owner_query(const char *sql, int nargs, Oid *types, Datum *values, Datum *out)
{
	return an_pg_spi_as_owner(sql, nargs, types, values, NULL, out);
}

/* The owner column of the row found (key_lookup.c). */
static void
read_owner(Relation rel, TupleTableSlot *slot, void *arg)
{
	bool		isnull;

	*(Oid *) arg = DatumGetObjectId(slot_getattr(slot, an_pg_column(rel, "owner"), &isnull));
}

/* Asked by every call on a job: a probe of the primary key, not a statement. */
static bool
lookup_owner(const char *job, Oid *owner)
{
	Datum		key = CStringGetTextDatum(job);
	RegProcedure eq = F_TEXTEQ;

	*owner = InvalidOid;
	return an_pg_key_lookup("job_owners", 1, &key, &eq, read_owner, owner);
}

/* The insert of a new owner, for an_pg_lock_bounded. */
typedef struct owner_insert
{
	const char *job;
	Oid			owner;
} owner_insert;

static uint64
insert_statement(void *arg)
{
	owner_insert *oi = arg;
	Oid			types[2] = {TEXTOID, OIDOID};
	Datum		values[2] = {CStringGetTextDatum(oi->job), ObjectIdGetDatum(GetUserId())};
	Datum		d;

	if (!owner_query("INSERT INTO anarchon.job_owners (job, owner) VALUES ($1, $2) "
					 "ON CONFLICT (job) DO NOTHING RETURNING owner", 2, types, values, &d))
		return 0;
	oi->owner = DatumGetObjectId(d);
	return 1;
}

/*
 * The insert waits when another transaction is inserting the same job and
 * has not committed (a first claim inside a transaction block): bounded by
 * busy_timeout_ms, as the job's lock is, with the same error.
 */
static bool
insert_owner(const char *job, Oid *owner, int64 timeout_ms)
{
	owner_insert oi = {job, InvalidOid};

	if (an_pg_lock_bounded(insert_statement, &oi, an_pg_store(), job, timeout_ms) == 0)
		return false;
	*owner = oi.owner;
	return true;
}

/* The first claim of a job nobody owns: the current user takes it. */
static bool
take_job(const char *job, Oid *owner, const an_settings *settings)
{
	Datum		d;

	if (!own_new_jobs)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("job \"%s\" has no owner", job),
				 errdetail("anarchon.own_new_jobs is off: jobs are given by an administrator."),
				 errhint("An administrator runs SELECT anarchon.set_job_owner('%s', 'the_role');", job)));
	/* A read-only transaction (a standby) cannot record an owner: none is taken. */
	if (XactReadOnly)
		return false;
	if (max_jobs_per_role > 0 && !superuser())
	{
		Oid			ctypes[1] = {OIDOID};
		Datum		cvalues[1] = {ObjectIdGetDatum(GetUserId())};

		if (owner_query("SELECT count(*) FROM anarchon.job_owners WHERE owner = $1", 1, ctypes, cvalues, &d) &&
			DatumGetInt64(d) >= max_jobs_per_role)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("role \"%s\" owns %d jobs already", GetUserNameFromId(GetUserId(), false),
							max_jobs_per_role),
					 errdetail("anarchon.max_jobs_per_role bounds how many jobs a role may come to own by claiming them."),
					 errhint("Retire jobs (DELETE FROM anarchon.job_owners as their owner's administrator), or have a superuser raise anarchon.max_jobs_per_role.")));
	}
	if (insert_owner(job, owner, settings->busy_timeout_ms))
		return true;
	/* Another role took it at the same moment: its row decides. */
	return lookup_owner(job, owner);
}

void
an_pg_require_job_right(const char *job, an_pg_job_use use, const an_settings *settings)
{
	Oid			owner;
	bool		owned = lookup_owner(job, &owner);

	if (!owned && use == AN_PG_JOB_CLAIM)
		owned = take_job(job, &owner, settings);
	/*
	 * A pause of a job nobody owns yet would let any role hold up another
	 * role's job before its first claim: refused, and no owner is taken.
	 */
	if (!owned && use == AN_PG_JOB_PAUSE && !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("job \"%s\" has no owner to pause it", job),
				 errdetail("Only the role that owns a job, its members and superusers may pause or resume it, so that no role can hold up a job that is not its own."),
				 errhint("Claim the job once as the role that runs it, or have an administrator give it with anarchon.set_job_owner('%s', role).", job)));
	if (!owned || has_privs_of_role(GetUserId(), owner))
		return;
	/* Monitoring reads every job's state, as it reads anarchon.runs. */
	if (use == AN_PG_JOB_READ && has_privs_of_role(GetUserId(), ROLE_PG_MONITOR))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for job \"%s\"", job),
			 errdetail("The job belongs to role \"%s\"; only that role, its members and superusers act on it.",
					   GetUserNameFromId(owner, true) ? GetUserNameFromId(owner, true) : "(dropped)"),
			 errhint("Run as a member of that role (GRANT it to this one), or have an administrator give the job with anarchon.set_job_owner(job, role).")));
}

void
an_pg_require_lease_limit(const an_settings *settings)
{
	if (max_lease_ms > 0 && settings->lease_ms > max_lease_ms && !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease_ms %lld is above the limit of %d",
						(long long) settings->lease_ms, max_lease_ms),
				 errdetail("anarchon.max_lease_ms bounds the lease a call may ask for, so that no role can hold a job for longer."),
				 errhint("Ask for a shorter lease and keep it alive with anarchon_heartbeat, or have a superuser raise anarchon.max_lease_ms.")));
}

void
an_pg_require_claim_limits(const an_request *rq)
{
	int64		now_ms;

	an_pg_require_lease_limit(rq->settings);
	if (superuser())
		return;
	now_ms = an_pg_now_ms();
	if (max_ahead_ms > 0 && rq->slot - now_ms > max_ahead_ms)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("slot %s is more than %d ms ahead of now",
						timestamptz_to_str(an_pg_ms_to_ts(rq->slot)), max_ahead_ms),
				 errdetail("anarchon.max_ahead_ms bounds how far ahead a slot may be claimed, which bounds what a role can add to anarchon.runs."),
				 errhint("Claim a slot when it comes (anarchon_slot(schedule)), or have a superuser raise anarchon.max_ahead_ms.")));
}
