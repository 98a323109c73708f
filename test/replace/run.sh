#!/usr/bin/env bash
# run.sh — overlap 'replace' (doc/operating.md, "Overlap replace"): each slot
# won ends the job's earlier run that is still going.
#
# A 10 s command on a six-second schedule, under overlap 'replace' with a
# 3 s lease (a heartbeat every second).  Six seconds, not two: a wave whose
# sessions start late (a loaded machine, twenty processes at once) must still
# claim its own slot, not the next one.  At each of $WAVES slots, $PER
# instances per job start at the same moment, through the command (`anarchon
# run`, on a SQLite file, on Redis strategy=lease and on PostgreSQL's local
# store) and through PostgreSQL (CALL anarchon.run, on the local store and on
# Redis through a foreign server), all five side by side.  What must hold, counted from what the
# commands wrote and what the stores say:
#   - one winner per slot, and only the slots of the waves;
#   - every run but the last was stopped after the next slot was won and
#     before its 10 s were up: the command got SIGTERM (its trap wrote a
#     line, and `anarchon run` exited 143), or anarchon.run's command was
#     cancelled, its effects rolled back and its run logged 'replaced';
#   - those runs are 'replaced' in the store, the last one 'succeeded', and
#     a finish sent late by a replaced run's token is refused (fenced).
# Then the same rules call by call in SQLite's and PostgreSQL's functions;
# 'replace' refused on a won/lost store (Redis strategy=stream-id) by every
# host; a bad value refused listing the three; and the command's replaced
# path under valgrind.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$TEST_ROOT/controls.sh"
SCHED='*/6 * * * * *'
PERIOD=6000
WAVES=4
PER=4
LEASE=3000

built_or_end replace sqlite cli || exit 1

redis_and_pg_start replace "$tmp" rp rp_redis rp_effects || { suite_end; exit; }
WONLOST="${REDIS%%\?*}?strategy=stream-id&prefix=wl"
q() { psql -X -A -t -q -v ON_ERROR_STOP=1 "$@" 2>&1; }
# rp_work: the command of anarchon.run, 10 s long; its row stays only if it ends.
if ! out=$(q -c "CREATE SERVER rp_wonlost FOREIGN DATA WRAPPER anarchon OPTIONS (url '$WONLOST')" \
	-c "CREATE FUNCTION rp_work(job text) RETURNS void LANGUAGE sql AS
		\$\$ INSERT INTO rp_effects VALUES (job, current_setting('anarchon_run.slot')::timestamptz);
		    SELECT pg_sleep(10) \$\$"); then
	not_ok "replace: a won/lost foreign server and the command" "$out"
	suite_end
	exit
fi

# The command of `anarchon run`: says when it starts, and when it ends or is stopped.
cat > "$tmp/job.sh" <<'EOF'
#!/bin/sh
out=$1
echo "start $ANARCHON_SLOT $ANARCHON_TOKEN" >> "$out"
trap 'kill $p 2> /dev/null; echo "term $ANARCHON_SLOT $(date +%s%3N)" >> "$out"; exit 143' TERM
# The job: it works 10 s, or until it is replaced (TERM).
sleep 10 &
p=$!
wait $p
echo "end $ANARCHON_SLOT" >> "$out"
EOF
chmod +x "$tmp/job.sh"

cli_store() {
	case $1 in
		redis) echo "$REDIS" ;;
		pg) echo "postgresql://$PGUSER@127.0.0.1:$PGPORT/postgres" ;;
		*) echo "sqlite://$tmp/cli-local.db" ;;
	esac
}
pg_opts() {
	local o="-c anarchon.overlap=replace -c anarchon.lease_ms=$LEASE"
	[ "$1" = redis ] && o="$o -c anarchon.store=rp_redis"
	echo "$o"
}

# instance HOST STORE K I: one instance of wave K; its exit status into a file.
instance() {
	local host=$1 store=$2 k=$3 i=$4 j=rp-$1-$2 rc
	if [ "$host" = cli ]; then
		"$AN" run --store "$(cli_store "$store")" --job "$j" --schedule "$SCHED" --overlap replace \
			--lease_ms "$LEASE" --kill-after 3000 -- "$tmp/job.sh" "$tmp/$j.out" > /dev/null 2> "$tmp/$j.err.$k.$i"
		rc=$?
	else
		PGOPTIONS=$(pg_opts "$store") q -c "CALL anarchon.run('$j', '$SCHED', 'SELECT rp_work(''$j'')')" \
			> "$tmp/$j.err.$k.$i"
		rc=$?
	fi
	echo "$rc" > "$tmp/$j.rc.$k.$i"
}

# ---------------------------------------------------------------- the waves

COMBOS="cli:local cli:redis cli:pg pg:local pg:redis"
now=$(date +%s)
base=$(( (now + 2 + 6 - (now + 2) % 6) * 1000 ))   # a slot of the schedule, at least two seconds away
pids=()
for k in $(seq 0 $((WAVES - 1))); do
	sleep_until $((base + k * PERIOD + 200))
	for c in $COMBOS; do
		for i in $(seq 1 "$PER"); do instance "${c%:*}" "${c#*:}" "$k" "$i" & pids+=($!); done
	done
done
wait "${pids[@]}"
step "replace: $WAVES waves of $PER instances per host and store done after $(( ($(date +%s%3N) - base) / 1000 )) s"
last=$((base + (WAVES - 1) * PERIOD))

# statuses JOB: the exit statuses of its instances, sorted and counted ("12x0 3x143").
statuses() { cat "$tmp/$1".rc.* | sort -n | uniq -c | awk '{printf "%sx%s ", $1, $2}'; }

# judge_cli STORE: the command's waves, from the lines job.sh wrote.
judge_cli() {
	local store=$1 j=rp-cli-$1 out=$tmp/rp-cli-$1.out s k problems=() n tok got want u
	u=$(cli_store "$store")
	n=$(grep -c '^start ' "$out")
	[ "$n" = "$WAVES" ] || problems+=("$n commands started, want $WAVES (one per slot)")
	for k in $(seq 0 $((WAVES - 1))); do
		s=$((base + k * PERIOD))
		[ "$(grep -c "^start $s " "$out")" = 1 ] || problems+=("slot $s: $(grep -c "^start $s " "$out") winners")
		if [ "$k" -lt $((WAVES - 1)) ]; then
			grep -q "^term $s " "$out" || problems+=("slot $s: its command got no SIGTERM")
			grep -qx "end $s" "$out" && problems+=("slot $s: its command ran its 10 s to the end")
			# Stopped once the next slot had begun (its winner may not have written its line yet).
			[ "$(awk -v s="$s" '$1 == "term" && $2 == s {print $3}' "$out")" -ge $((s + PERIOD)) ] 2> /dev/null ||
				problems+=("slot $s: stopped before the next slot began")
			want=replaced
		else
			grep -qx "end $s" "$out" || problems+=("slot $s (the last): its command did not end by itself")
			grep -q "^term $s " "$out" && problems+=("slot $s (the last): its command got SIGTERM")
			want=succeeded
		fi
		got=$("$AN" check --store "$u" --job "$j" --slot "$s" 2>&1)
		[ "$got" = "$want" ] || problems+=("slot $s: check says '$got', want '$want'")
	done
	got=$(statuses "$j")
	[ "$got" = "$((WAVES * PER - WAVES + 1))x0 $((WAVES - 1))x143 " ] ||
		problems+=("exit statuses $got, want $((WAVES * PER - WAVES + 1))x0 $((WAVES - 1))x143 (SIGTERM)")
	n=$(cat "$tmp/$j".err.* | grep -c "lost the lease of $j at .*(replaced: a later slot of the job won under overlap 'replace')")
	[ "$n" = $((WAVES - 1)) ] || problems+=("$n stderr lines say the run was replaced, want $((WAVES - 1))")
	n=$(cat "$tmp/$j".err.* | grep -c "finish of $j at .* refused: fenced")
	[ "$n" = $((WAVES - 1)) ] || problems+=("$n stderr lines say the finish was refused, want $((WAVES - 1))")
	if [ ${#problems[@]} -eq 0 ]; then
		ok "replace: the command, $store store: $WAVES slots, one winner each; each new winner stopped the previous command with SIGTERM (exit 143), its run replaced and its finish refused; the last succeeded"
	else
		not_ok "replace: the command, $store store" "${problems[@]}" "lines: $(tr '\n' '|' < "$out")" \
			"stderr: $(cat "$tmp/$j".err.* | head -c 800)"
	fi
	# A finish sent late by the first slot's token, from outside: refused.
	s=$base
	tok=$(awk -v s="$s" '$1 == "start" && $2 == s {print $3}' "$out")
	an_call "$tmp/late.out" "$tmp/late.err" finish --store "$u" --job "$j" --slot "$s" --token "${tok:-none}"
	check "replace: the command, $store store: a late finish of a replaced run's token exits 1 and says fenced" \
		test "$RC" = 1 -a "$(cat "$tmp/late.out")" = fenced -a -n "$tok"
}

# judge_pg STORE: anarchon.run's waves, from anarchon.run_log, rp_effects and anarchon_check.
judge_pg() {
	local store=$1 j=rp-pg-$1 problems=() got want rows
	rows=$(q -c "SELECT (extract(epoch FROM slot) * 1000)::bigint, count(*) FILTER (WHERE outcome = 'won'),
			string_agg(status, ',') FILTER (WHERE outcome = 'won'),
			bool_and(error LIKE '%keep-alive cancelled the command%later slot%replace%') FILTER (WHERE status = 'replaced'),
			max(extract(epoch FROM finished_at - started_at)) FILTER (WHERE outcome = 'won') < 9
		FROM anarchon.run_log WHERE job = '$j' GROUP BY 1 ORDER BY 1" | tr '\n' ' ')
	# The slots the waves won: base + k * 6 s, or a wave's slot later when a
	# loaded machine started its sessions past the next slot's start.
	local slots s k=0 last_won
	slots=$(printf '%s\n' $rows | cut -d'|' -f1)
	last_won=$(printf '%s\n' $slots | tail -n 1)
	want=""
	for s in $slots; do
		k=$((k + 1))
		if [ "$k" -lt "$WAVES" ]; then want="$want$s|1|replaced|t|t "
		else want="$want$s|1|succeeded||f "; fi
	done
	[ "$k" = "$WAVES" ] && [ "$rows" = "$want" ] ||
		problems+=("anarchon.run_log per slot (slot|winners|status|cancelled by the keep-alive|under 9 s), $WAVES slots:" "got  $rows" "want $want")
	got=$(q -c "SELECT (extract(epoch FROM slot) * 1000)::bigint FROM rp_effects WHERE job = '$j'")
	[ "$got" = "$last_won" ] || problems+=("the command's effects: slots '$got', want only the last, $last_won (a cancelled command's are rolled back)")
	got=$(PGOPTIONS=$(pg_opts "$store") q -c "SELECT string_agg(anarchon_check('$j', s::bigint), ',' ORDER BY s)
		FROM unnest('{$(printf '%s\n' $slots | paste -sd,)}'::bigint[]) AS s")
	want=$(printf 'replaced,%.0s' $(seq 2 "$WAVES"))succeeded
	[ "$got" = "$want" ] || problems+=("anarchon_check of the slots: $got, want $want")
	got=$(statuses "$j")
	[ "$got" = "$((WAVES * PER - WAVES + 1))x0 $((WAVES - 1))x1 " ] ||
		problems+=("psql statuses $got, want $((WAVES * PER - WAVES + 1))x0 $((WAVES - 1))x1 (the replaced calls raise)")
	got=$(cat "$tmp/$j".err.* | grep -c "was replaced by a later slot while its command ran")
	[ "$got" = $((WAVES - 1)) ] || problems+=("$got calls raised 'was replaced by a later slot', want $((WAVES - 1))")
	if [ ${#problems[@]} -eq 0 ]; then
		ok "replace: anarchon.run, $store store: $WAVES slots, one winner each; each new winner cancelled the previous command (effects rolled back, logged 'replaced', anarchon_check 'replaced'); the last succeeded"
	else
		not_ok "replace: anarchon.run, $store store" "${problems[@]}" "errors: $(cat "$tmp/$j".err.* | head -c 800)"
	fi
}

for store in local redis pg; do judge_cli "$store"; done
for store in local redis; do judge_pg "$store"; done
out=$(q -c "SELECT anarchon_finish('rp-pg-local', slot, token) FROM anarchon.runs
	WHERE job = 'rp-pg-local' AND slot = to_timestamp($base / 1000.0)")
check "replace: anarchon.run, local store: a late finish of a replaced run's token is refused (false)" test "$out" = f

# ---------------------------------------------------------------- call by call

# The same rules through the functions: a, then b a slot later, replace a.
S1=$(( ($(date +%s) + 5) * 1000 ))
S2=$((S1 + 1000)) S3=$((S1 + 2000))
WANT_CALLS="won|won|replaced|0|0|done|running|overlap"
for store in local redis; do
	if [ "$store" = redis ]; then head="SELECT anarchon_config('store', '$REDIS');" db=":memory:"
	else head="" db="$tmp/sqlite-calls.db"; fi
	j=calls-sqlite-$store
	got=$(sqlite3 "$db" 2>&1 <<EOF | tr '\n' '|'
.load $EXT
.output /dev/null
$head
SELECT anarchon_config('overlap', 'replace');
.output stdout
SELECT anarchon_claim('$j', $S1, 'a');
SELECT anarchon_claim('$j', $S2, 'b');
SELECT anarchon_check('$j', $S1);
SELECT anarchon_heartbeat('$j', $S1, 'a');
SELECT anarchon_finish('$j', $S1, 'a');
SELECT anarchon_claim('$j', $S1, 'c');
SELECT anarchon_check('$j', $S2);
.output /dev/null
SELECT anarchon_config('overlap', 'skip');
.output stdout
SELECT anarchon_claim('$j', $S3, 'd');
EOF
)
	check "replace: sqlite, $store store: claim, claim of the next slot, check, heartbeat, finish, claim again, skip: $got" \
		test "$got" = "$WANT_CALLS|"
	j=calls-pg-$store
	got=$(PGOPTIONS=$(pg_opts "$store") q -c "SELECT anarchon_claim('$j', $S1::bigint, 'a')" \
		-c "SELECT anarchon_claim('$j', $S2::bigint, 'b')" -c "SELECT anarchon_check('$j', $S1::bigint)" \
		-c "SELECT anarchon_heartbeat('$j', $S1::bigint, 'a')::int" \
		-c "SELECT anarchon_finish('$j', $S1::bigint, 'a')::int" \
		-c "SELECT anarchon_claim('$j', $S1::bigint, 'c')" -c "SELECT anarchon_check('$j', $S2::bigint)" \
		-c "SET anarchon.overlap = skip" -c "SELECT anarchon_claim('$j', $S3::bigint, 'd')" | tr '\n' '|')
	check "replace: pg, $store store: the same calls: $got" test "$got" = "$WANT_CALLS|"
done
# A manual run is a win like any other: under replace it ends the run still going.
S=$(( $(date +%s) * 1000 ))
got=$(printf ".load %s\nSELECT anarchon_config('overlap', 'replace');\nSELECT anarchon_claim('rn', %s, 'a');\nSELECT anarchon_run_now('rn', 'm') ->> 'outcome';\nSELECT anarchon_check('rn', %s);\n" \
	"$EXT" "$S" "$S" | sqlite3 "$tmp/sqlite-calls.db" 2>&1 | tail -n 3 | tr '\n' '|')
check "replace: sqlite: a manual run (anarchon_run_now) replaces the running run: $got" test "$got" = "won|won|replaced|"
got=$(q -c "SELECT runs FROM anarchon.runs_by_state() WHERE job = 'calls-pg-local' AND state = 'replaced'")
check "replace: anarchon.runs_by_state counts the replaced run ($got)" test "$got" = 1

# A file whose anarchon_runs was made before 'replaced' existed: the first
# call migrates it (its state CHECK rebuilt), and replace then works there.
sqlite3 "$tmp/old.db" "CREATE TABLE anarchon_runs (job TEXT NOT NULL, slot INTEGER NOT NULL,
	attempt INTEGER NOT NULL, token TEXT NOT NULL,
	state TEXT NOT NULL CHECK (state IN ('running', 'succeeded', 'failed', 'interrupted')),
	lease_until INTEGER NOT NULL, claimed_at INTEGER NOT NULL, finished_at INTEGER,
	PRIMARY KEY (job, slot)) WITHOUT ROWID"
got=$(printf ".load %s\nSELECT anarchon_config('overlap', 'replace');\nSELECT anarchon_claim('old', %s, 'a');\nSELECT anarchon_claim('old', %s, 'b');\n" \
	"$EXT" "$S1" "$S2" | sqlite3 "$tmp/old.db" 2>&1)
check "replace: sqlite, a table made before 'replaced': migrated, the second claim wins ($got)" \
	test "$(printf '%s' "$got" | tr '\n' '|')" = "replace|won|won"
check "replace: ... and the first run is replaced" \
	test "$(sqlite3 "$tmp/old.db" "SELECT group_concat(state, ',') FROM (SELECT state FROM anarchon_runs ORDER BY slot)")" = "replaced,running"

# ---------------------------------------------------------------- refused

NEEDS="overlap 'replace' needs a store with leases"
S=$(( $(date +%s) * 1000 ))
out=$(q -v VERBOSITY=verbose -c "SET anarchon.store = rp_wonlost" -c "SET anarchon.overlap = replace" \
	-c "SELECT anarchon_claim('wl', $S::bigint, 't')")
has "replace: pg refuses 'replace' on a won/lost store (0A000)" "$out" "0A000"
has "replace: ... saying it needs a store with leases" "$out" "$NEEDS"
has "replace: ... with a hint" "$out" "Use a lease store"
out=$(printf ".load %s\nSELECT anarchon_config('store', '%s');\nSELECT anarchon_config('overlap', 'replace');\nSELECT anarchon_claim('wl', %s, 't');\n" \
	"$EXT" "$WONLOST" "$S" | sqlite3 :memory: 2>&1)
has "replace: sqlite refuses 'replace' on a won/lost store" "$out" "$NEEDS"
an_call "$tmp/wl.out" "$tmp/wl.err" run --store "$WONLOST" --job wl --schedule "$SCHED" --overlap replace -- true
has "replace: the command refuses 'replace' on a won/lost store" "$(cat "$tmp/wl.err")" "$NEEDS"
check "replace: ... with exit 78, one line, nothing run" test "$RC" = 78 -a -s "$tmp/wl.err" -a ! -s "$tmp/wl.out"
check "replace: ... and one error line" one_error_line "$tmp/wl.err"

ALLOWED="allowed values are 'skip', 'allow' and 'replace'"
out=$(q -v VERBOSITY=verbose -c "SELECT anarchon_token()" -c "SET anarchon.overlap = sometimes")
has "replace: pg refuses overlap 'sometimes' (22023)" "$out" "22023"
has "replace: ... listing the three values" "$out" "$ALLOWED"
out=$(printf ".load %s\nSELECT anarchon_config('overlap', 'sometimes');\n" "$EXT" | sqlite3 :memory: 2>&1)
has "replace: sqlite refuses overlap 'sometimes', listing the three values" "$out" "$ALLOWED"
an_call "$tmp/bad.out" "$tmp/bad.err" claim --store "sqlite://$tmp/bad.db" --job j --slot "$S" --token t --overlap sometimes
has "replace: the command refuses --overlap sometimes, listing the three values" "$(cat "$tmp/bad.err")" "$ALLOWED"
check "replace: ... with exit 64" test "$RC" = 64

# ---------------------------------------------------------------- valgrind

# A run under valgrind is replaced by a claim of the next slot: its command
# gets SIGTERM, its finish is refused, it exits 143, with no leak.
if have_valgrind "replace valgrind"; then
	for store in local redis; do
		u=$(cli_store "$store")
		S=$(( ($(date +%s) + 1) * 1000 ))
		: > "$tmp/vg-$store.out"
		an_valgrind "replace valgrind" "$tmp/vg" "run $store, replaced" 143 run --store "$u" --job "vg-$store" --slot "$S" \
			--overlap replace --lease_ms 6000 --kill-after 3000 -- "$tmp/job.sh" "$tmp/vg-$store.out" > "$tmp/vg-$store.tap" &
		vpid=$!
		wait_grep "$tmp/vg-$store.out" '^start ' 30 || true
		"$AN" claim --store "$u" --job "vg-$store" --slot $((S + 1000)) --token later --overlap replace > /dev/null
		wait "$vpid"
		cat "$tmp/vg-$store.tap"
		grep -q '^not ok' "$tmp/vg-$store.tap" && T_FAILED=$((T_FAILED + 1))
		check "replace valgrind: run $store: the command got SIGTERM" grep -q "^term $S " "$tmp/vg-$store.out"
	done
fi

suite_end
