/*
 * cron_metrics.h — the counters of `anarchon cron` and their /metrics
 * endpoint (--metrics-listen), served from the daemon's poll loop.
 */
#ifndef ANARCHON_CLI_CRON_METRICS_H
#define ANARCHON_CLI_CRON_METRICS_H

#include <poll.h>
#include <stdint.h>

#include "cli.h"

/* The most descriptors an_cron_metrics_fds fills: the listener and its clients. */
#define AN_CRON_METRICS_FDS 9

/* One job's counters, by name, kept across reloads. */
typedef struct an_cron_job_counts
{
	char		name[AN_JOB_MAX + 1];
	uint64_t	started;         /* a child started for a slot: won, or left to it */
	uint64_t	not_won;         /* the batch's claim answered other than won */
	uint64_t	claim_errors;    /* the batch's claim of it failed for the job alone */
	uint64_t	late;            /* a slot reached past max_late_ms */
	uint64_t	not_started;     /* a child that could not be started */
	uint64_t	ended[3];        /* children ended: exit 0, another exit, a signal */
} an_cron_job_counts;

/* The daemon's state at a scrape. */
typedef struct an_cron_state
{
	size_t		jobs;
	size_t		running;
	int			stopping;
} an_cron_state;

typedef struct an_cron_metrics an_cron_metrics;

/*
 * Listen on HOST:PORT: AN_EXIT_OK, or the exit status with err saying why
 * (64: not HOST:PORT; 78: cannot listen there, the port taken).
 */
int			an_cron_metrics_open(const char *where, int64_t now, an_cron_metrics **out, an_err *err);
void		an_cron_metrics_close(an_cron_metrics *m);

/* The counters of job name, made at its first use; with m NULL, a place that counts nowhere. */
an_cron_job_counts *an_cron_metrics_job(an_cron_metrics *m, const char *name);
void		an_cron_metrics_reloaded(an_cron_metrics *m, int ok);

/*
 * The daemon's loop: the descriptors to poll (at most AN_CRON_METRICS_FDS;
 * none with m NULL), the earliest moment a client must be closed, and the
 * serving of whatever poll found ready (fds and n as given to poll).
 */
size_t		an_cron_metrics_fds(const an_cron_metrics *m, struct pollfd *fds);
int64_t		an_cron_metrics_deadline(const an_cron_metrics *m);
void		an_cron_metrics_serve(an_cron_metrics *m, const an_cron_state *st, const struct pollfd *fds, size_t n,
								  int64_t now);

#endif							/* ANARCHON_CLI_CRON_METRICS_H */
