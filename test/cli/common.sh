# common.sh — what the cli suite's blocks share (sourced by run.sh after
# ../lib.sh).
#
#   AN                        the command under test (cli/anarchon, or
#                             ANARCHON_CLI_BIN: an older build, to see a
#                             new check fail on it)
#   an_call OUT ERR ARGS...   run it, stdout to OUT, stderr to ERR; sets RC
#   one_error_line ERR        ERR is exactly one line starting "anarchon: "
#   expect_call NAME RC WANT ARGS...
#                             ok when the call exits RC and prints exactly the
#                             line WANT on stdout (WANT "-": prints nothing)
#   wait_grep FILE RE SECS    until a line of FILE matches RE
#   runs_in DB                the number of runs a SQLite store file holds (0
#                             when the file or its table does not exist), read
#                             with the sqlite3 shell, not with the command
#   bg_block NAME FUNC ARGS...  run a block in the background, its lines kept
#   bg_collect NAME           wait for it, print its lines and count them; a
#                             block that did not reach its end is a failure
#   an_valgrind LABEL DIR NAME WANT ARGS...
#                             the command under valgrind (cli and catchup suites)
#   cli_pg_watch_start        probe the suite's PostgreSQL twice a second from
#                             here on; a failed check that names postgresql
#                             then says what the probes saw and the server's
#                             last log lines (a server that stops answering
#                             for half a minute under CI's load was seen twice
#                             and never here)
AN=${ANARCHON_CLI_BIN:-$REPO_ROOT/cli/anarchon}

cli_pg_watch_start() {
	CLI_PG_WATCH=$CLI_TMP/pg-watch
	: > "$CLI_PG_WATCH"
	(
		local err pm
		while :; do
			if ! err=$(PGCONNECT_TIMEOUT=3 psql -X -A -t -h 127.0.0.1 -p "$PGPORT" -c 'SELECT 1' 2>&1 > /dev/null); then
				pm=$(head -n 1 "$PG_DATA/postmaster.pid" 2> /dev/null)
				# Runnable: the commands that held the CPUs, most first (what starved the server).
				printf '%s psql: %s; postmaster %s %s; load %s; runnable: %s; stopped: %s\n' "$(date +%T.%3N)" \
					"$(printf '%s' "$err" | tr '\n' ' ' | sed 's/^psql: error: //' | head -c 90)" "$pm" \
					"$([ -n "$pm" ] && ps -o stat=,wchan:24= -p "$pm" 2> /dev/null | tr -s ' ')" "$(cut -d' ' -f1-3 /proc/loadavg)" \
					"$(ps -eo stat=,comm= | awk '$1 ~ /^R/ { n[$2]++ } END { for (c in n) print n[c], c }' | sort -rn | head -n 5 | tr '\n' ' ')" \
					"$(ps -eo pid=,stat=,comm= | awk '$2 ~ /^T/ { printf "%s/%s ", $1, $3 }' | head -c 120)"
			fi
			sleep 0.5 # the watch's pace
		done
	) >> "$CLI_PG_WATCH" 2>&1 &
	at_exit "kill $! 2> /dev/null"
}

# A failed check that names postgresql says what the watch saw.
eval "cli_plain_not_ok() $(declare -f not_ok | tail -n +2)"
not_ok() {
	local name=$1 w=${CLI_PG_WATCH:-}
	shift
	if [[ $name == *postgresql* ]] && [ -n "$w" ] && [ -f "$w" ]; then
		cli_plain_not_ok "$name" "$@" \
			"pg watch: $(wc -l < "$w") probes of 3 s failed; first: $(head -n 1 "$w" | head -c 340)" \
			"pg watch: last: $(tail -n 1 "$w" | head -c 340)" \
			"server log: $(tail -n 3 "${PG_LOG:-/dev/null}" 2> /dev/null | tr '\n' '|' | head -c 300)"
	else
		cli_plain_not_ok "$name" "$@"
	fi
}

an_call() {
	local out=$1 err=$2
	shift 2
	"$AN" "$@" > "$out" 2> "$err"
	RC=$?
}

one_error_line() {
	[ "$(wc -l < "$1")" -eq 1 ] && grep -q '^anarchon: ' "$1"
}

# expect_call NAME RC WANT ARGS...: exit status RC, stdout exactly WANT.
expect_call() {
	local name=$1 want_rc=$2 want=$3 o e same
	shift 3
	o=$(mktemp "$CLI_TMP/call.XXXXXX") e=$o.err
	an_call "$o" "$e" "$@"
	# EXPECT_TEMPFAIL_TRIES=N: a 75 (the store gave no answer in time, the
	# contract's "try again") is asked again, N tries in all, as a caller
	# would; a wrong answer is never asked again.
	local try=1
	while [ "$RC" -eq 75 ] && [ "$want_rc" -ne 75 ] && [ "$try" -lt "${EXPECT_TEMPFAIL_TRIES:-1}" ]; do
		echo "# $name: try $try got no answer (75: $(head -c 200 "$e" | tr '\n' ' ')); again"
		try=$((try + 1))
		sleep 1  # a pause before asking again, as a caller's retry would
		an_call "$o" "$e" "$@"
	done
	if [ "$want" = - ]; then same=$([ ! -s "$o" ] && echo 1)
	else same=$([ "$(cat "$o")" = "$want" ] && [ "$(wc -l < "$o")" -eq "$(printf '%s\n' "$want" | wc -l)" ] && echo 1)
	fi
	if [ "$RC" -eq "$want_rc" ] && [ -n "$same" ]; then
		ok "$name"
	else
		not_ok "$name" "exit $RC (want $want_rc); stdout: $(head -c 300 "$o")" "stderr: $(head -c 300 "$e")" \
			"want stdout: $want"
	fi
}

wait_grep() {
	local i
	for i in $(seq 1 $(( $3 * 20 ))); do
		grep -qE "$2" "$1" 2> /dev/null && return 0
		sleep 0.05
	done
	return 1
}

runs_in() {
	[ -f "$1" ] || { echo 0; return; }
	sqlite3 "$1" "SELECT count(*) FROM anarchon_runs" 2> /dev/null || echo 0
}

declare -A BG_PID
bg_block() {
	local name=$1
	shift
	( "$@"; echo "# block $name: end" ) > "$CLI_TMP/block-$name.tap" 2>&1 &
	BG_PID[$name]=$!
}

bg_collect() {
	local name=$1 rc f=$CLI_TMP/block-$1.tap n
	wait "${BG_PID[$name]}"
	rc=$?
	cat "$f"
	n=$(grep -c '^not ok - ' "$f")
	T_FAILED=$((T_FAILED + n))
	if [ "$rc" -ne 0 ] || ! tail -n 1 "$f" | grep -qx "# block $name: end"; then
		not_ok "cli: block $name ended before its end (status $rc)"
	fi
}

# an_valgrind LABEL DIR NAME WANT ARGS...: the command with ARGS under
# valgrind, its log in DIR; ok when it exits WANT with no error and no
# definite leak.  A run that left no log did not run, and is a failure.
an_valgrind() {
	local label=$1 dir=$2 name=$3 want=$4 log rc
	shift 4
	mkdir -p "$dir"
	log=$dir/$(printf '%s' "$name" | tr -c 'a-zA-Z0-9' _).log
	rm -f "$log"
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		--trace-children=no --child-silent-after-fork=yes --log-file="$log" "$AN" "$@" > "$log.out" 2> "$log.err"
	rc=$?
	if [ ! -e "$log" ]; then not_ok "$label: $name" "valgrind wrote no log: it did not run" "$(head -c 300 "$log.err")"
	elif [ "$rc" -ne "$want" ]; then not_ok "$label: $name" "exit $rc, want $want" "$(head -n 30 "$log")" "$(head -c 300 "$log.err")"
	elif [ -s "$log" ]; then not_ok "$label: $name" "$(head -n 30 "$log")"
	else ok "$label: $name (exit $want, no error)"; fi
}
