# newcomer.sh — what a newcomer met on the stores with servers:
#
#   stats          `anarchon stats` on a PostgreSQL whose library is not in
#                  shared_preload_libraries: the header as before, exit 0,
#                  and one line on stderr saying that the counters are per
#                  backend and how to get the server's
#   refused        on the won/lost stores (NATS, RabbitMQ, Redis stream-id):
#                  --catch-up latest and all (run and due), --now,
#                  --overlap replace and pause are refused up front with
#                  exit 78 and one line naming the store; the command does
#                  not run and the slot is not claimed
#   json           run --log-format json on SQLite: one JSON object per slot
#                  claimed on stderr (job, slot, outcome, attempt, exit,
#                  duration), for a won slot, a lost one and a failed command
#
#   cli_newcomer PG_URL NATS_URL AMQP_URL REDIS_URL
#                  (an empty URL: that store did not start, a failure)
cli_newcomer() {
	local pg=$1 nats=$2 amqp=$3 redis=$4 d=$CLI_TMP/newcomer
	rm -rf "$d" && mkdir -p "$d"

	# stats without preloading: the cli suite's PostgreSQL does not preload.
	if [ -z "$pg" ]; then
		not_ok "cli newcomer: stats on PostgreSQL without preloading" "PostgreSQL did not start"
	else
		an_call "$d/stats.out" "$d/stats.err" stats --store "$pg"
		if [ "$RC" -eq 0 ] && head -n 1 "$d/stats.out" | grep -q '^store' && one_error_line "$d/stats.err" &&
			grep -q "shared_preload_libraries = 'anarchon'" "$d/stats.err" &&
			grep -q 'restart' "$d/stats.err" && grep -q 'backend' "$d/stats.err"; then
			ok "cli newcomer: stats on PostgreSQL without preloading: exit 0, the header, one line saying what is missing"
		else
			not_ok "cli newcomer: stats on PostgreSQL without preloading: exit 0, the header, one line saying what is missing" \
				"exit $RC" "stdout: $(head -c 300 "$d/stats.out")" "stderr: $(cat "$d/stats.err")"
		fi
	fi

	# The won/lost stores: what they cannot honour is refused before a claim.
	local s url name i
	local -a cases=(
		"catch-up-latest|run --schedule '* * * * *' --catch-up latest|catch-up"
		"catch-up-all|run --schedule '* * * * *' --catch-up all|catch-up"
		"due-latest|due --schedule '* * * * *' --catch-up latest|catch-up"
		"now|run --now|now"
		"replace|run --schedule '* * * * *' --overlap replace|replace"
		"pause|pause|pause"
	)
	for s in nats rabbitmq redis-stream-id; do
		case $s in
			nats) url=$nats ;;
			rabbitmq) url=$amqp ;;
			redis-stream-id) url=${redis:+$redis?strategy=stream-id&prefix=cli-newcomer} ;;
		esac
		if [ -z "$url" ]; then
			not_ok "cli newcomer: $s refuses what it cannot honour" "$s did not start"
			continue
		fi
		local c label args word bad="" job minute
		for c in "${cases[@]}"; do
			IFS='|' read -r label args word <<< "$c"
			# Redis holds a pause whatever the strategy: only the others refuse it.
			[ "$s" = redis-stream-id ] && [ "$label" = pause ] && continue
			job=nc-$label
			rm -f "$d/ran"
			minute=$(( $(date +%s) / 60 * 60000 ))
			eval "set -- $args"
			if [ "$1" = run ]; then
				an_call "$d/$s.$label.out" "$d/$s.$label.err" "$@" --store "$url" --job "$job" -- touch "$d/ran"
			else
				an_call "$d/$s.$label.out" "$d/$s.$label.err" "$@" --store "$url" --job "$job"
			fi
			name=$s
			[ "$s" = rabbitmq ] && name=amqp
			[ "$s" = redis-stream-id ] && name=stream-id
			if [ "$RC" -ne 78 ] || [ -e "$d/ran" ] || [ -s "$d/$s.$label.out" ] ||
				! one_error_line "$d/$s.$label.err" || ! grep -qi -- "$name" "$d/$s.$label.err" ||
				! grep -qi -- "$word" "$d/$s.$label.err"; then
				bad+="$label: exit $RC$([ -e "$d/ran" ] && echo ', the command ran'); stdout: $(head -c 200 "$d/$s.$label.out"); stderr: $(head -c 400 "$d/$s.$label.err"). "
				continue
			fi
			# Nothing was claimed: the slot this call would have claimed (this
			# minute's, or the next one's if the minute turned) holds no run.
			if [ "$label" != pause ] && [ "$label" != now ]; then
				for i in 0 60000; do
					an_call "$d/check.out" "$d/check.err" check --store "$url" --job "$job" --slot $(( minute + i ))
					[ "$RC" -eq 0 ] && [ "$(cut -f1 "$d/check.out")" = none ] ||
						bad+="$label: after the refusal, check of $(( minute + i )): exit $RC, $(cat "$d/check.out" "$d/check.err"). "
				done
			fi
		done
		if [ -z "$bad" ]; then
			ok "cli newcomer: $s refuses catch-up (run, due), --now, replace and pause: exit 78 naming the store, nothing claimed"
		else
			not_ok "cli newcomer: $s refuses catch-up (run, due), --now, replace and pause: exit 78 naming the store, nothing claimed" "$bad"
		fi
	done

	# --log-format json: one object per slot claimed, on stderr.  The slot is
	# this second (a slot ahead would be waited for, a day-old one late), the
	# third run's the second before it.
	local db="sqlite://$d/json.db" slot line
	slot=$(( $(date +%s) * 1000 ))
	an_call "$d/json1.out" "$d/json1.err" run --store "$db" --job js --slot "$slot" --log-format json -- sh -c 'echo out'
	line=$(cat "$d/json1.err")
	if [ "$RC" -eq 0 ] && [ "$(cat "$d/json1.out")" = out ] && [ "$(wc -l < "$d/json1.err")" -eq 1 ] &&
		printf '%s' "$line" | python3 -c '
import json, sys, datetime
slot = int(sys.argv[1])
o = json.loads(sys.stdin.read())
when = datetime.datetime.fromtimestamp(slot // 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
assert o["job"] == "js" and o["slot"] == when and o["slot_ms"] == slot, o
assert o["outcome"] == "won" and o["attempt"] == 1 and o["exit"] == 0, o
assert isinstance(o["duration_ms"], int) and o["duration_ms"] >= 0, o
' "$slot" 2> "$d/json1.py"; then
		ok "cli newcomer: --log-format json: a won slot is one object on stderr (job, slot, outcome, attempt, exit, duration)"
	else
		not_ok "cli newcomer: --log-format json: a won slot is one object on stderr (job, slot, outcome, attempt, exit, duration)" \
			"exit $RC" "stdout: $(cat "$d/json1.out")" "stderr: $line" "$(cat "$d/json1.py" 2> /dev/null)"
	fi
	an_call "$d/json2.out" "$d/json2.err" run --store "$db" --job js --slot "$slot" --log-format json -- sh -c 'echo out'
	an_call "$d/json3.out" "$d/json3.err" run --store "$db" --job js --slot $(( slot - 1000 )) --log-format json -- sh -c 'exit 3'
	if [ "$RC" -eq 3 ] && [ ! -s "$d/json2.out" ] && [ "$(wc -l < "$d/json2.err")" -eq 1 ] &&
		[ "$(wc -l < "$d/json3.err")" -eq 1 ] &&
		python3 -c '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a["outcome"] == "done" and a["exit"] == 0 and a["attempt"] is None, a
assert b["outcome"] == "won" and b["exit"] == 3 and b["attempt"] == 1 and b["slot_ms"] == int(sys.argv[3]) - 1000, b
' "$d/json2.err" "$d/json3.err" "$slot" 2> "$d/json2.py"; then
		ok "cli newcomer: --log-format json: a slot done elsewhere and a command that exits 3, one object each"
	else
		not_ok "cli newcomer: --log-format json: a slot done elsewhere and a command that exits 3, one object each" \
			"exit $RC" "$(cat "$d/json2.err" "$d/json3.err")" "$(cat "$d/json2.py" 2> /dev/null)"
	fi
}
