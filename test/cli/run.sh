#!/usr/bin/env bash
# The cli suite: the `anarchon` command (cli/) against every store, as the
# hosts of a fleet would run it from their crontabs.
#
#   contention.sh  8 hosts x 60 one-second slots on SQLite, PostgreSQL, Redis
#                  (lease, stream-id, script), NATS and RabbitMQ, in two
#                  waves of stores run at once: each slot run exactly once
#                  per store
#   cron.sh        three busybox crond daemons (Debian's busybox-static,
#                  fetched once into a cache) with the same crontab line, on a
#                  SQLite file and on Redis: one run per minute slot
#   takeover.sh    the winner SIGKILLed mid-command (its command gets SIGTERM,
#                  a backup takes over as attempt 2), and SIGSTOPped past its
#                  lease (on SIGCONT its command gets SIGTERM and its finish
#                  is refused as fenced); SQLite, Redis lease, PostgreSQL
#   exits.sh       exit statuses, signals forwarded, the command's
#                  environment, the verbs' outputs, `slots` across daylight
#                  saving against Python's zoneinfo (slots_oracle.py)
#   tree.sh        the command's whole process tree (grandchildren ignoring
#                  SIGTERM) gone after a lost lease, a replace, anarchon's
#                  SIGKILL and a ^C typed on a pty (counted once)
#   overlap.sh     a host cut off from its store, or the store frozen: the
#                  stopped command's end and the new owner's start, 0 ms of
#                  overlap on SQLite, PostgreSQL and Redis lease
#   badinput.sh    bad usage: one line, exit 64, nothing claimed
#   valgrind.sh    run, claim, check and slots under valgrind
#   store_file.sh  a sqlite: store's file: its mode (0600, or mode=), and the
#                  symbolic links refused (another user's, in a directory
#                  others can write) and followed
#   first_use.sh   what a newcomer meets first, on SQLite: --slot now run
#                  once, the wait for a future slot said, a store file it
#                  cannot write (77), a command that cannot start giving its
#                  slot back, durations in words, hints in flags, and
#                  --help, the options taken and the man page alike
#   libs.sh        a run maps only the client library its URL needs (none
#                  for SQLite and NATS, hiredis alone for Redis, ...)
#   newcomer.sh    stats on a PostgreSQL without preloading says so; the
#                  won/lost stores (NATS, RabbitMQ, Redis stream-id) refuse
#                  catch-up, --now, replace and pause up front (78);
#                  run --log-format json, one object per slot
#
# The contention and cron blocks wait on the clock (two minutes, and two
# minute boundaries), so they run in the background while the others run; the
# whole suite takes about three minutes.  CLI_BLOCKS chooses blocks (default:
# all of contention cron takeover exits tree overlap badinput valgrind
# storefile firstuse newcomer libs), CLI_SLOTS the contention's slots per store (default
# 60).  storefile and firstuse need no server: chosen alone, none is started.
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
source test/redis/server.sh
source test/nats/server.sh
source test/amqp/server.sh
source test/pg/host.sh
here=test/cli
source "$here/common.sh"
source "$here/contention.sh"
source "$here/cron.sh"
source "$here/takeover.sh"
source "$here/exits.sh"
source "$here/tree.sh"
source "$here/overlap.sh"
source "$here/badinput.sh"
source "$here/valgrind.sh"
source "$here/store_file.sh"
source "$here/first_use.sh"
source "$here/newcomer.sh"
source "$here/libs.sh"

CLI_TMP=$(t_tmpdir)
# ANARCHON_CLI_KEEP=DIR keeps the suite's files (logs, outputs) there.
[ -z "${ANARCHON_CLI_KEEP:-}" ] || at_exit "rm -rf '$ANARCHON_CLI_KEEP'; cp -a '$CLI_TMP' '$ANARCHON_CLI_KEEP'"
BLOCKS=" ${CLI_BLOCKS:-contention cron takeover exits tree overlap badinput valgrind storefile firstuse newcomer libs} "
want() { [[ $BLOCKS == *" $1 "* ]]; }

built_or_end cli cli || exit
step "built cli/anarchon"
# These need no server: chosen alone, no server is started.
want storefile && cli_store_file
want firstuse && cli_first_use
others=${BLOCKS// storefile / }
others=${others// firstuse / }
if [ -z "${others// /}" ]; then
	suite_end
	exit
fi

RPORT=$(free_port)
if redis_start main "$RPORT"; then
	step "redis-server on 127.0.0.1:$RPORT"
else
	not_ok "cli: start redis-server" "$(tail -n 20 "$R_DIR/main/log" 2> /dev/null)"
fi
REDIS="redis://127.0.0.1:$RPORT"

# The cron block waits for two minute boundaries: it starts first.
want cron && bg_block cron cli_cron "$REDIS?strategy=lease&prefix=cli-cron"

declare -A URL=(
	[sqlite]="sqlite://$CLI_TMP/runs.db"
	[redis-lease]="$REDIS?strategy=lease&prefix=cli-lease"
	[redis-stream-id]="$REDIS?strategy=stream-id&prefix=cli-sid"
	[redis-script]="$REDIS?strategy=script&prefix=cli-script"
)
STORES="sqlite redis-lease redis-stream-id redis-script"
if want contention || want takeover || want exits || want overlap || want newcomer || want libs; then
	# The overlap block needs only PostgreSQL (and Redis, started above).
	many=$(want contention || want takeover || want exits || want newcomer || want libs && echo 1)
	if [ -z "$many" ]; then :
	elif nats_start main; then
		URL[nats]="nats://127.0.0.1:${NATS_PORT[main]}?stream=CLI&prefix=cli"
		STORES+=" nats"
	else
		not_ok "cli: start nats-server -js"
	fi
	if pg_host_start "cli" "$CLI_TMP"; then
		if psql -X -q -c "CREATE EXTENSION anarchon" > "$CLI_TMP/pg-ext.log" 2>&1; then
			URL[postgresql]="postgresql://$PGUSER@127.0.0.1:$PGPORT/postgres"
			STORES+=" postgresql"
			cli_pg_watch_start
		else
			not_ok "cli: CREATE EXTENSION anarchon" "$(cat "$CLI_TMP/pg-ext.log")"
		fi
	fi
	if [ -z "$many" ]; then :
	elif rmq_start "$CLI_TMP/rmq"; then
		# timeout_ms 10 s: eight hosts a second, two releases side by side, make the broker slow to log in.
		URL[rabbitmq]="amqp://127.0.0.1:$RMQ_PORT?prefix=cli&timeout_ms=10000"
		STORES+=" rabbitmq"
	else
		not_ok "cli: start a RabbitMQ node"
	fi
	step "stores: $STORES"
fi
if want contention; then
	args=()
	for s in $STORES; do args+=("$s=${URL[$s]}"); done
	# Three waves of stores, each a minute (contention.sh says why).
	waves=
	for w in "sqlite postgresql" "redis-lease redis-stream-id" "redis-script nats rabbitmq"; do
		for s in $w; do [[ " $STORES " == *" $s "* ]] && waves+=" $s"; done
		waves+=/
	done
	bg_block contention cli_contention "${CLI_SLOTS:-60}" "$waves" "${args[@]}"
fi

# The lease stores: SQLite, Redis lease, and PostgreSQL when it started.
lease=("sqlite=sqlite://$CLI_TMP/takeover.db" "redis-lease=$REDIS?strategy=lease&prefix=cli-takeover")
[ -n "${URL[postgresql]:-}" ] && lease+=("postgresql=${URL[postgresql]}")
want takeover && bg_block takeover cli_takeover "${lease[@]}"
want exits && cli_exits "$REDIS?strategy=lease&prefix=cli-exits" "${URL[postgresql]:-}"
want tree && cli_tree
want overlap && cli_overlap "$RPORT" "${URL[postgresql]:-}"
want badinput && cli_badinput "$REDIS"
want newcomer && cli_newcomer "${URL[postgresql]:-}" "${URL[nats]:-}" "${URL[rabbitmq]:-}" "$REDIS"
if want libs; then
	args=()
	for s in sqlite redis-lease nats rabbitmq postgresql; do [ -z "${URL[$s]:-}" ] || args+=("$s=${URL[$s]}"); done
	cli_libs "${args[@]}"
fi
want takeover && bg_collect takeover
want contention && bg_collect contention
want valgrind && cli_valgrind "$REDIS?strategy=lease&prefix=cli-vg"
want cron && bg_collect cron

suite_end
