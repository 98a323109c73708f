/*
 * vtab_rows.c — the cursor, argument mapping and error that the extension's
 * table-valued functions share (vtab_rows.h).
 */
#include <string.h>

#include "vtab_rows.h"

SQLITE_EXTENSION_INIT3

int
an_vt_best_index(sqlite3_index_info *info, int first, int nargs, int order_col)
{
	int			seen = 0;

	for (int i = 0; i < info->nConstraint; i++)
	{
		const struct sqlite3_index_constraint *cs = &info->aConstraint[i];
		int			arg = cs->iColumn - first;

		if (arg < 0 || arg >= nargs || cs->op != SQLITE_INDEX_CONSTRAINT_EQ)
			continue;
		/* An argument that depends on a later table: ask for another plan. */
		if (!cs->usable)
			return SQLITE_CONSTRAINT;
		if (seen & (1 << arg))
			continue;
		seen |= 1 << arg;
		info->aConstraintUsage[i].argvIndex = arg + 1;
		info->aConstraintUsage[i].omit = 1;
	}
	info->idxNum = seen;
	info->estimatedCost = 1000;
	if (info->nOrderBy == 1 && info->aOrderBy[0].iColumn == order_col && !info->aOrderBy[0].desc)
		info->orderByConsumed = 1;
	return SQLITE_OK;
}

int
an_vt_open(size_t size, sqlite3_vtab_cursor **out)
{
	an_vt_cursor *c = sqlite3_malloc64(size);

	if (c == NULL)
		return SQLITE_NOMEM;
	memset(c, 0, size);
	*out = &c->base;
	return SQLITE_OK;
}

int
an_vt_next(sqlite3_vtab_cursor *cur)
{
	((an_vt_cursor *) cur)->row++;
	return SQLITE_OK;
}

int
an_vt_eof(sqlite3_vtab_cursor *cur)
{
	const an_vt_cursor *c = (const an_vt_cursor *) cur;

	return c->row >= c->n;
}

int
an_vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = (sqlite3_int64) ((an_vt_cursor *) cur)->row + 1;
	return SQLITE_OK;
}

int
an_vt_disconnect(sqlite3_vtab *v)
{
	sqlite3_free(v);
	return SQLITE_OK;
}

int
an_vt_fail(sqlite3_vtab *v, const char *name, int rc, const an_err *err)
{
	char		text[AN_ERRTEXTMAX];

	if (rc != SQLITE_NOMEM)
	{
		sqlite3_free(v->zErrMsg);
		v->zErrMsg = sqlite3_mprintf("%s: %s", name, an_err_text(err, text, sizeof(text)));
	}
	/* As the functions always answered: a wrong type is said as SQLITE_ERROR, with the message. */
	return rc == SQLITE_MISMATCH ? SQLITE_ERROR : rc;
}
