/*
 * options.c — one parser for every verb's options.
 *
 * Every value is checked here with the rules the databases use (core/): a
 * bad job, slot, schedule or setting is refused with the same words as
 * anarchon_claim would use, and exit status 64, before a store is opened.
 * The settings are spelled as in the databases (--lease_ms); the dashed
 * spelling (--lease-ms) is accepted too, because that is what people type.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "duration.h"
#include "run_now.h"
#include "pause.h"

enum
{
	O_STORE = 256, O_JOB, O_SLOT, O_SCHEDULE, O_TOKEN, O_FROM, O_TO, O_STATUS,
	O_JITTER, O_KILL_AFTER, O_SHELL, O_VERBOSE, O_NOT_MINE, O_FORMAT, O_HELP, O_NOW,
	O_UNTIL, O_LOG_FORMAT, O_CHECK, O_METRICS_LISTEN,
	O_SETTING                    /* O_SETTING + i: setting i of setting_names */
};

/* The settings, as anarchon_config and the GUCs name them. */
static const char *const setting_names[] = {
	"lease_ms", "max_late_ms", "attempts", "overlap", "busy_timeout_ms",
	"catch_up", "catch_up_ms", "catch_up_max", NULL
};
/* As flags, the spelling the command's hints give (an_cli_setting_flag); the option is past the "--". */
static const char *const setting_dashed[] = {
	"--lease-ms", "--max-late-ms", "--attempts", "--overlap", "--busy-timeout-ms",
	"--catch-up", "--catch-up-ms", "--catch-up-max", NULL
};

static const struct
{
	const char *name;
	int			has_arg;
	int			id;
	int			group;
}			plain_options[] = {
	{"store", required_argument, O_STORE, AN_OPT_STORE},
	{"job", required_argument, O_JOB, AN_OPT_JOB},
	{"slot", required_argument, O_SLOT, AN_OPT_SLOT_TIME},
	{"schedule", required_argument, O_SCHEDULE, AN_OPT_SLOT},
	{"token", required_argument, O_TOKEN, AN_OPT_TOKEN},
	{"from", required_argument, O_FROM, AN_OPT_RANGE},
	{"to", required_argument, O_TO, AN_OPT_RANGE},
	{"status", required_argument, O_STATUS, AN_OPT_STATUS},
	{"jitter", required_argument, O_JITTER, AN_OPT_RUN},
	{"kill-after", required_argument, O_KILL_AFTER, AN_OPT_RUN},
	{"shell", no_argument, O_SHELL, AN_OPT_RUN},
	{"verbose", no_argument, O_VERBOSE, AN_OPT_RUN},
	{"log-format", required_argument, O_LOG_FORMAT, AN_OPT_RUN},
	{"not-mine-exit", required_argument, O_NOT_MINE, AN_OPT_NOT_MINE},
	{"format", required_argument, O_FORMAT, AN_OPT_FORMAT},
	{"now", no_argument, O_NOW, AN_OPT_NOW},
	{"help", no_argument, O_HELP, 0},
	{"until", required_argument, O_UNTIL, AN_OPT_UNTIL},
	{"check", no_argument, O_CHECK, AN_OPT_CHECK},
	{"metrics-listen", required_argument, O_METRICS_LISTEN, AN_OPT_METRICS},
	{NULL, 0, 0, 0}
};

#define KILL_AFTER_DEFAULT_MS 10000
#define KILL_AFTER_MAX_MS     INT64_C(86400000)

void
an_cli_usage(FILE *out, const an_cli_verb *verb)
{
	fprintf(out, "usage: anarchon %s\n\n%s\n", verb->usage, verb->help);
	/* Every verb with a store takes every setting (doc/cli.md), whether its call reads it or not. */
	if (verb->takes & AN_OPT_SETTINGS)
		fprintf(out, "\n%s", an_cli_settings_usage);
}

const char *
an_cli_setting_flag(void *ctx, const char *name)
{
	(void) ctx;
	for (int i = 0; setting_names[i]; i++)
		if (strcmp(setting_names[i], name) == 0)
			return setting_dashed[i];
	return NULL;
}

const char *
an_cli_setting_name(int i)
{
	return i >= 0 && i < (int) (sizeof(setting_names) / sizeof(setting_names[0])) ? setting_names[i] : NULL;
}

/* The group an option id belongs to, for "does this verb take it". */
static int
group_of(int id)
{
	if (id >= O_SETTING)
		return AN_OPT_SETTINGS;
	for (int i = 0; plain_options[i].name; i++)
		if (plain_options[i].id == id)
			return plain_options[i].group;
	return 0;
}

/*
 * The range lo..hi of an option; in words when it is milliseconds: "from 0
 * to 1 year (31536000000 ms)".
 */
static void
range_text(int64_t lo, int64_t hi, int ms, char *out, size_t len)
{
	char		a[AN_DURATION_MAX],
				b[AN_DURATION_MAX];

	if (!ms)
	{
		snprintf(out, len, "from %lld to %lld", (long long) lo, (long long) hi);
		return;
	}
	/* 0 needs no words: "from 0 to ...". */
	if (lo == 0)
		snprintf(a, sizeof(a), "0");
	else
		an_duration_text(lo, a, sizeof(a));
	an_duration_text(hi, b, sizeof(b));
	snprintf(out, len, "from %s to %s", a, b);
}

/* A whole number from lo to hi (milliseconds when ms), or a message naming the option. */
static int
number(const char *opt, const char *text, int64_t lo, int64_t hi, int ms, int64_t *out)
{
	char	   *end;
	char		range[3 * AN_DURATION_MAX];
	long long	v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno || end == text || *end != '\0' || v < lo || v > hi)
	{
		range_text(lo, hi, ms, range, sizeof(range));
		an_cli_error("--%s must be a whole number%s %s, not \"%s\"",
					 opt, ms ? " of milliseconds" : "", range, text);
		return AN_EXIT_USAGE;
	}
	*out = v;
	return AN_EXIT_OK;
}


/* Check a value with a core rule: AN_EXIT_OK, or 64 after its message. */
static int
rule(an_error rc, const an_err *err)
{
	if (rc == AN_OK)
		return AN_EXIT_OK;
	an_cli_error("%s", AN_ERR_TEXT(err));
	return rc == AN_E_NOMEM ? AN_EXIT_SOFTWARE : AN_EXIT_USAGE;
}

/*
 * A setting: the databases' rule (core/settings.c).  A duration out of range
 * is said in the command's words: the option as typed with dashes, and the
 * range in words ("--lease-ms: allowed is a whole number of milliseconds
 * from 1 ms to 1 year (31536000000 ms)"), which the databases' message gives
 * as bare numbers.
 */
static int
setting(an_cli *cli, int i, const char *arg)
{
	an_err		err;
	char		range[3 * AN_DURATION_MAX];
	const char *name = setting_names[i];
	size_t		n = strlen(name);
	an_error	rc = an_settings_set(&cli->settings, name, arg, &err);

	if (rc != AN_E_INPUT || n < 3 || strcmp(name + n - 3, "_ms") != 0)
		return rule(rc, &err);
	for (const an_setting_info *info = an_numeric_settings; info->name; info++)
		if (strcmp(info->name, name) == 0)
		{
			range_text(info->min, info->max, 1, range, sizeof(range));
			an_cli_error("invalid value for %s: allowed is a whole number %s, in milliseconds; not \"%s\"",
						 setting_dashed[i], range, arg);
			return AN_EXIT_USAGE;
		}
	return rule(rc, &err);
}

static int
take(an_cli *cli, int id, const char *arg)
{
	an_err		err;
	int64_t		v;
	int			rc;

	switch (id)
	{
		case O_STORE:
			cli->store_url = arg;
			return AN_EXIT_OK;
		case O_JOB:
			cli->job = arg;
			return rule(an_validate_job(arg, strlen(arg), &err), &err);
		case O_SLOT:
			/*
			 * run --slot now is --now: "this run, once across the fleet".
			 * The second it is in would be a slot of its own on each host
			 * whose cron fired in another second, and each would run it.
			 */
			if (strcmp(arg, "now") == 0 && strcmp(cli->verb, "run") == 0)
			{
				cli->slot_now = 1;
				return AN_EXIT_OK;
			}
			if (an_cli_parse_time(arg, &v, &err) != AN_OK)
				return rule(AN_E_INPUT, &err);
			/* A slot is a whole second: `now` names the second it is in. */
			if (strcmp(arg, "now") == 0)
				v -= v % 1000;
			cli->slot = v;
			return rule(an_validate_run_slot(v, &err), &err);
		case O_SCHEDULE:
			cli->schedule_text = arg;
			cli->has_schedule = 1;
			return rule(an_schedule_parse(arg, strlen(arg), cli->zones, &cli->schedule,
										  &err), &err);
		case O_TOKEN:
			cli->token = arg;
			return rule(an_validate_token(arg, strlen(arg), &err), &err);
		case O_FROM:
		case O_TO:
			if (an_cli_parse_time(arg, &v, &err) != AN_OK ||
				an_validate_instant(v, &err) != AN_OK)
				return rule(AN_E_INPUT, &err);
			*(id == O_FROM ? &cli->from : &cli->to) = v;
			*(id == O_FROM ? &cli->has_from : &cli->has_to) = 1;
			return AN_EXIT_OK;
		case O_STATUS:
			cli->status = an_run_state_parse(arg);
			if (cli->status != AN_RUN_SUCCEEDED && cli->status != AN_RUN_FAILED)
			{
				an_cli_error("--status must be succeeded or failed, not \"%s\"", arg);
				return AN_EXIT_USAGE;
			}
			return AN_EXIT_OK;
		case O_JITTER:
			return number("jitter", arg, 0, AN_MAX_LATE_MS_MAX, 1, &cli->jitter_ms);
		case O_KILL_AFTER:
			return number("kill-after", arg, 0, KILL_AFTER_MAX_MS, 1, &cli->kill_after_ms);
		case O_SHELL:
			cli->shell = 1;
			return AN_EXIT_OK;
		case O_VERBOSE:
			cli->verbose = 1;
			return AN_EXIT_OK;
		case O_CHECK:
			cli->check = 1;
			return AN_EXIT_OK;
		case O_METRICS_LISTEN:
			cli->metrics_listen = arg;
			return AN_EXIT_OK;
		case O_NOW:
			cli->run_now = 1;
			return AN_EXIT_OK;
		case O_LOG_FORMAT:
			if (strcmp(arg, "text") != 0 && strcmp(arg, "json") != 0)
			{
				an_cli_error("--log-format must be text or json, not \"%s\"", arg);
				return AN_EXIT_USAGE;
			}
			cli->log_json = strcmp(arg, "json") == 0;
			return AN_EXIT_OK;
		case O_NOT_MINE:
			if ((rc = number("not-mine-exit", arg, 0, 255, 0, &v)) == AN_EXIT_OK)
				cli->not_mine_exit = (int) v;
			return rc;
		case O_FORMAT:
			if (strcmp(arg, "tsv") == 0)
				cli->format = AN_CLI_FORMAT_TSV;
			else if (strcmp(arg, "prometheus") == 0)
				cli->format = AN_CLI_FORMAT_PROMETHEUS;
			else
			{
				an_cli_error("--format must be tsv or prometheus, not \"%s\"", arg);
				return AN_EXIT_USAGE;
			}
			return AN_EXIT_OK;
		case O_UNTIL:
			if (an_cli_parse_time(arg, &v, &err) != AN_OK)
				return rule(AN_E_INPUT, &err);
			cli->until = v;
			return rule(an_pause_check_until(v, an_cli_now_ms(), &err), &err);
		default:
			return setting(cli, id - O_SETTING, arg);
	}
}

/* The option table for getopt_long: plain options, then each setting twice. */
static void
build_table(struct option *t)
{
	int			n = 0;

	for (int i = 0; plain_options[i].name; i++)
		t[n++] = (struct option) {plain_options[i].name, plain_options[i].has_arg, NULL, plain_options[i].id};
	for (int i = 0; setting_names[i]; i++)
	{
		t[n++] = (struct option) {setting_names[i], required_argument, NULL, O_SETTING + i};
		if (strcmp(setting_dashed[i] + 2, setting_names[i]) != 0)
			t[n++] = (struct option) {setting_dashed[i] + 2, required_argument, NULL, O_SETTING + i};
	}
	t[n] = (struct option) {NULL, 0, NULL, 0};
}

/* What a verb needs and was not given. */
static int
check_needs(an_cli *cli, const an_cli_verb *verb)
{
	int			needs = verb->needs;

	if ((needs & AN_OPT_STORE) && cli->store_url == NULL)
	{
		an_cli_error("no store: give --store URL or set ANARCHON_STORE (redis://host:6379,"
					 " sqlite:///var/lib/app/runs.db, postgresql://host/db, ...)");
		return AN_EXIT_USAGE;
	}
	if ((needs & AN_OPT_JOB) && cli->job == NULL)
	{
		an_cli_error("%s needs --job NAME", verb->name);
		return AN_EXIT_USAGE;
	}
	if ((needs & AN_OPT_SLOT) && (verb->needs & AN_OPT_RANGE) && !cli->has_schedule)
	{
		an_cli_error("%s needs --schedule EXPR", verb->name);
		return AN_EXIT_USAGE;
	}
	if ((needs & AN_OPT_SLOT) && !cli->slot && !cli->has_schedule && !cli->run_now)
	{
		an_cli_error("%s needs --slot TIME%s%s", verb->name,
					 (verb->takes & AN_OPT_SLOT) ? " or --schedule EXPR" : "",
					 (verb->takes & AN_OPT_NOW) ? " (or --now)" : "");
		return AN_EXIT_USAGE;
	}
	if ((needs & AN_OPT_TOKEN) && cli->token == NULL)
	{
		an_cli_error("%s needs --token TOKEN, the token its claim was made with", verb->name);
		return AN_EXIT_USAGE;
	}
	if ((needs & AN_OPT_RANGE) && (!cli->has_from || !cli->has_to))
	{
		an_cli_error("%s needs --from TIME and --to TIME", verb->name);
		return AN_EXIT_USAGE;
	}
	if ((needs & AN_OPT_COMMAND) && (cli->command == NULL || cli->command[0] == NULL))
	{
		an_cli_error("%s needs a command after --: anarchon run ... -- /usr/bin/report --daily", verb->name);
		return AN_EXIT_USAGE;
	}
	return AN_EXIT_OK;
}

int
an_cli_parse(an_cli *cli, const an_cli_verb *verb, int argc, char **argv)
{
	struct option table[64];
	int			id,
				rc,
				longindex = -1;

	an_settings_default(&cli->settings);
	cli->status = AN_RUN_SUCCEEDED;
	cli->kill_after_ms = KILL_AFTER_DEFAULT_MS;
	cli->not_mine_exit = (strcmp(verb->name, "run") == 0) ? AN_EXIT_OK : AN_EXIT_NOT_MINE;
	cli->store_url = getenv("ANARCHON_STORE");
	if (cli->store_url && cli->store_url[0] == '\0')
		cli->store_url = NULL;

	build_table(table);
	opterr = 0;
	optind = 1;
	/* "+": stop at the first word that is not an option, the command. */
	while ((id = getopt_long(argc, argv, "+:h", table, &longindex)) != -1)
	{
		if (id == 'h' || id == O_HELP)
		{
			an_cli_usage(stdout, verb);
			return -1;
		}
		if (id == '?' || id == ':')
		{
			const char *word = argv[optind - 1];

			an_cli_error("%s \"%s\" for %s; anarchon %s --help lists its options",
						 id == ':' ? "missing value after" : "unknown option", word, verb->name, verb->name);
			return AN_EXIT_USAGE;
		}
		if (!(group_of(id) & verb->takes))
		{
			an_cli_error("%s does not take --%s; anarchon %s --help lists its options",
						 verb->name, table[longindex].name, verb->name);
			return AN_EXIT_USAGE;
		}
		if ((rc = take(cli, id, optarg)) != AN_EXIT_OK)
			return rc;
	}
	if (optind < argc)
	{
		if (!(verb->takes & AN_OPT_COMMAND))
		{
			an_cli_error("%s takes no argument \"%s\"; anarchon %s --help lists its options",
						 verb->name, argv[optind], verb->name);
			return AN_EXIT_USAGE;
		}
		cli->command = argv + optind;
	}
	if (cli->slot_now && cli->run_now)
	{
		an_cli_error("give --now, --slot or --schedule, not two: --now runs the job once, apart from its schedule"
					 " (--slot now means --now)");
		return AN_EXIT_USAGE;
	}
	if ((cli->slot || cli->slot_now) && cli->has_schedule && !(verb->needs & AN_OPT_RANGE))
	{
		an_cli_error("give --slot or --schedule, not both");
		return AN_EXIT_USAGE;
	}
	/* A manual slot is one a run-now chose: checked, finished, never claimed by name. */
	if (cli->slot && an_slot_is_manual(cli->slot) &&
		(strcmp(verb->name, "claim") == 0 || strcmp(verb->name, "run") == 0))
	{
		an_err		err;

		return rule(an_validate_slot(cli->slot, &err), &err);
	}
	cli->run_now |= cli->slot_now;
	if (cli->run_now && (cli->slot || cli->has_schedule))
	{
		an_cli_error("give --now, --slot or --schedule, not two: --now runs the job once, apart from its schedule");
		return AN_EXIT_USAGE;
	}
	/*
	 * run --token takes up one claim made before (anarchon cron's batch, or
	 * claim --token): one slot, named, never a schedule's several or a
	 * run-now's, whose slot the store chooses.
	 */
	if (cli->token && strcmp(verb->name, "run") == 0 && (cli->run_now || cli->has_schedule))
	{
		an_cli_error("run --token takes up the claim of one --slot; it takes no --now or --schedule");
		return AN_EXIT_USAGE;
	}
	/* All the options are known here, whatever their order: the window's rule. */
	{
		an_err		err;

		if ((verb->takes & AN_OPT_SETTINGS) &&
			(rc = rule(an_settings_check_catch_up(&cli->settings, &err), &err)) != AN_EXIT_OK)
			return rc;
	}
	return check_needs(cli, verb);
}
