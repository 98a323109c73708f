/*
 * times.c — times on the command line: milliseconds since 1970 as the
 * databases take them, RFC 3339 as people and `date --iso-8601=seconds`
 * write them, or `now`; and RFC 3339 in UTC on output.
 *
 * An RFC 3339 time must carry its offset (Z or ±HH:MM): a time without one
 * would be read in some zone the reader did not choose, and a slot an hour
 * off is a slot of another run.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

int64_t
an_cli_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar. */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t		era,
				yoe,
				doy,
				doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* n digits at *p into *out; advances *p. */
static int
digits(const char **p, int n, int *out)
{
	int			v = 0;

	for (int i = 0; i < n; i++)
	{
		if (!isdigit((unsigned char) (*p)[i]))
			return 0;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return 1;
}

static int
parse_rfc3339(const char *s, int64_t *ms)
{
	int			y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	int64_t		frac = 0;
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	if (!digits(&s, 4, &y) || *s++ != '-' || !digits(&s, 2, &mo) || *s++ != '-' ||
		!digits(&s, 2, &d) || (*s != 'T' && *s != 't' && *s != ' ') ||
		(s++, !digits(&s, 2, &h)) || *s++ != ':' || !digits(&s, 2, &mi) || *s++ != ':' ||
		!digits(&s, 2, &sec))
		return 0;
	if (*s == '.')
	{
		int			n = 0;

		for (s++; isdigit((unsigned char) *s); s++, n++)
			if (n < 3)
				frac = frac * 10 + (*s - '0');
		if (n == 0)
			return 0;
		for (; n < 3; n++)
			frac *= 10;
	}
	if (*s == 'Z' || *s == 'z')
		s++;
	else if (*s == '+' || *s == '-')
	{
		sign = (*s++ == '-') ? -1 : 1;
		if (!digits(&s, 2, &oh) || *s++ != ':' || !digits(&s, 2, &om) || oh > 23 || om > 59)
			return 0;
	}
	else
		return 0;
	if (*s != '\0' || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
		(mo == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))) ||
		h > 23 || mi > 59 || sec > 59)
		return 0;
	*ms = ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec) -
		   (int64_t) sign * (oh * 3600 + om * 60)) * 1000 + frac;
	return 1;
}

int
an_cli_parse_time(const char *text, int64_t *ms, an_err *err)
{
	char	   *end;
	long long	v;

	if (strcmp(text, "now") == 0)
	{
		*ms = an_cli_now_ms();
		return AN_OK;
	}
	if (isdigit((unsigned char) text[0]) && strspn(text, "0123456789") == strlen(text))
	{
		errno = 0;
		v = strtoll(text, &end, 10);
		if (errno == 0 && *end == '\0')
		{
			*ms = v;
			return AN_OK;
		}
	}
	if (parse_rfc3339(text, ms))
		return AN_OK;
	an_errf(err, "\"%.64s\" is not a time: give milliseconds since 1970 (1764842400000),"
			" an RFC 3339 time with its offset (2025-12-04T10:00:00Z, 2025-12-04T11:00:00+01:00) or now",
			text);
	return AN_E_INPUT;
}

void
an_cli_format_time(int64_t ms, char *out, size_t outlen)
{
	time_t		secs = (time_t) (ms / 1000);
	struct tm	tm;
	size_t		n;

	gmtime_r(&secs, &tm);
	n = strftime(out, outlen, "%Y-%m-%dT%H:%M:%S", &tm);
	if (ms % 1000)
		snprintf(out + n, outlen - n, ".%03dZ", (int) (ms % 1000));
	else
		snprintf(out + n, outlen - n, "Z");
}

int64_t
an_cli_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
