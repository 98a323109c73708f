/*
 * schedule.c — the schedule parser: text to an_schedule (see schedule.h).
 *
 * A hand-written scanner over a bounded text, so that every refusal can name
 * the field, quote it and say what is allowed there.  The grammar follows
 * pg_cron's (Vixie cron's) so that a schedule a user already has in cron.job
 * means the same slots here; where Vixie cron silently accepts nonsense (an
 * empty range 5-2, a date that never exists) this parser refuses it instead,
 * because a schedule that never fires would make a fleet silently idle.
 *
 * A leading CRON_TZ=<zone> (or TZ=<zone>) names the schedule's time zone; the
 * zone is looked up in the host's cache (tz.h) and the rest parsed as usual.
 */
#include <stdio.h>
#include <string.h>

#include "schedule.h"

/* Longest field text quoted back in an error; longer ones are cut. */
#define QUOTE_MAX 40

/* A number longer than this many digits is refused before it can overflow. */
#define DIGITS_MAX 9

#define SYNTAX_HELP "a field is '*', a number, a range a-b, a step */n or a-b/n, or a list of those joined by ','"
#define SHAPE_HELP "a schedule is 5 cron fields (minute hour day-of-month month day-of-week), 6 with a leading seconds field, a macro (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly) or an interval such as '10 seconds' (units: seconds, minutes, hours, days)"

static const char *const month_names[] = {
	"jan", "feb", "mar", "apr", "may", "jun",
	"jul", "aug", "sep", "oct", "nov", "dec", NULL
};
static const char *const wday_names[] = {
	"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL
};

/* What one field of a cron expression may hold. */
typedef struct field_spec
{
	const char *what;
	int			lo;
	int			hi;
	const char *const *names;    /* names[i] means lo + i; NULL: numbers only */
	const char *names_help;      /* what else the field takes, for messages */
} field_spec;

/* The day of month's "$" is the whole field (parse_cron), never a value. */
#define MDAY_LAST_HELP "$ alone (the month's last day)"

enum
{
	F_SECOND, F_MINUTE, F_HOUR, F_MDAY, F_MONTH, F_WDAY, F_COUNT
};

static const field_spec fields[F_COUNT] = {
	{"second", 0, 59, NULL, NULL},
	{"minute", 0, 59, NULL, NULL},
	{"hour", 0, 23, NULL, NULL},
	{"day of month", 1, 31, NULL, MDAY_LAST_HELP},
	{"month", 1, 12, month_names, "jan-dec"},
	{"day of week", 0, 7, wday_names, "sun-sat; 0 and 7 are Sunday"},
};

static const struct
{
	const char *name;
	const char *cron;
}			macros[] = {
	{"yearly", "0 0 1 1 *"},
	{"annually", "0 0 1 1 *"},
	{"monthly", "0 0 1 * *"},
	{"weekly", "0 0 * * 0"},
	{"daily", "0 0 * * *"},
	{"midnight", "0 0 * * *"},
	{"hourly", "0 * * * *"},
	{NULL, NULL}
};

static const struct
{
	const char *name;
	int64_t		ms;
}			units[] = {
	{"second", 1000}, {"seconds", 1000},
	{"minute", 60000}, {"minutes", 60000},
	{"hour", 3600000}, {"hours", 3600000},
	{"day", 86400000}, {"days", 86400000},
	{NULL, 0}
};

/* The field being parsed, for error messages. */
typedef struct field_ctx
{
	const field_spec *spec;
	int			number;          /* 1-based, as the user counts */
	const char *text;
	size_t		len;
	an_err	   *err;
} field_ctx;

static int
is_space(char c)
{
	return c == ' ' || c == '\t';
}

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int
is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static char
lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char) (c - 'A' + 'a') : c;
}

/* Case-insensitive: do len bytes of s spell the NUL-terminated word? */
static int
word_is(const char *s, size_t len, const char *word)
{
	size_t		i;

	for (i = 0; i < len; i++)
		if (word[i] == '\0' || lower(s[i]) != word[i])
			return 0;
	return word[i] == '\0';
}

/* "schedule field 3 (day of month) '32': <detail>" */
static an_error
field_fail(const field_ctx *fc, const char *detail)
{
	int			cut = fc->len > QUOTE_MAX;

	an_errf(fc->err, "schedule field %d (%s) '%.*s%s': %s",
			fc->number, fc->spec->what, (int) (cut ? QUOTE_MAX : fc->len), fc->text,
			cut ? "..." : "", detail);
	return AN_E_INPUT;
}

/*
 * Read one value (a number or, where the field has them, a name) at *pos.
 * On success *pos is past it.
 */
static an_error
read_value(const field_ctx *fc, size_t *pos, int *value)
{
	const field_spec *sp = fc->spec;
	size_t		p = *pos;
	size_t		start = p;
	char		detail[AN_ERRMAX];

	if (p < fc->len && is_digit(fc->text[p]))
	{
		int			v = 0;

		while (p < fc->len && is_digit(fc->text[p]))
		{
			if (p - start >= DIGITS_MAX)
				return field_fail(fc, "number is too long");
			v = v * 10 + (fc->text[p] - '0');
			p++;
		}
		if (v < sp->lo || v > sp->hi)
		{
			if (sp->names_help != NULL)
				snprintf(detail, sizeof(detail), "%d is out of range, allowed %d-%d or %s",
						 v, sp->lo, sp->hi, sp->names_help);
			else
				snprintf(detail, sizeof(detail), "%d is out of range, allowed %d-%d",
						 v, sp->lo, sp->hi);
			return field_fail(fc, detail);
		}
		*value = v;
		*pos = p;
		return AN_OK;
	}
	if (p < fc->len && is_alpha(fc->text[p]))
	{
		while (p < fc->len && is_alpha(fc->text[p]))
			p++;
		for (int i = 0; sp->names != NULL && sp->names[i] != NULL; i++)
		{
			if (word_is(fc->text + start, p - start, sp->names[i]))
			{
				*value = sp->lo + i;
				*pos = p;
				return AN_OK;
			}
		}
		if (sp->names == NULL)
			snprintf(detail, sizeof(detail), "'%.*s' is not a number: allowed %d-%d%s%s",
					 (int) (p - start > QUOTE_MAX ? QUOTE_MAX : p - start),
					 fc->text + start, sp->lo, sp->hi,
					 sp->names_help != NULL ? " or " : "",
					 sp->names_help != NULL ? sp->names_help : "");
		else
			snprintf(detail, sizeof(detail), "'%.*s' is not a %s name: allowed %d-%d or %s",
					 (int) (p - start > QUOTE_MAX ? QUOTE_MAX : p - start),
					 fc->text + start, sp->what, sp->lo, sp->hi, sp->names_help);
		return field_fail(fc, detail);
	}
	if (p >= fc->len)
		snprintf(detail, sizeof(detail), "a value is missing at the end: %s", SYNTAX_HELP);
	else if (fc->text[p] == '$' && sp == &fields[F_MDAY])
		return field_fail(fc, "'$' (the month's last day) must be the whole field, "
						  "not part of a list, range or step");
	else
		snprintf(detail, sizeof(detail), "unexpected '%c' at position %zu: %s",
				 fc->text[p], p + 1, SYNTAX_HELP);
	return field_fail(fc, detail);
}

/* Read "/n" at *pos if present; *step stays 1 otherwise. */
static an_error
read_step(const field_ctx *fc, size_t *pos, int *step)
{
	size_t		p = *pos;
	int			v = 0;

	*step = 1;
	if (p >= fc->len || fc->text[p] != '/')
		return AN_OK;
	p++;
	if (p >= fc->len || !is_digit(fc->text[p]))
		return field_fail(fc, "a step '/' must be followed by a number of at least 1");
	while (p < fc->len && is_digit(fc->text[p]))
	{
		if (p - *pos > DIGITS_MAX)
			return field_fail(fc, "step is too long");
		v = v * 10 + (fc->text[p] - '0');
		p++;
	}
	if (v < 1)
		return field_fail(fc, "step must be at least 1");
	*step = v;
	*pos = p;
	return AN_OK;
}

/*
 * Parse one element of a list ('*', 'a', 'a-b', each with an optional
 * step) at *pos and set its bits.
 */
static an_error
parse_item(const field_ctx *fc, size_t *pos, uint64_t *bits)
{
	const field_spec *sp = fc->spec;
	size_t		p = *pos;
	int			from,
				to,
				step;
	an_error	rc;

	if (p < fc->len && fc->text[p] == '*')
	{
		from = sp->lo;
		to = sp->hi;
		p++;
	}
	else
	{
		if ((rc = read_value(fc, &p, &from)) != AN_OK)
			return rc;
		to = from;
		if (p < fc->len && fc->text[p] == '-')
		{
			p++;
			if ((rc = read_value(fc, &p, &to)) != AN_OK)
				return rc;
			if (to < from)
			{
				char		detail[AN_ERRMAX];

				snprintf(detail, sizeof(detail),
						 "range %d-%d runs backwards: write the smaller value first", from, to);
				return field_fail(fc, detail);
			}
		}
		else if (p < fc->len && fc->text[p] == '/')
			return field_fail(fc, "a step needs '*' or a range before it, such as */15 or 5-59/15");
	}
	if ((rc = read_step(fc, &p, &step)) != AN_OK)
		return rc;
	for (int v = from; v <= to; v += step)
		*bits |= UINT64_C(1) << v;
	*pos = p;
	return AN_OK;
}

/* Parse a whole field: a comma list of items. */
static an_error
parse_field(const field_ctx *fc, uint64_t *bits)
{
	size_t		p = 0;
	an_error	rc;

	*bits = 0;
	for (;;)
	{
		if (p >= fc->len || fc->text[p] == ',')
			return field_fail(fc, "a list has an empty element: " SYNTAX_HELP);
		if ((rc = parse_item(fc, &p, bits)) != AN_OK)
			return rc;
		if (p >= fc->len)
			return AN_OK;
		if (fc->text[p] != ',')
		{
			char		detail[AN_ERRMAX];

			snprintf(detail, sizeof(detail), "unexpected '%c' at position %zu: %s",
					 fc->text[p], p + 1, SYNTAX_HELP);
			return field_fail(fc, detail);
		}
		p++;
	}
}

/* Days in month mo of a leap year: the most a date in that month can have. */
static int
max_mday(int mo)
{
	static const int days[13] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	return days[mo];
}

/*
 * Refuse a day-of-month/month pair that no calendar has (30 February): the
 * schedule would never fire.  When day of week alone can satisfy a day (the
 * "either" rule), every month has such days, so only the AND rule (or a
 * day of month alone) can be impossible.
 */
static an_error
check_possible(const an_schedule *s, const field_ctx *mday_fc, const field_ctx *month_fc)
{
	if (s->either_day || s->mday_last)
		return AN_OK;
	for (int mo = 1; mo <= 12; mo++)
	{
		if (!(s->months & (1u << mo)))
			continue;
		for (int d = 1; d <= max_mday(mo); d++)
			if (s->mdays & (UINT32_C(1) << d))
				return AN_OK;
	}
	an_errf(mday_fc->err,
			"schedule field %d (day of month) '%.*s' with field %d (month) '%.*s': no such date, the schedule would never run",
			mday_fc->number, (int) (mday_fc->len > QUOTE_MAX ? QUOTE_MAX : mday_fc->len), mday_fc->text,
			month_fc->number, (int) (month_fc->len > QUOTE_MAX ? QUOTE_MAX : month_fc->len), month_fc->text);
	return AN_E_INPUT;
}

/* Five or six whitespace-separated fields. */
static an_error
parse_cron(const char *text, size_t len, an_schedule *s, an_err *err)
{
	const char *start[F_COUNT + 1];
	size_t		flen[F_COUNT + 1];
	int			n = 0;
	size_t		p = 0;
	field_ctx	fc[F_COUNT];
	int			first;
	uint64_t	bits[F_COUNT];
	int			star[F_COUNT];

	while (p < len)
	{
		size_t		q = p;

		while (q < len && !is_space(text[q]))
			q++;
		if (n == F_COUNT)
		{
			n++;
			break;
		}
		start[n] = text + p;
		flen[n] = q - p;
		n++;
		while (q < len && is_space(text[q]))
			q++;
		p = q;
	}
	if (n != 5 && n != 6)
	{
		if (n > 6)
			an_errf(err, "schedule has more than 6 fields: %s", SHAPE_HELP);
		else
			an_errf(err, "schedule has %d field%s: %s", n, n == 1 ? "" : "s", SHAPE_HELP);
		return AN_E_INPUT;
	}

	/* Without a seconds field the schedule runs at second 0. */
	first = n == 6 ? F_SECOND : F_MINUTE;
	bits[F_SECOND] = 1;
	star[F_SECOND] = 0;
	memset(s, 0, sizeof(*s));
	for (int f = first; f < F_COUNT; f++)
	{
		an_error	rc;

		fc[f].spec = &fields[f];
		fc[f].number = f - first + 1;
		fc[f].text = start[f - first];
		fc[f].len = flen[f - first];
		fc[f].err = err;
		star[f] = fc[f].text[0] == '*';
		if (f == F_MDAY && fc[f].len == 1 && fc[f].text[0] == '$')
		{
			s->mday_last = 1;
			bits[f] = 0;
			continue;
		}
		if ((rc = parse_field(&fc[f], &bits[f])) != AN_OK)
			return rc;
	}

	s->kind = AN_SCHEDULE_CRON;
	s->seconds = bits[F_SECOND];
	s->minutes = bits[F_MINUTE];
	s->hours = (uint32_t) bits[F_HOUR];
	s->mdays = (uint32_t) bits[F_MDAY];
	s->months = (uint16_t) bits[F_MONTH];
	/* Sunday is both 0 and 7. */
	s->wdays = (uint8_t) ((bits[F_WDAY] & 0x7f) | ((bits[F_WDAY] >> 7) & 1));

	/*
	 * Cron's rule (Vixie cron, and so pg_cron): a field that starts with '*'
	 * does not restrict the day, so both must match; when both are
	 * restricted, either one matching is enough.
	 */
	s->either_day = !star[F_MDAY] && !star[F_WDAY];
	/* Vixie cron's test for a job at a fixed time of day (schedule.h). */
	s->fixed_time = !star[F_SECOND] && !star[F_MINUTE] && !star[F_HOUR];
	return check_possible(s, &fc[F_MDAY], &fc[F_MONTH]);
}

/*
 * "N unit" with N >= 1: text has been trimmed and starts with a digit.
 * Returns 0 when the text is not shaped like an interval at all (so the
 * caller tries cron), 1 when it is (then *rc says whether it parsed).
 */
static int
parse_interval(const char *text, size_t len, an_schedule *s, an_error *rc,
			   an_err *err)
{
	size_t		p = 0;
	int64_t		n = 0;
	size_t		word;

	while (p < len && is_digit(text[p]))
		p++;
	word = p;
	while (word < len && is_space(text[word]))
		word++;
	if (word >= len || !is_alpha(text[word]))
		return 0;
	for (size_t q = word; q < len; q++)
		if (!is_alpha(text[q]))
			return 0;

	*rc = AN_E_INPUT;
	if (p > 12)
	{
		an_errf(err, "interval '%.*s': the number is too long; allowed 1 second to 365 days",
				(int) len, text);
		return 1;
	}
	for (size_t q = 0; q < p; q++)
		n = n * 10 + (text[q] - '0');
	for (int u = 0; units[u].name != NULL; u++)
	{
		if (!word_is(text + word, len - word, units[u].name))
			continue;
		if (n < 1 || n > AN_SCHEDULE_INTERVAL_MAX / units[u].ms)
		{
			an_errf(err, "interval '%.*s' is out of range: allowed 1 second to 365 days",
					(int) len, text);
			return 1;
		}
		memset(s, 0, sizeof(*s));
		s->kind = AN_SCHEDULE_INTERVAL;
		s->interval_ms = n * units[u].ms;
		*rc = AN_OK;
		return 1;
	}
	an_errf(err, "interval '%.*s': unknown unit '%.*s', allowed seconds, minutes, hours or days",
			(int) len, text, (int) (len - word), text + word);
	return 1;
}

static an_error
parse_macro(const char *text, size_t len, an_schedule *s, an_err *err)
{
	for (int i = 0; macros[i].name != NULL; i++)
		if (word_is(text + 1, len - 1, macros[i].name))
			return parse_cron(macros[i].cron, strlen(macros[i].cron), s, err);
	if (word_is(text + 1, len - 1, "reboot"))
		an_errf(err, "schedule '@reboot' has no scheduled times, so it has no slots: %s",
				SHAPE_HELP);
	else
		an_errf(err, "schedule '%.*s' is not a known macro: %s",
				(int) len, text, SHAPE_HELP);
	return AN_E_INPUT;
}

#define ZONE_HELP "write CRON_TZ=<IANA zone> and then the schedule, e.g. 'CRON_TZ=Europe/Berlin 0 3 * * *'"

/*
 * A leading "CRON_TZ=<zone> " or "TZ=<zone> ": find the zone and move text
 * past it.  Anything else shaped like NAME=VALUE is refused by name, since no
 * other cron variable means anything to a slot.
 */
static an_error
parse_zone(const char **text, size_t *len, an_tz_cache *zones, an_tz **tz,
		   an_err *err)
{
	const char *t = *text;
	size_t		n = *len,
				word = 0,
				skip;
	an_error	rc;

	*tz = NULL;
	while (word < n && !is_space(t[word]) && t[word] != '=')
		word++;
	if (word >= n || t[word] != '=' || !is_alpha(t[0]))
		return AN_OK;
	if (word == 7 && memcmp(t, "CRON_TZ", 7) == 0)
		skip = 8;
	else if (word == 2 && memcmp(t, "TZ", 2) == 0)
		skip = 3;
	else
	{
		an_errf(err, "schedule starts with '%.*s=': the only setting a schedule may start with is its time zone, CRON_TZ=<zone> or TZ=<zone> (upper case); %s",
				(int) (word > QUOTE_MAX ? QUOTE_MAX : word), t, ZONE_HELP);
		return AN_E_INPUT;
	}
	word = skip;
	while (word < n && !is_space(t[word]))
		word++;
	if (word == skip)
	{
		an_errf(err, "schedule names an empty time zone ('%.*s' with nothing after the '='): %s",
				(int) skip, t, ZONE_HELP);
		return AN_E_INPUT;
	}
	if (zones == NULL)
	{
		an_errf(err, "time zones are not available here");
		return AN_E_INTERNAL;
	}
	if ((rc = an_tz_find(zones, t + skip, word - skip, tz, err)) != AN_OK)
		return rc;
	while (word < n && is_space(t[word]))
		word++;
	if (word == n)
	{
		an_errf(err, "schedule has a time zone (%s) and nothing after it: %s",
				an_tz_name(*tz), ZONE_HELP);
		return AN_E_INPUT;
	}
	*text = t + word;
	*len = n - word;
	return AN_OK;
}

an_error
an_schedule_parse(const char *text, size_t len, an_tz_cache *zones, an_schedule *s,
				  an_err *err)
{
	an_error	rc;
	an_tz	   *tz;

	if (text == NULL)
		len = 0;
	/* Only printable ASCII, so every quote in a message is safe to show. */
	for (size_t i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) text[i];

		if ((c < 0x20 || c > 0x7e) && c != '\t')
		{
			an_errf(err, "schedule has byte 0x%02x at position %zu: only printable ASCII is allowed",
					c, i + 1);
			return AN_E_INPUT;
		}
	}
	while (len > 0 && is_space(text[0]))
	{
		text++;
		len--;
	}
	while (len > 0 && is_space(text[len - 1]))
		len--;
	if ((rc = parse_zone(&text, &len, zones, &tz, err)) != AN_OK)
		return rc;
	if (len > AN_SCHEDULE_TEXT_MAX)
	{
		an_errf(err, "schedule is %zu bytes long, at most %d are allowed: %s",
				len, AN_SCHEDULE_TEXT_MAX, SHAPE_HELP);
		return AN_E_INPUT;
	}
	if (len == 0)
	{
		an_errf(err, "schedule is empty: %s", SHAPE_HELP);
		return AN_E_INPUT;
	}
	if (text[0] == '@')
		rc = parse_macro(text, len, s, err);
	else if (!is_digit(text[0]) || !parse_interval(text, len, s, &rc, err))
		rc = parse_cron(text, len, s, err);
	if (rc == AN_OK)
		s->tz = tz;
	return rc;
}
