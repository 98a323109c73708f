#!/usr/bin/env bash
# The conformance suite: one sequence of calls — a claim, a rival's claim,
# our own claim again, heartbeats, finishes by the owner and by a stranger, a
# second finish, heartbeat and check after finish, claims after finish, calls
# on a slot nobody claimed, a late claim — against every store, through both
# hosts: local SQLite, local PostgreSQL, and Redis (lease, stream-id,
# script), RabbitMQ and NATS through SQLite and through PostgreSQL, each in
# plaintext and over TLS.
#
# Stores of one kind must answer alike: the lease stores (local SQLite,
# local PostgreSQL, Redis lease) and the won/lost stores (Redis stream-id and
# script, NATS).  RabbitMQ is a won/lost store that cannot read back whose
# claim fills a gate nor record a finish; where it answers otherwise, the
# expected column says so, and doc/stores-amqp-nats.md says why.
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
source test/redis/server.sh
source test/nats/server.sh
source test/amqp/server.sh
source test/tls/servers.sh
tmp=$(t_tmpdir)

built_or_end conformance sqlite || exit

# The sequence: step name, the call, and what each kind answers
# (lease | won/lost | RabbitMQ).  In calls, J is the job, S the slot, P a slot
# nobody claims, L a slot more than max_late_ms ago.
STEPS=(
	"claim A|claim(J, S, 'A')|won|won|won"
	"claim B, a rival|claim(J, S, 'B')|running|lost|lost"
	"claim A again (our own, resent)|claim(J, S, 'A')|won|won|lost"
	"heartbeat A|heartbeat(J, S, 'A')|true|true|true"
	"heartbeat B|heartbeat(J, S, 'B')|false|false|false"
	"check|check(J, S)|running|running|running"
	"finish B (a stranger)|finish(J, S, 'B')|false|false|false"
	"finish A|finish(J, S, 'A')|true|true|true"
	"finish A again, same status|finish(J, S, 'A')|true|true|true"
	"finish A again, failed|finish(J, S, 'A', 'failed')|false|false|false"
	"heartbeat A after finish|heartbeat(J, S, 'A')|false|false|false"
	"check after finish|check(J, S)|succeeded|succeeded|running"
	"claim C after finish|claim(J, S, 'C')|done|lost|lost"
	"claim A after finish|claim(J, S, 'A')|done|won|lost"
	"check of a slot nobody claimed|check(J, P)|none|none|none"
	"heartbeat of a slot nobody claimed|heartbeat(J, P, 'A')|false|false|error"
	"finish of a slot nobody claimed|finish(J, P, 'A')|false|false|error"
	"claim of a late slot|claim(J, L, 'A')|late|late|late"
)

# sql HOST: the sequence as SQL statements, one a line, for SQLite or PostgreSQL.
sql() {
	local host=$1 step call S P L
	S=$(( ($(date +%s) + 3600) * 1000 ))
	P=$((S + 1000))
	L=$(( ($(date +%s) - 120) * 1000 ))
	for step in "${STEPS[@]}"; do
		call=$(printf '%s' "$step" | cut -d'|' -f2)
		call=${call//J/\'conf\'}
		call=${call//S/$S}
		call=${call//P/$P}
		call=${call//L/$L}
		if [ "$host" = pg ]; then call=$(printf '%s' "$call" | sed -E "s/(\\(|, )([0-9]{13})/\\1\\2::bigint/")
		fi
		echo "SELECT anarchon_$call;"
	done
}

# answers KIND: the expected column (3 lease, 4 won/lost, 5 RabbitMQ).
answers() { local step; for step in "${STEPS[@]}"; do printf '%s\n' "$step" | cut -d'|' -f"$1"; done; }

# normalise: SQLite's 1/0 and PostgreSQL's t/f as true/false; any error as "error".
normalise() {
	sed -E -e 's/^(1|t)$/true/' -e 's/^(0|f)$/false/' \
		-e 's/^(Error|Runtime error|Parse error|ERROR|psql:.*ERROR).*/error/' -e '/^(DETAIL|HINT|CONTEXT):/d'
}

# compare NAME COLUMN OUT: the answers against the kind's column, step by step.
compare() {
	local name=$1 col=$2 out=$3 report
	report=$(paste -d'|' <(answers "$col") "$out" <(for s in "${STEPS[@]}"; do echo "${s%%|*}"; done) |
		awk -F'|' '$1 != $2 { print $3 ": expected " $1 ", got " $2 }')
	if [ -z "$report" ] && [ "$(wc -l < "$out")" -eq "${#STEPS[@]}" ]; then ok "$name: the sequence answers as its kind's"
	else not_ok "$name: the sequence answers as its kind's" "$report" "$(head -n 30 "$out")"; fi
}

# via_sqlite NAME COLUMN URL: the sequence through the sqlite3 CLI on a new file.
via_sqlite() {
	local name=$1 col=$2 url=$3 db=$tmp/$1.db
	{
		echo ".load $REPO_ROOT/sqlite/anarchon"
		echo ".output /dev/null"
		echo "SELECT anarchon_config('store', '$url');"
		echo ".output stdout"
		sql sqlite
	} | sqlite3 -batch "$db" 2>&1 | normalise > "$tmp/$1.out"
	compare "conformance $name via SQLite" "$col" "$tmp/$1.out"
}

# via_pg NAME COLUMN SERVER: the sequence in one PostgreSQL session.
via_pg() {
	local name=$1 col=$2 server=$3
	sql pg | PGOPTIONS="-c anarchon.store=$server" psql -X -A -t -q 2>&1 | normalise > "$tmp/pg-$1.out"
	compare "conformance $name via PostgreSQL" "$col" "$tmp/pg-$1.out"
}

# Every network store also over TLS (the -tls rows), on a TLS port of the
# same Redis and RabbitMQ servers and a second NATS server that speaks only
# TLS, verified against the test CA.
tls_certs || not_ok "conformance: make the test certificates"
RPORT=$(free_port) RTPORT=$(free_port)
# shellcheck disable=SC2046
redis_start main "$RPORT" $(redis_tls_args "$RTPORT") || not_ok "conformance: start redis-server"
nats_start main || not_ok "conformance: start nats-server -js"
nats_start tls -c "$(nats_tls_conf tls)" || not_ok "conformance: start nats-server -js with TLS"
rmq_tls_conf && rmq_start "$tmp/rmq" "${RMQ_TLS_CONF[@]}" || not_ok "conformance: start RabbitMQ"
CA=$(tls_query)
declare -A URL=(
	[redis-lease]="redis://127.0.0.1:$RPORT?strategy=lease&prefix=conf-lease"
	[redis-stream-id]="redis://127.0.0.1:$RPORT?strategy=stream-id&prefix=conf-sid"
	[redis-script]="redis://127.0.0.1:$RPORT?strategy=script&prefix=conf-script"
	[nats]="nats://127.0.0.1:${NATS_PORT[main]}?stream=CONF&prefix=conf"
	[rabbitmq]="amqp://127.0.0.1:$RMQ_PORT?prefix=conf"
	[redis-lease-tls]="rediss://127.0.0.1:$RTPORT?strategy=lease&prefix=conf-lease-tls&$CA"
	[redis-stream-id-tls]="rediss://127.0.0.1:$RTPORT?strategy=stream-id&prefix=conf-sid-tls&$CA"
	[redis-script-tls]="rediss://127.0.0.1:$RTPORT?strategy=script&prefix=conf-script-tls&$CA"
	[nats-tls]="tls://127.0.0.1:${NATS_PORT[tls]}?stream=CONF&prefix=conf&$CA"
	[rabbitmq-tls]="amqps://127.0.0.1:$RMQ_TLS_PORT?prefix=conf-tls&$CA"
)
declare -A COLUMN=([local]=3 [redis-lease]=3 [redis-stream-id]=4 [redis-script]=4 [nats]=4 [rabbitmq]=5
	[redis-lease-tls]=3 [redis-stream-id-tls]=4 [redis-script-tls]=4 [nats-tls]=4 [rabbitmq-tls]=5)
KINDS="redis-lease redis-stream-id redis-script nats rabbitmq redis-lease-tls redis-stream-id-tls redis-script-tls nats-tls rabbitmq-tls"

via_sqlite local "${COLUMN[local]}" local
for k in $KINDS; do via_sqlite "$k" "${COLUMN[$k]}" "${URL[$k]}"; done

source "$TEST_ROOT/pg/host.sh"
if pg_host_start "conformance via PostgreSQL" "$tmp"; then
	psql -X -q -c "CREATE EXTENSION anarchon" > /dev/null
	for k in $KINDS; do
		url=${URL[$k]//prefix=conf/prefix=pgconf}
		psql -X -q -c "CREATE SERVER \"$k\" FOREIGN DATA WRAPPER anarchon OPTIONS (url '${url//stream=CONF/stream=PGCONF}')" > /dev/null
	done
	via_pg local "${COLUMN[local]}" local
	for k in $KINDS; do via_pg "$k" "${COLUMN[$k]}" "$k"; done
fi

suite_end
