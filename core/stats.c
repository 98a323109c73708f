/*
 * stats.c — the counters behind anarchon_stats(): rows found or added by
 * store name, atomic adds, a latency histogram read back as percentiles.
 *
 * The GCC atomic builtins are used rather than a host's own (pg_atomic_*)
 * because the same code serves a table in PostgreSQL's shared memory and one
 * in a SQLite process whose connections may run on several threads.  Relaxed
 * adds suffice: each counter is exact on its own, and a reader needs no
 * snapshot across counters.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "stats.h"

#define ADD(field, n) __atomic_fetch_add(&(field), (n), __ATOMIC_RELAXED)
#define LOAD(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)
#define STORE(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)

_Static_assert(AN_STATS_OUTCOMES == AN_PAUSED + 1, "AN_STATS_OUTCOMES counts an_outcome");
_Static_assert(AN_STATS_LE_FIRST >= 2 && 4 * (AN_STATS_LE_LAST - 1) < AN_STATS_BUCKETS - 1,
			   "every bound of AN_STATS_LE begins a bucket below the last, which has no end");


static const char OTHERS[] = "(other stores)";

void
an_stats_init(an_stats_table *t, int64_t now_ms)
{
	memset(t, 0, sizeof(*t));
	t->reset_ms = now_ms;
}

void
an_stats_started(an_stats_table *t, int64_t now_ms)
{
	int64_t		never = 0;

	__atomic_compare_exchange_n(&t->reset_ms, &never, now_ms, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static an_stats_row *
find(an_stats_table *t, uint32_t n, const char *name)
{
	for (uint32_t i = 0; i < n; i++)
		if (__atomic_load_n(&t->rows[i].used, __ATOMIC_ACQUIRE) &&
			strncmp(t->rows[i].name, name, AN_STATS_NAME - 1) == 0)
			return &t->rows[i];
	return NULL;
}

static void
name_row(an_stats_row *r, const char *name, const char *kind)
{
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->kind, sizeof(r->kind), "%s", kind);
	__atomic_store_n(&r->used, 1, __ATOMIC_RELEASE);
}

an_stats_row *
an_stats_row_find(an_stats_table *t, const char *name)
{
	/* Rows are only ever added, and published after they are named. */
	return find(t, __atomic_load_n(&t->nrows, __ATOMIC_ACQUIRE), name);
}

an_stats_row *
an_stats_row_add(an_stats_table *t, const char *name, const char *kind)
{
	an_stats_row *r;
	uint32_t	n = t->nrows;

	/* Another process may have added it while this one waited for the lock. */
	if ((r = find(t, n, name)) != NULL)
		return r;
	if (n < AN_STATS_ROWS - 1)
	{
		r = &t->rows[n];
		name_row(r, name, kind);
		__atomic_store_n(&t->nrows, n + 1, __ATOMIC_RELEASE);
		return r;
	}
	r = &t->rows[AN_STATS_ROWS - 1];
	if (!r->used)
	{
		name_row(r, OTHERS, "");
		__atomic_store_n(&t->nrows, AN_STATS_ROWS, __ATOMIC_RELEASE);
	}
	return r;
}

static void
zero(uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		STORE(v[i], 0);
}

void
an_stats_reset(an_stats_table *t, int64_t now_ms)
{
	uint32_t	n = __atomic_load_n(&t->nrows, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n; i++)
	{
		an_stats_row *r = &t->rows[i];

		zero(r->claims, AN_STATS_OUTCOMES);
		zero(r->errors, AN_STATS_ERRORS);
		zero(&r->heartbeats, 1);
		zero(&r->heartbeats_fenced, 1);
		zero(&r->finishes, 1);
		zero(&r->finishes_fenced, 1);
		zero(&r->checks, 1);
		zero(&r->fences, 1);
		zero(&r->fences_refused, 1);
		zero(r->latency, AN_STATS_BUCKETS);
		zero(&r->latency_sum_us, 1);
		STORE(r->clock_seen_ms, 0);
	}
	STORE(t->reset_ms, now_ms);
}

int64_t
an_stats_start(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * Microseconds to a bucket: 0..3 exactly; then, for us in [2^k, 2^(k+1)),
 * bucket 4(k - 1) + s, s the two bits after the leading one.  So bucket b
 * (b >= 4) holds [(4 + s) << (k - 2), (5 + s) << (k - 2)), k = b / 4 + 1.
 */
static int
bucket(uint64_t us)
{
	int			k;

	if (us < 4)
		return (int) us;
	k = 63 - __builtin_clzll(us);
	if (4 * (k - 1) + 3 >= AN_STATS_BUCKETS)
		return AN_STATS_BUCKETS - 1;
	return 4 * (k - 1) + (int) ((us >> (k - 2)) & 3);
}

double
an_stats_le_ms(int i)
{
	return (double) ((uint64_t) 1 << (AN_STATS_LE_FIRST + i)) / 1000.0;
}

/* The middle of bucket b, in ms. */
static double
bucket_ms(int b)
{
	int			k = b / 4 + 1;

	if (b < 4)
		return b / 1000.0;
	return ((double) ((uint64_t) (4 + b % 4) << (k - 2)) + (double) ((uint64_t) 1 << (k - 2)) / 2.0) / 1000.0;
}

static an_stats_error
error_class(int rc)
{
	switch (rc)
	{
		case AN_E_TIMEOUT:
			return AN_STATS_ERR_TIMEOUT;
		case AN_E_CONNECT:
			return AN_STATS_ERR_CONNECTION;
		case AN_E_CONFIG:
		case AN_E_AUTH:
		case AN_E_UNSUPPORTED:
			return AN_STATS_ERR_CONFIGURATION;
		case AN_E_BUSY:
			return AN_STATS_ERR_BUSY;
		default:
			return AN_STATS_ERR_OTHER;
	}
}

void
an_stats_error_seen(an_stats_row *row, an_error code)
{
	if (row)
		ADD(row->errors[error_class(code)], 1);
}

void
an_stats_count(an_stats_row *row, an_stats_call call, int64_t start, int rc, int outcome, int owned)
{
	int64_t		us;

	if (row == NULL)
		return;
	us = an_stats_start() - start;
	if (us < 0)
		us = 0;
	ADD(row->latency[bucket((uint64_t) us)], 1);
	ADD(row->latency_sum_us, (uint64_t) us);
	if (rc != AN_OK)
	{
		an_stats_error_seen(row, rc);
		return;
	}
	switch (call)
	{
		case AN_STATS_CLAIM:
			if (outcome >= 0 && outcome < AN_STATS_OUTCOMES)
				ADD(row->claims[outcome], 1);
			break;
		case AN_STATS_HEARTBEAT:
			ADD(row->heartbeats, 1);
			if (!owned)
				ADD(row->heartbeats_fenced, 1);
			break;
		case AN_STATS_FINISH:
			ADD(row->finishes, 1);
			if (!owned)
				ADD(row->finishes_fenced, 1);
			break;
		case AN_STATS_CHECK:
			ADD(row->checks, 1);
			break;
		case AN_STATS_FENCE:
			ADD(row->fences, 1);
			if (!owned)
				ADD(row->fences_refused, 1);
			break;
	}
}

void
an_stats_clock(an_stats_row *row, int64_t store_ms, int64_t sent_ms, int64_t received_ms)
{
	if (row == NULL)
		return;
	STORE(row->clock_offset_ms, store_ms - (sent_ms + (received_ms - sent_ms) / 2));
	STORE(row->clock_seen_ms, received_ms);
}

size_t
an_stats_rows(const an_stats_table *t)
{
	return __atomic_load_n(&t->nrows, __ATOMIC_ACQUIRE);
}

static void
copy(uint64_t *to, const uint64_t *from, size_t n)
{
	for (size_t i = 0; i < n; i++)
		to[i] = LOAD(from[i]);
}

static double
percentile(const uint64_t *hist, uint64_t total, double p)
{
	/* The first bucket where the count reaches p of all calls. */
	uint64_t	need = (uint64_t) (p * (double) total);
	uint64_t	seen = 0;

	if (need < 1)
		need = 1;
	for (int b = 0; b < AN_STATS_BUCKETS; b++)
		if ((seen += hist[b]) >= need)
			return bucket_ms(b);
	return bucket_ms(AN_STATS_BUCKETS - 1);
}

void
an_stats_read(const an_stats_table *t, size_t i, an_stats_view *v)
{
	const an_stats_row *r = &t->rows[i];
	uint64_t	hist[AN_STATS_BUCKETS];

	memset(v, 0, sizeof(*v));
	v->name = r->name;
	v->kind = r->kind;
	v->reset_ms = LOAD(t->reset_ms);
	copy(v->claims, r->claims, AN_STATS_OUTCOMES);
	copy(v->errors, r->errors, AN_STATS_ERRORS);
	v->heartbeats = LOAD(r->heartbeats);
	v->heartbeats_fenced = LOAD(r->heartbeats_fenced);
	v->finishes = LOAD(r->finishes);
	v->finishes_fenced = LOAD(r->finishes_fenced);
	v->checks = LOAD(r->checks);
	v->fences = LOAD(r->fences);
	v->fences_refused = LOAD(r->fences_refused);
	copy(hist, r->latency, AN_STATS_BUCKETS);
	for (int b = 0, i = 0; b < AN_STATS_BUCKETS; b++)
	{
		/* 2^k us is where bucket 4(k - 1) begins: its bound counts the buckets before. */
		if (i < AN_STATS_LE && b == 4 * (AN_STATS_LE_FIRST + i - 1))
			v->le[i++] = v->calls;
		v->calls += hist[b];
	}
	v->sum_ms = (double) LOAD(r->latency_sum_us) / 1000.0;
	if (v->calls > 0)
	{
		v->p50_ms = percentile(hist, v->calls, 0.50);
		v->p99_ms = percentile(hist, v->calls, 0.99);
	}
	v->clock_seen_ms = LOAD(r->clock_seen_ms);
	v->has_clock = v->clock_seen_ms != 0;
	v->clock_offset_ms = LOAD(r->clock_offset_ms);
}

/* ---------------------------------------------------------------- columns */

/* The claims columns follow an_outcome's values. */
_Static_assert(AN_WON == 0 && AN_RUNNING == 1 && AN_DONE == 2 && AN_LATE == 3 &&
			   AN_OVERLAP == 4 && AN_LOST == 5 && AN_PAUSED == 6, "claims_* columns in an_outcome's order");
#define ERROR_COLUMN_(name, text) {"errors_" text, AN_STATS_COUNT},

enum
{
	COL_STORE, COL_KIND, COL_SCOPE,
	COL_CLAIMS,
	COL_ERRORS = COL_CLAIMS + AN_STATS_OUTCOMES,
	COL_HEARTBEATS = COL_ERRORS + AN_STATS_ERRORS,
	COL_HEARTBEATS_FENCED, COL_FINISHES, COL_FINISHES_FENCED, COL_CHECKS, COL_FENCES,
	COL_FENCES_REFUSED, COL_CALLS, COL_P50, COL_P99, COL_SUM, COL_CLOCK_OFFSET, COL_CLOCK_SEEN,
	COL_RESET, NCOLUMNS
};

const an_stats_column an_stats_columns[] = {
	{"store", AN_STATS_TEXT},
	{"kind", AN_STATS_TEXT},
	{"scope", AN_STATS_TEXT},
	{"claims_won", AN_STATS_COUNT},
	{"claims_running", AN_STATS_COUNT},
	{"claims_done", AN_STATS_COUNT},
	{"claims_late", AN_STATS_COUNT},
	{"claims_overlap", AN_STATS_COUNT},
	{"claims_lost", AN_STATS_COUNT},
	{"claims_paused", AN_STATS_COUNT},
	AN_STATS_ERROR_LIST(ERROR_COLUMN_)
	{"heartbeats", AN_STATS_COUNT},
	{"heartbeats_fenced", AN_STATS_COUNT},
	{"finishes", AN_STATS_COUNT},
	{"finishes_fenced", AN_STATS_COUNT},
	{"checks", AN_STATS_COUNT},
	{"fences", AN_STATS_COUNT},
	{"fences_refused", AN_STATS_COUNT},
	{"calls", AN_STATS_COUNT},
	{"latency_p50_ms", AN_STATS_MS},
	{"latency_p99_ms", AN_STATS_MS},
	{"latency_sum_ms", AN_STATS_MS},
	{"clock_offset_ms", AN_STATS_INT},
	{"clock_seen", AN_STATS_TIME},
	{"stats_reset", AN_STATS_TIME},
};
_Static_assert(sizeof(an_stats_columns) / sizeof(an_stats_columns[0]) == NCOLUMNS,
			   "one an_stats_columns entry per column");
const int	an_stats_ncolumns = NCOLUMNS;

static void
count(an_stats_value *out, uint64_t n)
{
	out->i = (int64_t) n;
}

void
an_stats_value_of(const an_stats_view *v, int col, an_stats_value *out)
{
	const uint64_t *counts[] = {&v->heartbeats, &v->heartbeats_fenced, &v->finishes,
	&v->finishes_fenced, &v->checks, &v->fences, &v->fences_refused, &v->calls};

	memset(out, 0, sizeof(*out));
	if (col == COL_STORE)
		out->text = v->name;
	else if (col == COL_KIND)
		out->text = v->kind;
	else if (col == COL_SCOPE)
		out->text = v->scope;
	else if (col < COL_ERRORS)
		count(out, v->claims[col - COL_CLAIMS]);
	else if (col < COL_HEARTBEATS)
		count(out, v->errors[col - COL_ERRORS]);
	else if (col <= COL_CALLS)
		count(out, *counts[col - COL_HEARTBEATS]);
	else if (col == COL_P50 || col == COL_P99)
	{
		out->d = col == COL_P50 ? v->p50_ms : v->p99_ms;
		out->null = v->calls == 0;
	}
	else if (col == COL_SUM)
		out->d = v->sum_ms;
	else if (col == COL_CLOCK_OFFSET || col == COL_CLOCK_SEEN)
	{
		out->i = col == COL_CLOCK_OFFSET ? v->clock_offset_ms : v->clock_seen_ms;
		out->null = !v->has_clock;
	}
	else
		out->i = v->reset_ms;
}
