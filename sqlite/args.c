/*
 * args.c — argument readers and error results shared by the SQL functions.
 */
#include <stdio.h>

#include "anarchon.h"
#include "args.h"

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

/*
 * Milliseconds from an integer or an integral real, checked by the slot rule
 * or the instant rule; 0 after setting the error result.
 */
static int
arg_ms(sqlite3_context *ctx, const char *fn, sqlite3_value *v, const char *what,
	   int64_t *out,
	   an_error (*rule) (int64_t, char *, size_t),
	   an_error (*rule_double) (double, int64_t *, char *, size_t))
{
	char		err[AN_ERRMAX];
	int			type = sqlite3_value_type(v);
	an_error	rc;

	if (type == SQLITE_INTEGER)
		rc = rule(*out = sqlite3_value_int64(v), err, sizeof(err));
	else if (type == SQLITE_FLOAT)
		rc = rule_double(sqlite3_value_double(v), out, err, sizeof(err));
	else
	{
		snprintf(err, sizeof(err),
				 "%s must be an integer number of milliseconds since 1970-01-01 UTC, got %s",
				 what, an_sqlite_type_name(type));
		an_sqlite_error(ctx, SQLITE_MISMATCH, fn, err);
		return 0;
	}
	if (rc != AN_OK)
	{
		an_sqlite_error(ctx, SQLITE_ERROR, fn, err);
		return 0;
	}
	return 1;
}

int
an_sqlite_arg_slot(sqlite3_context *ctx, const char *fn, sqlite3_value *v, int64_t *out)
{
	return arg_ms(ctx, fn, v, "slot", out, an_validate_slot, an_validate_slot_double);
}

int
an_sqlite_arg_instant(sqlite3_context *ctx, const char *fn, sqlite3_value *v,
					  const char *what, int64_t *out)
{
	return arg_ms(ctx, fn, v, what, out, an_validate_instant, an_validate_instant_double);
}
