# rmq_cluster.sh — three RabbitMQ nodes in one cluster, for the fault
# suite's `failover` cells of the store rabbitmq-cluster (sourced after
# test/amqp/server.sh, whose functions run each node).
#
#   rmqc_start DIR    nodes 1..3 under DIR on free loopback ports, one epmd
#                     and one Erlang cookie, nodes 2 and 3 joined to node 1;
#                     RMQC_PORTS is "P1,127.0.0.1:P2,127.0.0.1:P3"
#   rmqc_kill I       SIGKILL node I's Erlang VM
#   rmqc_revive I     start node I again on its files (it rejoins by itself)
#   rmqc_stop         every node, then their epmd (registered with at_exit)
#
# server.sh keeps one node in the globals RMQ_*; the suite's own single node
# lives there too, so each call here saves them, loads node I, and puts them
# back (rmqc_with).
declare -A RMQC
RMQC_PORTS=

# rmqc_with I CMD...: run CMD with node I in server.sh's globals.
rmqc_with() {
	local i=$1 saved rc
	shift
	saved=$(declare -p RMQ_DIR RMQ_PORT RMQ_DIST_PORT RMQ_EPMD_PORT RMQ_NODE RMQ_PID RMQ_VM 2> /dev/null)
	RMQ_DIR=${RMQC[$i,dir]} RMQ_PORT=${RMQC[$i,port]} RMQ_DIST_PORT=${RMQC[$i,dist]}
	RMQ_EPMD_PORT=${RMQC[epmd]} RMQ_NODE=${RMQC[$i,node]} RMQ_PID=${RMQC[$i,pid]:-} RMQ_VM=${RMQC[$i,vm]:-}
	"$@"
	rc=$?
	RMQC[$i,pid]=$RMQ_PID
	RMQC[$i,vm]=$RMQ_VM
	unset RMQ_DIR RMQ_PORT RMQ_DIST_PORT RMQ_EPMD_PORT RMQ_NODE RMQ_PID RMQ_VM
	eval "${saved//declare -- /declare -g }"
	return $rc
}

rmqc_start() {
	local base=$1 i dir cookie
	RMQC[epmd]=$(free_port) || return 1
	cookie=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
	at_exit rmqc_stop
	for i in 1 2 3; do
		dir=$base/n$i
		RMQC[$i,dir]=$dir
		RMQC[$i,port]=$(free_port) && RMQC[$i,dist]=$(free_port) || return 1
		RMQC[$i,node]="fcr$i-${RMQC[$i,port]}@localhost"
		mkdir -p "$dir/home" "$dir/mnesia" "$dir/log"
		printf '%s' "$cookie" > "$dir/home/.erlang.cookie"
		chmod 400 "$dir/home/.erlang.cookie"
		: > "$dir/enabled_plugins"
		echo '[].' > "$dir/advanced.config"
		printf 'listeners.tcp.default = 127.0.0.1:%s\nloopback_users = none\n' "${RMQC[$i,port]}" > "$dir/rabbitmq.conf"
		rmqc_with "$i" rmq_launch || return 1
	done
	for i in 2 3; do
		rmqc_with "$i" rmq_ctl stop_app > /dev/null &&
			rmqc_with "$i" rmq_ctl join_cluster "${RMQC[1,node]}" > /dev/null &&
			rmqc_with "$i" rmq_ctl start_app > /dev/null || return 1
	done
	RMQC_PORTS="${RMQC[1,port]},127.0.0.1:${RMQC[2,port]},127.0.0.1:${RMQC[3,port]}"
	rmqc_with 1 rmq_ctl cluster_status
}

rmqc_kill() { rmqc_with "$1" rmq_kill_node KILL; }

rmqc_revive() { rmqc_with "$1" rmq_launch; }

rmqc_stop() {
	local i epmd
	[ -n "${RMQC[epmd]:-}" ] || return 0
	epmd=$(RMQ_EPMD_PORT=${RMQC[epmd]} rmq_epmd_pid)
	for i in 1 2 3; do [ -n "${RMQC[$i,dir]:-}" ] && rmqc_with "$i" rmq_kill_node; done
	[ -n "$epmd" ] && kill "$epmd" 2> /dev/null
	RMQC[epmd]=
	return 0
}
