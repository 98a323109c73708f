#!/usr/bin/env bash
# The bad-input suite: every SQL function of anarchon called with each
# argument in turn NULL, empty, 1 MB, of the wrong type, out of range or an
# invalid word, and every setting set to odd values, through SQLite and
# through PostgreSQL (test/badinput/fuzz.py).  Each call must end in a clear
# error (in PostgreSQL with a proper SQLSTATE, the session still usable), the
# runs stored by the local store must be read back unchanged, the refused
# settings must leave the old values, and a good claim must still answer as
# before.  The same again with the calls sent to Redis (strategies lease and
# script): there, what Redis holds, every key DUMPed, must be the same after.
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
source test/pg/server.sh
source test/redis/server.sh
tmp=$(t_tmpdir)

built_or_end badinput sqlite || exit
RPORT=$(free_port)
redis_start main "$RPORT" > /dev/null || not_ok "badinput: start redis-server"
# Everything Redis holds, in a form that compares.
SNAP="for k in \$(redis-cli -p $RPORT --scan | sort); do echo \"\$k\"; redis-cli -p $RPORT --no-raw DUMP \"\$k\"; done"
STORES=("" "redis-lease redis://127.0.0.1:$RPORT?strategy=lease&prefix=fzl" \
	"redis-script redis://127.0.0.1:$RPORT?strategy=script&prefix=fzs")

# fuzz HOST ARGS...: fuzz.py against the local store, then each Redis store.
# It prints its own ok / not ok lines; its status counts them for suite_end.
fuzz() {
	local s
	for s in "${STORES[@]}"; do
		read -r name url <<< "$s"
		FUZZ_NAME=$name FUZZ_STORE=$url FUZZ_SNAPSHOT=${url:+$SNAP} /usr/bin/python3 test/badinput/fuzz.py "$@" 2>&1 ||
			T_FAILED=$((T_FAILED + 1))
	done
}
fuzz sqlite "$REPO_ROOT/sqlite/anarchon" "$tmp/fuzz.db"

if ! pg_install > "$tmp/install.log" 2>&1; then
	not_ok "badinput: make install" "$(tail -n 20 "$tmp/install.log")"
elif ! pg_start > "$tmp/start.log" 2>&1; then
	not_ok "badinput: start PostgreSQL" "$(tail -n 20 "$tmp/start.log")"
else
	fuzz pg
	# The server must have lived through it: no backend crashed.
	if grep -E 'terminated by signal|server process .* was terminated' "$PG_LOG" > "$tmp/crash"; then
		not_ok "badinput: no PostgreSQL backend crashed" "$(head -n 5 "$tmp/crash")"
	else
		ok "badinput: no PostgreSQL backend crashed"
	fi
fi
suite_end
