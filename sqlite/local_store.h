/*
 * local_store.h — what the SQLite local store lends to its pause and recall
 * methods (local_pause.c, local_recall.c): the table of pauses, a call on the store's connection
 * with its checks and write lock, and statements kept with the store's own.
 */
#ifndef ANARCHON_SQLITE_LOCAL_STORE_H
#define ANARCHON_SQLITE_LOCAL_STORE_H

#include "host.h"

/*
 * Every pause of a job, kept after it ends so that anarchon_missed can skip
 * the slots that fell inside it: [since, until), until NULL while it lasts
 * until resumed.  Created with anarchon_runs, in the same transaction.
 */
#define AN_SQLITE_PAUSES_SCHEMA \
	"CREATE TABLE IF NOT EXISTS anarchon_pauses (" \
	" job TEXT NOT NULL," \
	" since INTEGER NOT NULL," \
	" until INTEGER," \
	" PRIMARY KEY (job, since)" \
	") WITHOUT ROWID;"

/* The statements of local_pause.c, kept like the store's own. */
enum
{
	AN_LOCAL_PAUSED, AN_LOCAL_PAUSES, AN_LOCAL_EXTEND, AN_LOCAL_START, AN_LOCAL_END,
	AN_LOCAL_RECALL,
	AN_LOCAL_EXTRA
};

/*
 * Run body as a method of the store runs: fn names the SQL function (NULL
 * for a read that may come before any write, which creates no table);
 * with write, inside BEGIN IMMEDIATE on the store's connection, committed
 * when body returns AN_OK and rolled back otherwise.
 */
int			an_sqlite_local_call(an_store *st, const char *fn, const an_settings *s, int write,
								 int (*body) (an_store *st, void *arg), void *arg);

/*
 * Statement id (sql) on the store's connection, reset, inside a call.
 * *out NULL with AN_OK when its table does not exist yet.
 */
int			an_sqlite_local_stmt(an_store *st, int id, const char *sql, sqlite3_stmt **out);

/* The store connection's last error, recorded on st while doing what. */
int			an_sqlite_local_fail(an_store *st, const char *what);

/* The store's clock: its database's VFS. */
int64_t		an_sqlite_local_now(an_store *st);

/* recall (core/store.h): which slots of a job anarchon_runs holds a run for (local_recall.c). */
int			an_sqlite_local_recall(an_store *st, const an_request *rq, const int64_t *slots, size_t n,
								   unsigned char *has_run);

/*
 * The pause of job at now (the store's clock): *until its end (AN_PAUSE_OPEN
 * until resumed), 0 when not paused.  One indexed SELECT with a kept
 * statement; the claim asks it inside its BEGIN IMMEDIATE.
 */
int			an_sqlite_local_paused_at(an_store *st, const char *job, int64_t now, int64_t *until);

/* The pause methods (core/store.h, version 5). */
int			an_sqlite_local_pause(an_store *st, const an_request *rq, int64_t until);
int			an_sqlite_local_resume(an_store *st, const an_request *rq, int *was_paused);
int			an_sqlite_local_paused(an_store *st, const an_request *rq, int64_t *until);
int			an_sqlite_local_pauses(an_store *st, const an_request *rq, int64_t from, int64_t to,
								   an_pause_span *spans, size_t max, size_t *n);

#endif							/* ANARCHON_SQLITE_LOCAL_STORE_H */
