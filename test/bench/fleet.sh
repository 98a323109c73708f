#!/usr/bin/env bash
# fleet.sh — the fleet's rows of `make bench` (test/bench/fleet.c): I
# instances, each with its own connection, claim the same J jobs per tick,
# on one Redis, on a Redis Cluster of 3 masters and 3 replicas, and on a
# PostgreSQL primary (one anarchon_claim_many statement vs J anarchon_claim),
# and on NATS JetStream, three servers with a stream of three replicas:
#   a batch per tick (sent ahead, one write per server)  vs  J single claims
#   losing claims (every slot already won)  vs  the same GETs (one Redis)
# Rates are claims per second of the whole fleet, and claims per CPU second
# of the store (every redis-server of it, or the sessions' backends, /proc).  Every run counts each
# (job, slot)'s winners across the fleet: a double win or a slot won by none
# is said, and fails the bench.  FLEET_FULL=1 adds I = 1000 and J = 10000
# (doc/scale.md), which takes minutes.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source test/lib.sh
source test/bench/lib.sh
source test/redis/server.sh
source test/fault/redis_cluster.sh
source test/pg/server.sh
source test/nats/server.sh
source test/fault/nats_cluster.sh

dir=$(t_tmpdir)
bench_built test/bin/fleet
FLEET=$REPO_ROOT/test/bin/fleet
status=0
# Each run claims slots of its own, an hour apart, from an hour ahead: never late.
next_base=$(( ($(date +%s) / 60 + 60) * 60000 ))
fresh_base() { next_base=$((next_base + 3600000 * 24)); echo "$next_base"; }

# run URL I J T MODE BASE PIDS: the fleet's line, checked; sets CALLS CLAIMS US P50 P99 WON DBL MISS CPU
run() {
	local out
	out=$("$FLEET" "$@" 2> "$dir/err") || { echo "fleet $*: failed: $(head -n 3 "$dir/err")" >&2; status=1; return 1; }
	read -r CALLS CLAIMS US P50 P99 WON DBL MISS CPU RETRIES MAXUS <<< "$out"
	if [ "$5" != get ] && { [ "$DBL" != 0 ] || [ "$MISS" != 0 ]; }; then
		echo "fleet $*: DOUBLE WINS $DBL, SLOTS WON BY NONE $MISS" >&2
		status=1
	fi
	echo "fleet $2 x $3 x $4 $5: $CLAIMS claims in $((US / 1000)) ms, call p50 $P50 us p99 $P99 us, won $WON, store CPU $CPU ms" >&2
}
per_s() { awk -v n="$1" -v us="$2" 'BEGIN { printf "%.1f", (us > 0 ? n * 1e6 / us : 0) }'; }
per_cpu() { awk -v n="$1" -v ms="$2" 'BEGIN { printf "%.1f", (ms > 0 ? n * 1000 / ms : 0) }'; }

# fleet_store NAME URL PIDS SIZES...: the rows of one store; each SIZE is I:J:T.
fleet_store() {
	local name=$1 url=$2 pids=$3 size i j t b batch single lose lose_cpu get get_cpu
	shift 3
	for size in "$@"; do
		IFS=: read -r i j t <<< "$size"
		b=$(fresh_base)
		run "$url" "$i" "$j" "$t" batch "$b" "$pids" || continue
		batch=$(per_s "$CLAIMS" "$US"); local bp50=$P50 bp99=$P99
		run "$url" "$i" "$j" "$t" batch "$b" "$pids" || continue
		lose=$(per_s "$CLAIMS" "$US"); lose_cpu=$(per_cpu "$CLAIMS" "$CPU")
		run "$url" "$i" "$j" "$t" single "$(fresh_base)" "$pids" || continue
		single=$(per_s "$CLAIMS" "$US")
		emit_row "$name" "fleet of $i x $j jobs a tick: claims/s, a batch per tick vs single claims" "$i" \
			"$batch" "$single" "$bp50" "$bp99"
		if [ "$name" = redis ]; then
			# The bare read, ten times as many (the later ticks' keys do not exist: a GET all the
			# same), for a CPU time well above the clock's 10 ms.
			run "$url" "$i" "$j" $((t * 10)) get "$b" "$pids" || continue
			get_cpu=$(per_cpu "$CLAIMS" "$CPU")
			emit_row "$name" "fleet of $i x $j: losing claims per store CPU second vs GETs" "$i" \
				"$lose_cpu" "$get_cpu" 0 0
		fi
	done
}

# fleet_failover: the fleet through a Redis Cluster (replicas=1: a claim is
# answered once a replica has it) without and then with a master SIGKILLed
# FLEET_FAILOVER_KILLS (3) times, spread over the run, each followed by its replica's
# takeover and the old master's return as a replica.  The instances send a
# failed batch again with the same tokens (FLEET_RETRY_MS).  0 double wins
# and 0 slots won by none, or the bench fails; the longest call is the
# fleet's longest wait through a failover.
fleet_failover() {
	local url b pids t=${FLEET_FAILOVER_TICKS:-300} nkill=${FLEET_FAILOVER_KILLS:-3} k fpid kills=0 quiet_us
	rcl_start ffo > "$dir/failover.log" 2>&1 || { echo "fleet failover: the cluster did not start" >&2; status=1; return; }
	url="redis://127.0.0.1:${RCL_PORTS[ffo]}?cluster=yes&replicas=1&timeout_ms=3000"
	pids=$(for n in 1 2 3 4 5 6; do cat "$R_DIR/ffo-$n/pid"; done | paste -sd, -)
	FLEET_RETRY_MS=30000 run "$url" 10 100 "$t" batch "$(fresh_base)" "$pids" || return
	local quiet=$(per_s "$CLAIMS" "$US")
	quiet_us=$US
	b=$(fresh_base)
	FLEET_RETRY_MS=30000 "$FLEET" "$url" 10 100 "$t" batch "$b" - > "$dir/failover.out" 2> "$dir/failover.err" &
	fpid=$!
	for k in $(seq 1 "$nkill"); do
		# The scenario: half the quiet run's time shared between the kills (each takeover and return takes more).
		sleep "$(awk -v us="$quiet_us" -v n="$nkill" 'BEGIN { printf "%.1f", us / n / 2e6 }')"
		kill -0 "$fpid" 2> /dev/null || break
		rcl_kill_master ffo "cron:{f$k}" && kills=$((kills + 1))
		rcl_revive ffo >> "$dir/failover.log" 2>&1 || echo "fleet failover: the cluster did not become whole after kill $k" >&2
	done
	if ! wait "$fpid"; then
		echo "fleet failover: an instance failed: $(head -n 3 "$dir/failover.err")" >&2; status=1; return
	fi
	read -r CALLS CLAIMS US P50 P99 WON DBL MISS CPU RETRIES MAXUS < "$dir/failover.out"
	echo "fleet failover: $kills masters killed during the run; $CLAIMS claims in $((US / 1000)) ms, $RETRIES batches" \
		"sent again, call p99 $((P99 / 1000)) ms, longest $((MAXUS / 1000)) ms, won $WON, double $DBL, none $MISS" >&2
	if [ "$DBL" != 0 ] || [ "$MISS" != 0 ] || [ "$kills" = 0 ]; then
		echo "fleet failover: DOUBLE WINS $DBL, SLOTS WON BY NONE $MISS, MASTERS KILLED $kills" >&2
		status=1
	fi
	emit_row redis-cluster "fleet of 10 x 100 through $kills master kills (replicas=1): claims/s vs the same without kills" 10 \
		"$(per_s "$CLAIMS" "$US")" "$quiet" "$P50" "$MAXUS"
}

sizes=(10:100:20 10:1000:4 100:100:4 100:1000:1)
[ "${FLEET_FULL:-0}" = 1 ] && sizes+=(1000:100:2 1000:1000:1 10:10000:2 100:10000:1)

PORT=$(free_port)
if redis_start fleet "$PORT"; then
	fleet_store redis "redis://127.0.0.1:$PORT" "$(cat "$R_DIR/fleet/pid")" "${sizes[@]}"
else
	echo "fleet: redis-server did not start" >&2; status=1
fi
if rcl_start fcl > "$dir/cluster.log" 2>&1; then
	pids=$(for n in 1 2 3 4 5 6; do cat "$R_DIR/fcl-$n/pid"; done | paste -sd, -)
	fleet_store redis-cluster "redis://127.0.0.1:${RCL_PORTS[fcl]}?cluster=yes" "$pids" "${sizes[@]}"
else
	echo "fleet: the cluster did not start: $(tail -n 5 "$dir/cluster.log")" >&2; status=1
fi
if pg_install > "$dir/pg.log" 2>&1 && pg_start "max_connections = 250" >> "$dir/pg.log" 2>&1 &&
	psql -X -q -c "CREATE EXTENSION anarchon" >> "$dir/pg.log" 2>&1; then
	# I = 1000 would need max_connections past 1000: the PostgreSQL sizes stop at 100.
	fleet_store postgresql "pg:" - 10:100:20 10:1000:4 100:100:4 100:1000:1
else
	echo "fleet: PostgreSQL did not start: $(tail -n 5 "$dir/pg.log")" >&2; status=1
fi
# NATS: a batch is one claim after another (nothing sent ahead): the rows
# measure what a fleet costs the cluster, and that the two are alike.
if nats_cluster_start fnc > "$dir/nats.log" 2>&1 &&
	nurl="nats://127.0.0.1:${NATS_CLUSTER_PORTS[fnc]}?stream=FLEET&prefix=fleet&replicas=3" &&
	nats_cluster_ready fnc "$nurl" >> "$dir/nats.log" 2>&1; then
	fleet_store nats-r3 "$nurl" "${NATS_PID[fnc-1]},${NATS_PID[fnc-2]},${NATS_PID[fnc-3]}" 10:100:2 100:100:1
else
	echo "fleet: the NATS cluster did not start: $(tail -n 5 "$dir/nats.log")" >&2; status=1
fi
fleet_failover
exit $status
