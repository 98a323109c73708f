# server.sh — a temporary PostgreSQL server for a test suite (source it
# after ../lib.sh).  The server is the one of pg_config (15 on Debian 12,
# 17 on 13, 18 on sid: test/platforms.sh runs the suites on each).
#
#   pg_install                 `make install` the extension once (as root)
#   pg_start [CONF_LINE ...]   initdb + start a server on a free 127.0.0.1 port,
#                              data and socket under a temporary folder; each
#                              argument is appended to postgresql.conf
#                              (e.g. "shared_preload_libraries = 'pg_cron'")
#   pg_suite_start SUITE DIR [CONF_LINE ...]
#                              both, each failure a not ok of SUITE (logs in DIR)
#   pg_stop [DATA_DIR]         stop it (pg_start registers this with at_exit,
#                              for its own data folder: a suite may start two)
#   pg_as_server_user CMD...   run CMD as the user that owns the server
#
# root may not run initdb or postgres, so as root the server runs as the
# `postgres` OS user; as anyone else, as that user.  pg_start exports PGHOST
# (the socket folder), PGPORT, PGUSER (the bootstrap superuser) and
# PGDATABASE=postgres, plus PG_DATA, PG_DIR and PG_LOG for the suite.

PG_BINDIR=${PG_BINDIR:-$(pg_config --bindir)}

pg_as_server_user() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

pg_install() {
	if [ "$(id -u)" -ne 0 ]; then
		# Not root: the extension must already be installed (make install as root).
		[ -f "$(pg_config --sharedir)/extension/anarchon.control" ] && return 0
		echo "anarchon is not installed: run 'make install' as root" >&2
		return 1
	fi
	# Suites may run side by side (test/run's background suites), and a server
	# of one may load anarchon.so while another reinstalls it: one install at
	# a time, and none when what is installed is already this build.
	(
		flock 8
		make -s -C "$REPO_ROOT" > /dev/null || exit 1
		pg_installed_same && exit 0
		make -s -C "$REPO_ROOT" install > /dev/null
	) 8> "${TMPDIR:-/tmp}/anarchon-pg-install.lock"
}

# pg_installed_same: the installed module, control file, scripts and query
# file are this build's, byte for byte.
pg_installed_same() {
	local lib ext f
	lib=$(pg_config --pkglibdir) ext=$(pg_config --sharedir)/extension
	[ -f "$REPO_ROOT/anarchon.so" ] && cmp -s "$REPO_ROOT/anarchon.so" "$lib/anarchon.so" || return 1
	for f in "$REPO_ROOT"/pg/anarchon.control "$REPO_ROOT"/pg/anarchon--*.sql "$REPO_ROOT"/pg/upgrade/anarchon--*--*.sql \
		"$REPO_ROOT"/pg/prometheus/anarchon-queries.yaml; do
		[ -f "$f" ] || continue
		cmp -s "$f" "$ext/${f##*/}" || return 1
	done
}

# pg_suite_start SUITE DIR [postgresql.conf lines...]: pg_install, then
# pg_start, each failure reported as SUITE's not ok with the end of its log
# (kept in DIR); 1 then, and the suite ends.
pg_suite_start() {
	local suite=$1 dir=$2
	shift 2
	if ! pg_install > "$dir/install.log" 2>&1; then
		not_ok "$suite: install the extension" "$(tail -n 20 "$dir/install.log")"
		return 1
	fi
	if ! pg_start "$@" 2> "$dir/start.log"; then
		not_ok "$suite: start PostgreSQL" "$(tail -n 20 "$dir/start.log")"
		return 1
	fi
}

pg_start() {
	local conf
	PG_DIR=$(t_tmpdir)
	PG_DATA=$PG_DIR/data
	PG_LOG=$PG_DIR/server.log
	if [ "$(id -u)" -eq 0 ]; then chown postgres: "$PG_DIR"; fi
	PGPORT=$(free_port) || { echo "no free port" >&2; return 1; }
	PGHOST=$PG_DIR
	PGUSER=$(pg_as_server_user id -un)
	PGDATABASE=postgres
	export PGHOST PGPORT PGUSER PGDATABASE PG_DATA PG_DIR PG_LOG

	pg_as_server_user "$PG_BINDIR/initdb" -D "$PG_DATA" -A trust -U "$PGUSER" \
		--no-sync -E UTF8 --locale=C > "$PG_DIR/initdb.log" 2>&1 || {
		cat "$PG_DIR/initdb.log" >&2
		return 1
	}
	{
		echo "listen_addresses = '127.0.0.1'"
		echo "port = $PGPORT"
		echo "unix_socket_directories = '$PG_DIR'"
		echo "max_connections = 120"
		echo "shared_buffers = 64MB"
		echo "log_min_messages = warning"
		for conf in "$@"; do echo "$conf"; done
		# A suite that turns fsync off for speed accepts the risk by name, or
		# every local claim would be refused (pg/durable.c).
		for conf in "$@"; do
			case $conf in "fsync = off" | "fsync=off") echo "anarchon.durability = 'accept-loss'" ;; esac
		done
	} | pg_as_server_user tee -a "$PG_DATA/postgresql.conf" > /dev/null
	at_exit "pg_stop '$PG_DATA'"
	pg_as_server_user "$PG_BINDIR/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 start > /dev/null || {
		tail -n 20 "$PG_LOG" >&2
		return 1
	}
}

pg_stop() {
	local data=${1:-${PG_DATA:-}}
	[ -n "$data" ] && [ -f "$data/postmaster.pid" ] || return 0
	pg_as_server_user "$PG_BINDIR/pg_ctl" -D "$data" -m fast -w -t 60 stop > /dev/null 2>&1 ||
		pg_as_server_user "$PG_BINDIR/pg_ctl" -D "$data" -m immediate -w stop > /dev/null 2>&1
	return 0
}
