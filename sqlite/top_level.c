/*
 * top_level.c — functions with a side effect run only from the
 * application's own SQL, never from the database file's schema.
 *
 * A database file is data and may come from anyone.  Its CHECK constraints,
 * DEFAULTs, generated columns, index expressions, partial-index WHEREs,
 * triggers and views are run by SQLite on the reader's behalf, so a function
 * that changes a setting, writes, or asks the store must not run from them.
 * SQLITE_DIRECTONLY says so, but SQLite tests it only when it resolves the
 * names of an expression: a CHECK, generated column or index that was parsed
 * before the extension registered its functions (the schema is read once per
 * connection, often before the extension is loaded) is never resolved again,
 * and code generation does not repeat the test, so SQLite runs the function
 * from it whatever PRAGMA trusted_schema says.
 *
 * So each such function asks, at each call, whether the call is direct.
 * SQLite does not say where a call comes from, but it does say which
 * statements of the connection are executing: those that are busy
 * (sqlite3_stmt_busy) and not paused on a row.  Up to SQLite 3.44,
 * sqlite3_data_count() is 0 from the start of each sqlite3_step until it
 * returns a row; from 3.45 on it keeps the last row's count during the next
 * step, so a statement that has returned a row may be paused or executing.  The code of
 * a schema object runs inside the statement that uses it, and its text is
 * not in that statement's SQL (sqlite3_sql).  The rule: the call is direct
 * when every executing statement's own text calls the function by name (the
 * name as an SQL token, bare or quoted, followed by "("; string literals,
 * comments and parameters do not count).  Checking every executing
 * statement, not any, means a statement that the extension or another
 * function runs from inside a call (whose triggers could reach back here)
 * is refused too; a statement without saved text (legacy sqlite3_prepare)
 * is refused.  When no statement is known to be executing (3.45 on, every
 * busy one has returned a row), one of them must call the function by name:
 * a schema object is refused at its first call, made before the statement's
 * first row, and only a call it makes later in a statement that has
 * returned rows could pass, and then only beside a statement of the
 * application that names the function.
 *
 * What remains: a schema object that calls the same function as the
 * statement that reaches it (an INSERT that itself calls anarchon_claim into
 * a table whose CHECK calls anarchon_claim) is not told apart from the
 * statement's own call.  SQLite's DIRECTONLY test refuses that case for
 * views and triggers (compiled at each use), and for the other objects when
 * the extension was loaded before the schema was read.
 */
#include <string.h>

#include "host.h"
#include "args.h"

SQLITE_EXTENSION_INIT3

static int
ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static int
ident_char(unsigned char c)
{
	return ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}

/* p past white space and comments. */
static const char *
skip_blank(const char *p)
{
	for (;;)
	{
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v')
			p++;
		else if (p[0] == '-' && p[1] == '-')
		{
			while (*p && *p != '\n')
				p++;
		}
		else if (p[0] == '/' && p[1] == '*')
		{
			for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
				;
			if (*p)
				p += 2;
		}
		else
			return p;
	}
}

/*
 * p past a quoted token opened by *p (a string, or a quoted identifier); the
 * text between the quotes, with doubled quotes made single, is compared with
 * name (*same: 1 when equal, ASCII case aside).
 */
static const char *
skip_quoted(const char *p, const char *name, int *same)
{
	char		close = *p == '[' ? ']' : *p;
	size_t		n = 0,
				len = strlen(name);

	*same = 1;
	for (p++; *p; p++)
	{
		if (*p == close)
		{
			if (close != ']' && p[1] == close)
				p++;			/* a doubled quote is one character */
			else
				break;
		}
		if (n >= len || sqlite3_strnicmp(p, name + n, 1) != 0)
			*same = 0;
		n++;
	}
	if (n != len)
		*same = 0;
	return *p ? p + 1 : p;
}

/* Does the SQL text call fn: its name as a token, then "("? */
static int
calls(const char *sql, const char *fn)
{
	const char *p = sql;
	size_t		len = strlen(fn);

	while (*(p = skip_blank(p)))
	{
		const unsigned char c = (unsigned char) *p;
		int			same = 0;

		if (c == '\'')
		{
			p = skip_quoted(p, "", &same);
			continue;
		}
		if (c == '"' || c == '`' || c == '[')
			p = skip_quoted(p, fn, &same);
		else if (ident_start(c))
		{
			const char *start = p;

			while (ident_char((unsigned char) *p))
				p++;
			same = (size_t) (p - start) == len && sqlite3_strnicmp(start, fn, (int) len) == 0;
		}
		else if ((c >= '0' && c <= '9') || c == '?' || c == ':' || c == '@' || c == '$')
		{
			/* a number or a parameter: never a function's name */
			for (p++; ident_char((unsigned char) *p) || *p == '.'; p++)
				;
			continue;
		}
		else
		{
			p++;
			continue;
		}
		if (same && *skip_blank(p) == '(')
			return 1;
	}
	return 0;
}

int
an_sqlite_top_level(sqlite3_context *ctx, const char *fn)
{
	sqlite3    *db = sqlite3_context_db_handle(ctx);
	sqlite3_stmt *s = NULL;
	int			executing = 0,
				row_calls = 0;

	while ((s = sqlite3_next_stmt(db, s)) != NULL)
	{
		const char *sql;

		if (!sqlite3_stmt_busy(s))
			continue;			/* not started, or done */
		sql = sqlite3_sql(s);
		if (sqlite3_data_count(s) > 0)
		{
			/* paused on a row, or (SQLite 3.45 on) executing after one */
			row_calls |= sql != NULL && calls(sql, fn);
			continue;
		}
		executing++;
		if (sql == NULL || !calls(sql, fn))
			break;
	}
	if (s == NULL && (executing > 0 || row_calls))
		return 1;
	an_sqlite_error(ctx, SQLITE_ERROR, fn,
					"may only be called from top-level SQL, not from a trigger, view, CHECK,"
					" DEFAULT, index or generated column");
	return 0;
}
