/*
 * tz_source.h — what a host's time-zone data must answer, for schedule/tz.c.
 *
 * tz.c keeps the part every host shares: the rule for zone names, the cache
 * of zones, the window of changes of offset, the spans.  The data itself is
 * the host's, because a schedule must agree with the database it runs in
 * (DESIGN.md section 9): each host links exactly one implementation of these
 * functions.
 *
 *   pg/tz_pg.c         PostgreSQL: the server's own time-zone code and data,
 *                      the same as AT TIME ZONE and the timezone setting
 *   schedule/tz_system.cc  SQLite and the command: the system's tz database
 *                      (TZDIR, else /usr/share/zoneinfo), read by cctz
 *   schedule/tz_none.c     a build without cctz: every zone is refused, with a
 *                      message naming the package to install
 *
 * Times here are whole seconds since the epoch (the tz database has no finer
 * unit); offsets are seconds east of UTC.  The functions are called for one
 * zone from one thread at a time, never raise (PostgreSQL's ereport stays in
 * the host's own frames) and report failures as an an_error with a message.
 */
#ifndef ANARCHON_TZ_SOURCE_H
#define ANARCHON_TZ_SOURCE_H

#include "anarchon.h"

typedef struct an_tz_src an_tz_src;

/*
 * What to do about a name the database lacks, for both hosts' messages.  The
 * old names of the tz database's "backward" file are a package of their own
 * on some systems, so a schedule that worked before an upgrade can stop
 * finding its zone.
 */
#define AN_TZ_UNKNOWN_ADVICE \
	"list the known names with SELECT * FROM anarchon_zones(); old names such as US/Eastern, CET or EST5EDT come from the database's backward file, which some systems install apart (Debian 13 and later: the package tzdata-legacy)"

/*
 * Open zone `name` (NUL-terminated; tz.c has checked it against the name
 * rule).  AN_E_INPUT when the database has no zone by exactly that name
 * (message in err), AN_E_UNSUPPORTED when the host has no time zones,
 * AN_E_NOMEM.
 */
an_error	an_tz_src_open(const char *name, an_tz_src **src, an_err *err);

/* Release what an_tz_src_open made (NULL is fine). */
void		an_tz_src_close(an_tz_src *src);

/* The total UTC offset (standard + daylight) in force at second t. */
an_error	an_tz_src_offset(an_tz_src *src, int64_t t, int64_t *offset,
							 an_err *err);

/*
 * The first transition strictly after second t into *at, *found = 1; or
 * *found = 0 when the zone changes no more.  A transition may keep the total
 * offset (only the abbreviation or the daylight flag change): tz.c skips those.
 */
an_error	an_tz_src_next(an_tz_src *src, int64_t t, int64_t *at, int *found,
						   an_err *err);

/* Where the data comes from, for anarchon_tzdata_version(), into out. */
an_error	an_tz_src_version(char *out, size_t outlen, an_err *err);

/*
 * Call fn once for each zone name of the database, in any order, duplicates
 * allowed (tz.c filters, sorts and removes them).  Stops early when fn returns
 * nonzero and returns that value; 0 after the last; -1 with err on failure.
 */
int			an_tz_src_each_name(int (*fn) (void *arg, const char *name), void *arg,
								an_err *err);

/*
 * The version line of a tz database directory: the "# version 2025b" that
 * begins DIR/tzdata.zi, into out ("" when there is none).  For the sources
 * that know their directory (tz_system.cc; tz_pg.c with a system tzdata).
 */
void		an_tz_dir_version(const char *dir, char *out, size_t outlen);

#endif							/* ANARCHON_TZ_SOURCE_H */
