# badinput.sh — malformed URLs, unknown strategies and parameters, unreachable
# hosts, wrong passwords: clear errors, never a secret.  (sourced by run.sh)

H=127.0.0.1:$PORT
refuse "no host" "redis://" CONFIG "no host"
refuse "no host before the port" "redis://:$PORT" CONFIG "no host"
refuse "port out of range" "redis://127.0.0.1:99999" CONFIG "port .* 1 to 65535"
refuse "port not a number" "redis://127.0.0.1:63x79" CONFIG "port"
refuse "not a redis URL" "redis:/127.0.0.1" CONFIG "unknown store"
refuse "unknown strategy" "redis://$H?strategy=fastest" CONFIG 'unknown redis strategy "fastest": the strategies are lease, stream-id, idmp and script'
refuse "unknown parameter" "redis://$H?strategy=lease&colour=blue" CONFIG '"colour" is not known .* strategy, prefix, timeout_ms'
refuse "parameter of another strategy" "redis://$H?strategy=lease&window_ms=5000" CONFIG "window_ms applies to strategy=script only"
refuse "duration_sec on script" "redis://$H?strategy=script&duration_sec=50" CONFIG "duration_sec applies to strategy=idmp only"
refuse "timeout_ms zero" "redis://$H?timeout_ms=0" CONFIG "timeout_ms must be a whole number from 1"
refuse "timeout_ms not a number" "redis://$H?timeout_ms=fast" CONFIG "timeout_ms must be a whole number"
refuse "window_ms negative" "redis://$H?strategy=script&window_ms=-1" CONFIG "window_ms must be a whole number"
refuse "duration_sec too long" "redis://$H?strategy=idmp&duration_sec=86401" CONFIG "duration_sec must be a whole number from 1 to 86400"
refuse "prefix with a colon" "redis://$H?prefix=a:b" CONFIG "prefix must be 1 to 64 bytes"
refuse "database not a number" "redis://$H/zero" CONFIG "database number"
refuse "database that does not exist" "redis://$H/99" CONFIG "no database 99"
refuse "malformed query" "redis://$H?strategy" CONFIG "malformed query parameter"
refuse "repeated parameter" "redis://$H?strategy=lease&strategy=script" CONFIG "repeats the query parameter"
refuse "malformed escape" "redis://$H?prefix=%zz" CONFIG "malformed %-escape"
refuse "a password for a server without one" "redis://:Extra-PW-99@$H" AUTH "has no password configured, but the store URL gives one"

nobody=$(free_port)
t0=$(now_ms)
refuse "nothing listening" "redis://127.0.0.1:$nobody" CONNECT "cannot connect to redis store redis://127.0.0.1:$nobody: Connection refused"
if [ $(( $(now_ms) - t0 )) -lt 3000 ]; then ok "redis bad input: a refused connection fails at once"
else not_ok "redis bad input: a refused connection fails at once" "$(( $(now_ms) - t0 )) ms"; fi

# Passwords: a server of its own with a default password and an ACL user.
APORT=$(free_port)
if redis_start auth "$APORT" --requirepass 'Def-PW-4711' --user alice on '>Alice-PW-0815' '~*' '&*' '+@all'; then
	refuse "no password given" "redis://127.0.0.1:$APORT" AUTH "requires a password, and none was given"
	refuse "wrong password" "redis://:Wrong-PW-1234@127.0.0.1:$APORT" AUTH "refused the user name or password"
	refuse "wrong user password" "redis://alice:Wrong-PW-5678@127.0.0.1:$APORT" AUTH "refused the user name or password"
	refuse "unknown user" "redis://mallory:Alice-PW-0815@127.0.0.1:$APORT" AUTH "refused the user name or password"
	echo "claim sync $(now_ms) a" | "$RDRIVE" "redis://:Def-PW-4711@127.0.0.1:$APORT/1" > "$tmp/auth-ok.out" 2>&1
	echo "claim sync $(now_ms) a" | "$RDRIVE" "redis://alice:Alice%2DPW%2D0815@127.0.0.1:$APORT" > "$tmp/auth-user.out" 2>&1
	if [ "$(cat "$tmp/auth-ok.out")" = "won 1" ] && [ "$(cat "$tmp/auth-user.out")" = "won 1" ]; then
		ok "redis: the right password and an ACL user (percent-encoded) are accepted"
	else not_ok "redis: the right password and an ACL user (percent-encoded) are accepted" "$(cat "$tmp/auth-ok.out" "$tmp/auth-user.out")"; fi
	if grep -l -E 'PW-(4711|0815|1234|5678|99)' "$tmp"/bad-*.out "$tmp"/auth-*.out > /dev/null; then
		not_ok "redis: no password appears in any message" "$(grep -E 'PW-' "$tmp"/bad-*.out "$tmp"/auth-*.out | head -n 3)"
	else ok "redis: no password appears in any message"; fi
	redis_stop auth
else
	not_ok "redis: start a server with passwords" "$(tail -n 5 "$R_DIR/auth/log")"
fi

# A data server named where the sentinels go (doc/clusters.md's
# redis+sentinel:// URL, written with the server's own address): the error
# says that it is no sentinel and what the URL names, not just Redis's
# "unknown command".
out=$(echo "claim sync 1 a" | RDRIVE_HINTS=1 "$RDRIVE" "redis+sentinel://$H/jobs?timeout_ms=1000" 2>&1)
if printf '%s\n' "$out" | grep -qE "^error CONFIG: .*the server at $H is not a sentinel" &&
	printf '%s\n' "$out" | grep -qE '^hint: .*redis\+sentinel:// URL names the sentinels'; then
	ok "redis bad input: a data server named as a sentinel is said to be no sentinel, with a hint"
else not_ok "redis bad input: a data server named as a sentinel is said to be no sentinel, with a hint" "$out"; fi
