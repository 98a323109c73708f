/*
 * redis.h — the Redis store's insides, shared by its files.
 *
 *   redis_store.c    an_redis_methods: the URL, open/validate/close, and the
 *                    retry of a call whose connection dropped
 *   redis_conn.c     one connection (an_conn: plain or TLS), AUTH/SELECT, and
 *                    an I/O loop bounded by timeout_ms that polls for cancel
 *   redis_durable.c  refusing a server that would forget claims on a crash
 *   redis_cmd.c      building a command's arguments; EVALSHA with NOSCRIPT
 *                    recovery; reading replies
 *   redis_scripts.c  the Lua scripts (the lease decision table, the scan of
 *                    the script strategy, the idmp stream set-up)
 *   redis_lease.c    strategy lease
 *   redis_stream.c   strategies stream-id, idmp and script
 *   redis_missed.c   recall, for anarchon_missed (lease only)
 *   redis_mark.c     one prefix, one strategy: the job's strategy marker
 *   redis_pause.c    pause, resume, paused, pauses (every strategy)
 *
 * Keys of a job all carry the hash tag {<job>}, so a Redis Cluster keeps a
 * job's keys on one node and its scripts may touch all of them:
 *
 *   <prefix>:{<job>}:run:<slot>        lease: the run (a hash)
 *   <prefix>:{<job>}:live              lease: slot -> lease end of runs that
 *                                      may hold a live lease (a sorted set;
 *                                      the overlap test reads one member)
 *   <prefix>:{<job>}:history           lease: every won attempt and every end
 *   <prefix>:{<job>}:memory            lease: how long the job's runs are kept
 *                                      (the longest any host asked), and the
 *                                      horizon below which a slot may be forgotten
 *   <prefix>:{<job>}:kept              lease: slot -> the time its run is kept
 *                                      until (lengthened when the memory grows)
 *   <prefix>:{<job>}:runs              stream-id, idmp, script: the claims
 *   <prefix>:{<job>}:finished:<slot>   stream-id, idmp, script: finish status
 *   <prefix>:{<job>}:strategy          every strategy: what decides the job
 *                                      (redis_mark.c)
 *   <prefix>:{<job>}:paused            every strategy: the current pause
 *   <prefix>:{<job>}:pauses            every strategy: all pauses (redis_pause.c)
 */
#ifndef ANARCHON_REDIS_H
#define ANARCHON_REDIS_H

#include "redis_lib.h"

#include "conn.h"
#include "fork.h"
#include "store.h"
#include "rotate.h"             /* an_deadline, an_rotation (wait.h) */

#define RDS_TIMEOUT_MS_DEFAULT 2000
#define RDS_WINDOW_MS_DEFAULT  300000     /* script: memory of a claim */
#define RDS_DURATION_DEFAULT   300        /* idmp: seconds */
#define RDS_DURATION_MAX       86400      /* Redis's own limit for IDMP-DURATION */
#define RDS_IDMP_MAXSIZE       10000      /* Redis's own limit for IDMP-MAXSIZE */
#define RDS_IDMP_CACHE         16         /* jobs whose idmp stream we configured */

/* ---------------------------------------------------------------- connection */

#define RDS_SERVERS_MAX 8       /* servers a URL may name (AN_URL_MAX_SERVERS) */

/*
 * The most one call may read from its server, in bytes: the replies of all
 * its commands together (a handshake's INFO is the largest of the store's
 * own, a few kB; a big cluster's CLUSTER SLOTS some hundred kB).  A server
 * that sends more (a bulk reply announcing 1 GB, an endless stream of
 * replies) fails the call with AN_E_STORE and the connection is closed, so
 * what one call keeps in memory is bounded whatever the server sends.  With
 * hiredis 1.x an array announcing more than RDS_ELEMENTS_MAX elements is
 * refused as soon as announced; hiredis 0.14 has no such knob and reserves
 * (untouched, so not resident) pointer room for the count announced before
 * the bytes cap ends the call.
 */
#define RDS_REPLY_MAX     (4 * 1024 * 1024)
#define RDS_ELEMENTS_MAX  65536

struct rds_conn;

/* The servers a URL names: the sentinels. */
typedef struct rds_servers
{
	an_rotation rot;             /* their count, and the one to ask first: the last that answered */
	char	   *host[RDS_SERVERS_MAX];
	int			port[RDS_SERVERS_MAX];
	char	   *user;            /* sentinel_user: NULL, AUTH with the password only */
	char	   *password;        /* sentinel_password: NULL, no AUTH to the sentinels */
	/*
	 * Ask them which server is the master, into the connection's host and
	 * port (rds_sentinel_resolve): set with the servers, so that a
	 * connection, which the sentinel code opens to ask, does not call back
	 * into it by name.
	 */
	int			(*resolve) (an_store *st, struct rds_conn *cn, const an_deadline *d);
} rds_servers;

typedef struct rds_conn
{
	an_conn		io;              /* the socket, and its TLS when rediss (RDS_CONNECTED) */
	redisReader *reader;         /* hiredis parses the replies; NULL when not connected */
	an_tls_ctx *tls;             /* the store's TLS settings (rediss); NULL: plaintext */
	char	   *host;
	int			port;
	char	   *user;            /* NULL: AUTH with the password only */
	char	   *password;        /* NULL: no AUTH */
	long		db;
	int			timeout_ms;
	int			accept_loss;     /* durability=accept-loss: persistence not checked */
	char		where[300];      /* redacted URL, for messages */
	int			dropped;         /* the last failure lost an open connection */
	int			generation;      /* counts successful connects */
	int			version[2];      /* server major.minor, read at connect */
	an_fork_mark proc;        /* the process that connected c (fork.h) */
	int64_t		next_time_ms;    /* when to read the server's clock again (host clock) */
	/*
	 * Sentinel (redis+sentinel://): before each connect, the sentinels are
	 * asked where master_name's master is (host and port are replaced), and
	 * the server is asked its ROLE in the handshake: a replica is refused.
	 */
	rds_servers *sentinels;          /* NULL: host and port are the server */
	const char *master_name;
	int			any_role;        /* a cluster's node: a replica too (it redirects) */
} rds_conn;

/* A connection is open when it has its reader (a zeroed rds_conn is closed). */
#define RDS_CONNECTED(cn) ((cn)->reader != NULL)

/*
 * Connect (non-blocking, bounded by deadline and cancel; with TLS when the
 * store's URL is rediss), AUTH, SELECT, read
 * the server version and refuse a server that forgets claims when it crashes
 * (see redis_conn.c), unless already connected.  A connection made by the
 * parent of a forked process is forgotten first.
 */
int			rds_conn_ensure(an_store *st, rds_conn *cn, const an_deadline *d);

/*
 * Send ncmd commands in one write and read their ncmd replies, connecting
 * first if needed.  replies[i] is set for every i on AN_OK (error replies
 * included: the caller judges them); on failure none is left to free and the
 * connection is closed, because a late reply would be taken for the next
 * call's.  A failure on a connection that was open sets cn->dropped.
 */
int			rds_conn_pipeline(an_store *st, rds_conn *cn, const an_deadline *d, int ncmd,
							  const int *argc, const char **const *argv,
							  const size_t *const *lens, redisReply **replies);

void		rds_conn_close(rds_conn *cn);

/*
 * Ask the sentinels, in turn from the last that answered, where the master
 * called cn->master_name is, and point cn at it (redis_sentinel.c).  Each
 * sentinel gets its share of the time left.
 */
int			rds_sentinel_resolve(an_store *st, rds_conn *cn, const an_deadline *d);

/*
 * Open a connection to host:port without a handshake, for a question to a
 * server that is not the store (a sentinel).  cn->where names the store.
 */
int			rds_conn_open_raw(an_store *st, rds_conn *cn, const an_deadline *d);

/* One command on cn and its reply, as rds_conn_pipeline with ncmd = 1. */
int			rds_conn_command(an_store *st, rds_conn *cn, const an_deadline *d, int argc,
							 const char **argv, redisReply **reply);

/*
 * ncmd commands on an open connection and their replies, as
 * rds_conn_pipeline without connecting (a question to a sentinel).
 */
int			rds_conn_exchange(an_store *st, rds_conn *cn, const an_deadline *d, int ncmd,
							  const int *argc, const char **const *argv,
							  const size_t *const *lens, redisReply **replies);

/* The error code of an error reply ("WRONGPASS", "NOAUTH"), without its text. */
/* An error reply that ends by itself (LOADING, BUSY, ...; redis_cmd.c): 1, else 0. */
int			rds_reply_transient(const redisReply *r);
/* Fail st with AN_E_BUSY for such a reply to `what`, saying so. */
int			rds_transient_fail(an_store *st, const char *where, const redisReply *r, const char *what);
void		rds_reply_code(const redisReply *r, char *out, size_t outlen);

/*
 * Refuse a server that would forget acknowledged claims when it crashes
 * (redis_durable.c), from its answers to CONFIG GET append* and INFO
 * persistence given in the handshake; error replies mean "not allowed to ask".
 */
int			rds_durability_check(an_store *st, const rds_conn *cn, const redisReply *config,
								 const redisReply *persistence);

/* The server wants a password and got none (%s: the redacted URL). */
#define RDS_MSG_NOAUTH "redis store %s requires a password, and none was given: put it in the store URL (redis://[user]:password@host) or, in PostgreSQL, in the server's user mapping"

/* Known to lack XADD ... IDMP (Redis before 8.6); 0.0 = unknown, left to the server to refuse. */
#define RDS_LACKS_IDMP(cn) ((cn)->version[0] > 0 && \
	((cn)->version[0] < 8 || ((cn)->version[0] == 8 && (cn)->version[1] < 6)))

/* ---------------------------------------------------------------- commands */

#define RDS_MAXARGS 24
#define RDS_POOL    1536

/* One command's arguments; formatted ones live in the command's own pool. */
typedef struct rds_cmd
{
	int			argc;
	const char *argv[RDS_MAXARGS];
	size_t		len[RDS_MAXARGS];
	char		pool[RDS_POOL];
	size_t		used;
	int			overflow;
} rds_cmd;

void		rds_cmd_init(rds_cmd *c);
void		rds_cmd_add(rds_cmd *c, const char *s);            /* a string kept by the caller */
void		rds_cmd_addf(rds_cmd *c, const char *fmt,...)      /* copied into the pool */
			__attribute__((format(printf, 2, 3)));

/* A Lua script, loaded on first use and then called by its SHA. */
typedef struct rds_script
{
	int			index;           /* into rds_store.sha */
	const char *name;
	const char *source;
} rds_script;

/* The codes of rds_lua_scan's answer, listed once for the C and the Lua. */
#define RDS_SCAN_LIST(X) X(SCAN_NONE, 0) X(SCAN_FOUND, 1) X(SCAN_APPENDED, 2) X(SCAN_LATE, 3) \
	X(SCAN_PAUSED, 4)
#define RDS_SCAN_MEMBER_(name, value) name = value,
enum rds_scan_code
{
	RDS_SCAN_LIST(RDS_SCAN_MEMBER_)
};

extern const rds_script rds_lua_lease_claim;
extern const rds_script rds_lua_lease_heartbeat;
extern const rds_script rds_lua_lease_finish;
extern const rds_script rds_lua_lease_check;
extern const rds_script rds_lua_scan;
extern const rds_script rds_lua_idmp_setup;
extern const rds_script rds_lua_stream_id_claim;
extern const rds_script rds_lua_mark;
extern const rds_script rds_lua_run_now;

/* The index of each script after the first eight, then how many there are. */
#define RDS_SCRIPT_RUN_NOW 8
#define RDS_NSCRIPTS 9

/*
 * The first element of a claim script's answer when the job's marker names
 * another strategy: {RDS_MARKED, the marker's value, its PTTL}.  Below every
 * outcome and scan code, so no answer can be taken for it.
 */
#define RDS_MARKED (-1)

/*
 * The lease claim's answer when the slot's run was written by 0.1.0 (kept on
 * its winner's settings alone) and would be forgotten while this host could
 * still claim the slot: {RDS_OLD_RUN, the run's expiry, 0}.
 */
#define RDS_OLD_RUN (-2)

/*
 * A claim script's answer when the job's pause key holds no pause
 * (redis_pause.c): {RDS_BAD_PAUSE, 0, 0}.  rds_pause_answer judges it.
 */
#define RDS_BAD_PAUSE (-3)

struct rds_store;

/* Run one command and return its reply; error replies are returned, not judged. */
int			rds_call_any(an_store *st, struct rds_store *rs, rds_cmd *c, redisReply **reply);

/* Run one command and return its reply (error replies are failures, recorded). */
int			rds_call(an_store *st, struct rds_store *rs, rds_cmd *c, redisReply **reply);

/*
 * EVALSHA script with the keys and args already in c (c holds them from
 * argv[3] on: call rds_eval_init first).  A NOSCRIPT answer (Redis restarted
 * or flushed its scripts) is healed by EVAL with the source, which caches it
 * again.  Error replies become failures.
 */
void		rds_eval_init(rds_cmd *c, int numkeys);
int			rds_eval(an_store *st, struct rds_store *rs, const rds_script *script,
					 rds_cmd *c, redisReply **reply);

/* Record an error reply of Redis as a failure of the store. */
int			rds_reply_fail(an_store *st, struct rds_store *rs, const redisReply *r,
						   const char *what);

/* Integer element i of an array reply, or -1 with a failure recorded. */
int			rds_array_int(an_store *st, struct rds_store *rs, const redisReply *r,
						  size_t i, int64_t *out, const char *what);

/* ---------------------------------------------------------------- strategies */

typedef struct rds_strategy
{
	const char *name;
	int			(*claim) (an_store *st, struct rds_store *rs, const an_request *rq,
						  an_claim_result *res);
	int			(*heartbeat) (an_store *st, struct rds_store *rs, const an_request *rq,
							  int *owned);
	int			(*finish) (an_store *st, struct rds_store *rs, const an_request *rq,
						   an_run_state status, int *owned);
	int			(*check) (an_store *st, struct rds_store *rs, const an_request *rq,
						  an_check_result *res);
	/* How long the strategy remembers a claim, in ms; -1 = as long as needed. */
	int64_t		(*memory_ms) (const struct rds_store *rs);
	/* The URL parameter that sets memory_ms, named when it is too short. */
	const char *memory_param;
	/*
	 * The won/lost strategies' append and read-back for core/wonlost.c (NULL
	 * for lease).  Its late_on_host says that a first claim's lateness is
	 * judged on the host's clock while memory_ms runs on Redis's: the memory
	 * must then also cover max_skew_ms.
	 */
	const struct an_wonlost_ops *wonlost;
	/*
	 * The value of memory_param that the job's strategy marker records
	 * (redis_mark.c), as the URL gave it; NULL when the marker records the
	 * strategy's name alone.
	 */
	long long	(*mark_value) (const struct rds_store *rs);
} rds_strategy;

extern const rds_strategy rds_strategy_lease;
extern const rds_strategy rds_strategy_stream_id;
extern const rds_strategy rds_strategy_idmp;
extern const rds_strategy rds_strategy_script;

/*
 * run now (redis_run_now.c): the job's manual request, then the lease claim
 * of its slot (*slot); other strategies refuse it.
 */
int			rds_run_now(an_store *st, struct rds_store *rs, const an_request *rq,
						an_claim_result *res, int64_t *slot);

/* The store's recall method (redis_missed.c): which slots have a run (lease only). */
int			rds_recall(an_store *st, const an_request *rq, const int64_t *slots, size_t n,
					   unsigned char *has_run);

/* The store's pause methods (redis_pause.c), for every strategy. */
int			rds_pause(an_store *st, const an_request *rq, int64_t until);
int			rds_resume(an_store *st, const an_request *rq, int *was_paused);
int			rds_paused(an_store *st, const an_request *rq, int64_t *until);
int			rds_pauses(an_store *st, const an_request *rq, int64_t from, int64_t to,
					   an_pause_span *spans, size_t max, size_t *n);

/*
 * Is r a claim script's answer about the job's pause?  0: no, go on reading
 * it.  1: {code, 0, 0}, the job is paused.  -1: {RDS_BAD_PAUSE, 0, 0}, the
 * key holds no pause: st failed, saying so.
 */
int			rds_pause_answer(an_store *st, struct rds_store *rs, const an_request *rq,
							 const redisReply *r, int64_t code);

/*
 * The lease claim (redis_lease.c); pause 0 for a run-now, which a pause
 * does not hold (the strategy's claim passes 1).
 */
int			rds_lease_claim(an_store *st, struct rds_store *rs, const an_request *rq,
							an_claim_result *res, int pause);

/* At open: mark a new or 0.1.0 prefix (format_marker.h); refuse a newer format. */
int			rds_format_check(an_store *st, struct rds_store *rs);

/* The error for a server without XADD ... IDMP: names Redis 8.6, suggests script. */
int			rds_idmp_unsupported(an_store *st, struct rds_store *rs);

/* ---------------------------------------------------------------- the store */

/*
 * Redis Cluster (cluster=yes, redis_cluster.c): the nodes met so far, each
 * with its own connection, and which node serves each of the 16384 hash
 * slots, as CLUSTER SLOTS last said and MOVED answers corrected since.
 */
#define RDS_HASH_SLOTS 16384
#define RDS_NODES_MAX 64

typedef struct rds_cluster
{
	an_rotation nodes;           /* the URL's nodes first, then those met since; the one
								  * to ask for the map first: the last that answered */
	int			nseeds;          /* how many of them are the URL's (kept for good) */
	rds_conn	node[RDS_NODES_MAX];
	unsigned char slot_node[RDS_HASH_SLOTS];	/* node index + 1; 0 = unknown */
	int			stale;           /* read the map again before the next command */
	int			moved;           /* a MOVED was followed: read the map at the next call */
} rds_cluster;

/* The node of host:port, added when new (its connection copied from tmpl); -1 when full. */
int			rds_cluster_node(an_store *st, rds_cluster *cl, const rds_conn *tmpl,
							 const char *host, int port);

/* The connection that serves hash slot hslot, reading the map first if needed. */
int			rds_cluster_route(an_store *st, struct rds_store *rs, int hslot, rds_conn **out);

/* The hash slot of a key, by Redis Cluster's rule (CRC16 of its hash tag). */
int			rds_key_hash_slot(const char *key, size_t len);

void		rds_cluster_free(rds_cluster *cl);

/*
 * Send one command where it belongs and read its reply (redis_route.c): to
 * the one server, the sentinels' master or the cluster node of the call's
 * job, following MOVED and ASK; with replicas=N, followed by a write of the
 * job's own and WAIT, so that an answer is only given once N replicas have
 * everything the master had when it gave it.
 */
int			rds_route(an_store *st, struct rds_store *rs, const int argc, const char **argv,
					  const size_t *lens, redisReply **reply);

/* ---------------------------------------------------------------- sent ahead */

/* The most commands of one kept claim: [ASKING] command [[ASKING] SET synced, WAIT]. */
#define RDS_AHEAD_CMDS 5

enum
{
	RDS_AHEAD_OFF = 0,
	RDS_AHEAD_RECORD,            /* a script call is kept, not sent */
	RDS_AHEAD_REPLAY             /* a script call kept and answered is answered from there */
};

/* A batch's claims sent ahead (redis_ahead.c). */
typedef struct rds_ahead
{
	int			mode;            /* RDS_AHEAD_* */
	struct rds_ahead_entry *e;
	size_t		n,
				cap,
				next;            /* where a replay looks first */
} rds_ahead;

/*
 * Keep the commands of one try of rds_route instead of sending them, for
 * cn; fails st with AN_E_INTERNAL ("kept"), which ends the claim being
 * recorded, or with AN_E_NOMEM.
 */
int			rds_ahead_keep(an_store *st, rds_ahead *a, rds_conn *cn, int ncmd, int main,
						   const int *argc, const char **const *argv, const size_t *const *lens);
/* Send every kept command, each connection's in one write, and keep the replies. */
void		rds_ahead_send(an_store *st, struct rds_store *rs, rds_ahead *a);
/* The kept replies of a command byte for byte equal to the main one given: 1, else 0. */
int			rds_ahead_take(rds_ahead *a, int ncmd, int main, const int *argc, const char **const *argv,
						   const size_t *const *lens, redisReply **rep);
/* Free everything kept; mode off. */
void		rds_ahead_clear(rds_ahead *a);

typedef struct rds_store
{
	rds_conn	conn;            /* the server; with cluster=yes, the nodes' model */
	rds_cluster *cluster;        /* NULL unless cluster=yes */
	rds_servers sentinels;       /* redis+sentinel:// */
	char	   *master_name;
	int			replicas;        /* replicas=N: WAIT for N replicas before answering */
	/* The job of the call in progress: its keys' hash tag and hash slot. */
	char		tag[AN_JOB_MAX + 80];
	int			hslot;
	const rds_strategy *strategy;
	char		prefix[65];
	int64_t		window_ms;       /* script */
	int64_t		duration_sec;    /* idmp */
	int64_t		skew_ms;         /* max_skew_ms: how far apart the instances' clocks may be */
	char		mark[64];        /* what decides the job here, as the marker holds it (redis_mark.c) */
	an_tls_ctx *tls;             /* rediss: made once at open, shared by every connection */
	an_deadline deadline;        /* of the call in progress */
	char		sha[RDS_NSCRIPTS][41];  /* "" until loaded, per script */
	int			sha_generation;  /* conn generation the idmp cache belongs to */
	char		idmp_ready[RDS_IDMP_CACHE][AN_JOB_MAX + 1];
	int			idmp_next;
	rds_ahead	ahead;           /* a batch's claims, sent ahead (redis_ahead.c) */
} rds_store;

/*
 * Start a call of a method (redis_store.c): clear the error, check that the
 * store is open (NULL and a failure when not), start the call's deadline.
 */
rds_store  *rds_begin(an_store *st);

/* Key of the job: "<prefix>:{<job>}:<what>", appended to c. */
void		rds_cmd_key(rds_cmd *c, rds_store *rs, const char *job, const char *what);
/* Key of one run of the job: "<prefix>:{<job>}:<what>:<slot>". */
void		rds_cmd_slot_key(rds_cmd *c, rds_store *rs, const char *job,
							 const char *what, int64_t slot);

/* ---------------------------------------------------------------- the marker */

/* The store's marker value, from its strategy and parameters ("strategy=script&window_ms=300000"). */
void		rds_mark_init(rds_store *rs);

/*
 * The marker's arguments of a claim script: the store's value and how long
 * past max(now, slot) a win keeps the marker (max_late_ms + lease_ms *
 * attempts + max_skew_ms + timeout_ms).  The marker's key is a KEY of the
 * script: rds_cmd_key(c, rs, job, "strategy").
 */
void		rds_cmd_mark_args(rds_cmd *c, rds_store *rs, const an_settings *s);

/* Is r a claim script's {RDS_MARKED, value, pttl}? */
int			rds_is_marked(const redisReply *r);

/* The refusal of a claim whose job another strategy decides: AN_E_CONFIG, with how to migrate. */
int			rds_mark_refused(an_store *st, rds_store *rs, const an_request *rq,
							 const redisReply *r);

/*
 * For what runs no claim script of its own (idmp's XADD, recall): refuse a
 * job another strategy decides, and, when set, mark it as this store's
 * before the decision.  With paused not NULL (idmp's claim), the job's
 * pause is read in the same script first: *paused = 1, and nothing marked,
 * while the job is paused.  One script call.
 */
int			rds_mark_job(an_store *st, rds_store *rs, const an_request *rq, int set,
						 int *paused);

#endif							/* ANARCHON_REDIS_H */
