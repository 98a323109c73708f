# mq.sh — checks shared by the RabbitMQ and NATS suites (sourced after ../lib.sh).
#
#   mq_build                      build the driver and the SQLite extension
#   drv ARGS...                   the store driver (test/amqp/mq_driver.c)
#   expect NAME WANT CMD...       ok when CMD prints exactly WANT
#   expect_match NAME REGEX CMD...  ok when CMD's output matches REGEX (grep -E)
#   contend NAME URL JOB PROCS SLOTS [SLOT0]  PROCS processes claim the same
#                                 SLOTS slots (from SLOT0, default now) with
#                                 their own tokens: ok when every slot has
#                                 exactly one `won` and nothing failed
#   within NAME MAX_MS CMD...     ok when CMD ends within MAX_MS (a "did not
#                                 hang" bound; its output goes to $MQ_OUT)
#   sq URL SQL...                 the sqlite3 CLI with the extension loaded and
#                                 `store` set to URL, one statement per argument
#   mq_long KIND URL SLOT RESENT LAST  the longest job name and token
#   mq_again URL JOB PROCS SLOTS  claim again the slots of an earlier contend
#   mq_vg URL IN                  a session on IN under valgrind, then rc=N
#   mq_sqlite_contend KIND URL    contention through the SQLite extension
#   mq_cancel_session URL SLOT0 PAUSE SLOT, mq_freeze_new, mq_freeze_cancel,
#   mq_one_winner                 the steps of a suite's frozen-server checks

DRV=$REPO_ROOT/test/bin/mq-driver
MQ_TMP=${MQ_TMP:-$(t_tmpdir)}

mq_now() { date +%s%3N; }
# mq_param URL NAME=VALUE: URL with one more query parameter.
mq_param() { case $1 in *\?*) echo "$1&$2" ;; *) echo "$1?$2" ;; esac; }
# mq_slot_now: the current whole second in ms, a valid slot (slots are whole seconds).
mq_slot_now() { echo $(( $(date +%s) * 1000 )); }

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
	local name=$1 url=$2 job=$3 procs=$4 slots=$5 slot0=${6:-$(mq_now)} d pids=() i bad
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

# mq_long KIND URL SLOT RESENT LAST: the longest job name (128 bytes, dots
#   included) and token (64 bytes) claim SLOT; then another token's claim,
#   our own sent again (RESENT is what this store answers), heartbeat,
#   finish, check (LAST).
mq_long() {
	local kind=$1 url=$2 S=$3 resent=$4 last=$5 lj lt
	lj=$(printf 'a.%.0s' $(seq 1 63))b1
	lt=$(printf 'T%.0s' $(seq 1 64))
	printf '%s\n' "claim $lj $S $lt" "claim $lj $S other" "claim $lj $S $lt" "heartbeat $lj $S $lt" "finish $lj $S $lt" "check $lj $S" > "$MQ_TMP/long.in"
	expect "$kind: a 128-byte job name and a 64-byte token" "won
lost
$resent
true
true
$last" sh -c "'$DRV' '$url' session < '$MQ_TMP/long.in'"
}

# mq_again URL JOB PROCS SLOTS: PROCS new processes claim again the SLOTS
#   slots an earlier `contend ... JOB` claimed; their answers are left in
#   $MQ_TMP/again.JOB/*.out for the suite to count.
mq_again() {
	local url=$1 job=$2 procs=$3 slots=$4 d=$MQ_TMP/again.$2 s0 pids=() i
	s0=$(head -n 1 "$MQ_TMP/contend.$job/1.out" | cut -d' ' -f1)
	mkdir -p "$d"
	for i in $(seq 1 "$procs"); do "$DRV" "$url" contend "$job" "$s0" "$slots" > "$d/$i.out" & pids+=($!); done
	wait "${pids[@]}"
}

# mq_vg URL IN: a driver session on URL reading IN, under valgrind (its
#   report appended to $MQ_TMP/vg.err), then "rc=" and its exit status.
mq_vg() {
	valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=9 "$DRV" "$1" session < "$2" 2>> "$MQ_TMP/vg.err"
	echo "rc=$?"
}

# mq_sqlite_contend KIND URL: 16 sqlite3 processes claim the same 300 slots
#   through the extension, each with its own token.
mq_sqlite_contend() {
	local kind=$1 url=$2 d=$MQ_TMP/sqlite-contend S pids=() i
	mkdir -p "$d"
	S=$(mq_slot_now)
	for i in $(seq 1 16); do
		sq "$url" ".mode list" ".separator ' '" \
			"WITH RECURSIVE s(x) AS (SELECT $S UNION ALL SELECT x + 1000 FROM s WHERE x < $S + 299000)
			 SELECT x, anarchon_claim('sqrace', x, anarchon_token()) FROM s;" > "$d/$i.out" &
		pids+=($!)
	done
	wait "${pids[@]}"
	mq_count_winners "$kind/sqlite: contention through the SQLite extension" "$d" 16 300
}

# The frozen-server checks, in the order a suite runs them:
# mq_cancel_session URL SLOT0 PAUSE SLOT: a second kept connection (no
#   timeout to speak of) claims SLOT0 with t9, then after PAUSE seconds SLOT
#   with t1, which is meant to wait on the frozen server; its answers go to
#   $MQ_TMP/cancel.out, its pid to MQ_CPID.
mq_cancel_session() {
	local url=$1 slot0=$2 pause=$3 slot=$4
	# The session's script: PAUSE seconds between its claims, then kept open 30 s.
	"$DRV" "$(mq_param "$url" timeout_ms=60000)" session > "$MQ_TMP/cancel.out" 2>&1 < <(echo "claim fz $slot0 t9"; sleep "$pause"; echo "claim fz $slot t1"; sleep 30) &
	MQ_CPID=$!
}

# mq_freeze_new KIND URL SLOT: with the server frozen, a new connection
#   (timeout_ms=1000) claiming SLOT returns within the bound, with a timeout.
mq_freeze_new() {
	within "$1: freeze: a new connection returns within timeout_ms (1 s) + 1.5 s" 2500 drv "$2?timeout_ms=1000" claim fz "$3" t2
	expect_match "$1: freeze: ... with a timeout error" '^error timeout: ' echo "$MQ_OUT"
}

# mq_freeze_cancel KIND SERVER: SIGINT to the session of mq_cancel_session
#   ends its wait on the frozen SERVER (the name its errors use) at once.
mq_freeze_cancel() {
	local kind=$1 server=$2 t0 t1
	t0=$(mq_now)
	kill -INT "$MQ_CPID"
	for _ in $(seq 1 50); do [ "$(wc -l < "$MQ_TMP/cancel.out")" -ge 2 ] && break; sleep 0.1; done
	t1=$(mq_now)
	expect_match "$kind: freeze: a cancel (SIGINT) ends the wait at once" "^error canceled: canceled while waiting for $server" tail -n 1 "$MQ_TMP/cancel.out"
	if [ $((t1 - t0)) -lt 3000 ]; then ok "$kind: freeze: ... within 3 s ($((t1 - t0)) ms)"; else not_ok "$kind: freeze: ... within 3 s" "took $((t1 - t0)) ms"; fi
	kill "$MQ_CPID" 2>/dev/null
}

# mq_one_winner NAME URL SLOT TOK1 TOK2: once the server is thawed, of two
#   claims of SLOT with TOK1 then TOK2 exactly one wins.
mq_one_winner() {
	local name=$1 url=$2 slot=$3 a b
	a=$(drv "$url" claim fz "$slot" "$4")
	b=$(drv "$url" claim fz "$slot" "$5")
	if [ "$(printf '%s\n%s\n' "$a" "$b" | grep -c '^won$')" -eq 1 ]; then ok "$name ($a/$b)"
	else not_ok "$name" "$4: $a, $5: $b"; fi
}

# mq_pg KIND URL USER PASSWORD SHORT_URL FREEZE_PID RESENT
#   The store through PostgreSQL: a FOREIGN SERVER of the anarchon wrapper
#   with URL (no credentials), a user mapping with USER/PASSWORD (skipped when
#   USER is empty), anarchon.store naming it.  SHORT_URL has a memory shorter
#   than max_late_ms; FREEZE_PID is SIGSTOPped for the cancel check; RESENT
#   is what our own claim sent again answers on this store.
mq_pg() {
	local kind=$1 url=$2 user=$3 pass=$4 short=$5 fpid=$6 resent=$7 S d pids=() i t0 t1 out
	source "$TEST_ROOT/pg/host.sh"
	pg_host_start "$kind/pg" "$MQ_TMP" || return 0
	pq() { psql -X -A -t -q -v ON_ERROR_STOP=0 "$@" 2>&1; }
	pq -c "CREATE EXTENSION anarchon" \
		-c "CREATE SERVER mq FOREIGN DATA WRAPPER anarchon OPTIONS (url '$url')" \
		-c "CREATE SERVER mq_short FOREIGN DATA WRAPPER anarchon OPTIONS (url '$short')" > /dev/null
	if [ -n "$user" ]; then
		pq -c "CREATE USER MAPPING FOR PUBLIC SERVER mq OPTIONS (user '$user', password '$pass')" \
			-c "CREATE USER MAPPING FOR PUBLIC SERVER mq_short OPTIONS (user '$user', password '$pass')" > /dev/null
	fi
	export PGOPTIONS="-c anarchon.store=mq"
	S=$(mq_slot_now)
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
		pq -c "SELECT anarchon_claim('pg', $((S + 1000))::bigint, 'tokA')" -c "SELECT anarchon_heartbeat('pg', $((S + 1000))::bigint, 'tokA')" \
		-c "SELECT anarchon_heartbeat('pg', $((S + 1000))::bigint, 'tokB')" -c "SELECT anarchon_finish('pg', $((S + 1000))::bigint, 'tokA')" \
		-c "SELECT anarchon_check('pg', $((S + 1000))::bigint)"
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
	S=$(mq_slot_now)
	for i in $(seq 1 16); do
		pq -F ' ' -c "SELECT s, anarchon_claim('pgrace', s, anarchon_token()) FROM generate_series(${S}::bigint, $((S + 299000))::bigint, 1000) s" > "$d/$i.out" &
		pids+=($!)
	done
	wait "${pids[@]}"
	mq_count_winners "$kind/pg: contention through PostgreSQL" "$d" 16 300

	# A statement_timeout ends a claim that waits on a frozen server (the
	# session connects first: only the wait for an answer is cancellable).
	# The server is frozen 2 s after the session starts, in the middle of its
	# 3 s sleep: a busy machine may take a second to start a backend and
	# connect it, and that first claim must be done before the freeze.
	t0=$(mq_now)
	pq -c "SELECT anarchon_claim('pgcancel', $((S + 1000))::bigint, 'tokA')" -c "SELECT pg_sleep(3)" \
		-c "SET statement_timeout = 700" -c "SELECT anarchon_claim('pgcancel', $((S + 2000))::bigint, 'tokA')" > "$MQ_TMP/pg-cancel.out" &
	i=$!
	# A fixed wait, not a poll yet: the first claim and pg_sleep(3) under way before the freeze.
	sleep 2
	kill -STOP "$fpid"
	wait "$i"
	t1=$(mq_now)
	kill -CONT "$fpid"
	expect_match "$kind/pg: statement_timeout cancels a claim waiting on a frozen server" 'canceling statement due to statement timeout' cat "$MQ_TMP/pg-cancel.out"
	if [ $((t1 - t0)) -lt 6000 ]; then ok "$kind/pg: ... at once, not after timeout_ms (20 s): $((t1 - t0)) ms in all, 3.7 s of it sleeping"
	else not_ok "$kind/pg: ... at once, not after timeout_ms (20 s)" "took $((t1 - t0)) ms" "$(cat "$MQ_TMP/pg-cancel.out")"; fi
	unset PGOPTIONS
}
