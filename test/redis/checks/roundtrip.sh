# roundtrip.sh — a claim is one round trip: the job's pause is read inside
# the claim's own script, never by a GET before it (which cost a round trip
# on every claim, and let a pause written between the two go unseen).
#
# MONITOR shows every command a client sends (a script's own commands are
# marked "[N lua]" and are not counted).  For lease, stream-id and script,
# rdrive makes claims as a host makes them (an_store_claim) in two runs on
# fresh jobs, one with 1 claim and one with 1 + RT_N; the second must send
# exactly RT_N EVALSHA more, and nothing else; no client command at all may
# name a paused key.  The same again with the job paused first: every claim
# answers paused, still one EVALSHA each.  (sourced by test/redis/run.sh)

RT_N=20
RT_MON=$tmp/rt-monitor.log
redis-cli -p "$PORT" MONITOR > "$RT_MON" 2>&1 &
rt_mon_pid=$!

# rt_mark WORD: a marker in the monitor's log, sent again at each poll until
# MONITOR wrote it (the first one waits for MONITOR to start).
rt_seen() { redis-cli -p "$PORT" ECHO "$1" > /dev/null; grep -q "\"ECHO\" \"$1\"" "$RT_MON"; }
rt_mark() { wait_for 10 "redis round trip: MONITOR shows marker $1" rt_seen "$1"; }

# rt_run NAME URL CLAIMS PAUSE: rdrive with CLAIMS claims of a fresh job
# (PAUSE 1: the job is paused first, in the same process); the commands it
# sent, one "COMMAND" a line, into $tmp/rt-NAME.cmds, its answers to the
# claims of that job into $tmp/rt-NAME.out.
rt_run() {
	local name=$1 url=$2 claims=$3 pause=$4 job=rt-$1 base i
	base=$(( $(now_ms) + 60000 ))
	{
		echo "set overlap allow"
		echo "claim $job-warm $base warm"          # loads the script: the same in both runs
		[ "$pause" = 1 ] && echo "pause $job"
		for ((i = 1; i <= claims; i++)); do echo "claim $job $((base + i * 1000)) t$i"; done
	} > "$tmp/rt-$name.in"
	rt_mark "rt-begin-$name" || return 1
	"$RDRIVE" "$url" < "$tmp/rt-$name.in" 2>&1 | tail -n "$claims" > "$tmp/rt-$name.out"
	rt_mark "rt-end-$name" || return 1
	sed -n "/\"ECHO\" \"rt-begin-$name\"/,/\"ECHO\" \"rt-end-$name\"/p" "$RT_MON" |
		grep -v '"ECHO" "rt-' | grep -v ' lua\] ' > "$tmp/rt-$name.log"
	sed -n 's/^[0-9.]* \[[^]]*\] "\([^"]*\)".*/\1/p' "$tmp/rt-$name.log" | tr a-z A-Z | sort > "$tmp/rt-$name.cmds"
}

# rt_extra ONE MANY: the commands MANY sent beyond ONE, as "COMMAND count".
rt_extra() {
	join -a 1 -a 2 -e 0 -o 0,1.2,2.2 <(uniq -c "$1" | awk '{ print $2, $1 }') \
		<(uniq -c "$2" | awk '{ print $2, $1 }') | awk '$3 != $2 { print $1, $3 - $2 }'
}

for rt_strat in lease stream-id script; do
	for rt_p in 0 1; do
		rt_name=$rt_strat-$rt_p
		rt_url="$URL?strategy=$rt_strat&prefix=rt$rt_p${rt_strat:0:2}"
		# The first run on a prefix writes its format marker: not part of a claim.
		rt_run "$rt_name-first" "$rt_url" 1 "$rt_p" &&
		rt_run "$rt_name-one" "$rt_url" 1 "$rt_p" &&
		rt_run "$rt_name-many" "$rt_url" $((1 + RT_N)) "$rt_p" || continue
		rt_got=$(rt_extra "$tmp/rt-$rt_name-one.cmds" "$tmp/rt-$rt_name-many.cmds" | tr '\n' ' ')
		rt_get=$(grep -c '"GET" "[^"]*:paused"' "$tmp/rt-$rt_name-many.log")
		rt_want=won
		[ "$rt_p" = 1 ] && rt_want=paused
		rt_answers=$(grep -c "^$rt_want " "$tmp/rt-$rt_name-many.out")
		rt_what="redis $rt_strat: $RT_N more claims$([ "$rt_p" = 1 ] && echo " of a paused job") are $RT_N more EVALSHA and nothing else (no GET of the pause)"
		if [ "$rt_got" = "EVALSHA $RT_N " ] && [ "$rt_get" = 0 ] && [ "$rt_answers" -eq $((1 + RT_N)) ]; then
			ok "$rt_what"
		else
			not_ok "$rt_what" "commands beyond the one-claim run: ${rt_got:-none}; GETs of the pause: $rt_get" \
				"answers $rt_want: $rt_answers of $((1 + RT_N)): $(sort "$tmp/rt-$rt_name-many.out" | uniq -c | tr '\n' ' ')"
		fi
	done
done
kill "$rt_mon_pid" 2> /dev/null
wait "$rt_mon_pid" 2> /dev/null
