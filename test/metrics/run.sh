#!/usr/bin/env bash
# run.sh — the metrics suite (doc/operating.md, "Metrics"): Prometheus'
# view of anarchon, with Debian's own exporters and promtool.
#
#   exporter    a PostgreSQL server with the library preloaded, a known
#               sequence of claims, heartbeats, finishes, fences and checks;
#               Debian's prometheus-postgres-exporter, connected as a member
#               of pg_monitor, runs pg/prometheus/anarchon-queries.yaml; its
#               /metrics has every anarchon series with exactly the values
#               that sequence makes, the histogram is whole, and promtool
#               accepts the scrape; after anarchon_stats_reset() it reads 0
#   command     anarchon stats --format prometheus on a SQLite and a Redis
#               store: exact values, promtool, the same families as the
#               exporter's (HELP, TYPE, labels, bounds), valgrind; the files
#               written as doc/operating.md says, read by Debian's
#               prometheus-node-exporter's textfile collector
#   usage       --format's refusals
#
# The exporter differs per Debian release (0.11 on 12, 0.17 on 13, 0.19 on
# unstable): all take --extend.query-path, --disable-default-metrics and
# --disable-settings-metrics, but each has its own set of collectors enabled
# by default, which the suite reads from the exporter's --help and turns off
# (--no-collector.NAME), so that the scrape holds only anarchon's series
# and the exporter's own.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib.sh"
source "$here/../pg/server.sh"
source "$here/../redis/server.sh"
cd "$REPO_ROOT" || exit 1

PY=/usr/bin/python3
EXPORTER=${ANARCHON_PG_EXPORTER:-/usr/bin/prometheus-postgres-exporter}
NODE_EXPORTER=${ANARCHON_NODE_EXPORTER:-/usr/bin/prometheus-node-exporter}
CLI=$REPO_ROOT/cli/anarchon
BOUNDS=22                        # AN_STATS_LE: 2^4 .. 2^25 us
tmp=$(t_tmpdir)
chmod 777 "$tmp"

expo() { "$PY" "$here/expo.py" "$@"; }

for tool in "$PY" "$EXPORTER" "$NODE_EXPORTER" promtool psql redis-server; do
	if ! command -v "$tool" > /dev/null; then
		not_ok "metrics: $tool is installed" "bash test/deps.sh all installs it"
		suite_end
		exit
	fi
done
built_or_end metrics cli || exit
if ! pg_install > "$tmp/install.log" 2>&1; then
	not_ok "metrics: make install" "$(tail -n 20 "$tmp/install.log")"; suite_end; exit
fi
if ! pg_start "fsync = off" "shared_preload_libraries = 'anarchon'" > "$tmp/start.log" 2>&1; then
	not_ok "metrics: start PostgreSQL" "$(tail -n 20 "$tmp/start.log")"; suite_end; exit
fi
step "PostgreSQL on 127.0.0.1:$PGPORT with anarchon preloaded; $("$EXPORTER" --version 2>&1 | head -n 1); $(promtool --version 2>&1 | head -n 1)"

# ---------------------------------------------------------------- the sequence

psql -X -q -c "CREATE EXTENSION anarchon" -c "CREATE ROLE anarchon_exporter LOGIN IN ROLE pg_monitor" \
	> "$tmp/setup.log" 2>&1 || { not_ok "metrics: create the extension" "$(cat "$tmp/setup.log")"; suite_end; exit; }

# Slots a few seconds old (claimable, in the last 24 hours); one an hour old (late).
s=$(( ($(date +%s) - 10) * 1000 ))
sequence() {
	psql -X -q -A -t -v s="$s" <<'SQL'
\set VERBOSITY terse
SET anarchon.overlap = 'allow';
SELECT anarchon_claim('mx', :s - 4000, 'tok-a', lease_ms => 1);
SELECT anarchon_claim('mx', :s - 3000, 'tok-a');
SELECT anarchon_claim('mx', :s - 2000, 'tok-a');
SELECT anarchon_claim('mx', :s - 1000, 'tok-a', lease_ms => 600000);
SELECT anarchon_finish('mx', :s - 3000, 'tok-a');
SELECT anarchon_finish('mx', :s - 2000, 'tok-a', 'failed');
SELECT anarchon_finish('mx', :s - 2000, 'tok-b');
SELECT anarchon_claim('mx', :s - 3000, 'tok-b');
SELECT anarchon_claim('mx', :s - 2000, 'tok-b');
SELECT anarchon_claim('mx', :s - 3600000, 'tok-b');
SELECT anarchon_claim('mx', :s - 1000, 'tok-b');
SELECT anarchon_heartbeat('mx', :s - 1000, 'tok-a', 600000);
SELECT anarchon_heartbeat('mx', :s - 1000, 'tok-b');
SELECT anarchon_check('mx', :s - 1000);
BEGIN;
SELECT anarchon_fence('mx', :s - 1000, 'tok-a');
COMMIT;
BEGIN;
SELECT anarchon_fence('mx', :s - 1000, 'tok-b');
ROLLBACK;
SET anarchon.store = 'no_such_server';
SELECT anarchon_claim('mx', :s, 'tok-c');
RESET anarchon.store;
-- A job CALL anarchon.run would watch: hourly since three hours before the
-- hour that has begun, with runs in the second, the current and the next
-- hour (so exactly two slots are missed whatever the time), and one whose
-- schedule no longer parses (its question fails).
INSERT INTO anarchon.run_schedules (job, schedule, since)
	VALUES ('hourly', '0 * * * *', date_trunc('hour', now()) - interval '3 hours'),
	       ('badsched', 'not a schedule', now() - interval '1 hour');
INSERT INTO anarchon.runs_jobs VALUES ('hourly', now());
INSERT INTO anarchon.runs
	SELECT 'hourly', date_trunc('hour', now()) + h * interval '1 hour', 1, 't', 'succeeded', now(), now(), now()
	  FROM unnest(ARRAY[-2, 0, 1]) AS h;
SQL
}
sequence > "$tmp/sequence.out" 2> "$tmp/sequence.err"
printf '%s\n' won won won won t t f done done late running t f running t > "$tmp/sequence.want"
if diff -u "$tmp/sequence.want" "$tmp/sequence.out" > "$tmp/sequence.diff" &&
	[ "$(grep -c '^ERROR' "$tmp/sequence.err")" = 2 ] && grep -q 'does not own' "$tmp/sequence.err" &&
	grep -q 'no_such_server' "$tmp/sequence.err"; then
	ok "metrics: the sequence: 4 won, 1 running, 2 done, 1 late; heartbeats, finishes and fences owned and fenced; a check; a store that does not exist"
else
	not_ok "metrics: the sequence" "$(cat "$tmp/sequence.diff")" "$(cat "$tmp/sequence.err")"
fi
# The lease of 1 ms has run out: that run is expired, not running.
sleep 0.1

# ---------------------------------------------------------------- the exporter

# The collectors this exporter enables by default, each as --no-collector.NAME.
collectors_off() {
	"$EXPORTER" --help 2>&1 | "$PY" -c '
import re, sys
entries = re.split(r"\n(?=\s+(?:-\w, )?--)", sys.stdin.read())
for e in entries:
    m = re.match(r"\s+--collector\.([a-z_]+)\s", e)
    if m and re.search(r"\(default:\s+enabled\)", e):
        print("--no-collector." + m.group(1))'
}

# The query file as `make install` put it, where the docs point to it.
QUERIES=$(pg_config --sharedir)/extension/anarchon-queries.yaml
if cmp -s "$QUERIES" pg/prometheus/anarchon-queries.yaml; then
	ok "metrics: make install puts the query file in $QUERIES"
else
	not_ok "metrics: make install puts the query file in $QUERIES" "$(ls -l "$QUERIES" 2>&1)"
fi
EXPORTER_PORT=$(free_port)
exporter_start() {
	local flags
	flags=$(collectors_off | tr '\n' ' ')
	step "exporter flags: --extend.query-path --disable-default-metrics --disable-settings-metrics $flags"
	# shellcheck disable=SC2086
	(cd "$tmp" && DATA_SOURCE_NAME="postgresql://anarchon_exporter@127.0.0.1:$PGPORT/$PGDATABASE?sslmode=disable" \
		exec "$EXPORTER" --web.listen-address="127.0.0.1:$EXPORTER_PORT" \
		--extend.query-path="$QUERIES" \
		--disable-default-metrics --disable-settings-metrics $flags > "$tmp/exporter.log" 2>&1) &
	EXPORTER_PID=$!
	at_exit "kill $EXPORTER_PID 2> /dev/null; wait $EXPORTER_PID 2> /dev/null"
	wait_port "$EXPORTER_PORT" 30
}
if ! exporter_start; then
	not_ok "metrics: prometheus-postgres-exporter starts" "$(tail -n 20 "$tmp/exporter.log")"
	suite_end
	exit
fi
check "metrics: a scrape of the exporter's /metrics" \
	expo scrape "http://127.0.0.1:$EXPORTER_PORT/metrics" "$tmp/exporter.prom"

cat > "$tmp/exporter.want" <<'EOF'
anarchon_claims_total{store="local",kind="local",outcome="won"} 4
anarchon_claims_total{store="local",kind="local",outcome="running"} 1
anarchon_claims_total{store="local",kind="local",outcome="done"} 2
anarchon_claims_total{store="local",kind="local",outcome="late"} 1
anarchon_claims_total{store="local",kind="local",outcome="overlap"} 0
anarchon_claims_total{store="local",kind="local",outcome="lost"} 0
anarchon_claims_total{store="(no such server)",kind="unknown",outcome="won"} 0
anarchon_errors_total{store="local",kind="local",class="timeout"} 0
anarchon_errors_total{store="local",kind="local",class="connection"} 0
anarchon_errors_total{store="local",kind="local",class="configuration"} 0
anarchon_errors_total{store="local",kind="local",class="busy"} 0
anarchon_errors_total{store="local",kind="local",class="other"} 0
anarchon_errors_total{store="(no such server)",kind="unknown",class="configuration"} 1
anarchon_errors_total{store="(no such server)",kind="unknown",class="connection"} 0
anarchon_heartbeats_total{store="local",kind="local",result="owned"} 1
anarchon_heartbeats_total{store="local",kind="local",result="fenced"} 1
anarchon_finishes_total{store="local",kind="local",result="owned"} 2
anarchon_finishes_total{store="local",kind="local",result="fenced"} 1
anarchon_fences_total{store="local",kind="local",result="owned"} 1
anarchon_fences_total{store="local",kind="local",result="fenced"} 1
anarchon_checks_total{store="local",kind="local"} 1
anarchon_store_call_duration_seconds_count{store="local",kind="local"} 16
anarchon_store_call_duration_seconds_bucket{store="local",kind="local",le="+Inf"} 16
anarchon_store_call_duration_seconds_bucket{store="local",kind="local",le="33.554432"} 16
anarchon_store_call_duration_seconds_count{store="(no such server)",kind="unknown"} 0
anarchon_store_call_duration_seconds_sum{store="(no such server)",kind="unknown"} 0
anarchon_clock_offset_seconds{store="local",kind="local"} 0
anarchon_runs{job="mx",state="running"} 1
anarchon_runs{job="mx",state="expired"} 1
anarchon_runs{job="mx",state="succeeded"} 1
anarchon_runs{job="mx",state="failed"} 1
anarchon_runs{job="mx",state="interrupted"} 0
anarchon_runs{job="mx",state="replaced"} 0
anarchon_runs{job="hourly",state="succeeded"} 3
anarchon_runs{job="hourly",state="running"} 0
anarchon_missed_slots{job="hourly"} 2
anarchon_missed_check_failed{job="hourly"} 0
anarchon_missed_slots{job="badsched"} 0
anarchon_missed_check_failed{job="badsched"} 1
pg_up 1
EOF
check "metrics: exporter: every anarchon series has the value the sequence made (claims by outcome, errors by class, heartbeats, finishes and fences by result, checks, calls, clock offset, runs by state, missed slots)" \
	expo expect "$tmp/exporter.prom" "$tmp/exporter.want"
check "metrics: exporter: no clock offset for a store without a clock, no missed slots for a job anarchon.run does not run" \
	expo absent "$tmp/exporter.prom" 'anarchon_clock_offset_seconds{store="(no such server)",kind="unknown"}' \
	'anarchon_missed_slots{job="mx"}'
check "metrics: exporter: the call duration histogram has $BOUNDS bounds and +Inf, cumulative, +Inf = _count, a _sum" \
	expo histogram "$tmp/exporter.prom" anarchon_store_call_duration_seconds "$BOUNDS"
# Every query of the file ran: the exporter logged no error.
exporter_errors() { ! grep -i 'level=error' "$tmp/exporter.log"; }
check "metrics: exporter: every query of anarchon-queries.yaml ran as a member of pg_monitor (no error logged)" exporter_errors
check "metrics: promtool check metrics accepts the exporter's scrape" sh -c "promtool check metrics < '$tmp/exporter.prom'"

psql -X -q -c "SELECT anarchon_stats_reset()" > /dev/null 2>&1
cat > "$tmp/reset.want" <<'EOF'
anarchon_claims_total{store="local",kind="local",outcome="won"} 0
anarchon_errors_total{store="(no such server)",kind="unknown",class="configuration"} 0
anarchon_store_call_duration_seconds_count{store="local",kind="local"} 0
anarchon_store_call_duration_seconds_bucket{store="local",kind="local",le="0.001024"} 0
anarchon_runs{job="mx",state="failed"} 1
EOF
reset_scrape() {
	expo scrape "http://127.0.0.1:$EXPORTER_PORT/metrics" "$tmp/reset.prom" && expo expect "$tmp/reset.prom" "$tmp/reset.want"
}
check "metrics: exporter: after anarchon_stats_reset() the counters read 0 and the stores stay; the history does not change" reset_scrape

# ---------------------------------------------------------------- the command

cli_stats() {
	local name=$1 url=$2
	"$CLI" stats --store "$url" --format prometheus > "$tmp/cli-$name.prom" 2> "$tmp/cli-$name.err"
}
check "metrics: anarchon stats --format prometheus, SQLite store" cli_stats sqlite "sqlite://$tmp/runs.db"
cat > "$tmp/cli-sqlite.want" <<EOF
anarchon_checks_total{store="sqlite://$tmp/runs.db",kind="local"} 1
anarchon_claims_total{store="sqlite://$tmp/runs.db",kind="local",outcome="won"} 0
anarchon_errors_total{store="sqlite://$tmp/runs.db",kind="local",class="other"} 0
anarchon_heartbeats_total{store="sqlite://$tmp/runs.db",kind="local",result="fenced"} 0
anarchon_store_call_duration_seconds_count{store="sqlite://$tmp/runs.db",kind="local"} 1
anarchon_store_call_duration_seconds_bucket{store="sqlite://$tmp/runs.db",kind="local",le="+Inf"} 1
EOF
check "metrics: command, SQLite: one check, one call timed, every other counter 0" \
	expo expect "$tmp/cli-sqlite.prom" "$tmp/cli-sqlite.want"
check "metrics: command, SQLite: the histogram has $BOUNDS bounds and +Inf, cumulative, +Inf = _count" \
	expo histogram "$tmp/cli-sqlite.prom" anarchon_store_call_duration_seconds "$BOUNDS"
check "metrics: promtool check metrics accepts the command's SQLite exposition" \
	sh -c "promtool check metrics < '$tmp/cli-sqlite.prom'"

REDIS_PORT=$(free_port)
if redis_start metrics "$REDIS_PORT" > "$tmp/redis-start.log" 2>&1; then
	REDIS_URL="redis://127.0.0.1:$REDIS_PORT?strategy=lease"
	check "metrics: anarchon stats --format prometheus, Redis store" cli_stats redis "$REDIS_URL"
	cat > "$tmp/cli-redis.want" <<EOF
anarchon_checks_total{store="$REDIS_URL",kind="redis"} 1
anarchon_errors_total{store="$REDIS_URL",kind="redis",class="connection"} 0
anarchon_store_call_duration_seconds_count{store="$REDIS_URL",kind="redis"} 1
EOF
	check "metrics: command, Redis: one check, one call timed" expo expect "$tmp/cli-redis.prom" "$tmp/cli-redis.want"
	clock_near() {
		awk -v want="anarchon_clock_offset_seconds{store=\"$REDIS_URL\",kind=\"redis\"}" \
			'$1 == want { seen = 1; if ($2 < -1 || $2 > 1) bad = 1 } END { exit !(seen && !bad) }' "$tmp/cli-redis.prom"
	}
	check "metrics: command, Redis: the clock offset, in seconds, within 1 s of this host's" clock_near
	check "metrics: promtool check metrics accepts the command's Redis exposition" \
		sh -c "promtool check metrics < '$tmp/cli-redis.prom'"
	check "metrics: the command and the exporter write the same families (HELP, TYPE, labels, histogram bounds)" \
		expo same "$tmp/exporter.prom" "$tmp/cli-redis.prom" anarchon_
	if have_valgrind "metrics: valgrind: anarchon stats --format prometheus, Redis"; then
		vg_ok "metrics: valgrind: anarchon stats --format prometheus, Redis: no memory error or definite leak" /dev/null \
			"$CLI" stats --store "$REDIS_URL" --format prometheus
	fi
else
	not_ok "metrics: start redis-server" "$(cat "$tmp/redis-start.log")"
fi
if have_valgrind "metrics: valgrind: anarchon stats --format prometheus, SQLite"; then
	vg_ok "metrics: valgrind: anarchon stats --format prometheus, SQLite: no memory error or definite leak" /dev/null \
		"$CLI" stats --store "sqlite://$tmp/runs.db" --format prometheus
fi

# node_exporter's textfile collector reads the files written as
# doc/operating.md says: to a temporary name, then renamed.
textfiles() {
	local dir=$tmp/textfile url
	mkdir -p "$dir"
	for url in "sqlite://$tmp/runs.db" ${REDIS_URL:+"$REDIS_URL"}; do
		"$CLI" stats --store "$url" --format prometheus > "$dir/.anarchon.prom.$$" &&
			mv "$dir/.anarchon.prom.$$" "$dir/anarchon-${url%%:*}.prom" || return 1
	done
}
NODE_PORT=$(free_port)
node_start() {
	"$NODE_EXPORTER" --web.listen-address="127.0.0.1:$NODE_PORT" --collector.disable-defaults \
		--collector.textfile --collector.textfile.directory="$tmp/textfile" > "$tmp/node.log" 2>&1 &
	NODE_PID=$!
	at_exit "kill $NODE_PID 2> /dev/null; wait $NODE_PID 2> /dev/null"
	wait_port "$NODE_PORT" 30
}
cat > "$tmp/node.want" <<EOF
anarchon_checks_total{store="sqlite://$tmp/runs.db",kind="local"} 1
node_textfile_scrape_error 0
EOF
[ -n "${REDIS_URL:-}" ] && echo "anarchon_checks_total{store=\"$REDIS_URL\",kind=\"redis\"} 1" >> "$tmp/node.want"
node_scrape() {
	expo scrape "http://127.0.0.1:$NODE_PORT/metrics" "$tmp/node.prom" && expo expect "$tmp/node.prom" "$tmp/node.want"
}
if textfiles && node_start; then
	check "metrics: node_exporter's textfile collector reads the command's files, one per store, without an error" node_scrape
else
	not_ok "metrics: node_exporter's textfile collector reads the command's files" "$(tail -n 20 "$tmp/node.log" 2>/dev/null)"
fi

# ---------------------------------------------------------------- usage

refused() {
	local want=$1 pattern=$2 out rc
	shift 2
	out=$("$CLI" "$@" 2>&1 > /dev/null)
	rc=$?
	[ "$rc" = "$want" ] && printf '%s' "$out" | grep -q -- "$pattern" || { echo "exit $rc: $out"; return 1; }
}
check "metrics: --format takes tsv or prometheus only (64)" \
	refused 64 'format must be tsv or prometheus' stats --store "sqlite://$tmp/runs.db" --format xml
check "metrics: only stats takes --format (64)" \
	refused 64 'does not take --format' claim --format prometheus --store "sqlite://$tmp/runs.db" --job j --slot now
check "metrics: stats --format prometheus of a PostgreSQL store points to the exporter (64)" \
	refused 64 'prometheus-postgres-exporter' stats --store "postgresql://127.0.0.1:$PGPORT/postgres" --format prometheus
tsv_default() {
	"$CLI" stats --store "sqlite://$tmp/runs.db" | head -n 1 | grep -q $'^store\tkind\tscope\t'
}
check "metrics: stats without --format writes tab-separated values, as before" tsv_default

suite_end
