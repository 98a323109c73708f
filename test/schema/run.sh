#!/usr/bin/env bash
# The schema suite: a SQLite database file (its CHECKs, DEFAULTs, generated
# columns, indexes, triggers and views, crafted or not) cannot change a
# connection's settings or reach any function of anarchon with a side
# effect; the application's own SQL still can.  SQLite only, no server.
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1

tmp=$(t_tmpdir)
built_or_end "schema" sqlite || exit 1

out=$(/usr/bin/python3 test/schema/schema_calls.py "$REPO_ROOT/sqlite/anarchon" "$tmp" 2>&1)
rc=$?
printf '%s\n' "$out"
T_FAILED=$((T_FAILED + $(printf '%s\n' "$out" | grep -c '^not ok')))
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | grep -q '^not ok' || not_ok "schema: the checks ran to their end" "exit status $rc"
suite_end
