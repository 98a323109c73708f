/*
 * tz_system.cc — the time-zone source of SQLite and the command (see
 * tz_source.h): the system's tz database, the TZif files under $TZDIR (else
 * /usr/share/zoneinfo), read by cctz (libcctz, Debian's package of Google's
 * time-zone library).
 *
 * Why cctz: the files end with a POSIX TZ rule that gives every change after
 * the last one written out, and that rule engine is what we must not write by
 * hand; glibc's localtime_r works only through the process-wide TZ variable,
 * which a library loaded into someone else's process must not change.  GLib's
 * GTimeZone was the other candidate: against Python's zoneinfo on the same
 * files (every zone, 1970-2100), GLib 2.74 gives Europe/Dublin (whose rule has
 * a negative daylight saving) an hour too much from 2038 on and freezes every
 * zone after 2999, while cctz agrees with zoneinfo everywhere.
 *
 * cctz is C++: this file is the only one, and no exception leaves it (each
 * entry point catches everything and answers with an an_error).  cctz keeps
 * each zone it has loaded for the life of the process, shared by all threads;
 * an an_tz_src is a handle to it.
 */
#include <cctz/time_zone.h>

#include <chrono>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include <dirent.h>
#include <sys/stat.h>

extern "C"
{
#include "tz_source.h"
}

struct an_tz_src
{
	cctz::time_zone zone;
};

namespace
{

/*
 * 400 Gregorian years: the calendar, weekdays included, repeats after it, and
 * so does every zone's rule for the years past its last written-out change.
 */
const std::int64_t CYCLE_S = INT64_C(146097) * 86400;

typedef cctz::time_point<cctz::seconds> instant;

instant
at_second(std::int64_t t)
{
	return instant(cctz::seconds(t));
}

std::int64_t
second_of(const instant &tp)
{
	return tp.time_since_epoch().count();
}

/* $TZDIR when set and not empty (as cctz reads it), else the default. */
std::string
tzdir()
{
	const char *d = std::getenv("TZDIR");

	return d != nullptr && d[0] != '\0' ? d : "/usr/share/zoneinfo";
}

/* Is path a regular file (after links) that starts as a TZif file does? */
bool
is_tzif(const std::string &path)
{
	struct stat st;
	char		magic[4];
	FILE	   *f;
	bool		yes;

	if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	if ((f = std::fopen(path.c_str(), "rb")) == nullptr)
		return false;
	yes = std::fread(magic, 1, 4, f) == 4 && std::memcmp(magic, "TZif", 4) == 0;
	std::fclose(f);
	return yes;
}

/* The first change strictly after t that cctz reports, as a second. */
bool
cctz_next(const cctz::time_zone &zone, std::int64_t t, std::int64_t *at)
{
	cctz::time_zone::civil_transition trans;

	if (!zone.next_transition(at_second(t), &trans))
		return false;
	*at = second_of(zone.lookup(trans.to).trans);
	return true;
}

int
offset_of(const cctz::time_zone &zone, std::int64_t t)
{
	return zone.lookup(at_second(t)).offset;
}

/* Walk dir (name prefix rel) calling fn on each TZif file; depth-limited. */
int
walk(const std::string &dir, const std::string &rel, int depth,
	 int (*fn) (void *arg, const char *name), void *arg)
{
	DIR		   *d = opendir(dir.c_str());
	struct dirent *e;
	int			rc = 0;

	if (d == nullptr)
		return 0;
	while (rc == 0 && (e = readdir(d)) != nullptr)
	{
		std::string name = e->d_name;
		std::string path = dir + "/" + name;
		std::string key = rel.empty() ? name : rel + "/" + name;
		struct stat st;

		/* Hidden files, and the copies posix/ and right/ at the top. */
		if (name[0] == '.' || (rel.empty() && (name == "posix" || name == "right")))
			continue;
		if (stat(path.c_str(), &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
		{
			if (depth < 8)
				rc = walk(path, key, depth + 1, fn, arg);
		}
		else if (is_tzif(path))
			rc = fn(arg, key.c_str());
	}
	closedir(d);
	return rc;
}

}								/* namespace */

extern "C" an_error
an_tz_src_open(const char *name, an_tz_src **src, an_err *err)
{
	*src = nullptr;
	try
	{
		std::string dir = tzdir();
		an_tz_src  *s;

		/*
		 * The file must exist in the database: cctz alone would also take
		 * "UTC" without one, and fall back to UTC for a name it cannot load.
		 */
		if (!is_tzif(dir + "/" + name))
		{
			an_errf(err, "time zone '%s' is not in the time-zone database %s (names are case-sensitive): " AN_TZ_UNKNOWN_ADVICE,
					name, dir.c_str());
			return AN_E_INPUT;
		}
		s = new an_tz_src;
		if (!cctz::load_time_zone(name, &s->zone))
		{
			delete s;
			an_errf(err, "time zone '%s': the file %s/%s could not be read as a TZif file",
					name, dir.c_str(), name);
			return AN_E_INPUT;
		}
		*src = s;
		return AN_OK;
	}
	catch (const std::bad_alloc &)
	{
		return AN_E_NOMEM;
	}
	catch (...)
	{
		an_errf(err, "time zone '%s': cctz failed to load it", name);
		return AN_E_INTERNAL;
	}
}

extern "C" void
an_tz_src_close(an_tz_src *src)
{
	delete src;
}

extern "C" an_error
an_tz_src_offset(an_tz_src *src, int64_t t, int64_t *offset, an_err *err)
{
	try
	{
		*offset = offset_of(src->zone, t);
		return AN_OK;
	}
	catch (...)
	{
		an_errf(err, "time zone: cctz failed to read an offset");
		return AN_E_INTERNAL;
	}
}

extern "C" an_error
an_tz_src_next(an_tz_src *src, int64_t t, int64_t *at, int *found, an_err *err)
{
	try
	{
		*found = 0;
		if (cctz_next(src->zone, t, at))
		{
			*found = 1;
			return AN_OK;
		}

		/*
		 * cctz writes the rule out 400 years past the last change of the
		 * file and reports nothing after that, though its offsets go on (it
		 * maps a later instant back by whole 400-year cycles).  Do the same
		 * for the changes: the first one after t is the first after t - k
		 * cycles, k cycles later, for the smallest k that lands inside what
		 * cctz wrote out.  Checked against the offsets: a zone without a
		 * rule (no daylight saving any more) changes no more, and the
		 * instant found there keeps its offset.
		 */
		for (int k = 1; k <= 40; k++)
		{
			std::int64_t u = t - k * CYCLE_S,
						a;

			if (cctz_next(src->zone, u, &a))
			{
				a += k * CYCLE_S;
				if (offset_of(src->zone, a - 1) != offset_of(src->zone, a))
				{
					*at = a;
					*found = 1;
				}
				break;
			}
		}
		return AN_OK;
	}
	catch (...)
	{
		an_errf(err, "time zone: cctz failed to find a transition");
		return AN_E_INTERNAL;
	}
}

extern "C" an_error
an_tz_src_version(char *out, size_t outlen, an_err *err)
{
	try
	{
		std::string dir = tzdir();
		char		v[64];

		an_tz_dir_version(dir.c_str(), v, sizeof(v));
		std::snprintf(out, outlen, "%s (%s)", v[0] != '\0' ? v : "unknown", dir.c_str());
		return AN_OK;
	}
	catch (...)
	{
		an_errf(err, "out of memory");
		return AN_E_NOMEM;
	}
}

extern "C" int
an_tz_src_each_name(int (*fn) (void *arg, const char *name), void *arg, an_err *err)
{
	try
	{
		std::string dir = tzdir();
		DIR		   *d = opendir(dir.c_str());

		if (d == nullptr)
		{
			an_errf(err, "could not open the time-zone database %s: %s", dir.c_str(),
					std::strerror(errno));
			return -1;
		}
		closedir(d);
		return walk(dir, "", 0, fn, arg);
	}
	catch (...)
	{
		an_errf(err, "out of memory listing the time zones");
		return -1;
	}
}
