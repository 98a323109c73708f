/*
 * tz.h — IANA time zones for schedules, from the host database's own data.
 *
 * A schedule may start with CRON_TZ=<zone> (schedule.h).  Its slots are still
 * UTC instants; the zone only says which UTC instant a wall-clock time such
 * as "03:00" is.  What this layer answers is the offset in force at an
 * instant, and where that offset started and ends (the zone's transitions):
 * the schedule search walks those spans (schedule_zone.c).
 *
 * A schedule must agree with the database it runs in, so the data is the
 * host's (tz_source.h): in PostgreSQL the server's own time-zone code and
 * data, the same as AT TIME ZONE (pg/tz_pg.c); in SQLite and the command the
 * system's tz database, $TZDIR or /usr/share/zoneinfo, read by cctz
 * (tz_system.cc).  Never a frozen copy: after a tzdata upgrade the slots of
 * a zone follow the new rules, which is why the SQL functions that take a
 * schedule are STABLE in PostgreSQL, not IMMUTABLE.  tz.c is the part the
 * hosts share: the rule for names, the cache, the spans.
 *
 * Zones are looked up by name in an an_tz_cache, which a host keeps for its
 * session (PostgreSQL: one per backend; SQLite: one per connection) and never
 * shares between threads.  A zone, once found, lives until the cache is
 * freed, so a parsed schedule may keep a pointer to it.  Each zone keeps the
 * changes of offset it has been asked about (a window that grows on demand),
 * so a query near the last one costs a binary search and no call to the data.
 *
 * Built without a source of data (SQLite without libcctz-dev), every lookup
 * fails with AN_E_UNSUPPORTED and a message naming the package.
 */
#ifndef ANARCHON_TZ_H
#define ANARCHON_TZ_H

#include "anarchon.h"

/* Longest zone name accepted, in bytes (the longest IANA name has 32). */
#define AN_TZ_NAME_MAX 64

/* The rule for a zone name, for messages. */
#define AN_TZ_RULE "a time zone is an IANA name such as Europe/Berlin or UTC: 1 to 64 bytes of letters, digits, '/', '_', '-' and '+', starting with a letter"
/* How to list the names, for messages. */
#define AN_TZ_LIST_HINT "list the known names with SELECT * FROM anarchon_zones()"

/* Instants before every transition, after every transition. */
#define AN_TZ_NEVER_BEFORE INT64_MIN
#define AN_TZ_NEVER_AFTER  INT64_MAX

typedef struct an_tz an_tz;
typedef struct an_tz_cache an_tz_cache;

/* One stretch of time with a single UTC offset: [start, end). */
typedef struct an_tz_span
{
	int64_t		start;           /* ms; AN_TZ_NEVER_BEFORE when no change precedes it */
	int64_t		end;             /* ms; AN_TZ_NEVER_AFTER when no change follows it */
	int64_t		offset;          /* ms to add to UTC for the wall clock */
} an_tz_span;

/* A new, empty cache; NULL when out of memory. */
an_tz_cache *an_tz_cache_new(void);

/* Free the cache and every zone in it (NULL is fine). */
void		an_tz_cache_free(an_tz_cache *cache);

/*
 * an_tz_find: the zone called name (len bytes, not NUL-terminated), from the
 * cache or opened now.  AN_E_INPUT when the name breaks AN_TZ_RULE, is not an
 * IANA name ("PST", "posix/...", "localtime"), or is not a zone of the host's
 * tz database (exact spelling); AN_E_UNSUPPORTED without a source of data;
 * AN_E_NOMEM.  The message in err says what was wrong and how to list the
 * names.
 */
an_error	an_tz_find(an_tz_cache *cache, const char *name, size_t len, an_tz **tz,
					   an_err *err);

/* The name the zone was found by. */
const char *an_tz_name(const an_tz *tz);

/*
 * an_tz_span_at: the span that holds instant t, |t| < 2^62 ms (about 146
 * million years; beyond, AN_E_INPUT).  Changes that keep the total offset (a
 * zone trading standard time for daylight time at once) are not spans of
 * their own.  Otherwise AN_E_NOMEM or AN_E_INTERNAL (a failure of the host's
 * data, message in err) are the only errors.
 */
an_error	an_tz_span_at(an_tz *tz, int64_t t, an_tz_span *span, an_err *err);

/*
 * Where the zones come from, into out: the tz database's version and its
 * directory, "2025b (/usr/share/zoneinfo)"; "unknown (DIR)" when the
 * directory holds no tzdata.zi to read the version from, "PostgreSQL 15.20
 * (DIR)" for the copy a PostgreSQL built without --with-system-tzdata keeps.
 * AN_E_UNSUPPORTED without a source of data.
 */
an_error	an_tz_data_version(char *out, size_t outlen, an_err *err);

/*
 * an_tz_each_name: call fn once for each zone name an_tz_find accepts, in
 * byte order.  Stops early when fn returns nonzero and returns
 * that value; 0 after the last name; -1 with a message in err on failure.
 */
int			an_tz_each_name(int (*fn) (void *arg, const char *name), void *arg,
							an_err *err);

#endif							/* ANARCHON_TZ_H */
