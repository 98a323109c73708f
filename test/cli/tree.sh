# tree.sh — the command owns its whole process tree.
#
# The command is a tree whose grandchildren ignore SIGTERM (and SIGINT, as a
# non-interactive shell's background jobs do):
#   sh -c 'trap "" TERM; sleep 1000 & sleep 1000 & wait'
# every process of it carrying a unique marker in its environment.  However
# the run is stopped, nothing of the tree (found by the marker, and by the
# command's process group) may be left --kill-after (500 ms) plus a second
# after the stop:
#   lost      another process holds the SQLite store's write lock: no renewal
#             is confirmed, and the tree is stopped before the lease can end
#   replace   a later slot of the job is won under overlap 'replace'
#   sigkill   anarchon itself is SIGKILLed: its watchdog stops the group
#   ctrlc     ^C typed on the terminal (a pty, ctrlc.py) anarchon runs on; the
#             command's main process (perl) counts the SIGINTs it got:
#             exactly one, and anarchon exits with its status
#
#   cli_tree
TREE_SH='echo "$(ps -o pgid= -p $$ | tr -d " ")" > "$D/pgid"; trap "" TERM; sleep 1000 & sleep 1000 & wait'
TREE_PL='use Time::HiRes qw(time);
$SIG{INT} = sub { $n++; $t ||= time };
for (1 .. 2) { unless (fork) { $SIG{TERM} = $SIG{INT} = "IGNORE"; exec "sleep", "1000" } }
open my $f, ">", "$ENV{D}/pgid.tmp"; print $f getpgrp(), "\n"; close $f; rename "$ENV{D}/pgid.tmp", "$ENV{D}/pgid";
select undef, undef, undef, 0.05 until $t && time - $t >= 1;
open $f, ">", "$ENV{D}/ints"; print $f "INT $n\n"; close $f;
exit 3;'

# tree_left MARK PGID: the pids of the tree still there (a zombie has ended:
# it is left out, and its environ reads empty).
tree_left() {
	{
		grep -l -z -x "TREE_MARK=$1" /proc/[0-9]*/environ 2> /dev/null | cut -d/ -f3
		# The group, when it is not the test's own (the old code shared it).
		[ -n "$2" ] && [ "$2" != "$(ps -o pgid= -p $$ | tr -d ' ')" ] && ps -e -o pid=,pgid=,stat= | awk -v g="$2" '$2 == g && $3 !~ /^Z/ { print $1 }'
	} | sort -u
}

# tree_gone NAME MARK DIR DEADLINE_MS: ok when nothing of the tree is left by then.
tree_gone() {
	local name=$1 mark=$2 d=$3 deadline=$4 pgid left
	pgid=$(cat "$d/pgid" 2> /dev/null)
	while :; do
		left=$(tree_left "$mark" "$pgid")
		[ -z "$left" ] && break
		[ "$(date +%s%3N)" -ge "$deadline" ] && break
		sleep 0.05
	done
	if [ -z "$left" ] && [ -n "$pgid" ]; then
		ok "$name"
	else
		not_ok "$name" "left $(( $(date +%s%3N) - deadline + 1500 )) ms after the stop: $(echo $left)" \
			"$(ps -o pid,pgid,ppid,args -p "$(echo $left | tr ' ' ,)" 2> /dev/null | tr '\n' '|')" "$(cat "$d"/*.err 2> /dev/null | head -c 600)"
		[ -n "$left" ] && kill -9 $left 2> /dev/null
	fi
}

# tree_start NAME DIR ARGS...: anarchon run ARGS -- the tree, in the background (TREE_PID).
tree_start() {
	local name=$1 d=$2
	shift 2
	mkdir -p "$d"
	TREE_MARK=$name-$$-$RANDOM
	D=$d "$AN" run "$@" -- env TREE_MARK="$TREE_MARK" sh -c "$TREE_SH" 2> "$d/a.err" &
	TREE_PID=$!
	wait_grep "$d/pgid" . 10 || not_ok "cli tree $name: the command starts" "$(cat "$d/a.err")"
}

tree_lost() {
	local d=$CLI_TMP/tree-lost t0 holder
	tree_start lost "$d" --store "sqlite://$d/runs.db" --job tree --slot "$(( $(date +%s) * 1000 ))" \
		--lease_ms 2000 --kill-after 500 --busy_timeout_ms 200
	# Another writer holds the file's lock for 5 s: no renewal can be confirmed.
	/usr/bin/python3 -c 'import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute("BEGIN IMMEDIATE")
open(sys.argv[2], "w").write("locked\n"); time.sleep(5)' "$d/runs.db" "$d/locked" &
	holder=$!
	wait_grep "$d/locked" . 5 || not_ok "cli tree lost: the lock is taken"
	t0=$(date +%s%3N)
	# The lease (2 s) runs out at the latest 2 s after the lock was taken; then kill-after and a second.
	tree_gone "cli tree lost: the store locked, the whole tree (grandchildren ignoring SIGTERM) is gone within the lease + kill-after + 1 s" \
		"$TREE_MARK" "$d" $((t0 + 2000 + 500 + 1000))
	kill "$holder" 2> /dev/null; wait "$holder" 2> /dev/null
	kill -9 "$TREE_PID" 2> /dev/null; wait "$TREE_PID" 2> /dev/null
}

tree_replace() {
	local d=$CLI_TMP/tree-replace t0 s=$(( $(date +%s) * 1000 ))
	tree_start replace "$d" --store "sqlite://$d/runs.db" --job tree --slot $((s - 2000)) \
		--overlap replace --lease_ms 2000 --kill-after 500
	"$AN" run --store "sqlite://$d/runs.db" --job tree --slot "$s" --overlap replace --lease_ms 2000 -- true 2> "$d/b.err"
	t0=$(date +%s%3N)
	# A's next heartbeat (within the lease) answers fenced; then kill-after and a second.
	tree_gone "cli tree replace: a later slot won under overlap replace, the whole tree is gone within the lease + kill-after + 1 s" \
		"$TREE_MARK" "$d" $((t0 + 2000 + 500 + 1000))
	kill -9 "$TREE_PID" 2> /dev/null; wait "$TREE_PID" 2> /dev/null
}

tree_sigkill() {
	local d=$CLI_TMP/tree-sigkill t0
	tree_start sigkill "$d" --store "sqlite://$d/runs.db" --job tree --slot "$(( $(date +%s) * 1000 ))" \
		--lease_ms 10000 --kill-after 500
	kill -9 "$TREE_PID"
	wait "$TREE_PID" 2> /dev/null
	t0=$(date +%s%3N)
	tree_gone "cli tree sigkill: anarchon SIGKILLed, the whole tree is gone within kill-after + 1 s" \
		"$TREE_MARK" "$d" $((t0 + 500 + 1000))
}

tree_ctrlc() {
	local d=$CLI_TMP/tree-ctrlc out rc sent
	mkdir -p "$d"
	printf '%s\n' "$TREE_PL" > "$d/tree.pl"
	TREE_MARK=ctrlc-$$-$RANDOM
	out=$(D=$d /usr/bin/python3 "$here/ctrlc.py" "$d/pgid" 20 -- "$AN" run --store "sqlite://$d/runs.db" --job tree \
		--slot "$(( $(date +%s) * 1000 ))" --lease_ms 10000 --kill-after 500 -- env TREE_MARK="$TREE_MARK" perl "$d/tree.pl")
	sent=${out% *} rc=${out#* }
	if [ "$(cat "$d/ints" 2> /dev/null)" = "INT 1" ] && [ "$rc" = 3 ]; then
		ok "cli tree ctrlc: ^C on the terminal reaches the command once (its handler counted 1), anarchon exits 3, its status"
	else
		not_ok "cli tree ctrlc: ^C on the terminal reaches the command once (its handler counted 1), anarchon exits 3, its status" \
			"counted: $(cat "$d/ints" 2> /dev/null)" "ctrlc.py: $out"
	fi
	# The perl ends a second after ^C; its children ignore SIGINT and SIGTERM.
	tree_gone "cli tree ctrlc: after ^C, the whole tree is gone within kill-after + 1 s of the command's end" \
		"$TREE_MARK" "$d" $((sent + 1000 + 500 + 1000))
}

cli_tree() {
	tree_lost
	tree_replace
	tree_sigkill
	tree_ctrlc
}
