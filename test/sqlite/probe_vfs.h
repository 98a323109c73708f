/*
 * probe_vfs.h — a VFS for the SQLite suite's programs that watches which
 * database files a process opens: the default VFS under the name "probe",
 * counting opens of main databases and recording each one's "tag" URI
 * parameter.  Static, so that each program is still one file.
 */
#ifndef ANARCHON_PROBE_VFS_H
#define ANARCHON_PROBE_VFS_H

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

static sqlite3_vfs probe_vfs;
static int	probe_main_opens;			/* main databases opened in this process */
static char probe_tags[256];			/* their "tag" parameters, comma-separated */

static int
probe_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *out)
{
	sqlite3_vfs *real = vfs->pAppData;

	if ((flags & SQLITE_OPEN_MAIN_DB) && name)
	{
		const char *tag = sqlite3_uri_parameter(name, "tag");
		size_t		used = strlen(probe_tags);

		probe_main_opens++;
		snprintf(probe_tags + used, sizeof(probe_tags) - used, "%s%s",
				 used ? "," : "", tag ? tag : "-");
	}
	return real->xOpen(real, name, file, flags, out);
}

/* Register "probe": the default VFS with probe_open; the new default if make_default. */
static void
probe_vfs_register(int make_default)
{
	sqlite3_vfs *real = sqlite3_vfs_find(NULL);

	probe_vfs = *real;
	probe_vfs.zName = "probe";
	probe_vfs.pAppData = real;
	probe_vfs.pNext = NULL;
	probe_vfs.xOpen = probe_open;
	sqlite3_vfs_register(&probe_vfs, make_default);
}

#endif							/* ANARCHON_PROBE_VFS_H */
