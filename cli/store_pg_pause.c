/*
 * store_pg_pause.c — the command's PostgreSQL store, pause methods: one call
 * each of anarchon_pause, anarchon_resume and anarchon_pauses, so the pause
 * lives in the store the database's settings name, under its role rules.
 * There is no paused method: the database checks the pause inside
 * anarchon_claim itself, so a claim stays one round trip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_pg_int.h"

int
an_pg_pause(an_store *st, const an_request *rq, int64_t until)
{
	an_pg	   *pg = st->impl;
	char		u[24];
	const char *v[2] = {rq->job, u};
	PGresult   *r;
	int			rc;

	snprintf(u, sizeof(u), "%lld", (long long) until);
	rc = an_pg_query(st, pg, "the pause",
					 "SELECT anarchon.anarchon_pause($1::text, CASE WHEN $2::bigint = 0 THEN NULL"
					 " ELSE pg_catalog.to_timestamp($2::bigint / 1000.0) END)",
					 2, v, an_pg_call_timeout(rq), &r);
	if (rc == AN_OK)
		PQclear(r);
	return rc;
}

int
an_pg_resume(an_store *st, const an_request *rq, int *was_paused)
{
	an_pg	   *pg = st->impl;
	const char *v[1] = {rq->job};
	PGresult   *r;
	int			rc;

	*was_paused = 0;
	if ((rc = an_pg_query(st, pg, "the resume", "SELECT anarchon.anarchon_resume($1::text)",
						  1, v, an_pg_call_timeout(rq), &r)) != AN_OK)
		return rc;
	if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 0))
		*was_paused = PQgetvalue(r, 0, 0)[0] == 't';
	PQclear(r);
	return AN_OK;
}

int
an_pg_pauses(an_store *st, const an_request *rq, int64_t from, int64_t to,
			 an_pause_span *spans, size_t max, size_t *n)
{
	an_pg	   *pg = st->impl;
	char		f[24],
				t[24];
	const char *v[3] = {rq->job, f, t};
	PGresult   *r;
	int			rc;

	*n = 0;
	snprintf(f, sizeof(f), "%lld", (long long) from);
	snprintf(t, sizeof(t), "%lld", (long long) to);
	if ((rc = an_pg_query(st, pg, "the pauses",
						  "SELECT (extract(epoch FROM p.since) * 1000)::bigint,"
						  " CASE WHEN p.until = 'infinity' THEN 0 ELSE (extract(epoch FROM p.until) * 1000)::bigint END"
						  " FROM anarchon.anarchon_pauses($1::text, pg_catalog.to_timestamp($2::bigint / 1000.0),"
						  " pg_catalog.to_timestamp($3::bigint / 1000.0)) AS p ORDER BY 1",
						  3, v, an_pg_call_timeout(rq), &r)) != AN_OK)
		return rc;
	*n = (size_t) PQntuples(r);
	for (size_t i = 0; i < *n && i < max; i++)
	{
		spans[i].start = strtoll(PQgetvalue(r, (int) i, 0), NULL, 10);
		spans[i].end = strtoll(PQgetvalue(r, (int) i, 1), NULL, 10);
		if (spans[i].end == 0)
			spans[i].end = AN_PAUSE_OPEN;
	}
	PQclear(r);
	return AN_OK;
}
