# nats.sh — the NATS store over TLS and with every kind of login, against
# real nats-server processes (sourced at the end of run.sh, which made the
# certificates in $c, the nkeys and JWTs in $nk, and the openssl s_server and
# python listeners on PORT_expired, PORT_plain and PORT_frozen).
#
#   tls      TLS (server.crt), JetStream, no login: tls:// verified against
#            ca=, nats:// upgraded because the server requires TLS, the
#            refusals of a wrong CA, a wrong name, a missing ca file; 16
#            processes x 300 slots through SQLite and through PostgreSQL;
#            fork after use; valgrind
#   mtls     verify: true, client certificate (cert=, key=) or refused
#   auth     TLS; users by password and by nkey (nkey=)
#   op       TLS; operator mode, an account by JWT, the user's creds file
#   plain    no TLS, a token: tls:// and handshake-first refused there
#   first    handshake_first (nats-server 2.10.4 and later only)
#
# Every refusal must name what was refused, and no output may hold a
# password, a token or a seed.
source test/amqp/mq.sh
source test/nats/server.sh

nt=$tmp/nats-tls
mkdir -p "$nt"
if ! mq_build; then
	return 0
fi

PW='s3cret-Pw_9'
TOK='t0ken-Secret_7'
SEED=$(cat "$nk/user.seed")
CREDS_SEED=$(sed -n '/BEGIN USER NKEY SEED/{n;p}' "$nk/user.creds")

# nt_conf NAME TLS_BLOCK REST: a JetStream server's configuration on a free port: NT_PORT_<NAME>.
nt_server() {
	local name=$1 tls=$2 rest=$3 port
	port=$(free_port) || return 1
	printf 'listen: 127.0.0.1:%s\njetstream { store_dir: "%s" }\n%s\n%s\n' "$port" "$nt/$name.js" "$tls" "$rest" > "$nt/$name.conf"
	NATS_PORT[$name]=$port
	NATS_ARGS[$name]="-c $nt/$name.conf"
	at_exit "nats_stop $name"
	nats-server -c "$nt/$name.conf" > "$nt/$name.log" 2>&1 &
	NATS_PID[$name]=$!
	disown "${NATS_PID[$name]}"
	wait_port "$port" 20 || { not_ok "nats/tls: start nats-server $name" "$(tail -n 5 "$nt/$name.log")"; return 1; }
	printf -v "NT_PORT_$name" '%s' "$port"
}
# The server gives a client 10 s for its handshake (its default is 0.5 s, and 2 s
# was too little under valgrind on a loaded machine).
tlsblock="tls { cert_file: \"$c/server.crt\", key_file: \"$c/server.key\", timeout: 10 }"
mtlsblock="tls { cert_file: \"$c/server.crt\", key_file: \"$c/server.key\", ca_file: \"$c/ca.crt\", verify: true, timeout: 10 }"
nt_server tls "$tlsblock" ""
nt_server mtls "$mtlsblock" ""
nt_server auth "$tlsblock" "authorization { users = [ { user: alice, password: \"$PW\" }, { nkey: $(cat "$nk/user.pub") } ] }"
# Operator mode with JetStream needs a system account: keys of its own here.
opd=$nt/opjs
mkdir -p "$opd"
python3 -c "import sys; sys.path.insert(0, '$here'); import nkeygen; nkeygen.operator_setup('$opd', system=True)" ||
	not_ok "nats/tls: make an operator, a system account, an account and a user"
OPJS_SEED=$(sed -n '/BEGIN USER NKEY SEED/{n;p}' "$opd/user.creds")
nt_server op "$tlsblock" "operator: $(cat "$opd/operator.jwt")
system_account: $(cat "$opd/sys.pub")
resolver: MEMORY
resolver_preload: { $(cat "$opd/account.pub"): $(cat "$opd/account.jwt"), $(cat "$opd/sys.pub"): $(cat "$opd/sys.jwt") }"
nt_server plain "" "authorization { token: \"$TOK\" }"

# A server that says it requires TLS and then never answers the handshake.
NT_PORT_frozen2=$(free_port)
python3 - "$NT_PORT_frozen2" > "$nt/frozen2.log" 2>&1 <<'PY' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
held = []
while True:
    c, _ = s.accept(); c.sendall(b'INFO {"headers":true,"tls_required":true}\r\n'); held.append(c)
PY
at_exit "kill $! 2> /dev/null"
wait_port "$NT_PORT_frozen2" 20 || not_ok "nats/tls: start the listener that freezes after INFO"

CA="ca=$c/ca.crt"
T="tls://127.0.0.1:$NT_PORT_tls?$CA"
S=$(mq_slot_now)

# nt_secret_free NAME OUTPUT: ok when OUTPUT holds no password, token or seed.
nt_secret_free() {
	if grep -qF -e "$PW" -e "$TOK" -e "$SEED" -e "$CREDS_SEED" -e "$OPJS_SEED" <<< "$2"; then not_ok "$1: no secret in the message" "$2"
	else ok "$1: no secret in the message"; fi
}
# nt_refused NAME REGEX CMD...: the output matches REGEX and holds no secret.
nt_refused() {
	local name=$1 re=$2 out
	shift 2
	out=$("$@" 2>&1)
	if grep -Eq -- "$re" <<< "$out"; then ok "$name"; else not_ok "$name" "expected to match: $re" "got: $out"; fi
	printf '%s\n' "$out" >> "$nt/all-messages"
}

# ---------------------------------------------------------------- TLS
expect "nats/tls: tls:// verified against ca=: won, lost, our own again" "won
lost
won" sh -c "'$DRV' '$T' claim a $S tA; '$DRV' '$T' claim a $S tB; '$DRV' '$T' claim a $S tA"
expect "nats/tls: by host name (localhost) too" won drv "tls://localhost:$NT_PORT_tls?$CA" claim b "$S" tA
expect "nats/tls: a cluster URL of two servers over TLS (the first one down)" won \
	drv "tls://127.0.0.1:$PORT_closed,127.0.0.1:$NT_PORT_tls?$CA" claim c "$S" tA
expect "nats/tls: nats:// to a server that requires TLS upgrades (system CAs: SSL_CERT_FILE)" won \
	env SSL_CERT_FILE="$c/ca.crt" "$DRV" "nats://127.0.0.1:$NT_PORT_tls" claim d "$S" tA
nt_refused "nats/tls: ... and verifies: without the test CA the certificate is refused" \
	"^error connect: NATS at nats://127.0.0.1:$NT_PORT_tls: the server's certificate was refused: unable to get local issuer certificate" \
	drv "nats://127.0.0.1:$NT_PORT_tls" claim d "$S" tB
expect "nats/tls: nats:// with ca= (a TLS parameter) takes TLS too" won drv "nats://127.0.0.1:$NT_PORT_tls?$CA" claim e "$S" tA
nt_refused "nats/tls: a wrong CA is refused" "the server's certificate was refused: unable to get local issuer certificate" \
	drv "tls://127.0.0.1:$NT_PORT_tls?ca=$c/wrongca.crt" claim a "$S" tC
nt_refused "nats/tls: a wrong host name is refused (servername)" "the server's certificate was refused: [Hh]ostname mismatch" \
	drv "tls://127.0.0.1:$NT_PORT_tls?$CA&servername=other.example" claim a "$S" tC
nt_refused "nats/tls: insecure_skip_verify=true takes a wrong CA and name (tests only)" "^lost$" \
	drv "tls://127.0.0.1:$NT_PORT_tls?ca=$c/wrongca.crt&servername=other.example&insecure_skip_verify=true" claim a "$S" tC
nt_refused "nats/tls: an expired certificate is refused" "the server's certificate was refused: certificate has expired" \
	drv "tls://127.0.0.1:$PORT_expired?$CA&tls_handshake_first=true" claim a "$S" tC
nt_refused "nats/tls: a missing ca file names it" "the ca file \"$nt/none.crt\" cannot be used" \
	drv "tls://127.0.0.1:$NT_PORT_tls?ca=$nt/none.crt" claim a "$S" tC
nt_refused "nats/tls: a TLS parameter on a URL refused before it connects: cert without key" "cert and key go together" \
	drv "tls://127.0.0.1:$NT_PORT_tls?$CA&cert=$c/client.crt" claim a "$S" tC
nt_refused "nats/tls: tls_handshake_first takes true or false only" "tls_handshake_first must be true or false" \
	drv "tls://127.0.0.1:$NT_PORT_tls?$CA&tls_handshake_first=yes" claim a "$S" tC
nt_refused "nats/tls: tls:// to a plaintext server is refused, never plaintext instead" \
	"^error connect: NATS at tls://127.0.0.1:$NT_PORT_plain does not offer TLS, and the store URL asks for it" \
	drv "tls://$TOK@127.0.0.1:$NT_PORT_plain?$CA" claim a "$S" tC
nt_refused "nats/tls: tls_handshake_first to a plaintext server: the handshake fails" "wrong version number" \
	drv "nats://$TOK@127.0.0.1:$NT_PORT_plain?$CA&tls_handshake_first=true" claim a "$S" tC
nt_refused "nats/tls: ... and the hint asks for the TLS port" "is the port a TLS port" \
	sq "nats://$TOK@127.0.0.1:$NT_PORT_plain?$CA&tls_handshake_first=true" "SELECT anarchon_claim('a', $S, 'tC');"
nt_refused "nats/tls: tls_handshake_first to a server that sends INFO first: a plain listener's answer fails the handshake" \
	"TLS with NATS at tls://127.0.0.1:$PORT_plain failed|lost the connection|wrong version number" \
	drv "tls://127.0.0.1:$PORT_plain?$CA&tls_handshake_first=true&timeout_ms=2000" claim a "$S" tC
expect "nats/tls: a plaintext URL still works on the plaintext server, with the token over loopback" won \
	drv "nats://$TOK@127.0.0.1:$NT_PORT_plain" claim a "$S" tA

# ---------------------------------------------------------------- mutual TLS
expect "nats/tls: mutual TLS with cert= and key=" won drv "tls://127.0.0.1:$NT_PORT_mtls?$CA&cert=$c/client.crt&key=$c/client.key" claim m "$S" tA
nt_refused "nats/tls: mutual TLS without a client certificate is refused" "^error connect: .*NATS at tls://127.0.0.1:$NT_PORT_mtls" \
	drv "tls://127.0.0.1:$NT_PORT_mtls?$CA" claim m "$S" tB
cp "$c/client.key" "$nt/unreadable.key"
chmod 000 "$nt/unreadable.key"
nt_refused "nats/tls: a missing key file names the file and the reason" "the key file \"$nt/none.key\" cannot be used: No such file" \
	drv "tls://127.0.0.1:$NT_PORT_mtls?$CA&cert=$c/client.crt&key=$nt/none.key" claim m "$S" tB
# nobody runs a copy of the driver: the tree may sit where only root can
# enter (/root in the platform matrix's chroots).
install -m 755 "$DRV" "$nt/mq-driver"
nt_refused "nats/tls: an unreadable key file (run as nobody) names the file" "the key file \"$nt/unreadable.key\" cannot be used" \
	runuser -u nobody -- "$nt/mq-driver" "tls://127.0.0.1:$NT_PORT_mtls?$CA&cert=$c/client.crt&key=$nt/unreadable.key" claim m "$S" tB

# ---------------------------------------------------------------- logins
A="127.0.0.1:$NT_PORT_auth?$CA"
expect "nats/tls: user and password (alice) over TLS" won drv "tls://alice:$PW@$A" claim u "$S" tA
nt_refused "nats/tls: a wrong password is refused: the login, the server's words" \
	"^error auth: NATS at tls://127.0.0.1:$NT_PORT_auth refused the login: Authorization Violation$" \
	drv "tls://alice:wrong-$PW@$A" claim u "$S" tB
nt_refused "nats/tls: ... the hint names what was sent" "did not accept the user and password given in the store URL" \
	sq "tls://alice:wrong-$PW@$A" "SELECT anarchon_claim('u', $S, 'tB');"
nt_refused "nats/tls: no credentials to a server that asks: the hint says none were sent" "refused the login: Authorization Violation.*No credentials were sent" \
	sq "tls://$A" "SELECT anarchon_claim('u', $S, 'tB');"
expect "nats/tls: an nkey seed file (nkey=) signs the server's nonce" won drv "tls://$A&nkey=$nk/user.seed" claim n "$S" tA
nt_refused "nats/tls: another user's nkey is refused, naming the nkey" "refused the login: Authorization Violation.*did not accept the nkey of the nkey file" \
	sq "tls://$A&nkey=$tmp/user.seed" "SELECT anarchon_claim('n', $S, 'tB');"
nt_refused "nats/tls: a seed file with a changed character names the file and the reason" "the nkey file \"$tmp/changed.seed\" cannot be used: .*checksum is wrong" \
	drv "tls://$A&nkey=$tmp/changed.seed" claim n "$S" tB
nt_refused "nats/tls: a missing seed file" "the nkey file \"$nt/none.seed\" cannot be read: No such file" \
	drv "tls://$A&nkey=$nt/none.seed" claim n "$S" tB
nt_refused "nats/tls: two kinds of credentials are refused" "more than one kind of credentials" \
	drv "tls://alice:$PW@$A&nkey=$nk/user.seed" claim n "$S" tB
expect "nats/tls: a token (token@)" won drv "nats://$TOK@127.0.0.1:$NT_PORT_plain" claim k "$S" tA
nt_refused "nats/tls: a wrong token is refused, naming the token" "refused the login: Authorization Violation.*did not accept the token" \
	sq "nats://wrong$TOK@127.0.0.1:$NT_PORT_plain" "SELECT anarchon_claim('k', $S, 'tB');"

# A refused login ends the rotation: the same credentials go to every server.
t0=$(mq_now)
nt_refused "nats/tls: a refused login on the first of two servers is the answer" "^error auth: .*refused the login" \
	drv "tls://alice:wrong-$PW@127.0.0.1:$NT_PORT_auth,127.0.0.1:$PORT_frozen?$CA&timeout_ms=4000" claim u "$S" tB
if [ $(( $(mq_now) - t0 )) -lt 2000 ]; then ok "nats/tls: ... and the second (frozen) server is not tried ($(( $(mq_now) - t0 )) ms)"
else not_ok "nats/tls: ... and the second (frozen) server is not tried" "took $(( $(mq_now) - t0 )) ms"; fi

# Operator mode: the account by JWT, the user by creds file.
O="tls://127.0.0.1:$NT_PORT_op?$CA"
expect "nats/tls: operator mode: a creds file (creds=) logs in and claims" "won
lost" sh -c "'$DRV' '$O&creds=$opd/user.creds' claim o $S tA; '$DRV' '$O&creds=$opd/user.creds' claim o $S tB"
mkdir -p "$nt/op2"
python3 -c "import sys; sys.path.insert(0, '$here'); import nkeygen; nkeygen.operator_setup('$nt/op2')"
nt_refused "nats/tls: operator mode: creds of another operator are refused, naming the creds file" \
	"refused the login: Authorization Violation.*did not accept the user JWT and nkey of the creds file" \
	sq "$O&creds=$nt/op2/user.creds" "SELECT anarchon_claim('o', $S, 'tB');"
nt_refused "nats/tls: a creds file without a seed names the reason" "the creds file \"$tmp/nojwtseed.creds\" cannot be used" \
	drv "$O&creds=$tmp/nojwtseed.creds" claim o "$S" tB

# ---------------------------------------------------------------- handshake first
ver=$(nats-server --version | sed -E 's/.*v([0-9]+\.[0-9]+\.[0-9]+).*/\1/')
if [ "$(printf '%s\n2.10.4\n' "$ver" | sort -V | head -n 1)" = 2.10.4 ]; then
	nt_server first "tls { cert_file: \"$c/server.crt\", key_file: \"$c/server.key\", handshake_first: true }" ""
	expect "nats/tls: handshake_first: tls_handshake_first=true claims" won \
		drv "tls://127.0.0.1:$NT_PORT_first?$CA&tls_handshake_first=true" claim f "$S" tA
	nt_refused "nats/tls: handshake_first: without it, a timeout whose hint names tls_handshake_first" "add tls_handshake_first=true" \
		sq "tls://127.0.0.1:$NT_PORT_first?$CA&timeout_ms=1000" "SELECT anarchon_claim('f', $S, 'tB');"
else
	echo "# nats-server $ver has no handshake_first (2.10.4 and later): its checks are not run"
fi

# ---------------------------------------------------------------- contention, fork, memory
mq_sqlite_contend nats/tls "$T"

if /usr/bin/python3 -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2> /dev/null; then
	d=$nt/fork
	mkdir -p "$d/raw"
	S2=$(mq_slot_now)
	/usr/bin/python3 test/fork/forker.py "$REPO_ROOT/sqlite/anarchon" "$O&creds=$opd/user.creds" inherit jfork "$S2" 16 100 "$d/raw" \
		> "$d/parent" 2>&1
	[ -n "$(ls "$d/raw")" ] || not_ok "nats/tls: fork: the workers wrote nothing" "$(cat "$d/parent")"
	for f in "$d"/raw/*.out; do cut -d' ' -f1,2 "$f" > "$d/$(basename "$f")"; done
	mq_count_winners "nats/tls: fork after use over TLS with a creds login (workers go on with the parent's connection)" "$d" 16 100
	if [ "$(cat "$d/parent")" = "before won
parent won" ]; then ok "nats/tls: fork: the parent goes on with its own TLS connection"
	else not_ok "nats/tls: fork: the parent goes on with its own TLS connection" "$(cat "$d/parent")"; fi
else
	not_ok "nats/tls: fork: /usr/bin/python3 with a sqlite3 module that loads extensions"
fi

# A handshake under valgrind on a loaded machine can take seconds: the
# session's timeout_ms is 10 s, as a slow link's would be.
if have_valgrind "nats/tls: valgrind"; then
	S2=$(mq_slot_now)
	printf '%s\n' "claim vg $S2 t1" "claim vg $S2 t2" "heartbeat vg $S2 t1" "finish vg $S2 t1" "check vg $S2" > "$nt/vg.in"
	: > "$MQ_TMP/vg.err"
	expect "nats/tls: valgrind: a session over mutual TLS with a creds file: no memory errors or leaks" "won
lost
true
true
succeeded
rc=0" mq_vg "tls://127.0.0.1:$NT_PORT_op?$CA&cert=$c/client.crt&key=$c/client.key&creds=$opd/user.creds&timeout_ms=10000" "$nt/vg.in"
	printf '%s\n' "claim vg $S2 t1" > "$nt/vg2.in"
	expect "nats/tls: valgrind: a refused nkey login (the session ends at its error, status 3)" "error auth: NATS at tls://127.0.0.1:$NT_PORT_auth refused the login: Authorization Violation
rc=3" mq_vg "tls://127.0.0.1:$NT_PORT_auth?$CA&nkey=$tmp/user.seed&timeout_ms=10000" "$nt/vg2.in"
	if [ -s "$MQ_TMP/vg.err" ]; then not_ok "nats/tls: valgrind reported nothing" "$(head -n 30 "$MQ_TMP/vg.err")"; else ok "nats/tls: valgrind reported nothing"; fi
	# Through the SQLite extension: a login over TLS that works, and three that fail.
	for vc in "creds|$O&creds=$opd/user.creds" "password|tls://alice:wrong-$PW@$A" "seed|tls://$A&nkey=$tmp/changed.seed" \
		"ca|tls://127.0.0.1:$NT_PORT_tls?ca=$c/wrongca.crt"; do
		log=$nt/vg-sqlite-${vc%%|*}.log
		valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite --log-file="$log" \
			sqlite3 -batch :memory: ".load $REPO_ROOT/sqlite/anarchon" ".output /dev/null" \
			"SELECT anarchon_config('store', '${vc#*|}');" "SELECT anarchon_claim('vgs', $S2, 'tok');" \
			"SELECT anarchon_finish('vgs', $S2, 'tok');" > /dev/null 2>&1
		vg_log_ok "nats/tls/sqlite: valgrind: ${vc%%|*}, no memory error or definite leak" "$log" "$?"
	done
fi

# ---------------------------------------------------------------- PostgreSQL
mq_pg nats/tls "$T&timeout_ms=20000" "" "" "$T&stream=PGSHORT&duplicate_window_ms=5000" "${NATS_PID[tls]}" won
if [ -n "${PGPORT:-}" ]; then
	pq() { psql -X -A -t -q -v ON_ERROR_STOP=0 "$@" 2>&1; }
	# The creds file where the server's OS user may read it, and no one else.
	cp "$opd/user.creds" "$nt/pg.creds"
	chown postgres: "$nt/pg.creds" 2> /dev/null
	chmod 600 "$nt/pg.creds"
	pq -c "CREATE SERVER pgauth FOREIGN DATA WRAPPER anarchon OPTIONS (url 'tls://127.0.0.1:$NT_PORT_auth?$CA')" \
		-c "CREATE USER MAPPING FOR PUBLIC SERVER pgauth OPTIONS (user 'alice', password '$PW')" \
		-c "CREATE SERVER pgtok FOREIGN DATA WRAPPER anarchon OPTIONS (url 'nats://127.0.0.1:$NT_PORT_plain')" \
		-c "CREATE USER MAPPING FOR PUBLIC SERVER pgtok OPTIONS (password '$TOK')" \
		-c "CREATE SERVER pgcreds FOREIGN DATA WRAPPER anarchon OPTIONS (url '$O&creds=$nt/pg.creds')" \
		-c "CREATE SERVER pgfrozen FOREIGN DATA WRAPPER anarchon OPTIONS (url 'tls://127.0.0.1:$PORT_frozen?$CA&tls_handshake_first=true&timeout_ms=60000')" \
		-c "CREATE SERVER pgfrozen2 FOREIGN DATA WRAPPER anarchon OPTIONS (url 'tls://127.0.0.1:$NT_PORT_frozen2?$CA&timeout_ms=60000')" > "$nt/pg-setup.out"
	S2=$(mq_slot_now)
	expect "nats/tls/pg: user and password from the user mapping, over TLS" won \
		env PGOPTIONS="-c anarchon.store=pgauth" psql -X -A -t -q -c "SELECT anarchon_claim('pgu', ${S2}::bigint, 'tA')"
	expect "nats/tls/pg: a token as the user mapping's password" won \
		env PGOPTIONS="-c anarchon.store=pgtok" psql -X -A -t -q -c "SELECT anarchon_claim('pgk', ${S2}::bigint, 'tA')"
	expect "nats/tls/pg: operator mode, a creds file in the server's url" won \
		env PGOPTIONS="-c anarchon.store=pgcreds" psql -X -A -t -q -c "SELECT anarchon_claim('pgo', ${S2}::bigint, 'tA')"
	pq -c "ALTER USER MAPPING FOR PUBLIC SERVER pgauth OPTIONS (SET password 'wrong-$PW')" > /dev/null
	nt_refused "nats/tls/pg: a wrong password in the user mapping is refused, naming the login" \
		"refused the login: Authorization Violation" \
		env PGOPTIONS="-c anarchon.store=pgauth" psql -X -q -c "SELECT anarchon_claim('pgu', ${S2}::bigint, 'tB')"
	for srv in pgfrozen pgfrozen2; do
		t0=$(mq_now)
		out=$(PGOPTIONS="-c anarchon.store=$srv" psql -X -A -t -q -c "SET statement_timeout = 500" \
			-c "SELECT anarchon_claim('pgf', ${S2}::bigint, 'tA')" 2>&1)
		ms=$(( $(mq_now) - t0 ))
		what="a TLS handshake to a server that never answers"
		[ "$srv" = pgfrozen2 ] && what="the TLS upgrade after a tls_required INFO, the server silent after it"
		if grep -q 'canceling statement due to statement timeout' <<< "$out" && [ "$ms" -lt 2000 ]; then
			ok "nats/tls/pg: statement_timeout (500 ms) ends $what at once: $ms ms (timeout_ms 60000)"
		else not_ok "nats/tls/pg: statement_timeout ends $what at once" "$ms ms" "$out"; fi
	done
fi

nt_secret_free "nats/tls: every refusal above" "$(cat "$nt/all-messages" "$nt/pg-setup.out" 2> /dev/null; cat "$PG_LOG" 2> /dev/null)"
