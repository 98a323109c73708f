# pausetrim.sh — a job's pauses are a history that nothing prunes on Redis:
# each pause and resume trims the pauses that ended more than keep_ms ago
# (max_late_ms + lease_ms * attempts, or the longer one the job's lease memory
# recorded), and keeps the ones a claim or anarchon_missed can still ask about.
# (sourced by test/redis/run.sh)

PT_CLI=$REPO_ROOT/cli/anarchon
pt_redis() { redis-cli -p "$PORT" "$@" | tr -d '\r'; }
pt_key='pt:{trim}:pauses'
pt_url="$URL?strategy=lease&prefix=pt"
pt_now=$(now_ms)
# An hour-old pause and one that ended 10 s ago, as a store before trimming
# wrote them (same key, same members); the default settings keep 90 s.
pt_old="$((pt_now - 3600000)):$((pt_now - 3599000))"
pt_recent="$((pt_now - 20000)):$((pt_now - 10000))"
pt_redis ZADD "$pt_key" $((pt_now - 3600000)) "$pt_old" $((pt_now - 20000)) "$pt_recent" > /dev/null
pt_out=$("$PT_CLI" pause --store "$pt_url" --job trim 2>&1; "$PT_CLI" resume --store "$pt_url" --job trim 2>&1)
pt_members=$(pt_redis ZRANGE "$pt_key" 0 -1)
if [ "$(printf '%s\n' "$pt_out" | head -n 1)" != paused ]; then
	not_ok "redis pauses: pause and resume through the command" "$pt_out"
elif printf '%s\n' "$pt_members" | grep -qx "$pt_old"; then
	not_ok "redis pauses: a pause that ended longer than keep_ms ago is trimmed" "members: $pt_members"
else
	ok "redis pauses: a pause that ended longer than keep_ms ago is trimmed"
fi
if printf '%s\n' "$pt_members" | grep -qx "$pt_recent" && [ "$(printf '%s\n' "$pt_members" | wc -l)" = 2 ]; then
	ok "redis pauses: a recent ended pause and the new one are kept"
else
	not_ok "redis pauses: a recent ended pause and the new one are kept" "members: $pt_members"
fi

# A longer keep_ms recorded in the job's lease memory (another host's claim)
# is honoured: a pause that ended 10 min ago stays while that host may ask.
pt_mid="$((pt_now - 700000)):$((pt_now - 600000))"
pt_redis ZADD "$pt_key" $((pt_now - 700000)) "$pt_mid" > /dev/null
pt_redis HSET 'pt:{trim}:memory' keep_ms 3600000 > /dev/null
"$PT_CLI" pause --store "$pt_url" --job trim > /dev/null 2>&1
if pt_redis ZRANGE "$pt_key" 0 -1 | grep -qx "$pt_mid"; then
	ok "redis pauses: the job's recorded keep_ms keeps older pauses"
else
	not_ok "redis pauses: the job's recorded keep_ms keeps older pauses" "members: $(pt_redis ZRANGE "$pt_key" 0 -1)"
fi
"$PT_CLI" resume --store "$pt_url" --job trim > /dev/null 2>&1
