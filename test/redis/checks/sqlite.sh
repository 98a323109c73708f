# sqlite.sh — the Redis store through the SQLite extension: each instance is
# its own database file that shares nothing but Redis.  (sourced by run.sh)

if ! make -s sqlite > "$tmp/sqlite-build" 2>&1 || ! command -v sqlite3 > /dev/null; then
	not_ok "redis via sqlite: build the extension" "$(tail -n 20 "$tmp/sqlite-build")"
	return 0
fi
EXT=$REPO_ROOT/sqlite/anarchon

# sq NAME: the sqlite3 CLI on a fresh database, SQL on stdin, output in $tmp/NAME.out
sq() {
	rm -f "$tmp/$1.db"
	{ echo ".load $EXT"; cat; } | sqlite3 -batch "$tmp/$1.db" > "$tmp/$1.out" 2>&1
}

NOW=$(now_slot)
for strat in lease stream-id script; do
	case $strat in
		lease) exp="won|won|running|late|overlap|1|0|running|0|1|succeeded|done|none" ;;
		*) exp="won|won|lost|late|won|1|0|running|0|1|succeeded|lost|none" ;;
	esac
	sq "sqlite-$strat" <<X
SELECT anarchon_config('store', 'redis://127.0.0.1:$PORT?strategy=$strat&prefix=sq-$strat') IS NOT NULL;
SELECT anarchon_claim('sync', $NOW, 'a') || '|' || anarchon_claim('sync', $NOW, 'a') || '|' ||
       anarchon_claim('sync', $NOW, 'b') || '|' || anarchon_claim('sync', $((NOW - 120000)), 'c') || '|' ||
       anarchon_claim('sync', $((NOW + 1000)), 'd') || '|' ||
       anarchon_heartbeat('sync', $NOW, 'a') || '|' || anarchon_heartbeat('sync', $NOW, 'b') || '|' ||
       anarchon_check('sync', $NOW) || '|' ||
       anarchon_finish('sync', $NOW, 'b') || '|' || anarchon_finish('sync', $NOW, 'a', 'succeeded') || '|' ||
       anarchon_check('sync', $NOW) || '|' || anarchon_claim('sync', $NOW, 'e') || '|' ||
       anarchon_check('sync', 4102444800000);
SELECT claims_won + claims_running + claims_done + claims_late + claims_overlap + claims_lost,
       heartbeats, heartbeats_fenced, finishes, finishes_fenced, checks, calls,
       abs(clock_offset_ms) <= 50, latency_p99_ms >= latency_p50_ms AND latency_p50_ms > 0
  FROM anarchon_stats() WHERE kind = 'redis';
X
	if [ "$(tail -n 2 "$tmp/sqlite-$strat.out" | head -n 1)" = "$exp" ]; then ok "redis via sqlite: $strat outcome table"
	else not_ok "redis via sqlite: $strat outcome table" "expected $exp" "$(cat "$tmp/sqlite-$strat.out")"; fi
	# The same calls in anarchon_stats: 6 claims, 2 heartbeats and 2 finishes
	# (one of each fenced), 3 checks; Redis's clock (TIME) within 50 ms: on
	# loopback it is the same clock, and the bound is the reply's delay on a
	# loaded machine (a unit or sign error would be off by hours).
	if [ "$(tail -n 1 "$tmp/sqlite-$strat.out")" = "6|2|1|2|1|3|13|1|1" ]; then
		ok "redis via sqlite: $strat calls counted in anarchon_stats, clock offset within 50 ms"
	else
		not_ok "redis via sqlite: $strat calls counted in anarchon_stats, clock offset within 50 ms" \
			"expected 6|2|1|2|1|3|13|1|1" "got $(tail -n 1 "$tmp/sqlite-$strat.out")"
	fi
done

# Loading the extension a second time keeps the connection's store: the claim
# still goes to Redis (another instance sees it), not to the local file.
sq sqlite-reload <<X
SELECT anarchon_config('store', 'redis://127.0.0.1:$PORT?strategy=lease&prefix=sq-reload') IS NOT NULL;
SELECT anarchon_config('lease_ms', 45000);
.load $EXT
SELECT anarchon_config('store') || '|' || anarchon_config('lease_ms') || '|' || anarchon_claim('sync', $NOW, 'a');
X
sq sqlite-reload-other <<X
SELECT anarchon_config('store', 'redis://127.0.0.1:$PORT?strategy=lease&prefix=sq-reload') IS NOT NULL;
SELECT anarchon_claim('sync', $NOW, 'b');
X
if [ "$(tail -n 1 "$tmp/sqlite-reload.out")" = "redis://127.0.0.1:$PORT?strategy=lease&prefix=sq-reload|45000|won" ] &&
	[ "$(tail -n 1 "$tmp/sqlite-reload-other.out")" = running ] &&
	[ "$(sqlite3 "$tmp/sqlite-reload.db" "SELECT count(*) FROM sqlite_schema WHERE name = 'anarchon_runs'")" = 0 ]; then
	ok "redis via sqlite: a second load keeps the store and settings; the claim is decided in Redis"
else not_ok "redis via sqlite: a second load keeps the store and settings; the claim is decided in Redis" \
	"$(cat "$tmp/sqlite-reload.out" "$tmp/sqlite-reload-other.out")"; fi

# Contention: 16 instances, each with its own database file, 500 slots.
for strat in lease stream-id script; do
	first=$(now_slot)
	{
		echo "SELECT anarchon_config('overlap', 'allow');"
		echo "SELECT anarchon_config('store', 'redis://127.0.0.1:$PORT?strategy=$strat&prefix=sqc-$strat');"
		for i in $(seq 0 499); do echo "SELECT $((first + i * 1000)) || ' ' || anarchon_claim('sync', $((first + i * 1000)), anarchon_token());"; done
	} > "$tmp/sqc-$strat.sql"
	pids=()
	for p in $(seq 1 16); do
		sq "sqc-$strat-$p" < "$tmp/sqc-$strat.sql" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	report=$(cat "$tmp"/sqc-$strat-*.out | awk -v first="$first" '
		NR > 0 && NF == 2 { i = ($1 - first) / 1000; n[i]++; if ($2 == "won") w[i]++ }
		NF != 2 && $0 !~ /^(allow|redis:)/ { bad++; if (bad < 4) print "unexpected: " $0 }
		END { for (s = 0; s < 500; s++) if (w[s] != 1 || n[s] != 16) { print "slot first+" s ": " w[s] " won of " n[s]; if (++e > 5) break } }')
	if [ -z "$report" ]; then ok "redis via sqlite: $strat, 16 instances x 500 slots, exactly one won per slot"
	else not_ok "redis via sqlite: $strat, 16 instances x 500 slots, exactly one won per slot" "$report"; fi
done

# Errors reach SQL as errors that say why.
sq sqlite-errors <<X
SELECT anarchon_config('store', 'redis://127.0.0.1:$PORT?strategy=idmp');
SELECT anarchon_config('store', 'redis://127.0.0.1:$PORT?strategy=nope');
SELECT anarchon_config('store', 'redis://127.0.0.1:$PORT?strategy=script&window_ms=1000');
SELECT anarchon_claim('sync', $NOW, 'a');
SELECT anarchon_config('max_late_ms', '500');
SELECT anarchon_claim('sync', $NOW + 100000, 'a');
X
if grep -q 'Redis 8.6' "$tmp/sqlite-errors.out" && grep -q 'unknown redis strategy "nope"' "$tmp/sqlite-errors.out" &&
	grep -q 'window_ms.*max_late_ms' "$tmp/sqlite-errors.out" && [ "$(tail -n 1 "$tmp/sqlite-errors.out")" = won ]; then
	ok "redis via sqlite: idmp, unknown strategy and short memory are clear SQL errors"
else not_ok "redis via sqlite: idmp, unknown strategy and short memory are clear SQL errors" "$(cat "$tmp/sqlite-errors.out")"; fi

# A frozen Redis: the SQL call fails within timeout_ms instead of hanging.
{
	echo ".load $EXT"
	echo "SELECT anarchon_config('store', 'redis://127.0.0.1:$PORT?strategy=lease&prefix=sqf&timeout_ms=1000') IS NOT NULL;"
	wait_file "$tmp/sq-frozen"
	echo "SELECT anarchon_claim('sync', $(now_slot), 'a');"
	echo ".print done"
} | sqlite3 -batch "$tmp/sqf.db" > "$tmp/sqlite-frozen.out" 2>&1 &
rd=$!
frozen_call "$tmp/sq-frozen" "$tmp/sqlite-frozen.out" done 100
wait "$rd"
if grep -q 'did not answer within 1000 ms' "$tmp/sqlite-frozen.out" && [ "$FROZEN_MS" -lt 3000 ]; then
	ok "redis via sqlite: a frozen Redis gives an error within timeout_ms ($FROZEN_MS ms for 1000)"
else not_ok "redis via sqlite: a frozen Redis gives an error within timeout_ms" "$(cat "$tmp/sqlite-frozen.out")" "$FROZEN_MS ms"; fi

# lease through SQLite: takeover after the lease ran out, and the old token fenced.
TK=$(now_slot)
sq sqlite-takeover-1 <<X
SELECT anarchon_config('store', 'redis://127.0.0.1:$PORT?strategy=lease&prefix=sqt') IS NOT NULL;
SELECT anarchon_config('lease_ms', '1000'), anarchon_config('attempts', '2');
SELECT anarchon_claim('sync', $TK, 'a');
X
# The scenario: the 1 s lease runs out before the takeover.
sleep 1.5
sq sqlite-takeover-2 <<X
SELECT anarchon_config('store', 'redis://127.0.0.1:$PORT?strategy=lease&prefix=sqt') IS NOT NULL;
SELECT anarchon_config('lease_ms', '1000'), anarchon_config('attempts', '2');
SELECT anarchon_check('sync', $TK) || '|' || anarchon_claim('sync', $TK, 'b') || '|' ||
       anarchon_heartbeat('sync', $TK, 'a') || '|' || anarchon_finish('sync', $TK, 'a') || '|' ||
       anarchon_claim('sync', $TK, 'a') || '|' || anarchon_finish('sync', $TK, 'b', 'failed') || '|' ||
       anarchon_check('sync', $TK);
X
if [ "$(tail -n 1 "$tmp/sqlite-takeover-1.out")" = won ] &&
	[ "$(tail -n 1 "$tmp/sqlite-takeover-2.out")" = "expired|won|0|0|running|1|failed" ]; then
	ok "redis via sqlite: lease takeover, the old token fenced"
else not_ok "redis via sqlite: lease takeover, the old token fenced" "$(cat "$tmp/sqlite-takeover-1.out" "$tmp/sqlite-takeover-2.out")"; fi
