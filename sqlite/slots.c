/*
 * slots.c — the table-valued functions of the SQLite extension.
 *
 *   SELECT slot FROM anarchon_slots(schedule, from, to)
 *       every slot of schedule with from <= slot < to, in order (ms, UTC)
 *   SELECT slot FROM anarchon_missed(job, schedule, from, to)
 *       the slots of schedule in [from, to) that can no longer be claimed
 *       (now - slot > max_late_ms, on the database clock) and of which the
 *       store holds no run: runs every instance missed
 *   SELECT slot FROM anarchon_due(job, schedule [, now])
 *       the slots to claim now under the catch_up setting (schedule/due.h),
 *       oldest first: missed ones of the last catch_up_ms, then the current
 *       slot; now defaults to the database clock
 *   SELECT name FROM anarchon_zones
 *       the time-zone names a CRON_TZ schedule may use
 *
 * Each is an eponymous virtual table (no CREATE VIRTUAL TABLE needed): its
 * arguments are hidden columns, and all of them must be given (anarchon_due's
 * now excepted).  The rows are
 * computed in full when the query starts, so a range over the limit of
 * AN_SCHEDULE_RANGE_MAX slots is an error before any row, not after a
 * million of them.  anarchon_missed reads the local store's anarchon_runs
 * on this connection (a read, no lock beyond it), or asks a network store
 * through its recall method (core/store.h); stores without one cannot tell.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "due.h"
#include "missed.h"
#include "pause.h"
#include "schedule.h"
#include "vtab_rows.h"

SQLITE_EXTENSION_INIT3

typedef struct tv_cursor tv_cursor;

/* One table-valued function: its columns, its arguments and how it fills rows. */
typedef struct tv_kind
{
	const char *name;
	const char *schema;          /* column 0 is the result; then the arguments */
	int			nargs;
	int			nopt;            /* how many of the last arguments may be left out */
	const char *usage;           /* for a call with missing arguments */
	int			(*fill) (tv_cursor *c, sqlite3_value **argv, an_err *err);
	int			vtab_risk;       /* SQLITE_VTAB_INNOCUOUS, or DIRECTONLY: it asks the store */
} tv_kind;

/* What a module is registered with. */
typedef struct tv_aux
{
	an_sqlite_sched *sc;
	const tv_kind *kind;
} tv_aux;

typedef struct tv_vtab
{
	sqlite3_vtab base;
	const tv_aux *aux;
	sqlite3    *db;
} tv_vtab;

struct tv_cursor
{
	an_vt_cursor vc;			/* first: n rows, row the current one */
	tv_vtab    *vt;
	int64_t    *slots;           /* slot rows */
	char	  **names;           /* or name rows */
	size_t		cap;
};

/* Append a row (a slot, or a name copied with sqlite3_mprintf). */
static int
push(tv_cursor *c, int64_t slot, const char *name)
{
	if (c->vc.n == c->cap)
	{
		size_t		cap = c->cap ? c->cap * 2 : 64;
		void	   *p = name ? sqlite3_realloc64(c->names, cap * sizeof(char *))
			: sqlite3_realloc64(c->slots, cap * sizeof(int64_t));

		if (p == NULL)
			return -1;
		if (name)
			c->names = p;
		else
			c->slots = p;
		c->cap = cap;
	}
	if (name)
	{
		if ((c->names[c->vc.n] = sqlite3_mprintf("%s", name)) == NULL)
			return -1;
	}
	else
		c->slots[c->vc.n] = slot;
	c->vc.n++;
	return 0;
}

static void
clear_rows(tv_cursor *c)
{
	for (size_t i = 0; c->names != NULL && i < c->vc.n; i++)
		sqlite3_free(c->names[i]);
	sqlite3_free(c->names);
	sqlite3_free(c->slots);
	c->names = NULL;
	c->slots = NULL;
	c->vc.n = c->cap = c->vc.row = 0;
}

static int
emit_slot(void *arg, int64_t slot)
{
	return push(arg, slot, NULL);
}

/* An SQLite code for a core error. */
static int
sqlite_code(an_error rc)
{
	return rc == AN_OK ? SQLITE_OK : rc == AN_E_NOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
}

/* ---------------------------------------------------------------- anarchon_slots */

static int
fill_slots(tv_cursor *c, sqlite3_value **argv, an_err *err)
{
	an_schedule s;
	int64_t		from,
				to;
	int			rc;

	if ((rc = an_sqlite_parse_schedule(c->vt->aux->sc, argv[0], &s, err)) != SQLITE_OK ||
		(rc = an_sqlite_value_instant(argv[1], "from", &from, err)) != SQLITE_OK ||
		(rc = an_sqlite_value_instant(argv[2], "to", &to, err)) != SQLITE_OK)
		return rc;
	return sqlite_code(an_schedule_range(&s, from, to, emit_slot, c, err));
}

/* ---------------------------------------------------------------- anarchon_missed */

/* The slots of the range that can no longer be claimed: up to cutoff. */
typedef struct missed_walk
{
	tv_cursor  *c;
	int64_t		cutoff;
} missed_walk;

static int
emit_claimable_no_more(void *arg, int64_t slot)
{
	missed_walk *mw = arg;

	if (slot >= mw->cutoff)
		return 1;
	return push(mw->c, slot, NULL);
}

/* The job argument, checked; NULL after a message in err. */
static const char *
job_arg(sqlite3_value *v, int *rc, an_err *err)
{
	const char *job;

	*rc = SQLITE_ERROR;
	if (sqlite3_value_type(v) != SQLITE_TEXT)
	{
		an_errf(err, "job must be text, got %s", an_sqlite_type_name(sqlite3_value_type(v)));
		*rc = SQLITE_MISMATCH;
		return NULL;
	}
	if ((job = (const char *) sqlite3_value_text(v)) == NULL)
	{
		*rc = SQLITE_NOMEM;
		return NULL;
	}
	if (an_validate_job(job, (size_t) sqlite3_value_bytes(v), err) != AN_OK)
		return NULL;
	*rc = SQLITE_OK;
	return job;
}

/* Keep in c the slots of which the connection's store holds no run. */
static int
drop_runs(tv_cursor *c, const char *job, an_err *err)
{
	an_sqlite_conn *conn = c->vt->aux->sc->conn;
	an_request	rq;
	an_store   *st;

	if ((st = an_sqlite_store(conn, err)) == NULL)
		return SQLITE_ERROR;
	memset(&rq, 0, sizeof(rq));
	rq.job = job;
	rq.settings = &conn->settings;
	an_store_clear(st);
	/* Nothing ran in a pause, and nothing was meant to: not missed (core/pause.h). */
	if (an_missed_recall(st, &rq, c->slots, &c->vc.n) == AN_OK &&
		an_pause_filter(st, &rq, c->slots, &c->vc.n) == AN_OK)
		return SQLITE_OK;
	*err = st->err;
	return st->err.code == AN_E_NOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
}

static int
fill_missed(tv_cursor *c, sqlite3_value **argv, an_err *err)
{
	an_sqlite_conn *conn = c->vt->aux->sc->conn;
	an_schedule s;
	missed_walk mw;
	const char *job;
	int64_t		from,
				to;
	int			rc;

	if ((job = job_arg(argv[0], &rc, err)) == NULL)
		return rc;
	if ((rc = an_sqlite_parse_schedule(c->vt->aux->sc, argv[1], &s, err)) != SQLITE_OK ||
		(rc = an_sqlite_value_instant(argv[2], "from", &from, err)) != SQLITE_OK ||
		(rc = an_sqlite_value_instant(argv[3], "to", &to, err)) != SQLITE_OK)
		return rc;
	if (from < AN_SLOT_MIN && from <= to)
	{
		an_errf(err, "from (%lld) is before %lld (1973-03-03), the first slot a claim accepts: no run can exist before it (if you gave seconds, multiply by 1000)",
				 (long long) from, (long long) AN_SLOT_MIN);
		return SQLITE_ERROR;
	}
	/* The store is opened first: a bad one is an error even for an empty range. */
	if (an_sqlite_store(conn, err) == NULL)
		return SQLITE_ERROR;
	mw.c = c;
	mw.cutoff = an_sqlite_now(c->vt->db) - conn->settings.max_late_ms;
	if ((rc = sqlite_code(an_schedule_range(&s, from, to, emit_claimable_no_more, &mw,
											err))) != SQLITE_OK)
		return rc;
	return drop_runs(c, job, err);
}

/* ---------------------------------------------------------------- anarchon_due */

/*
 * The policy is schedule/'s (schedule/due.h): this lists the plan's range, keeps what
 * core trims it to, drops the slots with a run as anarchon_missed does, and
 * returns core's pick.
 */
static int
fill_due(tv_cursor *c, sqlite3_value **argv, an_err *err)
{
	an_sqlite_conn *conn = c->vt->aux->sc->conn;
	an_schedule s;
	an_due_plan plan;
	int64_t		due[AN_DUE_MAX];
	const char *job;
	int64_t		now;
	size_t		n;
	int			rc;

	if ((job = job_arg(argv[0], &rc, err)) == NULL)
		return rc;
	if ((rc = an_sqlite_parse_schedule(c->vt->aux->sc, argv[1], &s, err)) != SQLITE_OK)
		return rc;
	if (argv[2] == NULL || sqlite3_value_type(argv[2]) == SQLITE_NULL)
		now = an_sqlite_now(c->vt->db);
	else if ((rc = an_sqlite_value_instant(argv[2], "now", &now, err)) != SQLITE_OK)
		return rc;
	if ((rc = sqlite_code(an_due_plan_make(&s, &conn->settings, now, &plan, err))) != SQLITE_OK)
		return rc;
	if (plan.look_back)
	{
		missed_walk mw = {c, INT64_MAX};

		if ((rc = sqlite_code(an_schedule_range(&s, plan.from, plan.to, emit_claimable_no_more, &mw,
												err))) != SQLITE_OK)
			return rc;
		c->vc.n = an_due_trim(&plan, &conn->settings, c->slots, c->vc.n);
		if ((rc = drop_runs(c, job, err)) != SQLITE_OK)
			return rc;
	}
	n = an_due_pick(&plan, c->slots, c->vc.n, due);
	c->vc.n = 0;
	for (size_t i = 0; i < n; i++)
		if (push(c, due[i], NULL) != 0)
			return SQLITE_NOMEM;
	return SQLITE_OK;
}

/* ---------------------------------------------------------------- anarchon_zones */

/* Out of memory stops the walk with 2 (-1 is the walk's own failure). */
static int
emit_name(void *arg, const char *name)
{
	return push(arg, 0, name) ? 2 : 0;
}

static int
fill_zones(tv_cursor *c, sqlite3_value **argv, an_err *err)
{
	(void) argv;
	switch (an_tz_each_name(emit_name, c, err))
	{
		case 0:
			return SQLITE_OK;
		case -1:
			return SQLITE_ERROR;
		default:
			return SQLITE_NOMEM;
	}
}

static const tv_kind kinds[] = {
	{"anarchon_slots", "CREATE TABLE x(slot INTEGER, schedule HIDDEN, from_ms HIDDEN, to_ms HIDDEN)",
	 3, 0, "anarchon_slots(schedule, from, to) needs its three arguments", fill_slots,
	 SQLITE_VTAB_INNOCUOUS},
	{"anarchon_missed", "CREATE TABLE x(slot INTEGER, job HIDDEN, schedule HIDDEN, from_ms HIDDEN, to_ms HIDDEN)",
	 4, 0, "anarchon_missed(job, schedule, from, to) needs its four arguments", fill_missed,
	 SQLITE_VTAB_DIRECTONLY},
	{"anarchon_due", "CREATE TABLE x(slot INTEGER, job HIDDEN, schedule HIDDEN, now_ms HIDDEN)",
	 3, 1, "anarchon_due(job, schedule [, now]) needs its job and schedule", fill_due,
	 SQLITE_VTAB_DIRECTONLY},
	{"anarchon_zones", "CREATE TABLE x(name TEXT)", 0, 0, "", fill_zones, SQLITE_VTAB_INNOCUOUS},
};

/* ---------------------------------------------------------------- the module */

static int
tv_connect(sqlite3 *db, void *paux, int argc, const char *const *argv,
		   sqlite3_vtab **out, char **errmsg)
{
	const tv_aux *aux = paux;
	tv_vtab    *vt;
	int			rc;

	(void) argc;
	(void) argv;
	(void) errmsg;
	if ((rc = sqlite3_declare_vtab(db, aux->kind->schema)) != SQLITE_OK)
		return rc;
	if ((vt = sqlite3_malloc(sizeof(*vt))) == NULL)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	vt->aux = aux;
	vt->db = db;
	/*
	 * anarchon_missed opens the connection's store and asks it about up to a
	 * million slots: never from a view or trigger of a database file.
	 */
	sqlite3_vtab_config(db, aux->kind->vtab_risk);
	*out = &vt->base;
	return SQLITE_OK;
}

/*
 * Every argument must be an equality on its hidden column; idxNum is the set
 * of those given.  Rows come out in slot order.
 */
static int
tv_best_index(sqlite3_vtab *v, sqlite3_index_info *info)
{
	return an_vt_best_index(info, 1, ((tv_vtab *) v)->aux->kind->nargs, 0);
}

static int
tv_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	int			rc = an_vt_open(sizeof(tv_cursor), out);

	if (rc == SQLITE_OK)
		((tv_cursor *) *out)->vt = (tv_vtab *) v;
	return rc;
}

static int
tv_close(sqlite3_vtab_cursor *cur)
{
	clear_rows((tv_cursor *) cur);
	sqlite3_free(cur);
	return SQLITE_OK;
}

static int
tv_filter(sqlite3_vtab_cursor *cur, int idxnum, const char *idxstr, int argc,
		  sqlite3_value **argv)
{
	tv_cursor  *c = (tv_cursor *) cur;
	const tv_kind *kind = c->vt->aux->kind;
	an_err		err = {0};
	int			rc;

	(void) idxstr;
	clear_rows(c);
	/* Arguments left out are the last ones (argvIndex counts from the first). */
	if (argc < kind->nargs - kind->nopt || argc > kind->nargs || idxnum != (1 << argc) - 1)
	{
		an_errf(&err, "%s", kind->usage);
		rc = SQLITE_ERROR;
	}
	else
	{
		sqlite3_value *args[8] = {NULL};

		/* Those left out are NULL, for fill to default. */
		memcpy(args, argv, (size_t) argc * sizeof(*argv));
		rc = kind->fill(c, args, &err);
	}
	if (rc != SQLITE_OK)
	{
		clear_rows(c);
		return an_vt_fail(&c->vt->base, kind->name, rc, &err);
	}
	return SQLITE_OK;
}

static int
tv_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	tv_cursor  *c = (tv_cursor *) cur;

	if (col != 0)
		sqlite3_result_null(ctx);
	else if (c->names != NULL)
		sqlite3_result_text(ctx, c->names[c->vc.row], -1, SQLITE_TRANSIENT);
	else
		sqlite3_result_int64(ctx, c->slots[c->vc.row]);
	return SQLITE_OK;
}

static const sqlite3_module tv_module = {
	.iVersion = 0,
	.xCreate = NULL,			/* eponymous only: no CREATE VIRTUAL TABLE */
	.xConnect = tv_connect,
	.xBestIndex = tv_best_index,
	.xDisconnect = an_vt_disconnect,
	.xDestroy = an_vt_disconnect,
	.xOpen = tv_open,
	.xClose = tv_close,
	.xFilter = tv_filter,
	.xNext = an_vt_next,
	.xEof = an_vt_eof,
	.xColumn = tv_column,
	.xRowid = an_vt_rowid,
};

static void
aux_free(void *p)
{
	tv_aux	   *aux = p;

	an_sqlite_sched_release(aux->sc);
	sqlite3_free(aux);
}

int
an_sqlite_slots_register(sqlite3 *db, an_sqlite_sched *sc)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
	{
		tv_aux	   *aux = sqlite3_malloc(sizeof(*aux));
		int			rc;

		if (aux == NULL)
			return SQLITE_NOMEM;
		aux->sc = sc;
		aux->kind = &kinds[i];
		sc->refs++;
		/* On failure SQLite has already called aux_free. */
		if ((rc = sqlite3_create_module_v2(db, kinds[i].name, &tv_module, aux, aux_free)) != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}
