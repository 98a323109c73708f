#!/usr/bin/env bash
# The build suite: what configure and the link step promise.
#
# It builds a copy of the tree twice: first with no client library visible
# (PKG_CONFIG=false, as on a machine where only `make demo`'s packages are
# installed), then normally, as `make demo` followed by `make test` does.
# The second build must contain every store without being asked to; a third
# `make` with nothing changed must rebuild nothing.  Then the exports of both
# shared objects, and the PostgreSQL module's undefined symbols against the
# server that loads it (-z defs cannot be used for a server module).
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
tmp=$(t_tmpdir)
src="$tmp/src"
mkdir -p "$src"

# The tree without build products: what a fresh clone holds.
tar --exclude=./.git --exclude=./build --exclude=./test/bin --exclude='*.o' --exclude='*.so' \
	--exclude='./pg/anarchon--*.sql' -cf - . | tar -xf - -C "$src"

# store_probe SO URL: what a claim through URL says ("built without" when left out).
store_probe() {
	sqlite3 "$tmp/probe.db" ".load $1" "SELECT anarchon_config('store', '$2');" 2>&1 || true
}

# NATS needs no library (the store speaks the protocol itself): it is in both builds.
urls="redis://127.0.0.1:1 amqp://u:p@127.0.0.1:1/"

# 1. Nothing visible: every network store left out, and configure says which package adds it.
if make -s -C "$src" sqlite PKG_CONFIG=false > "$tmp/b1" 2>&1; then
	ok "build: make sqlite with no client library visible"
else
	not_ok "build: make sqlite with no client library visible" "$(tail -n 20 "$tmp/b1")"
fi
for pkg in libhiredis-dev librabbitmq-dev libnats-dev libssl-dev; do
	if grep -q "install $pkg" "$tmp/b1"; then ok "build: configure names $pkg for what it leaves out"
	else not_ok "build: configure names $pkg for what it leaves out" "$(cat "$tmp/b1")"; fi
done
out=$(store_probe "$src/sqlite/anarchon" nats://127.0.0.1:1)
case "$out" in
	*"built without"*|*"unknown store"*) not_ok "build: the nats store needs no library and is built anyway" "$out" ;;
	*) ok "build: the nats store needs no library and is built anyway" ;;
esac
for u in $urls; do
	out=$(store_probe "$src/sqlite/anarchon" "$u")
	case "$out" in
		*"built without"*) ok "build: without its library, ${u%%:*}:// says it was built without it" ;;
		*) not_ok "build: without its library, ${u%%:*}:// says it was built without it" "$out" ;;
	esac
done

# configure --require refuses a build that would lack a store, naming the package.
if out=$(cd "$src" && PKG_CONFIG=false sh configure --require=all --quiet 2>&1); then
	not_ok "build: configure --require=all fails when a library is missing" "$out"
elif grep -q 'install libhiredis-dev' <<< "$out" && grep -q 'install libnats-dev' <<< "$out"; then
	ok "build: configure --require=all fails when a library is missing, naming the package"
else
	not_ok "build: configure --require=all fails when a library is missing, naming the package" "$out"
fi

# 2. The same tree, plain make: configure runs again by itself and every store is in.
if make -s -C "$src" sqlite > "$tmp/b2" 2>&1; then
	ok "build: plain make sqlite after the library-less build"
else
	not_ok "build: plain make sqlite after the library-less build" "$(tail -n 20 "$tmp/b2")"
fi
for u in $urls nats://127.0.0.1:1; do
	out=$(store_probe "$src/sqlite/anarchon" "$u")
	case "$out" in
		*"built without"*|*"unknown store"*) not_ok "build: the rebuilt extension has the ${u%%:*} store" "$out" ;;
		*) ok "build: the rebuilt extension has the ${u%%:*} store" ;;
	esac
done

# 3. Nothing changed: nothing is rebuilt, and the configuration is not rewritten.
before=$(stat -c %Y "$src/build/config.h" "$src/sqlite/anarchon.so" | tr '\n' ' ')
# The scenario: file times move on by a second, so a rebuild would show in them.
sleep 1
make -s -C "$src" sqlite > "$tmp/b3" 2>&1
after=$(stat -c %Y "$src/build/config.h" "$src/sqlite/anarchon.so" | tr '\n' ' ')
if [ "$before" = "$after" ] && [ ! -s "$tmp/b3" ]; then ok "build: a second make with nothing changed rebuilds nothing"
else not_ok "build: a second make with nothing changed rebuilds nothing" "before $before after $after" "$(cat "$tmp/b3")"; fi

# 4. The SQLite extension exports its entry point and nothing else.
exports=$(nm -D --defined-only "$src/sqlite/anarchon.so" | awk '{ print $3 }' | sort | tr '\n' ' ')
if [ "$exports" = "sqlite3_anarchon_init " ]; then ok "build: sqlite/anarchon.so exports only sqlite3_anarchon_init"
else not_ok "build: sqlite/anarchon.so exports only sqlite3_anarchon_init" "exports: $exports"; fi

# 5. The PostgreSQL module: only entry points exported, and every symbol it
#    needs is defined by the server or by a library it links.
if ! command -v pg_config > /dev/null || ! make -s -C "$src" > "$tmp/b4" 2>&1; then
	not_ok "build: the PostgreSQL module builds" "$(tail -n 20 "$tmp/b4" 2>/dev/null)"
else
	ok "build: the PostgreSQL module builds"
	so="$src/anarchon.so"
	bad=$(nm -D --defined-only "$so" | awk '{ print $3 }' |
		grep -v -E '^(Pg_magic_func|_PG_init|pg_finfo_anarchon_.*|anarchon_.*)$' || true)
	if [ -z "$bad" ]; then ok "build: the PostgreSQL module exports only its entry points"
	else not_ok "build: the PostgreSQL module exports only its entry points" "also: $(echo $bad)"; fi

	nm -D --defined-only "$(pg_config --bindir)/postgres" | awk '{ print $3 }' > "$tmp/defined"
	# ("lib => /path" lines, and the dynamic loader's own "/path (0x…)" line:
	# it defines __tls_get_addr, which thread-local variables need.)
	ldd "$so" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | while read -r lib; do
		nm -D --defined-only "$lib" | awk '{ print $3 }' | sed 's/@.*//'
	done >> "$tmp/defined"
	sort -u -o "$tmp/defined" "$tmp/defined"
	nm -D --undefined-only "$so" | awk '$1 == "U" { print $2 }' | sed 's/@.*//' | sort -u > "$tmp/needed"
	# Weak references (w) may stay unresolved by design; only strong ones count.
	unresolved=$(comm -23 "$tmp/needed" "$tmp/defined")
	if [ -z "$unresolved" ]; then ok "build: every symbol the PostgreSQL module needs is defined by postgres or its libraries"
	else not_ok "build: every symbol the PostgreSQL module needs is defined by postgres or its libraries" "unresolved: $(echo $unresolved)"; fi
fi

# The release is written once, in VERSION; everything that shows it agrees
# (doc/building.md, "Versions").
v=$(cat "$REPO_ROOT/VERSION")
if [[ "$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then ok "version: VERSION holds a release ($v)"
else not_ok "version: VERSION holds a release" "got: $v"; fi
has "version: the control file is made from VERSION" \
	"$(make -s -C "$REPO_ROOT" pg/anarchon.control > /dev/null 2>&1; cat "$REPO_ROOT/pg/anarchon.control")" \
	"default_version = '$v'"
meta=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["version"], m["provides"]["anarchon"]["version"])' \
	"$REPO_ROOT/META.json" 2>&1)
if [ "$meta" = "$v $v" ]; then ok "version: META.json says $v"; else not_ok "version: META.json says $v" "got: $meta"; fi
deb=$(sed -n '1s/^anarchon (\([^)]*\)).*/\1/p' "$REPO_ROOT/debian/changelog")
if [ "$deb" = "$v" ]; then ok "version: debian/changelog's newest entry is $v"
else not_ok "version: debian/changelog's newest entry is $v" "got: $deb"; fi
if make -s -C "$REPO_ROOT" cli > /dev/null 2>&1; then
	has "version: anarchon --version" "$("$REPO_ROOT/cli/anarchon" --version 2>&1)" "anarchon $v"
else
	not_ok "version: anarchon --version" "make cli failed"
fi

# A backend keeps its match of the library's version with the SQL objects'
# until pg_proc's cache is invalidated (pg/version.c): every update script
# must create or replace a function, or a session would not see the update.
scripts=0 quiet=
for f in "$REPO_ROOT"/pg/anarchon--*--*.sql "$REPO_ROOT"/pg/upgrade/anarchon--*--*.sql; do
	[ -f "$f" ] || continue
	scripts=$((scripts + 1))
	grep -qE '^CREATE (OR REPLACE )?FUNCTION' "$f" || quiet+=" ${f##*/}"
done
if [ "$scripts" -gt 0 ] && [ -z "$quiet" ]; then
	ok "version: each of the $scripts update scripts creates or replaces a function (what tells a backend the version changed)"
else
	not_ok "version: each update script creates or replaces a function (what tells a backend the version changed)" \
		"update scripts: $scripts; without CREATE FUNCTION:$quiet"
fi

# No host links a store's client library: each is loaded when a store first
# needs it (core/dl.h), so a program starts without loading the others.
linked=
for bin in "$REPO_ROOT/cli/anarchon" "$src/sqlite/anarchon.so" "$src/anarchon.so"; do
	[ -f "$bin" ] || { linked+=" ${bin#"$tmp/"}(not built)"; continue; }
	for lib in $(objdump -p "$bin" | awk '$1 == "NEEDED" { print $2 }' | grep -E '^lib(hiredis|rabbitmq|ssl|crypto|pq)\.so'); do
		linked+=" ${bin##*/}:$lib"
	done
done
if [ -z "$linked" ]; then ok "build: the command and both extensions link no store's client library (hiredis, rabbitmq-c, OpenSSL, libpq)"
else not_ok "build: the command and both extensions link no store's client library" "linked:$linked"; fi

# Every install target has its uninstall, and it removes exactly what was
# installed (into a DESTDIR here, so the machine's own install is untouched).
for pair in "install-sqlite uninstall-sqlite" "install-cli uninstall-cli" "install uninstall"; do
	set -- $pair
	d="$tmp/destdir-$1"
	if make -s -C "$REPO_ROOT" "$1" DESTDIR="$d" > "$tmp/inst.log" 2>&1 \
		&& [ -n "$(find "$d" -type f 2> /dev/null)" ] \
		&& make -s -C "$REPO_ROOT" "$2" DESTDIR="$d" >> "$tmp/inst.log" 2>&1; then
		left=$(find "$d" -type f 2> /dev/null)
		if [ -z "$left" ]; then ok "build: make $2 removes what make $1 installed"
		else not_ok "build: make $2 removes what make $1 installed" "left: $left"; fi
	else
		not_ok "build: make $2 removes what make $1 installed" "$(tail -n 20 "$tmp/inst.log")"
	fi
done

# The example systemd unit names the command where install-cli put it: the
# default prefix, and the package's (/usr); the command there answers.
for prefix in /usr/local /usr; do
	d="$tmp/units$prefix"
	if make -s -C "$REPO_ROOT" install-cli DESTDIR="$d" PREFIX="$prefix" > "$tmp/units.log" 2>&1; then
		unit=$d$prefix/share/doc/anarchon/examples/report.service
		exe=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$unit" 2> /dev/null)
		if [ "$exe" = "$prefix/bin/anarchon" ] && [ -f "$d$prefix/share/doc/anarchon/examples/report.timer" ] &&
			"$d$exe" --version > /dev/null 2>&1 && grep -qx 'KillMode=control-group' "$unit"; then
			ok "build: install-cli PREFIX=$prefix: the example unit runs $exe, the command it installed, with KillMode=control-group"
		else
			not_ok "build: install-cli PREFIX=$prefix: the example unit runs $prefix/bin/anarchon" "ExecStart: ${exe:-none}" "$(cat "$unit" 2> /dev/null | tail -n 5)"
		fi
	else
		not_ok "build: install-cli PREFIX=$prefix" "$(tail -n 20 "$tmp/units.log")"
	fi
done

# No two files of the libraries call each other (a circle hides which of
# them is the lower layer): test/build/circles.py reads their objects.
if out=$(python3 "$TEST_ROOT/build/circles.py" "$src/build/lib/obj" 2>&1); then ok "build: $out"
else not_ok "build: two files of core/, schedule/, stores/ or net/ call each other" "$out"; fi

# core/, the schedules, stores/ and net/ are compiled once, into the libraries every
# program links (libs.mk): one compilation of each of their sources, whichever
# of the modules and the command are built.
targets="sqlite cli test-programs"
command -v pg_config > /dev/null && targets="$targets all"
compiled=$(make -n -C "$src" $targets ANARCHON_DEV= -B 2>&1 | grep -oE ' -c -o [^ ]+ (core|stores|net)/[^ ]+\.c' | awk '{ print $NF }' | sort)
twice=$(printf '%s\n' "$compiled" | uniq -d)
if [ -n "$compiled" ] && [ -z "$twice" ] && printf '%s\n' "$compiled" | grep -qx core/store.c; then
	ok "build: each source of core/, stores/ and net/ is compiled once for $targets ($(printf '%s\n' "$compiled" | wc -l) sources)"
else
	not_ok "build: each source of core/, stores/ and net/ is compiled once" "compiled more than once: $(echo $twice)" \
		"compiled: $(echo $compiled | head -c 300)"
fi

# Warnings are errors in a development build (make test sets ANARCHON_DEV=1),
# never in a user's: a newer compiler's new warning must not fail it.
dev=$(make -n -C "$src" sqlite cli ANARCHON_DEV=1 -B 2>&1 | grep -c -e '-Werror')
user=$(make -n -C "$src" sqlite cli ANARCHON_DEV= -B 2>&1 | grep -c -e '-Werror')
all=$(make -n -C "$src" sqlite cli ANARCHON_DEV= -B 2>&1 | grep -c -e ' -c ')
if [ "$dev" -gt 0 ] && [ "$user" = 0 ] && [ "$all" -gt 0 ]; then
	ok "build: -Werror in a development build ($dev compilations), in none of a user's $all"
else
	not_ok "build: -Werror in a development build, never in a user's" "development: $dev with -Werror; user: $user of $all"
fi

suite_end
