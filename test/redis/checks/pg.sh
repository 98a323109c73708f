# pg.sh — the Redis strategies through PostgreSQL: a FOREIGN SERVER per
# strategy, anarchon.store naming it.  (sourced by test/redis/run.sh; skipped
# with a "not ok" when PostgreSQL's server tools are missing)

source "$TEST_ROOT/pg/host.sh"
pg_host_start "redis via postgresql" "$tmp" || return 0
pq() { psql -X -A -t -q "$@" 2>&1; }
pq -c "CREATE EXTENSION anarchon" > /dev/null
for strat in lease stream-id script idmp; do
	srv=r_${strat//-/_}
	pq -c "CREATE SERVER $srv FOREIGN DATA WRAPPER anarchon OPTIONS (url 'redis://127.0.0.1:$PORT?strategy=$strat&prefix=pg-$strat')" > /dev/null
done

NOW=$(now_slot)
for strat in lease stream-id script; do
	case $strat in
		lease) exp="won won running late overlap f t running f t succeeded done none" ;;
		*) exp="won won lost late won f t running f t succeeded lost none" ;;
	esac
	out=$(PGOPTIONS="-c anarchon.store=r_${strat//-/_}" pq \
		-c "SELECT anarchon_claim('sync', ${NOW}::bigint, 'a')" \
		-c "SELECT anarchon_claim('sync', ${NOW}::bigint, 'a')" \
		-c "SELECT anarchon_claim('sync', ${NOW}::bigint, 'b')" \
		-c "SELECT anarchon_claim('sync', $((NOW - 120000))::bigint, 'c')" \
		-c "SELECT anarchon_claim('sync', $((NOW + 1000))::bigint, 'd')" \
		-c "SELECT anarchon_heartbeat('sync', ${NOW}::bigint, 'b')" \
		-c "SELECT anarchon_heartbeat('sync', ${NOW}::bigint, 'a')" \
		-c "SELECT anarchon_check('sync', ${NOW}::bigint)" \
		-c "SELECT anarchon_finish('sync', ${NOW}::bigint, 'b')" \
		-c "SELECT anarchon_finish('sync', ${NOW}::bigint, 'a')" \
		-c "SELECT anarchon_check('sync', ${NOW}::bigint)" \
		-c "SELECT anarchon_claim('sync', ${NOW}::bigint, 'e')" \
		-c "SELECT anarchon_check('sync', 4102444800000::bigint)" | tr '\n' ' ')
	if [ "$out" = "$exp " ]; then ok "redis via postgresql: $strat outcome table"
	else not_ok "redis via postgresql: $strat outcome table" "expected: $exp" "got:      $out"; fi
done

out=$(PGOPTIONS="-c anarchon.store=r_idmp" pq -c "SELECT anarchon_claim('sync', ${NOW}::bigint, 'a')")
if grep -q 'ERROR:  .*Redis 8\.6' <<< "$out" && grep -q '^HINT:  Use strategy=script' <<< "$out"; then ok "redis via postgresql: idmp on Redis 7 is a clear error"
else not_ok "redis via postgresql: idmp on Redis 7 is a clear error" "$out"; fi

pq -c "ALTER SERVER r_script OPTIONS (SET url 'redis://127.0.0.1:$PORT?strategy=script&prefix=pg-script&window_ms=1000')" > /dev/null
out=$(PGOPTIONS="-c anarchon.store=r_script" pq -c "SELECT anarchon_claim('sync', ${NOW}::bigint, 'a')")
if printf '%s' "$out" | grep -q 'window_ms.*max_late_ms'; then ok "redis via postgresql: a memory shorter than max_late_ms is refused"
else not_ok "redis via postgresql: a memory shorter than max_late_ms is refused" "$out"; fi
pq -c "ALTER SERVER r_script OPTIONS (SET url 'redis://127.0.0.1:$PORT?strategy=script&prefix=pgc-script')" > /dev/null
pq -c "ALTER SERVER r_lease OPTIONS (SET url 'redis://127.0.0.1:$PORT?strategy=lease&prefix=pgc-lease')" > /dev/null
pq -c "ALTER SERVER r_stream_id OPTIONS (SET url 'redis://127.0.0.1:$PORT?strategy=stream-id&prefix=pgc-stream-id')" > /dev/null

# Contention: 16 sessions x 500 slots per strategy, exactly one won per slot.
for strat in lease stream-id script; do
	first=$(now_slot)
	for i in $(seq 0 499); do echo "SELECT $((first + i * 1000)) || ' ' || anarchon_claim('sync', $((first + i * 1000))::bigint, anarchon_token());"; done > "$tmp/pgc.sql"
	pids=()
	for p in $(seq 1 16); do
		PGOPTIONS="-c anarchon.store=r_${strat//-/_} -c anarchon.overlap=allow" psql -X -A -t -q -f "$tmp/pgc.sql" \
			> "$tmp/pgc-$strat-$p.out" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	report=$(cat "$tmp"/pgc-$strat-*.out | awk -v first="$first" '
		NF == 2 { i = ($1 - first) / 1000; n[i]++; if ($2 == "won") w[i]++; next }
		{ bad++; if (bad < 4) print "unexpected: " $0 }
		END { for (s = 0; s < 500; s++) if (w[s] != 1 || n[s] != 16) { print "slot first+" s ": " w[s] " won of " n[s]; if (++e > 5) break } }')
	if [ -z "$report" ]; then ok "redis via postgresql: $strat, 16 sessions x 500 slots, exactly one won per slot"
	else not_ok "redis via postgresql: $strat, 16 sessions x 500 slots, exactly one won per slot" "$report"; fi
done

# A frozen Redis and statement_timeout: the claim ends at the timeout even
# with a long timeout_ms, and the backend stays usable.
pq -c "CREATE SERVER r_slow FOREIGN DATA WRAPPER anarchon OPTIONS (url 'redis://127.0.0.1:$PORT?strategy=lease&prefix=pg-frozen&timeout_ms=60000')" > /dev/null
{
	echo "SELECT anarchon_check('sync', 4102444800000::bigint);"
	wait_file "$tmp/pg-frozen"
	echo "SET statement_timeout = 1000;"
	echo "SELECT anarchon_claim('sync', $(now_slot)::bigint, 'a');"
	echo "\\echo claimed"
	wait_file "$tmp/pg-thawed"
	echo "SELECT anarchon_claim('sync', $(( $(now_slot) + 1000 ))::bigint, 'b');"
} | PGOPTIONS="-c anarchon.store=r_slow -c anarchon.overlap=allow" psql -X -A -t -q > "$tmp/pg-frozen.out" 2>&1 &
rd=$!
frozen_call "$tmp/pg-frozen" "$tmp/pg-frozen.out" claimed 200
touch "$tmp/pg-thawed"
wait "$rd"
if grep -q 'canceling statement due to statement timeout' "$tmp/pg-frozen.out" && [ "$FROZEN_MS" -lt 5000 ]; then
	ok "redis via postgresql: statement_timeout cancels a call to a frozen Redis ($FROZEN_MS ms for 1000)"
else not_ok "redis via postgresql: statement_timeout cancels a call to a frozen Redis" "$(cat "$tmp/pg-frozen.out")" "$FROZEN_MS ms"; fi
if [ "$(tail -n 1 "$tmp/pg-frozen.out")" = won ]; then ok "redis via postgresql: after the cancel the session reconnects and claims"
else not_ok "redis via postgresql: after the cancel the session reconnects and claims" "$(cat "$tmp/pg-frozen.out")"; fi

# lease through PostgreSQL: takeover after the lease ran out, the old token fenced.
TK=$(now_slot)
pq -c "ALTER SERVER r_lease OPTIONS (SET url 'redis://127.0.0.1:$PORT?strategy=lease&prefix=pgt')" > /dev/null
first=$(PGOPTIONS="-c anarchon.store=r_lease -c anarchon.lease_ms=1000 -c anarchon.attempts=2" pq \
	-c "SELECT anarchon_claim('sync', ${TK}::bigint, 'a')")
# The scenario: the 1 s lease runs out before the takeover.
sleep 1.5
out=$(PGOPTIONS="-c anarchon.store=r_lease -c anarchon.lease_ms=1000 -c anarchon.attempts=2" pq \
	-c "SELECT anarchon_check('sync', ${TK}::bigint)" \
	-c "SELECT anarchon_claim('sync', ${TK}::bigint, 'b')" \
	-c "SELECT anarchon_heartbeat('sync', ${TK}::bigint, 'a')" \
	-c "SELECT anarchon_finish('sync', ${TK}::bigint, 'a')" \
	-c "SELECT anarchon_claim('sync', ${TK}::bigint, 'a')" \
	-c "SELECT anarchon_finish('sync', ${TK}::bigint, 'b', 'failed')" \
	-c "SELECT anarchon_check('sync', ${TK}::bigint)" | tr '\n' ' ')
if [ "$first" = won ] && [ "$out" = "expired won f f running t failed " ]; then
	ok "redis via postgresql: lease takeover, the old token fenced"
else not_ok "redis via postgresql: lease takeover, the old token fenced" "first: $first" "then: $out"; fi

# One prefix, one strategy (checks/strategies.sh): through PostgreSQL the
# refusal is an ERROR with SQLSTATE 22023 and a HINT that says how to migrate.
pq -c "CREATE SERVER r_mix_lease FOREIGN DATA WRAPPER anarchon OPTIONS (url 'redis://127.0.0.1:$PORT?strategy=lease&prefix=pg-mix')" \
	-c "CREATE SERVER r_mix_script FOREIGN DATA WRAPPER anarchon OPTIONS (url 'redis://127.0.0.1:$PORT?strategy=script&prefix=pg-mix')" > /dev/null
MX=$(now_slot)
first=$(PGOPTIONS="-c anarchon.store=r_mix_lease" pq -c "SELECT anarchon_claim('sync', ${MX}::bigint, 'a')")
out=$(PGOPTIONS="-c anarchon.store=r_mix_script" pq -v VERBOSITY=verbose -c "SELECT anarchon_claim('sync', ${MX}::bigint, 'b')")
if [ "$first" = won ] && printf '%s\n' "$out" | grep -q '^ERROR:  22023: .*redis store .*job sync on prefix pg-mix is decided with strategy=lease, and this store would decide it with strategy=script' &&
	printf '%s\n' "$out" | grep -q '^HINT:  Stop every instance that uses strategy=lease on prefix pg-mix; this store takes over by itself'; then
	ok "redis via postgresql: a second strategy on one prefix is an ERROR (22023) with a HINT that says how to migrate"
else not_ok "redis via postgresql: a second strategy on one prefix is an ERROR (22023) with a HINT that says how to migrate" "lease: $first" "script: $out"; fi
