/*
 * prefork.c — a pre-forking server on SQLite: the parent loads anarchon and
 * claims, then forks workers that claim on the connection they inherited.
 *
 *   sqlite_prefork DB EXTENSION WORKERS SLOTS FIRST
 *
 * The parent opens DB, loads the extension and claims one slot (so that its
 * claim connection is open when it forks), then forks WORKERS children.
 * Each claims the SLOTS slots FIRST, FIRST + 1000, ... with a fresh token
 * each, and prints "SLOT OUTCOME" per claim.  The suite counts the winners:
 * exactly one per slot.  A child must never use the parent's claim
 * connection (SQLite forbids carrying a connection across fork); the
 * extension opens one of its own in each child.  The parent claims again
 * after its children exited, on its own claim connection, which the
 * children must have left alone: "parent SLOT OUTCOME".  Every open of a
 * database goes through a probe VFS (probe_vfs.h): each worker ends with
 * "worker opened N", the claim connections it opened itself (one).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe_vfs.h"

static sqlite3 *db;

static void
fail(const char *what)
{
	fprintf(stderr, "prefork[%d]: %s: %s\n", (int) getpid(), what, sqlite3_errmsg(db));
	exit(2);
}

/* Claim slot with a fresh token: the outcome, or exit on an error. */
static const char *
claim(sqlite3_stmt *s, long long slot)
{
	static char out[32];

	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, slot);
	if (sqlite3_step(s) != SQLITE_ROW)
		fail("claim");
	snprintf(out, sizeof(out), "%s", (const char *) sqlite3_column_text(s, 0));
	sqlite3_reset(s);
	return out;
}

static sqlite3_stmt *
prepare_claim(void)
{
	sqlite3_stmt *s;

	if (sqlite3_prepare_v2(db, "SELECT anarchon_claim('prefork', ?1, anarchon_token())",
						   -1, &s, NULL) != SQLITE_OK)
		fail("prepare");
	return s;
}

int
main(int argc, char **argv)
{
	char	   *err = NULL;
	int			workers;
	int			slots;
	long long	first;
	sqlite3_stmt *s;
	int			bad = 0;

	/*
	 * One write per line: the workers share the output file.  Set before any
	 * output (setvbuf after a stream was used is undefined, and glibc then
	 * kept full buffering: lines of two workers came out cut into each other).
	 */
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (argc != 6)
	{
		fprintf(stderr, "usage: sqlite_prefork DB EXTENSION WORKERS SLOTS FIRST\n");
		return 2;
	}
	workers = atoi(argv[3]);
	slots = atoi(argv[4]);
	first = atoll(argv[5]);
	probe_vfs_register(1);
	if (sqlite3_open(argv[1], &db) != SQLITE_OK)
		fail("open");
	sqlite3_enable_load_extension(db, 1);
	if (sqlite3_load_extension(db, argv[2], NULL, &err) != SQLITE_OK)
	{
		fprintf(stderr, "prefork: load: %s\n", err);
		return 2;
	}
	if (sqlite3_exec(db, "SELECT anarchon_config('overlap', 'allow'),"
					 " anarchon_config('busy_timeout_ms', 120000)", NULL, NULL, &err) != SQLITE_OK)
		fail("config");
	s = prepare_claim();
	printf("parent %lld %s\n", first - 1000, claim(s, first - 1000));
	sqlite3_finalize(s);
	fflush(stdout);

	for (int w = 0; w < workers; w++)
	{
		pid_t		pid = fork();

		if (pid < 0)
		{
			perror("fork");
			return 2;
		}
		if (pid == 0)
		{
			probe_main_opens = 0;
			s = prepare_claim();
			for (int i = 0; i < slots; i++)
			{
				long long	slot = first + 1000LL * ((i + w * 7) % slots);

				printf("%lld %s\n", slot, claim(s, slot));
			}
			printf("worker opened %d\n", probe_main_opens);
			fflush(stdout);
			/* Like a worker that ends: without closing what the parent opened. */
			_exit(0);
		}
	}
	for (int w = 0; w < workers; w++)
	{
		int			status;

		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			bad = 1;
	}
	s = prepare_claim();
	printf("parent %lld %s\n", first + 1000LL * slots, claim(s, first + 1000LL * slots));
	sqlite3_finalize(s);
	if (sqlite3_close(db) != SQLITE_OK)
		fail("close");
	return bad;
}
