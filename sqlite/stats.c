/*
 * stats.c — the SQLite extension's counters: one table per process.
 *
 *   SELECT * FROM anarchon_stats()      one row per store this process used
 *   SELECT anarchon_stats_reset()       zero them (the rows stay)
 *   SELECT anarchon_config('stats', 'off')   stop counting this connection's calls
 *
 * Every connection of the process that loaded this library counts into the
 * same table (core/stats.h), by store: "local" (each database's own
 * anarchon_runs, all together) or the store URL with its password hidden.
 * anarchon_stats is an eponymous virtual table without arguments; its rows
 * are read when the query starts.
 *
 * SQLite unloads an extension when the last connection that loaded it
 * closes, which would lose the counts of a process whose pool closes and
 * reopens connections: the first load pins the library for the life of the
 * process (RTLD_NODELETE), so its table stays.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "redact.h"
#include "remote.h"
#include "stats.h"
#include "vtab_rows.h"

SQLITE_EXTENSION_INIT3

static an_stats_table table;
static pthread_mutex_t adding = PTHREAD_MUTEX_INITIALIZER;  /* held to add a row */

/* Connections on several threads may add the same store's row at once. */
static an_stats_row *
row_for(const char *name, const char *kind)
{
	an_stats_row *r;

	if ((r = an_stats_row_find(&table, name)) != NULL)
		return r;
	pthread_mutex_lock(&adding);
	r = an_stats_row_add(&table, name, kind);
	pthread_mutex_unlock(&adding);
	return r;
}

void
an_sqlite_stats_started(int64_t now_ms)
{
	Dl_info		self;

	if (table.reset_ms == 0 && dladdr(&table, &self) && self.dli_fname)
		(void) dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
	an_stats_started(&table, now_ms);
}

void
an_sqlite_stats_attach(an_sqlite_conn *conn)
{
	char	   *name;

	if (conn->store == NULL)
		return;
	conn->store->stats = NULL;
	if (conn->no_stats)
		return;
	name = an_redact_url_dup(conn->store_url ? conn->store_url : "local");
	if (name != NULL)
		conn->store->stats = row_for(name, conn->store->m->name);
	free(name);
}

void
an_sqlite_stats_failed(an_sqlite_conn *conn, an_error code)
{
	const char *url = conn->store_url ? conn->store_url : "local";
	const an_store_methods *m;
	an_err		err;
	char	   *name;

	if (conn->no_stats)
		return;
	m = strcmp(url, "local") == 0 ? &an_sqlite_local_methods : an_remote_find(url, &err);
	name = an_redact_url_dup(url);
	if (name != NULL)
		an_stats_error_seen(row_for(name, m ? m->name : "unknown"), code);
	free(name);
}

static void
fn_stats_reset(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	an_sqlite_conn *conn = sqlite3_user_data(ctx);

	(void) argc;
	(void) argv;
	if (!an_sqlite_top_level(ctx, "anarchon_stats_reset"))
		return;
	an_stats_reset(&table, an_sqlite_now(conn->db));
	sqlite3_result_null(ctx);
}

/* ---------------------------------------------------------------- the table */

typedef struct st_cursor
{
	an_vt_cursor vc;			/* first: n rows, row the current one */
	an_stats_view *rows;
} st_cursor;

static int
st_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
		   sqlite3_vtab **out, char **err)
{
	sqlite3_str *schema = sqlite3_str_new(db);
	char	   *sql;
	int			rc;

	(void) aux;
	(void) argc;
	(void) argv;
	sqlite3_str_appendall(schema, "CREATE TABLE x(");
	for (int i = 0; i < an_stats_ncolumns; i++)
		sqlite3_str_appendf(schema, "%s%s %s", i ? ", " : "", an_stats_columns[i].name,
							an_stats_columns[i].type == AN_STATS_TEXT ? "TEXT" :
							an_stats_columns[i].type == AN_STATS_MS ? "REAL" : "INTEGER");
	sqlite3_str_appendall(schema, ")");
	if ((sql = sqlite3_str_finish(schema)) == NULL)
		return SQLITE_NOMEM;
	rc = sqlite3_declare_vtab(db, sql);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return rc;
	/* It shows the process's store URLs: not for a schema's views or triggers. */
	sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
	if ((*out = sqlite3_malloc(sizeof(**out))) == NULL)
		return SQLITE_NOMEM;
	memset(*out, 0, sizeof(**out));
	(void) err;
	return SQLITE_OK;
}

static int
st_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	(void) vt;
	info->estimatedCost = 10;
	info->estimatedRows = AN_STATS_ROWS;
	return SQLITE_OK;
}

static int
st_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	(void) vt;
	return an_vt_open(sizeof(st_cursor), out);
}

static int
st_close(sqlite3_vtab_cursor *cur)
{
	st_cursor  *c = (st_cursor *) cur;

	sqlite3_free(c->rows);
	sqlite3_free(c);
	return SQLITE_OK;
}

static int
st_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxstr, int argc, sqlite3_value **argv)
{
	st_cursor  *c = (st_cursor *) cur;

	(void) idx;
	(void) idxstr;
	(void) argc;
	(void) argv;
	sqlite3_free(c->rows);
	c->vc.n = an_stats_rows(&table);
	c->vc.row = 0;
	if ((c->rows = sqlite3_malloc64(sizeof(*c->rows) * (c->vc.n ? c->vc.n : 1))) == NULL)
		return SQLITE_NOMEM;
	for (size_t i = 0; i < c->vc.n; i++)
	{
		an_stats_read(&table, i, &c->rows[i]);
		c->rows[i].scope = "process";
	}
	return SQLITE_OK;
}

static int
st_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	st_cursor  *c = (st_cursor *) cur;
	an_stats_value v;

	an_stats_value_of(&c->rows[c->vc.row], col, &v);
	if (v.null)
		sqlite3_result_null(ctx);
	else if (an_stats_columns[col].type == AN_STATS_TEXT)
		sqlite3_result_text(ctx, v.text, -1, SQLITE_TRANSIENT);
	else if (an_stats_columns[col].type == AN_STATS_MS)
		sqlite3_result_double(ctx, v.d);
	else
		sqlite3_result_int64(ctx, v.i);
	return SQLITE_OK;
}

static const sqlite3_module st_module = {
	.iVersion = 0,
	.xCreate = NULL,			/* eponymous only */
	.xConnect = st_connect,
	.xBestIndex = st_best_index,
	.xDisconnect = an_vt_disconnect,
	.xDestroy = an_vt_disconnect,
	.xOpen = st_open,
	.xClose = st_close,
	.xFilter = st_filter,
	.xNext = an_vt_next,
	.xEof = an_vt_eof,
	.xColumn = st_column,
	.xRowid = an_vt_rowid,
};

int
an_sqlite_stats_register(sqlite3 *db, an_sqlite_conn *conn)
{
	int			rc;

	if ((rc = sqlite3_create_module_v2(db, "anarchon_stats", &st_module, NULL, NULL)) != SQLITE_OK)
		return rc;
	conn->refs++;
	/* On failure SQLite has already called an_sqlite_conn_release. */
	return sqlite3_create_function_v2(db, "anarchon_stats_reset", 0, SQLITE_UTF8 | SQLITE_DIRECTONLY,
									  conn, fn_stats_reset, NULL, NULL, an_sqlite_conn_release);
}
