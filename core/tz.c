/*
 * tz.c — time zones from ICU's calendar API (see tz.h for why ICU).
 *
 * Each zone holds one UCalendar, used only to read offsets and to step from
 * transition to transition (ucal_getTimeZoneTransitionDate), and a window of
 * the changes of offset it has found so far.  Asking about an instant inside
 * the window is a binary search; outside it, the window grows toward the
 * instant, or starts afresh around it when the instant is far away (decades
 * of changes are not worth keeping for one question about the year 9000).
 *
 * ICU reports its errors as a UErrorCode; here they become an an_error with a
 * message, and nothing unwinds through ICU's frames (PostgreSQL's ereport is
 * raised by the host after this returns).  ICU starts no thread for this API.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tz.h"

/* ICU's own legacy names that are not IANA zones, and mislead ("IST"). */
static const char *const icu_only_names[] = {
	"ACT", "AET", "AGT", "ART", "AST", "BET", "BST", "CAT", "CNT", "CST", "CTT",
	"EAT", "ECT", "IET", "IST", "JST", "MIT", "NET", "NST", "PLT", "PNT", "PRT",
	"PST", "SST", "VST", "Etc/Unknown", NULL
};

static int
name_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '/' || c == '_' || c == '-' || c == '+';
}

/*
 * The syntax of an IANA name, checked before any lookup: the name never
 * reaches a file system (ICU looks names up in its own data), but a name like
 * "../../etc/passwd" deserves a plain refusal, not "unknown zone".
 */
static an_error
check_name(const char *name, size_t len, char *err, size_t errlen)
{
	if (len == 0)
	{
		an_errf(err, errlen, "time zone is empty: %s; %s", AN_TZ_RULE, AN_TZ_LIST_HINT);
		return AN_E_INPUT;
	}
	if (len > AN_TZ_NAME_MAX)
	{
		an_errf(err, errlen, "time zone name is %zu bytes long: %s; %s", len, AN_TZ_RULE,
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
			an_errf(err, errlen, "time zone '%.*s' is not an IANA zone name (position %zu): %s; %s",
					(int) len, name, i + 1, AN_TZ_RULE, AN_TZ_LIST_HINT);
			return AN_E_INPUT;
		}
	}
	if (len >= 8 && memcmp(name, "SystemV/", 8) == 0)
		goto icu_only;
	for (int i = 0; icu_only_names[i] != NULL; i++)
		if (strlen(icu_only_names[i]) == len && memcmp(icu_only_names[i], name, len) == 0)
			goto icu_only;
	return AN_OK;

icu_only:
	an_errf(err, errlen, "time zone '%.*s' is not an IANA zone name: write the zone by its Area/Location name, such as America/Los_Angeles; %s",
			(int) len, name, AN_TZ_LIST_HINT);
	return AN_E_INPUT;
}

#ifdef AN_WITH_ICU

#include <unicode/ucal.h>
#include <unicode/uenum.h>
#include <unicode/uversion.h>

/* Changes kept per zone before the window starts afresh. */
#define WINDOW_MAX 2048
/* Farther than this from the window, start afresh instead of growing it. */
#define FAR_MS (INT64_C(60) * 366 * 86400000)

typedef struct change
{
	int64_t		at;              /* ms: the offset below holds from here on */
	int64_t		offset;
} change;

struct an_tz
{
	char		name[AN_TZ_NAME_MAX + 1];
	UCalendar  *cal;
	/*
	 * The window: every change of offset in (lo, hi] is in ch[0..n), in
	 * order, and lo_offset holds at lo.  lo is AN_TZ_NEVER_BEFORE once ICU
	 * said there is nothing earlier, hi AN_TZ_NEVER_AFTER once there is
	 * nothing later.
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

static an_error
icu_fail(UErrorCode status, const char *what, const an_tz *tz, char *err, size_t errlen)
{
	an_errf(err, errlen, "time zone '%s': ICU failed to %s: %s", tz ? tz->name : "", what,
			u_errorName(status));
	return status == U_MEMORY_ALLOCATION_ERROR ? AN_E_NOMEM : AN_E_INTERNAL;
}

/* The total offset (standard + daylight) in force at instant t. */
static an_error
offset_at(an_tz *tz, int64_t t, int64_t *offset, char *err, size_t errlen)
{
	UErrorCode	status = U_ZERO_ERROR;
	int32_t		zone,
				dst;

	ucal_setMillis(tz->cal, (UDate) t, &status);
	zone = ucal_get(tz->cal, UCAL_ZONE_OFFSET, &status);
	dst = ucal_get(tz->cal, UCAL_DST_OFFSET, &status);
	if (U_FAILURE(status))
		return icu_fail(status, "read an offset", tz, err, errlen);
	*offset = (int64_t) zone + dst;
	return AN_OK;
}

/*
 * The next (dir > 0, strictly after t) or previous (strictly before t)
 * transition ICU knows; 0 when there is none.
 */
static int
transition(an_tz *tz, int64_t t, int dir, int64_t *at, an_error *rc, char *err, size_t errlen)
{
	UErrorCode	status = U_ZERO_ERROR;
	UDate		d = 0;
	UBool		found;

	*rc = AN_OK;
	ucal_setMillis(tz->cal, (UDate) t, &status);
	found = ucal_getTimeZoneTransitionDate(tz->cal, dir > 0 ? UCAL_TZ_TRANSITION_NEXT
										   : UCAL_TZ_TRANSITION_PREVIOUS, &d, &status);
	if (U_FAILURE(status))
	{
		*rc = icu_fail(status, "find a transition", tz, err, errlen);
		return 0;
	}
	if (!found)
		return 0;
	*at = (int64_t) d;
	return 1;
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
window_reset(an_tz *tz, int64_t t, char *err, size_t errlen)
{
	tz->n = 0;
	tz->lo = tz->hi = t;
	return offset_at(tz, t, &tz->lo_offset, err, errlen);
}

static int64_t
offset_at_hi(const an_tz *tz)
{
	return tz->n ? tz->ch[tz->n - 1].offset : tz->lo_offset;
}

/* Grow the window to the right until it holds a change after t (or the end). */
static an_error
grow_right(an_tz *tz, int64_t t, char *err, size_t errlen)
{
	while (tz->hi != AN_TZ_NEVER_AFTER && (tz->n == 0 || tz->ch[tz->n - 1].at <= t))
	{
		int64_t		at,
					off;
		an_error	rc;

		if (!transition(tz, tz->hi, 1, &at, &rc, err, errlen))
		{
			if (rc != AN_OK)
				return rc;
			tz->hi = AN_TZ_NEVER_AFTER;
			break;
		}
		if ((rc = offset_at(tz, at, &off, err, errlen)) != AN_OK)
			return rc;
		if (off != offset_at_hi(tz))
		{
			/* Full: start afresh at t; an_tz_span_at grows it again. */
			if (tz->n >= WINDOW_MAX)
				return window_reset(tz, t, err, errlen);
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

/* Grow the window to the left until it holds a change at or before t (or the start). */
static an_error
grow_left(an_tz *tz, int64_t t, char *err, size_t errlen)
{
	while (tz->lo != AN_TZ_NEVER_BEFORE && (tz->n == 0 || tz->ch[0].at > t))
	{
		int64_t		at,
					before;
		an_error	rc;

		if (!transition(tz, tz->lo, -1, &at, &rc, err, errlen))
		{
			if (rc != AN_OK)
				return rc;
			tz->lo = AN_TZ_NEVER_BEFORE;
			break;
		}
		/* The change at `at` takes the zone from `before` to what held at lo. */
		if ((rc = offset_at(tz, at - 1, &before, err, errlen)) != AN_OK)
			return rc;
		if (before != tz->lo_offset)
		{
			/* Full: start afresh at t; an_tz_span_at grows it again. */
			if (tz->n >= WINDOW_MAX)
				return window_reset(tz, t, err, errlen);
			if (reserve(tz, 1) != AN_OK)
				return AN_E_NOMEM;
			memmove(tz->ch + 1, tz->ch, tz->n * sizeof(*tz->ch));
			tz->ch[0].at = at;
			tz->ch[0].offset = tz->lo_offset;
			tz->n++;
		}
		tz->lo = at - 1;
		tz->lo_offset = before;
	}
	return AN_OK;
}

an_error
an_tz_span_at(an_tz *tz, int64_t t, an_tz_span *span, char *err, size_t errlen)
{
	an_error	rc;
	size_t		a,
				b;

	/* Far from the window: a fresh one, rather than decades of changes. */
	if ((tz->lo != AN_TZ_NEVER_BEFORE && t < tz->lo && tz->lo - t > FAR_MS) ||
		(tz->hi != AN_TZ_NEVER_AFTER && t > tz->hi && t - tz->hi > FAR_MS))
	{
		if ((rc = window_reset(tz, t, err, errlen)) != AN_OK)
			return rc;
	}
	/*
	 * Both sides: a change after t and one at or before t, or the ends.  A
	 * side that had to start afresh leaves the other to do again, once.
	 */
	for (int pass = 0; pass < 3; pass++)
	{
		if ((rc = grow_right(tz, t, err, errlen)) != AN_OK ||
			(rc = grow_left(tz, t, err, errlen)) != AN_OK)
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
		ucal_close(tz->cal);
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

/* ICU's tz version, for messages; "" when it cannot say. */
static const char *
tz_version(void)
{
	UErrorCode	status = U_ZERO_ERROR;
	const char *v = ucal_getTZDataVersion(&status);

	return U_SUCCESS(status) && v != NULL ? v : "";
}

/* Is name (ASCII, checked) a zone of ICU's tz database? */
static int
icu_knows(const UChar *id, int32_t len)
{
	UChar		canon[128];
	UBool		system = 0;
	UErrorCode	status = U_ZERO_ERROR;

	ucal_getCanonicalTimeZoneID(id, len, canon, 128, &system, &status);
	/* Custom ids ("GMT+05:00") are canonical but not system zones. */
	return U_SUCCESS(status) && system;
}

an_error
an_tz_find(an_tz_cache *cache, const char *name, size_t len, an_tz **out,
		   char *err, size_t errlen)
{
	UChar		id[AN_TZ_NAME_MAX];
	UErrorCode	status = U_ZERO_ERROR;
	an_tz	   *tz;
	an_error	rc;

	for (tz = cache->zones; tz != NULL; tz = tz->next)
		if (strlen(tz->name) == len && memcmp(tz->name, name, len) == 0)
		{
			*out = tz;
			return AN_OK;
		}
	if ((rc = check_name(name, len, err, errlen)) != AN_OK)
		return rc;
	for (size_t i = 0; i < len; i++)
		id[i] = (UChar) name[i];
	if (!icu_knows(id, (int32_t) len))
	{
		an_errf(err, errlen, "time zone '%.*s' is not in the time-zone database (names are case-sensitive): %s",
				(int) len, name, AN_TZ_LIST_HINT);
		return AN_E_INPUT;
	}
	if ((tz = calloc(1, sizeof(*tz))) == NULL)
		return AN_E_NOMEM;
	memcpy(tz->name, name, len);
	tz->cal = ucal_open(id, (int32_t) len, "en_US_POSIX", UCAL_GREGORIAN, &status);
	if (U_FAILURE(status))
	{
		rc = icu_fail(status, "open the zone", tz, err, errlen);
		ucal_close(tz->cal);
		free(tz);
		return rc;
	}
	if ((rc = window_reset(tz, INT64_C(1700000000000), err, errlen)) != AN_OK)
	{
		ucal_close(tz->cal);
		free(tz);
		return rc;
	}
	tz->next = cache->zones;
	cache->zones = tz;
	*out = tz;
	return AN_OK;
}

an_error
an_tz_data_version(char *out, size_t outlen, char *err, size_t errlen)
{
	(void) err;
	(void) errlen;
	snprintf(out, outlen, "%s", tz_version());
	return AN_OK;
}

int
an_tz_each_name(int (*fn) (void *arg, const char *name), void *arg, char *err, size_t errlen)
{
	UErrorCode	status = U_ZERO_ERROR;
	UEnumeration *en = ucal_openTimeZoneIDEnumeration(UCAL_ZONE_TYPE_ANY, NULL, NULL, &status);
	const char *name;
	int32_t		len;
	int			rc = 0;

	if (U_FAILURE(status))
	{
		icu_fail(status, "list the zones", NULL, err, errlen);
		return -1;
	}
	while (rc == 0 && (name = uenum_next(en, &len, &status)) != NULL)
		if (check_name(name, (size_t) len, NULL, 0) == AN_OK)
			rc = fn(arg, name);
	if (rc == 0 && U_FAILURE(status))
	{
		icu_fail(status, "list the zones", NULL, err, errlen);
		rc = -1;
	}
	uenum_close(en);
	return rc;
}

#else							/* !AN_WITH_ICU */

#define NO_ICU "time zones need ICU, and this build of anarchon was made without it: install libicu-dev and build again (configure finds it)"

struct an_tz
{
	char		name[1];
};

struct an_tz_cache
{
	int			unused;
};

an_tz_cache *
an_tz_cache_new(void)
{
	return calloc(1, sizeof(an_tz_cache));
}

void
an_tz_cache_free(an_tz_cache *cache)
{
	free(cache);
}

an_error
an_tz_find(an_tz_cache *cache, const char *name, size_t len, an_tz **out,
		   char *err, size_t errlen)
{
	an_error	rc;

	(void) cache;
	*out = NULL;
	if ((rc = check_name(name, len, err, errlen)) != AN_OK)
		return rc;
	an_errf(err, errlen, "time zone '%.*s': %s", (int) len, name, NO_ICU);
	return AN_E_UNSUPPORTED;
}

const char *
an_tz_name(const an_tz *tz)
{
	return tz->name;
}

an_error
an_tz_span_at(an_tz *tz, int64_t t, an_tz_span *span, char *err, size_t errlen)
{
	(void) tz;
	(void) t;
	(void) span;
	an_errf(err, errlen, "%s", NO_ICU);
	return AN_E_UNSUPPORTED;
}

an_error
an_tz_data_version(char *out, size_t outlen, char *err, size_t errlen)
{
	if (outlen > 0)
		out[0] = '\0';
	an_errf(err, errlen, "%s", NO_ICU);
	return AN_E_UNSUPPORTED;
}

int
an_tz_each_name(int (*fn) (void *arg, const char *name), void *arg, char *err, size_t errlen)
{
	(void) fn;
	(void) arg;
	an_errf(err, errlen, "%s", NO_ICU);
	return -1;
}

#endif							/* AN_WITH_ICU */
