# certs.sh DIR — the certificates of the TLS tests, made with openssl:
#   ca.crt/ca.key          the test CA
#   server.crt/.key        for localhost and 127.0.0.1, by the CA
#   expired.crt            the same key, expired yesterday
#   other.crt              the same key, for other.example only
#   client.crt/.key        a client certificate by the CA (CN anarchon-client)
#   wrongca.crt            another CA, which signed nothing here
#   cnonly.crt             the same key, CN localhost and no subjectAltName
#   wild.crt               the same key, for *.example.test only
set -e
d=$1
mkdir -p "$d"
cd "$d"
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2> /dev/null; }
ca() {
	key "$1.key"
	openssl req -x509 -new -key "$1.key" -subj "/CN=$2" -days 30 -out "$1.crt" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2> /dev/null
}
# An expired validity: OpenSSL 3.5 refuses a negative -days and has
# -not_before/-not_after; 3.0 has only -days, and takes -1.
if openssl x509 -help 2>&1 | grep -q -- -not_after; then
	expired_dates="-not_before 20200101000000Z -not_after 20210101000000Z"
else
	expired_dates="-days -1"
fi
# leaf NAME KEY CN SAN DAYS|expired (SAN "-": none)
leaf() {
	local dates="-days $5"
	[ "$5" = expired ] && dates=$expired_dates
	printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\n' > "$1.ext"
	[ "$4" = - ] || printf 'subjectAltName=%s\n' "$4" >> "$1.ext"
	openssl req -new -key "$2" -subj "/CN=$3" -out "$1.csr"
	# shellcheck disable=SC2086
	openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial $dates \
		-extfile "$1.ext" -out "$1.crt"
	rm -f "$1.csr" "$1.ext"
}
ca ca "anarchon test CA"
ca wrongca "another CA"
key server.key
leaf server server.key localhost "DNS:localhost,IP:127.0.0.1" 30
leaf expired server.key localhost "DNS:localhost,IP:127.0.0.1" expired
leaf other server.key other.example "DNS:other.example" 30
leaf cnonly server.key localhost - 30
leaf wild server.key wild.example.test "DNS:*.example.test" 30
key client.key
leaf client client.key anarchon-client "DNS:anarchon-client" 30
chmod 600 ./*.key
