# pg_tree.sh — a private copy of PostgreSQL's tree, so that a test server
# loads a build of anarchon other than the system's (sourced after
# ../pg/server.sh).
#
# Other suites run at the same time and load the system's anarchon.so, so an
# older build is never installed there.  The copy keeps the server's own
# paths (pg_config's bindir/.., sharedir, pkglibdir) under a folder ROOT:
# Debian's postgres finds its share and lib folders relative to its
# executable, so a server started from ROOT's bin loads ROOT's anarchon.so.
#
#   pg_tree_copy ROOT          copy the tree under ROOT (once; stderr says
#                              what failed); PG_TREE_BIN, PG_TREE_SHARE and
#                              PG_TREE_PKGLIB are then the real paths of the
#                              three folders, without ROOT
#   pg_tree_install ROOT DIR LOG [MAKE_ARG...]
#                              `make install DESTDIR=ROOT` of DIR's anarchon
#                              (library, control file, scripts), after removing
#                              every other build's files; the log in LOG; 0
#                              when ROOT's anarchon.so is then DIR's.
#                              MAKE_ARG: as DIR was built (with_llvm=no)
#   PG_BINDIR=ROOT$PG_TREE_BIN pg_start ...
#                              a server of the copy (server.sh)
#   pg_tree_loaded PSQL_ARG...
#                              the anarchon.so a backend maps once it called
#                              anarchon (psql's connection arguments)

pg_tree_copy() {
	local root=$1 d src
	PG_TREE_BIN=$(cd "$(pg_config --bindir)" && pwd -P) || return 1
	PG_TREE_SHARE=$(cd "$(pg_config --sharedir)" && pwd -P) || return 1
	PG_TREE_PKGLIB=$(cd "$(pg_config --pkglibdir)" && pwd -P) || return 1
	for src in "$PG_TREE_BIN/.." "$PG_TREE_SHARE" "$PG_TREE_PKGLIB"; do
		d=$(cd "$src" && pwd -P) || return 1
		# The lib folder may lie inside bin/.. (Debian): copied with it.
		[ -e "$root$d" ] && continue
		mkdir -p "$root$(dirname "$d")" && cp -a "$d" "$root$d" || return 1
	done
}

pg_tree_install() {
	local root=$1 dir=$2 log=$3
	shift 3
	rm -f "$root$PG_TREE_PKGLIB/anarchon.so" "$root$PG_TREE_SHARE"/extension/anarchon[.-]* &&
		rm -rf "$root$PG_TREE_PKGLIB"/bitcode/anarchon* &&
		make -s -C "$dir" install DESTDIR="$root" "$@" > "$log" 2>&1 &&
		cmp -s "$dir/anarchon.so" "$root$PG_TREE_PKGLIB/anarchon.so"
}

pg_tree_loaded() {
	psql -X -A -t -q -v ON_ERROR_STOP=1 "$@" -c "SELECT anarchon_token() IS NOT NULL" \
		-c "SELECT pg_read_file('/proc/self/maps')" 2>&1 | grep -o '/[^ ]*/anarchon\.so' | sort -u
}
