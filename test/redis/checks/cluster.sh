# cluster.sh — Redis with replicas: replicas=N (WAIT), Sentinel and Redis
# Cluster, through the store interface.  (sourced by run.sh)
#
# A master with a replica and three sentinels, and a cluster of three
# masters with a replica each (test/fault/redis_cluster.sh).  Failovers under
# contention are the fault suite's; here: the URLs, the answers, the errors,
# and a cluster's MOVED and ASK followed while a slot moves.
source test/fault/redis_cluster.sh

# expect NAME URL PATTERN < commands: a line of rdrive's output matches
# PATTERN (grep -E); the whole output is left in $OUT.
expect() {
	local name=$1 url=$2 want=$3
	OUT=$tmp/cl-$(printf '%s' "$name" | tr -c 'a-zA-Z0-9' '-').out
	"$RDRIVE" "$url" > "$OUT" 2>&1
	if grep -q -E "$want" "$OUT"; then ok "redis cluster: $name"
	else not_ok "redis cluster: $name" "$(head -c 600 "$OUT")"; fi
}
# answers: rdrive's answers in $OUT on one line.
answers() { tr '\n' ' ' < "$OUT"; }

S=$(now_slot)
H=127.0.0.1:$PORT
refuse "two servers without cluster=yes" "redis://$H,$H" CONFIG "names 2 servers: add cluster=yes for the nodes of a Redis Cluster, or use redis\+sentinel://"
refuse "cluster neither yes nor no" "redis://$H?cluster=maybe" CONFIG "cluster must be yes or no"
refuse "cluster=yes with a database" "redis://$H/3?cluster=yes" CONFIG "must not name a database"
refuse "sentinel without a master name" "redis+sentinel://$H" CONFIG "names the master after the sentinels"
refuse "sentinel and cluster=yes" "redis+sentinel://$H/m?cluster=yes" CONFIG "cannot also say cluster=yes"
refuse "replicas out of range" "redis://$H?replicas=6" CONFIG "replicas must be a whole number from 0 to 5"
refuse "a cluster's node without cluster=yes" "redis://$H?cluster=yes" CONFIG "is not a cluster node "

# replicas=1 on a server without a replica: never an answer, an error that says why.
expect "replicas=1 with no replica: the win is not yet safe" "redis://$H?replicas=1&timeout_ms=300" "^error TIMEOUT: .*the answer is not yet safe: only 0 of the 1 replicas asked for \(replicas=1\)" <<< "$(printf 'claim wait %s tokA\nclaim wait %s tokA\n' "$S" "$S")"

if ! rsen_start crs > "$tmp/cl-setup.log" 2>&1; then
	not_ok "redis cluster: start a master, a replica and three sentinels" "$(tail -n 20 "$tmp/cl-setup.log")"
else
	SEN="redis+sentinel://127.0.0.1:${RSEN_SENTINELS[crs]}/crs"
	expect "sentinel: the master is found, replicas=1 answers" "$SEN?strategy=lease&replicas=1" "^won 1$" <<< "$(printf 'claim sen %s tokA\nclaim sen %s tokB\nclaim sen %s tokA\n' "$S" "$S" "$S")"
	[ "$(answers)" = "won 1 running 1 won 1 " ] &&
		ok "redis cluster: sentinel: another token is told running, the same token won again" ||
		not_ok "redis cluster: sentinel: another token is told running, the same token won again" "$(answers)"
	# The replica has the run the master confirmed.
	k="cron:{sen}:run:$S"
	[ "$(redis-cli -p "${RSEN_PORT[crs-b]}" HGET "$k" token)" = tokA ] &&
		ok "redis cluster: sentinel: a won claim is on the replica when it is answered" ||
		not_ok "redis cluster: sentinel: a won claim is on the replica when it is answered" "$(redis-cli -p "${RSEN_PORT[crs-b]}" HGETALL "$k")"
	expect "sentinel: a master name the sentinels do not know" "redis+sentinel://127.0.0.1:${RSEN_SENTINELS[crs]}/other" '^error CONFIG: .*the sentinel at 127.0.0.1:[0-9]+ does not monitor a master called "other"' <<< "$(echo "claim sen $S tokA")"
	# The first sentinel is gone: the others answer.
	dead=$(free_port)
	expect "sentinel: a sentinel that is down is passed over" "redis+sentinel://127.0.0.1:$dead,127.0.0.1:${RSEN_SENTINELS[crs]}/crs" "^running 1$" <<< "$(echo "claim sen $S tokB")"
	expect "a replica named as the store is refused" "redis://127.0.0.1:${RSEN_PORT[crs-b]}" "^error CONFIG: .*is a replica, not the master" <<< "$(echo "claim sen $S tokB")"
fi

# node_id NAME-I: a cluster node's id.
node_id() { redis-cli -p "${RCL_PORT[$1]}" CLUSTER MYID; }
# give_slot SLOT FROM TO: move an empty hash slot from one master to another
# the documented way (importing, migrating, then the new owner first, so
# that it takes a new epoch and the others follow it), and wait until every
# master says TO serves it.
give_slot() {
	local slot=$1 from=$2 to=$3 n i
	redis-cli -p "${RCL_PORT[$to]}" CLUSTER SETSLOT "$slot" IMPORTING "$(node_id "$from")" > /dev/null
	redis-cli -p "${RCL_PORT[$from]}" CLUSTER SETSLOT "$slot" MIGRATING "$(node_id "$to")" > /dev/null
	for n in "$to" "$from" ccl-1 ccl-2 ccl-3; do
		redis-cli -p "${RCL_PORT[$n]}" CLUSTER SETSLOT "$slot" NODE "$(node_id "$to")" > /dev/null
	done
	for i in $(seq 1 100); do
		[ "$(for n in 1 2 3; do redis-cli -p "${RCL_PORT[ccl-$n]}" CLUSTER NODES | awk -v s="$slot" -v id="$(node_id "$to")" '
			$1 == id { for (i = 9; i <= NF; i++) { split($i, r, "-"); if (r[2] == "") r[2] = r[1]
				if (s + 0 >= r[1] + 0 && s + 0 <= r[2] + 0) print "yes" } }'; done | grep -c yes)" -eq 3 ] && return 0
		sleep 0.1
	done
	return 1
}
# moved_count: MOVED answers given by the whole cluster so far.
moved_count() {
	local n sum=0 v
	for n in 1 2 3 4 5 6; do
		v=$(redis-cli -p "${RCL_PORT[ccl-$n]}" INFO errorstats 2> /dev/null | sed -n 's/^errorstat_MOVED:count=\([0-9]*\).*/\1/p')
		sum=$(( sum + ${v:-0} ))
	done
	echo $sum
}

if ! rcl_start ccl >> "$tmp/cl-setup.log" 2>&1; then
	not_ok "redis cluster: start three masters with a replica each" "$(tail -n 20 "$tmp/cl-setup.log")"
else
	CL="redis://127.0.0.1:${RCL_PORTS[ccl]}?cluster=yes&replicas=1"
	# Thirty jobs spread over the three masters, each claimed twice.
	expect "thirty jobs over three masters" "$CL" "^won 1$" < <(for j in $(seq 1 30); do
		printf 'claim job%d %s tokA\nclaim job%d %s tokB\n' "$j" "$S" "$j" "$S"; done)
	if [ "$(grep -c '^won 1$' "$OUT")" -eq 30 ] && [ "$(grep -c '^running 1$' "$OUT")" -eq 30 ] &&
		[ "$(moved_count)" -eq 0 ]; then
		ok "redis cluster: each job won once, and every command went to its slot's master at once (no MOVED)"
	else
		not_ok "redis cluster: each job won once, and every command went to its slot's master at once (no MOVED)" \
			"MOVED: $(moved_count); $(sort "$OUT" | uniq -c | head)"
	fi
	# MOVED: the slot of job "mover" (no keys yet) is given to another master
	# while a process holds the old map; its next claim is redirected.
	key="cron:{mover}"
	from=$(rcl_master_of ccl "$key")
	to=ccl-1; [ "$from" = ccl-1 ] && to=ccl-2
	slot=$(redis-cli -p "${RCL_PORT[ccl-1]}" CLUSTER KEYSLOT "$key")
	mkfifo "$tmp/cl-fifo"
	"$RDRIVE" "$CL" < "$tmp/cl-fifo" > "$tmp/cl-moved.out" 2>&1 &
	rd=$!
	exec 7> "$tmp/cl-fifo"
	echo "claim job1 $S tokC" >&7
	wait_lines "$tmp/cl-moved.out" 1
	give_slot "$slot" "$from" "$to" || not_ok "redis cluster: the masters agree that slot $slot moved"
	before=$(moved_count)
	echo "claim mover $S tokA" >&7
	exec 7>&-
	wait "$rd"
	# The command and the write WAIT waits for were both redirected: one pipeline.
	if [ "$(sed -n 2p "$tmp/cl-moved.out")" = "won 1" ] && [ "$(moved_count)" -gt "$before" ] &&
		[ "$(redis-cli -p "${RCL_PORT[$to]}" EXISTS "$key:run:$S")" = 1 ]; then
		ok "redis cluster: a slot moved to another master: MOVED followed once, the run written there"
	else
		not_ok "redis cluster: a slot moved to another master: MOVED followed once, the run written there" \
			"$(cat "$tmp/cl-moved.out"); MOVED $before -> $(moved_count); $from -> $to slot $slot"
	fi
	# The job's strategy marker lives on the job's master with its other
	# keys (the hash tag), and refuses another strategy there.
	m=$(rcl_master_of ccl "cron:{job1}")
	[ "$(redis-cli -p "${RCL_PORT[$m]}" GET 'cron:{job1}:strategy')" = strategy=lease ] &&
		ok "redis cluster: the job's strategy marker is on the job's master" ||
		not_ok "redis cluster: the job's strategy marker is on the job's master" "master $m: $(redis-cli -p "${RCL_PORT[$m]}" KEYS '*job1*' | tr '\n' ' ')"
	expect "a second strategy on the prefix is refused on the job's master" "$CL&strategy=script" \
		"^error CONFIG: .*job job1 on prefix cron is decided with strategy=lease" <<< "claim job1 $S tokB"
	# ASK: the slot of job "asker" is being migrated.  Its keys (the stream,
	# the strategy marker, the key WAIT waits for, and its pause: every claim
	# script reads the pause key, which exists only while the job is paused,
	# so the job is paused for the migration) are moved to the importing
	# master as a resharding does (MIGRATE ... KEYS), so the old master
	# answers ASK and the claim is sent to the importing master after
	# ASKING, where it reads the pause.  A claim whose keys are split or
	# missing while their slot migrates (a lease claim's new run key; the
	# pause key of a job not paused) is answered TRYAGAIN by Redis.
	key="cron:{asker}"
	from=$(rcl_master_of ccl "$key")
	to=ccl-1; [ "$from" = ccl-1 ] && to=ccl-2
	slot=$(redis-cli -p "${RCL_PORT[ccl-1]}" CLUSTER KEYSLOT "$key")
	expect "before the migration, a script claim wins" "$CL&strategy=script" "^won 1$" <<< "claim asker $S tokA"
	expect "before the migration, the job is paused" "$CL&strategy=script" "^ok$" <<< "pause asker"
	redis-cli -p "${RCL_PORT[$to]}" CLUSTER SETSLOT "$slot" IMPORTING "$(node_id "$from")" > /dev/null
	redis-cli -p "${RCL_PORT[$from]}" CLUSTER SETSLOT "$slot" MIGRATING "$(node_id "$to")" > /dev/null
	keys=$(redis-cli -p "${RCL_PORT[$from]}" CLUSTER GETKEYSINSLOT "$slot" 100)
	# shellcheck disable=SC2086
	redis-cli -p "${RCL_PORT[$from]}" MIGRATE 127.0.0.1 "${RCL_PORT[$to]}" "" 0 5000 KEYS $keys > "$tmp/cl-migrate.out" 2>&1
	asks() { redis-cli -p "${RCL_PORT[$from]}" INFO errorstats | sed -n 's/^errorstat_ASK:count=\([0-9]*\).*/\1/p'; }
	before=$(asks)
	expect "a slot being migrated: ASK followed" "$CL&strategy=script" "^paused 0$" <<< "$(printf 'claim asker %s tokB\nclaim asker %s tokA\n' "$S" "$S")"
	[ "$(answers)" = "paused 0 paused 0 " ] && [ "${keys:+x}" = x ] && [ "$(asks)" -gt "${before:-0}" ] &&
		ok "redis cluster: during the migration, claims reach the importing master through ASK (and read the pause there)" ||
		not_ok "redis cluster: during the migration, claims reach the importing master through ASK (and read the pause there)" \
			"$(answers); keys moved: $keys ($(cat "$tmp/cl-migrate.out")); ASK $before -> $(asks)"
	expect "a slot being migrated: a lease claim's keys answered TRYAGAIN, try again (busy)" "$CL&prefix=asklease" "^error BUSY: .*TRYAGAIN" <<< "claim asker $S tokA"
	give_slot "$slot" "$from" "$to" || not_ok "redis cluster: the masters agree that slot $slot moved"
	expect "after the migration, claims of the slot are answered by the new master" "$CL&strategy=script" "^lost 0$" <<< "$(printf 'resume asker\nclaim asker %s tokC\nclaim asker %s tokA\n' "$S" "$S")"
	[ "$(answers)" = "true lost 0 won 1 " ] && ok "redis cluster: after the migration, resumed: another token lost, ours won" ||
		not_ok "redis cluster: after the migration, resumed: another token lost, ours won" "$(answers)"
	[ "$(redis-cli -p "${RCL_PORT[$to]}" EXISTS "$key:runs" "$key:strategy")" = 2 ] &&
		ok "redis cluster: the migrated job's run and strategy marker are on the importing master" ||
		not_ok "redis cluster: the migrated job's run and strategy marker are on the importing master"
	# A batch (anarchon_claim_many through SQLite): its claims grouped by
	# master and sent in one write to each.  The nodes' read events for 60
	# jobs are those for 2, give or take a few; one round trip per job would
	# be 58 more.  Without replicas=1 here: each WAIT makes a master and its
	# replica exchange an acknowledgement, two read events of their own.
	if make -s sqlite > "$tmp/cl-sqlite.log" 2>&1; then
		cl_reads() { local n sum=0 v; for n in 1 2 3 4 5 6; do
			v=$(redis-cli -p "${RCL_PORT[ccl-$n]}" INFO stats | tr -d '\r' | awk -F: '$1 == "total_reads_processed" { print $2 }')
			sum=$((sum + ${v:-0})); done; echo "$sum"; }
		# cl_many N TOKEN [URL]: "reads answers" of one process claiming N jobs at once
		cl_many() {
			local jobs r0 r1 out
			jobs=$(seq 1 "$1" | sed "s/^/\"cb$1-/; s/$/\"/" | paste -sd, -)
			r0=$(cl_reads)
			out=$(sqlite3 -batch :memory: ".load $REPO_ROOT/sqlite/anarchon" \
				"SELECT anarchon_config('store', '${3:-redis://127.0.0.1:${RCL_PORTS[ccl]}?cluster=yes&prefix=clb}') IS NULL;" \
				"SELECT group_concat(outcome || ':' || n, ' ') FROM (SELECT outcome, count(*) n FROM anarchon_claim_many('[$jobs]', $S, '$2') GROUP BY 1);" 2>&1 | tail -n 1)
			r1=$(cl_reads)
			echo "$((r1 - r0 - 6)) $out"
		}
		read -r two two_out < <(cl_many 2 tokA)
		read -r sixty sixty_out < <(cl_many 60 tokA)
		read -r _ again_out < <(cl_many 60 tokB)
		same "redis cluster: a batch of 60 jobs over three masters: all won" "won:60" "$sixty_out"
		same "redis cluster: ... and another token's batch: all running" "running:60" "$again_out"
		read -r _ wait_out < <(cl_many 60 tokA "$CL&prefix=clw")
		read -r _ wait_again < <(cl_many 60 tokB "$CL&prefix=clw")
		same "redis cluster: a batch with replicas=1 (a WAIT after each claim): all won, then all running" \
			"won:60 running:60" "$wait_out $wait_again"
		if [ "$two_out" = "won:2" ] && [ $((sixty - two)) -le 12 ]; then
			ok "redis cluster: the batch's claims went to each master in one write ($sixty reads against $two for 2 jobs)"
		else
			not_ok "redis cluster: the batch's claims went to each master in one write" "2 jobs: $two reads ($two_out); 60 jobs: $sixty reads"
		fi
	else
		not_ok "redis cluster: build the SQLite extension for the batch" "$(tail -n 20 "$tmp/cl-sqlite.log")"
	fi
fi

# Under valgrind: Sentinel (a sentinel down first), the cluster (its map, its
# nodes' connections), the stream-id strategy's two commands a call, and a
# replica refused.
vg() {
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		"$RDRIVE" "$1" < "$tmp/cl-vg.in" > /dev/null 2>> "$tmp/cl-vg.err"
	[ $? -ne 99 ]
}
printf 'claim vg %s t1\nclaim vg %s t2\nheartbeat vg %s t1\nfinish vg %s t1\ncheck vg %s\n' "$S" "$S" "$S" "$S" "$S" > "$tmp/cl-vg.in"
: > "$tmp/cl-vg.err"
# valgrind missing is a failure (have_valgrind says so), not a pass: vg()
# would take its "command not found" (127) for a clean run.
if ! have_valgrind "redis cluster: valgrind: no memory errors or leaks (Sentinel, cluster, a replica refused)"; then
	:
elif [ -n "${RSEN_SENTINELS[crs]:-}" ] && [ -n "${RCL_PORTS[ccl]:-}" ] &&
	vg "redis+sentinel://127.0.0.1:$(free_port),127.0.0.1:${RSEN_SENTINELS[crs]}/crs?replicas=1&prefix=vg" &&
	vg "redis://127.0.0.1:${RCL_PORTS[ccl]}?cluster=yes&replicas=1&prefix=vg" &&
	vg "redis://127.0.0.1:${RCL_PORTS[ccl]}?cluster=yes&strategy=stream-id&prefix=vgs" &&
	vg "redis://127.0.0.1:${RSEN_PORT[crs-b]}"; then
	ok "redis cluster: valgrind: no memory errors or leaks (Sentinel, cluster, a replica refused)"
else
	not_ok "redis cluster: valgrind: no memory errors or leaks (Sentinel, cluster, a replica refused)" "$(head -c 2000 "$tmp/cl-vg.err")"
fi
