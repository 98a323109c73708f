/*
 * crontab.c — read a crontab for `anarchon cron` (crontab.h says the format).
 *
 * Every replica of a fleet reads the same file and must name each job the
 * same way, with no coordination: a job's default name is derived from its
 * line alone, a readable part (the command's first word) and a hash of the
 * normalised schedule, zone and command.  A changed line is a new job, with
 * runs of its own; the runs of the old one stay in the store's history.
 *
 * Every line is checked before anything starts, and every bad line is said,
 * with its number: a fleet half-started on a crontab half understood would
 * run some jobs and silently not others.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crontab.h"

#define MAX_WORDS 8
#define DIRECTIVE "anarchon:"
#define FORMS "a job line is a schedule of 7 fields (second minute hour day month weekday year),"\
	" 6 (minute hour day month weekday year), 5 (minute hour day month weekday) or one of"\
	" @yearly @annually @monthly @weekly @daily @midnight @hourly, then the command"

typedef struct reader
{
	an_cli	   *cli;
	const char *path;
	int			line;
	int			bad;             /* lines refused so far */
	an_tz	   *zone;            /* CRON_TZ in force */
	/* The pending "# anarchon:" comment, for the next job line. */
	int			has_directive;
	int			directive_line;
	char		name[AN_JOB_MAX + 1];
	an_settings settings;
	int64_t		kill_after_ms,
				jitter_ms;
} reader;

static void
bad_line(reader *r, const char *fmt,...) __attribute__((format(printf, 2, 3)));

static void
bad_line(reader *r, const char *fmt,...)
{
	char		msg[2 * AN_ERRMAX];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	an_cli_error("%s:%d: %s", r->path, r->line, msg);
	r->bad++;
}

/* FNV-1a, 32 bits: the name's hash, the same on every host and in every version. */
static uint32_t
fnv1a(uint32_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char) *s) * 16777619u;
	return h;
}

/*
 * The default name: the command's first word without its directory, kept
 * to the job rule's bytes (32 at most; "job" when nothing is left), a dash,
 * and 8 hex digits of FNV-1a over "ZONE\nSCHEDULE\nCOMMAND".
 */
static void
default_name(const an_cron_job *job, char *out, size_t len)
{
	const char *w = job->command,
			   *end,
			   *base;
	char		readable[33];
	size_t		n = 0;
	uint32_t	h = 2166136261u;

	end = w + strcspn(w, " \t");
	for (base = w; w < end; w++)
		if (*w == '/')
			base = w + 1;
	for (; base < end && n < sizeof(readable) - 1; base++)
		if (isalnum((unsigned char) *base) || *base == '_' || *base == '.' || *base == '-')
			readable[n++] = *base;
	readable[n] = '\0';
	if (n == 0 || !isalnum((unsigned char) readable[0]))
		strcpy(readable, "job");
	h = fnv1a(h, job->zone ? job->zone : "UTC");
	h = fnv1a(h, "\n");
	h = fnv1a(h, job->schedule_text);
	h = fnv1a(h, "\n");
	h = fnv1a(h, job->command);
	snprintf(out, len, "%s-%08x", readable, (unsigned) h);
}

/* The year field (cronexpr's syntax: '*', N, A-B, with /STEP, comma lists) into job. */
static int
parse_years(const char *field, an_cron_job *job, an_err *err)
{
	const char *p = field;

	memset(job->years, 0, sizeof(job->years));
	job->any_year = strcmp(field, "*") == 0;
	if (job->any_year)
		return 1;
	while (*p)
	{
		long		lo = AN_CRONTAB_YEAR_MIN,
					hi = AN_CRONTAB_YEAR_MAX,
					step = 1;
		char	   *e;

		if (*p == '*')
			p++;
		else
		{
			if (!isdigit((unsigned char) *p))
				goto bad;
			lo = hi = strtol(p, &e, 10);
			p = e;
			if (*p == '-')
			{
				if (!isdigit((unsigned char) p[1]))
					goto bad;
				hi = strtol(p + 1, &e, 10);
				p = e;
			}
		}
		if (*p == '/')
		{
			if (!isdigit((unsigned char) p[1]))
				goto bad;
			step = strtol(p + 1, &e, 10);
			p = e;
		}
		if (lo < AN_CRONTAB_YEAR_MIN || hi > AN_CRONTAB_YEAR_MAX || lo > hi || step < 1)
			goto bad;
		for (long y = lo; y <= hi; y += step)
			job->years[y - AN_CRONTAB_YEAR_MIN] = 1;
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	return 1;
bad:
	an_errf(err, "year field '%s': allowed '*', a year, a range A-B, a step /N, or a comma list of"
			 " those, years %d-%d", field, AN_CRONTAB_YEAR_MIN, AN_CRONTAB_YEAR_MAX);
	return 0;
}

/*
 * Try the first nfields words of a job line as its schedule, the last one a
 * year when year: 1 and job filled, or 0 with the reason in err.
 */
static int
try_schedule(reader *r, char **words, int nfields, int year, an_cron_job *job, an_err *err)
{
	char		text[AN_SCHEDULE_INPUT_MAX + 80];
	size_t		n = 0;
	int			cron_fields = nfields - (year ? 1 : 0);

	if (year && !parse_years(words[nfields - 1], job, err))
		return 0;
	if (!year)
		job->any_year = 1;
	if (r->zone)
		n = (size_t) snprintf(text, sizeof(text), "CRON_TZ=%s ", an_tz_name(r->zone));
	for (int i = 0; i < cron_fields; i++)
		n += (size_t) snprintf(text + n, n < sizeof(text) ? sizeof(text) - n : 0, "%s%s", i ? " " : "", words[i]);
	if (n >= sizeof(text))
	{
		an_errf(err, "the schedule is longer than %d bytes", AN_SCHEDULE_TEXT_MAX);
		return 0;
	}
	return an_schedule_parse(text, n, r->cli->zones, &job->schedule, err) == AN_OK;
}

/* A job line: its schedule (7, 6, then 5 fields, or a macro) and its command. */
static void
job_line(reader *r, char *line, an_crontab *tab)
{
	char	   *words[MAX_WORDS + 1];
	char	   *starts[MAX_WORDS + 1];
	char		copy[AN_SCHEDULE_INPUT_MAX * 2];
	an_err		err = {0};
	an_cron_job job;
	int			n = 0,
				fields = 0;
	char	   *p = line;

	memset(&job, 0, sizeof(job));
	/* The first words, each copied NUL-terminated; starts[] where each began in line. */
	{
		size_t		used = 0;

		while (n <= MAX_WORDS && *p)
		{
			size_t		w = strcspn(p, " \t");

			starts[n] = p;
			/* A word too long for any field (a command's) is kept as "": no field parses it. */
			if (used + w + 1 > sizeof(copy))
				words[n++] = "";
			else
			{
				memcpy(copy + used, p, w);
				copy[used + w] = '\0';
				words[n++] = copy + used;
				used += w + 1;
			}
			p += w;
			p += strspn(p, " \t");
		}
	}
	if (words[0][0] == '@')
	{
		if (n >= 2 && try_schedule(r, words, 1, 0, &job, &err))
			fields = 1;
	}
	else
	{
		static const struct
		{
			int			n,
						year;
		}			forms[] = {{7, 1}, {6, 1}, {5, 0}};
		an_err		err5 = {0};

		for (int i = 0; i < 3 && !fields; i++)
			if (n > forms[i].n && try_schedule(r, words, forms[i].n, forms[i].year, &job, &err))
				fields = forms[i].n;
			else if (forms[i].n == 5)
				err5 = err;
		err = err5;
	}
	if (fields == 0)
	{
		if (n < 2 || (words[0][0] != '@' && n < 6))
			bad_line(r, "no schedule and command here; %s", FORMS);
		else
			bad_line(r, "%s; %s", err.msg[0] ? AN_ERR_TEXT(&err) : "not a schedule", FORMS);
		r->has_directive = 0;
		return;
	}

	job.line = r->line;
	job.nenv = tab->nenv;
	job.zone = r->zone ? an_tz_name(r->zone) : NULL;
	job.command = strdup(starts[fields]);
	{
		size_t		len = (size_t) (starts[fields] - line);
		char	   *s = malloc(len + 1);

		/* Normalised: the fields joined by one space, whatever separated them. */
		if (s)
		{
			s[0] = '\0';
			for (int i = 0; i < fields; i++)
			{
				if (i)
					strcat(s, " ");
				strcat(s, words[i]);
			}
		}
		job.schedule_text = s;
	}
	if (job.command == NULL || job.schedule_text == NULL)
	{
		free(job.command);
		free(job.schedule_text);
		bad_line(r, "out of memory");
		return;
	}
	if (r->has_directive)
	{
		job.settings = r->settings;
		job.kill_after_ms = r->kill_after_ms;
		job.jitter_ms = r->jitter_ms;
	}
	else
	{
		job.settings = r->cli->settings;
		job.kill_after_ms = r->cli->kill_after_ms;
		job.jitter_ms = r->cli->jitter_ms;
	}
	if (r->has_directive && r->name[0])
		snprintf(job.name, sizeof(job.name), "%s", r->name);
	else
		default_name(&job, job.name, sizeof(job.name));
	r->has_directive = 0;
	if (job.jitter_ms > job.settings.max_late_ms)
	{
		bad_line(r, "jitter=%lld is more than its max_late_ms %lld: its claims would be late",
				 (long long) job.jitter_ms, (long long) job.settings.max_late_ms);
		free(job.command);
		free(job.schedule_text);
		return;
	}
	{
		int64_t		next;
		int			found = 0;

		an_error	rc = an_crontab_next(&job, an_cli_now_ms(), &next, &found, &err);

		if (rc != AN_OK || !found)
		{
			bad_line(r, "the schedule %s has no slot from now on%s%s", job.schedule_text,
					 rc != AN_OK ? ": " : " (its years are past)", rc != AN_OK ? AN_ERR_TEXT(&err) : "");
			free(job.command);
			free(job.schedule_text);
			return;
		}
	}
	for (size_t i = 0; i < tab->n; i++)
		if (strcmp(tab->jobs[i].name, job.name) == 0)
		{
			bad_line(r, "the job %s is named on line %d already: %s", job.name, tab->jobs[i].line,
					 r->name[0] ? "give each job its own name=" :
					 "the same schedule and command twice would run once per slot; give one a name= of its own");
			free(job.command);
			free(job.schedule_text);
			return;
		}
	{
		an_cron_job *grown = realloc(tab->jobs, (tab->n + 1) * sizeof(*grown));

		if (grown == NULL)
		{
			free(job.command);
			free(job.schedule_text);
			bad_line(r, "out of memory");
			return;
		}
		tab->jobs = grown;
		tab->jobs[tab->n++] = job;
	}
}

/* A whole number from lo to hi, for a comment's kill-after and jitter. */
static int
ms_value(const char *text, int64_t hi, int64_t *out)
{
	char	   *end;
	long long	v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno || end == text || *end || v < 0 || v > hi)
		return 0;
	*out = v;
	return 1;
}

/* "# anarchon: name=N key=value ...": the next job's name and settings. */
static void
directive(reader *r, char *text)
{
	char	   *save = NULL;

	if (!r->has_directive)
	{
		r->has_directive = 1;
		r->directive_line = r->line;
		r->name[0] = '\0';
		r->settings = r->cli->settings;
		r->kill_after_ms = r->cli->kill_after_ms;
		r->jitter_ms = r->cli->jitter_ms;
	}
	for (char *w = strtok_r(text, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
	{
		char	   *eq = strchr(w, '=');
		an_err		err;
		char		key[64];

		if (eq == NULL || eq == w || (size_t) (eq - w) >= sizeof(key))
		{
			bad_line(r, "\"%s\" is not key=value; an anarchon: comment holds name=NAME and settings,"
					 " e.g. # anarchon: name=backup lease_ms=60000", w);
			continue;
		}
		/* The command's spellings: lease_ms or lease-ms. */
		for (size_t i = 0; i < (size_t) (eq - w); i++)
			key[i] = w[i] == '-' ? '_' : w[i];
		key[eq - w] = '\0';
		eq++;
		if (strcmp(key, "name") == 0)
		{
			if (an_validate_job(eq, strlen(eq), &err) != AN_OK)
				bad_line(r, "name=%s: %s", eq, AN_ERR_TEXT(&err));
			else
				snprintf(r->name, sizeof(r->name), "%s", eq);
		}
		else if (strcmp(key, "kill_after") == 0 || strcmp(key, "jitter") == 0)
		{
			int			ka = key[0] == 'k';

			if (!ms_value(eq, ka ? INT64_C(86400000) : AN_MAX_LATE_MS_MAX, ka ? &r->kill_after_ms : &r->jitter_ms))
				bad_line(r, "%s=%s: allowed is a whole number of milliseconds from 0 to %s", key, eq,
						 ka ? "1 day (86400000)" : "max_late_ms");
		}
		else if (strncmp(key, "catch_up", 8) == 0 && an_cli_setting_flag(NULL, key))
			bad_line(r, "%s: cron does not catch up missed slots; the other replicas of the fleet run"
					 " the slots one of them misses", key);
		else if (an_cli_setting_flag(NULL, key))
		{
			if (an_settings_set(&r->settings, key, eq, &err) != AN_OK)
				bad_line(r, "%s", AN_ERR_TEXT(&err));
		}
		else
			bad_line(r, "unknown setting \"%s\"; allowed are name, kill-after, jitter, lease_ms,"
					 " max_late_ms, attempts, overlap and busy_timeout_ms", key);
	}
}

/*
 * NAME=VALUE: CRON_TZ sets the zone of the lines after it; any other name is
 * a variable for the commands of the lines after it.
 */
static void
env_line(reader *r, const char *key, size_t keylen, char *value, an_crontab *tab)
{
	char	  **grown;
	char	   *kv;

	size_t		n = strlen(value);
	an_err		err;

	if (n >= 2 && (value[0] == '"' || value[0] == '\'') && value[n - 1] == value[0])
	{
		value[n - 1] = '\0';
		value++;
	}
	if (keylen == 7 && strncmp(key, "CRON_TZ", 7) == 0)
	{
		if (*value == '\0')
			r->zone = NULL;
		else if (an_tz_find(r->cli->zones, value, strlen(value), &r->zone, &err) != AN_OK)
			bad_line(r, "CRON_TZ=%s: %s", value, AN_ERR_TEXT(&err));
		return;
	}
	if (keylen >= 9 && strncmp(key, "ANARCHON_", 9) == 0)
	{
		bad_line(r, "%.*s=: a crontab does not set anarchon's own variables; a job's settings go in a"
				 " '# anarchon: key=value' comment just above it, the store in --store or the daemon's"
				 " ANARCHON_STORE", (int) keylen, key);
		return;
	}
	if ((kv = malloc(keylen + strlen(value) + 2)) == NULL ||
		(grown = realloc(tab->env, (tab->nenv + 1) * sizeof(char *))) == NULL)
	{
		free(kv);
		bad_line(r, "out of memory");
		return;
	}
	sprintf(kv, "%.*s=%s", (int) keylen, key, value);
	tab->env = grown;
	tab->env[tab->nenv++] = kv;
}

void
an_crontab_setenv(const an_crontab *tab, const an_cron_job *j)
{
	for (size_t i = 0; i < j->nenv && i < tab->nenv; i++)
	{
		char	   *eq = strchr(tab->env[i], '=');

		*eq = '\0';
		setenv(tab->env[i], eq + 1, 1);
		*eq = '=';
	}
}

int
an_crontab_read(an_cli *cli, const char *path, an_crontab *tab)
{
	reader		r;
	FILE	   *f;
	char	   *buf = NULL;
	size_t		cap = 0;
	ssize_t		len;

	memset(tab, 0, sizeof(*tab));
	memset(&r, 0, sizeof(r));
	r.cli = cli;
	r.path = path;
	if ((f = fopen(path, "re")) == NULL)
	{
		an_cli_error("cannot read the crontab %s: %s", path, strerror(errno));
		return AN_EXIT_CONFIG;
	}
	while ((len = getline(&buf, &cap, f)) >= 0)
	{
		char	   *line = buf;
		size_t		keylen;

		r.line++;
		while (len > 0 && isspace((unsigned char) line[len - 1]))
			line[--len] = '\0';
		line += strspn(line, " \t");
		if (*line == '\0' || *line == '#')
		{
			char	   *c = line + 1 + strspn(line + 1, " \t");

			if (*line == '#' && strncmp(c, DIRECTIVE, strlen(DIRECTIVE)) == 0)
				directive(&r, c + strlen(DIRECTIVE));
			else if (r.has_directive)
			{
				bad_line(&r, "the anarchon: comment of line %d is not just above a job line",
						 r.directive_line);
				r.has_directive = 0;
			}
			continue;
		}
		/* supercronic's environment line: ^([^\s=]+)\s*=\s*(.*)$ */
		keylen = strcspn(line, " \t=");
		if (keylen > 0 && line[keylen + strspn(line + keylen, " \t")] == '=')
		{
			char	   *v = line + keylen + strspn(line + keylen, " \t") + 1;

			env_line(&r, line, keylen, v + strspn(v, " \t"), tab);
			if (r.has_directive)
			{
				bad_line(&r, "the anarchon: comment of line %d is not just above a job line",
						 r.directive_line);
				r.has_directive = 0;
			}
			continue;
		}
		job_line(&r, line, tab);
	}
	free(buf);
	fclose(f);
	if (r.has_directive)
	{
		r.line++;
		bad_line(&r, "the anarchon: comment of line %d is not just above a job line", r.directive_line);
	}
	if (r.bad == 0 && tab->n == 0)
	{
		an_cli_error("%s: no job in the crontab; %s", path, FORMS);
		r.bad++;
	}
	if (r.bad)
	{
		an_crontab_free(tab);
		return AN_EXIT_CONFIG;
	}
	return AN_EXIT_OK;
}

void
an_crontab_free(an_crontab *tab)
{
	for (size_t i = 0; i < tab->n; i++)
	{
		free(tab->jobs[i].command);
		free(tab->jobs[i].schedule_text);
	}
	free(tab->jobs);
	for (size_t i = 0; i < tab->nenv; i++)
		free(tab->env[i]);
	free(tab->env);
	memset(tab, 0, sizeof(*tab));
}

/* The year of instant t on the schedule's wall clock. */
static int
year_of(const an_cron_job *job, int64_t t)
{
	an_tz_span span;
	an_err		err;
	int64_t		days;
	int64_t		y,
				doe,
				yoe,
				doy,
				mp;

	if (job->schedule.tz && an_tz_span_at(job->schedule.tz, t, &span, &err) == AN_OK)
		t += span.offset;
	days = (t >= 0 ? t : t - 86399999) / 86400000;
	/* civil_from_days (H. Hinnant) */
	days += 719468;
	doe = days - (days / 146097) * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + (days / 146097) * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	return (int) (y + (mp >= 10));
}

an_error
an_crontab_next(const an_cron_job *job, int64_t after, int64_t *slot, int *found, an_err *err)
{
	for (;;)
	{
		an_error	rc = an_schedule_next_slot(&job->schedule, after, slot, found, err);
		int			y,
					next;

		if (rc != AN_OK || !*found || job->any_year)
			return rc;
		y = year_of(job, *slot);
		if (y >= AN_CRONTAB_YEAR_MIN && y <= AN_CRONTAB_YEAR_MAX && job->years[y - AN_CRONTAB_YEAR_MIN])
			return AN_OK;
		for (next = y + 1; next <= AN_CRONTAB_YEAR_MAX && !job->years[next - AN_CRONTAB_YEAR_MIN]; next++)
			;
		if (next > AN_CRONTAB_YEAR_MAX)
		{
			*found = 0;
			return AN_OK;
		}
		/* Two days before the year begins in UTC: no zone is that far off; then step on. */
		{
#define LEAPS(y) ((y) / 4 - (y) / 100 + (y) / 400)
			int64_t		jan1 = (int64_t) (next - 1970) * 365 + LEAPS(next - 1) - LEAPS(1969);
			int64_t		from = jan1 * 86400000 - 2 * 86400000;

			after = from > *slot ? from : *slot;
		}
	}
}
