# takeover.sh — what becomes of a winner that dies or freezes mid-command.
#
#   SIGKILL: host A wins (--attempts 2 --lease_ms 6000) and its command writes
#     "start A 1", then sleeps 10 s before writing "end A".  One second in, A's
#     anarchon is SIGKILLed.  Its command must get SIGTERM (PR_SET_PDEATHSIG:
#     no command runs on without its lease) and never write "end A"; host B,
#     running the same line for the same slot again and again, is told
#     "running" while the lease lasts, then wins attempt 2, and its command
#     completes: two starts in all.
#   SIGSTOP: A wins (--lease_ms 1000); its anarchon (not its command) is
#     stopped for 3 s.  B takes the slot over meanwhile (attempt 2) and
#     completes.  On SIGCONT, A's heartbeat answers fenced: its command gets
#     SIGTERM (it traps it, writes "A got TERM" and exits 143), A's finish is
#     refused as fenced, and A exits with its command's status, 143.
#
# Each on a SQLite file, on Redis (lease) and on PostgreSQL, all at once.
#
#   cli_takeover NAME=URL...

TAKEOVER_JOB='trap '\''kill $nap 2> /dev/null; echo "$WHO got TERM" >> "$F"; exit 143'\'' TERM
echo "start $WHO $ANARCHON_ATTEMPT" >> "$F"
sleep "$NAP" & nap=$!
wait $nap
echo "end $WHO" >> "$F"'

# takeover_backup DIR ARGS...: host B runs the line until it is not told
# "not mine" (--not-mine-exit 3), 20 s at most; sets B_RC.
takeover_backup() {
	local d=$1 until=$(( $(date +%s) + 20 ))
	shift
	B_FIRST=$(date +%s%3N)
	while :; do
		WHO=B NAP=1 F=$d/log "$AN" "$@" --not-mine-exit 3 -- sh "$d/job.sh" 2>> "$d/B.err"
		B_RC=$?
		[ "$B_RC" -eq 3 ] && [ "$(date +%s)" -lt "$until" ] || break
		sleep 0.1
	done
}

# takeover_starts_ok NAME LOG: exactly "start A 1" and "start B 2", B ended, A did not.
takeover_starts_ok() {
	local starts
	starts=$(grep '^start' "$2" | tr '\n' '|')
	if [ "$starts" = "start A 1|start B 2|" ] && ! grep -q '^end A' "$2" && grep -qx 'end B' "$2"; then ok "$1"
	else not_ok "$1" "$(cat "$2")"; fi
}

takeover_sigkill() {
	local name=$1 url=$2 d=$CLI_TMP/sigkill-$1 slot pa t0 args
	mkdir -p "$d"
	printf '%s\n' "$TAKEOVER_JOB" > "$d/job.sh"
	slot=$(( $(date +%s) * 1000 ))
	# A lease long enough that B's first try falls inside it on a loaded machine.
	args=(run --verbose --store "$url" --job killed --slot "$slot" --attempts 2 --lease_ms 6000)
	t0=$(date +%s%3N)
	WHO=A NAP=10 F=$d/log "$AN" "${args[@]}" -- sh "$d/job.sh" 2> "$d/A.err" &
	pa=$!
	if ! wait_grep "$d/log" '^start A 1$' 10; then
		kill -9 "$pa" 2> /dev/null; wait "$pa"
		not_ok "cli sigkill $name: host A wins and starts its command" "$(cat "$d/A.err" "$d/log" 2> /dev/null)"
		return
	fi
	sleep 1
	kill -9 "$pa"
	wait "$pa" 2> /dev/null
	if wait_grep "$d/log" '^A got TERM$' 5; then
		ok "cli sigkill $name: A's command gets SIGTERM when its anarchon is SIGKILLed (PR_SET_PDEATHSIG)"
	else
		not_ok "cli sigkill $name: A's command gets SIGTERM when its anarchon is SIGKILLed (PR_SET_PDEATHSIG)" "$(cat "$d/log")"
	fi
	takeover_backup "$d" "${args[@]}"
	# B is told running when its first try falls inside A's lease (6 s from
	# t0, less a margin); a machine so loaded that it did not is said, not
	# judged: the takeover itself is.
	local inside=1
	[ $((B_FIRST - t0)) -lt 3000 ] || { inside=0; echo "# cli sigkill $name: B's first try came $((B_FIRST - t0)) ms after A's claim, too late to see the lease"; }
	if [ "$B_RC" -eq 0 ] && { [ "$inside" -eq 0 ] || grep -qE "^anarchon: killed at .*: running, not this host's to run$" "$d/B.err"; } &&
		grep -qE '^anarchon: killed at .*: won \(attempt 2\)' "$d/B.err"; then
		ok "cli sigkill $name: B is told running while A's lease lasts, then wins attempt 2 and exits 0"
	else
		not_ok "cli sigkill $name: B is told running while A's lease lasts, then wins attempt 2 and exits 0" \
			"B exit $B_RC" "$(tail -n 5 "$d/B.err")"
	fi
	expect_call "cli sigkill $name: check answers succeeded (B's finish)" 0 succeeded \
		check --store "$url" --job killed --slot "$slot"
	# Past the moment A's command would have written "end A".
	sleep_until $((t0 + 11500))
	takeover_starts_ok "cli sigkill $name: exactly two starts (A attempt 1, B attempt 2); B ended, \"end A\" never written" "$d/log"
}

takeover_sigstop() {
	local name=$1 url=$2 d=$CLI_TMP/sigstop-$1 slot pa t_stop rc_a args
	mkdir -p "$d"
	printf '%s\n' "$TAKEOVER_JOB" > "$d/job.sh"
	slot=$(( $(date +%s) * 1000 ))
	args=(run --verbose --store "$url" --job stopped --slot "$slot" --attempts 2 --lease_ms 1000)
	WHO=A NAP=30 F=$d/log "$AN" "${args[@]}" -- sh "$d/job.sh" 2> "$d/A.err" &
	pa=$!
	if ! wait_grep "$d/log" '^start A 1$' 10; then
		kill -9 "$pa" 2> /dev/null; wait "$pa"
		not_ok "cli sigstop $name: host A wins and starts its command" "$(cat "$d/A.err" "$d/log" 2> /dev/null)"
		return
	fi
	kill -STOP "$pa"
	t_stop=$(date +%s%3N)
	takeover_backup "$d" "${args[@]}"
	sleep_until $((t_stop + 3000))
	kill -CONT "$pa"
	wait "$pa"
	rc_a=$?
	if [ "$B_RC" -eq 0 ] && grep -qE '^anarchon: stopped at .*: won \(attempt 2\)' "$d/B.err" &&
		grep -qx 'end B' "$d/log" && ! grep -q "got TERM" <(grep -v '^A' "$d/log"); then
		ok "cli sigstop $name: while A's anarchon is stopped past its lease, B wins attempt 2 and its command completes"
	else
		not_ok "cli sigstop $name: while A's anarchon is stopped past its lease, B wins attempt 2 and its command completes" \
			"B exit $B_RC" "$(tail -n 5 "$d/B.err")" "$(cat "$d/log")"
	fi
	if grep -qx 'A got TERM' "$d/log" &&
		grep -qE "^anarchon: lost the lease of stopped at .* \((another instance holds it now|the store could not be reached)\); stopping the command with SIGTERM" "$d/A.err"; then
		ok "cli sigstop $name: on SIGCONT, A finds its lease lost (fenced, or a loaded store slower than the lease) and its command gets SIGTERM"
	else
		not_ok "cli sigstop $name: on SIGCONT, A finds its lease lost (fenced, or a loaded store slower than the lease) and its command gets SIGTERM" "$(cat "$d/A.err")" "$(cat "$d/log")"
	fi
	if [ "$rc_a" -eq 143 ] && grep -qE "^anarchon: finish of stopped at .* refused: fenced" "$d/A.err"; then
		ok "cli sigstop $name: A's finish is refused as fenced, and A exits 143, its command's status"
	else
		not_ok "cli sigstop $name: A's finish is refused as fenced, and A exits 143, its command's status" "A exit $rc_a" "$(cat "$d/A.err")"
	fi
	expect_call "cli sigstop $name: check answers succeeded (B's finish, not A's)" 0 succeeded \
		check --store "$url" --job stopped --slot "$slot"
	takeover_starts_ok "cli sigstop $name: exactly two starts (A attempt 1, B attempt 2); B ended, \"end A\" never written" "$d/log"
}

cli_takeover() {
	local kv pids=() outs=() o
	for kv in "$@"; do
		for t in sigkill sigstop; do
			o=$CLI_TMP/takeover-$t-${kv%%=*}.tap
			"takeover_$t" "${kv%%=*}" "${kv#*=}" > "$o" 2>&1 &
			pids+=($!)
			outs+=("$o")
		done
	done
	wait "${pids[@]}"
	cat "${outs[@]}"
}
