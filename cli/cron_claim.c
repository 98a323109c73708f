/*
 * cron_claim.c — the claims of `anarchon cron`: every slot that begins in
 * one second, claimed in one batch of the daemon's own connection to the
 * store (an_store_batch: one BEGIN IMMEDIATE on SQLite, one write per
 * server on Redis, one claim after another on the others), so that a
 * replica that loses a slot spends one claim on it and starts no process.  Only a slot the batch won gets a
 * child, `anarchon run --token`, which takes the claim up.
 *
 * The daemon never decides a slot on its own: every answer is the store's.
 * What the batch cannot answer -- the store unreachable, a connection lost
 * in the middle, a lock not granted in time -- goes to a child per slot, as
 * before batches, each claiming with the token the batch drew for it: had
 * the store taken the batch's claim and lost the reply, the child's claim
 * finds it its own (the resend rule of every store).
 */
#include <stdlib.h>
#include <string.h>

#include "cron_claim.h"

/* How long an unopenable store is left to the children before the daemon tries again. */
#define REOPEN_AFTER_MS 5000

typedef struct batch
{
	const an_crontab *tab;
	an_cron_due *due;
} batch;

/*
 * A failure that belongs to the job alone: its settings, which the store
 * refuses.  Every other ends the batch (a connection, a lock, memory).
 */
static int
job_alone(an_error err)
{
	return err == AN_E_INPUT || err == AN_E_CONFIG || err == AN_E_UNSUPPORTED;
}

static int
claim_one(an_store *st, void *arg, size_t i)
{
	batch	   *b = arg;
	an_cron_due *d = &b->due[i];
	const an_cron_job *j = &b->tab->jobs[d->job];
	an_request	rq = {.job = j->name, .slot = d->slot, .token = d->token, .settings = &j->settings};
	an_claim_result res;

	an_store_clear(st);
	if ((st->m->validate == NULL || st->m->validate(st, &j->settings) == AN_OK) &&
		an_store_claim(st, &rq, &res) == AN_OK)
	{
		d->answered = 1;
		d->outcome = res.outcome;
		return AN_OK;
	}
	if (!job_alone(st->err.code))
		return st->err.code;
	an_err_text(&st->err, d->text, sizeof(d->text));
	d->answered = d->failed = 1;
	an_store_clear(st);
	return AN_OK;
}

void
an_cron_claim_close(an_cli *cli)
{
	an_cli_close(cli);
}

int
an_cron_claim(an_cron_claimer *c, an_cli *cli, const an_crontab *tab, an_cron_due *due, size_t n)
{
	batch		b = {tab, due};
	an_settings s;
	an_request *rqs;
	int			rc;

	for (size_t i = 0; i < n; i++)
	{
		if (an_cli_new_token(due[i].token) != AN_EXIT_OK)
			return AN_EXIT_SOFTWARE;
		due[i].answered = due[i].failed = 0;
		due[i].text[0] = '\0';
	}
	if (n == 0 || c->per_run)
		return AN_EXIT_OK;
	if (cli->store == NULL)
	{
		if (an_cli_mono_ms() < c->retry_at)
			return AN_EXIT_OK;
		if (an_cli_open(cli) != AN_EXIT_OK)
		{
			an_cli_error("cron: the store could not be opened (above); each slot is claimed by an anarchon run"
						 " of its own until it opens, tried again in %d s", REOPEN_AFTER_MS / 1000);
			c->retry_at = an_cli_mono_ms() + REOPEN_AFTER_MS;
			return AN_EXIT_OK;
		}
		c->retry_at = 0;
		if (AN_STORE_HAS(cli->store, AN_CAP_SESSION_OWNER))
		{
			/* RabbitMQ: a won claim cannot be handed to a child, which then could not run it. */
			an_cli_error("cron: the %s store knows a claim only on the connection that made it: each slot is"
						 " claimed by the anarchon run started for it, not in a batch", cli->store->m->name);
			c->per_run = 1;
			an_cli_close(cli);
			return AN_EXIT_OK;
		}
	}
	/* The batch's own lock waits as long as the most patient of its jobs would. */
	s = tab->jobs[due[0].job].settings;
	for (size_t i = 1; i < n; i++)
		if (tab->jobs[due[i].job].settings.busy_timeout_ms > s.busy_timeout_ms)
			s.busy_timeout_ms = tab->jobs[due[i].job].settings.busy_timeout_ms;
	/* The requests, for a store that sends them ahead (names and tokens are checked: crontab.c, above). */
	if ((rqs = calloc(n, sizeof(an_request))) == NULL)
		return AN_EXIT_SOFTWARE;
	for (size_t i = 0; i < n; i++)
		rqs[i] = (an_request) {.job = tab->jobs[due[i].job].name, .slot = due[i].slot, .token = due[i].token,
		.settings = &tab->jobs[due[i].job].settings};
	an_store_clear(cli->store);
	rc = an_store_batch(cli->store, &s, rqs, n, claim_one, &b);
	free(rqs);
	if (rc == AN_OK)
		return AN_EXIT_OK;

	/*
	 * The unit failed: on SQLite nothing of it stands, elsewhere the claims
	 * before the failure do.  Either way every slot goes to a child with its
	 * token, which finds its own claim or makes it; the connection is opened
	 * again for the next second's batch.
	 */
	{
		char		text[AN_ERRTEXTMAX];

		an_err_text(&cli->store->err, text, sizeof(text));
		an_cli_error("cron: the batch of %zu claim%s failed: %s; each is claimed by an anarchon run of its own",
					 n, n == 1 ? "" : "s", text[0] ? text : "the store failed");
	}
	for (size_t i = 0; i < n; i++)
		due[i].answered = due[i].failed = 0;
	an_cli_close(cli);
	return AN_EXIT_OK;
}
