#!/usr/bin/env bash
# The redact suite: one rule hides a store's credentials wherever its
# address is shown (net/redact.c), in every scheme and in every host.
#
# test/redact/cases.txt is a table of addresses whose secrets all hold
# S3CRET, written plainly or percent-encoded: a password with a raw '@',
# '/', '?', '#' or ':', one written %40 or %77, an empty one, a user alone,
# a NATS token, secret query parameters, several servers, each scheme,
# and a libpq keyword=value string.  Each goes through
#
#   - an_redact_url itself (test/bin/redact_probe), whose answer must keep
#     the listed host, port, path and parameters, and cut to any buffer size
#     is a prefix of the whole;
#   - SQLite: anarchon_config('store', ...)'s error, the store it reports,
#     a claim's error and anarchon_stats' row;
#   - the command: stderr of claim, and stats' rows, on a closed port;
#   - PostgreSQL: the hint of a URL set as anarchon.store, a claim through a
#     server whose user mapping holds the secrets, and the server's log.
#
# None of their outputs may hold S3CRET, S3CR%45T or %53%33CRET (any case).
# Every address is on loopback and a closed port: no connection leaves the
# machine.
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
here=test/redact
tmp=$(t_tmpdir)
secret='S3CRET|S3CR%45T|%53%33CRET'

built_or_end redact test/bin/redact_probe sqlite cli || exit

mapfile -t urls < <(grep -v -E '^(#|$)' "$here/cases.txt" | cut -f1)
mapfile -t keeps < <(grep -v -E '^(#|$)' "$here/cases.txt" | cut -f2)

# leaks NAME TEXT: not ok when TEXT shows a secret, in any form.
leaks() {
	if grep -q -i -E "$secret" <<< "$2"; then
		not_ok "$1" "$(grep -i -E "$secret" <<< "$2" | head -n 3)"
		return 0
	fi
	return 1
}

# --------------------------------------------------------- the rule itself
printf '%s\n' "${urls[@]}" > "$tmp/urls"
test/bin/redact_probe < "$tmp/urls" > "$tmp/redacted" 2>&1
probe_rc=$?
mapfile -t shown < "$tmp/redacted"
bad=()
[ "$probe_rc" -eq 0 ] || bad+=("redact_probe: $(tail -n 1 "$tmp/redacted")")
[ "${#shown[@]}" -ge "${#urls[@]}" ] || bad+=("${#shown[@]} answers for ${#urls[@]} addresses")
for i in "${!urls[@]}"; do
	grep -q -i -E "$secret" <<< "${shown[$i]}" && bad+=("shown: ${shown[$i]}")
	IFS='|' read -r -a want <<< "${keeps[$i]}"
	for w in "${want[@]}"; do
		[[ ${shown[$i]} == *"$w"* ]] || bad+=("${urls[$i]} → ${shown[$i]}: lost \"$w\"")
	done
done
if [ ${#bad[@]} -eq 0 ]; then ok "redact: ${#urls[@]} addresses hide every secret and keep host, port, path and parameters"
else not_ok "redact: the table" "${bad[@]}"; fi
vg_ok "redact: the table under valgrind" "$tmp/urls" test/bin/redact_probe

# ------------------------------------------------------------------ SQLite
bad=()
n=0
for url in "${urls[@]}"; do
	case $url in redis*|amqp*|nats*|tls*) ;; *) continue ;; esac
	n=$((n + 1))
	out=$(printf '%s\n' ".load ./sqlite/anarchon" \
		"SELECT anarchon_config('store', '${url//\'/\'\'}');" \
		"SELECT anarchon_config('store');" \
		"SELECT anarchon_claim('j', 4102444800000, 'a');" \
		"SELECT store FROM anarchon_stats;" | timeout 60 sqlite3 "$tmp/sq.db" 2>&1)
	grep -q -i -E "$secret" <<< "$out" && bad+=("$url: $(grep -i -E "$secret" <<< "$out" | head -n 2)")
	grep -q -F '127.0.0.1:1' <<< "$out" || bad+=("$url: its host is not shown: $(head -c 300 <<< "$out")")
done
if [ ${#bad[@]} -eq 0 ] && [ "$n" -gt 10 ]; then ok "redact: SQLite's config, errors and stats of $n addresses"
else not_ok "redact: SQLite's config, errors and stats ($n addresses)" "${bad[@]}"; fi

# ------------------------------------------------------------- the command
bad=()
for url in "${urls[@]}"; do
	out=$(timeout 60 cli/anarchon claim --store "$url" --job j --slot 4102444800000 2>&1)
	out+=$(timeout 60 cli/anarchon stats --store "$url" 2>&1)
	out+=$(ANARCHON_STORE=$url timeout 60 cli/anarchon check --job j --slot 4102444800000 2>&1)
	grep -q -i -E "$secret" <<< "$out" && bad+=("$url: $(grep -i -E "$secret" <<< "$out" | head -n 2)")
	[ -n "$out" ] || bad+=("$url: the command said nothing")
done
if [ ${#bad[@]} -eq 0 ]; then ok "redact: the command's errors and stats rows of ${#urls[@]} addresses"
else not_ok "redact: the command's errors and stats" "${bad[@]}"; fi

# The PostgreSQL URLs whose password libpq would cut elsewhere are refused
# before libpq reads them, saying how to write them.
out=$(cli/anarchon claim --store 'postgresql://u:p@ss-S3CRET@127.0.0.1:1/db' --job j --slot 4102444800000 2>&1)
has "redact: a PostgreSQL password with a raw '@' is refused before libpq, with the escapes to use" "$out" "as %40, %2F, %3F and %23"

# ------------------------------------------------ credentials in clear
# Redis's AUTH, RabbitMQ's PLAIN and NATS's CONNECT send the secret as it is: without TLS
# to an address off loopback, refused before any socket (192.0.2.x is
# TEST-NET: strace shows that nothing was even created); loopback, TLS or
# plaintext_auth=true pass the rule (then a closed loopback port answers).
bad=()
for c in "redis://u:pw-S3CRET@192.0.2.1:6379/0|password" \
	"redis+sentinel://127.0.0.1:1,192.0.2.1:26379/m?sentinel_password=S3CRET|sentinel_password" \
	"amqp://u:pw-S3CRET@192.0.2.1/vh|password" "nats://tok-S3CRET@192.0.2.1:4222|token"; do
	url=${c%|*} what=${c##*|}
	out=$(strace -f -e trace=socket,connect -o "$tmp/clear.strace" cli/anarchon claim --store "$url" --job j --slot 4102444800000 2>&1)
	rc=$?
	grep -q "would send its $what in clear to 192.0.2.1, which is not a loopback address" <<< "$out" || bad+=("$url: $out")
	grep -q "plaintext_auth=true" <<< "$out" || bad+=("$url: no hint: $out")
	[ "$rc" -eq 64 ] || bad+=("$url: exit $rc, not 64 (a bad store URL, as every URL refusal of the command)")
	grep -q -E 'socket\(AF_INET6?,|connect\(' "$tmp/clear.strace" && bad+=("$url: a socket was made: $(grep -E 'socket|connect' "$tmp/clear.strace" | head -n 2)")
	leaks "redact: credentials in clear: $url" "$out" && bad+=("$url: the refusal shows the secret")
done
for url in "redis://u:pw@127.0.0.1:1/0" "redis://u:pw@[::1]:1/0" "amqp://u:pw@127.0.0.1:1/vh" "redis://u:pw@127.0.0.1:1/0?plaintext_auth=true"; do
	out=$(cli/anarchon claim --store "$url" --job j --slot 4102444800000 2>&1)
	grep -q "in clear" <<< "$out" && bad+=("$url: refused: $out")
	grep -q -i "refused" <<< "$out" || bad+=("$url: not tried on its closed port: $out")
done
if [ ${#bad[@]} -eq 0 ]; then ok "redact: Redis, RabbitMQ and NATS secrets in clear off loopback are refused before any socket (exit 64, a bad store URL), with the hint; loopback and plaintext_auth=true pass"
else not_ok "redact: Redis and RabbitMQ passwords in clear" "${bad[@]}"; fi

# -------------------------------------------------------------- PostgreSQL
source test/pg/server.sh
if ! pg_suite_start redact "$tmp"; then suite_end; exit; fi
psql -X -q -c "CREATE EXTENSION anarchon" > "$tmp/pg.log" 2>&1 || not_ok "redact: CREATE EXTENSION" "$(cat "$tmp/pg.log")"
bad=()
n=0
for url in "${urls[@]}"; do
	case $url in redis*|amqp*|nats*|tls*) ;; *) continue ;; esac
	# A value longer than a server's name is refused without being repeated;
	# a short one reaches the hint that shows what to create.
	[ ${#url} -le 63 ] && n=$((n + 1))
	out=$(psql -X -q -v ON_ERROR_STOP=0 -c "SET anarchon.store = '${url//\'/\'\'}'" \
		-c "SELECT anarchon_check('j', 4102444800000)" 2>&1)
	grep -q -i -E "$secret" <<< "$out" && bad+=("$url: $(grep -i -E "$secret" <<< "$out" | head -n 2)")
	grep -q "ERROR" <<< "$out" || bad+=("$url: no error: $out")
done
if [ ${#bad[@]} -eq 0 ] && [ "$n" -ge 5 ]; then ok "redact: PostgreSQL's errors and hints for addresses set as anarchon.store ($n short ones reach the hint)"
else not_ok "redact: PostgreSQL's errors and hints for addresses set as anarchon.store" "${bad[@]}"; fi

# A server whose user mapping holds the secrets: the claim's error names it
# without them.
out=$(psql -X -q -v ON_ERROR_STOP=0 \
	-c "CREATE SERVER rs FOREIGN DATA WRAPPER anarchon OPTIONS (url 'redis+sentinel://127.0.0.1:1,127.0.0.1:2/m?timeout_ms=500')" \
	-c "CREATE USER MAPPING FOR PUBLIC SERVER rs OPTIONS (user 'u', password 'p@ss-S3CRET', sentinel_user 's', sentinel_password '%53%33CRET')" \
	-c "SET anarchon.store = 'rs'" -c "SELECT anarchon_check('j', 4102444800000)" \
	-c "SELECT store FROM anarchon.anarchon_stats()" 2>&1)
if ! leaks "redact: PostgreSQL's error for a server whose mapping holds the secrets" "$out"; then
	has "redact: PostgreSQL's error for a server whose mapping holds the secrets" "$out" "127.0.0.1:1,127.0.0.1:2/m"
fi
if ! leaks "redact: the PostgreSQL server's log" "$(cat "$PG_LOG")"; then
	if grep -q "names a foreign server, not a store url" "$PG_LOG"; then ok "redact: the PostgreSQL server's log holds the errors, and none of the secrets"
	else not_ok "redact: the PostgreSQL server's log holds the errors" "$(tail -n 5 "$PG_LOG")"; fi
fi
suite_end
