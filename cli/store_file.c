/*
 * store_file.c — the file of a sqlite: store URL: its mode, and which
 * symbolic links the command follows to it.
 *
 *   sqlite:///var/lib/app/runs.db            created 0600
 *   sqlite:///var/lib/app/runs.db?mode=0640  created 0640 (octal, owner rw)
 *
 * The file holds who runs what; SQLite would create it with 0644 less the
 * umask.  It is created here first, with the mode set whatever the umask,
 * and SQLite gives its -wal, -shm and -journal files the database's mode.
 * A file that exists keeps its mode.
 *
 * A symbolic link is followed only when nobody else could have put it
 * there: a link in a directory that others can write (world-writable, or
 * group-writable and not owned by the caller, such as /tmp) is refused
 * unless the caller or root owns the link — the rule of the kernel's
 * protected_symlinks, applied to every world- or group-writable directory,
 * sticky or not.  Each link of a chain is checked.  A path that is not a
 * link is opened with SQLITE_OPEN_NOFOLLOW, so that it cannot become one
 * between the check and the open.
 *
 * The store writes the file and makes its journal beside it, so the caller
 * needs read and write on the file and write on its directory.  Without them
 * SQLite would open the file read-only and fail at the first claim with an
 * error of its own (exit 70): checked here, it is a permission problem,
 * exit 77, naming the file, its mode and its owner.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define LINKS_MAX 40			/* as the kernel's ELOOP */

int
an_cli_sqlite_target(const char *rest, char *path, size_t pathlen, unsigned *mode)
{
	const char *q = strchr(rest, '?');
	size_t		n = q ? (size_t) (q - rest) : strlen(rest);

	*mode = 0600;
	if (n == 0)
	{
		an_cli_error("sqlite: URL names no file: give sqlite:///var/lib/app/runs.db");
		return AN_EXIT_USAGE;
	}
	if (n >= pathlen)
	{
		an_cli_error("sqlite: URL's file name is longer than %zu bytes", pathlen - 1);
		return AN_EXIT_USAGE;
	}
	memcpy(path, rest, n);
	path[n] = '\0';
	if (q == NULL)
		return AN_EXIT_OK;
	if (strncmp(q + 1, "mode=", 5) != 0)
	{
		an_cli_error("sqlite: URLs take one parameter, mode (octal, such as"
					 " sqlite:///var/lib/app/runs.db?mode=0640), not %s", q + 1);
		return AN_EXIT_USAGE;
	}
	q += 6;
	if (*q == '\0' || strlen(q) > 4 || strspn(q, "01234567") != strlen(q))
	{
		an_cli_error("sqlite: URL's mode must be octal digits such as 0600 or 0640, not \"%s\"", q);
		return AN_EXIT_USAGE;
	}
	*mode = (unsigned) strtoul(q, NULL, 8);
	if (*mode > 0777 || (*mode & 0600) != 0600)
	{
		an_cli_error("sqlite: URL's mode %s must give its owner read and write (0600) and no"
					 " set-id or sticky bit (at most 0777)", q);
		return AN_EXIT_USAGE;
	}
	return AN_EXIT_OK;
}

/* The directory part of path into dir ("." when it has none). */
static void
dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int) (slash - path), path);
}

/* May the link at path (lstat'ed as ln) be followed?  0, or 77 after a message. */
static int
link_ok(const char *file, const char *path, const struct stat *ln)
{
	char		dir[PATH_MAX];
	struct stat d;
	uid_t		me = geteuid();

	dir_of(path, dir, sizeof(dir));
	if (stat(dir, &d) != 0)
	{
		an_cli_error("cannot read directory %s of SQLite database %s: %s", dir, file, strerror(errno));
		return AN_EXIT_CONFIG;
	}
	if (!((d.st_mode & S_IWOTH) || ((d.st_mode & S_IWGRP) && d.st_uid != me)))
		return AN_EXIT_OK;		/* nobody else writes there */
	if (ln->st_uid == me || ln->st_uid == 0)
		return AN_EXIT_OK;		/* put there by the caller or root */
	an_cli_error("SQLite database %s: refusing to follow the symbolic link %s, owned by uid %ld,"
				 " in %s, a directory others can write. Give the file's own path, or make the"
				 " link yourself", file, path, (long) ln->st_uid, dir);
	return AN_EXIT_NOPERM;
}

/* "mode 0444, owned by root" of path into out; "" when it cannot be read. */
static void
mode_owner(const char *path, char *out, size_t len)
{
	struct stat st;
	struct passwd *pw;

	out[0] = '\0';
	if (stat(path, &st) != 0)
		return;
	if ((pw = getpwuid(st.st_uid)) != NULL)
		snprintf(out, len, "mode %04o, owned by %s", (unsigned) (st.st_mode & 07777), pw->pw_name);
	else
		snprintf(out, len, "mode %04o, owned by uid %ld", (unsigned) (st.st_mode & 07777), (long) st.st_uid);
}

/* The permission problem with file (path, its target): 77 after its one line. */
static int
no_permission(const char *verb, const char *file, const char *path, int on_dir)
{
	char		dir[PATH_MAX],
				mo[200],
				what[2 * PATH_MAX + 240];

	dir_of(path, dir, sizeof(dir));
	mode_owner(on_dir ? dir : path, mo, sizeof(mo));
	if (mo[0] == '\0')
		snprintf(mo, sizeof(mo), "out of this user's reach");
	if (on_dir)
		snprintf(what, sizeof(what), "its directory %s is %s", dir, mo);
	else if (strcmp(file, path) != 0)
		snprintf(what, sizeof(what), "the file, a link to %s, is %s", path, mo);
	else
		snprintf(what, sizeof(what), "the file is %s", mo);
	an_cli_error("cannot %s SQLite database %s: permission denied (%s); the store needs read and"
				 " write on the file and write on its directory", verb, file, what);
	return AN_EXIT_NOPERM;
}

/* May the caller read and write path, and make its journal beside it?  0, or 77 after a message. */
static int
writable(const char *file, const char *path)
{
	char		dir[PATH_MAX];

	if (faccessat(AT_FDCWD, path, R_OK | W_OK, AT_EACCESS) != 0 && errno == EACCES)
		return no_permission("write", file, path, 0);
	dir_of(path, dir, sizeof(dir));
	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0 && errno == EACCES)
		return no_permission("write", file, path, 1);
	return AN_EXIT_OK;
}

int
an_cli_sqlite_create(const char *file, unsigned mode, int *nofollow)
{
	char		path[PATH_MAX],
				target[PATH_MAX],
				dir[PATH_MAX];
	struct stat st;
	int			fd,
				rc;

	*nofollow = 1;
	snprintf(path, sizeof(path), "%s", file);
	for (int hops = 0;; hops++)
	{
		ssize_t		n;

		if (lstat(path, &st) != 0)
			break;				/* missing: created below */
		if (!S_ISLNK(st.st_mode))
			return writable(file, path);	/* it exists: it keeps its mode */
		*nofollow = 0;
		if (hops == LINKS_MAX)
		{
			an_cli_error("SQLite database %s: too many symbolic links", file);
			return AN_EXIT_CONFIG;
		}
		if ((rc = link_ok(file, path, &st)) != AN_EXIT_OK)
			return rc;
		if ((n = readlink(path, target, sizeof(target) - 1)) < 0)
			break;
		target[n] = '\0';
		if (target[0] == '/')
			snprintf(path, sizeof(path), "%s", target);
		else
		{
			dir_of(path, dir, sizeof(dir));
			if (snprintf(path, sizeof(path), "%s/%s", dir, target) >= (int) sizeof(path))
			{
				an_cli_error("SQLite database %s: a link's target is too long", file);
				return AN_EXIT_CONFIG;
			}
		}
	}
	/* Create it with its mode; O_EXCL never follows a link made meanwhile. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t) mode);
	if (fd < 0)
	{
		if (errno == EEXIST)
			return an_cli_sqlite_create(file, mode, nofollow);	/* made meanwhile: check it again */
		if (errno == EACCES)
			return no_permission("create", file, path, 1);
		an_cli_error("cannot create SQLite database %s: %s", file, strerror(errno));
		return AN_EXIT_CONFIG;
	}
	/* The umask does not narrow an explicit mode. */
	rc = fchmod(fd, (mode_t) mode);
	close(fd);
	if (rc != 0)
	{
		an_cli_error("cannot set the mode of SQLite database %s: %s", file, strerror(errno));
		return AN_EXIT_CONFIG;
	}
	return writable(file, path);
}
