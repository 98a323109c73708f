/*
 * supervise.c — the command of a won slot, run under a lease.
 *
 * One process, no threads: the stop signals and SIGCHLD are blocked and
 * taken with sigtimedwait, whose timeout is the next heartbeat or deadline,
 * so a heartbeat is never cut short by a signal and a signal is never lost
 * while a heartbeat waits on the network.
 *
 * The command owns a process group of its own, and every stop goes to the
 * whole group: a shell's children, make's jobs, a pipeline.  anarchon is the
 * subreaper of the command's orphans, and the run ends only once the group
 * is gone (a command that exits leaving members behind has them stopped as
 * for a lost lease).
 *
 * The lease is counted from when the claim or the last confirmed renewal
 * was SENT: the store may have begun it any time after.  The command gets
 * SIGTERM at that moment + lease_ms - kill_after - a safety margin, and
 * SIGKILL kill_after later, so it has ended before the lease can end and
 * another host take the run over.  That deadline is kept by the watchdog
 * (watchdog.c), a second process, so a heartbeat blocked on a frozen store
 * does not delay it, and anarchon's own death stops the group too.  A
 * heartbeat answered fenced (another host took the run over, or a later
 * slot won under overlap 'replace') stops it at once.  Nothing here can
 * stop a write the command already sent; a command that must not overlap
 * its successor fences its own writes with ANARCHON_TOKEN (doc/cli.md).
 *
 * A command whose exec fails (found before the claim, gone since) ran not at
 * all: its run is not failed but left to the fleet, its lease given up
 * (exec_failed).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "duration.h"
#include "watchdog.h"

#define HEARTBEAT_MIN_MS 10
/* How often a stop polls for the group's end, beside SIGCHLD. */
#define GROUP_POLL_MS 20

typedef struct supervised
{
	an_cli	   *cli;
	an_request	rq;
	char		when[40];        /* the slot, for messages */
	pid_t		pid;             /* the command, leader of its group */
	an_watchdog dog;
	int			fg;              /* the command was given the terminal */
	/* Monotonic ms. */
	int64_t		last_sent_ms;    /* the last confirmed renewal (or the claim) was sent */
	int64_t		term_off;        /* from last_sent_ms to the SIGTERM */
	int64_t		kill_window;     /* from that SIGTERM to the SIGKILL */
	int			shortened;       /* kill_window is less than --kill-after */
	int64_t		interval;        /* between heartbeats */
	int64_t		next_beat_ms;
	int64_t		kill_at_ms;      /* anarchon's own SIGKILL, should the watchdog be gone; 0: none */
	int			stopping;        /* a stop of the group is under way */
	int			lost;
	int			done;            /* the leader has ended; status is its */
	int			status;          /* waitpid's */
	char		beat_error[AN_ERRTEXTMAX];	/* the last heartbeat's failure, for the message */
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

/*
 * The child: a process group of its own (set here and in the parent, so that
 * neither can signal the group before it exists), the terminal when anarchon
 * had it, named to the watchdog, default signals, then the command.
 */
static void
exec_command(const an_cli *cli, const sigset_t *old_mask, pid_t parent, int fg, int dog_fd, int exec_fd)
{
	int			err;

	char	   *sh[4] = {"/bin/sh", "-c", NULL, NULL};
	size_t		len = 1;
	char	  **argv = cli->command;

	setpgid(0, 0);
	/* SIGTTOU is blocked (the parent's mask): a background group may take the terminal. */
	if (fg)
		tcsetpgrp(STDIN_FILENO, getpid());
	an_watchdog_group(dog_fd, getpid());
	signal(SIGPIPE, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	sigprocmask(SIG_SETMASK, old_mask, NULL);
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
	/* Nothing ran: the parent learns why on exec_fd (closed by a successful exec). */
	err = errno;
	if (write(exec_fd, &err, sizeof(err)) != (ssize_t) sizeof(err))
		fprintf(stderr, "anarchon: cannot run %s: %s\n", argv[0], strerror(err));
	_exit(err == ENOENT ? AN_EXIT_NOTFOUND : AN_EXIT_NOEXEC);
}

/*
 * The exec failed: nothing ran, so the slot is not this host's to fail.  The
 * run is left running and its lease is given up (renewed to the shortest
 * lease there is, so it has run out at once): a host with attempts left
 * takes the slot over at its claim, as after any lost lease, and with one
 * attempt the next claim marks it interrupted, as a run whose host vanished
 * (core/lease.c).  Finishing it failed would end the slot for the fleet.
 */
static int
exec_failed(supervised *s, int err)
{
	an_settings gone = s->cli->settings;
	an_request	rq = s->rq;
	int			owned = 0;
	int			given = 0;

	gone.lease_ms = AN_LEASE_MS_MIN;
	rq.settings = &gone;
	an_store_clear(s->cli->store);
	given = an_store_heartbeat(s->cli->store, &rq, &owned) == AN_OK && owned;
	an_cli_error("cannot run %s: %s; nothing ran: %s", s->cli->shell ? "/bin/sh" : s->cli->command[0],
				 strerror(err), given
				 ? "the lease of the run was given up, so that another host can take the slot over"
				 " (with --attempts 2 or more; with one attempt the slot ends interrupted)"
				 : "the lease of the run could not be given up; it ends by itself");
	return err == ENOENT ? AN_EXIT_NOTFOUND : AN_EXIT_NOEXEC;
}

/*
 * Where the stop falls in the lease.  safety covers the clocks' rates (the
 * store's and this host's may differ by a fraction of a percent: 1 % of the
 * lease) and the time a signal takes to land and a process to die (50 ms at
 * least).  SIGKILL comes safety before the lease can end, SIGTERM kill_after
 * before it; a kill_after that would leave less than half the lease between
 * a renewal and the SIGTERM is shortened, and the message says so.
 */
static void
plan(supervised *s)
{
	int64_t		lease = s->cli->settings.lease_ms;
	int64_t		kill_after = s->cli->kill_after_ms;
	int64_t		safety = lease / 100 > 50 ? lease / 100 : 50;

	if (safety > lease / 2)
		safety = lease / 2;
	if (lease - safety - kill_after >= lease / 2)
	{
		s->term_off = lease - safety - kill_after;
		s->kill_window = kill_after;
	}
	else
	{
		s->term_off = lease / 2;
		s->kill_window = lease - safety - s->term_off;
		s->shortened = s->kill_window < kill_after;
	}
	/* Three tries before the SIGTERM is due. */
	s->interval = s->term_off / 3 > HEARTBEAT_MIN_MS ? s->term_off / 3 : HEARTBEAT_MIN_MS;
}

/* Stop the whole group: by the watchdog, or by anarchon when the watchdog is gone. */
static void
stop_group(supervised *s, int64_t window)
{
	int64_t		now = an_cli_mono_ms();

	if (s->stopping)
		return;
	s->stopping = 1;
	if (s->dog.pid > 0)
		an_watchdog_stop(&s->dog);
	else
		kill(-s->pid, window > 0 ? SIGTERM : SIGKILL);
	/* The watchdog's SIGKILL falls by then; this one only if it is gone. */
	s->kill_at_ms = now + window + (s->dog.pid > 0 ? 100 : 0);
}

/*
 * The lease is lost: say so, and stop the group.  at_deadline: the SIGTERM
 * deadline has come (the watchdog sends it then, even if we were blocked):
 * the stop is the planned one.  Otherwise (fenced) it starts now, its
 * SIGKILL still no later than the lease's.
 */
static void
lose(supervised *s, const char *why, int at_deadline)
{
	int64_t		lease_end_window = s->last_sent_ms + s->term_off + s->kill_window - an_cli_mono_ms();
	int64_t		window = s->cli->kill_after_ms < lease_end_window ? s->cli->kill_after_ms : lease_end_window;
	char		kill_text[200] = "",
				wtext[AN_DURATION_MAX];

	if (at_deadline)
		window = s->kill_window;
	if (window < 0)
		window = 0;
	an_duration_text(window, wtext, sizeof(wtext));
	if (window > 0)
		snprintf(kill_text, sizeof(kill_text), "SIGTERM, then SIGKILL after %s%s", wtext,
				 s->shortened || window < s->cli->kill_after_ms
				 ? " (--kill-after shortened: it cannot run out before the lease could end)" : "");
	an_cli_error("lost the lease of %s at %s (%s); stopping the command's process group with %s",
				 s->cli->job, s->when, why, window > 0 ? kill_text : "SIGKILL");
	s->lost = 1;
	stop_group(s, window);
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
	int64_t		sent = an_cli_mono_ms();
	int			owned = 0;

	an_store_clear(st);
	if (an_store_heartbeat(st, &s->rq, &owned) == AN_OK)
	{
		if (!owned)
		{
			lose(s, fenced_why(s), 0);
			return;
		}
		s->last_sent_ms = sent;
		an_watchdog_deadline(&s->dog, sent + s->term_off);
		s->beat_error[0] = '\0';
		s->next_beat_ms = an_cli_mono_ms() + s->interval;
		return;
	}
	an_err_text(&st->err, s->beat_error, sizeof(s->beat_error));
	/* A failed heartbeat is tried again sooner: the deadline does not move. */
	s->next_beat_ms = an_cli_mono_ms() + (s->interval / 2 > HEARTBEAT_MIN_MS ? s->interval / 2 : HEARTBEAT_MIN_MS);
}

/*
 * The command's group has ended (or never ran): end the watchdog, give the
 * terminal back to anarchon's own group, and restore the signal mask.
 */
static void
let_go(supervised *s, const sigset_t *old)
{
	an_watchdog_end(&s->dog);
	if (s->dog.pid > 0)
		waitpid(s->dog.pid, NULL, 0);
	if (s->fg)
		tcsetpgrp(STDIN_FILENO, getpgrp());
	sigprocmask(SIG_SETMASK, old, NULL);
}

/* Wait for a signal until deadline_ms (an_cli_mono_ms); the signal, or 0 at the deadline. */
static int
wait_signal(const sigset_t *set, int64_t deadline_ms)
{
	int64_t		left = deadline_ms - an_cli_mono_ms();
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

/* Reap the leader, the command's orphans (we are their subreaper) and the watchdog. */
static void
reap(supervised *s)
{
	pid_t		pid;
	int			status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
	{
		if (pid == s->pid)
		{
			s->done = 1;
			s->status = status;
		}
		else if (pid == s->dog.pid)
			s->dog.pid = 0;
	}
}

static int
group_gone(pid_t group)
{
	return kill(-group, 0) < 0 && errno == ESRCH;
}

static int64_t
earliest(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

int
an_cli_supervise(an_cli *cli, int64_t slot, const char *token, int32_t attempt, int64_t claim_sent_ms)
{
	supervised	s;
	sigset_t	set,
				blocked,
				old;
	pid_t		parent = getpid();
	int			exec_pipe[2] = {-1, -1},
				exec_errno = 0;
	ssize_t		n;

	memset(&s, 0, sizeof(s));
	s.cli = cli;
	an_cli_request(cli, &s.rq, slot, token);
	an_cli_format_time(slot, s.when, sizeof(s.when));
	s.last_sent_ms = claim_sent_ms;
	plan(&s);
	export_run(cli, slot, token, attempt);

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	/* SIGTTOU too: taking the terminal back from the command's group must not stop us. */
	blocked = set;
	sigaddset(&blocked, SIGTTOU);
	sigprocmask(SIG_BLOCK, &blocked, &old);
	fflush(NULL);
	/* The command's orphans are ours to reap, so that the group's end can be seen. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* The foreground of a terminal goes to the command, which may read it. */
	s.fg = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	if (an_watchdog_start(&s.dog, s.last_sent_ms + s.term_off, s.kill_window, cli->kill_after_ms) != 0 ||
		pipe2(exec_pipe, O_CLOEXEC) != 0 || (s.pid = fork()) < 0)
	{
		an_cli_error("cannot start the command: fork: %s", strerror(errno));
		if (exec_pipe[0] >= 0)
		{
			close(exec_pipe[0]);
			close(exec_pipe[1]);
		}
		an_watchdog_end(&s.dog);
		if (s.dog.pid > 0)
			waitpid(s.dog.pid, NULL, 0);
		an_store_clear(cli->store);
		an_store_finish(cli->store, &s.rq, AN_RUN_FAILED, &(int) {0});
		sigprocmask(SIG_SETMASK, &old, NULL);
		return AN_EXIT_SOFTWARE;
	}
	if (s.pid == 0)
	{
		close(exec_pipe[0]);
		exec_command(cli, &old, parent, s.fg, s.dog.fd, exec_pipe[1]);
	}
	setpgid(s.pid, s.pid);
	if (s.fg)
		tcsetpgrp(STDIN_FILENO, s.pid);
	/* End of file: the exec succeeded (or the child ended before it); an errno: it failed. */
	close(exec_pipe[1]);
	while ((n = read(exec_pipe[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR)
		;
	close(exec_pipe[0]);
	if (n == (ssize_t) sizeof(exec_errno))
	{
		waitpid(s.pid, NULL, 0);
		let_go(&s, &old);
		return exec_failed(&s, exec_errno);
	}

	s.next_beat_ms = s.last_sent_ms + s.interval;
	for (;;)
	{
		int64_t		now,
					deadline = INT64_MAX / 2;
		int			sig;

		reap(&s);
		now = an_cli_mono_ms();
		/* Said even when the watchdog has stopped the group meanwhile (we were blocked or frozen). */
		if (!s.lost && now >= s.last_sent_ms + s.term_off)
		{
			char		why[AN_ERRTEXTMAX + 4 * AN_DURATION_MAX + 200],
						since[AN_DURATION_MAX],
						lease[AN_DURATION_MAX];

			an_duration_text(now - s.last_sent_ms, since, sizeof(since));
			an_duration_text(cli->settings.lease_ms, lease, sizeof(lease));
			snprintf(why, sizeof(why), "no renewal confirmed for %s: the lease of %s could end"
					 " before the command is stopped%s%s", since, lease,
					 s.beat_error[0] ? "; last error: " : "", s.beat_error);
			lose(&s, why, 1);
		}
		if (s.done && group_gone(s.pid))
			break;
		if (s.done && !s.stopping)
		{
			if (cli->verbose)
				an_cli_error("the command of %s at %s ended, leaving processes in its group; stopping them",
							 cli->job, s.when);
			stop_group(&s, cli->kill_after_ms);
		}
		if (s.stopping && s.kill_at_ms && now >= s.kill_at_ms)
		{
			kill(-s.pid, SIGKILL);
			s.kill_at_ms = 0;
		}
		if (!s.lost && now >= s.next_beat_ms)
		{
			beat(&s);
			continue;
		}
		if (!s.lost)
			deadline = earliest(s.next_beat_ms, s.last_sent_ms + s.term_off);
		if (s.kill_at_ms)
			deadline = earliest(deadline, s.kill_at_ms);
		if (s.stopping)
			deadline = earliest(deadline, now + GROUP_POLL_MS);
		sig = wait_signal(&set, deadline);
		/* A stop signal goes to the whole group, once: the terminal no longer sends it there. */
		if (sig != 0 && sig != SIGCHLD)
			kill(-s.pid, sig);
	}
	let_go(&s, &old);
	finish(&s);
	if (WIFSIGNALED(s.status))
		return 128 + WTERMSIG(s.status);
	return WEXITSTATUS(s.status);
}
