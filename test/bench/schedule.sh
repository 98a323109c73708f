#!/usr/bin/env bash
# schedule.sh — the schedule rows of `make bench`: anarchon_slot with a time
# zone against the same schedule in UTC, and a year of minute slots listed by
# anarchon_slots, in SQLite and in PostgreSQL (a temporary server).  The
# measuring is test/bench/schedule.py's; see its header for each row.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib.sh"
source "$here/../pg/server.sh"
source "$here/lib.sh"
[ -n "${BENCH_ROWS:-}" ] || { echo "BENCH_ROWS is not set (run make bench)" >&2; exit 1; }

pg_install || exit 1
pg_start || exit 1
psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION anarchon" || exit 1
out=$(t_tmpdir)/rows
/usr/bin/python3 "$here/schedule.py" "$REPO_ROOT/sqlite/anarchon" > "$out" || exit 1
cat "$out" >> "$BENCH_ROWS"
# The zone/UTC ratios, for the log.
/usr/bin/python3 -c '
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    print("%s %s: %.0f/s vs %.0f/s (ratio %.2f)" % (r["store"], r["scenario"], r["ops_per_s"], r["baseline_ops_per_s"], r["ratio"]))
' "$out" >&2
