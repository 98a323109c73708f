# contention.sh — eight hosts, every store at once, N one-second slots (CLI_SLOTS, 60 on the host).
#
# Eight loops stand for eight hosts.  At the top of each second each host
# starts, for every store, the crontab line
#
#   anarchon run --store URL --job cont --schedule '* * * * * *' --
#       sh -c 'echo "$ANARCHON_SLOT HOST $ANARCHON_ATTEMPT" >> FILE'
#
# in the background, as cron does: it does not wait for the run, so a
# RabbitMQ winner, which answers only after its gate settled (settle_ms,
# 2.5 s with the default durability=crash-safe), keeps the same one-second
# schedule as the others, and the slot is the one the clock names when the
# run starts.  The eight hosts of a store fire together; the stores of a
# wave take turns 60 ms apart within each second.
#
# The stores run in three waves of a minute each (SQLite and PostgreSQL;
# Redis lease and stream-id; then Redis script, NATS and RabbitMQ), not all
# seven at once: a run of the command cost about 11 ms of CPU on this
# 2-core machine (8 ms since it loads only its store's client library,
# doc/performance.md), so 56 runs a second (plus
# the winners' commands and the servers' work) kept both cores busy and the
# hosts fell seconds behind.  Two waves of 32 and 24 runs a second were not
# enough either when a package build ran beside the suite: the hosts started
# 13 s late at the median, and PostgreSQL, starved, could not accept
# connections for minutes.  16 to 24 a second, and CONT_BACKLOG, leave room.
# The hosts run with --overlap allow: the two platform chroots running side
# by side still put a winner's command past the next second now and then,
# and whether a slow run holds back the next slot is the overlap policy's
# business (the sqlite and pg suites'), not this block's.  Each store's FILE must then hold each of the 60 slots exactly
# once, as attempt 1: a slot twice is a double win, a slot missing a run
# lost.  Every run must exit 0 and say (--verbose) only what a run says.
#
#   cli_contention N WAVES NAME=URL...

# cont_now: the wall clock in ms, without a fork ($EPOCHREALTIME, bash 5).
cont_now() { CONT_NOW=${EPOCHREALTIME/[.,]/}; CONT_NOW=$((CONT_NOW / 1000)); }

# cont_sleep_until MS: sleep without a fork: a read with a timeout on a fifo
# nobody writes to (the host's fd CONT_FD).
cont_sleep_until() {
	local d t
	cont_now
	d=$(($1 - CONT_NOW))
	[ "$d" -gt 0 ] || return 0
	printf -v t '%d.%03d' $((d / 1000)) $((d % 1000))
	read -r -t "$t" -u "$CONT_FD" _
	return 0
}

# CONT_BACKLOG: how many runs of one store a host may have going at once.
# A ninth second's run is not started while eight are still going: the host
# skips that second (said, and the slot is judged on the other hosts' runs).
# Without the bound, a machine that another job keeps busy (a package build
# beside this suite) makes every run slower, more of them overlap, and the
# eight loops pile up sixty processes or more that starve the servers too:
# seen, with PostgreSQL unable to accept a connection for minutes.
CONT_BACKLOG=${CONT_BACKLOG:-8}

# cont_going VAR: keep in the array VAR only the pids still running (kill -0
# is a builtin; bash reaps its children as they end).
cont_going() {
	local -n list=$1
	local p keep=()
	for p in "${list[@]}"; do kill -0 "$p" 2> /dev/null && keep+=("$p"); done
	list=("${keep[@]}")
}

# cli_contention_host H FIRST N NAME...: one host.  The hosts of one store
# fire together; the stores take turns within the second, 60 ms apart, so
# that 56 processes do not start at the same instant on a small machine
# (each still names the second that has begun: its slot).
cli_contention_host() {
	local h=$1 first=$2 n=$3 i k name pids=() what=() CONT_FD
	shift 3
	local -A going_of
	exec {CONT_FD}<> "$CONT_DIR/sleep.fifo"
	for ((i = 0; i < n; i++)); do
		k=0
		for name in "$@"; do
			cont_sleep_until $((first + i * 1000 + k * 60))
			cont_now
			echo $((CONT_NOW - first - i * 1000 - k * 60)) >> "$CONT_DIR/late.h$h"
			local -a going=(${going_of[$name]:-})
			cont_going going
			if [ ${#going[@]} -ge "$CONT_BACKLOG" ]; then
				echo "skip $i" >> "$CONT_DIR/$name.h$h.rc"
				going_of[$name]=${going[*]}
				k=$((k + 1))
				continue
			fi
			# One fork per run, in the background as cron starts it; its status is collected at the end.
			"$AN" run --verbose --store "${CONT_URL[$name]}" --job cont --schedule '* * * * * *' --overlap allow \
				-- sh -c "echo \"\$ANARCHON_SLOT h$h \$ANARCHON_ATTEMPT\" >> '$CONT_DIR/$name.out'" \
				2>> "$CONT_DIR/$name.h$h.err" &
			pids+=($!)
			what+=("$name $i")
			going+=($!)
			going_of[$name]=${going[*]}
			k=$((k + 1))
		done
	done
	for k in "${!pids[@]}"; do
		wait "${pids[k]}"
		echo "$? ${what[k]#* }" >> "$CONT_DIR/${what[k]%% *}.h$h.rc"
	done
}

# cont_report NAME FIRST N: what went wrong with store NAME's slots, a line
# each (nothing when all is well), from its .claimed and .out files.
cont_report() {
	local name=$1 first=$2 n=$3 claimed=$CONT_DIR/$1.claimed out=$CONT_DIR/$1.out
	# No run at all wrote the file: an empty one (the judge says so).
	[ -f "$out" ] || out=/dev/null
	awk -v first="$first" -v n="$n" '
		FNR == NR { claimed[$1] = 1; next }
		{ seen[$1]++; if ($3 != 1) attempt[$1] = attempt[$1] " " $2 ":" $3 }
		END {
			for (i = 0; i < n; i++) {
				s = sprintf("%.0f", first + i * 1000)
				if (s in claimed) judged++
				if ((s in claimed) && !(s in seen)) missing = missing " " s
			}
			for (s in seen) if (seen[s] > 1) dup = dup " " s "(x" seen[s] ")"
			for (s in seen) if (!(s in claimed)) unclaimed = unclaimed " " s
			for (s in attempt) notfirst = notfirst " " s attempt[s]
			if (judged * 6 < n * 5) print "only " judged + 0 " of the " n " slots were claimed by any host: too few to judge"
			if (missing != "") print "missing slots (claimed, never run):" missing
			if (dup != "") print "slots run more than once:" dup
			if (unclaimed != "") print "runs of slots no host said it claimed:" unclaimed
			if (notfirst != "") print "runs not at attempt 1:" notfirst
		}' "$claimed" "$out" 2> /dev/null
}

# cont_wrong FIRST N NAME...: the lines of every store's report that are a
# verdict (a slot lost or run twice), not a wave too thin to judge.
cont_wrong() {
	local first=$1 n=$2 name
	shift 2
	for name in "$@"; do cont_report "$name" "$first" "$n" | grep -v 'too few to judge'; done
}

# cli_contention_judge NAME FIRST N: the checks of one store.
#
# A slot is judged when a host claimed it: every run says (--verbose) which
# slot it claimed, so a slot some host claimed and nobody ran is a slot lost,
# and one run twice a double win.  A slot no host claimed at all (every host
# of that second started more than a second late: two releases side by side
# on two cores) proves nothing either way; it is said, and at least 5/6 of
# the slots must have been claimed for the check to judge at all.
# cont_claimed NAME: the slots some host of store NAME was answered for, one
# per line after a first line "claimed" (so that awk tells the file from the
# next even when it lists no slot), into $CONT_DIR/NAME.claimed.  A host that
# got no answer (exit 75: its line says "error, not claimed") did not claim.
cont_claimed() {
	local claimed=$CONT_DIR/$1.claimed iso
	echo claimed > "$claimed"
	for iso in $(cat "$CONT_DIR/$1".h*.err 2> /dev/null | grep -oE "cont at [0-9T:-]+Z(: won| finished|: (lost|running|done|overlap),)" |
		grep -oE "cont at [0-9T:-]+Z" | sed 's/^cont at //' | sort -u); do
		echo "$(( $(date -u -d "$iso" +%s) * 1000 ))" >> "$claimed"
	done
}

cli_contention_judge() {
	local name=$1 first=$2 n=$3 out=$CONT_DIR/$1.out report extra bad rcs claimed=$CONT_DIR/$1.claimed unjudged
	cont_claimed "$name"
	report=$(cont_report "$name" "$first" "$n")
	[ -f "$out" ] || report="no run wrote $out"
	if [ -z "$report" ]; then
		ok "cli contention $name: 8 hosts x $n one-second slots, each claimed slot run exactly once (0 duplicates, 0 missing; $(( $(wc -l < "$claimed") - 1 )) slots claimed)"
	else
		local why=() s when
		# What the hosts were told for a missing slot.
		for s in $(printf '%s\n' "$report" | sed -n 's/^missing slots (claimed, never run)://p' | tr ' ' '\n' | grep . | head -n 5); do
			when=$(date -u -d "@$((s / 1000))" +%Y-%m-%dT%H:%M:%SZ)
			why+=("$s: $(cat "$CONT_DIR/$name".h*.err | grep -F "$when" | sed 's/^anarchon: //' | sort | uniq -c | tr '\n' ';')")
		done
		not_ok "cli contention $name: 8 hosts x $n one-second slots, each claimed slot run exactly once (0 duplicates, 0 missing)" \
			"$report" "${why[@]}"
	fi
	unjudged=$(awk -v first="$first" -v n="$n" 'FNR == NR { c[$1] = 1; next } END { for (i = 0; i < n; i++) { s = sprintf("%.0f", first + i * 1000); if (!(s in c)) u = u " " s }; print u }' "$claimed" /dev/null)
	[ -z "${unjudged// /}" ] || echo "# cli contention $name: slots no host claimed (every host of that second started late):$unjudged"
	# Slots outside the 60 (a host late by a whole second at the last tick)
	# are not double wins; they are said, not counted.
	extra=$(awk -v first="$first" -v n="$n" '$1 < first || $1 >= first + n * 1000 || ($1 - first) % 1000 { print $1 }' "$out" 2> /dev/null | sort -u | tr '\n' ' ')
	[ -z "$extra" ] || echo "# cli contention $name: runs outside the $n slots (a host started late): $extra"

	rcs=$(cat "$CONT_DIR/$name".h*.rc 2> /dev/null | wc -l)
	# 75 is a run that could not reach the store and ran nothing (a broker
	# too loaded to answer within timeout_ms, a SQLite file whose lock stayed
	# taken past busy_timeout_ms): said, not a failure; whether
	# every claimed slot still ran once is the check above.
	local tempfail
	tempfail=$(cat "$CONT_DIR/$name".h*.rc 2> /dev/null | awk '$1 == 75' | wc -l)
	[ "$tempfail" -eq 0 ] || echo "# cli contention $name: $tempfail runs could not reach the store (exit 75) and ran nothing"
	local skipped
	skipped=$(cat "$CONT_DIR/$name".h*.rc 2> /dev/null | awk '$1 == "skip"' | wc -l)
	[ "$skipped" -eq 0 ] || echo "# cli contention $name: $skipped runs not started: their host had $CONT_BACKLOG of this store's runs still going"
	bad=$(cat "$CONT_DIR/$name".h*.rc 2> /dev/null | awk '$1 != 0 && $1 != 75 && $1 != "skip"' | head -n 5)
	bad+=$(cat "$CONT_DIR/$name".h*.err 2> /dev/null |
		grep -vE "^anarchon: cont at [0-9T:-]+Z(: won \(attempt 1\), running sh| finished succeeded|: (lost|running|done|overlap), not this host's to run)$" |
		grep -vE "^anarchon: .*(within timeout_ms|timeout_ms\)|cannot connect|the database stayed locked by another writer|could not be opened \(exit 75\))" | head -n 5)
	if [ "$rcs" -eq $((8 * n)) ] && [ -z "$bad" ]; then
		ok "cli contention $name: all $((rcs - skipped)) runs exited 0 and said only won, finished or not this host's"
	else
		not_ok "cli contention $name: all $((8 * n)) runs exited 0 and said only won, finished or not this host's" \
			"$rcs runs reported their status" "$bad"
	fi
}

# cli_contention_wave N NAME...: the stores NAME at once, N slots.
#
# A wave in which some store had fewer than 5/6 of its slots claimed by any
# host (the machine so loaded that every host of those seconds started a
# second late, or a server could not take connections for tens of seconds)
# proves nothing, and runs once more from a clean slate; the second time
# it is judged whatever happened.  A double win or a lost slot is judged in
# the first wave already: only a wave too thin to judge is run again.
cli_contention_wave() {
	local n=$1 first h pids=() try name thin
	shift
	for try in 1 2; do
		rm -f "$CONT_DIR"/late.h* "$CONT_DIR"/*.out "$CONT_DIR"/*.err "$CONT_DIR"/*.rc "$CONT_DIR"/*.claimed
		pids=()
		# The first slot: the whole second after the next, so that every host is
		# waiting for it when it comes.
		first=$(( ($(date +%s) + 2) * 1000 ))
		for h in 1 2 3 4 5 6 7 8; do
			cli_contention_host "$h" "$first" "$n" "$@" &
			pids+=($!)
		done
		wait "${pids[@]}"
		echo "# cli contention ($*): the hosts started their runs $(sort -n "$CONT_DIR"/late.h* |
			awk '{ v[NR] = $1 } END { printf "%d ms late at the median, %d ms at most", v[int((NR + 1) / 2)], v[NR] }')"
		thin=
		for name in "$@"; do
			cont_claimed "$name"
			cont_report "$name" "$first" "$n" | grep -q 'too few to judge' && thin+=" $name"
		done
		[ -n "$thin" ] && [ "$try" = 1 ] && [ -z "$(cont_wrong "$first" "$n" "$@")" ] || break
		echo "# cli contention ($*): too few slots claimed to judge for$thin (a loaded machine, or a store out of reach): the wave runs once more"
	done
	for name in "$@"; do cli_contention_judge "$name" "$first" "$n"; done
}

# cli_contention N WAVES NAME=URL...: WAVES lists the stores of each wave,
# waves separated by "/" (the stores of a wave contend at once).
cli_contention() {
	local n=$1 waves=$2 name wave
	shift 2
	CONT_DIR=$CLI_TMP/contention
	mkdir -p "$CONT_DIR"
	mkfifo "$CONT_DIR/sleep.fifo"
	declare -gA CONT_URL
	for name in "$@"; do CONT_URL[${name%%=*}]=${name#*=}; done
	while read -r -d / wave; do
		# shellcheck disable=SC2086
		[ -z "$wave" ] || cli_contention_wave "$n" $wave
	done <<< "$waves/"
}
