/*
 * extension.c — entry point of the SQLite loadable extension.
 *
 *   .load ./sqlite/anarchon                 (sqlite3 CLI)
 *   SELECT load_extension('./sqlite/anarchon');
 *   conn.load_extension("./sqlite/anarchon")   (Python's sqlite3)
 *
 * Registers the functions of functions.c on the connection that loads it,
 * with a fresh an_sqlite_conn holding that connection's settings and store.
 * The table anarchon_runs is created in the main database on first use.
 */
#include <string.h>

#include "host.h"
#include "schedule.h"

SQLITE_EXTENSION_INIT1

#ifdef _WIN32
__declspec(dllexport)
#endif
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
	conn = sqlite3_malloc(sizeof(*conn));
	if (conn == NULL)
		return SQLITE_NOMEM;
	memset(conn, 0, sizeof(*conn));
	conn->db = db;
	an_settings_default(&conn->settings);

	rc = an_sqlite_register_functions(db, conn);
	if (rc == SQLITE_OK)
		rc = an_sqlite_schedule_register(db);
	if (rc != SQLITE_OK)
		*pzErrMsg = sqlite3_mprintf("anarchon: cannot register its functions: %s",
									sqlite3_errstr(rc));
	return rc;
}
