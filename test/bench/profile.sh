#!/usr/bin/env bash
# profile.sh — where a claim's time goes: each store's claim, and the
# primitive its bench row is measured against, under `perf record -g`, one
# client for PROFILE_SECONDS (5), and the frames that hold the most of it
# (inclusive: the widest frames of the flame graph), as doc/performance.md
# reports them.
#
#   bash test/bench/profile.sh [pg] [sqlite] [redis]     (all three by default)
#
# Not part of `make bench` (a profile is for reading, not a ratio).  Needs
# perf (Debian's linux-perf) and root, or kernel.perf_event_paranoid <= 1, for
# the PostgreSQL backends and redis-server, which are recorded system-wide and
# picked out by their command name.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib.sh"
source "$here/lib.sh"
cd "$REPO_ROOT" || exit 1
secs=${PROFILE_SECONDS:-5}
top=${PROFILE_TOP:-18}
stores=${*:-pg sqlite redis}
dir=$(t_tmpdir)
chmod 777 "$dir"
command -v perf > /dev/null || { echo "perf is not installed (apt-get install linux-perf)" >&2; exit 1; }

# report DATA COMM TITLE: the top frames of COMM's samples, inclusive, as
# shares of COMM's own samples (a system-wide record holds other processes'
# and the idle CPU's too).  Frames perf could not name (an address) and the
# entry points every sample of COMM shares are left out.
report() {
	local total
	echo "## $3"
	total=$(perf report -i "$1" --comm "$2" --sort comm --stdio 2> /dev/null | awk -v c="$2" '$2 == c { sub("%", "", $1); print $1; exit }')
	perf report -i "$1" --comm "$2" --children --sort symbol --stdio -g none --percent-limit 0.5 2> /dev/null |
		grep -E '^ +[0-9]' | grep -vE '\] (0x[0-9a-f]+|[0-9a-f]{16}) |PostmasterMain|\] main |_start|__libc_start|do_syscall_64|entry_SYSCALL|PostgresMain' |
		awk -v t="${total:-100}" '{ a = $1; b = $2; sub("%", "", a); sub("%", "", b)
			printf "%6.1f%% %6.1f%%  %s\n", 100 * a / t, 100 * b / t, $4 }' | head -n "$top"
	echo
}

# self_report DATA COMM TITLE: the functions that spend COMM's time
# themselves (the flame graph's tops), as shares of COMM's samples.
self_report() {
	local total
	echo "## $3"
	total=$(perf report -i "$1" --comm "$2" --sort comm --stdio 2> /dev/null | awk -v c="$2" '$2 == c { sub("%", "", $1); print $1; exit }')
	perf report -i "$1" --comm "$2" --no-children --sort dso,symbol --stdio -g none --percent-limit 0.7 2> /dev/null |
		grep -E '^ +[0-9]' | awk -v t="${total:-100}" '{ a = $1; sub("%", "", a); $1 = ""; printf "%6.1f%% %s\n", 100 * a / t, $0 }' | head -n "$top"
	echo
}

# system_wide NAME CMD...: perf record of the whole machine while CMD runs.
system_wide() {
	local name=$1
	shift
	perf record -a -g -F 1999 -o "$dir/$name.data" -- "$@" > "$dir/$name.out" 2>&1
}

for s in $stores; do
	case $s in
	pg)
		source "$here/../pg/server.sh"
		pg_install || exit 1
		pg_start "shared_buffers = 256MB" "shared_preload_libraries = 'anarchon,pg_stat_statements'" \
			"pg_stat_statements.track = all" || exit 1
		base=$(( ($(date +%s) + 3600) * 1000 ))
		psql -X -q -c "CREATE EXTENSION anarchon" -c "CREATE EXTENSION pg_stat_statements" -c "CREATE TABLE bench_base (job text, slot bigint, token text, PRIMARY KEY (job, slot))" || exit 1
		printf '%s\n' '\set s random(1, 1000000000)' \
			"SELECT anarchon_claim('b' || :client_id, $base + :s * 1000::bigint, 'tok' || :client_id);" > "$dir/claim.sql"
		printf '%s\n' '\set s random(1, 1000000000)' \
			"INSERT INTO bench_base (job, slot, token) VALUES ('b' || :client_id, $base + :s * 1000::bigint, 'tok') ON CONFLICT DO NOTHING;" > "$dir/insert.sql"
		# The check reads 1000 existing runs, and its primitive the same keys of a plain table.
		psql -X -q -c "INSERT INTO anarchon.runs SELECT 'chk', to_timestamp(($base + i * 1000) / 1000.0), 1, 'tok', 'running', now() + interval '1 day', now(), NULL FROM generate_series(1, 1000) AS i" \
			-c "INSERT INTO bench_base SELECT 'chk', $base + i * 1000, 'tok' FROM generate_series(1, 1000) AS i" || exit 1
		printf '%s\n' '\set s random(1, 1000)' "SELECT anarchon_check('chk', $base + :s * 1000::bigint);" > "$dir/check.sql"
		printf '%s\n' '\set s random(1, 1000)' "SELECT token FROM bench_base WHERE job = 'chk' AND slot = $base + :s * 1000::bigint;" > "$dir/select.sql"
		for k in ${PROFILE_PG:-claim insert check select}; do
			(cd "$dir" && PGOPTIONS="-c anarchon.overlap=allow" system_wide "pg-$k" \
				pgbench -n -M prepared -c 1 -j 1 -T "$secs" -f "$dir/$k.sql" postgres)
			echo "# PostgreSQL $k: $(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$dir/pg-$k.out" | head -n 1) per second, 1 client"
			report "$dir/pg-$k.data" postgres "PostgreSQL backend, $k"
			self_report "$dir/pg-$k.data" postgres "PostgreSQL backend, $k, own time"
		done
		# The statements a claim ran, nested ones included (track = all): what
		# each costs per claim, from the server's own counters.
		echo "## PostgreSQL, the statements per claim (pg_stat_statements)"
		psql -X -A -F ' | ' -c "SELECT round(s.calls::numeric / c.calls, 2) AS per_claim,
		        round(s.mean_exec_time::numeric * 1000) AS mean_us,
		        round(s.total_exec_time::numeric * 1000 / c.calls) AS us_per_claim,
		        left(regexp_replace(s.query, '\s+', ' ', 'g'), 90) AS query
		   FROM pg_stat_statements s,
		        (SELECT calls FROM pg_stat_statements WHERE query LIKE 'SELECT anarchon_claim(%') c
		  WHERE s.calls >= c.calls / 2
		  ORDER BY s.total_exec_time DESC LIMIT 12"
		echo
		pg_stop
		;;
	sqlite)
		make -s sqlite test-programs > /dev/null || exit 1
		sqlite3 "$dir/s.db" "PRAGMA journal_mode=wal;" > /dev/null
		for k in claim insert; do
			cp "$dir/s.db" "$dir/$k.db"
			ANARCHON_OVERLAP=allow perf record -g -F 1999 -o "$dir/sqlite-$k.data" -- \
				test/bin/claimer bench "$dir/$k.db" "$secs" 1 "$k" "$dir/lat-$k" > "$dir/sqlite-$k.out" 2> /dev/null
			echo "# SQLite $k: $(awk '{ printf "%.0f", $1 / ($2 / 1e6) }' "$dir/sqlite-$k.out") per second, 1 process"
			report "$dir/sqlite-$k.data" claimer "SQLite, the process, $k"
		done
		;;
	redis)
		source "$here/../redis/server.sh"
		make -s test/bin/rbench > /dev/null || exit 1
		port=$(free_port)
		redis_start profile "$port" || exit 1
		for k in c setnx; do
			system_wide "redis-$k" test/bin/rbench "$k" "redis://127.0.0.1:$port?strategy=lease" "$secs" 1 "$dir/lat-$k"
			echo "# Redis $k: $(grep -E '^[0-9]+ [0-9]+$' "$dir/redis-$k.out" | awk '{ printf "%.0f", $1 / ($2 / 1e6) }') per second, 1 client"
			report "$dir/redis-$k.data" redis-server "redis-server, $k (lease)"
			report "$dir/redis-$k.data" rbench "the client, $k (lease)"
		done
		;;
	*) echo "unknown store $s (pg, sqlite or redis)" >&2; exit 2 ;;
	esac
done
