/*
 * rdrive.c — drive a network store through the store interface, as a host
 * would: the test suites' and the bench's way to call a store from C.
 *
 *   rdrive [-s name=value]... URL            commands on stdin, one a line
 *   rdrive [-s name=value]... URL --contend JOB FIRST N
 *                                            claim slots FIRST..FIRST+N-1 once
 *                                            each with a fresh token; prints
 *                                            "SLOT OUTCOME" per slot
 *
 * Commands (one answer line each; a failure prints "error CODE: message"):
 *   claim JOB SLOT TOKEN        -> outcome attempt   (as a host claims: an_store_claim)
 *   heartbeat JOB SLOT TOKEN    -> true | false
 *   finish JOB SLOT TOKEN [succeeded|failed] -> true | false
 *   check JOB SLOT              -> state attempt
 *   pause JOB                   -> ok            (until resumed)
 *   resume JOB                  -> true | false  (was it paused)
 *   set NAME VALUE              -> ok            (a setting: lease_ms, attempts, ...)
 *   cancel_after MS             -> ok            (the host cancels calls after MS)
 *   sleep MS                    -> ok
 * RDRIVE_CANCEL_AFTER=MS has the host cancel from MS after the start, the
 * store's open included (a cancel during a connect or a TLS handshake).
 * Timing of each call goes to stderr as "# MS ms" when RDRIVE_TIMES is set;
 * an error's hint follows it as "hint: ..." on a line of its own when
 * RDRIVE_HINTS is set (off by default: other checks count answer lines).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "anarchon.h"
#include "remote.h"
#include "pause.h"
#include "store.h"
#include "../testutil.h"

static int64_t cancel_at;        /* CLOCK_MONOTONIC ms; 0 = never */

static int
host_interrupted(void *ctx)
{
	(void) ctx;
	return cancel_at && mono_ms() >= cancel_at;
}

static const char *
error_name(int e)
{
	static const char *const names[] = {
		"OK", "INPUT", "CONFIG", "BUSY", "TIMEOUT", "CONNECT", "AUTH", "CANCELED",
		"UNSUPPORTED", "STORE", "STATE", "NOMEM", "INTERNAL"
	};

	return e >= 0 && e <= AN_E_INTERNAL ? names[e] : "?";
}

static void
report_error(const an_store *st)
{
	printf("error %s: %s\n", error_name(st->err.code), st->err.msg);
	if (getenv("RDRIVE_HINTS") && st->err.hint[0])
		printf("hint: %s\n", st->err.hint);
}

/* One command line: run it and print its answer. */
static void
run_line(an_store *st, an_settings *s, char *line)
{
	char	   *w[6] = {0};
	int			n = 0;
	an_request	rq = {.settings = s};
	int64_t		t0 = mono_ms();
	int			rc = AN_OK;

	for (char *tok = strtok(line, " \t\n"); tok && n < 6; tok = strtok(NULL, " \t\n"))
		w[n++] = tok;
	if (n == 0 || w[0][0] == '#')
		return;
	an_store_clear(st);
	if (n >= 2)
		rq.job = w[1];
	if (n >= 3)
	{
		rq.slot = strtoll(w[2], NULL, 10);
		rq.token = n >= 4 ? w[3] : NULL;
	}
	if (strcmp(w[0], "claim") == 0 && n == 4)
	{
		an_claim_result res;

		if ((rc = st->m->validate(st, s)) == AN_OK && (rc = an_store_claim(st, &rq, &res)) == AN_OK)
			printf("%s %d\n", an_outcome_name(res.outcome), (int) res.attempt);
	}
	else if (strcmp(w[0], "heartbeat") == 0 && n == 4)
	{
		int			owned;

		if ((rc = st->m->heartbeat(st, &rq, &owned)) == AN_OK)
			printf("%s\n", owned ? "true" : "false");
	}
	else if (strcmp(w[0], "finish") == 0 && (n == 4 || n == 5))
	{
		int			owned;
		an_run_state status = n == 5 ? an_run_state_parse(w[4]) : AN_RUN_SUCCEEDED;

		if ((rc = st->m->finish(st, &rq, status, &owned)) == AN_OK)
			printf("%s\n", owned ? "true" : "false");
	}
	else if (strcmp(w[0], "check") == 0 && n == 3)
	{
		an_check_result res;

		if ((rc = st->m->check(st, &rq, &res)) == AN_OK)
			printf("%s %d\n", an_check_state_name(res.state), (int) res.attempt);
	}
	else if (strcmp(w[0], "pause") == 0 && n == 2)
	{
		if ((rc = an_pause_set(st, &rq, 0)) == AN_OK)
			printf("ok\n");
	}
	else if (strcmp(w[0], "resume") == 0 && n == 2)
	{
		int			was = 0;

		if ((rc = an_pause_end(st, &rq, &was)) == AN_OK)
			printf("%s\n", was ? "true" : "false");
	}
	else if (strcmp(w[0], "set") == 0 && n == 3)
	{
		an_err		err;

		if (an_settings_set(s, w[1], w[2], &err) != AN_OK)
			printf("error INPUT: %s\n", err.msg);
		else
			printf("ok\n");
	}
	else if (strcmp(w[0], "cancel_after") == 0 && n == 2)
	{
		cancel_at = mono_ms() + atoll(w[1]);
		printf("ok\n");
	}
	else if (strcmp(w[0], "sleep") == 0 && n == 2)
	{
		usleep((useconds_t) atoll(w[1]) * 1000);
		printf("ok\n");
	}
	else
		printf("error USAGE: unknown command or wrong number of words: %s\n", w[0]);
	if (rc != AN_OK)
		report_error(st);
	if (getenv("RDRIVE_TIMES"))
		fprintf(stderr, "# %lld ms\n", (long long) (mono_ms() - t0));
	fflush(stdout);
}

static int
contend(an_store *st, an_settings *s, const char *job, int64_t first, long n)
{
	int			failures = 0;

	for (long i = 0; i < n; i++)
	{
		char		token[AN_TOKEN_HEX + 1];
		an_request	rq = {.job = job,.slot = first + i,.token = token,.settings = s};
		an_claim_result res;

		random_token(token);
		an_store_clear(st);		/* as the hosts do before each call */
		if (st->m->claim(st, &rq, &res) == AN_OK)
			printf("%lld %s\n", (long long) rq.slot, an_outcome_name(res.outcome));
		else
		{
			printf("%lld error %s: %s\n", (long long) rq.slot, error_name(st->err.code), st->err.msg);
			failures++;
		}
	}
	return failures ? 1 : 0;
}

int
main(int argc, char **argv)
{
	an_host		host = {.ctx = NULL,.now_ms = host_now_ms,.interrupted = host_interrupted};
	an_settings s;
	an_store	st;
	const an_store_methods *m;
	an_err		err;
	char		line[1024];
	int			i = 1;
	int			rc = 0;

	an_settings_default(&s);
	for (; i + 1 < argc && strcmp(argv[i], "-s") == 0; i += 2)
	{
		char	   *eq = strchr(argv[i + 1], '=');

		if (eq == NULL)
			return fprintf(stderr, "rdrive: -s takes name=value\n"), 2;
		*eq = '\0';
		if (an_settings_set(&s, argv[i + 1], eq + 1, &err) != AN_OK)
			return fprintf(stderr, "rdrive: %s\n", err.msg), 2;
	}
	if (i >= argc)
		return fprintf(stderr, "usage: rdrive [-s name=value]... URL [--contend JOB FIRST N]\n"), 2;
	if ((m = an_remote_find(argv[i], &err)) == NULL)
		return printf("error CONFIG: %s\n", err.msg), 1;
	an_store_init(&st, m, &host);
	if (getenv("RDRIVE_CANCEL_AFTER"))
		cancel_at = mono_ms() + atoll(getenv("RDRIVE_CANCEL_AFTER"));
	if (m->open(&st, argv[i], NULL) != AN_OK)
	{
		report_error(&st);
		m->close(&st);
		return 1;
	}
	if (i + 4 < argc && strcmp(argv[i + 1], "--contend") == 0)
	{
		if (m->validate(&st, &s) != AN_OK)
			report_error(&st), rc = 1;
		else
			rc = contend(&st, &s, argv[i + 2], strtoll(argv[i + 3], NULL, 10), atol(argv[i + 4]));
	}
	else
		while (fgets(line, sizeof(line), stdin))
			run_line(&st, &s, line);
	m->close(&st);
	return rc;
}
