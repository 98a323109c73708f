# server.sh — start and stop a private RabbitMQ node for a suite (sourced).
#
#   rmq_start DIR [CONF_LINE...]
#                   node in DIR on free loopback ports; sets RMQ_PORT, RMQ_NODE,
#                   RMQ_VM (pid of the Erlang VM: SIGSTOP it to freeze the
#                   broker) and registers rmq_stop with at_exit.  Each
#                   CONF_LINE is appended to its rabbitmq.conf (a TLS
#                   listener, say); RMQ_PLUGINS, when set, lists the plugins
#                   to enable, separated by commas
#   rmq_ctl ARGS    rabbitmqctl pointed at that node
#   rmq_stop        stop the node and its epmd, by pid
#
# The node gets its own name, AMQP port, distribution port, epmd port, home
# (Erlang cookie), database and logs, all under DIR, and every listener is
# bound to 127.0.0.1 — it never touches a RabbitMQ the machine may run.
# Start-up takes several seconds: start one node per suite.

rmq_env() {
	export HOME="$RMQ_DIR/home" \
		RABBITMQ_NODENAME="$RMQ_NODE" \
		RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
		RABBITMQ_NODE_PORT="$RMQ_PORT" \
		RABBITMQ_DIST_PORT="$RMQ_DIST_PORT" \
		RABBITMQ_MNESIA_BASE="$RMQ_DIR/mnesia" \
		RABBITMQ_LOG_BASE="$RMQ_DIR/log" \
		RABBITMQ_CONFIG_FILE="$RMQ_DIR/rabbitmq" \
		RABBITMQ_ADVANCED_CONFIG_FILE="$RMQ_DIR/advanced.config" \
		RABBITMQ_ENABLED_PLUGINS_FILE="$RMQ_DIR/enabled_plugins" \
		RABBITMQ_PID_FILE="$RMQ_DIR/rabbit.pid" \
		RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" \
		RABBITMQ_CTL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" \
		ERL_EPMD_PORT="$RMQ_EPMD_PORT" \
		ERL_EPMD_ADDRESS=127.0.0.1
}

# rmq_launch: start the VM (the node's files may already exist: a restart).
rmq_launch() {
	( rmq_env; exec /usr/lib/rabbitmq/bin/rabbitmq-server >> "$RMQ_DIR/server.out" 2>&1 ) &
	RMQ_PID=$!
	if ! wait_port "$RMQ_PORT" 60; then
		echo "# RabbitMQ did not start; its output:" >&2
		tail -n 30 "$RMQ_DIR/server.out" >&2
		return 1
	fi
	# The start script stays as the VM's parent: signals go to the VM itself.
	RMQ_VM=$(pgrep -P "$RMQ_PID" beam.smp | head -n 1)
}

rmq_start() {
	RMQ_DIR=$1
	RMQ_PORT=$(free_port) && RMQ_DIST_PORT=$(free_port) && RMQ_EPMD_PORT=$(free_port) || return 1
	RMQ_NODE="anarchon$RMQ_PORT@localhost"
	mkdir -p "$RMQ_DIR/home" "$RMQ_DIR/mnesia" "$RMQ_DIR/log"
	if [ -n "${RMQ_PLUGINS:-}" ]; then echo "[$RMQ_PLUGINS]." > "$RMQ_DIR/enabled_plugins"; else : > "$RMQ_DIR/enabled_plugins"; fi
	echo '[].' > "$RMQ_DIR/advanced.config"
	printf 'listeners.tcp.default = 127.0.0.1:%s\nloopback_users = none\n' "$RMQ_PORT" > "$RMQ_DIR/rabbitmq.conf"
	shift
	[ $# -eq 0 ] || printf '%s\n' "$@" >> "$RMQ_DIR/rabbitmq.conf"
	at_exit rmq_stop
	rmq_launch
}

rmq_ctl() { ( rmq_env; /usr/lib/rabbitmq/bin/rabbitmqctl -n "$RMQ_NODE" "$@" ); }

# rmq_epmd_pid: the epmd that serves our epmd port (it outlives the node).
rmq_epmd_pid() {
	ss -ltnpH "sport = :$RMQ_EPMD_PORT" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2
}

# rmq_kill_node [SIGNAL]: stop the VM by pid (TERM, or SIGNAL; KILL after 20 s), then its script.
rmq_kill_node() {
	[ -n "${RMQ_PID:-}" ] || return 0
	if [ -n "${RMQ_VM:-}" ]; then
		kill -CONT "$RMQ_VM" 2>/dev/null
		kill "-${1:-TERM}" "$RMQ_VM" 2>/dev/null
		for _ in $(seq 1 200); do kill -0 "$RMQ_VM" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$RMQ_VM" 2>/dev/null
	fi
	kill -TERM "$RMQ_PID" 2>/dev/null
	{ wait "$RMQ_PID"; } 2>/dev/null
	RMQ_PID= RMQ_VM=
}

rmq_stop() {
	local epmd
	epmd=$(rmq_epmd_pid)
	rmq_kill_node
	[ -n "$epmd" ] && kill "$epmd" 2>/dev/null
	return 0
}

# rmq_restart [SIGNAL]: stop the node (not epmd) and start it again on the same ports and files.
rmq_restart() {
	rmq_kill_node "${1:-TERM}"
	rmq_launch
}
