# pg_cluster.sh — a PostgreSQL primary with a streaming standby, for the
# fault suite's `failover` cells (sourced by run.sh after test/pg/server.sh).
#
#   pg_pair_start NAME sync|async   a primary and a standby on free loopback
#                                   ports under the suite's folder, anarchon
#                                   installed; PAIR_PORTS[NAME]="P1,P2"
#   pg_pair_failover NAME           SIGKILL the primary (postmaster and every
#                                   backend at once), then promote the standby
#   pg_pair_standby_claim NAME      a claim sent to the standby, before the
#                                   failover: its error text
#
# With sync the primary waits for the standby's flush before a commit returns
# (synchronous_commit = on, synchronous_standby_names naming it), so a claim
# answered `won` is on the standby when the primary dies.  The setting is
# made with ALTER SYSTEM after the base backup, so the standby's copy of the
# configuration lacks it: a promoted standby that waited for a standby of its
# own would hang every commit.  With async the standby
# replays what it has received, and a claim confirmed just before the crash
# can be missing after the promotion: the suite measures how often.
declare -A PAIR_PORTS PAIR_DIRS

pg_pair_start() {
	local name=$1 mode=$2 dir p1 p2
	dir=$(t_tmpdir)
	if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
	p1=$(free_port)
	p2=$(free_port)
	PAIR_PORTS[$name]="$p1,$p2"
	PAIR_DIRS[$name]=$dir
	pg_as_server_user "$PG_BINDIR/initdb" -D "$dir/primary" -A trust -U "$PGUSER" --no-sync -E UTF8 \
		--locale=C > "$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log"; return 1; }
	{
		echo "listen_addresses = '127.0.0.1'"
		echo "unix_socket_directories = '$dir'"
		echo "max_connections = 100"
		echo "wal_level = replica"
		echo "fsync = off"
		echo "anarchon.durability = 'accept-loss'"
	} >> "$dir/primary/postgresql.conf"
	pg_as_server_user "$PG_BINDIR/pg_ctl" -D "$dir/primary" -l "$dir/primary.log" -w -t 60 \
		-o "-p $p1" start > /dev/null 2>&1 || { tail -n 20 "$dir/primary.log"; return 1; }
	at_exit "pg_as_server_user '$PG_BINDIR/pg_ctl' -D '$dir/primary' -m immediate stop > /dev/null 2>&1"
	psql -X -q -h 127.0.0.1 -p "$p1" -v ON_ERROR_STOP=1 -c "CREATE EXTENSION anarchon" || return 1
	pg_as_server_user "$PG_BINDIR/pg_basebackup" -h 127.0.0.1 -p "$p1" -U "$PGUSER" -D "$dir/standby" \
		-R -X stream -c fast --no-sync > "$dir/basebackup.log" 2>&1 || { cat "$dir/basebackup.log"; return 1; }
	echo "primary_conninfo = 'host=127.0.0.1 port=$p1 user=$PGUSER application_name=anarchon_standby'" \
		>> "$dir/standby/postgresql.auto.conf"
	pg_as_server_user "$PG_BINDIR/pg_ctl" -D "$dir/standby" -l "$dir/standby.log" -w -t 60 \
		-o "-p $p2" start > /dev/null 2>&1 || { tail -n 20 "$dir/standby.log"; return 1; }
	at_exit "pg_as_server_user '$PG_BINDIR/pg_ctl' -D '$dir/standby' -m immediate stop > /dev/null 2>&1"
	if [ "$mode" = sync ]; then
		psql -X -q -h 127.0.0.1 -p "$p1" -v ON_ERROR_STOP=1 \
			-c "ALTER SYSTEM SET synchronous_standby_names = 'anarchon_standby'" \
			-c "SELECT pg_reload_conf()" > /dev/null || return 1
	fi
	# Until the standby streams (and, with sync, is the synchronous one).
	for _ in $(seq 1 100); do
		[ "$(psql -X -A -t -h 127.0.0.1 -p "$p1" -c "SELECT sync_state FROM pg_stat_replication
			WHERE application_name = 'anarchon_standby' AND state = 'streaming'")" = \
			"$([ "$mode" = sync ] && echo sync || echo async)" ] && return 0
		sleep 0.1
	done
	echo "the standby did not start streaming"
	return 1
}

pg_pair_failover() {
	local dir=${PAIR_DIRS[$1]} pm
	pm=$(head -n 1 "$dir/primary/postmaster.pid")
	kill -STOP "$pm"
	kill -KILL $(pgrep -P "$pm") "$pm"
	pg_as_server_user "$PG_BINDIR/pg_ctl" -D "$dir/standby" -w -t 60 promote > /dev/null 2>&1
}

pg_pair_standby_claim() {
	psql -X -A -t -h 127.0.0.1 -p "${PAIR_PORTS[$1]#*,}" \
		-c "SELECT anarchon_claim('standby', 4102444800000, 'tok')" 2>&1
}
