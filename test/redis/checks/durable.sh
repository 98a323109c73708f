# durable.sh — a Redis that would forget acknowledged claims when it crashes
# is refused at connect, unless the URL accepts the risk; one that will not
# say (CONFIG renamed away, as managed services do) is used.
# (sourced by test/redis/run.sh, after pg.sh: through the store interface,
# SQLite and, when pg.sh started it, PostgreSQL)

# durable_server NAME OPTIONS...: one more redis-server; its URL in DURL, and
# in PostgreSQL (when running) a foreign server d_NAME for it.
durable_server() {
	local name=$1 port
	shift
	port=$(free_port)
	if ! redis_start "$name" "$port" "$@"; then
		not_ok "redis durability: start redis-server $*"
		return 1
	fi
	DURL="redis://127.0.0.1:$port"
	DSERVER=d_${name//-/_}
	[ -z "${PGPORT:-}" ] || psql -X -q -c "CREATE SERVER $DSERVER FOREIGN DATA WRAPPER anarchon OPTIONS (url '$DURL')" > /dev/null 2>&1
}

# refused NAME URL REGEX: a claim through rdrive, then through SQLite (which
# shows the hint), then through PostgreSQL (foreign server DSERVER: message
# and HINT), fails matching REGEX.
refused() {
	local name=$1 url=$2 re=$3 S out
	S=$(now_slot)
	out=$(echo "claim dur $S t1" | "$RDRIVE" "$url" 2>&1)
	if printf '%s' "$out" | grep -Eq "^error CONFIG: .*$re"; then ok "$name"
	else not_ok "$name" "expected to match: $re" "got: $out"; fi
	out=$(printf '.load %s\nSELECT anarchon_config(%s);\nSELECT anarchon_claim(%s, %s, %s);\n' \
		"$REPO_ROOT/sqlite/anarchon" "'store', '$url'" "'dur'" "$S" "'t1'" | sqlite3 -batch :memory: 2>&1)
	if printf '%s' "$out" | grep -Eq "$re.*durability=accept-loss"; then ok "$name (SQLite, with the hint)"
	else not_ok "$name (SQLite, with the hint)" "got: $out"; fi
	[ -n "${PGPORT:-}" ] || return 0
	out=$(PGOPTIONS="-c anarchon.store=$DSERVER" psql -X -A -t -q -c "SELECT anarchon_claim('dur', ${S}::bigint, 't1')" 2>&1)
	if printf '%s' "$out" | grep -Eq "^ERROR: .*$re" && printf '%s' "$out" | grep -q '^HINT: .*durability=accept-loss'; then
		ok "$name (PostgreSQL, with a HINT)"
	else not_ok "$name (PostgreSQL, with a HINT)" "got: $out"; fi
}

# accepted NAME URL: a claim of a new slot is won.
accepted() {
	local out
	out=$(echo "claim dur $(now_slot) t1" | "$RDRIVE" "$2" 2>&1)
	if [ "$out" = "won 1" ]; then ok "$1"; else not_ok "$1" "got: $out"; fi
}

if durable_server aof-off --appendonly no; then
	refused "redis durability: appendonly no is refused, naming appendonly" "$DURL" 'appendonly no: a crash or restart of Redis forgets every claim'
	accepted "redis durability: ... accepted with durability=accept-loss" "$DURL?durability=accept-loss"
	out=$(echo "claim dur $(now_slot) t1" | "$RDRIVE" "$DURL?durability=maybe" 2>&1)
	if printf '%s' "$out" | grep -q 'durability must be crash-safe (the default) or accept-loss'; then ok "redis durability: another durability value is refused, naming both"
	else not_ok "redis durability: another durability value is refused, naming both" "$out"; fi
fi
if durable_server fsync-no --appendonly yes --appendfsync no; then
	refused "redis durability: appendfsync no is refused, naming appendfsync" "$DURL" 'appendfsync no: the operating system decides'
	accepted "redis durability: ... accepted with durability=accept-loss" "$DURL?durability=accept-loss"
fi
if durable_server fsync-always --appendonly yes --appendfsync always; then
	accepted "redis durability: appendfsync always is accepted" "$DURL"
fi
# (appendonly yes with appendfsync everysec is the main server of the suite.)
if durable_server no-config --appendonly yes --rename-command CONFIG ''; then
	accepted "redis durability: a server that does not answer CONFIG (renamed away) is used" "$DURL"
fi
if durable_server no-config-aof-off --appendonly no --rename-command CONFIG ''; then
	refused "redis durability: ... but one whose INFO says aof_enabled:0 is refused" "$DURL" 'appendonly no'
fi
