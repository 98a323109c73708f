/*
 * store_pg_stats.c — `anarchon stats` with PostgreSQL: the server's own
 * anarchon_stats(), the counts of every backend's calls, printed in the
 * command's columns and formats (cli/stats.c prints the other stores' rows
 * the same way), so a script reads one layout whatever the store.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "store_pg_int.h"

/* Column name of r, or -1; times come as name_ms, in ms since the epoch. */
static int
column(const PGresult *r, const char *name, int as_ms)
{
	char		key[64];

	snprintf(key, sizeof(key), "%s%s", name, as_ms ? "_ms" : "");
	return PQfnumber(r, key);
}

static void
print_value(FILE *out, const PGresult *r, int row, const an_stats_column *c)
{
	int			col = column(r, c->name, c->type == AN_STATS_TIME);
	const char *v;
	char		when[40];

	if (col < 0 || PQgetisnull(r, row, col))
		return;                 /* an older extension without the column: empty, as NULL is */
	v = PQgetvalue(r, row, col);
	switch (c->type)
	{
		case AN_STATS_MS:
			fprintf(out, "%.3f", strtod(v, NULL));
			break;
		case AN_STATS_TIME:
			an_cli_format_time(strtoll(v, NULL, 10), when, sizeof(when));
			fputs(when, out);
			break;
		default:
			fputs(v, out);
	}
}

int
an_cli_pg_stats(an_store *st, FILE *out)
{
	an_pg	   *pg = st->impl;
	PGresult   *r;
	int			rc;

	if (pg == NULL)
		return an_store_fail(st, AN_E_STATE, "the PostgreSQL store is not open");
	if ((rc = an_pg_query(st, pg, "the statistics",
						  "SELECT s.*, (extract(epoch FROM s.clock_seen) * 1000)::bigint AS clock_seen_ms,"
						  " (extract(epoch FROM s.stats_reset) * 1000)::bigint AS stats_reset_ms"
						  " FROM anarchon.anarchon_stats() AS s",
						  0, NULL, AN_PG_SLACK_MS, &r)) != AN_OK)
	{
		if (rc == AN_E_AUTH && st->errhint[0] == '\0')
			an_store_hintf(st, "anarchon_stats() is for members of pg_monitor: GRANT pg_monitor TO the role.");
		return rc;
	}
	for (int c = 0; c < an_stats_ncolumns; c++)
		fprintf(out, "%s%s", c ? "\t" : "", an_stats_columns[c].name);
	fputc('\n', out);
	for (int row = 0; row < PQntuples(r); row++)
	{
		for (int c = 0; c < an_stats_ncolumns; c++)
		{
			if (c)
				fputc('\t', out);
			print_value(out, r, row, &an_stats_columns[c]);
		}
		fputc('\n', out);
	}
	PQclear(r);
	return AN_OK;
}
