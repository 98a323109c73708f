#!/usr/bin/env bash
# run.sh — durability and the end of a lease, on the local stores.
#
#   crash      PostgreSQL with synchronous_commit = off (postgresql.conf and
#              the role) and wal_writer_delay = 10s, so that an asynchronous
#              commit is surely still in memory: each decision (a claim, a
#              run-now, a claim under overlap 'replace', a claim in the
#              caller's transaction that then turns synchronous_commit off, a
#              finish) is followed at once by an immediate stop, the honest
#              crash; after the restart the decision is there, and a second
#              claim with another token does not win.  DURABLE_ROUNDS
#              rounds (20).
#   fsync      fsync = off refuses a claim and a run-now (SQLSTATE, detail,
#              hint); anarchon.durability = accept-loss, a superuser's
#              setting, lets them through; an ordinary role cannot set it.
#   expired    a heartbeat after the lease ended answers false even though no
#              one took the run over, check says expired, a backup then wins
#              attempt 2; a finish after the end with no takeover is taken
#              (PostgreSQL and SQLite).
#   prune      anarchon_prune also deletes pauses that ended before the
#              retention horizon, and keeps open, future and recent ones
#              (PostgreSQL and SQLite).
#   deadline   the keep-alive's stop time (core/lease.c), unit-checked.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib.sh"
source "$TEST_ROOT/pg/server.sh"
ROUNDS=${DURABLE_ROUNDS:-20}

built_or_end durable sqlite test-programs || exit 1
tmp=$(t_tmpdir)

# ------------------------------------------------------------------ deadline (no server)
if out=$(make -s -C "$REPO_ROOT" test/bin/lease_deadline_test 2>&1) &&
	out=$("$REPO_ROOT/test/bin/lease_deadline_test" 2>&1); then
	ok "deadline: the keep-alive stops at last confirmed send + lease - margin ($out)"
else
	not_ok "deadline: the keep-alive stops at last confirmed send + lease - margin" "$out"
fi

# ------------------------------------------------------------------ SQLite
SQ() { (cd "$tmp" && sqlite3 ./sq.db -cmd ".load $REPO_ROOT/sqlite/anarchon" "$@" 2>&1); }

sqlite_expired() {
	local s out
	s=$(( $(date +%s) * 1000 ))
	SQ "SELECT anarchon_config('lease_ms','1000'), anarchon_config('attempts','2');" \
		"SELECT anarchon_claim('hb', $s, 'first');" \
		"SELECT anarchon_claim('fin', $s, 'first');" > /dev/null
	# The scenario: both 1 s leases must run out, and nobody takes them over.
	sleep 1.5
	out=$(SQ "SELECT anarchon_config('lease_ms','1000'), anarchon_config('attempts','2');" \
		"SELECT 'hb=' || anarchon_heartbeat('hb', $s, 'first');" \
		"SELECT 'check=' || anarchon_check('hb', $s);" \
		"SELECT 'backup=' || anarchon_claim('hb', $s, 'backup');" \
		"SELECT 'attempt=' || attempt || ' token=' || token FROM anarchon_runs WHERE job = 'hb';" \
		"SELECT 'fin=' || anarchon_finish('fin', $s, 'first');" \
		"SELECT 'fincheck=' || anarchon_check('fin', $s);")
	printf '%s\n' "$out"
}
out=$(sqlite_expired)
has "expired: sqlite: a heartbeat after the lease ended answers false" "$out" "hb=0"
has "expired: sqlite: check says expired after that heartbeat" "$out" "check=expired"
has "expired: sqlite: a backup then wins attempt 2" "$out" "backup=won"
has "expired: sqlite: the run is attempt 2 of the backup" "$out" "attempt=2 token=backup"
has "expired: sqlite: a finish after the lease ended, not taken over, is recorded" "$out" "fin=1"
has "expired: sqlite: that run is succeeded" "$out" "fincheck=succeeded"

sqlite_prune() {
	local now
	now=$(( $(date +%s) * 1000 ))
	SQ "SELECT anarchon_pause('pj'); SELECT anarchon_resume('pj');" > /dev/null
	SQ "DELETE FROM anarchon_pauses;" \
		"INSERT INTO anarchon_pauses VALUES ('old', $now - 10*86400000, $now - 9*86400000);" \
		"INSERT INTO anarchon_pauses VALUES ('open', $now - 10*86400000, NULL);" \
		"INSERT INTO anarchon_pauses VALUES ('future', $now - 10*86400000, $now + 86400000);" \
		"INSERT INTO anarchon_pauses VALUES ('recent', $now - 10*86400000, $now - 10000);" \
		"SELECT 'pruned=' || anarchon_prune();" \
		"SELECT 'left=' || group_concat(job, ',') FROM (SELECT job FROM anarchon_pauses ORDER BY job);"
}
out=$(sqlite_prune)
has "prune: sqlite: old ended pauses are deleted, open, future and recent ones kept" "$out" "left=future,open,recent"

# ------------------------------------------------------------------ PostgreSQL
# Everything below starts a server: run it under the servers' lock (test/run).
pg_suite_start durable "$tmp" "synchronous_commit = off" "wal_writer_delay = 10s" \
	"wal_writer_flush_after = 0" || { suite_end; exit; }
q() { psql -X -A -t -q -v ON_ERROR_STOP=1 "$@" 2>&1; }
if ! out=$(q -c "CREATE EXTENSION anarchon" -c "ALTER ROLE CURRENT_USER SET synchronous_commit = off" \
	-c "ALTER ROLE CURRENT_USER SET anarchon.lease_ms = '600000'"); then
	not_ok "durable: the extension and the role's settings" "$out"; suite_end; exit
fi
[ "$(q -c "SHOW synchronous_commit")" = off ] || not_ok "durable: the session runs with synchronous_commit off"

crash_restart() {
	pg_as_server_user "$PG_BINDIR/pg_ctl" -D "$PG_DATA" -m immediate -w stop > /dev/null 2>&1 &&
		pg_as_server_user "$PG_BINDIR/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 start > /dev/null 2>&1
}

# Each op: its decision, then the immediate stop, then after the restart
# what must be remembered, one line: "ok" or what was found instead.
op_claim() {	# $1 round, $2 slot
	q -c "SELECT anarchon_claim('c$1', $2::bigint, 'first')" | grep -qx won || { echo "claim did not win"; return; }
	crash_restart || { echo "restart failed"; return; }
	q -c "SELECT anarchon_claim('c$1', $2::bigint, 'second')"
}
op_run_now() {
	[ "$(q -c "SELECT outcome FROM anarchon_run_now('r$1', 'first')")" = won ] || { echo "run-now did not win"; return; }
	crash_restart || { echo "restart failed"; return; }
	q -c "SELECT outcome FROM anarchon_run_now('r$1', 'second')"
}
op_replace() {
	q -c "SELECT anarchon_claim('p$1', $2::bigint - 1000, 'old')" -c "CHECKPOINT" > /dev/null
	q -c "SET anarchon.overlap = 'replace'" -c "SELECT anarchon_claim('p$1', $2::bigint, 'first')" |
		grep -qx won || { echo "replace did not win"; return; }
	crash_restart || { echo "restart failed"; return; }
	q -c "SET anarchon.overlap = 'replace'" -c "SELECT anarchon_claim('p$1', $2::bigint, 'second')" \
		-c "SELECT anarchon_check('p$1', $2::bigint - 1000)" | tr '\n' ' '
}
op_in_txn() {
	q -c "BEGIN" -c "SET LOCAL anarchon.in_transaction = on" \
		-c "SELECT anarchon_claim('t$1', $2::bigint, 'first')" \
		-c "SET LOCAL synchronous_commit = off" -c "COMMIT" | grep -qx won || { echo "claim did not win"; return; }
	crash_restart || { echo "restart failed"; return; }
	q -c "SELECT anarchon_claim('t$1', $2::bigint, 'second')"
}
op_finish() {
	q -c "SELECT anarchon_claim('f$1', $2::bigint, 'first')" -c "CHECKPOINT" > /dev/null
	q -c "SELECT anarchon_finish('f$1', $2::bigint, 'first')" | grep -qx t || { echo "finish was refused"; return; }
	crash_restart || { echo "restart failed"; return; }
	q -c "SELECT anarchon_check('f$1', $2::bigint)"
}

declare -A want=([claim]=running [run_now]=running [replace]="running replaced " [in_txn]=running [finish]=succeeded)
declare -A forgot
for op in claim run_now replace in_txn finish; do forgot[$op]=0; done
failures=()
for r in $(seq 1 "$ROUNDS"); do
	slot=$(( $(date +%s) * 1000 ))
	for op in claim run_now replace in_txn finish; do
		got=$("op_$op" "$r" "$slot")
		if [ "$got" != "${want[$op]}" ]; then
			forgot[$op]=$(( ${forgot[$op]} + 1 ))
			failures+=("$op|round $r: after the restart: $got")
		fi
	done
done
for op in claim run_now replace in_txn finish; do
	if [ "${forgot[$op]}" -eq 0 ]; then
		ok "crash: $op, then an immediate stop: remembered in $ROUNDS of $ROUNDS rounds, one winner each"
	else
		not_ok "crash: $op, then an immediate stop: forgotten in ${forgot[$op]} of $ROUNDS rounds" \
			"$(printf '%s\n' "${failures[@]}" | grep "^$op|" | head -n 5)"
	fi
done

# A heartbeat after the lease ended; a finish after it with no takeover.
pg_expired() {
	local s=$(( $(date +%s) * 1000 ))
	export PGOPTIONS="-c anarchon.lease_ms=1000 -c anarchon.attempts=2"
	q -c "SELECT anarchon_claim('hb', $s::bigint, 'first')" > /dev/null
	q -c "SELECT anarchon_claim('fin', $s::bigint, 'first')" > /dev/null
	# The scenario: both 1 s leases must run out, and nobody takes them over.
	sleep 1.5
	q -c "SELECT 'hb=' || anarchon_heartbeat('hb', $s::bigint, 'first')"
	q -c "SELECT 'check=' || anarchon_check('hb', $s::bigint)"
	q -c "SELECT 'backup=' || anarchon_claim('hb', $s::bigint, 'backup')"
	q -c "SELECT 'attempt=' || attempt || ' token=' || token FROM anarchon.runs WHERE job = 'hb'"
	q -c "SELECT 'fin=' || anarchon_finish('fin', $s::bigint, 'first')"
	q -c "SELECT 'fincheck=' || anarchon_check('fin', $s::bigint)"
	unset PGOPTIONS
}
out=$(pg_expired)
has "expired: postgresql: a heartbeat after the lease ended answers false" "$out" "hb=false"
has "expired: postgresql: check says expired after that heartbeat" "$out" "check=expired"
has "expired: postgresql: a backup then wins attempt 2" "$out" "backup=won"
has "expired: postgresql: the run is attempt 2 of the backup" "$out" "attempt=2 token=backup"
has "expired: postgresql: a finish after the lease ended, not taken over, is recorded" "$out" "fin=true"
has "expired: postgresql: that run is succeeded" "$out" "fincheck=succeeded"

out=$(q -c "DELETE FROM anarchon.pauses" \
	-c "INSERT INTO anarchon.pauses VALUES
		('old', now() - interval '10 days', now() - interval '9 days'),
		('open', now() - interval '10 days', NULL),
		('future', now() - interval '10 days', now() + interval '1 day'),
		('recent', now() - interval '10 days', now() - interval '10 seconds')" \
	-c "SELECT anarchon_prune()" \
	-c "SELECT 'left=' || string_agg(job, ',' ORDER BY job) FROM anarchon.pauses")
has "prune: postgresql: old ended pauses are deleted, open, future and recent ones kept" "$out" "left=future,open,recent"

# fsync = off: refused at claim time unless a superuser accepts the risk.
pg_fsync_off() {
	q -c "ALTER SYSTEM SET fsync = off" -c "SELECT pg_reload_conf()" > /dev/null
	for _ in $(seq 1 50); do [ "$(q -c "SHOW fsync")" = off ] && return 0; sleep 0.1; done
	return 1
}
if ! pg_fsync_off; then
	not_ok "fsync: the server reloaded with fsync = off"
else
	s=$(( $(date +%s) * 1000 ))
	out=$(psql -X -q -v VERBOSITY=verbose -c "SELECT anarchon_claim('fs', $s::bigint, 'a')" 2>&1)
	has "fsync: a claim is refused with fsync = off (SQLSTATE 55000)" "$out" "ERROR:  55000"
	has "fsync: the refusal names fsync = off" "$out" "fsync = off"
	has "fsync: the refusal has a detail" "$out" "DETAIL:  "
	has "fsync: the hint names the opt-in" "$out" "anarchon.durability = 'accept-loss'"
	has "fsync: nothing was written" "$(q -c "SELECT count(*) FROM anarchon.runs WHERE job = 'fs'")" "0"
	out=$(psql -X -q -v VERBOSITY=verbose -c "SELECT * FROM anarchon_run_now('fs')" 2>&1)
	has "fsync: a run-now is refused too" "$out" "ERROR:  55000"
	# The library is loaded first (anarchon_check): only then is the setting checked when set.
	out=$(q -c "CREATE ROLE plain LOGIN" -c "SELECT anarchon_check('fs', $s::bigint)" -c "SET ROLE plain" \
		-c "SET anarchon.durability = 'accept-loss'")
	has "fsync: an ordinary role cannot accept the risk" "$out" "permission denied"
	q -c "ALTER SYSTEM SET anarchon.durability = 'accept-loss'" -c "SELECT pg_reload_conf()" > /dev/null
	sleep 0.3	# the reload reaches new sessions; the next connection is one
	out=$(q -c "SELECT anarchon_claim('fs', $s::bigint, 'a')")
	has "fsync: with anarchon.durability = accept-loss the claim is made" "$out" "won"
	out=$(q -c "SET anarchon.durability = 'crash-safe'" -c "SELECT anarchon_claim('fs2', $s::bigint, 'a')")
	has "fsync: a session may turn the refusal back on" "$out" "fsync = off"
	q -c "ALTER SYSTEM RESET fsync" -c "ALTER SYSTEM RESET anarchon.durability" -c "SELECT pg_reload_conf()" > /dev/null
fi

suite_end
