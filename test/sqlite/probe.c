/*
 * probe.c — how the SQLite extension treats the connection that loads it.
 *
 *   sqlite_probe DIR EXTENSION
 *
 * Prints one line per fact, compared with test/sqlite/expected/probe.out:
 *
 *   vfs      a connection opened with a VFS of this program's ("probe", a
 *            wrapper of the default that counts opens of main databases and
 *            records each open's "tag" URI parameter) and a URI parameter:
 *            the claim connection is opened through the same VFS, with the
 *            same parameters.
 *   readonly SQLITE_OPEN_READONLY, mode=ro and PRAGMA query_only: claim,
 *            heartbeat, finish and prune are refused, check works, and
 *            nothing is written.
 *   reload   the extension loaded a second time on a connection: its
 *            settings and its claim connection stay (no new open), the
 *            functions keep working, and closing frees everything (the
 *            suite runs this under valgrind).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_vfs.h"

static const char *ext;

static sqlite3 *
open_db(const char *uri, int flags)
{
	sqlite3    *db = NULL;
	char	   *err = NULL;

	if (sqlite3_open_v2(uri, &db, flags | SQLITE_OPEN_URI, NULL) != SQLITE_OK)
	{
		fprintf(stderr, "probe: open %s: %s\n", uri, sqlite3_errmsg(db));
		exit(2);
	}
	sqlite3_enable_load_extension(db, 1);
	if (sqlite3_load_extension(db, ext, NULL, &err) != SQLITE_OK)
	{
		fprintf(stderr, "probe: load: %s\n", err);
		exit(2);
	}
	return db;
}

/* The first column of the first row of sql, or "error: <message>". */
static const char *
one(sqlite3 *db, const char *sql)
{
	static char out[1024];
	sqlite3_stmt *s;
	int			rc;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
	{
		snprintf(out, sizeof(out), "error: %s", sqlite3_errmsg(db));
		return out;
	}
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		snprintf(out, sizeof(out), "%s",
				 sqlite3_column_text(s, 0) ? (const char *) sqlite3_column_text(s, 0) : "NULL");
	else if (rc == SQLITE_DONE)
		snprintf(out, sizeof(out), "(no row)");
	else
		snprintf(out, sizeof(out), "error: %s", sqlite3_errmsg(db));
	sqlite3_finalize(s);
	return out;
}

static void
show(const char *what, sqlite3 *db, const char *sql)
{
	const char *r = one(db, sql);

	/* The refusals are long: their start says enough here. */
	printf("%s: %.*s\n", what, (int) (strncmp(r, "error: ", 7) == 0 ? 110 : 1000), r);
}

#define SLOT "4102444800000"

static void
probe_vfs_and_uri(const char *dir)
{
	char		uri[1024];
	sqlite3    *db;

	snprintf(uri, sizeof(uri), "file:%s/vfs.db?vfs=probe&tag=t42", dir);
	db = open_db(uri, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
	printf("vfs: opens of main databases before the first claim: %d (%s)\n", probe_main_opens, probe_tags);
	show("vfs: claim", db, "SELECT anarchon_claim('v', " SLOT ", 'tok-1')");
	printf("vfs: opens of main databases after it: %d (%s)\n", probe_main_opens, probe_tags);
	sqlite3_close(db);
}

static void
probe_read_only(const char *dir)
{
	char		path[1024];
	char		uri[1100];
	sqlite3    *rw;
	sqlite3    *ro;
	static const char *writers[][2] = {
		{"  claim", "SELECT anarchon_claim('r', " SLOT ", 'tok-2')"},
		{"  heartbeat", "SELECT anarchon_heartbeat('r', " SLOT ", 'tok-1')"},
		{"  finish", "SELECT anarchon_finish('r', " SLOT ", 'tok-1')"},
		{"  prune", "SELECT anarchon_prune()"},
	};
	static const char *ways[] = {"SQLITE_OPEN_READONLY", "mode=ro", "PRAGMA query_only"};

	snprintf(path, sizeof(path), "%s/ro.db", dir);
	rw = open_db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
	show("readonly: claim on a connection that may write", rw,
		 "SELECT anarchon_claim('r', " SLOT ", 'tok-1')");

	for (int w = 0; w < 3; w++)
	{
		if (w == 0)
			ro = open_db(path, SQLITE_OPEN_READONLY);
		else if (w == 1)
		{
			snprintf(uri, sizeof(uri), "file:%s?mode=ro", path);
			ro = open_db(uri, SQLITE_OPEN_READWRITE);
		}
		else
		{
			ro = open_db(path, SQLITE_OPEN_READWRITE);
			one(ro, "PRAGMA query_only = 1");
		}
		printf("readonly: %s\n", ways[w]);
		for (int i = 0; i < 4; i++)
			show(writers[i][0], ro, writers[i][1]);
		show("  check", ro, "SELECT anarchon_check('r', " SLOT ")");
		sqlite3_close(ro);
	}
	show("readonly: the run is unchanged", rw,
		 "SELECT attempt || ' ' || token || ' ' || state FROM anarchon_runs");
	show("readonly: runs", rw, "SELECT count(*) FROM anarchon_runs");
	sqlite3_close(rw);
}

static void
probe_reload(const char *dir)
{
	char		path[1024];
	char	   *err = NULL;
	sqlite3    *db;
	int			opens;

	snprintf(path, sizeof(path), "file:%s/reload.db?vfs=probe", dir);
	db = open_db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
	one(db, "SELECT anarchon_config('lease_ms', 1234)");
	one(db, "SELECT anarchon_config('overlap', 'allow')");
	show("reload: first claim", db, "SELECT anarchon_claim('re', " SLOT ", 'tok-1')");
	opens = probe_main_opens;
	for (int i = 0; i < 2; i++)
		if (sqlite3_load_extension(db, ext, NULL, &err) != SQLITE_OK)
		{
			printf("reload: load again: %s\n", err);
			sqlite3_free(err);
		}
	show("reload: lease_ms after loading twice more", db, "SELECT anarchon_config('lease_ms')");
	show("reload: overlap", db, "SELECT anarchon_config('overlap')");
	show("reload: the same claim again (same token)", db,
		 "SELECT anarchon_claim('re', " SLOT ", 'tok-1')");
	show("reload: a claim of the next slot", db, "SELECT anarchon_claim('re', " SLOT " + 1000, 'tok-2')");
	printf("reload: claim connections opened by the loads: %d\n", probe_main_opens - opens);
	show("reload: leases of 1234 ms", db,
		 "SELECT group_concat(lease_until - claimed_at) FROM anarchon_runs");
	show("reload: anarchon_loaded from SQL", db, "SELECT anarchon_loaded(1)");
	sqlite3_close(db);
}

int
main(int argc, char **argv)
{
	if (argc != 3)
	{
		fprintf(stderr, "usage: sqlite_probe DIR EXTENSION\n");
		return 2;
	}
	ext = argv[2];
	probe_vfs_register(0);
	probe_vfs_and_uri(argv[1]);
	probe_read_only(argv[1]);
	probe_reload(argv[1]);
	return 0;
}
