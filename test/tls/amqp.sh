# amqp.sh — the RabbitMQ store over TLS (amqps://), sourced at the end of
# test/tls/run.sh, with its certificates in $c.
#
# One RabbitMQ node (test/amqp/server.sh) with a plaintext listener and a
# TLS listener (server.crt, client certificates verified against ca.crt when
# given, EXTERNAL login by the certificate's CN): claims verified by address
# and by name, 16 processes contending through SQLite and through
# PostgreSQL, mutual TLS, EXTERNAL, the refusals (wrong CA, an expired
# client certificate, a wrong host name, each port with the other's
# scheme, a missing or unreadable key, a wrong password, TLS parameters on
# amqp://), a fork after use, a timeout and a PostgreSQL cancel during a
# handshake that never ends, and a session under valgrind.
source test/amqp/mq.sh
source test/amqp/server.sh

amqps_run() {
	local tp U UA S out d f mode secret=Sup3r-s3cret-pw
	tp=$(free_port) || { not_ok "amqps: a free port for the TLS listener"; return; }
	mq_build || return
	if ! RMQ_PLUGINS=rabbitmq_auth_mechanism_ssl rmq_start "$tmp/rmq" \
		"listeners.ssl.default = 127.0.0.1:$tp" \
		"ssl_options.cacertfile = $c/ca.crt" \
		"ssl_options.certfile = $c/server.crt" \
		"ssl_options.keyfile = $c/server.key" \
		"ssl_options.verify = verify_peer" \
		"ssl_options.fail_if_no_peer_cert = false" \
		"auth_mechanisms.1 = PLAIN" \
		"auth_mechanisms.2 = AMQPLAIN" \
		"auth_mechanisms.3 = EXTERNAL" \
		"ssl_cert_login_from = common_name" || ! wait_port "$tp" 30; then
		not_ok "amqps: start RabbitMQ with a TLS listener" "$(tail -n 20 "$tmp/rmq/server.out" 2>/dev/null)"
		return
	fi
	step "amqps: RabbitMQ node $RMQ_NODE, plaintext on $RMQ_PORT, TLS on $tp"
	rmq_ctl -q add_user anarchon-client "$secret" > /dev/null 2>&1
	rmq_ctl -q set_permissions -p / anarchon-client '.*' '.*' '.*' > /dev/null 2>&1
	rmq_ctl -q add_user app "$secret" > /dev/null 2>&1
	rmq_ctl -q set_permissions -p / app '.*' '.*' '.*' > /dev/null 2>&1

	U="amqps://app:$secret@127.0.0.1:$tp/?ca=$c/ca.crt"
	UA="$U&durability=accept-loss"
	S=$(mq_slot_now)
	expect "amqps: claims verified by IP address against ca=: won, then lost" "won
lost" sh -c "printf '%s\n' 'claim tj $S a' 'claim tj $S b' | '$DRV' '$UA' session"
	expect "amqps: ... verified by host name (localhost)" won \
		drv "amqps://app:$secret@localhost:$tp/?ca=$c/ca.crt&durability=accept-loss" claim tj $((S + 1000)) a
	expect "amqps: a won claim settles over TLS as in plaintext (the default durability)" won drv "$U" claim tjs "$S" a
	expect "amqps: servername=localhost verifies that name while connecting by address" won \
		drv "$UA&servername=localhost" claim tj $((S + 2000)) a

	# 16 processes x 300 slots, each its own connection, through the SQLite extension.
	mq_sqlite_contend amqps "$UA"

	# Mutual TLS and EXTERNAL.
	expect "amqps: mutual TLS: the client certificate with a user and password" won \
		drv "$UA&cert=$c/client.crt&key=$c/client.key" claim tm "$S" a
	expect "amqps: EXTERNAL: the client certificate's CN (anarchon-client) is the user, no password" won \
		drv "amqps://127.0.0.1:$tp/?ca=$c/ca.crt&cert=$c/client.crt&key=$c/client.key&auth_mechanism=external&durability=accept-loss" \
		claim tx "$S" a
	expect_match "amqps: EXTERNAL with a certificate whose CN is no user (localhost) is refused, with a hint" \
		'RabbitMQ at amqps://127.0.0.1:[0-9]+/ refused the login with the client certificate .*user of that name' \
		sq "amqps://127.0.0.1:$tp/?ca=$c/ca.crt&cert=$c/server.crt&key=$c/server.key&auth_mechanism=external" "SELECT anarchon_claim('tx', $S, 'b');"
	expect_match "amqps: EXTERNAL without a client certificate is refused before connecting" \
		'^error config: store URL parameter auth_mechanism=external logs in with a client certificate: it needs amqps:// with cert and key' \
		drv "amqps://127.0.0.1:$tp/?ca=$c/ca.crt&auth_mechanism=external" validate
	expect_match "amqps: EXTERNAL with a password too is refused (it would not be used)" \
		'^error config: store URL parameter auth_mechanism=external takes the user from the client certificate' \
		drv "amqps://app:$secret@127.0.0.1:$tp/?ca=$c/ca.crt&cert=$c/client.crt&key=$c/client.key&auth_mechanism=external" validate
	expect_match "amqps: another auth_mechanism is refused, naming both" 'auth_mechanism must be plain \(the default\) or external' \
		drv "$U&auth_mechanism=amqplain" validate

	# Refusals, each with what went wrong and never the password.
	# Through the SQLite extension, whose error text has the message, detail and hint.
	refused() {
		local name=$1 re=$2 url=$3
		out=$(sq "$url" "SELECT anarchon_claim('tr', $S, 'a');")
		if grep -Eq -- "$re" <<< "$out" && ! grep -Eq "$secret|Wr0ng-pw" <<< "$out"; then ok "amqps: $name"
		else not_ok "amqps: $name" "expected to match: $re" "got: $out"; fi
	}
	refused "a wrong CA is refused" 'certificate was refused: (unable to get local issuer certificate|self-signed certificate in certificate chain)' \
		"amqps://app:$secret@127.0.0.1:$tp/?ca=$c/wrongca.crt"
	refused "the system's CAs do not know the test CA" 'certificate was refused: (unable to get local issuer certificate|self-signed certificate in certificate chain)' \
		"amqps://app:$secret@127.0.0.1:$tp/"
	refused "a wrong host name is refused (servername=other.example)" 'certificate was refused: [Hh]ostname mismatch' \
		"$U&servername=other.example"
	# In TLS 1.3 the broker judges the client's certificate after the
	# handshake: its alert or, when the connection is reset first, the hint.
	refused "an expired client certificate is refused by the broker (its alert, or the hint to check cert)" 'certificate expired|may have refused this one' \
		"$U&cert=$c/expired.crt&key=$c/server.key"
	refused "a client certificate of another CA is refused by the broker, and the hint says to check it" 'unknown ca|may have refused this one' \
		"$U&cert=$c/wrongca.crt&key=$c/wrongca.key"
	refused "amqps:// to the plaintext port: the handshake fails, and the hint asks for the TLS port" \
		'wrong version number.*is the port a TLS port' "amqps://app:$secret@127.0.0.1:$RMQ_PORT/?ca=$c/ca.crt&timeout_ms=5000"
	refused "amqp:// to the TLS port: refused, and the hint asks for amqps://" 'answered in TLS, not in plain AMQP.*Use amqps://' \
		"amqp://app:$secret@127.0.0.1:$tp/?timeout_ms=5000"
	refused "a missing key file names the file and the reason" 'the key file "/nonexistent/client.key" cannot be used: No such file' \
		"$U&cert=$c/client.crt&key=/nonexistent/client.key"
	refused "a key that is not the certificate's is refused" 'the key file ".*/server.key" cannot be used' \
		"$U&cert=$c/client.crt&key=$c/server.key"
	refused "a wrong password over TLS is refused, without showing it" 'wrong user name or password' \
		"amqps://app:Wr0ng-pw@127.0.0.1:$tp/?ca=$c/ca.crt"
	refused "a TLS parameter on amqp:// is refused, naming amqps://" \
		'store URL parameter ca is a TLS parameter, and this URL does not use TLS: use amqps://' \
		"amqp://app:$secret@127.0.0.1:$RMQ_PORT/?ca=$c/ca.crt"
	expect "amqps: insecure_skip_verify=true takes a wrong CA (tests only)" won \
		drv "amqps://app:$secret@127.0.0.1:$tp/?ca=$c/wrongca.crt&insecure_skip_verify=true&durability=accept-loss" claim tj $((S + 3000)) a
	expect "amqps: the plaintext listener still answers amqp://" won \
		drv "amqp://app:$secret@127.0.0.1:$RMQ_PORT/?durability=accept-loss" claim tj $((S + 4000)) a

	# A handshake that never ends: bounded by timeout_ms.
	within "amqps: a listener that never answers the handshake: the claim ends within timeout_ms (1 s) + 1.5 s" 2500 \
		drv "amqps://app:$secret@127.0.0.1:$PORT_frozen/?ca=$c/ca.crt&timeout_ms=1000" claim tf "$S" a
	expect_match "amqps: ... with a timeout error" '^error timeout: .*TLS handshake' echo "$MQ_OUT"

	# A prefork application: the parent claims over TLS, then 16 workers go on
	# with the parent's connection, or their own; one winner per slot.
	for mode in inherit own; do
		d=$tmp/amqps-fork-$mode
		mkdir -p "$d/w"
		S=$(mq_slot_now)
		/usr/bin/python3 test/fork/forker.py "$REPO_ROOT/sqlite/anarchon" "$UA&prefix=fork$mode" "$mode" fk "$S" 16 100 "$d/w" > "$d/parent" 2>&1
		for f in "$d"/w/*.out; do cut -d' ' -f1,2 "$f" > "$d/$(basename "$f")"; done
		mq_count_winners "amqps: fork after use over TLS, workers on the parent's connection or their own ($mode)" "$d" 16 100
		if [ "$(cat "$d/parent")" = "before won
parent won" ]; then ok "amqps: ... ($mode) the parent goes on with its own TLS connection"
		else not_ok "amqps: ... ($mode) the parent goes on with its own TLS connection" "$(cat "$d/parent")"; fi
	done

	# Under valgrind: a TLS session with mutual TLS, a refused certificate.
	# A handshake under valgrind on a loaded machine can take seconds: the
	# session's timeout_ms is 10 s, as a slow link's would be.
	if have_valgrind "amqps: valgrind"; then
		S=$(mq_slot_now)
		printf '%s\n' "claim vg $S a" "claim vg $S b" "check vg $S" > "$tmp/vg.in"
		: > "$MQ_TMP/vg.err"
		expect "amqps: valgrind: a mutual-TLS session, no leak and no error" "won
lost
running
rc=0" mq_vg "$UA&cert=$c/client.crt&key=$c/client.key&timeout_ms=10000" "$tmp/vg.in"
		printf '%s\n' "claim vg $S a" > "$tmp/vg2.in"
		expect_match "amqps: valgrind: a refused certificate, no leak and no error" '^rc=3$' \
			mq_vg "amqps://app:$secret@127.0.0.1:$tp/?ca=$c/wrongca.crt" "$tmp/vg2.in"
		if [ -s "$MQ_TMP/vg.err" ]; then not_ok "amqps: valgrind: its report is empty" "$(head -n 30 "$MQ_TMP/vg.err")"
		else ok "amqps: valgrind: its report is empty"; fi
	fi

	amqps_kept "$UA" "$tp"
	amqps_pg "$tp" "$secret"
}

# amqps_kept URL TLS_PORT: one session keeps one TLS connection from claim
# to claim; after a broker restart under it, the next claim finds it
# broken before publishing and connects again.  The session reads its commands from a fifo, so the
# broker can be looked at and restarted between them.
kept_answers() { [ "$(grep -c . "$1")" -ge "$2" ]; }
kept_tls_connections() { [ "$(rmq_ctl -q list_connections ssl 2> /dev/null | grep -c true)" = "$1" ]; }
amqps_kept() {
	local url=$1 tp=$2 S f=$tmp/kept.in out=$tmp/kept.out c1 c2 pid
	S=$(mq_slot_now)
	mkfifo "$f"
	# (timeout: a session left waiting must not hold up the suite)
	timeout 120 "$DRV" "$url" session < "$f" > "$out" 2>&1 &
	pid=$!
	exec 7> "$f"
	echo "claim kept $S a" >&7
	# The claim answered; then the broker lists its connection alone (a
	# connection of an earlier check may still be closing).
	wait_for 30 "amqps: the kept session's first claim is answered" kept_answers "$out" 1 &&
		wait_for 30 "amqps: the broker lists the kept session's one TLS connection" kept_tls_connections 1
	c1=$(rmq_ctl -q list_connections ssl peer_port user 2>/dev/null | grep -c 'true')
	echo "claim kept $((S + 1000)) a" >&7
	wait_for 30 "amqps: the kept session's second claim is answered" kept_answers "$out" 2
	c2=$(rmq_ctl -q list_connections ssl peer_port user 2>/dev/null | grep 'true')
	if [ "$c1" = 1 ] && [ "$(grep -c . <<< "$c2")" = 1 ]; then ok "amqps: a session keeps one TLS connection across claims"
	else not_ok "amqps: a session keeps one TLS connection across claims" "TLS connections after the first claim: $c1, after the second: $c2"; fi
	# 7>&-: the new broker must not hold the fifo open, or the session never sees its end.
	rmq_restart 7>&- > /dev/null 2>&1 && wait_port "$tp" 30
	echo "claim kept $((S + 2000)) a" >&7
	echo "claim kept $((S + 3000)) a" >&7
	exec 7>&-
	wait "$pid"
	expect "amqps: a broker restart under a kept TLS connection: the next claim connects again (once, before publishing) and wins" "won
won
won
won" cat "$out"
}

# amqps_pg TLS_PORT PASSWORD: the store over TLS through PostgreSQL.
amqps_pg() {
	local tp=$1 secret=$2 pgc S d i pids=() out t0 t1
	source "$TEST_ROOT/pg/host.sh"
	pg_host_start "amqps/pg" "$tmp" || return
	# The server's OS user reads the certificate files: a copy it owns.
	pgc=$(t_tmpdir)
	cp "$c/ca.crt" "$c/client.crt" "$c/client.key" "$pgc/"
	[ "$(id -u)" -eq 0 ] && chown -R "$(pg_as_server_user id -un)" "$pgc"
	pq() { psql -X -A -t -q -v ON_ERROR_STOP=0 "$@" 2>&1; }
	pq -c "CREATE EXTENSION anarchon" \
		-c "CREATE SERVER mqs FOREIGN DATA WRAPPER anarchon OPTIONS (url 'amqps://127.0.0.1:$tp/?ca=$pgc/ca.crt&durability=accept-loss')" \
		-c "CREATE USER MAPPING FOR PUBLIC SERVER mqs OPTIONS (user 'app', password '$secret')" \
		-c "CREATE SERVER mqx FOREIGN DATA WRAPPER anarchon OPTIONS (url 'amqps://127.0.0.1:$tp/?ca=$pgc/ca.crt&cert=$pgc/client.crt&key=$pgc/client.key&auth_mechanism=external&durability=accept-loss')" \
		-c "CREATE SERVER mqfrozen FOREIGN DATA WRAPPER anarchon OPTIONS (url 'amqps://127.0.0.1:$PORT_frozen/?ca=$pgc/ca.crt&timeout_ms=60000')" \
		-c "CREATE USER MAPPING FOR PUBLIC SERVER mqfrozen OPTIONS (user 'app', password '$secret')" > "$tmp/pg-setup.out"
	if [ -s "$tmp/pg-setup.out" ]; then not_ok "amqps/pg: create the foreign servers" "$(cat "$tmp/pg-setup.out")"; fi
	S=$(mq_slot_now)
	expect "amqps/pg: a foreign server with an amqps:// URL and a user mapping: won, lost" "won
lost" env PGOPTIONS="-c anarchon.store=mqs" psql -X -A -t -q -c "SELECT anarchon_claim('pgt', ${S}::bigint, 'tokA')" \
		-c "SELECT anarchon_claim('pgt', ${S}::bigint, 'tokB')"
	expect "amqps/pg: EXTERNAL with the client certificate, no user mapping" won \
		env PGOPTIONS="-c anarchon.store=mqx" psql -X -A -t -q -c "SELECT anarchon_claim('pgx', ${S}::bigint, 'tokA')"
	# The files are read when the server is created (the validator), as the server's OS user.
	out=$(pq -c "CREATE SERVER mqbadkey FOREIGN DATA WRAPPER anarchon OPTIONS (url 'amqps://127.0.0.1:$tp/?ca=$pgc/ca.crt&cert=$pgc/client.crt&key=$c/client.key')")
	if grep -q 'the key file ".*client.key" cannot be used: Permission denied' <<< "$out" ; then
		ok "amqps/pg: CREATE SERVER with a key file the server's OS user cannot read is refused, naming the file and the reason"
	else not_ok "amqps/pg: a key file the server's OS user cannot read is refused" "$out"; fi

	d=$tmp/pg-amqps-contend
	mkdir -p "$d"
	S=$(mq_slot_now)
	for i in $(seq 1 16); do
		PGOPTIONS="-c anarchon.store=mqs" pq -F ' ' -c "SELECT s, anarchon_claim('pgrace', s, anarchon_token()) FROM generate_series(${S}::bigint, $((S + 299000))::bigint, 1000) s" > "$d/$i.out" &
		pids+=($!)
	done
	wait "${pids[@]}"
	mq_count_winners "amqps/pg: contention through PostgreSQL over TLS" "$d" 16 300

	# A cancel during a handshake that never ends (timeout_ms is 60 s).
	t0=$(mq_now)
	out=$(PGOPTIONS="-c anarchon.store=mqfrozen" pq -c "SET statement_timeout = 500" -c "SELECT anarchon_claim('pgf', ${S}::bigint, 'tokA')")
	t1=$(mq_now)
	expect_match "amqps/pg: statement_timeout cancels a claim waiting in the TLS handshake" 'cancel' echo "$out"
	if [ $((t1 - t0)) -lt 2000 ]; then ok "amqps/pg: ... at once, not after timeout_ms (60 s): $((t1 - t0)) ms in all, 500 of them the timeout"
	else not_ok "amqps/pg: ... at once, not after timeout_ms (60 s)" "took $((t1 - t0)) ms" "$out"; fi
}

if [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ]; then
	amqps_run
else
	not_ok "amqps: RabbitMQ is not installed (bash test/deps.sh installs it)"
fi
