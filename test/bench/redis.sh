#!/usr/bin/env bash
# redis.sh — the Redis rows of `make bench`, per strategy (lease, stream-id,
# script; idmp needs Redis 8.6, which this machine lacks) at 1 and 8 clients:
#   claim from C through the store interface  vs  SET key NX PX from C
#   claim through SQLite                      vs  the same strategy from C
#   claim through PostgreSQL                  vs  the same strategy from C
#   claim through PostgreSQL                  vs  its limit: the same call
#                                                 answered by PostgreSQL alone,
#                                                 then the claim from C
# Each client is a process with its own connection; every claim is a new run.
set -uo pipefail
cd "$(dirname "$0")/../.."
source test/lib.sh
source test/bench/lib.sh
source test/redis/server.sh

dir=$(t_tmpdir)
make -s test/bin/rbench sqlite > /dev/null || exit 1
PORT=$(free_port)
redis_start bench "$PORT" || { echo "redis-server did not start" >&2; exit 1; }
URL="redis://127.0.0.1:$PORT"
export RBENCH_EXT=$REPO_ROOT/sqlite/anarchon

# measure MODE TARGET CLIENTS: sets OPS (per second, all clients), P50, P99 (µs).
measure() {
	bench_clients "$dir" "$1-$3-$RANDOM" "$3" test/bin/rbench "$1" "$2" "$BENCH_SECONDS" || return 1
	redis-cli -p "$PORT" FLUSHALL > /dev/null
}

# PostgreSQL, when its tools and the wrapper are here: one server per strategy.
have_pg=0
if command -v pg_config > /dev/null && [ -f pg/fdw.c ]; then
	source test/pg/server.sh
	if pg_install > "$dir/pg-install.log" 2>&1 && pg_start > "$dir/pg-start.log" 2>&1; then
		psql -X -q -c "CREATE EXTENSION anarchon" > /dev/null 2>&1
		for s in lease stream-id script; do
			psql -X -q -c "CREATE SERVER bench_${s//-/_} FOREIGN DATA WRAPPER anarchon OPTIONS (url '$URL?strategy=$s')" > /dev/null
		done
		have_pg=1
	else
		echo "# PostgreSQL did not start: no PostgreSQL rows" >&2
	fi
fi

# The baseline is measured before and after a client count's rows, and the
# better of the two is used: a row is never flattered by a disturbed baseline.
for c in 1 8; do
	measure setnx "$URL" "$c"; b1=$OPS
	rows=()
	[ $have_pg = 1 ] && { measure pg-floor - "$c"; floor=$OPS; echo "PostgreSQL call alone x$c: $floor/s" >&2; }
	for s in lease stream-id script; do
		measure c "$URL?strategy=$s" "$c"; c_ops=$OPS
		rows+=("redis-$s|claim from C vs SET NX PX|$OPS|BASE|$P50|$P99")
		echo "redis $s from C x$c: $OPS/s" >&2
		measure sqlite "$URL?strategy=$s" "$c"
		rows+=("redis-$s|claim via SQLite vs same from C|$OPS|$c_ops|$P50|$P99")
		echo "redis $s via SQLite x$c: $OPS/s" >&2
		if [ $have_pg = 1 ]; then
			measure pg "bench_${s//-/_}" "$c"
			rows+=("redis-$s|claim via PostgreSQL vs same from C|$OPS|$c_ops|$P50|$P99")
			rows+=("redis-$s|claim via PostgreSQL vs its limit (the call alone, then the claim from C)|$OPS|$(composite_limit "$floor" "$c_ops")|$P50|$P99")
			echo "redis $s via PostgreSQL x$c: $OPS/s" >&2
		fi
	done
	measure setnx "$URL" "$c"; b2=$OPS
	base=$(awk -v a="$b1" -v b="$b2" 'BEGIN { print (a > b ? a : b) }')
	echo "redis SET NX PX x$c: $b1/s, $b2/s" >&2
	for r in "${rows[@]}"; do
		IFS='|' read -r store scen ops rbase p50 p99 <<< "$r"
		[ "$rbase" = BASE ] && rbase=$base
		emit_row "$store" "$scen" "$c" "$ops" "$rbase" "$p50" "$p99"
	done
done
