# contention.sh — many OS processes claim the same slots at once (sourced by
# run.sh).  Each process is a psql client with its own connection and token
# that claims every slot of every job, one autocommit statement per claim, in
# its own random order.  The check is the guarantee itself: exactly one `won`
# per slot, no errors, and the stored run of each slot names that winner.
#
# pg_contention NAME PROCS JOBS SLOTS_PER_JOB [PGOPTIONS]
# With PG_CONTENTION_REMOTE=1 (claims decided in a remote store) the stored
# runs are not looked up in anarchon.runs.
pg_contention() {
	local name=$1 procs=$2 jobs=$3 per=$4 opts=${5:-} dir base p j i pids=() bad=0
	dir=$(t_tmpdir)
	base=$(( ($(date +%s) + 600) * 1000 ))   # slots in the future: never late
	for j in $(seq 1 "$jobs"); do
		for i in $(seq 0 $((per - 1))); do
			echo "c$j $((base + i * 1000))"
		done
	done > "$dir/slots"
	for p in $(seq 1 "$procs"); do
		shuf "$dir/slots" | awk -v tok="proc-$p" \
			'{ printf "SELECT %s|%s|'"'"' || anarchon_claim('"'"'%s'"'"', %s::bigint, '"'"'%s'"'"') || '"'"'|%s'"'"';\n", "'"'"'" $1, $2, $1, $2, tok, tok }' \
			> "$dir/claims.$p.sql"
	done
	for p in $(seq 1 "$procs"); do
		PGOPTIONS="$opts" psql -X -A -t -q -v ON_ERROR_STOP=0 -f "$dir/claims.$p.sql" \
			> "$dir/out.$p" 2> "$dir/err.$p" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done

	check "$name: $procs clients exited cleanly" test "$bad" -eq 0
	check "$name: no client saw an error" bash -c "! cat '$dir'/err.* | grep -m 5 ."
	check "$name: every claim answered ($((procs * jobs * per)))" \
		test "$(cat "$dir"/out.* | grep -c '|')" -eq $((procs * jobs * per))
	# One won per slot: count winners per (job, slot) over every process's answers.
	cat "$dir"/out.* | awk -F'|' '$3 == "won" { print $1 "|" $2 "|" $4 }' | sort > "$dir/winners"
	check "$name: exactly one won for each of $((jobs * per)) slots" \
		bash -c "test \$(cut -d'|' -f1,2 '$dir/winners' | sort -u | wc -l) -eq $((jobs * per)) &&
			test \$(wc -l < '$dir/winners') -eq $((jobs * per))"
	check "$name: losers answered running, not anything else" \
		bash -c "! cat '$dir'/out.* | awk -F'|' '\$3 != \"won\" && \$3 != \"running\"' | grep -m 5 ."
	[ "${PG_CONTENTION_REMOTE:-0}" = 1 ] && return 0
	psql -X -A -t -q -F'|' -c "SELECT job, (extract(epoch FROM slot) * 1000)::bigint, token
		FROM anarchon.runs WHERE job ~ '^c[0-9]+\$' AND slot >= to_timestamp($base / 1000.0)" |
		sort > "$dir/stored"
	diff_ok "$name: the stored run of each slot names its one winner" "$dir/winners" "$dir/stored"
}
