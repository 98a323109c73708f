#!/usr/bin/env bash
# cli.sh — the rows of `make bench` for the anarchon command, as a crontab
# line pays for it: a whole process, started with fork and exec, that finds
# the slot taken by another host and exits 0 without running its command:
#   anarchon run on a SQLite file  vs  /bin/true started the same way
#   anarchon run on Redis (lease)  vs  /bin/true started the same way
# One Python loop starts N (200) of each, interleaved, and times each start
# to its exit.  The row's rates are processes per second; what the command
# adds is said on stderr as milliseconds per invocation (the issue's target:
# at most 10 ms more than /bin/true).  A bench reports, it never asserts.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source test/lib.sh
source test/bench/lib.sh
source test/redis/server.sh

dir=$(t_tmpdir)
bench_built cli
bench_redis bench
N=${BENCH_CLI_N:-200}

# measure STORE URL: the loop's rows for one store (another host's claim first).
measure() {
	local store=$1 url=$2 slot out
	# The second that has begun (run waits for a slot still to come), held
	# by another host for an hour: every run is told "running".
	slot=$(( $(date +%s) * 1000 ))
	if ! cli/anarchon claim --store "$url" --job bench --slot "$slot" --lease_ms 3600000 > /dev/null; then
		echo "cli $store: the first claim failed" >&2
		emit_row "$store" "anarchon run, slot taken (a process) vs /bin/true" 1 0 0 0 0
		return
	fi
	out=$(/usr/bin/python3 - "$N" "$REPO_ROOT/cli/anarchon" "$url" "$slot" <<-'PY'
		import subprocess, sys, time
		n, an, url, slot = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
		run = [an, "run", "--store", url, "--job", "bench", "--slot", slot, "--", "/bin/true"]
		lat = {"true": [], "run": []}
		for i in range(n):
		    for kind, argv in (("true", ["/bin/true"]), ("run", run)):
		        t0 = time.perf_counter()
		        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
		        lat[kind].append(time.perf_counter() - t0)
		        if p.returncode != 0 or p.stdout:
		            sys.exit("%s exited %d: %s" % (kind, p.returncode, p.stdout[:200]))
		def pct(v, q):
		    v = sorted(v)
		    return v[max(0, int(len(v) * q) - 1)] * 1e6
		for kind in ("true", "run"):
		    v = lat[kind]
		    print(kind, "%.1f" % (len(v) / sum(v)), "%d" % pct(v, 0.5), "%d" % pct(v, 0.99), "%.3f" % (sum(v) / len(v) * 1e3))
	PY
	) || { echo "cli $store: $out" >&2; emit_row "$store" "anarchon run, slot taken (a process) vs /bin/true" 1 0 0 0 0; return; }
	local t_ops t_p50 t_p99 t_ms r_ops r_p50 r_p99 r_ms
	read -r _ t_ops t_p50 t_p99 t_ms < <(printf '%s\n' "$out" | grep '^true ')
	read -r _ r_ops r_p50 r_p99 r_ms < <(printf '%s\n' "$out" | grep '^run ')
	emit_row "$store" "anarchon run, slot taken (a process) vs /bin/true" 1 "$r_ops" "$t_ops" "$r_p50" "$r_p99"
	echo "cli $store: anarchon run $r_ms ms per process (p50 $((r_p50 / 1000)) ms), /bin/true $t_ms ms:" \
		"$(awk -v a="$r_ms" -v b="$t_ms" 'BEGIN { printf "%.1f", a - b }') ms added (target: at most 10)" >&2
}

measure sqlite "sqlite://$dir/runs.db"
measure redis-lease "redis://127.0.0.1:$PORT?strategy=lease"
