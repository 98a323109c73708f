/*
 * store_pg_none.c — the PostgreSQL store of a command built without libpq
 * (configure found no libpq-dev; cli/cli.mk links this file instead of
 * store_pg*.c): a postgresql:// URL is still recognised, and refused at open
 * with a message that says how to get a command that takes it.
 */
#include <string.h>

#include "store_pg.h"

int
an_cli_pg_url(const char *url)
{
	return url != NULL && (strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0);
}

static int
refuse(an_store *st)
{
	an_store_fail(st, AN_E_CONFIG, "this anarchon was built without libpq, so it cannot reach PostgreSQL");
	return an_store_hintf(st, "Install libpq-dev and build the command again (make cli).");
}

static int
none_open(an_store *st, const char *url, void *arg)
{
	(void) url;
	(void) arg;
	return refuse(st);
}

static int
none_claim(an_store *st, const an_request *rq, an_claim_result *res)
{
	(void) rq;
	(void) res;
	return refuse(st);
}

static int
none_owned(an_store *st, const an_request *rq, int *owned)
{
	(void) rq;
	*owned = 0;
	return refuse(st);
}

static int
none_finish(an_store *st, const an_request *rq, an_run_state status, int *owned)
{
	(void) status;
	return none_owned(st, rq, owned);
}

static int
none_check(an_store *st, const an_request *rq, an_check_result *res)
{
	(void) rq;
	(void) res;
	return refuse(st);
}

static void
none_close(an_store *st)
{
	(void) st;
}

const an_store_methods an_cli_pg_methods = {
	.version = AN_STORE_VERSION,
	.name = "postgresql",
	.open = none_open,
	.claim = none_claim,
	.heartbeat = none_owned,
	.finish = none_finish,
	.check = none_check,
	.close = none_close,
	.caps = AN_CAP_OWN_STATS,
};

int
an_cli_pg_stats(an_store *st, FILE *out)
{
	(void) out;
	return refuse(st);
}
