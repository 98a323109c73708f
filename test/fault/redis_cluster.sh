# redis_cluster.sh — Redis with a replica watched by sentinels, and a Redis
# Cluster, for the fault suite's `failover` cells (sourced after
# test/redis/server.sh).  Every server is a redis-server of its own under
# $R_DIR, on a free loopback port, stopped at exit.
#
#   rsen_start NAME      master NAME-a, its replica NAME-b, and three
#                        sentinels NAME-s1..3 that watch the master (called
#                        NAME; down after 1 s); RSEN_SENTINELS[NAME] is
#                        "P1,127.0.0.1:P2,127.0.0.1:P3"
#   rsen_kill_master NAME
#                        SIGKILL the master the sentinels name; its server
#                        name in RSEN_KILLED[NAME]
#   rsen_revive NAME     once the sentinels have promoted the replica, start
#                        the killed server again as its replica, and wait
#                        until it has caught up
#   rcl_start NAME       a cluster of three masters NAME-1..3 and a replica
#                        of each NAME-4..6 (node timeout 1 s);
#                        RCL_PORTS[NAME] is "P1,127.0.0.1:P2,127.0.0.1:P3"
#   rcl_kill_master NAME KEY
#                        SIGKILL the master that serves KEY; RCL_KILLED[NAME]
#   rcl_revive NAME      once a replica serves the key, start the killed
#                        node again (it rejoins as a replica) and wait until
#                        the cluster is whole
# A new replica is served at once (a diskless sync waits 5 s for others by default).
RSYNC_NOW="--repl-diskless-sync-delay 0"
declare -A RSEN_SENTINELS RSEN_KILLED RSEN_PORT RCL_PORTS RCL_KILLED RCL_PORT RCL_BUS RCL_KEY

# rsen_sentinel NAME I MASTERPORT: one sentinel, its config file its own (it rewrites it).
rsen_sentinel() {
	local name=$1 i=$2 mport=$3 port pid dir=$R_DIR/$1-s$2
	port=$(free_port) || return 1
	mkdir -p "$dir"
	cat > "$dir/sentinel.conf" <<-EOF
		port $port
		bind 127.0.0.1
		dir $dir
		logfile $dir/log
		sentinel monitor $name 127.0.0.1 $mport 2
		sentinel down-after-milliseconds $name 1000
		sentinel failover-timeout $name 10000
		sentinel parallel-syncs $name 1
	EOF
	redis-server "$dir/sentinel.conf" --sentinel &
	pid=$!
	echo "$pid" > "$dir/pid"
	at_exit "redis_stop $name-s$i"
	wait_port "$port" 30 || return 1
	RSEN_PORT[$name-s$i]=$port
}

rsen_start() {
	local name=$1 a b i
	a=$(free_port) && redis_start "$name-a" "$a" $RSYNC_NOW || return 1
	b=$(free_port) && redis_start "$name-b" "$b" $RSYNC_NOW --replicaof 127.0.0.1 "$a" || return 1
	RSEN_PORT[$name-a]=$a
	RSEN_PORT[$name-b]=$b
	rsen_synced "$b" || return 1
	for i in 1 2 3; do rsen_sentinel "$name" "$i" "$a" || return 1; done
	RSEN_SENTINELS[$name]="${RSEN_PORT[$name-s1]},127.0.0.1:${RSEN_PORT[$name-s2]},127.0.0.1:${RSEN_PORT[$name-s3]}"
	# The sentinels have found the replica and each other.
	for i in $(seq 1 100); do
		[ "$(redis-cli -p "${RSEN_PORT[$name-s1]}" SENTINEL replicas "$name" 2> /dev/null | grep -c '^flags$')" -ge 1 ] &&
			[ "$(redis-cli -p "${RSEN_PORT[$name-s1]}" SENTINEL sentinels "$name" 2> /dev/null | grep -c '^flags$')" -ge 2 ] && return 0
		sleep 0.1
	done
	echo "# the sentinels did not find the replica and each other"
	return 1
}

# rsen_synced PORT: until the replica on PORT has its link to the master up
# (30 s: Valkey 9 in a chroot beside another, on two cores, took more than 15).
rsen_synced() {
	local i
	for i in $(seq 1 300); do
		redis-cli -p "$1" INFO replication 2> /dev/null | grep -q '^master_link_status:up' && return 0
		sleep 0.1
	done
	echo "# the replica on port $1 did not sync with its master"
	return 1
}

# rsen_master NAME: the server name (NAME-a or NAME-b) the sentinels call the master.
rsen_master() {
	local port s
	for s in 1 2 3; do
		port=$(redis-cli -p "${RSEN_PORT[$1-s$s]}" SENTINEL get-master-addr-by-name "$1" 2> /dev/null | tail -n 1)
		[ -n "$port" ] && break
	done
	for s in a b; do [ "${RSEN_PORT[$1-$s]}" = "$port" ] && { echo "$1-$s"; return 0; }; done
	return 1
}

# rkill NAME: SIGKILL the server NAME, and forget its pid (not to be stopped at exit).
rkill() {
	local pid
	pid=$(redis_pid "$1")
	kill -KILL "$pid"
	wait "$pid" 2> /dev/null
	rm -f "$R_DIR/$1/pid"
}

# taken_over DEAD CMD...: until CMD names a master other than DEAD, which it
# prints (30 s at most).
taken_over() {
	local dead=$1 i m
	shift
	for i in $(seq 1 300); do
		m=$("$@") && [ "$m" != "$dead" ] && { echo "$m"; return 0; }
		sleep 0.1
	done
	echo "# no master took over from $dead" >&2
	return 1
}

rsen_kill_master() {
	local m
	m=$(rsen_master "$1") || return 1
	rkill "$m"
	RSEN_KILLED[$1]=$m
}

rsen_revive() {
	local dead=${RSEN_KILLED[$1]:-} m
	[ -n "$dead" ] || return 0
	m=$(taken_over "$dead" rsen_master "$1") || return 1
	redis_start "$dead" "${RSEN_PORT[$dead]}" $RSYNC_NOW --replicaof 127.0.0.1 "${RSEN_PORT[$m]}" || return 1
	rsen_synced "${RSEN_PORT[$dead]}" || return 1
	RSEN_KILLED[$1]=
}

# rcl_node NAME-I: start one node (again) on its ports and files.
rcl_node() {
	redis_start "$1" "${RCL_PORT[$1]}" $RSYNC_NOW --cluster-enabled yes --cluster-port "${RCL_BUS[$1]}" \
		--cluster-config-file nodes.conf --cluster-node-timeout 1000
}

rcl_start() {
	local name=$1 i nodes=() out
	for i in 1 2 3 4 5 6; do
		RCL_PORT[$name-$i]=$(free_port) || return 1
		# The bus port too: port + 10000, its default, may be taken or past 65535.
		RCL_BUS[$name-$i]=$(free_port) || return 1
		rcl_node "$name-$i" || return 1
		nodes+=("127.0.0.1:${RCL_PORT[$name-$i]}")
	done
	out=$(redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes 2>&1) ||
		{ echo "$out"; return 1; }
	RCL_PORTS[$name]="${RCL_PORT[$name-1]},127.0.0.1:${RCL_PORT[$name-2]},127.0.0.1:${RCL_PORT[$name-3]}"
	rcl_whole "$name"
}

# rcl_whole NAME: until every live node says the cluster is ok and sees 3 masters with a replica each.
rcl_whole() {
	local i n p ok
	for i in $(seq 1 300); do
		ok=1
		for n in 1 2 3 4 5 6; do
			p=${RCL_PORT[$1-$n]}
			redis-cli -p "$p" CLUSTER INFO 2> /dev/null | grep -q '^cluster_state:ok' || ok=0
			[ "$(redis-cli -p "$p" CLUSTER NODES 2> /dev/null | grep -v fail | grep -c connected)" -eq 6 ] || ok=0
			redis-cli -p "$p" INFO replication 2> /dev/null | grep -q '^role:master' ||
				redis-cli -p "$p" INFO replication 2> /dev/null | grep -q '^master_link_status:up' || ok=0
		done
		[ $ok -eq 1 ] && return 0
		sleep 0.1
	done
	echo "# the cluster $1 did not become whole:"
	redis-cli -p "${RCL_PORT[$1-1]}" CLUSTER NODES
	return 1
}

# rcl_master_of NAME KEY: the server name of the master that serves KEY.
rcl_master_of() {
	local n p slot port
	for n in 1 2 3 4 5 6; do
		p=${RCL_PORT[$1-$n]}
		slot=$(redis-cli -p "$p" CLUSTER KEYSLOT "$2" 2> /dev/null) || continue
		port=$(redis-cli -p "$p" CLUSTER NODES 2> /dev/null | awk -v s="$slot" '
			$3 ~ /master/ && $3 !~ /fail/ { for (i = 9; i <= NF; i++) { split($i, r, "-"); if (r[2] == "") r[2] = r[1]
				if (s + 0 >= r[1] + 0 && s + 0 <= r[2] + 0) { split($2, a, "[:@]"); print a[2] } } }')
		[ -n "$port" ] && break
	done
	for n in 1 2 3 4 5 6; do [ "${RCL_PORT[$1-$n]}" = "$port" ] && { echo "$1-$n"; return 0; }; done
	return 1
}

rcl_kill_master() {
	local m
	m=$(rcl_master_of "$1" "$2") || return 1
	RCL_KEY[$1]=$2
	rkill "$m"
	RCL_KILLED[$1]=$m
}

rcl_revive() {
	local dead=${RCL_KILLED[$1]:-}
	[ -n "$dead" ] || return 0
	# Once its replica has taken over, so that this is a failover, not a restart.
	taken_over "$dead" rcl_master_of "$1" "${RCL_KEY[$1]}" > /dev/null || return 1
	rcl_node "$dead" || return 1
	rcl_whole "$1" || return 1
	RCL_KILLED[$1]=
}
