/*
 * args.h — reading SQL arguments and reporting errors, for every SQLite
 * function of the extension, so that they all refuse bad input alike.
 */
#ifndef ANARCHON_SQLITE_ARGS_H
#define ANARCHON_SQLITE_ARGS_H

#include <sqlite3ext.h>
#include <stdint.h>

/* "an integer", "text", "a blob", … for messages. */
const char *an_sqlite_type_name(int type);

/* Set the error result "fn: msg" with result code `code`. */
void		an_sqlite_error(sqlite3_context *ctx, int code, const char *fn, const char *msg);

/*
 * A time in ms since the epoch (a slot, or an instant), given as an integer or
 * an integral real, within the slot range.  Returns 0 after setting the error
 * result, whose message calls the argument `what`.
 */
int			an_sqlite_arg_ms(sqlite3_context *ctx, const char *fn, sqlite3_value *v,
							 const char *what, int64_t *out);

#endif							/* ANARCHON_SQLITE_ARGS_H */
