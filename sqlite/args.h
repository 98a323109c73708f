/*
 * args.h — reading SQL arguments and reporting errors, for every SQLite
 * function of the extension, so that they all refuse bad input alike.
 */
#ifndef ANARCHON_SQLITE_ARGS_H
#define ANARCHON_SQLITE_ARGS_H

#include <sqlite3ext.h>
#include <stdint.h>

#include "anarchon.h"

/* "an integer", "text", "a blob", … for messages. */
const char *an_sqlite_type_name(int type);

/* Set the error result "fn: msg" with result code `code`. */
void		an_sqlite_error(sqlite3_context *ctx, int code, const char *fn, const char *msg);
/* The same for an error value: its message, detail and hint joined (an_err_text). */
void		an_sqlite_fail(sqlite3_context *ctx, int code, const char *fn, const an_err *e);

/*
 * A slot (core's slot rule: a whole second from 10^11 ms on), given as an
 * integer or an integral real.  Returns 0 after setting the error result.
 */
int			an_sqlite_arg_slot(sqlite3_context *ctx, const char *fn, sqlite3_value *v,
							   int64_t *out);

/*
 * An instant in ms since the epoch (the `at` of anarchon_slot): any
 * millisecond of the slot range.  Returns 0 after setting the error result,
 * whose message calls the argument `what`.
 */
int			an_sqlite_arg_instant(sqlite3_context *ctx, const char *fn, sqlite3_value *v,
								  const char *what, int64_t *out);

/*
 * The instant rule for a value outside a function call (a table-valued
 * function's argument): SQLITE_OK, or an error code with a message in err.
 */
int			an_sqlite_value_instant(sqlite3_value *v, const char *what, int64_t *out,
									an_err *err);

/* The slot rule for a value outside a function call, likewise. */
int			an_sqlite_value_slot(sqlite3_value *v, int64_t *out, an_err *err);

#endif							/* ANARCHON_SQLITE_ARGS_H */
