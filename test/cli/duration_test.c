/*
 * duration_test.c — the table test of core/duration.c: each duration and
 * the words a message shows for it.  Prints "ok" or the rows that differ.
 */
#include <stdio.h>
#include <string.h>

#include "duration.h"

static const struct
{
	int64_t		ms;
	const char *text;
}			rows[] = {
	{INT64_C(31536000000), "1 year (31536000000 ms)"},
	{INT64_C(63072000000), "2 years (63072000000 ms)"},
	{INT64_C(31536000000) + 86400000 * 2 + 5000, "1 year 2 d (31708805000 ms)"},
	{2000, "2 s (2000 ms)"},
	{5400000, "1 h 30 min (5400000 ms)"},
	{3600000 + 5000, "1 h (3605000 ms)"},
	{30000, "30 s (30000 ms)"},
	{60000, "1 min (60000 ms)"},
	{90500, "1 min 30 s (90500 ms)"},
	{1500, "1 s 500 ms (1500 ms)"},
	{250, "250 ms"},
	{1, "1 ms"},
	{0, "0 s (0 ms)"},
	{-2000, "-2 s (-2000 ms)"},
	{-999, "-999 ms"},
	{86400000, "1 d (86400000 ms)"},
	{INT64_MAX, "292471208 years 247 d (9223372036854775807 ms)"},
	{INT64_MIN, "-292471208 years 247 d (-9223372036854775808 ms)"},
};

int
main(void)
{
	int			bad = 0;
	char		out[AN_DURATION_MAX];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
	{
		an_duration_text(rows[i].ms, out, sizeof(out));
		if (strcmp(out, rows[i].text) != 0)
		{
			printf("%lld: got \"%s\", want \"%s\"\n", (long long) rows[i].ms, out, rows[i].text);
			bad++;
		}
	}
	/* A short buffer is cut, never overrun. */
	an_duration_text(INT64_C(31536000000), out, 8);
	if (strcmp(out, "1 year ") != 0)
	{
		printf("cut to 8 bytes: got \"%s\"\n", out);
		bad++;
	}
	an_duration_words(5400000, out, sizeof(out));
	if (strcmp(out, "1 h 30 min") != 0)
	{
		printf("words of 5400000: got \"%s\"\n", out);
		bad++;
	}
	if (bad == 0)
		printf("ok\n");
	return bad != 0;
}
