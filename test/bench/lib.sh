# lib.sh — helpers for bench scripts: percentiles and JSON rows.

BENCH_SECONDS=${BENCH_SECONDS:-4}

# percentiles FILE...: "p50 p99" of the latencies (µs, one per line) in FILEs.
percentiles() {
	cat "$@" | sort -n | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "0 0"; exit }
		i50 = int(NR * 0.50); if (i50 < 1) i50 = 1
		i99 = int(NR * 0.99); if (i99 < 1) i99 = 1
		print v[i50], v[i99] }'
}

# emit_row STORE SCENARIO CLIENTS OPS_PER_S BASELINE_OPS_PER_S P50 P99
emit_row() {
	awk -v store="$1" -v scen="$2" -v c="$3" -v ops="$4" -v base="$5" -v p50="$6" -v p99="$7" 'BEGIN {
		ratio = base > 0 ? ops / base : 0
		printf "{\"store\": \"%s\", \"scenario\": \"%s\", \"clients\": %d, \"ops_per_s\": %.1f, \"baseline_ops_per_s\": %.1f, \"ratio\": %.3f, \"p50_us\": %d, \"p99_us\": %d}\n", store, scen, c, ops, base, ratio, p50, p99 }' >> "$BENCH_ROWS"
}
