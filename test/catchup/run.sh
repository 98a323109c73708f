#!/usr/bin/env bash
# run.sh — catch-up (doc/operating.md, "Catch-up"): slots every instance
# missed are run once fleet-wide when the fleet comes back, and only those the
# policy names.
#
# For each host (PostgreSQL's anarchon.run, a SQL loop over SQLite's
# anarchon_due + anarchon_claim, the command's `anarchon run`) and each store
# (the host's own, and Redis with strategy=lease: a foreign server, the
# anarchon_config('store', url), --store): a one-second schedule whose job
# ran up to slot c0, then no instance for the five slots c0+1 .. c0+5; at
# c0+6 three processes per job come back at the same moment.  With
# max_late_ms 20000 and catch_up_ms 10000:
#   latest             c0+5 once, c0+1 .. c0+4 never (an instance that asks
#                      after c0+5 was caught up must not reach for c0+4)
#   all, catch_up_max 3  c0+3, c0+4, c0+5 once each, c0+1 and c0+2 never
#   none               none of c0+1 .. c0+5
# and in every case the current slot once and no slot twice, counted from
# what the commands wrote.  Then the settings' errors in every host, and
# anarchon_due against anarchon_missed + anarchon_slots for a CRON_TZ
# schedule, and the command's new paths under valgrind.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$TEST_ROOT/controls.sh"
SCHED='* * * * * *'
SETTINGS_MS="max_late_ms=20000 catch_up_ms=10000 catch_up_max=3"

built_or_end catchup sqlite cli || exit 1

redis_and_pg_start catchup "$tmp" cu cu_redis cu_log || { suite_end; exit; }
q() { psql -X -A -t -q -v ON_ERROR_STOP=1 "$@" 2>&1; }

# ---------------------------------------------------------------- helpers

# prefill HOST STORE JOB C0: runs of JOB for the slots c0-5 .. c0, claimed
# and finished, so that only what comes after is missed.
prefill() {
	local host=$1 store=$2 job=$3 c0=$4 s args=()
	case $host in
		pg)
			for s in $(seq $((c0 - 5000)) 1000 "$c0"); do
				args+=(-c "SELECT anarchon_claim('$job', $s::bigint, 'pre-$s')" -c "SELECT anarchon_finish('$job', $s::bigint, 'pre-$s')")
			done
			PGOPTIONS=$(pg_options "$store" none) q "${args[@]}" > /dev/null ;;
		sqlite)
			{
				sqlite_head "$store" none
				for s in $(seq $((c0 - 5000)) 1000 "$c0"); do
					echo "SELECT anarchon_claim('$job', $s, 'pre-$s');"
					echo "SELECT anarchon_finish('$job', $s, 'pre-$s');"
				done
			} | sqlite3 "$(sqlite_db "$store")" > /dev/null ;;
		cli)
			for s in $(seq $((c0 - 5000)) 1000 "$c0"); do
				"$AN" claim --store "$(cli_store "$store")" --job "$job" --slot "$s" --token "pre-$s" --max_late_ms 20000 > /dev/null &&
					"$AN" finish --store "$(cli_store "$store")" --job "$job" --slot "$s" --token "pre-$s" > /dev/null
			done ;;
	esac
}

pg_options() {
	local o="-c anarchon.catch_up=$2" kv
	for kv in $SETTINGS_MS; do o="$o -c anarchon.$kv"; done
	[ "$1" = redis ] && o="$o -c anarchon.store=cu_redis"
	echo "$o"
}
sqlite_db() { if [ "$1" = redis ]; then echo ":memory:"; else echo "$tmp/sqlite-local.db"; fi; }
# The first lines of every sqlite3 script: the extension, WAL (a claim made
# while anarchon_due's statement reads the file), the store and the settings.
sqlite_head() {
	local kv
	echo ".load $EXT"
	echo ".output /dev/null"
	[ "$1" = local ] && echo "PRAGMA journal_mode=WAL;"
	[ "$1" = redis ] && echo "SELECT anarchon_config('store', '$REDIS');"
	for kv in $SETTINGS_MS catch_up=$2; do echo "SELECT anarchon_config('${kv%%=*}', '${kv#*=}');"; done
	echo ".output stdout"
}
cli_store() { if [ "$1" = redis ]; then echo "$REDIS"; else echo "sqlite://$tmp/cli-local.db"; fi; }

# comeback HOST STORE JOB POLICY OUT: one instance that comes back; each slot
# it wins appends the slot (ms) to OUT.
comeback() {
	local host=$1 store=$2 job=$3 policy=$4 out=$5 tok
	date +%s%3N >> "$out.started"
	case $host in
		pg)
			PGOPTIONS=$(pg_options "$store" "$policy") q \
				-c "CALL anarchon.run('$job', '$SCHED', 'INSERT INTO cu_log VALUES (''$job'', current_setting(''anarchon_run.slot'')::timestamptz)')" \
				> "$out.err.$BASHPID" ;;
		sqlite)
			tok=$(printf 'tok-%s' "$BASHPID")
			# One statement cannot stop at an 'overlap' as anarchon.run and
			# anarchon run do (doc/operating.md): its claims allow overlap.
			{
				sqlite_head "$store" "$policy"
				echo ".output /dev/null"
				echo "SELECT anarchon_config('overlap', 'allow');"
				echo ".output stdout"
				echo "SELECT slot FROM anarchon_due('$job', '$SCHED')"
				echo " WHERE anarchon_claim('$job', slot, '$tok') = 'won' AND anarchon_finish('$job', slot, '$tok') = 1;"
			} | sqlite3 "$(sqlite_db "$store")" >> "$out" 2> "$out.err.$BASHPID" ;;
		cli)
			"$AN" run --store "$(cli_store "$store")" --job "$job" --schedule "$SCHED" --max_late_ms 20000 \
				--catch-up "$policy" --catch-up-ms 10000 --catch-up-max 3 -- sh -c 'echo "$ANARCHON_SLOT" >> "$1"' sh "$out" \
				2> "$out.err.$BASHPID" ;;
	esac
}

# judge NAME OUT C0 POLICY: what OUT holds against what the policy says.
# The instances come back 200 ms into c0+6; on a loaded machine they may
# reach anarchon_due seconds later, when the slots they must catch up are
# that many later: what they ran is judged against each second from c0+6 to
# two past the one in which the last of them set off (OUT.started), and
# passes when it is right for one of them.  Never twice is judged whatever
# the second.
judge() {
	local name=$1 out=$2 c0=$3 policy=$4 shift problems=() first=() late last
	# How late the last instance of the three set off past c0+6 s: the
	# shifts tried go that far, and two seconds more (a process reaches its
	# claim some time after it starts: loading the extension and connecting
	# took 1.5 s on a loaded machine).  Each is judged whole, as if every
	# instance had come back in that second.
	late=$(( $(sort -n "$out.started" | tail -n 1) - c0 - 6000 ))
	last=$(( (late < 0 ? 0 : late) / 1000 * 1000 + 2000 ))
	for shift in $(seq 0 1000 "$last"); do
		judge_at "$out" $((c0 + shift)) "$policy"
		[ ${#problems[@]} -eq 0 ] && break
		[ "$shift" -eq 0 ] && first=("${problems[@]}")
	done
	if [ ${#problems[@]} -eq 0 ]; then
		ok "$name: $(wc -l < "$out") runs: $(tr '\n' ' ' < "$out" | sed "s/$c0/c0/g")(c0=$c0$([ "$shift" -gt 0 ] && echo ", came back in c0+$((6 + shift / 1000))"))"
	else
		not_ok "$name" "${first[@]}" "runs: $(tr '\n' ' ' < "$out")" "c0=$c0, the last instance set off $late ms after c0+6 s" \
			"errors: $(cat "$out".err.* 2> /dev/null | head -c 600)"
	fi
}

# judge_at OUT C0 POLICY: problems+=(...) for what OUT holds against the
# policy, for instances that came back in slot c0+6.
judge_at() {
	local out=$1 c0=$2 policy=$3 want never dup s cur
	problems=()
	case $policy in
		latest) want="$((c0 + 5000))"; never="$(seq $((c0 + 1000)) 1000 $((c0 + 4000)))" ;;
		all) want="$(seq $((c0 + 3000)) 1000 $((c0 + 5000)))"; never="$((c0 + 1000)) $((c0 + 2000))" ;;
		none) want=""; never="$(seq $((c0 + 1000)) 1000 $((c0 + 5000)))" ;;
	esac
	dup=$(sort "$out" | uniq -d | tr '\n' ' ')
	[ -z "$dup" ] || problems+=("run twice: $dup")
	for s in $want; do grep -qx "$s" "$out" || problems+=("missed slot $s was not run"); done
	for s in $never; do grep -qx "$s" "$out" && problems+=("slot $s, outside the policy, was run"); done
	# The current slot: c0+6, or c0+7 when the machine was slow to start them.
	cur=$(grep -cxE "$((c0 + 6000))|$((c0 + 7000))" "$out")
	[ "$cur" -ge 1 ] || problems+=("the current slot was not run")
}

# scenario HOST STORE: the three policies, three instances each, at once.
scenario() {
	local host=$1 store=$2 c0 p j pids=() out
	c0=$(( $(date +%s) * 1000 ))
	for p in latest all none; do prefill "$host" "$store" "cu-$host-$store-$p" "$c0"; done
	# Down for c0+1 .. c0+5; back at c0+6, 200 ms into the second.
	sleep_until $((c0 + 6200))
	for p in latest all none; do
		j=cu-$host-$store-$p
		: > "$tmp/$j.out"
		: > "$tmp/$j.out.started"
		for _ in 1 2 3; do comeback "$host" "$store" "$j" "$p" "$tmp/$j.out" & pids+=($!); done
	done
	wait "${pids[@]}"
	for p in latest all none; do
		j=cu-$host-$store-$p
		out=$tmp/$j.out
		if [ "$host" = pg ]; then
			q -c "SELECT (extract(epoch FROM slot) * 1000)::bigint FROM cu_log WHERE job = '$j'" > "$out"
		fi
		judge "catchup: $host, $store store, $p: three instances back after five missed slots" "$out" "$c0" "$p"
	done
}

# ---------------------------------------------------------------- the fleet comes back

for host in pg sqlite cli; do
	for store in local redis; do
		scenario "$host" "$store"
	done
done

# ---------------------------------------------------------------- bad settings

WINDOW_RULE="raise max_late_ms to at least catch_up_ms"
for v in "catch_up sometimes allowed values are 'none', 'latest' and 'all'" \
	"catch_up_ms -1 allowed is a whole number from 0 to" \
	"catch_up_max 0 allowed is a whole number from 1 to 1000" \
	"catch_up_max 1001 allowed is a whole number from 1 to 1000"; do
	set -- $v
	name=$1 value=$2
	shift 2
	want="$*"
	# Once the library is loaded, SET checks the value; before, the first
	# function that reads the settings refuses it.
	out=$(q -v VERBOSITY=verbose -c "SELECT anarchon_token()" -c "SET anarchon.$name = '$value'")
	has "catchup: pg refuses SET anarchon.$name = $value (22023)" "$out" "22023"
	has "catchup: pg says what is allowed for $name" "$out" "$want"
	out=$(PGOPTIONS="-c anarchon.$name=$value" q -v VERBOSITY=verbose -c "SELECT * FROM anarchon_due('j', '$SCHED')")
	has "catchup: pg's anarchon_due refuses $name = $value set before the library was loaded (22023)" "$out" "22023"
	has "catchup: ... and says what is allowed for $name" "$out" "$want"
	out=$(printf '.load %s\nSELECT anarchon_config(%s, %s);\n' "$EXT" "'$name'" "'$value'" | sqlite3 :memory: 2>&1)
	has "catchup: sqlite refuses $name = $value" "$out" "$want"
	dashed=$(echo "$name" | tr _ -)
	out=$("$AN" due --store "sqlite://$tmp/bad.db" --job j --schedule "$SCHED" "--$dashed" "$value" 2>&1)
	rc=$?
	has "catchup: the command refuses --$dashed $value" "$out" "$want"
	check "catchup: the command exits 64 for --$dashed $value" test "$rc" = 64
done

out=$(q -v VERBOSITY=verbose -c "SET anarchon.max_late_ms = 20000" -c "SET anarchon.catch_up = latest" \
	-c "SET anarchon.catch_up_ms = 30000" -c "SELECT * FROM anarchon_due('j', '$SCHED')")
has "catchup: pg refuses catch_up_ms > max_late_ms at anarchon_due (22023)" "$out" "22023"
has "catchup: pg says to raise max_late_ms" "$out" "$WINDOW_RULE"
out=$(q -v VERBOSITY=verbose -c "SET anarchon.max_late_ms = 20000" -c "SET anarchon.catch_up = latest" \
	-c "SET anarchon.catch_up_ms = 30000" -c "CALL anarchon.run('j', '$SCHED', 'SELECT 1')")
has "catchup: pg's anarchon.run refuses catch_up_ms > max_late_ms" "$out" "$WINDOW_RULE"
out=$(printf '.load %s\nSELECT anarchon_config(%s, 20000);\nSELECT anarchon_config(%s, %s);\nSELECT anarchon_config(%s, 30000);\n' \
	"$EXT" "'max_late_ms'" "'catch_up'" "'latest'" "'catch_up_ms'" | sqlite3 :memory: 2>&1)
has "catchup: sqlite refuses catch_up_ms > max_late_ms when it is set" "$out" "$WINDOW_RULE"
out=$(printf '.load %s\nSELECT anarchon_config(%s, 20000);\nSELECT anarchon_config(%s, 30000);\nSELECT anarchon_config(%s, %s);\n' \
	"$EXT" "'max_late_ms'" "'catch_up_ms'" "'catch_up'" "'all'" | sqlite3 :memory: 2>&1)
has "catchup: sqlite refuses catch_up 'all' while catch_up_ms > max_late_ms" "$out" "$WINDOW_RULE"
out=$("$AN" run --store "sqlite://$tmp/bad.db" --job j --schedule "$SCHED" --catch-up-ms 30000 --max_late_ms 20000 \
	--catch-up latest -- true 2>&1)
rc=$?
has "catchup: the command refuses --catch-up-ms > --max_late_ms, in any order" "$out" "$WINDOW_RULE"
check "catchup: ... with exit 64" test "$rc" = 64

# ---------------------------------------------------------------- anarchon_due = missed + slots, CRON_TZ

# An hourly schedule at 00 minutes in Kathmandu (UTC+5:45) is at :15 UTC.
# The window is 3 hours; one slot of it has a run.  Expected: the missed ones
# (anarchon_missed, asked with max_late_ms 0 so that every past slot is a
# candidate), then the current slot (anarchon_slot).
TZS='CRON_TZ=Asia/Kathmandu 0 0 * * * *'
now=$(date +%s%3N)
out=$(sqlite3 :memory: 2>&1 <<EOF
.load $EXT
.output /dev/null
SELECT anarchon_config('max_late_ms', 14400000);
SELECT anarchon_claim('tzjob', (SELECT slot FROM anarchon_slots('$TZS', $now - 10800000, $now) LIMIT 1 OFFSET 1), 't');
SELECT anarchon_finish('tzjob', (SELECT slot FROM anarchon_slots('$TZS', $now - 10800000, $now) LIMIT 1 OFFSET 1), 't');
SELECT anarchon_config('max_late_ms', 0);
CREATE TABLE want AS SELECT slot FROM anarchon_missed('tzjob', '$TZS', $now - 10800000, anarchon_slot('$TZS', $now))
	UNION ALL SELECT anarchon_slot('$TZS', $now);
SELECT anarchon_config('max_late_ms', 14400000);
SELECT anarchon_config('catch_up_ms', 10800000);
SELECT anarchon_config('catch_up', 'all');
CREATE TABLE got AS SELECT slot FROM anarchon_due('tzjob', '$TZS', $now);
.output stdout
SELECT (SELECT group_concat(slot) FROM (SELECT slot FROM want ORDER BY slot)) || ' / ' ||
	(SELECT group_concat(slot) FROM got) || ' / ' || (SELECT count(*) FROM want);
EOF
)
want_got=${out% / *}
if [ "${want_got% / *}" = "${want_got#* / }" ] && [ "${out##* / }" -ge 2 ] 2> /dev/null; then
	ok "catchup: sqlite anarchon_due = anarchon_missed + anarchon_slot for $TZS ($out)"
else
	not_ok "catchup: sqlite anarchon_due = anarchon_missed + anarchon_slot for $TZS" "want / got / n: $out"
fi
out=$(q -c "SET anarchon.max_late_ms = 14400000" \
	-c "SELECT anarchon_claim('tzjob', (SELECT slot FROM anarchon_slots('$TZS', $now::bigint - 10800000, $now::bigint) LIMIT 1 OFFSET 1), 't')" \
	-c "SELECT anarchon_finish('tzjob', (SELECT slot FROM anarchon_slots('$TZS', $now::bigint - 10800000, $now::bigint) LIMIT 1 OFFSET 1), 't')" \
	-c "SET anarchon.max_late_ms = 0" \
	-c "CREATE TEMP TABLE want AS SELECT slot FROM anarchon_missed('tzjob', '$TZS', $now::bigint - 10800000, anarchon_slot('$TZS', $now::bigint))
		UNION ALL SELECT anarchon_slot('$TZS', $now::bigint)" \
	-c "SET anarchon.max_late_ms = 14400000" -c "SET anarchon.catch_up_ms = 10800000" -c "SET anarchon.catch_up = 'all'" \
	-c "SELECT (SELECT string_agg(slot::text, ',' ORDER BY slot) FROM want) || ' / ' ||
		(SELECT string_agg(slot::text, ',') FROM anarchon_due('tzjob', '$TZS', $now::bigint)) || ' / ' || (SELECT count(*) FROM want)" | tail -n 1)
want_got=${out% / *}
if [ "${want_got% / *}" = "${want_got#* / }" ] && [ "${out##* / }" -ge 2 ] 2> /dev/null; then
	ok "catchup: pg anarchon_due = anarchon_missed + anarchon_slot for $TZS ($out)"
else
	not_ok "catchup: pg anarchon_due = anarchon_missed + anarchon_slot for $TZS" "want / got / n: $out"
fi
# Every slot of it is at :15 UTC (Kathmandu's 45 minutes past the hour).
out=$(q -c "SELECT count(*) FROM anarchon_due('tzjob', '$TZS') AS d WHERE extract(minute FROM d.slot AT TIME ZONE 'UTC') <> 15")
check "catchup: pg anarchon_due's slots of $TZS fall at :15 UTC" test "$out" = 0

# ---------------------------------------------------------------- the command under valgrind

vg() { an_valgrind "catchup valgrind" "$tmp/vg" "$@"; }
if have_valgrind "catchup valgrind"; then
	for store in local redis; do
		u=$(cli_store "$store")
		vg "due $store, all" 0 due --store "$u" --job vg-due --schedule "$SCHED" --catch-up all --catch-up-ms 5000 --catch-up-max 3
		vg "run $store, all" 0 run --store "$u" --job vg-due --schedule "$SCHED" --catch-up all --catch-up-ms 5000 --catch-up-max 3 -- true
		vg "run $store, latest, nothing left" 0 run --store "$u" --job vg-due --schedule "$SCHED" --catch-up latest --catch-up-ms 5000 -- true
		vg "run $store, a failing command stops the catch-up" 3 run --store "$u" --job vg-fail --schedule "$SCHED" --catch-up all --catch-up-ms 3000 -- sh -c 'exit 3'
		vg "due $store, window past max_late_ms" 64 due --store "$u" --job vg-due --schedule "$SCHED" --catch-up all --catch-up-ms 5000 --max_late_ms 1000
	done
fi

suite_end
