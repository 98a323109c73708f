/*
 * watchdog.c — the command's process group stopped on time even when
 * `anarchon run` is blocked or dead (watchdog.h).
 *
 * The forked watchdog obeys the fork rule: it uses nothing of its parent's
 * but the pipe's read end (every other descriptor, the store's connection
 * included, is closed at once) and calls only async-signal-safe functions
 * (poll, read, kill, clock_gettime, write, _exit): the parent may have
 * threads (a store's client library) whose locks a fork copies held.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "watchdog.h"

enum
{
	MSG_GROUP = 1,
	MSG_DEADLINE,
	MSG_STOP,
	MSG_END
};

/* One message: at most PIPE_BUF bytes, so written and read whole. */
typedef struct msg
{
	int64_t		kind;
	int64_t		value;
} msg;

typedef struct dog
{
	pid_t		group;
	int64_t		term_at,
				kill_window,
				kill_after,
				kill_at,         /* 0: no SIGKILL pending */
				killed_at;       /* when the SIGKILL was sent */
	int			stopped;
} dog;

static void
say(const char *text)
{
	ssize_t		n = write(STDERR_FILENO, text, strlen(text));

	(void) n;
}

static void
send_msg(int fd, int64_t kind, int64_t value)
{
	msg			m = {kind, value};
	ssize_t		n;

	if (fd < 0)
		return;
	do
		n = write(fd, &m, sizeof(m));
	while (n < 0 && errno == EINTR);
}

/* SIGTERM (SIGKILL when there is no window) to the group, once. */
static void
stop(dog *d, int64_t now)
{
	int64_t		bound = d->term_at + d->kill_window;

	if (d->stopped || d->group <= 0)
		return;
	d->stopped = 1;
	d->kill_at = now + d->kill_after < bound ? now + d->kill_after : bound;
	if (d->kill_at <= now)
	{
		kill(-d->group, SIGKILL);
		d->kill_at = 0;
		d->killed_at = now;
	}
	else
		kill(-d->group, SIGTERM);
}

static int
group_gone(pid_t group)
{
	return group <= 0 || (kill(-group, 0) < 0 && errno == ESRCH);
}

/* Everything but fd and stderr closed: nothing of the parent's is held. */
static int
keep_only(int fd)
{
	int			keep = fd;

	if (fd <= STDERR_FILENO && (keep = fcntl(fd, F_DUPFD, STDERR_FILENO + 1)) < 0)
		_exit(1);
	close(STDIN_FILENO);
	close(STDOUT_FILENO);
	if (syscall(SYS_close_range, STDERR_FILENO + 1, keep - 1, 0) != 0 ||
		syscall(SYS_close_range, keep + 1, ~0U, 0) != 0)
	{
		long		max = sysconf(_SC_OPEN_MAX);

		for (int i = STDERR_FILENO + 1; i < (max > 0 && max < 65536 ? max : 65536); i++)
			if (i != keep)
				close(i);
	}
	return keep;
}

static void
watch(int fd, dog *d)
{
	int			orphaned = 0;

	for (;;)
	{
		int64_t		now = an_cli_mono_ms();
		int64_t		wake;
		struct pollfd p = {fd, POLLIN, 0};
		msg			m;
		ssize_t		n;

		if (d->group > 0 && !d->stopped && now >= d->term_at)
			stop(d, now);
		if (d->stopped && d->kill_at && now >= d->kill_at)
		{
			kill(-d->group, SIGKILL);
			d->kill_at = 0;
			d->killed_at = now;
		}
		if (orphaned)
		{
			/*
			 * Nobody will tell us to exit: poll the group until it is gone,
			 * or a second after the SIGKILL (its zombies may wait for a
			 * parent that does not reap them).
			 */
			struct timespec ts = {0, 20 * 1000000};

			if (group_gone(d->group) || (d->stopped && !d->kill_at && now >= d->killed_at + 1000))
				_exit(0);
			nanosleep(&ts, NULL);
			continue;
		}
		wake = d->stopped ? (d->kill_at ? d->kill_at : INT64_MAX) : (d->group > 0 ? d->term_at : INT64_MAX);
		if (poll(&p, 1, wake == INT64_MAX ? -1 : (int) (wake - now > 0 ? (wake - now < 60000 ? wake - now : 60000) : 0)) <= 0)
			continue;
		n = read(fd, &m, sizeof(m));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t) sizeof(m))
		{
			/* End of file: anarchon is gone, and nobody keeps the lease. */
			orphaned = 1;
			if (!group_gone(d->group) && !d->stopped)
			{
				say("anarchon: the process that kept the lease is gone; stopping the command's process group\n");
				stop(d, an_cli_mono_ms());
			}
			continue;
		}
		if (m.kind == MSG_GROUP)
			d->group = (pid_t) m.value;
		else if (m.kind == MSG_DEADLINE && !d->stopped)
			d->term_at = m.value;
		else if (m.kind == MSG_STOP)
			stop(d, an_cli_mono_ms());
		else if (m.kind == MSG_END)
			_exit(0);
	}
}

int
an_watchdog_start(an_watchdog *w, int64_t term_at, int64_t kill_window, int64_t kill_after)
{
	int			fds[2];
	pid_t		pid;

	w->pid = 0;
	w->fd = -1;
	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	if ((pid = fork()) < 0)
	{
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0)
	{
		struct sigaction ign;
		sigset_t	none;
		dog			d = {0, term_at, kill_window, kill_after, 0, 0, 0};
		int			ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTTOU, SIGTTIN, SIGTSTP};

		/*
		 * Its own process group: the terminal's ^C and a signal to
		 * anarchon's group leave it be.  The stop signals are ignored, so
		 * that a signal meant for the service (systemd's to every process)
		 * does not end it before it has stopped the command.
		 */
		setpgid(0, 0);
		memset(&ign, 0, sizeof(ign));
		ign.sa_handler = SIG_IGN;
		for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
			sigaction(ignored[i], &ign, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(fds[1]);
		watch(keep_only(fds[0]), &d);
		_exit(0);
	}
	close(fds[0]);
	w->pid = pid;
	w->fd = fds[1];
	return 0;
}

void
an_watchdog_group(int fd, pid_t pgid)
{
	send_msg(fd, MSG_GROUP, pgid);
}

void
an_watchdog_deadline(an_watchdog *w, int64_t term_at)
{
	send_msg(w->fd, MSG_DEADLINE, term_at);
}

void
an_watchdog_stop(an_watchdog *w)
{
	send_msg(w->fd, MSG_STOP, 0);
}

void
an_watchdog_end(an_watchdog *w)
{
	send_msg(w->fd, MSG_END, 0);
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}
