/*
 * cron.c — `anarchon cron FILE`: a crontab daemon for every replica of a
 * fleet, each job's command run once per slot across the fleet.
 *
 * The daemon works out each job's next slot with the core schedule code
 * (crontab.c applies the year field), sleeps until the earliest, and claims
 * every slot that begins in that second in one batch of its own connection
 * (cron_claim.c).  For a slot it won it starts a child that runs exactly
 * `anarchon run --job NAME --slot SLOT --token TOKEN --verbose --shell --
 * COMMAND` with the job's settings: the one path that takes a claim up,
 * keeps the lease alive, stops the command's process group and finishes the
 * run.  A lost slot costs the replica one claim and no process.  A job with
 * jitter, and a slot the batch could not answer, gets a child that claims it
 * itself.  A child is a fresh process (exec), so no connection or library
 * state crosses the fork (DESIGN.md section 8): it closes every descriptor
 * of the daemon's, and the store URL reaches it in ANARCHON_STORE, not in
 * its arguments, which ps shows.
 *
 * Each child is the leader of a process group of its own: a ^C typed at the
 * terminal reaches the daemon only, and the daemon passes it to each running
 * child once; the child passes it to its command's group, as `anarchon run`
 * does.  A stop signal ends the starting of new runs; the daemon exits 0
 * once every child has ended.  SIGHUP reads the file again (reload): the
 * running children go on, whatever job they were started for.  A child's failure is its slot's, never the
 * daemon's.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cron_claim.h"
#include "cron_metrics.h"
#include "crontab.h"
#include "duration.h"

typedef struct child
{
	pid_t		pid;
	char		name[AN_JOB_MAX + 1];	/* its job's, which a reload may drop */
	int64_t		slot;
} child;

typedef struct daemon_state
{
	an_cli	   *cli;
	an_crontab	tab;
	int64_t    *next;            /* each job's next slot */
	int		   *has_next;
	child	   *kids;
	size_t		nkids,
				capkids;
	sigset_t	set,
				old;
	an_cron_metrics *metrics;    /* --metrics-listen, or NULL */
	an_cron_claimer claimer;     /* the daemon's own connection to the store */
} daemon_state;

/* `cron --check`: one line per job, tab-separated, after a header. */
static void
print_jobs(const an_crontab *tab, int64_t now)
{
	printf("name\tschedule\tzone\tnext\tcommand\n");
	for (size_t i = 0; i < tab->n; i++)
	{
		const an_cron_job *j = &tab->jobs[i];
		an_err		err;
		char		when[40] = "none";
		int64_t		slot;
		int			found = 0;

		if (an_crontab_next(j, now, &slot, &found, &err) == AN_OK && found)
			an_cli_format_time(slot, when, sizeof(when));
		printf("%s\t%s\t%s\t%s\t%s\n", j->name, j->schedule_text, j->zone ? j->zone : "UTC", when, j->command);
	}
}

/* The child's argv: anarchon run with the job's settings. */
static char **
run_argv(const an_cli *cli, const an_cron_job *j, int64_t slot, const char *token)
{
	char	  **argv = calloc(64, sizeof(char *));
	char		buf[64];
	int			n = 0;

	if (argv == NULL)
		return NULL;
#define ADD(s) (argv[n++] = strdup(s))
	ADD("anarchon");
	ADD("run");
	ADD("--job");
	ADD(j->name);
	snprintf(buf, sizeof(buf), "%lld", (long long) slot);
	ADD("--slot");
	ADD(buf);
	ADD("--verbose");
	if (token)
	{
		ADD("--token");
		ADD(token);
	}
	snprintf(buf, sizeof(buf), "%lld", (long long) j->kill_after_ms);
	ADD("--kill-after");
	ADD(buf);
	snprintf(buf, sizeof(buf), "%lld", (long long) j->jitter_ms);
	ADD("--jitter");
	ADD(buf);
	if (cli->log_json)
	{
		ADD("--log-format");
		ADD("json");
	}
	for (int i = 0; an_cli_setting_name(i); i++)
	{
		const char *name = an_cli_setting_name(i);
		an_err		err;

		/* cron never catches up (crontab.c): run --slot does not either. */
		if (strncmp(name, "catch_up", 8) == 0 ||
			an_settings_get(&j->settings, name, buf, sizeof(buf), &err) != AN_OK)
			continue;
		ADD(an_cli_setting_flag(NULL, name));
		ADD(buf);
	}
	ADD("--shell");
	ADD("--");
	ADD(j->command);
#undef ADD
	for (int i = 0; i < n; i++)
		if (argv[i] == NULL)
		{
			for (int k = 0; k < n; k++)
				free(argv[k]);
			free(argv);
			return NULL;
		}
	return argv;
}

static void
free_argv(char **argv)
{
	for (char **a = argv; a && *a; a++)
		free(*a);
	free(argv);
}

static void
say_name(const char *name, int64_t slot, const char *what)
{
	char		when[40];

	an_cli_format_time(slot, when, sizeof(when));
	an_cli_error("%s at %s: %s", name, when, what);
}

static void
say(const an_cron_job *j, int64_t slot, const char *what)
{
	say_name(j->name, slot, what);
}

/*
 * Start the child of job i's slot: with a token, the one the daemon's batch
 * claimed it with (won, or not answered); without, a child that claims it
 * itself after the job's jitter.
 */
static void
spawn(daemon_state *d, size_t i, int64_t slot, const char *token)
{
	const an_cron_job *j = &d->tab.jobs[i];
	char	  **argv = run_argv(d->cli, j, slot, token);
	pid_t		pid;

	if (argv != NULL && d->nkids == d->capkids)
	{
		size_t		cap = d->capkids ? 2 * d->capkids : 16;
		child	   *grown = realloc(d->kids, cap * sizeof(child));

		if (grown)
		{
			d->kids = grown;
			d->capkids = cap;
		}
	}
	if (argv == NULL || d->nkids == d->capkids)
	{
		say(j, slot, "error, not claimed: out of memory");
		an_cron_metrics_job(d->metrics, j->name)->not_started++;
		free_argv(argv);
		return;
	}
	fflush(NULL);
	if ((pid = fork()) < 0)
	{
		char		msg[200];

		snprintf(msg, sizeof(msg), "error, not claimed: cannot start anarchon run: fork: %s", strerror(errno));
		say(j, slot, msg);
		an_cron_metrics_job(d->metrics, j->name)->not_started++;
		free_argv(argv);
		return;
	}
	if (pid == 0)
	{
		struct timespec zero = {0, 0};
		int			fd;

		setpgid(0, 0);
		/* A stop that reached the whole group before setpgid is the daemon's to pass on. */
		while (sigtimedwait(&d->set, NULL, &zero) > 0)
			;
		signal(SIGCHLD, SIG_DFL);
		sigprocmask(SIG_SETMASK, &d->old, NULL);
		/* Runs share no terminal input: several may run at once. */
		if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
			dup2(fd, STDIN_FILENO);
		/* Nothing of the daemon's (its store's connection, the metrics' sockets) reaches a command. */
		close_range(3, ~0U, 0);
		an_crontab_setenv(&d->tab, j);
		setenv("ANARCHON_STORE", d->cli->store_url, 1);
		execv("/proc/self/exe", argv);
		fprintf(stderr, "anarchon: cannot run /proc/self/exe: %s\n", strerror(errno));
		_exit(AN_EXIT_SOFTWARE);
	}
	setpgid(pid, pid);
	free_argv(argv);
	d->kids[d->nkids].pid = pid;
	d->kids[d->nkids].slot = slot;
	memcpy(d->kids[d->nkids].name, j->name, sizeof(j->name));
	d->nkids++;
	an_cron_metrics_job(d->metrics, j->name)->started++;
}

/* Room for more due slots; 0 when there is no memory (each then claims alone). */
static int
grow_due(an_cron_due **due, size_t *cap)
{
	size_t		want = *cap ? 2 * *cap : 16;
	an_cron_due *grown = realloc(*due, want * sizeof(an_cron_due));

	if (grown == NULL)
		return 0;
	*due = grown;
	*cap = want;
	return 1;
}

/* Reap ended children; one that died of a signal or could not start says so. */
static void
reap(daemon_state *d)
{
	pid_t		pid;
	int			status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		for (size_t k = 0; k < d->nkids; k++)
			if (d->kids[k].pid == pid)
			{
				an_cron_metrics_job(d->metrics, d->kids[k].name)->ended[WIFSIGNALED(status) ? 2 :
																	   WEXITSTATUS(status) == 0 ? 0 : 1]++;
				if (WIFSIGNALED(status))
				{
					char		msg[100];

					snprintf(msg, sizeof(msg), "error: anarchon run ended by signal %d", WTERMSIG(status));
					say_name(d->kids[k].name, d->kids[k].slot, msg);
				}
				d->kids[k] = d->kids[--d->nkids];
				break;
			}
}

/* What the batch said of one slot: its child started, or its line said. */
static void
answered(daemon_state *d, const an_cron_due *due, int64_t took_ms)
{
	const an_cron_job *j = &d->tab.jobs[due->job];
	char		msg[AN_ERRTEXTMAX + 40];

	if (!due->answered || (!due->failed && due->outcome == AN_WON))
	{
		spawn(d, due->job, due->slot, due->token);
		return;
	}
	if (due->failed)
	{
		snprintf(msg, sizeof(msg), "error, not claimed: %s", due->text);
		an_cron_metrics_job(d->metrics, j->name)->claim_errors++;
	}
	else
	{
		snprintf(msg, sizeof(msg), "%s, not this host's to run", an_outcome_name(due->outcome));
		an_cron_metrics_job(d->metrics, j->name)->not_won++;
	}
	say(j, due->slot, msg);
	an_cli_log_job_slot(d->cli, j->name, due->slot, due->failed ? "error" : an_outcome_name(due->outcome), 0,
						AN_EXIT_OK, took_ms);
}

/*
 * Start the slots that have begun: those of jobs without jitter claimed
 * together (cron_claim.c), the others each by a child after its jitter;
 * skip (and say) those the daemon reached too late to claim.
 */
static void
start_due(daemon_state *d, int64_t now)
{
	an_err		err;
	an_cron_due *due = NULL;
	size_t		n = 0,
				cap = 0;
	int64_t		start;

	for (size_t i = 0; i < d->tab.n; i++)
	{
		const an_cron_job *j = &d->tab.jobs[i];

		while (d->has_next[i] && d->next[i] <= now)
		{
			int64_t		slot = d->next[i];

			if (now - slot > j->settings.max_late_ms)
			{
				char		msg[200],
							late[AN_DURATION_MAX];

				an_duration_words(now - slot, late, sizeof(late));
				snprintf(msg, sizeof(msg), "late, not claimed: the daemon reached it %s after its time"
						 " (max_late_ms %lld)", late, (long long) j->settings.max_late_ms);
				say(j, slot, msg);
				an_cron_metrics_job(d->metrics, j->name)->late++;
				/* Every slot further back than that is late too: on from there. */
				slot = now - j->settings.max_late_ms - 1 > slot ? now - j->settings.max_late_ms - 1 : slot;
			}
			else if (j->jitter_ms == 0 && (n < cap || grow_due(&due, &cap)))
				due[n++] = (an_cron_due) {.job = i, .slot = slot};
			else
				spawn(d, i, slot, NULL);
			if (an_crontab_next(j, slot, &d->next[i], &d->has_next[i], &err) != AN_OK)
			{
				an_cli_error("%s: %s; no more slots of it", j->name, AN_ERR_TEXT(&err));
				d->has_next[i] = 0;
			}
		}
	}
	start = an_cli_mono_ms();
	if (an_cron_claim(&d->claimer, d->cli, &d->tab, due, n) != AN_EXIT_OK)
		for (size_t k = 0; k < n; k++)
			spawn(d, due[k].job, due[k].slot, NULL);
	else
		for (size_t k = 0; k < n; k++)
			answered(d, &due[k], an_cli_mono_ms() - start);
	free(due);
}

/*
 * Each job's first slot after `after`, in arrays sized for tab; on a failure
 * of memory the daemon's arrays are left as they were.
 */
static int
plan(daemon_state *d, const an_crontab *tab, int64_t after)
{
	int64_t    *next = calloc(tab->n ? tab->n : 1, sizeof(int64_t));
	int		   *has_next = calloc(tab->n ? tab->n : 1, sizeof(int));
	an_err		err;

	if (next == NULL || has_next == NULL)
	{
		free(next);
		free(has_next);
		return AN_E_NOMEM;
	}
	for (size_t i = 0; i < tab->n; i++)
		if (an_crontab_next(&tab->jobs[i], after, &next[i], &has_next[i], &err) != AN_OK)
			has_next[i] = 0;
	free(d->next);
	free(d->has_next);
	d->next = next;
	d->has_next = has_next;
	return AN_OK;
}

/*
 * SIGHUP: the file read again.  Every slot up to now was started from the
 * old table just before (start_due), and the new table starts after now, so
 * a slot is neither started twice nor skipped by the reload; a job kept by
 * name keeps its runs in the store, which answers any slot of it that
 * another replica, not yet reloaded, claims too.  A file that no longer
 * reads is said, line by line, and the jobs of the last good one go on.
 */
static void
reload(daemon_state *d, int64_t now)
{
	an_crontab	tab = {0};

	if (an_crontab_read(d->cli, d->cli->command[0], &tab) != AN_EXIT_OK)
	{
		an_cli_error("cron: SIGHUP: %s does not read (above); the %zu job%s read before go on",
					 d->cli->command[0], d->tab.n, d->tab.n == 1 ? "" : "s");
		an_cron_metrics_reloaded(d->metrics, 0);
		an_crontab_free(&tab);
		return;
	}
	if (plan(d, &tab, now) != AN_OK)
	{
		an_cli_error("cron: SIGHUP: out of memory; the %zu job%s read before go on", d->tab.n, d->tab.n == 1 ? "" : "s");
		an_cron_metrics_reloaded(d->metrics, 0);
		an_crontab_free(&tab);
		return;
	}
	an_crontab_free(&d->tab);
	d->tab = tab;
	an_cron_metrics_reloaded(d->metrics, 1);
	an_cli_error("cron: SIGHUP: %zu job%s from the crontab; %zu run%s going on", d->tab.n,
				 d->tab.n == 1 ? "" : "s", d->nkids, d->nkids == 1 ? "" : "s");
}

static int
run_daemon(daemon_state *d)
{
	int64_t		now = an_cli_now_ms();
	int			stopping = 0,
				sfd;
	an_err		err;

	sigemptyset(&d->set);
	sigaddset(&d->set, SIGTERM);
	sigaddset(&d->set, SIGINT);
	sigaddset(&d->set, SIGHUP);
	sigaddset(&d->set, SIGQUIT);
	sigaddset(&d->set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &d->set, &d->old);
	/* The signals come through a descriptor, polled with the scrapes' sockets. */
	if ((sfd = signalfd(-1, &d->set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
	{
		an_cli_error("cron: cannot wait for signals: signalfd: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &d->old, NULL);
		return AN_EXIT_SOFTWARE;
	}
	/* A store writing to a closed socket gets EPIPE; the children set their own. */
	signal(SIGPIPE, SIG_IGN);
	/*
	 * The slot that began in the last second is still claimed: replicas
	 * started together agree on it.  One that began earlier is left to the
	 * replicas already running.
	 */
	if (plan(d, &d->tab, now - 1001) != AN_OK)
	{
		an_cli_error("out of memory");
		close(sfd);
		sigprocmask(SIG_SETMASK, &d->old, NULL);
		return AN_EXIT_SOFTWARE;
	}
	an_cli_error("cron: %zu job%s from the crontab; running", d->tab.n, d->tab.n == 1 ? "" : "s");

	for (;;)
	{
		int64_t		wake = INT64_MAX;
		int64_t		left;
		struct pollfd fds[1 + AN_CRON_METRICS_FDS];
		struct signalfd_siginfo si;
		an_cron_state st;
		size_t		n;

		reap(d);
		if (stopping && d->nkids == 0)
			break;
		now = an_cli_now_ms();
		if (!stopping)
		{
			/*
			 * The wall clock set back: a slot between now and the one
			 * waited for comes first (one already started is claimed
			 * again, and the store answers it done).
			 */
			for (size_t i = 0; i < d->tab.n; i++)
			{
				int64_t		earlier;
				int			found = 0;

				if (d->has_next[i] &&
					an_crontab_next(&d->tab.jobs[i], now, &earlier, &found, &err) == AN_OK &&
					found && earlier < d->next[i])
					d->next[i] = earlier;
			}
			start_due(d, now);
			for (size_t i = 0; i < d->tab.n; i++)
				if (d->has_next[i] && d->next[i] < wake)
					wake = d->next[i];
		}
		/*
		 * Woken by a signal, the next slot, a scrape or a scraper's time
		 * running out; at most a minute (a clock set back).
		 */
		left = wake == INT64_MAX ? 60000 : wake - now;
		if (an_cron_metrics_deadline(d->metrics) - now < left)
			left = an_cron_metrics_deadline(d->metrics) - now;
		if (left > 60000)
			left = 60000;
		if (left < 0)
			left = 0;
		fds[0] = (struct pollfd) {sfd, POLLIN, 0};
		n = 1 + an_cron_metrics_fds(d->metrics, fds + 1);
		if (poll(fds, n, (int) left) < 0)
			for (size_t k = 0; k < n; k++)
				fds[k].revents = 0;
		st = (an_cron_state) {d->tab.n, d->nkids, stopping};
		an_cron_metrics_serve(d->metrics, &st, fds + 1, n - 1, an_cli_now_ms());
		while (read(sfd, &si, sizeof(si)) == (ssize_t) sizeof(si))
		{
			int			sig = (int) si.ssi_signo;

			if (sig == SIGCHLD)
				continue;
			if (sig == SIGHUP)
			{
				if (!stopping)
				{
					now = an_cli_now_ms();
					start_due(d, now);
					reload(d, now);
				}
				continue;
			}
			if (!stopping)
				an_cli_error("cron: %s: starting no new runs; %zu running, each told to stop", strsignal(sig), d->nkids);
			stopping = 1;
			/* Once per signal: each child passes it to its command's process group. */
			for (size_t k = 0; k < d->nkids; k++)
				kill(d->kids[k].pid, sig);
		}
	}
	an_cron_claim_close(d->cli);
	an_cli_error("cron: stopped");
	close(sfd);
	sigprocmask(SIG_SETMASK, &d->old, NULL);
	return AN_EXIT_OK;
}

int
an_cli_cron(an_cli *cli)
{
	daemon_state d;
	int			rc;
	an_err		err;

	if (cli->command == NULL || cli->command[0] == NULL)
	{
		an_cli_error("cron needs the crontab: anarchon cron [--check] [--store URL] FILE");
		return AN_EXIT_USAGE;
	}
	if (cli->command[1])
	{
		an_cli_error("cron takes one crontab, not \"%s\" after it; anarchon cron --help lists its options",
					 cli->command[1]);
		return AN_EXIT_USAGE;
	}
	if (cli->shell)
	{
		an_cli_error("cron does not take --shell; a crontab's commands always run with /bin/sh -c");
		return AN_EXIT_USAGE;
	}
	if (cli->check && cli->metrics_listen)
	{
		an_cli_error("cron --check reads the crontab and exits: it takes no --metrics-listen");
		return AN_EXIT_USAGE;
	}
	if (cli->settings.catch_up != AN_CATCH_UP_NONE)
	{
		an_cli_error("cron does not catch up missed slots: the other replicas of the fleet run the slots"
					 " one of them misses; give --catch-up none or leave it out");
		return AN_EXIT_USAGE;
	}
	if (!cli->check && cli->store_url == NULL)
	{
		an_cli_error("no store: give --store URL or set ANARCHON_STORE (redis://host:6379,"
					 " sqlite:///var/lib/app/runs.db, postgresql://host/db, ...); --check needs none");
		return AN_EXIT_USAGE;
	}
	if (!cli->check && (rc = an_cli_check_store(cli)) != AN_EXIT_OK)
		return rc;
	memset(&d, 0, sizeof(d));
	d.cli = cli;
	if ((rc = an_crontab_read(cli, cli->command[0], &d.tab)) != AN_EXIT_OK)
		return rc;
	if (cli->check)
		print_jobs(&d.tab, an_cli_now_ms());
	else if (cli->metrics_listen &&
			 (rc = an_cron_metrics_open(cli->metrics_listen, an_cli_now_ms(), &d.metrics, &err)) != AN_EXIT_OK)
		an_cli_error("%s", AN_ERR_TEXT(&err));
	else
		rc = run_daemon(&d);
	an_cron_metrics_close(d.metrics);
	an_crontab_free(&d.tab);
	free(d.next);
	free(d.has_next);
	free(d.kids);
	return rc;
}
