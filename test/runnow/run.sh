#!/usr/bin/env bash
# run.sh — run now (doc/operating.md, "Run now"): one extra run of a job,
# exactly once across the fleet, however many instances ask at once.
#
# For each host (PostgreSQL's anarchon_run_now, SQLite's anarchon_run_now,
# the command's `anarchon run --now`) and each store (the host's own, and
# Redis with strategy=lease: a foreign server, anarchon_config('store'),
# --store; and the command through PostgreSQL), with max_late_ms 2000:
#   - 16 processes ask at the same instant (20 ms before a second ends, so
#     that some ask in the next second and must join the first request):
#     the job runs exactly once, counted from what the winners wrote, every
#     caller got an answer, and exactly one of them 'won';
#   - the run is in the history as manual (its slot one millisecond past its
#     second) and finished;
#   - 4 more ask after the window: exactly one second run, on a new slot;
#   - a scheduled claim of the current slot still wins, once.
# Then what run-now answers while a scheduled run holds a live lease
# (overlap skip), the rights of PostgreSQL's roles, the stores that refuse
# it, bad input in every host, and the command's new path under valgrind.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$TEST_ROOT/controls.sh"
N=16
WINDOW=2000

built_or_end runnow sqlite cli || exit 1

redis_and_pg_start runnow "$tmp" rn rn_redis rn_log || { suite_end; exit; }
q() { psql -X -A -t -q -v ON_ERROR_STOP=1 "$@" 2>&1; }

# ---------------------------------------------------------------- helpers

pg_options() {
	local o="-c anarchon.max_late_ms=$WINDOW"
	[ "$1" = redis ] && o="$o -c anarchon.store=rn_redis"
	echo "$o"
}
sqlite_db() { if [ "$1" = redis ]; then echo ":memory:"; else echo "$tmp/sqlite-local.db"; fi; }
# The shell's own connection waits for a lock as an application's must
# (sqlite3_busy_timeout): without it, SQLite answers "database is locked" to
# the statement read while another caller commits, before anarchon runs.
sqlite_head() {
	echo ".timeout 10000"
	echo ".load $EXT"
	echo ".output /dev/null"
	[ "$1" = redis ] && echo "SELECT anarchon_config('store', '$REDIS');"
	echo "SELECT anarchon_config('max_late_ms', $WINDOW);"
	echo ".output stdout"
}
cli_store() {
	case $1 in
		redis) echo "$REDIS" ;;
		postgresql) echo "postgresql://$PGUSER@127.0.0.1:$PGPORT/postgres" ;;
		*) echo "sqlite://$tmp/cli-local.db" ;;
	esac
}

# ms TEXT: a psql timestamptz as ms since the epoch.
pg_ms() { q -c "SELECT (extract(epoch FROM '$1'::timestamptz) * 1000)::bigint"; }

# ask HOST STORE JOB OUT ANSWERS: one instance asks to run JOB now.  When it
# wins, it appends the manual slot (ms) to OUT and finishes the run; its
# answer goes to ANSWERS as "outcome slot start end": when it began asking
# and when it had its answer (ms), the bounds of the moment the store
# decided, which judge holds the store's slot to.
ask() {
	local host=$1 store=$2 job=$3 out=$4 answers=$5 r outcome slot token start when
	start=$(date +%s%3N)
	case $host in
		pg)
			r=$(PGOPTIONS=$(pg_options "$store") q -F ' ' \
				-c "SELECT outcome, (extract(epoch FROM slot) * 1000)::bigint, token FROM anarchon_run_now('$job')")
			read -r outcome slot token <<< "$r"
			echo "$outcome $slot $start $(date +%s%3N)" >> "$answers"
			if [ "$outcome" = won ]; then
				PGOPTIONS=$(pg_options "$store") q -c "INSERT INTO rn_log VALUES ('$job', 'epoch'::timestamptz + $slot * interval '1 millisecond')" \
					-c "SELECT anarchon_finish('$job', $slot::bigint, '$token')" > /dev/null
			fi ;;
		sqlite)
			token=tok-$BASHPID
			r=$({ sqlite_head "$store"; echo "SELECT anarchon_run_now('$job', '$token');"; } |
				sqlite3 "$(sqlite_db "$store")" 2>&1)
			outcome=$(printf '%s' "$r" | sed -n 's/.*"outcome":"\([a-z]*\)".*/\1/p')
			slot=$(printf '%s' "$r" | sed -n 's/.*"slot":\([0-9]*\).*/\1/p')
			echo "${outcome:-error:$r} ${slot:--} $start $(date +%s%3N)" >> "$answers"
			if [ "$outcome" = won ]; then
				echo "$slot" >> "$out"
				{ sqlite_head "$store"; echo "SELECT anarchon_finish('$job', $slot, '$token');"; } |
					sqlite3 "$(sqlite_db "$store")" > /dev/null
			fi ;;
		cli)
			# (A redirection's word is expanded in the command's own process: name the file first.)
			local err=$out.err.$BASHPID
			"$AN" run --store "$(cli_store "$store")" --job "$job" --now --max_late_ms "$WINDOW" --verbose \
				-- sh -c 'echo "$ANARCHON_SLOT" >> "$1"' sh "$out" 2> "$err"
			r=$?
			# (The end is after the winner's command: still a bound of the decision.)
			outcome=$(sed -n 's/.*(manual slot [^)]*): \([a-z]*\).*/\1/p' "$err" | head -n 1)
			when=$(sed -n 's/.*(manual slot \([^)]*\)): .*/\1/p' "$err" | head -n 1)
			slot=-
			[ -z "$when" ] || slot=$(date -u -d "$when" +%s%3N)
			echo "${outcome:-exit-$r} $slot $start $(date +%s%3N)" >> "$answers" ;;
	esac
}

# batch HOST STORE JOB COUNT OUT ANSWERS AT: COUNT instances ask at AT (ms).
batch() {
	local host=$1 store=$2 job=$3 count=$4 out=$5 answers=$6 at=$7 pids=() i
	for i in $(seq 1 "$count"); do
		(sleep_until "$at"; ask "$host" "$store" "$job" "$out" "$answers") & pids+=($!)
	done
	wait "${pids[@]}"
	[ "$host" = pg ] && q -c "SELECT (extract(epoch FROM slot) * 1000)::bigint FROM rn_log WHERE job = '$job' ORDER BY slot" > "$out"
}

# judge NAME OUT ANSWERS COUNT BEFORE: COUNT callers asked at once, when OUT
# held BEFORE runs.  They must make one new run, every caller answered, the
# one new run's caller the only one told 'won', each manual slot run once.
#
# A caller may reach the store only after the window of that run (seconds
# late on a loaded machine): then its request is a new one, and it must win
# a run of its own.  That is allowed, but only as the store's clock shows
# it: each winner's slot is the second in which the store decided, which
# lies between the moment the caller began asking and the moment it had its
# answer, and each run's slot is at least the window after the one before
# (a request within max_late_ms of a run joins it).  A second run of a
# batch whose callers all had their answers within the window fails.
judge() {
	local name=$1 out=$2 answers=$3 count=$4 before=$5 problems=() runs new dup won bad late gaps
	runs=$(wc -l < "$out")
	new=$((runs - before))
	dup=$(sort "$out" | uniq -d | tr '\n' ' ')
	[ -z "$dup" ] || problems+=("a manual slot run twice: $dup")
	[ "$new" -ge 1 ] || problems+=("$new new runs, want 1")
	grep -qvE '^[0-9]+001$' "$out" && problems+=("a run on a slot that is not manual: $(tr '\n' ' ' < "$out")")
	[ "$(wc -l < "$answers")" -eq "$count" ] || problems+=("$(wc -l < "$answers") answers, want $count")
	won=$(grep -c '^won ' "$answers")
	[ "$won" -eq "$new" ] || problems+=("$won callers won, want one per new run ($new)")
	bad=$(grep -vE '^(won|running|done) [0-9]+ [0-9]+ [0-9]+$' "$answers" | head -n 3 | tr '\n' ';')
	[ -z "$bad" ] || problems+=("unexpected answers: $bad")
	# Each winner's slot: a run in OUT, decided while its caller asked.
	bad=$(awk 'FNR == NR { run[$1] = 1; next }
		$1 == "won" && (!($2 in run) || $2 - 1 < $3 - $3 % 1000 || $2 - 1 > $4) { printf "%s ", $0 }' "$out" "$answers")
	[ -z "$bad" ] || problems+=("a winner whose slot is not a run or not the second it asked in: $bad")
	gaps=$(sort -n "$out" | awk -v w="$WINDOW" 'NR > 1 && $1 - p < w { printf "%s after %s; ", $1, p } { p = $1 }')
	[ -z "$gaps" ] || problems+=("a new run within the window ($WINDOW ms) of the one before: $gaps")
	late=
	[ "$new" -le 1 ] || late="; $((new - 1)) caller(s) reached the store after the first run's window, on a loaded machine, and won their own run"
	if [ ${#problems[@]} -eq 0 ]; then
		ok "$name: $new run(s) of $count callers ($(cut -d' ' -f1 "$answers" | sort | uniq -c | tr -s ' \n' ' ')$late)"
	else
		not_ok "$name" "${problems[@]}" "runs: $(tr '\n' ' ' < "$out")" \
			"answers (outcome slot asked answered): $(tr '\n' ';' < "$answers" | head -c 600)" \
			"errors: $(cat "$out".err.* 2> /dev/null | grep -v 'manual slot\|finished' | head -c 400)"
	fi
}

# manual_state HOST STORE JOB SLOT: the run's state as anarchon_check says.
manual_state() {
	local host=$1 store=$2 job=$3 slot=$4
	case $host in
		pg) PGOPTIONS=$(pg_options "$store") q -c "SELECT anarchon_check('$job', $slot::bigint)" ;;
		sqlite) { sqlite_head "$store"; echo "SELECT anarchon_check('$job', $slot);"; } | sqlite3 "$(sqlite_db "$store")" ;;
		cli) "$AN" check --store "$(cli_store "$store")" --job "$job" --slot "$slot" 2>&1 ;;
	esac
}

# history_manual HOST STORE JOB: how many runs of JOB the database's table
# holds as manual (slot one millisecond past its second).
history_manual() {
	case $1/$2 in
		pg/* | */postgresql) q -c "SELECT count(*) FROM anarchon.runs WHERE job = '$3' AND slot = date_trunc('second', slot) + interval '1 millisecond'" ;;
		sqlite/*) sqlite3 "$tmp/sqlite-local.db" "SELECT count(*) FROM anarchon_runs WHERE job = '$3' AND slot % 1000 = 1" ;;
		cli/*) sqlite3 "$tmp/cli-local.db" "SELECT count(*) FROM anarchon_runs WHERE job = '$3' AND slot % 1000 = 1" ;;
	esac
}

# scheduled_claims HOST STORE JOB SLOT TOKEN...: one claim of SLOT per token, in turn.
scheduled_claims() {
	local host=$1 store=$2 job=$3 slot=$4 t
	shift 4
	for t in "$@"; do
		case $host in
			pg) PGOPTIONS=$(pg_options "$store") q -c "SELECT anarchon_claim('$job', $slot::bigint, '$t')" ;;
			sqlite) { sqlite_head "$store"; echo "SELECT anarchon_claim('$job', $slot, '$t');"; } | sqlite3 "$(sqlite_db "$store")" ;;
			cli) "$AN" claim --store "$(cli_store "$store")" --job "$job" --slot "$slot" --token "$t" --max_late_ms "$WINDOW" 2>&1 | cut -f1 ;;
		esac
	done | tr '\n' ' '
}

# scenario HOST STORE
scenario() {
	local host=$1 store=$2 job=rn-$1-$2 out answers at first second last runs s got
	out=$tmp/$job.out answers=$tmp/$job.answers
	: > "$out"
	: > "$answers"
	# 20 ms before a second ends: some callers ask in the next second.
	at=$(( ($(date +%s) + 2) * 1000 - 20 ))
	batch "$host" "$store" "$job" "$N" "$out" "$answers" "$at"
	judge "runnow: $host, $store store: $N callers at once" "$out" "$answers" "$N" 0
	first=$(sort -n "$out" | head -n 1)
	runs=$(wc -l < "$out")
	if [ -n "$first" ]; then
		got=$(manual_state "$host" "$store" "$job" "$first")
		check "runnow: $host, $store store: the manual run ($first) is finished succeeded (got '$got')" test "$got" = succeeded
	fi
	if [ "$store" != redis ]; then
		got=$(history_manual "$host" "$store" "$job")
		check "runnow: $host, $store store: the history holds the $runs manual run(s) (got '$got')" test "$got" = "$runs"
	fi

	# After the window: one more run, on a new slot.
	: > "$answers"
	# The window must end: this wait is the scenario.
	last=$(sort -n "$out" | tail -n 1)
	sleep_until $(( ${last:-0} + WINDOW + 300 ))
	at=$(( $(date +%s%3N) + 300 ))
	batch "$host" "$store" "$job" 4 "$out" "$answers" "$at"
	judge "runnow: $host, $store store: 4 callers after the window" "$out" "$answers" 4 "$runs"
	second=$(sort -n "$out" | sed -n "$((runs + 1))p")
	check "runnow: $host, $store store: the next run has its own slot ($last, $second)" \
		test -n "$second" -a "${second:-0}" -gt "${last:-0}"

	# The schedule's slot of this second is untouched by the manual runs.
	s=$(( $(date +%s) * 1000 ))
	got=$(scheduled_claims "$host" "$store" "$job" "$s" sched-a sched-b)
	check "runnow: $host, $store store: a scheduled claim of the current slot still wins, once (got '$got')" \
		test "$got" = "won running "
}

# ---------------------------------------------------------------- 16 at once, then the window

for host in pg sqlite cli; do
	for store in local redis; do
		scenario "$host" "$store"
	done
done
# The command through PostgreSQL: its anarchon_run_now decides, with the
# command's settings.
scenario cli postgresql

# ---------------------------------------------------------------- overlap skip

# A scheduled run holds a live lease: a run-now answers 'overlap' and
# nothing runs; once it is finished, a run-now wins.
s=$(( $(date +%s) * 1000 ))
out=$(q -c "SET anarchon.max_late_ms = $WINDOW" -c "SELECT anarchon_claim('rn-ov', $s::bigint, 'sched')" \
	-c "SELECT outcome FROM anarchon_run_now('rn-ov')" \
	-c "SELECT anarchon_finish('rn-ov', $s::bigint, 'sched')" \
	-c "SELECT outcome FROM anarchon_run_now('rn-ov')" | tr '\n' ' ')
check "runnow: pg, a run-now while a scheduled run is live answers overlap, then wins (got '$out')" \
	test "$out" = "won overlap t won "
out=$({ sqlite_head local; echo "SELECT anarchon_claim('rn-ov', $s, 'sched');"
	echo "SELECT json_extract(anarchon_run_now('rn-ov', 'now-a'), '\$.outcome');"
	echo "SELECT anarchon_finish('rn-ov', $s, 'sched');"
	echo "SELECT json_extract(anarchon_run_now('rn-ov', 'now-b'), '\$.outcome');"; } | sqlite3 "$tmp/sqlite-local.db" 2>&1 | tr '\n' ' ')
check "runnow: sqlite, the same (got '$out')" test "$out" = "won overlap 1 won "
# And the reverse: a scheduled claim while a manual run is live answers overlap.
out=$({ sqlite_head local; echo "SELECT json_extract(anarchon_run_now('rn-ov2', 'now-a'), '\$.outcome');"
	echo "SELECT anarchon_claim('rn-ov2', $(( $(date +%s) * 1000 )), 'sched');"; } | sqlite3 "$tmp/sqlite-local.db" 2>&1 | tr '\n' ' ')
check "runnow: sqlite, a scheduled claim while a manual run is live answers overlap (got '$out')" test "$out" = "won overlap "

# ---------------------------------------------------------------- rights (PostgreSQL)

out=$(q -v VERBOSITY=verbose -c "CREATE ROLE rn_owner" -c "CREATE ROLE rn_other" \
	-c "GRANT INSERT, SELECT ON rn_log TO rn_owner" \
	-c "SET ROLE rn_owner" -c "SELECT outcome FROM anarchon_run_now('rn-owned')" -c "RESET ROLE" \
	-c "SET ROLE rn_other" -c "SELECT outcome FROM anarchon_run_now('rn-owned')" 2>&1)
case $out in
	*won*42501*) ok "runnow: pg, a role without rights on the job is refused (42501)" ;;
	*) not_ok "runnow: pg, a role without rights on the job is refused (42501)" "$out" ;;
esac

# ---------------------------------------------------------------- stores that cannot, bad input

STREAM="${REDIS%%\?*}?strategy=stream-id&prefix=rn-sid"
out=$("$AN" run --store "$STREAM" --job rn-sid --now -- true 2>&1)
rc=$?
has "runnow: the command refuses run --now on Redis stream-id, naming the strategy" "$out" "cannot run a job now with strategy stream-id"
check "runnow: ... exit 78 (configuration)" test "$rc" = 78
out=$({ echo ".load $EXT"; echo "SELECT anarchon_config('store', '$STREAM');"; echo "SELECT anarchon_run_now('rn-sid');"; } | sqlite3 :memory: 2>&1)
has "runnow: sqlite refuses anarchon_run_now on Redis stream-id with a hint" "$out" "Redis with strategy=lease"
out=$(q -v VERBOSITY=verbose -c "CREATE SERVER rn_sid FOREIGN DATA WRAPPER anarchon OPTIONS (url '$STREAM')" \
	-c "SET anarchon.store = rn_sid" -c "SELECT anarchon_run_now('rn-sid')" 2>&1)
has "runnow: pg refuses anarchon_run_now on Redis stream-id (0A000)" "$out" "0A000"

out=$(q -v VERBOSITY=verbose -c "SELECT anarchon_run_now('bad job')")
has "runnow: pg refuses a bad job name (22023)" "$out" "22023"
has "runnow: ... saying the rule" "$out" "a job name is 1 to 128 bytes"
out=$(q -v VERBOSITY=verbose -c "SELECT anarchon_run_now(NULL)")
has "runnow: pg refuses a NULL job (22004)" "$out" "22004"
out=$(q -v VERBOSITY=verbose -c "SELECT anarchon_run_now('j', 'bad token')")
has "runnow: pg refuses a bad token (22023)" "$out" "22023"
out=$(q -v VERBOSITY=verbose -c "SET anarchon.max_late_ms = 500" -c "SELECT anarchon_run_now('j')")
has "runnow: pg refuses max_late_ms under a second" "$out" "max_late_ms (500) is too short to run a job now"
has "runnow: ... with a hint" "$out" "HINT:  Set max_late_ms to at least 1000."
out=$(q -v VERBOSITY=verbose -c "BEGIN" -c "SELECT anarchon_run_now('j')" -c "ROLLBACK")
has "runnow: pg refuses a run-now a ROLLBACK could undo (25001)" "$out" "25001"
out=$(q -v VERBOSITY=verbose -c "SELECT anarchon_claim('j', 4102444800001, 't')")
has "runnow: pg refuses a claim of a manual slot: only run-now claims one" "$out" "is not a whole second"

out=$(printf '.load %s\nSELECT anarchon_run_now(%s);\n' "$EXT" "'bad job'" | sqlite3 :memory: 2>&1)
has "runnow: sqlite refuses a bad job name" "$out" "anarchon_run_now: job name has byte 0x20"
out=$(printf '.load %s\nSELECT anarchon_run_now(42);\n' "$EXT" | sqlite3 :memory: 2>&1)
has "runnow: sqlite refuses a job that is not text" "$out" "anarchon_run_now: job must be text"
out=$(printf '.load %s\nSELECT anarchon_run_now(%s, %s);\n' "$EXT" "'j'" "'a b'" | sqlite3 :memory: 2>&1)
has "runnow: sqlite refuses a bad token" "$out" "anarchon_run_now: token has byte 0x20"
out=$(printf '.load %s\nSELECT anarchon_config(%s, 999);\nSELECT anarchon_run_now(%s);\n' "$EXT" "'max_late_ms'" "'j'" | sqlite3 :memory: 2>&1)
has "runnow: sqlite refuses max_late_ms under a second" "$out" "Set max_late_ms to at least 1000."
out=$(printf '.load %s\nSELECT anarchon_claim(%s, 4102444800001, %s);\n' "$EXT" "'j'" "'t'" | sqlite3 :memory: 2>&1)
has "runnow: sqlite refuses a claim of a manual slot" "$out" "is not a whole second"

for bad in "--now --slot now" "--now --schedule @hourly"; do
	# shellcheck disable=SC2086
	out=$("$AN" run --store "sqlite://$tmp/bad.db" --job j $bad -- true 2>&1)
	rc=$?
	has "runnow: the command refuses $bad" "$out" "give --now, --slot or --schedule, not two"
	check "runnow: ... exit 64" test "$rc" = 64
done
out=$("$AN" run --store "sqlite://$tmp/bad.db" --job 'bad job' --now -- true 2>&1)
rc=$?
has "runnow: the command refuses a bad job name" "$out" "job name has byte 0x20"
check "runnow: ... exit 64" test "$rc" = 64
out=$("$AN" run --store "sqlite://$tmp/bad.db" --job j --now --max_late_ms 999 -- true 2>&1)
rc=$?
has "runnow: the command refuses --max_late_ms under a second" "$out" "too short to run a job now"
check "runnow: ... exit 64" test "$rc" = 64
out=$("$AN" claim --store "sqlite://$tmp/bad.db" --job j --now 2>&1)
rc=$?
has "runnow: claim does not take --now" "$out" "claim does not take --now"
check "runnow: ... exit 64" test "$rc" = 64
out=$("$AN" run --store "sqlite://$tmp/bad.db" --job j --now -- /nonexistent/cmd 2>&1)
rc=$?
has "runnow: a command that does not exist wins nothing" "$out" "nothing was claimed"
check "runnow: ... exit 127" test "$rc" = 127
got=$(sqlite3 "$tmp/bad.db" "SELECT count(*) FROM anarchon_runs" 2>/dev/null || echo 0)
check "runnow: ... and no run was written (got '$got')" test "$got" = 0

# ---------------------------------------------------------------- the command under valgrind

vg() { an_valgrind "runnow valgrind" "$tmp/vg" "$@"; }
if have_valgrind "runnow valgrind"; then
	for store in local redis; do
		u=$(cli_store "$store")
		vg "run --now $store, won" 0 run --store "$u" --job vg-now --now -- true
		vg "run --now $store, done" 0 run --store "$u" --job vg-now --now -- true
		vg "run --now $store, a failing command" 3 run --store "$u" --job vg-now-fail --now -- sh -c 'exit 3'
	done
	vg "run --now on stream-id, refused" 78 run --store "$STREAM" --job vg-now --now -- true
fi

suite_end
