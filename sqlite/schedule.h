/*
 * schedule.h — the SQLite schedule functions (sqlite/schedule.c).
 */
#ifndef ANARCHON_SQLITE_SCHEDULE_H
#define ANARCHON_SQLITE_SCHEDULE_H

#include <sqlite3ext.h>

/*
 * Register anarchon_slot(schedule [, at]) and anarchon_next_slot(schedule
 * [, after]) on db.  Returns an SQLite result code.
 */
int			an_sqlite_schedule_register(sqlite3 *db);

#endif							/* ANARCHON_SQLITE_SCHEDULE_H */
