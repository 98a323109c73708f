# servers.sh — TLS listeners for the suites' own servers (sourced after
# lib.sh), so that the conformance and fault suites and the bench run their
# TLS rows against the same servers as the plaintext ones.
#
#   tls_certs              make the test certificates once (certs.sh) under
#                          the suite's temporary folder: TLS_CERTS
#   redis_tls_args PORT    redis-server options for a TLS port PORT beside
#                          its plaintext one (no client certificate asked)
#   nats_tls_conf NAME     a nats-server configuration whose client port
#                          speaks only TLS; prints its path (for nats_start
#                          NAME -c PATH)
#   rmq_tls_conf           the rabbitmq.conf lines of a TLS listener on a
#                          new free port, RMQ_TLS_PORT: the array
#                          RMQ_TLS_CONF (rmq_start DIR "${RMQ_TLS_CONF[@]}")
#   tls_query              the URL parameters that trust the test CA

tls_certs() {
	[ -n "${TLS_CERTS:-}" ] && [ -f "$TLS_CERTS/ca.crt" ] && return 0
	TLS_CERTS=$(t_tmpdir)/certs
	bash "$TEST_ROOT/tls/certs.sh" "$TLS_CERTS" > "$TLS_CERTS.log" 2>&1 || { cat "$TLS_CERTS.log" >&2; return 1; }
}

redis_tls_args() {
	echo "--tls-port $1 --tls-cert-file $TLS_CERTS/server.crt --tls-key-file $TLS_CERTS/server.key" \
		"--tls-ca-cert-file $TLS_CERTS/ca.crt --tls-auth-clients no"
}

nats_tls_conf() {
	local f=$TLS_CERTS/nats-$1.conf
	printf 'tls {\n  cert_file: "%s/server.crt"\n  key_file: "%s/server.key"\n  ca_file: "%s/ca.crt"\n  timeout: 10\n}\n' \
		"$TLS_CERTS" "$TLS_CERTS" "$TLS_CERTS" > "$f"
	echo "$f"
}

rmq_tls_conf() {
	RMQ_TLS_PORT=$(free_port) || return 1
	RMQ_TLS_CONF=("listeners.ssl.default = 127.0.0.1:$RMQ_TLS_PORT"
		"ssl_options.cacertfile = $TLS_CERTS/ca.crt"
		"ssl_options.certfile = $TLS_CERTS/server.crt"
		"ssl_options.keyfile = $TLS_CERTS/server.key"
		"ssl_options.verify = verify_none")
}

tls_query() { echo "ca=$TLS_CERTS/ca.crt"; }
