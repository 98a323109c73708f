#!/usr/bin/env bash
# cron.sh — the row of `make bench` for `anarchon cron`: what a fleet's
# replicas spend on the slots they do not win.  Three daemons share a crontab
# of 50 jobs that each run every second, on Redis (lease), for BENCH_CRON_S
# (10) seconds, twice:
#   batch      the crontab as it is: each daemon claims a second's 50 slots
#              in one batch and starts a child only for a slot it won
#   per child  each job with jitter=1: every slot gets a child (anarchon run)
#              that claims it, as before batches
# The rate is slots judged (one log line per slot per replica: won, running,
# done, lost, overlap) per CPU second of the daemons and everything they
# started, commands included (resource usage of the reaped children); the
# baseline is the same for the per-child run.  Redis's own CPU is not in it.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source test/lib.sh
source test/bench/lib.sh
source test/redis/server.sh

dir=$(t_tmpdir)
bench_built cli
bench_redis benchcron
SECS=${BENCH_CRON_S:-10}

# measure MODE JITTER: "slots cpu_seconds" of one run of the three daemons.
measure() {
	local mode=$1 jitter=$2 k
	mkdir -p "$dir/$mode"
	for k in $(seq 1 50); do
		printf '# anarchon: name=c%s jitter=%s\n* * * * * * * true\n' "$k" "$jitter"
	done > "$dir/$mode/crontab"
	/usr/bin/python3 - "$REPO_ROOT/cli/anarchon" "redis://127.0.0.1:$PORT/0?strategy=lease&prefix=bc$mode" \
		"$dir/$mode" "$SECS" <<-'PY'
		import glob, re, resource, signal, subprocess, sys, time
		an, url, d, secs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
		ps = [subprocess.Popen([an, "cron", "--store", url, d + "/crontab"], stderr=open("%s/log.%d" % (d, i), "w"))
		      for i in range(3)]
		time.sleep(secs)  # the scenario: the fleet runs its crontab this long
		for p in ps:
		    p.send_signal(signal.SIGTERM)
		for p in ps:
		    p.wait(timeout=60)
		ru = resource.getrusage(resource.RUSAGE_CHILDREN)
		pat = re.compile(r"^anarchon: c\d+ at \S+: (won|running|done|lost|overlap)\b")
		slots = sum(1 for f in glob.glob(d + "/log.*") for line in open(f) if pat.match(line))
		print(slots, "%.3f" % (ru.ru_utime + ru.ru_stime))
	PY
}

read -r b_slots b_cpu < <(measure batch 0)
read -r c_slots c_cpu < <(measure child 1)
rate() { awk -v s="$1" -v c="$2" 'BEGIN { printf "%.1f", (s > 0 && c > 0) ? s / c : 0 }'; }
echo "cron: batch ${b_slots:-0} slots judged in ${b_cpu:-0} CPU s; a child per slot ${c_slots:-0} in ${c_cpu:-0} CPU s" >&2
emit_row redis-lease "anarchon cron, 3 replicas x 50 jobs a second: slots judged per CPU second, a batch vs a child per slot" \
	3 "$(rate "${b_slots:-0}" "${b_cpu:-0}")" "$(rate "${c_slots:-0}" "${c_cpu:-0}")" 0 0
