# redis.sh — the Redis store over TLS, against real redis-servers that take
# TLS only (sourced at the end of test/tls/run.sh, which made the
# certificates in $c and started the openssl s_servers and the listeners
# PORT_expired, PORT_other, PORT_plain and PORT_frozen).
#
#   a server with requirepass and an ACL user (port 0, tls-port), a server
#   that demands a client certificate, a plaintext server, a master with a
#   TLS replica and a sentinel with requirepass (tls-replication yes), and a
#   Redis Cluster of three masters whose bus is TLS (tls-cluster yes).
#
# Every check goes through the store: rdrive (the store interface), the
# SQLite extension (claimer, the sqlite3 shell, forker.py) and PostgreSQL
# (a foreign server and a user mapping).
source test/redis/server.sh

RT_PW=tls-Data-pw-71
RT_ALICE_PW=tls-Alice-pw-38
RT_SEN_PW=tls-Sentinel-pw-52
RT_SECRETS="$RT_PW|$RT_ALICE_PW|$RT_SEN_PW|wrong-pw-19"
rt=$tmp/rt
mkdir -p "$rt"

if ! make -s test/bin/rdrive test/bin/claimer sqlite > "$rt/build" 2>&1; then
	not_ok "redis tls: build rdrive, claimer and the SQLite extension" "$(tail -n 20 "$rt/build")"
	return 0
fi
RDRIVE=$REPO_ROOT/test/bin/rdrive
TLS_FILES=(--tls-cert-file "$c/server.crt" --tls-key-file "$c/server.key" --tls-ca-cert-file "$c/ca.crt")

# rt_start NAME PORT [options]: a redis-server that takes TLS only, on PORT.
rt_start() {
	local name=$1 port=$2
	shift 2
	redis_start "$name" "$port" --port 0 --tls-port "$port" "${TLS_FILES[@]}" "$@"
}
# rcli PORT ARGS: redis-cli over TLS, verified against the test CA.
rcli() { local p=$1; shift; redis-cli --tls --cacert "$c/ca.crt" -h 127.0.0.1 -p "$p" "$@"; }

# rd NAME URL [rdrive options]: rdrive with commands on stdin, output in $rt/NAME.out (hints shown).
rd() {
	local name=$1 url=$2
	shift 2
	RDRIVE_HINTS=1 "$RDRIVE" "$@" "$url" > "$rt/$name.out" 2>&1
}
# expect NAME URL PATTERN < commands: rdrive's whole output, on one line, matches PATTERN.
expect() {
	local name=$1 url=$2 want=$3 got
	rd "$(printf '%s' "$name" | tr -c 'a-zA-Z0-9' '-')" "$url"
	got=$(tr '\n' ' ' < "$rt/$(printf '%s' "$name" | tr -c 'a-zA-Z0-9' '-').out")
	if grep -q -E "$want" <<< "$got"; then ok "redis tls: $name"
	else not_ok "redis tls: $name" "expected /$want/" "got: $(head -c 800 <<< "$got")"; fi
}

S=$(now_slot)
P=$(free_port)
PM=$(free_port)
PP=$(free_port)
rt_start rt-main "$P" --tls-auth-clients no --requirepass "$RT_PW" \
	--user alice on ">$RT_ALICE_PW" '~*' '&*' '+@all' ||
	not_ok "redis tls: start redis-server with a tls-port only" "$(tail -n 5 "$R_DIR/rt-main/log")"
rt_start rt-mutual "$PM" --tls-auth-clients yes ||
	not_ok "redis tls: start redis-server with tls-auth-clients yes" "$(tail -n 5 "$R_DIR/rt-mutual/log")"
redis_start rt-plain "$PP" || not_ok "redis tls: start a plaintext redis-server"
CA="ca=$c/ca.crt"
U="rediss://:$RT_PW@127.0.0.1:$P"

# ---------------------------------------------------------------- every strategy over TLS
for strat in lease stream-id script; do
	case $strat in lease) other="running 1" ;; *) other="lost 0" ;; esac
	expect "$strat: won, another token told $other, the same token won again (verified by IP against ca)" \
		"$U?$CA&strategy=$strat&prefix=t-$strat" "^won 1 $other won 1 $" \
		<<< "$(printf 'claim a %s t1\nclaim a %s t2\nclaim a %s t1\n' "$S" "$S" "$S")"
done
expect "lease: heartbeat, finish and check over TLS" "$U?$CA&strategy=lease&prefix=t-lease" \
	"^true false true succeeded 1 $" <<< "$(printf 'heartbeat a %s t1\nheartbeat a %s t2\nfinish a %s t1\ncheck a %s\n' "$S" "$S" "$S" "$S")"
expect "verified by host name (localhost) against ca" "rediss://:$RT_PW@localhost:$P?$CA&prefix=t-name" "^won 1 $" <<< "claim a $S t1"
expect "an ACL user and its password (AUTH user password)" "rediss://alice:$RT_ALICE_PW@127.0.0.1:$P?$CA&prefix=t-acl" "^won 1 $" <<< "claim a $S t1"
expect "servername: the name verified is another (other.example is not the server's)" \
	"$U?$CA&servername=other.example&prefix=t-sn" "^error CONNECT: .*certificate was refused: [Hh]ostname mismatch" <<< "claim a $S t1"
expect "insecure_skip_verify=true: a CA that did not sign the server is not asked" \
	"$U?ca=$c/wrongca.crt&insecure_skip_verify=true&prefix=t-insecure" "^won 1 $" <<< "claim a $S t1"

# One connection per process, kept: 200 claims pay one TCP connect and one
# handshake (the count also has the second redis-cli's own connection).
before=$(rcli "$P" --pass "$RT_PW" --no-auth-warning INFO stats | sed -n 's/^total_connections_received:\([0-9]*\).*/\1/p')
"$RDRIVE" -s overlap=allow "$U?$CA&prefix=t-kept" --contend kept "$S" 200 > "$rt/kept.out" 2>&1
after=$(rcli "$P" --pass "$RT_PW" --no-auth-warning INFO stats | sed -n 's/^total_connections_received:\([0-9]*\).*/\1/p')
if [ "$(grep -c ' won$' "$rt/kept.out")" -eq 200 ] && [ $((after - before - 1)) -eq 1 ]; then
	ok "redis tls: 200 claims over one TLS connection (one handshake)"
else not_ok "redis tls: 200 claims over one TLS connection" "connections: $before -> $after" "$(head -n 3 "$rt/kept.out")"; fi

# ---------------------------------------------------------------- refusals, each with its reason
expect "a wrong CA is refused" "$U?ca=$c/wrongca.crt&prefix=t-r" \
	"^error CONNECT: redis store rediss://127.0.0.1:$P: the server's certificate was refused: (unable to get local issuer certificate|self-signed certificate in certificate chain)" <<< "claim a $S t1"
expect "the system's CAs (no ca=) do not know the test CA" "$U?prefix=t-r" \
	"^error CONNECT: .*certificate was refused: (unable to get local issuer certificate|self-signed certificate in certificate chain)" <<< "claim a $S t1"
expect "an expired certificate is refused" "rediss://:$RT_PW@127.0.0.1:$PORT_expired?$CA&prefix=t-r" \
	"^error CONNECT: .*certificate was refused: certificate has expired" <<< "claim a $S t1"
expect "a certificate for another host name is refused" "rediss://:$RT_PW@127.0.0.1:$PORT_other?$CA&prefix=t-r" \
	"^error CONNECT: .*certificate was refused: IP address mismatch" <<< "claim a $S t1"
expect "plaintext redis:// to a TLS port: an error that suggests rediss://" "redis://:$RT_PW@127.0.0.1:$P?prefix=t-r" \
	"^error CONNECT: .*redis store redis://127.0.0.1:$P.* hint: .*use rediss://" <<< "claim a $S t1"
# A plaintext Redis answers a ClientHello with an error, or waits for the end
# of a line that never comes (it reads it as an inline command).
expect "rediss:// to a plaintext port: an error that asks for the TLS port" "rediss://127.0.0.1:$PP?$CA&prefix=t-r&timeout_ms=1000" \
	"^error (CONNECT: .*wrong version number|TIMEOUT: .*did not answer the TLS handshake).* hint: .*is the port a TLS port" <<< "claim a $S t1"
expect "a TLS parameter on redis:// is refused" "redis://127.0.0.1:$PP?$CA" \
	"^error CONFIG: store URL parameter ca is a TLS parameter, and this URL does not use TLS: use rediss://" <<< "claim a $S t1"
expect "a missing key file names the file and the reason" "rediss://127.0.0.1:$PM?$CA&cert=$c/client.crt&key=$rt/nokey.pem" \
	"^error CONFIG: .*the key file \"$rt/nokey.pem\" cannot be used: No such file or directory" <<< "claim a $S t1"
printf 'not a key\n' > "$rt/garbage.key"
expect "a key file that holds no key is refused" "rediss://127.0.0.1:$PM?$CA&cert=$c/client.crt&key=$rt/garbage.key" \
	"^error CONFIG: .*the key file \"$rt/garbage.key\" cannot be used" <<< "claim a $S t1"
expect "a wrong password is refused" "rediss://:wrong-pw-19@127.0.0.1:$P?$CA&prefix=t-r" \
	"^error AUTH: redis store rediss://127.0.0.1:$P refused the user name or password given for it \(WRONGPASS\)" <<< "claim a $S t1"
expect "no password for a server that wants one" "rediss://127.0.0.1:$P?$CA&prefix=t-r" \
	"^error AUTH: redis store rediss://127.0.0.1:$P requires a password" <<< "claim a $S t1"

# ---------------------------------------------------------------- mutual TLS
expect "mutual TLS: the client certificate is accepted" "rediss://127.0.0.1:$PM?$CA&cert=$c/client.crt&key=$c/client.key&prefix=t-m" \
	"^won 1 $" <<< "claim a $S t1"
expect "mutual TLS: refused without a client certificate" "rediss://127.0.0.1:$PM?$CA&prefix=t-m" \
	"^error CONNECT: .*rediss://127.0.0.1:$PM.*(certificate required|alert|closed|reset|eof).* hint: .*requires a client certificate \(tls-auth-clients yes\), give cert= and key=" <<< "claim a $S t2"

# ---------------------------------------------------------------- a cancel during a handshake
t0=$(now_ms)
RDRIVE_CANCEL_AFTER=300 expect "a cancel during the TLS handshake with a server that never answers ends the open" \
	"rediss://127.0.0.1:$PORT_frozen?$CA&timeout_ms=60000" "^error CANCELED: call to redis store rediss://127.0.0.1:$PORT_frozen was canceled" <<< "claim a $S t1"
ms=$(( $(now_ms) - t0 ))
[ "$ms" -lt 2000 ] && ok "redis tls: ... in $ms ms (cancel at 300, timeout_ms=60000)" || not_ok "redis tls: a cancel during a handshake ends it at once" "$ms ms"
t0=$(now_ms)
expect "a TLS handshake with a server that never answers ends at timeout_ms" \
	"rediss://127.0.0.1:$PORT_frozen?$CA&timeout_ms=500" "^error TIMEOUT: redis store rediss://127.0.0.1:$PORT_frozen did not answer the TLS handshake within 500 ms" <<< "claim a $S t1"
ms=$(( $(now_ms) - t0 ))
[ "$ms" -lt 2500 ] && ok "redis tls: ... in $ms ms for 500" || not_ok "redis tls: a handshake timeout within the timeout" "$ms ms for 500"

# ---------------------------------------------------------------- Sentinel over TLS
S=$(now_slot)
SA=$(free_port); SB=$(free_port); SS=$(free_port)
sdir=$R_DIR/rt-sen
mkdir -p "$sdir"
if rt_start rt-sa "$SA" --tls-auth-clients no --tls-replication yes --requirepass "$RT_PW" --repl-diskless-sync-delay 0 &&
	rt_start rt-sb "$SB" --tls-auth-clients no --tls-replication yes --requirepass "$RT_PW" --masterauth "$RT_PW" \
		--replicaof 127.0.0.1 "$SA"; then
	cat > "$sdir/sentinel.conf" <<-EOF
		port 0
		tls-port $SS
		tls-cert-file $c/server.crt
		tls-key-file $c/server.key
		tls-ca-cert-file $c/ca.crt
		tls-auth-clients no
		tls-replication yes
		bind 127.0.0.1
		dir $sdir
		logfile $sdir/log
		requirepass $RT_SEN_PW
		sentinel monitor tm 127.0.0.1 $SA 1
		sentinel auth-pass tm $RT_PW
		sentinel down-after-milliseconds tm 5000
	EOF
	redis-server "$sdir/sentinel.conf" --sentinel &
	echo $! > "$sdir/pid"
	at_exit "redis_stop rt-sen"
	wait_port "$SS" 30 || not_ok "redis tls: start a sentinel with a tls-port and requirepass" "$(tail -n 5 "$sdir/log")"
	for _ in $(seq 1 100); do
		rcli "$SB" --pass "$RT_PW" --no-auth-warning INFO replication 2> /dev/null | grep -q '^master_link_status:up' && break
		sleep 0.1
	done
	SEN="rediss+sentinel://:$RT_PW@127.0.0.1:$SS/tm"
	expect "sentinel over TLS with sentinel_password: the master found, claims decided there" \
		"$SEN?$CA&sentinel_password=$RT_SEN_PW&prefix=t-sen&replicas=1" "^won 1 running 1 $" \
		<<< "$(printf 'claim a %s t1\nclaim a %s t2\n' "$S" "$S")"
	[ "$(rcli "$SB" --pass "$RT_PW" --no-auth-warning HGET "t-sen:{a}:run:$S" token)" = t1 ] &&
		ok "redis tls: sentinel: the replica (over tls-replication) holds the won run when it is answered" ||
		not_ok "redis tls: sentinel: the replica holds the won run" "$(rcli "$SB" --pass "$RT_PW" --no-auth-warning KEYS 't-sen*')"
	expect "sentinel: sentinel_user default and sentinel_password" \
		"$SEN?$CA&sentinel_user=default&sentinel_password=$RT_SEN_PW&prefix=t-sen" "^won 1 $" <<< "claim a $S t1"
	expect "sentinel: a wrong sentinel_password is refused clearly" \
		"$SEN?$CA&sentinel_password=wrong-pw-19&prefix=t-sen" \
		"^error AUTH: redis store rediss\+sentinel://127.0.0.1:$SS/tm: the sentinel at 127.0.0.1:$SS refused the sentinel_user or sentinel_password given for it \(WRONGPASS\)" <<< "claim a $S t1"
	expect "sentinel: no sentinel_password for a sentinel that wants one" "$SEN?$CA&prefix=t-sen" \
		"^error AUTH: .*the sentinel at 127.0.0.1:$SS requires a password, and none was given for the sentinels hint: Give it as the URL parameter sentinel_password" <<< "claim a $S t1"
	expect "sentinel: the data password is the master's, not the sentinels'" \
		"rediss+sentinel://:wrong-pw-19@127.0.0.1:$SS/tm?$CA&sentinel_password=$RT_SEN_PW&prefix=t-sen" \
		"^error AUTH: redis store rediss\+sentinel://127.0.0.1:$SS/tm refused the user name or password" <<< "claim a $S t1"
	expect "sentinel: a sentinel over TLS with a wrong CA is refused" \
		"$SEN?ca=$c/wrongca.crt&sentinel_password=$RT_SEN_PW" "^error CONNECT: .*certificate was refused" <<< "claim a $S t1"
	expect "sentinel_password on a URL without sentinels is refused" "$U?$CA&sentinel_password=x" \
		"^error CONFIG: store URL parameters sentinel_user and sentinel_password are for the sentinels of a rediss\+sentinel:// URL" <<< "claim a $S t1"
else
	not_ok "redis tls: start a TLS master and its TLS replica" "$(tail -n 5 "$R_DIR"/rt-s[ab]/log)"
fi

# ---------------------------------------------------------------- Redis Cluster over TLS
nodes=()
cl_ok=1
for i in 1 2 3; do
	port=$(free_port); bus=$(free_port)
	CLP[$i]=$port
	rt_start "rt-cl$i" "$port" --tls-auth-clients no --tls-cluster yes --tls-replication yes --cluster-enabled yes \
		--cluster-port "$bus" --cluster-config-file nodes.conf --cluster-node-timeout 2000 || cl_ok=0
	nodes+=("127.0.0.1:$port")
done
if [ $cl_ok = 1 ] && rcli "${CLP[1]}" --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes > "$rt/cl-create.log" 2>&1; then
	for _ in $(seq 1 200); do
		n=0
		for i in 1 2 3; do rcli "${CLP[$i]}" CLUSTER INFO 2> /dev/null | grep -q '^cluster_state:ok' && n=$((n + 1)); done
		[ $n = 3 ] && break
		sleep 0.1
	done
	S=$(now_slot)
	CL="rediss://127.0.0.1:${CLP[1]}?cluster=yes&$CA&prefix=t-cl"
	expect "cluster over TLS: thirty jobs over three masters, each won once" "$CL" "^(won 1 running 1 ){30}$" \
		< <(for j in $(seq 1 30); do printf 'claim job%d %s tA\nclaim job%d %s tB\n' "$j" "$S" "$j" "$S"; done)
	spread=0
	for i in 1 2 3; do [ "$(rcli "${CLP[$i]}" DBSIZE)" -gt 0 ] && spread=$((spread + 1)); done
	[ $spread = 3 ] && ok "redis tls: cluster: the jobs' runs are on all three masters (each reached over TLS)" ||
		not_ok "redis tls: cluster: the jobs' runs are on all three masters" "masters with keys: $spread"
	expect "cluster over TLS: a wrong CA is refused on the seed node" "rediss://127.0.0.1:${CLP[1]}?cluster=yes&ca=$c/wrongca.crt" \
		"^error CONNECT: .*certificate was refused" <<< "claim job1 $S tA"
else
	not_ok "redis tls: start a Redis Cluster of three TLS masters (tls-cluster yes)" "$(tail -n 10 "$rt/cl-create.log" 2> /dev/null)"
fi

# ---------------------------------------------------------------- through SQLite: 16 processes
S=$(now_slot)
first=$(now_slot)
pids=()
for p in $(seq 1 16); do
	ANARCHON_STORE="$U?$CA&strategy=lease&prefix=t-sq" ANARCHON_OVERLAP=allow \
		test/bin/claimer contend "$rt/sq-$p.db" sync "$first" 200 1000 > "$rt/sq-$p.out" 2> "$rt/sq-$p.err" &
	pids+=($!)
done
wait "${pids[@]}"
report=$(cat "$rt"/sq-*.out | awk -v first="$first" '
	NF == 2 { i = ($1 - first) / 1000; n[i]++; if ($2 == "won") w[i]++; next }
	{ bad++; if (bad < 4) print "unexpected: " $0 }
	END { for (s = 0; s < 200; s++) if (w[s] != 1 || n[s] != 16) { print "slot first+" s ": " w[s] " won of " n[s]; if (++e > 5) break } }')
if [ -z "$report" ]; then ok "redis tls via sqlite: lease, 16 processes x 200 slots over TLS, exactly one won per slot"
else not_ok "redis tls via sqlite: lease, 16 processes x 200 slots over TLS, exactly one won per slot" "$report" "$(head -n 3 "$rt"/sq-1.err)"; fi

# The sqlite3 shell: a refusal reaches SQL as an error, with its reason.
{
	echo ".load $REPO_ROOT/sqlite/anarchon"
	echo "SELECT anarchon_config('store', '$U?ca=$c/wrongca.crt&prefix=t-sq') IS NOT NULL;"
	echo "SELECT anarchon_claim('sync', $S, 'a');"
} | sqlite3 -batch "$rt/sq-err.db" > "$rt/sq-err.out" 2>&1
grep -q -E "certificate was refused: (unable to get local issuer certificate|self-signed certificate in certificate chain)" "$rt/sq-err.out" &&
	ok "redis tls via sqlite: a wrong CA is an SQL error that says why" ||
	not_ok "redis tls via sqlite: a wrong CA is an SQL error that says why" "$(cat "$rt/sq-err.out")"

# ---------------------------------------------------------------- fork after use over TLS
PY=/usr/bin/python3
if [ -x "$PY" ] && "$PY" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2> /dev/null; then
	for mode in own inherit; do
		d=$rt/fork-$mode
		mkdir -p "$d"
		FS=$(now_slot)
		"$PY" test/fork/forker.py "$REPO_ROOT/sqlite/anarchon" "$U?$CA&strategy=stream-id&prefix=t-fork-$mode" "$mode" "f" "$FS" 16 100 "$d" > "$d/parent" 2>&1
		report=$(cat "$d"/[0-9]*.out | awk '{ n++ } $2 == "won" { w[$1]++ } $2 == "error" { err++; if (err < 3) print }
			END { for (s in w) if (w[s] != 1) multi++; if (n != 1600) print "answers " n; if (length(w) != 100) print "slots won " length(w); if (multi) print "multi " multi }')
		if [ -z "$report" ] && [ "$(tr '\n' ' ' < "$d/parent")" = "before won parent won " ]; then
			ok "redis tls: fork after use ($mode connections): 16 workers x 100 slots, one won per slot, the parent goes on over TLS"
		else not_ok "redis tls: fork after use ($mode connections)" "$report" "$(cat "$d/parent")"; fi
	done
else
	not_ok "redis tls: fork: $PY with a sqlite3 module that can load extensions"
fi

# ---------------------------------------------------------------- through PostgreSQL
source "$TEST_ROOT/pg/host.sh"
if pg_host_start "redis tls via postgresql" "$rt"; then
	S=$(now_slot)
	pq() { psql -X -A -t -q "$@" 2>&1; }
	pq -c "CREATE EXTENSION anarchon" \
		-c "CREATE SERVER rt_script FOREIGN DATA WRAPPER anarchon OPTIONS (url 'rediss://127.0.0.1:$P?$CA&strategy=script&prefix=pg-tls')" \
		-c "CREATE USER MAPPING FOR PUBLIC SERVER rt_script OPTIONS (password '$RT_PW')" \
		-c "CREATE SERVER rt_wrongpw FOREIGN DATA WRAPPER anarchon OPTIONS (url 'rediss://127.0.0.1:$P?$CA&prefix=pg-tls-w')" \
		-c "CREATE USER MAPPING FOR PUBLIC SERVER rt_wrongpw OPTIONS (password 'wrong-pw-19')" \
		-c "CREATE SERVER rt_key FOREIGN DATA WRAPPER anarchon OPTIONS (url 'rediss://127.0.0.1:$PM?$CA&cert=$c/client.crt&key=$c/client.key')" \
		-c "CREATE SERVER rt_frozen FOREIGN DATA WRAPPER anarchon OPTIONS (url 'rediss://127.0.0.1:$PORT_frozen?$CA&timeout_ms=60000')" > "$rt/pg-setup.out"
	first=$(now_slot)
	for i in $(seq 0 199); do echo "SELECT $((first + i * 1000)) || ' ' || anarchon_claim('sync', $((first + i * 1000))::bigint, anarchon_token());"; done > "$rt/pgc.sql"
	pids=()
	for p in $(seq 1 16); do
		PGOPTIONS="-c anarchon.store=rt_script -c anarchon.overlap=allow" psql -X -A -t -q -f "$rt/pgc.sql" > "$rt/pgc-$p.out" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	report=$(cat "$rt"/pgc-*.out | awk -v first="$first" '
		NF == 2 { i = ($1 - first) / 1000; n[i]++; if ($2 == "won") w[i]++; next }
		{ bad++; if (bad < 4) print "unexpected: " $0 }
		END { for (s = 0; s < 200; s++) if (w[s] != 1 || n[s] != 16) { print "slot first+" s ": " w[s] " won of " n[s]; if (++e > 5) break } }')
	if [ -z "$report" ]; then ok "redis tls via postgresql: script, 16 sessions x 200 slots over TLS (password from the user mapping), exactly one won per slot"
	else not_ok "redis tls via postgresql: script, 16 sessions x 200 slots over TLS, exactly one won per slot" "$report" "$(cat "$rt/pg-setup.out")"; fi
	out=$(PGOPTIONS="-c anarchon.store=rt_wrongpw" pq -c "SELECT anarchon_claim('sync', ${S}::bigint, 'a')" | tee "$rt/pg-wrongpw.out")
	grep -q "^ERROR:  redis store rediss://127.0.0.1:$P refused the user name or password given for it (WRONGPASS)" <<< "$out" &&
		ok "redis tls via postgresql: a wrong password in the user mapping is refused" ||
		not_ok "redis tls via postgresql: a wrong password in the user mapping is refused" "$out"
	# The backend runs as the server's user, which may not read root's 0600 key.
	out=$(PGOPTIONS="-c anarchon.store=rt_key" pq -c "SELECT anarchon_claim('sync', ${S}::bigint, 'a')" | tee "$rt/pg-key.out")
	if [ "$(id -u)" -eq 0 ]; then
		grep -q "the key file \"$c/client.key\" cannot be used: Permission denied" <<< "$out" &&
			ok "redis tls via postgresql: a key file the backend cannot read is named, with the reason" ||
			not_ok "redis tls via postgresql: a key file the backend cannot read is named, with the reason" "$out"
	fi
	# A cancel (statement_timeout) during a handshake that never ends, with a big timeout_ms.
	t0=$(now_ms)
	out=$(PGOPTIONS="-c anarchon.store=rt_frozen -c statement_timeout=1000" pq -c "SELECT anarchon_claim('sync', ${S}::bigint, 'a')" -c "SELECT 'alive'" | tee "$rt/pg-frozen.out")
	ms=$(( $(now_ms) - t0 ))
	if grep -q 'canceling statement due to statement timeout' <<< "$out" && grep -q '^alive$' <<< "$out" && [ "$ms" -lt 2000 ]; then
		ok "redis tls via postgresql: statement_timeout ends a TLS handshake to a frozen server at once ($ms ms for 1000, timeout_ms=60000)"
	else not_ok "redis tls via postgresql: statement_timeout ends a TLS handshake to a frozen server at once" "$ms ms" "$out"; fi
	# pg_cancel_backend during the same handshake.
	PGAPPNAME=rt_frozen PGOPTIONS="-c anarchon.store=rt_frozen" pq -c "SELECT anarchon_claim('sync', ${S}::bigint, 'a')" > "$rt/pg-cancel.out" &
	cpid=$!
	for _ in $(seq 1 100); do
		[ "$(pq -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'rt_frozen' AND state = 'active'")" = 1 ] && break
		sleep 0.05
	done
	# A fixed wait, not a poll yet: the session's TLS handshake is under way on the frozen server.
	sleep 0.3
	t0=$(now_ms)
	pq -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'rt_frozen'" > /dev/null
	wait "$cpid"
	ms=$(( $(now_ms) - t0 ))
	if grep -q 'canceling statement due to user request' "$rt/pg-cancel.out" && [ "$ms" -lt 2000 ]; then
		ok "redis tls via postgresql: pg_cancel_backend ends a TLS handshake to a frozen server at once ($ms ms)"
	else not_ok "redis tls via postgresql: pg_cancel_backend ends a TLS handshake to a frozen server" "$ms ms" "$(cat "$rt/pg-cancel.out")"; fi
fi

# ---------------------------------------------------------------- a connection reset between claims
# A proxy before the TLS server resets (RST) the sqlite3 shell's connection
# between two claims: the next claim meets a reset socket, fails on it and
# is resent on a new connection, and the shell (which does not ignore
# SIGPIPE) lives on.  The store never writes twice on a connection that
# failed; the BIO under OpenSSL (net/tls_bio.c) also sends with
# MSG_NOSIGNAL, so a write after a reset would be an error, not a signal:
# with OpenSSL's own socket BIO this sequence passes as well, since the
# first write after a reset gets ECONNRESET, not SIGPIPE.
PX=$(free_port)
python3 - "$PX" "$P" "$rt/reset-now" > "$rt/rst-proxy.log" 2>&1 <<'PY' &
import os, socket, struct, sys, threading, time
port, target, flag = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", port)); ls.listen(8)
live = []
def pump(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d: break
            b.sendall(d)
    except OSError: pass
def resetter():
    while True:
        if os.path.exists(flag):
            os.unlink(flag)
            for c in live:
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                c.close()
            live.clear()
        time.sleep(0.02)
threading.Thread(target=resetter, daemon=True).start()
while True:
    c, _ = ls.accept(); s = socket.create_connection(("127.0.0.1", target))
    live.append(c)
    threading.Thread(target=pump, args=(c, s), daemon=True).start()
    threading.Thread(target=pump, args=(s, c), daemon=True).start()
PY
pxpid=$!
at_exit "kill $pxpid 2> /dev/null"
if wait_port "$PX" 10; then
	S=$(now_slot)
	{
		echo ".load $REPO_ROOT/sqlite/anarchon"
		echo "SELECT anarchon_config('store', 'rediss://:$RT_PW@127.0.0.1:$PX?$CA&prefix=t-pipe');"
		echo "SELECT anarchon_claim('pipe', $S, 't1');"
		# A fixed wait: the proxy (which looks every 20 ms) resets the connection before the next claim.
		echo ".system touch $rt/reset-now; sleep 0.5"
		echo "SELECT anarchon_claim('pipe2', $S, 't1');"
	} | sqlite3 -batch "$rt/pipe.db" > "$rt/pipe.out" 2>&1
	rc=$?
	if [ "$rc" = 0 ] && [ "$(grep -c '^won$' "$rt/pipe.out")" = 2 ]; then
		ok "redis tls: a connection reset between two claims: the next claim is won on a new connection, and the sqlite3 shell lives on"
	else not_ok "redis tls: a connection reset between two claims: the next claim is won on a new connection, and the sqlite3 shell lives on" "exit $rc (141 is SIGPIPE)" "$(cat "$rt/pipe.out")"; fi
else
	not_ok "redis tls: the resetting proxy listens" "$(cat "$rt/rst-proxy.log")"
fi

# ---------------------------------------------------------------- no secret in any message
leaks=$(grep -l -E "$RT_SECRETS" "$rt"/*.out "$rt"/*/*.out "$rt"/*/parent "$rt"/*.err 2> /dev/null)
[ -z "$leaks" ] && ok "redis tls: no password appears in any answer or error of this file's checks" ||
	not_ok "redis tls: no password appears in any answer or error" "$leaks" "$(grep -h -E "$RT_SECRETS" $leaks | head -n 3)"

# ---------------------------------------------------------------- valgrind
if have_valgrind "redis tls: valgrind"; then
	S=$(now_slot)
	printf 'claim vg %s t1\nclaim vg %s t2\nheartbeat vg %s t1\nfinish vg %s t1\ncheck vg %s\n' "$S" "$S" "$S" "$S" "$S" > "$rt/vg.in"
	rc=0
	for url in "$U?$CA&prefix=t-vg" "rediss://127.0.0.1:$PM?$CA&cert=$c/client.crt&key=$c/client.key&prefix=t-vg" \
		"$U?ca=$c/wrongca.crt" "${SEN:-$U}?$CA&sentinel_password=$RT_SEN_PW&prefix=t-vg" "${CL:-$U}"; do
		valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
			--log-file="$rt/vg.log" "$RDRIVE" "$url" < "$rt/vg.in" > /dev/null 2>&1
		r=$?
		[ "$r" = 99 ] || [ -s "$rt/vg.log" ] && { rc=99; break; }
	done
	vg_log_ok "redis tls: valgrind: claims over TLS, mutual TLS, a refused certificate, Sentinel and Cluster over TLS" "$rt/vg.log" "$rc"
fi
