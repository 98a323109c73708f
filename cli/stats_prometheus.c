/*
 * stats_prometheus.c — `anarchon stats --format prometheus`: store counters
 * in Prometheus' text exposition format (0.0.4), for node_exporter's
 * textfile collector (doc/operating.md, "Metrics").
 *
 * The series, names, labels, help texts and histogram bounds are those of
 * pg/prometheus/anarchon-queries.yaml, the queries prometheus-postgres-exporter
 * runs against the extension, so that one dashboard reads both:
 *
 *   anarchon_claims_total{store,kind,outcome}         counter
 *   anarchon_errors_total{store,kind,class}           counter
 *   anarchon_heartbeats_total{store,kind,result}      counter  owned | fenced
 *   anarchon_finishes_total{store,kind,result}        counter  owned | fenced
 *   anarchon_fences_total{store,kind,result}          counter  owned | fenced
 *   anarchon_checks_total{store,kind}                 counter
 *   anarchon_store_call_duration_seconds{store,kind}  histogram
 *   anarchon_clock_offset_seconds{store,kind}         gauge (stores with a clock)
 *
 * The writer takes rows read back (an_stats_view, with the histogram's
 * cumulative counts at AN_STATS_LE's bounds), not a table, so that rows read
 * from a server's anarchon_stats() and anarchon_stats_latency() can be
 * written the same way as this process's own.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/*
 * A number in the shortest digits that read back exactly, as Go's strconv
 * 'g' writes it for prometheus-postgres-exporter: the histogram's bounds come
 * out alike in both expositions (le="1.6e-05", le="0.000128").
 */
static const char *
float_text(double v, char *text, size_t len)
{
	if (isinf(v))
		snprintf(text, len, "%s", v > 0 ? "+Inf" : "-Inf");
	else if (isnan(v))
		snprintf(text, len, "NaN");
	else
		for (int digits = 1; digits <= 17; digits++)
		{
			snprintf(text, len, "%.*g", digits, v);
			if (strtod(text, NULL) == v)
				break;
		}
	return text;
}

void
an_cli_prometheus_label(FILE *out, const char *v)
{
	fputc('"', out);
	for (; v && *v; v++)
	{
		if (*v == '\\' || *v == '"')
			fprintf(out, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
	fputc('"', out);
}

static void
family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/*
 * One sample: name{store="…",kind="…"[,label="value"]} and its value, text
 * when given (a float_text), else count.
 */
static void
sample(FILE *out, const char *name, const an_stats_view *r, const char *label,
	   const char *value, uint64_t count, const char *text)
{
	fprintf(out, "%s{store=", name);
	an_cli_prometheus_label(out, r->name);
	fputs(",kind=", out);
	an_cli_prometheus_label(out, r->kind);
	if (label)
	{
		fprintf(out, ",%s=", label);
		an_cli_prometheus_label(out, value);
	}
	if (text)
		fprintf(out, "} %s\n", text);
	else
		fprintf(out, "} %llu\n", (unsigned long long) count);
}

/* Calls answered, split by result: owned (all but the fenced), fenced. */
static void
owned_fenced(FILE *out, const char *name, const an_stats_view *r, uint64_t all, uint64_t fenced)
{
	sample(out, name, r, "result", "owned", all - fenced, NULL);
	sample(out, name, r, "result", "fenced", fenced, NULL);
}

#define ERROR_NAME_(name, text) text,
static const char *const error_classes[AN_STATS_ERRORS] = {AN_STATS_ERROR_LIST(ERROR_NAME_)};

static void
histogram(FILE *out, const an_stats_view *rows, size_t n)
{
	static const char name[] = "anarchon_store_call_duration_seconds";
	char		le[40],
				sum[40];

	family(out, name, "histogram",
		   "How long store calls took (claims, heartbeats, finishes, checks, fences; errors included).");
	for (size_t i = 0; i < n; i++)
	{
		const an_stats_view *r = &rows[i];

		for (int b = 0; b < AN_STATS_LE; b++)
			sample(out, "anarchon_store_call_duration_seconds_bucket", r, "le",
				   float_text(an_stats_le_ms(b) / 1000.0, le, sizeof(le)), r->le[b], NULL);
		sample(out, "anarchon_store_call_duration_seconds_bucket", r, "le", "+Inf", r->calls, NULL);
		sample(out, "anarchon_store_call_duration_seconds_sum", r, NULL, NULL, 0,
			   float_text(r->sum_ms / 1000.0, sum, sizeof(sum)));
		sample(out, "anarchon_store_call_duration_seconds_count", r, NULL, NULL, r->calls, NULL);
	}
}

void
an_cli_stats_prometheus(FILE *out, const an_stats_view *rows, size_t n)
{
	static const char claims[] = "anarchon_claims_total";
	static const char errors[] = "anarchon_errors_total";
	static const char heartbeats[] = "anarchon_heartbeats_total";
	static const char finishes[] = "anarchon_finishes_total";
	static const char fences[] = "anarchon_fences_total";
	static const char checks[] = "anarchon_checks_total";
	static const char clock[] = "anarchon_clock_offset_seconds";
	char		offset[40];
	int			clocks = 0;

	family(out, claims, "counter", "Claims the store answered, by outcome.");
	for (size_t i = 0; i < n; i++)
		for (int o = 0; o < AN_STATS_OUTCOMES; o++)
			sample(out, claims, &rows[i], "outcome", an_outcome_name((an_outcome) o), rows[i].claims[o], NULL);
	family(out, errors, "counter", "Store calls that ended in an error, by class.");
	for (size_t i = 0; i < n; i++)
		for (int e = 0; e < AN_STATS_ERRORS; e++)
			sample(out, errors, &rows[i], "class", error_classes[e], rows[i].errors[e], NULL);
	family(out, heartbeats, "counter", "Heartbeats the store answered, by result.");
	for (size_t i = 0; i < n; i++)
		owned_fenced(out, heartbeats, &rows[i], rows[i].heartbeats, rows[i].heartbeats_fenced);
	family(out, finishes, "counter", "Finishes the store answered, by result.");
	for (size_t i = 0; i < n; i++)
		owned_fenced(out, finishes, &rows[i], rows[i].finishes, rows[i].finishes_fenced);
	family(out, fences, "counter", "anarchon_fence calls the store answered, by result.");
	for (size_t i = 0; i < n; i++)
		owned_fenced(out, fences, &rows[i], rows[i].fences, rows[i].fences_refused);
	family(out, checks, "counter", "anarchon_check calls the store answered.");
	for (size_t i = 0; i < n; i++)
		sample(out, checks, &rows[i], NULL, NULL, rows[i].checks, NULL);
	histogram(out, rows, n);
	/* A family without a sample is left out: some stores have no clock to read. */
	for (size_t i = 0; i < n; i++)
	{
		if (!rows[i].has_clock)
			continue;
		if (clocks++ == 0)
			family(out, clock, "gauge",
				   "The store's clock minus the host's, when last measured (stores that tell their time).");
		sample(out, clock, &rows[i], NULL, NULL, 0,
			   float_text((double) rows[i].clock_offset_ms / 1000.0, offset, sizeof(offset)));
	}
}
