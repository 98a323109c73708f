#!/usr/bin/env bash
# The bad-input suite: every SQL function of anarchon called with each
# argument in turn NULL, empty, 1 MB, of the wrong type, out of range or an
# invalid word, and every setting set to odd values, through SQLite and
# through PostgreSQL (test/badinput/fuzz.py).  Each call must end in a clear
# error (in PostgreSQL with a proper SQLSTATE, the session still usable), the
# runs stored by the local store must be read back unchanged, the refused
# settings must leave the old values, and a good claim must still answer as
# before.
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
source test/pg/server.sh
tmp=$(t_tmpdir)

built_or_end badinput sqlite || exit
# fuzz.py prints its own ok / not ok lines; its status counts them for suite_end.
/usr/bin/python3 test/badinput/fuzz.py sqlite "$REPO_ROOT/sqlite/anarchon" "$tmp/fuzz.db" 2>&1 ||
	T_FAILED=$((T_FAILED + 1))

if ! pg_install > "$tmp/install.log" 2>&1; then
	not_ok "badinput: make install" "$(tail -n 20 "$tmp/install.log")"
elif ! pg_start > "$tmp/start.log" 2>&1; then
	not_ok "badinput: start PostgreSQL" "$(tail -n 20 "$tmp/start.log")"
else
	/usr/bin/python3 test/badinput/fuzz.py pg 2>&1 || T_FAILED=$((T_FAILED + 1))
	# The server must have lived through it: no backend crashed.
	if grep -E 'terminated by signal|server process .* was terminated' "$PG_LOG" > "$tmp/crash"; then
		not_ok "badinput: no PostgreSQL backend crashed" "$(head -n 5 "$tmp/crash")"
	else
		ok "badinput: no PostgreSQL backend crashed"
	fi
fi
suite_end
