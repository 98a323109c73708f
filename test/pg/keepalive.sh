# keepalive.sh — CALL anarchon.run keeps its lease alive while its command
# works (sourced by run.sh).
#
# pg_keepalive LABEL STORE: on the store anarchon.store = STORE (local, or a
# foreign server),
#   1. anarchon.run with lease_ms 2 s and a command of 8 s, while another
#      session, with attempts 3, claims the same slot every 200 ms: nobody else
#      wins, and the run ends succeeded with its finish accepted;
#   2. the same with the runner's backend terminated mid-command: the
#      keep-alive stops, and a backup takes the run over (attempt 2) after the
#      lease.
pg_keepalive() {
	local label=$1 store=$2 dir opts pid out n i start waited
	dir=$(t_tmpdir)
	# The slot is this month's first second: max_late_ms of 32 days keeps it claimable.
	opts="-c anarchon.store=$store -c anarchon.max_late_ms=2764800000"
	ka_q() { PGOPTIONS="$opts $1" psql -X -A -t -q -v ON_ERROR_STOP=1 -c "$2" 2>&1; }
	# ka_claims JOB SECONDS: claim the slot with a new token every 200 ms, as a
	# backup with attempts left would; one answer per line.  How many fit in
	# SECONDS depends on the machine's load (each is a psql of its own).
	ka_claims() {
		local end=$(( $(date +%s%3N) + $2 * 1000 ))
		while [ "$(date +%s%3N)" -lt "$end" ]; do
			ka_q "-c anarchon.attempts=3 -c anarchon.lease_ms=2000" \
				"SELECT anarchon_claim('$1', anarchon_slot('@monthly'), anarchon_token())"
			sleep 0.2
		done
	}
	# ka_running JOB: until the run is running (bounded).
	ka_running() {
		for i in $(seq 1 100); do
			[ "$(ka_q "" "SELECT anarchon_check('$1', anarchon_slot('@monthly'))")" = running ] && return 0
			sleep 0.1
		done
		return 1
	}
	# ka_start APP JOB SECONDS OUT: CALL anarchon.run for JOB with a command of
	# SECONDS under a 2 s lease, in the background (its pid in pid), output in
	# OUT; fails unless it won and runs.
	ka_start() {
		PGAPPNAME=$1 PGOPTIONS="$opts" psql -X -A -t -q \
			-c "CALL anarchon.run('$2', '@monthly', 'SELECT pg_sleep($3)', 2000)" > "$4" 2>&1 &
		pid=$!
		at_exit "kill $pid 2>/dev/null"
		ka_running "$2" && return 0
		not_ok "keepalive/$label: the runner of $2 won its slot" "$(cat "$4")"
		return 1
	}

	# 1. An 8 s command under a 2 s lease.
	ka_start ka-runner "ka-$label" 8 "$dir/run.out" || return
	ka_claims "ka-$label" 9 > "$dir/claims"
	wait "$pid"
	n=$(grep -c . "$dir/claims")
	check "keepalive/$label: an 8 s command under a 2 s lease: $n claims every 200 ms (attempts 3) were told running or done, none won" \
		bash -c "[ $n -ge 3 ] && ! grep -qvE '^(running|done)$' '$dir/claims'"
	out=$(ka_q "" "SELECT outcome || ':' || status FROM anarchon.run_log WHERE job = 'ka-$label'")
	check "keepalive/$label: the run ended succeeded and its finish was accepted ($(cat "$dir/run.out") $out)" \
		test "$(cat "$dir/run.out") $out $(ka_q "" "SELECT anarchon_check('ka-$label', anarchon_slot('@monthly'))")" = \
		"won won:succeeded succeeded"
	check "keepalive/$label: the keep-alive worker is gone after the run" \
		test "$(ka_q "" "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'anarchon keep-alive'")" = 0

	# 2. The runner's backend terminated mid-command.
	ka_start ka-killed "ka-$label-kill" 60 "$dir/kill.out" || return
	sleep 3     # longer than the lease: the keep-alive has renewed it
	ka_q "" "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'ka-killed'" > /dev/null
	start=$(date +%s%3N)
	out=
	for i in $(seq 1 100); do
		out=$(ka_q "-c anarchon.attempts=3 -c anarchon.lease_ms=2000" \
			"SELECT outcome || ' ' || attempt FROM anarchon_claim_info('ka-$label-kill', anarchon_slot('@monthly'), anarchon_token())")
		[ "${out%% *}" = won ] && break
		sleep 0.2
	done
	waited=$(( $(date +%s%3N) - start ))
	check "keepalive/$label: after the runner's backend was terminated a backup took over ($out, ${waited} ms later; the lease is 2000 ms)" \
		test "$out" = "won 2"
	wait "$pid" 2> /dev/null
}

# pg_keepalive_deadline: the keep-alive stops the command when the lease
# could end, not when a heartbeat has failed.  anarchon.run with lease_ms
# 3 s and a command of 30 s; right after its first renewal is confirmed
# another session locks the run's row (SELECT ... FOR UPDATE) and keeps it,
# so every later heartbeat blocks.  The lease stored is then that of the
# last confirmed renewal, which was sent before the store started it: the
# command must have ended (its run_log row, written after the cancel, is an
# upper bound) before that lease_until, on the server's clock.  The run is
# recorded fenced (AN001), its effects rolled back.  Local store only: the
# row lock is what freezes the store here.
pg_keepalive_deadline() {
	local dir job=ka-deadline opts pid holder out i until fin margin end
	dir=$(t_tmpdir)
	opts="-c anarchon.store=local -c anarchon.max_late_ms=2764800000"
	kd_q() { PGOPTIONS="$opts" psql -X -A -t -q -v ON_ERROR_STOP=1 -c "$1" 2>&1; }
	PGAPPNAME=kd-runner PGOPTIONS="$opts" psql -X -A -t -q \
		-c "CALL anarchon.run('$job', '@monthly', 'SELECT pg_sleep(30)', 3000)" > "$dir/run.out" 2>&1 &
	pid=$!
	at_exit "kill $pid 2>/dev/null"
	# Until the first renewal is committed: the lease then ends later than
	# the claim's (claimed_at + 3 s).  Renewals come every second.
	out=
	for i in $(seq 1 100); do
		out=$(kd_q "SELECT lease_until > claimed_at + interval '3000 ms' FROM anarchon.runs WHERE job = '$job'")
		[ "$out" = t ] && break
		sleep 0.05
	done
	if [ "$out" != t ]; then
		not_ok "keepalive/deadline: the run's first renewal was confirmed" "$out" "$(cat "$dir/run.out")"
		kill "$pid" 2>/dev/null; return
	fi
	# Freeze the store for this run: hold its row's lock for a minute.  Its
	# lease_until, read under the lock, is the last confirmed renewal's.
	PGOPTIONS="$opts" PGAPPNAME=kd-holder psql -X -A -t -q -c "BEGIN" \
		-c "SELECT 'until=' || (extract(epoch FROM lease_until) * 1000)::bigint FROM anarchon.runs WHERE job = '$job' FOR UPDATE" \
		-c "SELECT pg_sleep(60)" > "$dir/hold.out" 2>&1 &
	holder=$!
	at_exit "kill $holder 2>/dev/null"
	until=
	for i in $(seq 1 100); do
		until=$(sed -n 's/^until=//p' "$dir/hold.out")
		[ -n "$until" ] && break
		sleep 0.05
	done
	if [ -z "$until" ]; then
		not_ok "keepalive/deadline: another session holds the run's row lock" "$(cat "$dir/hold.out")"
		kill "$pid" "$holder" 2>/dev/null; return
	fi
	# Until the runner's call has ended: at the latest 4 s after lease_until
	# (the old keep-alive let the 30 s command run on).
	end=$(( until + 4000 ))
	while kill -0 "$pid" 2>/dev/null && [ "$(date +%s%3N)" -lt "$end" ]; do sleep 0.05; done
	if kill -0 "$pid" 2>/dev/null; then
		not_ok "keepalive/deadline: a run whose renewals block is stopped before its lease can end" \
			"the command still ran 4 s after the lease of its last confirmed renewal ended"
		kd_q "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name IN ('kd-runner', 'kd-holder')" > /dev/null
		wait "$pid" "$holder" 2> /dev/null
		return
	fi
	fin=$(kd_q "SELECT (extract(epoch FROM finished_at) * 1000)::bigint FROM anarchon.run_log WHERE job = '$job'")
	kd_q "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'kd-holder'" > /dev/null
	wait "$holder" 2> /dev/null
	margin=$(( until - ${fin:-0} ))
	echo "# keepalive/deadline: lease 3000 ms, renewals blocked after the first: the command ended ${margin} ms before lease_until (an_lease_stop_margin: 300 ms)"
	check "keepalive/deadline: a run whose renewals block is stopped before its lease can end (${margin} ms to spare)" \
		test -n "$fin" -a "$margin" -ge 0
	out=$(kd_q "SELECT status || ': ' || error FROM anarchon.run_log WHERE job = '$job'")
	has "keepalive/deadline: the run is logged fenced, the lease lost" "$out" "fenced: "
	has "keepalive/deadline: the call raised AN001" "$(cat "$dir/run.out")" "lost its lease"
	out=$(kd_q "SELECT anarchon_check('$job', anarchon_slot('@monthly'))")
	check "keepalive/deadline: the run is left to its lease, not finished ($out)" \
		bash -c "[ '$out' = running ] || [ '$out' = expired ]"
}
