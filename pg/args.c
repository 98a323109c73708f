/*
 * args.c — the arguments of the SQL functions, read and validated.
 *
 * Every function takes a job and a slot, most a token.  They are checked by
 * core's an_validate_* (the same rules and words as SQLite's host) before
 * anything is read or written, so bad input never reaches a store.  A NULL
 * is an error: these functions are not STRICT, because a claim that silently
 * answers NULL would read as "nobody won" to a careless caller.
 */
#include "anarchon_pg.h"
#include "run_now.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

static const char *const arg_names[] = {"job", "slot", "token"};

static void
reject_null(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", what)));
}

/* Core's "<what was wrong>: <the rule>" as a message and its DETAIL. */
static void
reject_input(an_error rc, const an_err *err)
{
	if (rc != AN_OK)
		an_pg_raise_rule(ERRCODE_INVALID_PARAMETER_VALUE, err);
}

/* Copy text argument argno into out after validate accepted it. */
static void
read_word(FunctionCallInfo fcinfo, int argno, char *out,
		  an_error (*validate) (const char *, size_t, an_err *))
{
	text	   *t;
	an_err		err;
	size_t		len;

	reject_null(fcinfo, argno, arg_names[argno]);
	t = PG_GETARG_TEXT_PP(argno);
	len = VARSIZE_ANY_EXHDR(t);
	reject_input(validate(VARDATA_ANY(t), len, &err), &err);
	memcpy(out, VARDATA_ANY(t), len);
	out[len] = '\0';
}

void
an_pg_read_job(FunctionCallInfo fcinfo, int argno, char *out)
{
	read_word(fcinfo, argno, out, an_validate_job);
}

void
an_pg_read_token(FunctionCallInfo fcinfo, int argno, char *out)
{
	read_word(fcinfo, argno, out, an_validate_token);
}

static int64
read_slot(FunctionCallInfo fcinfo, an_pg_slot_kind kind)
{
	an_err		err;
	int64		slot;

	reject_null(fcinfo, 1, "slot");
	if (kind == AN_PG_SLOT_MS)
		slot = PG_GETARG_INT64(1);
	else
	{
		TimestampTz ts = PG_GETARG_TIMESTAMPTZ(1);

		if (TIMESTAMP_NOT_FINITE(ts))
		{
			an_errf(&err, "slot is %sinfinity: %s", TIMESTAMP_IS_NOBEGIN(ts) ? "-" : "", AN_SLOT_RULE);
			reject_input(AN_E_INPUT, &err);
		}
		/*
		 * A fraction of a second (of a millisecond too): a clock's reading,
		 * not a schedule's; but a run-now's slot, one millisecond past its
		 * second, addresses a manual run (core/run_now.h).
		 */
		if (ts % USECS_PER_SEC != 0 && ts % USECS_PER_SEC != AN_MANUAL_OFFSET_MS * 1000)
		{
			an_errf(&err, "slot is not a whole second: " AN_SLOT_RULE "; " AN_SLOT_FROM_CLOCK);
			reject_input(AN_E_INPUT, &err);
		}
		slot = an_pg_ts_to_ms(ts);
		/* Said as the timestamp it was given, not as milliseconds. */
		if (slot < AN_SLOT_MIN || slot > AN_SLOT_MAX)
		{
			an_errf(&err, "slot %s is out of range: %s", timestamptz_to_str(ts), AN_SLOT_RULE);
			reject_input(AN_E_INPUT, &err);
		}
	}
	reject_input(an_validate_run_slot(slot, &err), &err);
	return slot;
}

/* Everything but the job: slot, token (when with_token) and the settings. */
static void
read_rest(FunctionCallInfo fcinfo, an_pg_slot_kind kind, bool with_token, an_pg_call *call)
{
	call->rq.slot = read_slot(fcinfo, kind);
	if (with_token)
	{
		read_word(fcinfo, 2, call->token, an_validate_token);
		call->rq.token = call->token;
	}
	an_pg_current_settings(&call->settings);
	call->rq.job = call->job;
	call->rq.settings = &call->settings;
}

void
an_pg_read_call(FunctionCallInfo fcinfo, an_pg_slot_kind kind, bool with_token,
				an_pg_call *call)
{
	memset(call, 0, sizeof(*call));
	read_word(fcinfo, 0, call->job, an_validate_job);
	read_rest(fcinfo, kind, with_token, call);
}

void
an_pg_read_batch(FunctionCallInfo fcinfo, an_pg_slot_kind kind, an_pg_call *call)
{
	memset(call, 0, sizeof(*call));
	read_rest(fcinfo, kind, true, call);
}

void
an_pg_override(FunctionCallInfo fcinfo, int argno, Oid type, const char *name,
			   an_pg_call *call)
{
	char		buf[32];
	an_err		err;
	const char *value;

	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return;
	if (type == INT4OID)
		snprintf(buf, sizeof(buf), "%d", PG_GETARG_INT32(argno));
	else if (type == INT8OID)
		snprintf(buf, sizeof(buf), INT64_FORMAT, PG_GETARG_INT64(argno));
	if (type == INT4OID || type == INT8OID)
		value = buf;
	else
		value = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	reject_input(an_settings_set(&call->settings, name, value, &err), &err);
}
