/*
 * host.h — the SQLite host: what one database connection keeps for anarchon.
 *
 * Every SQL function registered by sqlite3_anarchon_init shares one
 * an_sqlite_conn per connection (its user data): the settings of
 * anarchon_config, and the open store.  The functions talk to the store only
 * through core/store.h, so a remote store replaces the local one without any
 * change here.
 */
#ifndef ANARCHON_SQLITE_HOST_H
#define ANARCHON_SQLITE_HOST_H

#include <sqlite3ext.h>

#include "store.h"

typedef struct an_sqlite_conn
{
	sqlite3    *db;              /* the caller's connection */
	an_settings settings;
	an_host		host;
	an_store   *store;           /* the open store, or NULL; sqlite3_malloc'd */
	char	   *store_url;       /* "local" or the URL given; sqlite3_malloc'd */
	int			refs;            /* registered functions sharing this */
	int			no_stats;        /* anarchon_config('stats', 'off') */
} an_sqlite_conn;

/* pause_functions.c: anarchon_pause, anarchon_resume, anarchon_paused. */
void		an_sqlite_fn_pause(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void		an_sqlite_fn_resume(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void		an_sqlite_fn_paused(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* What functions.c lends them: its error result and its job argument. */
void		an_sqlite_result_store_error(sqlite3_context *ctx, const char *fn, const an_store *st);
const char *an_sqlite_arg_job(sqlite3_context *ctx, const char *fn, sqlite3_value *v);

/* The local store (anarchon_runs in this database). */
extern const an_store_methods an_sqlite_local_methods;

/* The host's clock: the VFS's current time, ms since the Unix epoch. */
int64_t		an_sqlite_now(sqlite3 *db);
int64_t		an_sqlite_vfs_now(sqlite3_vfs *vfs);
sqlite3_vfs *an_sqlite_vfs(sqlite3 *db);   /* the VFS of db's main database */

/*
 * The store for conn, opened on first use (the local one unless
 * anarchon_config chose another); NULL with a message in err on failure.
 */
an_store   *an_sqlite_store(an_sqlite_conn *conn, an_err *err);

/*
 * Make url ("local" or a network URL) the connection's store and open it.
 * The old store is closed first and the URL is kept even when the open
 * fails: every later call then fails (and tries to open it again) until the
 * store answers or is set again; it never falls back to another store.  On
 * error writes a message to err and returns the store's error code.
 */
int			an_sqlite_store_switch(an_sqlite_conn *conn, const char *url,
								   an_err *err);

/* Close whatever store is open. */
void		an_sqlite_store_close(an_sqlite_conn *conn);

/*
 * stats.c: the process's counters.  attach gives conn's open store its row
 * (none with 'stats' off); started notes when the process began counting.
 */
void		an_sqlite_stats_attach(an_sqlite_conn *conn);
/* Count a failure to open conn's store (code) in that store's row. */
void		an_sqlite_stats_failed(an_sqlite_conn *conn, an_error code);
void		an_sqlite_stats_started(int64_t now_ms);
int			an_sqlite_stats_register(sqlite3 *db, an_sqlite_conn *conn);
/* claim_many.c: the table-valued function anarchon_claim_many. */
int			an_sqlite_claim_many_register(sqlite3 *db, an_sqlite_conn *conn);

/*
 * claim_conn.c: open *out on the database of caller's main, with caller's
 * VFS and URI parameters (SQLITE_OK, or an error code with a message in err).
 */
int			an_sqlite_open_twin(sqlite3 *caller, sqlite3 **out, an_err *err);
/*
 * May fn write through caller's database?  1, or 0 with the reason in err:
 * caller opened it read-only, is set to PRAGMA query_only, or has no locking.
 */
int			an_sqlite_may_write(sqlite3 *caller, const char *fn, an_err *err);

/*
 * functions.c: the tag that anarchon_loaded recognises as its own library's
 * (extension.c), and its pointer type for sqlite3_bind_pointer.
 */
#define AN_SQLITE_BUILD_TAG_TYPE "anarchon-build"
const void *an_sqlite_build_tag(void);

/*
 * top_level.c: is this call of fn direct, from the application's own SQL
 * rather than from a schema object of the database file?  1, or 0 with the
 * error set on ctx.  Every function with a side effect asks it first.
 */
int			an_sqlite_top_level(sqlite3_context *ctx, const char *fn);

/* Register the SQL functions (functions.c). */
int			an_sqlite_register_functions(sqlite3 *db, an_sqlite_conn *conn);
/*
 * Drop one reference to conn (a destructor SQLite calls for each function
 * registered with it; schedule.c holds one too); the last one frees it.
 */
void		an_sqlite_conn_release(void *conn);

#endif							/* ANARCHON_SQLITE_HOST_H */
