/*
 * pause_functions.c — pausing a job from SQLite, on the connection's store
 * (the local one, or the one anarchon_config('store', …) chose):
 *
 *   anarchon_pause(job [, until])  1.  until: ms since the epoch, ahead of
 *                                  anarchon_now(); NULL or absent: until
 *                                  anarchon_resume.  Claims of the job then
 *                                  answer 'paused'.
 *   anarchon_resume(job)           1 when the job was paused, 0 when it was
 *                                  not (not an error).
 *   anarchon_paused(job)           NULL when the job is not paused; else when
 *                                  the pause ends, in ms, with
 *                                  9223372036854775807 for "until resumed".
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "host.h"
#include "pause.h"

SQLITE_EXTENSION_INIT3

/* The job of argv[0] into rq, and the store; NULL after setting the error result. */
static an_store *
pause_call(sqlite3_context *ctx, const char *fn, sqlite3_value **argv, an_request *rq)
{
	an_sqlite_conn *conn = sqlite3_user_data(ctx);
	an_err		err;
	an_store   *st;

	if (!an_sqlite_top_level(ctx, fn))
		return NULL;
	memset(rq, 0, sizeof(*rq));
	rq->settings = &conn->settings;
	if ((rq->job = an_sqlite_arg_job(ctx, fn, argv[0])) == NULL)
		return NULL;
	if ((st = an_sqlite_store(conn, &err)) == NULL)
	{
		an_sqlite_fail(ctx, SQLITE_ERROR, fn, &err);
		return NULL;
	}
	return st;
}

void
an_sqlite_fn_pause(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	static const char fn[] = "anarchon_pause";
	an_request	rq;
	an_store   *st;
	int64_t		until = 0;
	an_err		err;

	if ((st = pause_call(ctx, fn, argv, &rq)) == NULL)
		return;
	if (argc == 2 && sqlite3_value_type(argv[1]) != SQLITE_NULL)
	{
		if (!an_sqlite_arg_instant(ctx, fn, argv[1], "until", &until))
			return;
		if (an_pause_check_until(until, an_sqlite_now(sqlite3_context_db_handle(ctx)),
								 &err) != AN_OK)
		{
			an_sqlite_fail(ctx, SQLITE_ERROR, fn, &err);
			return;
		}
	}
	if (an_pause_set(st, &rq, until) != AN_OK)
	{
		an_sqlite_result_store_error(ctx, fn, st);
		return;
	}
	sqlite3_result_int(ctx, 1);
}

/* resume and paused: the store's answer as the result. */
static void
ask(sqlite3_context *ctx, const char *fn, sqlite3_value **argv, int resume)
{
	an_request	rq;
	an_store   *st;
	int64_t		until = 0;
	int			was_paused = 0;

	if ((st = pause_call(ctx, fn, argv, &rq)) == NULL)
		return;
	if ((resume ? an_pause_end(st, &rq, &was_paused) : an_pause_read(st, &rq, &until)) != AN_OK)
		an_sqlite_result_store_error(ctx, fn, st);
	else if (resume)
		sqlite3_result_int(ctx, was_paused);
	else if (until == 0)
		sqlite3_result_null(ctx);
	else
		sqlite3_result_int64(ctx, until);
}

void
an_sqlite_fn_resume(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void) argc;
	ask(ctx, "anarchon_resume", argv, 1);
}

void
an_sqlite_fn_paused(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void) argc;
	ask(ctx, "anarchon_paused", argv, 0);
}
