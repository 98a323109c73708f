# prefork.sh — a pre-forking server (test/sqlite/prefork.c): the parent
# claims, then forks 16 workers that each claim the same 300 slots on the
# connection they inherited.  Exactly one winner per slot; each worker opens
# a claim connection of its own instead of using its parent's; the parent's
# claim connection still works after its workers exited.
# Sourced by test/sqlite/run.sh (uses $tmp and test/lib.sh).

prefork_mode() {
	local mode=$1 dir=$tmp/prefork-$1 workers=16 slots=300 first verdict
	mkdir -p "$dir"
	sqlite3 "$dir/db" "PRAGMA journal_mode=$mode;" > /dev/null
	first=$(( ($(date +%s) + 3600) * 1000 ))
	if ! test/bin/sqlite_prefork "$dir/db" ./sqlite/anarchon $workers $slots "$first" \
		> "$dir/out" 2> "$dir/err"; then
		not_ok "sqlite prefork ($mode): parent and $workers workers ran without errors" "$(head -n 5 "$dir/err")"
		return
	fi
	ok "sqlite prefork ($mode): parent and $workers workers ran without errors"
	verdict=$(awk -v workers=$workers -v slots=$slots '
		$1 == "parent" { if ($3 != "won") print "parent claim of " $2 ": " $3; next }
		$1 == "worker" { if ($3 != 1) print "a worker opened " $3 " claim connections, not 1"; nw++; next }
		{ n[$1]++; if ($2 == "won") w[$1]++; else if ($2 != "running") print "slot " $1 ": " $2 }
		END {
			for (s in n) { total++; if (n[s] != workers) short++; if (w[s] != 1) wrong++ }
			if (total != slots) print "slots answered: " total " of " slots
			if (short) print short " slots without an answer from every worker"
			if (wrong) print wrong " slots without exactly one winner"
			if (nw != workers) print nw " workers reported, not " workers
		}' "$dir/out")
	if [ -z "$verdict" ]; then
		ok "sqlite prefork ($mode): exactly one won per slot, $slots slots x $workers workers, each on a claim connection of its own"
	else
		not_ok "sqlite prefork ($mode): exactly one won per slot, each worker on a claim connection of its own" \
			"$(printf '%s' "$verdict" | sort | uniq -c | head -n 8)"
	fi
}

prefork_mode wal
prefork_mode delete
