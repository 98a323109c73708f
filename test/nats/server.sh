# server.sh — private nats-server instances for the NATS suite (sourced).
#
#   nats_start NAME [ARGS...]  a JetStream server on a free 127.0.0.1 port, its
#                              store under the suite's temporary folder; sets
#                              NATS_PORT[NAME], NATS_PID[NAME]; stopped at exit
#   nats_stop NAME [SIGNAL]    stop it by pid (TERM, or SIGNAL e.g. KILL)
#   nats_restart NAME [SIGNAL] stop it and start it again: same port, same store
#   nats_api NAME SUBJECT JSON a raw request (plain NATS protocol over
#                              /dev/tcp), prints the reply's payload: a check
#                              of what the server holds that does not go
#                              through the code under test

declare -A NATS_PORT NATS_PID NATS_ARGS
NATS_ROOT=${NATS_ROOT:-$(t_tmpdir)}

nats_launch() {
	local name=$1 d=$NATS_ROOT/$1 seen i
	mkdir -p "$d"
	seen=$(cat "$d/log" 2> /dev/null | wc -l)
	# shellcheck disable=SC2086
	nats-server -js -a 127.0.0.1 -p "${NATS_PORT[$name]}" -sd "$d/js" ${NATS_ARGS[$name]} >> "$d/log" 2>&1 &
	NATS_PID[$name]=$!
	# Not a job of the suite's shell: no "Killed" notice when a check kills it.
	disown "${NATS_PID[$name]}"
	wait_port "${NATS_PORT[$name]}" 20 || { tail -n 20 "$d/log" >&2; return 1; }
	# The port answering is not enough: another server on it would answer
	# too.  This one is ready when its own log says so, and still alive.
	for i in $(seq 1 100); do
		tail -n "+$((seen + 1))" "$d/log" | grep -q 'Server is ready' && break
		kill -0 "${NATS_PID[$name]}" 2> /dev/null || break
		sleep 0.1
	done
	if ! kill -0 "${NATS_PID[$name]}" 2> /dev/null || [ "$i" -ge 100 ]; then
		echo "nats-server $name on port ${NATS_PORT[$name]} did not become ready:" >&2
		tail -n 20 "$d/log" >&2
		return 1
	fi
}

nats_start() {
	local name=$1
	shift
	NATS_PORT[$name]=$(free_port) || return 1
	NATS_ARGS[$name]="$*"
	at_exit "nats_stop $name"
	nats_launch "$name"
}

nats_stop() {
	local pid=${NATS_PID[$1]:-}
	[ -n "$pid" ] || return 0
	kill -CONT "$pid" 2>/dev/null
	kill "-${2:-TERM}" "$pid" 2>/dev/null
	for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null
	for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	NATS_PID[$1]=
}

nats_restart() {
	nats_stop "$1" "${2:-TERM}"
	nats_launch "$1"
}

nats_api() {
	local port=${NATS_PORT[$1]} subj=$2 body=$3 line len
	(
		exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
		read -r -t 5 line <&3 || exit 1				# INFO
		printf 'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true,"auth_token":"%s"}\r\nSUB _r 1\r\nPUB %s _r %d\r\n%s\r\n' \
			"${NATS_TOKEN:-}" "$subj" "${#body}" "$body" >&3
		while read -r -t 5 line <&3; do
			line=${line%$'\r'}
			case $line in
				MSG\ *)
					len=${line##* }
					read -r -t 5 -N "$len" line <&3
					printf '%s\n' "$line"
					exit 0 ;;
				PING) printf 'PONG\r\n' >&3 ;;
				-ERR*) echo "$line"; exit 1 ;;
			esac
		done
		exit 1
	)
}
