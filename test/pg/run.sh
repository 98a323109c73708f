#!/usr/bin/env bash
# run.sh — the PostgreSQL suite: the extension in a real PostgreSQL 15 server
# started on a free loopback port under a temporary folder.
#
#   pg_regress     sql/*.sql against expected/*.out (the decision table,
#                  fencing, check, settings, privileges, transactions, bad input)
#   isolation      test/pg/specs: sessions racing for one slot, a lock held
#                  by another transaction, takeover and overlap races
#   contention     32 client processes x 1000 slots: exactly one won per slot
#   claim_many     8 clients x 50 slots x 10 jobs in one call each: one won
#                  per (job, slot); reversed arrays never deadlock; a job's
#                  error is its row; each outcome is anarchon_claim's
#   takeover       a winner's backend terminated mid-run; one backup takes over
#   psycopg2       claims in the driver's own transaction (refused, or opted in)
#                  then commit, rollback or close, and a competing claim
#   clock          slots read from now(): refused, never two winners a second
#   cancel         a claim waiting for a job's lock stays cancellable
#   collation      check finds its runs under a non-byte-order collation
#   remote         claims through the anarchon wrapper into a real redis-server
#   keepalive      CALL anarchon.run keeps its lease alive past lease_ms, and a
#                  backup takes over once its backend is gone (local, Redis)
#                  and stops the command when the lease could end (local)
#   stats          anarchon_stats with the library preloaded: 8 backends'
#                  counts add up exactly; busy; Redis's clock offset
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib.sh"
source "$here/server.sh"
source "$here/regress.sh"
source "$here/isolation.sh"
source "$here/contention.sh"
source "$here/takeover.sh"
source "$here/remote.sh"
source "$here/driver.sh"
source "$here/clock.sh"
source "$here/keepalive.sh"
source "$here/stats.sh"
source "$here/claim_many.sh"

work=$(t_tmpdir)
if ! pg_install > "$work/install.log" 2>&1; then
	not_ok "make install" "$(tail -n 20 "$work/install.log")"; suite_end; exit
fi
step "make install"
# fsync off: these checks are about decisions, not durability (make bench keeps it on).
if ! pg_start "fsync = off" > "$work/start.log" 2>&1; then
	not_ok "start PostgreSQL" "$(tail -n 20 "$work/start.log")"; suite_end; exit
fi
step "started PostgreSQL on 127.0.0.1:$PGPORT"

pg_regress_run "$work/regress"
pg_isolation_run "$work/isolation"

psql -X -q -c "CREATE EXTENSION anarchon" 2>&1
pg_contention "contention" 32 4 250 "-c anarchon.overlap=allow"
pg_takeover 8
pg_driver_check 8 12
pg_clock_check 16
pg_claim_many_errors
pg_claim_many_same
pg_claim_many_deadlock 100
pg_claim_many_contention 8 50 10

# A claim stuck behind a job's lock is cancelled by statement_timeout, even
# with a long busy_timeout_ms: it never hangs its backend.
cancel_check() {
	local slot=$(( ($(date +%s) + 600) * 1000 )) holder start rc
	psql -X -q -c "BEGIN" -c "SET LOCAL anarchon.in_transaction = on" \
		-c "SELECT anarchon_claim('cancel', $slot::bigint, 'tok-1')" \
		-c "SELECT pg_sleep(20)" > /dev/null 2>&1 &
	holder=$!
	at_exit "kill $holder 2>/dev/null"
	# Until the holder has claimed and is "running its job" with the lock held.
	for _ in $(seq 1 100); do
		[ "$(psql -X -A -t -q -c "SELECT count(*) FROM pg_stat_activity
			WHERE query = 'SELECT pg_sleep(20)' AND state = 'active'")" = 1 ] && break
		sleep 0.1
	done
	start=$(date +%s)
	out=$(PGOPTIONS="-c statement_timeout=500 -c anarchon.busy_timeout_ms=600000" timeout 15 \
		psql -X -q -c "SELECT anarchon_claim('cancel', $slot::bigint, 'tok-2')" 2>&1)
	rc=$?
	kill "$holder" 2>/dev/null
	psql -X -q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(20)%' AND pid <> pg_backend_pid()" > /dev/null
	[ $rc -ne 124 ] && [ $(( $(date +%s) - start )) -lt 10 ] && printf '%s' "$out" | grep -q "statement timeout"
}
check "cancel: a claim waiting for the job's lock ends at statement_timeout" cancel_check

# anarchon_check probes the primary key from C: in a database whose default
# collation orders letters unlike bytes (ICU 'en': a < A < b < B), it must
# search the index in the index's collation and find every run.
collation_check() {
	local slot=4102444800000
	psql -X -q -c "CREATE DATABASE anarchon_icu LOCALE_PROVIDER icu ICU_LOCALE 'en' LOCALE 'C' TEMPLATE template0" || return 1
	out=$(psql -X -A -t -q -d anarchon_icu -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION anarchon;
SELECT count(*) FROM (SELECT anarchon_claim(j, $slot::bigint, 'tok') AS o
  FROM (SELECT c || i AS j FROM unnest(ARRAY['a', 'A', 'b', 'B', 'z', 'Z', '0']) c,
        generate_series(1, 2000) i) s) w WHERE o = 'won';
SELECT c || ' ' || count(*) FROM (SELECT anarchon_check(job, $slot::bigint) AS c FROM anarchon.runs) s GROUP BY c;
SELECT anarchon_check('c1', $slot::bigint);
SQL
)
	psql -X -q -c "DROP DATABASE anarchon_icu" > /dev/null
	[ "$out" = "14000
running 14000
none" ] || { echo "$out"; return 1; }
}
check "check: every run found by its key in a database with an ICU collation" collation_check

# A claim reads a job's pauses through the primary key of anarchon.pauses,
# whatever the planner knows of the table.  With 20000 ended pauses of 50
# other jobs, analyzed, the generic plan of an EXISTS was a sequential scan
# of the whole table, in two statements of every claim: 271 buffers a claim
# on PostgreSQL 15, whose plan cache chose that plan with the default
# plan_cache_mode too.  force_generic_plan makes the check see the generic
# plan on every version; the buffers one claim touches, its nested
# statements included, stay far below a scan (19 here).
pause_plan_check() {
	local slot=4102444800000 out blocks
	out=$(psql -X -A -t -q -v ON_ERROR_STOP=1 <<SQL
INSERT INTO anarchon.pauses SELECT 'other' || (i % 50), now() - interval '2 days' - i * interval '1 second',
  now() - interval '1 day' FROM generate_series(1, 20000) i;
ANALYZE anarchon.pauses;
SET anarchon.overlap = 'allow';
SET plan_cache_mode = force_generic_plan;
SELECT count(anarchon_claim('plan', $slot::bigint + i * 1000, 'tok')) FROM generate_series(1, 10) i;
BEGIN;
SET LOCAL anarchon.in_transaction = on;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, FORMAT JSON) SELECT anarchon_claim('plan', $slot::bigint + 60000, 'tok');
COMMIT;
DELETE FROM anarchon.pauses WHERE job LIKE 'other%';
SQL
) || { echo "$out"; return 1; }
	blocks=$(printf '%s\n' "$out" | sed -n '/^\[/,$p' | python3 -c '
import json, sys
p = json.load(sys.stdin)[0]["Plan"]
print(p["Shared Hit Blocks"] + p["Shared Read Blocks"])') || { echo "$out"; return 1; }
	echo "one claim touched $blocks buffers"
	[ "$blocks" -lt 100 ]
}
check "claim: a job's pauses are read by their key, not by a scan of every job's pauses" pause_plan_check

# The prune horizon (anarchon.pruned, read by a probe of its key after the
# job's lock): a run anarchon_prune deleted, and a slot below its cutoff that
# nobody claimed, answer late to a first claim however long its
# max_late_ms; a slot above the cutoff is won.  Short settings make the
# retention a few seconds, so a prune can forget runs of minutes ago.  In a
# database of its own: the horizon is every job's.
horizon_check() {
	local now old never young
	psql -X -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE horizon" && psql -X -q -v ON_ERROR_STOP=1 -d horizon -c "CREATE EXTENSION anarchon" || return 1
	now=$(( $(date +%s) * 1000 ))
	# young: a minute ahead, above any cutoff a prune of now can have used.
	# (The retention is 4 s here, max_late_ms + lease_ms x 3 attempts: a
	# slot of a second before the prune's start fell below the cutoff on a
	# loaded machine, where the prune ran over 3 s later.)
	old=$((now - 600000)) never=$((now - 300000)) young=$((now + 60000))
	psql -X -A -t -q -v ON_ERROR_STOP=1 -d horizon <<SQL
SET anarchon.overlap = 'allow';
SET anarchon.max_late_ms = 1000;
SET anarchon.lease_ms = 1000;
SELECT anarchon_claim('hz', $old::bigint, 'a', max_late_ms => 3600000);
SELECT anarchon_finish('hz', $old::bigint, 'a');
SELECT anarchon_prune() > 0;
SELECT anarchon_claim('hz', $old::bigint, 'b', max_late_ms => 3600000);
SELECT anarchon_claim('hz', $never::bigint, 'c', max_late_ms => 3600000);
SELECT anarchon_claim('hz', $young::bigint, 'd', max_late_ms => 3600000);
SQL
}
out=$(horizon_check 2>&1)
same "claim: after anarchon_prune, a deleted run and an unclaimed slot below its cutoff answer late, a slot above it is won" \
	"$(printf '%s\n' won t t late late won)" "$out"

pg_keepalive local local
pg_keepalive_deadline

TEST_TMP=$work
if [ -f "$REPO_ROOT/stores/redis/redis.mk" ] && pkg-config --exists hiredis 2> /dev/null; then
	pg_remote_redis
	# The keep-alive through a foreign server of the Redis lease strategy.
	kport=$(free_port) && redis_start pg-ka "$kport" > /dev/null || not_ok "keepalive: start redis-server"
	psql -X -q -c "CREATE SERVER ka_redis FOREIGN DATA WRAPPER anarchon
		OPTIONS (url 'redis://127.0.0.1:$kport/0?strategy=lease&prefix=ka')" > /dev/null
	pg_keepalive redis ka_redis
	pg_stats_check ka_redis
else
	not_ok "remote: anarchon was built without the Redis store (test/deps.sh installs libhiredis-dev; configure --require=all needs it)"
	pg_stats_check ""
fi

suite_end
