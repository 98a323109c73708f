/*
 * amqp.c — the RabbitMQ store: a claim is a publish into a per-slot gate.
 *
 *   amqp://user:password@host[:port]/vhost?prefix=cron&slot_ttl_ms=120000&timeout_ms=2000
 *       &settle_ms=2500&durability=crash-safe
 *   amqps://user:password@host[:port]/vhost?ca=...&cert=...&key=...&auth_mechanism=external
 *
 * amqps:// is AMQP over TLS (port 5671 by default), with the TLS parameters
 * every store reads alike (url.h: ca, cert, key, servername,
 * insecure_skip_verify) and the broker's certificate verified unless told
 * otherwise.  auth_mechanism is the parameter's name in RabbitMQ's URI
 * spec: plain (the default: the URL's or user mapping's user and password)
 * or external (SASL EXTERNAL: the broker takes the user from the client
 * certificate, which its rabbitmq_auth_mechanism_ssl plugin must accept).
 *
 * The gate of (job, slot) is the queue <prefix>.<job>.slot.<slot>, declared
 * durable with x-max-length 1, x-overflow reject-publish and x-expires
 * slot_ttl_ms.  The claim is published into it, persistent and mandatory,
 * on a channel in confirm mode.  The broker handles the publishes to one
 * queue in order: the first fills the queue and is acked (won); every later
 * one is nacked (lost).  Nobody consumes, so the queue stays full until it
 * has gone unused for slot_ttl_ms.  A claim whose confirm does not come
 * within timeout_ms, or whose connection drops after the publish, is lost:
 * the run may then be skipped, never run twice.
 *
 * An acked claim is not yet safe from a broker crash.  RabbitMQ confirms a
 * persistent message once it is on disk, but the gate queue itself is a
 * record in RabbitMQ's metadata store (Mnesia before RabbitMQ 4 with Khepri),
 * whose log reaches the disk up to two seconds after the declaration was
 * confirmed.  A broker killed in that window comes back without the gate,
 * drops its message, and a new claim wins the slot again (the suite saw it
 * in one kill out of five, always the gate declared last).  So a won claim
 * settles: it waits until settle_ms have passed since the gate's declaration
 * was confirmed, then asks for the gate again on the same connection; only
 * a gate still there, on a broker that did not go away meanwhile, is won.
 * A broker lost during the wait makes the claim lost.  settle_ms below
 * 2500 is refused unless durability=accept-loss.
 *
 * Each prefix records its format and its slot_ttl_ms, per virtual host, by
 * the queue <prefix>.format.2 (amqp_format.c): declared, and a later
 * format's looked for, on every new connection, before anything is decided.
 *
 * A claim of our own sent again cannot be recognised (RabbitMQ cannot show
 * a queued message without taking it off the queue, which would reopen the
 * gate), so a resent claim answers lost.  heartbeat, finish and check are
 * described in doc/stores-amqp-nats.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "amqp_format.h"
#include "amqp_link.h"
#include "rotate.h"
#include "session_claims.h"
#include "wonlost.h"
#include "remote.h"
#include "url.h"

#define AMQP_DEFAULT_PORT 5672
#define AMQPS_DEFAULT_PORT 5671
#define AMQP_TTL_DEFAULT_MS 120000
#define AMQP_TIMEOUT_DEFAULT_MS 2000
#define AMQP_KNOWN "prefix, slot_ttl_ms, timeout_ms, settle_ms, durability, max_skew_ms, auth_mechanism, plaintext_auth, " AN_URL_TLS_PARAMS
/*
 * How long after its declaration a gate is surely in the broker's files:
 * Mnesia's log (an Erlang disk_log) writes what it caches two seconds after
 * the first write at the latest; half a second more for the scheduler.
 */
#define AMQP_SETTLE_SAFE_MS 2500
#define AMQP_SETTLE_MAX_MS 60000
/* RabbitMQ's x-expires is a 32-bit number of milliseconds. */
#define AMQP_TTL_MAX_MS INT64_C(2147483647)

typedef struct amqp_store
{
	/* The cluster's nodes the URL names (one, or several separated by commas). */
	an_rotation nodes;           /* their count, and the one to try first: the last that answered */
	char	   *host[AN_URL_MAX_SERVERS];
	int			port[AN_URL_MAX_SERVERS];
	char	   *vhost;
	char	   *user;
	char	   *password;
	char		prefix[65];
	int64_t		ttl_ms;
	int64_t		skew_ms;         /* max_skew_ms: how far apart the instances' clocks may be */
	int64_t		timeout_ms;
	int64_t		settle_ms;
	int			accept_loss;     /* durability=accept-loss */
	an_tls_ctx *tls;             /* amqps://: the TLS settings; NULL: plaintext */
	int			external;        /* auth_mechanism=external */
	amqp_link	link;
	an_claims	claims;
} amqp_store;

static char *
dup_or(const char *s, const char *def)
{
	return strdup(s ? s : def);
}

/*
 * auth_mechanism: plain (the default) or external, as RabbitMQ's URI spec
 * names them.  EXTERNAL logs in with the client certificate alone, so it
 * needs amqps:// with cert and key, and a user or password beside it
 * would be ignored: refused rather than silently unused.
 */
static int
refuse_auth(an_err *err, const char *why)
{
	an_errf(err, "store URL parameter auth_mechanism%s", why);
	return -1;
}

static int
read_auth(an_url *u, int tls, const an_tls_config *cfg, int *external, an_err *err)
{
	const char *m = an_url_param(u, "auth_mechanism");

	*external = m != NULL && strcasecmp(m, "external") == 0;
	if (m != NULL && !*external && strcasecmp(m, "plain") != 0)
		return refuse_auth(err, " must be plain (the default) or external");
	if (*external && (!tls || cfg->cert == NULL))
		return refuse_auth(err, "=external logs in with a client certificate: it needs amqps:// with cert and key");
	if (*external && (u->user != NULL || u->password != NULL))
		return refuse_auth(err, "=external takes the user from the client certificate: leave the user name and password out");
	return 0;
}

/* amqps://: the TLS settings, made once (the files are read here). */
static int
read_tls(an_store *st, amqp_store *a, an_url *u, int *tls, an_tls_config *cfg, an_err *err)
{
	int			any;

	*tls = strcmp(u->scheme, "amqps") == 0;
	if (an_url_tls(u, *tls, cfg, &any, err) < 0)
		return an_store_adopt(st, AN_E_CONFIG, err);
	return *tls ? an_conn_tls_new(st, cfg, a->link.who, &a->tls) : AN_OK;
}

static int
parse_url(an_store *st, amqp_store *a, const char *url)
{
	an_url		u;
	an_tls_config cfg;
	const char *prefix;
	char		redacted[128];
	an_err		err;
	int			tls;
	int			plain = 0;
	int			rc = AN_OK;

	if (an_url_parse(url, &u, &err) < 0)
		return an_store_adopt(st, AN_E_CONFIG, &err);
	/* Named first: the TLS files' messages say whose they are. */
	an_url_name(&u, redacted, sizeof(redacted));
	snprintf(a->link.who, sizeof(a->link.who), "RabbitMQ at %s", redacted);
	if (read_tls(st, a, &u, &tls, &cfg, &err) != AN_OK)
		rc = st->err.code;
	else if (read_auth(&u, tls, &cfg, &a->external, &err) < 0 ||
		an_url_prefix(&u, &prefix, &err) < 0 ||
		an_url_int(&u, "slot_ttl_ms", AMQP_TTL_DEFAULT_MS, 1000, AMQP_TTL_MAX_MS, &a->ttl_ms, &err) < 0 ||
		an_url_int(&u, "timeout_ms", AMQP_TIMEOUT_DEFAULT_MS, 1, 600000, &a->timeout_ms, &err) < 0 ||
		an_url_durability(&u, &a->accept_loss, &err) < 0 ||
		an_url_skew(&u, &a->skew_ms, &err) < 0 ||
		an_url_int(&u, "settle_ms", a->accept_loss ? 0 : AMQP_SETTLE_SAFE_MS, 0, AMQP_SETTLE_MAX_MS,
				   &a->settle_ms, &err) < 0 ||
		/* PLAIN sends the password as it is: a default guest is no secret. */
		(plain = an_url_plaintext_auth(&u, tls, u.password ? "password" : NULL, &err)) != 0 ||
		an_url_no_unknown(&u, AMQP_KNOWN, &err) < 0)
	{
		rc = an_store_adopt(st, AN_E_CONFIG, &err);
		if (plain == 1)
			an_store_hintf(st, "%s", AN_PLAINTEXT_AUTH_HINT);
	}
	else if (a->settle_ms >= a->ttl_ms)
		rc = an_store_fail(st, AN_E_CONFIG,
						   "store URL parameter settle_ms (%lld) must be shorter than slot_ttl_ms (%lld): the gate queue would expire while a won claim settles",
						   (long long) a->settle_ms, (long long) a->ttl_ms);
	else if (a->settle_ms < AMQP_SETTLE_SAFE_MS && !a->accept_loss)
	{
		rc = an_store_fail(st, AN_E_CONFIG,
						   "store URL parameter settle_ms is %lld: a won claim that settles less than %d ms can lose its gate when the broker crashes right after, and the slot can then be won a second time",
						   (long long) a->settle_ms, AMQP_SETTLE_SAFE_MS);
		an_store_hintf(st, "Leave settle_ms at its default (%d), or add durability=accept-loss to the store URL to take the risk.",
					   AMQP_SETTLE_SAFE_MS);
	}
	else
	{
		/* No path, or an empty one, means the default virtual host "/" (write %2F to be explicit). */
		snprintf(a->prefix, sizeof(a->prefix), "%s", prefix);
		a->nodes.n = u.nservers;
		for (int i = 0; i < u.nservers; i++)
		{
			a->port[i] = u.servers[i].port ? u.servers[i].port : tls ? AMQPS_DEFAULT_PORT : AMQP_DEFAULT_PORT;
			if ((a->host[i] = strdup(u.servers[i].host)) == NULL)
				rc = an_store_fail(st, AN_E_NOMEM, "out of memory");
		}
		a->vhost = dup_or(u.path && *u.path ? u.path : NULL, "/");
		a->user = dup_or(u.user, "guest");
		a->password = dup_or(u.password, "guest");
		if (!a->vhost || !a->user || !a->password)
			rc = an_store_fail(st, AN_E_NOMEM, "out of memory");
	}
	an_url_free(&u);
	return rc;
}

/*
 * Connect to a node of the URL: the last that answered first, then the
 * others in turn, each with its share of the time left, so that a frozen
 * node (whose kernel still accepts the connection) cannot use up the call.
 * A refused login or virtual host is the same on every node: no use going on.
 */
static int
try_node(an_store *st, void *ctx, int i, const an_deadline *share)
{
	amqp_store *a = ctx;
	amqp_login_info li = {a->host[i], a->port[i], a->vhost, a->user, a->password, a->tls, a->external};

	return amqp_link_open(st, &a->link, &li, share);
}

static int
connect_node(an_store *st, amqp_store *a, const an_deadline *d)
{
	return an_rotate(st, &a->nodes, d, AN_ROTATE_ONLY_NET, try_node, a, a->link.who, "node");
}

/*
 * Connected, with a confirm channel open; reused from call to call.  A new
 * connection first checks the prefix's format marker (amqp_format.c), before
 * anything is decided on it; a refusal closes the connection again, so every
 * call asks and is refused until the prefix is one this host may use.
 */
static int
ready(an_store *st, amqp_store *a, const an_deadline *d)
{
	if (!amqp_link_connected(&a->link))
	{
		if (connect_node(st, a, d) != AN_OK)
			return st->err.code;
		if (amqp_format_check(st, &a->link, a->prefix, a->vhost, a->ttl_ms, d) != AN_OK)
		{
			amqp_link_close(&a->link);
			return st->err.code;
		}
	}
	return amqp_link_channel(st, &a->link, d);
}

static void
gate_name(const amqp_store *a, const an_request *rq, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s.%s.slot.%lld", a->prefix, rq->job, (long long) rq->slot);
}

/*
 * Declare the gate (passive: only look it up).  A passive declare of a
 * missing queue answers with channel error 404: *exists = 0.
 */
static int
declare_gate(an_store *st, amqp_store *a, const an_deadline *d, const char *gate,
			 int passive, int *exists)
{
	amqp_table_entry_t args[3];
	amqp_queue_declare_t q;
	int			rc;

	memset(&q, 0, sizeof(q));
	args[0].key = amqp_cstring_bytes("x-max-length");
	args[0].value.kind = AMQP_FIELD_KIND_I64;
	args[0].value.value.i64 = 1;
	args[1].key = amqp_cstring_bytes("x-overflow");
	args[1].value.kind = AMQP_FIELD_KIND_UTF8;
	args[1].value.value.bytes = amqp_cstring_bytes("reject-publish");
	args[2].key = amqp_cstring_bytes("x-expires");
	args[2].value.kind = AMQP_FIELD_KIND_I64;
	args[2].value.value.i64 = a->ttl_ms;
	q.queue = amqp_cstring_bytes(gate);
	q.passive = passive;
	q.durable = 1;				/* a broker restart keeps the gate, and its claim */
	if (!passive)
	{
		q.arguments.num_entries = 3;
		q.arguments.entries = args;
	}
	*exists = 0;
	rc = amqp_link_rpc(st, &a->link, d, "the gate queue's declaration", AMQP_QUEUE_DECLARE_METHOD, &q,
					   AMQP_QUEUE_DECLARE_OK_METHOD, NULL);
	if (rc == AN_OK)
	{
		*exists = 1;
		return AN_OK;
	}
	if (passive && a->link.last_code == 404)
	{
		an_store_clear(st);
		return AN_OK;
	}
	if (rc == AN_E_STORE && a->link.last_code == 404 && strstr(st->err.msg, "is down or inaccessible"))
	{
		/* A node down or recovering: "try again", not an error of the broker's (doc/cli.md). */
		st->err.code = rc = AN_E_BUSY;
		an_store_hintf(st, "The gate of this slot lives on a cluster node that is down, or not yet recovered after a restart: the slot is decided there, so its claims are errors until that node is back (doc/clusters.md). Send the claim again.");
	}
	if (rc == AN_E_CONFIG)
	{
		char		why[AN_ERRMAX];

		snprintf(why, sizeof(why), "%s", st->err.msg);
		an_store_fail(st, AN_E_CONFIG,
					  "the gate queue %s exists with other arguments than this instance's",
					  gate);
		an_store_detailf(st, "RabbitMQ answered: %s.", why);
		/* The gate is the slot's one place: refused, the claim is decided nowhere else. */
		an_store_hintf(st, "Give every instance the same slot_ttl_ms: the one its prefix's format marker records (doc/stores-amqp-nats.md). The gate decides its slot whatever slot_ttl_ms declared it, so this claim is refused, never won a second time.");
	}
	return rc;
}

/* The part of open that needs no server: allocate the store and read its URL. */
static int
prepare(an_store *st, const char *url)
{
	amqp_store *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	st->impl = a;
	return parse_url(st, a, url);
}

static int
amqp_open(an_store *st, const char *url, void *arg)
{
	amqp_store *a;
	an_deadline d;

	(void) arg;
	if (prepare(st, url) != AN_OK)
		return st->err.code;
	a = st->impl;
	an_deadline_start(&d, a->timeout_ms);
	return ready(st, a, &d);
}

static int
amqp_validate(an_store *st, const an_settings *s)
{
	amqp_store *a = st->impl;

	if (an_wonlost_refuse_replace(st, "the amqp store", s) != AN_OK)
		return st->err.code;
	return an_wonlost_memory_ok(st, "slot_ttl_ms (how long a gate queue outlives its last claim)",
								"slot_ttl_ms", a->ttl_ms, a->skew_ms, s);
}

/*
 * A won claim settles (see the top of this file): wait until settle_ms have
 * passed since the gate's declaration was confirmed, then look for the gate
 * on the same connection.  *kept = 1 when it is still there; 0 when the
 * connection or the gate is gone (the broker went away meanwhile and may
 * have forgotten it).  Never reconnects: a new connection would not tell.
 */
static int
settle(an_store *st, amqp_store *a, const char *gate, int64_t declared_at, int *kept)
{
	an_deadline d;

	*kept = 0;
	if (an_wait_until(st, declared_at + a->settle_ms, a->link.who, "write the gate queue to disk") != AN_OK)
		return st->err.code;
	if (!amqp_link_connected(&a->link))
		return AN_OK;
	an_deadline_start(&d, a->timeout_ms);
	if (amqp_link_channel(st, &a->link, &d) != AN_OK ||
		declare_gate(st, a, &d, gate, 1, kept) != AN_OK)
	{
		if (st->err.code == AN_E_CANCELED)
			return st->err.code;
		an_store_clear(st);
		*kept = 0;
	}
	return AN_OK;
}

/*
 * RabbitMQ 4, just after a restart, answers a declaration of a durable queue
 * it has not started again with 404 "home node ... is down or inaccessible".
 * Nothing was published, so the declaration may be asked again: after a
 * short wait, while the claim's time lasts.  Returns 1 (error cleared) to
 * ask again, 0 to keep the error.
 */
static int
recovering(an_store *st, amqp_store *a, const an_deadline *d)
{
	int64_t		until = an_mono_ms() + AN_WAIT_SLICE_MS;

	if ((st->err.code != AN_E_STORE && st->err.code != AN_E_BUSY) || a->link.last_code != 404 || an_deadline_left(d) <= AN_WAIT_SLICE_MS)
		return 0;
	an_store_clear(st);
	if (an_wait_until(st, until, a->link.who, "recover the gate queue after a restart") != AN_OK)
		return 0;
	return 1;
}

static int
amqp_claim(an_store *st, const an_request *rq, an_claim_result *res)
{
	amqp_store *a = st->impl;
	an_deadline d;
	char		gate[256];
	char		body[AN_JOB_MAX + AN_TOKEN_MAX + 64];
	int64_t		declared_at;
	int			acked;
	int			exists;

	memset(res, 0, sizeof(*res));
	if (an_wonlost_late(st, rq))
	{
		res->outcome = AN_LATE;
		return AN_OK;
	}
	an_deadline_start(&d, a->timeout_ms);
	gate_name(a, rq, gate, sizeof(gate));
	for (int tries = 0;;)
	{
		int			reused = amqp_link_connected(&a->link);

		if (ready(st, a, &d) != AN_OK)
			return st->err.code;
		if (declare_gate(st, a, &d, gate, 0, &exists) == AN_OK)
			break;
		if (recovering(st, a, &d))
			continue;
		/*
		 * A kept connection found broken (e.g. the broker restarted since
		 * the last call): nothing was published yet, so connect again once.
		 */
		if (!an_resend_once(st, st->err.code, reused, &tries))
			return st->err.code;
	}
	declared_at = an_mono_ms();
	snprintf(body, sizeof(body), "{\"job\":\"%s\",\"slot\":%lld,\"token\":\"%s\"}",
			 rq->job, (long long) rq->slot, rq->token);
	if (amqp_link_publish(st, &a->link, &d, gate, body, &acked) != AN_OK)
	{
		/*
		 * Published, but no confirm: the claim may or may not be in the gate.
		 * Answer lost, so at most one instance runs; a cancel stays an error.
		 */
		if (st->err.code == AN_E_CANCELED)
			return st->err.code;
		/*
		 * Except a publish the broker refused (403: the user may not write to
		 * the default exchange): the right is checked before the message is
		 * routed, so it is in no gate.  Every instance would answer lost for
		 * ever and nobody run the job: an error that says why instead.
		 */
		if (st->err.code == AN_E_AUTH && a->link.last_code == 403)
		{
			an_store_detailf(st, "The user may declare the gate queues but not publish to them: no claim was made.");
			return an_store_hintf(st, "Give the user write permission on the default exchange of the virtual host, e.g. rabbitmqctl set_permissions -p VHOST USER '^%s\\.' '^amq\\.default$' '^%s\\.'.",
								  a->prefix, a->prefix);
		}
		an_store_clear(st);
		acked = 0;
	}
	if (acked && a->settle_ms > 0 && settle(st, a, gate, declared_at, &acked) != AN_OK)
		return st->err.code;
	res->outcome = acked ? AN_WON : AN_LOST;
	res->attempt = acked ? 1 : 0;	/* as every won/lost store: a won claim is attempt 1 */
	an_claims_put(&a->claims, rq->job, rq->slot, rq->token, 0, acked);
	return AN_OK;
}

/*
 * Does this token own the run?  RabbitMQ cannot say whose claim fills a gate,
 * so only what this session saw can be answered: its own won claim (owned
 * while the gate still exists), a claim it saw another token win, or a claim
 * of this token that lost.  Anything else is unknown here, and an error says
 * so rather than a false that would read as "fenced".
 */
static int
find_run(an_store *st, const an_request *rq, char *winner, int *found)
{
	amqp_store *a = st->impl;
	an_claim_memo *m = an_claims_get(&a->claims, rq->job, rq->slot);
	int			ours = m && strcmp(m->token, rq->token) == 0;
	an_deadline d;
	char		gate[256];

	*found = 0;
	if (m == NULL || (!m->won && !ours))
		return an_store_fail(st, AN_E_UNSUPPORTED,
							 "RabbitMQ cannot tell whose claim holds a run: heartbeat and finish answer only on the "
							 "database connection that made the claim (this one did not claim %s at slot %lld with this token)",
							 rq->job, (long long) rq->slot);
	/* A claim of ours that lost: someone else's run, whose token is not known here. */
	*found = 1;
	if (!m->won || !ours)
	{
		snprintf(winner, AN_TOKEN_MAX + 1, "%s", m->won ? m->token : "");
		return AN_OK;
	}
	an_deadline_start(&d, a->timeout_ms);
	gate_name(a, rq, gate, sizeof(gate));
	if (ready(st, a, &d) != AN_OK || declare_gate(st, a, &d, gate, 1, found) != AN_OK)
		return st->err.code;
	snprintf(winner, AN_TOKEN_MAX + 1, "%s", rq->token);
	return AN_OK;
}

/* The status this session's finish gave: RabbitMQ itself keeps none. */
static int
run_status(an_store *st, const an_request *rq, an_run_state *state)
{
	amqp_store *a = st->impl;
	an_claim_memo *m = an_claims_get(&a->claims, rq->job, rq->slot);

	*state = m && m->finished != AN_RUN_NONE ? m->finished : AN_RUN_RUNNING;
	return AN_OK;
}

/*
 * finish records nothing in RabbitMQ (the gate stays full until it
 * expires); the session remembers the status, so that a finish sent again
 * answers as on the other stores: true for the same status, false for
 * another, and a later heartbeat false.
 */
static int
run_record(an_store *st, const an_request *rq, an_run_state status, int *recorded)
{
	amqp_store *a = st->impl;
	an_claim_memo *m = an_claims_get(&a->claims, rq->job, rq->slot);

	*recorded = m && m->finished == AN_RUN_NONE;
	if (*recorded)
		m->finished = status;
	return AN_OK;
}

static const an_wonlost_run_ops run_ops = {find_run, run_status, run_record};

static int
amqp_heartbeat(an_store *st, const an_request *rq, int *owned)
{
	return an_wonlost_heartbeat(st, &run_ops, rq, owned);
}

static int
amqp_finish(an_store *st, const an_request *rq, an_run_state status, int *owned)
{
	return an_wonlost_finish(st, &run_ops, rq, status, owned);
}

/*
 * check asks only whether the gate is still there, from any session: a
 * status lives only in the memory of the session that finished the run, so
 * check does not go through the won/lost table's read-back of it.
 */
static int
amqp_check(an_store *st, const an_request *rq, an_check_result *res)
{
	amqp_store *a = st->impl;
	an_deadline d;
	char		gate[256];
	int			exists;

	memset(res, 0, sizeof(*res));
	an_deadline_start(&d, a->timeout_ms);
	gate_name(a, rq, gate, sizeof(gate));
	if (ready(st, a, &d) != AN_OK || declare_gate(st, a, &d, gate, 1, &exists) != AN_OK)
		return st->err.code;
	res->state = exists ? AN_CHECK_RUNNING : AN_CHECK_NONE;
	return AN_OK;
}

static void
wipe_free(char *s)
{
	if (s)
	{
		memset(s, 0, strlen(s));
		free(s);
	}
}

/* close: also after a failed open; the password is wiped before it is freed. */
static void
amqp_close(an_store *st)
{
	amqp_store *a = st->impl;

	if (a == NULL)
		return;
	amqp_link_close(&a->link);
	an_conn_tls_free(a->tls);
	for (int i = 0; i < a->nodes.n; i++)
		free(a->host[i]);
	free(a->vhost);
	free(a->user);
	wipe_free(a->password);
	free(a);
	st->impl = NULL;
}

/* check_url: what open would refuse in the URL, without connecting. */
static int
amqp_check_url(an_store *st, const char *url)
{
	int			rc = prepare(st, url);

	amqp_close(st);
	return rc;
}

const an_store_methods an_amqp_methods = {
	.version = AN_STORE_VERSION,
	.name = "amqp",
	.open = amqp_open,
	.claim = amqp_claim,
	.heartbeat = amqp_heartbeat,
	.finish = amqp_finish,
	.check = amqp_check,
	.validate = amqp_validate,
	.close = amqp_close,
	.check_url = amqp_check_url,
	.caps = AN_CAP_SESSION_OWNER,    /* find_run, above */
};
