# overlap.sh — a host that can no longer renew its lease stops its command
# before another host can take the run over: the two commands never overlap.
#
# Host A wins a slot (--attempts 2 --lease_ms 3000 --kill-after 1000) and
# runs a command that writes `date +%s%N` when it starts and, from its
# SIGTERM trap, after 300 ms of "clean-up", when it stops.  Then A loses
# the store:
#   lock     SQLite: another process holds the file's write lock for 3 s, as
#            long as the lease (everyone waits on it, A's heartbeats fail
#            busy after 200 ms, and so does A's finish: B takes over when the
#            lock is released).  PostgreSQL,
#            Redis lease: A talks to the store through a TCP proxy
#            (test/fault/proxy.py), which is SIGSTOPped: A's calls block
#            until their timeout, as on a frozen server.
#   cut      PostgreSQL, Redis lease: the proxy is SIGKILLed: A's calls fail
#            at once (connection reset, then refused).
# Host B, talking to the store directly, runs the same line again and again
# until it wins attempt 2; its command writes when it starts.  A plain sleep
# in the scenario: none, every wait polls.  The overlap
# is A's stop minus B's start: it must be 0 ms (A stopped first), and both
# must have happened.
#
#   cli_overlap REDIS_PORT [POSTGRESQL_URL]
OVL_A='echo "start $(date +%s%N)" >> "$F"
# The job takes 0.3 s to stop on TERM,
trap "sleep 0.3; echo \"stop \$(date +%s%N)\" >> \"\$F\"; exit 143" TERM
# and works until TERM.
sleep 1000 & wait'
OVL_B='echo "start $(date +%s%N)" >> "$F"'

# overlap_case NAME FAULT A_URL B_URL [PROXY_PID]
overlap_case() {
	local name=$1 fault=$2 a_url=$3 b_url=$4 proxy=${5:-} d=$CLI_TMP/overlap-$1-$2 pa holder= until rc a_stop b_start
	local args=(run --job "ovl-$name-$fault" --slot "$(( $(date +%s) * 1000 ))" --attempts 2 --lease_ms 3000 --kill-after 1000)
	# SQLite: a short busy timeout, so that A's finish fails while the lock is held and B can take over.
	[ "$fault" = lock ] && args+=(--busy_timeout_ms 200)
	mkdir -p "$d"
	F=$d/a "$AN" "${args[@]}" --store "$a_url" -- sh -c "$OVL_A" 2> "$d/a.err" &
	pa=$!
	if ! wait_grep "$d/a" '^start' 10; then
		not_ok "cli overlap $name $fault: A wins and starts its command" "$(cat "$d/a.err")"
		kill -9 "$pa" 2> /dev/null; wait "$pa" 2> /dev/null
		return
	fi
	case $fault in
	lock)
		/usr/bin/python3 -c 'import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute("BEGIN IMMEDIATE")
open(sys.argv[2], "w").write("locked\n"); time.sleep(3)' "${a_url#sqlite://}" "$d/locked" 2> "$d/holder.err" &
		holder=$!
		wait_grep "$d/locked" . 5 || not_ok "cli overlap $name $fault: the lock is taken";;
	frozen) kill -STOP "$proxy";;
	cut) kill -9 "$proxy";;
	esac
	until=$(( $(date +%s) + 25 ))
	while :; do
		F=$d/b "$AN" "${args[@]}" --store "$b_url" --not-mine-exit 3 -- sh -c "$OVL_B" 2>> "$d/b.err"
		rc=$?
		# 3: not this host's yet; 75: the store is locked or frozen for B too.
		{ [ "$rc" -eq 3 ] || [ "$rc" -eq 75 ]; } && [ "$(date +%s)" -lt "$until" ] || break
		sleep 0.05
	done
	[ -n "$holder" ] && { kill "$holder" 2> /dev/null; wait "$holder" 2> /dev/null; }
	[ "$fault" = frozen ] && kill -CONT "$proxy" 2> /dev/null
	# A ends once its command has; one that is never stopped is killed, and has no stop line.
	local end=$(( $(date +%s) + 15 ))
	while kill -0 "$pa" 2> /dev/null && [ "$(date +%s)" -lt "$end" ]; do sleep 0.1; done
	kill -0 "$pa" 2> /dev/null && { echo "anarchon A still ran 15 s after B's tries" >> "$d/a.err"; kill -9 "$pa"; }
	wait "$pa" 2> /dev/null
	a_stop=$(awk '$1 == "stop" { print $2 }' "$d/a" 2> /dev/null)
	b_start=$(awk '$1 == "start" { print $2 }' "$d/b" 2> /dev/null)
	if [ -n "$a_stop" ] && [ -n "$b_start" ] && [ "$a_stop" -le "$b_start" ]; then
		ok "cli overlap $name $fault: A's command stopped $(( (b_start - a_stop) / 1000000 )) ms before B's started: overlap 0 ms"
	elif [ -n "$a_stop" ] && [ -n "$b_start" ]; then
		not_ok "cli overlap $name $fault: overlap 0 ms" "A's command stopped $(( (a_stop - b_start) / 1000000 )) ms after B's started" \
			"$(tr '\n' '|' < "$d/a.err")"
	else
		not_ok "cli overlap $name $fault: overlap 0 ms" "A's stop: ${a_stop:-none}; B's start: ${b_start:-none} (B exit $rc)" \
			"$(tr '\n' '|' < "$d/a.err")" "$(tail -n 3 "$d/b.err" | tr '\n' '|')"
	fi
}

# overlap_proxied NAME URL PORT FAULT: A through a proxy to PORT, B direct.
overlap_proxied() {
	local name=$1 url=$2 port=$3 fault=$4 pp proxy
	pp=$(free_port)
	python3 "$REPO_ROOT/test/fault/proxy.py" "$pp" "$port" pass 0 1 "$CLI_TMP/overlap-$name-$fault.cuts" 2> /dev/null &
	proxy=$!
	if ! wait_port "$pp" 10; then
		not_ok "cli overlap $name $fault: start the proxy"
		kill "$proxy" 2> /dev/null
		return
	fi
	overlap_case "$name" "$fault" "${url/:$port/:$pp}" "$url" "$proxy"
	kill "$proxy" 2> /dev/null
	wait "$proxy" 2> /dev/null
}

cli_overlap() {
	local rport=$1 pg=${2:-} f
	overlap_case sqlite lock "sqlite://$CLI_TMP/overlap.db" "sqlite://$CLI_TMP/overlap.db"
	for f in frozen cut; do
		overlap_proxied redis "redis://127.0.0.1:$rport?strategy=lease&prefix=cli-ovl" "$rport" "$f"
		if [ -n "$pg" ]; then
			local p=${pg##*:}
			overlap_proxied postgresql "$pg" "${p%%/*}" "$f"
		else
			not_ok "cli overlap postgresql $f: no PostgreSQL server"
		fi
	done
}
