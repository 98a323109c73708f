#!/usr/bin/env bash
# sqlite.sh — the SQLite rows of `make bench`, in WAL mode:
#   claim at 1 and 8 processes  vs  BEGIN IMMEDIATE; INSERT OR IGNORE; COMMIT
#   check at 1 and 8 processes  vs  a primary-key SELECT of anarchon_runs
#   claim counted in anarchon_stats  vs  the same claim with 'stats' off
#     (target ratio >= 0.97: the counters cost at most 3 %)
# Each claim makes a new run (distinct slots, overlap=allow), like each insert.
set -uo pipefail
cd "$(dirname "$0")/../.."
source test/bench/lib.sh

dir=$(mktemp -d "${TMPDIR:-/tmp}/anarchon-bench-sqlite.XXXXXX")
trap 'rm -rf "$dir"' EXIT

# measure KIND CLIENTS: sets OPS (per second over all clients), P50, P99.
measure() {
	local kind=$1 db=$dir/$1-$2-$RANDOM.db
	# A new file each time: copying over a database whose last clients left
	# its -wal behind (eight processes closing at once may all leave it to
	# another) would pair the old log with the new file, a corrupt database.
	rm -f "$db" "$db-wal" "$db-shm"
	cp "$dir/seed.db" "$db"
	bench_clients "$dir" "$kind-$2" "$2" claimer_bench
}

# claimer_bench ID LATFILE: one client of measure (its db and kind).  SQLite's
# lock is not fair: a process can wait longer than the default 5 s busy
# timeout while seven others claim in tight loops on a loaded machine, so the
# bench waits as long as it runs.
claimer_bench() {
	ANARCHON_OVERLAP=allow ANARCHON_BUSY_TIMEOUT_MS=60000 test/bin/claimer bench "$db" "$BENCH_SECONDS" "$1" "$kind" "$2"
}

# compare KIND BASE: KIND against the primitive BASE at 1 and 8 processes,
# in alternating rounds (bench_pair).
compare() {
	local kind=$1 base_kind=$2
	for c in 1 8; do
		# shellcheck disable=SC2317  # called by bench_pair
		side_base() { measure "$base_kind" "$c"; }
		# shellcheck disable=SC2317
		side_run() { measure "$kind" "$c"; }
		bench_pair side_base side_run
		emit_row sqlite "$kind" "$c" "$OPS" "$BASE_OPS" "$P50" "$P99"
		echo "sqlite $kind x$c: $OPS/s vs $base_kind $BASE_OPS/s (medians of $BENCH_ROUNDS rounds)" >&2
	done
}

# A database in WAL mode holding 1000 runs for the reads to find.
sqlite3 "$dir/seed.db" "PRAGMA journal_mode=wal;" ".load ./sqlite/anarchon" \
	"SELECT anarchon_config('overlap', 'allow');" \
	"WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999)
	 SELECT count(anarchon_claim('bench-read', 4102444800000 + i * 1000, 't')) FROM n;" > /dev/null
sqlite3 "$dir/seed.db" "UPDATE anarchon_runs SET lease_until = lease_until + 3600000;" \
	"PRAGMA wal_checkpoint(TRUNCATE);" > /dev/null

compare claim insert
compare check select

# What the counters cost: the claim as shipped against the claim with this
# process's counting off (ANARCHON_STATS=off, applied with anarchon_config).
# shellcheck disable=SC2317  # called by bench_pair
uncounted() { ANARCHON_STATS=off measure claim "$c"; }
# shellcheck disable=SC2317
counted() { measure claim "$c"; }
for c in 1 8; do
	bench_pair uncounted counted
	emit_row sqlite "claim vs the same with anarchon_stats off" "$c" "$OPS" "$BASE_OPS" "$P50" "$P99"
	echo "sqlite claim x$c counted: $OPS/s vs $BASE_OPS/s uncounted" >&2
done
