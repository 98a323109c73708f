#!/usr/bin/env bash
# The remote suite: unit checks of the store URL parser (net/url.c) and
# of the NATS reader (stores/nats/nats_codec.c), without servers.
#
# test/remote/urls.txt holds one URL a line, valid ones and every kind of
# malformed one; urls.expected what the parser makes of each: its parts
# (passwords only as "(set)") and the redacted form, or the error.
# nats_codec_test.c has its table in itself and prints its own checks.
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
here=test/remote
tmp=$(t_tmpdir)

if ! make -s test/bin/urlparse test/bin/nats_codec_test > "$tmp/build" 2>&1; then
	not_ok "remote: build urlparse and nats_codec_test" "$(tail -n 20 "$tmp/build")"
	suite_end
	exit
fi

test/bin/urlparse < "$here/urls.txt" > "$tmp/urls.out" 2>&1
diff_ok "remote: store URL parser table" "$here/urls.expected" "$tmp/urls.out"

# No error quotes a password: every secret in the table contains "pa", "ss" or "secret".
if grep '^error' "$tmp/urls.out" | grep -q -i -E 'secret|pa[/?#@]|s3cret'; then
	not_ok "remote: no URL error quotes a password" "$(grep '^error' "$tmp/urls.out" | grep -i -E 'secret|pa[/?#@]')"
else ok "remote: no URL error quotes a password"; fi

# Every answer line matches one input line: nothing crashed halfway.
if [ "$(grep -c -v -E '^(#|$)' "$here/urls.txt")" = "$(wc -l < "$tmp/urls.out")" ]; then ok "remote: one answer per URL"
else not_ok "remote: one answer per URL"; fi

# A URL longer than the limit, and one of NUL-free garbage, are refused cleanly.
{ printf 'redis://%s\n' "$(head -c 5000 /dev/zero | tr '\0' a)"; head -c 3000 /dev/urandom | tr -d '\0\n'; echo; } |
	test/bin/urlparse > "$tmp/long.out" 2>&1
if grep -q 'longer than 4096 bytes' "$tmp/long.out" && [ "$(wc -l < "$tmp/long.out")" -ge 1 ]; then ok "remote: an overlong URL is refused"
else not_ok "remote: an overlong URL is refused" "$(head -c 300 "$tmp/long.out")"; fi

vg_ok "remote: URL parser under valgrind" "$here/urls.txt" test/bin/urlparse

tap_ok "remote: the NATS codec's checks all ran and passed" test/bin/nats_codec_test
vg_ok "remote: the NATS codec under valgrind" /dev/null test/bin/nats_codec_test

suite_end
