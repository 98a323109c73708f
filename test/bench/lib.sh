# lib.sh — helpers for bench scripts: clients, percentiles and JSON rows.

BENCH_SECONDS=${BENCH_SECONDS:-4}
# Rounds of a row measured by bench_pair: its two sides alternate, so that
# what else the machine does falls on both alike.
BENCH_ROUNDS=${BENCH_ROUNDS:-3}

# percentiles FILE...: "p50 p99" of the latencies (µs, one per line) in FILEs.
percentiles() {
	cat "$@" | sort -n | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "0 0"; exit }
		i50 = int(NR * 0.50); if (i50 < 1) i50 = 1
		i99 = int(NR * 0.99); if (i99 < 1) i99 = 1
		print v[i50], v[i99] }'
}

# bench_clients DIR TAG CLIENTS CMD...: CLIENTS processes of "CMD... I LATFILE"
#   at once (I = 1..CLIENTS), each printing "COUNT ELAPSED_US" and writing its
#   latencies (µs) to LATFILE under DIR; sets OPS (per second over all
#   clients), P50 and P99.  When a client fails it says so with the start of
#   its errors, sets all three to 0 and returns 1.
bench_clients() {
	local dir=$1 tag=$2 clients=$3 pids=() i p
	shift 3
	for i in $(seq 1 "$clients"); do
		"$@" "$i" "$dir/lat-$tag-$i" > "$dir/out-$tag-$i" 2> "$dir/err-$tag-$i" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || { echo "$* failed: $(cat "$dir"/err-"$tag"-* | head -n 3)" >&2; OPS=0; P50=0; P99=0; return 1; }
	done
	OPS=$(cat "$dir"/out-"$tag"-* | awk '{ n += $1; if ($2 > us) us = $2 } END { printf "%.1f", n / (us / 1e6) }')
	read -r P50 P99 < <(percentiles "$dir"/lat-"$tag"-*)
}

# composite_limit A B: the rate of doing A's operation and then B's, one
#   after the other, when each alone runs at A and B per second: what a call
#   through a host can reach when it costs the host's round trip plus the
#   store's claim and nothing more.
composite_limit() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (a > 0 && b > 0) ? 1 / (1 / a + 1 / b) : 0 }'
}

# emit_row STORE SCENARIO CLIENTS OPS_PER_S BASELINE_OPS_PER_S P50 P99
#   A row whose rate or baseline was not measured (0, empty: a client failed)
#   is not written: it is listed in $BENCH_ROWS.unmeasured, and make bench fails.
emit_row() {
	if ! awk -v o="$4" -v b="$5" 'BEGIN { exit !(o + 0 > 0 && b + 0 > 0) }'; then
		echo "not measured: $1 / $2 / $3 clients (rate '$4', baseline '$5')" | tee -a "$BENCH_ROWS.unmeasured" >&2
		return 1
	fi
	awk -v store="$1" -v scen="$2" -v c="$3" -v ops="$4" -v base="$5" -v p50="$6" -v p99="$7" 'BEGIN {
		ratio = base > 0 ? ops / base : 0
		printf "{\"store\": \"%s\", \"scenario\": \"%s\", \"clients\": %d, \"ops_per_s\": %.1f, \"baseline_ops_per_s\": %.1f, \"ratio\": %.3f, \"p50_us\": %d, \"p99_us\": %d}\n", store, scen, c, ops, base, ratio, p50, p99 }' >> "$BENCH_ROWS"
}

# bench_built TARGET...: make the targets into $dir (set by the caller, a
#   t_tmpdir) or end the bench with the build's output.
bench_built() {
	make -s "$@" > "$dir/build.log" 2>&1 || { cat "$dir/build.log" >&2; exit 1; }
}

# bench_redis NAME: a redis-server of the bench's own (test/redis/server.sh)
#   on a free port, in PORT; the bench ends when it does not start.
bench_redis() {
	PORT=$(free_port)
	redis_start "$1" "$PORT" || { echo "redis-server did not start" >&2; exit 1; }
}

# bench_pair BASE RUN: the functions BASE (the primitive) and RUN (anarchon's
#   operation), each of which sets OPS (0 when it failed), P50 and P99, called
#   in turn BENCH_ROUNDS times: BASE, RUN, BASE, RUN, ...  Sets BASE_OPS and
#   OPS to the median of each side's rates, and P50 and P99 to those of RUN's
#   median round.  A failed round makes its side 0: the row is then not
#   measured (emit_row), never a median of what happened to work.  One round
#   of each on a 2-core machine moved a row by 10 to 25 % from one run to the
#   next (a contended SQLite file's writers sleep in its busy handler).
bench_pair() {
	local i base=() run=() lat=() failed=0 mid
	for ((i = 0; i < BENCH_ROUNDS; i++)); do
		"$1" || failed=1
		base+=("${OPS:-0}")
		"$2" || failed=1
		run+=("${OPS:-0} $i")
		lat+=("${P50:-0} ${P99:-0}")
	done
	BASE_OPS=$(printf '%s\n' "${base[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	mid=$(printf '%s\n' "${run[@]}" | sort -g | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }')
	echo "# rounds of $1: ${base[*]}; of $2: $(printf '%s\n' "${run[@]}" | cut -d' ' -f1 | paste -sd' ')" >&2
	OPS=${mid% *}
	read -r P50 P99 <<< "${lat[${mid#* }]}"
	if [ "$failed" = 1 ]; then OPS=0 BASE_OPS=0; fi
}
