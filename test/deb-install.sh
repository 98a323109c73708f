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

if make deb > "$tmp/deb.log" 2>&1; then ok "deb: make deb builds the packages"
else not_ok "deb: make deb builds the packages" "$(tail -n 30 "$tmp/deb.log")"; suite_end; exit; fi

pg_major=$(pg_config --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
pg_deb=$(ls build/deb/postgresql-"$pg_major"-anarchon_*.deb 2>/dev/null | head -n 1)
sq_deb=$(ls build/deb/libsqlite3-mod-anarchon_*.deb 2>/dev/null | head -n 1)
cli_deb=$(ls build/deb/anarchon-cli_*.deb 2>/dev/null | head -n 1)
if [ -n "$pg_deb" ] && [ -n "$sq_deb" ] && [ -n "$cli_deb" ]; then ok "deb: postgresql-$pg_major-anarchon, libsqlite3-mod-anarchon and anarchon-cli were built"
else not_ok "deb: postgresql-$pg_major-anarchon, libsqlite3-mod-anarchon and anarchon-cli were built" "$(ls build/deb)"; suite_end; exit; fi

if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "./$pg_deb" "./$sq_deb" "./$cli_deb" > "$tmp/install.log" 2>&1
then ok "deb: apt-get installs the three packages"
else not_ok "deb: apt-get installs the three packages" "$(tail -n 20 "$tmp/install.log")"; suite_end; exit; fi

# The files the server and SQLite load belong to the packages.
pkglib=$(pg_config --pkglibdir)/anarchon.so
sqlite_so=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)/sqlite3/anarchon.so
owner_pg=$(dpkg -S "$pkglib" 2>/dev/null | cut -d: -f1)
owner_sq=$(dpkg -S "$sqlite_so" 2>/dev/null | cut -d: -f1)
if [ "$owner_pg" = "postgresql-$pg_major-anarchon" ] && [ "$owner_sq" = libsqlite3-mod-anarchon ]
then ok "deb: $pkglib and $sqlite_so come from the packages"
else not_ok "deb: the installed files come from the packages" "pg: $owner_pg" "sqlite: $owner_sq"; fi
queries=$(pg_config --sharedir)/extension/anarchon-queries.yaml
owner_q=$(dpkg -S "$queries" 2>/dev/null | cut -d: -f1)
if [ "$owner_q" = "postgresql-$pg_major-anarchon" ] && cmp -s "$queries" pg/prometheus/anarchon-queries.yaml
then ok "deb: $queries, the exporter's query file, comes from the package"
else not_ok "deb: the exporter's query file comes from the package" "$queries: ${owner_q:-no package}"; fi

# PostgreSQL: CREATE EXTENSION from the installed files, one claim won, one running.
if pg_start > "$tmp/pg.log" 2>&1; then
	slot=$(( ($(date +%s) / 60) * 60 * 1000 ))
	out=$(psql -X -q -At -v ON_ERROR_STOP=1 2>&1 <<-SQL
		CREATE EXTENSION anarchon;
		SELECT anarchon_claim('nightly', $slot, 'deb-a');
		SELECT anarchon_claim('nightly', $slot, 'deb-b');
	SQL
	)
	if [ "$out" = $'won\nrunning' ]; then ok "deb: CREATE EXTENSION anarchon from the package, then won and running"
	else not_ok "deb: CREATE EXTENSION anarchon from the package, then won and running" "$out"; fi
else
	not_ok "deb: a PostgreSQL $pg_major server starts" "$(tail -n 20 "$tmp/pg.log")"
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

suite_end
