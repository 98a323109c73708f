#!/usr/bin/env bash
# run.sh — every example of README.md and doc/*.md, run as written.
#
# Each fenced block carries a marker (<!-- example: KIND -->) on the line
# before it; test/docs/examples.py reads the markers and runs each block the
# way its kind says (see its header).  This script starts what the examples
# need and stops it at exit: a PostgreSQL server with the extension installed
# and pg_cron preloaded, and a NATS server for the blocks whose store address
# stands for one (marker option nats=HOST:PORT).
#
# doc/examples/app_loop.py and app_loop.sql are not run here: test/schedule
# and test/pgcron run them with several processes and count the winners.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$TEST_ROOT/pg/server.sh"
source "$TEST_ROOT/nats/server.sh"
cd "$REPO_ROOT" || exit 1
here=test/docs
tmp=$(t_tmpdir)
chmod 777 "$tmp"

# The test scripts themselves (no server needed): every sleep left in them
# says why, or is a poll's step (test/sleeps.sh); a wait for a condition is
# a poll with a deadline (wait_for), never a bare sleep.
check "docs: every sleep in test/**/*.sh has a comment saying why, or is a poll's step (bash test/sleeps.sh)" \
	bash test/sleeps.sh --check

if [ ! -x /usr/bin/python3 ] || [ ! -f sqlite/anarchon.so ]; then
	not_ok "docs: needs /usr/bin/python3 and sqlite/anarchon.so (make sqlite)"
	suite_end
	exit
fi

if ! pg_install > "$tmp/install.log" 2>&1; then
	not_ok "docs: install the extension" "$(tail -n 20 "$tmp/install.log")"
	suite_end
	exit
fi
# Durability is not what these examples show: without fsync the many small
# databases the examples get are made quickly.
if ! pg_start "shared_preload_libraries = 'pg_cron'" "cron.database_name = 'postgres'" \
	"cron.host = '127.0.0.1'" "cron.log_min_messages = warning" \
	"fsync = off" "synchronous_commit = off" "full_page_writes = off" 2> "$tmp/start.log"; then
	not_ok "docs: start PostgreSQL with pg_cron" "$(tail -n 20 "$tmp/start.log")"
	suite_end
	exit
fi
if ! psql -XAtq -v ON_ERROR_STOP=1 -f "$here/setup.sql" > "$tmp/setup.log" 2>&1; then
	not_ok "docs: the roles and database the examples take as given" "$(cat "$tmp/setup.log")"
	suite_end
	exit
fi

if grep -qE '<!-- *example:.* nats=' README.md doc/*.md; then
	if nats_start docs 2> "$tmp/nats.log"; then
		export DOCS_NATS=127.0.0.1:${NATS_PORT[docs]}
	else
		not_ok "docs: start nats-server" "$(cat "$tmp/nats.log")"
	fi
fi

DOCS_TMP=$tmp /usr/bin/python3 "$here/examples.py" || not_ok "docs: examples.py ended with status $?"
suite_end
