# takeover.sh — what becomes of a winner that dies or freezes mid-command.
#
#   SIGKILL: host A wins (--attempts 2 --lease_ms 6000) and its command writes
#     "start A 1", then sleeps 10 s before writing "end A".  One second in, A's
#     anarchon is SIGKILLed.  Its command must get SIGTERM (from the watchdog
#     anarchon left: no command runs on without its lease) and never write "end A"; host B,
#     running the same line for the same slot again and again, is told
#     "running" while the lease lasts, then wins attempt 2, and its command
#     completes: two starts in all.
#   SIGSTOP: A wins (--lease_ms 1000); its anarchon (not its command) is
#     stopped for 3 s.  B takes the slot over meanwhile (attempt 2) and
#     completes.  A's watchdog has stopped its command before the lease could
#     end (it traps SIGTERM, writes "A got TERM" and exits 143); on SIGCONT A
#     says the lease was lost, A's finish is
#     refused as fenced, and A exits with its command's status, 143.
#
# Each on a SQLite file, on Redis (lease) and on PostgreSQL, all at once.
#
#   cli_takeover NAME=URL...

TAKEOVER_JOB='trap '\''kill $nap 2> /dev/null; echo "$WHO got TERM" >> "$F"; exit 143'\'' TERM
echo "start $WHO $ANARCHON_ATTEMPT" >> "$F"
# The job: it works NAP seconds, or until a signal ends it.
sleep "$NAP" & nap=$!
wait $nap
echo "end $WHO" >> "$F"'

# takeover_backup DIR ARGS...: host B runs the line until it is not told
# "not mine" (--not-mine-exit 3) or "try again" (75), 20 s at most; sets B_RC.
takeover_backup() {
	local d=$1 until=$(( $(date +%s) + 20 ))
	shift
	B_FIRST=$(date +%s%3N)
	while :; do
		# B's own lease is long: its one-second command must not depend on
		# how fast a loaded store renews (A's lease is what is under test).
		WHO=B NAP=1 F=$d/log "$AN" "$@" --lease_ms 15000 --not-mine-exit 3 -- sh "$d/job.sh" 2>> "$d/B.err"
		B_RC=$?
		# 3: not this host's yet; 75: the store is busy for B too (a SQLite
		# file whose lock the stopped A holds until it is continued).
		{ [ "$B_RC" -eq 3 ] || [ "$B_RC" -eq 75 ]; } && [ "$(date +%s)" -lt "$until" ] || break
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
	# The scenario: A's command has run a moment when its anarchon is SIGKILLed.
	sleep 1
	kill -9 "$pa"
	wait "$pa" 2> /dev/null
	if wait_grep "$d/log" '^A got TERM$' 5; then
		ok "cli sigkill $name: A's command gets SIGTERM when its anarchon is SIGKILLed (its watchdog)"
	else
		not_ok "cli sigkill $name: A's command gets SIGTERM when its anarchon is SIGKILLed (its watchdog)" "$(cat "$d/log")"
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
	EXPECT_TEMPFAIL_TRIES=3 expect_call "cli sigkill $name: check answers succeeded (B's finish)" 0 succeeded \
		check --store "$url" --job killed --slot "$slot"
	# Past the moment A's command would have written "end A".
	sleep_until $((t0 + 11500))
	takeover_starts_ok "cli sigkill $name: exactly two starts (A attempt 1, B attempt 2); B ended, \"end A\" never written" "$d/log"
}

# takeover_sigstop NAME URL: the scenario; on SQLite, once more (three tries
# at most) when A was frozen inside a transaction: it then holds the file's
# lock, nobody can take over until it is continued, and that is SQLite's
# single writer, not what is under test.
takeover_sigstop() {
	local try
	for try in 1 2 3; do
		takeover_sigstop_once "$@" "$try" > "$CLI_TMP/sigstop-$1.try$try" 2>&1
		if [[ $2 == sqlite://* ]] && grep -q "stayed locked by another writer" "$CLI_TMP/sigstop-$1-$try/B.err" 2> /dev/null &&
			[ "$try" -lt 3 ]; then
			echo "# cli sigstop $1: try $try froze A inside a transaction (the file's lock held); again"
			continue
		fi
		# A loaded machine can starve A's renewals before it is frozen: A
		# then stops its command and ends by itself (as it must), and the
		# freeze under test never happened.
		if grep -q "^# A ended before it could be stopped" "$CLI_TMP/sigstop-$1.try$try" && [ "$try" -lt 3 ]; then
			echo "# cli sigstop $1: try $try: A gave up its lease before it could be frozen ($(grep -m1 'lost the lease' "$CLI_TMP/sigstop-$1-$try/A.err" | sed 's/.*(\(no renewal[^;]*\)).*/\1/')); again"
			continue
		fi
		cat "$CLI_TMP/sigstop-$1.try$try"
		return
	done
}

takeover_sigstop_once() {
	local name=$1 url=$2 d=$CLI_TMP/sigstop-$1-$3 slot pa t_stop rc_a args
	[[ $url == sqlite://* ]] && url=${url%.db}-$3.db
	mkdir -p "$d"
	printf '%s\n' "$TAKEOVER_JOB" > "$d/job.sh"
	slot=$(( $(date +%s) * 1000 ))
	args=(run --verbose --store "$url" --job stopped --slot "$slot" --attempts 2 --lease_ms 1000)
	WHO=A NAP=30 F=$d/log "$AN" "${args[@]}" -- sh "$d/job.sh" 2> "$d/A.err" &
	pa=$!
	if ! wait_grep "$d/log" '^start A 1$' 10; then
		kill -9 "$pa" 2> /dev/null; wait "$pa"
		# Starved sooner still: A gave up its 1 s lease (as it must) before
		# its command had written its first line.
		if [ "$3" -lt 3 ] && grep -q "^anarchon: lost the lease of stopped" "$d/A.err"; then
			echo "# A ended before it could be stopped"
			return
		fi
		not_ok "cli sigstop $name: host A wins and starts its command" "$(cat "$d/A.err" "$d/log" 2> /dev/null)"
		return
	fi
	if ! kill -STOP "$pa" 2> /dev/null; then
		wait "$pa"
		if [ "$3" -lt 3 ]; then echo "# A ended before it could be stopped"
		else not_ok "cli sigstop $name: host A is frozen while it holds its lease (three tries)" "$(cat "$d/A.err")"; fi
		return
	fi
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
		grep -qE "^anarchon: lost the lease of stopped at .* \((another instance holds it now|no renewal confirmed for .*ms.*)\); stopping the command's process group with SIGTERM" "$d/A.err"; then
		ok "cli sigstop $name: on SIGCONT, A finds its lease lost (fenced, or a loaded store slower than the lease) and its command gets SIGTERM"
	else
		not_ok "cli sigstop $name: on SIGCONT, A finds its lease lost (fenced, or a loaded store slower than the lease) and its command gets SIGTERM" "$(cat "$d/A.err")" "$(cat "$d/log")"
	fi
	if [ "$rc_a" -eq 143 ] && grep -qE "^anarchon: finish of stopped at .* refused: fenced" "$d/A.err"; then
		ok "cli sigstop $name: A's finish is refused as fenced, and A exits 143, its command's status"
	else
		not_ok "cli sigstop $name: A's finish is refused as fenced, and A exits 143, its command's status" "A exit $rc_a" "$(cat "$d/A.err")"
	fi
	EXPECT_TEMPFAIL_TRIES=3 expect_call "cli sigstop $name: check answers succeeded (B's finish, not A's)" 0 succeeded \
		check --store "$url" --job stopped --slot "$slot"
	takeover_starts_ok "cli sigstop $name: exactly two starts (A attempt 1, B attempt 2); B ended, \"end A\" never written" "$d/log"
}

cli_takeover() {
	local kv pids=() outs=() o url
	for kv in "$@"; do
		for t in sigkill sigstop; do
			o=$CLI_TMP/takeover-$t-${kv%%=*}.tap
			# A SQLite file of its own per scenario: a host frozen inside a
			# transaction holds its file's lock, and must not hold up the other.
			url=${kv#*=}
			[[ $url == sqlite://* ]] && url=${url%.db}-$t.db
			"takeover_$t" "${kv%%=*}" "$url" > "$o" 2>&1 &
			pids+=($!)
			outs+=("$o")
		done
	done
	wait "${pids[@]}"
	cat "${outs[@]}"
}
