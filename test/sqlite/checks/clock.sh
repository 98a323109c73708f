# clock.sh — slots taken from the clock.  16 processes each claim one job
# five times with anarchon_now() as the slot, at about the same moments.
# Before slots had to be whole seconds, each got `won` for its own
# millisecond: many winners within one second.  Now a reading of the clock is
# refused with a hint, unless it happens to fall on a whole second; a slot in
# seconds is refused as seconds; the clock cut to the second has exactly one
# winner per second.
# Sourced by test/sqlite/run.sh (uses $tmp and test/lib.sh).

clock_claims() {
	local dir=$tmp/clock procs=16 pids=() i verdict
	mkdir -p "$dir"
	sqlite3 "$dir/db" "PRAGMA journal_mode=WAL;" > /dev/null
	for i in $(seq 1 $procs); do
		(
			for _ in 1 2 3 4 5; do
				stdbuf -oL sqlite3 "$dir/db" ".timeout 10000" ".load ./sqlite/anarchon" ".output /dev/null" "SELECT anarchon_config('overlap', 'allow');" ".output stdout" \
					"SELECT 'raw', s, anarchon_claim('clock', s, anarchon_token()) FROM (SELECT anarchon_now() AS s);" \
					2>&1 | sqlite_cli_norm | sed 's/^Error: //'
				stdbuf -oL sqlite3 "$dir/db" ".timeout 10000" ".load ./sqlite/anarchon" ".output /dev/null" "SELECT anarchon_config('overlap', 'allow');" ".output stdout" \
					"SELECT 'cut', s, anarchon_claim('clock-cut', s, anarchon_token()) FROM (SELECT anarchon_now() / 1000 * 1000 AS s);" \
					"SELECT 'seconds', s, anarchon_claim('clock-s', s, anarchon_token()) FROM (SELECT anarchon_now() / 1000 AS s);" \
					2>&1 | sqlite_cli_norm | sed 's/^Error: //'
				sleep 0.2
			done
		) > "$dir/$i.out" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	cat "$dir"/*.out > "$dir/all"

	# raw: a won only for a whole-second reading, never two in one second.
	verdict=$(awk -F'|' '
		$1 == "raw" { if ($3 == "won") { if ($2 % 1000) print "won for " $2 ", not a whole second"; w[int($2 / 1000)]++ } ; next }
		$1 == "cut" { n[$2]++; if ($3 == "won") c[$2]++; else if ($3 != "running") print "cut " $2 ": " $3; next }
		/^anarchon_claim: slot [0-9]+ is not a whole second: .*anarchon_slot/ { refused++; next }
		/^anarchon_claim: slot [0-9]+ is below 100000000000: .*looks like seconds: multiply by 1000/ { seconds++; next }
		{ print "unexpected: " $0 }
		END {
			for (s in w) if (w[s] > 1) print w[s] " winners within the second " s
			for (s in n) if (c[s] != 1) print c[s] + 0 " winners of the cut slot " s
			if (refused < 70) print "only " refused + 0 " of 80 raw readings refused as not a whole second"
			if (seconds != 80) print seconds + 0 " of 80 slots in seconds refused as seconds"
		}' "$dir/all")
	if [ -z "$verdict" ]; then
		ok "sqlite clock: anarchon_now() as a slot is refused, never two winners in a second; cut to the second, one winner per second ($procs processes)"
	else
		not_ok "sqlite clock: anarchon_now() as a slot is refused, never two winners in a second; cut to the second, one winner per second" \
			"$(printf '%s' "$verdict" | sort | uniq -c | head -n 8)"
	fi
}

clock_claims
