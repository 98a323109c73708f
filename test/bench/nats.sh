#!/usr/bin/env bash
# nats.sh — the NATS JetStream rows of `make bench` (see test/amqp/bench.sh):
# the claim (a de-duplicated publish into the file stream CRON) from C, via
# SQLite and via PostgreSQL, against a JetStream publish with a new
# Nats-Msg-Id into a file stream from C with nats.c alone.
set -uo pipefail
cd "$(dirname "$0")/../.."
source test/lib.sh
source test/nats/server.sh
source test/amqp/bench.sh

mq_bench_build || exit 1
nats_start bench || { echo "nats-server did not start" >&2; exit 1; }
mq_bench nats nats "nats://127.0.0.1:${NATS_PORT[bench]}"
