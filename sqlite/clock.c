/*
 * clock.c — the SQLite host's clock: the VFS's current time, so that a test
 * VFS (or an application's) sets the time every decision is made on.
 */
#include "host.h"

SQLITE_EXTENSION_INIT3

/* Julian day 0 in ms, as SQLite's VFS counts it, minus the Unix epoch. */
#define UNIX_EPOCH_JD_MS INT64_C(210866760000000)

int64_t
an_sqlite_vfs_now(sqlite3_vfs *vfs)
{
	sqlite3_int64 jd_ms = 0;

	if (vfs->iVersion >= 2 && vfs->xCurrentTimeInt64)
		vfs->xCurrentTimeInt64(vfs, &jd_ms);
	else
	{
		double		jd = 0;

		vfs->xCurrentTime(vfs, &jd);
		jd_ms = (sqlite3_int64) (jd * 86400000.0);
	}
	return jd_ms - UNIX_EPOCH_JD_MS;
}

sqlite3_vfs *
an_sqlite_vfs(sqlite3 *db)
{
	sqlite3_vfs *vfs = NULL;

	if (sqlite3_file_control(db, "main", SQLITE_FCNTL_VFS_POINTER, &vfs) != SQLITE_OK || vfs == NULL)
		vfs = sqlite3_vfs_find(NULL);
	return vfs;
}

int64_t
an_sqlite_now(sqlite3 *db)
{
	return an_sqlite_vfs_now(an_sqlite_vfs(db));
}
