# probe.sh — how the extension treats the connection that loads it
# (test/sqlite/probe.c): the claim connection goes through the caller's VFS
# with its URI parameters; a read-only or query_only caller gets errors from
# every writing function and nothing is written; a second load keeps the
# settings and the claim connection.  Then the same under valgrind.
# Sourced by test/sqlite/run.sh (uses $tmp, $here and test/lib.sh).

probe_run() {
	local dir=$tmp/probe-$1
	shift
	rm -rf "$dir" && mkdir -p "$dir"
	"$@" test/bin/sqlite_probe "$dir" ./sqlite/anarchon 2>&1
}

probe_run plain > "$tmp/probe.out"
diff_ok "sqlite probe: claim connection through the caller's VFS and URI, read-only callers, second load" \
	"$here/expected/probe.out" "$tmp/probe.out"
if have_valgrind "sqlite valgrind probe"; then
	probe_run vg valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --log-file="$tmp/vg-probe.log" > /dev/null
	vg_log_ok "sqlite valgrind probe (second load, read-only callers)" "$tmp/vg-probe.log" "$?"
fi
