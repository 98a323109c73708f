#!/usr/bin/env bash
# run.sh — anarchon with pg_cron, on real servers.
#
#   1. anarchon.run's outcomes, one by one, without waiting for pg_cron: won,
#      done, failed (error kept), a crashed winner (running, then
#      interrupted), a retry after a crash, a fenced winner whose effects are
#      rolled back, late, a store error, a call inside a transaction block.
#   2. pg_cron on one server: a pg_cron job calls anarchon.run every minute
#      while four outside processes call it for the same job at the same
#      moments; exactly one winner per minute slot, the command's effect once
#      per slot.  Alongside, a job whose schedule has a time zone (CRON_TZ,
#      tz.sh): only the zone's slots run, each once; and a job whose command
#      fails, which cron.job_run_details must show as failed.
#   3. (when the build has the Redis store) a fleet: two servers with pg_cron
#      and the same schedule share one Redis store; each slot runs on exactly
#      one server.
#   4. the plug pulled: the server dies while a winner's command runs; after
#      the restart its claim is still there, and a retry runs the command.
#
# pg_cron fires once a minute, so parts 2 and 3 run in the background and
# part 1 runs meanwhile; the suite takes about three to four minutes.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$TEST_ROOT/pg/server.sh"
cd "$REPO_ROOT" || exit 1
here=$TEST_ROOT/pgcron
tmp=$(t_tmpdir)
chmod 777 "$tmp"

ROUNDS=${PGCRON_ROUNDS:-3}      # minute slots to watch in parts 2 and 3

if ! pg_install > "$tmp/install.log" 2>&1; then
	not_ok "install the extension" "$(tail -n 20 "$tmp/install.log")"
	suite_end
	exit
fi
CRON_CONF=("shared_preload_libraries = 'pg_cron'" "cron.database_name = 'postgres'"
	"cron.host = '127.0.0.1'" "cron.log_min_messages = warning")
if ! pg_start "${CRON_CONF[@]}" 2> "$tmp/start.log"; then
	not_ok "start PostgreSQL with pg_cron" "$(tail -n 20 "$tmp/start.log")"
	suite_end
	exit
fi
step "PostgreSQL with pg_cron started on 127.0.0.1:$PGPORT"

q() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }

check "create the extensions and the effects table" q -f "$here/setup.sql"

# The command every caller runs: record which session ran which slot.
CMD="INSERT INTO effects(job, slot, app) VALUES (current_setting('anarchon_run.job'), current_setting('anarchon_run.slot')::timestamptz, current_setting('application_name'))"
# The same, taking half a second, so that callers arriving during the run
# meet it running.
CMD_SLOW="WITH e AS (${CMD} RETURNING 1) SELECT pg_sleep(0.5) FROM e"

# ---------------------------------------------------------------- part 2
# pg_cron's job, and four outside callers that wake at each minute boundary
# (plus up to 0.1 s) and CALL anarchon.run for the same job.

q -v cmd="$CMD_SLOW" > /dev/null <<'EOF'
SELECT cron.schedule('anarchon-solo', '* * * * *',
	format('CALL anarchon.run(%L, %L, %L)', 'solo', '* * * * *', :'cmd'));
EOF
# ... and one whose command fails: pg_cron must see it fail.
q > /dev/null <<'EOF'
SELECT cron.schedule('anarchon-failing', '* * * * *',
	$$CALL anarchon.run('failing', '* * * * *', 'SELECT 1/0')$$);
EOF

# sleep_to_minute: until the next minute boundary plus a little jitter.
sleep_to_minute() {
	local now ms
	now=$(date +%s%3N)
	ms=$((60000 - now % 60000 + RANDOM % 100))
	# Until the next minute starts: pg_cron runs jobs on the minute.
	sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
}

# contender NAME JOB DATABASE: at each of ROUNDS minute boundaries, CALL
# anarchon.run for JOB as application NAME; prints each outcome.
contender() {
	local r
	for r in $(seq 1 "$ROUNDS"); do
		sleep_to_minute
		PGAPPNAME=$1 q -d "$3" -v job="$2" -v cmd="$CMD_SLOW" <<'EOF' 2>&1
CALL anarchon.run(:'job', '* * * * *', :'cmd');
EOF
	done
}

# start_contender NAME JOB DATABASE: in the background, output in $tmp/NAME.out.
cpids=()
start_contender() {
	contender "$@" > "$tmp/$1.out" &
	cpids+=($!)
	at_exit "kill $! 2>/dev/null"
}

for i in 1 2 3 4; do
	start_contender "contender-$i" solo postgres
done
# ... and a job with a CRON_TZ schedule (tz.sh)
source "$here/tz.sh"
tz_start

# ---------------------------------------------------------------- part 3
fleet=0
if [ -f "$here/fleet.sh" ]; then
	source "$here/fleet.sh"
fi

# ---------------------------------------------------------------- part 1
source "$here/outcomes.sh"
# ... and the SQL application loop of doc/app-loop.md
source "$here/apploop.sh"

# ---------------------------------------------------------------- part 2 checks
for p in "${cpids[@]}"; do wait "$p"; done
# The last minute's pg_cron run may still be finishing: wait for it (bounded).
last=$(q -c "SELECT max(slot) FROM anarchon.run_log WHERE job = 'solo' AND application_name LIKE 'contender-%'")
for _ in $(seq 1 60); do
	n=$(q -c "SELECT count(*) FROM anarchon.run_log WHERE job = 'solo' AND slot = '$last' AND application_name NOT LIKE 'contender-%'")
	[ "$n" -ge 1 ] && break
	sleep 1
done

cat "$tmp"/contender-*.out > "$tmp/contenders"
check "pg_cron: every outside call answered with an outcome ($(wc -l < "$tmp/contenders") calls)" \
	bash -c "[ \$(wc -l < '$tmp/contenders') -eq $((4 * ROUNDS)) ] && ! grep -qvE '^(won|running|done|overlap|late)$' '$tmp/contenders'"

slots=$(q -c "SELECT count(DISTINCT slot) FROM anarchon.run_log WHERE job = 'solo'")
check "pg_cron: at least $ROUNDS minute slots were claimed ($slots)" test "$slots" -ge "$ROUNDS"

bad=$(q -c "SELECT slot || ': ' || count(*) FILTER (WHERE outcome = 'won') || ' winners'
	FROM anarchon.run_log WHERE job = 'solo' GROUP BY slot
	HAVING count(*) FILTER (WHERE outcome = 'won') <> 1")
check "pg_cron: exactly one winner per minute slot" test -z "$bad"
[ -n "$bad" ] && printf '#   %s\n' "$bad"

bad=$(q -c "SELECT coalesce(e.slot, l.slot) || ': ' || coalesce(e.n, 0) || ' effects, winner ' || coalesce(l.app, 'none')
	FROM (SELECT slot, count(*) AS n, min(app) AS app FROM effects WHERE job = 'solo' GROUP BY slot) e
	FULL JOIN (SELECT slot, application_name AS app FROM anarchon.run_log WHERE job = 'solo' AND outcome = 'won') l
	  ON e.slot = l.slot
	WHERE e.n IS DISTINCT FROM 1 OR e.app IS DISTINCT FROM l.app")
check "pg_cron: the command's effect once per slot, by the winner" test -z "$bad"
[ -n "$bad" ] && printf '#   %s\n' "$bad"

bad=$(q -c "SELECT slot || ' ' || state FROM anarchon.runs WHERE job = 'solo' AND state <> 'succeeded'")
check "pg_cron: every run of the job succeeded in anarchon.runs" test -z "$bad"

wins_printed=$(grep -c '^won$' "$tmp/contenders")
wins_logged=$(q -c "SELECT count(*) FROM anarchon.run_log WHERE job = 'solo' AND outcome = 'won' AND application_name LIKE 'contender-%'")
check "pg_cron: the outside callers' own 'won' answers match the history ($wins_printed)" test "$wins_printed" = "$wins_logged"

cron_calls=$(q -c "SELECT count(*) FROM anarchon.run_log WHERE job = 'solo' AND application_name NOT LIKE 'contender-%'")
cron_ok=$(q -c "SELECT count(*) FROM cron.job_run_details d JOIN cron.job j USING (jobid) WHERE j.jobname = 'anarchon-solo' AND d.status = 'succeeded'")
check "pg_cron: the pg_cron job called anarchon.run in $cron_calls slots and succeeded $cron_ok times" \
	bash -c "[ $cron_calls -ge $((ROUNDS - 1)) ] && [ $cron_ok -ge $((ROUNDS - 1)) ]"

failed=$(q -c "SELECT count(*) FROM cron.job_run_details d JOIN cron.job j USING (jobid)
	WHERE j.jobname = 'anarchon-failing' AND d.status = 'failed' AND d.return_message LIKE '%the command of job \"failing\" failed%'")
wrong=$(q -c "SELECT count(*) FROM cron.job_run_details d JOIN cron.job j USING (jobid)
	WHERE j.jobname = 'anarchon-failing' AND d.status = 'succeeded'")
logged=$(q -c "SELECT count(*) FROM anarchon.run_log WHERE job = 'failing' AND status = 'failed'")
check "pg_cron: a command that fails shows as failed in cron.job_run_details ($failed times, $wrong succeeded, $logged in run_log)" \
	bash -c "[ $failed -ge $((ROUNDS - 1)) ] && [ $wrong = 0 ] && [ $logged -ge $failed ] && [ $logged -le $((failed + 1)) ]"

contended=$(q -c "SELECT count(*) FROM (SELECT slot FROM anarchon.run_log WHERE job = 'solo' GROUP BY slot HAVING count(*) >= 4) s")
check "pg_cron: slots were contended ($contended slots with four or more callers)" test "$contended" -ge 1

q -c "SELECT application_name, outcome, count(*) FROM anarchon.run_log WHERE job = 'solo' GROUP BY 1, 2 ORDER BY 1, 2" |
	sed 's/^/# /'

tz_checks

if [ "$fleet" -eq 1 ]; then
	fleet_checks
fi

# ---------------------------------------------------------------- part 4
source "$here/plug.sh"

suite_end
