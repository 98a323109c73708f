# fleet.sh — part 3 of the pgcron suite (sourced by run.sh): two PostgreSQL
# servers, each with pg_cron and the same job and schedule, share one Redis
# store through anarchon.store; each minute slot must run on exactly one.
# Two outside callers per server contend for the same job as well.
#
# Server A is the suite's server (PG* variables); server B is started here.
# In both, database `fleet` routes anarchon.store to a foreign server of the
# anarchon wrapper whose URL is the suite's own redis-server.  Sets fleet=1
# when the fleet is running, and defines fleet_checks for after the wait.

fleet_skip() { echo "# fleet: skipped: $*"; }

# server_env: the current server's connection variables, as a command.
server_env() {
	printf 'export PGHOST=%q PGPORT=%q PGUSER=%q PGDATABASE=%q PG_DATA=%q PG_DIR=%q PG_LOG=%q' \
		"$PGHOST" "$PGPORT" "$PGUSER" "$PGDATABASE" "$PG_DATA" "$PG_DIR" "$PG_LOG"
}
# use_server A|B: point psql (and pg_stop) at that server.
use_server() { local v=FLEET_$1; eval "${!v}"; }

fleet_setup() {
	local a_env b_env rport srv
	if ! command -v redis-server > /dev/null; then
		fleet_skip "redis-server is not installed"
		return 0
	fi
	q -c "CREATE DATABASE fleet" > /dev/null || return 1
	q -d fleet -c "CREATE EXTENSION anarchon" > /dev/null || return 1
	if [ "$(q -d fleet -c "SELECT count(*) FROM pg_foreign_data_wrapper WHERE fdwname = 'anarchon'")" != 1 ]; then
		fleet_skip "this build has no 'anarchon' foreign data wrapper for remote stores"
		return 0
	fi

	R_DIR=$tmp/redis
	mkdir -p "$R_DIR"
	source "$TEST_ROOT/redis/server.sh"
	rport=$(free_port) && redis_start fleet "$rport" > /dev/null || {
		not_ok "fleet: start redis-server"
		return 1
	}

	# Server B, with its own pg_cron; A's variables are kept and restored.
	a_env=$(server_env)
	if ! pg_start "${CRON_CONF[@]}" 2> "$tmp/start-b.log"; then
		eval "$a_env"
		not_ok "fleet: start a second PostgreSQL with pg_cron" "$(tail -n 20 "$tmp/start-b.log")"
		return 1
	fi
	B_DATA=$PG_DATA
	b_env=$(server_env)
	at_exit "pg_as_server_user '$PG_BINDIR/pg_ctl' -D '$B_DATA' -m fast -w -t 60 stop > /dev/null 2>&1"
	q -c "CREATE EXTENSION pg_cron" -c "CREATE DATABASE fleet" > /dev/null &&
		q -d fleet -c "CREATE EXTENSION anarchon" > /dev/null || return 1
	eval "$a_env"
	FLEET_A=$a_env
	FLEET_B=$b_env

	for srv in A B; do
		use_server "$srv"
		q -d fleet -v url="redis://127.0.0.1:$rport?strategy=lease" -v cmd="$CMD_SLOW" > "$tmp/fleet-$srv.setup" 2>&1 <<'EOF'
CREATE TABLE effects (job text NOT NULL, slot timestamptz NOT NULL, app text,
	at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE SERVER fleet_store FOREIGN DATA WRAPPER anarchon OPTIONS (url :'url');
CREATE USER MAPPING FOR PUBLIC SERVER fleet_store;
ALTER DATABASE fleet SET anarchon.store = 'fleet_store';
\c postgres
SELECT cron.schedule_in_database('anarchon-fleet', '* * * * *',
	format('CALL anarchon.run(%L, %L, %L)', 'fleet', '* * * * *', :'cmd'), 'fleet');
EOF
		if [ $? -ne 0 ]; then
			use_server A
			not_ok "fleet: set up server $srv" "$(tail -n 20 "$tmp/fleet-$srv.setup")"
			return 1
		fi
	done
	# Besides pg_cron, two outside callers per server.
	for srv in A B; do
		use_server "$srv"
		start_contender "fleet-$srv-1" fleet fleet
		start_contender "fleet-$srv-2" fleet fleet
	done
	use_server A
	ok "fleet: servers A and B share redis-server 127.0.0.1:$rport as anarchon.store"
	fleet=1
}

# All run_log rows of the fleet job from both servers, as "server|slot|outcome|status|app".
fleet_log() {
	local srv
	for srv in A B; do
		use_server "$srv"
		q -d fleet -F'|' -c "SELECT '$srv', slot, outcome, coalesce(status, ''), application_name
			FROM anarchon.run_log WHERE job = 'fleet'"
	done
	use_server A
}

fleet_effects() {
	local srv
	for srv in A B; do
		use_server "$srv"
		q -d fleet -F'|' -c "SELECT '$srv', slot FROM effects WHERE job = 'fleet'"
	done
	use_server A
}

fleet_checks() {
	local log eff bad slots both
	log=$(fleet_log)
	eff=$(fleet_effects)
	printf '%s\n' "$log" | awk -F'|' 'NF {print "# fleet log: server " $1 ", " ($5 == "pg_cron" ? "pg_cron" : "outside caller") ", " $3 " " $4}' | sort | uniq -c | sed 's/^ *\([0-9]*\) # /# \1 x /'
	slots=$(printf '%s\n' "$log" | awk -F'|' 'NF {print $2}' | sort -u | wc -l)
	check "fleet: at least $ROUNDS minute slots were claimed ($slots)" test "$slots" -ge "$ROUNDS"
	bad=$(printf '%s\n' "$log" | awk -F'|' 'NF {n[$2]++; if ($3 == "won") w[$2]++}
		END {for (s in n) if (w[s] != 1) print s ": " w[s] + 0 " winners"}')
	check "fleet: exactly one winner per slot across both servers" test -z "$bad"
	[ -n "$bad" ] && printf '#   %s\n' "$bad"
	bad=$(printf '%s\n%s\n' "$eff" "$(printf '%s\n' "$log" | awk -F'|' '$3 == "won" {print "W|" $2}')" |
		awk -F'|' 'NF {if ($1 == "W") w[$2]++; else e[$2]++}
		END {for (s in w) if (e[s] != 1) print s ": " e[s] + 0 " effects"; for (s in e) if (!(s in w)) print s ": effect without a winner"}')
	check "fleet: each slot's command ran on exactly one server" test -z "$bad"
	[ -n "$bad" ] && printf '#   %s\n' "$bad"
	both=$(printf '%s\n' "$log" | awk -F'|' 'NF && $5 == "pg_cron" {s[$2 "|" $1] = 1} END {for (k in s) {split(k, a, "|"); c[a[1]]++}; n = 0; for (x in c) if (c[x] == 2) n++; print n}')
	check "fleet: both servers' pg_cron called in the same slots ($both slots)" test "$both" -ge $((ROUNDS - 1))
}

fleet_setup || not_ok "fleet: set-up"
