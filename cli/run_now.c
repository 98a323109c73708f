/*
 * run_now.c — `anarchon run --now`: one extra run of the job, exactly once
 * across the fleet (core/run_now.h).
 *
 * The store chooses the manual slot: every host that asks within
 * max_late_ms of the first request joins it, and the store's one-winner
 * rule gives the run to one of them.  The winner runs the command as
 * `anarchon run` runs it for a slot (an_cli_supervise: the same keep-alive,
 * signals and exit statuses), with ANARCHON_SLOT the manual slot.  Neither
 * the schedule nor the jitter applies: the run is asked for now.
 */
#include <string.h>

#include "cli.h"
#include "run_now.h"

int
an_cli_run_now(an_cli *cli)
{
	char		token[AN_TOKEN_HEX + 1];
	char		when[40];
	an_request	rq;
	an_claim_result res;
	int64_t		slot,
				sent;
	int			rc;

	if ((rc = an_cli_command_check(cli)) != AN_EXIT_OK ||
		(rc = an_cli_check_store(cli)) != AN_EXIT_OK ||
		(rc = an_cli_new_token(token)) != AN_EXIT_OK)
		return rc;
	an_cli_catch_signals();
	if ((rc = an_cli_open(cli)) != AN_EXIT_OK)
		return rc;
	an_store_clear(cli->store);
	if (cli->store->m->validate && cli->store->m->validate(cli->store, &cli->settings) != AN_OK)
		return an_cli_store_failed(cli, NULL);
	an_cli_request(cli, &rq, 0, token);
	rq.kind = AN_CLAIM_MANUAL;
	sent = an_cli_mono_ms();
	if (an_store_claim(cli->store, &rq, &res) != AN_OK)
		return an_cli_store_failed(cli, NULL);
	slot = res.slot;
	an_cli_format_time(slot, when, sizeof(when));
	if (res.outcome != AN_WON)
	{
		if (cli->verbose)
			an_cli_error("%s now (manual slot %s): %s, not this host's to run", cli->job, when,
						 an_outcome_name(res.outcome));
		an_cli_log_slot(cli, slot, an_outcome_name(res.outcome), 0, cli->not_mine_exit, an_cli_mono_ms() - sent);
		return cli->not_mine_exit;
	}
	if (cli->verbose)
		an_cli_error("%s now (manual slot %s): won, running %s", cli->job, when, cli->command[0]);
	rc = an_cli_supervise(cli, slot, token, res.attempt, sent);
	an_cli_log_slot(cli, slot, "won", res.attempt, rc, an_cli_mono_ms() - sent);
	return rc;
}
