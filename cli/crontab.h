/*
 * crontab.h — a crontab for `anarchon cron FILE`, read the way supercronic
 * reads one, into jobs that every replica of a fleet names alike.
 *
 * The format (doc/cli.md, "A crontab for a fleet"):
 *
 *   blank lines and lines starting with '#' are skipped;
 *   CRON_TZ=Zone   the zone of the schedules of the lines after it
 *                  (CRON_TZ= alone: back to UTC);
 *   # anarchon: name=backup lease_ms=60000 kill-after=5000 ...
 *                  just above a job line: its name and settings;
 *   a job line     a schedule, then the command, run with /bin/sh -c:
 *                    7 fields  second minute hour day month weekday year
 *                    6 fields  minute hour day month weekday year
 *                    5 fields  minute hour day month weekday
 *                    @hourly, @daily, ... (one word)
 *                  tried in that order (7, 6, 5) as supercronic does: the
 *                  first reading whose fields all parse is the schedule.
 *
 * Other NAME=VALUE lines are environment lines, as in supercronic: each
 * sets a variable for the commands of the job lines after it, over the
 * daemon's own environment (TZ= among them: it is the commands', never a
 * schedule's zone).  Names starting ANARCHON_ are refused: they would
 * change `anarchon run` itself, whose settings are the comment's.
 */
#ifndef ANARCHON_CLI_CRONTAB_H
#define ANARCHON_CLI_CRONTAB_H

#include <stdint.h>

#include "cli.h"

/* The years a 6- or 7-field schedule may name (cronexpr's range). */
#define AN_CRONTAB_YEAR_MIN 1970
#define AN_CRONTAB_YEAR_MAX 2099

typedef struct an_cron_job
{
	char		name[AN_JOB_MAX + 1];
	int			line;            /* in the file, from 1 */
	char	   *schedule_text;   /* normalised: fields joined by one space, no zone */
	const char *zone;            /* the CRON_TZ in force, NULL: UTC (owned by the zone cache) */
	an_schedule schedule;
	int			any_year;        /* no year field, or '*' */
	uint8_t		years[AN_CRONTAB_YEAR_MAX - AN_CRONTAB_YEAR_MIN + 1];
	char	   *command;         /* the rest of the line, for /bin/sh -c */
	an_settings settings;        /* the command line's, then the comment's */
	int64_t		kill_after_ms;
	int64_t		jitter_ms;
	size_t		nenv;            /* the crontab's first nenv environment lines are in force */
} an_cron_job;

typedef struct an_crontab
{
	an_cron_job *jobs;
	size_t		n;
	char	  **env;             /* "NAME=VALUE" of each environment line, in the file's order */
	size_t		nenv;
} an_crontab;

/* Set the environment lines in force for job j (in the child that runs it). */
void		an_crontab_setenv(const an_crontab *tab, const an_cron_job *j);

/*
 * an_crontab_read: read path into tab, each job's settings starting from
 * cli's.  AN_EXIT_OK, or 78 after one message per bad line ("FILE:LINE:
 * what was wrong; what is allowed"), nothing kept; 64 for a file that
 * cannot be read.
 */
int			an_crontab_read(an_cli *cli, const char *path, an_crontab *tab);
void		an_crontab_free(an_crontab *tab);

/*
 * an_crontab_next: the job's earliest slot > after, its year field
 * applied; *found 0 when there is none.  AN_OK or the schedule's error.
 */
an_error	an_crontab_next(const an_cron_job *job, int64_t after, int64_t *slot, int *found,
							an_err *err);

#endif							/* ANARCHON_CLI_CRONTAB_H */
