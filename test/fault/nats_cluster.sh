# nats_cluster.sh — three JetStream servers in one cluster, for the fault
# suite's `failover` cells of the store nats-cluster (sourced by run.sh after
# test/nats/server.sh).
#
#   nats_cluster_start NAME     servers NAME-1..3 on free loopback ports,
#                               routed to each other; NATS_CLUSTER_PORTS[NAME]
#                               is "P1,127.0.0.1:P2,127.0.0.1:P3" (the host
#                               part of a URL after its first host)
#   nats_cluster_ready NAME URL until a claim through URL is answered (the
#                               cluster has elected its leaders)
#   nats_cluster_kill_leader NAME STREAM
#                               SIGKILL the server that leads STREAM; its name
#                               in NATS_CLUSTER_KILLED[NAME]
#   nats_cluster_revive NAME    start the killed server again (same store)
declare -A NATS_CLUSTER_PORTS NATS_CLUSTER_KILLED

nats_cluster_start() {
	local name=$1 i routes=() c=()
	for i in 1 2 3; do c[i]=$(free_port) || return 1; routes+=("nats://127.0.0.1:${c[i]}"); done
	routes=$(IFS=,; echo "${routes[*]}")
	for i in 1 2 3; do
		nats_start "$name-$i" --name "$name-$i" --cluster_name "$name" \
			--cluster "nats://127.0.0.1:${c[i]}" --routes "$routes" || return 1
	done
	NATS_CLUSTER_PORTS[$name]="${NATS_PORT[$name-1]},127.0.0.1:${NATS_PORT[$name-2]},127.0.0.1:${NATS_PORT[$name-3]}"
}

nats_cluster_ready() {
	local i out
	for i in $(seq 1 60); do
		out=$(sqlite3 :memory: ".load $REPO_ROOT/sqlite/anarchon" "SELECT anarchon_config('store', '$2') IS NULL" \
			"SELECT anarchon_claim('ready', $(( ($(date +%s) + 60) * 1000 )), anarchon_token())" 2>&1)
		case $out in *won*|*lost*) return 0 ;; esac
		sleep 0.5
	done
	echo "$out"
	return 1
}

# The stream's leader, as a live server of the cluster says.
nats_cluster_leader() {
	local i
	for i in 1 2 3; do
		[ -n "${NATS_PID[$1-$i]:-}" ] || continue
		nats_api "$1-$i" "\$JS.API.STREAM.INFO.$2" "" 2> /dev/null |
			/usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["cluster"]["leader"])' 2> /dev/null &&
			return 0
	done
	return 1
}

nats_cluster_kill_leader() {
	local leader
	leader=$(nats_cluster_leader "$1" "$2") || return 1
	NATS_CLUSTER_KILLED[$1]=$leader
	nats_stop "$leader" KILL
}

nats_cluster_revive() {
	local dead=${NATS_CLUSTER_KILLED[$1]:-}
	[ -n "$dead" ] || return 0
	nats_launch "$dead"
	NATS_CLUSTER_KILLED[$1]=
}
