#!/usr/bin/env bash
# The interrupt suite: sqlite3_interrupt() ends a claim that waits on a
# frozen network store.
#
# A claim through Redis waits at most timeout_ms.  With SQLite 3.41 or later
# the extension also sees sqlite3_interrupt() (sqlite3_is_interrupted), so an
# application can give up sooner; an older library cannot tell a function
# about it, and the wait runs to timeout_ms.  Both are checked, whichever
# library this platform has.
source "$(dirname "$0")/../lib.sh"
source "$TEST_ROOT/redis/server.sh"
cd "$REPO_ROOT" || exit 1
tmp=$(t_tmpdir)
py=/usr/bin/python3      # Debian's: its sqlite3 module can load extensions

port=$(free_port)
redis_start main "$port" || { not_ok "interrupt: redis starts"; suite_end; exit; }

# Connect, freeze the server, claim, interrupt after 1 s; print the library
# version, the seconds the claim took and its error.
cat > "$tmp/claim.py" <<'PY'
import sqlite3, sys, threading, time, os, signal
so, db, port, pid, timeout_ms = sys.argv[1:6]
conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
conn.enable_load_extension(True)
conn.load_extension(so)
conn.execute("SELECT anarchon_config('store', ?)",
             ("redis://127.0.0.1:%s?strategy=lease&timeout_ms=%s" % (port, timeout_ms),))
os.kill(int(pid), signal.SIGSTOP)
try:
    threading.Timer(1.0, conn.interrupt).start()
    slot = int(time.time()) // 60 * 60 * 1000
    t0 = time.monotonic()
    try:
        r = conn.execute("SELECT anarchon_claim('frozen', ?, 'tok-1')", (slot,)).fetchone()[0]
        err = "answered " + r
    except sqlite3.Error as e:
        err = str(e)
    took = time.monotonic() - t0
finally:
    os.kill(int(pid), signal.SIGCONT)
print(sqlite3.sqlite_version_info >= (3, 41, 0), "%.1f" % took, err)
PY

read -r has took err < <("$py" "$tmp/claim.py" "$REPO_ROOT/sqlite/anarchon" "$tmp/app.db" "$port" "$(redis_pid main)" 8000 2>&1)
lib=$("$py" -c 'import sqlite3; print(sqlite3.sqlite_version)')
if [ "$has" = True ]; then
	# Interrupted after 1 s: the wait ends in well under the 8 s timeout.
	if awk -v t="$took" 'BEGIN { exit !(t < 4) }' && grep -q -i 'cancel\|interrupt' <<< "$err"; then
		ok "interrupt: SQLite $lib, sqlite3_interrupt ends a frozen network wait (${took} s of timeout_ms 8 s)"
	else
		not_ok "interrupt: SQLite $lib, sqlite3_interrupt ends a frozen network wait" "took $took s: $err"
	fi
elif [ "$has" = False ]; then
	# No way to see the interrupt: the wait ends at timeout_ms with its error, not sooner, not later.
	if awk -v t="$took" 'BEGIN { exit !(t >= 7 && t < 12) }' && grep -q 'timeout_ms' <<< "$err"; then
		ok "interrupt: SQLite $lib (before 3.41), a frozen network wait ends at timeout_ms (${took} s of 8 s)"
	else
		not_ok "interrupt: SQLite $lib (before 3.41), a frozen network wait ends at timeout_ms" "took $took s: $err"
	fi
else
	not_ok "interrupt: the claim script ran" "$has $took $err"
fi

suite_end
