/*
 * tz.h — IANA time zones for schedules, as ICU knows them.
 *
 * A schedule may start with CRON_TZ=<zone> (schedule.h).  Its slots are still
 * UTC instants; the zone only says which UTC instant a wall-clock time such
 * as "03:00" is.  What this layer answers is the offset in force at an
 * instant, and where that offset started and ends (the zone's transitions):
 * the schedule search walks those spans (schedule_zone.c).
 *
 * Why ICU (libicu, the ucal_* C API) and not the system's tzdata files: both
 * databases must answer alike from one implementation, a rule engine for the
 * POSIX TZ strings at the end of a TZif file is exactly what we must not
 * write by hand, and glibc's localtime_r works only through the process-wide
 * TZ variable, which neither a PostgreSQL backend nor a SQLite host may
 * change under its caller.  ICU is what PostgreSQL itself links on Debian,
 * it is reentrant per object, and it carries its own copy of the tz
 * database: its version (an_tz_data_version) may lag the system's tzdata,
 * and the docs and the test suite say so.
 *
 * Zones are looked up by name in an an_tz_cache, which a host keeps for its
 * session (PostgreSQL: one per backend; SQLite: one per connection) and never
 * shares between threads.  A zone, once found, lives until the cache is
 * freed, so a parsed schedule may keep a pointer to it.  Each zone keeps the
 * transitions it has been asked about (a window that grows on demand), so a
 * query near the last one costs a binary search and no ICU call.
 *
 * Built without ICU (configure did not find libicu-dev), every lookup fails
 * with AN_E_UNSUPPORTED and a message naming the package.
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
 * cache or opened now.  AN_E_INPUT when the name breaks AN_TZ_RULE or is not
 * a zone of the tz database; AN_E_UNSUPPORTED without ICU; AN_E_NOMEM.  The
 * message in err says what was wrong and how to list the names.
 */
an_error	an_tz_find(an_tz_cache *cache, const char *name, size_t len, an_tz **tz,
					   char *err, size_t errlen);

/* The name the zone was found by. */
const char *an_tz_name(const an_tz *tz);

/*
 * an_tz_span_at: the span that holds instant t (any int64).  Changes that
 * keep the total offset (a zone trading standard time for daylight time at
 * once) are not spans of their own.  AN_E_NOMEM or AN_E_INTERNAL (an ICU
 * failure, message in err) are the only errors.
 */
an_error	an_tz_span_at(an_tz *tz, int64_t t, an_tz_span *span, char *err, size_t errlen);

/*
 * The version of the tz database the zones come from, ICU's own copy of it
 * ("2022e"), into out.  AN_E_UNSUPPORTED without ICU.
 */
an_error	an_tz_data_version(char *out, size_t outlen, char *err, size_t errlen);

/*
 * an_tz_each_name: call fn once for each zone name an_tz_find accepts, in
 * ICU's order (sorted).  Stops early when fn returns nonzero and returns
 * that value; 0 after the last name; -1 with a message in err on failure.
 */
int			an_tz_each_name(int (*fn) (void *arg, const char *name), void *arg,
							char *err, size_t errlen);

#endif							/* ANARCHON_TZ_H */
