/*
 * cron_claim.h — the claims of `anarchon cron`: every slot that begins in
 * one second, for all the crontab's jobs, claimed in one batch of the
 * daemon's own connection to the store.
 */
#ifndef ANARCHON_CLI_CRON_CLAIM_H
#define ANARCHON_CLI_CRON_CLAIM_H

#include "cli.h"
#include "crontab.h"

/* One slot due, and what the batch said of it. */
typedef struct an_cron_due
{
	size_t		job;             /* index in the crontab */
	int64_t		slot;
	char		token[AN_TOKEN_HEX + 1];	/* the claim's, given to the child that runs or claims it */
	int			answered;        /* the batch answered it: outcome, or its own error in text */
	an_outcome	outcome;
	int			failed;          /* the job's own claim failed (a setting the store refuses) */
	char		text[AN_ERRTEXTMAX];
} an_cron_due;

/* The daemon's connection: when it may be opened again after a failure. */
typedef struct an_cron_claimer
{
	int64_t		retry_at;        /* an_cli_mono_ms; 0: now */
	int			per_run;         /* the store knows a claim only on its own connection: no batch */
} an_cron_claimer;

/*
 * Give each of due[0..n) a fresh token and claim them all in one batch of
 * cli's store, opening it first when it is not open.  An item the batch
 * could not answer (the store unreachable, a connection lost in the middle,
 * a lock not granted) is left unanswered, its token kept: the daemon starts
 * a child for it, which claims it with that same token, as a claim sent
 * again after a lost reply is.  AN_EXIT_OK, or AN_EXIT_SOFTWARE when no
 * token could be drawn or no memory was left.
 */
int			an_cron_claim(an_cron_claimer *c, an_cli *cli, const an_crontab *tab, an_cron_due *due, size_t n);

/* Close the daemon's connection (it stops). */
void		an_cron_claim_close(an_cli *cli);

#endif							/* ANARCHON_CLI_CRON_CLAIM_H */
