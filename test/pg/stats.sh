# stats.sh — anarchon_stats() across backends (sourced by run.sh, last: it
# restarts the suite's server with the library in shared_preload_libraries).
#
# pg_stats_check REDIS_SERVER:
#   1. 8 backends at once, each a known sequence of calls: the shared
#      counters add up exactly, with scope 'server';
#   2. a claim that waits for a job's lock past busy_timeout_ms counts as
#      errors_busy;
#   3. through REDIS_SERVER (a foreign server, or "" to skip), the offset
#      of Redis's clock is within a few ms on loopback.
pg_stats_check() {
	local redis=$1 pids=() b out holder slot=4102444800000
	st_q() { psql -X -A -t -q -v ON_ERROR_STOP=1 "$@" 2>&1; }

	if ! pg_as_server_user "$PG_BINDIR/pg_ctl" -D "$PG_DATA" -w -t 60 \
		-o "-c shared_preload_libraries=anarchon" restart > /dev/null 2>&1; then
		not_ok "stats: restart PostgreSQL with shared_preload_libraries = anarchon" "$(tail -n 5 "$PG_LOG")"
		return
	fi
	st_q -c "SELECT anarchon_stats_reset()" > /dev/null

	# Each backend: 25 shared slots (one of the 8 wins each, the others
	# answer running), one run of its own with 4 heartbeats, 2 of them with
	# another token, and its finish.
	for b in $(seq 1 8); do
		st_q -c "SET anarchon.overlap = 'allow'" \
			-c "SELECT count(anarchon_claim('stats8', $slot::bigint + i * 60000, 'tok-$b')) FROM generate_series(1, 25) i" \
			-c "SELECT anarchon_claim('stats8-$b', $slot::bigint, 'own-$b')" \
			-c "SELECT anarchon_heartbeat('stats8-$b', $slot::bigint, 'own-$b')" \
			-c "SELECT anarchon_heartbeat('stats8-$b', $slot::bigint, 'own-$b')" \
			-c "SELECT anarchon_heartbeat('stats8-$b', $slot::bigint, 'other')" \
			-c "SELECT anarchon_heartbeat('stats8-$b', $slot::bigint, 'other')" \
			-c "SELECT anarchon_finish('stats8-$b', $slot::bigint, 'own-$b')" > /dev/null &
		pids+=($!)
	done
	wait "${pids[@]}"
	out=$(st_q -F ' ' -c "SELECT scope, claims_won, claims_running, heartbeats, heartbeats_fenced,
		finishes, finishes_fenced, calls FROM anarchon.stats WHERE store = 'local'")
	if [ "$out" = "server 33 175 32 16 8 0 248" ]; then
		ok "stats: 8 backends at once, counted in shared memory: 33 won, 175 running, 32 heartbeats (16 fenced), 8 finishes, 248 calls"
	else
		not_ok "stats: 8 backends at once, counted in shared memory" \
			"want: server 33 175 32 16 8 0 248" "got:  $out"
	fi

	# A job's lock held by an open transaction: the second claim is busy.
	psql -X -q -c "BEGIN" -c "SET LOCAL anarchon.in_transaction = on" \
		-c "SELECT anarchon_claim('stats-busy', $slot::bigint, 'tok-1')" \
		-c "SELECT pg_sleep(5)" > /dev/null 2>&1 &
	holder=$!
	for _ in $(seq 1 50); do
		[ "$(st_q -c "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(5)'")" = 1 ] && break
		sleep 0.1
	done
	st_q -c "SET anarchon.busy_timeout_ms = 100" \
		-c "SELECT anarchon_claim('stats-busy', $slot::bigint, 'tok-2')" > /dev/null
	out=$(st_q -c "SELECT errors_busy FROM anarchon.stats WHERE store = 'local'")
	kill "$holder" 2> /dev/null
	wait "$holder" 2> /dev/null
	[ "$out" = 1 ] && ok "stats: a claim that waited past busy_timeout_ms counts as errors_busy" ||
		not_ok "stats: a claim that waited past busy_timeout_ms counts as errors_busy" "errors_busy: $out"

	[ -n "$redis" ] || return
	out=$(st_q -F ' ' -c "SET anarchon.store = $redis" \
		-c "SELECT anarchon_claim('stats-clock', $slot::bigint, anarchon_token())" \
		-c "SELECT kind, calls, abs(clock_offset_ms) <= 50, clock_seen > now() - interval '1 min',
			latency_p50_ms > 0 FROM anarchon.stats WHERE store = '$redis'")
	if [ "$(printf '%s\n' "$out" | tail -n 1)" = "redis 1 t t t" ]; then
		ok "stats: Redis's clock offset, read with TIME, is within 50 ms on loopback (the same clock; the bound is a reply's delay on a loaded machine)"
	else
		not_ok "stats: Redis's clock offset, read with TIME, is within 50 ms on loopback (the same clock; the bound is a reply's delay on a loaded machine)" "$out" \
			"$(st_q -c "SELECT clock_offset_ms FROM anarchon.stats WHERE store = '$redis'")"
	fi
}
