/*
 * store_select.c — which store a connection's functions talk to.
 *
 * The store is opened on first use (the local one unless anarchon_config chose
 * another) and kept for the life of the connection: one claim connection or
 * one network connection per database connection, reused by every call.
 */
#include <string.h>

#include "host.h"
#include "remote.h"
#include "url.h"

SQLITE_EXTENSION_INIT3

static int64_t
host_now(void *ctx)
{
	return an_sqlite_now(((an_sqlite_conn *) ctx)->db);
}

#if SQLITE_VERSION_NUMBER >= 3041000
/*
 * SQLite 3.41 lets a function see sqlite3_interrupt(), so a network wait ends
 * as soon as the caller interrupts it.  The headers may be newer than the
 * library loaded at run time, whose API table then has no such entry: ask
 * only a library that has it.
 */
static int
host_interrupted(void *ctx)
{
	return sqlite3_is_interrupted(((an_sqlite_conn *) ctx)->db);
}
#endif

/*
 * Open the store url names; NULL with a message in err and the error's code
 * in *code on failure.
 */
static an_store *
open_store(an_sqlite_conn *conn, const char *url, an_error *code, an_err *err)
{
	const an_store_methods *m;
	an_store   *st;
	void	   *arg = NULL;
	an_error	rc;

	conn->host.ctx = conn;
	conn->host.now_ms = host_now;
#if SQLITE_VERSION_NUMBER >= 3041000
	conn->host.interrupted = sqlite3_libversion_number() >= 3041000 ? host_interrupted : NULL;
#else
	conn->host.interrupted = NULL;
#endif

	*code = AN_E_CONFIG;
	if (strcmp(url, "local") == 0)
	{
		m = &an_sqlite_local_methods;
		arg = conn->db;
	}
	else if ((m = an_remote_find(url, err)) == NULL)
		return NULL;

	if ((st = sqlite3_malloc(sizeof(*st))) == NULL)
	{
		*code = AN_E_NOMEM;
		an_errf(err, "out of memory");
		return NULL;
	}
	an_store_init(st, m, &conn->host);
	if ((rc = m->open(st, url, arg)) != AN_OK)
	{
		*code = rc;
		*err = st->err;
		m->close(st);
		sqlite3_free(st);
		return NULL;
	}
	return st;
}

/*
 * Open the connection's store if it is not open yet.  A store that cannot be
 * opened is still the connection's store: the call fails, the failure is
 * counted in its row of anarchon_stats (a host misconfigured from the start
 * must not look idle), and the next call tries again.
 */
static an_error
ensure_open(an_sqlite_conn *conn, an_err *err)
{
	const char *url = conn->store_url ? conn->store_url : "local";
	an_error	code;

	if (conn->store != NULL)
		return AN_OK;
	if ((conn->store = open_store(conn, url, &code, err)) == NULL)
	{
		an_sqlite_stats_failed(conn, code);
		return code;
	}
	an_sqlite_stats_attach(conn);
	return AN_OK;
}

an_store *
an_sqlite_store(an_sqlite_conn *conn, an_err *err)
{
	if (conn->store != NULL)
		an_store_clear(conn->store);
	else if (ensure_open(conn, err) != AN_OK)
		return NULL;
	return conn->store;
}

/*
 * The URL becomes the connection's store before anything is opened, and the
 * old store is closed first: once a connection was asked for a store, no
 * claim is decided anywhere else until it is set again, even when this one
 * cannot be opened now (a wrong password, a server that is down, a scheme
 * this build lacks).  An application that logs the error of a failed set and
 * carries on then gets an error from every call, never a local `won`.
 */
int
an_sqlite_store_switch(an_sqlite_conn *conn, const char *url, an_err *err)
{
	char	   *copy = sqlite3_mprintf("%s", url);

	if (copy == NULL)
	{
		an_errf(err, "out of memory");
		return AN_E_NOMEM;
	}
	an_sqlite_store_close(conn);
	sqlite3_free(conn->store_url);
	conn->store_url = copy;
	return ensure_open(conn, err);
}

void
an_sqlite_store_close(an_sqlite_conn *conn)
{
	if (conn->store)
	{
		conn->store->m->close(conn->store);
		sqlite3_free(conn->store);
	}
	conn->store = NULL;
}
