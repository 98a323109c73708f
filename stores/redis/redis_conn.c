/*
 * redis_conn.c — one connection to Redis, bounded in time and cancellable.
 *
 * hiredis 0.14.1's blocking calls cannot be interrupted, and a blocking
 * context that timed out is dead; its TLS (hiredis_ssl, 1.x only) would be
 * a second TLS implementation whose waits are not the host's.  So the store
 * owns its socket: an_conn (conn.h) connects, runs the TLS handshake of a
 * rediss:// URL, sends and reads, every wait an_wait_socket (wait.h) on the
 * host's wait, bounded by the call's an_deadline and ended by a cancel.
 * hiredis only formats commands (redisFormatCommandArgv) and parses replies
 * (a redisReader fed with the bytes read here, so they can be counted), the
 * same on hiredis 0.14 and 1.x.
 *
 * Commands are sent with send(MSG_NOSIGNAL) (an_sock_send) or through
 * OpenSSL on the same socket: a write to a connection the server closed
 * never raises SIGPIPE in a host process, and a store must not touch signals.
 *
 * After any failure the connection is closed: a reply that arrives late
 * would otherwise be read as the answer to the next command.  The next call
 * connects again.  Closing sends nothing of Redis's (no QUIT), and in a
 * forked child that finds its parent's connection (fork.h) nothing at all,
 * not even TLS's close alert: the child closes its own copy of the
 * descriptor and leaves the parent's session untouched.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "redis.h"

/* Close; notify: TLS's close alert may be sent (never on a parent's session, fork.h). */
static void
conn_end(rds_conn *cn, int notify)
{
	if (cn->reader)
	{
		an_conn_close(&cn->io, notify && !an_fork_foreign(cn->proc));
		redisReaderFree(cn->reader);
	}
	cn->reader = NULL;
	cn->io = AN_CONN_NONE;
	cn->next_time_ms = 0;        /* a new connection reads the clock at once */
}

void
rds_conn_close(rds_conn *cn)
{
	conn_end(cn, 1);
}

/*
 * Close a connection that failed (broken, timed out, out of step): nothing
 * more is written on it, not even TLS's close alert, which would go to a
 * peer that may have reset it.
 */
static void
abandon(rds_conn *cn)
{
	conn_end(cn, 0);
}

/* The connection broke under us: close it, marked dropped for the resend rule (rotate.h). */
static int
dropped(rds_conn *cn)
{
	cn->dropped = 1;
	abandon(cn);
	return AN_E_CONNECT;
}

static int
lost(an_store *st, rds_conn *cn, const char *why)
{
	an_store_fail(st, AN_E_CONNECT, "connection to redis store %s was lost: %s", cn->where, why);
	return dropped(cn);
}

/*
 * A failure of the shared socket calls (sock.h, wait.h) in this store's
 * words: a cancel or a timeout as Redis's messages say them; a connection
 * that broke keeps the socket layer's message.
 */
static int
said(an_store *st, rds_conn *cn, int rc)
{
	if (rc == AN_E_CANCELED)
		return an_store_fail(st, AN_E_CANCELED, "call to redis store %s was canceled", cn->where);
	if (rc == AN_E_TIMEOUT)
		return an_store_fail(st, AN_E_TIMEOUT,
							 "redis store %s did not answer within %d ms (timeout_ms): the server may be frozen, overloaded or unreachable",
							 cn->where, cn->timeout_ms);
	return rc == AN_E_CONNECT ? dropped(cn) : rc;
}

#if HIREDIS_MAJOR < 1
/*
 * hiredis 0.14 reserves an array's element pointers as soon as its count is
 * announced (*1000000000 reserves 8 GB) and, closing a reply cut short,
 * walks every one of them: a minute for that count.  It has no limit of its
 * own (1.x has maxelements), so its reader's functions are wrapped: an
 * array announcing more than RDS_ELEMENTS_MAX is refused (the reader then
 * fails the reply as out of memory; too_many says why).  Every reader of
 * 0.14 starts with the same function table, remembered in orig_fn.
 */
static const redisReplyObjectFunctions *_Atomic orig_fn;
static _Thread_local int too_many;

static void *
capped_array(const redisReadTask *task, int elements)
{
	if (elements > RDS_ELEMENTS_MAX)
	{
		too_many = 1;
		return NULL;
	}
	return atomic_load(&orig_fn)->createArray(task, elements);
}
static void *
capped_string(const redisReadTask *task, char *str, size_t len)
{
	return atomic_load(&orig_fn)->createString(task, str, len);
}
static void *
capped_integer(const redisReadTask *task, long long v)
{
	return atomic_load(&orig_fn)->createInteger(task, v);
}
static void *
capped_nil(const redisReadTask *task)
{
	return atomic_load(&orig_fn)->createNil(task);
}
static void
capped_free(void *obj)
{
	atomic_load(&orig_fn)->freeObject(obj);
}
static redisReplyObjectFunctions capped_fn = {
	capped_string, capped_array, capped_integer, capped_nil, capped_free
};
#endif

/*
 * Read one reply, waiting for more bytes as needed, until the call's own
 * deadline (never a timeout per read: a reply dripped a byte at a time still
 * ends at it).  *taken counts the bytes this call has read, against
 * RDS_REPLY_MAX.  The bytes are read here (through TLS for rediss) and fed
 * to hiredis's reader, so that they can be counted.
 */
static int
read_reply(an_store *st, rds_conn *cn, const char *who, const an_deadline *d, size_t *taken,
		   redisReply **out)
{
	for (;;)
	{
		void	   *r = NULL;
		char		buf[16 * 1024];
		size_t		n;
		int			rc;

		if (redisReaderGetReply(cn->reader, &r) != REDIS_OK)
		{
#if HIREDIS_MAJOR < 1
			int			refused = too_many;

			too_many = 0;
#else
			/* hiredis 1.x refuses it itself, past reader->maxelements. */
			int			refused = strstr(cn->reader->errstr, "Multi-bulk length out of range") != NULL;
#endif
			if (refused)
			{
				abandon(cn);
				return an_store_fail(st, AN_E_STORE,
									 "redis store %s announced an array of more than %d elements, the most anarchon accepts",
									 cn->where, RDS_ELEMENTS_MAX);
			}
			return lost(st, cn, cn->reader->errstr[0] ? cn->reader->errstr : "protocol error");
		}
		if (r)
		{
			*out = r;
			return AN_OK;
		}
		/* Asks the deadline and the host's cancel every pass, bytes waiting or not. */
		if ((rc = an_conn_recv(st, who, &cn->io, buf, sizeof(buf), &n, d, "a command")) != AN_OK)
			return said(st, cn, rc);
		*taken += n;
		if (*taken > RDS_REPLY_MAX)
		{
			an_store_fail(st, AN_E_STORE,
						  "redis store %s sent more than %d bytes in answer to one call, the most anarchon accepts",
						  cn->where, RDS_REPLY_MAX);
			abandon(cn);
			return AN_E_STORE;
		}
		if (redisReaderFeed(cn->reader, buf, n) != REDIS_OK)
			return lost(st, cn, "out of memory reading a reply");
	}
}

/*
 * TIME, sent after the caller's commands every RDS_TIME_EVERY_MS of the
 * host's clock (and so on a fresh connection), for the clock offset of
 * anarchon_stats: no round trip of its own, and only its reply's few bytes.
 */
#define RDS_TIME_EVERY_MS 10000
static const char TIME_CMD[] = "*1\r\n$4\r\nTIME\r\n";

/* The reply of TIME, [seconds, microseconds], as ms; -1 when it is not that. */
static int64_t
time_ms(const redisReply *r)
{
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_STRING)
		return -1;
	return strtoll(r->element[0]->str, NULL, 10) * 1000 + strtoll(r->element[1]->str, NULL, 10) / 1000;
}

/* Format the commands into one buffer, send it, read every reply. */
int
rds_conn_exchange(an_store *st, rds_conn *cn, const an_deadline *d, int ncmd, const int *argc,
		 const char **const *argv, const size_t *const *lens, redisReply **replies)
{
	char	   *buf = NULL;
	size_t		total = 0;
	int			rc;
	int			got = 0;
	size_t		taken = 0;
	int64_t		sent = an_store_host_now(st);
	int			ask_time = st->stats != NULL && sent >= cn->next_time_ms;
	char		who[sizeof(cn->where) + 16];

	/* Loaded by the connection already; a call that comes first must not find an empty table. */
	if (rds_lib_load(&st->err) != AN_OK)
		return st->err.code;
	snprintf(who, sizeof(who), "redis store %s", cn->where);

	for (int i = 0; i <= ncmd; i++)
	{
		char	   *one = NULL;
		int			n;
		char	   *grown;

		if (i == ncmd && !ask_time)
			break;
		n = i < ncmd ? redisFormatCommandArgv(&one, argc[i], argv[i], lens[i]) : (int) strlen(TIME_CMD);
		if (n < 0 || (grown = realloc(buf, total + (size_t) n)) == NULL)
		{
			free(one);
			free(buf);
			return an_store_fail(st, AN_E_NOMEM, "out of memory formatting a redis command");
		}
		buf = grown;
		memcpy(buf + total, i < ncmd ? one : TIME_CMD, (size_t) n);
		total += (size_t) n;
		free(one);
	}
	if ((rc = an_conn_send(st, who, &cn->io, buf, total, d, "a command")) != AN_OK)
		rc = said(st, cn, rc);
	free(buf);
	while (rc == AN_OK && got < ncmd)
		if ((rc = read_reply(st, cn, who, d, &taken, &replies[got])) == AN_OK)
			got++;
	if (rc == AN_OK && ask_time)
	{
		redisReply *t = NULL;

		if ((rc = read_reply(st, cn, who, d, &taken, &t)) == AN_OK)
		{
			int64_t		received = an_store_host_now(st);

			if (time_ms(t) >= 0)
				an_store_saw_clock(st, time_ms(t), sent, received);
			cn->next_time_ms = received + RDS_TIME_EVERY_MS;
			freeReplyObject(t);
		}
	}
	/*
	 * Bytes past the last reply asked for answer no command of ours (a server
	 * that sends +PONG lines unasked): the replies just read may be shifted
	 * too, so the call fails rather than trust them or leave the rest to be
	 * read as the next call's answer.
	 */
	if (rc == AN_OK && cn->reader->pos < cn->reader->len)
		rc = an_store_fail(st, AN_E_STORE, "redis store %s sent replies to commands that were not sent to it",
						   cn->where);
	if (rc != AN_OK)
	{
		while (got-- > 0)
		{
			freeReplyObject(replies[got]);
			replies[got] = NULL;
		}
		/* A timeout or cancel leaves replies in flight: never reuse the socket. */
		abandon(cn);
	}
	return rc;
}

/* Parse "redis_version:X.Y.Z" out of INFO server. */
static void
parse_version(rds_conn *cn, const redisReply *r)
{
	const char *v;

	cn->version[0] = cn->version[1] = 0;
	if (r->type != REDIS_REPLY_STRING || (v = strstr(r->str, "redis_version:")) == NULL)
		return;
	sscanf(v + strlen("redis_version:"), "%d.%d", &cn->version[0], &cn->version[1]);
}

/* The commands of a handshake, at most: AUTH, SELECT, INFO server, CONFIG GET, INFO persistence, ROLE. */
#define HS_MAX 6

typedef struct handshake_cmds
{
	int			n;
	const char *av[HS_MAX][4];
	size_t		lv[HS_MAX][4];
	const char **argv[HS_MAX];
	const size_t *lens[HS_MAX];
	int			argc[HS_MAX];
} handshake_cmds;

/* Append a command of up to four words (NULL-terminated); returns its index. */
static int
hs_add(handshake_cmds *h, const char *a, const char *b, const char *c, const char *d)
{
	const char *w[4] = {a, b, c, d};
	int			i = h->n++;
	int			k;

	for (k = 0; k < 4 && w[k]; k++)
	{
		h->av[i][k] = w[k];
		h->lv[i][k] = strlen(w[k]);
	}
	h->argc[i] = k;
	h->argv[i] = h->av[i];
	h->lens[i] = h->lv[i];
	return i;
}

/* An error reply of the handshake's command i, judged; AN_OK for what may be ignored. */
static int
hs_error(an_store *st, rds_conn *cn, const handshake_cmds *h, int i, const redisReply *r)
{
	const char *cmd = h->av[i][0];
	char		code[32];

	rds_reply_code(r, code, sizeof(code));
	if (strcmp(cmd, "AUTH") == 0 && strstr(r->str, "without any password configured"))
	{
		an_store_fail(st, AN_E_AUTH, "redis store %s has no password configured, but the store URL gives one",
					  cn->where);
		return an_store_hintf(st, "Remove the password from the URL, or set one on the server.");
	}
	if (strcmp(cmd, "AUTH") == 0 || strcmp(code, "WRONGPASS") == 0)
		return an_store_fail(st, AN_E_AUTH,
							 "redis store %s refused the user name or password given for it (%s)",
							 cn->where, code);
	if (strcmp(code, "NOAUTH") == 0)
		return an_store_fail(st, AN_E_AUTH, RDS_MSG_NOAUTH, cn->where);
	/*
	 * INFO or CONFIG renamed away or not granted to this user (managed
	 * services do that): what they would tell stays unknown.
	 */
	if (strcmp(cmd, "INFO") == 0 || strcmp(cmd, "CONFIG") == 0)
		return AN_OK;
	if (rds_reply_transient(r))
		return rds_transient_fail(st, cn->where, r, cmd);
	if (strcmp(cmd, "SELECT") == 0)
		return an_store_fail(st, AN_E_CONFIG,
							 "redis store %s has no database %ld (the path of the URL): %.120s",
							 cn->where, cn->db, r->str);
	return an_store_fail(st, AN_E_STORE, "redis store %s answered %s: %.160s", cn->where, cmd, r->str);
}

/* ROLE's answer: its first element ("master", "slave", "sentinel"), or "?". */
static const char *
role_of(const redisReply *r)
{
	if (r->type == REDIS_REPLY_ARRAY && r->elements > 0 && r->element[0]->type == REDIS_REPLY_STRING)
		return r->element[0]->str;
	return "?";
}

/*
 * AUTH, SELECT, INFO server, unless the URL accepts the risk what Redis says
 * of its persistence, and its ROLE (a replica would answer reads from data
 * that may lag, and refuse every write), in one round trip on a fresh
 * connection.
 */
static int
handshake(an_store *st, rds_conn *cn, const an_deadline *d)
{
	handshake_cmds h;
	redisReply *rep[HS_MAX] = {NULL};
	char		dbbuf[24];
	int			info;
	int			config = -1;
	int			persistence = -1;
	int			role = -1;
	int			rc;
	int			i;

	h.n = 0;
	if (cn->password)
	{
		if (cn->user)
			hs_add(&h, "AUTH", cn->user, cn->password, NULL);
		else
			hs_add(&h, "AUTH", cn->password, NULL, NULL);
	}
	if (cn->db != 0)
	{
		snprintf(dbbuf, sizeof(dbbuf), "%ld", cn->db);
		hs_add(&h, "SELECT", dbbuf, NULL, NULL);
	}
	info = hs_add(&h, "INFO", "server", NULL, NULL);
	if (!cn->accept_loss)
	{
		config = hs_add(&h, "CONFIG", "GET", "append*", NULL);
		persistence = hs_add(&h, "INFO", "persistence", NULL, NULL);
	}
	if (!cn->any_role)
		role = hs_add(&h, "ROLE", NULL, NULL, NULL);
	if ((rc = rds_conn_exchange(st, cn, d, h.n, h.argc, h.argv, h.lens, rep)) != AN_OK)
		return rc;

	for (i = 0; i < h.n && rc == AN_OK; i++)
		if (rep[i]->type == REDIS_REPLY_ERROR)
			rc = hs_error(st, cn, &h, i, rep[i]);
	if (rc == AN_OK)
		parse_version(cn, rep[info]);
	if (rc == AN_OK && config >= 0)
		rc = rds_durability_check(st, cn, rep[config], rep[persistence]);
	/* ROLE not granted to this user (an error): what it would say stays unknown. */
	if (rc == AN_OK && role >= 0 && rep[role]->type != REDIS_REPLY_ERROR && strcmp(role_of(rep[role]), "master") != 0)
	{
		/* A sentinel named as the master is no failover: sending again would find it again. */
		if (cn->sentinels && strcmp(role_of(rep[role]), "sentinel") == 0)
		{
			an_store_fail(st, AN_E_STORE,
						  "redis store %s: the sentinels named %s:%d as the master of %s, but it is a sentinel (ROLE answered sentinel), not a data server",
						  cn->where, cn->host, cn->port, cn->master_name);
			rc = an_store_hintf(st, "Check SENTINEL MASTER %s on every sentinel: a master's address must be a Redis server's.",
								cn->master_name);
		}
		else if (cn->sentinels)
		{
			an_store_fail(st, AN_E_CONNECT,
						  "redis store %s: the sentinels named %s:%d as the master of %s, but it is not a master now (ROLE answered %.20s)",
						  cn->where, cn->host, cn->port, cn->master_name, role_of(rep[role]));
			an_store_detailf(st, "A failover is under way.");
			rc = an_store_hintf(st, "Send the call again.");
		}
		else
		{
			an_store_fail(st, AN_E_CONFIG, "redis store %s is a replica, not the master: a claim must be decided by the master",
						  cn->where);
			rc = an_store_hintf(st, "Name the master in the URL, or let Sentinel find it: redis+sentinel://sentinel1:26379,.../master-name.");
		}
	}
	for (i = 0; i < h.n; i++)
		freeReplyObject(rep[i]);
	if (rc != AN_OK)
		abandon(cn);
	return rc;
}

/*
 * TCP keepalive, as hiredis's redisEnableKeepAlive set it: a connection kept
 * across claims whose peer vanished (a NAT that forgot it) is found dead by
 * the kernel rather than by the next call's timeout.
 */
static void
keepalive(int fd)
{
	int			on = 1;
	int			idle = 15;
	int			intvl = 5;
	int			cnt = 3;

	(void) setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
	(void) setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	(void) setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	(void) setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

/* A reader for the connection's replies, under the element (and bulk) caps of redis.h. */
static redisReader *
capped_reader(void)
{
	redisReader *r = redisReaderCreate();

	if (r == NULL)
		return NULL;
#if HIREDIS_MAJOR >= 1
	/* Refused when announced, before any of it arrives (redis.h). */
	r->maxelements = RDS_ELEMENTS_MAX;
#if HIREDIS_MAJOR > 1 || HIREDIS_MINOR >= 3
	/* hiredis 1.3 also refuses a long bulk as announced; before, the byte cap does. */
	r->maxbulklen = RDS_REPLY_MAX;
#endif
#else
	if (r->fn != &capped_fn)
	{
		atomic_store(&orig_fn, r->fn);
		r->fn = &capped_fn;
	}
#endif
	return r;
}

/*
 * Who a connection's messages name: the store's URL, and the server itself
 * when it is not the URL's (a sentinel's master, a cluster node met later).
 */
static void
conn_who(const rds_conn *cn, char *who, size_t len)
{
	char		hp[300];

	snprintf(hp, sizeof(hp), "%s:%d", cn->host, cn->port);
	if (strstr(cn->where, hp))
		snprintf(who, len, "redis store %s", cn->where);
	else
		snprintf(who, len, "redis store %s at %s", cn->where, hp);
}

int
rds_conn_open_raw(an_store *st, rds_conn *cn, const an_deadline *d)
{
	char		who[sizeof(cn->where) + 320];
	int			rc;

	conn_who(cn, who, sizeof(who));
	cn->io = AN_CONN_NONE;
	if (rds_lib_load(&st->err) != AN_OK)
		return st->err.code;
	if ((cn->reader = capped_reader()) == NULL)
		return an_store_fail(st, AN_E_NOMEM, "out of memory connecting to %s", who);
	rc = an_sock_connect(st, who, cn->host, cn->port, d, &cn->io.fd);
	/* In this store's words of old ("cannot connect to redis store URL: reason"). */
	if (rc == AN_E_CONNECT && strncmp(st->err.msg, "could not connect to ", 21) == 0 &&
		strncmp(st->err.msg + 21, who, strlen(who)) == 0 && st->err.msg[21 + strlen(who)] == ':')
	{
		char		why[AN_ERRMAX];

		snprintf(why, sizeof(why), "%s", st->err.msg + 21 + strlen(who) + 2);
		an_store_fail(st, AN_E_CONNECT, "cannot connect to %s: %s", who, why);
	}
	else if (rc == AN_E_TIMEOUT)
		an_store_fail(st, AN_E_TIMEOUT, "cannot connect to %s within %d ms (timeout_ms)", who, cn->timeout_ms);
	/* The TLS handshake (rediss) is part of the connect: within d, cancellable. */
	if (rc == AN_OK && cn->tls)
	{
		rc = an_conn_start_tls(st, who, &cn->io, cn->tls, cn->host, d);
		if (rc == AN_E_TIMEOUT)
		{
			an_store_fail(st, AN_E_TIMEOUT, "%s did not answer the TLS handshake within %d ms (timeout_ms)",
						  who, cn->timeout_ms);
			/* A plaintext Redis reads a ClientHello as an inline command and waits for its end. */
			an_store_hintf(st, "The server may be frozen, or it does not speak TLS: is the port a TLS port (tls-port)?");
		}
	}
	if (rc != AN_OK)
	{
		if (rc == AN_E_CANCELED)
			said(st, cn, rc);
		abandon(cn);
		return rc;
	}
	an_fork_own(&cn->proc);
	keepalive(cn->io.fd);
	return AN_OK;
}

int
rds_conn_ensure(an_store *st, rds_conn *cn, const an_deadline *d)
{
	int			rc;

	/* A connection the parent of a forked process made: this process makes its own. */
	if (RDS_CONNECTED(cn) && an_fork_foreign(cn->proc))
		abandon(cn);
	if (RDS_CONNECTED(cn))
		return AN_OK;
	if (cn->sentinels && (rc = cn->sentinels->resolve(st, cn, d)) != AN_OK)
		return rc;
	if ((rc = rds_conn_open_raw(st, cn, d)) != AN_OK)
		return rc;
	if ((rc = handshake(st, cn, d)) != AN_OK)
	{
		/* A server that drops us during the handshake refused us; retrying will not help. */
		cn->dropped = 0;
		if (rc == AN_E_CONNECT && cn->tls == NULL && st->err.hint[0] == '\0')
			an_store_hintf(st, "If the server takes TLS connections only (a tls-port, a managed service with in-transit encryption), use rediss://.");
		/* TLS 1.3: a server refuses a client certificate after the handshake, at the first read. */
		else if (rc == AN_E_CONNECT && st->err.hint[0] == '\0')
			an_store_hintf(st, "The server ended the TLS connection before answering: if it requires a client certificate (tls-auth-clients yes), give cert= and key= in the store URL, signed by a CA it trusts.");
		return rc;
	}
	cn->generation++;
	return AN_OK;
}

int
rds_conn_pipeline(an_store *st, rds_conn *cn, const an_deadline *d, int ncmd,
				  const int *argc, const char **const *argv,
				  const size_t *const *lens, redisReply **replies)
{
	int			rc;

	cn->dropped = 0;
	if ((rc = rds_conn_ensure(st, cn, d)) != AN_OK)
		return rc;
	return rds_conn_exchange(st, cn, d, ncmd, argc, argv, lens, replies);
}

int
rds_conn_command(an_store *st, rds_conn *cn, const an_deadline *d, int argc, const char **argv,
				 redisReply **reply)
{
	size_t		lens[RDS_MAXARGS];
	const size_t *lv = lens;

	for (int i = 0; i < argc && i < RDS_MAXARGS; i++)
		lens[i] = strlen(argv[i]);
	*reply = NULL;
	return rds_conn_exchange(st, cn, d, 1, &argc, (const char **const *) &argv, &lv, reply);
}
