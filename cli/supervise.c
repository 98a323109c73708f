/*
 * supervise.c — the command of a won slot, run under a lease.
 *
 * One process, no threads: the stop signals and SIGCHLD are blocked and
 * taken with sigtimedwait, whose timeout is the next heartbeat (or the
 * SIGKILL deadline), so a heartbeat is never cut short by a signal and a
 * signal is never lost while a heartbeat waits on the network.
 *
 * The lease is lost when a heartbeat answers fenced (another host took the
 * slot over, or a later slot won under overlap 'replace') or when none has succeeded for a whole lease (the store cannot
 * be reached: another host may take over at any moment).  The command then
 * gets SIGTERM, and SIGKILL after --kill-after.  It also gets SIGTERM when
 * this process dies (PR_SET_PDEATHSIG): a command whose lease nobody keeps
 * any more must not run on beside its successor.  Nothing here can stop a
 * write the command already sent; a command that must not overlap its
 * successor fences its own writes with ANARCHON_TOKEN (doc/cli.md).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define HEARTBEAT_MIN_MS 10

typedef struct supervised
{
	an_cli	   *cli;
	an_request	rq;
	char		when[40];        /* the slot, for messages */
	pid_t		pid;
	int64_t		last_owned_ms;   /* when the lease was last known to be ours */
	int64_t		next_beat_ms;
	int64_t		kill_at_ms;      /* 0: no SIGKILL pending */
	int			lost;
	int			status;          /* waitpid's */
} supervised;

static void
export_run(const an_cli *cli, int64_t slot, const char *token, int32_t attempt)
{
	char		num[32];

	setenv("ANARCHON_JOB", cli->job, 1);
	snprintf(num, sizeof(num), "%lld", (long long) slot);
	setenv("ANARCHON_SLOT", num, 1);
	setenv("ANARCHON_TOKEN", token, 1);
	snprintf(num, sizeof(num), "%d", (int) attempt);
	setenv("ANARCHON_ATTEMPT", num, 1);
}

/* The child: default signals, tied to our life, then the command. */
static void
exec_command(const an_cli *cli, const sigset_t *old_mask, pid_t parent)
{
	char	   *sh[4] = {"/bin/sh", "-c", NULL, NULL};
	size_t		len = 1;
	char	  **argv = cli->command;

	signal(SIGPIPE, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	sigprocmask(SIG_SETMASK, old_mask, NULL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(AN_EXIT_TEMPFAIL);
	if (cli->shell)
	{
		for (char **w = argv; *w; w++)
			len += strlen(*w) + 1;
		if ((sh[2] = malloc(len)) == NULL)
			_exit(AN_EXIT_SOFTWARE);
		sh[2][0] = '\0';
		for (char **w = argv; *w; w++)
		{
			if (w != argv)
				strcat(sh[2], " ");
			strcat(sh[2], *w);
		}
		argv = sh;
	}
	execvp(argv[0], argv);
	fprintf(stderr, "anarchon: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(errno == ENOENT ? AN_EXIT_NOTFOUND : AN_EXIT_NOEXEC);
}

static void
lose(supervised *s, const char *why)
{
	an_cli_error("lost the lease of %s at %s (%s); stopping the command with %s",
				 s->cli->job, s->when, why, s->cli->kill_after_ms ? "SIGTERM, then SIGKILL" : "SIGKILL");
	s->lost = 1;
	if (s->cli->kill_after_ms)
		kill(s->pid, SIGTERM);
	s->kill_at_ms = an_cli_now_ms() + s->cli->kill_after_ms;
}

/* Why a heartbeat was fenced, in words: a replaced run says so (overlap 'replace'). */
static const char *
fenced_why(supervised *s)
{
	an_check_result res;

	an_store_clear(s->cli->store);
	if (an_store_check(s->cli->store, &s->rq, &res) == AN_OK && res.state == AN_CHECK_REPLACED)
		return "replaced: a later slot of the job won under overlap 'replace'";
	return "another instance holds it now";
}

static void
beat(supervised *s)
{
	an_store   *st = s->cli->store;
	int64_t		sent = an_cli_now_ms();
	int64_t		lease = s->cli->settings.lease_ms;
	int			owned = 0;
	char		text[AN_ERRTEXTMAX];

	an_store_clear(st);
	if (an_store_heartbeat(st, &s->rq, &owned) == AN_OK)
	{
		if (!owned)
		{
			lose(s, fenced_why(s));
			return;
		}
		s->last_owned_ms = sent;
	}
	else if (an_cli_now_ms() - s->last_owned_ms >= lease)
	{
		an_store_error_text(st, text, sizeof(text));
		an_cli_error("no heartbeat of %s at %s succeeded for %lld ms, the whole lease: %s",
					 s->cli->job, s->when, (long long) lease, text);
		lose(s, "the store could not be reached");
		return;
	}
	s->next_beat_ms = an_cli_now_ms() + (lease / 3 > HEARTBEAT_MIN_MS ? lease / 3 : HEARTBEAT_MIN_MS);
}

/* Wait for a signal until deadline_ms; the signal, or 0 at the deadline. */
static int
wait_signal(const sigset_t *set, int64_t deadline_ms)
{
	int64_t		left = deadline_ms - an_cli_now_ms();
	struct timespec ts;
	int			sig;

	if (left < 0)
		left = 0;
	ts.tv_sec = left / 1000;
	ts.tv_nsec = (left % 1000) * 1000000;
	sig = sigtimedwait(set, NULL, &ts);
	return sig < 0 ? 0 : sig;
}

/* Record the run's end; the lease decides whether the store takes it. */
static void
finish(supervised *s)
{
	an_store   *st = s->cli->store;
	int			ok = WIFEXITED(s->status) && WEXITSTATUS(s->status) == 0;
	int			owned = 0;

	an_store_clear(st);
	if (an_store_finish(st, &s->rq, ok && !s->lost ? AN_RUN_SUCCEEDED : AN_RUN_FAILED, &owned) != AN_OK)
		an_cli_store_failed(s->cli, "cannot record the end of the run");
	else if (!owned)
		an_cli_error("finish of %s at %s refused: fenced (another instance took the slot over"
					 " while the command ran)", s->cli->job, s->when);
	else if (s->cli->verbose)
		an_cli_error("%s at %s finished %s", s->cli->job, s->when, ok ? "succeeded" : "failed");
}

int
an_cli_supervise(an_cli *cli, int64_t slot, const char *token, int32_t attempt)
{
	supervised	s;
	sigset_t	set,
				old;
	pid_t		parent = getpid();

	memset(&s, 0, sizeof(s));
	s.cli = cli;
	an_cli_request(cli, &s.rq, slot, token);
	an_cli_format_time(slot, s.when, sizeof(s.when));
	s.last_owned_ms = an_cli_now_ms();
	export_run(cli, slot, token, attempt);

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigprocmask(SIG_BLOCK, &set, &old);
	fflush(NULL);
	if ((s.pid = fork()) < 0)
	{
		an_cli_error("cannot start the command: fork: %s", strerror(errno));
		an_store_clear(cli->store);
		an_store_finish(cli->store, &s.rq, AN_RUN_FAILED, &(int) {0});
		return AN_EXIT_SOFTWARE;
	}
	if (s.pid == 0)
		exec_command(cli, &old, parent);

	s.next_beat_ms = s.last_owned_ms + (cli->settings.lease_ms / 3 > HEARTBEAT_MIN_MS
										? cli->settings.lease_ms / 3 : HEARTBEAT_MIN_MS);
	for (;;)
	{
		int64_t		deadline = s.lost ? (s.kill_at_ms ? s.kill_at_ms : INT64_MAX / 2) : s.next_beat_ms;
		int			sig = wait_signal(&set, deadline);

		if (sig == SIGCHLD || sig == 0)
		{
			pid_t		done = waitpid(s.pid, &s.status, WNOHANG);

			if (done == s.pid)
				break;
		}
		if (sig != 0 && sig != SIGCHLD)
			kill(s.pid, sig);
		else if (sig == 0 && !s.lost && an_cli_now_ms() >= s.next_beat_ms)
			beat(&s);
		else if (sig == 0 && s.lost && s.kill_at_ms && an_cli_now_ms() >= s.kill_at_ms)
		{
			kill(s.pid, SIGKILL);
			s.kill_at_ms = 0;
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	finish(&s);
	if (WIFSIGNALED(s.status))
		return 128 + WTERMSIG(s.status);
	return WEXITSTATUS(s.status);
}
