/*
 * args.c — argument readers and error results shared by the SQL functions.
 */
#include <stdio.h>

#include "anarchon.h"
#include "args.h"
#include "run_now.h"

SQLITE_EXTENSION_INIT3

const char *
an_sqlite_type_name(int type)
{
	switch (type)
	{
		case SQLITE_INTEGER:
			return "an integer";
		case SQLITE_FLOAT:
			return "a real";
		case SQLITE_TEXT:
			return "text";
		case SQLITE_BLOB:
			return "a blob";
		default:
			return "NULL";
	}
}

void
an_sqlite_error(sqlite3_context *ctx, int code, const char *fn, const char *msg)
{
	char	   *full = sqlite3_mprintf("%s: %s", fn, msg);

	if (full == NULL)
	{
		sqlite3_result_error_nomem(ctx);
		return;
	}
	sqlite3_result_error(ctx, full, -1);
	/* The code must come after the message, or the message is lost. */
	if (code != SQLITE_ERROR)
		sqlite3_result_error_code(ctx, code);
	sqlite3_free(full);
}

void
an_sqlite_fail(sqlite3_context *ctx, int code, const char *fn, const an_err *e)
{
	char		text[AN_ERRTEXTMAX];

	an_sqlite_error(ctx, code, fn, an_err_text(e, text, sizeof(text)));
}

/*
 * Milliseconds from an integer or an integral real, checked by the slot rule
 * or the instant rule: SQLITE_OK, or an error code with a message in err.
 */
static int
value_ms(sqlite3_value *v, const char *what, int64_t *out,
		 an_error (*rule) (int64_t, an_err *),
		 an_error (*rule_double) (double, int64_t *, an_err *),
		 an_err *err)
{
	int			type = sqlite3_value_type(v);

	if (type == SQLITE_INTEGER)
		return rule(*out = sqlite3_value_int64(v), err) == AN_OK ? SQLITE_OK : SQLITE_ERROR;
	if (type == SQLITE_FLOAT)
		return rule_double(sqlite3_value_double(v), out, err) == AN_OK ? SQLITE_OK : SQLITE_ERROR;
	an_errf(err, "%s must be an integer number of milliseconds since 1970-01-01 UTC, got %s",
			 what, an_sqlite_type_name(type));
	return SQLITE_MISMATCH;
}

int
an_sqlite_value_instant(sqlite3_value *v, const char *what, int64_t *out, an_err *err)
{
	return value_ms(v, what, out, an_validate_instant_arg, an_validate_instant_double, err);
}

int
an_sqlite_value_slot(sqlite3_value *v, int64_t *out, an_err *err)
{
	return value_ms(v, "slot", out, an_validate_run_slot, an_validate_slot_double, err);
}

/* The same, as the error result of ctx; 0 after setting it. */
static int
arg_ms(sqlite3_context *ctx, const char *fn, sqlite3_value *v, const char *what,
	   int64_t *out,
	   an_error (*rule) (int64_t, an_err *),
	   an_error (*rule_double) (double, int64_t *, an_err *))
{
	an_err		err;
	int			rc = value_ms(v, what, out, rule, rule_double, &err);

	if (rc != SQLITE_OK)
	{
		an_sqlite_fail(ctx, rc, fn, &err);
		return 0;
	}
	return 1;
}

int
an_sqlite_arg_slot(sqlite3_context *ctx, const char *fn, sqlite3_value *v, int64_t *out)
{
	return arg_ms(ctx, fn, v, "slot", out, an_validate_run_slot, an_validate_slot_double);
}

int
an_sqlite_arg_instant(sqlite3_context *ctx, const char *fn, sqlite3_value *v,
					  const char *what, int64_t *out)
{
	return arg_ms(ctx, fn, v, what, out, an_validate_instant_arg, an_validate_instant_double);
}
