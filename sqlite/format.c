/*
 * format.c — which format a database file's anarchon tables are in, the
 * migration of an older file to this library's, and anarchon_version().
 *
 * Files made before 0.2.0 carry no record of their format, so formats 1 to 3
 * (format.h) are read from the tables' definitions, compared with the texts
 * those builds wrote; a definition that matches none is refused, never
 * guessed at.  From format 4 on the file says its format in anarchon_meta,
 * and a format above this library's, or a row that does not read as one, is
 * refused with both formats and versions named.
 *
 * The migration runs on the store's own connection (local_store.c), in one
 * BEGIN IMMEDIATE transaction that reads the format again after taking the
 * write lock: when many processes open an old file at once, one migrates and
 * the others wait in the busy handler, then find format 4 and change
 * nothing.  A state CHECK without 'replaced' is rebuilt by SQLite's
 * documented procedure for schema changes ALTER TABLE cannot make (new
 * table, copy, drop, rename, the indexes and triggers made again, foreign
 * keys off around it and checked before the commit), so rows and indexes
 * are kept.  PRAGMA user_version is the application's and is never touched.
 */
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "local_store.h"

SQLITE_EXTENSION_INIT3

/* The state CHECK's values before overlap 'replace' (formats 1, 2) and since. */
#define STATES_OLD "'running', 'succeeded', 'failed', 'interrupted'"
#define STATES_NEW STATES_OLD ", 'replaced'"

#define RUNS_TABLE(name, states) \
	"CREATE TABLE " name " (" \
	" job TEXT NOT NULL," \
	" slot INTEGER NOT NULL," \
	" attempt INTEGER NOT NULL," \
	" token TEXT NOT NULL," \
	" state TEXT NOT NULL CHECK (state IN (" states "))," \
	" lease_until INTEGER NOT NULL," \
	" claimed_at INTEGER NOT NULL," \
	" finished_at INTEGER," \
	" PRIMARY KEY (job, slot)" \
	") WITHOUT ROWID"

#define RUNS_INDEX "CREATE INDEX IF NOT EXISTS anarchon_runs_live ON anarchon_runs (job, lease_until)" \
	" WHERE state = 'running'"

/*
 * The largest cutoff anarchon_prune used (local_store.c): a first claim of
 * an older slot is late, whatever the claimer's max_late_ms.
 */
#define PRUNED_TABLE "CREATE TABLE IF NOT EXISTS anarchon_pruned (" \
	" id INTEGER PRIMARY KEY CHECK (id = 1)," \
	" slot_before INTEGER NOT NULL" \
	")"

#define RUNS_COLUMNS "job, slot, attempt, token, state, lease_until, claimed_at, finished_at"

/*
 * A fresh file's tables.  The index keeps the overlap test to an index
 * lookup however long the history grows.  anarchon_meta's value has no type,
 * so that an integer stays one.
 */
static const char fresh_sql[] =
RUNS_TABLE("anarchon_runs", STATES_NEW) ";"
RUNS_INDEX ";"
AN_SQLITE_PAUSES_SCHEMA
PRUNED_TABLE ";"
"CREATE TABLE anarchon_meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;";

/* What a file holds, read in one statement (one snapshot) and the meta rows. */
typedef struct file_format
{
	int			format;          /* 0: no anarchon tables; -1: unknown or unreadable */
	int			rebuild_runs;    /* anarchon_runs's CHECK lacks 'replaced' */
	int			has_pauses;
	int			has_meta;
	sqlite3_int64 raw;           /* meta's format, when an integer */
	char		raw_text[64];    /* meta's format as found, for a refusal */
	char		since[32];       /* format_since, "" when absent */
	char		written_by[32];  /* written_by, "" when absent */
} file_format;

/* A definition's text from its first '(' on, without blanks or quotes, lower case. */
static void
normalized(const char *sql, sqlite3_str *out)
{
	const char *p = sql ? strchr(sql, '(') : NULL;

	for (; p && *p; p++)
		if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' && *p != '"')
			sqlite3_str_appendchar(out, 1, (char) ((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p));
}

static int
same_definition(const char *a, const char *b)
{
	sqlite3_str *x = sqlite3_str_new(NULL),
			   *y = sqlite3_str_new(NULL);
	char	   *xs,
			   *ys;
	int			same;

	normalized(a, x);
	normalized(b, y);
	xs = sqlite3_str_finish(x);
	ys = sqlite3_str_finish(y);
	same = xs && ys && strcmp(xs, ys) == 0;
	sqlite3_free(xs);
	sqlite3_free(ys);
	return same;
}

static int
fail_sql(an_store *st, sqlite3 *db, const char *what)
{
	int			code = sqlite3_errcode(db);

	if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
	{
		an_store_fail(st, AN_E_BUSY, "the database stayed locked by another writer while %s", what);
		an_store_detailf(st, "Nothing was decided.");
		return an_store_hintf(st, "Call again, or raise %s.", an_store_setting(st, "busy_timeout_ms"));
	}
	if (code == SQLITE_NOMEM)
		return an_store_fail(st, AN_E_NOMEM, "out of memory while %s", what);
	return an_store_fail(st, AN_E_STORE, "anarchon's tables: %s failed: %s", what, sqlite3_errmsg(db));
}

static void
copy_text(char *dst, size_t size, sqlite3_stmt *s, int col)
{
	const unsigned char *t = sqlite3_column_text(s, col);

	snprintf(dst, size, "%s", t ? (const char *) t : "");
}

static int
read_meta(an_store *st, sqlite3 *db, file_format *f)
{
	sqlite3_stmt *s;
	int			rc;

	if (sqlite3_prepare_v2(db, "SELECT key, value, typeof(value) FROM main.anarchon_meta"
						   " WHERE key IN ('format', 'format_since', 'written_by')", -1, &s, NULL) != SQLITE_OK)
		return fail_sql(st, db, "reading anarchon_meta");
	snprintf(f->raw_text, sizeof(f->raw_text), "missing");
	f->format = -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
	{
		const char *key = (const char *) sqlite3_column_text(s, 0);

		if (strcmp(key, "format_since") == 0)
			copy_text(f->since, sizeof(f->since), s, 1);
		else if (strcmp(key, "written_by") == 0)
			copy_text(f->written_by, sizeof(f->written_by), s, 1);
		else if (strcmp((const char *) sqlite3_column_text(s, 2), "integer") == 0)
		{
			f->raw = sqlite3_column_int64(s, 1);
			snprintf(f->raw_text, sizeof(f->raw_text), "%lld", (long long) f->raw);
			/* No file had anarchon_meta before format 4. */
			f->format = f->raw >= AN_SQLITE_FORMAT ? (int) (f->raw > 1000000 ? 1000000 : f->raw) : -1;
		}
		else
		{
			const char *t = (const char *) sqlite3_column_text(s, 1);

			snprintf(f->raw_text, sizeof(f->raw_text), "%s '%.40s'",
					 (const char *) sqlite3_column_text(s, 2), t ? t : "");
		}
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return fail_sql(st, db, "reading anarchon_meta");
	return AN_OK;
}

/* Which format db holds (f->format), or why it cannot tell (AN_OK, format -1). */
static int
read_format(an_store *st, sqlite3 *db, file_format *f)
{
	sqlite3_stmt *s;
	char	   *runs = NULL;
	int			rc;

	memset(f, 0, sizeof(*f));
	if (sqlite3_prepare_v2(db,
						   "SELECT (SELECT sql FROM main.sqlite_schema WHERE type = 'table' AND name = 'anarchon_runs'),"
						   " EXISTS (SELECT 1 FROM main.sqlite_schema WHERE type = 'table' AND name = 'anarchon_pauses'),"
						   " EXISTS (SELECT 1 FROM main.sqlite_schema WHERE type = 'table' AND name = 'anarchon_meta')",
						   -1, &s, NULL) != SQLITE_OK)
		return fail_sql(st, db, "reading the schema");
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
	{
		const unsigned char *t = sqlite3_column_text(s, 0);

		runs = t ? sqlite3_mprintf("%s", (const char *) t) : NULL;
		f->has_pauses = sqlite3_column_int(s, 1);
		f->has_meta = sqlite3_column_int(s, 2);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW)
	{
		sqlite3_free(runs);
		return fail_sql(st, db, "reading the schema");
	}
	rc = AN_OK;
	if (f->has_meta)
		rc = read_meta(st, db, f);
	else if (runs == NULL)
		f->format = 0;
	else if (same_definition(runs, RUNS_TABLE("anarchon_runs", STATES_OLD)))
		f->format = f->has_pauses ? 2 : 1, f->rebuild_runs = 1;
	else if (same_definition(runs, RUNS_TABLE("anarchon_runs", STATES_NEW)))
		/* Without pauses: a build of overlap 'replace' from before pauses existed. */
		f->format = f->has_pauses ? 3 : 1;
	else
		f->format = -1;
	sqlite3_free(runs);
	return rc;
}

/* The refusal of a file this library does not know. */
static int
refuse(an_store *st, const file_format *f)
{
	if (f->format > AN_SQLITE_FORMAT)
	{
		an_store_fail(st, AN_E_CONFIG, "this database's anarchon tables are in format %lld, newer than"
					  " format %d of this library (anarchon %s)", (long long) f->raw, AN_SQLITE_FORMAT, AN_VERSION);
		an_store_detailf(st, "anarchon_meta says format %lld came with anarchon %s and the file was last"
						 " written by anarchon %s; this library reads formats 1 to %d and does not guess"
						 " at a newer one. Nothing was read or written.", (long long) f->raw,
						 *f->since ? f->since : "(not recorded)",
						 *f->written_by ? f->written_by : "(not recorded)", AN_SQLITE_FORMAT);
		if (*f->since || *f->written_by)
			return an_store_hintf(st, "Use anarchon %s or later with this file.",
								  *f->since ? f->since : f->written_by);
		return an_store_hintf(st, "Use a release of anarchon newer than %s, one that knows format %lld.",
							  AN_VERSION, (long long) f->raw);
	}
	if (f->has_meta)
	{
		an_store_fail(st, AN_E_CONFIG, "anarchon_meta holds no format this library can read");
		an_store_detailf(st, "Its format row is %s; this library (anarchon %s) reads formats 1 to %d"
						 " and does not guess. Nothing was read or written.",
						 f->raw_text, AN_VERSION, AN_SQLITE_FORMAT);
		if (*f->written_by && strcmp(f->written_by, AN_VERSION) != 0)
			return an_store_hintf(st, "Use anarchon %s or later with this file, or restore anarchon_meta"
								  " from a backup.", f->written_by);
		return an_store_hintf(st, "Restore anarchon_meta from a backup of this file.");
	}
	an_store_fail(st, AN_E_CONFIG, "anarchon_runs has a definition no anarchon release made");
	an_store_detailf(st, "The file has no anarchon_meta saying its format, and its anarchon_runs matches"
					 " none of formats 1 to 3; this library (anarchon %s) does not guess."
					 " Nothing was read or written.", AN_VERSION);
	return an_store_hintf(st, "Open the file with the anarchon build that made it, or see doc/upgrading.md"
						  " (SQLite) for the known formats.");
}

int
an_sqlite_format_readable(an_store *st, sqlite3 *db)
{
	file_format f;
	int			rc = read_format(st, db, &f);

	if (rc != AN_OK)
		return rc;
	return (f.format < 0 || f.format > AN_SQLITE_FORMAT) ? refuse(st, &f) : AN_OK;
}

/* ---------------------------------------------------------------- the migration */

static int
exec_step(an_store *st, sqlite3 *db, const char *sql, const char *what)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? AN_OK : fail_sql(st, db, what);
}

static int
pragma_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	int			v = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return v;
}

/*
 * The state CHECK, by the documented procedure: remember the table's indexes
 * and triggers, create the new table under another name, copy the rows, drop
 * the old table, give the new one its name, make the indexes and triggers
 * again; with foreign keys on (fk), check them before the commit.  The
 * rename is the legacy one: between the drop and the rename an application's
 * view or trigger naming anarchon_runs points at no table, and the modern
 * rename, which checks every view and trigger, would refuse; once renamed
 * they find the table again, as the procedure's last steps expect.
 */
static int
rebuild_runs(an_store *st, sqlite3 *db, int fk)
{
	sqlite3_stmt *s;
	char	  **again = NULL;
	int			n = 0,
				rc = AN_OK;

	if (sqlite3_prepare_v2(db, "SELECT sql FROM main.sqlite_schema WHERE tbl_name = 'anarchon_runs'"
						   " AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY type, name",
						   -1, &s, NULL) != SQLITE_OK)
		return fail_sql(st, db, "reading anarchon_runs's indexes");
	while (rc == AN_OK && sqlite3_step(s) == SQLITE_ROW)
	{
		char	  **more = sqlite3_realloc(again, (int) sizeof(char *) * (n + 1));

		if (more == NULL || (more[n] = sqlite3_mprintf("%s", sqlite3_column_text(s, 0))) == NULL)
			rc = an_store_fail(st, AN_E_NOMEM, "out of memory while rebuilding anarchon_runs");
		else
			n++;
		if (more)
			again = more;
	}
	sqlite3_finalize(s);
	if (rc == AN_OK)
		rc = exec_step(st, db, RUNS_TABLE("anarchon_runs_new", STATES_NEW) ";"
					   "INSERT INTO anarchon_runs_new (" RUNS_COLUMNS ") SELECT " RUNS_COLUMNS
					   " FROM anarchon_runs;"
					   "DROP TABLE anarchon_runs;"
					   "PRAGMA legacy_alter_table = ON;"
					   "ALTER TABLE anarchon_runs_new RENAME TO anarchon_runs;",
					   "rebuilding anarchon_runs with 'replaced' in its state CHECK");
	sqlite3_exec(db, "PRAGMA legacy_alter_table = OFF", NULL, NULL, NULL);
	for (int i = 0; i < n; i++)
	{
		if (rc == AN_OK)
			rc = exec_step(st, db, again[i], "making anarchon_runs's indexes and triggers again");
		sqlite3_free(again[i]);
	}
	sqlite3_free(again);
	if (rc == AN_OK && fk && sqlite3_prepare_v2(db, "PRAGMA main.foreign_key_check", -1, &s, NULL) == SQLITE_OK)
	{
		if (sqlite3_step(s) == SQLITE_ROW)
			rc = an_store_fail(st, AN_E_STORE, "rebuilding anarchon_runs broke a foreign key of table %s",
							   sqlite3_column_text(s, 0));
		sqlite3_finalize(s);
	}
	return rc;
}

/* anarchon_meta's rows: the format, and for a migration one more line of its log. */
static int
write_meta(an_store *st, sqlite3 *db, int from)
{
	char	   *sql;
	int			rc;

	if (from == 0)
		sql = sqlite3_mprintf("INSERT INTO anarchon_meta (key, value) VALUES"
							  " ('format', %d), ('format_since', %Q), ('written_by', %Q), ('migrations', 0)",
							  AN_SQLITE_FORMAT, AN_SQLITE_FORMAT_SINCE, AN_VERSION);
	else
		sql = sqlite3_mprintf("INSERT INTO anarchon_meta (key, value) VALUES"
							  " ('format', %d), ('format_since', %Q), ('written_by', %Q), ('migrations', 1),"
							  " ('migration 1', 'from format %d to %d by anarchon %q at ' || %lld)",
							  AN_SQLITE_FORMAT, AN_SQLITE_FORMAT_SINCE, AN_VERSION,
							  from, AN_SQLITE_FORMAT, AN_VERSION, (long long) an_sqlite_now(db));
	if (sql == NULL)
		return an_store_fail(st, AN_E_NOMEM, "out of memory while writing anarchon_meta");
	rc = exec_step(st, db, sql, "writing anarchon_meta");
	sqlite3_free(sql);
	return rc;
}

/* Inside the write lock: what the file holds now, brought to this format. */
static int
bring_up(an_store *st, sqlite3 *db, int fk)
{
	file_format f;
	int			rc = read_format(st, db, &f);

	if (rc != AN_OK)
		return rc;
	if (f.format == AN_SQLITE_FORMAT)
		return AN_OK;
	if (f.format < 0 || f.format > AN_SQLITE_FORMAT)
		return refuse(st, &f);
	if (f.format == 0)
	{
		if ((rc = exec_step(st, db, fresh_sql, "creating anarchon's tables")) != AN_OK)
			return rc;
		return write_meta(st, db, 0);
	}
	if (!f.has_pauses &&
		(rc = exec_step(st, db, AN_SQLITE_PAUSES_SCHEMA, "creating anarchon_pauses")) != AN_OK)
		return rc;
	if (f.rebuild_runs && (rc = rebuild_runs(st, db, fk)) != AN_OK)
		return rc;
	/* A table rebuilt by hand (as 0.1.0's docs showed) may have lost it. */
	if ((rc = exec_step(st, db, RUNS_INDEX, "making anarchon_runs_live")) != AN_OK)
		return rc;
	if ((rc = exec_step(st, db, PRUNED_TABLE, "creating anarchon_pruned")) != AN_OK)
		return rc;
	if ((rc = exec_step(st, db, "CREATE TABLE anarchon_meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID",
						"creating anarchon_meta")) != AN_OK)
		return rc;
	return write_meta(st, db, f.format);
}

int
an_sqlite_format_ensure(an_store *st, sqlite3 *db)
{
	/* Foreign keys are turned off outside a transaction only (the procedure's first step). */
	int			fk = pragma_int(db, "PRAGMA foreign_keys");
	int			rc;

	if (fk)
		sqlite3_exec(db, "PRAGMA foreign_keys = OFF", NULL, NULL, NULL);
	/*
	 * The write lock before the first read: many processes opening the file
	 * at once then wait for each other in the busy handler, where two
	 * readers asking for the write lock in rollback-journal mode would be
	 * answered SQLITE_BUSY at once.
	 */
	if ((rc = exec_step(st, db, "BEGIN IMMEDIATE", "waiting for the write lock (BEGIN IMMEDIATE)")) == AN_OK)
	{
		rc = bring_up(st, db, fk);
		if (rc == AN_OK)
			rc = exec_step(st, db, "COMMIT", "committing anarchon's tables");
		if (!sqlite3_get_autocommit(db))
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	}
	if (fk)
		sqlite3_exec(db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
	return rc;
}

/* ---------------------------------------------------------------- anarchon_version() */

static void
fn_version(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void) argc;
	(void) argv;
	sqlite3_result_text(ctx, AN_VERSION, -1, SQLITE_STATIC);
}

int
an_sqlite_format_register(sqlite3 *db)
{
	return sqlite3_create_function_v2(db, "anarchon_version", 0,
									  SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
									  NULL, fn_version, NULL, NULL, NULL);
}
