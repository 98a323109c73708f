/*
 * main.c — `anarchon VERB [OPTIONS]`: the table of verbs, and dispatch.
 *
 * Each verb names the options it takes and the ones it needs, so that one
 * parser (options.c) refuses what a verb does not understand, with exit
 * status 64, before any store is opened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tz.h"

/* The settings, which every verb with a store takes: said once, after such a verb's usage. */
const char	an_cli_settings_usage[] =
	"SETTINGS, taken by every verb with --store, named as in the databases (--lease_ms or --lease-ms):\n"
	"  [--lease-ms N] [--max-late-ms N] [--attempts N] [--overlap skip|allow|replace]\n"
	"  [--busy-timeout-ms N] [--catch-up none|latest|all] [--catch-up-ms N] [--catch-up-max N]\n";

const an_cli_verb an_cli_verbs[] = {
	{"run", AN_OPT_STORE | AN_OPT_JOB | AN_OPT_SLOT | AN_OPT_SLOT_TIME | AN_OPT_SETTINGS | AN_OPT_RUN | AN_OPT_NOT_MINE | AN_OPT_COMMAND
		| AN_OPT_NOW | AN_OPT_TOKEN,
		AN_OPT_STORE | AN_OPT_JOB | AN_OPT_SLOT | AN_OPT_COMMAND, an_cli_run,
		"run --store URL --job JOB (--schedule EXPR | --slot TIME | --now) [--jitter MS] [--not-mine-exit N]\n"
		"             [--kill-after MS] [--shell] [--verbose] [--log-format text|json] [--token TOKEN]\n"
		"             [SETTINGS] -- COMMAND [ARG...]",
		"Claim the slot of the schedule that has begun (or --slot); when this host wins it,\n"
		"run COMMAND with ANARCHON_JOB, ANARCHON_SLOT, ANARCHON_TOKEN and ANARCHON_ATTEMPT set,\n"
		"keep its lease alive while it runs, and finish the run from its exit status.\n"
		"With --catch-up latest or all (and --schedule), missed slots of the last --catch-up-ms\n"
		"no instance ran are claimed first, oldest first, each run once fleet-wide like any slot.\n"
		"With --now (or --slot now), one extra run of the job: the hosts that ask within\n"
		"--max-late-ms of each other share one manual run, which one of them runs.\n"
		"--token TOKEN (with --slot) takes up a claim made before with that token, as anarchon\n"
		"cron does for the slots its batch won: the claim, sent again, answers won while the run\n"
		"goes on, and its lease is renewed before the command starts.\n"
		"--log-format json writes one JSON object per slot claimed on stderr: job, slot, outcome,\n"
		"attempt, exit and duration_ms.\n"
		"Exits with the command's status (the first that failed stops the rest); 0 (or\n"
		"--not-mine-exit) when another host has every slot; 64 for bad usage; 75 when the store\n"
		"cannot be reached."},
	{"claim", AN_OPT_STORE | AN_OPT_JOB | AN_OPT_SLOT | AN_OPT_SLOT_TIME | AN_OPT_TOKEN | AN_OPT_SETTINGS | AN_OPT_NOT_MINE,
		AN_OPT_STORE | AN_OPT_JOB | AN_OPT_SLOT, an_cli_claim,
		"claim --store URL --job JOB (--schedule EXPR | --slot TIME) [--token TOKEN] [--not-mine-exit N] [SETTINGS]",
		"Claim a slot.  Prints outcome, slot, token and attempt, separated by tabs.\n"
		"Exits 0 when won, 1 (or --not-mine-exit) otherwise."},
	{"heartbeat", AN_OPT_STORE | AN_OPT_JOB | AN_OPT_SLOT_TIME | AN_OPT_TOKEN | AN_OPT_SETTINGS,
		AN_OPT_STORE | AN_OPT_JOB | AN_OPT_SLOT | AN_OPT_TOKEN, an_cli_heartbeat,
		"heartbeat --store URL --job JOB --slot TIME --token TOKEN [SETTINGS: --lease-ms N]",
		"Extend the lease of a run this token owns.  Prints owned (exit 0) or fenced (exit 1)."},
	{"finish", AN_OPT_STORE | AN_OPT_JOB | AN_OPT_SLOT_TIME | AN_OPT_TOKEN | AN_OPT_STATUS | AN_OPT_SETTINGS,
		AN_OPT_STORE | AN_OPT_JOB | AN_OPT_SLOT | AN_OPT_TOKEN, an_cli_finish,
		"finish --store URL --job JOB --slot TIME --token TOKEN [--status succeeded|failed] [SETTINGS]",
		"Mark a run this token owns succeeded or failed.  Prints finished (exit 0) or fenced (exit 1)."},
	{"check", AN_OPT_STORE | AN_OPT_JOB | AN_OPT_SLOT | AN_OPT_SLOT_TIME | AN_OPT_SETTINGS,
		AN_OPT_STORE | AN_OPT_JOB | AN_OPT_SLOT, an_cli_check,
		"check --store URL --job JOB (--schedule EXPR | --slot TIME) [SETTINGS]",
		"Print the state of a slot's run: none, running, expired, succeeded, failed, interrupted or replaced."},
	{"slots", AN_OPT_SLOT | AN_OPT_RANGE, AN_OPT_SLOT | AN_OPT_RANGE, an_cli_slots,
		"slots --schedule EXPR --from TIME --to TIME",
		"Print the schedule's slots from <= slot < to, one per line: ms, tab, RFC 3339 UTC."},
	{"missed", AN_OPT_STORE | AN_OPT_JOB | AN_OPT_SLOT | AN_OPT_RANGE | AN_OPT_SETTINGS,
		AN_OPT_STORE | AN_OPT_JOB | AN_OPT_SLOT | AN_OPT_RANGE, an_cli_missed,
		"missed --store URL --job JOB --schedule EXPR --from TIME --to TIME [SETTINGS: --max-late-ms N]",
		"Print the slots in the range that no instance claimed, as slots does.  Slots that can\n"
		"still be claimed (younger than max_late_ms) are not missed yet."},
	{"due", AN_OPT_STORE | AN_OPT_JOB | AN_OPT_SLOT | AN_OPT_SETTINGS,
		AN_OPT_STORE | AN_OPT_JOB | AN_OPT_SLOT, an_cli_due,
		"due --store URL --job JOB --schedule EXPR [SETTINGS: --max-late-ms N, --catch-up ...]",
		"Print the slots run would claim now, oldest first, as slots does: under --catch-up\n"
		"latest the newest slot of the last --catch-up-ms no instance ran, under all up to\n"
		"--catch-up-max of them, then the slot that has begun while it is not late."},
	{"stats", AN_OPT_STORE | AN_OPT_JOB | AN_OPT_SETTINGS | AN_OPT_FORMAT, AN_OPT_STORE, an_cli_stats,
		"stats --store URL [--job JOB] [--format tsv|prometheus] [SETTINGS]",
		"Print the store's counters as tab-separated values with a header line: for PostgreSQL,\n"
		"the server's anarchon_stats(); for other stores, one round trip of this process\n"
		"(a check of --job, default 'anarchon-stats'), with its latency and the clock offset.\n"
		"--format prometheus writes them in Prometheus' text format instead, for node_exporter's\n"
		"textfile collector (write to a temporary file, then rename it over the .prom file)."},
	{"cron", AN_OPT_STORE | AN_OPT_SETTINGS | AN_OPT_RUN | AN_OPT_CHECK | AN_OPT_METRICS | AN_OPT_COMMAND, 0,
		an_cli_cron,
		"cron [--store URL] [--check] [--kill-after MS] [--jitter MS] [--verbose] [--log-format text|json]\n"
		"             [--metrics-listen HOST:PORT] [SETTINGS] FILE",
		"Run the crontab FILE on every replica of a fleet: each job's command runs once per slot\n"
		"across the fleet, with /bin/sh -c, as anarchon run would run it for the job and slot.\n"
		"FILE: 5-field (minute), 7-field (second ... year) and 6-field (minute ... year) lines,\n"
		"@hourly-style macros, CRON_TZ=Zone lines, NAME=VALUE lines (a variable for the commands\n"
		"of the lines after it), and '# anarchon: name=NAME lease_ms=N ...'\n"
		"just above a job to name it and set its options; a job's default name is its command's\n"
		"first word and a hash of its line.  --check prints the jobs (name, schedule, zone, next\n"
		"slot, command) and exits.  SIGTERM or SIGINT: no new runs, the running ones stopped,\n"
		"then exit 0.  A bad line stops everything before it starts: exit 78 (64: bad usage).\n"
		"SIGHUP reads FILE again: slots up to that moment from the old jobs, later ones from\n"
		"the new (a job keeps its runs by name); a file that no longer reads is said and the\n"
		"jobs read before go on.  --metrics-listen HOST:PORT serves the daemon's counters at\n"
		"/metrics in Prometheus' text format (slots started, late, children ended, reloads).\n"
		"One line per slot on stderr, as run --verbose says it (--verbose is always on)."},
	{"token", 0, 0, an_cli_token, "token", "Print a fresh token: 32 hexadecimal digits."},
	{"pause", AN_OPT_STORE | AN_OPT_JOB | AN_OPT_UNTIL, AN_OPT_STORE | AN_OPT_JOB, an_cli_pause,
		"pause --store URL --job JOB [--until TIME]",
		"Pause the job in the store, until TIME or until resume: its claims from every host\n"
		"then answer paused, and its slots are not reported missed.  Prints paused."},
	{"resume", AN_OPT_STORE | AN_OPT_JOB, AN_OPT_STORE | AN_OPT_JOB, an_cli_resume,
		"resume --store URL --job JOB",
		"End the job's pause.  Prints resumed, or not-paused when it was not paused (exit 0 both)."},
	{NULL, 0, 0, NULL, NULL, NULL}
};

static void
usage_all(FILE *out)
{
	fprintf(out, "usage: anarchon VERB [OPTIONS] [-- COMMAND [ARG...]]\n\nverbs:\n");
	for (const an_cli_verb *v = an_cli_verbs; v->name; v++)
		fprintf(out, "  %s\n", v->usage);
	fprintf(out, "\n--store may be given as ANARCHON_STORE in the environment.\n"
			"TIME is ms since 1970 (1764842400000), RFC 3339 (2025-12-04T10:00:00Z) or now.\n"
			"anarchon VERB --help says more; the manual is anarchon(1).\n\n%s", an_cli_settings_usage);
}

int
main(int argc, char **argv)
{
	const an_cli_verb *verb = NULL;
	an_cli		cli;
	int			rc;

	if (argc < 2)
	{
		usage_all(stderr);
		return AN_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0)
	{
		usage_all(stdout);
		return AN_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0)
	{
		printf("anarchon %s\n", AN_VERSION);
		return AN_EXIT_OK;
	}
	for (const an_cli_verb *v = an_cli_verbs; v->name; v++)
		if (strcmp(argv[1], v->name) == 0)
			verb = v;
	if (verb == NULL)
	{
		an_cli_error("unknown verb \"%s\". The verbs are run, claim, heartbeat, finish, check, slots,"
					 " missed, due, stats, cron, token, pause and resume; anarchon --help lists them", argv[1]);
		return AN_EXIT_USAGE;
	}

	memset(&cli, 0, sizeof(cli));
	cli.verb = verb->name;
	if ((cli.zones = an_tz_cache_new()) == NULL)
	{
		an_cli_error("out of memory");
		return AN_EXIT_SOFTWARE;
	}
	rc = an_cli_parse(&cli, verb, argc - 1, argv + 1);
	if (rc == AN_EXIT_OK)
		rc = verb->main(&cli);
	else if (rc < 0)			/* --help */
		rc = AN_EXIT_OK;
	an_cli_close(&cli);
	an_tz_cache_free(cli.zones);
	return rc;
}
