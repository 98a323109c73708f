/*
 * nats.c — the NATS JetStream store: a claim is a de-duplicated publish.
 *
 *   nats://[token@]host[:port][,host[:port]...]?stream=CRON&prefix=cron&duplicate_window_ms=120000&timeout_ms=2000&replicas=1
 *   tls://[user:password@]host[:port]?ca=...&creds=/path/user.creds
 *
 * tls:// (or any TLS parameter on nats://) asks for TLS; nats:// takes it
 * when the server requires it.  Credentials: user:password@, token@,
 * nkey=<seed file> or creds=<creds file> (nats_auth.h).
 *
 * Every instance publishes its claim of (job, slot) to <prefix>.<job>.claims
 * with the header Nats-Msg-Id: <job>:<slot>.  The stream keeps the first
 * copy and answers every later one, within its duplicate window, with
 * "duplicate" and the first copy's sequence.  Not a duplicate: won.  A
 * duplicate: read the stored copy and compare it with ours; the same token
 * means this is our own claim sent again (won), another token means lost.
 *
 * Subjects: a job name may contain '.', which would add subject tokens (and
 * escape a <prefix>.*.claims filter), so it is written as "%2E" inside
 * subjects; the Msg-Id and the message body keep the job name as given.
 * Job names cannot contain '*', '>' or spaces (the host validates them).
 *
 * There is no lease.  heartbeat, finish and check read the stored claim and
 * the run's finish status (a message on <prefix>.<job>.status): see
 * doc/stores-amqp-nats.md for exactly what each answers.
 *
 * The protocol is spoken by nats_link.c, which keeps no process-wide state:
 * a forked child connects anew (fork.h).  A URL may name the servers of a
 * cluster: the link connects to the first that answers, and to another when
 * its server is gone.  replicas=N creates the stream with N replicas and
 * refuses an existing stream with fewer (doc/clusters.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format_marker.h"
#include "nats_json.h"
#include "nats_link.h"
#include "session_claims.h"
#include "wonlost.h"
#include "remote.h"
#include "url.h"

#define NATS_DEFAULT_PORT 4222
#define NATS_WINDOW_DEFAULT_MS 120000
#define NATS_TIMEOUT_DEFAULT_MS 2000
#define NATS_KNOWN "stream, prefix, duplicate_window_ms, timeout_ms, durability, max_skew_ms, replicas, nkey, creds, tls_handshake_first, plaintext_auth, " AN_URL_TLS_PARAMS
#define NATS_REPLICAS_MAX 5     /* JetStream's own limit */
/* Stream history is kept this long, or the duplicate window if longer. */
#define NATS_MAX_AGE_MS INT64_C(604800000)

/* Room for the body of a claim or status message; every byte is JSON-safe. */
#define BODY_MAX (AN_JOB_MAX + AN_TOKEN_MAX + 128)
/* A claim's subject: the prefix, the job (each byte may take 3 to encode), the slot, the kind. */
#define SUBJECT_MAX (AN_JOB_MAX * 3 + 96)

/* The JetStream API errors the store acts on (the "err_code" of an answer). */
enum
{
	JS_NO_MESSAGE = 10037,       /* STREAM.MSG.GET: none stored (or aged out) */
	JS_STREAM_NAME_IN_USE = 10058,	/* STREAM.CREATE: exists with another config */
	JS_STREAM_NOT_FOUND = 10059,
	JS_SUBJECTS_OVERLAP = 10065, /* STREAM.CREATE: another stream takes them */
	JS_REPLICAS_UNSUPPORTED = 10074 /* STREAM.CREATE: replicas > 1 on a lone server */
};

typedef struct nats_store
{
	char	   *hosts[AN_URL_MAX_SERVERS];
	int			ports[AN_URL_MAX_SERVERS];
	int			nservers;
	int64_t		replicas;        /* replicas=: of a stream created, at least of one found */
	nats_auth	auth;            /* the credentials, read at open */
	char	   *tls_strs[4];     /* copies of the TLS parameters: ca, cert, key, servername */
	char		prefix[65];
	char		stream[65];
	int64_t		window_ms;       /* from the URL: used when creating the stream */
	int64_t		timeout_ms;
	int			accept_loss;     /* durability=accept-loss: a memory stream is allowed */
	int64_t		skew_ms;         /* max_skew_ms: how far apart the instances' clocks may be */
	int			have_stream;     /* the stream was found or created */
	int64_t		stream_window_ms;	/* the stream's actual duplicate window */
	nats_link	link;
	an_claims	claims;
	an_deadline claim_deadline;	/* of the claim in progress */
	an_deadline run_deadline;	/* of the heartbeat, finish or check in progress */
	int64_t		claim_seq;       /* the stream sequence of its stored claim, 0 when unknown */
} nats_store;

/* A stream name: what JetStream allows in API subjects. */
static int
valid_stream(const char *s)
{
	size_t		n = strlen(s);

	if (n == 0 || n > 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
			  (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

/* A boolean URL parameter: true or false, def when absent. */
static int
url_bool(an_url *u, const char *name, int def, int *out, an_err *err)
{
	const char *v = an_url_param(u, name);

	*out = def;
	if (v == NULL)
		return 0;
	if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
	{
		an_errf(err, "store URL parameter %s must be true or false", name);
		return -1;
	}
	*out = strcmp(v, "true") == 0;
	return 0;
}

/* Keep the TLS settings of the URL (whose strings die with it) in the link. */
static int
keep_tls(an_store *st, nats_store *n, const an_tls_config *cfg)
{
	const char *from[4] = {cfg->ca, cfg->cert, cfg->key, cfg->servername};
	const char **to[4] = {&n->link.tlscfg.ca, &n->link.tlscfg.cert, &n->link.tlscfg.key, &n->link.tlscfg.servername};

	n->link.tlscfg.insecure = cfg->insecure;
	for (int i = 0; i < 4; i++)
	{
		if (from[i] == NULL)
			continue;
		if ((n->tls_strs[i] = strdup(from[i])) == NULL)
			return an_store_fail(st, AN_E_NOMEM, "out of memory");
		*to[i] = n->tls_strs[i];
	}
	return AN_OK;
}

static int
parse_url(an_store *st, nats_store *n, const char *url, int read_files)
{
	an_url		u;
	const char *prefix;
	const char *stream;
	const char *nkey;
	const char *creds;
	an_tls_config tls;
	int			tls_any;
	int			plain = 0;
	char		redacted[128];
	an_err		err;
	int			rc = AN_OK;

	nats_link_init(&n->link);
	if (an_url_parse(url, &u, &err) < 0)
		return an_store_adopt(st, AN_E_CONFIG, &err);
	an_url_name(&u, redacted, sizeof(redacted));
	snprintf(n->link.who, sizeof(n->link.who), "NATS at %s", redacted);
	stream = an_url_param(&u, "stream");
	nkey = an_url_param(&u, "nkey");
	creds = an_url_param(&u, "creds");
	n->link.tls_want = strcmp(u.scheme, "tls") == 0;
	if (u.path && *u.path)
		rc = an_store_fail(st, AN_E_CONFIG, "NATS store URL must not have a path: expected %s://[token@]host[:port]?stream=...", u.scheme);
	else if (an_url_tls(&u, 1, &tls, &tls_any, &err) < 0 ||
			 url_bool(&u, "tls_handshake_first", 0, &n->link.tls_first, &err) < 0 ||
			 an_url_prefix(&u, &prefix, &err) < 0 ||
			 an_url_int(&u, "duplicate_window_ms", NATS_WINDOW_DEFAULT_MS, 1000,
						INT64_C(31536000000), &n->window_ms, &err) < 0 ||
			 an_url_int(&u, "timeout_ms", NATS_TIMEOUT_DEFAULT_MS, 1, 600000,
						&n->timeout_ms, &err) < 0 ||
			 an_url_durability(&u, &n->accept_loss, &err) < 0 ||
			 an_url_skew(&u, &n->skew_ms, &err) < 0 ||
			 an_url_int(&u, "replicas", 1, 1, NATS_REPLICAS_MAX, &n->replicas, &err) < 0 ||
			 (plain = an_url_plaintext_auth(&u, n->link.tls_want || tls_any || n->link.tls_first,
											u.password ? "user and password" : u.user ? "token" : NULL,
											&err)) != 0 ||
			 an_url_no_unknown(&u, NATS_KNOWN, &err) < 0)
	{
		rc = an_store_adopt(st, AN_E_CONFIG, &err);
		if (plain == 1)
			an_store_hintf(st, "%s", AN_PLAINTEXT_AUTH_HINT);
	}
	else if (stream && !valid_stream(stream))
		rc = an_store_fail(st, AN_E_CONFIG, "NATS store URL parameter stream must be 1 to 64 bytes of letters, digits, '_' and '-'");
	else if ((nkey && !*nkey) || (creds && !*creds))
		rc = an_store_fail(st, AN_E_CONFIG, "NATS store URL parameter %s must not be empty", nkey && !*nkey ? "nkey" : "creds");
	else if (u.password && !u.user)
		rc = an_store_fail(st, AN_E_CONFIG, "NATS store URL has a password without a user: expected user:password@ or token@");
	if (rc == AN_OK)
	{
		/* TLS parameters or handshake first mean TLS, as tls:// does. */
		n->link.tls_want |= tls_any || n->link.tls_first;
		rc = keep_tls(st, n, &tls);
	}
	if (rc == AN_OK)
	{
		snprintf(n->prefix, sizeof(n->prefix), "%s", prefix);
		snprintf(n->stream, sizeof(n->stream), "%s", stream ? stream : "CRON");
		for (int i = 0; i < u.nservers && rc == AN_OK; i++)
		{
			n->ports[i] = u.servers[i].port ? u.servers[i].port : NATS_DEFAULT_PORT;
			if ((n->hosts[i] = strdup(u.servers[i].host)) == NULL)
				rc = an_store_fail(st, AN_E_NOMEM, "out of memory");
			n->nservers = i + 1;
		}
		n->link.hosts = (const char *const *) n->hosts;
		n->link.ports = n->ports;
		n->link.rot.n = n->nservers;
	}
	if (rc == AN_OK)
		rc = nats_auth_load(st, &n->auth, n->link.who, u.user, u.password, nkey, creds, read_files);
	n->link.auth = &n->auth;
	an_url_free(&u);
	return rc;
}

/* <prefix>.<job with '.' as %2E>.<kind>: always three subject tokens. */
static void
subject_of(const nats_store *n, const char *job, const char *kind, char *out, size_t outlen)
{
	size_t		w = (size_t) snprintf(out, outlen, "%s.", n->prefix);

	for (const char *c = job; *c && w + 4 < outlen; c++)
	{
		if (*c == '.')
		{
			memcpy(out + w, "%2E", 3);
			w += 3;
		}
		else
			out[w++] = *c;
	}
	snprintf(out + w, outlen - w, ".%s", kind);
}

/* Is body (a claim or a status) about the run (rq->job, rq->slot)? */
static int
is_run(const char *body, const an_request *rq)
{
	char		prefix[AN_JOB_MAX + 48];

	snprintf(prefix, sizeof(prefix), "{\"job\":\"%s\",\"slot\":%lld,", rq->job, (long long) rq->slot);
	return strncmp(body, prefix, strlen(prefix)) == 0;
}

static void
claim_body(const an_request *rq, char *out, size_t outlen)
{
	snprintf(out, outlen, "{\"job\":\"%s\",\"slot\":%lld,\"token\":\"%s\"}",
			 rq->job, (long long) rq->slot, rq->token);
}

/*
 * The token of the run rq's stored claim body into token: "" unless the body
 * is exactly the claim that token would have sent for this run.
 */
static void
stored_token(const char *stored, const an_request *rq, char *token)
{
	an_request	them = *rq;
	char		body[BODY_MAX];

	if (nj_str(stored, "token", token, AN_TOKEN_MAX + 1) < 0)
		token[0] = '\0';
	them.token = token;
	claim_body(&them, body, sizeof(body));
	if (strcmp(body, stored) != 0)
		token[0] = '\0';
}

/* An {"error":{...}} answer of JetStream: fail st with its description. */
static int
api_error(an_store *st, nats_store *n, const char *reply, const char *what)
{
	char		desc[200] = "";
	int64_t		code = 0;

	nj_str(reply, "description", desc, sizeof(desc));
	nj_int(reply, "err_code", &code);
	/*
	 * JetStream's cluster between leaders (10008 "temporarily unavailable",
	 * 10009 "can not handle request", 10004 "incomplete results"): it ends
	 * by itself, so "try again" (doc/cli.md), not an error of the server's.
	 */
	return an_store_fail(st, code == 10004 || code == 10008 || code == 10009 ? AN_E_BUSY : AN_E_STORE,
						 "%s refused %s: %s (error %lld)", n->link.who, what, desc, (long long) code);
}

static int
is_error(const char *reply, int64_t *err_code)
{
	*err_code = 0;
	if (strstr(reply, "\"error\":") == NULL)
		return 0;
	nj_int(reply, "err_code", err_code);
	return 1;
}

static const char *no_js = "JetStream did not answer: is the server started with JetStream enabled (-js)?";

/* Ask JetStream's API; answers JSON in *reply (free it). */
static int
api(an_store *st, nats_store *n, const an_deadline *d, const char *what,
	const char *verb, const char *body, char **reply)
{
	char		subj[128];

	snprintf(subj, sizeof(subj), "$JS.API.%s.%s", verb, n->stream);
	return nats_link_request(st, &n->link, d, what, subj, NULL, body, no_js, reply);
}

/*
 * Read the stream's subjects, storage and duplicate window from an
 * INFO/CREATE answer.  A stream in memory forgets every claim when the
 * server stops or crashes: refused unless the URL accepts that.
 */
static int
check_stream(an_store *st, nats_store *n, const char *reply)
{
	char		want[80];
	char		want_escaped[80];
	char		storage[16] = "";
	int64_t		window_ns;
	int64_t		replicas;

	/* The server's JSON encoder may write '>' as \u003e. */
	snprintf(want, sizeof(want), "\"%s.>\"", n->prefix);
	snprintf(want_escaped, sizeof(want_escaped), "\"%s.\\u003e\"", n->prefix);
	if (strstr(reply, want) == NULL && strstr(reply, want_escaped) == NULL)
	{
		an_store_fail(st, AN_E_CONFIG, "NATS stream %s exists but does not take the subjects %s.>",
					  n->stream, n->prefix);
		return an_store_hintf(st, "Use another stream= or prefix= in the store URL, or add the subject to the stream.");
	}
	if (nj_int(reply, "duplicate_window", &window_ns) < 0)
		return an_store_fail(st, AN_E_STORE, "%s sent stream information for %s without a duplicate window",
							 n->link.who, n->stream);
	nj_str(reply, "storage", storage, sizeof(storage));
	if (strcmp(storage, "memory") == 0 && !n->accept_loss)
	{
		an_store_fail(st, AN_E_CONFIG,
					  "NATS stream %s keeps its messages in memory (storage memory): a restart or crash of the server forgets every claim, and a forgotten slot can be won a second time",
					  n->stream);
		return an_store_hintf(st, "Use a stream with file storage (anarchon creates one when the stream does not exist), or add durability=accept-loss to the store URL to take the risk.");
	}
	if (nj_int(reply, "num_replicas", &replicas) < 0)
		replicas = 1;
	if (replicas < n->replicas)
	{
		an_store_fail(st, AN_E_CONFIG,
					  "NATS stream %s has %lld replica%s, and the store URL asks for replicas=%lld: a claim on it would not survive the loss of its server",
					  n->stream, (long long) replicas, replicas == 1 ? "" : "s", (long long) n->replicas);
		return an_store_hintf(st, "Give the stream more replicas (nats stream edit %s --replicas %lld), use another stream=, or lower replicas= in the URL.",
							  n->stream, (long long) n->replicas);
	}
	n->stream_window_ms = window_ns / 1000000;
	n->have_stream = 1;
	return AN_OK;
}

static int
create_stream(an_store *st, nats_store *n, const an_deadline *d, char **reply)
{
	char		cfg[512];
	int64_t		age = n->window_ms > NATS_MAX_AGE_MS ? n->window_ms : NATS_MAX_AGE_MS;

	/* File storage: a server restart keeps the claims and their Msg-Ids. */
	snprintf(cfg, sizeof(cfg),
			 "{\"name\":\"%s\",\"subjects\":[\"%s.>\"],\"retention\":\"limits\",\"storage\":\"file\","
			 "\"num_replicas\":%lld,\"discard\":\"old\",\"max_age\":%lld,\"duplicate_window\":%lld}",
			 n->stream, n->prefix, (long long) n->replicas, (long long) age * 1000000,
			 (long long) n->window_ms * 1000000);
	return api(st, n, d, "the stream creation", "STREAM.CREATE", cfg, reply);
}

/*
 * The server refused to create our stream because its subjects overlap
 * another stream's (10065).  JetStream lets one stream only take a subject,
 * so the claims of our prefix are decided in that stream: a second stream
 * would be a second place, and the server already refuses it.  Name the
 * stream that decides, so the fix is plain.
 */
static int
overlap_error(an_store *st, nats_store *n, const an_deadline *d)
{
	static const char key[] = "\"streams\":[\"";
	char		req[96];
	char		other[72] = "";
	char	   *reply = NULL;
	const char *p;

	snprintf(req, sizeof(req), "{\"subject\":\"%s.>\"}", n->prefix);
	if (nats_link_request(st, &n->link, d, "the stream names request", "$JS.API.STREAM.NAMES",
						  NULL, req, no_js, &reply) == AN_OK &&
		(p = strstr(reply, key)) != NULL)
	{
		size_t		len = strcspn(p + sizeof(key) - 1, "\"");

		if (len < sizeof(other))
			snprintf(other, sizeof(other), "%.*s", (int) len, p + sizeof(key) - 1);
	}
	free(reply);
	if (other[0] == '\0')
		snprintf(other, sizeof(other), "another stream");
	an_store_fail(st, AN_E_CONFIG,
				  "NATS stream %s cannot take the subjects %s.>: %s%s takes them, so the claims of prefix %s are decided there, and the server refuses a second stream over the same subjects",
				  n->stream, n->prefix, strcmp(other, "another stream") ? "stream " : "", other, n->prefix);
	return an_store_hintf(st, "Use the stream that decides prefix %s (stream=%s), as the other instances do.  A stream of its own needs a prefix= of its own, which is another place: move to it only as doc/stores-amqp-nats.md says (\"One place decides\").",
						  n->prefix, strcmp(other, "another stream") ? other : "...");
}

/*
 * Find the stream, or create it when missing; learn its duplicate window.
 * A stream is never created with a window shorter than max_late_ms: fixing
 * that afterwards would need the stream to be edited by hand.
 */
static int	format_check(an_store *st, nats_store *n, const an_deadline *d);

static int
ensure_stream(an_store *st, nats_store *n, const an_deadline *d, const an_settings *s)
{
	char	   *reply = NULL;
	an_settings def;
	int64_t		code;
	int			rc;

	if (n->have_stream)
		return AN_OK;
	if (s == NULL)
	{
		an_settings_default(&def);
		s = &def;
	}
	rc = api(st, n, d, "the stream information request", "STREAM.INFO", "", &reply);
	if (rc == AN_OK && is_error(reply, &code) && code == JS_STREAM_NOT_FOUND)
	{
		free(reply);
		reply = NULL;
		if (an_wonlost_memory_ok(st, "the duplicate window (duplicate_window_ms)", "duplicate_window_ms",
								 n->window_ms, n->skew_ms, s) != AN_OK)
			return st->err.code;
		rc = create_stream(st, n, d, &reply);
		/*
		 * Another instance created it meanwhile: read it.  The server says
		 * so with 10058 (name in use), or with 10065 (subjects overlap) when
		 * the other creation is still under way; check_stream then judges
		 * what was made, and an overlap with a stream of another name is
		 * reported below as the server put it.
		 */
		if (rc == AN_OK && is_error(reply, &code) && (code == JS_STREAM_NAME_IN_USE || code == JS_SUBJECTS_OVERLAP))
		{
			char	   *info = NULL;
			int64_t		info_code;

			rc = api(st, n, d, "the stream information request", "STREAM.INFO", "", &info);
			if (rc != AN_OK || code == JS_STREAM_NAME_IN_USE || !is_error(info, &info_code))
			{
				free(reply);
				reply = info;
			}
			else
				free(info);		/* no stream of ours: the overlap is the answer */
		}
	}
	if (rc == AN_OK && is_error(reply, &code))
	{
		rc = code == JS_SUBJECTS_OVERLAP ? overlap_error(st, n, d) : api_error(st, n, reply, "the stream set-up");
		if (code == JS_REPLICAS_UNSUPPORTED)
			an_store_hintf(st, "replicas=%lld needs a JetStream cluster of at least %lld servers, and this one "
						   "runs alone: name the cluster's servers in the store URL, or lower replicas= "
						   "(1 for a single server).", (long long) n->replicas, (long long) n->replicas);
	}
	if (rc == AN_OK)
		rc = check_stream(st, n, reply);
	free(reply);
	if (rc == AN_OK && (rc = format_check(st, n, d)) != AN_OK)
		n->have_stream = 0;		/* refused: judged again at the next call */
	return rc;
}

/* Connected, with the stream known: the start of every call. */
static int
ready(an_store *st, nats_store *n, const an_deadline *d, const an_settings *s)
{
	if (nats_link_connect(st, &n->link, d) != AN_OK)
		return st->err.code;
	return ensure_stream(st, n, d, s);
}

/*
 * The part of open that needs no server: allocate the store and read its
 * URL, and the credentials' files when read_files.
 */
static int
prepare(an_store *st, const char *url, int read_files)
{
	nats_store *n = calloc(1, sizeof(*n));

	if (n == NULL)
		return an_store_fail(st, AN_E_NOMEM, "out of memory");
	st->impl = n;
	return parse_url(st, n, url, read_files);
}

static int
nats_open(an_store *st, const char *url, void *arg)
{
	nats_store *n;
	an_deadline d;

	(void) arg;
	if (prepare(st, url, 1) != AN_OK)
		return st->err.code;
	n = st->impl;
	/* The stream is looked for at the first call, which knows max_late_ms. */
	an_deadline_start(&d, n->timeout_ms);
	return nats_link_connect(st, &n->link, &d);
}

static int
nats_validate(an_store *st, const an_settings *s)
{
	nats_store *n = st->impl;
	an_deadline d;
	char		what[160];

	if (an_wonlost_refuse_replace(st, "the nats store", s) != AN_OK)
		return st->err.code;
	an_deadline_start(&d, n->timeout_ms);
	if (ready(st, n, &d, s) != AN_OK)
		return st->err.code;
	snprintf(what, sizeof(what), "the duplicate window of the NATS stream %s", n->stream);
	return an_wonlost_memory_ok(st, what, "the stream's duplicate window (duplicate_window_ms= when "
								"anarchon creates the stream; 'nats stream edit' for an existing one)",
								n->stream_window_ms, n->skew_ms, s);
}

/* Where get_msg looks. */
typedef enum msg_at
{
	AT_SEQ,						/* the message with sequence seq */
	AT_NEXT,					/* the first message on subject at or after seq */
	AT_LAST						/* the last message on subject */
} msg_at;

/*
 * Read one stored message and decode its body into body; *found = 0 when
 * there is none, else *seq_out is its sequence.
 */
static int
get_msg(an_store *st, nats_store *n, const an_deadline *d, msg_at at, int64_t seq,
		const char *subject, char *body, size_t bodylen, int *found, int64_t *seq_out)
{
	char		req[SUBJECT_MAX + 64];
	char	   *reply = NULL;
	char		data[(BODY_MAX + 2) / 3 * 4 + 8];
	int64_t		code;
	long		len;
	int			rc;

	*found = 0;
	if (at == AT_SEQ)
		snprintf(req, sizeof(req), "{\"seq\":%lld}", (long long) seq);
	else if (at == AT_NEXT)
		snprintf(req, sizeof(req), "{\"seq\":%lld,\"next_by_subj\":\"%s\"}", (long long) seq, subject);
	else
		snprintf(req, sizeof(req), "{\"last_by_subj\":\"%s\"}", subject);
	rc = api(st, n, d, "the request for a stored claim", "STREAM.MSG.GET", req, &reply);
	if (rc != AN_OK)
		return rc;
	if (is_error(reply, &code))
	{
		rc = code == JS_NO_MESSAGE ? AN_OK : api_error(st, n, reply, "reading a stored claim");
		free(reply);
		return rc;
	}
	len = -1;
	/*
	 * A sequence is from 1 to below INT64_MAX, and a message asked for at or
	 * after seq is not before it: find_run_msg steps to seq + 1, which must
	 * neither overflow nor go back (a server saying otherwise would have it
	 * ask for ever).
	 */
	if (nj_int(reply, "seq", seq_out) == 0 && *seq_out > 0 && *seq_out < INT64_MAX &&
		(at == AT_LAST || *seq_out >= seq))
	{
		if (nj_str(reply, "data", data, sizeof(data)) == 0)
			len = nj_base64_decode(data, strlen(data), body, bodylen - 1);
	}
	else if (nj_int(reply, "seq", seq_out) == 0)
	{
		free(reply);
		return an_store_fail(st, AN_E_STORE, "%s answered a read of stream %s with a sequence number out of range",
							 n->link.who, n->stream);
	}
	free(reply);
	if (len < 0)
		return an_store_fail(st, AN_E_STORE, "%s holds a message in stream %s that anarchon did not write",
							 n->link.who, n->stream);
	body[len] = '\0';
	*found = 1;
	return AN_OK;
}

/*
 * The prefix's format marker: the last message on <prefix>.format, "<format>
 * <release>" (format_marker.h; doc/upgrading.md, "The format of a NATS
 * prefix").  nats-server 2.9 has no stream metadata (2.10 does), so the
 * marker is a message of the stream itself, on a subject no job has (a
 * job's subjects have three tokens).  Read once per stream found; when it is
 * missing (a new stream, one of 0.1.0's, or a marker aged out with the
 * stream's max_age), this host publishes its own, under one message id for
 * every host, so that of hosts starting together the stream keeps one, and
 * reads the last again.
 */
static int
format_check(an_store *st, nats_store *n, const an_deadline *d)
{
	char		subject[sizeof(n->prefix) + 8];
	char		value[BODY_MAX];
	char		mine[32];
	char		who[sizeof(n->stream) + 16];
	char		place[sizeof(n->prefix) + 8];
	char		marker[sizeof(subject) + 24];
	char	   *reply = NULL;
	int64_t		seq, code;
	int			found, rc;

	snprintf(subject, sizeof(subject), "%s.format", n->prefix);
	if (get_msg(st, n, d, AT_LAST, 0, subject, value, sizeof(value), &found, &seq) != AN_OK)
		return st->err.code;
	if (!found)
	{
		an_format_marker_mine(mine, sizeof(mine));
		rc = nats_link_request(st, &n->link, d, "the format marker", subject, "anarchon-format", mine,
							   "no JetStream stream takes the format marker's subject", &reply);
		if (rc != AN_OK)
			return rc;
		rc = is_error(reply, &code) ? api_error(st, n, reply, "the format marker") : AN_OK;
		free(reply);
		if (rc != AN_OK)
			return rc;
		if (get_msg(st, n, d, AT_LAST, 0, subject, value, sizeof(value), &found, &seq) != AN_OK)
			return st->err.code;
		if (!found)
			return AN_OK;
	}
	snprintf(who, sizeof(who), "NATS stream %s", n->stream);
	snprintf(place, sizeof(place), "prefix %s", n->prefix);
	snprintf(marker, sizeof(marker), "the message on %s", subject);
	return an_format_marker_judge(st, who, place, marker, value);
}

/* How far past the search's landing point a run's message may have been stored. */
#define NATS_SCAN_MSGS 64

/*
 * Find the message of the run (rq->job, rq->slot) on subject (the job's
 * claims or status subject), knowing only that the subject's messages are
 * stored roughly in slot order: each is published when its slot comes, give
 * or take max_late_ms.  The last message is tried first (the common case:
 * the job's latest run); else a binary search over sequence numbers finds
 * the first message whose slot is not before ours, and the next
 * NATS_SCAN_MSGS messages of the subject are read from there, which covers
 * runs stored out of order.  O(log n) requests; bounded by the deadline.
 */
static int
find_run_msg(an_store *st, nats_store *n, const an_deadline *d, const an_request *rq,
			 const char *subject, char *body, size_t bodylen, int *found)
{
	int64_t		lo = 1;
	int64_t		hi;
	int64_t		seq;
	int64_t		slot;

	if (get_msg(st, n, d, AT_LAST, 0, subject, body, bodylen, found, &hi) != AN_OK || !*found || is_run(body, rq))
		return st->err.code;
	/* lower bound: the first message on subject at or after `lo` with slot >= ours */
	hi++;
	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (get_msg(st, n, d, AT_NEXT, mid, subject, body, bodylen, found, &seq) != AN_OK)
			return st->err.code;
		if (!*found || nj_int(body, "slot", &slot) < 0 || slot >= rq->slot)
			hi = mid;
		else
			lo = seq + 1;
	}
	for (int i = 0; i < NATS_SCAN_MSGS; i++)
	{
		if (get_msg(st, n, d, AT_NEXT, lo, subject, body, bodylen, found, &seq) != AN_OK || !*found)
			return st->err.code;
		if (is_run(body, rq))
			return AN_OK;
		lo = seq + 1;
	}
	*found = 0;
	return AN_OK;
}

/*
 * The claim's append: publish it with the message id <job>:<slot>; a
 * duplicate within the window is answered with the stored copy's sequence,
 * read back to learn whose token it holds.
 */
static int
claim_append(an_store *st, const an_request *rq, an_append_result *result, char *winner)
{
	nats_store *n = st->impl;
	char		subject[SUBJECT_MAX];
	char		msgid[AN_JOB_MAX + 32];
	char		body[BODY_MAX];
	char		stored[BODY_MAX];
	char	   *reply = NULL;
	int64_t		seq = 0;
	int64_t		code;
	int			dup;
	int			found;
	int			rc;

	subject_of(n, rq->job, "claims", subject, sizeof(subject));
	snprintf(msgid, sizeof(msgid), "%s:%lld", rq->job, (long long) rq->slot);
	claim_body(rq, body, sizeof(body));
	rc = nats_link_request(st, &n->link, &n->claim_deadline, "the claim", subject, msgid, body,
						   "no JetStream stream takes the claim's subject (was the stream deleted?)", &reply);
	if (rc == AN_E_CONFIG)
		n->have_stream = 0;		/* look for (or re-create) the stream next time */
	if (rc != AN_OK)
		return rc;
	if (is_error(reply, &code))
	{
		rc = api_error(st, n, reply, "the claim");
		free(reply);
		return rc;
	}
	dup = nj_bool(reply, "duplicate");
	if (nj_int(reply, "seq", &seq) < 0 || seq <= 0)
	{
		free(reply);
		return an_store_fail(st, AN_E_STORE, "%s acknowledged the claim without a sequence number", n->link.who);
	}
	free(reply);
	n->claim_seq = seq;
	*result = dup == 1 ? AN_APPEND_TAKEN : AN_APPEND_STORED;
	if (*result == AN_APPEND_STORED)
		return AN_OK;
	/* Someone's copy is stored: whose?  A copy we cannot read is not ours ("" ). */
	if (get_msg(st, n, &n->claim_deadline, AT_SEQ, seq, NULL, stored, sizeof(stored), &found, &seq) != AN_OK)
		return st->err.code;
	if (found)
		stored_token(stored, rq, winner);
	return AN_OK;
}

/* The engine's read-back, for a claim judged late: the run's stored claim. */
static int
claim_find(an_store *st, const an_request *rq, char *winner, int *found)
{
	nats_store *n = st->impl;
	char		subject[SUBJECT_MAX];
	char		stored[BODY_MAX];

	subject_of(n, rq->job, "claims", subject, sizeof(subject));
	if (find_run_msg(st, n, &n->claim_deadline, rq, subject, stored, sizeof(stored), found) != AN_OK)
		return st->err.code;
	if (*found)
		stored_token(stored, rq, winner);
	*found = *found && winner[0] != '\0';
	return AN_OK;
}

/* Remember what this session claimed, for heartbeat and finish. */
static void
claim_decided(an_store *st, const an_request *rq, const an_claim_result *res)
{
	nats_store *n = st->impl;

	if (res->outcome == AN_WON || res->outcome == AN_LOST)
		an_claims_put(&n->claims, rq->job, rq->slot, rq->token, n->claim_seq, res->outcome == AN_WON);
}

static const an_wonlost_ops claim_ops = {1, claim_append, claim_find, claim_decided};

static int
nats_claim(an_store *st, const an_request *rq, an_claim_result *res)
{
	nats_store *n = st->impl;

	n->claim_seq = 0;
	an_deadline_start(&n->claim_deadline, n->timeout_ms);
	if (ready(st, n, &n->claim_deadline, rq->settings) != AN_OK)
		return st->err.code;
	return an_wonlost_claim(st, &claim_ops, rq, res);
}

/*
 * The stored claim of (job, slot), if there is one: by its sequence when
 * this session claimed it, else searched for on the job's subject.
 */
static int
stored_claim(an_store *st, nats_store *n, const an_deadline *d, const an_request *rq,
			 char *body, size_t bodylen, int *found)
{
	const an_claim_memo *m = an_claims_get(&n->claims, rq->job, rq->slot);
	char		subject[SUBJECT_MAX];
	int64_t		seq;

	if (m != NULL)
	{
		if (get_msg(st, n, d, AT_SEQ, m->aux, NULL, body, bodylen, found, &seq) != AN_OK)
			return st->err.code;
		if (*found && is_run(body, rq))
			return AN_OK;
	}
	subject_of(n, rq->job, "claims", subject, sizeof(subject));
	return find_run_msg(st, n, d, rq, subject, body, bodylen, found);
}

/*
 * The finish status recorded for the run: AN_RUN_SUCCEEDED or AN_RUN_FAILED,
 * AN_RUN_RUNNING when none is stored.
 */
static int
run_status(an_store *st, nats_store *n, const an_deadline *d, const an_request *rq,
		   an_run_state *state)
{
	char		subject[SUBJECT_MAX];
	char		stored[BODY_MAX];
	int			found;

	*state = AN_RUN_RUNNING;
	subject_of(n, rq->job, "status", subject, sizeof(subject));
	if (find_run_msg(st, n, d, rq, subject, stored, sizeof(stored), &found) != AN_OK)
		return st->err.code;
	if (found)
		*state = strstr(stored, "\"status\":\"failed\"") ? AN_RUN_FAILED : AN_RUN_SUCCEEDED;
	return AN_OK;
}

/* The run operations' read-back: the stored claim's token. */
static int
run_find(an_store *st, const an_request *rq, char *winner, int *found)
{
	nats_store *n = st->impl;
	char		stored[BODY_MAX];

	if (stored_claim(st, n, &n->run_deadline, rq, stored, sizeof(stored), found) != AN_OK)
		return st->err.code;
	if (*found)
		stored_token(stored, rq, winner);
	*found = *found && winner[0] != '\0';
	return AN_OK;
}

static int
run_state(an_store *st, const an_request *rq, an_run_state *state)
{
	nats_store *n = st->impl;

	return run_status(st, n, &n->run_deadline, rq, state);
}

/*
 * A status message, de-duplicated by run within the stream's window; read
 * first, so that a finish sent again after the window never stores a second.
 */
static int
run_record(an_store *st, const an_request *rq, an_run_state status, int *recorded)
{
	nats_store *n = st->impl;
	an_run_state before;
	char		subject[SUBJECT_MAX];
	char		msgid[AN_JOB_MAX + 40];
	char		body[BODY_MAX];
	char	   *reply = NULL;
	int64_t		code;
	int			rc;

	*recorded = 0;
	if (run_status(st, n, &n->run_deadline, rq, &before) != AN_OK)
		return st->err.code;
	if (before != AN_RUN_RUNNING)
		return AN_OK;
	subject_of(n, rq->job, "status", subject, sizeof(subject));
	snprintf(msgid, sizeof(msgid), "%s:%lld:status", rq->job, (long long) rq->slot);
	snprintf(body, sizeof(body), "{\"job\":\"%s\",\"slot\":%lld,\"token\":\"%s\",\"status\":\"%s\"}",
			 rq->job, (long long) rq->slot, rq->token, an_run_state_name(status));
	rc = nats_link_request(st, &n->link, &n->run_deadline, "the finish status", subject, msgid, body,
						   "no JetStream stream takes the status subject (was the stream deleted?)", &reply);
	if (rc == AN_OK && is_error(reply, &code))
		rc = api_error(st, n, reply, "the finish status");
	if (rc == AN_OK)
		*recorded = nj_bool(reply, "duplicate") != 1;
	free(reply);
	return rc;
}

static const an_wonlost_run_ops run_ops = {run_find, run_state, run_record};

/* A heartbeat, finish or check starts: its deadline, and the stream. */
static int
run_begin(an_store *st, const an_request *rq)
{
	nats_store *n = st->impl;

	an_deadline_start(&n->run_deadline, n->timeout_ms);
	return ready(st, n, &n->run_deadline, rq->settings) != AN_OK ? st->err.code : AN_OK;
}

static int
nats_heartbeat(an_store *st, const an_request *rq, int *owned)
{
	*owned = 0;
	if (run_begin(st, rq) != AN_OK)
		return st->err.code;
	return an_wonlost_heartbeat(st, &run_ops, rq, owned);
}

static int
nats_finish(an_store *st, const an_request *rq, an_run_state status, int *owned)
{
	*owned = 0;
	if (run_begin(st, rq) != AN_OK)
		return st->err.code;
	return an_wonlost_finish(st, &run_ops, rq, status, owned);
}

static int
nats_check(an_store *st, const an_request *rq, an_check_result *res)
{
	memset(res, 0, sizeof(*res));
	if (run_begin(st, rq) != AN_OK)
		return st->err.code;
	return an_wonlost_check(st, &run_ops, rq, res);
}

/* close: also after a failed open; the credentials are wiped before they are freed. */
static void
nats_close(an_store *st)
{
	nats_store *n = st->impl;

	if (n == NULL)
		return;
	nats_link_free(&n->link);
	for (int i = 0; i < n->nservers; i++)
		free(n->hosts[i]);
	for (int i = 0; i < 4; i++)
		free(n->tls_strs[i]);
	nats_auth_free(&n->auth);
	free(n);
	st->impl = NULL;
}

/* check_url: what open would refuse in the URL, without connecting. */
static int
nats_check_url(an_store *st, const char *url)
{
	int			rc = prepare(st, url, 0);

	nats_close(st);
	return rc;
}

const an_store_methods an_nats_methods = {
	.version = AN_STORE_VERSION,
	.name = "nats",
	.open = nats_open,
	.claim = nats_claim,
	.heartbeat = nats_heartbeat,
	.finish = nats_finish,
	.check = nats_check,
	.validate = nats_validate,
	.close = nats_close,
	.check_url = nats_check_url,
};
