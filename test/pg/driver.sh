# driver.sh — anarchon_claim through psycopg2 in its default mode, where the
# driver opens a transaction itself (test/pg/driver.py): many processes,
# each claiming in such a transaction and then committing, rolling back or
# closing without committing, followed by a competing claim in autocommit.
# Sourced by run.sh after pg_start and CREATE EXTENSION.
#
# pg_driver_check PROCS SLOTS
pg_driver_check() {
	local procs=$1 slots=$2 dir first verdict stored
	dir=$(t_tmpdir)
	first=$(( ($(date +%s) + 600) * 1000 ))
	if ! /usr/bin/python3 "$TEST_ROOT/pg/driver.py" "$procs" "$slots" "$first" > "$dir/out" 2> "$dir/err"; then
		not_ok "psycopg2: $procs processes ran" "$(tail -n 5 "$dir/err")"
		return
	fi
	# Each line of the verdict starts with the mode it is about, default or
	# optin: each mode is one check.
	verdict=$(awk -v procs=$procs -v slots=$slots '
		function mode(job) { return job ~ /^optin-/ ? "optin" : "default" }
		{ k = $1 " " $2; n[k]++ }
		# Without the opt-in, a claim in the driver'"'"'s transaction is refused with 25001.
		$1 !~ /^optin-/ && $3 == "first" && $4 " " $5 != "error 25001" { print "default not refused: " $0 }
		$1 !~ /^optin-/ && $4 == "won" { w[k]++ }
		# With it, a won counts when it was committed: by commit, or in autocommit.
		$1 ~ /^optin-/ && $4 == "won" && ($1 == "optin-commit" || $3 == "second") { w[k]++ }
		$4 != "won" && $4 != "running" && $4 " " $5 != "error 25001" { print mode($1) " unexpected: " $0 }
		END {
			for (k in n) {
				m = mode(k); total[m]++
				if (n[k] != 2 * procs) short[m]++
				if (w[k] != 1) print m " " w[k] + 0 " committed winners of " k
			}
			# Three endings per mode (commit, rollback, close), SLOTS slots each.
			split("default optin", ms, " ")
			for (i = 1; i <= 2; i++) {
				m = ms[i]
				if (total[m] != 3 * slots) print m " slots answered: " total[m] + 0 " of " 3 * slots
				if (short[m]) print m " " short[m] " slots without both answers of every process"
			}
		}' "$dir/out")
	# verdict_ok NAME MODE: ok when the verdict holds nothing about MODE.
	verdict_ok() {
		local bad
		bad=$(printf '%s\n' "$verdict" | sed -n "s/^$2 //p")
		if [ -z "$bad" ]; then ok "$1"; else not_ok "$1" "$(printf '%s\n' "$bad" | sort | uniq -c | head -n 8)"; fi
	}
	verdict_ok "psycopg2 default mode: a claim in the driver's transaction is refused (25001); commit, rollback or close, then a competing autocommit claim: exactly one winner per slot ($procs processes x $slots slots x 3)" default
	verdict_ok "psycopg2 with SET LOCAL anarchon.in_transaction: commit, rollback or close, then a competing claim: exactly one committed winner per slot ($procs processes x $slots slots x 3)" optin
	# The job's work committed with its claim: one row per slot, by the token the run names.
	stored=$(psql -X -A -t -q -c "SELECT count(*) FILTER (WHERE w.n = 1 AND w.token = r.token) || ' ' || count(*)
		FROM (SELECT job, slot, count(*) AS n, min(token) AS token FROM driver_work GROUP BY 1, 2) w
		JOIN anarchon.runs r ON r.job = w.job AND r.slot = to_timestamp(w.slot / 1000.0)")
	check "psycopg2: the job's work committed once per slot, by the run's winner ($stored)" \
		test "$stored" = "$((6 * slots)) $((6 * slots))"
}
