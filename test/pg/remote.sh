# remote.sh — claims from PostgreSQL decided in a real redis-server (sourced
# by run.sh when the Redis store is built).  The servers are started by this
# suite on free loopback ports and stopped at exit.
#
# pg_remote_redis: the wrapper end to end — a claim through a server, many
# processes contending through it, credentials from a user mapping, the
# cached connection reopened after ALTER SERVER, a refused password, a call
# cancelled while the store does not answer.
pg_remote_redis() {
	source "$TEST_ROOT/redis/server.sh"
	local pa pb slot q out pid start
	pa=$(free_port) && redis_start pg-a "$pa" || { not_ok "remote: start redis-server"; return; }
	pb=$(free_port) && redis_start pg-b "$pb" --requirepass 'p@ss:w/rd' || { not_ok "remote: start redis-server with a password"; return; }
	step "remote: redis-servers on 127.0.0.1:$pa and :$pb"
	slot=$(( ($(date +%s) + 600) * 1000 ))
	q() { psql -X -A -t -q -v ON_ERROR_STOP=1 "$@" 2>&1; }

	q -c "CREATE SERVER pg_redis FOREIGN DATA WRAPPER anarchon
			OPTIONS (url 'redis://127.0.0.1:$pa/0?strategy=lease&prefix=pgtest')" \
	  -c "CREATE ROLE anarchon_remote_app LOGIN" \
	  -c "GRANT USAGE ON FOREIGN SERVER pg_redis TO anarchon_remote_app" > /dev/null
	at_exit "psql -X -q -c 'DROP SERVER IF EXISTS pg_redis CASCADE' -c 'DROP ROLE IF EXISTS anarchon_remote_app' > /dev/null 2>&1"

	out=$(PGUSER=anarchon_remote_app PGOPTIONS="-c anarchon.store=pg_redis" q \
		-c "SELECT anarchon_claim('rjob', $slot::bigint, 'tok-1')" \
		-c "SELECT anarchon_claim('rjob', $slot::bigint, 'tok-2')" \
		-c "SELECT anarchon_check('rjob', $slot::bigint)" \
		-c "SELECT anarchon_heartbeat('rjob', $slot::bigint, 'tok-2')" \
		-c "SELECT anarchon_heartbeat('rjob', $slot::bigint, 'tok-1')" \
		-c "SELECT anarchon_finish('rjob', $slot::bigint, 'tok-1')" \
		-c "SELECT anarchon_check('rjob', $slot::bigint)" | tr '\n' ' ')
	check "remote: an ordinary role claims through the server (won running running f t t succeeded)" \
		test "$out" = "won running running f t t succeeded "
	check "remote: the run is in redis, not in anarchon.runs" bash -c \
		"redis-cli -p $pa --scan --pattern 'pgtest:*rjob*' | grep -q . &&
		 test \$(psql -X -A -t -q -c \"SELECT count(*) FROM anarchon.runs WHERE job = 'rjob'\") = 0"
	# A batch through the server: job by job, a bad name its own row.
	out=$(PGUSER=anarchon_remote_app PGOPTIONS="-c anarchon.store=pg_redis" q \
		-c "SELECT job, outcome FROM anarchon_claim_many(ARRAY['rm2', 'bad job', 'rm1'], $slot::bigint, 'tok-1')" \
		-c "SELECT job, outcome FROM anarchon_claim_many(ARRAY['rm1', 'rm2'], $slot::bigint, 'tok-2')" | tr '\n' ' ')
	check "remote: claim_many through the server (bad job an error row, rm1 rm2 won, then running)" \
		test "$out" = "bad job|error rm1|won rm2|won rm1|running rm2|running "
	check "remote: claim_many's runs are in redis, not in anarchon.runs" bash -c \
		"redis-cli -p $pa --scan --pattern 'pgtest:*rm1*' | grep -q . &&
		 test \$(psql -X -A -t -q -c \"SELECT count(*) FROM anarchon.runs WHERE job LIKE 'rm_'\") = 0"
	out=$(PGOPTIONS="-c anarchon.store=pg_redis" q -c "SELECT anarchon_prune()")
	check "remote: an operation the store lacks is refused by name" \
		bash -c "printf '%s' \"\$1\" | grep -q 'cannot prune runs'" _ "$out"

	PG_CONTENTION_REMOTE=1 pg_contention "remote contention" 16 2 100 \
		"-c anarchon.store=pg_redis -c anarchon.overlap=allow"

	# One session: a claim on server A, then the server is moved to B (which
	# wants a password, taken from the mapping) and the next claim reaches B.
	out=$(PGOPTIONS="-c anarchon.store=pg_redis" q \
		-c "SELECT anarchon_claim('moved', $slot::bigint, 'tok-1')" \
		-c "ALTER SERVER pg_redis OPTIONS (SET url 'redis://127.0.0.1:$pb/0?strategy=lease&prefix=pgtest')" \
		-c "CREATE USER MAPPING FOR PUBLIC SERVER pg_redis OPTIONS (password 'p@ss:w/rd')" \
		-c "SELECT anarchon_claim('moved', $slot::bigint, 'tok-2')" | tr '\n' ' ')
	check "remote: ALTER SERVER reopens the cached store on the new url, with the mapping's password" \
		test "$out" = "won won "
	check "remote: the second claim is in the new server" bash -c \
		"redis-cli -p $pb -a 'p@ss:w/rd' --no-auth-warning --scan --pattern 'pgtest:*moved*' | grep -q ."
	q -c "ALTER USER MAPPING FOR PUBLIC SERVER pg_redis OPTIONS (SET password 'wrong-secret')" > /dev/null
	out=$(PGOPTIONS="-c anarchon.store=pg_redis" psql -X -A -t -q -v VERBOSITY=verbose \
		-c "SELECT anarchon_claim('moved', $slot::bigint, 'tok-3')" 2>&1)
	check "remote: a refused password is an error that does not repeat it" bash -c \
		"printf '%s' \"\$1\" | grep -q ERROR && ! printf '%s' \"\$1\" | grep -q wrong-secret" _ "$out"
	q -c "ALTER USER MAPPING FOR PUBLIC SERVER pg_redis OPTIONS (SET password 'p@ss:w/rd')" > /dev/null

	# A store that stops answering: the call stays cancellable.
	# frozen_at PATTERN: the session anarchon_frozen runs a query like PATTERN.
	frozen_at() {
		[ "$(q -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'anarchon_frozen'
			AND state = 'active' AND query LIKE '$1'")" = 1 ]
	}
	# frozen_waits: that session waits in the extension's wait event.
	frozen_waits() {
		ev=$(q -c "SELECT wait_event_type || ':' || wait_event FROM pg_stat_activity WHERE application_name = 'anarchon_frozen'")
		[ "$ev" = "Extension:Extension" ]
	}
	q -c "ALTER SERVER pg_redis OPTIONS (SET url 'redis://127.0.0.1:$pa/0?strategy=lease&prefix=pgtest&timeout_ms=60000')" > /dev/null
	q -c "DROP USER MAPPING FOR PUBLIC SERVER pg_redis" > /dev/null
	PGAPPNAME=anarchon_frozen PGOPTIONS="-c anarchon.store=pg_redis" psql -X -A -t -q \
		-c "SELECT anarchon_check('rjob', $slot::bigint)" \
		-c "SELECT pg_sleep(1)" \
		-c "SELECT anarchon_claim('frozen', $slot::bigint, 'tok-1')" > "$TEST_TMP/frozen.out" 2>&1 &
	pid=$!
	# Each step waits for the session to get there: a loaded machine can take
	# seconds to start psql, and a cancel sent too early would find no claim.
	wait_for 30 "remote: the frozen-store session reaches its pg_sleep" frozen_at "SELECT pg_sleep%"
	kill -STOP "$(redis_pid pg-a)"
	wait_for 30 "remote: the frozen-store session sends its claim" frozen_at "%anarchon_claim(''frozen''%"
	wait_for 10 "remote: a claim waiting on a frozen store shows as a wait event in pg_stat_activity (Extension:Extension)" frozen_waits &&
		ok "remote: a claim waiting on a frozen store shows as a wait event in pg_stat_activity ($ev)"
	start=$(date +%s)
	q -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'anarchon_frozen'" > /dev/null
	# Until the session ends (10 s at most: the check below says if it did not).
	for _ in $(seq 1 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
	kill -CONT "$(redis_pid pg-a)"
	check "remote: a claim waiting on a frozen store ends at pg_cancel_backend" bash -c \
		"! kill -0 $pid 2> /dev/null && test \$(( \$(date +%s) - $start )) -lt 10 &&
		 grep -q 'canceling statement due to user request' '$TEST_TMP/frozen.out'"
	kill "$pid" 2> /dev/null
}
