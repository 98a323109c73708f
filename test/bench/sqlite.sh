#!/usr/bin/env bash
# sqlite.sh — the SQLite rows of `make bench`, in WAL mode:
#   claim at 1 and 8 processes  vs  BEGIN IMMEDIATE; INSERT OR IGNORE; COMMIT
#   check at 1 and 8 processes  vs  a primary-key SELECT of anarchon_runs
# Each claim makes a new run (distinct slots, overlap=allow), like each insert.
set -uo pipefail
cd "$(dirname "$0")/../.."
source test/bench/lib.sh

dir=$(mktemp -d "${TMPDIR:-/tmp}/anarchon-bench-sqlite.XXXXXX")
trap 'rm -rf "$dir"' EXIT

# measure KIND CLIENTS: sets OPS (per second over all clients), P50, P99.
measure() {
	local kind=$1 clients=$2 db=$dir/$1-$2.db pids=() total=0 i
	cp "$dir/seed.db" "$db"
	for i in $(seq 1 "$clients"); do
		ANARCHON_OVERLAP=allow test/bin/claimer bench "$db" "$BENCH_SECONDS" "$i" "$kind" "$dir/lat-$kind-$clients-$i" \
			> "$dir/out-$kind-$clients-$i" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	total=$(cat "$dir"/out-"$kind"-"$clients"-* | awk '{ n += $1; if ($2 > us) us = $2 } END { printf "%.1f", n / (us / 1e6) }')
	OPS=$total
	read -r P50 P99 < <(percentiles "$dir"/lat-"$kind"-"$clients"-*)
}

# A database in WAL mode holding 1000 runs for the reads to find.
sqlite3 "$dir/seed.db" "PRAGMA journal_mode=wal;" ".load ./sqlite/anarchon" \
	"SELECT anarchon_config('overlap', 'allow');" \
	"WITH RECURSIVE n(i) AS (SELECT 1000 UNION ALL SELECT i + 1 FROM n WHERE i < 1999)
	 SELECT count(anarchon_claim('bench-read', i + 100000000000, 't')) FROM n;" > /dev/null
sqlite3 "$dir/seed.db" "UPDATE anarchon_runs SET slot = slot - 100000000000, lease_until = lease_until + 3600000;" \
	"PRAGMA wal_checkpoint(TRUNCATE);" > /dev/null

for c in 1 8; do
	measure insert "$c"; base=$OPS
	measure claim "$c"
	emit_row sqlite claim "$c" "$OPS" "$base" "$P50" "$P99"
	echo "sqlite claim x$c: $OPS/s vs insert $base/s" >&2
done
for c in 1 8; do
	measure select "$c"; base=$OPS
	measure check "$c"
	emit_row sqlite check "$c" "$OPS" "$base" "$P50" "$P99"
	echo "sqlite check x$c: $OPS/s vs select $base/s" >&2
done
