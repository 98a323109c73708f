# table.sh — the outcome tables of every strategy, through the store interface.
# (sourced by test/redis/run.sh)

# table_check NAME URL: commands on stdin, expected answers in $tmp/NAME.exp
table_check() {
	drive "$1" "$2"
	diff_ok "redis $1" "$tmp/$1.exp" "$tmp/$1.out"
}

NOW=$(now_ms)

# lease: the claim's decision table, row by row (the same rows core/lease.c answers).
cat > "$tmp/lease-table.exp" <<'X'
won 1
won 1
running 1
late 0
overlap 0
ok
won 1
ok
true
false
running 1
false
true
true
false
failed 1
done 1
true
none 0
X
table_check lease-table "$URL?strategy=lease&prefix=t1" <<X
claim sync $NOW a
claim sync $NOW a
claim sync $NOW b
claim sync $((NOW - 120000)) c
claim sync $((NOW + 1000)) d
set overlap allow
claim sync $((NOW + 1000)) d
set overlap skip
heartbeat sync $NOW a
heartbeat sync $NOW b
check sync $NOW
finish sync $NOW b
finish sync $NOW a failed
finish sync $NOW a failed
finish sync $NOW a succeeded
check sync $NOW
claim sync $NOW e
finish sync $((NOW + 1000)) d
check sync 999
X

# lease: takeover with attempt + 1, fencing of the old token, interrupted.
cat > "$tmp/lease-takeover.exp" <<'X'
ok
ok
won 1
ok
expired 1
won 2
false
false
running 2
true
ok
done 2
interrupted 2
false
won 1
X
table_check lease-takeover "$URL?strategy=lease&prefix=t2" <<X
set lease_ms 1500
set attempts 2
claim sync $NOW a
sleep 2000
check sync $NOW
claim sync $NOW b
heartbeat sync $NOW a
finish sync $NOW a
claim sync $NOW a
heartbeat sync $NOW b
sleep 2000
claim sync $NOW c
check sync $NOW
heartbeat sync $NOW b
claim sync $((NOW + 5000)) f
X
won=$(redis-cli -p "$PORT" XRANGE 't2:{sync}:history' - + | grep -c '^won$')
ends=$(redis-cli -p "$PORT" XRANGE 't2:{sync}:history' - + | grep -c '^interrupted$')
if [ "$won" = 3 ] && [ "$ends" = 1 ]; then ok "redis lease: every won attempt is in the job's history stream"
else not_ok "redis lease: every won attempt is in the job's history stream" "won=$won interrupted=$ends"; fi

# lease: a run whose lease ran out is not "live" for the overlap rule.
cat > "$tmp/lease-overlap.exp" <<'X'
ok
won 1
overlap 0
ok
won 1
X
table_check lease-overlap "$URL?strategy=lease&prefix=t3" <<X
set lease_ms 1500
claim sync $NOW a
claim sync $((NOW + 1)) b
sleep 2000
claim sync $((NOW + 2)) c
X

# lease, overlap replace: a won slot (first claim or takeover) marks the
# job's other live runs replaced; their heartbeat and finish are fenced; a run
# whose lease ran out is not live, so it is not replaced (the rows of core/lease.c).
cat > "$tmp/lease-replace.exp" <<'X'
ok
won 1
won 1
replaced 1
false
false
done 1
running 1
true
ok
ok
won 1
ok
won 1
expired 1
won 2
replaced 1
X
table_check lease-replace "$URL?strategy=lease&prefix=t3r" <<X
set overlap replace
claim sync $NOW a
claim sync $((NOW + 1000)) b
check sync $NOW
heartbeat sync $NOW a
finish sync $NOW a
claim sync $NOW a
claim sync $((NOW + 1000)) c
heartbeat sync $((NOW + 1000)) b
set lease_ms 1500
set attempts 2
claim sync $((NOW + 2000)) d
sleep 2000
claim sync $((NOW + 3000)) e
check sync $((NOW + 2000))
claim sync $((NOW + 2000)) f
check sync $((NOW + 3000))
X
replaced=$(redis-cli -p "$PORT" XRANGE 't3r:{sync}:history' - + | grep -c '^replaced$')
if [ "$replaced" = 3 ]; then ok "redis lease: every replaced run is in the job's history stream"
else not_ok "redis lease: every replaced run is in the job's history stream" "replaced=$replaced"; fi

# stream-id and script: won / lost, own retry, late, and what heartbeat,
# finish and check do without a lease (doc/stores.md).
stream_table() {
	cat > "$tmp/$1.exp" <<'X'
won 1
won 1
lost 0
late 0
true
false
running 1
false
true
true
false
false
succeeded 1
none 0
won 1
X
	table_check "$1" "$2" <<X
claim sync $NOW a
claim sync $NOW a
claim sync $NOW b
claim sync $((NOW - 120000)) c
heartbeat sync $NOW a
heartbeat sync $NOW b
check sync $NOW
finish sync $NOW b
finish sync $NOW a
finish sync $NOW a
finish sync $NOW a failed
heartbeat sync $NOW a
check sync $NOW
check sync $((NOW + 5))
claim sync $((NOW + 5)) b
X
}
stream_table stream-id-table "$URL?strategy=stream-id&prefix=t4"
stream_table script-table "$URL?strategy=script&prefix=t5"

# Overlap replace needs a lease: every won/lost strategy refuses it, before it writes anything.
for strategy in stream-id script; do
	printf 'set overlap replace\nclaim sync %s a\n' "$NOW" | drive "replace-$strategy" "$URL?strategy=$strategy&prefix=t3w"
	if grep -q "^error UNSUPPORTED: overlap 'replace' needs a store with leases, and redis strategy $strategy has none" "$tmp/replace-$strategy.out" &&
		[ "$(redis-cli -p "$PORT" --scan --pattern 't3w:*' | grep -vx 't3w:format' | wc -l)" = 0 ]; then
		ok "redis $strategy: overlap 'replace' is refused, nothing written"
	else not_ok "redis $strategy: overlap 'replace' is refused, nothing written" "$(cat "$tmp/replace-$strategy.out")"; fi
done

# stream-id: a slot older than the newest claimed one can never be added.
printf 'claim sync %s a\nclaim sync %s b\n' "$NOW" "$((NOW - 10))" | drive stream-id-older "$URL?strategy=stream-id&prefix=t6"
if [ "$(cat "$tmp/stream-id-older.out")" = "$(printf 'won 1\nlate 0')" ]; then ok "redis stream-id: a slot below the stream's top answers late"
else not_ok "redis stream-id: a slot below the stream's top answers late" "$(cat "$tmp/stream-id-older.out")"; fi

# A late claim of our own that was decided before the limit is still ours.
printf 'claim sync %s a\nset max_late_ms 0\nclaim sync %s a\nclaim sync %s b\n' "$((NOW - 30000))" "$((NOW - 30000))" "$((NOW - 30000))" |
	drive own-late "$URL?strategy=stream-id&prefix=t7"
if [ "$(cat "$tmp/own-late.out")" = "$(printf 'won 1\nok\nwon 1\nlate 0')" ]; then ok "redis stream-id: our own claim resent after max_late_ms is still won"
else not_ok "redis stream-id: our own claim resent after max_late_ms is still won" "$(cat "$tmp/own-late.out")"; fi

# Memory shorter than max_late_ms is a configuration error that says why.
echo "claim sync $NOW a" | drive short-window "$URL?strategy=script&prefix=t8&window_ms=1000"
if grep -q '^error CONFIG: .*window_ms.*max_late_ms' "$tmp/short-window.out"; then ok "redis script: window_ms < max_late_ms is refused"
else not_ok "redis script: window_ms < max_late_ms is refused" "$(cat "$tmp/short-window.out")"; fi
printf 'set max_late_ms 500\nclaim sync %s a\n' "$(now_ms)" | drive short-window-ok "$URL?strategy=script&prefix=t8&window_ms=1000"
if [ "$(cat "$tmp/short-window-ok.out")" = "$(printf 'ok\nwon 1')" ]; then ok "redis script: window_ms >= max_late_ms is accepted"
else not_ok "redis script: window_ms >= max_late_ms is accepted" "$(cat "$tmp/short-window-ok.out")"; fi

# script: the claim is forgotten after window_ms (its documented memory).
printf 'set max_late_ms 100\nclaim sync %s a\nsleep 800\nclaim sync %s b\n' "$((NOW + 60000))" "$((NOW + 60000))" |
	drive script-forgets "$URL?strategy=script&prefix=t9&window_ms=500"
if [ "$(cat "$tmp/script-forgets.out")" = "$(printf 'ok\nwon 1\nok\nwon 1')" ]; then ok "redis script: remembers a claim for window_ms"
else not_ok "redis script: remembers a claim for window_ms" "$(cat "$tmp/script-forgets.out")"; fi

# idmp on Redis 7: a clear error naming 8.6 and suggesting script.
echo "claim sync $NOW a" | RDRIVE_HINTS=1 drive idmp "$URL?strategy=idmp&duration_sec=120"
if grep -q '^error UNSUPPORTED: .*Redis 8\.6' "$tmp/idmp.out" && grep -q '^hint: Use strategy=script' "$tmp/idmp.out"; then ok "redis idmp: Redis 7 is refused, naming 8.6 and script"
else not_ok "redis idmp: Redis 7 is refused, naming 8.6 and script" "$(cat "$tmp/idmp.out")"; fi

# Keys: every key carries its job's hash tag, but the prefix's format marker.
bad=$(redis-cli -p "$PORT" --scan | grep -v -E '^[A-Za-z0-9_-]+(:\{[A-Za-z0-9_.-]+\}:.*|:format)$' | head -n 5)
if [ -z "$bad" ]; then ok "redis: every key has the form <prefix>:{<job>}:..., or is <prefix>:format"
else not_ok "redis: every key has the form <prefix>:{<job>}:..., or is <prefix>:format" "$bad"; fi

# Runs expire by themselves once no claim can ask about them.
ttl=$(redis-cli -p "$PORT" PTTL "t1:{sync}:run:$NOW")
if [ "$ttl" -gt 0 ] 2> /dev/null; then ok "redis lease: a run key expires after the retention"
else not_ok "redis lease: a run key expires after the retention" "PTTL=$ttl"; fi

# The store under valgrind: every strategy's calls (each on its own prefix), errors and refusals.
if have_valgrind "redis: the store under valgrind"; then
	vg_fail=
	for url in "$URL?strategy=lease&prefix=vg" "$URL?strategy=stream-id&prefix=vgs" "$URL?strategy=script&prefix=vgc" \
		"$URL?strategy=idmp" "$URL?strategy=nope" "redis://127.0.0.1:$(free_port)" "redis://:pw@127.0.0.1:$PORT"; do
		printf 'claim sync %s a\nclaim sync %s b\nheartbeat sync %s a\nfinish sync %s a\ncheck sync %s\nclaim sync 5 x\n' \
			"$NOW" "$NOW" "$NOW" "$NOW" "$NOW" |
			valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
				"$RDRIVE" "$url" > /dev/null 2> "$tmp/vg.log"
		[ $? -eq 99 ] && vg_fail="$vg_fail $url: $(head -n 5 "$tmp/vg.log")"
	done
	if [ -z "$vg_fail" ]; then ok "redis: the store under valgrind (every strategy, refusals, errors)"
	else not_ok "redis: the store under valgrind" "$vg_fail"; fi
fi

# Scripts are loaded once per session and called by SHA: no EVAL of a source so far.
stats=$(redis-cli -p "$PORT" INFO commandstats | tr -d '\r')
if printf '%s\n' "$stats" | grep -q '^cmdstat_evalsha:calls=[1-9]' && ! printf '%s\n' "$stats" | grep -q '^cmdstat_eval:'; then
	ok "redis: scripts are called by SHA (EVALSHA), never sent as EVAL while cached"
else not_ok "redis: scripts are called by SHA (EVALSHA), never sent as EVAL while cached" "$(printf '%s\n' "$stats" | grep -E 'eval|script')"; fi

# The longest names: a 128-byte job, a 64-byte prefix, a 64-byte token.
JOB=j$(printf 'x%.0s' $(seq 1 126)).
PFX=$(printf 'p%.0s' $(seq 1 62))   # + 2 bytes per strategy: strategies must not share a prefix
TOK=$(printf 't%.0s' $(seq 1 64))
long_fail=
for strat in lease stream-id script; do
	out=$(printf 'claim %s %s %s\nclaim %s %s b\nheartbeat %s %s %s\nfinish %s %s %s\ncheck %s %s\n' \
		"$JOB" "$NOW" "$TOK" "$JOB" "$NOW" "$JOB" "$NOW" "$TOK" "$JOB" "$NOW" "$TOK" "$JOB" "$NOW" |
		"$RDRIVE" "$URL?strategy=$strat&prefix=$PFX${strat:0:2}" 2>&1 | tr '\n' ' ')
	case $strat in lease) want="won 1 running 1 true true succeeded 1 " ;; *) want="won 1 lost 0 true true succeeded 1 " ;; esac
	[ "$out" = "$want" ] || long_fail="$long_fail $strat: $out;"
done
if [ -z "$long_fail" ]; then ok "redis: the longest job, prefix and token work on every strategy"
else not_ok "redis: the longest job, prefix and token work on every strategy" "$long_fail"; fi

# lease: a heartbeat pushes the lease end on; without it the lease runs out.
cat > "$tmp/lease-heartbeat.exp" <<'X'
ok
ok
won 1
ok
true
ok
true
ok
running 1
running 1
ok
expired 1
won 2
X
table_check lease-heartbeat "$URL?strategy=lease&prefix=hb" <<X
set lease_ms 2000
set attempts 2
claim sync $NOW a
sleep 1000
heartbeat sync $NOW a
sleep 1000
heartbeat sync $NOW a
sleep 1000
check sync $NOW
claim sync $NOW b
sleep 2500
check sync $NOW
claim sync $NOW b
X
