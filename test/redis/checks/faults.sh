# faults.sh — Redis restarted, frozen (SIGSTOP), a call cancelled, the script
# cache flushed.  (sourced by test/redis/run.sh)

restart_main() { redis_stop main; redis_start main "$PORT"; }

# One session across a restart: the dropped connection is reopened and the
# claim re-sent; our own claim is still recognised, others still lose.
for strat in lease stream-id script; do
	flag=$tmp/restarted-$strat
	S1=$(now_ms)
	S2=$((S1 + 1))
	{
		echo "claim sync $S1 a"
		wait_file "$flag"
		echo "claim sync $S1 a"
		echo "claim sync $S1 b"
		echo "claim sync $S2 c"
	} | "$RDRIVE" -s overlap=allow "$URL?strategy=$strat&prefix=r-$strat" > "$tmp/restart-$strat.out" 2>&1 &
	rd=$!
	wait_lines "$tmp/restart-$strat.out" 1
	restart_main
	touch "$flag"
	wait "$rd"
	case $strat in lease) other="running 1" ;; *) other="lost 0" ;; esac
	printf 'won 1\nwon 1\n%s\nwon 1\n' "$other" > "$tmp/restart-$strat.exp"
	diff_ok "redis $strat: a restart between claims is transparent, answers stay right" "$tmp/restart-$strat.exp" "$tmp/restart-$strat.out"
done

# Contention across a restart: errors are allowed while Redis is down, two
# winners for one slot never.
# contending STRAT: claims of the contention have reached Redis (its keys
# are there); rdrive's output to a file shows only when its buffer fills.
contending() { redis-cli -p "$PORT" --scan --pattern "rc-$1:*" | grep -q .; }
for strat in lease stream-id script; do
	first=$(now_ms)
	pids=()
	for p in $(seq 1 16); do
		"$RDRIVE" -s overlap=allow "$URL?strategy=$strat&prefix=rc-$strat" --contend sync "$first" 300 \
			> "$tmp/restart-contend-$strat-$p" 2>&1 &
		pids+=($!)
	done
	wait_for 30 "redis $strat: the contention's claims reach Redis before the restart" contending "$strat"
	restart_main
	for p in "${pids[@]}"; do wait "$p"; done
	report=$(cat "$tmp"/restart-contend-$strat-* | awk '$2 == "won" { w[$1]++ } END { for (s in w) if (w[s] > 1) print s, w[s], "won" }')
	wins=$(cat "$tmp"/restart-contend-$strat-* | grep -c ' won$')
	if [ -z "$report" ] && [ "$wins" -gt 0 ]; then ok "redis $strat: 16 processes across a restart, never two winners ($wins slots won)"
	else not_ok "redis $strat: 16 processes across a restart, never two winners" "$report" "won=$wins"; fi
done

# Frozen Redis: a call on an open connection gives up after timeout_ms.
flag=$tmp/frozen
{
	echo "claim sync $(now_ms) a"
	wait_file "$flag"
	echo "claim sync $(now_ms) b"
	wait_file "$flag.thawed"
	echo "claim sync $(( $(now_ms) + 10 )) c"
} | RDRIVE_TIMES=1 "$RDRIVE" -s overlap=allow "$URL?strategy=lease&prefix=fz&timeout_ms=1000" > "$tmp/frozen.out" 2> "$tmp/frozen.times" &
rd=$!
wait_lines "$tmp/frozen.out" 1
kill -STOP "$(redis_pid main)"
touch "$flag"
# Until the frozen call's answer (the check below says if none came).
wait_lines "$tmp/frozen.out" 2
kill -CONT "$(redis_pid main)"
touch "$flag.thawed"
wait "$rd"
ms=$(sed -n 2p "$tmp/frozen.times" | tr -dc 0-9)
if sed -n 2p "$tmp/frozen.out" | grep -q '^error TIMEOUT: .*1000 ms' && [ "${ms:-99999}" -lt 2500 ]; then
	ok "redis: a frozen server gives a timeout error within timeout_ms (${ms} ms for 1000)"
else not_ok "redis: a frozen server gives a timeout error within timeout_ms" "$(cat "$tmp/frozen.out" "$tmp/frozen.times")"; fi
if [ "$(sed -n 3p "$tmp/frozen.out")" = "won 1" ]; then ok "redis: after the freeze the next call reconnects and answers"
else not_ok "redis: after the freeze the next call reconnects and answers" "$(cat "$tmp/frozen.out")"; fi

# Frozen Redis at connect time: the handshake is bounded too.
kill -STOP "$(redis_pid main)"
t0=$(now_ms)
echo "claim sync 1 a" | "$RDRIVE" "$URL?strategy=lease&timeout_ms=800" > "$tmp/frozen-open.out" 2>&1
t1=$(now_ms)
kill -CONT "$(redis_pid main)"
if grep -q '^error TIMEOUT' "$tmp/frozen-open.out" && [ $((t1 - t0)) -lt 2500 ]; then
	ok "redis: connecting to a frozen server times out ($((t1 - t0)) ms for 800)"
else not_ok "redis: connecting to a frozen server times out" "$(cat "$tmp/frozen-open.out")" "$((t1 - t0)) ms"; fi

# The host cancels: the call returns CANCELED long before timeout_ms.
{
	echo "claim sync $(now_ms) a"
	wait_file "$flag.cancel"
	echo "cancel_after 300"
	echo "claim sync $(now_ms) b"
} | RDRIVE_TIMES=1 "$RDRIVE" "$URL?strategy=lease&prefix=cx&timeout_ms=20000" > "$tmp/cancel.out" 2> "$tmp/cancel.times" &
rd=$!
wait_lines "$tmp/cancel.out" 1
kill -STOP "$(redis_pid main)"
touch "$flag.cancel"
# Until the cancelled call's answer (the check below says if none came).
for i in $(seq 1 100); do [ "$(grep -c . "$tmp/cancel.out")" -ge 3 ] && break; sleep 0.1; done
kill -CONT "$(redis_pid main)"
wait "$rd"
ms=$(sed -n 3p "$tmp/cancel.times" | tr -dc 0-9)
if grep -q '^error CANCELED' "$tmp/cancel.out" && [ "${ms:-99999}" -lt 3000 ]; then ok "redis: a cancelled call returns at once (${ms} ms)"
else not_ok "redis: a cancelled call returns at once" "$(cat "$tmp/cancel.out" "$tmp/cancel.times")"; fi

# SCRIPT FLUSH under a session: NOSCRIPT is healed by EVAL.
{
	echo "claim sync 5000000000000 a"
	wait_file "$flag.flushed"
	echo "claim sync 5000000000000 a"
	echo "check sync 5000000000000"
} | "$RDRIVE" "$URL?strategy=lease&prefix=fl" > "$tmp/flush.out" 2>&1 &
rd=$!
wait_lines "$tmp/flush.out" 1
redis-cli -p "$PORT" SCRIPT FLUSH > /dev/null
touch "$flag.flushed"
wait "$rd"
printf 'won 1\nwon 1\nrunning 1\n' > "$tmp/flush.exp"
# (slot far in the future: never late)
diff_ok "redis: a flushed script cache is reloaded (NOSCRIPT)" "$tmp/flush.exp" "$tmp/flush.out"
