#!/usr/bin/env bash
# run.sh — pause and resume (doc/operating.md, "Pause and resume"): a paused
# job's claims answer `paused` on every store that can hold a pause, from
# every host, and its slots are not reported missed.
#
# For each host (PostgreSQL, SQLite, the command) and each store (the host's
# own, and Redis: a foreign server, anarchon_config('store', url), --store):
#   - pause the job, then 8 processes claim one slot together: 8 answer
#     paused, none won;
#   - resume it (true / 1 / resumed), resume again (false / 0 / not-paused),
#     then 8 processes claim a slot together: exactly one won;
# then a pause made in one host seen by the others on the same Redis (and on
# another Redis strategy), a pause with until that ends by itself, slots of
# a pause skipped by anarchon_missed and anarchon_due while slots outside it
# are still reported, PostgreSQL's role checks, bad input in every host, a
# store that cannot hold a pause (NATS) refused by name, the paused counter
# of the statistics, and the command's verbs under valgrind.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$TEST_ROOT/controls.sh"
source "$TEST_ROOT/nats/server.sh"
SCHED='* * * * * *'
N=8

built_or_end pause sqlite cli || exit 1

rport=$(free_port) && redis_start pause "$rport" || { not_ok "pause: start redis-server"; suite_end; exit; }
REDIS="redis://127.0.0.1:$rport/0?strategy=lease&prefix=pz"
REDIS_SCRIPT="redis://127.0.0.1:$rport/0?strategy=script&prefix=pzs"
step "pause: redis-server on 127.0.0.1:$rport"

pg_suite_start pause "$tmp" "fsync = off" "synchronous_commit = off" || { suite_end; exit; }
q() { psql -X -A -t -q -v ON_ERROR_STOP=1 "$@" 2>&1; }
if ! out=$(q -c "CREATE EXTENSION anarchon" \
	-c "CREATE SERVER pz_redis FOREIGN DATA WRAPPER anarchon OPTIONS (url '$REDIS')"); then
	not_ok "pause: the extension and a Redis foreign server" "$out"
	suite_end
	exit
fi

# ---------------------------------------------------------------- one call in each host

pgo() { [ "$1" = redis ] && echo "-c anarchon.store=pz_redis"; }
sqlite_db() { if [ "$1" = local ]; then echo "$tmp/sqlite-local.db"; else echo ":memory:"; fi; }
store_url() {
	case $1 in
		redis) echo "$REDIS" ;;
		script) echo "$REDIS_SCRIPT" ;;
		pg) echo "postgresql://$PGUSER@127.0.0.1:$PGPORT/postgres" ;;
		*) echo "sqlite://$tmp/cli-local.db" ;;
	esac
}
# sql HOST STORE STATEMENT: the statement's one value, in that host on that store.
sql() {
	local host=$1 store=$2
	case $host in
		pg) PGOPTIONS=$(pgo "$store") q -c "$3" ;;
		sqlite)
			# The shell's own connection waits for the file's lock as an
			# application's does (.timeout): eight processes at once commit
			# their claims, and reading the schema must not fail at once.
			{
				echo ".timeout 10000"
				echo ".load $EXT"
				echo ".output /dev/null"
				[ "$store" = local ] || echo "SELECT anarchon_config('store', '$(store_url "$store")');"
				echo ".output stdout"
				echo "$3;"
			} | sqlite3 "$(sqlite_db "$store")" 2>&1 ;;
	esac
}
# claim HOST STORE JOB SLOT TOKEN: the outcome.
claim() {
	case $1 in
		pg) sql pg "$2" "SELECT anarchon_claim('$3', $4::bigint, '$5')" ;;
		sqlite) sql sqlite "$2" "SELECT anarchon_claim('$3', $4, '$5')" ;;
		cli) "$AN" claim --store "$(store_url "$2")" --job "$3" --slot "$4" --token "$5" 2>&1 | cut -f1 ;;
	esac
}
# pause HOST STORE JOB [UNTIL_MS]: what the host answers.
pause() {
	local until=${4:-}
	case $1 in
		pg) sql pg "$2" "SELECT anarchon_pause('$3'${until:+, to_timestamp($until / 1000.0)})" | sed '/^$/d' && echo paused ;;
		sqlite) sql sqlite "$2" "SELECT anarchon_pause('$3'${until:+, $until})" ;;
		cli) "$AN" pause --store "$(store_url "$2")" --job "$3" ${until:+--until "$until"} 2>&1 ;;
	esac
}
resume() {
	case $1 in
		pg) sql pg "$2" "SELECT anarchon_resume('$3')" ;;
		sqlite) sql sqlite "$2" "SELECT anarchon_resume('$3')" ;;
		cli) "$AN" resume --store "$(store_url "$2")" --job "$3" 2>&1 ;;
	esac
}
# contend HOST STORE JOB SLOT OUT: N processes claim the slot at once; their outcomes in OUT.
contend() {
	local i pids=()
	: > "$5"
	for i in $(seq 1 "$N"); do
		{ claim "$1" "$2" "$3" "$4" "tok-$i-$BASHPID" >> "$5"; } &
		pids+=($!)
	done
	wait "${pids[@]}"
}
count() { grep -cx "$1" "$2"; }
is() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "want: $3" "got: $2"; fi; }

# ---------------------------------------------------------------- pause, contend, resume, contend

yes_word() { case $1 in pg) echo t ;; sqlite) echo 1 ;; cli) echo resumed ;; esac; }
no_word() { case $1 in pg) echo f ;; sqlite) echo 0 ;; cli) echo not-paused ;; esac; }
open_until() { case $1 in pg) echo infinity ;; sqlite) echo 9223372036854775807 ;; esac; }

for hs in "pg local" "pg redis" "sqlite local" "sqlite redis" "cli local" "cli redis" "cli pg"; do
	set -- $hs
	host=$1 store=$2
	{
		name="pause: $host, $store store"
		job=pz-$host-$store
		slot=$(( $(date +%s) * 1000 ))
		is "$name: anarchon_pause answers" "$(pause "$host" "$store" "$job" | tr '\n' ' ')" \
			"$([ "$host" = sqlite ] && echo 1 || echo paused) "
		if [ "$host" != cli ]; then
			is "$name: anarchon_paused says until resumed" "$(sql "$host" "$store" "SELECT anarchon_paused('$job')")" \
				"$(open_until "$host")"
		fi
		contend "$host" "$store" "$job" "$slot" "$tmp/$job.1"
		if [ "$(count paused "$tmp/$job.1")" = "$N" ] && [ "$(wc -l < "$tmp/$job.1")" = "$N" ]; then
			ok "$name: $N claims of a paused job at once: $N paused, none won"
		else
			not_ok "$name: $N claims of a paused job at once" "outcomes: $(sort "$tmp/$job.1" | uniq -c | tr '\n' ' ')"
		fi
		is "$name: resume of the paused job" "$(resume "$host" "$store" "$job")" "$(yes_word "$host")"
		is "$name: resume again: not paused, and not an error" "$(resume "$host" "$store" "$job")" "$(no_word "$host")"
		if [ "$host" != cli ]; then
			is "$name: anarchon_paused after resume is NULL" "$(sql "$host" "$store" "SELECT anarchon_paused('$job') IS NULL")" \
				"$(yes_word "$host")"
		fi
		contend "$host" "$store" "$job" "$slot" "$tmp/$job.2"
		if [ "$(count won "$tmp/$job.2")" = 1 ] && [ "$(count paused "$tmp/$job.2")" = 0 ] &&
			[ "$(wc -l < "$tmp/$job.2")" = "$N" ]; then
			ok "$name: after resume, $N claims at once: one won ($(sort "$tmp/$job.2" | uniq -c | tr '\n' ' '))"
		else
			not_ok "$name: after resume, $N claims at once" "outcomes: $(sort "$tmp/$job.2" | uniq -c | tr '\n' ' ')"
		fi
	}
done

# ---------------------------------------------------------------- one Redis, three hosts

slot=$(( $(date +%s) * 1000 ))
pause pg redis pz-x > /dev/null
is "pause: paused in PostgreSQL, a SQLite claim on the same Redis answers paused" "$(claim sqlite redis pz-x "$slot" t1)" paused
is "pause: ... and so does the command's" "$(claim cli redis pz-x "$slot" t2)" paused
is "pause: resumed by the command, PostgreSQL's claim wins" "$(resume cli redis pz-x)/$(claim pg redis pz-x "$slot" t3)" resumed/won
pause cli redis pz-y > /dev/null
is "pause: paused by the command, PostgreSQL's claim answers paused" "$(claim pg redis pz-y "$slot" t1)" paused
is "pause: resumed in SQLite, the command's claim wins" "$(resume sqlite redis pz-y)/$(claim cli redis pz-y "$slot" t2)" 1/won
# Another strategy of the Redis store: the pause is about the job, not about how it is decided.
pause sqlite script pz-s > /dev/null
is "pause: strategy=script: the command's claim of a paused job answers paused" "$(claim cli script pz-s "$slot" t1)" paused
is "pause: strategy=script: resumed, it wins" "$(resume cli script pz-s)/$(claim cli script pz-s "$slot" t2)" resumed/won
keys=$(redis-cli -p "$rport" --scan --pattern 'pz:{pz-x}:*' | sort | tr '\n' ' ')
has "pause: Redis keeps the pause under the job's hash tag" "$keys" "pz:{pz-x}:pauses"

# ---------------------------------------------------------------- a pause with until ends by itself

# Eight seconds: the ten pauses, five claims and two reads below must all
# come before it ends, on a loaded machine too.
until_ms=$(( $(date +%s%3N) + 8000 ))
slot=$(( $(date +%s) * 1000 ))
for hs in "pg local" "pg redis" "sqlite local" "sqlite redis" "cli local"; do
	set -- $hs
	# Paused until resumed first: the pause with until replaces its end.
	pause "$1" "$2" "pz-until-$1-$2" > /dev/null
	pause "$1" "$2" "pz-until-$1-$2" "$until_ms" > "$tmp/until-$1-$2.out"
	is "pause: $1, $2 store: paused until now + 8 s, a claim answers paused" "$(claim "$1" "$2" "pz-until-$1-$2" "$slot" a)" paused
done
is "pause: pg, local store: anarchon_paused says when it ends" \
	"$(sql pg local "SELECT (extract(epoch FROM anarchon_paused('pz-until-pg-local')) * 1000)::bigint")" "$until_ms"
is "pause: sqlite, redis store: anarchon_paused says when it ends" \
	"$(sql sqlite redis "SELECT anarchon_paused('pz-until-sqlite-redis')")" "$until_ms"
is "pause: redis: a pause whose end was set anew is one pause, with that end" \
	"$(redis-cli -p "$rport" ZRANGE 'pz:{pz-until-sqlite-redis}:pauses' 0 -1 | sed 's/^[0-9]*://' | tr '\n' ' ')" "$until_ms "
sleep_until $((until_ms + 300))
slot=$(( $(date +%s) * 1000 ))
for hs in "pg local" "pg redis" "sqlite local" "sqlite redis" "cli local"; do
	set -- $hs
	is "pause: $1, $2 store: after until, with no resume, a claim wins" "$(claim "$1" "$2" "pz-until-$1-$2" "$slot" b)" won
done

# ---------------------------------------------------------------- missed and due skip a pause

# Every second is a slot; nothing is claimed.  The job is paused for 2.5 s
# and resumed; slots before the pause call and after the resume call are
# missed, slots between the pause's return and the resume's call are not.
t_before=$(date +%s%3N)
sleep_until $((t_before + 3100))
t_pausing=$(date +%s%3N)
for hs in "pg local" "pg redis" "sqlite local" "cli local" "cli pg"; do set -- $hs; pause "$1" "$2" "pz-m-$1-$2" > /dev/null; done
t_paused=$(date +%s%3N)
sleep_until $((t_paused + 2500))
t_resume=$(date +%s%3N)
for hs in "pg local" "pg redis" "sqlite local" "cli local" "cli pg"; do set -- $hs; resume "$1" "$2" "pz-m-$1-$2" > /dev/null; done
t_resumed=$(date +%s%3N)
sleep_until $((t_resumed + 1500))
t_to=$(date +%s%3N)

# judge_missed NAME FILE: the slots listed in FILE against the pause.
judge_missed() {
	local name=$1 file=$2 s problems=() before=0 inside=0 after=0
	for s in $(seq $(( (t_before / 1000 + 1) * 1000 )) 1000 $((t_to - 1))); do
		if [ "$s" -lt "$t_pausing" ]; then
			before=$((before + 1)); grep -qx "$s" "$file" || problems+=("slot $s, before the pause, is not reported")
		elif [ "$s" -ge "$t_paused" ] && [ "$s" -lt "$t_resume" ]; then
			inside=$((inside + 1)); grep -qx "$s" "$file" && problems+=("slot $s, inside the pause, is reported")
		elif [ "$s" -ge "$t_resumed" ] && [ "$s" -lt "$((t_to - 100))" ]; then
			after=$((after + 1)); grep -qx "$s" "$file" || problems+=("slot $s, after the pause, is not reported")
		fi
	done
	[ "$before" -ge 1 ] && [ "$inside" -ge 2 ] && [ "$after" -ge 1 ] || problems+=("too few slots to judge: $before before, $inside inside, $after after")
	if [ ${#problems[@]} -eq 0 ]; then ok "$name ($before before, $inside inside, $after after)"
	else not_ok "$name" "${problems[@]}" "listed: $(tr '\n' ' ' < "$file")" "pause from $t_paused to $t_resume"; fi
}
for store in local redis; do
	PGOPTIONS="$(pgo "$store") -c anarchon.max_late_ms=0" q -c "SELECT slot FROM anarchon_missed('pz-m-pg-$store', '$SCHED', $t_before::bigint, $t_to::bigint)" > "$tmp/missed-pg-$store"
	judge_missed "pause: pg, $store store: anarchon_missed skips the slots inside a pause and reports the others" "$tmp/missed-pg-$store"
done
printf '.load %s\n.output /dev/null\nSELECT anarchon_config(%s, 0);\n.output stdout\nSELECT slot FROM anarchon_missed(%s, %s, %s, %s);\n' \
	"$EXT" "'max_late_ms'" "'pz-m-sqlite-local'" "'$SCHED'" "$t_before" "$t_to" | sqlite3 "$(sqlite_db local)" > "$tmp/missed-sqlite" 2>&1
judge_missed "pause: sqlite, local store: anarchon_missed skips the slots inside a pause and reports the others" "$tmp/missed-sqlite"
"$AN" missed --store "$(store_url local)" --job pz-m-cli-local --schedule "$SCHED" --from "$t_before" --to "$t_to" --max_late_ms 0 2>&1 | cut -f1 > "$tmp/missed-cli"
judge_missed "pause: the command, sqlite file: anarchon missed skips the slots inside a pause and reports the others" "$tmp/missed-cli"
"$AN" missed --store "$(store_url pg)" --job pz-m-cli-pg --schedule "$SCHED" --from "$t_before" --to "$t_to" --max_late_ms 0 2>&1 | cut -f1 > "$tmp/missed-cli-pg"
judge_missed "pause: the command, PostgreSQL: anarchon missed skips the slots inside a pause and reports the others" "$tmp/missed-cli-pg"
out=$(q -c "SELECT count(*) FROM anarchon_pauses('pz-m-pg-local', to_timestamp($t_before / 1000.0), to_timestamp($t_to / 1000.0))")
is "pause: pg: anarchon_pauses lists the pause" "$out" 1
# anarchon_due's catch-up looks at the same slots: none inside the pause.
win=$((t_to - t_before))
PGOPTIONS="-c anarchon.max_late_ms=$((win + 1000)) -c anarchon.catch_up=all -c anarchon.catch_up_ms=$win -c anarchon.catch_up_max=100" \
	q -c "SELECT slot FROM anarchon_due('pz-m-pg-local', '$SCHED', $t_to::bigint)" > "$tmp/due-pg"
judge_missed "pause: pg, local store: anarchon_due's catch-up skips the slots inside a pause" "$tmp/due-pg"
# The command's now is later than t_to: its window reaches 10 s further back.
"$AN" due --store "$(store_url local)" --job pz-m-cli-local --schedule "$SCHED" --max_late_ms $((win + 11000)) \
	--catch-up all --catch-up-ms $((win + 10000)) --catch-up-max 100 2>&1 | cut -f1 > "$tmp/due-cli"
judge_missed "pause: the command: due's catch-up skips the slots inside a pause" "$tmp/due-cli"

# ---------------------------------------------------------------- anarchon.run and anarchon run of a paused job

q -c "CREATE TABLE pz_ran (job text)" > /dev/null
pause pg local pz-run > /dev/null
out=$(q -c "CALL anarchon.run('pz-run', '$SCHED', 'INSERT INTO pz_ran VALUES (''pz-run'')')" -c "SELECT count(*) FROM pz_ran" \
	-c "SELECT outcome FROM anarchon.run_log WHERE job = 'pz-run'" | tr '\n' ' ')
is "pause: pg: CALL anarchon.run of a paused job answers paused, runs nothing, logs paused" "$out" "paused 0 paused "
resume pg local pz-run > /dev/null
out=$(q -c "CALL anarchon.run('pz-run', '$SCHED', 'INSERT INTO pz_ran VALUES (''pz-run'')')" -c "SELECT count(*) FROM pz_ran" | tr '\n' ' ')
is "pause: pg: resumed, CALL anarchon.run runs the command" "$out" "won 1 "
pause cli redis pz-run > /dev/null
: > "$tmp/pz-run.cli"
"$AN" run --store "$(store_url redis)" --job pz-run --schedule "$SCHED" --verbose -- sh -c 'echo ran >> "$1"' sh "$tmp/pz-run.cli" 2> "$tmp/pz-run.err"
rc=$?
if [ "$rc" = 0 ] && [ ! -s "$tmp/pz-run.cli" ] && grep -q "paused, not this host's to run" "$tmp/pz-run.err"; then
	ok "pause: the command: run of a paused job exits 0 without running its command, and says so with --verbose"
else
	not_ok "pause: the command: run of a paused job" "exit $rc" "ran: $(cat "$tmp/pz-run.cli")" "stderr: $(cat "$tmp/pz-run.err")"
fi
"$AN" run --store "$(store_url redis)" --job pz-run --schedule "$SCHED" --not-mine-exit 9 -- true
is "pause: the command: ... or --not-mine-exit" "$?" 9

# ---------------------------------------------------------------- who may pause in PostgreSQL

q -c "CREATE ROLE pz_alice LOGIN" -c "CREATE ROLE pz_bob LOGIN" > /dev/null
at_exit "psql -X -q -c 'DROP ROLE IF EXISTS pz_alice' -c 'DROP ROLE IF EXISTS pz_bob' > /dev/null 2>&1"
slot=$(( $(date +%s) * 1000 ))
as() { local who=$1; shift; PGUSER=$who psql -X -A -t -q -v ON_ERROR_STOP=1 -v VERBOSITY=verbose "$@" 2>&1; }
is "pause: roles: alice's first claim makes the job hers" "$(as pz_alice -c "SELECT anarchon_claim('pz-alice', $slot::bigint, 'a')")" won
out=$(as pz_bob -c "SELECT anarchon_pause('pz-alice')")
has "pause: roles: bob may not pause alice's job (42501)" "$out" "42501"
has "pause: roles: ... the error says whose it is and what to do" "$out" 'HINT:'
out=$(as pz_bob -c "SELECT anarchon_pause('pz-nobodys')")
has "pause: roles: bob may not pause a job nobody owns yet, which would block its first claimer (42501)" "$out" "42501"
has "pause: roles: ... the error says so" "$out" "has no owner"
is "pause: roles: ... and bob did not become its owner" "$(q -c "SELECT count(*) FROM anarchon.job_owners WHERE job = 'pz-nobodys'")" 0
is "pause: roles: alice pauses her job" "$(as pz_alice -c "SELECT anarchon_pause('pz-alice')" -c "SELECT anarchon_claim('pz-alice', $((slot + 1000))::bigint, 'a')" | sed '/^$/d')" paused
has "pause: roles: bob may not resume it (42501)" "$(as pz_bob -c "SELECT anarchon_resume('pz-alice')")" "42501"
has "pause: roles: bob may not read it (42501)" "$(as pz_bob -c "SELECT anarchon_paused('pz-alice')")" "42501"
q -c "GRANT pz_alice TO pz_bob" > /dev/null
is "pause: roles: a member of alice's role may resume it" "$(as pz_bob -c "SELECT anarchon_resume('pz-alice')")" t
is "pause: roles: a superuser may pause a job nobody owns" "$(q -c "SELECT anarchon_pause('pz-nobodys')" -c "SELECT anarchon_resume('pz-nobodys')" | sed '/^$/d')" t

# ---------------------------------------------------------------- bad input

pgerr() { q -v VERBOSITY=verbose -c "$1"; }
has "pause: pg: a NULL job (22004)" "$(pgerr "SELECT anarchon_pause(NULL)")" "22004"
has "pause: pg: an empty job (22023)" "$(pgerr "SELECT anarchon_pause('')")" "22023"
has "pause: pg: a job with a control character (22023)" "$(pgerr "SELECT anarchon_pause(E'a\\tb')")" "22023"
out=$(pgerr "SELECT anarchon_pause('pz-bad', now() - interval '1 second')")
has "pause: pg: until in the past (22023)" "$out" "22023"
has "pause: pg: ... says until must be in the future" "$out" "until must be in the future"
has "pause: pg: until 'infinity' is refused (22023)" "$(pgerr "SELECT anarchon_pause('pz-bad', 'infinity')")" "until must be a finite time"
sqlerr() { printf '.load %s\n%s;\n' "$EXT" "$1" | sqlite3 :memory: 2>&1; }
has "pause: sqlite: an empty job" "$(sqlerr "SELECT anarchon_pause('')")" "anarchon_pause: job"
has "pause: sqlite: a job that is not text" "$(sqlerr "SELECT anarchon_pause(5)")" "job must be text"
has "pause: sqlite: until in the past" "$(sqlerr "SELECT anarchon_pause('j', anarchon_now() - 1000)")" "until must be in the future"
has "pause: sqlite: until in seconds" "$(sqlerr "SELECT anarchon_pause('j', 2000000000)")" "multiply by 1000"
has "pause: sqlite: until 0 is in the past, not \"until resumed\"" "$(sqlerr "SELECT anarchon_pause('j', 0)")" "until must be in the future"
has "pause: sqlite: until as text" "$(sqlerr "SELECT anarchon_pause('j', 'tomorrow')")" "anarchon_pause: until"
for args in "--job '' " "--job j --until 1000000000000" "--job j --until 0" "--job j --until soon" ""; do
	out=$(eval "\"\$AN\" pause --store \"sqlite://$tmp/bad.db\" $args" 2>&1)
	rc=$?
	if [ "$rc" = 64 ] && [ -n "$out" ]; then ok "pause: the command refuses pause $args with 64 ($out)"
	else not_ok "pause: the command refuses pause $args with 64" "exit $rc: $out"; fi
done
out=$("$AN" resume --store "sqlite://$tmp/bad.db" --job j --until now 2>&1)
is "pause: the command: resume takes no --until (64)" "$?" 64

# ---------------------------------------------------------------- a store that cannot hold a pause

if nats_start pz; then
	NATS="nats://127.0.0.1:${NATS_PORT[pz]}"
	out=$(printf ".load %s\nSELECT anarchon_config('store', '%s');\nSELECT anarchon_pause('pz-n');\nSELECT anarchon_claim('pz-n', %s, 't');\n" \
		"$EXT" "$NATS" "$(( $(date +%s) * 1000 ))" | sqlite3 :memory: 2>&1)
	has "pause: sqlite on NATS: anarchon_pause is refused, naming the store" "$out" "the nats store cannot hold a pause"
	has "pause: sqlite on NATS: ... with a hint" "$out" "stop the instances of the job instead"
	has "pause: sqlite on NATS: claims still work there" "$out" "won"
	out=$("$AN" pause --store "$NATS" --job pz-n 2>&1)
	rc=$?
	if [ "$rc" = 78 ]; then has "pause: the command on NATS: pause refused with 78, naming the store" "$out" "the nats store cannot hold a pause"
	else not_ok "pause: the command on NATS: pause refused with 78" "exit $rc: $out"; fi
else
	not_ok "pause: start nats-server"
fi

# ---------------------------------------------------------------- the paused counter

slot=$(( $(date +%s) * 1000 ))
out=$(q -c "SELECT anarchon_pause('pz-stats')" -c "SELECT anarchon_claim('pz-stats', $slot::bigint, 't')" \
	-c "SELECT claims_paused FROM anarchon_stats() WHERE store = 'local'" -c "SELECT anarchon_resume('pz-stats')" | sed '/^$/d' | tr '\n' ' ')
if [[ $out =~ ^paused\ ([0-9]+)\ t\ $ ]] && [ "${BASH_REMATCH[1]}" -ge 1 ]; then ok "pause: pg: anarchon_stats counts paused claims ($out)"
else not_ok "pause: pg: anarchon_stats counts paused claims" "$out"; fi
out=$(printf ".load %s\n.output /dev/null\nSELECT anarchon_pause('pz-stats');\nSELECT anarchon_claim('pz-stats', %s, 't');\n.output stdout\nSELECT claims_paused FROM anarchon_stats;\n" \
	"$EXT" "$slot" | sqlite3 "$tmp/stats.db" 2>&1)
is "pause: sqlite: anarchon_stats counts the paused claim" "$out" 1
out=$("$AN" stats --store "sqlite://$tmp/stats.db" --format prometheus 2>&1)
has "pause: the command's Prometheus exposition has the paused outcome" "$out" 'outcome="paused"'

# ---------------------------------------------------------------- the command under valgrind

vg() { an_valgrind "pause valgrind" "$tmp/vg" "$@"; }
if have_valgrind "pause valgrind"; then
	for store in local redis; do
		u=$(store_url "$store")
		vg "pause $store" 0 pause --store "$u" --job pz-vg
		vg "claim $store, paused" 1 claim --store "$u" --job pz-vg --schedule "$SCHED"
		vg "run $store, paused" 0 run --store "$u" --job pz-vg --schedule "$SCHED" -- true
		vg "missed $store, across a pause" 0 missed --store "$u" --job pz-vg --schedule "$SCHED" --from "$t_before" --to "$t_to"
		vg "resume $store" 0 resume --store "$u" --job pz-vg
		vg "resume $store, not paused" 0 resume --store "$u" --job pz-vg
		vg "pause $store, until" 0 pause --store "$u" --job pz-vg --until "$(( $(date +%s%3N) + 60000 ))"
	done
fi

suite_end
