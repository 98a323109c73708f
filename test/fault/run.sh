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
#   fork          prefork: each driver claims once, then forks into 4
#                 processes that share the store it opened (mq-driver -F)
#   lost-request  through test/fault/proxy.py: a request reaches the server
#                 whole, then the connection is cut before its reply
#   lost-reply    through the proxy: a reply is cut half way
#   sigkill       the server is killed with SIGKILL during the contention,
#                 and started again on the same port and files
#   sigstop       the server is frozen with SIGSTOP past the store's
#                 timeout_ms, then resumed
#
# The same claims are also sent through the SQLite host (test/bin/claimer
# log, the extension loaded in each process, the store set with
# anarchon_config): the local SQLite store without a fault, and each
# network store under SQLITE_FAULTS.  Their rows are named sqlite/STORE.
#
# And through the PostgreSQL host (test/fault/appclaimer.py, psycopg2 in
# autocommit, each network store a foreign server): rows pg/STORE, the local
# PostgreSQL store among them, under PG_FAULTS, which add
#
#   terminate     claimers' backends ended with pg_terminate_backend in a
#                 loop, at random moments, mid-call when one is in a call;
#                 the claimer connects again and resends
#   sigkill       for pg/local: the whole server (postmaster and every
#                 backend) killed with SIGKILL and started again
#   lost-request, lost-reply
#                 for pg/local: the proxy stands between the claimers and
#                 the PostgreSQL server
#
# And on clusters, the fault `failover`: pg/pg-sync and pg/pg-async, a primary
# with a synchronous or asynchronous standby, the primary SIGKILLed and the
# standby promoted (pg_cluster.sh; the asynchronous row is measured, not
# held to the rules); sqlite/nats-cluster and pg/nats-cluster, three
# JetStream servers and a stream of three replicas whose leader is SIGKILLed
# (nats_cluster.sh); sqlite/redis-sentinel, sqlite/redis-cluster and their pg/
# rows, Redis with a replica found by Sentinel and a Redis Cluster, claims
# made with replicas=1, the master SIGKILLed and later back as a replica
# (redis_cluster.sh), and the Sentinel failover without replicas= measured
# apart; sqlite/rabbitmq-cluster and pg/rabbitmq-cluster, three RabbitMQ
# nodes, the one holding the gates SIGKILLed and back 3 s later (rmq_cluster.sh).
#
# On the lease stores (the local SQLite and PostgreSQL stores, Redis lease
# through PostgreSQL) the fault `freeze` runs the claimers as job runners
# (appclaimer.py with FAULT_WORK_MS): lease_ms 1 s, 3 attempts, a won run
# worked 1.5 s with heartbeats, losers watching as backups; a process that
# holds a lease is frozen with SIGSTOP for 2 s, past its lease, in a loop,
# then resumed.  A backup takes over, and the resumed process's heartbeat or
# finish must be refused.
#
# The checker fails on two winners of one slot (of one attempt, on lease
# stores) and on a slot whose claims were all answered without a winner
# (except on RabbitMQ, which may skip a slot whose confirm was lost: see
# doc/stores-amqp-nats.md), and on a fenced token's heartbeat or finish
# accepted after a takeover.  It writes the table of store x fault to
# build/fault-table.md.
#
# Slots are whole seconds (as the hosts require), a second apart, and every
# process claims slot i at the same moment, START + i x STEP ms, as
# schedulers claim a slot when its time comes; a server fault strikes at a
# random moment in the first half of that contention.  ANARCHON_FAULT_PROCS,
# ANARCHON_FAULT_SLOTS and ANARCHON_FAULT_STEP_MS set its size: `make soak`
# runs 16 processes x 1250 slots, claimed 20 ms apart, per cell, over 10^5
# claims per store.
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
source test/redis/server.sh
source test/nats/server.sh
source test/amqp/server.sh
source test/amqp/mq.sh
source test/pg/server.sh
source test/tls/servers.sh
source test/fault/pg_cluster.sh
source test/fault/nats_cluster.sh
source test/fault/redis_cluster.sh
source test/fault/rmq_cluster.sh
# The body is one function called on the last line: bash reads a script as it
# runs it, and a soak runs long enough for the file to be edited meanwhile.
main() {
	here=test/fault
	tmp=$(t_tmpdir)
	PROCS=${ANARCHON_FAULT_PROCS:-16}
	SLOTS=${ANARCHON_FAULT_SLOTS:-20}
	STEP=${ANARCHON_FAULT_STEP_MS:-200}
	TRIES=40                  # resends after errors: about 15 s of them
	TIMEOUT_MS=1000           # every store's timeout_ms here
	TABLE=${ANARCHON_FAULT_TABLE:-$REPO_ROOT/build/fault-table.md}
	FAULTS=${ANARCHON_FAULTS:-none fork lost-request lost-reply sigkill sigstop}

	mq_build || { suite_end; exit; }
	built_or_end fault sqlite test/bin/claimer || exit

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
	printf '%s\n' "1 s none j 1000 tokA won 1 1 5" "2 s none j 1000 tokB won 2 1 900" \
		"1 s none j 1000 tokA finish:true 1 1 950" > "$tmp/fenced.log"
	if /usr/bin/python3 "$here/check.py" /dev/null "$tmp/fenced.log" | grep -q '^FAIL fenced token accepted'; then
		ok "fault: the checker finds a fenced token accepted after a takeover"
	else
		not_ok "fault: the checker finds a fenced token accepted after a takeover"
	fi

	# failover_judge STRUCK LOG...: a failover cell's window, from the kill (its
	# time in ms in the file STRUCK) to the last error answer after it, in ms.
	# Fails, saying what is missing, when the kill was not made, the logs
	# record no fault injected or no answer, or no claim was answered without
	# an error after that window: the claims did not go on.
	failover_judge() {
		local struck=$1
		shift
		[ -s "$struck" ] || { echo "no time of the kill: the kill was not made"; return 1; }
		cat "$@" 2> /dev/null | awk -v t="$(cat "$struck")" '
			$1 == "#" && $2 == "injected" { inj += $5; next }
			$1 == "#" || NF != 10 || $7 ~ /^(heartbeat|finish):/ { next }
			{ n++ }
			$7 ~ /^error/ && $10 > t && $10 - t > w { w = $10 - t }
			$7 !~ /^error/ && $10 > t && $10 - t > a { a = $10 - t }
			END {
				if (n == 0 || inj == 0 || a <= w) {
					went = a > 0 ? a " ms after it" : "none after it"
					printf "answers: %d, faults injected: %d, last error %d ms after the kill, last answer without error: %s\n", n, inj, w, went
					exit 1
				}
				print w + 0
			}'
	}
	# failover_ok NAME CELL: NAME (with "{W}" for the window) ok when the
	# cell's failover went as failover_judge says it must.
	failover_ok() {
		local out
		if out=$(failover_judge "$tmp/struck" "$tmp/log/$2.failover".*[0-9]); then ok "${1//"{W}"/$out}"
		else not_ok "${1//"{W}"/?}" "$out"; fi
	}
	# The judge itself: no kill, an empty log, and claims that never went on
	# after the kill must each fail it.
	echo 1000 > "$tmp/judge.struck"
	printf '%s\n' "1 s failover j 1000 tokA won 0 1 900" "# injected s failover 1" \
		"1 s failover j 2000 tokA error:timeout 0 1 1500" > "$tmp/judge.stuck"
	printf '%s\n' "1 s failover j 1000 tokA won 0 1 900" "# injected s failover 1" \
		"1 s failover j 2000 tokA error:timeout 0 1 1500" "1 s failover j 2000 tokA won 0 2 1700" > "$tmp/judge.went-on"
	if failover_judge /dev/null "$tmp/judge.went-on" > /dev/null || failover_judge "$tmp/judge.struck" /dev/null > /dev/null ||
		failover_judge "$tmp/judge.struck" "$tmp/judge.stuck" > /dev/null ||
		[ "$(failover_judge "$tmp/judge.struck" "$tmp/judge.went-on")" != 500 ]; then
		not_ok "fault: the failover judge fails a cell without a kill, without answers, or whose claims did not go on"
	else
		ok "fault: the failover judge fails a cell without a kill, without answers, or whose claims did not go on"
	fi

	# ---------------------------------------------------------------- servers
	# The -tls stores: a TLS port of the same Redis, a NATS server that speaks
	# only TLS, verified against the test CA.
	tls_certs || not_ok "fault: make the test certificates"
	RPORT=$(free_port) RTPORT=$(free_port)
	REDIS_ARGS=$(redis_tls_args "$RTPORT")
	# shellcheck disable=SC2086
	redis_start main "$RPORT" $REDIS_ARGS || not_ok "fault: start redis-server" "$(tail -n 5 "$R_DIR/main/log" 2> /dev/null)"
	nats_start main || not_ok "fault: start nats-server -js"
	nats_start tls -c "$(nats_tls_conf tls)" || not_ok "fault: start nats-server -js with TLS"
	rmq_tls_conf && rmq_start "$tmp/rmq" "${RMQ_TLS_CONF[@]}" || not_ok "fault: start RabbitMQ"

	STORES=${ANARCHON_FAULT_C_STORES-redis-lease redis-stream-id redis-script nats rabbitmq redis-lease-tls nats-tls rabbitmq-tls}
	# The faults of the -tls stores: the server killed, a reply cut half way
	# (a TLS record cut short).
	TLS_FAULTS=${ANARCHON_FAULT_TLS_FAULTS-sigkill lost-reply}
	SQLITE_STORES=${ANARCHON_FAULT_SQLITE_STORES-local redis-stream-id redis-script nats rabbitmq}
	SQLITE_FAULTS=${ANARCHON_FAULT_SQLITE_FAULTS:-none sigkill freeze}
	PG_STORES=${ANARCHON_FAULT_PG_STORES-local redis-lease redis-stream-id redis-script nats rabbitmq}
	PG_FAULTS=${ANARCHON_FAULT_PG_FAULTS:-none terminate sigkill freeze lost-request lost-reply}
	PG_PAIRS=${ANARCHON_FAULT_PG_PAIRS-pg-sync pg-async}
	# The hosts that claim through the NATS cluster (empty: no cluster).
	NATS_CLUSTERS=${ANARCHON_FAULT_NATS_CLUSTER-sqlite pg}
	# The hosts that claim through Redis with Sentinel and a Redis Cluster.
	REDIS_CLUSTERS=${ANARCHON_FAULT_REDIS_CLUSTER-sqlite pg}
	# The hosts that claim through three clustered RabbitMQ nodes.
	RMQ_CLUSTERS=${ANARCHON_FAULT_RMQ_CLUSTER-sqlite pg}
	LEASE_STORES="local redis-lease"
	# The job runners of the fault `freeze`.
	WORK=(FAULT_WORK_MS=1500 FAULT_LEASE_MS=1000)
	pg_install > "$tmp/pg-install.log" 2>&1 || not_ok "fault: make install" "$(tail -n 20 "$tmp/pg-install.log")"
	pg_start "fsync = off" > "$tmp/pg-start.log" 2>&1 || not_ok "fault: start PostgreSQL" "$(tail -n 20 "$tmp/pg-start.log")"
	psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION anarchon" > "$tmp/pg-setup.log" 2>&1 ||
		not_ok "fault: CREATE EXTENSION anarchon" "$(cat "$tmp/pg-setup.log")"

	# scheme STORE: which server a store's claims go to.
	scheme() {
		case $1 in
			redis-sentinel*) echo redis+sentinel ;; redis-*-tls) echo rediss ;; redis-*) echo redis ;;
			nats-tls) echo tls ;; nats*) echo nats ;; rabbitmq-tls) echo amqps ;; rabbitmq*) echo amqp ;;
		esac
	}
	# clustered STORE: a store of several servers, whose cells run one per host.
	clustered() { case $1 in nats-cluster | redis-sentinel* | redis-cluster | rabbitmq-cluster) return 0 ;; esac; return 1; }

	# server_port STORE, server_pid STORE: the server a store's claims go to.
	server_port() {
		# A cluster: "P1,127.0.0.1:P2,127.0.0.1:P3", which url() makes a list of servers.
		case $1 in
			nats-cluster) echo "${NATS_CLUSTER_PORTS[fcl]}"; return ;;
			redis-sentinel*) echo "${RSEN_SENTINELS[frs]}/frs"; return ;;
			redis-cluster) echo "${RCL_PORTS[fcr]}"; return ;;
			rabbitmq-cluster) echo "$RMQC_PORTS"; return ;;
		esac
		case $(scheme "$1") in
			redis) echo "$RPORT" ;;
			rediss) echo "$RTPORT" ;;
			nats) echo "${NATS_PORT[main]}" ;;
			tls) echo "${NATS_PORT[tls]}" ;;
			amqp) echo "$RMQ_PORT" ;;
			amqps) echo "$RMQ_TLS_PORT" ;;
		esac
	}
	server_pid() {
		case $(scheme "$1") in
			redis | rediss) redis_pid main ;;
			nats) echo "${NATS_PID[main]}" ;;
			tls) echo "${NATS_PID[tls]}" ;;
			amqp | amqps) echo "$RMQ_VM" ;;
		esac
	}

	# server_kill STORE: SIGKILL the server, then start it again, same port and files.
	server_kill() {
		case $(scheme "$1") in
			redis | rediss)
				kill -KILL "$(redis_pid main)"
				wait "$(redis_pid main)" 2> /dev/null
				rm -f "$R_DIR/main/pid"
				# shellcheck disable=SC2086
				redis_start main "$RPORT" $REDIS_ARGS > /dev/null
				;;
			nats) nats_restart main KILL ;;
			tls) nats_restart tls KILL ;;
			amqp | amqps) rmq_restart KILL ;;
			*) pg_kill ;;
		esac
	}

	# pg_kill: the PostgreSQL server killed with SIGKILL, postmaster and every
	# backend at once, as a crash would end them, then started again.  The
	# postmaster is stopped first so that it forks no backend meanwhile.
	pg_kill() {
		local pm
		pm=$(head -n 1 "$PG_DATA/postmaster.pid")
		kill -STOP "$pm"
		kill -KILL $(pgrep -P "$pm") "$pm"
		while kill -0 "$pm" 2> /dev/null || [ -n "$(pgrep -P "$pm")" ]; do sleep 0.05; done
		pg_as_server_user "$PG_BINDIR/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 start > /dev/null 2>&1
	}

	# terminate_loop STOPFILE COUNTFILE: end a claimer's backend with
	# pg_terminate_backend every 50 to 300 ms, one in a call when there is
	# one, until STOPFILE exists; COUNTFILE gets how many were ended.
	terminate_loop() {
		local n=0 r
		while [ ! -e "$1" ]; do
			# The fault's pace: a backend ended every 50 to 300 ms.
			sleep "0.$(printf '%02d' $(( 5 + RANDOM % 25 )))"
			r=$(psql -X -A -t -c "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) AS t
				FROM pg_stat_activity WHERE application_name = 'anarchon-fault'
				ORDER BY state = 'active' DESC, random() LIMIT 1) x WHERE t" 2> /dev/null)
			n=$(( n + ${r:-0} ))
		done
		echo "$n" > "$2"
	}

	# freeze_loop STOPFILE COUNTFILE MARKDIR: every 0.3 to 1 s, freeze a
	# process that holds a lease (a file named for its pid in MARKDIR) with
	# SIGSTOP for 2 s, past its 1 s lease, then resume it.
	freeze_loop() {
		local n=0 pid
		while [ ! -e "$1" ]; do
			# The fault's pace: a freeze every 0.3 to 1 s.
			sleep "0.$(( 3 + RANDOM % 7 ))"
			pid=$(ls "$3" 2> /dev/null | shuf -n 1)
			[ -n "$pid" ] && kill -STOP "$pid" 2> /dev/null || continue
			n=$(( n + 1 ))
			# The fault: frozen 2 s, past its 1 s lease.
			sleep 2
			kill -CONT "$pid"
		done
		echo "$n" > "$2"
	}

	# url STORE PORT: the store's URL, its names under the prefix "fault".
	url() {
		local q
		case $1 in
			redis-lease) q="strategy=lease&prefix=fault-lease" ;;
			redis-lease-tls) q="strategy=lease&prefix=fault-lease-tls&$(tls_query)" ;;
			nats-tls) q="stream=FAULT&prefix=fault&$(tls_query)" ;;
			rabbitmq-tls) q="prefix=fault-tls&$(tls_query)" ;;
			redis-stream-id) q="strategy=stream-id&prefix=fault-sid" ;;
			redis-script) q="strategy=script&prefix=fault-script" ;;
			nats) q="stream=FAULT&prefix=fault" ;;
			nats-cluster) q="stream=FCL&prefix=fcl&replicas=3" ;;
			# With Sentinel and in a cluster, a claim waits for a replica to have it.
			redis-sentinel) q="strategy=script&prefix=frs&replicas=1" ;;
			redis-sentinel-nowait) q="strategy=script&prefix=frsn" ;;
			redis-cluster) q="strategy=script&prefix=fcr&cluster=yes&replicas=1" ;;
			rabbitmq-cluster) q="prefix=frc" ;;
			rabbitmq) q="prefix=fault" ;;
		esac
		echo "$(scheme "$1")://127.0.0.1:$2?$q&timeout_ms=$TIMEOUT_MS"
	}

	# Through PostgreSQL, each network store is a foreign server of its name.
	create_server() {
		psql -X -q -v ON_ERROR_STOP=1 -c "CREATE SERVER \"$1\" FOREIGN DATA WRAPPER anarchon
			OPTIONS (url '$(url "$1" "$(server_port "$1")")')" >> "$tmp/pg-setup.log" 2>&1
	}
	for store in $PG_STORES; do
		[ "$store" = local ] && continue
		create_server "$store" || not_ok "fault: CREATE SERVER $store" "$(tail -n 5 "$tmp/pg-setup.log")"
	done

	PROXY_PID=
	proxy_stop() { [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2> /dev/null && wait "$PROXY_PID" 2> /dev/null; PROXY_PID=; }
	at_exit proxy_stop

	# claimer HOST STORE PORT FAULT I SLOT0 START: one claiming process of a cell.
	claimer() {
		local host=$1 store=$2 port=$3 fault=$4 i=$5 url=local env=() job=f-$4
		# Both hosts' cells of a cluster share its servers: a job each.
		clustered "$store" && job=f-$fault-$host
		local plan=("$6" "$SLOTS" 1000 "$TRIES" "$i $store $fault" "$7" "$STEP")
		[ "$host" = c ] || plan[4]="$i $host/$store $fault"
		[ "$store" = local ] || [ "${store#pg-}" != "$store" ] || url=$(url "$store" "$port")
		[ "$fault" = freeze ] && env=("${WORK[@]}" "FAULT_MARK_DIR=$tmp/mark")
		if [ "$host" = pg ]; then
			# The local store through TCP, so that the proxy can stand between.
			[ "$store" = local ] && env+=(PGHOST=127.0.0.1 "PGPORT=$port")
			# A primary and its standby: libpq tries both, and takes the one
			# that accepts writes (the standby once it is promoted).
			# The application lowers synchronous_commit for speed: the claims
			# must reach a synchronous standby all the same.
			local extra=
			if [ "${store#pg-}" != "$store" ]; then
				env+=(PGHOST=127.0.0.1,127.0.0.1 "PGPORT=$port" PGTARGETSESSIONATTRS=read-write)
				store=local
				extra=" -c synchronous_commit=off"
			fi
			[ "$store" = local ] || url=$store
			local opts="-c anarchon.store=$url -c anarchon.overlap=allow$extra"
			[ "$fault" = freeze ] && opts+=" -c anarchon.lease_ms=1000 -c anarchon.attempts=3"
			env "${env[@]}" PGOPTIONS="$opts" /usr/bin/python3 "$here/appclaimer.py" pg "$job" "${plan[@]}"
		elif [ "$host" = sqlite ] && [ "$fault" = freeze ]; then
			env "${env[@]}" ANARCHON_STORE="$url" ANARCHON_LEASE_MS=1000 ANARCHON_ATTEMPTS=3 ANARCHON_OVERLAP=allow \
				ANARCHON_EXTENSION="$REPO_ROOT/sqlite/anarchon" FAULT_DB="$tmp/sqlite-$store-freeze.db" \
				/usr/bin/python3 "$here/appclaimer.py" sqlite "$job" "${plan[@]}"
		elif [ "$host" = sqlite ]; then
			ANARCHON_STORE=$url test/bin/claimer log "$tmp/sqlite-$store.db" "$job" "${plan[@]}"
		elif [ "$fault" = fork ]; then
			"$DRV" -F 4 "$url" log "$job" "${plan[@]}"
		else
			"$DRV" "$url" log "$job" "${plan[@]}"
		fi
	}

	# cell HOST STORE FAULT: one run of the contention under one fault; its log
	# goes to $tmp/log/[HOST.]STORE.FAULT.* and one "# injected" line says how
	# many faults.
	cell() {
		local host=$1 store=$2 fault=$3 port pids=() i n=0 slot0 log=$tmp/log/$1.$2.$3 pport pid nproc=$PROCS loop= revive=
		[ "$store" = local ] || port=$(server_port "$store")
		[ "$host/$store" = pg/local ] && port=$PGPORT
		[ "${store#pg-}" != "$store" ] && port=${PAIR_PORTS[$store]}
		# RabbitMQ, restarted after the previous cell's kill, opens its TLS
		# listener after its plain one: a cell must not begin before it does.
		[ "$store" != rabbitmq-tls ] || wait_port "$port" 30 ||
			not_ok "fault: RabbitMQ's TLS listener is open before the $store cell"
		rm -rf "$tmp/mark" "$tmp/stop" "$tmp/struck" && mkdir -p "$tmp/mark"
		# Job runners work each run 1.5 s: at most 150 slots, 200 ms apart or
		# more, so that a soak's runners keep up with their slots.
		local SLOTS=$SLOTS STEP=$STEP
		if [ "$fault" = freeze ]; then
			[ "$SLOTS" -le 150 ] || SLOTS=150
			[ "$STEP" -ge 200 ] || STEP=200
		fi
		case $fault in
			lost-request | lost-reply)
				pport=$(free_port)
				/usr/bin/python3 "$here/proxy.py" "$pport" "$port" "${fault#lost-}" 0.05 "$RANDOM" "$log.cuts" &
				PROXY_PID=$!
				wait_port "$pport" 10 || not_ok "fault: the proxy for $store listens"
				port=$pport
				;;
		esac
		local start=$(( $(date +%s%3N) + 1500 ))
		slot0=$(( ($(date +%s) + 2) * 1000 ))
		# The server fault's moment: somewhere in the first half of the contention.
		local strike=$(( start + SLOTS * STEP / 10 + RANDOM % (SLOTS * STEP * 4 / 10 + 1) ))
		if [ "$fault" = fork ]; then
			nproc=$(( (PROCS + 3) / 4 ))     # each forks into 4 (mq-driver -F 4)
			n=$(( nproc * 3 ))
		fi
		for i in $(seq 1 "$nproc"); do
			# stderr apart: libpq writes a server's notice there (a terminated
			# backend's FATAL) at any moment, and it is no answer to check.
			claimer "$host" "$store" "$port" "$fault" "$i" "$slot0" "$start" > "$log.$i" 2> "$log.$i.stderr" &
			pids+=($!)
		done
		case $fault in
			terminate) terminate_loop "$tmp/stop" "$log.cuts" & loop=$! ;;
			freeze) freeze_loop "$tmp/stop" "$log.cuts" "$tmp/mark" & loop=$! ;;
		esac
		case $fault in
			sigkill)
				sleep_until "$strike"
				server_kill "$store" && n=1
				;;
			failover)
				sleep_until "$strike"
				date +%s%3N > "$tmp/struck"
				# Redis: the killed node comes back as a replica once another
				# took over, as a supervisor would restart it; with replicas=1
				# claims wait for it (or for a second replica) to go on.
				case $store in
					nats-cluster) nats_cluster_kill_leader fcl FCL && n=1 ;;
					redis-sentinel*)
						rsen_kill_master frs && n=1
						rsen_revive frs >> "$tmp/redis-cluster.log" 2>&1 & revive=$!
						;;
					redis-cluster)
						rcl_kill_master fcr "fcr:{f-failover-$host}" && n=1
						rcl_revive fcr >> "$tmp/redis-cluster.log" 2>&1 & revive=$!
						;;
					# The claimers' first node, where their gates live; its
					# supervisor starts it again 3 s later (here, not in the
					# background: the node's pids must stay the suite's).
					rabbitmq-cluster)
						rmqc_kill 1 && n=1
						# The scenario: the node's supervisor restarts it 3 s later.
						sleep 3
						rmqc_revive 1 >> "$tmp/rmq-cluster.log" 2>&1 ||
							not_ok "fault: the killed RabbitMQ node starts again" "$(tail -n 5 "$tmp/rmq-cluster.log")"
						;;
					*) pg_pair_failover "$store" && n=1 ;;
				esac
				;;
			sigstop)
				sleep_until "$strike"
				pid=$(server_pid "$store")
				kill -STOP "$pid" && n=1
				# The fault: frozen past the store's timeout_ms.
				sleep $(( TIMEOUT_MS / 1000 + 1 ))
				kill -CONT "$pid"
				;;
		esac
		wait "${pids[@]}"
		if [ -n "$revive" ] && ! wait "$revive"; then
			not_ok "fault: the killed node of $store is back as a replica" "$(tail -n 5 "$tmp/redis-cluster.log")"
		fi
		case $fault in
			lost-request | lost-reply)
				proxy_stop
				n=$(cat "$log.cuts" 2> /dev/null || echo 0)
				;;
			terminate | freeze)
				touch "$tmp/stop"
				wait "$loop"
				n=$(cat "$log.cuts" 2> /dev/null || echo 0)
				;;
		esac
		local label=$store
		[ "$host" = c ] || label=$host/$store
		echo "# injected $label $fault $n" >> "$log.1"
		[ "$fault" = none ] || [ "$n" -gt 0 ] || not_ok "fault: $label under $fault: no fault was injected"
	}

	# fits HOST STORE FAULT: whether that cell is one of the table's.
	fits() {
		case $2 in *-tls) [[ " $TLS_FAULTS " == *" $3 "* ]] || return 1 ;; esac
		case $3 in
			freeze) [[ " $LEASE_STORES " == *" $2 "* ]] && { [ "$1" = pg ] || [ "$2" = local ]; } ;;
			sigkill) [ "$1" = pg ] || [ "$2" != local ] ;;
			terminate) [ "$1" = pg ] ;;
			lost-*) [ "$1" = c ] || [ "$1/$2" = pg/local ] ;;
			*) true ;;
		esac
	}
	mkdir -p "$tmp/log" "$(dirname "$TABLE")"
	# The failover cells measured apart, not held to the rules (their labels).
	MEASURED=
	for store in $STORES; do
		for fault in $FAULTS; do
			fits c "$store" "$fault" && cell c "$store" "$fault"
		done
	done
	for store in $SQLITE_STORES; do
		for fault in $SQLITE_FAULTS; do
			fits sqlite "$store" "$fault" && cell sqlite "$store" "$fault"
		done
	done
	for store in $PG_STORES; do
		for fault in $PG_FAULTS; do
			fits pg "$store" "$fault" && cell pg "$store" "$fault"
		done
	done
	# Three JetStream servers with a stream of 3 replicas: the stream's leader
	# SIGKILLed during the contention, through each host (nats_cluster.sh).
	# The killed server comes back between cells, so each starts with three.
	if [ -n "$NATS_CLUSTERS" ]; then
		if nats_cluster_start fcl > "$tmp/nats-cluster.log" 2>&1 &&
			nats_cluster_ready fcl "$(url nats-cluster "$(server_port nats-cluster)")" >> "$tmp/nats-cluster.log" 2>&1 &&
			create_server nats-cluster; then
			for host in $NATS_CLUSTERS; do
				cell "$host" nats-cluster failover
				failover_ok "fault: $host/nats-cluster failover: errors answered for {W} ms after the stream's leader (${NATS_CLUSTER_KILLED[fcl]}) was killed, then claims went on" "$host.nats-cluster"
				nats_cluster_revive fcl >> "$tmp/nats-cluster.log" 2>&1
				nats_cluster_ready fcl "$(url nats-cluster "$(server_port nats-cluster)")" >> "$tmp/nats-cluster.log" 2>&1 ||
					not_ok "fault: the NATS cluster is whole again after $host/nats-cluster" "$(tail -n 5 "$tmp/nats-cluster.log")"
			done
		else
			not_ok "fault: start a cluster of three JetStream servers" "$(tail -n 20 "$tmp/nats-cluster.log")"
		fi
	fi
	# Redis: a master with a replica watched by three sentinels, and a
	# cluster of three masters with a replica each; the master that serves
	# the cell's job SIGKILLed during the contention, through each host
	# (redis_cluster.sh).  Claims wait for a replica (replicas=1); the same
	# failover without it is measured apart, like an asynchronous standby.
	if [ -n "$REDIS_CLUSTERS" ]; then
		if rsen_start frs > "$tmp/redis-cluster.log" 2>&1 && rcl_start fcr >> "$tmp/redis-cluster.log" 2>&1 &&
			create_server redis-sentinel && create_server redis-cluster; then
			for host in $REDIS_CLUSTERS; do
				for store in redis-sentinel redis-cluster; do
					cell "$host" "$store" failover
					failover_ok "fault: $host/$store failover: errors answered for {W} ms after the master was killed, then claims went on" "$host.$store"
				done
			done
			cell sqlite redis-sentinel-nowait failover
			MEASURED="$MEASURED sqlite/redis-sentinel-nowait"
			mkdir -p "$tmp/measured"
			mv "$tmp/log/sqlite.redis-sentinel-nowait.failover".* "$tmp/measured/"
		else
			not_ok "fault: start Redis with three sentinels, and a Redis Cluster" "$(tail -n 20 "$tmp/redis-cluster.log")"
		fi
	fi
	# RabbitMQ: three nodes in one cluster; the node the claimers connect to
	# first, which holds their gates, SIGKILLed during the contention and
	# started again 3 s later, through each host (rmq_cluster.sh).  The gates
	# stay classic queues: a quorum queue is no gate (doc/clusters.md).
	if [ -n "$RMQ_CLUSTERS" ]; then
		if rmqc_start "$tmp/rmqc" > "$tmp/rmq-cluster.log" 2>&1 && create_server rabbitmq-cluster; then
			for host in $RMQ_CLUSTERS; do
				cell "$host" rabbitmq-cluster failover
				failover_ok "fault: $host/rabbitmq-cluster failover: errors answered for {W} ms after a node was killed, then claims went on" "$host.rabbitmq-cluster"
			done
		else
			not_ok "fault: start three clustered RabbitMQ nodes" "$(tail -n 20 "$tmp/rmq-cluster.log")"
		fi
	fi
	# A primary with a standby, the primary killed and the standby promoted
	# during the contention (pg_cluster.sh).  With a synchronous standby the
	# table holds it to the same rules; an asynchronous one may lose a claim
	# confirmed just before the crash, so its cell is measured apart.
	for store in $PG_PAIRS; do
		# Not in a subshell: it records the pair's ports and its cleanup.
		if ! pg_pair_start "$store" "${store#pg-}" > "$tmp/pair-$store.log" 2>&1; then
			not_ok "fault: start a primary and a standby ($store)" "$(tail -n 20 "$tmp/pair-$store.log")"
			continue
		fi
		if [ "$store" = pg-sync ]; then
			out=$(pg_pair_standby_claim "$store")
			printf '%s' "$out" | grep -q "this server is a standby" &&
				ok "fault: a claim sent to a standby is refused, and the error says it is a standby" ||
				not_ok "fault: a claim sent to a standby is refused, and the error says it is a standby" "$out"
		fi
		cell pg "$store" failover
		failover_ok "fault: $store failover: errors answered for {W} ms after the primary was killed, then claims went on on the promoted standby" "pg.$store"
		if [ "$store" = pg-async ]; then
			MEASURED="$MEASURED pg/$store"
			mkdir -p "$tmp/measured"
			mv "$tmp/log/pg.$store.failover".* "$tmp/measured/"
		fi
	done

	if out=$(/usr/bin/python3 "$here/check.py" "$TABLE" "$tmp"/log/*.*[0-9] 2>&1); then
		ok "fault: $PROCS processes x $SLOTS slots per store and fault: no double win, no answered slot without a winner"
	else
		not_ok "fault: $PROCS processes x $SLOTS slots per store and fault: no double win, no answered slot without a winner" \
			"$(printf '%s\n' "$out" | grep -E '^(FAIL|# unreadable)' | head -n 20
			   cat "$tmp"/log/*.stderr 2>/dev/null | grep -v '^ *$' | head -n 5 | sed 's/^/stderr: /')"
	fi
	printf '%s\n' "$out" | grep '^|' | sed 's/^/# /'
	# Failovers to a replica that may lack the last confirmed claims (an
	# asynchronous standby, Redis without replicas=): measured, not held to the rules.
	# Each cell moved to measured/ must be in that table, with a fault
	# injected and answers: an empty or unreadable log measures nothing.
	if [ -n "$MEASURED" ]; then
		out=$(/usr/bin/python3 "$here/check.py" "${TABLE%.md}-async.md" "$tmp"/measured/*.*[0-9] 2>&1)
		local missing='' lbl row
		for lbl in $MEASURED; do
			row=$(printf '%s\n' "$out" | awk -F'|' -v c="$lbl" '{ gsub(/ /, "", $2); gsub(/ /, "", $3) }
				$2 == c && $3 == "failover" && $4 > 0 && $6 > 0 { print; exit }')
			[ -n "$row" ] || missing="$missing $lbl"
		done
		printf '%s\n' "$out" | grep -q '^FAIL .*could not be read' && missing="$missing (unreadable lines)"
		if [ -z "$missing" ]; then
			ok "fault: failover to an asynchronous replica measured, double wins (claims confirmed by the old primary, then lost): $(printf '%s\n' "$out" |
				awk -F'|' '$3 ~ /failover/ { gsub(/ /, "", $2); printf "%s%s %d", sep, $2, $8; sep = "; " }')"
		else
			not_ok "fault: failover to an asynchronous replica measured" \
				"no row with a fault injected and answers for:$missing" "$(printf '%s\n' "$out" | head -n 12)"
		fi
		printf '%s\n' "$out" | grep '^|' | sed 's/^/# /'
	fi
	suite_end
}
main "$@"
