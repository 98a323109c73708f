# first_use.sh — what a newcomer meets first, on SQLite stores (no server):
#
#   --slot now     two hosts 1.1 s apart share one run, as with --now
#   --slot ahead   the wait is said on stderr, with the slot in UTC and how
#                  long from now, without --verbose
#   permissions    a store file the user cannot write (read-only file, a
#                  directory it cannot write, a file it cannot create):
#                  exit 77, naming the file and what is missing
#   cannot start   a command whose #! interpreter is missing exits 127 and
#                  leaves the slot to the fleet: another host wins it and
#                  runs; and when the interpreter goes away after the check
#                  (during the wait for the slot), the winner gives its lease
#                  back, and a host with --attempts 2 takes the slot over
#   durations      core/duration.c's table test; the messages that name a
#                  duration of a setting or option say it in words, then
#                  the exact milliseconds
#   hints          a hint names the flag the user types (--max-late-ms,
#                  --busy-timeout-ms), not the setting as SQL spells it
#   help           each verb's --help lists exactly the options it takes
#                  (probed: "does not take" or not), every option of the
#                  man page is some verb's, and doc/cli.md's table of verbs
#                  has every verb
#
#   cli_first_use
cli_first_use() {
	local d=$CLI_TMP/first-use out rc
	rm -rf "$d" && mkdir -p "$d"

	# A host waits for a slot two or three seconds ahead, while the other
	# checks run.  Its wait is said at once, not only under --verbose; and
	# the interpreter of its command's #! line goes away once it has been
	# checked, so that the exec fails after the win (a deployment in
	# progress): nothing ran, so the run's lease is given back at once, and a
	# host with attempts left takes the slot over (collected at the end).
	local slot nslot iso apid pid
	cp /bin/sh "$d/interp"
	printf '#!%s/interp\necho ran > "$F"\n' "$d" > "$d/race.sh"
	chmod 755 "$d/race.sh"
	slot=$(( ($(date +%s) + 3) * 1000 ))
	iso=$(date -u -d "@$(( slot / 1000 ))" +%Y-%m-%dT%H:%M:%SZ)
	F=$d/race.a "$AN" run --store "sqlite://$d/race.db" --job race --slot "$slot" --attempts 2 -- "$d/race.sh" \
		> "$d/race.a.log" 2>&1 &
	apid=$!
	if wait_grep "$d/race.a.log" "waiting" 2; then
		rm -f "$d/interp"
		out=$(cat "$d/race.a.log")
		if [ "$(wc -l < "$d/race.a.log")" -eq 1 ] && [[ $out == *"$iso"* ]] && [[ $out =~ \(in\ [0-9]+\ s ]]; then
			ok "cli first use: a slot ahead: one line says the wait, the slot in UTC and how long"
		else
			not_ok "cli first use: a slot ahead: one line says the wait, the slot in UTC and how long" \
				"want $iso and (in N s)" "$out"
		fi
	else
		rm -f "$d/interp"
		not_ok "cli first use: a slot ahead: one line says the wait, the slot in UTC and how long" \
			"nothing said within 2 s" "$(cat "$d/race.a.log")"
	fi

	# --slot now: "this run, once across the fleet".  The second host starts
	# 1.1 s after the first (the sleep is the scenario: a second slot apart).
	local i
	for i in 1 2; do
		F=$d/slotnow.out "$AN" run --store "sqlite://$d/slotnow.db" --job slotnow --slot now -- \
			sh -c 'echo ran >> "$F"' > "$d/slotnow.$i.log" 2>&1
		echo $? > "$d/slotnow.$i.rc"
		[ "$i" = 1 ] && sleep 1.1 # the scenario: the second run a second later
	done
	out=$(cat "$d/slotnow.out" 2> /dev/null | wc -l)
	if [ "$out" -eq 1 ] && [ "$(cat "$d/slotnow.1.rc" "$d/slotnow.2.rc" | tr '\n' ' ')" = "0 0 " ]; then
		ok "cli first use: --slot now on two hosts 1.1 s apart: the command ran once"
	else
		not_ok "cli first use: --slot now on two hosts 1.1 s apart: the command ran once" \
			"ran $out times; exits $(cat "$d"/slotnow.*.rc | tr '\n' ' ')" "$(cat "$d"/slotnow.*.log)"
	fi

	# Permissions: as root they are not checked, so the command runs as nobody.
	if [ "$(id -u)" -ne 0 ] || ! command -v setpriv > /dev/null; then
		not_ok "cli first use: a store file nobody may write" "needs root and setpriv to run as nobody"
	else
		local p=$d/perm
		mkdir -p "$p/rofile" "$p/rodir" "$p/nodir"
		chmod 755 "$d" "$p" "$p/rofile" "$p/rodir" "$p/nodir"
		chown nobody "$p/rofile"
		touch "$p/rofile/runs.db" "$p/rodir/runs.db"
		chmod 0444 "$p/rofile/runs.db"
		chown nobody "$p/rodir/runs.db"
		local what file want
		for what in "rofile/runs.db|the file is mode 0444, owned by root" \
			"rodir/runs.db|directory $p/rodir is mode 0755, owned by root" \
			"nodir/runs.db|directory $p/nodir is mode 0755, owned by root"; do
			file=$p/${what%%|*} want=${what#*|}
			out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups \
				"$AN" run --store "sqlite://$file" --job perm --now -- true 2>&1)
			rc=$?
			if [ "$rc" -eq 77 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && [[ $out == *"$file"* ]] &&
				[[ $out == *"permission denied"* ]] && [[ $out == *"$want"* ]]; then
				ok "cli first use: ${what%%|*} not writable by the user: exit 77, the file and what is missing named"
			else
				not_ok "cli first use: ${what%%|*} not writable by the user: exit 77, the file and what is missing named" \
					"exit $rc (want 77)" "want: $file, permission denied, $want" "got: $out"
			fi
		done
	fi

	# A command that cannot start: its #! names an interpreter that is not there.
	printf '#!%s/no/such/interpreter\necho bad\n' "$d" > "$d/bad.sh"
	chmod 755 "$d/bad.sh"
	nslot=$(( $(date +%s) * 1000 ))
	out=$("$AN" run --store "sqlite://$d/nostart.db" --job nostart --slot "$nslot" -- "$d/bad.sh" 2>&1)
	rc=$?
	if [ "$rc" -eq 126 ] || [ "$rc" -eq 127 ]; then
		ok "cli first use: a #! interpreter missing: exit $rc"
	else
		not_ok "cli first use: a #! interpreter missing: exit 126 or 127" "exit $rc" "$out"
	fi
	has "cli first use: ... the line names the interpreter" "$out" "$d/no/such/interpreter"
	F=$d/nostart.out "$AN" run --store "sqlite://$d/nostart.db" --job nostart --slot "$nslot" -- \
		sh -c 'echo "ran $ANARCHON_ATTEMPT" > "$F"' > "$d/nostart.log" 2>&1
	rc=$?
	out=$(cat "$d/nostart.out" 2> /dev/null)
	check "cli first use: ... then another host wins the same slot and runs (exit $rc, ran: $out)" \
		test "$rc" -eq 0 -a "$out" = "ran 1"

	# Durations in words: the table test, then the command's messages.
	if out=$(make -s -C "$REPO_ROOT" test/bin/duration_test 2>&1 && "$REPO_ROOT/test/bin/duration_test" 2>&1) &&
		[ "$out" = ok ]; then
		ok "cli first use: durations in words: the table test"
	else
		not_ok "cli first use: durations in words: the table test" "$out"
	fi
	local opt want
	for opt in "--lease-ms 99999999999|1 year (31536000000 ms)" "--lease_ms 0|1 ms" \
		"--max-late-ms -5|1 year (31536000000 ms)" "--jitter 99999999999|1 year (31536000000 ms)" \
		"--kill-after 99999999999|1 d (86400000 ms)"; do
		want=${opt#*|}
		# shellcheck disable=SC2086
		out=$("$AN" run --store "sqlite://$d/dur.db" --job dur --schedule @hourly ${opt%%|*} -- true 2>&1)
		rc=$?
		if [ "$rc" -eq 64 ] && [[ $out == *"$want"* ]] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then
			ok "cli first use: ${opt%%|*}: exit 64, the range in words ($want)"
		else
			not_ok "cli first use: ${opt%%|*}: exit 64, the range in words" "exit $rc" "want: $want" "got: $out"
		fi
	done

	# Hints name the command's flags.
	out=$("$AN" run --store "sqlite://$d/hint.db" --job hint --now --max-late-ms 999 -- true 2>&1)
	rc=$?
	has "cli first use: run --now --max-late-ms 999: the hint names --max-late-ms (exit $rc)" "$out" \
		"Set --max-late-ms to at least 1000"
	"$AN" run --store "sqlite://$d/hint.db" --job first --now -- true > /dev/null 2>&1
	# Another writer holds the file's write lock until told to let go (a line on its stdin).
	local fifo=$d/hint.fifo
	mkfifo "$fifo"
	python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
open(sys.argv[2] + ".locked", "w").close()
sys.stdin.readline()' "$d/hint.db" "$fifo" < "$fifo" &
	pid=$!
	exec 9> "$fifo"
	for i in $(seq 1 100); do
		[ -e "$fifo.locked" ] && break
		sleep 0.05
	done
	if [ -e "$fifo.locked" ]; then
		out=$("$AN" run --store "sqlite://$d/hint.db" --job hint --now --busy-timeout-ms 100 -- true 2>&1)
		rc=$?
		has "cli first use: a file locked past --busy-timeout-ms: the hint names --busy-timeout-ms (exit $rc)" \
			"$out" "raise --busy-timeout-ms"
	else
		not_ok "cli first use: a file locked past --busy-timeout-ms" "the other writer did not take the lock"
	fi
	echo >&9
	exec 9>&-
	wait "$pid"

	# --help, the options taken, the man page and doc/cli.md agree.
	local verbs="run claim heartbeat finish check slots missed due stats cron token pause resume"
	local man_opts all_help="" v o helped taken bad="" probers=""
	man_opts=$(sed -n '/^\.SH OPTIONS/,/^\.SH EXIT/p' "$REPO_ROOT/cli/anarchon.1" | grep -A1 '^\.TP' |
		grep -o -- '\\-\\-[a-z][a-z\\_-]*' | sed 's/\\//g; s/_/-/g' | sort -u | tr '\n' ' ')
	# One prober per verb, side by side (some 300 calls).
	for v in $verbs; do
		(
			taken=""
			for o in $man_opts; do
				case $o in --help | --version) continue ;; esac
				# An option the verb does not take is refused by name; any other answer means it takes it.
				[[ $("$AN" "$v" "$o" x 2>&1) == *"does not take $o;"* ]] || taken+="$o "
			done
			echo "$taken" > "$d/takes.$v"
		) &
		probers+=" $!"
	done
	# shellcheck disable=SC2086
	wait $probers
	for v in $verbs; do
		helped=$("$AN" "$v" --help | grep -o -- '--[a-z][a-z_-]*' | tr _ - | sort -u | tr '\n' ' ')
		all_help+=" $helped"
		if [ ! -f "$d/takes.$v" ]; then
			bad+="$v: not probed. "
			continue
		fi
		taken=$(cat "$d/takes.$v")
		[ "$helped" = "$taken" ] || bad+="$v --help: $helped; takes: $taken. "
	done
	if [ -z "$bad" ]; then
		ok "cli first use: each verb's --help lists exactly the options it takes"
	else
		not_ok "cli first use: each verb's --help lists exactly the options it takes" "$bad"
	fi
	all_help=$(printf '%s\n' $all_help --help --version | sort -u | tr '\n' ' ')
	check "cli first use: the man page's options are the verbs' --help options (man: $man_opts; help: $all_help)" \
		test "$man_opts" = "$all_help"
	bad=""
	for v in $verbs; do
		grep -qE "^\| (\`[a-z]+\`, )*\`$v\`( |,)" "$REPO_ROOT/doc/cli.md" || bad+="$v "
	done
	check "cli first use: doc/cli.md's table of verbs has every verb (missing: $bad)" test -z "$bad"

	# The host that waited: its exec failed after the win.
	wait "$apid"
	rc=$?
	out=$(cat "$d/race.a.log")
	if { [ "$rc" -eq 126 ] || [ "$rc" -eq 127 ]; } && [ ! -e "$d/race.a" ] && [[ $out == *"nothing ran"* ]]; then
		ok "cli first use: exec failed after the win: exit $rc, nothing ran, said"
	else
		not_ok "cli first use: exec failed after the win: exit 126 or 127, nothing ran, said" "exit $rc" "$out"
	fi
	F=$d/race.b "$AN" run --store "sqlite://$d/race.db" --job race --slot "$slot" --attempts 2 -- \
		sh -c 'echo "ran $ANARCHON_ATTEMPT" > "$F"' > "$d/race.b.log" 2>&1
	rc=$?
	out=$(cat "$d/race.b" 2> /dev/null)
	check "cli first use: ... another host takes the slot over at once as attempt 2 (exit $rc, ran: $out; $(cat "$d/race.b.log"))" \
		test "$rc" -eq 0 -a "$out" = "ran 2"
}
