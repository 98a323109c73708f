#!/usr/bin/env bash
# deb-install.sh — the Debian packages, installed as a user would install them.
#
# Builds them (`make deb`), installs them with apt-get, and then uses only the
# installed paths: CREATE EXTENSION in a fresh PostgreSQL server, `.load`
# of the SQLite extension from the folder the package puts it in, and the
# command from /usr/bin with its man page.  Prints
# "ok - " / "not ok - " lines like a suite.
#
# It changes the system's packages, so test/platforms.sh runs it inside its
# chroots (never `make test` on the host).
source "$(dirname "$0")/lib.sh"
source "$TEST_ROOT/pg/server.sh"
cd "$REPO_ROOT" || exit 1
tmp=$(t_tmpdir)

pg_major=$(pg_config --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
v=$(cat VERSION)

# 1. The previous release's packages, built from its sources kept in the
# repository (test/upgrade/releases/), installed and used: a claim won, one
# run left running, a pause, in PostgreSQL and in a SQLite file.
old=0.1.0
mkdir -p "$tmp/old"
if tar -xJf "test/upgrade/releases/anarchon-$old.tar.xz" -C "$tmp/old" \
	&& (cd "$tmp/old/anarchon-$old" && bash debian/build-debs.sh) > "$tmp/old-deb.log" 2>&1; then
	ok "deb: the $old packages build from test/upgrade/releases/anarchon-$old.tar.xz"
else
	not_ok "deb: the $old packages build from test/upgrade/releases/anarchon-$old.tar.xz" "$(tail -n 30 "$tmp/old-deb.log")"
	suite_end; exit
fi
old_debs=$(ls "$tmp/old/anarchon-$old"/build/deb/{postgresql-"$pg_major"-anarchon,libsqlite3-mod-anarchon,anarchon-cli}_*.deb 2> /dev/null)
if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $old_debs > "$tmp/old-install.log" 2>&1
then ok "deb: apt-get installs the $old packages"
else not_ok "deb: apt-get installs the $old packages" "$(tail -n 20 "$tmp/old-install.log")"; suite_end; exit; fi
sqlite_so=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)/sqlite3/anarchon.so
old_slot=$(( ($(date +%s) / 60 - 1) * 60 * 1000 ))
if pg_start > "$tmp/pg.log" 2>&1; then
	out=$(psql -X -q -At -v ON_ERROR_STOP=1 2>&1 <<-SQL
		CREATE EXTENSION anarchon;
		SET anarchon.max_late_ms = 3600000;
		SET anarchon.lease_ms = 3600000;
		SELECT anarchon_claim('nightly', $old_slot, 'old-a');
		SELECT anarchon_finish('nightly', $old_slot, 'old-a');
		SELECT anarchon_claim('hourly', $old_slot, 'old-r');
		SELECT anarchon_claim('weekly', $old_slot, 'old-w');
		SELECT anarchon_finish('weekly', $old_slot, 'old-w');
		SELECT anarchon_pause('weekly') IS NOT NULL;
		SELECT extversion FROM pg_extension WHERE extname = 'anarchon';
	SQL
	)
	if [ "$out" = $'won\nt\nwon\nwon\nt\nt\n'"$old" ]; then ok "deb: $old in PostgreSQL: a run done, a run running, a pause"
	else not_ok "deb: $old in PostgreSQL: a run done, a run running, a pause" "$out"; fi
else
	not_ok "deb: a PostgreSQL $pg_major server starts" "$(tail -n 20 "$tmp/pg.log")"; suite_end; exit
fi
out=$(sqlite3 "$tmp/old.db" ".load ${sqlite_so%.so}" \
	"SELECT anarchon_config('max_late_ms', 3600000);" "SELECT anarchon_config('lease_ms', 3600000);" \
	"SELECT anarchon_claim('nightly', $old_slot, 'old-a');" "SELECT anarchon_finish('nightly', $old_slot, 'old-a');" \
	"SELECT anarchon_claim('hourly', $old_slot, 'old-r');" 2>&1 | tail -n 3)
if [ "$out" = $'won\n1\nwon' ]; then ok "deb: $old in a SQLite file: a run done, a run running"
else not_ok "deb: $old in a SQLite file: a run done, a run running" "$out"; fi

# 2. This release's packages, installed over them.
if make deb > "$tmp/deb.log" 2>&1; then ok "deb: make deb builds the packages"
else not_ok "deb: make deb builds the packages" "$(tail -n 30 "$tmp/deb.log")"; suite_end; exit; fi

pg_deb=$(ls build/deb/postgresql-"$pg_major"-anarchon_*.deb 2>/dev/null | head -n 1)
sq_deb=$(ls build/deb/libsqlite3-mod-anarchon_*.deb 2>/dev/null | head -n 1)
cli_deb=$(ls build/deb/anarchon-cli_*.deb 2>/dev/null | head -n 1)
if [ -n "$pg_deb" ] && [ -n "$sq_deb" ] && [ -n "$cli_deb" ]; then ok "deb: postgresql-$pg_major-anarchon, libsqlite3-mod-anarchon and anarchon-cli were built"
else not_ok "deb: postgresql-$pg_major-anarchon, libsqlite3-mod-anarchon and anarchon-cli were built" "$(ls build/deb)"; suite_end; exit; fi

if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "./$pg_deb" "./$sq_deb" "./$cli_deb" > "$tmp/install.log" 2>&1
then ok "deb: apt-get installs the three packages over $old's"
else not_ok "deb: apt-get installs the three packages over $old's" "$(tail -n 20 "$tmp/install.log")"; suite_end; exit; fi

# The files the server and SQLite load belong to the packages.
pkglib=$(pg_config --pkglibdir)/anarchon.so
owner_pg=$(dpkg -S "$pkglib" 2>/dev/null | cut -d: -f1)
owner_sq=$(dpkg -S "$sqlite_so" 2>/dev/null | cut -d: -f1)
if [ "$owner_pg" = "postgresql-$pg_major-anarchon" ] && [ "$owner_sq" = libsqlite3-mod-anarchon ]
then ok "deb: $pkglib and $sqlite_so come from the packages"
else not_ok "deb: the installed files come from the packages" "pg: $owner_pg" "sqlite: $owner_sq"; fi
# The client libraries are loaded on first use, not linked (core/dl.h): each
# package depends on their packages itself, which dh_shlibdeps cannot see.
# Which packages those are, this system says (ldconfig's cache, dpkg's files).
want_deps=$(for l in hiredis rabbitmq ssl; do
	f=$(ldconfig -p | awk -v n="lib$l.so." 'index($1, n) == 1 { print $NF; exit }')
	[ -z "$f" ] || dpkg -S "$(readlink -f "$f")" 2> /dev/null | sed -n '1s/[:,].*//p'
done | sort | tr '\n' ' ')
lacking=
for d in "$pg_deb" "$sq_deb" "$cli_deb"; do
	has_deps=$(dpkg-deb -f "$d" Depends | tr ',' '\n' | sed 's/^ *//; s/ .*//' | sort)
	for w in $want_deps; do grep -qx "$w" <<< "$has_deps" || lacking+=" ${d##*/}:$w"; done
done
if [ -n "$want_deps" ] && [ -z "$lacking" ]; then ok "deb: each package depends on the client libraries it loads ($want_deps)"
else not_ok "deb: each package depends on the client libraries it loads" "want: ${want_deps:-none found}" "lacking:$lacking"; fi
queries=$(pg_config --sharedir)/extension/anarchon-queries.yaml
owner_q=$(dpkg -S "$queries" 2>/dev/null | cut -d: -f1)
if [ "$owner_q" = "postgresql-$pg_major-anarchon" ] && cmp -s "$queries" pg/prometheus/anarchon-queries.yaml
then ok "deb: $queries, the exporter's query file, comes from the package"
else not_ok "deb: the exporter's query file comes from the package" "$queries: ${owner_q:-no package}"; fi

# 3. The upgrade: ALTER EXTENSION anarchon UPDATE keeps the history, the
# running run (heartbeat and fencing) and the pause; the old slots are not
# won again; the SQLite file migrates itself on first use.
out=$(psql -X -q -At -v ON_ERROR_STOP=1 2>&1 <<-SQL
	ALTER EXTENSION anarchon UPDATE;
	SELECT extversion FROM pg_extension WHERE extname = 'anarchon';
	SET anarchon.max_late_ms = 3600000;
	SELECT anarchon_claim('nightly', $old_slot, 'new-b');
	SELECT anarchon_claim('hourly', $old_slot, 'new-b');
	SELECT anarchon_heartbeat('hourly', $old_slot, 'old-r');
	SELECT anarchon_finish('hourly', $old_slot, 'new-b');
	SELECT anarchon_paused('weekly') IS NOT NULL;
	SELECT count(*) FROM anarchon.runs;
SQL
)
if [ "$out" = "$v"$'\ndone\nrunning\nt\nf\nt\n3' ]; then
	ok "deb: ALTER EXTENSION anarchon UPDATE to $v keeps the runs, the lease, the fencing and the pause"
else
	not_ok "deb: ALTER EXTENSION anarchon UPDATE to $v keeps the runs, the lease, the fencing and the pause" "$out"
fi
out=$(sqlite3 "$tmp/old.db" ".load ${sqlite_so%.so}" "SELECT anarchon_config('max_late_ms', 3600000);" \
	"SELECT anarchon_claim('nightly', $old_slot, 'new-b');" "SELECT anarchon_claim('hourly', $old_slot, 'new-b');" \
	"SELECT anarchon_heartbeat('hourly', $old_slot, 'old-r');" 2>&1 | tail -n 3)
if [ "$out" = $'done\nrunning\n1' ]; then ok "deb: the $old SQLite file, opened by $v: the runs and the lease kept"
else not_ok "deb: the $old SQLite file, opened by $v: the runs and the lease kept" "$out"; fi

# PostgreSQL: CREATE EXTENSION from the installed files, one claim won, one running.
if psql -X -q -c 'CREATE DATABASE fresh' > "$tmp/createdb.log" 2>&1; then
	slot=$(( ($(date +%s) / 60) * 60 * 1000 ))
	out=$(psql -X -q -At -v ON_ERROR_STOP=1 -d fresh 2>&1 <<-SQL
		CREATE EXTENSION anarchon;
		SELECT anarchon_claim('nightly', $slot, 'deb-a');
		SELECT anarchon_claim('nightly', $slot, 'deb-b');
	SQL
	)
	if [ "$out" = $'won\nrunning' ]; then ok "deb: CREATE EXTENSION anarchon from the package, then won and running"
	else not_ok "deb: CREATE EXTENSION anarchon from the package, then won and running" "$out"; fi
else
	not_ok "deb: CREATE DATABASE fresh" "$(cat "$tmp/createdb.log")"
fi

# SQLite: .load from the package's folder.
slot=$(( ($(date +%s) / 60) * 60 * 1000 ))
out=$(sqlite3 "$tmp/app.db" ".load ${sqlite_so%.so}" \
	"SELECT anarchon_claim('nightly', $slot, 'deb-a');" \
	"SELECT anarchon_claim('nightly', $slot, 'deb-b');" 2>&1)
if [ "$out" = $'won\nrunning' ]; then ok "deb: .load ${sqlite_so%.so}, then won and running"
else not_ok "deb: .load ${sqlite_so%.so}, then won and running" "$out"; fi

# The command: /usr/bin/anarchon and its man page belong to anarchon-cli, and it runs.
owner_cli=$(dpkg -S /usr/bin/anarchon 2>/dev/null | cut -d: -f1)
owner_man=$(dpkg -S /usr/share/man/man1/anarchon.1.gz 2>/dev/null | cut -d: -f1)
if [ "$owner_cli" = anarchon-cli ] && [ "$owner_man" = anarchon-cli ]
then ok "deb: /usr/bin/anarchon and its man page come from anarchon-cli"
else not_ok "deb: /usr/bin/anarchon and its man page come from anarchon-cli" "binary: $owner_cli" "man page: $owner_man"; fi
if out=$(/usr/bin/anarchon --version 2>&1) && [ -n "$out" ]; then ok "deb: /usr/bin/anarchon --version runs ($out)"
else not_ok "deb: /usr/bin/anarchon --version runs" "$out"; fi
has "deb: /usr/bin/anarchon --version says $v" "$out" "anarchon $v"

# 4. apt-get remove takes the programs and leaves every database's data.
if DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq "postgresql-$pg_major-anarchon" libsqlite3-mod-anarchon anarchon-cli \
	> "$tmp/remove.log" 2>&1; then
	ok "deb: apt-get remove the three packages"
else
	not_ok "deb: apt-get remove the three packages" "$(tail -n 20 "$tmp/remove.log")"
fi
out=$(psql -X -q -At -c 'SELECT count(*) FROM anarchon.runs' 2>&1; sqlite3 "$tmp/old.db" 'SELECT count(*) FROM anarchon_runs' 2>&1)
if [ ! -e "$pkglib" ] && [ "$out" = $'3\n2' ]; then ok "deb: after apt-get remove, the runs are still in PostgreSQL and in the SQLite file"
else not_ok "deb: after apt-get remove, the runs are still in PostgreSQL and in the SQLite file" "library: $(ls "$pkglib" 2>&1)" "$out"; fi

suite_end
