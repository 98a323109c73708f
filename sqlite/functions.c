/*
 * functions.c — the SQL functions of the SQLite extension.
 *
 *   anarchon_claim(job, slot, token)            'won' | 'running' | 'done' | 'late' | 'overlap' | 'lost'
 *   anarchon_heartbeat(job, slot, token)        1: lease renewed; 0: token fenced off
 *   anarchon_finish(job, slot, token [,status]) 1: recorded; 0: fenced.  status 'succeeded' | 'failed'
 *   anarchon_fence(job, slot, token)            1, or an error when token does not own the running run
 *   anarchon_run_now(job [, token])             {"outcome", "slot", "token"} as JSON: one manual run
 *   anarchon_check(job, slot)                   'none' | 'running' | 'expired' | 'succeeded' | 'failed' | 'interrupted' | 'replaced'
 *   anarchon_token()                            32 lowercase hex digits from SQLite's CSPRNG
 *   anarchon_config(name [, value])             a setting of this connection, read or set
 *   anarchon_prune([keep_ms])                   deletes runs no claim can ask about any more
 *   anarchon_now()                              the database clock (the VFS's), ms since the epoch
 *   anarchon_loaded(tag)                        internal: is this library loaded here? (extension.c)
 *   anarchon_pause, anarchon_resume, anarchon_paused      pause_functions.c
 *
 * Each function checks its arguments (type and rule), then calls the store
 * through core/store.h.  Errors carry the function's name and say what is
 * allowed; a refused call changes nothing stored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "fork.h"
#include "host.h"
#include "redact.h"
#include "run_now.h"

SQLITE_EXTENSION_INIT3

/* The store's error as the result: its message, then its hint if it gave one. */
static void
result_store_error(sqlite3_context *ctx, const char *fn, const an_store *st)
{
	char		text[AN_ERRTEXTMAX];

	an_err_text(&st->err, text, sizeof(text));
	switch (st->err.code)
	{
		case AN_E_NOMEM:
			sqlite3_result_error_nomem(ctx);
			return;
		case AN_E_BUSY:
			an_sqlite_error(ctx, SQLITE_BUSY, fn, text);
			return;
		case AN_E_CANCELED:
			an_sqlite_error(ctx, SQLITE_INTERRUPT, fn, text);
			return;
		default:
			an_sqlite_error(ctx, SQLITE_ERROR, fn, text[0] ? text : "the store failed");
	}
}

/* A text argument that must pass `rule`; its type is checked first. */
static const char *
arg_text(sqlite3_context *ctx, const char *fn, sqlite3_value *v, const char *what,
		 an_error (*rule) (const char *, size_t, an_err *))
{
	an_err		err;
	const char *s;

	if (sqlite3_value_type(v) != SQLITE_TEXT)
	{
		an_errf(&err, "%s must be text, got %s", what,
				 an_sqlite_type_name(sqlite3_value_type(v)));
		an_sqlite_fail(ctx, SQLITE_MISMATCH, fn, &err);
		return NULL;
	}
	s = (const char *) sqlite3_value_text(v);
	if (s == NULL)
	{
		sqlite3_result_error_nomem(ctx);
		return NULL;
	}
	/* An embedded NUL would hide the rest of the value from the rule. */
	if (rule(s, (size_t) sqlite3_value_bytes(v), &err) != AN_OK ||
		strlen(s) != (size_t) sqlite3_value_bytes(v))
	{
		if (strlen(s) != (size_t) sqlite3_value_bytes(v))
			an_errf(&err, "%s contains a NUL byte", what);
		an_sqlite_fail(ctx, SQLITE_ERROR, fn, &err);
		return NULL;
	}
	return s;
}

/*
 * Read (job, slot[, token]) from argv into rq and find the store.  Returns the
 * store, or NULL after setting the error result.
 */
static an_store *
prepare_call(sqlite3_context *ctx, const char *fn, sqlite3_value **argv, int with_token,
			 an_request *rq)
{
	an_sqlite_conn *conn = sqlite3_user_data(ctx);
	an_err		err;
	an_store   *st;

	if (!an_sqlite_top_level(ctx, fn))
		return NULL;
	memset(rq, 0, sizeof(*rq));
	rq->settings = &conn->settings;
	if ((rq->job = arg_text(ctx, fn, argv[0], "job", an_validate_job)) == NULL)
		return NULL;
	if (!an_sqlite_arg_slot(ctx, fn, argv[1], &rq->slot))
		return NULL;
	if (with_token &&
		(rq->token = arg_text(ctx, fn, argv[2], "token", an_validate_token)) == NULL)
		return NULL;
	if ((st = an_sqlite_store(conn, &err)) == NULL)
	{
		an_sqlite_fail(ctx, SQLITE_ERROR, fn, &err);
		return NULL;
	}
	return st;
}

static void
fn_claim(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	an_request	rq;
	an_claim_result res;
	an_store   *st;
	an_err		err;

	(void) argc;
	if ((st = prepare_call(ctx, "anarchon_claim", argv, 1, &rq)) == NULL)
		return;
	/* A manual slot is claimed by anarchon_run_now only (core/run_now.h). */
	if (an_validate_slot(rq.slot, &err) != AN_OK)
	{
		an_sqlite_fail(ctx, SQLITE_ERROR, "anarchon_claim", &err);
		return;
	}
	if ((st->m->validate && st->m->validate(st, rq.settings) != AN_OK) ||
		an_store_claim(st, &rq, &res) != AN_OK)
	{
		result_store_error(ctx, "anarchon_claim", st);
		return;
	}
	sqlite3_result_text(ctx, an_outcome_name(res.outcome), -1, SQLITE_STATIC);
}

static void
fn_heartbeat(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	an_request	rq;
	an_store   *st;
	int			owned = 0;

	(void) argc;
	if ((st = prepare_call(ctx, "anarchon_heartbeat", argv, 1, &rq)) == NULL)
		return;
	if (an_store_heartbeat(st, &rq, &owned) != AN_OK)
	{
		result_store_error(ctx, "anarchon_heartbeat", st);
		return;
	}
	sqlite3_result_int(ctx, owned);
}

/*
 * The fencing token checked where the work lands: called inside the caller's
 * write transaction, true, or an error that says the run is not ours.  With
 * the local store the caller then holds the database's write lock, so no
 * takeover can be decided before its writes commit or roll back.
 */
static void
fn_fence(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	static const char fn[] = "anarchon_fence";
	an_request	rq;
	an_store   *st;
	int			owned = 0;

	(void) argc;
	if ((st = prepare_call(ctx, fn, argv, 1, &rq)) == NULL)
		return;
	/*
	 * In autocommit the call's own statement commits as it ends: it would
	 * protect no write that follows.  The same rule as PostgreSQL's; refused
	 * before the store is asked, so it counts as a usage error, not a store's.
	 */
	if (sqlite3_get_autocommit(sqlite3_context_db_handle(ctx)))
	{
		an_sqlite_error(ctx, SQLITE_ERROR, fn,
						"must be called inside the transaction whose writes it fences."
						" In autocommit it commits on its own as it ends and protects no write that follows."
						" BEGIN IMMEDIATE; SELECT anarchon_fence(...); your writes; COMMIT.");
		return;
	}
	if (an_store_fence(st, &rq, &owned) != AN_OK)
		result_store_error(ctx, fn, st);
	else if (!owned)
		an_sqlite_error(ctx, SQLITE_CONSTRAINT, fn,
						"the token does not own the running run."
						" Its lease ran out and another caller took it over, or it is finished, interrupted or replaced."
						" Roll back this transaction: its writes belong to a run that is no longer this caller's.");
	else
		sqlite3_result_int(ctx, 1);
}

static void
fn_finish(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	an_request	rq;
	an_store   *st;
	an_run_state status = AN_RUN_SUCCEEDED;
	int			owned = 0;

	if (argc == 4)
	{
		/* Type first: reading the text of a number or blob converts it. */
		int			type = sqlite3_value_type(argv[3]);
		const char *s = (const char *) sqlite3_value_text(argv[3]);

		if (type != SQLITE_TEXT || s == NULL ||
			(strcmp(s, "succeeded") != 0 && strcmp(s, "failed") != 0))
		{
			an_sqlite_error(ctx, SQLITE_ERROR, "anarchon_finish",
						  "status must be 'succeeded' or 'failed'");
			return;
		}
		status = an_run_state_parse(s);
	}
	if ((st = prepare_call(ctx, "anarchon_finish", argv, 1, &rq)) == NULL)
		return;
	if (an_store_finish(st, &rq, status, &owned) != AN_OK)
	{
		result_store_error(ctx, "anarchon_finish", st);
		return;
	}
	sqlite3_result_int(ctx, owned);
}

static void
fn_check(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	an_request	rq;
	an_check_result res;
	an_store   *st;

	(void) argc;
	if ((st = prepare_call(ctx, "anarchon_check", argv, 0, &rq)) == NULL)
		return;
	if (an_store_check(st, &rq, &res) != AN_OK)
	{
		result_store_error(ctx, "anarchon_check", st);
		return;
	}
	sqlite3_result_text(ctx, an_check_state_name(res.state), -1, SQLITE_STATIC);
}

/*
 * The process that last drew a token.  SQLite's generator keeps its state in
 * the process, and a forked child inherits it: children would draw the same
 * tokens (SQLite reseeds by itself only when a child opens a database file,
 * not for an in-memory database or a connection the child inherited).  So a
 * process draws its first token from a fresh seed, the VFS's randomness.
 */
static _Atomic an_fork_mark token_proc;

static void
new_token(char hex[AN_TOKEN_HEX + 1])
{
	unsigned char raw[16];
	an_fork_mark proc = an_fork_now();

	if (token_proc != proc)
	{
		sqlite3_randomness(0, NULL);
		token_proc = proc;
	}
	sqlite3_randomness(sizeof(raw), raw);
	an_token_hex(raw, hex);
}

static void
fn_token(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	char		hex[AN_TOKEN_HEX + 1];

	(void) argc;
	(void) argv;
	new_token(hex);
	sqlite3_result_text(ctx, hex, AN_TOKEN_HEX, SQLITE_TRANSIENT);
}

/*
 * anarchon_run_now(job [, token]): one manual run of job, exactly once across
 * the fleet (core/run_now.h).  One value, since a scalar function has one:
 * {"outcome": ..., "slot": ..., "token": ...} as JSON text.  'won' means run
 * the job now, then heartbeat and finish (job, slot, token).
 */
static void
fn_run_now(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	an_sqlite_conn *conn = sqlite3_user_data(ctx);
	an_request	rq;
	an_claim_result res;
	an_store   *st;
	char		hex[AN_TOKEN_HEX + 1];
	an_err		err;
	char	   *json;

	if (!an_sqlite_top_level(ctx, "anarchon_run_now"))
		return;
	memset(&rq, 0, sizeof(rq));
	rq.settings = &conn->settings;
	rq.kind = AN_CLAIM_MANUAL;
	if ((rq.job = arg_text(ctx, "anarchon_run_now", argv[0], "job", an_validate_job)) == NULL)
		return;
	if (argc > 1)
	{
		if ((rq.token = arg_text(ctx, "anarchon_run_now", argv[1], "token", an_validate_token)) == NULL)
			return;
	}
	else
	{
		new_token(hex);
		rq.token = hex;
	}
	if ((st = an_sqlite_store(conn, &err)) == NULL)
	{
		an_sqlite_fail(ctx, SQLITE_ERROR, "anarchon_run_now", &err);
		return;
	}
	if ((st->m->validate && st->m->validate(st, rq.settings) != AN_OK) ||
		an_store_claim(st, &rq, &res) != AN_OK)
	{
		result_store_error(ctx, "anarchon_run_now", st);
		return;
	}
	json = sqlite3_mprintf("{\"outcome\":\"%s\",\"slot\":%lld,\"token\":\"%s\"}",
						   an_outcome_name(res.outcome), (long long) res.slot, rq.token);
	if (json == NULL)
		sqlite3_result_error_nomem(ctx);
	else
		sqlite3_result_text(ctx, json, -1, sqlite3_free);
}

static void
fn_config(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	an_sqlite_conn *conn = sqlite3_user_data(ctx);
	int			name_type = sqlite3_value_type(argv[0]);
	const char *name = (const char *) sqlite3_value_text(argv[0]);
	an_err		err;
	char		out[64];

	if (!an_sqlite_top_level(ctx, "anarchon_config"))
		return;
	if (name_type != SQLITE_TEXT || name == NULL)
	{
		an_sqlite_error(ctx, SQLITE_ERROR, "anarchon_config",
					  "the setting name must be text: lease_ms, max_late_ms, attempts, overlap, busy_timeout_ms, store or stats");
		return;
	}
	if (strcmp(name, "stats") == 0)
	{
		if (argc == 2)
		{
			const char *value = (const char *) sqlite3_value_text(argv[1]);

			if (sqlite3_value_type(argv[1]) != SQLITE_TEXT || value == NULL ||
				(strcmp(value, "on") != 0 && strcmp(value, "off") != 0))
			{
				an_sqlite_error(ctx, SQLITE_ERROR, "anarchon_config",
								"stats must be 'on' (count this connection's store calls in anarchon_stats) or 'off'");
				return;
			}
			conn->no_stats = strcmp(value, "off") == 0;
			an_sqlite_stats_attach(conn);
		}
		sqlite3_result_text(ctx, conn->no_stats ? "off" : "on", -1, SQLITE_STATIC);
		return;
	}
	if (strcmp(name, "store") == 0)
	{
		if (argc == 2)
		{
			int			url_type = sqlite3_value_type(argv[1]);
			const char *url = (const char *) sqlite3_value_text(argv[1]);

			if (url_type != SQLITE_TEXT || url == NULL)
			{
				an_sqlite_error(ctx, SQLITE_ERROR, "anarchon_config",
							  "store must be text: 'local' or a store URL (redis://, amqp://, nats://)");
				return;
			}
			if (an_sqlite_store_switch(conn, url, &err) != AN_OK)
			{
				char		text[AN_ERRTEXTMAX];
				size_t		len;


				an_err_text(&err, text, sizeof(text));
				len = strlen(text);
				snprintf(text + len, sizeof(text) - len,
						 "%s The store stays set to this URL: every call fails until it can be opened, or until anarchon_config('store', ...) names another.",
						 len > 0 && text[len - 1] == '.' ? "" : ".");
				an_sqlite_error(ctx, SQLITE_ERROR, "anarchon_config", text);
				return;
			}
		}
		{
			char	   *shown = an_redact_url_dup(conn->store_url ? conn->store_url : "local");

			if (shown == NULL)
				sqlite3_result_error_nomem(ctx);
			else
				sqlite3_result_text(ctx, shown, -1, free);
		}
		return;
	}
	if (argc == 2)
	{
		an_settings next = conn->settings;
		int			type = sqlite3_value_type(argv[1]);
		const char *value = (const char *) sqlite3_value_text(argv[1]);
		char		whole[32];
		int			ok_type = type == SQLITE_INTEGER || type == SQLITE_TEXT;

		/*
		 * A whole number that arrives as a real (JavaScript drivers bind every
		 * number so) is the same number, as it is for a slot; 1.5 is not.
		 */
		if (type == SQLITE_FLOAT)
		{
			double		d = sqlite3_value_double(argv[1]);

			if (d > -9.2e18 && d < 9.2e18 && d == (double) (long long) d)
			{
				snprintf(whole, sizeof(whole), "%lld", (long long) d);
				value = whole;
				ok_type = 1;
			}
		}
		if (!ok_type || an_settings_set(&next, name, value, &err) != AN_OK)
		{
			if (!ok_type)
				an_settings_set(&next, name, "", &err);
			an_sqlite_fail(ctx, SQLITE_ERROR, "anarchon_config", &err);
			return;
		}
		/* Both values are known here: a window past max_late_ms is refused when set. */
		if (an_settings_check_catch_up(&next, &err) != AN_OK)
		{
			an_sqlite_fail(ctx, SQLITE_ERROR, "anarchon_config", &err);
			return;
		}
		conn->settings = next;
	}
	if (an_settings_get(&conn->settings, name, out, sizeof(out), &err) != AN_OK)
	{
		an_sqlite_fail(ctx, SQLITE_ERROR, "anarchon_config", &err);
		return;
	}
	sqlite3_result_text(ctx, out, -1, SQLITE_TRANSIENT);
}

/*
 * anarchon_prune([keep_ms]): keep_ms, an integer, at least the retention the
 * settings need (core says why).  INT64_MAX keeps everything: the cutoff is
 * computed without overflow and no slot is older than it.
 */
static void
fn_prune(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	an_sqlite_conn *conn = sqlite3_user_data(ctx);
	int64_t		keep = an_settings_retention_ms(&conn->settings);
	int64_t		deleted = 0;
	an_err		err;
	an_store   *st;
	const an_store_admin *admin;

	if (!an_sqlite_top_level(ctx, "anarchon_prune"))
		return;
	/* NULL is the default retention, as in PostgreSQL (keep_ms DEFAULT NULL). */
	if (argc == 1 && sqlite3_value_type(argv[0]) != SQLITE_NULL)
	{
		if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER)
		{
			an_errf(&err, "keep_ms must be an integer number of milliseconds, got %s",
					 an_sqlite_type_name(sqlite3_value_type(argv[0])));
			an_sqlite_fail(ctx, SQLITE_MISMATCH, "anarchon_prune", &err);
			return;
		}
		keep = sqlite3_value_int64(argv[0]);
		if (an_settings_check_keep(&conn->settings, keep, &err) != AN_OK)
		{
			an_sqlite_fail(ctx, SQLITE_ERROR, "anarchon_prune", &err);
			return;
		}
	}
	if ((st = an_sqlite_store(conn, &err)) == NULL)
	{
		an_sqlite_fail(ctx, SQLITE_ERROR, "anarchon_prune", &err);
		return;
	}
	an_store_clear(st);
	if ((admin = an_store_admin_for(st, AN_CAP_PRUNE)) == NULL ||
		admin->prune(st, an_retention_cutoff(an_sqlite_now(conn->db), keep), &deleted) != AN_OK)
	{
		result_store_error(ctx, "anarchon_prune", st);
		return;
	}
	sqlite3_result_int64(ctx, deleted);
}

static void
fn_now(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void) argc;
	(void) argv;
	sqlite3_result_int64(ctx, an_sqlite_now(sqlite3_context_db_handle(ctx)));
}

/*
 * anarchon_loaded(tag): 1 when tag, passed as a pointer of type
 * AN_SQLITE_BUILD_TAG_TYPE, is this library's build tag; else 0.  Internal:
 * a second load on the connection asks it (extension.c).  From SQL the
 * argument can only be a plain value, never such a pointer: it answers 0.
 */
static const char build_tag = 0;

const void *
an_sqlite_build_tag(void)
{
	return &build_tag;
}

static void
fn_loaded(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void) argc;
	if (!an_sqlite_top_level(ctx, "anarchon_loaded"))
		return;
	sqlite3_result_int(ctx, sqlite3_value_pointer(argv[0], AN_SQLITE_BUILD_TAG_TYPE) == &build_tag);
}

/* For the functions of pause_functions.c: the store's error, and the job argument. */
void
an_sqlite_result_store_error(sqlite3_context *ctx, const char *fn, const an_store *st)
{
	result_store_error(ctx, fn, st);
}

const char *
an_sqlite_arg_job(sqlite3_context *ctx, const char *fn, sqlite3_value *v)
{
	return arg_text(ctx, fn, v, "job", an_validate_job);
}

typedef struct fn_entry
{
	const char *name;
	int			nargs;
	int			flags;
	void		(*fn) (sqlite3_context *, int, sqlite3_value **);
} fn_entry;

/*
 * Functions with effects may not hide in triggers or views of an attacker;
 * each also checks at every call that it was called directly (top_level.c),
 * which holds where SQLite's flag does not.
 */
#define EFFECTS (SQLITE_UTF8 | SQLITE_DIRECTONLY)

static const fn_entry functions[] = {
	{"anarchon_claim", 3, EFFECTS, fn_claim},
	{"anarchon_run_now", 1, EFFECTS, fn_run_now},
	{"anarchon_run_now", 2, EFFECTS, fn_run_now},
	{"anarchon_heartbeat", 3, EFFECTS, fn_heartbeat},
	{"anarchon_finish", 3, EFFECTS, fn_finish},
	{"anarchon_finish", 4, EFFECTS, fn_finish},
	{"anarchon_fence", 3, EFFECTS, fn_fence},
	{"anarchon_check", 2, EFFECTS, fn_check},
	{"anarchon_token", 0, SQLITE_UTF8, fn_token},
	{"anarchon_now", 0, SQLITE_UTF8, fn_now},
	{"anarchon_config", 1, EFFECTS, fn_config},
	{"anarchon_config", 2, EFFECTS, fn_config},
	{"anarchon_prune", 0, EFFECTS, fn_prune},
	{"anarchon_prune", 1, EFFECTS, fn_prune},
	{"anarchon_loaded", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY, fn_loaded},
	{"anarchon_pause", 1, EFFECTS, an_sqlite_fn_pause},
	{"anarchon_pause", 2, EFFECTS, an_sqlite_fn_pause},
	{"anarchon_resume", 1, EFFECTS, an_sqlite_fn_resume},
	{"anarchon_paused", 1, EFFECTS, an_sqlite_fn_paused},
};

/* The last function (or module) sharing conn frees it. */
void
an_sqlite_conn_release(void *p)
{
	an_sqlite_conn *conn = p;

	if (--conn->refs > 0)
		return;
	an_sqlite_store_close(conn);
	sqlite3_free(conn->store_url);
	sqlite3_free(conn);
}

int
an_sqlite_register_functions(sqlite3 *db, an_sqlite_conn *conn)
{
	for (size_t i = 0; i < sizeof(functions) / sizeof(functions[0]); i++)
	{
		int			rc;

		conn->refs++;
		rc = sqlite3_create_function_v2(db, functions[i].name, functions[i].nargs,
										functions[i].flags, conn, functions[i].fn,
										NULL, NULL, an_sqlite_conn_release);
		/* On failure SQLite has already called an_sqlite_conn_release for this one. */
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}
