# takeover.sh — a winner killed with SIGKILL mid-run; backups watch the run
# with anarchon_check and claim it when the lease runs out.
# Sourced by test/sqlite/run.sh (uses $tmp and test/lib.sh).

# takeover ATTEMPTS: prints nothing; records ok/not ok lines.
takeover() {
	local attempts=$1 dir=$tmp/takeover-$1 slot holder old i pids=()
	mkdir -p "$dir"
	sqlite3 "$dir/db" "PRAGMA journal_mode=wal;" > /dev/null
	slot=$(( $(date +%s) * 1000 ))
	export ANARCHON_ATTEMPTS=$attempts ANARCHON_LEASE_MS=400

	test/bin/claimer hold "$dir/db" nightly "$slot" > "$dir/hold.out" 2>&1 &
	holder=$!
	for i in $(seq 1 100); do grep -q . "$dir/hold.out" && break; sleep 0.05; done
	old=$(awk '$1 == "won" { print $2 }' "$dir/hold.out")
	for i in 1 2 3 4 5 6; do
		test/bin/claimer backup "$dir/db" nightly "$slot" > "$dir/backup-$i.out" 2>&1 &
		pids+=($!)
	done
	kill -9 "$holder"
	wait "$holder" 2> /dev/null
	for p in "${pids[@]}"; do wait "$p"; done
	unset ANARCHON_ATTEMPTS ANARCHON_LEASE_MS

	if [ -z "$old" ]; then
		not_ok "sqlite takeover (attempts=$attempts): the first runner won" "$(cat "$dir/hold.out")"
		return
	fi
	local answers row fenced
	answers=$(cat "$dir"/backup-*.out | awk '{ print $1, $2 }' | sort | uniq -c | awk '{ print $2 "/" $3 "x" $1 }' | tr '\n' ' ')
	row=$(sqlite3 "$dir/db" "SELECT attempt, state, token = '$old' FROM anarchon_runs")
	fenced=$(sqlite3 "$dir/db" ".load ./sqlite/anarchon" \
		"SELECT anarchon_heartbeat('nightly', $slot, '$old'), anarchon_finish('nightly', $slot, '$old')")
	if [ "$attempts" -ge 2 ]; then
		# One backup wins attempt 2 (and finishes it); the others are told the
		# run is done (claim) or see it succeeded (check), whichever came first.
		local won others
		won=$(cat "$dir"/backup-*.out | grep -c '^won 2 ')
		others=$(cat "$dir"/backup-*.out | grep -v '^won 2 ' | grep -cv -e '^done ' -e '^succeeded ')
		if [ "$won" = 1 ] && [ "$others" = 0 ] && [ "$row" = "2|succeeded|0" ]; then
			ok "sqlite takeover (attempts=$attempts): exactly one backup wins attempt 2 after the lease"
		else
			not_ok "sqlite takeover (attempts=$attempts): exactly one backup wins attempt 2 after the lease" \
				"backups: $answers" "run: $row"
		fi
	else
		# No attempt left: the run ends interrupted, nobody wins it again.
		if ! grep -q '^won' "$dir"/backup-*.out && [ "$row" = "1|interrupted|1" ]; then
			ok "sqlite takeover (attempts=$attempts): the dead run ends interrupted, no second winner"
		else
			not_ok "sqlite takeover (attempts=$attempts): the dead run ends interrupted, no second winner" \
				"backups: $answers" "run: $row"
		fi
	fi
	if [ "$fenced" = "0|0" ]; then
		ok "sqlite takeover (attempts=$attempts): the dead attempt's token is fenced"
	else
		not_ok "sqlite takeover (attempts=$attempts): the dead attempt's token is fenced" "heartbeat|finish = $fenced"
	fi
}

takeover 2
takeover 1
