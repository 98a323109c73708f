/*
 * store.h — the one interface every store implements.
 *
 * A store is where a claim is decided: this database ("local": SQLite's
 * anarchon_runs or PostgreSQL's anarchon.runs) or a network server (Redis,
 * RabbitMQ, NATS JetStream).  Both database hosts talk to every store only
 * through the table of methods below, modelled on SQLite's sqlite3_vfs: a
 * version first so that methods can be added later, a name, and methods that
 * report failure through the store object (a code plus a message, as hiredis
 * does, a detail and a hint) instead of through global state.
 *
 * Life of a store, as a host drives it:
 *
 *   an_store st;  an_store_init(&st, methods, &host);
 *   if (st.m->open(&st, url, arg) != AN_OK) ... report st.err.code, st.err.msg, st.err.detail, st.err.hint ...
 *   st.m->claim(&st, &req, &result);  ... many calls, one connection ...
 *   st.m->close(&st);
 *
 * Duties of every method:
 *   - Return AN_OK, or an an_error code with st->err.code set to the same code and
 *     st->err.msg to a message fit for the end user saying what went wrong
 *     (an_store_fail): short, lower case, no final period, no product prefix.
 *     Where it helps, add st->err.detail, the facts that explain it (why it
 *     is an error, what was found: an_store_detailf), and st->err.hint, what
 *     to do about it (an_store_hintf), both full sentences with a capital and
 *     a period, both set after an_store_fail.  A message never carries a
 *     detail or a hint packed after a colon or semicolon.  This is the one
 *     shape of an error in anarchon; PostgreSQL shows the three as its
 *     message, DETAIL and HINT (errmsg, errdetail, errhint); SQLite as one
 *     text, "message. Detail. Hint." (an_err_text).  Never put a
 *     password or token of a URL in any of them.  The host clears the error
 *     (an_store_clear) before each call; a method's result is what it
 *     returns, never an error left over from an earlier call.
 *   - Leave the store usable after an error: a method that lost its connection
 *     reconnects on the next call (and a claim resent after a lost reply uses
 *     the same token, so the store recognises it as ours).
 *   - Never block longer than the store's own timeout; wait on sockets with
 *     host->wait_socket (an_wait_socket in net/wait.h does it), sleep with
 *     host->sleep_ms (an_wait_until), and ask host->interrupted between
 *     waits, returning AN_E_CANCELED when it says so.  One wait is longer by
 *     design: a RabbitMQ claim that won waits until settle_ms after its
 *     gate's declaration (the broker's write to disk), then asks again
 *     within a timeout of its own, so it may take up to 2 * timeout_ms +
 *     settle_ms (doc/stores-amqp-nats.md); it too ends at once on a cancel.
 *   - Never call back into the host except through an_host.
 * Optional methods may be NULL; the host then answers with an error that names
 * the store and the missing operation.
 */
#ifndef ANARCHON_STORE_H
#define ANARCHON_STORE_H

#include "anarchon.h"
#include "stats.h"

typedef struct an_store an_store;

/* One pause of a job: [start, end), end AN_PAUSE_OPEN while it lasts (core/pause.h). */
#define AN_PAUSE_OPEN INT64_MAX
typedef struct an_pause_span
{
	int64_t		start;
	int64_t		end;
} an_pause_span;

/*
 * What a host lends to a store.  Stores without a clock of their own judge
 * lateness with now_ms, the host database's clock.
 */
typedef struct an_host
{
	void	   *ctx;
	/* The host database's clock, ms since the Unix epoch. */
	int64_t		(*now_ms) (void *ctx);
	/* Nonzero when the host wants the current call abandoned (cancel). May be NULL. */
	int			(*interrupted) (void *ctx);

	/*
	 * Wait at most timeout_ms for fd to be readable (writable when
	 * for_write): 1 when it is, 0 when not yet (the time ran out, or the host
	 * was woken for something else: the store then asks interrupted and waits
	 * again), -1 on an error with errno set.  Every wait of a store on a
	 * socket goes through here, so a host can wait its own way: PostgreSQL
	 * waits on its latch too, so that a cancel ends the wait at once, the wait
	 * shows in pg_stat_activity, and postmaster death ends the backend.  May be
	 * NULL: the store then polls in short slices and asks interrupted between
	 * them (net/wait.c).
	 */
	int			(*wait_socket) (void *ctx, int fd, int for_write, int timeout_ms);

	/*
	 * Sleep at most timeout_ms, or less when the host is woken (a cancel):
	 * the store then asks interrupted, and sleeps again while time is left.
	 * The timed waits of a store (RabbitMQ's settle and recovery, NATS's
	 * retry after "no responders") go through here, so that in PostgreSQL
	 * they too show as a wait event, end at once on a cancel and on
	 * postmaster death.  May be NULL: nanosleep in short slices.
	 */
	void		(*sleep_ms) (void *ctx, int timeout_ms);

	/*
	 * How this host's user spells a setting, for hints that say which one to
	 * change: the command's flag ("--busy-timeout-ms" for "busy_timeout_ms").
	 * May be NULL: the setting's own name, as anarchon_config and the GUCs
	 * (anarchon.NAME) take it.  Stores name a setting in a hint only through
	 * an_store_setting, so that a hint is one the host's user can follow.
	 */
	const char *(*setting_name) (void *ctx, const char *name);
} an_host;

/*
 * What kind of slot a claim is of (version 10).  A scheduled and a catch-up
 * claim (anarchon_missed's slots, claimed late on purpose) are decided
 * alike, of rq->slot; the kind says which the host meant.  A manual claim is
 * a run-now (core/run_now.h): the store chooses the slot in the claim's
 * atomic step -- the job's current manual request, else a new one -- and
 * rq->slot is not read.  Only a store with AN_CAP_RUN_NOW is sent one
 * (an_store_claim refuses it for the others).
 */
typedef enum an_claim_kind
{
	AN_CLAIM_SCHEDULED = 0,
	AN_CLAIM_CATCHUP,
	AN_CLAIM_MANUAL
} an_claim_kind;

/* The arguments of one call, already validated by the host. */
typedef struct an_request
{
	const char *job;             /* NUL-terminated, passes an_validate_job */
	int64_t		slot;            /* ms since the epoch, passes an_validate_slot */
	const char *token;           /* NUL-terminated; NULL for check */
	const an_settings *settings;
	an_claim_kind kind;          /* a claim's (version 10); 0, scheduled, for every other call */
} an_request;

/*
 * What a claim learned. attempt and lease_until are 0 where a store has none.
 * slot is the slot decided, whatever the outcome: rq->slot, or the one a
 * manual claim's store chose.
 */
typedef struct an_claim_result
{
	an_outcome	outcome;
	int32_t		attempt;
	int64_t		lease_until;     /* ms since the epoch */
	int64_t		slot;            /* ms since the epoch */
} an_claim_result;

/* What a check learned. */
typedef struct an_check_result
{
	an_check_state state;
	int32_t		attempt;
	int64_t		lease_until;
} an_check_result;

/*
 * The version of the method table this header describes.  A host reads a
 * method added after version 1 only from a table whose version says it has
 * it, so a store built against an older store.h keeps working.
 *   1  open .. close
 *   2  check_url
 *   3  recall
 *   4  fence
 *   5  pause, resume, paused, pauses (core/pause.h)
 *   6  run_now
 *   7  caps
 *   8  batch
 *   9  admin: prune, pause, resume, paused, pauses and run_now leave the
 *      claim's table for a table of their own, each declared by a bit of
 *      caps; a table of an earlier version has no administration
 *  10  run_now leaves admin: a run-now is a claim of kind AN_CLAIM_MANUAL,
 *      which a store with AN_CAP_RUN_NOW decides in its claim
 */
#define AN_STORE_VERSION 10

/*
 * What a store is, beyond the methods it has, as bits of caps (version 7).
 * A host asks these, never which table a store has: the hosts hold no list
 * of stores and compare no method table.
 *   AN_CAP_CALLER_TXN  its claim is part of the caller's transaction and
 *                      commits or rolls back with it (PostgreSQL's local
 *                      store), so the caller must not go on after it in the
 *                      same statement (an_pg_require_final_claim)
 *   AN_CAP_OWN_STATS   it keeps its counters on its server, where every
 *                      instance's calls are counted (the command's
 *                      PostgreSQL store); a host reads them there rather
 *                      than counting its own calls
 *   AN_CAP_SESSION_OWNER  it knows a claim as its token's only on the
 *                      connection that made it (RabbitMQ, which cannot say
 *                      whose message fills a gate): the same token's claim
 *                      from another connection is a new claim, which loses,
 *                      and heartbeat and finish there fail; so a host never
 *                      hands a claim to another process (anarchon cron
 *                      leaves such a store's claims to the runs it starts)
 */
#define AN_CAP_CALLER_TXN	0x1u
#define AN_CAP_OWN_STATS	0x2u
#define AN_CAP_SESSION_OWNER	0x4u

/*
 * The duties a store may have or not, one bit each.  Those of its
 * administration table (version 9), each the method(s) of an_store_admin
 * named:
 *   AN_CAP_PAUSE      pause and resume (and then its claim decides pauses)
 *   AN_CAP_PAUSED     paused: is the job paused now
 *   AN_CAP_PAUSES     pauses: the job's pauses over a range
 *   AN_CAP_PRUNE      prune
 * and one of its claim (version 10; a table of version 9 that declares it
 * had a run_now method, and has it no more):
 *   AN_CAP_RUN_NOW    its claim takes the kind AN_CLAIM_MANUAL
 * An administration bit declared without its method is not the store's
 * (an_store_init drops it; test/store checks that every store's bits and
 * methods agree), and an open store may give up any duty (an_store_lacks:
 * Redis has no run-now but with strategy=lease).  Hosts reach the methods
 * only through an_store_admin_for, and a manual claim only through
 * an_store_claim: both refuse, in one place and in one wording
 * (an_store_can), what the store cannot do.
 */
#define AN_CAP_PAUSE	0x08u
#define AN_CAP_PAUSED	0x10u
#define AN_CAP_PAUSES	0x20u
#define AN_CAP_RUN_NOW	0x40u
#define AN_CAP_PRUNE	0x80u
#define AN_CAP_ADMIN	(AN_CAP_PAUSE | AN_CAP_PAUSED | AN_CAP_PAUSES | AN_CAP_PRUNE)
#define AN_CAP_DUTIES	(AN_CAP_ADMIN | AN_CAP_RUN_NOW)

/*
 * The optional second table: the operators' controls.  None of these is on
 * a claim's path: the claim decides pauses and manual slots in its own atomic
 * step.
 */
typedef struct an_store_admin
{
	/*
	 * prune: delete runs whose slot is before `before` (ms).  Sets *deleted
	 * to the number removed.
	 */
	int			(*prune) (an_store *st, int64_t before, int64_t *deleted);

	/*
	 * pause: pause rq->job until `until` (ms since the epoch), or until it is
	 * resumed when until is 0.  Durable in the store before it returns: every
	 * claim that starts afterwards, from any host, answers paused (the store
	 * decides the pause in its claim).  Pausing a paused job sets its end
	 * anew and keeps its start.  A store with a clock of its own judges until
	 * on it and fails with AN_E_INPUT when it is not ahead.
	 */
	int			(*pause) (an_store *st, const an_request *rq, int64_t until);

	/*
	 * resume: end rq->job's pause now.  *was_paused = 1 when it was paused,
	 * 0 when it was not (not an error: resuming twice is harmless).  The
	 * pause is kept as a past interval for pauses.
	 */
	int			(*resume) (an_store *st, const an_request *rq, int *was_paused);

	/*
	 * paused: is rq->job paused now (on the store's clock where it has
	 * one)?  *until = 0: no; AN_PAUSE_OPEN: until resumed; else when the
	 * pause ends.  For the paused verb and function only: a claim never asks
	 * it.
	 */
	int			(*paused) (an_store *st, const an_request *rq, int64_t *until);

	/*
	 * pauses: the intervals [start, end) of rq->job's pauses, past and
	 * current (end AN_PAUSE_OPEN), that overlap [from, to), ascending by
	 * start; at most max into spans, *n how many there are (a caller
	 * given fewer than there are fails: an_pause_filter).
	 */
	int			(*pauses) (an_store *st, const an_request *rq, int64_t from, int64_t to,
						   struct an_pause_span *spans, size_t max, size_t *n);

	/* (run_now, until version 10: a claim of kind AN_CLAIM_MANUAL since) */
} an_store_admin;

typedef struct an_store_methods
{
	int			version;         /* the AN_STORE_VERSION the table was written for */
	const char *name;            /* "local", "redis", "amqp", "nats", ... */

	/*
	 * open: connect or prepare.  url is the store URL ("local" for local
	 * stores); arg is what the host passes to this kind of store (the SQLite
	 * connection for SQLite's local store, NULL for network stores).  On error
	 * the host still calls close.
	 */
	int			(*open) (an_store *st, const char *url, void *arg);

	/*
	 * claim: decide (job, slot) for this token, atomically.  A store that
	 * holds pauses (version 5) decides the pause in the same atomic step:
	 * AN_PAUSED (attempt and lease_until 0), nothing claimed, while the job
	 * is paused; the host reads nothing before it (core/pause.h).  A store
	 * with AN_CAP_RUN_NOW also takes rq->kind AN_CLAIM_MANUAL (version 10):
	 * in the same atomic step it chooses the slot -- the job's current
	 * manual request made within max_late_ms, else a new one, an_manual_slot
	 * of the store's clock, so that every caller of the window gets the same
	 * one -- sets res->slot to it whatever the outcome, and claims it for
	 * rq->token as any slot (a pause does not hold a manual claim).
	 */
	int			(*claim) (an_store *st, const an_request *rq, an_claim_result *res);

	/*
	 * heartbeat: extend the lease of the run to now + lease_ms when token
	 * still owns it (same token, state running).  *owned = 0 means fenced.
	 * Stores without leases document what they do.
	 */
	int			(*heartbeat) (an_store *st, const an_request *rq, int *owned);

	/* finish: mark the run succeeded or failed, fenced like heartbeat. */
	int			(*finish) (an_store *st, const an_request *rq, an_run_state status,
						   int *owned);

	/* check: the backup's cheap read; takes no write lock. */
	int			(*check) (an_store *st, const an_request *rq, an_check_result *res);

	/*
	 * validate (optional): refuse settings this store cannot honour, e.g. a
	 * memory of runs shorter than max_late_ms.  Called before every claim.
	 */
	int			(*validate) (an_store *st, const an_settings *s);

	/* close: release everything; safe after a failed open. */
	void		(*close) (an_store *st);

	/* ---- version 2 ---- */

	/*
	 * check_url (optional): refuse, without connecting, what open would refuse
	 * in url: an unknown strategy or parameter, a value out of range.  Keeps
	 * nothing: st->impl is NULL before and after.  PostgreSQL calls it when a
	 * foreign server is created or altered, so a bad URL is an error then and
	 * not at the first claim.
	 */
	int			(*check_url) (an_store *st, const char *url);

	/* ---- version 3 ---- */

	/*
	 * recall (optional): which of n slots of rq->job the store holds a run
	 * for, in any state (anarchon_missed).  slots are ascending, pass
	 * an_validate_slot and can no longer be claimed (older than max_late_ms of
	 * rq->settings); rq->slot and rq->token are unused.  Sets has_run[i] to 1
	 * or 0 for each.  A store that may have forgotten a run of one of them
	 * (its memory is shorter than that slot's age) must not guess: it fails
	 * with AN_E_UNSUPPORTED and says how far back it can answer.  Stores that
	 * keep no run they could be asked about leave it NULL; the host then says
	 * that this store cannot tell missed slots.  With n = 0 (slots and has_run
	 * NULL) it makes no round trip: AN_OK, or AN_E_UNSUPPORTED when it could
	 * never answer (a Redis strategy without runs), so that a host can refuse
	 * catch-up before any claim (an_missed_can_recall).
	 */
	int			(*recall) (an_store *st, const an_request *rq, const int64_t *slots, size_t n,
						   unsigned char *has_run);

	/* ---- version 4 ---- */

	/*
	 * fence (optional): is rq->token the owner of the running run?  *owned =
	 * 1 when it is, and then the store holds the run for it until the
	 * caller's transaction ends, so that no takeover can be decided before
	 * the caller's writes commit or roll back (the local stores: a row lock
	 * in PostgreSQL, the database's write lock in SQLite).  A store that
	 * cannot tie a run to the caller's transaction leaves it NULL; the hosts
	 * then ask heartbeat, which checks the owner in the store at that moment
	 * and holds nothing (an_store_fence).
	 */
	int			(*fence) (an_store *st, const an_request *rq, int *owned);

	/* (versions 5 and 6 brought pause, resume, paused, pauses and run_now: in admin since 9) */

	/* ---- version 7 ---- */

	unsigned	caps;            /* AN_CAP_* bits, above */

	/* ---- version 8 ---- */

	/*
	 * batch (optional): one(st, arg, i) for each i < n as one unit of the
	 * store (anarchon_claim_many, anarchon cron), under settings s.  one
	 * claims a job with the store's own claim; the store makes the unit what
	 * it can, and says so in doc/writing-a-backend.md: SQLite's local store
	 * runs every call in one BEGIN IMMEDIATE, each claim a savepoint of it.
	 * one's AN_OK covers a job whose claim failed alone (its error is its
	 * row); an error one returns, or one that ends the unit, fails the whole
	 * batch.  rqs, when not NULL, are the requests one(i) will claim, each
	 * already checked by the host (job, slot, token): a store may send them
	 * ahead, all in one round trip per server, and answer one's claims from
	 * what came back (Redis: redis_pipeline.c); a claim whose answer did not
	 * come back is sent again with its own token, as after any lost reply.
	 * Stores that have no unit and send nothing ahead leave it NULL; the
	 * host then calls one for each job in turn (an_store_batch).
	 */
	int			(*batch) (an_store *st, const an_settings *s, const an_request *rqs, size_t n,
						  int (*one) (an_store *st, void *arg, size_t i), void *arg);

	/* ---- version 9 ---- */

	/* admin (optional): the operators' controls, each declared in caps (above). */
	const an_store_admin *admin;
} an_store_methods;

struct an_store
{
	const an_store_methods *m;
	const an_host *host;
	void	   *impl;            /* the implementation's own data */
	an_err		err;			/* what went wrong; err.code is AN_OK when nothing did */
	an_stats_row *stats;         /* where the host counts this store's calls, or NULL */
	unsigned	caps;            /* the table's AN_CAP_* bits that this store has (an_store_init) */
	unsigned	lacks_caps;      /* the bits it gave up when open (an_store_lacks) */
	char		lacks[64];       /* why, or "" */
};

/*
 * Zero the store and attach its methods and host.  st->caps is the table's
 * caps, less an administration bit whose method the table lacks.
 */
void		an_store_init(an_store *st, const an_store_methods *m, const an_host *host);

/*
 * Record an error on the store, with no detail or hint yet; returns code so callers can
 * `return an_store_fail(...)`.  The message is short and lower case, with no
 * final period: "cannot connect to redis store redis://host:6379: Connection
 * refused".
 */
int			an_store_fail(an_store *st, an_error code, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/*
 * Add a detail to the error just recorded: the facts that explain it, as a
 * sentence ("A late claim could win a slot the store has already
 * forgotten.").  Returns st->err.code, like an_store_hintf.
 */
int			an_store_detailf(an_store *st, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

/*
 * Add a hint to the error just recorded: what the user can do, as a sentence
 * ("Raise window_ms to at least max_late_ms.").  Returns st->err.code, so a store
 * can `an_store_fail(...); return an_store_hintf(...);`.
 */
int			an_store_hintf(an_store *st, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

/*
 * Take an error another layer recorded (a URL's, a setting's) as the store's
 * own, whole, with its detail and hint, as class code; returns code.
 */
int			an_store_adopt(an_store *st, an_error code, const an_err *e);

/* Clear the error state before a call. */
void		an_store_clear(an_store *st);

/*
 * Check url with the store's check_url, when its table has one (version 2 or
 * later, not NULL); AN_OK otherwise: nothing more can be known without
 * connecting.
 */
int			an_store_check_url(an_store *st, const char *url);

/*
 * An optional method of the store, or NULL when the store has none or its
 * table is older than the version that brought it: the one way a host reads
 * a method added after version 1.  AN_STORE_SINCE_<method> is that version.
 */
#define AN_STORE_SINCE_check_url 2
#define AN_STORE_SINCE_recall 3
#define AN_STORE_SINCE_fence 4
#define AN_STORE_SINCE_caps 7
#define AN_STORE_SINCE_batch 8
#define AN_STORE_SINCE_admin 9
#define AN_STORE_SINCE_kind 10
#define AN_STORE_METHOD(st, method) \
	((st)->m->version >= AN_STORE_SINCE_##method ? (st)->m->method : NULL)

/* Whether the store has capability bit cap (AN_CAP_*); a table before version 7 has none. */
#define AN_STORE_HAS(st, cap) (((st)->caps & (cap)) != 0)

/*
 * Whether the store has duty cap (one bit of AN_CAP_DUTIES): 1, or 0 with
 * the one refusal recorded on st: AN_E_UNSUPPORTED, "the NAME store cannot
 * DO", a detail and a hint (core/store_admin.c).
 */
int			an_store_can(an_store *st, unsigned cap);

/*
 * The administration table when the store has cap (one bit of
 * AN_CAP_ADMIN); else NULL, refused as an_store_can does.  Every host
 * reaches prune, pause, resume, paused and pauses through it.
 */
const an_store_admin *an_store_admin_for(an_store *st, unsigned cap);

/*
 * The AN_CAP_* bits of a table, less the administration bits it has no
 * method for and a run-now declared before version 10.
 */
unsigned	an_store_admin_caps(const an_store_methods *m);

/*
 * An open store gives up cap (AN_CAP_DUTIES bits) for this connection, why
 * completing the refusal's message: "with strategy stream-id".
 */
void		an_store_lacks(an_store *st, unsigned cap, const char *why);

/*
 * The hosts' calls of a store's methods: the method, timed and counted in
 * st->stats (core/stats.h) when the host gave the store a row.  A claim of
 * kind AN_CLAIM_MANUAL is refused unless the store has AN_CAP_RUN_NOW and
 * the settings allow a run-now (an_run_now_check); res->slot is rq->slot
 * for the other kinds.
 */
int			an_store_claim(an_store *st, const an_request *rq, an_claim_result *res);
int			an_store_heartbeat(an_store *st, const an_request *rq, int *owned);
int			an_store_finish(an_store *st, const an_request *rq, an_run_state status, int *owned);
int			an_store_check(an_store *st, const an_request *rq, an_check_result *res);

/*
 * A store that read its server's clock (store_ms) in a call sent at sent_ms
 * and answered at received_ms of the host's clock reports it here, for the
 * clock offset of anarchon_stats().
 */
void		an_store_saw_clock(an_store *st, int64_t store_ms, int64_t sent_ms, int64_t received_ms);

/*
 * anarchon_fence's store call, counted like the ones above: the store's fence when it has one, else its
 * heartbeat (a check of the owner, and a renewed lease, with nothing held).
 */
int			an_store_fence(an_store *st, const an_request *rq, int *owned);

/*
 * A batch of n claims (anarchon_claim_many): the store's batch when it has
 * one, else one(st, arg, i) for each i in turn, stopping at the first error
 * one returns.
 */
int			an_store_batch(an_store *st, const an_settings *s, const an_request *rqs, size_t n,
						   int (*one) (an_store *st, void *arg, size_t i), void *arg);

/* Ask the host whether to give up the current call. */
int			an_store_interrupted(const an_store *st);

/* The host's clock; every host provides one. */
int64_t		an_store_host_now(const an_store *st);
/* The setting name (lease_ms, max_late_ms, ...) as the host's user types it (an_host.setting_name). */
const char *an_store_setting(const an_store *st, const char *name);

#endif							/* ANARCHON_STORE_H */
