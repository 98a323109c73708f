/*
 * claim_many.c — anarchon_claim_many, the batch claim of the SQLite
 * extension, as a table-valued function (an eponymous virtual table):
 *
 *   SELECT job, outcome, detail FROM anarchon_claim_many('["sync","report"]', slot, token)
 *
 * One row per distinct job, in byte order of the names: outcome is what
 * anarchon_claim(job, slot, token) would have answered, or 'error' with the
 * message in detail.  A table, so that the caller reads the rows as it reads
 * any query's.  But a statement that reads a table, even a virtual one, holds
 * the file's read lock, and in rollback-journal mode the claim's commit would
 * wait for it (local_store.c refuses that case): so the same name is also a
 * scalar function, which reads no table and works in every journal mode,
 *
 *   SELECT anarchon_claim_many('["sync","report"]', slot, token)
 *     -> '[{"job":"report","outcome":"won","detail":null},…]'
 *
 * the same rows as a JSON array.  Both share everything but the output.
 *
 * With the local store every job is claimed inside ONE BEGIN IMMEDIATE (one
 * wait for the file's write lock, one commit): each job's claim is the single
 * claim's own code path (the store's claim method, core/lease.c's table),
 * made a savepoint of that transaction (local_store.c), so a job that fails
 * is undone alone and becomes its row.  Nothing is answered before the
 * commit: if it fails, the statement fails and no job was claimed.  A
 * network store is asked job by job.
 *
 * Errors of the whole call (jobs not a JSON array of strings, a bad slot or
 * token, the store unreachable at open, the write lock busy past
 * busy_timeout_ms) fail the statement.  The table is SQLITE_VTAB_DIRECTONLY,
 * like every function of the extension that writes: no view or trigger of a
 * database file can run it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "host.h"
#include "local_store.h"
#include "vtab_rows.h"

SQLITE_EXTENSION_INIT3

#define CM_NAME "anarchon_claim_many"
#define CM_USAGE CM_NAME "(jobs, slot, token): jobs is a JSON array of job names, such as '[\"sync\",\"report\"]'"

enum
{
	COL_JOB, COL_OUTCOME, COL_DETAIL, COL_JOBS, COL_SLOT, COL_TOKEN
};

typedef struct cm_row
{
	char	   *job;             /* sqlite3_malloc'd */
	const char *outcome;         /* static */
	char	   *detail;          /* sqlite3_malloc'd, or NULL */
} cm_row;

typedef struct cm_vtab
{
	sqlite3_vtab base;
	an_sqlite_conn *conn;
	sqlite3    *db;
} cm_vtab;

typedef struct cm_cursor
{
	an_vt_cursor vc;			/* first: n rows, row the current one */
	cm_row	   *rows;
} cm_cursor;

/* What each job's claim needs: the request of the call, a row per job. */
typedef struct cm_batch
{
	an_request	rq;
	cm_row	   *rows;
} cm_batch;

static void
clear_rows(cm_cursor *c)
{
	for (size_t i = 0; i < c->vc.n; i++)
	{
		sqlite3_free(c->rows[i].job);
		sqlite3_free(c->rows[i].detail);
	}
	sqlite3_free(c->rows);
	c->rows = NULL;
	c->vc.n = c->vc.row = 0;
}

static int
by_name(const void *a, const void *b)
{
	/* strcmp compares as unsigned char: byte order. */
	return strcmp(((const cm_row *) a)->job, ((const cm_row *) b)->job);
}

/*
 * The job names of jobs, a JSON array of strings, into c->rows sorted and
 * without duplicates; SQLite's own JSON reader parses it.  SQLITE_OK, or an
 * error code with a message in err.
 */
static int
read_jobs(cm_cursor *c, sqlite3 *db, sqlite3_value *jobs, an_err *err)
{
	sqlite3_stmt *s;
	size_t		cap = 0;
	int			rc;

	if (sqlite3_value_type(jobs) != SQLITE_TEXT)
	{
		an_errf(err, "jobs must be a JSON array of job names as text, such as '[\"sync\",\"report\"]', got %s",
				 an_sqlite_type_name(sqlite3_value_type(jobs)));
		return SQLITE_MISMATCH;
	}
	if (sqlite3_prepare_v2(db, "SELECT json_valid(?1) AND json_type(?1) = 'array', type, value"
						   " FROM (SELECT 1) LEFT JOIN json_each(CASE WHEN json_valid(?1) THEN ?1 END)",
						   -1, &s, NULL) != SQLITE_OK)
	{
		an_errf(err, "cannot read jobs: %s (this SQLite needs its JSON functions)", sqlite3_errmsg(db));
		return SQLITE_ERROR;
	}
	sqlite3_bind_value(s, 1, jobs);
	rc = SQLITE_OK;
	while (rc == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
	{
		const char *type = (const char *) sqlite3_column_text(s, 1);
		const char *name = (const char *) sqlite3_column_text(s, 2);

		if (!sqlite3_column_int(s, 0))
		{
			an_errf(err, "jobs is not a JSON array: give job names as '[\"sync\",\"report\"]'");
			rc = SQLITE_ERROR;
			break;
		}
		if (type == NULL)		/* the empty array's one row of the LEFT JOIN */
			break;
		if (strcmp(type, "text") != 0)
		{
			an_errf(err, "jobs[%zu] is %s: every element of jobs must be a job name as a JSON string",
					 c->vc.n, type);
			rc = SQLITE_MISMATCH;
			break;
		}
		if (c->vc.n == cap)
		{
			cm_row	   *p;

			cap = cap ? cap * 2 : 16;
			if ((p = sqlite3_realloc64(c->rows, cap * sizeof(*p))) == NULL)
			{
				rc = SQLITE_NOMEM;
				break;
			}
			c->rows = p;
		}
		memset(&c->rows[c->vc.n], 0, sizeof(c->rows[c->vc.n]));
		if (name == NULL || (c->rows[c->vc.n].job = sqlite3_mprintf("%s", name)) == NULL)
		{
			rc = SQLITE_NOMEM;
			break;
		}
		c->vc.n++;
	}
	if (rc == SQLITE_OK && sqlite3_errcode(db) != SQLITE_OK && sqlite3_errcode(db) != SQLITE_ROW &&
		sqlite3_errcode(db) != SQLITE_DONE)
	{
		an_errf(err, "jobs is not a JSON array (%s): give job names as '[\"sync\",\"report\"]'",
				 sqlite3_errmsg(db));
		rc = SQLITE_ERROR;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_OK || c->vc.n == 0)
		return rc;
	qsort(c->rows, c->vc.n, sizeof(*c->rows), by_name);
	{
		size_t		kept = 1;

		for (size_t i = 1; i < c->vc.n; i++)
		{
			if (strcmp(c->rows[i].job, c->rows[kept - 1].job) == 0)
				sqlite3_free(c->rows[i].job);
			else
				c->rows[kept++] = c->rows[i];
		}
		c->vc.n = kept;
	}
	return SQLITE_OK;
}

/* One job's claim into its row: the outcome, or 'error' and the message. */
static int
claim_one(an_store *st, void *arg, size_t i)
{
	cm_batch   *b = arg;
	cm_row	   *row = &b->rows[i];
	an_request	rq = b->rq;
	an_claim_result res;
	char		text[AN_ERRTEXTMAX];
	an_err		invalid;

	rq.job = row->job;
	an_store_clear(st);
	if (an_validate_job(row->job, strlen(row->job), &invalid) != AN_OK)
		an_err_text(&invalid, text, sizeof(text));
	else
	{
		if (an_store_claim(st, &rq, &res) == AN_OK)
		{
			row->outcome = an_outcome_name(res.outcome);
			return AN_OK;
		}
		/* Out of memory is no job's own problem: the whole call fails. */
		if (st->err.code == AN_E_NOMEM)
			return AN_E_NOMEM;
		an_err_text(&st->err, text, sizeof(text));
	}
	row->outcome = "error";
	if ((row->detail = sqlite3_mprintf("%s", text[0] ? text : "the store failed")) == NULL)
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	return AN_OK;
}

static int
claim_all(cm_cursor *c, an_sqlite_conn *conn, sqlite3_value **argv, an_err *err)
{
	cm_batch	b;
	an_store   *st;
	an_request *rqs;
	int			rc;

	memset(&b, 0, sizeof(b));
	b.rq.settings = &conn->settings;
	if ((rc = an_sqlite_value_slot(argv[1], &b.rq.slot, err)) != SQLITE_OK)
		return rc;
	/* A manual slot is claimed by anarchon_run_now only (core/run_now.h). */
	if (an_validate_slot(b.rq.slot, err) != AN_OK)
		return SQLITE_ERROR;
	if (sqlite3_value_type(argv[2]) != SQLITE_TEXT)
	{
		an_errf(err, "token must be text, got %s", an_sqlite_type_name(sqlite3_value_type(argv[2])));
		return SQLITE_MISMATCH;
	}
	b.rq.token = (const char *) sqlite3_value_text(argv[2]);
	if (b.rq.token == NULL)
		return SQLITE_NOMEM;
	if (strlen(b.rq.token) != (size_t) sqlite3_value_bytes(argv[2]))
	{
		an_errf(err, "token contains a NUL byte");
		return SQLITE_ERROR;
	}
	if (an_validate_token(b.rq.token, strlen(b.rq.token), err) != AN_OK)
		return SQLITE_ERROR;
	if ((st = an_sqlite_store(conn, err)) == NULL)
		return SQLITE_ERROR;
	an_store_clear(st);
	if (st->m->validate && st->m->validate(st, &conn->settings) != AN_OK)
	{
		*err = st->err;
		return SQLITE_ERROR;
	}
	if (c->vc.n == 0)
		return SQLITE_OK;
	b.rows = c->rows;
	/* The requests, for a store that sends them ahead; a job name that breaks its rule is not sent. */
	if ((rqs = sqlite3_malloc64(c->vc.n * sizeof(an_request))) == NULL)
		return SQLITE_NOMEM;
	for (size_t i = 0; i < c->vc.n; i++)
	{
		rqs[i] = b.rq;
		rqs[i].job = an_validate_job(c->rows[i].job, strlen(c->rows[i].job), err) == AN_OK ? c->rows[i].job : NULL;
	}
	an_err_clear(err);
	rc = an_store_batch(st, &conn->settings, rqs, c->vc.n, claim_one, &b);
	sqlite3_free(rqs);
	if (rc == AN_OK)
		return SQLITE_OK;
	*err = st->err;
	return st->err.code == AN_E_NOMEM ? SQLITE_NOMEM : st->err.code == AN_E_BUSY ? SQLITE_BUSY : SQLITE_ERROR;
}

/* ---------------------------------------------------------------- the scalar form */

/* s as a JSON string (job names and messages are ASCII text, but any byte is escaped safely). */
static void
json_string(sqlite3_str *out, const char *s)
{
	if (s == NULL)
	{
		sqlite3_str_appendall(out, "null");
		return;
	}
	sqlite3_str_appendchar(out, 1, '"');
	for (; *s; s++)
	{
		unsigned char ch = (unsigned char) *s;

		if (ch == '"' || ch == '\\')
			sqlite3_str_appendf(out, "\\%c", ch);
		else if (ch < 0x20)
			sqlite3_str_appendf(out, "\\u%04x", ch);
		else
			sqlite3_str_appendchar(out, 1, (char) ch);
	}
	sqlite3_str_appendchar(out, 1, '"');
}

static void
fn_claim_many(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	cm_cursor	c;
	an_err		err = {0};
	sqlite3_str *out;
	char	   *json;
	int			rc;

	(void) argc;
	if (!an_sqlite_top_level(ctx, CM_NAME))
		return;
	memset(&c, 0, sizeof(c));
	if ((rc = read_jobs(&c, sqlite3_context_db_handle(ctx), argv[0], &err)) == SQLITE_OK)
		rc = claim_all(&c, sqlite3_user_data(ctx), argv, &err);
	if (rc != SQLITE_OK)
	{
		clear_rows(&c);
		if (rc == SQLITE_NOMEM)
			sqlite3_result_error_nomem(ctx);
		else
			an_sqlite_fail(ctx, rc, CM_NAME, &err);
		return;
	}
	out = sqlite3_str_new(NULL);
	sqlite3_str_appendchar(out, 1, '[');
	for (size_t i = 0; i < c.vc.n; i++)
	{
		sqlite3_str_appendall(out, i ? ",{\"job\":" : "{\"job\":");
		json_string(out, c.rows[i].job);
		sqlite3_str_appendall(out, ",\"outcome\":");
		json_string(out, c.rows[i].outcome);
		sqlite3_str_appendall(out, ",\"detail\":");
		json_string(out, c.rows[i].detail);
		sqlite3_str_appendchar(out, 1, '}');
	}
	sqlite3_str_appendchar(out, 1, ']');
	clear_rows(&c);
	if ((json = sqlite3_str_finish(out)) == NULL)
	{
		sqlite3_result_error_nomem(ctx);
		return;
	}
	sqlite3_result_text(ctx, json, -1, sqlite3_free);
}

/* ---------------------------------------------------------------- the module */

static int
cm_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
		   sqlite3_vtab **out, char **errmsg)
{
	cm_vtab    *vt;
	int			rc;

	(void) argc;
	(void) argv;
	(void) errmsg;
	if ((rc = sqlite3_declare_vtab(db, "CREATE TABLE x(job TEXT, outcome TEXT, detail TEXT,"
								   " jobs HIDDEN, slot HIDDEN, token HIDDEN)")) != SQLITE_OK)
		return rc;
	if ((vt = sqlite3_malloc(sizeof(*vt))) == NULL)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	vt->conn = aux;
	vt->db = db;
	/* It writes and asks the store: never from a view or trigger of a database file. */
	sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
	*out = &vt->base;
	return SQLITE_OK;
}

/* jobs, slot and token must each be an equality on its hidden column. */
static int
cm_best_index(sqlite3_vtab *v, sqlite3_index_info *info)
{
	(void) v;
	return an_vt_best_index(info, COL_JOBS, 3, COL_JOB);
}

static int
cm_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	(void) v;
	return an_vt_open(sizeof(cm_cursor), out);
}

static int
cm_close(sqlite3_vtab_cursor *cur)
{
	clear_rows((cm_cursor *) cur);
	sqlite3_free(cur);
	return SQLITE_OK;
}

static int
cm_filter(sqlite3_vtab_cursor *cur, int idxnum, const char *idxstr, int argc,
		  sqlite3_value **argv)
{
	cm_cursor  *c = (cm_cursor *) cur;
	cm_vtab    *vt = (cm_vtab *) cur->pVtab;
	an_err		err = {0};
	int			rc;

	(void) idxstr;
	clear_rows(c);
	if (argc != 3 || idxnum != 7)
	{
		an_errf(&err, "%s", "give all three arguments: " CM_USAGE);
		rc = SQLITE_ERROR;
	}
	else if ((rc = read_jobs(c, vt->db, argv[0], &err)) == SQLITE_OK)
		rc = claim_all(c, vt->conn, argv, &err);
	if (rc != SQLITE_OK)
	{
		/* No row of a failed call: with the local store nothing of it was committed. */
		clear_rows(c);
		return an_vt_fail(&vt->base, CM_NAME, rc, &err);
	}
	return SQLITE_OK;
}

static int
cm_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	const cm_cursor *c = (const cm_cursor *) cur;
	const cm_row *r = &c->rows[c->vc.row];

	if (col == COL_JOB)
		sqlite3_result_text(ctx, r->job, -1, SQLITE_TRANSIENT);
	else if (col == COL_OUTCOME)
		sqlite3_result_text(ctx, r->outcome, -1, SQLITE_STATIC);
	else if (col == COL_DETAIL && r->detail)
		sqlite3_result_text(ctx, r->detail, -1, SQLITE_TRANSIENT);
	else
		sqlite3_result_null(ctx);
	return SQLITE_OK;
}

static const sqlite3_module cm_module = {
	.iVersion = 0,
	.xCreate = NULL,			/* eponymous only: no CREATE VIRTUAL TABLE */
	.xConnect = cm_connect,
	.xBestIndex = cm_best_index,
	.xDisconnect = an_vt_disconnect,
	.xDestroy = an_vt_disconnect,
	.xOpen = cm_open,
	.xClose = cm_close,
	.xFilter = cm_filter,
	.xNext = an_vt_next,
	.xEof = an_vt_eof,
	.xColumn = cm_column,
	.xRowid = an_vt_rowid,
};

int
an_sqlite_claim_many_register(sqlite3 *db, an_sqlite_conn *conn)
{
	int			rc;

	conn->refs++;
	/* On failure SQLite has already called an_sqlite_conn_release. */
	if ((rc = sqlite3_create_module_v2(db, CM_NAME, &cm_module, conn, an_sqlite_conn_release)) != SQLITE_OK)
		return rc;
	conn->refs++;
	/* DIRECTONLY, and asked again at each call (top_level.c), as anarchon_claim. */
	return sqlite3_create_function_v2(db, CM_NAME, 3, SQLITE_UTF8 | SQLITE_DIRECTONLY,
									  conn, fn_claim_many, NULL, NULL, an_sqlite_conn_release);
}
