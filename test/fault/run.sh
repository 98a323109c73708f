#!/usr/bin/env bash
# The fault suite: every network store attacked the same way, and the whole
# log of answers judged by one checker (test/fault/check.py).
#
# For each store (Redis lease, stream-id and script, NATS JetStream,
# RabbitMQ) and each fault, PROCS processes (test/bin/mq-driver log) claim
# the same SLOTS slots with tokens of their own, and send a claim that ended
# in an error again with the same token, as an application should.  The
# faults:
#
#   none          nothing goes wrong (the baseline)
#   lost-request  through test/fault/proxy.py: a request reaches the server
#                 whole, then the connection is cut before its reply
#   lost-reply    through the proxy: a reply is cut half way
#   sigkill       the server is killed with SIGKILL during the contention,
#                 and started again on the same port and files
#   sigstop       the server is frozen with SIGSTOP past the store's
#                 timeout_ms, then resumed
#
# The checker fails on two winners of one slot (of one attempt, on lease
# stores) and on a slot whose claims were all answered without a winner
# (except on RabbitMQ, which may skip a slot whose confirm was lost: see
# doc/stores-amqp-nats.md).  It writes the table of store x fault to
# build/fault-table.md.  ANARCHON_FAULT_PROCS and ANARCHON_FAULT_SLOTS make
# it larger: `make soak` runs 16 x 1250 per cell, 10^5 claims per store.
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
source test/redis/server.sh
source test/nats/server.sh
source test/amqp/server.sh
source test/amqp/mq.sh
here=test/fault
tmp=$(t_tmpdir)
PROCS=${ANARCHON_FAULT_PROCS:-16}
SLOTS=${ANARCHON_FAULT_SLOTS:-20}
TRIES=40                  # resends after errors: about 15 s of them
TIMEOUT_MS=1000           # every store's timeout_ms here
TABLE=${ANARCHON_FAULT_TABLE:-$REPO_ROOT/build/fault-table.md}
FAULTS=${ANARCHON_FAULTS:-none lost-request lost-reply sigkill sigstop}

mq_build || { suite_end; exit; }

# The checker itself: a log with two winners of one slot, and one with a
# slot answered lost by everyone, must each fail it.
printf '%s\n' "1 s none j 1000 tokA won 0 1 5" "2 s none j 1000 tokB won 0 1 5" > "$tmp/double.log"
printf '%s\n' "1 s none j 1000 tokA lost 0 1 5" "2 s none j 1000 tokB error:timeout 0 1 5" \
	"2 s none j 1000 tokB lost 0 2 5" > "$tmp/nowinner.log"
if ! /usr/bin/python3 "$here/check.py" /dev/null "$tmp/double.log" | grep -q '^FAIL double win' ||
	! /usr/bin/python3 "$here/check.py" /dev/null "$tmp/nowinner.log" | grep -q '^FAIL no winner'; then
	not_ok "fault: the checker finds a double win and an answered slot without a winner"
else
	ok "fault: the checker finds a double win and an answered slot without a winner"
fi

# ---------------------------------------------------------------- servers
RPORT=$(free_port)
redis_start main "$RPORT" || not_ok "fault: start redis-server" "$(tail -n 5 "$R_DIR/main/log" 2> /dev/null)"
nats_start main || not_ok "fault: start nats-server -js"
rmq_start "$tmp/rmq" || not_ok "fault: start RabbitMQ"

STORES="redis-lease redis-stream-id redis-script nats rabbitmq"

# scheme STORE: which server a store's claims go to.
scheme() { case $1 in redis-*) echo redis ;; nats) echo nats ;; rabbitmq) echo amqp ;; esac; }

# server_port STORE, server_pid STORE: the server a store's claims go to.
server_port() {
	case $(scheme "$1") in
		redis) echo "$RPORT" ;;
		nats) echo "${NATS_PORT[main]}" ;;
		amqp) echo "$RMQ_PORT" ;;
	esac
}
server_pid() {
	case $(scheme "$1") in
		redis) redis_pid main ;;
		nats) echo "${NATS_PID[main]}" ;;
		amqp) echo "$RMQ_VM" ;;
	esac
}

# server_kill STORE: SIGKILL the server, then start it again, same port and files.
server_kill() {
	case $(scheme "$1") in
		redis)
			kill -KILL "$(redis_pid main)"
			wait "$(redis_pid main)" 2> /dev/null
			rm -f "$R_DIR/main/pid"
			redis_start main "$RPORT" > /dev/null
			;;
		nats) nats_restart main KILL ;;
		amqp) rmq_restart KILL ;;
	esac
}

# url STORE PORT: the store's URL, its names under the prefix "fault".
url() {
	local q
	case $1 in
		redis-lease) q="strategy=lease&prefix=fault-lease" ;;
		redis-stream-id) q="strategy=stream-id&prefix=fault-sid" ;;
		redis-script) q="strategy=script&prefix=fault-script" ;;
		nats) q="stream=FAULT&prefix=fault" ;;
		rabbitmq) q="prefix=fault" ;;
	esac
	echo "$(scheme "$1")://127.0.0.1:$2?$q&timeout_ms=$TIMEOUT_MS"
}

PROXY_PID=
proxy_stop() { [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2> /dev/null && wait "$PROXY_PID" 2> /dev/null; PROXY_PID=; }
at_exit proxy_stop

# cell STORE FAULT: one run of the contention under one fault; its log goes
# to $tmp/log/STORE.FAULT.* and one "# injected" line says how many faults.
cell() {
	local store=$1 fault=$2 port pids=() i n=0 slot0 log=$tmp/log/$1.$2 pport pid
	port=$(server_port "$store")
	case $fault in
		lost-request | lost-reply)
			pport=$(free_port)
			/usr/bin/python3 "$here/proxy.py" "$pport" "$port" "${fault#lost-}" 0.05 "$RANDOM" "$log.cuts" &
			PROXY_PID=$!
			wait_port "$pport" 10 || not_ok "fault: the proxy for $store listens"
			port=$pport
			;;
	esac
	slot0=$(( ($(date +%s) + 2) * 1000 ))
	for i in $(seq 1 "$PROCS"); do
		"$DRV" "$(url "$store" "$port")" log "f-$fault" "$slot0" "$SLOTS" 1000 "$TRIES" "$i $store $fault" \
			> "$log.$i" 2>&1 &
		pids+=($!)
	done
	case $fault in
		sigkill)
			sleep 1
			server_kill "$store" && n=1
			;;
		sigstop)
			sleep 1
			pid=$(server_pid "$store")
			kill -STOP "$pid" && n=1
			sleep $(( TIMEOUT_MS / 1000 + 1 ))
			kill -CONT "$pid"
			;;
	esac
	wait "${pids[@]}"
	case $fault in
		lost-request | lost-reply)
			proxy_stop
			n=$(cat "$log.cuts" 2> /dev/null || echo 0)
			;;
	esac
	echo "# injected $store $fault $n" >> "$log.1"
	[ "$fault" = none ] || [ "$n" -gt 0 ] || not_ok "fault: $store under $fault: no fault was injected"
}

mkdir -p "$tmp/log" "$(dirname "$TABLE")"
for store in $STORES; do
	for fault in $FAULTS; do
		cell "$store" "$fault"
	done
done

if out=$(/usr/bin/python3 "$here/check.py" "$TABLE" "$tmp"/log/*.*[0-9] 2>&1); then
	ok "fault: $PROCS processes x $SLOTS slots per store and fault: no double win, no answered slot without a winner"
else
	not_ok "fault: $PROCS processes x $SLOTS slots per store and fault: no double win, no answered slot without a winner" \
		"$(printf '%s\n' "$out" | grep -E '^(FAIL|# unreadable)' | head -n 20)"
fi
printf '%s\n' "$out" | grep '^|' | sed 's/^/# /'
suite_end
