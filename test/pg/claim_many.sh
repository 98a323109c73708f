# claim_many.sh — anarchon_claim_many against the suite's server (sourced by
# run.sh, after CREATE EXTENSION).
#
#   pg_claim_many_contention PROCS SLOTS JOBS
#       PROCS psql clients, each claiming JOBS jobs per slot for SLOTS slots
#       with one claim_many per slot, the array shuffled per client and slot:
#       exactly one won per (job, slot), every other row running, no error.
#   pg_claim_many_deadlock ROUNDS
#       two clients, one with the jobs in order and one reversed, claiming
#       ROUNDS slots each at the same time: no deadlock (40P01), no error.
#   pg_claim_many_errors
#       a bad name, a job of another role, a NULL element and a duplicate
#       beside jobs that win: one row each, the winners stored; whole-call
#       errors with anarchon_claim's SQLSTATEs.
#   pg_claim_many_same
#       the outcome of every state of the decision table is anarchon_claim's.

# psql that prints rows as a|b|c and stops at the first error.
cm_psql() { psql -X -A -t -q -F'|' -v ON_ERROR_STOP=1 "$@"; }

pg_claim_many_contention() {
	local procs=$1 slots=$2 jobs=$3 dir base p s pids=() bad=0 all
	dir=$(t_tmpdir)
	base=$(( ($(date +%s) + 900) * 1000 ))   # slots in the future: never late
	for p in $(seq 1 "$procs"); do
		for s in $(seq 0 $((slots - 1))); do
			all=$(seq 1 "$jobs" | shuf | sed "s/^/'cm/" | sed "s/\$/'/" | paste -sd, -)
			echo "SELECT job, $((base + s * 1000)), outcome, 'p$p' FROM anarchon_claim_many(ARRAY[$all], $((base + s * 1000))::bigint, 'p$p');"
		done > "$dir/claims.$p.sql"
	done
	for p in $(seq 1 "$procs"); do
		PGOPTIONS="-c anarchon.overlap=allow" psql -X -A -t -q -F'|' -v ON_ERROR_STOP=0 \
			-f "$dir/claims.$p.sql" > "$dir/out.$p" 2> "$dir/err.$p" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
	check "claim_many contention: $procs clients exited cleanly" test "$bad" -eq 0
	check "claim_many contention: no client saw an error" bash -c "! cat '$dir'/err.* | grep -m 5 ."
	check "claim_many contention: one row per job and call ($((procs * slots * jobs)))" \
		test "$(cat "$dir"/out.* | grep -c '|')" -eq $((procs * slots * jobs))
	cat "$dir"/out.* | awk -F'|' '$3 == "won" { print $1 "|" $2 "|" $4 }' | sort > "$dir/winners"
	check "claim_many contention: exactly one won for each of $((slots * jobs)) (job, slot)" \
		bash -c "test \$(cut -d'|' -f1,2 '$dir/winners' | sort -u | wc -l) -eq $((slots * jobs)) &&
			test \$(wc -l < '$dir/winners') -eq $((slots * jobs))"
	check "claim_many contention: every other row answered running" \
		bash -c "! cat '$dir'/out.* | awk -F'|' '\$3 != \"won\" && \$3 != \"running\"' | grep -m 5 ."
	cm_psql -c "SELECT job, (extract(epoch FROM slot) * 1000)::bigint, token
		FROM anarchon.runs WHERE job ~ '^cm[0-9]+\$' AND slot >= to_timestamp($base / 1000.0)" |
		sort > "$dir/stored"
	diff_ok "claim_many contention: the stored run of each (job, slot) names its one winner" \
		"$dir/winners" "$dir/stored"
}

pg_claim_many_deadlock() {
	local rounds=$1 dir base s fwd rev pa pb bad=0
	dir=$(t_tmpdir)
	base=$(( ($(date +%s) + 1800) * 1000 ))
	fwd=$(seq -w 1 12 | sed "s/^/'dl/; s/\$/'/" | paste -sd, -)
	rev=$(seq -w 12 -1 1 | sed "s/^/'dl/; s/\$/'/" | paste -sd, -)
	for s in $(seq 0 $((rounds - 1))); do
		echo "SELECT count(*) FILTER (WHERE outcome = 'won') || '|' || count(*) FILTER (WHERE outcome IN ('won', 'running')) || '|' || coalesce(string_agg(detail, '; '), '') FROM anarchon_claim_many(ARRAY[$fwd], $((base + s * 1000))::bigint, 'fwd');"
	done > "$dir/a.sql"
	for s in $(seq 0 $((rounds - 1))); do
		echo "SELECT count(*) FILTER (WHERE outcome = 'won') || '|' || count(*) FILTER (WHERE outcome IN ('won', 'running')) || '|' || coalesce(string_agg(detail, '; '), '') FROM anarchon_claim_many(ARRAY[$rev], $((base + s * 1000))::bigint, 'rev');"
	done > "$dir/b.sql"
	# deadlock_timeout short: a deadlock, if the order allowed one, is found fast.
	PGOPTIONS="-c anarchon.overlap=allow -c deadlock_timeout=10ms" psql -X -A -t -q -v ON_ERROR_STOP=0 \
		-f "$dir/a.sql" > "$dir/a.out" 2> "$dir/a.err" & pa=$!
	PGOPTIONS="-c anarchon.overlap=allow -c deadlock_timeout=10ms" psql -X -A -t -q -v ON_ERROR_STOP=0 \
		-f "$dir/b.sql" > "$dir/b.out" 2> "$dir/b.err" & pb=$!
	wait "$pa" || bad=1
	wait "$pb" || bad=1
	check "claim_many deadlock: both clients exited cleanly" test "$bad" -eq 0
	check "claim_many deadlock: no error (40P01 or other) in $rounds rounds of reversed arrays" \
		bash -c "! cat '$dir'/a.err '$dir'/b.err | grep -m 5 ."
	# A deadlock inside the statement would be one job's error row (its
	# subtransaction is the victim), not an error of the statement.
	check "claim_many deadlock: no job's row reported a deadlock" \
		bash -c "! cat '$dir'/a.out '$dir'/b.out | grep -m 5 -i deadlock"
	check "claim_many deadlock: all 12 rows of each of the $((2 * rounds)) calls won or running" \
		test "$(cat "$dir"/a.out "$dir"/b.out | grep -c '^[0-9]*|12|$')" -eq $((2 * rounds))
	# Each round's 12 jobs were won once, by one side or the other.
	check "claim_many deadlock: 12 wins per round in all ($((rounds * 12)))" \
		test "$(cat "$dir"/a.out "$dir"/b.out | awk -F'|' '{ n += $1 } END { print n + 0 }')" -eq $((rounds * 12))
}

pg_claim_many_errors() {
	local slot=$(( ($(date +%s) + 2700) * 1000 )) out
	cm_psql > /dev/null <<'SQL' || not_ok "claim_many errors: set up the roles"
DROP ROLE IF EXISTS cm_other;
DROP ROLE IF EXISTS cm_user;
CREATE ROLE cm_other LOGIN;
CREATE ROLE cm_user LOGIN;
GRANT USAGE ON SCHEMA anarchon TO cm_other, cm_user;
SQL
	cm_psql -U cm_other -c "SELECT anarchon_claim('cm-theirs', $slot::bigint, 'other')" > /dev/null ||
		not_ok "claim_many errors: cm_other claims its job"
	out=$(cm_psql -U cm_user -c "SELECT coalesce(job, '<null>'), outcome, coalesce(detail, '')
		FROM anarchon_claim_many(ARRAY['cm-b', 'bad job', NULL, 'cm-theirs', 'cm-a', 'cm-b', NULL],
			$slot::bigint, 'mine')" 2>&1)
	same "claim_many errors: one row per distinct job, the errors beside the winners" \
		"<null>|error|job must not be NULL
bad job|error|job name has byte 0x20 at position 4
cm-a|won|
cm-b|won|
cm-theirs|error|permission denied for job \"cm-theirs\"" "$out"
	same "claim_many errors: the winners are stored, the failed jobs untouched" "cm-a|mine
cm-b|mine
cm-theirs|other" "$(cm_psql -c "SELECT job, token FROM anarchon.runs
		WHERE slot = to_timestamp($slot / 1000.0) AND job LIKE 'cm-%' ORDER BY job")"
	# The whole call's errors: anarchon_claim's SQLSTATEs, nothing claimed.
	cm_state() { psql -X -q -v VERBOSITY=sqlstate -v ON_ERROR_STOP=1 -c "$1" 2>&1 | sed -n 's/^ERROR:  \([0-9A-Z]\{5\}\).*/\1/p' | head -n 1; }
	same "claim_many errors: NULL jobs is 22004" 22004 \
		"$(cm_state "SELECT * FROM anarchon_claim_many(NULL, $slot::bigint, 'tok')")"
	same "claim_many errors: NULL slot is 22004 like anarchon_claim" \
		"$(cm_state "SELECT anarchon_claim('cm-x', NULL::bigint, 'tok')")" \
		"$(cm_state "SELECT * FROM anarchon_claim_many(ARRAY['cm-x'], NULL::bigint, 'tok')")"
	same "claim_many errors: empty token is 22023 like anarchon_claim" \
		"$(cm_state "SELECT anarchon_claim('cm-x', $slot::bigint, '')")" \
		"$(cm_state "SELECT * FROM anarchon_claim_many(ARRAY['cm-x'], $slot::bigint, '')")"
	same "claim_many errors: a slot that is not a whole second is 22023" 22023 \
		"$(cm_state "SELECT * FROM anarchon_claim_many(ARRAY['cm-x'], now(), 'tok')")"
	same "claim_many errors: inside BEGIN without the opt-in is 25001" 25001 \
		"$(cm_state "BEGIN; SELECT * FROM anarchon_claim_many(ARRAY['cm-x'], $slot::bigint, 'tok'); COMMIT")"
	same "claim_many errors: a two-dimensional array is refused" 2202E \
		"$(cm_state "SELECT * FROM anarchon_claim_many(ARRAY[['cm-x'], ['cm-y']], $slot::bigint, 'tok')")"
	same "claim_many errors: none of those calls claimed cm-x" 0 \
		"$(cm_psql -c "SELECT count(*) FROM anarchon.runs WHERE job = 'cm-x'")"
	same "claim_many errors: an empty array answers no row" 0 \
		"$(cm_psql -c "SELECT count(*) FROM anarchon_claim_many('{}'::text[], $slot::bigint, 'tok')")"
	same "claim_many errors: the timestamptz form answers too" "cm-t|won" \
		"$(cm_psql -c "SELECT job, outcome FROM anarchon_claim_many(ARRAY['cm-t'], to_timestamp($slot / 1000), 'tok')")"
}

# Two sets of jobs, x-* and y-*, are brought to the same states (fresh, a
# run of another token, done, paused, overlapped by a live earlier run,
# late); claim_many claims the x-* and anarchon_claim each y-*: the same
# outcomes.  Then a second claim_many of another token on the x-*, and
# anarchon_claim of that token on each: the same again.
pg_claim_many_same() {
	local now slot late out_many out_one
	now=$(( $(date +%s) * 1000 ))
	slot=$(( now + 3600 * 1000 ))
	late=$(( now - 3600 * 1000 ))
	cm_psql > /dev/null <<SQL || not_ok "claim_many same: set up the states"
SET anarchon.overlap = 'skip';
SELECT anarchon_claim(s || '-running', $slot::bigint, 'other') FROM unnest(ARRAY['x', 'y']) s;
SELECT anarchon_claim(s || '-done', $slot::bigint, 'other'), anarchon_finish(s || '-done', $slot::bigint, 'other')
	FROM unnest(ARRAY['x', 'y']) s;
SELECT anarchon_pause(s || '-paused') FROM unnest(ARRAY['x', 'y']) s;
SELECT anarchon_claim(s || '-overlap', $((slot - 60000))::bigint, 'other') FROM unnest(ARRAY['x', 'y']) s;
SQL
	out_many=$(cm_psql -c "SET anarchon.overlap = 'skip'" -c "SELECT substr(job, 3), outcome FROM anarchon_claim_many(
		ARRAY['x-fresh', 'x-running', 'x-done', 'x-paused', 'x-overlap'], $slot::bigint, 'tok')" 2>&1)
	out_one=$(cm_psql -c "SET anarchon.overlap = 'skip'" -c "SELECT substr(j, 3), anarchon_claim(j, $slot::bigint, 'tok')
		FROM unnest(ARRAY['y-done', 'y-fresh', 'y-overlap', 'y-paused', 'y-running']) j ORDER BY j" 2>&1)
	same "claim_many same: every state answers as anarchon_claim" "$out_one" "$out_many"
	same "claim_many same: the states were all there" "done|done
fresh|won
overlap|overlap
paused|paused
running|running" "$out_many"
	out_many=$(cm_psql -c "SELECT substr(job, 3), outcome FROM anarchon_claim_many(
		ARRAY['x-fresh', 'x-running', 'x-done', 'x-paused', 'x-overlap'], $slot::bigint, 'tok2')" 2>&1)
	out_one=$(cm_psql -c "SELECT substr(j, 3), anarchon_claim(j, $slot::bigint, 'tok2')
		FROM unnest(ARRAY['x-done', 'x-fresh', 'x-overlap', 'x-paused', 'x-running']) j ORDER BY j" 2>&1)
	same "claim_many same: a second claim_many answers as anarchon_claim on the same slot" "$out_one" "$out_many"
	same "claim_many same: late as anarchon_claim" \
		"$(cm_psql -c "SELECT anarchon_claim('y-late', $late::bigint, 'tok')")" \
		"$(cm_psql -c "SELECT outcome FROM anarchon_claim_many(ARRAY['x-late'], $late::bigint, 'tok')")"
}
