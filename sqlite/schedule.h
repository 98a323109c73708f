/*
 * schedule.h — the SQLite schedule functions (sqlite/schedule.c) and the
 * table-valued ones (sqlite/slots.c), and what they share per connection.
 */
#ifndef ANARCHON_SQLITE_SCHEDULE_H
#define ANARCHON_SQLITE_SCHEDULE_H

#include <sqlite3ext.h>

#include "host.h"
#include "../schedule/schedule.h"

/*
 * What the schedule functions of one connection share: the zones its
 * schedules named (kept for the connection's life, so a parsed schedule may
 * point into them), and the connection's settings and store, for
 * anarchon_fire_at and anarchon_missed.  Reference-counted: every function
 * and module registered with it holds one reference, and it holds one on conn.
 */
typedef struct an_sqlite_sched
{
	an_sqlite_conn *conn;
	an_tz_cache *zones;
	int			refs;
} an_sqlite_sched;

/*
 * Register anarchon_slot, anarchon_next_slot, anarchon_fire_at,
 * anarchon_tzdata_version and the table-valued functions on db, sharing
 * conn.  Returns an SQLite result code.
 */
int			an_sqlite_schedule_register(sqlite3 *db, an_sqlite_conn *conn);

/* Drop one reference to sc (the destructor SQLite calls); the last frees it. */
void		an_sqlite_sched_release(void *sc);

/*
 * Parse the schedule in v (text) with the connection's zones: SQLITE_OK, or
 * an error code with a message in err.
 */
int			an_sqlite_parse_schedule(an_sqlite_sched *sc, sqlite3_value *v, an_schedule *out,
									 an_err *err);

/* slots.c: anarchon_slots, anarchon_missed and anarchon_zones, sharing sc. */
int			an_sqlite_slots_register(sqlite3 *db, an_sqlite_sched *sc);

#endif							/* ANARCHON_SQLITE_SCHEDULE_H */
