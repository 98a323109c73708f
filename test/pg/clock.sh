# clock.sh — slots taken from the clock (sourced by run.sh).  16 psql
# processes claim, five times each at about the same moments, with slots
# read from now(): as milliseconds, (extract(epoch FROM now()) * 1000)::bigint,
# and as the timestamptz now() itself.  Before slots had to be whole seconds
# each got `won` for its own millisecond: many winners within one second.
# Now such a slot is refused (unless the reading falls on a whole second),
# never two winners in a second; a slot in seconds is refused as seconds;
# date_trunc('second', now()) has exactly one winner per second.
#
# pg_clock_check PROCS
pg_clock_check() {
	local procs=$1 dir pids=() p verdict
	dir=$(t_tmpdir)
	cat > "$dir/claims.sql" <<'SQL'
SET anarchon.overlap = allow;
SELECT 'ms|' || s || '|' || anarchon_claim('clock-ms', s, anarchon_token())
  FROM (SELECT (extract(epoch FROM now()) * 1000)::bigint AS s) c;
SELECT 'ts|' || (extract(epoch FROM s) * 1000)::bigint || '|' || anarchon_claim('clock-ts', s, anarchon_token())
  FROM (SELECT now() AS s) c;
SELECT 'cut|' || (extract(epoch FROM s) * 1000)::bigint || '|' || anarchon_claim('clock-cut', s, anarchon_token())
  FROM (SELECT date_trunc('second', now()) AS s) c;
SELECT 'seconds|' || s || '|' || anarchon_claim('clock-s', s, anarchon_token())
  FROM (SELECT extract(epoch FROM now())::bigint AS s) c;
SELECT pg_sleep(0.2);
SQL
	for p in $(seq 1 "$procs"); do
		for _ in 1 2 3 4 5; do cat "$dir/claims.sql"; done > "$dir/claims.$p.sql"
		psql -X -A -t -q -v ON_ERROR_STOP=0 -f "$dir/claims.$p.sql" > "$dir/out.$p" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	verdict=$(cat "$dir"/out.* | awk -F'|' -v procs="$procs" '
		/^$/ { next }
		$1 == "ms" || $1 == "ts" { if ($3 == "won") { if ($2 % 1000) print $1 " won for " $2 ", not a whole second"; w[$1 " " int($2 / 1000)]++ }; next }
		$1 == "cut" { n[$2]++; if ($3 == "won") c[$2]++; else if ($3 != "running") print "cut " $2 ": " $3; next }
		/ERROR:  slot [0-9]+ is not a whole second$/ || /ERROR:  slot is not a whole second$/ { refused++; next }
		/ERROR:  slot [0-9]+ is below 100000000000$/ { seconds++; next }
		/^DETAIL:  A slot is a scheduled time/ { next }
		{ print "unexpected: " $0 }
		END {
			for (s in w) if (w[s] > 1) print w[s] " winners within the second " s
			for (s in n) if (c[s] != 1) print c[s] + 0 " winners of the cut slot " s
			if (refused < 9 * procs) print "only " refused + 0 " of " 10 * procs " readings of the clock refused as not a whole second"
			if (seconds != 5 * procs) print seconds + 0 " of " 5 * procs " slots in seconds refused as seconds"
		}')
	if [ -z "$verdict" ]; then
		ok "clock: a slot read from now() (ms or timestamptz) is refused, never two winners in a second; cut to the second, one winner per second ($procs processes)"
	else
		not_ok "clock: a slot read from now() is refused, never two winners in a second; cut to the second, one winner per second" \
			"$(printf '%s' "$verdict" | sort | uniq -c | head -n 8)"
	fi
}
