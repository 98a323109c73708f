# untrusted_schema.sh — a database file is data, and may come from anyone: a
# view or trigger in it must not be able to claim, finish, fence, prune, read
# or change the connection's settings, reset the counters, list the process's
# store URLs, or send a question to the store.  Every such function and table
# of the extension is SQLITE_DIRECTONLY, so SQLite refuses it from a schema,
# whether PRAGMA trusted_schema is on or off.  The pure functions (slots,
# zones, tokens, the clock) stay usable there.
# Sourced by test/sqlite/run.sh (uses $tmp and test/lib.sh).

untrusted_schema() {
	local dir=$tmp/untrusted db out trusted bad=() what
	mkdir -p "$dir"
	db=$dir/hostile.db
	local -a effects=(
		"anarchon_claim('j', 4102444800000, 'a')"
		"anarchon_heartbeat('j', 4102444800000, 'a')"
		"anarchon_finish('j', 4102444800000, 'a')"
		"anarchon_finish('j', 4102444800000, 'a', 'failed')"
		"anarchon_fence('j', 4102444800000, 'a')"
		"anarchon_check('j', 4102444800000)"
		"anarchon_config('store')"
		"anarchon_config('store', 'redis://127.0.0.1:1')"
		"anarchon_prune()"
		"anarchon_prune(100000000)"
		"anarchon_stats_reset()"
		"anarchon_loaded(1)"
		"anarchon_claim_many('[\"j\"]', 4102444800000, 'a')"
	)
	local -a tables=(
		"anarchon_missed('j', '* * * * *', 1000000000000, 1000000060000)"
		"anarchon_stats"
		"anarchon_claim_many('[\"j\"]', 4102444800000, 'a')"
	)
	local -a pure=(
		"anarchon_slot('0 3 * * *', 1000000000000)"
		"anarchon_token()"
		"anarchon_now()"
	)
	rm -f "$db"
	{
		echo "CREATE TABLE t(x);"
		local i=0
		for what in "${effects[@]}"; do
			echo "CREATE VIEW v$i AS SELECT $what AS r;"
			echo "CREATE TRIGGER tr$i AFTER INSERT ON t WHEN new.x = $i BEGIN SELECT $what; END;"
			i=$((i + 1))
		done
		for what in "${tables[@]}"; do echo "CREATE VIEW v$i AS SELECT * FROM $what;"; i=$((i + 1)); done
		local j=0
		for what in "${pure[@]}"; do echo "CREATE VIEW p$j AS SELECT $what IS NOT NULL AS r;"; j=$((j + 1)); done
	} | sqlite3 "$db" || { not_ok "sqlite untrusted schema: the hostile database is made"; return; }

	for trusted in ON OFF; do
		bad=()
		local n=$(( ${#effects[@]} + ${#tables[@]} )) k
		for k in $(seq 0 $((n - 1))); do
			out=$(printf '%s\n' ".load ./sqlite/anarchon" "PRAGMA trusted_schema = $trusted;" "SELECT * FROM v$k;" |
				sqlite3 "$db" 2>&1)
			[[ $out == *"unsafe use of"* ]] || bad+=("view v$k answered: $out")
		done
		for k in $(seq 0 $((${#effects[@]} - 1))); do
			out=$(printf '%s\n' ".load ./sqlite/anarchon" "PRAGMA trusted_schema = $trusted;" "INSERT INTO t VALUES ($k);" |
				sqlite3 "$db" 2>&1)
			[[ $out == *"unsafe use of"* ]] || bad+=("trigger $k answered: $out")
		done
		# With trusted_schema off only INNOCUOUS functions run from a schema:
		# the schedule's; a token and the clock are for the caller's own SQL.
		local npure=${#pure[@]}
		[ "$trusted" = OFF ] && npure=1
		for k in $(seq 0 $((npure - 1))); do
			out=$(printf '%s\n' ".load ./sqlite/anarchon" "PRAGMA trusted_schema = $trusted;" "SELECT * FROM p$k;" |
				sqlite3 "$db" 2>&1)
			[ "$out" = 1 ] || bad+=("pure view p$k answered: $out")
		done
		# Nothing was written: no runs table, no row in t.
		out=$(sqlite3 "$db" "SELECT count(*) FROM sqlite_schema WHERE name = 'anarchon_runs'; SELECT count(*) FROM t;" 2>&1)
		[ "$out" = $'0\n0' ] || bad+=("the database changed: $out")
		if [ ${#bad[@]} -eq 0 ]; then
			ok "sqlite untrusted schema (trusted_schema $trusted): ${#effects[@]} functions and ${#tables[@]} tables refused from views and triggers, $npure pure ones usable"
		else
			not_ok "sqlite untrusted schema (trusted_schema $trusted)" "${bad[@]}"
		fi
	done
}
untrusted_schema
