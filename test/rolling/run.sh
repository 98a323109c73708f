#!/usr/bin/env bash
# The settings fuzz: hosts that differ in their settings at the same moment
# (a rolling change) never win one slot twice, on any store.
#
# On every store, ROLLING_HOSTS processes (6) claim one job for
# ROLLING_SECONDS (15) each, every claim with settings drawn at random
# (host.py: max_late_ms 1-5 s or 60 s, lease_ms 1-5 s, attempts 1-3,
# overlap skip or allow), on slots of the last few seconds and sometimes up to
# 40 s back, so that late claims, expired leases, takeovers and forgotten runs
# really happen; the SQLite hosts prune now and then with their own settings,
# and hosts differ in their URL's memory (script window_ms, NATS
# duplicate_window_ms; RabbitMQ's timeout_ms, its slot_ttl_ms being the prefix's).  count.py then counts the
# winners of every (slot, attempt): one or none, never two.  A summary line
# per store says how many claims answered what, and every refusal's reason.
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
here=test/rolling
tmp=$(t_tmpdir)
HOSTS=${ROLLING_HOSTS:-6}
SECONDS_EACH=${ROLLING_SECONDS:-15}

# fuzz NAME KIND URL...: HOSTS hosts, host i on the i-th URL (cycling), then the verdict.
fuzz() {
	local name=$1 kind=$2 i pids=()
	shift 2
	local urls=("$@")
	mkdir -p "$tmp/$name"
	for i in $(seq 1 "$HOSTS"); do
		# The hard stop: a host that hangs fails its store, never the suite.
		timeout $((SECONDS_EACH + 60)) python3 "$here/host.py" "$kind" "${urls[$(( (i - 1) % ${#urls[@]} ))]}" \
			"$i" "$SECONDS_EACH" "$tmp/$name/h$i.log" > "$tmp/$name/h$i.out" 2>&1 &
		pids+=($!)
	done
	local failed=0
	for i in "${pids[@]}"; do wait "$i" || failed=1; done
	python3 "$here/count.py" "$name" "$tmp/$name"/h*.log > "$tmp/$name.verdict"
	local rc=$?
	grep '^#' "$tmp/$name.verdict"
	if [ "$failed" -ne 0 ]; then
		not_ok "rolling $name: every host ran to its end" "$(tail -n 5 "$tmp/$name"/h*.out)"
	elif [ "$rc" -eq 1 ]; then
		not_ok "rolling $name: no slot won twice" "$(grep '^duplicate' "$tmp/$name.verdict" | head -n 10)"
	elif [ "$rc" -ne 0 ]; then
		not_ok "rolling $name: no slot won twice" "the run proved nothing: no win or no late answer"
	else
		ok "rolling $name: no slot won twice"
	fi
}

built_or_end rolling sqlite test/bin/rdrive || exit

fuzz sqlite sqlite "$tmp/local.sqlite"

if [[ " ${ROLLING_STORES:-redis nats amqp} " == *" redis "* ]]; then
	source test/redis/server.sh
	PORT=$(free_port)
	if redis_start rolling "$PORT"; then
		R="redis://127.0.0.1:$PORT"
		fuzz redis-lease remote "$R?strategy=lease&prefix=fz1"
		fuzz redis-stream-id remote "$R?strategy=stream-id&prefix=fz2"
		fuzz redis-script remote "$R?strategy=script&prefix=fz3&window_ms=120000" \
			"$R?strategy=script&prefix=fz3&window_ms=10000"
		redis_stop rolling
	else
		not_ok "rolling: start redis-server" "$(tail -n 20 "$R_DIR/rolling/log" 2>/dev/null)"
	fi
fi

if [[ " ${ROLLING_STORES:-redis nats amqp} " == *" nats "* ]]; then
	source test/nats/server.sh
	if nats_start rolling; then
		N="nats://127.0.0.1:${NATS_PORT[rolling]}"
		fuzz nats remote "$N?duplicate_window_ms=120000" "$N?duplicate_window_ms=10000"
		nats_stop rolling
	else
		not_ok "rolling: start nats-server -js"
	fi
fi

if [[ " ${ROLLING_STORES:-redis nats amqp} " == *" amqp "* ]]; then
	source test/amqp/server.sh
	if rmq_start "$tmp/rmq"; then
		# accept-loss: no settle wait after each win (2.5 s), which the count does not need.
		A="amqp://127.0.0.1:$RMQ_PORT?durability=accept-loss"
		# One slot_ttl_ms: a prefix records its own, and a host with another is
		# refused when it connects (the amqp suite checks that); timeout_ms differs.
		fuzz amqp remote "$A&slot_ttl_ms=120000" "$A&slot_ttl_ms=120000&timeout_ms=3000"
	else
		not_ok "rolling: start rabbitmq-server"
	fi
fi

suite_end
