# tz.sh — anarchon.run with a CRON_TZ schedule, called by pg_cron (sourced
# by run.sh: tz_start with part 2's callers, tz_checks after part 2's checks).
#
# pg_cron knows only UTC, so its job runs every minute and anarchon.run
# decides which calls fall on a slot of the zone's schedule.
# 'CRON_TZ=Asia/Kathmandu */2 * * * *' has its slots at the even minutes of
# Kathmandu's wall clock (UTC+05:45), which are the odd minutes of UTC: every
# slot claimed must be one of those, run once, by exactly one caller, and
# anarchon.missed_runs must find none missed.

TZ_SCHED='CRON_TZ=Asia/Kathmandu */2 * * * *'

# tz_contender NAME: at each of ROUNDS minute boundaries, CALL anarchon.run.
tz_contender() {
	local r
	for r in $(seq 1 "$ROUNDS"); do
		sleep_to_minute
		PGAPPNAME=$1 q -v sched="$TZ_SCHED" -v cmd="$CMD" <<'EOF' 2>&1
CALL anarchon.run('tzsolo', :'sched', :'cmd');
EOF
	done
}

tz_start() {
	local i
	q -v cmd="$CMD" -v sched="$TZ_SCHED" > /dev/null <<'EOF'
SELECT cron.schedule('anarchon-tz', '* * * * *',
	format('CALL anarchon.run(%L, %L, %L)', 'tzsolo', :'sched', :'cmd'));
EOF
	for i in 1 2; do
		tz_contender "tz-$i" > "$tmp/tz-$i.out" &
		cpids+=($!)
		at_exit "kill $! 2>/dev/null"
	done
}

tz_checks() {
	local n bad
	n=$(q -c "SELECT count(DISTINCT slot) FROM anarchon.run_log WHERE job = 'tzsolo' AND outcome = 'won'")
	check "pg_cron with CRON_TZ: slots of the zone's schedule were run ($n)" test "$n" -ge 1
	bad=$(q -v sched="$TZ_SCHED" <<'EOF'
SELECT string_agg(slot::text, ', ') FROM (SELECT DISTINCT slot FROM anarchon.run_log WHERE job = 'tzsolo') s
 WHERE anarchon_slot(:'sched', slot) <> slot
    OR extract(minute FROM slot AT TIME ZONE 'Asia/Kathmandu')::int % 2 <> 0
    OR extract(minute FROM slot AT TIME ZONE 'UTC')::int % 2 <> 1;
EOF
)
	check "pg_cron with CRON_TZ: every slot claimed is an even Kathmandu minute, an odd UTC minute" test -z "$bad"
	[ -n "$bad" ] && printf '#   %s\n' "$bad"
	# A call at an even UTC minute names the slot of the minute before, which
	# is already late; a slot that every caller was told is late (the one
	# before the first call) has no winner, and must not have one.
	bad=$(q -c "SELECT slot || ': ' || count(*) FILTER (WHERE outcome = 'won') || ' winners'
		FROM anarchon.run_log WHERE job = 'tzsolo' GROUP BY slot
		HAVING count(*) FILTER (WHERE outcome = 'won') > 1
		    OR (count(*) FILTER (WHERE outcome = 'won') = 0
		        AND bool_or(outcome <> 'late'))")
	check "pg_cron with CRON_TZ: exactly one winner per slot that was not late" test -z "$bad"
	[ -n "$bad" ] && printf '#   %s\n' "$bad"
	bad=$(q -c "SELECT coalesce(e.slot, l.slot) || ': ' || coalesce(e.n, 0) || ' effects'
		FROM (SELECT slot, count(*) AS n FROM effects WHERE job = 'tzsolo' GROUP BY slot) e
		FULL JOIN (SELECT slot FROM anarchon.run_log WHERE job = 'tzsolo' AND outcome = 'won') l
		  ON e.slot = l.slot
		WHERE e.n IS DISTINCT FROM 1")
	check "pg_cron with CRON_TZ: the command's effect once per slot" test -z "$bad"
	n=$(q -c "SELECT count(*) FROM anarchon.run_log WHERE job = 'tzsolo' AND outcome NOT IN ('won', 'done', 'running', 'late')")
	check "pg_cron with CRON_TZ: every call answered won, done, running or late" test "$n" = 0
	n=$(q -v sched="$TZ_SCHED" <<'EOF'
SELECT count(*) FROM anarchon.run_schedules WHERE job = 'tzsolo' AND schedule = :'sched';
EOF
)
	bad=$(q -c "SELECT string_agg(slot::text, ', ') FROM anarchon.missed_runs WHERE job = 'tzsolo'")
	check "pg_cron with CRON_TZ: the job's schedule is watched and anarchon.missed_runs finds no slot missed" \
		test "$n:$bad" = "1:"
	q -c "SELECT application_name, outcome, count(*) FROM anarchon.run_log WHERE job = 'tzsolo' GROUP BY 1, 2 ORDER BY 1, 2" |
		sed 's/^/# /'
}
