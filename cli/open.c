/*
 * open.c — the command's store: which one a URL names, how it is opened,
 * and how its errors become one line on stderr and an exit status.
 *
 *   sqlite:///path/runs.db   the SQLite local store, the very code of the
 *                            extension, on a connection of the command's own
 *   postgresql://, postgres:// the database's own SQL functions (store_pg.c)
 *   anything else            the remote layer (Redis, NATS, RabbitMQ)
 *
 * A URL the store refuses without connecting (an unknown scheme, strategy or
 * parameter) is bad usage, 64; a store that cannot be reached is 75
 * (EX_TEMPFAIL, cron's "try again later"); one that refuses the
 * configuration or the credentials is 78 (EX_CONFIG).
 */
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "host.h"
#include "redact.h"
#include "remote.h"
#include "store_pg.h"

volatile int an_cli_signal;

/*
 * One write per line: stderr is unbuffered, and hosts sharing a log (cron's,
 * a file opened for appending) must not interleave their lines.
 */
void
an_cli_error(const char *fmt,...)
{
	char		line[4 * AN_ERRTEXTMAX];
	va_list		ap;
	int			n;

	n = snprintf(line, sizeof(line), "anarchon: ");
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t) n - 1, fmt, ap);
	va_end(ap);
	if (n > (int) sizeof(line) - 2)
		n = (int) sizeof(line) - 2;
	line[n++] = '\n';
	fwrite(line, 1, (size_t) n, stderr);
}

static int64_t
host_now(void *ctx)
{
	(void) ctx;
	return an_cli_now_ms();
}

static int
host_interrupted(void *ctx)
{
	(void) ctx;
	return an_cli_signal != 0;
}

/* The exit status of an error class. */
static int
exit_status(an_error code)
{
	switch (code)
	{
		case AN_OK:
			return AN_EXIT_OK;
		case AN_E_INPUT:
			return AN_EXIT_USAGE;
		case AN_E_CONFIG:
		case AN_E_AUTH:
		case AN_E_UNSUPPORTED:
			return AN_EXIT_CONFIG;
		case AN_E_CONNECT:
		case AN_E_TIMEOUT:
		case AN_E_BUSY:
		case AN_E_CANCELED:
			return AN_EXIT_TEMPFAIL;
		default:
			return AN_EXIT_SOFTWARE;
	}
}

int
an_cli_store_failed(an_cli *cli, const char *what)
{
	char		text[AN_ERRTEXTMAX];
	an_store   *st = cli->store;

	an_err_text(&st->err, text, sizeof(text));
	an_cli_error("%s%s%s", what ? what : "", what ? ": " : "", text[0] ? text : "the store failed");
	return exit_status(st->err.code != AN_OK ? st->err.code : AN_E_INTERNAL);
}

/* The file of sqlite:///abs/path or sqlite:rel/path; NULL when url is not one. */
static const char *
sqlite_path(const char *url)
{
	if (strncmp(url, "sqlite://", 9) == 0)
		return url + 9;
	if (strncmp(url, "sqlite:", 7) == 0)
		return url + 7;
	return NULL;
}

/* Is the file of a sqlite: URL one we can name?  AN_EXIT_OK, or 64 after a message. */
static int
sqlite_path_check(const char *rest)
{
	char		path[PATH_MAX];
	unsigned	mode;

	return an_cli_sqlite_target(rest, path, sizeof(path), &mode);
}

/*
 * The SQLite database the local store opens its claim connection beside:
 * created with its mode, reached only through links that are safe to follow
 * (store_file.c).
 */
static int
open_sqlite(an_cli *cli, const char *rest, sqlite3 **db)
{
	char		path[PATH_MAX];
	unsigned	mode;
	int			nofollow,
				rc;

	(void) cli;
	if ((rc = an_cli_sqlite_target(rest, path, sizeof(path), &mode)) != AN_EXIT_OK ||
		(rc = an_cli_sqlite_create(path, mode, &nofollow)) != AN_EXIT_OK)
		return rc;
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
						(nofollow ? SQLITE_OPEN_NOFOLLOW : 0), NULL) != SQLITE_OK)
	{
		an_cli_error("cannot open SQLite database %s: %s", path, *db ? sqlite3_errmsg(*db) : "out of memory");
		return AN_EXIT_CONFIG;
	}
	return AN_EXIT_OK;
}

static void
on_signal(int sig)
{
	an_cli_signal = sig;
}

/* While no command runs, a stop signal ends the call in progress. */
static void
catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	/* A store writing to a closed socket gets EPIPE, never a signal. */
	signal(SIGPIPE, SIG_IGN);
}

/* The methods of the store url names; NULL after a message when there is none. */
static const an_store_methods *
methods_of(const char *url)
{
	an_err		err;
	const an_store_methods *m;

	if (sqlite_path(url))
		return &an_sqlite_local_methods;
	if (an_cli_pg_url(url))
		return &an_cli_pg_methods;
	if ((m = an_remote_find(url, &err)) == NULL)
		an_cli_error("%s; the command also takes sqlite:///path/runs.db and postgresql://host/db", AN_ERR_TEXT(&err));
	return m;
}

void
an_cli_catch_signals(void)
{
	catch_stop_signals();
}

int
an_cli_check_store(an_cli *cli)
{
	const char *url = cli->store_url;
	const char *path = sqlite_path(url);
	const an_store_methods *m;
	an_store	st;
	char		text[AN_ERRTEXTMAX];
	int			rc;

	if (path && (rc = sqlite_path_check(path)) != AN_EXIT_OK)
		return rc;
	if ((m = methods_of(url)) == NULL)
		return AN_EXIT_USAGE;
	cli->host.now_ms = host_now;
	cli->host.interrupted = host_interrupted;
	/* Hints name the flags this host's user types, not anarchon_config's names. */
	cli->host.setting_name = an_cli_setting_flag;
	an_store_init(&st, m, &cli->host);
	if (an_store_check_url(&st, url) == AN_OK)
		return AN_EXIT_OK;
	an_err_text(&st.err, text, sizeof(text));
	an_cli_error("%s", text[0] ? text : "the store refused its URL");
	return exit_status(st.err.code) == AN_EXIT_SOFTWARE ? AN_EXIT_SOFTWARE : AN_EXIT_USAGE;
}

int
an_cli_open(an_cli *cli)
{
	const an_store_methods *m;
	const char *url = cli->store_url;
	const char *path = sqlite_path(url);
	void	   *arg = NULL;
	sqlite3    *db = NULL;
	char	   *name;
	int			rc;

	catch_stop_signals();
	/* What open would refuse without connecting: a bad URL is bad usage, 64. */
	if ((rc = an_cli_check_store(cli)) != AN_EXIT_OK)
		return rc;
	m = methods_of(url);
	if (path)
	{
		if ((rc = open_sqlite(cli, path, &db)) != AN_EXIT_OK)
		{
			sqlite3_close(db);
			return rc;
		}
		arg = db;
	}

	if ((cli->store = calloc(1, sizeof(an_store))) == NULL)
	{
		sqlite3_close(db);
		an_cli_error("out of memory");
		return AN_EXIT_SOFTWARE;
	}
	an_store_init(cli->store, m, &cli->host);
	an_stats_init(&cli->stats, an_cli_now_ms());
	name = an_redact_url_dup(url);
	cli->store->stats = an_stats_row_add(&cli->stats, name ? name : m->name, m->name);
	free(name);
	if (m->open(cli->store, url, arg) != AN_OK)
	{
		rc = an_cli_store_failed(cli, NULL);
		m->close(cli->store);
		sqlite3_close(db);
		free(cli->store);
		cli->store = NULL;
		return rc;
	}
	cli->sqlite_db = db;
	return AN_EXIT_OK;
}

void
an_cli_close(an_cli *cli)
{
	if (cli->store == NULL)
		return;
	cli->store->m->close(cli->store);
	sqlite3_close(cli->sqlite_db);
	cli->sqlite_db = NULL;
	free(cli->store);
	cli->store = NULL;
}

void
an_cli_request(const an_cli *cli, an_request *rq, int64_t slot, const char *token)
{
	rq->job = cli->job;
	rq->slot = slot;
	rq->token = token;
	rq->settings = &cli->settings;
	rq->kind = AN_CLAIM_SCHEDULED;
}

int
an_cli_slot(an_cli *cli, int64_t *slot)
{
	an_err		err;
	int			found = 0;

	if (!cli->has_schedule)
	{
		*slot = cli->slot;
		return AN_EXIT_OK;
	}
	if (an_schedule_slot(&cli->schedule, an_cli_now_ms(), slot, &found, &err) != AN_OK)
	{
		an_cli_error("%s", AN_ERR_TEXT(&err));
		return AN_EXIT_USAGE;
	}
	if (!found)
	{
		an_cli_error("the schedule \"%s\" has no slot at or before now", cli->schedule_text);
		return AN_EXIT_USAGE;
	}
	return AN_EXIT_OK;
}
