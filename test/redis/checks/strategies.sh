# strategies.sh — one prefix, one strategy (doc/stores.md, "One prefix, one
# strategy").  Strategies keep a job's claims in different keys, or read the
# same stream differently, so two of them on one prefix would each decide the
# same slot: lease and script both answered won.  The store refuses a claim of
# a job that another strategy (or a script store with another window_ms)
# decides on its prefix, with how to migrate, and a rolling change of strategy
# takes over by itself once the old one has stopped winning for the time the
# error states.  (sourced by test/redis/run.sh)

MX=$tmp/mx
mkdir -p "$MX"

# one NAME URL JOB SLOT TOKEN: one store, one claim; its answer (and hint) in $MX/NAME.
one() {
	echo "claim $3 $4 $5" | RDRIVE_HINTS=1 "$RDRIVE" "$2" > "$MX/$1" 2>&1
}

# pair NAME URL_A URL_B PATTERN: a store on URL_A wins a slot; then a store
# on URL_B claims the same slot and must be refused, with an error matching
# PATTERN (grep -E).  Two won is the fault this file exists for.
pair() {
	local name=$1 a=$2 b=$3 pat=$4 s wins
	s=$(now_ms)
	one "$name-a" "$a" sync "$s" tokA
	one "$name-b" "$b" sync "$s" tokB
	wins=$(cat "$MX/$name-a" "$MX/$name-b" | grep -c '^won ')
	if [ "$(cat "$MX/$name-a")" = "won 1" ] && grep -q -E "^error CONFIG: $pat" "$MX/$name-b"; then
		ok "redis one strategy per prefix: $name: the first wins, the second is refused"
	else
		not_ok "redis one strategy per prefix: $name: the first wins, the second is refused" \
			"$wins won for one slot" "first:  $(cat "$MX/$name-a")" "second: $(cat "$MX/$name-b")"
	fi
}

# ---------------------------------------------------------------- pairs
# The issue's case: lease and script on one prefix, and the other way round.
pair "lease then script" "$URL?strategy=lease&prefix=mx1" "$URL?strategy=script&prefix=mx1" \
	"redis store redis://127\.0\.0\.1:$PORT: job sync on prefix mx1 is decided with strategy=lease, and this store would decide it with strategy=script&window_ms=300000: two strategies on one prefix would each let a slot be won"
if grep -q -E '^hint: Stop every instance that uses strategy=lease on prefix mx1; this store takes over by itself when the job.s marker mx1:\{sync\}:strategy expires: in [0-9]+ ms if none of their claims wins meanwhile .*A new prefix= is no shortcut' "$MX/lease then script-b"; then
	ok "redis one strategy per prefix: the hint says how to migrate, and that a new prefix is no shortcut"
else not_ok "redis one strategy per prefix: the hint says how to migrate, and that a new prefix is no shortcut" "$(cat "$MX/lease then script-b")"; fi
pair "script then lease" "$URL?strategy=script&prefix=mx2" "$URL?strategy=lease&prefix=mx2" \
	".*job sync on prefix mx2 is decided with strategy=script&window_ms=300000, and this store would decide it with strategy=lease:"
pair "lease then stream-id" "$URL?strategy=lease&prefix=mx3" "$URL?strategy=stream-id&prefix=mx3" \
	".*decided with strategy=lease, and this store would decide it with strategy=stream-id:"
pair "stream-id then script" "$URL?strategy=stream-id&prefix=mx4" "$URL?strategy=script&prefix=mx4" \
	".*decided with strategy=stream-id, and this store would decide it with strategy=script&window_ms=300000:"
pair "script then stream-id" "$URL?strategy=script&prefix=mx5" "$URL?strategy=stream-id&prefix=mx5" \
	".*decided with strategy=script&window_ms=300000, and this store would decide it with strategy=stream-id:"
# A script store with a shorter window trims what the other still counts on.
pair "script with another window_ms" "$URL?strategy=script&prefix=mx6" "$URL?strategy=script&prefix=mx6&window_ms=200000" \
	".*decided with strategy=script&window_ms=300000, and this store would decide it with strategy=script&window_ms=200000:"

# idmp needs Redis 8.6 (not here): its marker, as an idmp store writes it, refuses the others.
redis-cli -p "$PORT" SET 'mx7:{sync}:strategy' 'strategy=idmp&duration_sec=300' PX 60000 > /dev/null
one idmp-marked "$URL?strategy=script&prefix=mx7" sync "$(now_ms)" tokB
check "redis one strategy per prefix: a job an idmp store decides is refused to script" \
	grep -q -E '^error CONFIG: .*decided with strategy=idmp&duration_sec=300, and this store would decide it with strategy=script' "$MX/idmp-marked"

# A marker without an expiry, set by hand, pins the job to a strategy.
redis-cli -p "$PORT" SET 'mx8:{sync}:strategy' 'strategy=lease' > /dev/null
one pinned "$URL?strategy=script&prefix=mx8" sync "$(now_ms)" tokB
check "redis one strategy per prefix: a marker set by hand without an expiry pins the job, and the hint says so" \
	grep -q -E '^hint: The job.s marker mx8:\{sync\}:strategy has no expiry' "$MX/pinned"

# The same strategy on one prefix, from two stores: one place, no refusal.
pair_same() {
	local name=$1 url=$2 want=$3 s
	s=$(now_ms)
	one "$name-a" "$url" sync "$s" tokA
	one "$name-b" "$url" sync "$s" tokB
	check "redis one strategy per prefix: two $name stores on one prefix decide together ($want)" \
		test "$(cat "$MX/$name-a" "$MX/$name-b" | tr '\n' ' ')" = "$want"
}
pair_same lease "$URL?strategy=lease&prefix=mx9" "won 1 running 1 "
pair_same script "$URL?strategy=script&prefix=mx10" "won 1 lost 0 "
pair_same stream-id "$URL?strategy=stream-id&prefix=mx11" "won 1 lost 0 "

# The marker: the job's hash tag, the strategy, an expiry of max_late_ms +
# lease_ms x attempts + max_skew_ms + timeout_ms (defaults: 102 s) past the win.
v=$(redis-cli -p "$PORT" GET 'mx1:{sync}:strategy')
t=$(redis-cli -p "$PORT" PTTL 'mx1:{sync}:strategy')
if [ "$v" = strategy=lease ] && [ "$t" -gt 80000 ] && [ "$t" -le 102000 ]; then
	ok "redis one strategy per prefix: the marker <prefix>:{<job>}:strategy names the strategy and expires 102 s after the win"
else not_ok "redis one strategy per prefix: the marker <prefix>:{<job>}:strategy names the strategy and expires 102 s after the win" "value $v, PTTL $t"; fi

# A new prefix is another place: both win.  This is why the hint says a new
# prefix is no migration while the old one still claims.
s=$(now_ms)
one newprefix-a "$URL?strategy=lease&prefix=mx12" sync "$s" tokA
one newprefix-b "$URL?strategy=script&prefix=mx13" sync "$s" tokB
check "redis one strategy per prefix: another prefix is another place (both win): no migration while the old one claims" \
	test "$(cat "$MX/newprefix-a" "$MX/newprefix-b" | tr '\n' ' ')" = "won 1 won 1 "

# ---------------------------------------------------------------- through SQLite
if [ -f sqlite/anarchon.so ] && command -v sqlite3 > /dev/null; then
	s=$(now_slot)
	for st in lease script; do
		rm -f "$MX/sq-$st.db"
		sqlite3 -batch "$MX/sq-$st.db" ".load $REPO_ROOT/sqlite/anarchon" ".output /dev/null" \
			"SELECT anarchon_config('store', 'redis://127.0.0.1:$PORT?strategy=$st&prefix=mxsq');" ".output stdout" \
			"SELECT anarchon_claim('sync', $s, 'tok-$st');" > "$MX/sq-$st.out" 2>&1
	done
	if [ "$(cat "$MX/sq-lease.out")" = won ] &&
		grep -q 'job sync on prefix mxsq is decided with strategy=lease, and this store would decide it with strategy=script.*\. Stop every instance that uses strategy=lease on prefix mxsq' "$MX/sq-script.out"; then
		ok "redis one strategy per prefix via sqlite: lease wins, script on the same prefix is an SQL error that says how to migrate"
	else
		not_ok "redis one strategy per prefix via sqlite: lease wins, script on the same prefix is an SQL error that says how to migrate" \
			"lease:  $(cat "$MX/sq-lease.out")" "script: $(cat "$MX/sq-script.out")"
	fi
	# anarchon_missed reads lease runs: a job script decides has none, and
	# every slot would look missed.  Refused the same way.
	s=$(now_slot)
	sqlite3 -batch "$MX/sq-missed.db" ".load $REPO_ROOT/sqlite/anarchon" ".output /dev/null" \
		"SELECT anarchon_config('max_late_ms', 1000);" \
		"SELECT anarchon_config('store', 'redis://127.0.0.1:$PORT?strategy=lease&prefix=mx2');" ".output stdout" \
		"SELECT count(*) FROM anarchon_missed('sync', '1 seconds', $((s - 20000)), $((s - 10000)));" > "$MX/sq-missed.out" 2>&1
	check "redis one strategy per prefix via sqlite: anarchon_missed of a job another strategy decides is refused" \
		grep -q 'job sync on prefix mx2 is decided with strategy=script&window_ms=300000, and this store would decide it with strategy=lease' "$MX/sq-missed.out"
else
	not_ok "redis one strategy per prefix via sqlite: needs sqlite/anarchon.so and sqlite3"
fi

# ---------------------------------------------------------------- contention
# mixed NAME JOB STRATEGY:PROCS...: processes of several strategies claim the
# same 50 slots on one prefix.  Exactly one won per slot, every answer a
# claim's (won, lost, running) or the refusal, and every win one strategy's.
mixed() {
	local name=$1 job=$2 first d pids=() spec st n p report
	shift 2
	d=$MX/mixed-$job
	mkdir -p "$d"
	first=$(now_ms)
	for spec in "$@"; do
		st=${spec%:*} n=${spec#*:}
		for p in $(seq 1 "$n"); do
			"$RDRIVE" -s overlap=allow "$URL?strategy=$st&prefix=mxc" --contend "$job" "$first" 50 > "$d/$st-$p" 2>&1 &
			pids+=($!)
		done
	done
	wait "${pids[@]}"
	report=$(for f in "$d"/*; do sed "s|^|${f##*/} |" "$f"; done | awk -v first="$first" -v procs="$(ls "$d" | wc -l)" '
		{ split($1, a, "-"); st = a[1] == "stream" ? "stream-id" : a[1]; i = $2 - first; n[i]++ }
		$3 == "won" { w[i]++; by[st]++; next }
		$3 == "lost" || $3 == "running" { next }
		$3 == "error" && $4 == "CONFIG:" && /two strategies on one prefix/ { refused[st]++; next }
		{ if (bad++ < 3) print "unexpected: " $0 }
		END {
			for (s = 0; s < 50; s++) {
				if (w[s] > 1) twice++
				if (w[s] != 1 || n[s] != procs) { if (e++ < 3) print "slot first+" s ": " w[s] + 0 " won of " n[s] + 0 " answers" }
			}
			for (st in by) k++
			if (k != 1) print "wins by " k " strategies"
			if (twice) print twice " slots won twice"
			printf "#"
			for (st in by) printf " won by %s: %d;", st, by[st]
			for (st in refused) printf " refused to %s: %d;", st, refused[st]
			print ""
		}')
	if [ "$(printf '%s\n' "$report" | grep -vc '^#')" -eq 0 ]; then ok "redis one strategy per prefix: $name: exactly one won per slot, 0 won twice, the other strategies refused"
	else not_ok "redis one strategy per prefix: $name: exactly one won per slot, 0 won twice, the other strategies refused" "$report"; fi
}
mixed "8 lease + 8 script processes x 50 slots" sync lease:8 script:8
mixed "6 lease + 5 stream-id + 5 script processes x 50 slots" trio lease:6 stream-id:5 script:5

# ---------------------------------------------------------------- rolling change
# lease -> script with small settings: keep = max_late_ms 500 + lease_ms 500
# x 1 + max_skew_ms 0 + timeout_ms 500 = 1500 ms.  While lease wins, script
# is refused; once lease stops, script takes over when the error said, and
# does not win again a slot lease decided.
RQ="timeout_ms=500&max_skew_ms=0&prefix=mxr"
RS=(-s max_late_ms=500 -s lease_ms=500)
# roll NAME STRATEGY SLOT TOKEN: one claim with the rolling change's settings.
roll() { printf 'claim job %s %s\n' "$3" "$4" | RDRIVE_HINTS=1 "$RDRIVE" "${RS[@]}" "$URL?strategy=$2&$RQ" > "$MX/roll-$1" 2>&1; }
r1=$(now_ms)
roll old1 lease "$r1" tokA
roll new1 script "$r1" tokB
# The scenario, not a wait: lease wins again half a second later (its
# marker moves on), and script is still refused.
sleep 0.5
r2=$(now_ms)
roll old2 lease "$r2" tokA
roll new2 script "$r2" tokB
left=$(sed -n 's/^hint: .* expires: in \([0-9]*\) ms .*/\1/p' "$MX/roll-new2")
if [ "$(cat "$MX/roll-old1")" = "won 1" ] && [ "$(cat "$MX/roll-old2")" = "won 1" ] &&
	grep -q '^error CONFIG: .*decided with strategy=lease' "$MX/roll-new1" &&
	grep -q '^error CONFIG: .*decided with strategy=lease' "$MX/roll-new2" && [ -n "$left" ] && [ "$left" -le 1500 ]; then
	ok "redis rolling change lease -> script: while lease wins, script is refused (takes over in $left ms of at most 1500)"
else not_ok "redis rolling change lease -> script: while lease wins, script is refused" "$(tail -n +1 "$MX"/roll-*)"; fi
# lease goes silent; script waits what the error said, then takes over.
sleep "$(( (left + 200) / 1000 )).$(printf '%03d' $(( (left + 200) % 1000 )))"
r3=$(now_ms)
roll new3 script "$r3" tokB
# lease asks for script's own slot at once, while script's marker lives
# (1500 ms past r3).  It asked for a new slot after the two claims below
# once: under CI's load the marker had expired by then, and lease won that
# slot, as it may once script has been silent that long.
roll old3 lease "$r3" tokA
roll new-r1 script "$r1" tokC
roll new-r2 script "$r2" tokC
if [ "$(cat "$MX/roll-new3")" = "won 1" ] && [ "$(cat "$MX/roll-new-r1")" = "late 0" ] && [ "$(cat "$MX/roll-new-r2")" = "late 0" ] &&
	grep -q '^error CONFIG: .*decided with strategy=script&window_ms=300000, and this store would decide it with strategy=lease' "$MX/roll-old3"; then
	ok "redis rolling change lease -> script: script takes over when the error said; lease's slots are late, not won again; lease is refused now"
else not_ok "redis rolling change lease -> script: script takes over when the error said; lease's slots are late, not won again; lease is refused now" \
	"$(for f in new3 new-r1 new-r2 old3; do echo "$f: $(cat "$MX/roll-$f")"; done)"; fi

# ---------------------------------------------------------------- valgrind
# The refused store's path: the refusal read from every strategy's reply.
if have_valgrind "redis one strategy per prefix: the refusal under valgrind"; then
	vg_fail=
	for url in "$URL?strategy=script&prefix=mx1" "$URL?strategy=stream-id&prefix=mx1" "$URL?strategy=lease&prefix=mx2" \
		"$URL?strategy=stream-id&prefix=mx8"; do
		printf 'claim sync %s a\ncheck sync %s\nclaim sync %s b\n' "$(now_ms)" "$(now_ms)" "$(now_ms)" |
			RDRIVE_HINTS=1 valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
				"$RDRIVE" "$url" > "$MX/vg.out" 2> "$MX/vg.log"
		rc=$?
		[ $rc -eq 99 ] && vg_fail="$vg_fail $url: $(head -n 5 "$MX/vg.log")"
		grep -q '^error CONFIG: .*two strategies on one prefix' "$MX/vg.out" || vg_fail="$vg_fail $url: not refused: $(head -c 300 "$MX/vg.out")"
	done
	if [ -z "$vg_fail" ]; then ok "redis one strategy per prefix: the refusal under valgrind (script, stream-id, lease, a pinned marker)"
	else not_ok "redis one strategy per prefix: the refusal under valgrind" "$vg_fail"; fi
fi
