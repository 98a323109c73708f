/*
 * schedule_pg.h — what the PostgreSQL schedule functions share
 * (pg/schedule.c, pg/slots.c).
 */
#ifndef ANARCHON_SCHEDULE_PG_H
#define ANARCHON_SCHEDULE_PG_H

#include "anarchon_pg.h"

#include "schedule.h"

/*
 * The schedule of argument argno, parsed with this backend's zones, or taken
 * from the call site's cache (fn_extra).  Errors are raised (22023); a NULL
 * is refused.
 */
const an_schedule *an_pg_arg_schedule(FunctionCallInfo fcinfo, int argno);

/*
 * Instant argument argno as ms: a bigint as it is, a finite timestamptz
 * converted; what names it in errors.  A NULL is refused.
 */
int64		an_pg_arg_instant(FunctionCallInfo fcinfo, int argno, bool as_ms, const char *what);

/* Raise a core error about a schedule (its message split into message and DETAIL). */
pg_noreturn void an_pg_raise_schedule(an_error rc, const an_err *err);

#endif							/* ANARCHON_SCHEDULE_PG_H */
