/*
 * run.c — `anarchon run`, the crontab wrapper: work out the slots, claim
 * them, and run the command for each one this host won.
 *
 * The slot is the schedule's, never the moment cron fired: every host of a
 * fleet, early or late by a few seconds, names the same slot.  With
 * --schedule the slots are anarchon_due's (core/due.h): the current one and,
 * under --catch-up, missed ones before it, claimed oldest first, each an
 * ordinary claim that one host of the fleet wins.  --slot names one slot and
 * never catches up.  The command is looked up before anything is claimed, so
 * a typo in a crontab never wins a slot that then runs nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* Is path an executable regular file?  0, ENOENT, or EACCES. */
static int
executable(const char *path)
{
	struct stat sb;

	if (stat(path, &sb) != 0)
		return ENOENT;
	if (!S_ISREG(sb.st_mode) || access(path, X_OK) != 0)
		return EACCES;
	return 0;
}

int
an_cli_command_check(const an_cli *cli)
{
	const char *prog = cli->shell ? "/bin/sh" : cli->command[0];
	const char *path = getenv("PATH");
	int			found = ENOENT;

	if (strchr(prog, '/'))
		found = executable(prog);
	else
	{
		if (path == NULL || *path == '\0')
			path = "/usr/local/bin:/usr/bin:/bin";
		while (found != 0 && *path)
		{
			size_t		n = strcspn(path, ":");
			char	   *full = malloc(n + strlen(prog) + 2);
			int			r;

			if (full == NULL)
				return AN_EXIT_SOFTWARE;
			/* An empty element is the current directory, as execvp reads it. */
			if (n == 0)
				strcpy(full, prog);
			else
				sprintf(full, "%.*s/%s", (int) n, path, prog);
			r = executable(full);
			free(full);
			if (r == 0 || (r == EACCES && found == ENOENT))
				found = r;
			path += n + (path[n] == ':');
		}
	}
	if (found == 0)
		return AN_EXIT_OK;
	an_cli_error("%s: %s; nothing was claimed", prog,
				 found == ENOENT ? "command not found" : "not an executable file");
	return found == ENOENT ? AN_EXIT_NOTFOUND : AN_EXIT_NOEXEC;
}

/* Sleep until at_ms, unless a stop signal comes first (then 0). */
static int
sleep_until(int64_t at_ms)
{
	int64_t		left;

	while ((left = at_ms - an_cli_now_ms()) > 0 && !an_cli_signal)
	{
		struct timespec ts = {left / 1000, (left % 1000) * 1000000};

		nanosleep(&ts, NULL);
	}
	return !an_cli_signal;
}

/*
 * Claim one slot and, when won, run the command for it.  *ran is set when the
 * command ran, *overlap when the claim answered 'overlap'; the command's
 * status, or not_mine_exit, or a store failure's.
 */
static int
claim_and_run(an_cli *cli, int64_t slot, int *ran, int *overlap)
{
	char		token[AN_TOKEN_HEX + 1];
	char		when[40];
	an_request	rq;
	an_claim_result res;
	int			rc;

	*ran = 0;
	*overlap = 0;
	if ((rc = an_cli_new_token(token)) != AN_EXIT_OK)
		return rc;
	an_cli_request(cli, &rq, slot, token);
	memset(&res, 0, sizeof(res));
	an_store_clear(cli->store);
	if (an_store_claim(cli->store, &rq, &res) != AN_OK)
		return an_cli_store_failed(cli, NULL);
	an_cli_format_time(slot, when, sizeof(when));
	if (res.outcome != AN_WON)
	{
		*overlap = res.outcome == AN_OVERLAP;
		if (cli->verbose)
			an_cli_error("%s at %s: %s, not this host's to run", cli->job, when, an_outcome_name(res.outcome));
		return cli->not_mine_exit;
	}
	if (cli->verbose)
		an_cli_error("%s at %s: won (attempt %d), running %s", cli->job, when, (int) res.attempt,
					 cli->command[0]);
	*ran = 1;
	return an_cli_supervise(cli, slot, token, res.attempt);
}

int
an_cli_run(an_cli *cli)
{
	char		err[AN_ERRMAX];
	int64_t		due[AN_DUE_MAX];
	size_t		n = 0;
	int64_t		slot,
				fire_at,
				now;
	int			rc,
				ran,
				overlap,
				ran_any = 0;

	if (cli->run_now)
		return an_cli_run_now(cli);
	if ((rc = an_cli_command_check(cli)) != AN_EXIT_OK || (rc = an_cli_slot(cli, &slot)) != AN_EXIT_OK)
		return rc;
	/* The moment the slot was read: due slots are judged then, not after the jitter. */
	now = an_cli_now_ms();
	if (an_fire_at(cli->job, strlen(cli->job), slot, cli->jitter_ms, cli->settings.max_late_ms,
				   &fire_at, err, sizeof(err)) != AN_OK)
	{
		an_cli_error("--jitter: %s", err);
		return AN_EXIT_USAGE;
	}
	/*
	 * The URL is checked now, so that a bad one is refused at once rather
	 * than after the wait; the store is opened after it (a connection idle
	 * through the jitter could be dropped).  A stop signal ends the wait.
	 */
	if ((rc = an_cli_check_store(cli)) != AN_EXIT_OK)
		return rc;
	an_cli_catch_signals();
	if (!sleep_until(fire_at))
		return 128 + an_cli_signal;
	if ((rc = an_cli_open(cli)) != AN_EXIT_OK)
		return rc;
	an_store_clear(cli->store);
	if (cli->store->m->validate && cli->store->m->validate(cli->store, &cli->settings) != AN_OK)
		return an_cli_store_failed(cli, NULL);

	if (cli->has_schedule && (rc = an_cli_due_slots(cli, now, due, &n)) != AN_EXIT_OK)
		return rc;
	/*
	 * --slot, or a current slot already late with nothing to catch up: that
	 * one slot is claimed, and a late one answers 'late' as it always did.
	 */
	if (n == 0)
		due[n++] = slot;
	rc = cli->not_mine_exit;
	for (size_t i = 0; i < n; i++)
	{
		int			one = claim_and_run(cli, due[i], &ran, &overlap);

		ran_any |= ran;
		/* A store failure, or a command that failed: the later slots are left to the next call. */
		if (ran ? one != AN_EXIT_OK : one != cli->not_mine_exit)
			return one;
		/*
		 * 'overlap': another instance holds a run of the job, and goes on to
		 * the later slots once it ends.  Claiming them now could win a later
		 * slot in the moment between its finish and its next claim, and that
		 * claim would then answer 'overlap' too: a missed slot skipped by all.
		 */
		if (overlap)
			break;
		if (an_cli_signal)
			return 128 + an_cli_signal;
	}
	return ran_any ? AN_EXIT_OK : rc;
}
