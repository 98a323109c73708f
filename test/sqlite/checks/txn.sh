# txn.sh — claims from inside the callers' own transactions, with Python's
# sqlite3 in its default mode (test/sqlite/txn_driver.py): BEGIN, claim, then
# commit, roll back or close without committing, and a competing claim from
# another connection.  The claim commits on the claim connection before it
# answers, so a rollback never takes a `won` back: exactly one winner per
# slot.  A claim inside a write transaction is refused, and the caller's
# transaction and its work survive.
# Sourced by test/sqlite/run.sh (uses $tmp and test/lib.sh).

txn_driver() {
	local dir=$tmp/txn procs=8 slots=40 verdict
	mkdir -p "$dir"
	sqlite3 "$dir/db" "PRAGMA journal_mode=WAL;" > /dev/null
	if ! /usr/bin/python3 "$REPO_ROOT/test/sqlite/txn_driver.py" "$dir/db" ./sqlite/anarchon \
		$procs $slots $(( ($(date +%s) + 3600) * 1000 )) > "$dir/out" 2> "$dir/err"; then
		not_ok "sqlite caller transactions: $procs Python processes ran" "$(tail -n 5 "$dir/err")"
		return
	fi
	verdict=$(awk -v procs=$procs -v slots=$slots '
		/^write-txn:/ { wt = $0; next }
		{ k = $1 " " $2; n[k]++; if ($4 == "won") w[k]++; else if ($4 != "running") print "unexpected: " $0 }
		END {
			for (k in n) { total++; if (n[k] != 2 * procs) short++; if (w[k] != 1) print w[k] + 0 " winners of " k }
			if (total != 3 * slots) print "slots answered: " total " of " 3 * slots
			if (short) print short " slots without both answers of every process"
			if (wt != "write-txn: refused (True), transaction still open True, insert kept 1") print wt
		}' "$dir/out")
	if [ -z "$verdict" ]; then
		ok "sqlite caller transactions: commit, rollback or close after a claim in BEGIN, then a competing claim: exactly one winner per slot ($procs processes x $slots slots x 3)"
	else
		not_ok "sqlite caller transactions: exactly one winner per slot whatever the caller's transaction does" \
			"$(printf '%s' "$verdict" | sort | uniq -c | head -n 8)"
	fi
}

txn_driver
