/*
 * claim_conn.c — the claim connection: a second connection to the caller's
 * database, opened the way the caller opened it, and what the caller's
 * connection allows it to do.
 *
 * The local store commits claims on its own connection to the caller's file
 * (local_store.c says why).  That connection must reach the same database
 * through the same layers, or the two would not see each other's locks: so
 * it is opened with the caller's VFS and with every URI parameter the
 * caller gave (sqlite3_db_filename keeps them), as a URI.  And it must not
 * write where the caller may not: a caller opened read-only (SQLITE_OPEN_READONLY,
 * mode=ro, a file it cannot write) or set to PRAGMA query_only gets an error
 * from every function that writes, before anything is opened or written.  A
 * caller without file locking (nolock=1, the unix-none VFS) cannot make a
 * claim atomic between processes: writing functions are refused there too.
 */
#include <stdio.h>
#include <string.h>

#include "host.h"

SQLITE_EXTENSION_INIT3

/*
 * Append s to buf (at *len, capacity cap), percent-encoding what a URI may
 * not hold; 0 when it does not fit.  On success at least three bytes of buf
 * are left after the terminating NUL's position.
 */
static int
put_escaped(char *buf, size_t cap, size_t *len, const char *s, const char *keep)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++)
	{
		unsigned char c = (unsigned char) *s;
		int			plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || strchr("-._~", c) || (c && strchr(keep, c));

		if (*len + 7 > cap)
			return 0;
		if (plain)
			buf[(*len)++] = (char) c;
		else
		{
			buf[(*len)++] = '%';
			buf[(*len)++] = hex[c >> 4];
			buf[(*len)++] = hex[c & 15];
		}
	}
	buf[*len] = '\0';
	return 1;
}

/*
 * The URI of the caller's main database: "file:" + its path, then every URI
 * parameter it was opened with.  sqlite3_malloc'd, or NULL.
 */
static char *
twin_uri(const char *file, int *rwc)
{
	size_t		cap = 3 * strlen(file) + 32;
	size_t		len;
	const char *key;
	char	   *uri;

	*rwc = 0;
	for (int i = 0; (key = sqlite3_uri_key(file, i)) != NULL; i++)
	{
		const char *v = sqlite3_uri_parameter(file, key);

		cap += 3 * (strlen(key) + (v ? strlen(v) : 0)) + 8;
	}
	if ((uri = sqlite3_malloc64(cap)) == NULL)
		return NULL;
	memcpy(uri, "file:", 6);
	len = 5;
	if (!put_escaped(uri, cap, &len, file, "/:"))
		goto overflow;
	for (int i = 0; (key = sqlite3_uri_key(file, i)) != NULL; i++)
	{
		const char *v = sqlite3_uri_parameter(file, key);

		/* put_escaped leaves room for at least three more bytes. */
		uri[len++] = i == 0 ? '?' : '&';
		if (!put_escaped(uri, cap, &len, key, ""))
			goto overflow;
		uri[len++] = '=';
		if (!put_escaped(uri, cap, &len, v ? v : "", ""))
			goto overflow;
		if (strcmp(key, "mode") == 0 && v && strcmp(v, "rwc") == 0)
			*rwc = 1;
	}
	return uri;

overflow:
	sqlite3_free(uri);
	return NULL;
}

int
an_sqlite_open_twin(sqlite3 *caller, sqlite3 **out, an_err *err)
{
	const char *file = sqlite3_db_filename(caller, "main");
	sqlite3_vfs *vfs = an_sqlite_vfs(caller);
	int			rwc;
	char	   *uri;
	int			rc;

	*out = NULL;
	if ((uri = twin_uri(file, &rwc)) == NULL)
	{
		an_errf(err, "out of memory");
		return SQLITE_NOMEM;
	}
	/*
	 * mode=rwc may not ask for more than the flags allow; the file exists,
	 * so creating it is never what happens.
	 */
	rc = sqlite3_open_v2(uri, out,
						 SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI | (rwc ? SQLITE_OPEN_CREATE : 0),
						 vfs ? vfs->zName : NULL);
	if (rc != SQLITE_OK)
	{
		an_errf(err, "cannot open a claim connection on %s: %s", file,
				*out ? sqlite3_errmsg(*out) : "out of memory");
		sqlite3_close(*out);
		*out = NULL;
	}
	else
		sqlite3_extended_result_codes(*out, 1);
	sqlite3_free(uri);
	return rc;
}

/* PRAGMA query_only of db: 1 when set. */
static int
query_only(sqlite3 *db)
{
	sqlite3_stmt *s;
	int			on = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA query_only", -1, &s, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(s) == SQLITE_ROW)
		on = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return on;
}

int
an_sqlite_may_write(sqlite3 *caller, const char *fn, an_err *err)
{
	const char *file = sqlite3_db_filename(caller, "main");
	sqlite3_vfs *vfs = an_sqlite_vfs(caller);

	if (sqlite3_db_readonly(caller, "main") == 1)
		an_errf(err, "this connection opened the database read-only (SQLITE_OPEN_READONLY,"
				" mode=ro, or a file it may not write), and %s writes anarchon_runs."
				" Call it on a connection that may write.", fn);
	else if (query_only(caller))
		an_errf(err, "this connection is set to PRAGMA query_only, and %s writes anarchon_runs."
				" Call it on a connection that may write.", fn);
	else if ((file && sqlite3_uri_boolean(file, "nolock", 0)) ||
			 (vfs && strcmp(vfs->zName, "unix-none") == 0))
		an_errf(err, "this connection opened the database without file locking (nolock=1 or"
				" the unix-none VFS), and %s needs the database's write lock to decide between"
				" processes. Open it with locking.", fn);
	else
		return 1;
	return 0;
}
