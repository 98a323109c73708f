# contention.sh — 16 processes claim the same 500 slots of one database file,
# each slot with its own token per process: exactly one `won` per slot.
# Sourced by test/sqlite/run.sh (uses $tmp and test/lib.sh).

# contend_mode JOURNAL_MODE
contend_mode() {
	local mode=$1 procs=16 slots=500 dir=$tmp/contend-$1 first pids=() rc=0
	mkdir -p "$dir"
	sqlite3 "$dir/db" "PRAGMA journal_mode=$mode;" > /dev/null
	# Slots in the future: never late, whatever the machine's speed.
	first=$(( ($(date +%s) + 3600) * 1000 ))
	for i in $(seq 1 $procs); do
		ANARCHON_OVERLAP=allow ANARCHON_BUSY_TIMEOUT_MS=120000 \
			test/bin/claimer contend "$dir/db" nightly "$first" "$slots" 1000 \
			> "$dir/$i.out" 2> "$dir/$i.err" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done

	local errors
	errors=$(cat "$dir"/*.err)
	if [ $rc -ne 0 ] || [ -n "$errors" ]; then
		not_ok "sqlite contention ($mode): $procs processes ran without errors" "$(printf '%s' "$errors" | head -n 5)"
	else
		ok "sqlite contention ($mode): $procs processes ran without errors"
	fi

	# Per slot: as many answers as processes, exactly one of them `won`.
	local verdict
	verdict=$(cat "$dir"/*.out | awk -v procs=$procs -v slots=$slots '
		{ n[$1]++; if ($2 == "won") w[$1]++; else if ($2 != "running" && $2 != "done") bad[$2]++ }
		END {
			for (s in n) { total++; if (n[s] != procs) short++; if (w[s] != 1) wrong++ }
			for (b in bad) other = other " " b
			if (total != slots) print "slots answered: " total " of " slots
			if (short) print short " slots without an answer for every process"
			if (wrong) print wrong " slots without exactly one winner"
			if (other != "") print "unexpected outcomes:" other
		}')
	if [ -z "$verdict" ]; then
		ok "sqlite contention ($mode): exactly one won per slot, $slots slots x $procs processes"
	else
		not_ok "sqlite contention ($mode): exactly one won per slot" "$verdict"
	fi

	# The store agrees: one row per slot, each finished by its one winner.
	local rows
	rows=$(sqlite3 "$dir/db" "SELECT count(*), count(DISTINCT slot), sum(state = 'succeeded'), sum(attempt = 1) FROM anarchon_runs")
	if [ "$rows" = "$slots|$slots|$slots|$slots" ]; then
		ok "sqlite contention ($mode): the runs table holds one finished run per slot"
	else
		not_ok "sqlite contention ($mode): the runs table holds one finished run per slot" "count|slots|succeeded|attempt1 = $rows"
	fi
}

contend_mode wal
contend_mode delete
