# host.sh — PostgreSQL as one more host of a network store, for the suites
# of those stores (Redis, RabbitMQ, NATS); sourced after ../lib.sh.
#
#   pg_host_start NAME DIR   install the extension and start a temporary
#                            server (server.sh, fsync off), logs under DIR.
#                            When PostgreSQL or the wrapper is missing, or a
#                            step fails, prints a "not ok - NAME: ..." line
#                            saying which and returns 1.

pg_host_start() {
	local name=$1 dir=$2
	if ! command -v pg_config > /dev/null || [ ! -f "$REPO_ROOT/pg/fdw.c" ]; then
		not_ok "$name: PostgreSQL with the anarchon wrapper is not available"
		return 1
	fi
	source "$TEST_ROOT/pg/server.sh"
	if ! pg_install > "$dir/pg-install.log" 2>&1; then
		not_ok "$name: make install" "$(tail -n 20 "$dir/pg-install.log")"
		return 1
	fi
	if ! pg_start "fsync = off" ${ANARCHON_TEST_PG_CONF:+"$ANARCHON_TEST_PG_CONF"} > "$dir/pg-start.log" 2>&1; then
		not_ok "$name: start PostgreSQL" "$(tail -n 20 "$dir/pg-start.log")"
		return 1
	fi
}
