#!/usr/bin/env bash
# sleeps.sh — every `sleep` left in the test scripts, for a reviewer to see.
#
#   bash test/sleeps.sh           list them all; exits 0
#   bash test/sleeps.sh --check   list only the unexplained ones; exits 1 if any
#
# A test that waits for a condition polls it with a deadline (wait_for in
# test/lib.sh); a sleep that stays is part of a scenario (a lease must run
# out, a fault lasts so long) or a poll's step, and says so.  Each line of the
# list is FILE:LINE, how the sleep is explained, and the line:
#
#   comment    a comment on its line or on the line above says why
#   poll       the step of a loop that tests its condition again: the sleep
#              is the loop's last command (the next line is `done`), or the
#              loop is on one line (while/until/for ... do ... sleep ... done)
#   allowed    on the allow-list below, with its reason
#   UNEXPLAINED  none of these: add a short comment saying why it sleeps
#
# A sleep is the command `sleep` followed by a number of seconds (a number, a
# quoted or computed value) in test/**/*.sh; lines that are comments are
# skipped, and so are pg_sleep, time.sleep and sleep_until.
cd "$(dirname "$0")/.." || exit 1

# The allow-list: FILE<TAB>TEXT OF THE LINE (trimmed)<TAB>why.  For lines that
# cannot carry a comment (the input of another program, not the shell's).
ALLOWED=$(printf '%s\t%s\t%s\n' \
	test/redis/checks/table.sh "sleep 2000" "rdrive's own command (milliseconds) in its input: the lease runs out" \
	test/redis/checks/table.sh "sleep 1000" "rdrive's own command (milliseconds) in its input: heartbeats 1 s apart" \
	test/redis/checks/table.sh "sleep 2500" "rdrive's own command (milliseconds) in its input: the lease runs out")

check=0
[ "${1:-}" = --check ] && check=1

# (This file is left out: its allow-list names sleeps, it runs none.)
find test -name '*.sh' -type f ! -path test/sleeps.sh | LC_ALL=C sort | xargs awk -v check="$check" -v allowed="$ALLOWED" '
	BEGIN {
		na = split(allowed, a, "\n")
		for (i = 1; i <= na; i++) { split(a[i], f, "\t"); allow[f[1] "\t" f[2]] = f[3] }
	}
	function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
	function judge(   i, how, key) {
		for (i = 1; i <= n; i++) {
			if (L[i] ~ /^[ \t]*#/) continue
			if (L[i] !~ /(^|[^A-Za-z0-9_.])sleep[ \t]+[0-9"$(]/) continue
			key = F "\t" trim(L[i])
			if (L[i] ~ /sleep[ \t]+[^#]*[ \t]#/ || (i > 1 && L[i - 1] ~ /^[ \t]*#/)) how = "comment"
			else if (L[i + 1] ~ /^[ \t]*done([ \t;|&<>)]|$)/ || L[i] ~ /(while|until|for)[ \t].*do[ \t].*sleep.*done/ ||
				L[i] ~ /sleep[^;]*;[ \t]*done/) how = "poll"
			else if (key in allow) how = "allowed: " allow[key]
			else { how = "UNEXPLAINED"; bad++ }
			if (!check || how == "UNEXPLAINED") printf "%s:%d: %s: %s\n", F, i, how, trim(L[i])
		}
		n = 0
	}
	FNR == 1 && NR > 1 { judge() }
	{ F = FILENAME; L[++n] = $0; L[n + 1] = "" }
	END {
		judge()
		if (check && bad) { printf "%d sleeps without a comment saying why (bash test/sleeps.sh lists them all)\n", bad; exit 1 }
	}' || exit 1
