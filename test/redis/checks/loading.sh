# loading.sh — a Redis still loading its data set answers -LOADING: the
# command exits 75 (try again), says so in one line, and runs nothing.
# (sourced by test/redis/run.sh)
#
# A server of its own: 100000 keys (DEBUG POPULATE, about 10 MB) written to
# its AOF (BGREWRITEAOF), then restarted on that AOF with key-load-delay, the
# server's own setting to slow loading down (50 us a key: about 5 s), and
# loading-process-events-interval-bytes small, so that it answers clients
# while it loads.  Disk use stays in the suite's temporary directory (the
# server's folder is removed after), and the time is a few seconds, not the
# minutes of an AOF of hundreds of MB.

LD_PORT=$(free_port)
ld_cli() { redis-cli -p "$LD_PORT" "$@" | tr -d '\r'; }
# ld_info_field NAME: a field of INFO persistence ("" when the server does not answer).
ld_info_field() { ld_cli INFO persistence 2> /dev/null | sed -n "s/^$1://p"; }
CLI=$REPO_ROOT/cli/anarchon

ld_fail() { not_ok "redis loading: anarchon run exits 75 while Redis loads its AOF" "$@"; }

if ! redis_start loading "$LD_PORT" --enable-debug-command local; then
	ld_fail "the first redis-server did not start"
elif ! pop=$(ld_cli DEBUG POPULATE 100000 anarchon-load 64 2>&1) || [ "$pop" != OK ] ||
	! ld_cli BGREWRITEAOF > /dev/null; then
	ld_fail "DEBUG POPULATE or BGREWRITEAOF failed: $pop"
else
	# The rewrite is done when INFO says so (at most 20 s).
	for _ in $(seq 1 400); do
		[ "$(ld_info_field aof_rewrite_in_progress)" = 0 ] && [ "$(ld_info_field aof_rewrite_scheduled)" = 0 ] && break
		sleep 0.05
	done
	redis_stop loading
	if ! REDIS_OPEN_ONLY=1 redis_start loading "$LD_PORT" --key-load-delay 50 --loading-process-events-interval-bytes 1024; then
		ld_fail "redis-server did not start again on its AOF"
	else
		# Loading must be under way before the command runs (at most 10 s to see it).
		for _ in $(seq 1 200); do [ "$(ld_info_field loading)" = 1 ] && break; sleep 0.05; done
		before=$(ld_info_field loading)
		mark=$tmp/loading-ran
		"$CLI" run --store "redis://127.0.0.1:$LD_PORT?strategy=lease&prefix=ld" --job load \
			--slot "$(now_slot)" -- touch "$mark" > "$tmp/loading.out" 2> "$tmp/loading.err"
		rc=$?
		after=$(ld_info_field loading)
		if [ "$before" != 1 ] || [ "$after" != 1 ]; then
			ld_fail "the loading window was not hit: INFO persistence loading was '$before' before the command and '$after' after it" \
				"exit $rc: $(head -c 300 "$tmp/loading.err")"
		elif [ "$rc" = 75 ] && grep -q '^anarchon: .*LOADING' "$tmp/loading.err" &&
			[ "$(wc -l < "$tmp/loading.err")" = 1 ] && [ ! -e "$mark" ] && [ ! -s "$tmp/loading.out" ]; then
			ok "redis loading: anarchon run exits 75 while Redis loads its AOF, one line naming LOADING, nothing run"
			step "$(cat "$tmp/loading.err")"
		else
			ld_fail "exit $rc, want 75; stderr: $(head -c 400 "$tmp/loading.err")" \
				"command ran: $([ -e "$mark" ] && echo yes || echo no)"
		fi
	fi
fi
redis_stop loading
rm -rf "${R_DIR:?}/loading"
