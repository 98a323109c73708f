/*
 * extension.c — entry point of the SQLite loadable extension.
 *
 *   .load ./sqlite/anarchon                 (sqlite3 CLI)
 *   SELECT load_extension('./sqlite/anarchon');
 *   conn.load_extension("./sqlite/anarchon")   (Python's sqlite3)
 *
 * Registers the functions of functions.c on the connection that loads it,
 * with a fresh an_sqlite_conn holding that connection's settings and store.
 * The tables are created in the main database on first use, or an older
 * file's migrated (format.c).
 *
 * Loading it again on the same connection changes nothing: registering the
 * functions again would give them a fresh an_sqlite_conn, so the
 * connection's settings would silently return to the defaults and its store
 * to the local file, and the old claim connection would be closed under a
 * claim in progress.  Whether this connection has it already is asked of
 * the connection itself, through the internal function anarchon_loaded: the
 * load passes it, by SQLite's pointer-passing interface (which SQL cannot
 * forge), the address of a variable of this library; it answers 1 when that
 * is its own, so the functions in place are this library's.  A different
 * copy of the library (another file) is refused with an error instead of
 * being mixed with the first.
 */
#include <string.h>

#include "format.h"
#include "host.h"
#include "schedule.h"

SQLITE_EXTENSION_INIT1

#ifdef _WIN32
__declspec(dllexport)
#endif
/*
 * Is anarchon loaded on db already?  0: no; 1: yes, by this library; -1: by
 * another copy of it.
 */
static int
loaded_already(sqlite3 *db)
{
	sqlite3_stmt *s;
	int			answer = 0;

	/* Not registered: the statement does not prepare ("no such function"). */
	if (sqlite3_prepare_v2(db, "SELECT anarchon_loaded(?1)", -1, &s, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_pointer(s, 1, (void *) an_sqlite_build_tag(), AN_SQLITE_BUILD_TAG_TYPE, NULL);
	if (sqlite3_step(s) == SQLITE_ROW)
		answer = sqlite3_column_int(s, 0) == 1 ? 1 : -1;
	sqlite3_finalize(s);
	return answer;
}

int
sqlite3_anarchon_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi)
{
	an_sqlite_conn *conn;
	int			rc;

	SQLITE_EXTENSION_INIT2(pApi);
	if (sqlite3_libversion_number() < 3037000)
	{
		*pzErrMsg = sqlite3_mprintf("anarchon needs SQLite 3.37 or later, this is %s",
									sqlite3_libversion());
		return SQLITE_ERROR;
	}
	switch (loaded_already(db))
	{
		case 1:
			return SQLITE_OK;
		case -1:
			*pzErrMsg = sqlite3_mprintf("anarchon is already loaded on this connection from another"
										" copy of the library; load one copy per connection");
			return SQLITE_ERROR;
	}
	conn = sqlite3_malloc(sizeof(*conn));
	if (conn == NULL)
		return SQLITE_NOMEM;
	memset(conn, 0, sizeof(*conn));
	conn->db = db;
	an_settings_default(&conn->settings);

	rc = an_sqlite_register_functions(db, conn);
	if (rc == SQLITE_OK)
		rc = an_sqlite_schedule_register(db, conn);
	if (rc == SQLITE_OK)
		rc = an_sqlite_stats_register(db, conn);
	if (rc == SQLITE_OK)
		rc = an_sqlite_claim_many_register(db, conn);
	if (rc == SQLITE_OK)
		rc = an_sqlite_format_register(db);
	an_sqlite_stats_started(an_sqlite_now(db));
	if (rc != SQLITE_OK)
		*pzErrMsg = sqlite3_mprintf("anarchon: cannot register its functions: %s",
									sqlite3_errstr(rc));
	return rc;
}
