#!/usr/bin/env bash
# The tls suite: the TLS layer of the network stores (net/tls.c) and
# NATS's nkeys and credentials (stores/nats/nats_nkey.c), each against a
# real server that the project did not write:
#
#   - `openssl s_server` with certificates made here (certs.sh): a good
#     chain by IP address and by name, the system's CAs, a wrong CA, an
#     expired certificate, a certificate for another name (and servername
#     to ask for it), verification skipped, mutual TLS with and without a
#     client certificate, a missing or mismatched key, a plaintext server,
#     a server that never answers the handshake, a closed port;
#   - `nats-server` with an nkey user and in operator mode with JWT accounts
#     (the keys and JWTs made by nkeygen.py with Python's cryptography, so
#     the encodings are checked by a second implementation and by the
#     server): the signature of the server's nonce logs in; another key, a
#     seed of the wrong kind and a changed character do not.
#
# The client is test/bin/tls_probe and test/bin/nkey_tool, built on the
# same sources as the stores.
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
here=test/tls
tmp=$(t_tmpdir)

if ! make -s test/bin/tls_probe test/bin/nkey_tool > "$tmp/build" 2>&1; then
	not_ok "tls: build tls_probe and nkey_tool" "$(tail -n 20 "$tmp/build")"
	suite_end
	exit
fi
bash "$here/certs.sh" "$tmp/c" > "$tmp/certs.log" 2>&1 || { not_ok "tls: make the test certificates" "$(tail -n 5 "$tmp/certs.log")"; suite_end; exit; }
c=$tmp/c

# s_server NAME CERT [ARGS...]: an openssl s_server answering HTTP on a free port: PORT_<NAME>.
s_server() {
	local name=$1 cert=$2 port pid
	shift 2
	port=$(free_port) || return 1
	(cd "$c" && exec openssl s_server -quiet -accept "127.0.0.1:$port" -cert "$cert" -key server.key -www "$@") \
		> "$tmp/s_server-$name.log" 2>&1 &
	pid=$!
	at_exit "kill $pid 2> /dev/null"
	wait_port "$port" 20 || return 1
	printf -v "PORT_$name" '%s' "$port"
}
s_server good server.crt || not_ok "tls: start s_server"
s_server expired expired.crt
s_server other other.crt
s_server mutual server.crt -Verify 1 -CAfile ca.crt
s_server cnonly cnonly.crt
s_server wild wild.crt

# A plaintext server, one that accepts and never answers, and a closed port.
PORT_plain=$(free_port); PORT_frozen=$(free_port); PORT_closed=$(free_port)
python3 - "$PORT_plain" "$PORT_frozen" > "$tmp/py.log" 2>&1 <<'PY' &
import socket, sys, threading, time
def listener(port):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(port))); s.listen(16); return s
plain, frozen = listener(sys.argv[1]), listener(sys.argv[2])
def answer():
    while True:
        c, _ = plain.accept(); c.recv(100); c.sendall(b"-ERR not TLS\r\n"); c.close()
threading.Thread(target=answer, daemon=True).start()
held = []
while True:
    c, _ = frozen.accept(); held.append(c)
PY
pypid=$!
at_exit "kill $pypid 2> /dev/null"
wait_port "$PORT_plain" 20 && wait_port "$PORT_frozen" 20 || not_ok "tls: start the plaintext and silent listeners"

# probe NAME EXPECT HOST PORT CA CERT KEY SERVERNAME INSECURE [TIMEOUT_MS]: the
# probe's answer must match the extended regular expression EXPECT.
probe() {
	local name=$1 expect=$2 out
	shift 2
	out=$(cd "$c" && "$REPO_ROOT/test/bin/tls_probe" "$1" "$2" "$3" "$4" "$5" "$6" "$7" "${8:-3000}" $'GET / HTTP/1.0\r\n\r\n' 2>&1)
	if grep -Eq "$expect" <<< "$out"; then ok "tls: $name"; else not_ok "tls: $name" "expected /$expect/" "$out"; fi
}
probe "verified by IP address against the ca file" '^ok [1-9]' 127.0.0.1 "$PORT_good" ca.crt - - - 0
probe "verified by host name against the ca file" '^ok [1-9]' localhost "$PORT_good" ca.crt - - - 0
probe "the system's CAs do not know the test CA" "certificate was refused: unable to get local issuer certificate" 127.0.0.1 "$PORT_good" - - - - 0
probe "a wrong CA is refused" "certificate was refused: unable to get local issuer certificate" 127.0.0.1 "$PORT_good" wrongca.crt - - - 0
probe "an expired certificate is refused" "certificate was refused: certificate has expired" 127.0.0.1 "$PORT_expired" ca.crt - - - 0
probe "a certificate for another name is refused (IP address)" "certificate was refused: IP address mismatch" 127.0.0.1 "$PORT_other" ca.crt - - - 0
probe "a certificate for another name is refused (host name)" "certificate was refused: [Hh]ostname mismatch" localhost "$PORT_other" ca.crt - - - 0
probe "servername asks for and verifies another name" '^ok [1-9]' 127.0.0.1 "$PORT_other" ca.crt - - other.example 0
# servername names one host exactly: OpenSSL would read a leading '.' as
# "any subdomain" (.example matched other.example), and a '*' is the
# certificate's to give.  Refused before any connection.
probe "servername with a leading '.' is refused" "servername \".example\" must be one exact host name: it starts with '.'" 127.0.0.1 "$PORT_other" ca.crt - - .example 0
probe "servername with a '*' is refused" "servername \"\*.example.test\" must be one exact host name: it holds a '\*'" 127.0.0.1 "$PORT_wild" ca.crt - - '*.example.test' 0
# The name is looked for in the subjectAltName only, as browsers do.
probe "a certificate with a CN and no subjectAltName is refused" "certificate was refused: [Hh]ostname mismatch" localhost "$PORT_cnonly" ca.crt - - - 0
probe "a certificate with a CN and no subjectAltName is refused (servername)" "certificate was refused: [Hh]ostname mismatch" 127.0.0.1 "$PORT_cnonly" ca.crt - - localhost 0
# A wildcard SAN covers one whole leftmost label.
probe "the wildcard SAN *.example.test covers a.example.test" '^ok [1-9]' 127.0.0.1 "$PORT_wild" ca.crt - - a.example.test 0
probe "the wildcard SAN *.example.test does not cover a.b.example.test" "certificate was refused: [Hh]ostname mismatch" 127.0.0.1 "$PORT_wild" ca.crt - - a.b.example.test 0
probe "the wildcard SAN *.example.test does not cover example.test" "certificate was refused: [Hh]ostname mismatch" 127.0.0.1 "$PORT_wild" ca.crt - - example.test 0
probe "verification skipped: a wrong CA and an expired certificate pass" '^ok [1-9]' 127.0.0.1 "$PORT_expired" wrongca.crt - - - 1
probe "mutual TLS: no client certificate, refused by the server" "certificate required|alert" 127.0.0.1 "$PORT_mutual" ca.crt - - - 0
probe "mutual TLS: the client certificate is accepted" '^ok [1-9]' 127.0.0.1 "$PORT_mutual" ca.crt client.crt client.key - 0
probe "a missing key file names the file and the reason" 'the key file "/nonexistent/k.pem" cannot be used: No such file' 127.0.0.1 "$PORT_good" ca.crt client.crt /nonexistent/k.pem - 0
probe "a key that is not the certificate's is refused" 'the key file "server.key" cannot be used' 127.0.0.1 "$PORT_good" ca.crt client.crt server.key - 0
probe "a cert without a key is refused" 'needs both cert and key' 127.0.0.1 "$PORT_good" ca.crt client.crt - - 0
probe "a missing ca file names the file" 'the ca file "nope.crt" cannot be used: No such file' 127.0.0.1 "$PORT_good" nope.crt - - - 0
probe "a plaintext server: the handshake fails and the hint asks for the TLS port" 'wrong version number.*is the port a TLS port' 127.0.0.1 "$PORT_plain" ca.crt - - - 0
probe "a closed port" 'could not connect' 127.0.0.1 "$PORT_closed" ca.crt - - - 0
t0=$(date +%s%3N)
probe "a server that never answers the handshake: a timeout" 'did not answer the TLS handshake within timeout_ms \(1000 ms\)' 127.0.0.1 "$PORT_frozen" ca.crt - - - 0 1000
ms=$(( $(date +%s%3N) - t0 ))
if [ "$ms" -lt 2500 ]; then ok "tls: ... within the timeout ($ms ms for 1000 ms)"; else not_ok "tls: ... within the timeout" "took $ms ms for 1000 ms"; fi

# Under valgrind: a mutual handshake, a refusal, a timeout.
log=$tmp/vg.log
(cd "$c" && valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect --log-file="$log" \
	"$REPO_ROOT/test/bin/tls_probe" 127.0.0.1 "$PORT_mutual" ca.crt client.crt client.key - 0 5000 $'GET / HTTP/1.0\r\n\r\n' > /dev/null)
vg_log_ok "tls: valgrind, mutual TLS" "$log" "$?"
(cd "$c" && valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect --log-file="$log.2" \
	"$REPO_ROOT/test/bin/tls_probe" 127.0.0.1 "$PORT_expired" ca.crt - - - 0 5000 x > /dev/null)
vg_log_ok "tls: valgrind, a refused certificate" "$log.2" "$?"

# ---------------------------------------------------------------- nkeys
nk=$tmp/nk
mkdir -p "$nk"
python3 "$here/nkeygen.py" user "$nk" > /dev/null && python3 -c "import sys; sys.path.insert(0, '$here'); import nkeygen; nkeygen.operator_setup('$nk')" ||
	not_ok "tls: make nkeys and JWTs with Python's cryptography"
pub=$(test/bin/nkey_tool pub "$nk/user.seed")
if [ "$pub" = "$(cat "$nk/user.pub")" ]; then ok "nkey: the public key of a seed is the one Python's implementation made"
else not_ok "nkey: the public key of a seed" "C: $pub" "Python: $(cat "$nk/user.pub")"; fi

# nats_login PORT KIND FILE: CONNECT with the nonce signed by nkey_tool; prints the server's answer.
nats_login() {
	python3 - "$@" <<'PY'
import json, socket, subprocess, sys
port, kind, path = sys.argv[1:4]
s = socket.create_connection(("127.0.0.1", int(port)), timeout=5)
info = json.loads(s.recv(65536).decode().split(" ", 1)[1])
out = subprocess.run(["test/bin/nkey_tool", "creds" if kind == "creds" else "sign", path, info["nonce"]],
                     capture_output=True, text=True).stdout.split()
if not out or out[0] == "error:":
    print("tool:", " ".join(out)); sys.exit(0)
connect = {"verbose": False, "pedantic": False, "sig": out[-1]}
connect["jwt" if kind == "creds" else "nkey"] = out[0] if kind == "creds" else out[-2]
s.sendall(("CONNECT " + json.dumps(connect) + "\r\nPING\r\n").encode())
print(s.recv(4096).decode().strip())
PY
}
np=$(free_port); op=$(free_port)
printf 'listen: 127.0.0.1:%s\nauthorization { users = [ { nkey: %s } ] }\n' "$np" "$(cat "$nk/user.pub")" > "$nk/nkey.conf"
printf 'listen: 127.0.0.1:%s\noperator: %s\nresolver: MEMORY\nresolver_preload: { %s: %s }\n' \
	"$op" "$(cat "$nk/operator.jwt")" "$(cat "$nk/account.pub")" "$(cat "$nk/account.jwt")" > "$nk/op.conf"
for conf in nkey op; do
	nats-server -c "$nk/$conf.conf" > "$nk/$conf.log" 2>&1 &
	at_exit "kill $! 2> /dev/null"
done
wait_port "$np" 20 && wait_port "$op" 20 || not_ok "tls: start nats-server with nkeys and in operator mode" "$(tail -n 5 "$nk"/*.log)"

out=$(nats_login "$np" seed "$nk/user.seed")
[ "$out" = PONG ] && ok "nkey: nats-server accepts the signature of its nonce" || not_ok "nkey: nats-server accepts the signature of its nonce" "$out"
python3 "$here/nkeygen.py" user "$tmp" > /dev/null
out=$(nats_login "$np" seed "$tmp/user.seed")
grep -q "Authorization Violation" <<< "$out" && ok "nkey: another user's key is refused by the server" || not_ok "nkey: another user's key is refused" "$out"
out=$(nats_login "$op" creds "$nk/user.creds")
[ "$out" = PONG ] && ok "creds: nats-server in operator mode accepts the user JWT and the signature" || not_ok "creds: operator mode accepts the creds" "$out"

# Seeds that must be refused before anything is sent, with the reason.
seed=$(cat "$nk/user.seed")
python3 "$here/nkeygen.py" account "$tmp" > /dev/null
printf '%s' "${seed:0:10}$( [ "${seed:10:1}" = A ] && echo B || echo A )${seed:11}" > "$tmp/changed.seed"
printf '%s' "${seed:0:40}" > "$tmp/short.seed"
head -n 3 "$nk/user.creds" > "$tmp/nojwtseed.creds"
for c2 in "changed.seed|checksum is wrong" "short.seed|not an nkey seed" "account.seed|not a user's" "nojwtseed.creds|not a credentials file"; do
	f=${c2%%|*} want=${c2#*|}
	kind=seed; [ "${f##*.}" = creds ] && kind=creds
	out=$(test/bin/nkey_tool "$([ $kind = creds ] && echo creds || echo pub)" "$tmp/$f" x)
	if grep -q "$want" <<< "$out" && ! grep -q "$seed" <<< "$out"; then ok "nkey: $f is refused: $want"
	else not_ok "nkey: $f is refused: $want" "$out"; fi
done

# The stores over TLS, each against its own real server, with the
# certificates of $c: one file per store family.
for part in redis nats amqp; do
	if [ -f "$here/$part.sh" ]; then
		# shellcheck disable=SC1090
		source "$here/$part.sh"
	fi
done

suite_end
