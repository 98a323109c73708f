/*
 * store_pg_stats.c — `anarchon stats` with PostgreSQL: the server's own
 * anarchon_stats(), the counts of every backend's calls, printed in the
 * command's columns and formats (cli/stats.c prints the other stores' rows
 * the same way), so a script reads one layout whatever the store.
 *
 * Without the library in shared_preload_libraries each backend counts only
 * its own calls, and the command's fresh connection has made none: the
 * table would be a bare header.  Then one line on stderr says so and how to
 * get the server's counters; the exit stays 0, since what was asked for was
 * read (doc/cli.md, "stats").
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

/*
 * Is the library in shared_preload_libraries?  1, 0, or -1 when this role
 * may not read the setting (pg_settings hides it from roles without
 * pg_read_all_settings) or the query failed: nothing is said then but that.
 */
static int
preloaded(an_store *st, an_pg *pg)
{
	PGresult   *r;
	int			v = -1;

	if (an_pg_query(st, pg, "shared_preload_libraries",
					"SELECT pg_catalog.bool_or(pg_catalog.regexp_replace(pg_catalog.btrim(l, ' \"'),"
					" '^.*/|\\.(so|dylib|dll)$', '', 'g') = 'anarchon')"
					" FROM pg_catalog.pg_settings,"
					" pg_catalog.regexp_split_to_table(setting, ',') AS l"
					" WHERE name = 'shared_preload_libraries'",
					0, NULL, AN_PG_SLACK_MS, &r) != AN_OK)
	{
		an_store_clear(st);
		return -1;
	}
	/* The setting hidden from this role: no row to aggregate, NULL (an empty setting is one '' row). */
	if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 0))
		v = PQgetvalue(r, 0, 0)[0] == 't';
	PQclear(r);
	return v;
}

/* rows of r counted by one backend only (scope 'backend'), or none at all: say why, on stderr. */
static void
say_per_backend(an_store *st, an_pg *pg, const PGresult *r)
{
	int			scope = PQfnumber(r, "scope");
	int			backend = PQntuples(r) == 0;

	for (int row = 0; row < PQntuples(r) && scope >= 0; row++)
		if (strcmp(PQgetvalue(r, row, scope), "backend") == 0)
			backend = 1;
	if (!backend)
		return;
	switch (preloaded(st, pg))
	{
		case 1:
			return;             /* preloaded, and no call since the server started (or the reset) */
		case 0:
			an_cli_error("PostgreSQL at %s counts per backend: the anarchon library is not in shared_preload_libraries,"
						 " so each session counts only its own calls, and this one has made none. For the counters"
						 " of every backend, set shared_preload_libraries = 'anarchon' in postgresql.conf and restart"
						 " the server (doc/operating.md, Metrics)", pg->where);
			return;
		default:
			an_cli_error("PostgreSQL at %s has no counters to show: either no call was made since the server started,"
						 " or the anarchon library is not in shared_preload_libraries and each session counts only its"
						 " own calls (this one has made none); this role may not read that setting (pg_read_all_settings,"
						 " which pg_monitor has, may). For the counters of every backend, set shared_preload_libraries"
						 " = 'anarchon' and restart the server (doc/operating.md, Metrics)", pg->where);
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
		if (rc == AN_E_AUTH && st->err.hint[0] == '\0')
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
	fflush(out);
	say_per_backend(st, pg, r);
	PQclear(r);
	return AN_OK;
}
