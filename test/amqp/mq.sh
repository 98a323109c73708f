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
	if ! out=$(make -s -C "$REPO_ROOT" sqlite test/bin/mq-driver 2>&1); then
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
