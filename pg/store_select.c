/*
 * store_select.c — the store that anarchon.store names, opened once per
 * backend and kept.
 *
 * 'local' is this database's anarchon.runs.  Any other value names a foreign
 * server of the wrapper anarchon (fdw.c): the calling role needs USAGE on it,
 * and its user mapping (or the PUBLIC one) supplies the credentials.  A remote
 * store is opened on first use and cached, keyed by server and role, in
 * TopMemoryContext; a change to the server or to any user mapping marks the
 * cached stores stale (syscache invalidation, as postgres_fdw does), and the
 * next call closes and reopens them.  All are closed when the backend exits.
 *
 * The SQL functions get their store here and talk to it only through its
 * methods, so they do not know which kind of store they use.
 */
#include "anarchon_pg.h"

#include <poll.h>

#include "catalog/pg_foreign_server.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/wait_event.h"

#include "redact.h"
#include "remote.h"
#include "url.h"

static int64_t
host_now(void *ctx)
{
	return an_pg_now_ms();
}

/* A pending cancel or termination, reported without acting on it. */
static int
host_interrupted(void *ctx)
{
	return QueryCancelPending || ProcDiePending;
}

/*
 * A store's wait on its socket: on the backend's latch too, so that a cancel
 * or a termination (whose signal handlers set the latch) wakes it at once,
 * and the store then sees host_interrupted.  The wait shows in
 * pg_stat_activity as wait_event_type Extension, and the backend exits at
 * once if the postmaster dies meanwhile.
 *
 * First, for QUICK_POLL_MS at most, a poll() of the socket alone: most
 * replies come within it (a store on the same host or network), and
 * WaitLatchOrSocket builds and closes a WaitEventSet on every call, five
 * system calls more than the poll (a seventh of a backend's time in a
 * profile of Redis claims through PostgreSQL: doc/performance.md).  A cancel
 * or a termination interrupts the poll (their signals are not blocked:
 * EINTR), and the latch-aware wait then returns at once; only the
 * postmaster's death may go unnoticed, for that millisecond.
 */
#define QUICK_POLL_MS 1

static int
host_wait_socket(void *ctx, int fd, int for_write, int timeout_ms)
{
	struct pollfd p = {.fd = fd,.events = for_write ? POLLOUT : POLLIN};
	int			quick = Min(timeout_ms, QUICK_POLL_MS);
	int			n = poll(&p, 1, quick);
	int			ev;

	if (n > 0)
		return 1;
	if (n == 0 && timeout_ms <= quick)
		return 0;
	ev = WaitLatchOrSocket(MyLatch,
						   WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH |
						   (for_write ? WL_SOCKET_WRITEABLE : WL_SOCKET_READABLE),
						   fd, n == 0 ? timeout_ms - quick : timeout_ms, PG_WAIT_EXTENSION);
	if (ev & WL_LATCH_SET)
		ResetLatch(MyLatch);
	return (ev & (WL_SOCKET_READABLE | WL_SOCKET_WRITEABLE)) ? 1 : 0;
}

/* A store's timed wait, on the latch for the same reasons. */
static void
host_sleep_ms(void *ctx, int timeout_ms)
{
	if (WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
				  timeout_ms, PG_WAIT_EXTENSION) & WL_LATCH_SET)
		ResetLatch(MyLatch);
}

const an_host an_pg_host = {
	.ctx = NULL,
	.now_ms = host_now,
	.interrupted = host_interrupted,
	.wait_socket = host_wait_socket,
	.sleep_ms = host_sleep_ms,
};

static an_store local_store;
static an_stats_row *local_row;
static bool local_ready;

/* One open remote store. */
typedef struct remote_entry
{
	Oid			serverid;
	Oid			userid;
	uint32		server_hash;	/* syscache hash of the server's row */
	bool		stale;			/* server or mappings changed since open */
	an_store	store;
	an_stats_row *row;			/* its counters (stats.c) */
	struct remote_entry *next;
} remote_entry;

static remote_entry *remotes;
static bool callbacks_registered;

static an_store *
local(void)
{
	if (!local_ready)
	{
		an_store_init(&local_store, &an_pg_local_methods, &an_pg_host);
		if (local_store.m->open(&local_store, "local", NULL) != AN_OK)
			an_pg_raise(&local_store);
		local_ready = true;
	}
	return &local_store;
}

/* Syscache invalidation: never close here (no network I/O in a callback). */
static void
invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	for (remote_entry *e = remotes; e; e = e->next)
		if (cacheid != FOREIGNSERVEROID || hashvalue == 0 || e->server_hash == hashvalue)
			e->stale = true;
}

static void
close_entry(remote_entry *e)
{
	e->store.m->close(&e->store);
}

/* Backend exit: close every remote store (sockets, client threads). */
static void
close_all(int code, Datum arg)
{
	while (remotes)
	{
		remote_entry *e = remotes;

		remotes = e->next;
		close_entry(e);
		pfree(e);
	}
}

static void
register_callbacks(void)
{
	if (callbacks_registered)
		return;
	CacheRegisterSyscacheCallback(FOREIGNSERVEROID, invalidate, (Datum) 0);
	CacheRegisterSyscacheCallback(USERMAPPINGOID, invalidate, (Datum) 0);
	before_shmem_exit(close_all, (Datum) 0);
	callbacks_registered = true;
}

/* The role's mapping for the server, else the PUBLIC one, else NULL. */
static UserMapping *
find_mapping(Oid userid, Oid serverid)
{
	HeapTuple	tp;

	tp = SearchSysCache2(USERMAPPINGUSERSERVER, ObjectIdGetDatum(userid),
						 ObjectIdGetDatum(serverid));
	if (!HeapTupleIsValid(tp))
		tp = SearchSysCache2(USERMAPPINGUSERSERVER, ObjectIdGetDatum(InvalidOid),
							 ObjectIdGetDatum(serverid));
	if (!HeapTupleIsValid(tp))
		return NULL;
	ReleaseSysCache(tp);
	return GetUserMapping(userid, serverid);
}

/*
 * anarchon.store holds a store URL instead of a server's name: refused with
 * the commands that do what was meant.  Credentials (a password, a token, a
 * sentinel_password in the query: an_redact_secret_param) belong in a user
 * mapping, not in a setting any role can SHOW, nor in an error message or
 * the server's log: a URL that holds any is named without its userinfo and
 * query (an_url_name), and any other is shown as an_redact_url shows it.
 */
static void
refuse_url(const char *value)
{
	an_url		u;
	an_err		err;
	char		shown[256];
	char		server[NAMEDATALEN] = "my_store";
	char		mapping[NAMEDATALEN + 96] = "";

	an_redact_url(value, shown, sizeof(shown));
	if (an_url_parse(value, &u, &err) == 0)
	{
		bool		secrets = u.user != NULL || u.password != NULL;

		for (int i = 0; i < u.nparams; i++)
			secrets |= an_redact_secret_param(u.params[i].name, strlen(u.params[i].name));
		snprintf(server, sizeof(server), "my_%.*s", (int) strcspn(u.scheme, "+"), u.scheme);
		/* A NATS token is a mapping's lone password (fdw.c). */
		if (secrets)
		{
			an_url_name(&u, shown, sizeof(shown));
			if (u.nparams > 0)
				strlcat(shown, "?...", sizeof(shown));
			snprintf(mapping, sizeof(mapping),
					 "CREATE USER MAPPING FOR PUBLIC SERVER %s OPTIONS (%s); ", server,
					 (strcmp(u.scheme, "nats") == 0 || strcmp(u.scheme, "tls") == 0) ? "password '...'" : "user '...', password '...'");
		}
		an_url_free(&u);
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("anarchon.store names a foreign server, not a store url"),
			 errdetail("A remote store is a foreign server of the anarchon wrapper, and its url is an option of that server."),
			 errhint("Create a server with this url, then name it: CREATE SERVER %s FOREIGN DATA WRAPPER anarchon OPTIONS (url %s); %sSET anarchon.store = '%s';",
					 server, quote_literal_cstr(shown), mapping, server)));
}

/* The server anarchon.store names, checked: exists, ours, usable by the caller. */
static ForeignServer *
named_server(const char *name, Oid userid)
{
	ForeignServer *server;
	const char *fdwname;
	AclResult	aclresult;

	if (strstr(name, "://") != NULL)
	{
		an_pg_stats_failed("(a url)", "unknown", AN_E_CONFIG);
		refuse_url(name);
	}
	server = GetForeignServerByName(name, true);
	if (server == NULL)
	{
		/* One row for every such name: a role may not fill the table with names. */
		an_pg_stats_failed("(no such server)", "unknown", AN_E_CONFIG);
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("foreign server \"%s\" does not exist", name),
				 errdetail("The setting anarchon.store names the foreign server that decides claims, or is 'local'."),
				 errhint("Create the server with CREATE SERVER %s FOREIGN DATA WRAPPER anarchon OPTIONS (url '...'), or set anarchon.store to 'local'.",
						 quote_identifier(name))));
	}
	fdwname = GetForeignDataWrapper(server->fdwid)->fdwname;
	if (strcmp(fdwname, "anarchon") != 0)
	{
		an_pg_stats_failed(name, "unknown", AN_E_CONFIG);
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("foreign server \"%s\" is not a server of the anarchon wrapper", name),
				 errdetail("It belongs to the foreign-data wrapper \"%s\".", fdwname)));
	}
	aclresult = an_pg_server_aclcheck(server->serverid, userid, ACL_USAGE);
	if (aclresult != ACLCHECK_OK)
	{
		an_pg_stats_failed(name, "unknown", AN_E_AUTH);
		aclcheck_error(aclresult, OBJECT_FOREIGN_SERVER, server->servername);
	}
	return server;
}

/* Open the store of server for userid; raises on failure, caches nothing then. */
static remote_entry *
open_remote(ForeignServer *server, Oid userid)
{
	UserMapping *mapping = find_mapping(userid, server->serverid);
	char	   *url = an_pg_server_url(server, mapping);
	an_err		err;
	const an_store_methods *m = an_remote_find(url, &err);
	remote_entry *e;
	int			rc;

	if (m == NULL)
	{
		char		detail[AN_ERRMAX];

		explicit_bzero(url, strlen(url));
		an_pg_stats_failed(server->servername, "unknown", AN_E_UNSUPPORTED);
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot open the store of foreign server \"%s\"", server->servername),
				 errdetail("%s", an_pg_sentence(err.msg, detail, sizeof(detail)))));
	}
	e = MemoryContextAllocZero(TopMemoryContext, sizeof(remote_entry));
	e->serverid = server->serverid;
	e->userid = userid;
	e->server_hash = GetSysCacheHashValue1(FOREIGNSERVEROID, ObjectIdGetDatum(server->serverid));
	an_store_init(&e->store, m, &an_pg_host);
	rc = m->open(&e->store, url, NULL);
	/* The URL may hold a password: wipe it before anything else can fail. */
	explicit_bzero(url, strlen(url));
	pfree(url);
	if (rc != AN_OK)
	{
		an_store	failed = e->store;

		close_entry(e);
		pfree(e);
		an_pg_stats_failed(server->servername, m->name, rc);
		an_pg_raise(&failed);
	}
	e->next = remotes;
	remotes = e;
	return e;
}

static remote_entry *
remote(const char *name)
{
	Oid			userid;
	ForeignServer *server;
	remote_entry **link;

	register_callbacks();

	/*
	 * Close what changed since it was opened (an altered or dropped server,
	 * any user mapping): the next call of that server reopens it.
	 */
	for (link = &remotes; *link;)
	{
		remote_entry *e = *link;

		if (!e->stale)
		{
			link = &e->next;
			continue;
		}
		*link = e->next;
		close_entry(e);
		pfree(e);
	}

	/*
	 * The current user, as postgres_fdw and dblink check it: inside a
	 * SECURITY DEFINER function the definer, in a security-restricted
	 * operation (an index expression evaluated by ANALYZE) the table's
	 * owner.  The keep-alive worker runs as the same role.
	 */
	userid = GetUserId();
	server = named_server(name, userid);
	for (remote_entry *e = remotes; e; e = e->next)
		if (e->serverid == server->serverid && e->userid == userid)
			return e;
	return open_remote(server, userid);
}

an_store *
an_pg_store(void)
{
	const char *name = an_pg_store_name();
	an_store   *st;

	if (strcmp(name, "local") == 0)
	{
		st = local();
		an_pg_stats_attach(st, &local_row, "local");
	}
	else
	{
		remote_entry *e = remote(name);

		st = &e->store;
		an_pg_stats_attach(st, &e->row, name);
	}
	return st;
}
