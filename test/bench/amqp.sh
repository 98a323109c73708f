#!/usr/bin/env bash
# amqp.sh — the RabbitMQ rows of `make bench` (see test/amqp/bench.sh): the
# claim (declare the durable gate queue, publish persistent, wait for the
# confirm) from C, via SQLite and via PostgreSQL, against declaring a plain
# durable queue and publishing one persistent message into it on a confirm
# channel from C with rabbitmq-c alone.
set -uo pipefail
cd "$(dirname "$0")/../.."
source test/lib.sh
source test/amqp/server.sh
source test/amqp/bench.sh

mq_bench_build || exit 1
rmq_start "$(t_tmpdir)/rmq" || { echo "RabbitMQ did not start" >&2; exit 1; }
mq_bench rabbitmq amqp "amqp://127.0.0.1:$RMQ_PORT"
