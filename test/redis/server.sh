# server.sh — start and stop the suites' own redis-server (sourced after lib.sh).
#
#   redis_start NAME PORT [redis-server options...]   under $R_DIR/NAME, AOF on
#   redis_stop NAME                                    SIGCONT, then SIGTERM, wait
#   redis_and_pg_start SUITE DIR PREFIX SERVER LOG     a Redis (REDIS: its lease URL
#       with PREFIX) and a PostgreSQL (test/pg/server.sh) with the extension,
#       SERVER, a foreign server for that Redis, and LOG, a table (job text,
#       slot timestamptz) for what the commands ran; 1 after SUITE's not ok
# Every server started is stopped at exit, even when a check fails.
R_DIR=${R_DIR:-$(t_tmpdir)}

redis_start() {
	local name=$1 port=$2 pid
	shift 2
	mkdir -p "$R_DIR/$name"
	redis-server --port "$port" --bind 127.0.0.1 --dir "$R_DIR/$name" --appendonly yes \
		--save '' --daemonize no --logfile "$R_DIR/$name/log" "$@" &
	pid=$!
	echo "$pid" > "$R_DIR/$name/pid"
	at_exit "redis_stop $name"
	# Up to 30 s (a loaded machine), but not once the server has exited; its
	# log says why (a port taken meanwhile, an option this server lacks).
	# Started means ready: Redis listens before it has loaded its AOF, and
	# answers -LOADING meanwhile; a check that restarts it and claims at
	# once was told so under CI's load.  (A TLS port does not answer the
	# plain PING: open is all that is asked of it here.)  REDIS_OPEN_ONLY=1:
	# open is enough, for a check that wants to meet the loading itself.
	for _ in $(seq 1 300); do
		if [ "${REDIS_OPEN_ONLY:-0}" = 1 ]; then
			(exec 3<>"/dev/tcp/127.0.0.1/$port") 2> /dev/null && return 0
		else
			redis_ready "$port" && return 0
		fi
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	echo "# redis-server on port $port did not start; its log:" >&2
	tail -n 10 "$R_DIR/$name/log" >&2 2> /dev/null
	return 1
}

# redis_ready PORT: something listens on PORT and does not answer -LOADING.
redis_ready() {
	(
		exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		printf 'PING\r\n' >&3
		read -r -t 1 line <&3
		[[ ${line:-} != -LOADING* ]]
	) 2> /dev/null
}

redis_stop() {
	local f="$R_DIR/$1/pid" pid
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	rm -f "$f"
	kill -CONT "$pid" 2> /dev/null
	kill "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
	return 0
}

redis_pid() { cat "$R_DIR/$1/pid"; }

now_ms() { date +%s%3N; }
# now_slot: the current whole second in ms, a valid slot (slots are whole seconds).
now_slot() { echo $(( $(date +%s) * 1000 )); }

# wait_file F: until F exists (a step of the shell, seen by a running client).
wait_file() { local i; for i in $(seq 1 300); do [ -e "$1" ] && return 0; sleep 0.05; done; return 1; }

# wait_lines F N: until F has at least N lines (a client answered), at most 15 s.
wait_lines() { local i; for i in $(seq 1 300); do [ -f "$1" ] && [ "$(wc -l < "$1")" -ge "$2" ] && return 0; sleep 0.05; done; return 1; }

# frozen_call CUE OUT MARK TRIES: once a client writing OUT has answered its
#   first line, freeze the main Redis (SIGSTOP) and touch CUE, the client's
#   cue to make its call; wait (TRIES x 50 ms at most) for a line of OUT
#   starting with MARK, then thaw Redis.  FROZEN_MS: how long that took.
frozen_call() {
	local cue=$1 out=$2 mark=$3 tries=$4 t0 t1 i
	wait_lines "$out" 1
	kill -STOP "$(redis_pid main)"
	t0=$(now_ms)
	touch "$cue"
	for i in $(seq 1 "$tries"); do grep -q "^$mark" "$out" && break; sleep 0.05; done
	t1=$(now_ms)
	kill -CONT "$(redis_pid main)"
	FROZEN_MS=$((t1 - t0))
}

redis_and_pg_start() {
	local suite=$1 dir=$2 prefix=$3 server=$4 log=$5 port out
	port=$(free_port) && redis_start "$suite" "$port" || { not_ok "$suite: start redis-server"; return 1; }
	REDIS="redis://127.0.0.1:$port/0?strategy=lease&prefix=$prefix"
	step "$suite: redis-server on 127.0.0.1:$port"
	pg_suite_start "$suite" "$dir" "fsync = off" "synchronous_commit = off" || return 1
	if ! out=$(psql -X -A -t -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION anarchon" \
		-c "CREATE SERVER $server FOREIGN DATA WRAPPER anarchon OPTIONS (url '$REDIS')" \
		-c "CREATE TABLE $log (job text, slot timestamptz)" 2>&1); then
		not_ok "$suite: the extension, a Redis foreign server and the log table" "$out"
		return 1
	fi
}
