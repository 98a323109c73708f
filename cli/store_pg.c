/*
 * store_pg.c — the command's PostgreSQL store: each method is one call of the
 * extension's SQL function of the same name, so the claim is decided by the
 * database, on its clock and under its rules, exactly as for a client that
 * calls the function itself (store_pg.h).
 *
 * The names are schema-qualified (anarchon.anarchon_claim_info), so the
 * caller's search_path cannot change what they mean, and every setting of the
 * request is passed as the functions' optional arguments, so the server's
 * anarchon.* settings never change what the command asked for.  Parameters
 * go as text with a cast in the query: the slot as bigint picks the functions'
 * millisecond forms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_pg_int.h"

int64_t
an_pg_call_timeout(const an_request *rq)
{
	return (rq->settings ? rq->settings->busy_timeout_ms : AN_BUSY_TIMEOUT_MS_DEFAULT) + AN_PG_SLACK_MS;
}

static an_pg *
pg_of(an_store *st)
{
	if (st->impl == NULL)
		an_store_fail(st, AN_E_STATE, "the PostgreSQL store is not open");
	return st->impl;
}

/* The one value of a one-row answer, or NULL (SQL NULL, or no row). */
static const char *
value(const PGresult *res, int col)
{
	if (PQntuples(res) < 1 || PQnfields(res) <= col || PQgetisnull(res, 0, col))
		return NULL;
	return PQgetvalue(res, 0, col);
}

static int
pg_open(an_store *st, const char *url, void *arg)
{
	an_pg	   *pg;
	int			rc;

	(void) arg;
	if ((rc = an_pq_load(st)) != AN_OK)
		return rc;
	if ((pg = calloc(1, sizeof(*pg))) == NULL)
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	st->impl = pg;
	if ((pg->url = strdup(url)) == NULL)
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	if ((rc = an_pg_parse_url(st, url, pg)) != AN_OK)
		return rc;
	return an_pg_connect(st, pg, NULL);
}

/*
 * A claim, or (slot_out not NULL) a run-now: one call of sql, whose arguments
 * are job, [slot,] token and the request's settings, and whose answer is
 * outcome, attempt, lease end (ms), the server's clock (ms) [, the slot (ms)].
 */
static int
claim_call(an_store *st, const an_request *rq, const char *what, const char *sql,
		   an_claim_result *res, int64_t *slot_out)
{
	an_pg	   *pg = pg_of(st);
	an_settings s;
	char		slot[24],
				lease[24],
				late[24],
				attempts[16],
				busy[24];
	const char *v[8];
	int			n = 0;
	const char *outcome;
	PGresult   *r;
	int64_t		sent = 0;
	int			rc;

	if (pg == NULL)
		return st->err.code;
	if (rq->settings)
		s = *rq->settings;
	else
		an_settings_default(&s);
	snprintf(slot, sizeof(slot), "%lld", (long long) rq->slot);
	snprintf(lease, sizeof(lease), "%lld", (long long) s.lease_ms);
	snprintf(late, sizeof(late), "%lld", (long long) s.max_late_ms);
	snprintf(attempts, sizeof(attempts), "%d", (int) s.attempts);
	snprintf(busy, sizeof(busy), "%lld", (long long) s.busy_timeout_ms);
	v[n++] = rq->job;
	if (slot_out == NULL)
		v[n++] = slot;
	v[n++] = rq->token;
	v[n++] = lease;
	v[n++] = late;
	v[n++] = attempts;
	v[n++] = an_settings_overlap_name(&s);
	v[n++] = busy;
	if (st->stats && st->host && st->host->now_ms)
		sent = an_store_host_now(st);
	if ((rc = an_pg_query(st, pg, what, sql, n, v, an_pg_call_timeout(rq), &r)) != AN_OK)
		return rc;
	if (sent && value(r, 3))
		an_store_saw_clock(st, strtoll(value(r, 3), NULL, 10), sent, an_store_host_now(st));
	res->outcome = AN_LOST;
	res->attempt = value(r, 1) ? (int32_t) strtol(value(r, 1), NULL, 10) : 0;
	res->lease_until = value(r, 2) ? strtoll(value(r, 2), NULL, 10) : 0;
	if (slot_out)
		*slot_out = value(r, 4) ? strtoll(value(r, 4), NULL, 10) : 0;
	outcome = value(r, 0);
	rc = AN_E_STORE;
	for (int o = AN_WON; o <= AN_PAUSED && outcome; o++)
		if (strcmp(outcome, an_outcome_name((an_outcome) o)) == 0)
		{
			res->outcome = (an_outcome) o;
			rc = AN_OK;
		}
	if (rc != AN_OK)
		an_store_fail(st, AN_E_STORE, "PostgreSQL answered %s with an unknown outcome \"%.40s\"",
					  what, outcome ? outcome : "NULL");
	PQclear(r);
	return rc;
}

/* The server's clock too, for the offset `anarchon stats` shows. */
#define CLAIM_COLUMNS "SELECT c.outcome, c.attempt, (extract(epoch FROM c.lease_until) * 1000)::bigint," \
	" (extract(epoch FROM pg_catalog.clock_timestamp()) * 1000)::bigint"

/*
 * A claim, or a run-now: the database chooses the manual slot and claims it
 * (anarchon_run_now), as every host's run-now is a claim of kind manual.
 */
static int
pg_claim(an_store *st, const an_request *rq, an_claim_result *res)
{
	if (rq->kind == AN_CLAIM_MANUAL)
		return claim_call(st, rq, "the run-now", CLAIM_COLUMNS ", (extract(epoch FROM c.slot) * 1000)::bigint"
						  " FROM anarchon.anarchon_run_now($1::text, $2::text, $3::bigint,"
						  " $4::bigint, $5::integer, $6::text, $7::bigint) AS c", res, &res->slot);
	return claim_call(st, rq, "the claim", CLAIM_COLUMNS
					  " FROM anarchon.anarchon_claim_info($1::text, $2::bigint, $3::text, $4::bigint,"
					  " $5::bigint, $6::integer, $7::text, $8::bigint) AS c", res, NULL);
}

/* A function answering boolean: *owned, or an error when the answer is neither. */
static int
boolean_call(an_store *st, const an_request *rq, const char *what, const char *sql,
			 const char *fourth, int *owned)
{
	an_pg	   *pg = pg_of(st);
	char		slot[24];
	const char *v[4] = {rq->job, slot, rq->token, fourth};
	const char *b;
	PGresult   *r;
	int			rc;

	*owned = 0;
	if (pg == NULL)
		return st->err.code;
	snprintf(slot, sizeof(slot), "%lld", (long long) rq->slot);
	if ((rc = an_pg_query(st, pg, what, sql, 4, v, an_pg_call_timeout(rq), &r)) != AN_OK)
		return rc;
	b = value(r, 0);
	if (b && (b[0] == 't' || b[0] == 'f'))
		*owned = b[0] == 't';
	else
		rc = an_store_fail(st, AN_E_STORE, "PostgreSQL answered %s with \"%.40s\", not true or false", what,
						   b ? b : "NULL");
	PQclear(r);
	return rc;
}

static int
pg_heartbeat(an_store *st, const an_request *rq, int *owned)
{
	char		lease[24];

	snprintf(lease, sizeof(lease), "%lld",
			 (long long) (rq->settings ? rq->settings->lease_ms : AN_LEASE_MS_DEFAULT));
	return boolean_call(st, rq, "the heartbeat",
						"SELECT anarchon.anarchon_heartbeat($1::text, $2::bigint, $3::text, $4::bigint)", lease, owned);
}

static int
pg_finish(an_store *st, const an_request *rq, an_run_state status, int *owned)
{
	return boolean_call(st, rq, "the finish",
						"SELECT anarchon.anarchon_finish($1::text, $2::bigint, $3::text, $4::text)",
						an_run_state_name(status), owned);
}

static int
pg_check(an_store *st, const an_request *rq, an_check_result *res)
{
	an_pg	   *pg = pg_of(st);
	char		slot[24];
	const char *v[2] = {rq->job, slot};
	const char *state;
	PGresult   *r;
	int			rc;

	if (pg == NULL)
		return st->err.code;
	snprintf(slot, sizeof(slot), "%lld", (long long) rq->slot);
	if ((rc = an_pg_query(st, pg, "the check", "SELECT anarchon.anarchon_check($1::text, $2::bigint)", 2, v,
						  an_pg_call_timeout(rq), &r)) != AN_OK)
		return rc;
	/* The function answers the state only. */
	memset(res, 0, sizeof(*res));
	state = value(r, 0);
	rc = AN_E_STORE;
	for (int c = AN_CHECK_NONE; c <= AN_CHECK_REPLACED && state; c++)
		if (strcmp(state, an_check_state_name((an_check_state) c)) == 0)
		{
			res->state = (an_check_state) c;
			rc = AN_OK;
		}
	if (rc != AN_OK)
		an_store_fail(st, AN_E_STORE, "PostgreSQL answered the check with an unknown state \"%.40s\"",
					  state ? state : "NULL");
	PQclear(r);
	return rc;
}

/*
 * recall: anarchon_check of every slot in one query.  Only the database's own
 * table is asked so: a database whose anarchon.store names a network store
 * would answer "none" for a run that store forgot, which must not read as
 * missed; that database answers anarchon_missed itself.
 */
static int
pg_recall(an_store *st, const an_request *rq, const int64_t *slots, size_t n, unsigned char *has_run)
{
	an_pg	   *pg = pg_of(st);
	char	   *list;
	const char *v[2] = {rq->job, NULL};
	const char *store,
			   *bits;
	size_t		len = 1;
	PGresult   *r;
	int			rc = AN_OK;

	if (pg == NULL)
		return st->err.code;
	if (n == 0)
		return AN_OK;
	if ((list = malloc(n * 21 + 3)) == NULL)
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	list[0] = '{';
	for (size_t i = 0; i < n; i++)
		len += (size_t) sprintf(list + len, "%s%lld", i ? "," : "", (long long) slots[i]);
	strcpy(list + len, "}");
	v[1] = list;
	rc = an_pg_query(st, pg, "the recall",
					 "SELECT x.store, CASE WHEN x.store = 'local' THEN (SELECT pg_catalog.string_agg("
					 "CASE WHEN anarchon.anarchon_check($1::text, s.slot) = 'none' THEN '0' ELSE '1' END, '' ORDER BY s.i)"
					 " FROM pg_catalog.unnest($2::bigint[]) WITH ORDINALITY AS s(slot, i)) END"
					 " FROM (SELECT coalesce(pg_catalog.current_setting('anarchon.store', true), 'local')"
					 " AS store) AS x",
					 2, v, an_pg_call_timeout(rq), &r);
	free(list);
	if (rc != AN_OK)
		return rc;
	store = value(r, 0);
	bits = value(r, 1);
	if (store && strcmp(store, "local") != 0)
	{
		an_store_fail(st, AN_E_UNSUPPORTED, "PostgreSQL at %s keeps its runs in store \"%s\", which the command "
					  "cannot ask about missed slots", pg->where, store);
		rc = an_store_hintf(st, "Ask the database: SELECT * FROM anarchon.anarchon_missed(job, schedule, from, to).");
	}
	else if (bits == NULL || strlen(bits) != n)
		rc = an_store_fail(st, AN_E_STORE, "PostgreSQL answered the recall of %zu slots with %zu", n,
						   bits ? strlen(bits) : 0);
	else
		for (size_t i = 0; i < n; i++)
			has_run[i] = bits[i] == '1';
	PQclear(r);
	return rc;
}

static int
pg_check_url(an_store *st, const char *url)
{
	an_pg		pg;
	int			rc;

	if ((rc = an_pq_load(st)) != AN_OK)
		return rc;
	memset(&pg, 0, sizeof(pg));
	pg.url = (char *) url;
	rc = an_pg_parse_url(st, url, &pg);
	for (int i = 0; i < pg.nsecrets; i++)
		free(pg.secrets[i]);
	return rc;
}

static void
pg_close(an_store *st)
{
	an_pg	   *pg = st->impl;

	if (pg == NULL)
		return;
	an_pg_drop(pg);
	for (int i = 0; i < pg->nsecrets; i++)
		free(pg->secrets[i]);
	free(pg->url);
	free(pg);
	st->impl = NULL;
}

/*
 * No prune: anarchon_prune is the database's to run.  No paused: the
 * server's anarchon_claim decides the pause.
 */
static const an_store_admin pg_admin = {
	.pause = an_pg_pause,        /* store_pg_pause.c */
	.resume = an_pg_resume,
	.pauses = an_pg_pauses,
};

const an_store_methods an_cli_pg_methods = {
	.version = AN_STORE_VERSION,
	.name = "postgresql",
	.open = pg_open,
	.claim = pg_claim,
	.heartbeat = pg_heartbeat,
	.finish = pg_finish,
	.check = pg_check,
	.validate = NULL,            /* the functions validate the settings themselves */
	.close = pg_close,
	.check_url = pg_check_url,
	.recall = pg_recall,
	.fence = NULL,               /* the command holds no transaction a run could be tied to */
	.caps = AN_CAP_OWN_STATS |   /* store_pg_stats.c: the server's counters */
		AN_CAP_RUN_NOW | AN_CAP_PAUSE | AN_CAP_PAUSES,
	.admin = &pg_admin,
};
