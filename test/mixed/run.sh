#!/usr/bin/env bash
# The rolling upgrade: a fleet half on 0.1.0, half on this release, contending
# on every store at once (doc/upgrading.md, "Rolling upgrade, tested").
#
# 0.1.0 is built from its sources kept in test/upgrade/releases/ (the command
# and the SQLite extension, test/upgrade/old_build.sh); a missing or broken
# old build is a not ok.  On each store four hosts (h1, h2: 0.1.0; h3, h4:
# this build) claim the same job for MIXED_SLOTS (30) one-second slots, all
# four at the top of each second, as cron would start them:
#
#   - command stores: `anarchon run --store URL --job mix --slot S -- sh -c
#     'echo S hH >> STORE.out'` (SQLite file, Redis lease, stream-id, idmp and
#     script, NATS JetStream, RabbitMQ, PostgreSQL through postgresql://);
#   - the SQLite extension: the sqlite3 shell with the old or the new
#     anarchon.so on one file that 0.1.0 made, so that the first new host
#     migrates it while old hosts claim on it;
#   - the SQLite extension as a host of a remote store: the old or the new
#     anarchon.so claiming through anarchon_config('store', URL) on Redis
#     lease, NATS and RabbitMQ, beside the commands of both releases there;
#   - the PostgreSQL extension as a host of a remote store (kind pgr): two
#     servers, each started from its own copy of PostgreSQL's tree
#     (test/upgrade/pg_tree.sh), one holding 0.1.0's anarchon.so and SQL
#     files, the other this build's, each with a foreign server of the same
#     URL on Redis lease, NATS and RabbitMQ; a host is a psql session of its
#     release's server calling anarchon_claim through that foreign server.
#     These stores have a wave of their own, of MIXED_PGR_SLOTS (8) slots.
#
# Each slot must be run exactly once: a slot in STORE.out twice is a double
# win, a slot missing a lost one.  Where a host is to refuse (doc/
# architecture.md, "Redis, 0.1.0 beside 0.2.0": a 0.2.0 host refuses a 0.1.0
# run kept too short for its settings; idmp on a Redis without IDMP; a 0.1.0
# command on a database whose extension it does not match), the refusal
# exits 78 and runs nothing; refusals are counted and printed, and a slot
# that no host ran must have been refused by every host of that second.
#
# Then the format markers of the remote stores (Redis <prefix>:format, the
# NATS message on <prefix>.format, the message in RabbitMQ's queue
# <prefix>.format) on data 0.1.0 made: none after 0.1.0,
# written by the first 0.2.0 host, ignored by 0.1.0, and a newer format or
# an unreadable marker refused (78) before anything is decided.
source "$(dirname "$0")/../lib.sh"
source "$TEST_ROOT/upgrade/old_build.sh"
source "$TEST_ROOT/cli/contention.sh"	# cont_now, cont_sleep_until
source "$TEST_ROOT/pg/server.sh"
source "$TEST_ROOT/upgrade/pg_tree.sh"
cd "$REPO_ROOT" || exit 1

SLOTS=${MIXED_SLOTS:-30}
# Every network store's timeout_ms: 10 s, not 2.  This suite is about
# versions, not load.  A claim whose answer comes after timeout_ms is lost
# by design (never two runs, a slot may be skipped): under CI's load one
# RabbitMQ confirm of a first slot came late, its host said lost, the other
# three had been refused by the gate, and the slot ran nowhere.
TMO=timeout_ms=10000
VERSION=$(cat VERSION)
STORES=" ${MIXED_STORES:-sqlite redis nats amqp pg pgr} "
PGR_SLOTS=${MIXED_PGR_SLOTS:-8}
tmp=$(t_tmpdir)
MIX=$tmp/mix
mkdir -p "$MIX"
mkfifo "$MIX/sleep.fifo"

# all: the PostgreSQL module, for the extension hosts of kind pgr; without
# the LLVM bitcode of its sources (with_llvm=no), half its build time.
BUILD=(sqlite cli)
PGR_MAKE=(with_llvm=no)
[[ $STORES != *" pgr "* ]] || BUILD+=(all "${PGR_MAKE[@]}")
built_or_end mixed "${BUILD[@]}" || exit 1
old_build 0.1.0 "$tmp" "${BUILD[@]}" || { suite_end; exit; }
AN_OF=([1]="$OLD_TREE/cli/anarchon" [2]="$OLD_TREE/cli/anarchon" [3]="$REPO_ROOT/cli/anarchon" [4]="$REPO_ROOT/cli/anarchon")
SO_OF=([1]="$OLD_TREE/sqlite/anarchon" [2]="$OLD_TREE/sqlite/anarchon" [3]="$REPO_ROOT/sqlite/anarchon" [4]="$REPO_ROOT/sqlite/anarchon")
out="$("${AN_OF[1]}" --version) / $("${AN_OF[3]}" --version)"
if [ "$out" = "anarchon 0.1.0 / anarchon $VERSION" ]; then ok "mixed: the fleet's two commands are $out"
else not_ok "mixed: the fleet's two commands are 0.1.0 and $VERSION" "got: $out"; fi

# A store of the fleet: MIX_KIND[NAME] cmd, sql, sqlr or pgr, MIX_URL[NAME]
# its URL (a file for sql, a foreign server's name for pgr), MIX_OPTS[NAME,H]
# host H's extra options, MIX_EVEN_DELAY[NAME,H] how many ms host H starts
# late on even slots, MIX_REFUSE[NAME] the
# text every refusal must hold ("" when no host may refuse), MIX_SHORT_LATE[NAME,H]
# set when host H's max_late_ms is short enough that a loaded machine may
# start its run past it (it then says late, and runs nothing: by design).
declare -A MIX_KIND MIX_URL MIX_OPTS MIX_REFUSE MIX_EVEN_DELAY MIX_SHORT_LATE
store() { MIX_KIND[$1]=$2 MIX_URL[$1]=$3 MIX_REFUSE[$1]=${4:-}; }

# sql_host H NAME SLOT: one claim of the extension host H; the run is the
# line, then the finish.  The answer goes where a command's --verbose goes.
# A host of kind sqlr claims on the remote store MIX_URL[NAME] from an
# in-memory database, and leaves its run to its lease (a remote run's finish
# belongs to the claiming connection on RabbitMQ and NATS).
sql_host() {
	local h=$1 name=$2 slot=$3 f=${MIX_URL[$2]} so=${SO_OF[$1]} r remote=()
	if [ "${MIX_KIND[$name]}" = sqlr ]; then
		remote=("SELECT anarchon_config('store', '$f') IS NOT NULL")
		f=:memory:
	fi
	# overlap allow, as the command hosts run: a slow finish must not hold back the next slot.
	r=$(sqlite3 -bail "$f" ".load $so" ".timeout 20000" "SELECT anarchon_config('overlap', 'allow')" \
		"${remote[@]}" "SELECT anarchon_claim('mix', $slot, 'h$h-$slot')" 2>&1) || {
		echo "$r"
		return 70
	}
	verdict "$h" "$name" "$slot" "${r##*$'\n'}" || return 0
	[ ${#remote[@]} -eq 0 ] || return 0
	sqlite3 -bail "$f" ".load $so" ".timeout 20000" "SELECT anarchon_finish('mix', $slot, 'h$h-$slot')" > /dev/null
}

# verdict H NAME SLOT ANSWER: an extension host's answer, said as a
# command's --verbose says it; a win is host H's run of SLOT (1 otherwise).
verdict() {
	echo "mix at $3: $4"
	[ "$4" = won ] || return 1
	echo "$3 h$1" >> "$MIX/$2.out"
}

# pg_host H NAME SLOT: one claim of the PostgreSQL extension host H, a
# session of its release's server (PGR_OF) through the foreign server
# MIX_URL[NAME]; like kind sqlr it leaves its run to its lease.
pg_host() {
	local h=$1 name=$2 slot=$3 r
	r=$(PGOPTIONS="-c anarchon.store=${MIX_URL[$name]}" psql -X -A -t -q -v ON_ERROR_STOP=1 \
		-h "${PGR_HOST[${PGR_OF[$h]}]}" -p "${PGR_PORT[${PGR_OF[$h]}]}" -d postgres \
		-c "SELECT anarchon_claim('mix', $slot::bigint, 'h$h-$slot', overlap => 'allow')" 2>&1) || {
		echo "$r"
		return 70
	}
	verdict "$h" "$name" "$slot" "$r" || return 0
}

# host H FIRST NAME...: host H's loop over the slots; the stores take turns
# 60 ms apart within each second (a small machine does not start 40
# processes in one instant), the four hosts of a store fire together.
host() {
	local h=$1 first=$2 i k name slot pids=() what=() CONT_FD
	shift 2
	# shellcheck disable=SC2034  # read by cont_sleep_until
	exec {CONT_FD}<> "$MIX/sleep.fifo"
	for ((i = 0; i < SLOTS; i++)); do
		slot=$((first + i * 1000))
		k=0
		for name in "$@"; do
			cont_sleep_until $((slot + k * 60 + (i % 2 ? 0 : ${MIX_EVEN_DELAY[$name,$h]:-0})))
			if [ "${MIX_KIND[$name]}" = pgr ]; then
				pg_host "$h" "$name" "$slot" >> "$MIX/$name.h$h.err" 2>&1 &
			elif [ "${MIX_KIND[$name]}" != cmd ]; then
				sql_host "$h" "$name" "$slot" >> "$MIX/$name.h$h.err" 2>&1 &
			else
				# shellcheck disable=SC2086
				"${AN_OF[$h]}" run --verbose --store "${MIX_URL[$name]}" --job mix --slot "$slot" \
					--overlap allow ${MIX_OPTS[$name,$h]:-} \
					-- sh -c "echo '$slot h$h' >> '$MIX/$name.out'" 2>> "$MIX/$name.h$h.err" &
			fi
			pids+=($!)
			what+=("$name $slot")
			k=$((k + 1))
		done
	done
	for k in "${!pids[@]}"; do
		wait "${pids[k]}"
		echo "${what[k]#* } $?" >> "$MIX/${what[k]%% *}.h$h.rc"
	done
}

# slot_lines NAME REPORT: what each host said about the first slot REPORT
# names, for a failure to explain itself (a command host names the slot by
# its time, an extension host by its milliseconds).
slot_lines() {
	local s iso h
	s=$(printf '%s\n' "$2" | grep -oE '[0-9]{13}' | head -n 1)
	[ -n "$s" ] || return 0
	iso=$(date -u -d "@$((s / 1000))" +%FT%TZ)
	for h in 1 2 3 4; do
		grep -hE -A2 -- "mix at ($s|$iso)" "$MIX/$1.h$h.err" 2> /dev/null | sed "s/^/h$h: /" | head -n 3
	done
}

# mix_said NAME: what every host of NAME said, less the "late" of a host
# whose max_late_ms is short (MIX_SHORT_LATE): that host then ran nothing,
# and the slot is still judged (run once, or refused by every host).
mix_said() {
	local h
	for h in 1 2 3 4; do
		if [ -n "${MIX_SHORT_LATE[$1,$h]:-}" ]; then
			grep -vE "^(anarchon: )?mix at [0-9T:-]+Z?: late, not this host's to run$" "$MIX/$1.h$h.err" 2> /dev/null
		else
			cat "$MIX/$1.h$h.err" 2> /dev/null
		fi
	done
}

# judge NAME FIRST: the checks of one store; MIX_SUMMARY gets its line.
judge() {
	local name=$1 first=$2 report bad
	touch "$MIX/$name.out"
	# Per slot: runs (lines of NAME.out), and per host its exit status.
	report=$(awk -v first="$first" -v n="$SLOTS" '
		FILENAME ~ /\.out$/ { runs[$1]++; by[$1] = by[$1] " " $2; next }
		{ rc[$1] = rc[$1] " " $2; if ($2 == 78) refused[$1]++; hosts[$1]++ }
		END {
			for (i = 0; i < n; i++) {
				s = sprintf("%.0f", first + i * 1000)
				if (runs[s] > 1) print "slot " s " run " runs[s] " times, by" by[s]
				else if (runs[s] == 0 && refused[s] < hosts[s]) print "slot " s " never run, exits:" rc[s]
				else if (hosts[s] != 4) print "slot " s ": " hosts[s] + 0 " hosts reported, not 4"
			}
			for (s in runs) if (s + 0 < first + 0 || s + 0 >= first + n * 1000) print "a run of slot " s ", outside the fleet slots"
		}' "$MIX/$name.out" "$MIX/$name".h*.rc 2>&1)
	local runs refusals refusals_old refusals_new
	runs=$(wc -l < "$MIX/$name.out")
	refusals_old=$(cat "$MIX/$name".h[12].rc 2> /dev/null | awk '$2 == 78' | wc -l)
	refusals_new=$(cat "$MIX/$name".h[34].rc 2> /dev/null | awk '$2 == 78' | wc -l)
	refusals=$((refusals_old + refusals_new))
	local runs_old runs_new line
	runs_old=$(awk '$2 == "h1" || $2 == "h2"' "$MIX/$name.out" | wc -l)
	runs_new=$((runs - runs_old))
	line="$name: $SLOTS slots, $runs runs (0.1.0: $runs_old, $VERSION: $runs_new), refusals (0.1.0: $refusals_old, $VERSION: $refusals_new)"
	echo "# mixed $line"
	[ "$refusals" -eq 0 ] || echo "# mixed $name: a refusal: $(grep -hF -- "${MIX_REFUSE[$name]:-(none)}" "$MIX/$name".h*.err | head -n 1)"
	MIX_SUMMARY+=("$line")
	if [ -z "$report" ]; then
		ok "mixed $name: 2 hosts of 0.1.0 and 2 of $VERSION x $SLOTS slots, each slot run once or refused by every host ($runs runs, $refusals refusals)"
	else
		not_ok "mixed $name: 2 hosts of 0.1.0 and 2 of $VERSION x $SLOTS slots, each slot run once or refused by every host" \
			"$(printf '%s\n' "$report" | head -n 4)" "$(slot_lines "$name" "$report" | head -n 8)"
	fi
	# Every exit is 0 (won and ran, or not this host's) or, where this store
	# may refuse, 78 with the expected reason; any other line is a failure.
	bad=$(cat "$MIX/$name".h*.rc 2> /dev/null | awk -v may="${MIX_REFUSE[$name]:+78}" '$2 != 0 && $2 != may' | head -n 5)
	bad+=$(mix_said "$name" |
		grep -vE "^(anarchon: )?mix at [0-9T:-]+Z?(: won \(attempt 1\), running sh| finished succeeded|: (lost|running|done|overlap), not this host's to run|: (won|running|done|lost))$" |
		grep -vF -- "${MIX_REFUSE[$name]:-(none)}" |
		# 0.2.0's --verbose also gives a refused slot its own line (the reason is on the line above).
		{ if [ -n "${MIX_REFUSE[$name]:-}" ]; then grep -vE "^anarchon: mix at [0-9T:-]+Z: error, not claimed: .*\(exit 78\)$"; else cat; fi; } |
		head -n 5)
	if [ -z "$bad" ]; then
		ok "mixed $name: every host exited 0${MIX_REFUSE[$name]:+ or refused with 78 saying \"${MIX_REFUSE[$name]}\"}"
	else
		not_ok "mixed $name: every host exited 0${MIX_REFUSE[$name]:+ or refused with 78 saying \"${MIX_REFUSE[$name]}\"}" "$bad"
	fi
}

# wave NAME...: the stores NAME at once, the four hosts each, then the verdicts.
wave() {
	local first h pids=() name
	# The first slot: the whole second after the next, every host waiting for it.
	first=$(( ($(date +%s) + 2) * 1000 ))
	for h in 1 2 3 4; do
		host "$h" "$first" "$@" &
		pids+=($!)
	done
	wait "${pids[@]}"
	for name in "$@"; do judge "$name" "$first"; done
}
MIX_SUMMARY=()

# ---------------------------------------------------------------- the stores

W1=() W2=()
if [[ $STORES == *" sqlite "* ]]; then
	# Both files made by 0.1.0 before the fleet starts: the first new host
	# migrates each while the old hosts claim on it.
	out=$("${AN_OF[1]}" claim --store "sqlite://$tmp/cmd.db" --job warm --slot now 2>&1 | cut -f1)
	out+=" $(sqlite3 -bail "$tmp/ext.db" ".load ${SO_OF[1]}" "SELECT anarchon_claim('warm', $(( $(date +%s) * 1000 )), 't')" 2>&1)"
	out+=" $(sqlite3 "$tmp/cmd.db" "SELECT count(*) FROM sqlite_schema WHERE name = 'anarchon_meta'")"
	out+=" $(sqlite3 "$tmp/ext.db" "SELECT count(*) FROM sqlite_schema WHERE name = 'anarchon_meta'")"
	if [ "$out" = "won won 0 0" ]; then ok "mixed sqlite: 0.1.0 made both files (no anarchon_meta: format 3)"
	else not_ok "mixed sqlite: 0.1.0 made both files (no anarchon_meta: format 3)" "got: $out"; fi
	store sqlite-cmd cmd "sqlite://$tmp/cmd.db"
	store sqlite-ext sql "$tmp/ext.db"
	# On even slots the new hosts start 150 ms after the 0.1.0 hosts, which
	# then take those slots on the migrated file (the check below).  Fired
	# together, the faster-starting new command won every slot of a CI run.
	for h in 3 4; do MIX_EVEN_DELAY[sqlite-cmd,$h]=150 MIX_EVEN_DELAY[sqlite-ext,$h]=150; done
	W1+=(sqlite-cmd sqlite-ext)
fi
if [[ $STORES == *" redis "* ]]; then
	source "$TEST_ROOT/redis/server.sh"
	port=$(free_port)
	if redis_start mixed "$port"; then
		R="redis://127.0.0.1:$port"
		store redis-lease cmd "$R?strategy=lease&prefix=mx1&$TMO"
		# The 0.1.0 hosts keep their runs 3 s (max_late_ms 2 s, lease 1 s):
		# shorter than the new hosts' 60 s, which must refuse such a run.
		store redis-lease-short cmd "$R?strategy=lease&prefix=mx2&$TMO" "has a run written by anarchon 0.1.0, kept shorter than this host's max_late_ms"
		MIX_OPTS[redis-lease-short,1]="--max_late_ms 2000 --lease_ms 1000"
		MIX_OPTS[redis-lease-short,2]="--max_late_ms 2000 --lease_ms 1000"
		MIX_SHORT_LATE[redis-lease-short,1]=1 MIX_SHORT_LATE[redis-lease-short,2]=1
		# The new hosts start 150 ms late on even slots, so that 0.1.0 wins
		# some slots whatever the machine's speed: the refusals are then certain.
		MIX_EVEN_DELAY[redis-lease-short,3]=150 MIX_EVEN_DELAY[redis-lease-short,4]=150
		store redis-stream-id cmd "$R?strategy=stream-id&prefix=mx3&$TMO"
		store redis-script cmd "$R?strategy=script&prefix=mx4&$TMO"
		# Redis before 8.6 has no XADD IDMP: every host must refuse, none win.
		store redis-idmp cmd "$R?strategy=idmp&prefix=mx5&$TMO" "IDMP"
		# lease-short last: its late start on even slots delays nothing after it.
		store redis-ext sqlr "$R?strategy=lease&prefix=mx6&$TMO"
		W1+=(redis-lease redis-stream-id redis-ext redis-lease-short)
		W2+=(redis-script redis-idmp)
	else
		not_ok "mixed: start redis-server" "$(tail -n 20 "$R_DIR/mixed/log" 2> /dev/null)"
	fi
fi
if [[ $STORES == *" nats "* ]]; then
	source "$TEST_ROOT/nats/server.sh"
	if nats_start mixed; then
		store nats cmd "nats://127.0.0.1:${NATS_PORT[mixed]}?$TMO"
		store nats-ext sqlr "nats://127.0.0.1:${NATS_PORT[mixed]}?prefix=mxe&stream=MXE&$TMO"
		W2+=(nats nats-ext)
	else
		not_ok "mixed: start nats-server -js"
	fi
fi
if [[ $STORES == *" amqp "* ]]; then
	source "$TEST_ROOT/amqp/server.sh"
	if rmq_start "$tmp/rmq"; then
		# accept-loss: no settle wait after each win (2.5 s), which the count does not need.
		store amqp cmd "amqp://127.0.0.1:$RMQ_PORT?durability=accept-loss&$TMO"
		store amqp-ext sqlr "amqp://127.0.0.1:$RMQ_PORT?durability=accept-loss&prefix=mxa&$TMO"
		W2+=(amqp amqp-ext)
	else
		not_ok "mixed: start rabbitmq-server"
	fi
fi
if [[ $STORES == *" pg "* ]]; then
	mkdir -p "$tmp/pg"
	if pg_suite_start mixed "$tmp/pg" "fsync = off" "synchronous_commit = off" &&
		out=$(psql -X -A -t -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION anarchon" -c "SELECT anarchon_version()" 2>&1); then
		step "mixed: PostgreSQL on port $PGPORT, extension $out"
		store pg cmd "postgresql://$PGUSER@127.0.0.1:$PGPORT/postgres"
		W2+=(pg)
	else
		not_ok "mixed: the extension in a PostgreSQL database" "${out:-}"
	fi
fi

W3=()
if [[ $STORES == *" pgr "* ]]; then
	# Hosts 1 and 2 are sessions of the 0.1.0 server, 3 and 4 of this build's.
	declare -A PGR_HOST PGR_PORT
	PGR_OF=([1]=0.1.0 [2]=0.1.0 [3]=$VERSION [4]=$VERSION)
	# pgr_server R DIR: a server from a tree of its own that holds DIR's
	# extension (release R), the extension made in its database postgres,
	# and the library its backends run checked to be that tree's.
	pgr_server() {
		local r=$1 dir=$2 root=$tmp/pgr-$1 out lib
		mkdir -p "$root"
		if ! pg_tree_copy "$root" 2> "$root.log" || ! pg_tree_install "$root" "$dir" "$root.log" "${PGR_MAKE[@]}"; then
			not_ok "mixed pgr: a copy of PostgreSQL's tree holding the extension of $r" "$(tail -n 20 "$root.log")"
			return 1
		fi
		# fsync stays on: with it off pg_start sets anarchon.durability, which
		# 0.1.0 does not know (a warning in every session's answer).
		if ! PG_BINDIR=$root$PG_TREE_BIN pg_start 2> "$root.log"; then
			not_ok "mixed pgr: start the PostgreSQL server of $r" "$(tail -n 20 "$root.log")"
			return 1
		fi
		PGR_HOST[$r]=$PGHOST PGR_PORT[$r]=$PGPORT
		out=$(psql -X -A -t -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION anarchon" \
			-c "SELECT extversion FROM pg_extension WHERE extname = 'anarchon'" 2>&1)
		lib=$(pg_tree_loaded)
		same "mixed pgr: the server on port $PGPORT has the extension $r, its backends run its tree's anarchon.so" \
			"$r $root$PG_TREE_PKGLIB/anarchon.so" "$out $lib"
		[ "$out $lib" = "$r $root$PG_TREE_PKGLIB/anarchon.so" ]
	}
	# pgr_store NAME URL: a foreign server NAME of URL on both servers, and
	# the store NAME of kind pgr in the last wave.
	pgr_store() {
		local r out
		for r in 0.1.0 "$VERSION"; do
			out=$(psql -X -A -t -q -v ON_ERROR_STOP=1 -h "${PGR_HOST[$r]}" -p "${PGR_PORT[$r]}" -d postgres \
				-c "CREATE SERVER $1 FOREIGN DATA WRAPPER anarchon OPTIONS (url '$2')" 2>&1) || {
				not_ok "mixed pgr: the foreign server $1 on the server of $r" "$out"
				return
			}
		done
		store "$1" pgr "$1"
		W3+=("$1")
	}
	if pgr_server 0.1.0 "$OLD_TREE" && pgr_server "$VERSION" "$REPO_ROOT"; then
		[ -z "${R:-}" ] || pgr_store pgr_redis "$R?strategy=lease&prefix=mxp&$TMO"
		[ -z "${MIX_URL[nats]:-}" ] || pgr_store pgr_nats "${MIX_URL[nats]}&prefix=mxq&stream=MXQ"
		# timeout_ms 10 s (TMO, above) comes with the store's URL: each
		# session is a new connection, a backend and a format check.  Every
		# host of the prefix has the same URL.
		[ -z "${MIX_URL[amqp]:-}" ] || pgr_store pgr_amqp "${MIX_URL[amqp]}&prefix=mxr"
		[ ${#W3[@]} -gt 0 ] || not_ok "mixed pgr: a remote store to claim on (redis, nats or amqp in MIXED_STORES)"
	fi
fi

# ---------------------------------------------------------------- the fleet

[ ${#W1[@]} -eq 0 ] || wave "${W1[@]}"
[ ${#W2[@]} -eq 0 ] || wave "${W2[@]}"
# The PostgreSQL hosts, in a short wave of their own (a session costs a backend).
[ ${#W3[@]} -eq 0 ] || SLOTS=$PGR_SLOTS wave "${W3[@]}"

# What each refusal says, and that it refused only what it must.
if [ -n "${MIX_URL[redis-lease-short]:-}" ]; then
	# A new host refuses exactly the slots a 0.1.0 host won with its short
	# settings, both new hosts each such slot; a 0.1.0 host never refuses.
	out=$(awk 'FILENAME ~ /\.out$/ { if ($2 == "h1" || $2 == "h2") old[$1] = 1; next }
		$2 == 78 { n++; if (!($1 in old)) bad = bad " " $1 }
		END { for (s in old) want += 2; printf "%d %d%s\n", n, want, bad }' \
		"$MIX/redis-lease-short.out" "$MIX"/redis-lease-short.h[34].rc)
	if [ "$(cat "$MIX"/redis-lease-short.h[12].rc | awk '$2 != 0' | wc -l) $out" = "0 ${out%% *} ${out%% *}" ] &&
		[ "${out%% *}" -gt 0 ]; then
		ok "mixed redis-lease-short: $VERSION hosts refused (78) exactly the slots a 0.1.0 host won on short settings, both each time (${out%% *} refusals)"
	else
		not_ok "mixed redis-lease-short: $VERSION hosts refused (78) exactly the slots a 0.1.0 host won on short settings, both each time" \
			"refusals, wanted, refused slots no 0.1.0 host won: $out"
	fi
	out=$(cat "$MIX"/redis-lease-short.h[34].err)
	has "mixed redis-lease-short: the refusal says what to do" "$out" "Upgrade every host that claims on prefix mx2 to 0.2.0"
fi
if [ -n "${MIX_URL[redis-idmp]:-}" ]; then
	is_all=$(cat "$MIX"/redis-idmp.h*.rc | awk '$2 == 78' | wc -l)
	if [ "$is_all" -eq $((4 * SLOTS)) ] && [ ! -s "$MIX/redis-idmp.out" ]; then
		ok "mixed redis-idmp: on Redis $(redis-server --version | grep -o 'v=[0-9.]*') every claim of both releases refused (78), none ran ($is_all refusals)"
	else
		not_ok "mixed redis-idmp: every claim of both releases refused (78), none ran" "$is_all refusals of $((4 * SLOTS))"
	fi
fi
# The files 0.1.0 made were migrated once, by a new host, and the 0.1.0
# hosts went on winning slots on the migrated file.
for name in sqlite-cmd sqlite-ext; do
	[ -n "${MIX_URL[$name]:-}" ] || continue
	f=${MIX_URL[$name]#sqlite://}
	at=$(sqlite3 "$f" "SELECT value FROM anarchon_meta WHERE key = 'migration 1'" 2> /dev/null | sed -n 's/^from format 3 to 4 by anarchon [0-9.]* at \([0-9]*\)$/\1/p')
	n=$(sqlite3 "$f" "SELECT value FROM anarchon_meta WHERE key = 'migrations'" 2> /dev/null)
	after=$(awk -v at="${at:-0}" '($2 == "h1" || $2 == "h2") && $1 + 0 > at + 0' "$MIX/$name.out" | wc -l)
	if [ -n "$at" ] && [ "$n" = 1 ] && [ "$after" -gt 0 ]; then
		ok "mixed $name: the 0.1.0 file was migrated once (format 3 to 4) and 0.1.0 hosts then won $after slots on it"
	else
		not_ok "mixed $name: the 0.1.0 file was migrated once (format 3 to 4) and 0.1.0 hosts then won slots on it" \
			"migration at: ${at:-none}; migrations: ${n:-none}; 0.1.0 wins after: $after"
	fi
done

# is_fmt NAME GOT WANT: ok when GOT is exactly WANT.
is_fmt() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "want: $3" "got: $2"; fi; }
# fmt_steps NAME URL MARK NONE MARKED: on a new prefix, 0.1.0 claims (MARK, a
# command, says NONE), this release loses that slot and marks the prefix
# (MARKED), 0.1.0 claims on; S0 is the first slot.
fmt_steps() {
	local name=$1 u=$2 mark=$3 none=$4 marked=$5 out
	S0=$(( $(date +%s) * 1000 ))
	out=$("${AN_OF[1]}" claim --store "$u" --job fmt --slot "$S0" --token old 2>&1 | cut -f1)
	is_fmt "mixed format $name: 0.1.0 claims on a new prefix and writes no format marker" "$out [$($mark)]" "won [$none]"
	out=$("${AN_OF[3]}" claim --store "$u" --job fmt --slot "$S0" --token new 2>&1 | cut -f1)
	is_fmt "mixed format $name: $VERSION loses the slot 0.1.0 won and marks the prefix format 2" "$out [$($mark)]" "lost [$marked]"
	out=$("${AN_OF[1]}" claim --store "$u" --job fmt --slot $((S0 + 1000)) --token old 2>&1 | cut -f1)
	is_fmt "mixed format $name: 0.1.0 still claims on the marked prefix" "$out" won
}


# The prefix's format marker (<prefix>:format, redis_format.c) on data
# 0.1.0 made: a 0.1.0 prefix has none (format 1), the first 0.2.0 host marks
# it and reads 0.1.0's run as it is; 0.1.0 keeps claiming beside it; a marker
# of a later format, or one that cannot be read, is refused before anything
# is decided.
if [ -n "${R:-}" ]; then
	rget() { redis-cli -p "$port" GET "$1"; }
	U="$R?strategy=lease&prefix=fm1"
	S0=$(( $(date +%s) * 1000 ))
	out=$("${AN_OF[1]}" claim --overlap allow --store "$U" --job fmt --slot "$S0" --token old 2>&1 | cut -f1)
	is_fmt "mixed format: 0.1.0 claims on a new prefix and writes no format marker" "$out [$(rget fm1:format)]" "won []"
	out=$("${AN_OF[3]}" claim --overlap allow --store "$U" --job fmt --slot "$S0" --token new 2>&1 | cut -f1)
	is_fmt "mixed format: $VERSION on the 0.1.0 prefix reads its run (running) and marks the prefix format 2" \
		"$out [$(rget fm1:format)]" "running [2 0.2.0]"
	out=$("${AN_OF[1]}" claim --overlap allow --store "$U" --job fmt --slot $((S0 + 1000)) --token old 2>&1 | cut -f1)
	is_fmt "mixed format: 0.1.0 still claims on the marked prefix" "$out" won
	out=$("${AN_OF[3]}" claim --overlap allow --store "$U" --job fmt --slot $((S0 + 2000)) --token new 2>&1 | cut -f1)
	is_fmt "mixed format: $VERSION wins a new slot there, the marker unchanged" "$out [$(rget fm1:format)]" "won [2 0.2.0]"
	bad_prefix=""
	for p in mx1 mx2 mx3 mx4; do [ "$(rget "$p:format")" = "2 0.2.0" ] || bad_prefix+=" $p=[$(rget "$p:format")]"; done
	is_fmt "mixed format: each prefix the mixed fleet used is marked once, 2 0.2.0 (the 0.2.0 hosts' first claims raced)" "$bad_prefix" ""

	# A later release's marker: refused (78), naming both, and nothing decided.
	redis-cli -p "$port" SET fm1:format "3 0.3.0" > /dev/null
	out=$("${AN_OF[3]}" claim --overlap allow --store "$U" --job fmt --slot $((S0 + 3000)) --token new 2>&1)
	rc=$?
	has "mixed format: a marker of format 3 is refused with exit 78 ($rc), naming both formats and releases" "$rc $out" \
		"78 anarchon: redis store redis://127.0.0.1:$port: prefix fm1 is in format 3 (anarchon 0.3.0), newer than format 2 of this host (anarchon $VERSION)"
	has "mixed format: ... saying what to use" "$out" "Use anarchon 0.3.0 or later on every host that claims on prefix fm1."
	out=$("${AN_OF[3]}" check --store "$U" --job fmt --slot $((S0 + 3000)) 2>&1)
	has "mixed format: ... a read too" "$? $out" "78 anarchon: redis store"
	is_fmt "mixed format: ... and the marker is left as it was, the slot not taken" \
		"$(rget fm1:format) $(redis-cli -p "$port" EXISTS "fm1:{fmt}:run:$((S0 + 3000))")" "3 0.3.0 0"
	redis-cli -p "$port" SET fm1:format "two" > /dev/null
	out=$("${AN_OF[3]}" claim --overlap allow --store "$U" --job fmt --slot $((S0 + 3000)) --token new 2>&1)
	has "mixed format: a marker that is no format is refused (78), never guessed" "$? $out" \
		"78 anarchon: redis store redis://127.0.0.1:$port: the key fm1:format holds no format this host can read: two"
	redis-cli -p "$port" SET fm1:format "2 0.2.0" > /dev/null
	out=$("${AN_OF[3]}" claim --overlap allow --store "$U" --job fmt --slot $((S0 + 3000)) --token new 2>&1 | cut -f1)
	is_fmt "mixed format: with the marker back at 2, the slot is won" "$out" won
fi

# A pause set by one release holds the other's claims: 0.1.0 GETs
# <prefix>:{<job>}:paused before its claim script, this release reads the
# same key inside its claim script, and both write it the same way.
if [ -n "${R:-}" ]; then
	for strat in lease stream-id script; do
		U="$R?strategy=$strat&prefix=mp${strat:0:2}"
		S0=$(( $(date +%s) * 1000 + 60000 ))
		got=
		for pair in "1 3" "3 1"; do
			read -r a b <<< "$pair"
			got+="$("${AN_OF[$a]}" pause --store "$U" --job mp 2>&1 | head -n 1) "
			got+="$("${AN_OF[$b]}" claim --overlap allow --store "$U" --job mp --slot "$S0" --token "h$b" 2>&1 | cut -f1) "
			got+="$("${AN_OF[$b]}" resume --store "$U" --job mp 2>&1 | head -n 1) "
			got+="$("${AN_OF[$a]}" claim --overlap allow --store "$U" --job mp --slot "$S0" --token "h$a" 2>&1 | cut -f1) "
			S0=$((S0 + 1000))
		done
		is_fmt "mixed pause redis $strat: a pause of 0.1.0 holds $VERSION's claim and the reverse; a resume by the other ends it" \
			"$got" "paused paused resumed won paused paused resumed won "
	done
fi

# The same on NATS: the marker is the last message on <prefix>.format.
if [ -n "${MIX_URL[nats]:-}" ]; then
	# nmark: the marker's text, or "none" (JetStream's 10037: no message).
	nmark() {
		local r
		r=$(nats_api mixed '$JS.API.STREAM.MSG.GET.FMT' '{"last_by_subj":"fmn.format"}')
		case $r in
			*'"err_code":10037'*) echo none ;;
			*'"data":"'*) printf '%s' "$r" | sed 's/.*"data":"\([^"]*\)".*/\1/' | base64 -d ;;
			*) echo "? $r" ;;
		esac
	}
	U="${MIX_URL[nats]}&stream=FMT&prefix=fmn"
	fmt_steps nats "$U" nmark none "2 0.2.0"
	nats_api mixed fmn.format "3 0.3.0" > /dev/null
	out=$("${AN_OF[3]}" claim --store "$U" --job fmt --slot $((S0 + 2000)) --token new 2>&1)
	has "mixed format nats: a marker of format 3 is refused with exit 78, naming both formats and releases" "$? $out" \
		"78 anarchon: NATS stream FMT: prefix fmn is in format 3 (anarchon 0.3.0), newer than format 2 of this host (anarchon $VERSION)"
	nats_api mixed fmn.format "2 0.2.0" > /dev/null
	out=$("${AN_OF[3]}" claim --store "$U" --job fmt --slot $((S0 + 2000)) --token new 2>&1 | cut -f1)
	is_fmt "mixed format nats: with the marker back at 2, the slot is won (nothing was claimed while refused)" "$out" won
	r=$(nats_api mixed '$JS.API.STREAM.MSG.GET.CRON' '{"last_by_subj":"cron.format"}')
	has "mixed format nats: the stream the mixed fleet used is marked 2 0.2.0" "$(printf '%s' "$r" | sed 's/.*"data":"\([^"]*\)".*/\1/' | base64 -d 2>&1)" "2 0.2.0"
fi

# The same on RabbitMQ: the queue <prefix>.format.2 of the virtual host
# (amqp_format.c), which 0.1.0 never looks at; <prefix>.format.3 is a later
# release's.
if [ -n "${MIX_URL[amqp]:-}" ]; then
	if ! out=$(make -s -C "$REPO_ROOT" test/bin/mq-marker 2>&1); then
		not_ok "mixed format amqp: build mq-marker" "$out"
	else
		# amark QUEUE: "durable x-message-ttl", or "missing".
		amark() {
			local line
			line=$(rmq_ctl -q list_queues -p / name durable arguments 2> /dev/null | awk -v q="$1" '$1 == q')
			if [ -z "$line" ]; then echo missing
			else echo "$(printf '%s' "$line" | awk '{print $2}') $(printf '%s' "$line" | grep -o '"x-message-ttl",[0-9]*' | cut -d, -f2)"; fi
		}
		agate() { rmq_ctl -q list_queues -p / name 2> /dev/null | grep -c "^fma\.fmt\.slot\.$1\$"; }
		U="${MIX_URL[amqp]}&prefix=fma"
		# The marker holds the prefix's slot_ttl_ms (x-message-ttl).
		fmt_steps amqp "$U" "amark fma.format.2" missing "true 120000"
		is_fmt "mixed format amqp: the prefix the mixed fleet used is marked (the $VERSION hosts' first claims raced)" \
			"$(amark cron.format.2)" "true 120000"
		"$REPO_ROOT/test/bin/mq-marker" "$RMQ_PORT" / declare fma.format.3 > /dev/null 2>&1 ||
			not_ok "mixed format amqp: declare fma.format.3 by hand"
		out=$("${AN_OF[3]}" claim --store "$U" --job fmt --slot $((S0 + 2000)) --token new 2>&1)
		has "mixed format amqp: a later release's marker (fma.format.3) is refused with exit 78, naming both formats" "$? $out" \
			"78 anarchon: RabbitMQ at amqp://127.0.0.1:$RMQ_PORT: prefix fma of virtual host / is in format 3 or later (a later release of anarchon), newer than format 2 of this host (anarchon $VERSION)"
		has "mixed format amqp: ... saying what to use" "$out" "Use the release of anarchon that wrote fma.format.3, or a later one, on every host that claims on prefix fma of virtual host /."
		out=$("${AN_OF[3]}" check --store "$U" --job fmt --slot $((S0 + 2000)) 2>&1)
		has "mixed format amqp: ... a read too" "$? $out" "78 anarchon: RabbitMQ at"
		is_fmt "mixed format amqp: ... and the slot is not taken (no gate)" "$(agate $((S0 + 2000)))" 0
		out=$("${AN_OF[1]}" claim --store "$U" --job fmt --slot $((S0 + 3000)) --token old 2>&1 | cut -f1)
		is_fmt "mixed format amqp: ... while 0.1.0, which never looks, goes on claiming" "$out" won
		rmq_ctl delete_queue fma.format.3 > /dev/null 2>&1
		out=$("${AN_OF[3]}" claim --store "$U" --job fmt --slot $((S0 + 2000)) --token new 2>&1 | cut -f1)
		is_fmt "mixed format amqp: with the later marker gone, the slot is won (nothing was claimed while refused)" "$out" won
	fi
fi

suite_end
