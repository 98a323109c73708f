# heartbeat.sh — a heartbeat never revives a lease that has ended (strategy
# lease).  (sourced by test/redis/run.sh)
#
#   direct:  win with a 1 s lease, let it run out, heartbeat -> false, the
#            run still expired and its lease_until unchanged
#   queued:  win with a 1 s lease, freeze Redis (SIGSTOP), send a heartbeat
#            that gives up after timeout_ms, let the lease run out, thaw
#            Redis (SIGCONT): the queued heartbeat runs, and must not renew
#            (lease_until unchanged, check expired), and a takeover wins

# hb_lease_until PREFIX SLOT: the run's lease_until as Redis holds it.
hb_lease_until() { redis-cli -p "$PORT" HGET "$1:{sync}:run:$2" lease_until; }

# hb_evalsha_calls: how many EVALSHA the server has run (INFO commandstats).
hb_evalsha_calls() {
	redis-cli -p "$PORT" INFO commandstats | tr -d '\r' |
		sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p'
}

# The direct case.
S=$(now_slot)
{
	echo "claim sync $S a"
	# Scenario: the lease (1000 ms) must run out before the heartbeat.
	echo "sleep 1300"
	echo "heartbeat sync $S a"
	echo "check sync $S"
} | "$RDRIVE" -s lease_ms=1000 -s attempts=2 "$URL?strategy=lease&prefix=hbd" > "$tmp/hb-direct.out" 2>&1
printf 'won 1\nok\nfalse\nexpired 1\n' > "$tmp/hb-direct.exp"
diff_ok "redis lease: a heartbeat after its lease ended is refused (false) and the run stays expired" \
	"$tmp/hb-direct.exp" "$tmp/hb-direct.out"

# The queued case.  The client claims and heartbeats once (so the heartbeat
# script's SHA is known and the frozen call is one EVALSHA), then, on the
# cue, heartbeats again against the frozen server and gives up after 300 ms.
S=$(now_slot)
cue=$tmp/hb-queued.cue
{
	echo "claim sync $S a"
	echo "heartbeat sync $S a"
	wait_file "$cue"
	echo "heartbeat sync $S a"
} | "$RDRIVE" -s lease_ms=1000 -s attempts=2 "$URL?strategy=lease&prefix=hbq&timeout_ms=300" \
	> "$tmp/hb-queued.out" 2>&1 &
rd=$!
wait_lines "$tmp/hb-queued.out" 2
before=$(hb_lease_until hbq "$S")
calls=$(hb_evalsha_calls)
kill -STOP "$(redis_pid main)"
touch "$cue"
wait "$rd"
# Scenario: the lease (1000 ms from the last renewal) runs out while Redis is
# frozen with the heartbeat in its socket.
sleep 1.3
kill -CONT "$(redis_pid main)"
# The queued heartbeat is the one EVALSHA the frozen server still owes: wait
# (at most 5 s) until it has run, so that what follows judges its effect.
ran=no
for _ in $(seq 1 100); do
	[ "$(hb_evalsha_calls)" -gt "$calls" ] && { ran=yes; break; }
	sleep 0.05
done
after=$(hb_lease_until hbq "$S")
if sed -n 3p "$tmp/hb-queued.out" | grep -q '^error TIMEOUT' && [ "$ran" = yes ]; then
	step "redis lease: the heartbeat gave up ($(sed -n 3p "$tmp/hb-queued.out")) and ran after SIGCONT"
	if [ -n "$before" ] && [ "$before" = "$after" ]; then
		ok "redis lease: a heartbeat queued in a frozen Redis does not renew the lease once it ended (lease_until $after)"
	else not_ok "redis lease: a heartbeat queued in a frozen Redis does not renew the lease once it ended" \
		"lease_until before the freeze $before, after $after"; fi
else
	not_ok "redis lease: a heartbeat queued in a frozen Redis does not renew the lease once it ended" \
		"the scenario did not happen: heartbeat answer '$(sed -n 3p "$tmp/hb-queued.out")', ran after SIGCONT: $ran"
fi
printf 'expired 1\nwon 2\n' > "$tmp/hb-takeover.exp"
printf 'check sync %s\nclaim sync %s b\n' "$S" "$S" |
	"$RDRIVE" -s lease_ms=1000 -s attempts=2 "$URL?strategy=lease&prefix=hbq" > "$tmp/hb-takeover.out" 2>&1
diff_ok "redis lease: after the queued heartbeat the run is expired and a takeover wins attempt 2" \
	"$tmp/hb-takeover.exp" "$tmp/hb-takeover.out"
