# plug.sh — part 4 of the pgcron suite (sourced by run.sh, after the other
# checks): the server dies (immediate stop, WAL recovery on restart) while a
# winner's command runs.  The committed claim survives the restart: the slot
# answers 'running' while the lease lives, then a retry (attempts = 2) takes
# it over and runs the command once.

call plug-a "$LONG -c anarchon.attempts=2" plug1 '@monthly' "SELECT pg_sleep(60)" 15000 > "$tmp/plug-a.out" &
plug_pid=$!
if wait_for 30 "SELECT count(*) = 1 FROM anarchon.runs WHERE job = 'plug1' AND state = 'running'"; then
	pg_as_server_user "$PG_BINDIR/pg_ctl" -D "$PG_DATA" -m immediate -w stop > /dev/null 2>&1
	wait "$plug_pid"
	if pg_as_server_user "$PG_BINDIR/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 start > /dev/null; then
		out=$(call plug-b "$LONG -c anarchon.attempts=2" plug1 '@monthly' "$CMD" 15000)
		check "plug: after a server crash and restart the claim is still there: running ($(run_of plug1))" \
			test "$out $(run_of plug1)" = "running 1:running"
		wait_for 40 "SELECT anarchon_check('plug1', anarchon_slot('@monthly')) = 'expired'" ||
			not_ok "plug: the dead winner's lease expires"
		out=$(call plug-c "$LONG -c anarchon.attempts=2" plug1 '@monthly' "$CMD" 15000)
		check "plug: after the lease a retry takes the run over and runs the command once" \
			test "$out $(run_of plug1) $(effects_of plug1) $(log_of plug1)" = \
			"won 2:succeeded 1:plug-c plug-b:running: plug-c:won:succeeded"
	else
		not_ok "plug: restart after the crash" "$(tail -n 20 "$PG_LOG")"
	fi
else
	not_ok "plug: the winner claimed its run" "$(cat "$tmp/plug-a.out")"
fi
