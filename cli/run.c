/*
 * run.c — `anarchon run`, the crontab wrapper: work out the slots, claim
 * them, and run the command for each one this host won.
 *
 * The slot is the schedule's, never the moment cron fired: every host of a
 * fleet, early or late by a few seconds, names the same slot.  With
 * --schedule the slots are anarchon_due's (schedule/due.h): the current one and,
 * under --catch-up, missed ones before it, claimed oldest first, each an
 * ordinary claim that one host of the fleet wins.  --slot names one slot and
 * never catches up.  The command is looked up before anything is claimed (and
 * a script's #! interpreter with it), so a typo in a crontab never wins a
 * slot that then runs nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "duration.h"

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

/*
 * The interpreter a script's "#!" line names, into interp ("" when path is
 * not a script, or cannot be read: the exec will say).  The kernel reads up
 * to the first blank or end of line.
 */
static void
interpreter_of(const char *path, char *interp, size_t len)
{
	char		head[256];
	FILE	   *f = fopen(path, "re");
	size_t		n = 0;

	interp[0] = '\0';
	if (f == NULL)
		return;
	n = fread(head, 1, sizeof(head) - 1, f);
	fclose(f);
	head[n] = '\0';
	if (n < 3 || head[0] != '#' || head[1] != '!')
		return;
	{
		const char *p = head + 2 + strspn(head + 2, " \t");
		size_t		w = strcspn(p, " \t\n");

		/* A name cut by the end of a full buffer is not checked. */
		if (w > 0 && w < len && (p[w] != '\0' || n < sizeof(head) - 1))
			snprintf(interp, len, "%.*s", (int) w, p);
	}
}

int
an_cli_command_check(const an_cli *cli)
{
	const char *prog = cli->shell ? "/bin/sh" : cli->command[0];
	const char *path = getenv("PATH");
	char	   *where = NULL;
	char		interp[256];
	int			found = ENOENT;

	if (strchr(prog, '/'))
	{
		found = executable(prog);
		where = found == 0 ? strdup(prog) : NULL;
	}
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
			if (r == 0)
				where = full;
			else
				free(full);
			if (r == 0 || (r == EACCES && found == ENOENT))
				found = r;
			path += n + (path[n] == ':');
		}
	}
	if (found != 0)
	{
		an_cli_error("%s: %s; nothing was claimed", prog,
					 found == ENOENT ? "command not found" : "not an executable file");
		return found == ENOENT ? AN_EXIT_NOTFOUND : AN_EXIT_NOEXEC;
	}
	if (where == NULL)
		return AN_EXIT_SOFTWARE;
	/*
	 * A script whose "#!" names a missing interpreter fails only at exec,
	 * after the win; checked here, the slot stays the fleet's.
	 */
	interpreter_of(where, interp, sizeof(interp));
	free(where);
	if (interp[0] && (found = executable(interp)) != 0)
	{
		an_cli_error("%s: its #! interpreter %s %s; nothing was claimed", prog, interp,
					 found == ENOENT ? "was not found" : "is not an executable file");
		return found == ENOENT ? AN_EXIT_NOTFOUND : AN_EXIT_NOEXEC;
	}
	return AN_EXIT_OK;
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
 * A --slot that has not begun: the command would otherwise sit there without
 * a word until then.  Said always, not only under --verbose: a slot given
 * by hand is typed by someone watching.  (A schedule's slot has always
 * begun, so a crontab line never says it; its jitter is a wait of seconds.)
 */
static void
say_wait(const an_cli *cli, int64_t slot, int64_t fire_at, int64_t now)
{
	char		when[40],
				until[40],
				left[AN_DURATION_MAX];

	an_cli_format_time(slot, when, sizeof(when));
	an_cli_format_time(fire_at, until, sizeof(until));
	an_duration_words(fire_at - now, left, sizeof(left));
	if (fire_at == slot)
		an_cli_error("%s at %s: the slot has not begun; waiting until then (in %s) to claim it",
					 cli->job, when, left);
	else
		an_cli_error("%s at %s: the slot has not begun; waiting until %s (in %s, the slot and its"
					 " jitter) to claim it", cli->job, when, until, left);
}

/*
 * run --token: the claim was made before, by another process (anarchon
 * cron's batch) at a moment this one cannot know, so the lease is counted
 * from a renewal sent now, not from the claim sent again, which leaves the
 * lease as it was.  A lease lost in between is fenced: not run.
 */
static int
renew_taken_up(an_cli *cli, const an_request *rq, const char *when, int64_t *sent, int *owned)
{
	char		what[AN_JOB_MAX + 80];

	*owned = 0;
	an_store_clear(cli->store);
	*sent = an_cli_mono_ms();
	snprintf(what, sizeof(what), "%s at %s: error, not run: the lease of its claim was not renewed", cli->job, when);
	if (an_store_heartbeat(cli->store, rq, owned) != AN_OK)
		return an_cli_store_failed(cli, cli->verbose ? what : NULL);
	if (!*owned && cli->verbose)
		an_cli_error("%s at %s: fenced, not run: its claim's lease ran out before the command started", cli->job, when);
	return *owned ? AN_EXIT_OK : cli->not_mine_exit;
}

/*
 * Claim one slot and, when won, run the command for it.  *ran is set when the
 * command ran, *overlap when the claim answered 'overlap'; the command's
 * status, or not_mine_exit, or a store failure's.
 */
static int
claim_and_run_one(an_cli *cli, int64_t slot, an_claim_kind kind, int *ran, int *overlap,
				  an_claim_result *out, int *claimed)
{
	char		token[AN_TOKEN_MAX + 1];
	char		when[40];
	an_request	rq;
	an_claim_result res;
	int64_t		sent;
	int			rc;

	*ran = 0;
	*overlap = 0;
	/* --token is 1 to 64 bytes (options.c checks it): kept whole. */
	if (cli->token)
		snprintf(token, sizeof(token), "%s", cli->token);
	else if ((rc = an_cli_new_token(token)) != AN_EXIT_OK)
		return rc;
	an_cli_request(cli, &rq, slot, token);
	rq.kind = kind;
	memset(&res, 0, sizeof(res));
	an_store_clear(cli->store);
	/* The lease is counted from the request, not the reply: the store may have begun it any time in between. */
	sent = an_cli_mono_ms();
	an_cli_format_time(slot, when, sizeof(when));
	if (an_store_claim(cli->store, &rq, &res) != AN_OK)
	{
		char		what[AN_JOB_MAX + 80];

		/* Under --verbose every slot has its line, this one too (anarchon cron's log). */
		snprintf(what, sizeof(what), "%s at %s: error, not claimed", cli->job, when);
		return an_cli_store_failed(cli, cli->verbose ? what : NULL);
	}
	*out = res;
	*claimed = 1;
	if (res.outcome != AN_WON)
	{
		*overlap = res.outcome == AN_OVERLAP;
		if (cli->verbose)
			an_cli_error("%s at %s: %s, not this host's to run", cli->job, when, an_outcome_name(res.outcome));
		return cli->not_mine_exit;
	}
	if (cli->token)
	{
		int			owned;

		rc = renew_taken_up(cli, &rq, when, &sent, &owned);
		if (!owned)
			return rc;
	}
	if (cli->verbose)
		an_cli_error("%s at %s: won (attempt %d), running %s", cli->job, when, (int) res.attempt,
					 cli->command[0]);
	*ran = 1;
	return an_cli_supervise(cli, slot, token, res.attempt, sent);
}

/* One slot, and its line under --log-format json: the outcome, or "error" when no claim was answered. */
static int
claim_and_run(an_cli *cli, int64_t slot, an_claim_kind kind, int *ran, int *overlap)
{
	an_claim_result res;
	int64_t		start = an_cli_mono_ms();
	int			claimed = 0;
	int			rc = claim_and_run_one(cli, slot, kind, ran, overlap, &res, &claimed);

	an_cli_log_slot(cli, slot, claimed ? an_outcome_name(res.outcome) : "error",
					claimed && res.outcome == AN_WON ? res.attempt : 0, rc, an_cli_mono_ms() - start);
	return rc;
}

/*
 * The store could not be opened for the slot: under --verbose its line says
 * so with the job and the slot, after the store's own message.
 */
static int
not_opened(const an_cli *cli, int64_t slot, int rc)
{
	char		when[40];

	if (cli->verbose)
	{
		an_cli_format_time(slot, when, sizeof(when));
		an_cli_error("%s at %s: error, not claimed: the store could not be opened (exit %d)", cli->job, when, rc);
	}
	return rc;
}

int
an_cli_run(an_cli *cli)
{
	an_err		err;
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
				   &fire_at, &err) != AN_OK)
	{
		an_cli_error("--jitter: %s", AN_ERR_TEXT(&err));
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
	if (slot > now)
		say_wait(cli, slot, fire_at, now);
	if (!sleep_until(fire_at))
		return 128 + an_cli_signal;
	if ((rc = an_cli_open(cli)) != AN_EXIT_OK)
		return not_opened(cli, slot, rc);
	an_store_clear(cli->store);
	if (cli->store->m->validate && cli->store->m->validate(cli->store, &cli->settings) != AN_OK)
		return not_opened(cli, slot, an_cli_store_failed(cli, NULL));

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
		/* The slots before the current one are missed slots, caught up. */
		int			one = claim_and_run(cli, due[i], due[i] < slot ? AN_CLAIM_CATCHUP : AN_CLAIM_SCHEDULED,
										&ran, &overlap);

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
