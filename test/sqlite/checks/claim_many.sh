# claim_many.sh — 8 sqlite3 processes claim the same 10 jobs for 50 slots of
# one database file with anarchon_claim_many, the jobs in a new random order
# in every call: exactly one won per (job, slot), every other row running, and
# the runs table names each winner.  WAL mode with the table form; rollback-
# journal mode with the scalar (JSON) form, the one that works there.
# Sourced by test/sqlite/run.sh (uses $tmp and test/lib.sh).

# claim_many_contend JOURNAL_MODE
claim_many_contend() {
	local mode=$1 procs=8 slots=50 jobs=10 dir=$tmp/claim-many-$1 first p s all pids=() rc=0
	mkdir -p "$dir"
	sqlite3 "$dir/db" "PRAGMA journal_mode=$mode;" > /dev/null
	first=$(( ($(date +%s) + 3600) * 1000 ))   # slots in the future: never late
	for p in $(seq 1 $procs); do
		{
			echo ".load $REPO_ROOT/sqlite/anarchon"
			echo ".timeout 120000"
			echo ".output /dev/null"
			echo "SELECT anarchon_config('busy_timeout_ms', 120000), anarchon_config('overlap', 'allow');"
			echo ".output stdout"
			for s in $(seq 0 $((slots - 1))); do
				all=$(seq 1 $jobs | shuf | sed 's/^/"m/; s/$/"/' | paste -sd, -)
				if [ "$mode" = wal ]; then
					echo "SELECT job, $((first + s * 1000)), outcome, 'p$p' FROM anarchon_claim_many('[$all]', $((first + s * 1000)), 'p$p');"
				else
					echo "SELECT $((first + s * 1000)) || ' p$p ' || anarchon_claim_many('[$all]', $((first + s * 1000)), 'p$p');"
				fi
			done
		} > "$dir/claims.$p.sql"
	done
	for p in $(seq 1 $procs); do
		sqlite3 -bail "$dir/db" < "$dir/claims.$p.sql" > "$dir/raw.$p" 2> "$dir/err.$p" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	check "sqlite claim_many ($mode): $procs processes ran without errors" \
		bash -c "[ $rc -eq 0 ] && ! cat '$dir'/err.* | grep -m 5 ."
	# Every answer as job|slot|outcome|token.
	if [ "$mode" = wal ]; then
		cat "$dir"/raw.* > "$dir/rows"
	else
		cat "$dir"/raw.* | python3 -c '
import json, sys
for line in sys.stdin:
    slot, tok, rows = line.rstrip("\n").split(" ", 2)
    for r in json.loads(rows):
        print("%s|%s|%s|%s" % (r["job"], slot, r["outcome"], tok))' > "$dir/rows"
	fi
	check "sqlite claim_many ($mode): one row per job and call ($((procs * slots * jobs)))" \
		test "$(wc -l < "$dir/rows")" -eq $((procs * slots * jobs))
	awk -F'|' '$3 == "won" { print $1 "|" $2 "|" $4 }' "$dir/rows" | sort > "$dir/winners"
	check "sqlite claim_many ($mode): exactly one won for each of $((slots * jobs)) (job, slot)" \
		bash -c "test \$(cut -d'|' -f1,2 '$dir/winners' | sort -u | wc -l) -eq $((slots * jobs)) &&
			test \$(wc -l < '$dir/winners') -eq $((slots * jobs))"
	check "sqlite claim_many ($mode): every other row answered running" \
		bash -c "! awk -F'|' '\$3 != \"won\" && \$3 != \"running\"' '$dir/rows' | grep -m 5 ."
	sqlite3 "$dir/db" "SELECT job, slot, token FROM anarchon_runs" | sort > "$dir/stored"
	diff_ok "sqlite claim_many ($mode): the runs table names each (job, slot)'s one winner" \
		"$dir/winners" "$dir/stored"
}

# One transaction: a reader polling the runs table (WAL mode, so it never
# waits) sees each slot's batch of 200 jobs all at once or not at all.
claim_many_atomic() {
	local dir=$tmp/claim-many-atomic first all s wpid rpid rc=0
	mkdir -p "$dir"
	sqlite3 "$dir/db" "PRAGMA journal_mode=wal;" "CREATE TABLE t(x);" > /dev/null
	first=$(( ($(date +%s) + 3600) * 1000 ))
	all=$(seq 1 200 | sed 's/^/"a/; s/$/"/' | paste -sd, -)
	{
		echo ".load $REPO_ROOT/sqlite/anarchon"
		echo ".output /dev/null"
		echo "SELECT anarchon_config('busy_timeout_ms', 120000), anarchon_config('overlap', 'allow');"
		for s in $(seq 0 59); do
			echo "SELECT count(*) FROM anarchon_claim_many('[$all]', $((first + s * 1000)), 'w');"
		done
	} > "$dir/writer.sql"
	{
		echo ".timeout 120000"
		for s in $(seq 1 300); do
			echo "SELECT count(*) || '|' || coalesce(min(n), 200) || '|' || coalesce(max(n), 200)
				FROM (SELECT count(*) AS n FROM anarchon_runs WHERE slot >= $first GROUP BY slot);"
		done
	} > "$dir/reader.sql"
	# The table exists before the reader starts: a first claim creates it.
	sqlite3 "$dir/db" ".load $REPO_ROOT/sqlite/anarchon" \
		"SELECT anarchon_claim('a0', $((first - 1000)), 'w')" > /dev/null
	# The reader reads from before the writer's first batch until it has seen
	# the last one (at most 3 minutes): a fixed number of reads, as before,
	# was once all done before a loaded machine had the writer going.
	(
		end=$(( $(date +%s) + 180 ))
		until grep -q '^60|' "$dir/reader.out" 2> /dev/null || [ "$(date +%s)" -ge "$end" ]; do
			sqlite3 -bail "$dir/db" < "$dir/reader.sql" >> "$dir/reader.out" 2>> "$dir/reader.err" || exit 1
		done
	) & rpid=$!
	wait_for 60 "sqlite claim_many atomic: the reader has read once before the writer starts" \
		test -s "$dir/reader.out"
	sqlite3 -bail "$dir/db" < "$dir/writer.sql" 2> "$dir/writer.err" & wpid=$!
	wait "$wpid" || rc=1
	wait "$rpid" || rc=1
	check "sqlite claim_many atomic: writer and reader ran without errors" \
		bash -c "[ $rc -eq 0 ] && ! cat '$dir'/writer.err '$dir'/reader.err | grep -m 5 ."
	# slots|fewest jobs of a slot|most: the reader must have seen the table
	# part-way (some slots committed, not all: it overlapped the writer), and
	# every slot complete.
	check "sqlite claim_many atomic: the reader read while batches were being committed" \
		test "$(awk -F'|' '$1 > 0 && $1 < 60' "$dir/reader.out" | wc -l)" -gt 0
	check "sqlite claim_many atomic: every slot the reader saw had all 200 jobs, never part of a batch" \
		bash -c "! grep -v '|200|200\$' '$dir/reader.out' | grep -m 5 ."
	same "sqlite claim_many atomic: 60 slots x 200 runs in the end" "60|12000" \
		"$(sqlite3 "$dir/db" "SELECT count(DISTINCT slot), count(*) FROM anarchon_runs WHERE slot >= $first")"
}

claim_many_contend wal
claim_many_contend delete
claim_many_atomic
