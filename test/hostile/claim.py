#!/usr/bin/python3
# claim.py — one claim through SQLite, timed inside the process.
#
#   claim.py EXTENSION URL SLOT
#
# Loads the extension into Debian's python3 sqlite3 module, sets the store,
# and claims ('h', SLOT): prints "ms=N" (the claim's own time, without the
# process's start-up) and the claim's answer or error.
import sqlite3
import sys
import time

so, url, slot = sys.argv[1], sys.argv[2], int(sys.argv[3])
conn = sqlite3.connect(":memory:", isolation_level=None)
conn.enable_load_extension(True)
conn.load_extension(so)
# A store that connects when set may fail here already; it stays set, and
# the claim below connects again: that claim is what is timed and judged.
try:
    conn.execute("SELECT anarchon_config('store', ?)", (url,))
except sqlite3.Error as e:
    print("anarchon_config: error: " + str(e))
t0 = time.monotonic()
try:
    out = "answered " + conn.execute("SELECT anarchon_claim('h', ?, 'tok')", (slot,)).fetchone()[0]
except sqlite3.Error as e:
    out = "anarchon_claim: error: " + str(e)
print("ms=%d" % ((time.monotonic() - t0) * 1000))
print(out)
