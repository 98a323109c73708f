/*
 * settings.c — the settings (lease_ms, max_late_ms, ...): defaults, ranges, parsing.
 *
 * The numeric settings are one table, so a host can register them (as GUCs,
 * or as anarchon_config names) by walking it instead of repeating them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anarchon.h"

const an_setting_info an_numeric_settings[] = {
	{"lease_ms", "Lease length of a won attempt, in milliseconds; a heartbeat renews it to now + lease_ms.",
	AN_LEASE_MS_DEFAULT, AN_LEASE_MS_MIN, AN_LEASE_MS_MAX},
	{"max_late_ms", "A first claim more than this many milliseconds after its slot answers 'late'.",
	AN_MAX_LATE_MS_DEFAULT, 0, AN_MAX_LATE_MS_MAX},
	{"attempts", "Attempts per run, counting the first; a run whose last lease ran out becomes 'interrupted'.",
	AN_ATTEMPTS_DEFAULT, 1, AN_ATTEMPTS_MAX},
	{"busy_timeout_ms", "How long a claim waits for the lock of its job (SQLite: BEGIN IMMEDIATE), in milliseconds.",
	AN_BUSY_TIMEOUT_MS_DEFAULT, 0, AN_BUSY_TIMEOUT_MS_MAX},
	{"catch_up_ms", "How far back, in milliseconds, anarchon_due looks for missed slots to catch up; at most max_late_ms.",
	AN_CATCH_UP_MS_DEFAULT, 0, AN_MAX_LATE_MS_MAX},
	{"catch_up_max", "Under catch_up 'all', the most missed slots anarchon_due returns (the newest).",
	AN_CATCH_UP_MAX_DEFAULT, 1, AN_CATCH_UP_MAX_MAX},
	{NULL, NULL, 0, 0, 0}
};

void
an_settings_default(an_settings *s)
{
	s->lease_ms = AN_LEASE_MS_DEFAULT;
	s->max_late_ms = AN_MAX_LATE_MS_DEFAULT;
	s->attempts = AN_ATTEMPTS_DEFAULT;
	s->overlap_skip = 1;
	s->overlap_replace = 0;
	s->busy_timeout_ms = AN_BUSY_TIMEOUT_MS_DEFAULT;
	s->catch_up = AN_CATCH_UP_NONE;
	s->catch_up_ms = AN_CATCH_UP_MS_DEFAULT;
	s->catch_up_max = AN_CATCH_UP_MAX_DEFAULT;
}

static const char *const catch_up_names[] = {"none", "latest", "all"};
static const char *const overlap_names[] = {"skip", "allow", "replace"};

const char *
an_settings_overlap_name(const an_settings *s)
{
	return overlap_names[s->overlap_skip ? 0 : s->overlap_replace ? 2 : 1];
}

an_error
an_settings_check_catch_up(const an_settings *s, an_err *err)
{
	/* 'none' never looks back: the window is not used, so it cannot be wrong. */
	if (s->catch_up == AN_CATCH_UP_NONE || s->catch_up_ms <= s->max_late_ms)
		return AN_OK;
	an_errf(err, "catch_up_ms (%lld) is longer than max_late_ms (%lld): a missed slot is caught up"
			" by an ordinary claim, which every store answers 'late' more than max_late_ms after its slot"
			" and remembers runs only that long; allowed is catch_up_ms from 0 to max_late_ms:"
			" raise max_late_ms to at least catch_up_ms, or shorten catch_up_ms",
			(long long) s->catch_up_ms, (long long) s->max_late_ms);
	return AN_E_INPUT;
}

int64_t
an_settings_retention_ms(const an_settings *s)
{
	/* Saturate: a year-long lease times 1000 attempts still fits in int64. */
	return s->max_late_ms + s->lease_ms * (int64_t) s->attempts;
}

#define KEEP_RULE "runs are kept for keep_ms milliseconds after their slot, at least" \
	" max_late_ms + lease_ms * attempts (%lld ms with these settings): a younger run can still" \
	" be claimed, and a late claim that found it gone would win it a second time;" \
	" a longer keep_ms is fine, and one reaching back before the earliest time the store" \
	" can hold keeps every run"

an_error
an_settings_check_keep(const an_settings *s, int64_t keep_ms, an_err *err)
{
	int64_t		need = an_settings_retention_ms(s);

	if (keep_ms < 0)
		an_errf(err, "keep_ms %lld is negative: " KEEP_RULE,
				(long long) keep_ms, (long long) need);
	else if (keep_ms < need)
		an_errf(err, "keep_ms %lld is shorter than the %lld ms the settings need: " KEEP_RULE,
				(long long) keep_ms, (long long) need, (long long) need);
	else
		return AN_OK;
	return AN_E_INPUT;
}

int64_t
an_retention_cutoff(int64_t now, int64_t keep_ms)
{
	/* keep_ms >= 0; only a clock before 1970 could take now - keep_ms below INT64_MIN. */
	if (now < 0 && keep_ms > now - INT64_MIN)
		return INT64_MIN;
	return now - keep_ms;
}

static int64_t *
numeric_field(an_settings *s, const char *name)
{
	if (strcmp(name, "lease_ms") == 0)
		return &s->lease_ms;
	if (strcmp(name, "max_late_ms") == 0)
		return &s->max_late_ms;
	if (strcmp(name, "busy_timeout_ms") == 0)
		return &s->busy_timeout_ms;
	if (strcmp(name, "catch_up_ms") == 0)
		return &s->catch_up_ms;
	if (strcmp(name, "catch_up_max") == 0)
		return &s->catch_up_max;
	return NULL;
}

static const an_setting_info *
numeric_info(const char *name)
{
	for (const an_setting_info *i = an_numeric_settings; i->name; i++)
		if (strcmp(i->name, name) == 0)
			return i;
	return NULL;
}

#define KNOWN "lease_ms, max_late_ms, attempts, overlap, busy_timeout_ms," \
	" catch_up, catch_up_ms, catch_up_max, store, stats"

an_error
an_settings_set(an_settings *s, const char *name, const char *value,
				an_err *err)
{
	const an_setting_info *info;

	if (name == NULL)
	{
		an_errf(err, "setting name is missing: the settings are " KNOWN);
		return AN_E_INPUT;
	}
	if (strcmp(name, "overlap") == 0)
	{
		for (int i = 0; i < 3; i++)
			if (value && strcmp(value, overlap_names[i]) == 0)
			{
				s->overlap_skip = i == 0;
				s->overlap_replace = i == 2;
				return AN_OK;
			}
		an_errf(err, "invalid value for overlap: allowed values are 'skip', 'allow' and 'replace'");
		return AN_E_INPUT;
	}
	if (strcmp(name, "catch_up") == 0)
	{
		for (int i = 0; i < 3; i++)
			if (value && strcmp(value, catch_up_names[i]) == 0)
			{
				s->catch_up = i;
				return AN_OK;
			}
		an_errf(err, "invalid value for catch_up: allowed values are 'none', 'latest' and 'all'");
		return AN_E_INPUT;
	}
	info = numeric_info(name);
	if (info == NULL)
	{
		an_errf(err, "unknown setting \"%.64s\": the settings are " KNOWN, name);
		return AN_E_INPUT;
	}
	{
		char	   *end = NULL;
		long long	v;
		int64_t    *field;

		errno = 0;
		v = value ? strtoll(value, &end, 10) : 0;
		if (value == NULL || *value == '\0' || *end != '\0' || errno == ERANGE ||
			v < info->min || v > info->max)
		{
			an_errf(err, "invalid value for %s: allowed is a whole number from %lld to %lld",
					name, (long long) info->min, (long long) info->max);
			return AN_E_INPUT;
		}
		if (strcmp(name, "attempts") == 0)
		{
			s->attempts = (int32_t) v;
			return AN_OK;
		}
		field = numeric_field(s, name);
		*field = v;
	}
	return AN_OK;
}

an_error
an_settings_get(const an_settings *s, const char *name, char *out, size_t outlen,
				an_err *err)
{
	if (name && strcmp(name, "overlap") == 0)
		snprintf(out, outlen, "%s", an_settings_overlap_name(s));
	else if (name && strcmp(name, "catch_up") == 0)
		snprintf(out, outlen, "%s", catch_up_names[s->catch_up]);
	else if (name && strcmp(name, "attempts") == 0)
		snprintf(out, outlen, "%d", (int) s->attempts);
	else if (name && numeric_info(name))
	{
		int64_t    *field = numeric_field((an_settings *) s, name);

		snprintf(out, outlen, "%lld", (long long) *field);
	}
	else
	{
		an_errf(err, "unknown setting \"%.64s\": the settings are " KNOWN,
				name ? name : "");
		return AN_E_INPUT;
	}
	return AN_OK;
}
