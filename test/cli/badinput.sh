# badinput.sh — bad usage: exit status 64, exactly one line on stderr
# starting "anarchon: ", nothing on stdout, and nothing claimed: the
# command's marker file is never made, and the SQLite store the cases name
# holds no run at the end (read with the sqlite3 shell).
#
#   cli_badinput REDIS_URL

# bad NAME ARGS...: one case (the command, when run is reached, touches a
# marker), with the environment changes in BAD_ENV (env's arguments).
BAD_ENV=(-u ANARCHON_STORE)
bad() {
	local name=$1 d=$CLI_TMP/bad why=() t0 took
	shift
	rm -f "$d/ran"
	t0=$(date +%s%3N)
	# A refusal comes before anything waits (a store, --jitter, a slot still to come): the
	# cases below that would wait are given a slot 90 s ahead, so that a wait shows as
	# 30 s or more (60 s at most: then it is stopped), however slowly a loaded machine
	# starts the process (5.8 s was seen beside a package build, with a limit of 5 s then).
	timeout 60 env "${BAD_ENV[@]}" "$AN" "$@" > "$d/out" 2> "$d/err" < /dev/null
	RC=$?
	took=$(( $(date +%s%3N) - t0 ))
	[ "$RC" -eq 64 ] || why+=("exit $RC, want 64")
	[ -s "$d/out" ] && why+=("stdout: $(head -c 200 "$d/out")")
	one_error_line "$d/err" || why+=("stderr is not exactly one line starting 'anarchon: ': $(head -c 500 "$d/err")")
	[ -e "$d/ran" ] && why+=("the command ran")
	[ "$took" -lt 30000 ] || why+=("it took $took ms")
	if [ ${#why[@]} -eq 0 ]; then ok "cli bad input: $name"; else not_ok "cli bad input: $name" "${why[@]}"; fi
}

cli_badinput() {
	local redis=$1 d=$CLI_TMP/bad S slot long cmd
	mkdir -p "$d"
	S=sqlite://$d/runs.db
	slot=$(( $(date +%s) * 1000 ))
	long=$(printf 'j%.0s' $(seq 1 129))
	cmd=(-- sh -c "touch '$d/ran'")
	local base=(--store "$S" --job bad --slot "$slot")

	bad "a schedule of one word" run --store "$S" --job bad --schedule bogus "${cmd[@]}"
	bad "a schedule of seven fields" run --store "$S" --job bad --schedule '* * * * * * *' "${cmd[@]}"
	bad "minute 61" run --store "$S" --job bad --schedule '61 * * * *' "${cmd[@]}"
	bad "an unknown CRON_TZ zone" run --store "$S" --job bad --schedule 'CRON_TZ=Mars/Olympus 0 * * * *' "${cmd[@]}"
	bad "an empty job" run --store "$S" --job '' --slot "$slot" "${cmd[@]}"
	bad "a job of 129 bytes" run --store "$S" --job "$long" --slot "$slot" "${cmd[@]}"
	bad "a job with a space" run --store "$S" --job 'a b' --slot "$slot" "${cmd[@]}"
	bad "a job starting with '-'" run --store "$S" --job=-x --slot "$slot" "${cmd[@]}"
	bad "an unknown scheme" run --store foo://127.0.0.1/x --job bad --slot "$slot" "${cmd[@]}"
	BAD_ENV=(ANARCHON_STORE=foo://x)
	bad "an unknown scheme in ANARCHON_STORE" run --job bad --slot "$slot" "${cmd[@]}"
	BAD_ENV=(-u ANARCHON_STORE)
	bad "a redis URL with strategy=bogus" run --store "$redis?strategy=bogus" --job bad --slot "$slot" "${cmd[@]}"
	bad "a redis URL with an unknown parameter" run --store "$redis?bogus=1" --job bad --slot "$slot" "${cmd[@]}"
	bad "a redis URL with timeout_ms=0" run --store "$redis?timeout_ms=0" --job bad --slot "$slot" "${cmd[@]}"
	bad "an amqp URL with settle_ms=100 without durability=accept-loss" \
		run --store "amqp://127.0.0.1:5672?settle_ms=100" --job bad --slot "$slot" "${cmd[@]}"
	bad "a nats URL with an unknown parameter" run --store "nats://127.0.0.1:4222?bogus=1" --job bad --slot "$slot" "${cmd[@]}"
	bad "sqlite: naming no file" run --store sqlite: --job bad --slot "$slot" "${cmd[@]}"
	# A slot 90 s ahead: run sleeps until it (and --jitter's share) before it claims.
	bad "an unknown scheme, for a slot 90 s ahead: refused at once, not after the wait" \
		run --store foo://x --job bad --slot $((slot + 90000)) --jitter 5000 "${cmd[@]}"
	bad "a redis URL with strategy=bogus, for a slot 90 s ahead: refused at once" \
		run --store "$redis?strategy=bogus" --job bad --slot $((slot + 90000)) "${cmd[@]}"
	bad "sqlite: naming no file, for a slot 90 s ahead: refused at once" \
		run --store sqlite: --job bad --slot $((slot + 90000)) "${cmd[@]}"
	bad "a sqlite: URL with a parameter, for a slot 90 s ahead: refused at once" \
		run --store "$S?mode=ro" --job bad --slot $((slot + 90000)) "${cmd[@]}"
	bad "a postgresql URL with an unknown parameter, for a slot 90 s ahead: refused at once" \
		run --store "postgresql://127.0.0.1:5432/postgres?bogus=1" --job bad --slot $((slot + 90000)) "${cmd[@]}"
	bad "an unknown option" run "${base[@]}" --bogus "${cmd[@]}"
	bad "an option without its value" run "${base[@]}" --lease_ms
	bad "a slot in seconds" run --store "$S" --job bad --slot 1764842400 "${cmd[@]}"
	bad "a slot that is not a whole second" run --store "$S" --job bad --slot 2026-12-04T10:00:00.500Z "${cmd[@]}"
	bad "a slot without an offset" run --store "$S" --job bad --slot 2026-12-04T10:00:00 "${cmd[@]}"
	bad "a slot on the 30th of February" run --store "$S" --job bad --slot 2026-02-30T10:00:00Z "${cmd[@]}"
	bad "a slot that is a word" run --store "$S" --job bad --slot yesterday "${cmd[@]}"
	bad "both --slot and --schedule" run "${base[@]}" --schedule '* * * * *' "${cmd[@]}"
	bad "neither --slot nor --schedule" run --store "$S" --job bad "${cmd[@]}"
	bad "no store" run --job bad --slot "$slot" "${cmd[@]}"
	bad "no job" run --store "$S" --slot "$slot" "${cmd[@]}"
	bad "no command" run "${base[@]}"
	bad "no command after --" run "${base[@]}" --
	bad "--lease_ms 0" run "${base[@]}" --lease_ms 0 "${cmd[@]}"
	bad "--lease-ms abc" run "${base[@]}" --lease-ms abc "${cmd[@]}"
	bad "--attempts 0" run "${base[@]}" --attempts 0 "${cmd[@]}"
	bad "--attempts 1001" run "${base[@]}" --attempts 1001 "${cmd[@]}"
	bad "--overlap maybe" run "${base[@]}" --overlap maybe "${cmd[@]}"
	bad "--max_late_ms -1" run "${base[@]}" --max_late_ms -1 "${cmd[@]}"
	bad "--busy_timeout_ms x" run "${base[@]}" --busy_timeout_ms x "${cmd[@]}"
	bad "--not-mine-exit 300" run "${base[@]}" --not-mine-exit 300 "${cmd[@]}"
	bad "--not-mine-exit -1" run "${base[@]}" --not-mine-exit -1 "${cmd[@]}"
	bad "--jitter -5" run "${base[@]}" --jitter -5 "${cmd[@]}"
	bad "--kill-after soon" run "${base[@]}" --kill-after soon "${cmd[@]}"
	bad "an unknown verb" launch "${base[@]}"
	bad "claim with --shell (a run option)" claim "${base[@]}" --shell
	bad "claim with a command" claim "${base[@]}" -- true
	bad "slots with --store" slots --store "$S" --schedule '* * * * *' --from now --to now
	bad "slots with --from after --to" slots --schedule '* * * * *' --from 2026-12-04T10:00:00Z --to 2026-12-04T09:00:00Z
	bad "slots over more than 1000000 slots" slots --schedule '* * * * * *' --from 2026-01-01T00:00:00Z --to 2026-02-01T00:00:00Z
	bad "heartbeat without --token" heartbeat "${base[@]}"
	bad "heartbeat with an empty token" heartbeat "${base[@]}" --token ''
	bad "finish --status maybe" finish "${base[@]}" --token abc --status maybe
	bad "missed without --schedule" missed --store "$S" --job bad --from now --to now
	bad "check with --token" check "${base[@]}" --token abc
	bad "token with an argument" token extra

	local n
	n=$(runs_in "$d/runs.db")
	if [ "$n" = 0 ]; then ok "cli bad input: the SQLite store holds no run after all of the above"
	else not_ok "cli bad input: the SQLite store holds no run after all of the above" "$n runs: $(sqlite3 "$d/runs.db" 'SELECT * FROM anarchon_runs' 2>&1 | head -n 5)"; fi
	ANARCHON_STORE=foo://x expect_call "cli bad input: --store wins over a bad ANARCHON_STORE" 0 "none" \
		check --store "$S" --job bad --slot "$slot"
}
