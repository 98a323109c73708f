# exits.sh — what the command answers: exit statuses, signals, the command's
# environment, the verbs' outputs, `slots` across daylight saving.
#
#   run:  the command's own status (exit 7 -> 7, killed by SIGTERM -> 143);
#         not this host's -> 0, or --not-mine-exit N; a store that cannot be
#         reached (a closed port of each kind, a Redis that was stopped, a
#         frozen one) -> 75 with one line and the command never run; a
#         command that does not exist -> 127, a file that is not executable
#         -> 126, nothing claimed; SIGTERM, SIGINT and SIGHUP reach the
#         command; ANARCHON_JOB, _SLOT, _TOKEN, _ATTEMPT in its environment
#   claim, heartbeat, finish, check, token, missed: their lines and statuses,
#         on SQLite, Redis (lease) and PostgreSQL
#   slots: CRON_TZ=Europe/Berlin schedules across both of a year's changes,
#         against slots_oracle.py (Python's zoneinfo)
#
#   cli_exits REDIS_LEASE_URL [POSTGRESQL_URL]

# exits_slot: the current whole second, in ms.
exits_slot() { echo $(( $(date +%s) * 1000 )); }

# ex_run NAME WANT_RC MARKER ARGS...: `anarchon run ARGS` exits WANT_RC with
# stdout empty.  The command (ex_cmd) touches $EX_MARK, a file of its own:
# MARKER "absent": it must not have run, and stderr is exactly one
# "anarchon: " line; "ran": it ran; "silent": it did not run, stderr empty.
ex_run() {
	local name=$1 want=$2 marker=$3 d=$CLI_TMP/exits why=()
	shift 3
	EX_N=$((${EX_N:-0} + 1))
	export EX_MARK=$d/ran-$EX_N
	an_call "$d/run-$EX_N.out" "$d/run-$EX_N.err" run "$@"
	[ "$RC" -eq "$want" ] || why+=("exit $RC, want $want")
	[ -s "$d/run-$EX_N.out" ] && why+=("stdout: $(head -c 200 "$d/run-$EX_N.out")")
	case $marker in
		absent)
			[ -e "$EX_MARK" ] && why+=("the command ran")
			one_error_line "$d/run-$EX_N.err" || why+=("stderr is not one anarchon: line: $(head -c 400 "$d/run-$EX_N.err")") ;;
		ran) [ -e "$EX_MARK" ] || why+=("the command did not run: $(head -c 300 "$d/run-$EX_N.err")") ;;
		silent)
			[ -e "$EX_MARK" ] && why+=("the command ran")
			[ -s "$d/run-$EX_N.err" ] && why+=("stderr: $(head -c 300 "$d/run-$EX_N.err")") ;;
	esac
	if [ ${#why[@]} -eq 0 ]; then ok "cli exit: $name: $want"; else not_ok "cli exit: $name: $want" "${why[@]}"; fi
}

# ex_cmd [SH]: the words of a command that touches $EX_MARK, then runs SH.
ex_cmd() { printf '%s\n' sh -c "touch \"\$EX_MARK\"; ${1:-true}"; }

exits_statuses() {
	local S=sqlite://$CLI_TMP/exits/runs.db slot closed c gone_port frozen_port u t0 took
	slot=$(exits_slot)
	mapfile -t c < <(ex_cmd 'exit 7')
	ex_run "the command's own status (exit 7)" 7 ran --store "$S" --job seven --slot "$slot" -- "${c[@]}"
	expect_call "cli exit: ... check answers failed" 0 failed check --store "$S" --job seven --slot "$slot"
	# The command: SIGTERM to itself; its sleep is never reached.
	mapfile -t c < <(ex_cmd 'kill -TERM $$; sleep 5')
	ex_run "a command ended by SIGTERM (128 + 15)" 143 ran --store "$S" --job term --slot "$slot" -- "${c[@]}"
	mapfile -t c < <(ex_cmd)
	ex_run "a command that exits 0" 0 ran --store "$S" --job zero --slot "$slot" -- "${c[@]}"
	expect_call "cli exit: ... check answers succeeded" 0 succeeded check --store "$S" --job zero --slot "$slot"

	# Not this host's: another token holds the slot.
	"$AN" claim --store "$S" --job taken --slot "$slot" > /dev/null 2>&1 ||
		not_ok "cli exit: another host's claim of the slot wins" "exit $?"
	mapfile -t c < <(ex_cmd)
	ex_run "not this host's (default)" 0 silent --store "$S" --job taken --slot "$slot" -- "${c[@]}"
	mapfile -t c < <(ex_cmd)
	ex_run "not this host's with --not-mine-exit 9" 9 silent --store "$S" --job taken --slot "$slot" --not-mine-exit 9 -- "${c[@]}"

	# Stores that cannot be reached: 75, one line, the command never run.
	closed=$(free_port)
	for u in "redis://127.0.0.1:$closed" "nats://127.0.0.1:$closed" "amqp://127.0.0.1:$closed" \
		"postgresql://postgres@127.0.0.1:$closed/postgres"; do
		mapfile -t c < <(ex_cmd)
		ex_run "unreachable ${u%%:*} (closed port)" 75 absent --store "$u" --job unreach --slot "$slot" -- "${c[@]}"
	done
	gone_port=$(free_port)
	if redis_start gone "$gone_port"; then
		"$AN" claim --store "redis://127.0.0.1:$gone_port" --job gone --slot "$(exits_slot)" > /dev/null 2>&1 ||
			not_ok "cli exit: a claim on a second Redis wins" "exit $?"
		redis_stop gone
		mapfile -t c < <(ex_cmd)
		ex_run "unreachable redis (stopped)" 75 absent --store "redis://127.0.0.1:$gone_port" --job gone2 \
			--slot "$slot" -- "${c[@]}"
	else
		not_ok "cli exit: start a second redis-server"
	fi
	frozen_port=$(free_port)
	if redis_start frozen "$frozen_port"; then
		kill -STOP "$(redis_pid frozen)"
		mapfile -t c < <(ex_cmd)
		t0=$(date +%s%3N)
		ex_run "unreachable redis (frozen, timeout_ms=500)" 75 absent \
			--store "redis://127.0.0.1:$frozen_port?timeout_ms=500" --job frozen --slot "$slot" -- "${c[@]}"
		took=$(( $(date +%s%3N) - t0 ))
		kill -CONT "$(redis_pid frozen)"
		redis_stop frozen
		# A bound against a hang, not a speed: about 0.6 s on a quiet machine,
		# and 6.1 s was seen with two test runs sharing two cores.
		if [ "$took" -lt 15000 ]; then ok "cli exit: ... within 15 s, not hanging on the frozen server (${took} ms)"
		else not_ok "cli exit: ... within 15 s, not hanging on the frozen server" "took $took ms"; fi
	else
		not_ok "cli exit: start a third redis-server"
	fi

	# The command is looked up before anything is claimed.
	printf '#!/bin/sh\ntouch "$EX_MARK"\n' > "$CLI_TMP/exits/notexec"
	chmod 644 "$CLI_TMP/exits/notexec"
	ex_run "a command that does not exist" 127 absent --store "$S" --job nocmd --slot "$slot" -- "$CLI_TMP/exits/no-such-command"
	expect_call "cli exit: ... nothing claimed (check answers none)" 0 none check --store "$S" --job nocmd --slot "$slot"
	ex_run "a command not on PATH" 127 absent --store "$S" --job nopath --slot "$slot" -- no-such-command-anarchon
	expect_call "cli exit: ... nothing claimed (check answers none)" 0 none check --store "$S" --job nopath --slot "$slot"
	ex_run "not executable" 126 absent --store "$S" --job noexec --slot "$slot" -- "$CLI_TMP/exits/notexec"
	expect_call "cli exit: ... nothing claimed (check answers none)" 0 none check --store "$S" --job noexec --slot "$slot"
	ex_run "a folder" 126 absent --store "$S" --job nodir --slot "$slot" -- "$CLI_TMP/exits"
	expect_call "cli exit: ... nothing claimed (check answers none)" 0 none check --store "$S" --job nodir --slot "$slot"
}

# Signals sent to anarchon reach the command, which traps them.
exits_signals() {
	local S=sqlite://$CLI_TMP/exits/runs.db slot sig d=$CLI_TMP/exits pid rc
	slot=$(exits_slot)
	cat > "$d/traps.sh" <<-'EOF'
		for s in TERM INT HUP; do trap "kill \$nap 2> /dev/null; echo got $s >> \"\$F\"; exit 3" $s; done
		echo ready >> "$F"
		# The command under test: it sleeps until a signal ends it.
		sleep 30 & nap=$!
		wait $nap
		echo "no signal" >> "$F"
	EOF
	for sig in TERM INT HUP; do
		rm -f "$d/sig-$sig"
		F=$d/sig-$sig "$AN" run --store "$S" --job "sig-$sig" --slot "$slot" -- sh "$d/traps.sh" 2> "$d/sig-$sig.err" &
		pid=$!
		if ! wait_grep "$d/sig-$sig" '^ready$' 10; then
			kill -9 "$pid" 2> /dev/null; wait "$pid"
			not_ok "cli signal: SIG$sig sent to anarchon reaches the command" "the command did not start: $(cat "$d/sig-$sig.err")"
			continue
		fi
		kill "-$sig" "$pid"
		wait "$pid"
		rc=$?
		if [ "$rc" -eq 3 ] && [ "$(cat "$d/sig-$sig")" = "ready
got $sig" ]; then
			ok "cli signal: SIG$sig sent to anarchon reaches the command (it trapped it; anarchon exits with its status 3)"
		else
			not_ok "cli signal: SIG$sig sent to anarchon reaches the command" "exit $rc" "$(cat "$d/sig-$sig" "$d/sig-$sig.err")"
		fi
	done
}

# The command's environment: the slot as given (RFC 3339 with an offset), a fresh token.
exits_environment() {
	local S=sqlite://$CLI_TMP/exits/runs.db sec given d=$CLI_TMP/exits
	sec=$(date +%s)
	given=$(TZ=Etc/GMT-1 date -d "@$sec" +%Y-%m-%dT%H:%M:%S+01:00)
	"$AN" run --store "$S" --job env.job --slot "$given" -- sh -c "env | grep -E '^ANARCHON_(JOB|SLOT|TOKEN|ATTEMPT)=' | sort > '$d/env'" 2> "$d/env.err"
	if [ "$(grep -c . "$d/env" 2> /dev/null)" = 4 ] &&
		grep -qx "ANARCHON_JOB=env.job" "$d/env" && grep -qx "ANARCHON_SLOT=$((sec * 1000))" "$d/env" &&
		grep -qxE "ANARCHON_TOKEN=[0-9a-f]{32}" "$d/env" && grep -qx "ANARCHON_ATTEMPT=1" "$d/env"; then
		ok "cli environment: ANARCHON_JOB, ANARCHON_SLOT (--slot $given in ms), ANARCHON_TOKEN (32 hex digits), ANARCHON_ATTEMPT=1"
	else
		not_ok "cli environment: ANARCHON_JOB, ANARCHON_SLOT, ANARCHON_TOKEN, ANARCHON_ATTEMPT" \
			"$(cat "$d/env" "$d/env.err" 2> /dev/null)" "want slot $((sec * 1000))"
	fi
	"$AN" run --store "$S" --job env.job2 --schedule '* * * * * *' -- sh -c "echo \$ANARCHON_SLOT > '$d/env2'" 2> "$d/env2.err"
	sec=$(cat "$d/env2" 2> /dev/null)
	if [ -n "$sec" ] && [ $((sec % 1000)) -eq 0 ] && [ $(( $(date +%s%3N) - sec )) -ge 0 ] && [ $(( $(date +%s%3N) - sec )) -lt 5000 ]; then
		ok "cli environment: with --schedule '* * * * * *', ANARCHON_SLOT is the second that has begun"
	else
		not_ok "cli environment: with --schedule '* * * * * *', ANARCHON_SLOT is the second that has begun" \
			"slot '$sec', now $(date +%s%3N)" "$(cat "$d/env2.err")"
	fi
}

# The verbs one step at a time, as a script calls them, on one store.
exits_verbs() {
	local kind=$1 S=$2 slot late t o e tok name
	slot=$(exits_slot)
	late=$((slot - 120000))
	o=$CLI_TMP/exits/verbs-$kind.out e=$o.err
	name="cli verbs $kind"
	t=$("$AN" token)
	if [[ $t =~ ^[0-9a-f]{32}$ ]] && [ "$("$AN" token)" != "$t" ]; then ok "$name: token prints a fresh token of 32 hex digits"
	else not_ok "$name: token prints a fresh token of 32 hex digits" "$t"; fi
	expect_call "$name: claim prints won, slot, token and attempt; exit 0" 0 "won	$slot	$t	1" \
		claim --store "$S" --job verbs --slot "$slot" --token "$t"
	an_call "$o" "$e" claim --store "$S" --job verbs --slot "$slot"
	tok=$(cut -f3 "$o")
	if [ "$RC" -eq 1 ] && [[ $(cat "$o") =~ ^running$'\t'$slot$'\t'[0-9a-f]{32}$'\t'1$ ]] && [ "$tok" != "$t" ] && [ ! -s "$e" ]; then
		ok "$name: a rival's claim (a fresh token) prints running; exit 1"
	else
		not_ok "$name: a rival's claim (a fresh token) prints running; exit 1" "exit $RC: $(cat "$o" "$e")"
	fi
	expect_call "$name: ... the rival's again, with --not-mine-exit 5: running, exit 5" 5 "running	$slot	$tok	1" \
		claim --store "$S" --job verbs --slot "$slot" --token "$tok" --not-mine-exit 5
	expect_call "$name: our own claim sent again is won" 0 "won	$slot	$t	1" claim --store "$S" --job verbs --slot "$slot" --token "$t"
	expect_call "$name: heartbeat by the owner: owned, exit 0" 0 owned heartbeat --store "$S" --job verbs --slot "$slot" --token "$t"
	expect_call "$name: heartbeat by another token: fenced, exit 1" 1 fenced heartbeat --store "$S" --job verbs --slot "$slot" --token "$tok"
	expect_call "$name: check: running" 0 running check --store "$S" --job verbs --slot "$slot"
	expect_call "$name: finish by another token: fenced, exit 1" 1 fenced finish --store "$S" --job verbs --slot "$slot" --token "$tok"
	expect_call "$name: finish by the owner: finished, exit 0" 0 finished finish --store "$S" --job verbs --slot "$slot" --token "$t"
	expect_call "$name: check: succeeded" 0 succeeded check --store "$S" --job verbs --slot "$slot"
	expect_call "$name: the same finish again: finished" 0 finished finish --store "$S" --job verbs --slot "$slot" --token "$t"
	expect_call "$name: finish again as failed: fenced, exit 1" 1 fenced finish --store "$S" --job verbs --slot "$slot" --token "$t" --status failed
	expect_call "$name: heartbeat after finish: fenced, exit 1" 1 fenced heartbeat --store "$S" --job verbs --slot "$slot" --token "$t"
	expect_call "$name: a claim after finish: done, exit 1" 1 "done	$slot	$tok	1" claim --store "$S" --job verbs --slot "$slot" --token "$tok"
	expect_call "$name: a claim more than max_late_ms after its slot: late, exit 1" 1 "late	$late	$t	0" \
		claim --store "$S" --job verbs --slot "$late" --token "$t"
	expect_call "$name: check of a slot nobody claimed: none" 0 none check --store "$S" --job verbs --slot $((slot + 1000))
	"$AN" claim --store "$S" --job verbs-failed --slot "$slot" --token "$t" > /dev/null
	expect_call "$name: finish --status failed by the owner: finished, exit 0" 0 finished \
		finish --store "$S" --job verbs-failed --slot "$slot" --token "$t" --status failed
	expect_call "$name: check: failed" 0 failed check --store "$S" --job verbs-failed --slot "$slot"
	# A lease that ran out: expired; a rival's claim with no attempt left marks it interrupted.
	# A slot of now: on a loaded machine the steps above can take longer than max_late_ms.
	slot=$(exits_slot)
	expect_call "$name: claim with --lease_ms 1000: won" 0 "won	$slot	$t	1" \
		claim --store "$S" --job verbs-exp --slot "$slot" --token "$t" --lease_ms 1000
	expect_call "$name: claim with --lease_ms 1000 --attempts 2: won" 0 "won	$slot	$t	1" \
		claim --store "$S" --job verbs-att --slot "$slot" --token "$t" --lease_ms 1000 --attempts 2
	# The scenario: the 1 s lease runs out.
	sleep 1.3
	expect_call "$name: check after the lease: expired" 0 expired check --store "$S" --job verbs-exp --slot "$slot"
	expect_call "$name: a rival's claim after the lease, no attempt left: done, exit 1" 1 "done	$slot	$tok	1" \
		claim --store "$S" --job verbs-exp --slot "$slot" --token "$tok"
	expect_call "$name: check: interrupted" 0 interrupted check --store "$S" --job verbs-exp --slot "$slot"
	expect_call "$name: with --attempts 2, a rival's claim after the lease takes over: won, attempt 2" 0 "won	$slot	$tok	2" \
		claim --store "$S" --job verbs-att --slot "$slot" --token "$tok" --lease_ms 1000 --attempts 2
	expect_call "$name: ... and the first owner's heartbeat: fenced" 1 fenced \
		heartbeat --store "$S" --job verbs-att --slot "$slot" --token "$t"
}

exits_missed() {
	local S=sqlite://$CLI_TMP/exits/runs.db n
	n=$(date +%s)
	"$AN" claim --store "$S" --job missed --slot $(( (n - 5) * 1000 )) --overlap allow > /dev/null
	"$AN" claim --store "$S" --job missed --slot $(( (n - 3) * 1000 )) --overlap allow > /dev/null
	expect_call "cli missed: the slots nobody claimed, older than max_late_ms" 0 \
		"$(( (n - 6) * 1000 ))	$(date -u -d "@$((n - 6))" +%Y-%m-%dT%H:%M:%SZ)
$(( (n - 4) * 1000 ))	$(date -u -d "@$((n - 4))" +%Y-%m-%dT%H:%M:%SZ)" \
		missed --store "$S" --job missed --schedule '* * * * * *' --from $(( (n - 6) * 1000 )) --to $(( (n - 2) * 1000 )) --max_late_ms 1000
}

exits_slots() {
	local out=$CLI_TMP/exits/slots
	if /usr/bin/python3 "$REPO_ROOT/$here/slots_oracle.py" "$AN" > "$out" 2>&1; then
		cat "$out"
	else
		cat "$out"
		grep -q '^not ok' "$out" || not_ok "cli slots: slots_oracle.py ran" "$(tail -n 5 "$out")"
	fi
}

cli_exits() {
	mkdir -p "$CLI_TMP/exits"
	exits_statuses
	exits_signals
	exits_environment
	exits_verbs sqlite "sqlite://$CLI_TMP/exits/verbs.db"
	exits_verbs redis-lease "$1"
	[ -z "${2:-}" ] || exits_verbs postgresql "$2"
	exits_missed
	exits_slots
}
