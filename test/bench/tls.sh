#!/usr/bin/env bash
# tls.sh — the TLS rows of `make bench`: per store, the claim from C over TLS
# against the same claim in plaintext to the same server software, at 1 and
# 8 clients (one process and one connection each, every claim a new run).
# Connections are kept between claims, so TLS should cost only its record
# layer: each client pays one handshake, in its first claim, and that is in
# the rate (one handshake in a few seconds of claims).
#
# Servers: one redis-server with a plaintext and a TLS port; a NATS server
# that speaks plaintext and one that speaks only TLS; one RabbitMQ with both
# listeners (test/tls/servers.sh).  Each NATS measurement uses a stream of
# its own, so none starts from a stream the rows before it grew.
set -uo pipefail
cd "$(dirname "$0")/../.."
source test/lib.sh
source test/bench/lib.sh
source test/redis/server.sh
source test/nats/server.sh
source test/amqp/server.sh
source test/tls/servers.sh

dir=$(t_tmpdir)
make -s test/bin/rbench > /dev/null || exit 1
tls_certs || exit 1
CA=$(tls_query)

# measure URL CLIENTS: sets OPS, P50, P99 of the claim from C.
measure() {
	bench_clients "$dir" "tls-$2-$RANDOM" "$2" test/bin/rbench c "$1" "$BENCH_SECONDS"
}

# pair STORE PLAIN_URL TLS_URL: the rows of one store.  A URL's "{N}" is
# replaced by a number new to each measurement (a prefix, a NATS stream of
# its own).  Plaintext and TLS are measured twice each, in turn, and the
# better of each pair is compared: a disturbance of the machine during one
# measurement flatters neither side.
pair() {
	local store=$1 plain=$2 tls=$3 c i best_p best_t p50 p99
	for c in 1 8; do
		best_p=0 best_t=0
		for i in 1 2; do
			measure "${plain//\{N\}/$RANDOM}" "$c"
			best_p=$(awk -v a="$best_p" -v b="$OPS" 'BEGIN { print (a > b ? a : b) }')
			measure "${tls//\{N\}/$RANDOM}" "$c"
			if awk -v a="$OPS" -v b="$best_t" 'BEGIN { exit !(a > b) }'; then best_t=$OPS p50=$P50 p99=$P99; fi
		done
		echo "$store x$c: TLS $best_t/s, plaintext $best_p/s" >&2
		emit_row "$store" "claim over TLS vs the same in plaintext, from C" "$c" "$best_t" "$best_p" "${p50:-0}" "${p99:-0}"
	done
}

RPORT=$(free_port) RTPORT=$(free_port)
# shellcheck disable=SC2046
if redis_start bench "$RPORT" $(redis_tls_args "$RTPORT"); then
	pair redis-lease "redis://127.0.0.1:$RPORT?strategy=lease&prefix=lp{N}" \
		"rediss://127.0.0.1:$RTPORT?strategy=lease&prefix=lt{N}&$CA"
	pair redis-script "redis://127.0.0.1:$RPORT?strategy=script&prefix=sp{N}" \
		"rediss://127.0.0.1:$RTPORT?strategy=script&prefix=st{N}&$CA"
	redis_stop bench
else
	echo "redis-server did not start" >&2
	emit_row redis-lease "claim over TLS vs the same in plaintext, from C" 1 0 0 0 0
fi

if nats_start plain && nats_start tls -c "$(nats_tls_conf tls)"; then
	pair nats "nats://127.0.0.1:${NATS_PORT[plain]}?stream=P{N}&prefix=p{N}" \
		"tls://127.0.0.1:${NATS_PORT[tls]}?stream=T{N}&prefix=t{N}&$CA"
else
	echo "nats-server did not start" >&2
	emit_row nats "claim over TLS vs the same in plaintext, from C" 1 0 0 0 0
fi

# RabbitMQ: every claim of the bench wins, so each would settle for 2.5 s
# (doc/stores-amqp-nats.md); as in test/bench/amqp.sh the rows measure the
# broker's work, without settling.
if rmq_tls_conf && rmq_start "$dir/rmq" "${RMQ_TLS_CONF[@]}" && wait_port "$RMQ_TLS_PORT" 30; then
	pair rabbitmq "amqp://127.0.0.1:$RMQ_PORT?prefix=b{N}&durability=accept-loss" \
		"amqps://127.0.0.1:$RMQ_TLS_PORT?prefix=b{N}&durability=accept-loss&$CA"
else
	echo "RabbitMQ did not start" >&2
	emit_row rabbitmq "claim over TLS vs the same in plaintext, from C" 1 0 0 0 0
fi
