/*
 * duration.c — a length of time in words (duration.h).
 *
 * A year is 365 days, the length AN_LEASE_MS_MAX calls a year; no month,
 * whose length varies.  Two units are enough to weigh a duration, and the
 * exact milliseconds follow them in an_duration_text.
 */
#include <stdio.h>
#include <string.h>

#include "duration.h"

static const struct
{
	int64_t		ms;
	const char *one;
	const char *many;
}			units[] = {
	{INT64_C(31536000000), "year", "years"},
	{86400000, "d", "d"},
	{3600000, "h", "h"},
	{60000, "min", "min"},
	{1000, "s", "s"},
	{1, "ms", "ms"},
};

#define N_UNITS (sizeof(units) / sizeof(units[0]))

void
an_duration_words(int64_t ms, char *out, size_t outlen)
{
	uint64_t	left;
	size_t		n = 0;
	int			said = 0;

	if (outlen == 0)
		return;
	out[0] = '\0';
	if (ms == 0)
	{
		snprintf(out, outlen, "0 s");
		return;
	}
	if (ms < 0)
		n += (size_t) snprintf(out, outlen, "-");
	/* In unsigned arithmetic, so that INT64_MIN has a magnitude. */
	left = ms < 0 ? (uint64_t) 0 - (uint64_t) ms : (uint64_t) ms;
	for (size_t i = 0; i < N_UNITS && said < 2 && left > 0 && n < outlen; i++)
	{
		uint64_t	count = left / (uint64_t) units[i].ms;

		if (count == 0)
		{
			/* Two units are adjacent ones: "1 h 5 s" would read as a typo. */
			if (said)
				break;
			continue;
		}
		left -= count * (uint64_t) units[i].ms;
		n += (size_t) snprintf(out + n, outlen - n, "%s%llu %s", said ? " " : "",
							   (unsigned long long) count, count == 1 ? units[i].one : units[i].many);
		said++;
	}
}

void
an_duration_text(int64_t ms, char *out, size_t outlen)
{
	size_t		n;

	an_duration_words(ms, out, outlen);
	if (ms > -1000 && ms < 1000 && ms != 0)
		return;					/* "250 ms" says it all */
	n = strlen(out);
	if (n < outlen)
		snprintf(out + n, outlen - n, " (%lld ms)", (long long) ms);
}
