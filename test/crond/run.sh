#!/usr/bin/env bash
# run.sh — `anarchon cron FILE`, a crontab run across a fleet (doc/cli.md,
# "A crontab for a fleet"):
#   parse   5-, 6- and 7-field lines, macros, CRON_TZ, "# anarchon:" names,
#           the default names (the same from any directory), --check's table,
#           bad lines refused with FILE:LINE, the rule and exit 78, bad usage
#           64, and nothing started when one line is bad
#   fleet   4 daemons on one crontab (a job every second, one every 2 s) for
#           about 20 s, on a SQLite file, Redis and RabbitMQ: every slot a daemon
#           logged as claimed ran exactly once, and 2/3 of the window's slots
#           at least were claimed (load-tolerant)
#   stop    SIGTERM: a long command and its background child are stopped with
#           their process group, and the daemon exits 0 within 20 s
#   error   a store that cannot be reached: each slot logged as an error with
#           its job and slot, the daemon still running, then exit 0
#   env     environment lines reach the commands of the lines after them, over
#           the daemon's environment; ANARCHON_ names are refused
#   metrics --metrics-listen: /metrics per job, promtool, silent scrapers,
#           the port taken (78), a bad address (64)
#   reload  SIGHUP with a changed file, to one daemon and a second later to
#           the other: no slot started twice or skipped, a dropped job stops,
#           an added one runs; a file that no longer reads leaves the last
#           good one running; and the reload under valgrind
#   batch   3 daemons with their metrics: a child only for a won slot, the
#           losing answers counted, no batch failed
#   takeover  3 daemons, 50 jobs, on Redis; one SIGKILLed: no slot twice,
#           every slot after the kill run by the other two
#   take up run --token: a claim made before is run, another token's is
#           not, one whose lease ran out is fenced
#   valgrind  cron --check on a good and a bad crontab
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$TEST_ROOT/redis/server.sh"
source "$TEST_ROOT/amqp/server.sh"
cd "$REPO_ROOT" || exit 1
A=$REPO_ROOT/cli/anarchon
tmp=$(t_tmpdir)

built_or_end crond cli || exit 1

# --- parse ---------------------------------------------------------------
cat > "$tmp/good" <<'EOF'
# every second, then every other second (7 fields: seconds first, year last)
* * * * * * * echo one
*/2 * * * * * * echo two
0 12 * * * /usr/bin/report --daily
CRON_TZ=Europe/Berlin
# anarchon: name=backup lease_ms=60000 kill-after=5000
0 3 * * * /usr/local/bin/backup.sh --all
0 0 1 1 * 2030 echo new-year
@hourly echo hourly
EOF
out=$("$A" cron --check "$tmp/good" 2>&1); rc=$?
same "parse: --check exits 0" 0 "$rc"
same "parse: --check prints a header and one line per job" 7 "$(printf '%s\n' "$out" | wc -l)"
has "parse: the comment names the job, its zone is the CRON_TZ above it" "$out" \
	"$(printf 'backup\t0 3 * * *\tEurope/Berlin\t')"
has "parse: a 6-field line is minute..weekday year, in its zone (next 2030-01-01 Berlin)" "$out" \
	"$(printf '0 0 1 1 * 2030\tEurope/Berlin\t2029-12-31T23:00:00Z\techo new-year')"
has "parse: a 5-field line before CRON_TZ is UTC, named command-hash" "$out" \
	"$(printf '\t0 12 * * *\tUTC\t')"
if printf '%s\n' "$out" | grep -qE "^report-[0-9a-f]{8}	0 12 "; then ok "parse: default name report-XXXXXXXX"
else not_ok "parse: default name report-XXXXXXXX" "$out"; fi
mkdir -p "$tmp/elsewhere" && cp "$tmp/good" "$tmp/elsewhere/other-name"
# Every column but the next slot, which moves when the two calls straddle a second.
same "parse: the default names are the same from another file and directory" "$(printf '%s\n' "$out" | cut -f1-3,5)" \
	"$(cd "$tmp/elsewhere" && "$A" cron --check other-name 2>&1 | cut -f1-3,5)"
has "parse: @hourly is taken" "$out" "$(printf '@hourly\tEurope/Berlin\t')"

# bad_line NAME LINE... : the crontab LINES is refused with exit 78 and WANT on stderr
bad() {
	local name=$1 want=$2 rc
	shift 2
	printf '%s\n' "$@" > "$tmp/bad"
	out=$("$A" cron --check "$tmp/bad" 2>&1); rc=$?
	same "parse: $name: exit 78" 78 "$rc"
	has "parse: $name: says $want" "$out" "$want"
}
bad "a field out of range" "bad:2: schedule field 1 (minute) '61': 61 is out of range, allowed 0-59; a job line is a schedule of 7 fields" \
	"* * * * * echo ok" "61 * * * * echo no"
bad "a schedule without a command" "bad:1: no schedule and command here; a job line is" "* * * * *"
bad "anarchon's own variable" "bad:1: ANARCHON_LEASE_MS=: a crontab does not set anarchon's own variables; a job's settings go in a '# anarchon: key=value' comment" \
	"ANARCHON_LEASE_MS=1000" "* * * * * echo ok"
# TZ= is the commands' (supercronic hands it to them), never a schedule's zone.
out=$(printf 'TZ=Europe/Paris\n0 12 * * * echo tz\n' > "$tmp/tz" && "$A" cron --check "$tmp/tz" 2>&1)
has "parse: TZ= is an environment line; the schedule stays in UTC" "$out" "$(printf '\t0 12 * * *\tUTC\t')"
bad "an unknown zone" "bad:1: CRON_TZ=Mars/Olympus" "CRON_TZ=Mars/Olympus" "* * * * * echo ok"
bad "an unknown setting" "bad:1: unknown setting \"nope\"; allowed are name, kill-after, jitter, lease_ms" \
	"# anarchon: nope=1" "* * * * * echo ok"
bad "a bad setting value" "bad:1: invalid value for lease_ms" "# anarchon: lease_ms=0" "* * * * * echo ok"
bad "a comment not above a job" "bad:2: the anarchon: comment of line 1 is not just above a job line" \
	"# anarchon: name=x" "" "* * * * * echo ok"
bad "two jobs of one name" "bad:2: the job echo-" "* * * * * echo ok" "* * * * * echo ok"
bad "a year that is past" "has no slot from now on (its years are past)" "0 0 1 1 * 2020 echo old"
# supercronic's order: a 7th (6th) word that is no year makes the line a shorter one.
out=$(printf '* * * * * 1960 echo q\n' > "$tmp/y" && "$A" cron --check "$tmp/y" 2>&1)
has "parse: a 6th word that is no year (1960) is the command's, as in supercronic" "$out" \
	"$(printf '\t* * * * *\tUTC\t')"
has "parse: ... whose command is '1960 echo q'" "$out" "$(printf '\t1960 echo q')"
bad "catch-up in a comment" "cron does not catch up" "# anarchon: catch_up=all" "* * * * * echo ok"
bad "an empty crontab" "no job in the crontab" "# nothing"
printf '* * * * * * * touch %s/started\n61 * * * * echo no\n' "$tmp" > "$tmp/half"
"$A" cron --store "sqlite://$tmp/half.db" "$tmp/half" > /dev/null 2>&1; rc=$?
same "parse: a daemon on a crontab with one bad line exits 78" 78 "$rc"
if [ ! -e "$tmp/started" ] && [ ! -e "$tmp/half.db" ]; then ok "parse: ... having started nothing (no run, no store file)"
else not_ok "parse: ... having started nothing (no run, no store file)"; fi
"$A" cron "$tmp/good" > /dev/null 2>&1; same "usage: no store: exit 64" 64 "$?"
"$A" cron --store "sqlite://$tmp/u.db" > /dev/null 2>&1; same "usage: no file: exit 64" 64 "$?"
"$A" cron --store "sqlite://$tmp/u.db" "$tmp/good" "$tmp/good" > /dev/null 2>&1; same "usage: two files: exit 64" 64 "$?"
"$A" cron --shell --check "$tmp/good" > /dev/null 2>&1; same "usage: --shell: exit 64" 64 "$?"

# --- fleet ---------------------------------------------------------------
# fleet NAME URL: 4 daemons on one crontab for about 20 s, then SIGTERM.
fleet() {
	local name=$1 url=$2 d="$tmp/fleet-$1" pids=() i t0 t1 rc res end
	mkdir -p "$d"
	cat > "$d/crontab" <<EOF
# anarchon: name=every-second
* * * * * * * echo "\$ANARCHON_JOB \$ANARCHON_SLOT" >> $d/ran
# anarchon: name=every-2s
*/2 * * * * * * echo "\$ANARCHON_JOB \$ANARCHON_SLOT" >> $d/ran
EOF
	for i in 1 2 3 4; do
		"$A" cron --store "$url" "$d/crontab" 2> "$d/log.$i" &
		pids+=($!)
	done
	wait_for 30 "fleet $name: 4 daemons running" \
		bash -c "[ \$(cat $d/log.* | grep -c 'jobs from the crontab; running') -eq 4 ]" || true
	t0=$(( ($(date +%s) + 1) * 1000 ))
	# The scenario: the fleet runs its crontab for 20 s.
	sleep 20
	t1=$(( $(date +%s) * 1000 ))
	kill -TERM "${pids[@]}" 2> /dev/null
	end=$(( $(date +%s) + 20 ))
	rc=0
	for i in "${pids[@]}"; do
		while kill -0 "$i" 2> /dev/null && [ "$(date +%s)" -lt "$end" ]; do sleep 0.1; done # the poll's step
		if kill -0 "$i" 2> /dev/null; then rc=timeout; kill -KILL "$i"; fi
		wait "$i" || [ "$rc" = timeout ] || rc=$?
	done
	same "fleet $name: the 4 daemons exit 0 within 20 s of SIGTERM" 0 "$rc"
	res=$(python3 - "$d" "$t0" "$t1" <<'PY'
import sys, glob, re, datetime, collections
d, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
claimed = set()
pat = re.compile(r'^anarchon: (\S+) at (\S+): (won|running|done)\b')
for f in glob.glob(d + '/log.*'):
    for line in open(f):
        m = pat.match(line)
        if m:
            t = datetime.datetime.strptime(m.group(2), '%Y-%m-%dT%H:%M:%SZ').replace(tzinfo=datetime.timezone.utc)
            claimed.add((m.group(1), int(t.timestamp()) * 1000))
runs = collections.Counter()
try:
    for line in open(d + '/ran'):
        job, slot = line.split()
        runs[(job, int(slot))] += 1
except FileNotFoundError:
    pass
double = sorted(k for k, n in runs.items() if n > 1)
window = lambda k: t0 <= k[1] < t1 - 1000
judged = [k for k in claimed if window(k)]
missing = sorted(k for k in judged if runs[k] == 0)
extra = sorted(k for k in runs if k not in claimed)
want = {'every-second': (t1 - 1000 - t0) // 1000, 'every-2s': len([s for s in range(t0, t1 - 1000, 1000) if s % 2000 == 0])}
got = {j: len([k for k in judged if k[0] == j]) for j in want}
print(len(double), len(missing), len(extra), sum(runs.values()),
      ','.join('%s=%d/%d' % (j, got[j], want[j]) for j in want),
      int(all(3 * got[j] >= 2 * want[j] and want[j] > 0 for j in want)),
      'double:%s missing:%s' % (double[:5], missing[:5]))
PY
)
	read -r ndouble nmissing nextra nruns counts enough detail <<< "$res"
	step "fleet $name: $nruns runs, judged $counts, $detail"
	same "fleet $name: no slot ran twice (double wins)" 0 "${ndouble:-x}"
	same "fleet $name: every slot a daemon claimed ran (missing)" 0 "${nmissing:-x}"
	same "fleet $name: every run was of a slot a daemon logged as claimed" 0 "${nextra:-x}"
	same "fleet $name: at least 2/3 of the window's slots judged ($counts)" 1 "${enough:-x}"
}

fleet sqlite "sqlite://$tmp/fleet.db"
rport=$(free_port)
if redis_start crond "$rport"; then
	fleet redis "redis://127.0.0.1:$rport/0?strategy=lease&prefix=crond"
else
	not_ok "fleet redis: start redis-server" "$(tail -n 20 "$R_DIR/crond/log" 2> /dev/null)"
fi
# RabbitMQ knows a claim only on the connection that made it: no batch there,
# each slot claimed by the run started for it (cron_claim.c).
if rmq_start "$tmp/rmq"; then
	fleet amqp "amqp://127.0.0.1:$RMQ_PORT?durability=accept-loss&prefix=crond"
	has "fleet amqp: the daemons said they claim each slot in its own run" "$(cat "$tmp"/fleet-amqp/log.1)" \
		"cron: the amqp store knows a claim only on the connection that made it"
	rmq_stop
else
	not_ok "fleet amqp: start rabbitmq-server" "$(tail -n 20 "$tmp/rmq/server.out" 2> /dev/null)"
fi

# scrape [PATH]: the page of the daemon at 127.0.0.1:$mport; value PAGE NAME: one sample.
scrape() { python3 -c 'import sys, urllib.request
r = urllib.request.urlopen("http://127.0.0.1:%s%s" % (sys.argv[1], sys.argv[2]), timeout=5)
sys.stdout.write(r.headers.get("Content-Type") + "\n" + r.read().decode())' "$mport" "${1:-/metrics}"; }
value() { printf '%s\n' "$1" | awk -v k="$2" '$1 == k { print $2 }'; }

# --- batch ---------------------------------------------------------------
# Each daemon claims a second's slots in one batch of its own connection and
# starts a child only for those it won: three daemons, five jobs every second.
# With a child per slot claimed, the children started would be three times
# the runs; here they are at most the runs, and the batches' losing answers
# are counted instead.
d="$tmp/batch"; mkdir -p "$d"
for k in 1 2 3 4 5; do
	printf '# anarchon: name=b%s\n* * * * * * * echo "$ANARCHON_JOB $ANARCHON_SLOT" >> %s/ran\n' "$k" "$d"
done > "$d/crontab"
bpids=(); bports=()
for i in 1 2 3; do
	bports+=("$(free_port)")
	"$A" cron --store "sqlite://$d/s.db" --metrics-listen "127.0.0.1:${bports[-1]}" "$d/crontab" 2> "$d/log.$i" &
	bpids+=($!)
done
wait_for 30 "batch: 3 daemons running" bash -c "[ \$(cat $d/log.* | grep -c 'jobs from the crontab; running') -eq 3 ]" || true
# The scenario: the fleet runs its crontab for 6 s.
sleep 6
started=0; notwon=0; scraped=0
for p in "${bports[@]}"; do
	m=$(mport=$p scrape) && scraped=$((scraped + 1))
	for k in 1 2 3 4 5; do
		started=$((started + $(value "$m" "anarchon_cron_slots_started_total{job=\"b$k\"}" | grep . || echo 0)))
		notwon=$((notwon + $(value "$m" "anarchon_cron_slots_not_won_total{job=\"b$k\"}" | grep . || echo 0)))
	done
done
kill -TERM "${bpids[@]}" 2> /dev/null
for i in "${bpids[@]}"; do wait_for 20 "batch: daemon $i exits after SIGTERM" bash -c "! kill -0 $i" || kill -KILL "$i"; wait "$i"; done
runs=$(wc -l < "$d/ran" 2> /dev/null || echo 0)
double=$(sort "$d/ran" 2> /dev/null | uniq -d | wc -l)
step "batch: $runs runs; at the scrape, children started $started, losing answers $notwon"
same "batch: the 3 daemons' metrics were read" 3 "$scraped"
same "batch: no slot ran twice" 0 "$double"
if [ "$started" -gt 0 ] && [ "$started" -le "$runs" ]; then ok "batch: children only for won slots ($started started, $runs runs by the end)"
else not_ok "batch: children only for won slots" "started at the scrape: $started; runs by the end: $runs"; fi
if [ "$notwon" -ge "$started" ]; then ok "batch: the other replicas' claims were answered in their batches ($notwon)"
else not_ok "batch: the other replicas' claims were answered in their batches" "losing answers: $notwon; started: $started"; fi
if grep -q "the batch of .* failed" "$d"/log.*; then not_ok "batch: no batch failed" "$(grep -h "the batch of" "$d"/log.* | head -3)"
else ok "batch: no batch failed"; fi

# --- takeover --------------------------------------------------------------
# Three daemons on Redis, one crontab of 50 jobs (every 1, 2 or 3 s, leases of
# 10 s, overlap=allow); after 12 s one daemon is SIGKILLed and the other two go
# on for 14 s more: no slot ran twice, and from 4 s after the kill every slot
# of every job ran once.  The slots the killed daemon had won and not yet
# handed to a child are held until their lease ends, and no replica claims a
# past slot again (doc/cli.md): those are said, not judged.  The lease is long
# enough for a loaded machine to start a won slot's child: a child that takes
# its claim up after the lease ran out is fenced and runs nothing (doc/cli.md),
# which with leases of 2 s lost whole seconds of slots in Debian sid's lane, a
# loss of the machine's speed, not of the takeover.  overlap=allow:
# on a loaded machine a second's children may not have ended when the next
# second's batch comes, and the check is of the takeover, not of how many
# children a second this machine can start (a job whose run is still going
# answers overlap by default, doc/cli.md).
if [ -n "${rport:-}" ] && redis_ready "$rport" 2> /dev/null; then
	d="$tmp/takeover"; mkdir -p "$d"
	for k in $(seq 1 50); do
		printf '# anarchon: name=t%s lease_ms=10000 overlap=allow\n*/%s * * * * * * echo "$ANARCHON_JOB $ANARCHON_SLOT" >> %s/ran\n' "$k" $(( k % 3 + 1 )) "$d"
	done > "$d/crontab"
	tpids=()
	for i in 1 2 3; do
		"$A" cron --store "redis://127.0.0.1:$rport/0?strategy=lease&prefix=crondt" "$d/crontab" 2> "$d/log.$i" &
		tpids+=($!)
	done
	wait_for 30 "takeover: 3 daemons running" bash -c "[ \$(cat $d/log.* | grep -c 'jobs from the crontab; running') -eq 3 ]" || true
	# The scenario: the fleet runs 12 s, one daemon dies, the others run 12 s more.
	sleep 12
	kill -KILL "${tpids[0]}"; wait "${tpids[0]}" 2> /dev/null
	killed=$(date +%s%3N)
	# The judge: no slot twice; every slot of every job from 4 s after the kill
	# up to 12 s after it ran; with --complete, exit 0 only when none is missing.
	cat > "$d/judge.py" <<'PY2'
import sys, collections
ran, killed = sys.argv[1], int(sys.argv[2])
runs = collections.Counter(tuple(l.split()) for l in open(ran))
double = [k for k, n in runs.items() if n > 1]
lo = (killed // 1000 + 4) * 1000
hi = (killed // 1000 + 12) * 1000
held = sum(1 for k in range(1, 51) for slot in range(killed // 1000 * 1000, lo, 1000)
           if slot % ((k % 3 + 1) * 1000) == 0 and runs[('t%d' % k, str(slot))] == 0)
missing = []
for k in range(1, 51):
    step = (k % 3 + 1) * 1000
    for slot in range(lo, hi, 1000):
        if slot % step == 0 and runs[('t%d' % k, str(slot))] == 0:
            missing.append('t%d@%d' % (k, slot))
if sys.argv[3:] == ['--complete']:
    sys.exit(1 if missing else 0)
if sys.argv[3:] == ['--missing']:
    import time
    for m in missing:
        job, slot = m.split('@')
        print(job, time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(int(slot) // 1000)))
    sys.exit(0)
print(len(double), len(missing), sum(runs.values()), (hi - lo) // 1000,
      'slots not run in the 4 s from the kill (held by its leases): %d; double:%s missing:%s' % (held, double[:3], missing[:5]))
PY2
	# The scenario: the two daemons left run 14 s more.
	sleep 14
	# A daemon stops its children with it, and on a loaded machine the last
	# seconds' children may not have run yet: before the stop, wait (60 s at
	# most) until every judged slot ran.  A slot the takeover lost never runs,
	# and the judge below fails on it after the deadline.
	end=$(( $(date +%s) + 60 ))
	until python3 "$d/judge.py" "$d/ran" "$killed" --complete 2> /dev/null || [ "$(date +%s)" -ge "$end" ]; do
		sleep 0.2 # the poll's step
	done
	kill -TERM "${tpids[1]}" "${tpids[2]}"
	for i in "${tpids[1]}" "${tpids[2]}"; do
		wait_for 20 "takeover: daemon $i exits after SIGTERM" bash -c "! kill -0 $i" || kill -KILL "$i"; wait "$i"
	done
	res=$(python3 "$d/judge.py" "$d/ran" "$killed")
	read -r ndouble nmissing nruns secs detail <<< "$res"
	step "takeover: $nruns runs of 50 jobs; judged $secs s after the kill; $detail"
	same "takeover: no slot ran twice" 0 "${ndouble:-x}"
	same "takeover: every slot from 4 s after the kill ran, on the two daemons left" 0 "${nmissing:-x}"
	if [ "${nmissing:-x}" != 0 ]; then
		# What every daemon, the killed one too, said of the first missing slots.
		python3 "$d/judge.py" "$d/ran" "$killed" --missing | head -3 | while read -r job when; do
			grep -h "^anarchon: $job at $when" "$d"/log.* | sed "s/^/# daemon: /"
		done
		grep -h -c "fenced, not run" "$d"/log.* | paste -sd+ | sed 's/^/# fenced, not run (per daemon): /'
	fi
	if [ "${secs:-0}" -ge 6 ]; then ok "takeover: $secs s judged after the kill"; else not_ok "takeover: at least 6 s judged after the kill" "$secs"; fi
else
	not_ok "takeover: the Redis of the fleet is up" "port ${rport:-none}"
fi

# --- take up ---------------------------------------------------------------
# run --token, the child's half of the batch: a claim made before with the
# token is run; another token's is not; one whose lease ran out is fenced.
d="$tmp/takeup"; mkdir -p "$d"
tu() { "$A" "$1" --store "sqlite://$d/s.db" --job "${TU_JOB:-tu}" --max-late-ms 3600000 "${@:2}"; }
T1=$(printf 'a%.0s' {1..32}); T2=$(printf 'b%.0s' {1..32})
S1=$(date -u -d '-30 sec' +%Y-%m-%dT%H:%M:%SZ); S2=$(date -u -d '-20 sec' +%Y-%m-%dT%H:%M:%SZ)
S3=$(date -u -d '-10 sec' +%Y-%m-%dT%H:%M:%SZ)
tu claim --slot $S1 --token "$T1" > /dev/null
out=$(tu run --slot $S1 --token "$T1" --verbose -- sh -c "echo \$ANARCHON_TOKEN > $d/one" 2>&1); rc=$?
same "take up: run --token of a claim made before exits 0" 0 "$rc"
same "take up: ... and ran its command with that token" "$T1" "$(cat "$d/one" 2> /dev/null)"
has "take up: ... saying won" "$out" "tu at $S1: won (attempt 1)"
tu claim --slot $S2 --token "$T1" --lease-ms 60000 > /dev/null
out=$(tu run --slot $S2 --token "$T2" --verbose -- touch "$d/two" 2>&1)
if [ ! -e "$d/two" ]; then ok "take up: another token's claim is not run"; else not_ok "take up: another token's claim is not run" "$out"; fi
has "take up: ... saying running" "$out" "running, not this host's to run"
# Another job: the one above holds its run of S2, which S3's claim would answer overlap.
TU_JOB=tu3 tu claim --slot $S3 --token "$T1" --lease-ms 300 > /dev/null
# The scenario: the claim's lease must run out before the run takes it up.
sleep 0.5
out=$(TU_JOB=tu3 tu run --slot $S3 --token "$T1" --lease-ms 300 --verbose -- touch "$d/three" 2>&1)
if [ ! -e "$d/three" ]; then ok "take up: a claim whose lease ran out is not run"; else not_ok "take up: a claim whose lease ran out is not run" "$out"; fi
has "take up: ... saying fenced" "$out" "fenced, not run: its claim's lease ran out before the command started"
# A token of 64 bytes, the most a token may be, is taken up whole.
T64=$(printf 'Z%.0s' {1..64}); S4=$(date -u -d '-40 sec' +%Y-%m-%dT%H:%M:%SZ)
TU_JOB=tu4 tu claim --slot $S4 --token "$T64" > /dev/null
TU_JOB=tu4 tu run --slot $S4 --token "$T64" -- sh -c "echo \$ANARCHON_TOKEN > $d/four" > /dev/null 2>&1
same "take up: a token of 64 bytes is taken up whole" "$T64" "$(cat "$d/four" 2> /dev/null)"
out=$(tu run --schedule '* * * * *' --token "$T1" -- true 2>&1); rc=$?
same "take up: --token with --schedule: exit 64" 64 "$rc"
has "take up: ... saying why" "$out" "run --token takes up the claim of one --slot"

# --- stop ----------------------------------------------------------------
d="$tmp/stop"; mkdir -p "$d"
cat > "$d/crontab" <<EOF
# anarchon: name=long kill-after=3000
* * * * * * * [ -e $d/bg ] || { sleep 600 & echo \$! > $d/bg; echo \$\$ > $d/sh; wait; }
EOF
"$A" cron --store "sqlite://$d/s.db" "$d/crontab" 2> "$d/log" &
cpid=$!
wait_for 20 "stop: the long command started" test -s "$d/sh"
bg=$(cat "$d/bg" 2> /dev/null); sh=$(cat "$d/sh" 2> /dev/null)
kill -TERM "$cpid"
end=$(( $(date +%s) + 20 ))
while kill -0 "$cpid" 2> /dev/null && [ "$(date +%s)" -lt "$end" ]; do sleep 0.1; done # the poll's step
if kill -0 "$cpid" 2> /dev/null; then not_ok "stop: the daemon exits within 20 s of SIGTERM"; kill -KILL "$cpid"
else ok "stop: the daemon exits within 20 s of SIGTERM"; fi
wait "$cpid"; same "stop: ... with status 0" 0 "$?"
gone() { ! kill -0 "$1" 2> /dev/null; }
if [ -n "$sh" ] && [ -n "$bg" ] && gone "$sh" && gone "$bg"; then ok "stop: the command and its background child are gone"
else not_ok "stop: the command and its background child are gone" "sh=$sh bg=$bg" "$(cat "$d/log")"; fi
# The long run, and the next second's run when its child had just started
# (it answers overlap and ends).
if grep -qE "starting no new runs; [12] running, each told to stop" "$d/log"; then ok "stop: the daemon said it stopped starting runs"
else not_ok "stop: the daemon said it stopped starting runs" "$(cat "$d/log")"; fi

# --- error ---------------------------------------------------------------
d="$tmp/error"; mkdir -p "$d"
printf '# anarchon: name=unreachable\n* * * * * * * touch %s/ran\n' "$d" > "$d/crontab"
"$A" cron --store "redis://127.0.0.1:$(free_port)/0?strategy=lease" "$d/crontab" 2> "$d/log" &
cpid=$!
wait_for 20 "error: two slots logged as errors" \
	bash -c "[ \$(grep -c '^anarchon: unreachable at .*: error, not claimed: the store could not be opened (exit 75)' $d/log) -ge 2 ]"
if kill -0 "$cpid" 2> /dev/null; then ok "error: the daemon runs on after its children failed"
else not_ok "error: the daemon runs on after its children failed" "$(cat "$d/log")"; fi
kill -TERM "$cpid" 2> /dev/null
wait_for 20 "error: the daemon exits after SIGTERM" bash -c "! kill -0 $cpid"
wait "$cpid"; same "error: ... with status 0" 0 "$?"
if [ ! -e "$d/ran" ]; then ok "error: no command ran without a claim"; else not_ok "error: no command ran without a claim"; fi

# --- env -----------------------------------------------------------------
# Environment lines, as supercronic takes them: each sets a variable for the
# commands of the lines after it, over the daemon's own environment.
d="$tmp/env"; mkdir -p "$d"
cat > "$d/crontab" <<EOF
CRONTEST_A=one
# anarchon: name=env-first
* * * * * * * [ -e $d/first ] || echo "first \$CRONTEST_A \$CRONTEST_B \$CRONTEST_C \$TZ" > $d/first
CRONTEST_A = "two words"
CRONTEST_B='quoted'
TZ=Asia/Tokyo
# anarchon: name=env-second
* * * * * * * [ -e $d/second ] || echo "second \$CRONTEST_A \$CRONTEST_B \$CRONTEST_C \$TZ" > $d/second
EOF
env -u TZ CRONTEST_C=inherited "$A" cron --store "sqlite://$d/s.db" "$d/crontab" 2> "$d/log" &
cpid=$!
wait_for 20 "env: both jobs ran" bash -c "[ -s $d/first ] && [ -s $d/second ]" || true
kill -TERM "$cpid"
wait_for 20 "env: the daemon exits after SIGTERM" bash -c "! kill -0 $cpid" || kill -KILL "$cpid"
wait "$cpid"
same "env: a job's command sees the lines above it and the daemon's environment" "first one  inherited " "$(cat "$d/first" 2> /dev/null)"
same "env: a later line overrides an earlier one for the jobs after it (quotes stripped; TZ= the command's)" \
	"second two words quoted inherited Asia/Tokyo" "$(cat "$d/second" 2> /dev/null)"

# --- metrics -------------------------------------------------------------
# --metrics-listen: the daemon's counters at /metrics, read by promtool; a
# scraper that connects and says nothing (nine at once, one more than the
# daemon serves) holds neither the slots nor the next scrape.
d="$tmp/metrics"; mkdir -p "$d"
printf '# anarchon: name=good\n* * * * * * * true\n# anarchon: name=bad\n* * * * * * * exit 3\n' > "$d/crontab"
mport=$(free_port)
"$A" cron --store "sqlite://$d/s.db" --metrics-listen "127.0.0.1:$mport" "$d/crontab" 2> "$d/log" &
cpid=$!
wait_for 20 "metrics: the endpoint answers" scrape || true
wait_for 20 "metrics: two slots of each job ended" \
	bash -c "mport=$mport; $(declare -f scrape value); m=\$(scrape); [ \"\$(value \"\$m\" 'anarchon_cron_children_ended_total{job=\"bad\",how=\"exit_other\"}')\" -ge 2 ]" || true
m=$(scrape)
has "metrics: Prometheus' text format, version 0.0.4" "$(printf '%s\n' "$m" | head -n 1)" "text/plain; version=0.0.4"
if command -v promtool > /dev/null; then
	check "metrics: promtool check metrics accepts the page" bash -c "printf '%s\n' \"\$1\" | tail -n +2 | promtool check metrics" _ "$m"
else
	not_ok "metrics: promtool check metrics accepts the page" "promtool is not installed (test/deps.sh installs it)"
fi
good=$(value "$m" 'anarchon_cron_children_ended_total{job="good",how="exit_0"}')
bad=$(value "$m" 'anarchon_cron_children_ended_total{job="bad",how="exit_other"}')
started=$(value "$m" 'anarchon_cron_slots_started_total{job="bad"}')
if [ "${good:-0}" -ge 2 ] && [ "${bad:-0}" -ge 2 ] && [ "${started:-0}" -ge "${bad:-0}" ] &&
	[ "$(value "$m" anarchon_cron_jobs)" = 2 ] && [ "$(value "$m" anarchon_cron_stopping)" = 0 ]; then
	ok "metrics: slots started and children ended per job (good exit 0: $good, bad exit 3: $bad of $started started), 2 jobs"
else
	not_ok "metrics: slots started and children ended per job, 2 jobs" "$(printf '%s\n' "$m" | grep -v '^#' | tr '\n' ' ')"
fi
same "metrics: another path is 404" 404 "$(python3 -c 'import sys, urllib.request, urllib.error
try: urllib.request.urlopen("http://127.0.0.1:%s/nope" % sys.argv[1], timeout=5); print(200)
except urllib.error.HTTPError as e: print(e.code)' "$mport")"
# Nine silent scrapers for 3 s: slots go on being started, and a scrape after
# them is answered.
before=$(value "$(scrape)" 'anarchon_cron_slots_started_total{job="good"}')
python3 -c 'import socket, sys, time
s = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(9)]
time.sleep(3)' "$mport"
after=$(value "$(scrape)" 'anarchon_cron_slots_started_total{job="good"}')
if [ -n "$before" ] && [ -n "$after" ] && [ $((after - before)) -ge 2 ]; then
	ok "metrics: nine silent scrapers for 3 s held no slot ($((after - before)) started meanwhile) and no scrape after them"
else
	not_ok "metrics: nine silent scrapers for 3 s held no slot and no scrape after them" "before: ${before:-none}; after: ${after:-none}"
fi
kill -HUP "$cpid"
wait_for 10 "metrics: a reload is counted" bash -c "mport=$mport; $(declare -f scrape value); [ \"\$(value \"\$(scrape)\" 'anarchon_cron_reloads_total{result=\"ok\"}')\" = 1 ]" || true
out=$("$A" cron --store "sqlite://$d/s.db" --metrics-listen "127.0.0.1:$mport" "$d/crontab" 2>&1); rc=$?
same "metrics: a second daemon on the same port: exit 78" 78 "$rc"
has "metrics: ... saying the port is taken" "$out" "--metrics-listen 127.0.0.1:$mport: cannot listen there: Address already in use"
kill -TERM "$cpid"
wait_for 20 "metrics: the daemon exits after SIGTERM" bash -c "! kill -0 $cpid" || kill -KILL "$cpid"
wait "$cpid"; same "metrics: ... with status 0" 0 "$?"
out=$("$A" cron --store "sqlite://$d/s.db" --metrics-listen 9187 "$d/crontab" 2>&1); rc=$?
same "metrics: --metrics-listen 9187 (no host): exit 64" 64 "$rc"
has "metrics: ... saying what is allowed" "$out" "is not HOST:PORT: give the address to listen on and its port, such as 127.0.0.1:9187"
out=$("$A" cron --check --metrics-listen "127.0.0.1:$mport" "$d/crontab" 2>&1); rc=$?
same "metrics: --check with --metrics-listen: exit 64" 64 "$rc"

# --- reload --------------------------------------------------------------
# Two daemons; the file changed, then SIGHUP to one daemon and a second later
# to the other, as a rolling change of a ConfigMap would; then a file that no
# longer reads, and SIGHUP to both.
d="$tmp/reload"; mkdir -p "$d"
cronline() { printf '# anarchon: name=%s\n* * * * * * * echo "$ANARCHON_JOB $ANARCHON_SLOT" >> %s/ran\n' "$1" "$d"; }
{ cronline keep; cronline gone; } > "$d/crontab"
rpids=()
for i in 1 2; do
	"$A" cron --store "sqlite://$d/s.db" "$d/crontab" 2> "$d/log.$i" &
	rpids+=($!)
done
wait_for 20 "reload: 2 daemons running" bash -c "[ \$(cat $d/log.* | grep -c '2 jobs from the crontab; running') -eq 2 ]" || true
# The scenario: the first crontab runs 3 s.
sleep 3
{ cronline keep; cronline new; } > "$d/crontab.next" && mv "$d/crontab.next" "$d/crontab"
hup1=$(date +%s%3N)
kill -HUP "${rpids[0]}"
# The scenario: one daemon reloaded, the other not yet, for a second.
sleep 1
kill -HUP "${rpids[1]}"
hup2=$(date +%s%3N)
wait_for 10 "reload: both daemons read the new file" bash -c "[ \$(cat $d/log.* | grep -c 'SIGHUP: 2 jobs from the crontab') -eq 2 ]" || true
# The scenario: the new crontab runs 3 s.
sleep 3
{ cronline keep; echo '61 * * * * echo bad'; } > "$d/crontab.next" && mv "$d/crontab.next" "$d/crontab"
bad=$(date +%s%3N)
kill -HUP "${rpids[@]}"
wait_for 10 "reload: both daemons refuse the bad file" bash -c "[ \$(cat $d/log.* | grep -c 'does not read (above); the 2 jobs read before go on') -eq 2 ]" || true
# The scenario: the last good crontab runs 3 s more.
sleep 3
stop=$(date +%s%3N)
kill -TERM "${rpids[@]}"
rc=0
for i in "${rpids[@]}"; do
	wait_for 20 "reload: the daemon $i exits after SIGTERM" bash -c "! kill -0 $i" || kill -KILL "$i"
	wait "$i" || rc=$?
done
same "reload: both daemons exit 0 after SIGTERM" 0 "$rc"
if grep -q "crontab:3: schedule field 1 (minute) '61'" "$d/log.1"; then
	ok "reload: the bad file's line is said with FILE:LINE"
else
	not_ok "reload: the bad file's line is said with FILE:LINE" "$(grep -v '^anarchon: [a-z]* at ' "$d/log.1" | tail -n 5)"
fi
res=$(python3 - "$d" "$hup1" "$hup2" "$bad" "$stop" <<'PY'
import sys, glob, re, datetime, collections
d, hup1, hup2, bad, stop = sys.argv[1], *map(int, sys.argv[2:])
ms = lambda w: int(datetime.datetime.strptime(w, '%Y-%m-%dT%H:%M:%SZ').replace(tzinfo=datetime.timezone.utc).timestamp()) * 1000
pat = re.compile(r'^anarchon: (\S+) at (\S+): (?!finished)(\S+)')
problems = []
claimed = set()
for f in sorted(glob.glob(d + '/log.*')):
    seen = collections.Counter()
    for line in open(f):
        m = pat.match(line)
        if m:
            seen[(m.group(1), ms(m.group(2)))] += 1
            if m.group(3) in ('won', 'running,', 'done,', 'running', 'done'):
                claimed.add((m.group(1), ms(m.group(2))))
    # One line per slot a daemon started, and every second of "keep" from
    # its first to its last: the reloads neither repeat nor skip a slot.
    twice = [k for k, n in seen.items() if n > 1]
    keep = sorted(s for j, s in seen if j == 'keep')
    gaps = [s for s in range(keep[0], keep[-1], 1000) if s not in keep] if keep else ['none']
    if twice: problems.append('%s: started twice %s' % (f[-5:], twice[:3]))
    if gaps: problems.append('%s: keep skipped %s' % (f[-5:], gaps[:3]))
    if not keep or keep[0] > hup1 - 1000 or keep[-1] < bad + 1000:
        problems.append('%s: keep ran %s..%s, not across both reloads' % (f[-5:], keep[:1], keep[-1:]))
    if any(j == 'gone' and s > hup2 + 1000 for j, s in seen):
        problems.append('%s: gone started after the reload' % f[-5:])
runs = collections.Counter()
for line in open(d + '/ran'):
    job, slot = line.split()
    runs[(job, int(slot))] += 1
double = [k for k, n in runs.items() if n > 1]
if double: problems.append('ran twice: %s' % double[:3])
if not any(j == 'new' for j, s in runs): problems.append('new never ran')
if not any(j == 'keep' and s > bad + 1000 for j, s in runs): problems.append('keep did not run after the bad file')
extra = [k for k in runs if k not in claimed]
if extra: problems.append('ran without a logged claim: %s' % extra[:3])
print(len(problems), '; '.join(problems) or 'none', sum(runs.values()))
PY
)
read -r nprob detail <<< "$res"
step "reload: problems: $detail"
same "reload: no slot started twice or skipped by a daemon across the reloads, none ran twice, the dropped job stopped, the added one ran, the bad file left the last good one running" 0 "${nprob:-x}"

# The reload's memory: a crontab with no slot due (2099), a scrape, SIGHUP
# with a good file and with a bad one, then SIGTERM, under valgrind.
d="$tmp/reload-vg"; mkdir -p "$d"
printf '# anarchon: name=later\n0 0 1 1 * * 2099 true\n' > "$d/crontab"
mport=$(free_port)
valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
	"$A" cron --store "sqlite://$d/s.db" --metrics-listen "127.0.0.1:$mport" "$d/crontab" 2> "$d/vg.log" &
vpid=$!
wait_for 60 "reload valgrind: the daemon runs" grep -q "from the crontab; running" "$d/vg.log" || true
wait_for 30 "reload valgrind: /metrics answers" scrape || true
printf 'A=1\n0 0 1 1 * * 2099 true\nB = "2"\n# anarchon: name=later2\n0 0 2 1 * * 2099 true\n' > "$d/crontab"
kill -HUP "$vpid"
wait_for 30 "reload valgrind: the good file read" grep -q "SIGHUP: 2 jobs" "$d/vg.log" || true
printf 'FOO=1\n61 * * * * x\n' > "$d/crontab"
kill -HUP "$vpid"
wait_for 30 "reload valgrind: the bad file refused" grep -q "does not read" "$d/vg.log" || true
kill -TERM "$vpid"
wait "$vpid"
rc=$?
same "reload valgrind: exit 0, no error or leak ($(grep -c '==' "$d/vg.log") valgrind lines)" 0 "$rc"
grep -q "SIGHUP: 2 jobs" "$d/vg.log" && grep -q "does not read" "$d/vg.log" ||
	not_ok "reload valgrind: the daemon under valgrind read the good file and refused the bad one" "$(tail -n 5 "$d/vg.log")"

# --- valgrind ------------------------------------------------------------
vg_ok "valgrind: cron --check on a good crontab" /dev/null "$A" cron --check "$tmp/good"
printf '# anarchon: nope=1\nFOO=1\n* * * * * echo ok\n* * * * * echo ok\n61 * * * * x\n' > "$tmp/vgbad"
vg_log="$tmp/vg.log"
valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
	"$A" cron --check "$tmp/vgbad" > /dev/null 2> "$vg_log"
rc=$?
same "valgrind: cron --check on a bad crontab: exit 78, no error or leak ($(grep -c '==' "$vg_log") valgrind lines)" \
	78 "$rc"

suite_end
