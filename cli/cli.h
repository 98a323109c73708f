/*
 * cli.h — the `anarchon` command: what its verbs share.
 *
 * The command is the third host, next to PostgreSQL and SQLite: one process
 * per invocation, one store, one job.  Its verbs parse their options into an
 * an_cli (options.c), open the store (open.c) and talk to it only through
 * core/store.h, like the extensions do.  Exit statuses are sysexits.h's where
 * one fits, so that cron's mail and systemd's journal say what happened.
 */
#ifndef ANARCHON_CLI_H
#define ANARCHON_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "store.h"
#include "schedule.h"
#include "stats.h"
#include "due.h"

/* Exit statuses (sysexits.h). */
#define AN_EXIT_OK        0
#define AN_EXIT_NOT_MINE  1      /* claim, heartbeat, finish: the default when not ours */
#define AN_EXIT_USAGE     64     /* EX_USAGE */
#define AN_EXIT_SOFTWARE  70     /* EX_SOFTWARE */
#define AN_EXIT_TEMPFAIL  75     /* EX_TEMPFAIL: the store cannot be reached */
#define AN_EXIT_NOPERM    77     /* EX_NOPERM */
#define AN_EXIT_CONFIG    78     /* EX_CONFIG */
#define AN_EXIT_NOEXEC    126
#define AN_EXIT_NOTFOUND  127

/* Which options a verb takes (an_cli_verb.takes). */
enum
{
	AN_OPT_STORE = 1 << 0,
	AN_OPT_JOB = 1 << 1,
	AN_OPT_SLOT = 1 << 2,        /* --schedule; needed: --slot or --schedule */
	AN_OPT_TOKEN = 1 << 3,
	AN_OPT_SETTINGS = 1 << 4,
	AN_OPT_RANGE = 1 << 5,       /* --from, --to */
	AN_OPT_STATUS = 1 << 6,
	AN_OPT_RUN = 1 << 7,         /* --jitter, --kill-after, --shell, --verbose, --log-format */
	AN_OPT_NOT_MINE = 1 << 8,
	AN_OPT_COMMAND = 1 << 9,     /* words after -- */
	AN_OPT_FORMAT = 1 << 10,     /* --format (stats) */
	AN_OPT_NOW = 1 << 11,        /* --now (run): a manual run instead of a slot */
	AN_OPT_UNTIL = 1 << 12,      /* --until (pause) */
	AN_OPT_SLOT_TIME = 1 << 13,  /* --slot itself: the verbs that name a slot outright */
	AN_OPT_CHECK = 1 << 14,      /* --check (cron): read the crontab, print its jobs, exit */
	AN_OPT_METRICS = 1 << 15     /* --metrics-listen (cron) */
};

/* What `stats` writes (--format). */
typedef enum an_cli_format
{
	AN_CLI_FORMAT_TSV = 0,
	AN_CLI_FORMAT_PROMETHEUS
} an_cli_format;

/* Everything one invocation was given, validated. */
typedef struct an_cli
{
	const char *verb;
	const char *store_url;       /* --store or ANARCHON_STORE */
	const char *job;
	int64_t		slot;            /* 0: none given yet */
	const char *schedule_text;
	an_schedule schedule;
	int			has_schedule;
	int			run_now;         /* --now, or run --slot now */
	int			slot_now;        /* run --slot now was given (options.c) */
	const char *token;
	an_settings settings;
	int64_t		from,
				to;
	int			has_from,
				has_to;
	an_run_state status;         /* finish */
	int64_t		jitter_ms;
	int64_t		kill_after_ms;
	int			shell;
	int			verbose;
	int			log_json;        /* run --log-format json (log.c) */
	int			check;           /* cron --check */
	const char *metrics_listen;  /* cron --metrics-listen HOST:PORT, or NULL */
	int			not_mine_exit;
	an_cli_format format;        /* stats */
	int64_t		until;           /* pause: 0 = until resumed */
	char	  **command;         /* NULL-terminated, after -- */
	an_tz_cache *zones;
	/* The open store, and this process's counters of it (stats). */
	an_store   *store;
	an_stats_table stats;
	an_host		host;
	void	   *sqlite_db;       /* sqlite:// stores: the connection the local store opened beside */
} an_cli;

typedef struct an_cli_verb
{
	const char *name;
	int			takes;           /* AN_OPT_* */
	int			needs;           /* AN_OPT_* that must be given */
	int			(*main) (an_cli *cli);
	const char *usage;           /* the synopsis after "anarchon " */
	const char *help;            /* what it does, a few lines */
} an_cli_verb;

extern const an_cli_verb an_cli_verbs[];
/* The settings' part of a usage: the lines after [SETTINGS] (main.c). */
extern const char an_cli_settings_usage[];

/* options.c: parse argv (after the verb) into cli; AN_EXIT_OK or an exit status. */
int			an_cli_parse(an_cli *cli, const an_cli_verb *verb, int argc, char **argv);
void		an_cli_usage(FILE *out, const an_cli_verb *verb);
/* A setting's flag ("--busy-timeout-ms" for busy_timeout_ms), NULL for another name: an_host.setting_name. */
const char *an_cli_setting_flag(void *ctx, const char *name);
/* The i-th setting's name (lease_ms, ...), NULL past the last. */
const char *an_cli_setting_name(int i);

/* times.c: a TIME argument (ms, RFC 3339, or `now`), and RFC 3339 output. */
int			an_cli_parse_time(const char *text, int64_t *ms, an_err *err);
void		an_cli_format_time(int64_t ms, char *out, size_t outlen);
int64_t		an_cli_now_ms(void);
/* CLOCK_MONOTONIC in ms: the lease's deadlines, which a change of the wall clock must not move. */
int64_t		an_cli_mono_ms(void);

/*
 * store_file.c: the file of a sqlite: URL's rest (after "sqlite:" or
 * "sqlite://") into path, and its mode (0600 unless ?mode=); AN_EXIT_OK or
 * 64 after a message.  Then create: follow the links that are safe to follow
 * and create a missing file with its mode; *nofollow is 1 when the path is
 * not a link (open it with SQLITE_OPEN_NOFOLLOW); AN_EXIT_OK, 77 (a link
 * refused, or a file or directory the caller may not write) or 78.
 */
int			an_cli_sqlite_target(const char *rest, char *path, size_t pathlen, unsigned *mode);
int			an_cli_sqlite_create(const char *file, unsigned mode, int *nofollow);

/* open.c: open cli->store_url; AN_EXIT_OK or an exit status after a message. */
int			an_cli_open(an_cli *cli);
/*
 * What an_cli_open would refuse without connecting (an unknown scheme, a URL
 * its store refuses): AN_EXIT_OK, or 64 after its message.
 */
int			an_cli_check_store(an_cli *cli);
/* From now on a stop signal sets an_cli_signal (an_cli_open does this too). */
void		an_cli_catch_signals(void);
void		an_cli_close(an_cli *cli);
/* The exit status for a store error, after its one-line message on stderr. */
int			an_cli_store_failed(an_cli *cli, const char *what);
/* The request for cli's job and slot. */
void		an_cli_request(const an_cli *cli, an_request *rq, int64_t slot, const char *token);
/* The slot to act on: --slot, or the schedule's slot that has begun. */
int			an_cli_slot(an_cli *cli, int64_t *slot);
/* Set by SIGTERM, SIGINT, SIGHUP or SIGQUIT while no command runs. */
extern volatile int an_cli_signal;

/* "anarchon: message" on stderr. */
void		an_cli_error(const char *fmt,...) __attribute__((format(printf, 1, 2)));

/* The verbs. */
int			an_cli_run(an_cli *cli);
/* run_now.c: `anarchon run --now`, one manual run of the job fleet-wide. */
int			an_cli_run_now(an_cli *cli);
int			an_cli_claim(an_cli *cli);
int			an_cli_heartbeat(an_cli *cli);
int			an_cli_finish(an_cli *cli);
int			an_cli_check(an_cli *cli);
int			an_cli_slots(an_cli *cli);
int			an_cli_missed(an_cli *cli);
int			an_cli_due(an_cli *cli);
/* pause.c: pause and resume a job in the store. */
int			an_cli_pause(an_cli *cli);
int			an_cli_resume(an_cli *cli);
/* cron.c: `anarchon cron FILE`, a crontab run across a fleet. */
int			an_cli_cron(an_cli *cli);

/*
 * listing.c: the slots to claim at now under the catch_up setting
 * (schedule/due.h), oldest first, into out; *n how many.  Opens the store only
 * when the policy looks back and it is not open yet (run opens it first).
 * AN_EXIT_OK, or an exit status after a message.
 */
int			an_cli_due_slots(an_cli *cli, int64_t now, int64_t out[AN_DUE_MAX], size_t *n);
int			an_cli_stats(an_cli *cli);
int			an_cli_token(an_cli *cli);

/*
 * stats_prometheus.c: rows of store counters in Prometheus' text format, the
 * series of pg/prometheus/anarchon-queries.yaml (doc/operating.md).
 */
void		an_cli_stats_prometheus(FILE *out, const an_stats_view *rows, size_t n);

/* A label value in Prometheus' text format, quoted and escaped (backslash, quote, newline). */
void		an_cli_prometheus_label(FILE *out, const char *v);

/* A fresh token (getrandom). */
int			an_cli_new_token(char out[AN_TOKEN_HEX + 1]);

/*
 * supervise.c: run the command of a won claim under keep-alive; returns its
 * exit status.  attempt is what the claim answered; claim_sent_ms
 * (an_cli_mono_ms) when the claim was sent, the start of the lease as this
 * host must count it.
 */
int			an_cli_supervise(an_cli *cli, int64_t slot, const char *token, int32_t attempt,
							 int64_t claim_sent_ms);

/*
 * log.c: under --log-format json, the outcome of one slot as a JSON object
 * on stderr; attempt 0 is null (not won), status the exit status the slot
 * gave.  Nothing under the default text format.
 */
void		an_cli_log_slot(const an_cli *cli, int64_t slot, const char *outcome, int32_t attempt,
							int status, int64_t duration_ms);
/* The same, for a job other than cli's own (anarchon cron's). */
void		an_cli_log_job_slot(const an_cli *cli, const char *job, int64_t slot, const char *outcome,
								int32_t attempt, int status, int64_t duration_ms);

/* The command's program found on PATH: 0, or AN_EXIT_NOTFOUND / AN_EXIT_NOEXEC after a message. */
int			an_cli_command_check(const an_cli *cli);

#endif							/* ANARCHON_CLI_H */
