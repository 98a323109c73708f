/*
 * anarchon_pg.h — the PostgreSQL host: what its C files share.
 *
 * The SQL functions (functions.c) read and validate their arguments
 * (args.c), pick the store that anarchon.store names (store_select.c) and
 * talk to it only through core/store.h.  The local store (local_store.c)
 * decides in anarchon.runs with the shared lease engine (core/lease.c); a
 * remote store decides in its server.  Errors from any store become
 * ereports with a SQLSTATE (errors.c).
 */
#ifndef ANARCHON_PG_H
#define ANARCHON_PG_H

#include "postgres.h"

#include "access/sdir.h"
#include "fmgr.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "pause.h"
#include "store.h"

/* anarchon's own SQLSTATE: a token that does not own the run (fence.c, anarchon.run). */
#define AN_PG_ERRCODE_FENCED MAKE_SQLSTATE('A', 'N', '0', '0', '1')

/* Milliseconds between the Unix epoch and PostgreSQL's (2000-01-01). */
#define AN_PG_EPOCH_MS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000)

/* guc.c: the anarchon.* settings. */
void		an_pg_define_gucs(void);

/*
 * durable.c: anarchon.durability; a claim refused under fsync = off unless
 * accepted; a transaction whose commit is flushed whatever synchronous_commit
 * says (and reaches a synchronous standby).
 */
void		an_pg_define_durability(void);
void		an_pg_require_fsync(const char *what);
void		an_pg_commit_durably(void);

/*
 * stats.c: the counters.  init defines anarchon.stats and, when preloaded,
 * asks for shared memory; attach gives st the row of the store called name
 * (cached in *row) or none when the session does not count; busy counts a
 * lock timeout the local store raised.
 */
void		an_pg_stats_init(void);
void		an_pg_stats_attach(an_store *st, an_stats_row **row, const char *name);
void		an_pg_stats_failed(const char *name, const char *kind, an_error code);
void		an_pg_stats_busy(an_store *st);
/*
 * The settings as the GUCs say now.  These readers fail (22023) while a
 * setting holds a value set before the library was loaded that is invalid.
 */
void		an_pg_current_settings(an_settings *out);
/* The anarchon.store GUC: "local" or the name of a foreign server. */
const char *an_pg_store_name(void);
/* anarchon.in_transaction: may a local claim be part of the caller's transaction? */
void		an_pg_require_fence_in_transaction(FunctionCallInfo fcinfo);
bool		an_pg_claim_in_transaction(void);

/*
 * claim_txn.c: refuse (25001) a local claim whose 'won' the caller's
 * transaction could still roll back, unless anarchon.in_transaction is on.
 */
void		an_pg_require_final_claim(FunctionCallInfo fcinfo);

/* time.c: the database clock and conversions, overflow-safe both ways. */
int64		an_pg_now_ms(void);
/* The host's monotonic clock in ms (the keep-alive's deadlines). */
int64		an_pg_mono_ms(void);
/* -1, 0 or 1: ms is before, inside or after the range of timestamptz. */
int			an_pg_ms_range(int64 ms);
/* ms as a timestamptz; an error (22008) when it is out of timestamptz's range. */
TimestampTz an_pg_ms_to_ts(int64 ms);
/* A timestamptz in ms, rounded toward the past; the infinities to INT64_MIN/MAX. */
int64		an_pg_ts_to_ms(TimestampTz ts);

/* local_store.c: runs in anarchon.runs, decided under the job's row lock. */
extern const an_store_methods an_pg_local_methods;

/* local_pause.c: the local store's pause methods (core/store.h, version 5), in anarchon.pauses. */
int			an_pg_local_pause(an_store *st, const an_request *rq, int64_t until);
int			an_pg_local_resume(an_store *st, const an_request *rq, int *was_paused);
int			an_pg_local_paused(an_store *st, const an_request *rq, int64_t *until);
int			an_pg_local_pauses(an_store *st, const an_request *rq, int64_t from, int64_t to,
							   an_pause_span *spans, size_t max, size_t *n);

/* local_recall.c: which slots of a job anarchon.runs holds a run for (core/store.h, recall). */
int			an_pg_local_recall(an_store *st, const an_request *rq, const int64_t *slots, size_t n,
							   unsigned char *has_run);

/* store_select.c: the open store for anarchon.store (never NULL; ereports). */
an_store   *an_pg_store(void);
/* The host lent to every store: database clock, pending cancel. */
extern const an_host an_pg_host;

/* args.c: the arguments every function shares, read and validated. */
typedef enum an_pg_slot_kind
{
	AN_PG_SLOT_TS,				/* slot given as timestamptz */
	AN_PG_SLOT_MS				/* slot given as bigint milliseconds */
} an_pg_slot_kind;

typedef struct an_pg_call
{
	char		job[AN_JOB_MAX + 1];
	char		token[AN_TOKEN_MAX + 1];
	an_settings settings;		/* the GUCs, then this call's overrides */
	an_request	rq;				/* points into the fields above */
} an_pg_call;

/* Read job (arg 0), slot (arg 1) and, when with_token, token (arg 2). */
void		an_pg_read_call(FunctionCallInfo fcinfo, an_pg_slot_kind kind,
							bool with_token, an_pg_call *call);
/*
 * The same for a batch (claim_many.c): argument 0 is not read, call->job is
 * left empty for the caller to fill in job by job.
 */
void		an_pg_read_batch(FunctionCallInfo fcinfo, an_pg_slot_kind kind, an_pg_call *call);
/*
 * functions.c: the store a claim of call goes to, once the current user may
 * claim its job, within the limits, at a moment a rollback cannot undo, and
 * with settings the store accepts (each refusal an ereport).
 */
an_store   *an_pg_claim_store(FunctionCallInfo fcinfo, const an_pg_call *call);
/*
 * The part of those checks that does not depend on the job (the moment, the
 * limits, the store's settings): a batch runs it once, then only the job's
 * right per job.
 */
void		an_pg_claim_call_checks(FunctionCallInfo fcinfo, an_store *st, const an_pg_call *call);
/*
 * functions.c: a claim's optional arguments (lease_ms, max_late_ms, attempts,
 * overlap, busy_timeout_ms), from argument `first` on, as overrides.
 */
void		an_pg_claim_overrides(FunctionCallInfo fcinfo, int first, an_pg_call *call);
/* Read a job or a token (not NULL) from argument argno into out, validated. */
void		an_pg_read_job(FunctionCallInfo fcinfo, int argno, char *out);
void		an_pg_read_token(FunctionCallInfo fcinfo, int argno, char *out);
/*
 * Apply argument argno (of SQL type INT4OID, INT8OID or TEXTOID), when given
 * and not NULL, as an override of setting `name` for this call.
 */
void		an_pg_override(FunctionCallInfo fcinfo, int argno, Oid type,
						   const char *name, an_pg_call *call);

/*
 * job_rights.c: may the current user act on job?  Raises 42501 when the job
 * belongs to a role whose privileges it lacks; a claim of a job nobody owns
 * makes it the current user's.  The limits only a superuser raises: the
 * lease a call asks for, and (claims) how far ahead the slot is.
 */
void		an_pg_define_job_limits(void);
typedef enum an_pg_job_use
{
	AN_PG_JOB_CLAIM,			/* may take an unowned job */
	AN_PG_JOB_ACT,				/* heartbeat, finish, fence, keep-alive, record */
	AN_PG_JOB_READ,				/* check, missed: pg_monitor may too */
	AN_PG_JOB_PAUSE				/* pause, resume: an owned job only (superusers: any) */
} an_pg_job_use;
void		an_pg_require_job_right(const char *job, an_pg_job_use use, const an_settings *settings);
/*
 * lock_wait.c: run statement(arg), which may wait for a row lock, at most
 * timeout_ms; past it, the job's busy error (55P03), counted on st.
 */
uint64		an_pg_lock_bounded(uint64 (*statement) (void *arg), void *arg, an_store *st,
							   const char *job, int64 timeout_ms);
pg_noreturn void an_pg_raise_job_busy(const char *job, int64 timeout_ms);
void		an_pg_require_lease_limit(const an_settings *settings);
void		an_pg_require_claim_limits(const an_request *rq);

/* fdw.c: the URL a remote store opens, with the mapping's credentials (palloc'd). */
struct ForeignServer;
struct UserMapping;
char	   *an_pg_server_url(struct ForeignServer *server, struct UserMapping *mapping);

/*
 * as_owner.c: run SPI as the owner of schema anarchon with search_path
 * pinned to pg_catalog (the functions are not SECURITY DEFINER).
 */
typedef struct an_pg_owner_state
{
	Oid			userid;
	int			sec_context;
	int			guc_nest_level;	/* PostgreSQL 17+: the level that pins search_path */
} an_pg_owner_state;

void		an_pg_owner_enter(an_pg_owner_state *s);
void		an_pg_owner_leave(const an_pg_owner_state *s);
bool		an_pg_spi_as_owner(const char *sql, int nargs, Oid *types, Datum *values,
							   const char *nulls, Datum *first);
struct _SPI_plan;				/* executor/spi.h's SPIPlanPtr */
bool		an_pg_spi_as_owner_kept(struct _SPI_plan **keep, const char *sql, int nargs, Oid *types,
									Datum *values, const char *nulls, Datum *first);

/*
 * keepalive.c: this backend won the claim rq, sent at sent_ms (an_pg_mono_ms);
 * a keep-alive then started for that run counts its lease from there.
 * has_lease: the store keeps leases (a won/lost store's run never runs out).
 */
void		an_pg_keepalive_claimed(const an_request *rq, int64 sent_ms, bool has_lease);

/*
 * key_lookup.c: the row of anarchon.<table> whose primary key (nkeys
 * columns) equals keys, each compared with eq[i], found without SPI; read is
 * called with it (its attributes fetched) when there is one.  _in: under
 * snap, from an_pg_probe_snapshot (the snapshot an SPI statement would take,
 * registered: unregister it), so that several probes see one state.
 * an_pg_key_prefix_walk: the rows whose first nkeys key columns equal keys,
 * in the index's order (dir), until visit returns true (returned).
 * an_pg_column: a column's number, by name.
 */
#define AN_PG_MAX_KEYS 2
struct RelationData;
struct TupleTableSlot;
struct SnapshotData;
typedef void (*an_pg_row_reader) (struct RelationData *rel, struct TupleTableSlot *slot, void *arg);
typedef bool (*an_pg_row_visitor) (struct RelationData *rel, struct TupleTableSlot *slot, void *arg);
struct SnapshotData *an_pg_probe_snapshot(void);
bool		an_pg_key_lookup(const char *table, int nkeys, const Datum *keys, const RegProcedure *eq,
							 an_pg_row_reader read, void *arg);
bool		an_pg_key_lookup_in(const char *table, struct SnapshotData *snap, int nkeys,
								const Datum *keys, const RegProcedure *eq,
								an_pg_row_reader read, void *arg);
bool		an_pg_key_prefix_walk(const char *table, struct SnapshotData *snap, int nkeys,
								  const Datum *keys, const RegProcedure *eq, ScanDirection dir,
								  an_pg_row_visitor visit, void *arg);
AttrNumber	an_pg_column(struct RelationData *rel, const char *name);

/*
 * run_lookup.c: the committed run (job, slot) by primary key, no SPI; state
 * NONE if none.  _in: under snap (an_pg_probe_snapshot).
 */
struct an_run;
void		an_pg_lookup_run(const char *job, int64 slot_ms, struct an_run *run);
void		an_pg_lookup_run_in(struct SnapshotData *snap, const char *job, int64 slot_ms,
								struct an_run *run);

/*
 * run_view.c: the run (job, slot) and whether the job is paused at now_ms,
 * by index probes under one snapshot (no SPI, no lock); state NONE if none.
 */
void		an_pg_run_view(const char *job, int64 slot_ms, int64 now_ms, struct an_run *run,
						   int *paused);

/*
 * version.c: refuse (AN002) when this database's SQL objects
 * (pg_extension.extversion) are not of the library's version; a no-op in
 * extension scripts.  Called before the library touches its SQL objects.
 */
void		an_pg_require_sql_version(void);

/* errors.c: raise the error recorded on st as an ereport (its hint as HINT). */
pg_noreturn void an_pg_raise(an_store *st);
/*
 * Raise an error of core's validators with sqlstate.  A message "<what was
 * wrong>: <the rule>" with no detail of its own is split: the first part as
 * the message, the rule as DETAIL.  The hint, when there is one, is HINT.
 */
pg_noreturn void an_pg_raise_rule(int sqlstate, const an_err *e);
/* The SQLSTATE for an an_error code. */
int			an_pg_sqlstate(an_error code);
/* text as a DETAIL or HINT sentence: capital first letter, final period. */
const char *an_pg_sentence(const char *text, char *out, size_t outlen);

#endif							/* ANARCHON_PG_H */
