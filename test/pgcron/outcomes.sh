# outcomes.sh — part 1 of the pgcron suite (sourced by run.sh): what
# anarchon.run does on each outcome, without waiting for pg_cron.
#
# The schedule is '@monthly' with max_late_ms raised to 32 days, so every
# call in this part claims the same slot (the first of this month) and none
# is late; the late case uses the default max_late_ms.

LONG="-c anarchon.max_late_ms=2764800000"

# call APP OPTIONS JOB SCHEDULE COMMAND [LEASE_MS]: CALL anarchon.run, print
# the outcome (or the error, with its SQLSTATE).
call() {
	PGAPPNAME=$1 PGOPTIONS=$2 q -v job="$3" -v sched="$4" -v cmd="$5" -v lease="${6:-NULL}" 2>&1 <<'EOF'
\set VERBOSITY verbose
CALL anarchon.run(:'job', :'sched', :'cmd', :lease);
EOF
}

# wait_for SECONDS SQL: until the query answers t (bounded; never hangs).
wait_for() {
	local i
	for i in $(seq 1 $(($1 * 5))); do
		[ "$(q -c "$2" 2>/dev/null)" = t ] && return 0
		sleep 0.2
	done
	return 1
}

# log_of JOB: the run_log rows of JOB as "app:outcome:status" in order.
log_of() {
	q -c "SELECT string_agg(application_name || ':' || outcome || ':' || coalesce(status, ''), ' ' ORDER BY id)
		FROM anarchon.run_log WHERE job = '$1'"
}

effects_of() { q -c "SELECT count(*) || coalesce(':' || string_agg(app, ','), '') FROM effects WHERE job = '$1'"; }
run_of() { q -c "SELECT attempt || ':' || state FROM anarchon.runs WHERE job = '$1'"; }

# A winner that will be fenced: it claims with a 6 s lease and then works
# until the test lets it go (fence_release, setup.sql; 180 s at most).  Its
# keep-alive renews the lease until the check below ends the keep-alive
# worker (as if it failed); then a second caller takes the run over
# (attempts = 2) once the lease has run out.  Started first.
SLOW="WITH e AS (INSERT INTO effects(job, slot, app) VALUES (current_setting('anarchon_run.job'), current_setting('anarchon_run.slot')::timestamptz, current_setting('application_name')) RETURNING 1) SELECT wait_release(180) FROM e"
# (6 s: a keep-alive that a loaded machine holds up to 4 s still renews in time.)
call fence-x "$LONG -c anarchon.attempts=2" fence1 '@monthly' "$SLOW" 6000 > "$tmp/fence-x.out" &
fence_pid=$!
at_exit "kill $fence_pid 2>/dev/null"

# Two winners that crash (their backend is terminated mid-command).
call crash-a "$LONG" crash1 '@monthly' "SELECT pg_sleep(60)" 15000 > "$tmp/crash-a.out" &
crash_a=$!
call crash-b "$LONG -c anarchon.attempts=2" retry1 '@monthly' "SELECT pg_sleep(60)" 15000 > "$tmp/crash-b.out" &
crash_b=$!

# won, then done
out=$(call app-1 "$LONG" ok1 '@monthly' "$CMD"; call app-2 "$LONG" ok1 '@monthly' "$CMD")
check "run: the first call wins and runs the command, the second is told done" \
	test "$(echo $out) $(log_of ok1) $(effects_of ok1) $(run_of ok1)" = \
	"won done app-1:won:succeeded app-2:done: 1:app-1 1:succeeded"

# an ordinary role: may CALL it (the command runs as that role), is named
# in the log, and cannot write the log or the runs itself
q -c "CREATE ROLE app_role LOGIN" -c "GRANT INSERT ON effects TO app_role" > /dev/null
out=$(PGUSER=app_role call app-9 "$LONG" role1 '@monthly' "$CMD")
deny=$(PGUSER=app_role q -c "INSERT INTO anarchon.run_log (job, slot, outcome, run_by, started_at) VALUES ('x', now(), 'won', 'x', now())" 2>&1;
	PGUSER=app_role q -c "DELETE FROM anarchon.runs" 2>&1)
check "run: an ordinary role calls it, is logged as run_by, cannot write the history itself" \
	test "$out $(q -c "SELECT run_by || ':' || status FROM anarchon.run_log WHERE job = 'role1'") $(effects_of role1) $(grep -c 'permission denied' <<< "$deny")" = \
	"won app_role:succeeded 1:app-9 2"

# failed: the error text is kept, the command's effects are undone
out=$(call app-1 "$LONG" fail1 '@monthly' "INSERT INTO effects(job, slot) VALUES ('fail1', now()) RETURNING 1/0")
err=$(q -c "SELECT error FROM anarchon.run_log WHERE job = 'fail1'")
check "run: a failing command finishes the run 'failed' with its error text ($err)" \
	test "$(log_of fail1) $(run_of fail1) $(effects_of fail1) $err" = \
	"app-1:won:failed 1:failed 0 22012: division by zero"
check "run: ... and then raises the command's error to its caller (SQLSTATE 22012), as pg_cron needs" \
	grep -q 'ERROR:  22012: anarchon.run: the command of job "fail1" failed' <<< "$out"

# inside a transaction block: an error, and nothing decided or stored
out=$(PGOPTIONS=$LONG q -c "BEGIN" -c "CALL anarchon.run('txn1', '@monthly', 'SELECT 1')" 2>&1)
check "run: inside BEGIN it fails and stores nothing" \
	bash -c "grep -q 'invalid transaction termination' <<< \"\$1\" && [ -z \"$(run_of txn1)$(log_of txn1)\" ]" _ "$out"

# late: the default max_late_ms (60 s) and this year's slot
out=$(call app-1 "" late1 '@yearly' "$CMD")
check "run: a slot long past is 'late', logged, the command not run" \
	test "$out $(log_of late1) $(effects_of late1) $(run_of late1)" = "late app-1:late: 0 "

# a job name that breaks the rule: refused before anything is claimed or
# recorded (a bad row would be watched by anarchon.missed_runs for ever)
out=$(call app-1 "$LONG" 'bad job!' '@monthly' "$CMD")
check "run: a bad job name is raised, and nothing is logged or watched" \
	bash -c "grep -q 'job name has' <<< \"\$1\" && [ -z '$(log_of 'bad job!')' ] && [ \"\$2\" = 0 ]" _ "$out" \
	"$(q -c "SELECT count(*) FROM anarchon.run_schedules WHERE job = 'bad job!'")"

# the claim itself fails (a store that does not exist): logged as 'error', raised
out=$(call app-1 "$LONG -c anarchon.store=no_such_server" err1 '@monthly' "$CMD")
check "run: a claim error is raised and logged as 'error'" \
	bash -c "grep -q 'does not exist' <<< \"\$1\" && [ '$(log_of err1)' = 'app-1:error:' ]" _ "$out"

# a bad schedule: the error names the field
out=$(call app-1 "$LONG" sched1 '0 0 32 * *' "$CMD")
check "run: a bad schedule is an error naming the field" \
	grep -q "field 3 (day of month) '32'" <<< "$out"

# The crashed winners: both have won and started sleeping.
if wait_for 30 "SELECT count(*) = 2 FROM anarchon.runs WHERE job IN ('crash1', 'retry1') AND state = 'running'"; then
	q -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name IN ('crash-a', 'crash-b')" > /dev/null
	wait "$crash_a" "$crash_b"
	out=$(call app-1 "$LONG" crash1 '@monthly' "$CMD")
	check "run: after the winner crashed, while its lease lives: running" test "$out" = running
	wait_for 40 "SELECT bool_and(anarchon_check(job, slot) = 'expired') FROM anarchon.runs WHERE job IN ('crash1', 'retry1')" ||
		not_ok "run: the crashed runs' leases expire"
	out=$(call app-2 "$LONG" crash1 '@monthly' "$CMD")
	check "run: after the lease, no attempts left: done, the run interrupted, never run twice" \
		test "$out $(run_of crash1) $(effects_of crash1) $(log_of crash1)" = \
		"done 1:interrupted 0 app-1:running: app-2:done:"
	out=$(PGOPTIONS="$LONG -c anarchon.attempts=2" PGAPPNAME=app-3 q -v cmd="$CMD" <<'EOF' 2>&1
CALL anarchon.run('retry1', '@monthly', :'cmd');
EOF
)
	check "run: with attempts = 2 the next call takes over and runs it (attempt 2)" \
		test "$out $(run_of retry1) $(effects_of retry1) $(log_of retry1)" = \
		"won 2:succeeded 1:app-3 app-3:won:succeeded"
	check "run: a crashed winner leaves no log row, its run shows in anarchon.runs" \
		test "$(q -c "SELECT count(*) FROM anarchon.run_log WHERE application_name IN ('crash-a', 'crash-b')")" = 0
else
	not_ok "run: the crashing winners claimed their runs" "$(cat "$tmp/crash-a.out" "$tmp/crash-b.out")"
fi

# The fenced winner: once its lease ran out, another caller takes over and
# finishes; when the first one's command ends, its finish is refused and its
# effects are rolled back.  One effect in all.
check "run: the long command's lease is kept alive past lease_ms (6 s), by a keep-alive worker" \
	test "$(q -c "SELECT anarchon_check('fence1', anarchon_slot('@monthly'))
		|| ' ' || (count(*) >= 1) FROM pg_stat_activity WHERE backend_type = 'anarchon keep-alive'")" = "running true"
q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'anarchon keep-alive'" > /dev/null
if wait_for 30 "SELECT anarchon_check('fence1', anarchon_slot('@monthly')) = 'expired'"; then
	out=$(call fence-y "$LONG -c anarchon.attempts=2" fence1 '@monthly' "$CMD" 3000)
	q -c "INSERT INTO fence_release DEFAULT VALUES" > /dev/null
	wait "$fence_pid"
	check "run: a winner whose lease ran out is fenced and its effects rolled back" \
		test "$out $(run_of fence1) $(effects_of fence1) $(log_of fence1)" = \
		"won 2:succeeded 1:fence-y fence-y:won:succeeded fence-x:won:fenced"
	check "run: ... and the fenced call ends in an error, SQLSTATE AN001" \
		grep -q 'ERROR:  AN001: anarchon.run: job "fence1" slot .* was no longer this call' "$tmp/fence-x.out"
else
	q -c "INSERT INTO fence_release DEFAULT VALUES" > /dev/null
	wait "$fence_pid"
	not_ok "run: the slow winner's lease runs out" "$(cat "$tmp/fence-x.out")"
fi

# A heartbeat the store refuses while nobody has taken the run over: the
# run's lease is ended in the table (as a keep-alive held up past the lease by
# a loaded machine would find it), so the next heartbeat is refused (it never
# revives an ended lease), while a finish would still be accepted.  The call
# must not finish the run: the command is rolled back, the call fails with
# AN001, the run is left to its lease, and a backup with attempts left runs
# it.  One effect in all.
call stale-x "$LONG -c anarchon.attempts=2" stale1 '@monthly' "WITH e AS (${CMD} RETURNING 1) SELECT pg_sleep(60) FROM e" 6000 \
	> "$tmp/stale-x.out" &
stale_pid=$!
at_exit "kill $stale_pid 2>/dev/null"
# Its command is running once its backend sleeps (its claim is committed by then).
if wait_for 30 "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'stale-x' AND wait_event = 'PgSleep'"; then
	q -c "UPDATE anarchon.runs SET lease_until = now() - interval '1 second' WHERE job = 'stale1'" > /dev/null
	for _ in $(seq 1 150); do kill -0 "$stale_pid" 2> /dev/null || break; sleep 0.2; done # the poll's step
	wait "$stale_pid"
	if grep -q 'ERROR:  AN001: anarchon.run: job "stale1" slot .* was no longer this call' "$tmp/stale-x.out"; then
		ok "run: a heartbeat refused on an ended lease: the call fails with AN001"
	else
		not_ok "run: a heartbeat refused on an ended lease: the call fails with AN001" "$(head -n 3 "$tmp/stale-x.out")"
	fi
	out=$(call stale-y "$LONG -c anarchon.attempts=2" stale1 '@monthly' "$CMD" 6000)
	same "run: ... its effects rolled back, the run not finished by it, and a backup runs it (attempt 2)" \
		"won 2:succeeded 1:stale-y stale-x:won:fenced stale-y:won:succeeded" \
		"$out $(run_of stale1) $(effects_of stale1) $(log_of stale1)"
else
	not_ok "run: the stale winner started its command" "$(cat "$tmp/stale-x.out")"
fi
