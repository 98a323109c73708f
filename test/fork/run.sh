#!/usr/bin/env bash
# The fork suite: a process that used a network store forks workers, as a
# prefork server does (gunicorn --preload, uWSGI, Python's multiprocessing),
# and the workers claim the same slots.  Exactly one of them may win each.
#
# Through SQLite (test/fork/forker.py, Debian's python3): 16 workers x 300
# slots on every network store (Redis lease, stream-id and script, RabbitMQ,
# NATS), once with a connection of each worker's own (the parent's client
# library state is what they share) and once with the parent's connection
# itself (the parent's socket is what they share).  Every token must be new:
# anarchon_token() must not repeat in the children.  The parent must go on
# with its own connection afterwards.
#
# Through PostgreSQL: a backend is forked by the postmaster, and with
# shared_preload_libraries the library is loaded in the postmaster before the
# fork; 16 sessions x 300 slots on every network store.
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
source test/redis/server.sh
source test/nats/server.sh
source test/amqp/server.sh
here=test/fork
tmp=$(t_tmpdir)
PY=/usr/bin/python3
PROCS=16
SLOTS=300

built_or_end fork sqlite || exit

# ---------------------------------------------------------------- servers
RPORT=$(free_port)
redis_start main "$RPORT" || not_ok "fork: start redis-server" "$(tail -n 5 "$R_DIR/main/log" 2>/dev/null)"
nats_start main || not_ok "fork: start nats-server -js"
rmq_start "$tmp/rmq" || not_ok "fork: start RabbitMQ"
# RabbitMQ without the settling wait of a won claim (test/amqp covers it): it
# only delays each winner by 2.5 s, and has nothing to do with fork.  Every
# store has timeout_ms 10 s: this suite is about forks, not load, and through
# PostgreSQL one claim's error ends its session's whole statement (all 16
# sessions' on RabbitMQ once, under CI's load).
declare -A STORE=(
	[redis-lease]="redis://127.0.0.1:$RPORT?strategy=lease&prefix=fork-lease&timeout_ms=10000"
	[redis-stream-id]="redis://127.0.0.1:$RPORT?strategy=stream-id&prefix=fork-sid&timeout_ms=10000"
	[redis-script]="redis://127.0.0.1:$RPORT?strategy=script&prefix=fork-script&timeout_ms=10000"
	[rabbitmq]="amqp://127.0.0.1:$RMQ_PORT?prefix=fork&durability=accept-loss&timeout_ms=10000"
	[nats]="nats://127.0.0.1:${NATS_PORT[main]}?stream=FORK&prefix=fork&timeout_ms=10000"
)
KINDS="redis-lease redis-stream-id redis-script rabbitmq nats"

now_slot() { echo $(( $(date +%s) * 1000 )); }

# winners NAME DIR PROCS SLOTS: DIR/*.out hold "SLOT OUTCOME [TOKEN]" lines;
# ok when there is one answer per process and slot, no error, exactly one
# `won` per slot, and no token twice.
winners() {
	local name=$1 d=$2 procs=$3 slots=$4 report
	report=$(cat "$d"/*.out | awk -v want=$((procs * slots)) -v slots="$slots" '
		# An answer is "SLOT OUTCOME [TOKEN]"; any other line (psql'"'"'s ERROR:, a
		# DETAIL) is an error, shown, and is no answer.
		$1 !~ /^[0-9]+$/ || $2 == "error" || NF < 2 { err++; if (err <= 5) print "error: " $0; next }
		{ n++; seen[$1] = 1 }
		$2 == "won" { w[$1]++ }
		NF >= 3 { if (tok[$3]++) dup++ }
		END {
			for (s in seen) { if (w[s] > 1) multi++; if (!(s in w)) none++ }
			if (n != want) print "answers: " n ", want " want
			if (length(seen) != slots) print "slots: " length(seen) ", want " slots
			if (multi) print "slots won more than once: " multi
			if (none) print "slots nobody won: " none
			if (dup) print "tokens drawn more than once: " dup
		}')
	if [ -z "$report" ]; then ok "$name: $procs processes x $slots slots, exactly one won per slot"
	else not_ok "$name: $procs processes x $slots slots, exactly one won per slot" "$report"; fi
}

# ---------------------------------------------------------------- through SQLite
if [ ! -x "$PY" ] || ! "$PY" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2> /dev/null; then
	not_ok "fork/sqlite: $PY with a sqlite3 module that can load extensions (Debian's python3)"
else
	for kind in $KINDS; do
		for mode in own inherit; do
			d=$tmp/sqlite-$kind-$mode
			mkdir -p "$d"
			S=$(now_slot)
			"$PY" "$here/forker.py" "$REPO_ROOT/sqlite/anarchon" "${STORE[$kind]}" "$mode" "j-$mode" "$S" \
				"$PROCS" "$SLOTS" "$d" > "$d/parent" 2>&1
			if [ "$mode" = own ]; then how="their own connections"; else how="the parent's connection"; fi
			winners "fork/sqlite $kind, workers with $how" "$d" "$PROCS" "$SLOTS"
			if [ "$(cat "$d/parent")" = "before won
parent won" ]; then ok "fork/sqlite $kind ($mode): the parent goes on with its own connection"
			else not_ok "fork/sqlite $kind ($mode): the parent goes on with its own connection" "$(cat "$d/parent")"; fi
		done
	done
fi

# ---------------------------------------------------------------- through PostgreSQL
source "$TEST_ROOT/pg/server.sh"
if ! command -v pg_config > /dev/null; then
	not_ok "fork/pg: PostgreSQL is not available"
elif ! pg_install > "$tmp/pg-install.log" 2>&1; then
	not_ok "fork/pg: make install" "$(tail -n 20 "$tmp/pg-install.log")"
elif ! pg_start "fsync = off" "shared_preload_libraries = 'anarchon'" > "$tmp/pg-start.log" 2>&1; then
	not_ok "fork/pg: start PostgreSQL with shared_preload_libraries = 'anarchon'" "$(tail -n 20 "$tmp/pg-start.log")"
else
	pq() { psql -X -A -t -q -v ON_ERROR_STOP=1 "$@" 2>&1; }
	check "fork/pg: the library is preloaded into the postmaster" \
		sh -c "psql -X -A -t -c 'SHOW shared_preload_libraries' | grep -qx anarchon"
	pq -c "CREATE EXTENSION anarchon" -c "SET anarchon.overlap = 'allow'" > /dev/null
	for kind in $KINDS; do
		url=${STORE[$kind]//fork/pgfork}
		pq -c "CREATE SERVER \"$kind\" FOREIGN DATA WRAPPER anarchon OPTIONS (url '${url//FORK/PGFORK}')" > /dev/null
		d=$tmp/pg-$kind
		mkdir -p "$d"
		S=$(now_slot)
		pids=()
		for i in $(seq 1 "$PROCS"); do
			PGOPTIONS="-c anarchon.store=$kind -c anarchon.overlap=allow" pq -F ' ' \
				-c "SELECT s, anarchon_claim('pg', s, t), t FROM (SELECT s, anarchon_token() t FROM generate_series(${S}::bigint, $((S + (SLOTS - 1) * 1000))::bigint, 1000) s) x" \
				> "$d/$i.out" &
			pids+=($!)
		done
		wait "${pids[@]}"
		winners "fork/pg $kind, library preloaded, one backend per session" "$d" "$PROCS" "$SLOTS"
	done
	# A backend that crashed (at its exit too, after its answers were out) is
	# a failure of its own, and would fail the next sessions as the server
	# recovers: the server log says which.
	if grep -q "server process .* was terminated by signal\|database system is in recovery mode" "$PG_LOG"; then
		not_ok "fork/pg: no backend crashed (server log)" \
			"$(grep -B3 -A3 "terminated by signal\|in recovery mode" "$PG_LOG" | head -n 10)"
	else
		ok "fork/pg: no backend crashed (server log)"
	fi
fi

suite_end
