/*
 * tz.c — time zones for schedules: the name rule, the cache, the spans (see
 * tz.h), over the host's own data (tz_source.h).
 *
 * Each zone keeps a window of the changes of offset it has found so far.
 * Asking about an instant inside the window is a binary search; outside it,
 * the window grows toward the instant, or starts afresh around it when the
 * instant is far away (decades of changes are not worth keeping for one
 * question about the year 9000).  The sources only step forward (PostgreSQL's
 * pg_next_dst_boundary has no backward twin), so the window grows to the left
 * by scanning forward from an earlier instant, a stretch of years at a time,
 * and keeps every change the scan met.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tz.h"
#include "tz_source.h"

/* Names that pass the syntax but are not IANA zones, and mislead ("IST"). */
static const char *const not_iana_names[] = {
	/* abbreviations that are no zones (ICU took them for some), refused since the first release */
	"ACT", "AET", "AGT", "ART", "AST", "BET", "BST", "CAT", "CNT", "CST", "CTT",
	"EAT", "ECT", "IET", "IST", "JST", "MIT", "NET", "NST", "PLT", "PNT", "PRT",
	"PST", "SST", "VST", "Etc/Unknown",
	/* files of a zoneinfo directory that are not zones of the database */
	"localtime", "posixrules", "leapseconds", "leap-seconds", NULL
};

/* Directory prefixes of copies of the database (posix/ = the same, right/ = leap seconds). */
static const char *const not_iana_prefixes[] = {"SystemV/", "posix/", "right/", NULL};

static int
name_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '/' || c == '_' || c == '-' || c == '+';
}

/*
 * The syntax of an IANA name, checked before any lookup.  The name becomes a
 * file name in the zoneinfo directory, so "." never passes ("../../etc/passwd"
 * gets a plain refusal, not a file), and neither do the POSIX rules such as
 * "<+03>-3" or "EST5EDT,M3.2.0,M11.1.0" that some libraries take for names.
 */
static an_error
check_name(const char *name, size_t len, an_err *err)
{
	if (len == 0)
	{
		an_errf(err, "time zone is empty: %s; %s", AN_TZ_RULE, AN_TZ_LIST_HINT);
		return AN_E_INPUT;
	}
	if (len > AN_TZ_NAME_MAX)
	{
		an_errf(err, "time zone name is %zu bytes long: %s; %s", len, AN_TZ_RULE,
				AN_TZ_LIST_HINT);
		return AN_E_INPUT;
	}
	for (size_t i = 0; i < len; i++)
	{
		char		c = name[i];
		int			bad = !name_char_ok(c) || (i == 0 && !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
			|| (c == '/' && (i + 1 == len || name[i + 1] == '/'));

		if (bad)
		{
			an_errf(err, "time zone '%.*s' is not an IANA zone name (position %zu): %s; %s",
					(int) len, name, i + 1, AN_TZ_RULE, AN_TZ_LIST_HINT);
			return AN_E_INPUT;
		}
	}
	for (int i = 0; not_iana_prefixes[i] != NULL; i++)
	{
		size_t		n = strlen(not_iana_prefixes[i]);

		if (len >= n && memcmp(name, not_iana_prefixes[i], n) == 0)
			goto not_iana;
	}
	for (int i = 0; not_iana_names[i] != NULL; i++)
		if (strlen(not_iana_names[i]) == len && memcmp(not_iana_names[i], name, len) == 0)
			goto not_iana;
	return AN_OK;

not_iana:
	an_errf(err, "time zone '%.*s' is not an IANA zone name: write the zone by its Area/Location name, such as America/Los_Angeles; %s",
			(int) len, name, AN_TZ_LIST_HINT);
	return AN_E_INPUT;
}

/* Changes kept per zone before the window starts afresh. */
#define WINDOW_MAX 2048
/* Farther than this from the window, start afresh instead of growing it. */
#define FAR_MS (INT64_C(60) * 366 * 86400000)
/* About 146 million years either way: far from int64's ends, far past 9999. */
#define TZ_T_MAX (INT64_C(1) << 62)
/* The first stretch scanned when growing to the left: about a year. */
#define LEFT_STEP_MS (INT64_C(400) * 86400000)
/*
 * No zone changes its offset before this (1800-01-01 UTC; the oldest change
 * of the database, from local mean time, is in 1835): the window's left end.
 */
#define EARLIEST_MS (INT64_C(-5364662400) * 1000)

typedef struct change
{
	int64_t		at;              /* ms: the offset below holds from here on */
	int64_t		offset;          /* ms */
} change;

struct an_tz
{
	char		name[AN_TZ_NAME_MAX + 1];
	an_tz_src  *src;
	/*
	 * The window: every change of offset in (lo, hi] is in ch[0..n), in
	 * order, and lo_offset holds at lo.  lo is AN_TZ_NEVER_BEFORE once
	 * nothing earlier can change, hi AN_TZ_NEVER_AFTER once the source said
	 * nothing later does.
	 */
	int64_t		lo,
				hi,
				lo_offset;
	change	   *ch;
	size_t		n,
				cap;
	struct an_tz *next;
};

struct an_tz_cache
{
	an_tz	   *zones;
};

static int64_t
floor_s(int64_t ms)
{
	return ms / 1000 - (ms % 1000 < 0);
}

/* The offset in force at instant t (ms), in ms. */
static an_error
offset_at(an_tz *tz, int64_t t, int64_t *offset, an_err *err)
{
	int64_t		s = 0;
	an_error	rc = an_tz_src_offset(tz->src, floor_s(t), &s, err);

	*offset = rc == AN_OK ? s * 1000 : 0;
	return rc;
}

/* The first transition strictly after instant t (ms), as ms; *found = 0 when none. */
static an_error
next_transition(an_tz *tz, int64_t t, int64_t *at, int *found, an_err *err)
{
	int64_t		s = 0;
	an_error	rc = an_tz_src_next(tz->src, floor_s(t), &s, found, err);

	/* s is set only when a transition was found (none after the last one). */
	*at = rc == AN_OK && *found ? s * 1000 : 0;
	return rc;
}

static an_error
reserve(an_tz *tz, size_t more)
{
	if (tz->n + more <= tz->cap)
		return AN_OK;
	{
		size_t		cap = tz->cap ? tz->cap * 2 : 16;
		change	   *ch;

		while (cap < tz->n + more)
			cap *= 2;
		if ((ch = realloc(tz->ch, cap * sizeof(*ch))) == NULL)
			return AN_E_NOMEM;
		tz->ch = ch;
		tz->cap = cap;
	}
	return AN_OK;
}

/* Forget the window and start a new, empty one at t. */
static an_error
window_reset(an_tz *tz, int64_t t, an_err *err)
{
	tz->n = 0;
	tz->lo = tz->hi = t;
	return offset_at(tz, t, &tz->lo_offset, err);
}

static int64_t
offset_at_hi(const an_tz *tz)
{
	return tz->n ? tz->ch[tz->n - 1].offset : tz->lo_offset;
}

/* Grow the window to the right until it holds a change after t (or the end). */
static an_error
grow_right(an_tz *tz, int64_t t, an_err *err)
{
	while (tz->hi != AN_TZ_NEVER_AFTER && (tz->n == 0 || tz->ch[tz->n - 1].at <= t))
	{
		int64_t		at,
					off;
		int			found;
		an_error	rc;

		if ((rc = next_transition(tz, tz->hi, &at, &found, err)) != AN_OK)
			return rc;
		if (!found)
		{
			tz->hi = AN_TZ_NEVER_AFTER;
			break;
		}
		if ((rc = offset_at(tz, at, &off, err)) != AN_OK)
			return rc;
		if (off != offset_at_hi(tz))
		{
			/* Full: start afresh at t; an_tz_span_at grows it again. */
			if (tz->n >= WINDOW_MAX)
				return window_reset(tz, t, err);
			if (reserve(tz, 1) != AN_OK)
				return AN_E_NOMEM;
			tz->ch[tz->n].at = at;
			tz->ch[tz->n].offset = off;
			tz->n++;
		}
		tz->hi = at;
	}
	return AN_OK;
}

/*
 * Grow the window to the left until it holds a change at or before t (or the
 * start): scan (p, lo] forward from an earlier p, a longer stretch each time,
 * and put every change met in front of the window.
 */
static an_error
grow_left(an_tz *tz, int64_t t, an_err *err)
{
	int64_t		step = LEFT_STEP_MS;

	while (tz->lo != AN_TZ_NEVER_BEFORE && (tz->n == 0 || tz->ch[0].at > t))
	{
		int64_t		p = tz->lo - step <= EARLIEST_MS || tz->lo - EARLIEST_MS <= step ?
			EARLIEST_MS : tz->lo - step,
					x = p,
					off,
					before;
		size_t		m = 0;
		an_error	rc;

		if ((rc = offset_at(tz, p, &before, err)) != AN_OK)
			return rc;
		off = before;
		/* The changes of (p, lo] go to ch[0..m), the window shifted up. */
		for (;;)
		{
			int64_t		at,
						now;
			int			found;

			if ((rc = next_transition(tz, x, &at, &found, err)) != AN_OK)
				return rc;
			if (!found || at > tz->lo)
				break;
			if ((rc = offset_at(tz, at, &now, err)) != AN_OK)
				return rc;
			if (now != off)
			{
				if (tz->n >= WINDOW_MAX)
					return window_reset(tz, t, err);
				if (reserve(tz, 1) != AN_OK)
					return AN_E_NOMEM;
				memmove(tz->ch + m + 1, tz->ch + m, (tz->n - m) * sizeof(*tz->ch));
				tz->ch[m].at = at;
				tz->ch[m].offset = now;
				tz->n++;
				m++;
				off = now;
			}
			x = at;
		}
		tz->lo = p == EARLIEST_MS ? AN_TZ_NEVER_BEFORE : p;
		tz->lo_offset = before;
		step *= 4;
	}
	return AN_OK;
}

an_error
an_tz_span_at(an_tz *tz, int64_t t, an_tz_span *span, an_err *err)
{
	an_error	rc;
	size_t		a,
				b;

	/*
	 * Far outside any schedule's years, where the window's arithmetic could
	 * overflow (the search asks for years 1800 to 10000 at most).
	 */
	if (t < -TZ_T_MAX || t > TZ_T_MAX)
	{
		an_errf(err, "instant %lld is outside the years time zones are computed for", (long long) t);
		return AN_E_INPUT;
	}
	/* Far from the window: a fresh one, rather than decades of changes. */
	if ((tz->lo != AN_TZ_NEVER_BEFORE && t < tz->lo && tz->lo - t > FAR_MS) ||
		(tz->hi != AN_TZ_NEVER_AFTER && t > tz->hi && t - tz->hi > FAR_MS))
	{
		if ((rc = window_reset(tz, t, err)) != AN_OK)
			return rc;
	}
	/*
	 * Both sides: a change after t and one at or before t, or the ends.  A
	 * side that had to start afresh leaves the other to do again, once.
	 */
	for (int pass = 0; pass < 3; pass++)
	{
		if ((rc = grow_right(tz, t, err)) != AN_OK ||
			(rc = grow_left(tz, t, err)) != AN_OK)
			return rc;
		if ((tz->hi == AN_TZ_NEVER_AFTER || (tz->n > 0 && tz->ch[tz->n - 1].at > t)) &&
			(tz->lo == AN_TZ_NEVER_BEFORE || (tz->n > 0 && tz->ch[0].at <= t)))
			break;
	}
	/* The last change at or before t: ch[a - 1], or none when a == 0. */
	a = 0;
	b = tz->n;
	while (a < b)
	{
		size_t		m = a + (b - a) / 2;

		if (tz->ch[m].at <= t)
			a = m + 1;
		else
			b = m;
	}
	span->start = a > 0 ? tz->ch[a - 1].at : AN_TZ_NEVER_BEFORE;
	span->offset = a > 0 ? tz->ch[a - 1].offset : tz->lo_offset;
	span->end = a < tz->n ? tz->ch[a].at : AN_TZ_NEVER_AFTER;
	return AN_OK;
}

an_tz_cache *
an_tz_cache_new(void)
{
	return calloc(1, sizeof(an_tz_cache));
}

void
an_tz_cache_free(an_tz_cache *cache)
{
	if (cache == NULL)
		return;
	while (cache->zones != NULL)
	{
		an_tz	   *tz = cache->zones;

		cache->zones = tz->next;
		an_tz_src_close(tz->src);
		free(tz->ch);
		free(tz);
	}
	free(cache);
}

const char *
an_tz_name(const an_tz *tz)
{
	return tz->name;
}

an_error
an_tz_find(an_tz_cache *cache, const char *name, size_t len, an_tz **out,
		   an_err *err)
{
	an_tz	   *tz;
	an_error	rc;

	for (tz = cache->zones; tz != NULL; tz = tz->next)
		if (strlen(tz->name) == len && memcmp(tz->name, name, len) == 0)
		{
			*out = tz;
			return AN_OK;
		}
	if ((rc = check_name(name, len, err)) != AN_OK)
		return rc;
	if ((tz = calloc(1, sizeof(*tz))) == NULL)
		return AN_E_NOMEM;
	memcpy(tz->name, name, len);
	if ((rc = an_tz_src_open(tz->name, &tz->src, err)) != AN_OK ||
		(rc = window_reset(tz, INT64_C(1700000000000), err)) != AN_OK)
	{
		an_tz_src_close(tz->src);
		free(tz);
		return rc;
	}
	tz->next = cache->zones;
	cache->zones = tz;
	*out = tz;
	return AN_OK;
}

an_error
an_tz_data_version(char *out, size_t outlen, an_err *err)
{
	return an_tz_src_version(out, outlen, err);
}

void
an_tz_dir_version(const char *dir, char *out, size_t outlen)
{
	char		path[4096],
				line[128],
				version[64];
	FILE	   *f;

	if (outlen > 0)
		out[0] = '\0';
	snprintf(path, sizeof(path), "%s/tzdata.zi", dir);
	if ((f = fopen(path, "r")) == NULL)
		return;
	if (fgets(line, sizeof(line), f) != NULL && sscanf(line, "# version %63s", version) == 1)
		snprintf(out, outlen, "%s", version);
	fclose(f);
}

/* The names an_tz_each_name gathers before sorting them. */
typedef struct names
{
	char	  **v;
	size_t		n,
				cap;
} names;

static int
gather(void *arg, const char *name)
{
	names	   *ns = arg;
	size_t		len = strlen(name);

	if (check_name(name, len, NULL) != AN_OK)
		return 0;
	if (ns->n == ns->cap)
	{
		size_t		cap = ns->cap ? 2 * ns->cap : 512;
		char	  **v = realloc(ns->v, cap * sizeof(*v));

		if (v == NULL)
			return -1;
		ns->v = v;
		ns->cap = cap;
	}
	if ((ns->v[ns->n] = malloc(len + 1)) == NULL)
		return -1;
	memcpy(ns->v[ns->n++], name, len + 1);
	return 0;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

int
an_tz_each_name(int (*fn) (void *arg, const char *name), void *arg, an_err *err)
{
	names		ns = {0};
	int			rc = an_tz_src_each_name(gather, &ns, err);

	if (rc == -1 && err != NULL && err->msg[0] == '\0')
		an_errf(err, "out of memory listing the time zones");
	if (rc == 0)
	{
		qsort(ns.v, ns.n, sizeof(*ns.v), by_name);
		for (size_t i = 0; rc == 0 && i < ns.n; i++)
			if (i == 0 || strcmp(ns.v[i], ns.v[i - 1]) != 0)
				rc = fn(arg, ns.v[i]);
	}
	for (size_t i = 0; i < ns.n; i++)
		free(ns.v[i]);
	free(ns.v);
	return rc;
}
