#!/usr/bin/env bash
# demo.sh — `make demo`: four instances of one application share a schedule
# ("nightly", every second) through one SQLite file, with no server.  Each
# claims every slot; the output shows, slot by slot, who won and what the
# others were told.  One winner is killed with SIGKILL mid-run: after its
# lease runs out a backup takes the run over as attempt 2.
set -euo pipefail
cd "$(dirname "$0")/.."

bash test/deps.sh sqlite
make -s sqlite test/bin/claimer

dir=$(mktemp -d "${TMPDIR:-/tmp}/anarchon-demo.XXXXXX")
trap 'rm -rf "$dir"' EXIT
sqlite3 "$dir/app.db" "PRAGMA journal_mode=wal;" > /dev/null

seconds=10
echo "anarchon demo: 4 instances, job 'nightly' every 1 s, for $seconds s, on $dir/app.db"
echo "settings: lease_ms=600 attempts=2 overlap=allow; app-2 dies (SIGKILL) in the middle of its second run"
echo

export ANARCHON_LEASE_MS=600 ANARCHON_ATTEMPTS=2 ANARCHON_OVERLAP=allow
pids=()
for i in 1 2 3 4; do
	crash=""
	[ "$i" = 2 ] && crash=crash
	test/bin/claimer demo "$dir/app.db" "app-$i" "$seconds" 1000 $crash > "$dir/app-$i.log" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done

# Lines are "SLOT NAME OUTCOME [ATTEMPT]"; one row per slot, winners first.
cat "$dir"/app-*.log | sort -s -n -k1,1 | awk '
	function hms(ms,  t) { t = int(ms / 1000) % 86400; return sprintf("%02d:%02d:%02d", t / 3600, (t / 60) % 60, t % 60) }
	$1 != last { order[++n] = $1; last = $1 }
	$3 == "won" { wins[$1 " " $4]++; winner[$1 " " $4] = $2; if ($4 > top[$1]) top[$1] = $4; if ($4 > 1) takeovers++; next }
	$3 == "killed" { killed[$1] = $2; next }
	NF >= 3 { told[$1] = told[$1] sprintf("  %s: %s", $2, $3) }
	END {
		printf "%-9s %s\n", "slot", "winner | what the others were told"
		for (i = 1; i <= n; i++) {
			s = order[i]; line = ""
			for (a = 1; a <= top[s]; a++) {
				w = winner[s " " a]
				line = line sprintf("  %s won (attempt %d)%s", w, a, a > 1 ? " <- took over" : "")
				if (killed[s] == w && a == 1) line = line ", KILLED mid-run;"
			}
			printf "%-9s%s |%s\n", hms(s), line, told[s]
		}
		bad = 0
		for (k in wins) if (wins[k] != 1) bad++
		printf "\n%d slots; %d attempts with more than one winner; %d takeover(s) after a kill\n", n, bad, takeovers
		exit bad != 0
	}'
echo
echo "the history (anarchon_runs), last 12 rows:"
sqlite3 -header -column "$dir/app.db" \
	"SELECT job, strftime('%H:%M:%S', slot / 1000, 'unixepoch') AS slot, attempt, substr(token, 1, 8) AS token, state
	 FROM anarchon_runs ORDER BY slot DESC LIMIT 12"
