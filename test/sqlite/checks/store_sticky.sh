# store_sticky.sh — once a connection was asked for a store, it never decides
# a claim anywhere else.  Before the fix a failed anarchon_config('store', …)
# (a scheme the build lacks, a store down at start-up, a wrong password)
# left the connection on `local`, and the next claim answered `won` from the
# local file: every host of a fleet won every slot.  Now the URL is the
# connection's store whatever happened at set time: every call fails until
# the store answers (then it is used without being set again), and every
# failure counts in anarchon_stats.
# Sourced by test/sqlite/run.sh (uses $tmp and test/lib.sh).

# sticky_sql DB SQL...: the answers of one sqlite3 process, errors as lines.
sticky_sql() {
	local db=$1
	shift
	printf '%s\n' ".load ./sqlite/anarchon" "$@" | sqlite3 "$db" 2>&1 | sqlite_cli_norm |
		sed -E 's/^Error( near line [0-9]+)?: //'
}

# sticky_expect NAME OUT PATTERN...: ok when OUT has one line per PATTERN, in
# order, each matching its (extended) regular expression, and no other line.
sticky_expect() {
	local name=$1 out=$2 i=0 line pat
	shift 2
	local -a lines
	mapfile -t lines <<< "$out"
	if [ "${#lines[@]}" -ne $# ]; then
		not_ok "$name" "expected $# lines, got ${#lines[@]}:" "$out"
		return
	fi
	for pat in "$@"; do
		line=${lines[$i]}
		if ! [[ $line =~ $pat ]]; then
			not_ok "$name" "line $((i + 1)): '$line' does not match '$pat'" "$out"
			return
		fi
		i=$((i + 1))
	done
	ok "$name"
}

store_sticky() {
	local dir=$tmp/sticky db port out slot
	mkdir -p "$dir"
	db=$dir/db
	slot=$(( $(date +%s) * 1000 ))
	R_DIR=$dir
	source test/redis/server.sh

	# A scheme this build does not know.
	out=$(sticky_sql "$db" "SELECT anarchon_config('store', 'nosuch://127.0.0.1:1');" \
		"SELECT anarchon_claim('sticky', $slot, 'a');" \
		"SELECT anarchon_config('store');" \
		"SELECT anarchon_claim('sticky', $slot, 'b');" \
		"SELECT anarchon_check('sticky', $slot);")
	sticky_expect "sqlite store: an unknown scheme at set time leaves no local fallback" "$out" \
		"^anarchon_config: unknown store.*The store stays set to this URL" \
		"^anarchon_claim: unknown store" \
		"^nosuch://127\.0\.0\.1:1$" \
		"^anarchon_claim: unknown store" \
		"^anarchon_check: unknown store"

	# A store that is down at set time: errors, then (no new set) it answers.
	port=$(free_port)
	sticky_sql "$db" "SELECT anarchon_config('store', 'redis://127.0.0.1:$port?strategy=lease');" \
		"SELECT anarchon_claim('sticky', $slot, 'a');" \
		"SELECT anarchon_heartbeat('sticky', $slot, 'a');" \
		"SELECT anarchon_finish('sticky', $slot, 'a');" \
		".shell touch '$dir/asked'" \
		".shell i=0; while [ ! -e '$dir/go' ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done" \
		"SELECT anarchon_claim('sticky', $slot, 'a');" \
		"SELECT anarchon_claim('sticky', $slot, 'b');" \
		"SELECT anarchon_config('store');" \
		"SELECT store, errors_connection, claims_won, claims_running FROM anarchon_stats() WHERE kind = 'redis';" \
		> "$dir/down-up.out" &
	local pid=$!
	for _ in $(seq 1 300); do [ -e "$dir/asked" ] && break; sleep 0.05; done
	redis_start up "$port" || not_ok "sqlite store: redis-server for the down-then-up store started"
	touch "$dir/go"
	wait "$pid"
	sticky_expect "sqlite store: a store down at set time fails each call, then is used once it answers" \
		"$(cat "$dir/down-up.out")" \
		"^anarchon_config: .*127\.0\.0\.1:$port.*The store stays set to this URL" \
		"^anarchon_claim: .*127\.0\.0\.1:$port" \
		"^anarchon_heartbeat: .*127\.0\.0\.1:$port" \
		"^anarchon_finish: .*127\.0\.0\.1:$port" \
		"^won$" \
		"^running$" \
		"^redis://127\.0\.0\.1:$port\?strategy=lease$" \
		"^redis://127\.0\.0\.1:$port\?strategy=lease\|4\|1\|1$"
	redis_stop up

	# A wrong password at set time.
	port=$(free_port)
	if ! redis_start auth "$port" --requirepass right-pass; then
		not_ok "sqlite store: redis-server with a password started"
		return
	fi
	out=$(sticky_sql "$db" "SELECT anarchon_config('store', 'redis://default:wrong-pass@127.0.0.1:$port?strategy=lease');" \
		"SELECT anarchon_claim('sticky', $slot, 'a');" \
		"SELECT anarchon_config('store');" \
		"SELECT store, errors_configuration > 0, claims_won FROM anarchon_stats() WHERE kind = 'redis';" \
		"SELECT anarchon_config('store', 'redis://default:right-pass@127.0.0.1:$port?strategy=lease');" \
		"SELECT anarchon_claim('sticky', $slot, 'a');")
	sticky_expect "sqlite store: a wrong password at set time leaves no local fallback, and counts" "$out" \
		"^anarchon_config: .*(WRONGPASS|password).*The store stays set" \
		"^anarchon_claim: .*(WRONGPASS|password)" \
		"^redis://default:\*\*\*@127\.0\.0\.1:$port\?strategy=lease$" \
		"^redis://default:\*\*\*@127\.0\.0\.1:$port\?strategy=lease\|1\|0$" \
		"^redis://default:\*\*\*@127\.0\.0\.1:$port\?strategy=lease$" \
		"^won$"
	redis_stop auth
}
store_sticky
