# apploop.sh — doc/examples/app_loop.sql with four client sessions on a
# 2-second schedule (sourced by run.sh): one winner per slot, the work of
# each slot done once, by its winner.
if q -f doc/examples/app_loop.sql > "$tmp/apploop-load.out" 2>&1; then
	lpids=()
	for i in 1 2 3 4; do
		PGAPPNAME=loop-$i timeout 120 psql -XAtq -v ON_ERROR_STOP=1 \
			-c "CALL app_loop('pgloop', '2 seconds', 4)" > /dev/null 2> "$tmp/apploop.$i.err" &
		lpids+=($!)
	done
	rc=0
	for p in "${lpids[@]}"; do wait "$p" || rc=1; done
	check "app loop (SQL): four sessions ran four slots each" test "$rc" = 0
	sed -n 's/^NOTICE:  \(.*\) \([a-z]*\)$/\1|\2/p' "$tmp"/apploop.*.err > "$tmp/apploop.all"
	bad=$(awk -F'|' '{n[$1]++; if ($2 == "won") w[$1]++} END {for (s in n) if (w[s] != 1) print s, "winners:", w[s] + 0}' "$tmp/apploop.all")
	check "app loop (SQL): exactly one winner per slot ($(cut -d'|' -f1 "$tmp/apploop.all" | sort -u | wc -l) slots)" \
		test -z "$bad" -a -s "$tmp/apploop.all"
	got=$(q -c "SELECT (SELECT count(*) FROM (SELECT slot FROM app_work_done WHERE job = 'pgloop' GROUP BY slot
			HAVING count(*) <> 3 OR count(DISTINCT pid) <> 1) s)
		|| ' ' || (SELECT count(*) FROM anarchon.runs WHERE job = 'pgloop' AND state <> 'succeeded')
		|| ' ' || (SELECT count(*) FROM anarchon.runs r WHERE job = 'pgloop'
			AND NOT EXISTS (SELECT 1 FROM app_work_done w WHERE w.job = r.job AND w.slot = r.slot))")
	check "app loop (SQL): three steps per slot by one session, every run succeeded ($got)" test "$got" = "0 0 0"
else
	not_ok "app loop (SQL): load doc/examples/app_loop.sql" "$(tail -n 20 "$tmp/apploop-load.out")"
fi
