"""schema_calls.py — a database file cannot reach a side effect of anarchon.

A SQLite file is data and may come from anyone.  For every kind of schema
object that SQLite runs on the reader's behalf (CHECK, DEFAULT, generated
column VIRTUAL and STORED, index expression, partial index WHERE, trigger,
view), made the ordinary way and crafted through PRAGMA writable_schema, with
PRAGMA trusted_schema ON and OFF, each function of the extension that writes,
changes a setting or asks the store is put in the object.  A fresh
connection then loads the extension and uses the object: the use must fail,
and the connection's settings, its store, the runs, pauses and run-now
requests in the file, and the counters must be as before.  The same calls
from the application's own SQL must still work, or the check could pass by
refusing everything.

Prints one TAP-like line per check ("ok - ..." / "not ok - ..."), as
test/lib.sh does.  Usage: python3 schema_calls.py EXTENSION WORKDIR
"""
import os
import shutil
import sqlite3
import sys
import time

EXT, WORK = sys.argv[1], sys.argv[2]
NOW = int(time.time()) * 1000
S1, S2 = NOW - 300000, NOW         # a finished run (old enough to prune) and a running one of 'j'
FUTURE = NOW + 3600 * 1000
failed = 0


def report(good, name, *detail):
    global failed
    print(("ok - " if good else "not ok - ") + name)
    if not good:
        failed += 1
        for d in detail:
            print("#   " + str(d))


def connect(path, load=True):
    c = sqlite3.connect(path, isolation_level=None)
    if load:
        c.enable_load_extension(True)
        c.load_extension(EXT)
    return c


# label, call, does a top-level call change the snapshot?
CALLS = [
    ("config lease_ms setter", "anarchon_config('lease_ms', '31536000000')", True),
    ("config store setter", "anarchon_config('store', 'redis://127.0.0.1:1')", True),
    ("config getter", "anarchon_config('store')", False),
    ("claim", f"anarchon_claim('k', {S2}, 'b')", True),
    ("heartbeat", f"anarchon_heartbeat('j', {S2}, 'a')", True),
    ("finish", f"anarchon_finish('j', {S2}, 'a')", True),
    ("finish with outcome", f"anarchon_finish('j', {S2}, 'a', 'failed')", True),
    ("fence", f"anarchon_fence('j', {S2}, 'a')", False),
    ("check", f"anarchon_check('j', {S2})", False),
    ("prune", "anarchon_prune(90000)", True),
    ("prune default", "anarchon_prune()", False),
    ("pause", "anarchon_pause('j')", True),
    ("pause until", f"anarchon_pause('j', {FUTURE})", True),
    ("resume", "anarchon_resume('p')", True),
    ("paused", "anarchon_paused('p')", False),
    ("run_now", "anarchon_run_now('r')", True),
    ("run_now with token", "anarchon_run_now('r', 'tok')", True),
    ("stats_reset", "anarchon_stats_reset()", True),
    ("loaded", "anarchon_loaded(1)", False),
]

# kind: (DDL with {f} for the call, statements that make SQLite run it).
# A crafted object is made with the literal 0x5eed for {f}, then rewritten.
INSERT = ["INSERT INTO h(x) VALUES (1)"]
KINDS = {
    "CHECK": ("CREATE TABLE h(x, CHECK (typeof({f}) IS NOT NULL))", INSERT),
    "DEFAULT": ("CREATE TABLE h(x, y DEFAULT ({f}))", INSERT),
    "generated VIRTUAL": ("CREATE TABLE h(x, y AS (typeof({f})) VIRTUAL)",
                          INSERT + ["SELECT y FROM h"]),
    "generated STORED": ("CREATE TABLE h(x, y AS (typeof({f})) STORED)", INSERT),
    "index expression": ("CREATE TABLE h(x); CREATE INDEX hi ON h(typeof({f}))", INSERT),
    "partial index": ("CREATE TABLE h(x); CREATE INDEX hi ON h(x) WHERE typeof({f}) IS NOT NULL",
                      INSERT),
    "trigger": ("CREATE TABLE h(x); CREATE TRIGGER ht AFTER INSERT ON h BEGIN SELECT {f}; END",
                INSERT),
    "view": ("CREATE TABLE h(x); CREATE VIEW hv AS SELECT {f} AS r", ["SELECT * FROM hv"]),
}


def query(c, sql):
    """The rows of sql, or its error as the value (a store that cannot be reached)."""
    try:
        cur = c.execute(sql)
        return [d[0] for d in cur.description], cur.fetchall()
    except sqlite3.Error as e:
        return [], "error: " + str(e)


# How a use is refused: by the extension, or by SQLite itself (DIRECTONLY,
# a schema it will not read, a function its rules forbid there).
REFUSALS = ("may only be called from top-level SQL", "unsafe use of", "malformed database schema",
            "non-deterministic functions prohibited")


def snapshot(c):
    """Everything a schema-borne call could change, read by top-level SQL."""
    snap = {"store open": query(c, "SELECT anarchon_paused('zz')")[1]}
    for key in ("lease_ms", "store", "attempts", "overlap", "max_late_ms"):
        snap["config " + key] = query(c, f"SELECT anarchon_config('{key}')")[1]
    names = query(c, "SELECT name FROM sqlite_schema WHERE type = 'table'"
                  " AND name LIKE 'anarchon%' ORDER BY name")[1]
    if isinstance(names, str):  # a schema SQLite cannot read is unusable, not changed
        snap["schema"] = names
        names = []
    for (name,) in names:
        snap["table " + name] = query(c, f'SELECT * FROM "{name}" ORDER BY 1, 2')[1]
    cols, rows = query(c, "SELECT * FROM anarchon_stats")
    snap["stats"] = rows if isinstance(rows, str) else \
        [{k: v for k, v in zip(cols, row) if not any(w in k for w in ("_ms", "_at", "since", "uptime"))}
         for row in rows]
    return snap


TEMPLATE = os.path.join(WORK, "template.db")


def base(path):
    """A file with history: a finished run and a running one of j, p paused."""
    if os.path.exists(TEMPLATE):
        shutil.copyfile(TEMPLATE, path)
        return
    c = connect(TEMPLATE)
    for sql in ("SELECT anarchon_config('max_late_ms', 600000)", f"SELECT anarchon_claim('j', {S1}, 'a')", f"SELECT anarchon_finish('j', {S1}, 'a')",
                f"SELECT anarchon_claim('j', {S2}, 'a')", "SELECT anarchon_pause('p')",
                "CREATE TABLE plain(x)"):
        c.execute(sql).fetchall()
    c.close()
    shutil.copyfile(TEMPLATE, path)


def hostile(path, ddl, call, crafted):
    """Add the object: created as such, or written into sqlite_schema."""
    base(path)
    if not crafted:
        c = connect(path)
        try:
            c.executescript(ddl.format(f=call))
        finally:
            c.close()
        return
    c = connect(path, load=False)
    c.executescript(ddl.format(f="0x5eed"))
    c.execute("INSERT INTO h(x) VALUES (0)")   # a row whose VIRTUAL column a read computes
    c.execute("PRAGMA writable_schema = ON")
    n = c.execute("UPDATE sqlite_schema SET sql = replace(sql, '0x5eed', ?)"
                  " WHERE name IN ('h', 'hi', 'ht', 'hv') AND sql LIKE '%0x5eed%'",
                  (call,)).rowcount
    c.execute("PRAGMA writable_schema = OFF")
    c.close()
    if n != 1:
        raise RuntimeError(f"crafting changed {n} rows")


def victim(path, trusted, stmts, schema_first):
    """
    A reader of the file: what it got, and whether anything changed.  With
    schema_first it reads the schema before it loads the extension, so that
    SQLite parsed the objects before the functions existed.
    """
    if schema_first:
        c = connect(path, load=False)
        query(c, "SELECT count(*) FROM sqlite_schema")
        c.enable_load_extension(True)
        c.load_extension(EXT)
    else:
        c = connect(path)
    c.execute(f"PRAGMA trusted_schema = {trusted}")
    before = snapshot(c)
    errors = []
    for sql in stmts:
        try:
            c.execute(sql).fetchall()
            errors.append(None)
        except sqlite3.Error as e:
            errors.append(str(e))
    after = snapshot(c)
    c.close()
    return errors, before, after


def diff(a, b):
    return [f"{k}: {a.get(k)!r} -> {b.get(k)!r}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


n = 0
for crafted in (False, True):
    for kind, (ddl, stmts) in KINDS.items():
        name_kind = ("crafted " if crafted else "") + kind
        for trusted in ("ON", "OFF"):
            bad = []
            for label, call, _ in CALLS:
                n += 1
                path = os.path.join(WORK, f"h{n}.db")
                try:
                    hostile(path, ddl, call, crafted)
                except sqlite3.Error as e:
                    # SQLite itself refuses to create such an object.
                    if crafted:
                        bad.append(f"{label}: the crafted file could not be made: {e}")
                    continue
                for order in ("extension first", "schema first"):
                    shutil.copyfile(path, path + ".v")
                    errors, before, after = victim(path + ".v", trusted, stmts, order == "schema first")
                    if any(e is None or not any(r in e for r in REFUSALS) for e in errors):
                        bad.append(f"{label}, {order}: not refused ({errors})")
                    changes = diff(before, after)
                    if changes:
                        bad.append(f"{label}, {order}: changed " + "; ".join(changes))
            report(not bad, f"schema {name_kind} (trusted_schema {trusted}): "
                   f"{len(CALLS)} calls refused, nothing changed, "
                   "extension loaded before and after the schema was read", *bad)

# The same calls from the application's own SQL still work.
bad = []
for label, call, changes in CALLS:
    n += 1
    path = os.path.join(WORK, f"d{n}.db")
    base(path)
    c = connect(path)
    before = snapshot(c)
    try:
        # A fence protects the writes of its transaction: it needs one.
        fenced = label == "fence"
        if fenced:
            c.execute("BEGIN IMMEDIATE")
        c.execute(f"SELECT {call}").fetchall()
        if fenced:
            c.execute("COMMIT")
        err = None
    except sqlite3.Error as e:
        err = str(e)
    after = snapshot(c)
    c.close()
    if err is not None and not (label == "config store setter" and "127.0.0.1:1" in err):
        bad.append(f"{label}: {err}")
    if changes and not diff(before, after):
        bad.append(f"{label}: changed nothing")
report(not bad, f"schema: the {len(CALLS)} calls work from top-level SQL", *bad)

# A direct call inside a statement that writes to a plain table is top-level too.
path = os.path.join(WORK, "plain.db")
base(path)
c = connect(path)
try:
    c.execute("INSERT INTO plain(x) VALUES (anarchon_config('lease_ms', '5000'))")
    got = c.execute("SELECT anarchon_config('lease_ms')").fetchone()[0]
    report(str(got) == "5000", "schema: a setter inside the application's own INSERT works", got)
except sqlite3.Error as e:
    report(False, "schema: a setter inside the application's own INSERT works", e)
c.close()

# A statement of the application that calls the setter itself and is paused
# on a row does not make a CHECK's call of it top-level.
path = os.path.join(WORK, "paused.db")
hostile(path, KINDS["CHECK"][0], "anarchon_config('lease_ms', '31536000000')", True)
c = connect(path)
outer = c.execute("SELECT anarchon_config('lease_ms', '7000') FROM (VALUES (1), (2))")
outer.fetchone()
try:
    c.execute("INSERT INTO h(x) VALUES (1)")
    err = None
except sqlite3.Error as e:
    err = str(e)
got = c.execute("SELECT anarchon_config('lease_ms')").fetchone()[0]
report(err is not None and str(got) == "7000",
       "schema: a CHECK's setter is refused while the application's own call is paused on a row",
       f"error: {err}", f"lease_ms: {got}")
c.close()

# A statement of the application that calls a function on many rows: each
# call is direct, also after the statement has returned rows (SQLite 3.45 on
# keeps the last row's count while the next row is computed).
path = os.path.join(WORK, "rows.db")
base(path)
c = connect(path)
try:
    got = [r[0] for r in c.execute(
        "WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < 4)"
        " SELECT anarchon_config('lease_ms', 6000 + x) FROM s")]
    got += [r[0] for r in c.execute(
        "SELECT anarchon_config('lease_ms', 7000 + slot / 1000 % 10) FROM anarchon_slots('* * * * * *', 1000000000000, 1000000003000)")]
    report([str(g) for g in got] == ["6001", "6002", "6003", "6004", "7000", "7001", "7002"],
           "schema: a statement of the application calls a setter on every row it returns", got)
except sqlite3.Error as e:
    report(False, "schema: a statement of the application calls a setter on every row it returns", e)
c.close()

sys.exit(1 if failed else 0)
