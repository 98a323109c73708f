# takeover.sh — a winner dies mid-run; a backup takes the run over (sourced
# by run.sh).
#
# The winner is a psql client that claims a slot and then "runs the job"
# (pg_sleep); its backend is killed with pg_terminate_backend.  Its claim was
# committed, so the run stays running until its lease ends; then BACKUPS
# processes race to claim it: exactly one wins attempt 2, the others answer
# running, and the dead winner's token is refused by heartbeat and finish.
#
# pg_takeover BACKUPS
pg_takeover() {
	local backups=$1 dir slot opts pid i n
	dir=$(t_tmpdir)
	slot=$(( $(date +%s) * 1000 ))
	opts="-c anarchon.lease_ms=2000 -c anarchon.attempts=2"

	PGOPTIONS="$opts" PGAPPNAME=anarchon_winner psql -X -A -t -q \
		-c "SELECT anarchon_claim('takeover', $slot::bigint, 'tok-winner')" \
		-c "SELECT pg_sleep(600)" > "$dir/winner.out" 2> "$dir/winner.err" &
	pid=$!
	at_exit "kill $pid 2>/dev/null"
	for i in $(seq 1 100); do grep -q won "$dir/winner.out" && break; sleep 0.1; done
	check "takeover: the first instance won" grep -qx won "$dir/winner.out"
	n=$(psql -X -A -t -q -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = 'anarchon_winner'")
	check "takeover: its backend was terminated mid-run" test "$n" = 1
	for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	check "takeover: the winner's client saw its connection end" bash -c "! kill -0 $pid 2>/dev/null"

	# Before the lease ends the run is still the dead winner's.
	check "takeover: a backup before the lease ran out answers running" \
		test "$(PGOPTIONS="$opts" psql -X -A -t -q -c "SELECT anarchon_claim('takeover', $slot::bigint, 'tok-early')")" = running
	# Backups poll the cheap check until the lease has run out (at most 30 s).
	for i in $(seq 1 300); do
		[ "$(psql -X -A -t -q -c "SELECT anarchon_check('takeover', $slot::bigint)")" = expired ] && break
		sleep 0.1
	done
	check "takeover: check reports the lease expired" \
		test "$(psql -X -A -t -q -c "SELECT anarchon_check('takeover', $slot::bigint)")" = expired
	for i in $(seq 1 "$backups"); do
		PGOPTIONS="$opts" psql -X -A -t -q -F'|' \
			-c "SELECT outcome, attempt, 'backup-$i' FROM anarchon_claim_info('takeover', $slot::bigint, 'backup-$i')" \
			> "$dir/backup.$i" 2>&1 &
	done
	wait_backups() { local p; for p in $(jobs -p); do [ "$p" = "$pid" ] || wait "$p"; done; }
	wait_backups
	cat "$dir"/backup.* > "$dir/backups"
	check "takeover: exactly one of $backups backups won, attempt 2" \
		test "$(grep -c '^won|2|' "$dir/backups")" -eq 1
	check "takeover: the other backups answered running" \
		test "$(grep -c '^running|2|' "$dir/backups")" -eq $((backups - 1))
	check "takeover: the stored run is attempt 2 of the winning backup" \
		test "$(psql -X -A -t -q -F'|' -c "SELECT attempt, token, state FROM anarchon.runs
			WHERE job = 'takeover'")" = "2|$(grep '^won|' "$dir/backups" | cut -d'|' -f3)|running"
	check "takeover: the dead winner's token is refused by heartbeat" \
		test "$(psql -X -A -t -q -c "SELECT anarchon_heartbeat('takeover', $slot::bigint, 'tok-winner')")" = f
	check "takeover: the dead winner's token is refused by finish" \
		test "$(psql -X -A -t -q -c "SELECT anarchon_finish('takeover', $slot::bigint, 'tok-winner')")" = f
	check "takeover: the new owner finishes the run" \
		test "$(psql -X -A -t -q -c "SELECT anarchon_finish('takeover', $slot::bigint,
			'$(grep '^won|' "$dir/backups" | cut -d'|' -f3)')")" = t
}
