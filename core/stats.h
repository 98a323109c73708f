/*
 * stats.h — live counters of the store calls, for anarchon_stats().
 *
 * One table of rows, one row per store (its name: "local", a foreign server,
 * a URL without credentials).  A host decides where the table lives:
 * PostgreSQL puts it in shared memory when the library is preloaded, so that
 * every backend counts into the same rows, and in its own memory otherwise;
 * SQLite keeps one per process.  So every counter is updated with an atomic
 * add, never under a lock, and the table holds no pointer: it may be mapped
 * at different addresses.  Only adding a row takes a lock, the host's.
 *
 * Counts are exact.  Latencies go to a histogram of 4 buckets per power of two
 * of microseconds, so a percentile read back is within 12.5 % of the true one,
 * and to an exact sum.  Monitoring reads the histogram at every power of two
 * (AN_STATS_LE), which are bucket boundaries: those counts are exact too.
 */
#ifndef ANARCHON_STATS_H
#define ANARCHON_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "anarchon.h"

#define AN_STATS_ROWS 64            /* the last one collects any further stores */
#define AN_STATS_NAME 128
#define AN_STATS_BUCKETS 128
#define AN_STATS_OUTCOMES 7         /* AN_OUTCOME_LIST's length */

/*
 * The bounds the histogram is shown at (anarchon_stats_latency(), the
 * Prometheus expositions): 2^k microseconds for k from AN_STATS_LE_FIRST to
 * AN_STATS_LE_LAST, 16 us to 33.6 s; calls counts every call (+Inf).
 */
#define AN_STATS_LE_FIRST 4
#define AN_STATS_LE_LAST 25
#define AN_STATS_LE (AN_STATS_LE_LAST - AN_STATS_LE_FIRST + 1)

/* The classes of errors counted, as the columns errors_<name>. */
#define AN_STATS_ERROR_LIST(X) \
	X(TIMEOUT, "timeout") X(CONNECTION, "connection") X(CONFIGURATION, "configuration") \
	X(BUSY, "busy") X(OTHER, "other")
#define AN_STATS_ERR_MEMBER_(name, text) AN_STATS_ERR_##name,
typedef enum an_stats_error
{
	AN_STATS_ERROR_LIST(AN_STATS_ERR_MEMBER_)
	AN_STATS_ERRORS
} an_stats_error;

/* What a store call was, for the counters it adds to. */
typedef enum an_stats_call
{
	AN_STATS_CLAIM,
	AN_STATS_HEARTBEAT,
	AN_STATS_FINISH,
	AN_STATS_CHECK,
	AN_STATS_FENCE
} an_stats_call;

typedef struct an_stats_row
{
	uint32_t	used;            /* 1 once name is written (release/acquire) */
	char		name[AN_STATS_NAME];
	char		kind[16];        /* the store's kind: local, redis, amqp, nats */
	uint64_t	claims[AN_STATS_OUTCOMES];	/* by an_outcome */
	uint64_t	errors[AN_STATS_ERRORS];
	uint64_t	heartbeats;
	uint64_t	heartbeats_fenced;
	uint64_t	finishes;
	uint64_t	finishes_fenced;
	uint64_t	checks;
	uint64_t	fences;
	uint64_t	fences_refused;
	uint64_t	latency[AN_STATS_BUCKETS];
	uint64_t	latency_sum_us;  /* the durations counted in latency, added up */
	int64_t		clock_offset_ms; /* the store's clock minus the host's */
	int64_t		clock_seen_ms;   /* when it was measured (host clock); 0: never */
} an_stats_row;

typedef struct an_stats_table
{
	uint32_t	nrows;
	int64_t		reset_ms;        /* when the counters were last zeroed (host clock) */
	an_stats_row rows[AN_STATS_ROWS];
} an_stats_table;

/* A row read back, with the histogram turned into percentiles. */
typedef struct an_stats_view
{
	const char *name;
	const char *kind;
	const char *scope;           /* the host's word for what the table counts */
	int64_t		reset_ms;
	uint64_t	claims[AN_STATS_OUTCOMES];
	uint64_t	errors[AN_STATS_ERRORS];
	uint64_t	heartbeats, heartbeats_fenced, finishes, finishes_fenced, checks, fences, fences_refused;
	uint64_t	calls;           /* store calls timed */
	double		p50_ms, p99_ms;  /* 0 when no call was timed */
	double		sum_ms;          /* their durations added up */
	uint64_t	le[AN_STATS_LE]; /* calls that took at most an_stats_le_ms(i) */
	int			has_clock;
	int64_t		clock_offset_ms;
	int64_t		clock_seen_ms;
} an_stats_view;

/* A fresh table: no rows, reset at now_ms. */
void		an_stats_init(an_stats_table *t, int64_t now_ms);

/*
 * The row of the store called name, or NULL when it has none yet: safe
 * without a lock, because rows are only added and published once named.
 */
an_stats_row *an_stats_row_find(an_stats_table *t, const char *name);

/*
 * The row of the store called name (at most AN_STATS_NAME - 1 bytes are
 * kept), added when new.  When the table is full, the last row, named
 * "(other stores)", counts for every further store.  The caller holds the
 * host's lock for t when other processes or threads may add rows too (an
 * LWLock in PostgreSQL, a mutex in SQLite): adding is the one step that
 * needs one, and the lock is the host's so that a wait for it is the host's
 * kind of wait, never a spin here.
 */
an_stats_row *an_stats_row_add(an_stats_table *t, const char *name, const char *kind);

/* For a table that was zeroed, not initialised: note now_ms as its start, once. */
void		an_stats_started(an_stats_table *t, int64_t now_ms);

/* Zero every counter of every row (the rows stay), and note now_ms. */
void		an_stats_reset(an_stats_table *t, int64_t now_ms);

/* A monotonic start time for an_stats_count. */
int64_t		an_stats_start(void);

/*
 * Count one store call that began at start (an_stats_start) and returned rc:
 * its latency, an error by class, or what it answered (outcome for a claim;
 * owned for a heartbeat, finish or fence).  row may be NULL: nothing counted.
 */
void		an_stats_count(an_stats_row *row, an_stats_call call, int64_t start, int rc,
						   int outcome, int owned);

/* Count an error the host saw in place of a store's return (PostgreSQL's busy lock). */
void		an_stats_error_seen(an_stats_row *row, an_error code);

/*
 * The store's clock read store_ms while the host's clock went from sent_ms to
 * received_ms: keep the offset against the middle of that span.
 */
void		an_stats_clock(an_stats_row *row, int64_t store_ms, int64_t sent_ms, int64_t received_ms);

/* Read row i (0 <= i < an_stats_rows(t)) into v. */
size_t		an_stats_rows(const an_stats_table *t);
void		an_stats_read(const an_stats_table *t, size_t i, an_stats_view *v);

/* Bound i (0 <= i < AN_STATS_LE) of an_stats_view.le, in ms: 2^(AN_STATS_LE_FIRST + i) us. */
double		an_stats_le_ms(int i);

/*
 * The columns of anarchon_stats(), the same in both hosts: each host walks
 * this list and converts a value to its own type (a TIME is ms since the
 * epoch: timestamptz in PostgreSQL, an integer in SQLite).
 */
typedef enum an_stats_type
{
	AN_STATS_TEXT,
	AN_STATS_COUNT,
	AN_STATS_MS,                 /* double, ms */
	AN_STATS_INT,                /* int64, may be NULL */
	AN_STATS_TIME                /* ms since the epoch, may be NULL */
} an_stats_type;

typedef struct an_stats_column
{
	const char *name;
	an_stats_type type;
} an_stats_column;

typedef struct an_stats_value
{
	const char *text;
	int64_t		i;
	double		d;
	int			null;
} an_stats_value;

extern const an_stats_column an_stats_columns[];
extern const int an_stats_ncolumns;

/* Column col of the view v. */
void		an_stats_value_of(const an_stats_view *v, int col, an_stats_value *out);

#endif							/* ANARCHON_STATS_H */
