/*
 * tz_pg.c — the time-zone source of the PostgreSQL host (see
 * schedule/tz_source.h): the server's own time-zone code and data (pgtime.h),
 * the same that AT TIME ZONE and the timezone setting use, so a schedule
 * agrees with the database it runs in.  A server built with
 * --with-system-tzdata (Debian's) reads the system's tz database; others read
 * the copy PostgreSQL installs with itself.
 *
 * pg_tzset loads a zone once per backend and keeps it for the backend's life,
 * so an an_tz_src only points at it.  pg_tzset is wider than a zone name: it
 * looks names up without regard to case, and takes a POSIX rule ("XYZ5",
 * "EST5EDT,M3.2.0,M11.1.0") that no file holds.  schedule/tz.c's name rule has
 * already refused what is not written like a zone name; here the name must
 * also be the file's exact spelling, and a name that could be a POSIX rule
 * (one with a digit, the offset, and without '/', which a rule has only
 * after a ',') must be one that pg_tzenumerate lists, as pg_timezone_names
 * does: "EST5EDT" is a zone, "XYZ5" is not.  Listing the zones costs some
 * 50 ms, once per backend, and only names such as "EST5EDT" or "GMT0" need it.
 *
 * PostgreSQL errors raised in here (an unreadable directory, out of memory)
 * are caught and handed back as an an_error, so that nothing unwinds through
 * core's frames; the host raises them again after core returns.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgtime.h"
#include "utils/memutils.h"

#include "tz_source.h"

struct an_tz_src
{
	pg_tz	   *tz;              /* PostgreSQL's, kept for the backend's life */
};

/* The zone names with a digit and no '/' that the database holds, sorted; for this backend. */
static char **digit_names;
static int	digit_count = -1;

/* Catch a PostgreSQL error raised since PG_TRY: its message into err. */
static an_error
caught(MemoryContext cxt, const char *what, an_err *err)
{
	ErrorData  *ed;

	MemoryContextSwitchTo(cxt);
	ed = CopyErrorData();
	FlushErrorState();
	an_errf(err, "%s: %s", what, ed->message);
	FreeErrorData(ed);
	return AN_E_INTERNAL;
}

static int
has_digit(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s >= '0' && *s <= '9')
			return 1;
	return 0;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Fill digit_names from pg_tzenumerate, once. */
static an_error
load_digit_names(an_err *err)
{
	MemoryContext cxt = CurrentMemoryContext;
	char	  **volatile names = NULL;
	volatile int n = 0;
	volatile int cap = 0;
	volatile an_error rc = AN_OK;

	if (digit_count >= 0)
		return AN_OK;
	PG_TRY();
	{
		pg_tzenum  *dir = pg_tzenumerate_start();
		pg_tz	   *tz;

		while ((tz = pg_tzenumerate_next(dir)) != NULL)
		{
			const char *name = pg_get_timezone_name(tz);

			if (!has_digit(name) || strchr(name, '/') != NULL)
				continue;
			if (n == cap)
			{
				cap = cap ? 2 * cap : 64;
				names = names ? repalloc(names, cap * sizeof(char *))
					: MemoryContextAlloc(TopMemoryContext, cap * sizeof(char *));
			}
			names[n++] = MemoryContextStrdup(TopMemoryContext, name);
		}
		pg_tzenumerate_end(dir);
	}
	PG_CATCH();
	{
		rc = caught(cxt, "could not list the time zones", err);
	}
	PG_END_TRY();
	if (rc != AN_OK)
		return rc;
	if (n > 0)
		qsort(names, n, sizeof(char *), cmp_names);
	digit_names = names;
	digit_count = n;
	return AN_OK;
}

an_error
an_tz_src_open(const char *name, an_tz_src **src, an_err *err)
{
	MemoryContext cxt = CurrentMemoryContext;
	pg_tz	   *volatile tz = NULL;
	const char *canon;
	volatile an_error rc = AN_OK;

	*src = NULL;
	PG_TRY();
	{
		tz = pg_tzset(name);
	}
	PG_CATCH();
	{
		rc = caught(cxt, "could not load the time zone", err);
	}
	PG_END_TRY();
	if (rc != AN_OK)
		return rc;
	canon = tz != NULL ? pg_get_timezone_name(tz) : NULL;
	if (tz != NULL && has_digit(name) && strchr(name, '/') == NULL)
	{
		if ((rc = load_digit_names(err)) != AN_OK)
			return rc;
		if (bsearch(&name, digit_names, digit_count, sizeof(char *), cmp_names) == NULL)
			canon = NULL;
	}
	if (canon == NULL || strcmp(canon, name) != 0 || !pg_tz_acceptable(tz))
	{
		an_errf(err, "time zone '%s' is not in the time-zone database of this server (names are case-sensitive): " AN_TZ_UNKNOWN_ADVICE,
				name);
		return AN_E_INPUT;
	}
	if ((*src = malloc(sizeof(**src))) == NULL)
		return AN_E_NOMEM;
	(*src)->tz = tz;
	return AN_OK;
}

void
an_tz_src_close(an_tz_src *src)
{
	free(src);
}

an_error
an_tz_src_offset(an_tz_src *src, int64_t t, int64_t *offset, an_err *err)
{
	pg_time_t	pt = (pg_time_t) t;
	struct pg_tm *tm = pg_localtime(&pt, src->tz);

	/* What AT TIME ZONE reads too (timestamp2tm calls pg_localtime). */
	if (tm == NULL)
	{
		an_errf(err, "time zone '%s': no local time for %lld", pg_get_timezone_name(src->tz),
				(long long) t);
		return AN_E_INTERNAL;
	}
	*offset = tm->tm_gmtoff;
	return AN_OK;
}

an_error
an_tz_src_next(an_tz_src *src, int64_t t, int64_t *at, int *found, an_err *err)
{
	pg_time_t	pt = (pg_time_t) t,
				boundary = 0;
	long int	before_gmtoff,
				after_gmtoff;
	int			before_isdst,
				after_isdst;
	int			r = pg_next_dst_boundary(&pt, &before_gmtoff, &before_isdst, &boundary,
										 &after_gmtoff, &after_isdst, src->tz);

	*found = r == 1;
	*at = boundary;
	if (r < 0)
	{
		an_errf(err, "time zone '%s': no transition found after %lld",
				pg_get_timezone_name(src->tz), (long long) t);
		return AN_E_INTERNAL;
	}
	return AN_OK;
}

an_error
an_tz_src_version(char *out, size_t outlen, an_err *err)
{
	char		dir[MAXPGPATH],
				v[64];

	(void) err;
#ifdef AN_PG_TZDIR
	/* Built --with-system-tzdata: the directory configure read from pg_config. */
	strlcpy(dir, AN_PG_TZDIR, sizeof(dir));
	an_tz_dir_version(dir, v, sizeof(v));
	if (v[0] == '\0')
		strlcpy(v, "unknown", sizeof(v));
#else
	/* PostgreSQL's own copy, under its share directory; it has no version file. */
	get_share_path(my_exec_path, dir);
	strlcat(dir, "/timezone", sizeof(dir));
	an_tz_dir_version(dir, v, sizeof(v));
	if (v[0] == '\0')
		snprintf(v, sizeof(v), "PostgreSQL %s", PG_VERSION);
#endif
	snprintf(out, outlen, "%s (%s)", v, dir);
	return AN_OK;
}

int
an_tz_src_each_name(int (*fn) (void *arg, const char *name), void *arg, an_err *err)
{
	MemoryContext cxt = CurrentMemoryContext;
	volatile int rc = 0;

	PG_TRY();
	{
		pg_tzenum  *dir = pg_tzenumerate_start();
		pg_tz	   *tz;

		while (rc == 0 && (tz = pg_tzenumerate_next(dir)) != NULL)
			rc = fn(arg, pg_get_timezone_name(tz));
		pg_tzenumerate_end(dir);
	}
	PG_CATCH();
	{
		caught(cxt, "could not list the time zones", err);
		rc = -1;
	}
	PG_END_TRY();
	return rc;
}
