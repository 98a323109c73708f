/*
 * stats.c — `anarchon stats`: the columns of anarchon_stats(), as
 * tab-separated values with a header line, or (--format prometheus) the
 * same counters in Prometheus' text format (stats_prometheus.c).
 *
 * The command lives for one call, so its own counters say little about a
 * fleet.  With PostgreSQL it prints the server's counters (every backend's
 * calls since the last reset).  With any other store it makes one round trip
 * (a check, which writes nothing) and prints what that call measured: the
 * latency, and the offset of the store's clock from this host's where the
 * store tells its time, which is what an operator probing a host wants.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "store_pg.h"

#define STATS_PROBE_JOB "anarchon-stats"

static void
print_value(const an_stats_column *c, const an_stats_value *v)
{
	char		when[40];

	if (v->null)
		return;
	switch (c->type)
	{
		case AN_STATS_TEXT:
			fputs(v->text ? v->text : "", stdout);
			break;
		case AN_STATS_MS:
			printf("%.3f", v->d);
			break;
		case AN_STATS_TIME:
			an_cli_format_time(v->i, when, sizeof(when));
			fputs(when, stdout);
			break;
		default:
			printf("%lld", (long long) v->i);
	}
}

/* The table's rows, read back, in Prometheus' text format. */
static int
print_prometheus(const an_stats_table *t)
{
	size_t		n = an_stats_rows(t);
	an_stats_view *rows = calloc(n ? n : 1, sizeof(*rows));

	if (rows == NULL)
	{
		an_cli_error("out of memory");
		return AN_EXIT_SOFTWARE;
	}
	for (size_t i = 0; i < n; i++)
	{
		an_stats_read(t, i, &rows[i]);
		rows[i].scope = "process";
	}
	an_cli_stats_prometheus(stdout, rows, n);
	free(rows);
	return AN_EXIT_OK;
}

static void
print_table(const an_stats_table *t)
{
	for (int c = 0; c < an_stats_ncolumns; c++)
		printf("%s%s", c ? "\t" : "", an_stats_columns[c].name);
	putchar('\n');
	for (size_t i = 0; i < an_stats_rows(t); i++)
	{
		an_stats_view view;

		an_stats_read(t, i, &view);
		view.scope = "process";
		for (int c = 0; c < an_stats_ncolumns; c++)
		{
			an_stats_value v;

			an_stats_value_of(&view, c, &v);
			if (c)
				putchar('\t');
			print_value(&an_stats_columns[c], &v);
		}
		putchar('\n');
	}
}

int
an_cli_stats(an_cli *cli)
{
	an_request	rq;
	an_check_result res;
	int			rc;

	if (cli->job == NULL)
		cli->job = STATS_PROBE_JOB;
	if (cli->format == AN_CLI_FORMAT_PROMETHEUS && an_cli_pg_url(cli->store_url))
	{
		an_cli_error("stats --format prometheus does not read PostgreSQL's counters yet: scrape them with"
					 " prometheus-postgres-exporter and pg/prometheus/anarchon-queries.yaml (doc/operating.md)");
		return AN_EXIT_USAGE;
	}
	if ((rc = an_cli_open(cli)) != AN_EXIT_OK)
		return rc;
	if (AN_STORE_HAS(cli->store, AN_CAP_OWN_STATS))
		return an_cli_pg_stats(cli->store, stdout) == AN_OK ? AN_EXIT_OK : an_cli_store_failed(cli, NULL);
	an_cli_request(cli, &rq, an_cli_now_ms() / 1000 * 1000, NULL);
	an_store_clear(cli->store);
	if (an_store_check(cli->store, &rq, &res) != AN_OK)
		return an_cli_store_failed(cli, NULL);
	if (cli->format == AN_CLI_FORMAT_PROMETHEUS)
		return print_prometheus(&cli->stats);
	print_table(&cli->stats);
	return AN_EXIT_OK;
}
