#!/usr/bin/env bash
# The Redis suite: every strategy through the store interface (rdrive), then
# through SQLite and PostgreSQL when those hosts are built.  A real
# redis-server with appendonly yes runs on a free loopback port.
#
#   checks/table.sh       the outcome tables, own retries, fencing, late, idmp
#   checks/contend.sh     16 processes x 500 slots per strategy: one won per slot
#   checks/strategies.sh  one prefix, one strategy: a second strategy refused,
#                         mixed contention, a rolling change of strategy
#   checks/faults.sh      restart, SIGSTOP, cancel, script cache flush
#   checks/heartbeat.sh   a heartbeat after its lease ended (sent late, or
#                         queued in a frozen Redis) never renews it
#   checks/loading.sh     a Redis still loading its AOF: the command exits 75
#   checks/badinput.sh    URLs, parameters, unreachable hosts, passwords
#   checks/sqlite.sh      the same claims through the SQLite extension
#   checks/pg.sh          the same through PostgreSQL's foreign server
#   checks/durable.sh     servers that forget on a crash refused (appendonly no,
#                         appendfsync no), accepted with durability=accept-loss
#   checks/cluster.sh     replicas=N (WAIT), Sentinel, Redis Cluster (MOVED, ASK)
#   checks/rolling.sh    hosts with different max_late_ms on one prefix: one win per slot
#   checks/pausetrim.sh  ended pauses older than keep_ms are trimmed at each pause and resume
#   checks/roundtrip.sh  a claim is one EVALSHA: the pause is read inside its script
#   checks/batch.sh      a batch of claims in one round trip, and the single claim as its oracle
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
here=test/redis
source "$here/server.sh"

if ! make -s test/bin/rdrive > /dev/null 2>&1; then
	not_ok "redis: build rdrive" "$(make test/bin/rdrive 2>&1 | tail -n 20)"
	suite_end
	exit
fi
RDRIVE=$REPO_ROOT/test/bin/rdrive
tmp=$(t_tmpdir)

PORT=$(free_port)
if ! redis_start main "$PORT"; then
	not_ok "redis: start redis-server" "$(tail -n 20 "$R_DIR/main/log" 2>/dev/null)"
	suite_end
	exit
fi
URL="redis://127.0.0.1:$PORT"

# drive NAME URL [-s name=value...]: rdrive on stdin, output to $tmp/NAME.out
drive() {
	local name=$1 url=$2
	shift 2
	"$RDRIVE" "$@" "$url" > "$tmp/$name.out" 2>&1
}

# refuse NAME URL CODE PATTERN: opening URL fails with CODE and a message matching PATTERN.
refuse() {
	echo "claim sync 1 a" | "$RDRIVE" "$2" > "$tmp/bad-$1.out" 2>&1
	if grep -q -E "^error $3: .*$4" "$tmp/bad-$1.out"; then ok "redis bad input: $1"
	else not_ok "redis bad input: $1" "$(cat "$tmp/bad-$1.out")"; fi
}

for t in ${REDIS_CHECKS:-table contend strategies faults heartbeat loading badinput sqlite pg durable cluster rolling pausetrim roundtrip batch}; do
	source "$here/checks/$t.sh"
done

suite_end
