# valgrind.sh — the command under valgrind: no invalid access, no definite
# leak, and the exit status it should have.
#
#   run   won (with heartbeats: a 6 s lease and a 2.5 s command: valgrind slows every renewal, and a renewal that comes too late stops the command) and not
#         this host's, on SQLite and on Redis; a command not found; a store
#         that cannot be reached
#   claim, check, heartbeat, finish, slots (CRON_TZ), missed
#
#   cli_valgrind REDIS_URL

# vg NAME WANT_RC ARGS...: anarchon ARGS under valgrind exits WANT_RC, its log empty.
vg() { an_valgrind "cli valgrind" "$CLI_TMP/vg" "$@"; }

cli_valgrind() {
	local redis=$1 S slot t
	have_valgrind "cli valgrind" || return
	mkdir -p "$CLI_TMP/vg"
	S=sqlite://$CLI_TMP/vg/runs.db
	slot=$(( $(date +%s) * 1000 ))
	t=$("$AN" token)
	for u in "$S" "$redis"; do
		local k=sqlite
		[ "$u" = "$S" ] || k=redis
		# The command works 2.5 s, so that heartbeats are sent meanwhile.
		vg "run $k, won, heartbeats" 0 run --store "$u" --job vg-run --slot "$slot" --lease_ms 6000 -- sh -c 'sleep 2.5'
		vg "run $k, not this host's" 0 run --store "$u" --job vg-run --slot "$slot" -- true
		vg "run $k, the command's own status" 7 run --store "$u" --job vg-seven --slot "$slot" -- sh -c 'exit 7'
		vg "claim $k" 0 claim --store "$u" --job vg-claim --slot "$slot" --token "$t"
		vg "heartbeat $k" 0 heartbeat --store "$u" --job vg-claim --slot "$slot" --token "$t"
		vg "check $k" 0 check --store "$u" --job vg-claim --slot "$slot"
		vg "finish $k" 0 finish --store "$u" --job vg-claim --slot "$slot" --token "$t"
	done
	vg "missed sqlite" 0 missed --store "$S" --job vg-claim --schedule '* * * * * *' --from $((slot - 5000)) --to $((slot - 2000)) --max_late_ms 1000
	vg "slots" 0 slots --schedule 'CRON_TZ=Europe/Berlin 30 2 * * *' --from 2024-03-28T00:00:00Z --to 2024-04-03T00:00:00Z
	vg "run, a command not found" 127 run --store "$S" --job vg-x --slot "$slot" -- /no/such/command
	vg "run, a store that cannot be reached" 75 run --store "redis://127.0.0.1:$(free_port)" --job vg-x --slot "$slot" -- true
	vg "run, a bad URL" 64 run --store "$redis&strategy=bogus" --job vg-x --slot "$slot" -- true
	vg "token" 0 token
}
