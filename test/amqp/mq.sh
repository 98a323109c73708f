# mq.sh — checks shared by the RabbitMQ and NATS suites (sourced after ../lib.sh).
#
#   mq_build                      build the driver and the SQLite extension
#   drv ARGS...                   the store driver (test/amqp/mq_driver.c)
#   expect NAME WANT CMD...       ok when CMD prints exactly WANT
#   expect_match NAME REGEX CMD...  ok when CMD's output matches REGEX (grep -E)
#   contend NAME URL JOB PROCS SLOTS  PROCS processes claim the same SLOTS
#                                 slots with their own tokens: ok when every
#                                 slot has exactly one `won` and nothing failed
#   within NAME MAX_MS CMD...     ok when CMD ends within MAX_MS (a "did not
#                                 hang" bound; its output goes to $MQ_OUT)
#   sq URL SQL...                 the sqlite3 CLI with the extension loaded and
#                                 `store` set to URL, one statement per argument

DRV=$REPO_ROOT/test/bin/mq-driver
MQ_TMP=${MQ_TMP:-$(t_tmpdir)}

mq_now() { date +%s%3N; }

mq_build() {
	local out
	if ! out=$(make -s -C "$REPO_ROOT" sqlite test/bin/mq-driver test/bin/mq-base 2>&1); then
		not_ok "build the store driver and the SQLite extension" "$out"
		return 1
	fi
}

drv() { "$DRV" "$@"; }

expect() {
	local name=$1 want=$2 out
	shift 2
	out=$("$@" 2>&1)
	if [ "$out" = "$want" ]; then ok "$name"; else not_ok "$name" "expected: $want" "got: $out"; fi
}

expect_match() {
	local name=$1 re=$2 out
	shift 2
	out=$("$@" 2>&1)
	if printf '%s\n' "$out" | grep -Eq -- "$re"; then ok "$name"; else not_ok "$name" "expected to match: $re" "got: $out"; fi
}

contend() {
	local name=$1 url=$2 job=$3 procs=$4 slots=$5 slot0 d pids=() i bad
	slot0=$(mq_now)
	d=$MQ_TMP/contend.$job
	mkdir -p "$d"
	for i in $(seq 1 "$procs"); do
		"$DRV" "$url" contend "$job" "$slot0" "$slots" > "$d/$i.out" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	mq_count_winners "$name" "$d" "$procs" "$slots"
}

# mq_count_winners NAME DIR PROCS SLOTS: the outputs DIR/*.out ("SLOT OUTCOME")
mq_count_winners() {
	local name=$1 d=$2 procs=$3 slots=$4 lines won errs multi none
	lines=$(cat "$d"/*.out | wc -l)
	errs=$(cat "$d"/*.out | grep -vcE '^[0-9]+ (won|lost)$')
	won=$(cat "$d"/*.out | awk '$2 == "won"' | wc -l)
	multi=$(cat "$d"/*.out | awk '$2 == "won" { n[$1]++ } END { for (s in n) if (n[s] > 1) c++; print c + 0 }')
	none=$(cat "$d"/*.out | awk '{ seen[$1] = 1 } $2 == "won" { w[$1] = 1 } END { for (s in seen) if (!(s in w)) c++; print c + 0 }')
	if [ "$lines" -eq $((procs * slots)) ] && [ "$errs" -eq 0 ] && [ "$won" -eq "$slots" ] &&
		[ "$multi" -eq 0 ] && [ "$none" -eq 0 ]; then
		ok "$name: $procs processes x $slots slots, exactly one won per slot"
	else
		not_ok "$name: $procs processes x $slots slots, exactly one won per slot" \
			"answers $lines (want $((procs * slots))), errors $errs, won $won (want $slots)," \
			"slots won twice or more: $multi, slots nobody won: $none" \
			"$(cat "$d"/*.out | grep -vE '^[0-9]+ (won|lost)$' | head -n 5)"
	fi
}

within() {
	local name=$1 max=$2 t0 t1
	shift 2
	t0=$(mq_now)
	MQ_OUT=$("$@" 2>&1)
	t1=$(mq_now)
	MQ_MS=$((t1 - t0))
	if [ "$MQ_MS" -le "$max" ]; then ok "$name (${MQ_MS} ms)"; else not_ok "$name" "took ${MQ_MS} ms, bound ${max} ms" "$MQ_OUT"; fi
}

sq() {
	local url=$1
	shift
	local args=(-batch :memory: ".load $REPO_ROOT/sqlite/anarchon" ".output /dev/null"
		"SELECT anarchon_config('store', '$url');" ".output stdout")
	for s in "$@"; do args+=("$s"); done
	sqlite3 "${args[@]}" 2>&1
}

# mq_pg KIND URL USER PASSWORD SHORT_URL FREEZE_PID RESENT
#   The store through PostgreSQL: a FOREIGN SERVER of the anarchon wrapper
#   with URL (no credentials), a user mapping with USER/PASSWORD (skipped when
#   USER is empty), anarchon.store naming it.  SHORT_URL has a memory shorter
#   than max_late_ms; FREEZE_PID is SIGSTOPped for the cancel check; RESENT
#   is what our own claim sent again answers on this store.
mq_pg() {
	local kind=$1 url=$2 user=$3 pass=$4 short=$5 fpid=$6 resent=$7 S d pids=() i t0 t1 out
	if ! command -v pg_config > /dev/null || [ ! -f "$REPO_ROOT/pg/fdw.c" ]; then
		not_ok "$kind/pg: PostgreSQL with the anarchon wrapper is not available"
		return 0
	fi
	source "$TEST_ROOT/pg/server.sh"
	if ! pg_install > "$MQ_TMP/pg-install.log" 2>&1; then
		not_ok "$kind/pg: make install" "$(tail -n 20 "$MQ_TMP/pg-install.log")"
		return 0
	fi
	if ! pg_start "fsync = off" > "$MQ_TMP/pg-start.log" 2>&1; then
		not_ok "$kind/pg: start PostgreSQL" "$(tail -n 20 "$MQ_TMP/pg-start.log")"
		return 0
	fi
	pq() { psql -X -A -t -q -v ON_ERROR_STOP=0 "$@" 2>&1; }
	pq -c "CREATE EXTENSION anarchon" \
		-c "CREATE SERVER mq FOREIGN DATA WRAPPER anarchon OPTIONS (url '$url')" \
		-c "CREATE SERVER mq_short FOREIGN DATA WRAPPER anarchon OPTIONS (url '$short')" > /dev/null
	if [ -n "$user" ]; then
		pq -c "CREATE USER MAPPING FOR PUBLIC SERVER mq OPTIONS (user '$user', password '$pass')" \
			-c "CREATE USER MAPPING FOR PUBLIC SERVER mq_short OPTIONS (user '$user', password '$pass')" > /dev/null
	fi
	export PGOPTIONS="-c anarchon.store=mq"
	S=$(mq_now)
	expect "$kind/pg: won, lost, our own claim again, late" "won
lost
$resent
late" pq -c "SELECT anarchon_claim('pg', ${S}::bigint, 'tokA')" -c "SELECT anarchon_claim('pg', ${S}::bigint, 'tokB')" \
		-c "SELECT anarchon_claim('pg', ${S}::bigint, 'tokA')" -c "SELECT anarchon_claim('pg', $((S - 61000))::bigint, 'tokA')"
	expect "$kind/pg: heartbeat and finish in the claiming session, then check" "won
t
f
t
$([ "$resent" = won ] && echo succeeded || echo running)" \
		pq -c "SELECT anarchon_claim('pg', $((S + 1))::bigint, 'tokA')" -c "SELECT anarchon_heartbeat('pg', $((S + 1))::bigint, 'tokA')" \
		-c "SELECT anarchon_heartbeat('pg', $((S + 1))::bigint, 'tokB')" -c "SELECT anarchon_finish('pg', $((S + 1))::bigint, 'tokA')" \
		-c "SELECT anarchon_check('pg', $((S + 1))::bigint)"
	expect_match "$kind/pg: a store memory shorter than max_late_ms is refused" 'is shorter than max_late_ms \(60000 ms\)' \
		env PGOPTIONS="-c anarchon.store=mq_short" psql -X -A -t -q -c "SELECT anarchon_claim('pgshort', ${S}::bigint, 'tokA')"
	if [ -n "$user" ]; then
		pq -c "ALTER USER MAPPING FOR PUBLIC SERVER mq_short OPTIONS (SET password 'Wr0ng-pw')" > /dev/null
		out=$(PGOPTIONS="-c anarchon.store=mq_short" pq -c "SELECT anarchon_claim('pgauth', ${S}::bigint, 'tokA')")
		if printf '%s' "$out" | grep -q 'wrong user name or password' && ! printf '%s' "$out" | grep -q 'Wr0ng'; then
			ok "$kind/pg: a wrong password in the user mapping is refused, without showing it"
		else not_ok "$kind/pg: a wrong password in the user mapping is refused, without showing it" "$out"; fi
	fi

	d=$MQ_TMP/pg-contend
	mkdir -p "$d"
	S=$(mq_now)
	for i in $(seq 1 16); do
		pq -F ' ' -c "SELECT s, anarchon_claim('pgrace', s, anarchon_token()) FROM generate_series(${S}::bigint, $((S + 299))::bigint) s" > "$d/$i.out" &
		pids+=($!)
	done
	wait "${pids[@]}"
	mq_count_winners "$kind/pg: contention through PostgreSQL" "$d" 16 300

	# A statement_timeout ends a claim that waits on a frozen server (the
	# session connects first: only the wait for an answer is cancellable).
	t0=$(mq_now)
	pq -c "SELECT anarchon_claim('pgcancel', $((S + 1))::bigint, 'tokA')" -c "SELECT pg_sleep(1.5)" \
		-c "SET statement_timeout = 700" -c "SELECT anarchon_claim('pgcancel', $((S + 2))::bigint, 'tokA')" > "$MQ_TMP/pg-cancel.out" &
	i=$!
	sleep 0.8
	kill -STOP "$fpid"
	wait "$i"
	t1=$(mq_now)
	kill -CONT "$fpid"
	expect_match "$kind/pg: statement_timeout cancels a claim waiting on a frozen server" 'canceling statement due to statement timeout' cat "$MQ_TMP/pg-cancel.out"
	if [ $((t1 - t0)) -lt 4500 ]; then ok "$kind/pg: ... at once, not after timeout_ms (20 s): $((t1 - t0)) ms in all, 2.2 s of it sleeping"
	else not_ok "$kind/pg: ... at once, not after timeout_ms (20 s)" "took $((t1 - t0)) ms"; fi
	unset PGOPTIONS
}
