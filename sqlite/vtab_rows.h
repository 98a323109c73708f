/*
 * vtab_rows.h — what the extension's eponymous table-valued functions share
 * (anarchon_slots and its kin in slots.c, anarchon_claim_many, anarchon_stats):
 * a cursor over rows computed in full when the query starts, the mapping of
 * the arguments onto hidden columns, and the error of a failed start.
 */
#ifndef ANARCHON_SQLITE_VTAB_ROWS_H
#define ANARCHON_SQLITE_VTAB_ROWS_H

#include <stddef.h>
#include <sqlite3ext.h>

#include "anarchon.h"

/* The first member of every such cursor: n rows, the one at row is current. */
typedef struct an_vt_cursor
{
	sqlite3_vtab_cursor base;
	size_t		n,
				row;
} an_vt_cursor;

/*
 * xBestIndex for functions whose nargs arguments are the hidden columns from
 * column first on: each must be an equality, and idxNum is the set given
 * (bit i: argument i).  Rows come out ordered by column order_col.
 */
int			an_vt_best_index(sqlite3_index_info *info, int first, int nargs, int order_col);

/* xOpen of a cursor of size bytes (zeroed), which starts with an_vt_cursor. */
int			an_vt_open(size_t size, sqlite3_vtab_cursor **out);

int			an_vt_next(sqlite3_vtab_cursor *cur);
int			an_vt_eof(sqlite3_vtab_cursor *cur);
int			an_vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid);
int			an_vt_disconnect(sqlite3_vtab *v);

/*
 * A failed xFilter: the table's error becomes "name: err" (not for
 * SQLITE_NOMEM, which SQLite says itself), and the code to return.
 */
int			an_vt_fail(sqlite3_vtab *v, const char *name, int rc, const an_err *err);

#endif
