/*
 * tz_none.c — the time-zone source of a build without cctz (see
 * tz_source.h): a schedule with a CRON_TZ is refused with a message naming
 * the package, and every schedule without one still works.
 */
#include <stdio.h>

#include "tz_source.h"

#define NO_TZ "time zones need cctz, and this build of anarchon was made without it: install libcctz-dev and build again (configure finds it)"

an_error
an_tz_src_open(const char *name, an_tz_src **src, an_err *err)
{
	*src = NULL;
	an_errf(err, "time zone '%s': %s", name, NO_TZ);
	return AN_E_UNSUPPORTED;
}

void
an_tz_src_close(an_tz_src *src)
{
	(void) src;
}

an_error
an_tz_src_offset(an_tz_src *src, int64_t t, int64_t *offset, an_err *err)
{
	(void) src;
	(void) t;
	*offset = 0;
	an_errf(err, "%s", NO_TZ);
	return AN_E_UNSUPPORTED;
}

an_error
an_tz_src_next(an_tz_src *src, int64_t t, int64_t *at, int *found, an_err *err)
{
	(void) src;
	(void) t;
	*at = 0;
	*found = 0;
	an_errf(err, "%s", NO_TZ);
	return AN_E_UNSUPPORTED;
}

an_error
an_tz_src_version(char *out, size_t outlen, an_err *err)
{
	if (outlen > 0)
		out[0] = '\0';
	an_errf(err, "%s", NO_TZ);
	return AN_E_UNSUPPORTED;
}

int
an_tz_src_each_name(int (*fn) (void *arg, const char *name), void *arg, an_err *err)
{
	(void) fn;
	(void) arg;
	an_errf(err, "%s", NO_TZ);
	return -1;
}
