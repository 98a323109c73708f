/*
 * mq_driver.c — drive one network store through the store interface, from
 * the command line, as the test suites and the bench need it.
 *
 *   mq-driver [-l max_late_ms] [-k offset_ms] URL claim JOB SLOT TOKEN
 *                                       prints the outcome; -k moves the
 *                                       host's clock by offset_ms
 *   mq-driver [-l max_late_ms] URL heartbeat JOB SLOT TOKEN prints true/false
 *   mq-driver URL finish JOB SLOT TOKEN [succeeded|failed]  prints true/false
 *   mq-driver URL check JOB SLOT                            prints the state
 *   mq-driver [-l ms] URL validate                          prints ok
 *   mq-driver URL contend JOB SLOT0 N   claims slots SLOT0..SLOT0+N-1 with
 *                                       fresh tokens on one connection, one
 *                                       "SLOT OUTCOME" line each
 *   mq-driver URL bench JOB SLOT0 N     N claims of fresh slots, then one line
 *                                       "ops OPS_PER_S P50_US P99_US ERRORS"
 *   mq-driver URL log JOB SLOT0 N STEP TRIES TAG WALL0 WALL_STEP
 *                                       the fault suite's claimer: N slots
 *                                       STEP ms apart, slot i claimed at
 *                                       WALL0 + i * WALL_STEP, each resent up
 *                                       to TRIES times after an error, one
 *                                       log line per answer, TAG in front
 *   mq-driver -F K URL log ...         the same, as a prefork server: one
 *                                       claim in this process first, then
 *                                       K-1 forked children and this process
 *                                       share the slots' contention (PROC
 *                                       in the tag becomes PROC.CHILD)
 *   mq-driver [-l ms] URL session       reads commands like the above, one a
 *                                       line, from stdin, all on one store
 *                                       (one connection, one session memory)
 *
 * It finds the store with an_remote_find, exactly as a database host does,
 * and plays the host: the clock is this machine's, and SIGINT asks the store
 * to cancel the current call (the way a query cancel does).  Errors print
 * "error CLASS: message" and exit with status 3.  Used by test/amqp and
 * test/nats alike.
 */
#include <signal.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "remote.h"
#include "wait.h"
#include "../testutil.h"

static volatile sig_atomic_t canceled;
static int64_t clock_offset_ms;	/* -k: this instance's clock is that far ahead (behind if < 0) */
static int	prefork;			/* -F: processes sharing the store opened before fork() */

/* The host's clock: this machine's, moved by -k, as an instance whose clock is off would read it. */
static int64_t
skewed_now_ms(void *ctx)
{
	return host_now_ms(ctx) + clock_offset_ms;
}

static void
on_sigint(int sig)
{
	(void) sig;
	canceled = 1;
}

static int
host_interrupted(void *ctx)
{
	(void) ctx;
	return canceled;
}

static const char *
error_class(an_error e)
{
	static const char *names[] = {"ok", "input", "config", "busy", "timeout", "connect", "auth",
	"canceled", "unsupported", "store", "state", "nomem", "internal"};

	return (unsigned) e < sizeof(names) / sizeof(names[0]) ? names[e] : "unknown";
}

static int
fail(const an_store *st)
{
	printf("error %s: %s\n", error_class(st->err.code), st->err.msg);
	return 3;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

/* Claim n fresh slots; print each outcome, or the throughput and latencies. */
static int
many(an_store *st, an_request *rq, long n, int bench)
{
	int64_t    *lat = calloc((size_t) n, sizeof(int64_t));
	int64_t		slot0 = rq->slot;
	int64_t		start = an_mono_ms();
	struct timespec a, b;
	char		token[AN_TOKEN_HEX + 1];
	int			errors = 0;

	if (lat == NULL)
		return 2;
	for (long i = 0; i < n; i++)
	{
		an_claim_result res;

		random_token(token);
		rq->token = token;
		rq->slot = slot0 + i;
		clock_gettime(CLOCK_MONOTONIC, &a);
		an_store_clear(st);		/* as the hosts do before each call */
		if ((st->m->validate && st->m->validate(st, rq->settings) != AN_OK) ||
			st->m->claim(st, rq, &res) != AN_OK)
		{
			if (!bench)
				printf("%lld error %s: %s\n", (long long) rq->slot, error_class(st->err.code), st->err.msg);
			errors++;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		lat[i] = (b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000;
		if (!bench)
			printf("%lld %s\n", (long long) rq->slot, an_outcome_name(res.outcome));
	}
	if (bench)
	{
		double		secs = (an_mono_ms() - start) / 1000.0;

		qsort(lat, (size_t) n, sizeof(int64_t), cmp_i64);
		printf("ops %.1f %lld %lld %d\n", n / (secs > 0 ? secs : 0.001),
			   (long long) lat[n / 2], (long long) lat[(n * 99) / 100], errors);
	}
	free(lat);
	return errors ? 3 : 0;
}

/* The winner's run ends: finish it, sent again after an error like the claim. */
static void
finish_won(an_store *st, const an_request *rq, int tries)
{
	for (int t = 1; t <= tries; t++)
	{
		int			owned;

		an_store_clear(st);
		if (st->m->finish(st, rq, AN_RUN_SUCCEEDED, &owned) == AN_OK || st->err.code == AN_E_CONFIG ||
			st->err.code == AN_E_UNSUPPORTED)
			return;
		retry_pause(t);
	}
}

/*
 * The fault suite's claimer (the plan: test/testutil.h): each slot with a
 * fresh token; a claim that ends in an error is sent again with the same
 * token, as the docs tell an application to, up to `tries` times; a won run
 * is finished (succeeded) at once, so the next slot is free.  Every answer
 * is one line of the fault log:
 *
 *   PROC STORE FAULT JOB SLOT TOKEN OUTCOME ATTEMPT TRY WALL_MS
 *
 * OUTCOME is the claim's outcome or "error:CLASS", followed by a line
 * "# MESSAGE"; TRY counts from 1.
 */
static int
logged(an_store *st, const an_request *base, const fault_plan *p)
{
	char		token[AN_TOKEN_HEX + 1];
	an_request	req = *base;
	an_request *rq = &req;

	for (long i = 0; i < p->n; i++)
	{
		rq->slot = p->slot0 + i * p->step;
		fault_plan_wait(p, i);
		random_token(token);
		rq->token = token;
		for (int t = 1; t <= p->tries; t++)
		{
			an_claim_result res;
			int			rc;

			an_store_clear(st);
			canceled = 0;
			if ((rc = st->m->validate ? st->m->validate(st, rq->settings) : AN_OK) == AN_OK)
				rc = st->m->claim(st, rq, &res);
			if (rc == AN_OK)
				printf("%s %s %lld %s %s %d %d %lld\n", p->tag, rq->job, (long long) rq->slot, token,
					   an_outcome_name(res.outcome), (int) res.attempt, t, (long long) host_now_ms(NULL));
			else
				printf("%s %s %lld %s error:%s 0 %d %lld\n# %s\n", p->tag, rq->job, (long long) rq->slot, token,
					   error_class(st->err.code), t, (long long) host_now_ms(NULL), st->err.msg);
			if (rc == AN_OK || st->err.code == AN_E_CONFIG)
			{
				if (rc == AN_OK && res.outcome == AN_WON)
					finish_won(st, rq, p->tries);
				break;
			}
			retry_pause(t);
		}
	}
	return 0;
}

/*
 * The fork fault: the store is used here first (one logged claim of a slot
 * of its own, just before the plan's, so that a connection and the client
 * library's state exist), then this process forks, as gunicorn --preload or
 * multiprocessing do, and every process claims the same slots through the
 * store it inherited.  Each must start fresh after fork; sharing the
 * parent's connection or library state is what once gave several winners of
 * one slot.
 */
static int
logged_prefork(an_store *st, const an_request *base, const fault_plan *p)
{
	fault_plan	warm = *p;
	fault_plan	mine = *p;
	const char *rest = strchr(p->tag, ' ');
	char		tag[256];
	int			child = 0;

	warm.slot0 = p->slot0 - p->step;
	warm.wall0 = p->wall0 - p->wall_step;
	warm.n = 1;
	logged(st, base, &warm);
	fflush(stdout);
	for (int c = 1; c < prefork; c++)
	{
		pid_t		pid = fork();

		if (pid == 0)
		{
			child = c;
			break;
		}
		if (pid < 0)
			die("fork", "no process");
	}
	snprintf(tag, sizeof(tag), "%.*s.%d%s", rest ? (int) (rest - p->tag) : (int) strlen(p->tag), p->tag,
			 child, rest ? rest : "");
	mine.tag = tag;
	logged(st, base, &mine);
	fflush(stdout);
	if (child)
		_exit(0);
	while (wait(NULL) > 0)
		;
	return 0;
}

static int
usage(void)
{
	fprintf(stderr, "usage: mq-driver [-l max_late_ms] [-k clock_offset_ms] [-F processes] URL claim|heartbeat|finish|check|validate|contend|bench|log|session ...\n");
	return 2;
}

static int	run(an_store *st, an_settings *s, int argc, char **argv);

/* One command per input line, on the same open store; "# text" lines are echoed. */
static int
session(an_store *st, an_settings *s)
{
	char		line[1024];

	while (fgets(line, sizeof(line), stdin))
	{
		char	   *argv[8];
		int			argc = 0;

		if (line[0] == '#')
		{
			fputs(line, stdout);
			continue;
		}
		for (char *t = strtok(line, " \t\n"); t && argc < 8; t = strtok(NULL, " \t\n"))
			argv[argc++] = t;
		if (argc > 0)
		{
			canceled = 0;
			run(st, s, argc, argv);
		}
	}
	return 0;
}

static int
run(an_store *st, an_settings *s, int argc, char **argv)
{
	const char *cmd = argv[0];
	an_request	rq = {.settings = s};
	int			owned;

	an_store_clear(st);
	if (strcmp(cmd, "session") == 0)
		return session(st, s);
	if (strcmp(cmd, "sleep") == 0 && argc > 1)
	{
		usleep((useconds_t) atol(argv[1]) * 1000);
		return 0;
	}
	if (strcmp(cmd, "validate") == 0)
	{
		if (st->m->validate && st->m->validate(st, s) != AN_OK)
			return fail(st);
		printf("ok\n");
		return 0;
	}
	if (argc < 3)
		return usage();
	rq.job = argv[1];
	rq.slot = strtoll(argv[2], NULL, 10);
	rq.token = argc > 3 ? argv[3] : NULL;
	if (strcmp(cmd, "claim") == 0 && rq.token)
	{
		an_claim_result res;

		if ((st->m->validate && st->m->validate(st, s) != AN_OK) || st->m->claim(st, &rq, &res) != AN_OK)
			return fail(st);
		printf("%s\n", an_outcome_name(res.outcome));
	}
	else if (strcmp(cmd, "heartbeat") == 0 && rq.token)
	{
		if (st->m->heartbeat(st, &rq, &owned) != AN_OK)
			return fail(st);
		printf("%s\n", owned ? "true" : "false");
	}
	else if (strcmp(cmd, "finish") == 0 && rq.token)
	{
		an_run_state status = argc > 4 ? an_run_state_parse(argv[4]) : AN_RUN_SUCCEEDED;

		if (st->m->finish(st, &rq, status, &owned) != AN_OK)
			return fail(st);
		printf("%s\n", owned ? "true" : "false");
	}
	else if (strcmp(cmd, "check") == 0)
	{
		an_check_result res;

		if (st->m->check(st, &rq, &res) != AN_OK)
			return fail(st);
		printf("%s\n", an_check_state_name(res.state));
	}
	else if ((strcmp(cmd, "contend") == 0 || strcmp(cmd, "bench") == 0) && rq.token)
		return many(st, &rq, atol(argv[3]), cmd[0] == 'b');
	else if (strcmp(cmd, "log") == 0 && argc >= 9)
	{
		fault_plan	p = fault_plan_read(argv + 2);

		return prefork > 1 ? logged_prefork(st, &rq, &p) : logged(st, &rq, &p);
	}
	else
		return usage();
	return 0;
}

/*
 * Open the store, up to `tries` times: the fault suite's claimer opens again
 * while the faults last, as a host would on its next call.
 */
static int
open_store(an_store *st, const an_store_methods *m, an_host *host, const char *url, int tries)
{
	for (int t = 1;; t++)
	{
		an_store_init(st, m, host);
		if (m->open(st, url, NULL) == AN_OK || t >= tries)
			return st->err.code;
		m->close(st);
		retry_pause(t);
	}
}

int
main(int argc, char **argv)
{
	an_host		host = {.ctx = NULL, .now_ms = skewed_now_ms, .interrupted = host_interrupted};
	an_settings s;
	an_store	st;
	const an_store_methods *m;
	an_err		err;
	int			opt;
	int			rc;

	an_settings_default(&s);
	while ((opt = getopt(argc, argv, "l:k:F:")) != -1)
	{
		if (opt == 'l')
			s.max_late_ms = atoll(optarg);
		else if (opt == 'k')
			clock_offset_ms = atoll(optarg);
		else if (opt == 'F')
			prefork = atoi(optarg);
		else
			return usage();
	}
	if (argc - optind < 2)
		return usage();
	/* SA_RESTART, as PostgreSQL's handlers: a cancel must not break the client library's I/O. */
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_sigint;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGINT, &sa, NULL);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((m = an_remote_find(argv[optind], &err)) == NULL)
	{
		printf("error config: %s\n", err.msg);
		return 3;
	}
	if (open_store(&st, m, &host, argv[optind], strcmp(argv[optind + 1], "log") == 0 ? 40 : 1) != AN_OK)
	{
		rc = fail(&st);
		m->close(&st);
		return rc;
	}
	rc = run(&st, &s, argc - optind - 1, argv + optind + 1);
	m->close(&st);
	return rc;
}
