#!/usr/bin/env bash
# run.sh — schedules: the parser and slot search (a C table test, with the
# daylight-saving tables worked out by hand), the searches against each
# other around every change of offset of every zone (property_test.c),
# then the SQL functions in
# SQLite (anarchon_slot, anarchon_next_slot, anarchon_slots, anarchon_missed,
# anarchon_zones, anarchon_fire_at), then the Python application loop of
# doc/app-loop.md with several processes, then both databases against an
# independent time-zone oracle and the dead-man's switch (anarchon_missed)
# with a fleet of processes on SQLite, PostgreSQL and Redis.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
here=test/schedule
tmp=$(t_tmpdir)

# Part 1: the hand-worked table, the refusals and the random oracle.
if make -s test/bin/schedule_test > "$tmp/build.log" 2>&1; then
	tap_ok "schedule: schedule_test ran all its checks and passed" test/bin/schedule_test 2000
else
	not_ok "schedule_test builds" "$(tail -n 20 "$tmp/build.log")"
fi

# Part 1b: the searches agree with each other around every change of offset
# of every zone of the system's tz database (the names as Python's zoneinfo
# lists them, less 'localtime', which is this machine's setting, not a zone).
zones_file=$tmp/zones.txt
if /usr/bin/python3 -c 'import zoneinfo; print("\n".join(sorted(z for z in zoneinfo.available_timezones() if z != "localtime")))' \
	> "$zones_file" 2> "$tmp/zones.err" && [ -s "$zones_file" ]; then
	if make -s test/bin/property_test > "$tmp/build-property.log" 2>&1; then
		tap_ok "schedule: property_test ran all its checks and passed" test/bin/property_test "$zones_file"
	else
		not_ok "property_test builds" "$(tail -n 20 "$tmp/build-property.log")"
	fi
else
	not_ok "list the zones of the system's tz database with /usr/bin/python3 (zoneinfo)" "$(tail -n 5 "$tmp/zones.err")"
fi

# The same under AddressSanitizer and UBSan (where the compiler has them).
sched_mk=$(make -s --no-print-directory -f - print-srcs <<'MK'
include Makefile
print-srcs:
	@echo '$(SCHEDULE_SRCS) $(CORE_SRCS)|$(TZ_SYSTEM_SRC)|$(TZ_SYSTEM_LIBS)'
MK
)
IFS='|' read -r sched_srcs tz_src tz_libs <<< "$sched_mk"
asan="-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Wall -Wextra -Werror -Ibuild -Icore -Ischedule"
case "$tz_src" in
	*.cc) tz_build=(g++ $asan -std=c++17 -c -o "$tmp/tz_source.o" "$tz_src") ;;
	*) tz_build=(cc $asan -std=c11 -D_GNU_SOURCE -c -o "$tmp/tz_source.o" "$tz_src") ;;
esac
if "${tz_build[@]}" > "$tmp/asan-build.log" 2>&1 &&
	cc $asan -std=c11 -D_GNU_SOURCE -o "$tmp/schedule_test_asan" $here/schedule_test.c \
	$sched_srcs "$tmp/tz_source.o" $tz_libs -lm >> "$tmp/asan-build.log" 2>&1; then
	if "$tmp/schedule_test_asan" 500 > "$tmp/asan.out" 2>&1 && ! grep -q '^not ok' "$tmp/asan.out"; then
		ok "schedule_test under AddressSanitizer and UBSan"
	else
		not_ok "schedule_test under AddressSanitizer and UBSan" "$(grep -v '^ok' "$tmp/asan.out" | head -n 20)"
	fi
else
	# gcc has both sanitizers on every platform the suite runs on: a failed
	# build is a failure (the tz source is built here too), not a skip.
	not_ok "schedule_test builds with AddressSanitizer and UBSan" "$(tail -n 5 "$tmp/asan-build.log")"
fi

# Part 2: the SQLite functions, against expected output.
if make -s sqlite > "$tmp/build-sqlite.log" 2>&1; then
	for f in "$here"/sql/*.sql; do
		name=$(basename "$f" .sql)
		stdbuf -oL sqlite3 "$tmp/$name.db" < "$f" 2>&1 | sqlite_cli_norm > "$tmp/$name.out"
		diff_ok "sqlite schedule functions: $name" "$here/expected/$name.out" "$tmp/$name.out"
		# No suppressions: cctz keeps its zones for the process, still reachable.
		if [ "${name#long_}" = "$name" ] && have_valgrind "sqlite schedule functions under valgrind: $name"; then
			valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
				--show-leak-kinds=definite,indirect --keep-debuginfo=yes --num-callers=40 \
				--log-file="$tmp/vg-$name.log" sqlite3 "$tmp/vg-$name.db" < "$f" > /dev/null 2>&1
			vg_log_ok "sqlite schedule functions under valgrind: $name" "$tmp/vg-$name.log" "$?"
		fi
	done
else
	not_ok "make sqlite" "$(tail -n 20 "$tmp/build-sqlite.log")"
fi

# Part 3: doc/examples/app_loop.py, six processes on one SQLite file and a
# 1-second schedule: one winner per slot, the work done once per slot.
py=/usr/bin/python3
if [ -x "$py" ] && [ -f sqlite/anarchon.so ]; then
	db=$tmp/app.db
	pids=()
	for i in 1 2 3 4 5 6; do
		timeout 60 "$py" doc/examples/app_loop.py "$db" report '1 seconds' 6 > "$tmp/app.$i.out" 2> "$tmp/app.$i.err" &
		pids+=($!)
	done
	rc=0
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	if [ $rc -ne 0 ]; then
		not_ok "app loop: six processes ran to the end" "$(cat "$tmp"/app.*.err | tail -n 20)"
	else
		ok "app loop: six processes ran to the end"
	fi
	cat "$tmp"/app.*.out > "$tmp/app.all"
	# one 'won' per slot that anybody claimed
	bad=$(awk '{n[$1]++; if ($2 == "won") w[$1]++} END {for (s in n) if (w[s] != 1) print s, "winners:", w[s] + 0}' "$tmp/app.all")
	if [ -z "$bad" ] && [ -s "$tmp/app.all" ]; then
		ok "app loop: exactly one winner per slot ($(awk '{print $1}' "$tmp/app.all" | sort -u | wc -l) slots)"
	else
		not_ok "app loop: exactly one winner per slot" "$bad"
	fi
	contended=$(awk '{n[$1]++} END {c = 0; for (s in n) if (n[s] >= 2) c++; print c}' "$tmp/app.all")
	check "app loop: slots were contended ($contended with two or more claimers)" test "$contended" -ge 1
	# the work of each slot: three steps, all by one process; the run succeeded
	got=$(sqlite3 "$db" "SELECT (SELECT count(*) FROM (SELECT slot FROM work_done GROUP BY slot HAVING count(*) <> 3 OR count(DISTINCT pid) <> 1))
		|| ' ' || (SELECT count(*) FROM anarchon_runs WHERE job = 'report' AND state <> 'succeeded')
		|| ' ' || (SELECT count(*) FROM anarchon_runs r WHERE NOT EXISTS (SELECT 1 FROM work_done w WHERE w.slot = r.slot))" 2>&1)
	check "app loop: work done once per slot by its winner, every run succeeded ($got)" test "$got" = "0 0 0"
else
	not_ok "app loop: needs /usr/bin/python3 and sqlite/anarchon.so"
fi

# Part 4: time zones in both databases against an independent oracle
# (Python's zoneinfo on the system's tzdata; PostgreSQL's own conversions
# for every zone, allzones.py), and anarchon_missed after an
# outage of a whole fleet: on SQLite, on PostgreSQL, and on Redis (lease).
source "$TEST_ROOT/pg/server.sh"
source "$TEST_ROOT/redis/server.sh"
if [ ! -x "$py" ] || ! "$py" -c 'import psycopg2, zoneinfo' 2> /dev/null; then
	not_ok "oracle: needs /usr/bin/python3 with psycopg2 and zoneinfo"
elif ! pg_install > "$tmp/pg-install.log" 2>&1; then
	not_ok "install the PostgreSQL extension" "$(tail -n 20 "$tmp/pg-install.log")"
elif ! pg_start "fsync = off" > "$tmp/pg-start.log" 2>&1; then
	not_ok "start PostgreSQL" "$(tail -n 20 "$tmp/pg-start.log")"
else
	# py_checks NAME SECONDS ARGS...: a Python program's own check lines, and
	# one failure more if it ended badly without printing one.
	py_checks() {
		local name=$1 secs=$2 rc
		shift 2
		timeout "$secs" "$py" "$@" > "$tmp/$name.out" 2>&1
		rc=$?
		cat "$tmp/$name.out"
		if [ $rc -ne 0 ] && ! grep -q '^not ok' "$tmp/$name.out"; then
			not_ok "$name ended with status $rc" "$(tail -n 10 "$tmp/$name.out")"
		fi
	}
	psql -X -q -c "CREATE EXTENSION anarchon" > "$tmp/pg-ext.log" 2>&1
	py_checks oracle 600 "$here/oracle.py" "$REPO_ROOT/sqlite/anarchon" "$tmp/oracle.db"
	# Every zone of the system's tz database, 1990-2037, in both databases.
	py_checks allzones 600 "$here/allzones.py" "$REPO_ROOT/sqlite/anarchon"
	py_checks missed-sqlite 120 "$here/missed.py" sqlite "$tmp/missed.db"
	py_checks missed-pg 120 "$here/missed.py" pg
	rport=$(free_port)
	if command -v redis-server > /dev/null && redis_start missed "$rport" > "$tmp/redis.log" 2>&1; then
		py_checks missed-redis 120 "$here/missed.py" sqlite "$tmp/missed-redis.db" \
			"redis://127.0.0.1:$rport?strategy=lease"
		# What Redis cannot answer it refuses, saying why, rather than guess.
		out=$(sqlite3 "$tmp/missed-redis2.db" ".load ./sqlite/anarchon" \
			"SELECT anarchon_config('store', 'redis://127.0.0.1:$rport?strategy=lease');" \
			"SELECT * FROM anarchon_missed('j', '@hourly', 1700000000000, 1700003600000);" 2>&1)
		check "anarchon_missed through Redis lease refuses slots older than it keeps runs for" \
			grep -q "keeps a run only max_late_ms + lease_ms \* attempts = 90000 ms after its slot" <<< "$out"
		out=$(sqlite3 "$tmp/missed-redis3.db" ".load ./sqlite/anarchon" \
			"SELECT anarchon_config('store', 'redis://127.0.0.1:$rport?strategy=stream-id');" \
			"SELECT * FROM anarchon_missed('j', '@hourly', 1700000000000, 1700003600000);" 2>&1)
		check "anarchon_missed through Redis stream-id says it cannot tell" \
			grep -q "redis strategy stream-id cannot tell which slots were missed" <<< "$out"
	else
		not_ok "start redis-server for anarchon_missed through Redis" "$(tail -n 5 "$tmp/redis.log" 2>/dev/null)"
	fi
fi

echo "# schedule suite: ${SECONDS} s"
suite_end
