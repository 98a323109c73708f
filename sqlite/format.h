/*
 * format.h — the format of the SQLite local store's tables in a database
 * file: which one a file holds, bringing an older file to this library's,
 * refusing a newer or unreadable one (format.c), and anarchon_version().
 */
#ifndef ANARCHON_SQLITE_FORMAT_H
#define ANARCHON_SQLITE_FORMAT_H

#include "host.h"

/*
 * The formats, recorded from 4 on in the file's own table anarchon_meta
 * (key 'format'), never in PRAGMA user_version, which is the application's:
 *   1  anarchon_runs without 'replaced' in its state CHECK, no anarchon_pauses
 *      (development builds of 2026-12-02 to 2026-12-05, before pauses)
 *   2  anarchon_pauses beside it (development builds with pauses, before replace)
 *   3  'replaced' in the CHECK (0.1.0)
 *   4  anarchon_meta and anarchon_pruned beside them (0.2.0)
 * Formats 1 to 3 are told apart by the tables' definitions.
 */
#define AN_SQLITE_FORMAT 4
#define AN_SQLITE_FORMAT_SINCE "0.2.0"	/* the first release of this format */

/*
 * On db, which the store writes with (its claim connection, or the caller's
 * for an in-memory database), outside any transaction: create the tables, or
 * migrate older ones once under BEGIN IMMEDIATE, or refuse a file whose
 * format this library does not know.  Errors are recorded on st.
 */
int			an_sqlite_format_ensure(an_store *st, sqlite3 *db);

/* Without writing: may this library read db's tables?  AN_OK, or refused on st. */
int			an_sqlite_format_readable(an_store *st, sqlite3 *db);

/* anarchon_version() on db. */
int			an_sqlite_format_register(sqlite3 *db);

#endif							/* ANARCHON_SQLITE_FORMAT_H */
