#!/usr/bin/env python3
"""fuzz.py: bad input through both hosts, and the stored runs left as they were.

    fuzz.py sqlite EXTENSION DATABASE
    fuzz.py pg                       (PGHOST, PGPORT, ... name the server)

With FUZZ_STORE set to a store URL and FUZZ_NAME to a short name for it, the
calls go to that network store instead of the local one (through PostgreSQL,
a foreign server named FUZZ_NAME), and FUZZ_SNAPSHOT is a shell command that
prints everything the store holds: it must print the same before and after.

Every SQL function of anarchon is called with each of its arguments in turn
replaced by a bad value (NULL, empty, 1 MB, the wrong type, out of range, an
invalid word), the others good, and the settings are set to odd values.
Each call must fail with a clear error:
  - SQLite: an error whose message names the function, says more than a
    bare SQL error, and is not an internal one;
  - PostgreSQL: a SQLSTATE of a proper class (never XX000 internal_error),
    a message that starts in lower case, and the session still usable.
Before and after, the runs stored by the local store are read in full: the
bad calls must change nothing.  A good claim afterwards must still answer
as it did before.

Prints TAP-like lines, "ok - ..." or "not ok - ..." with "#" details.
"""
import os
import re
import subprocess
import sys

MB = "x" * (1 << 20)
TOKEN = "0123456789abcdef0123456789abcdef"
SLOT = 1893456000000            # 2030-01-01 00:00:00 UTC, a whole second
FAILED = []
TABLE_VALUED = ("anarchon_slots", "anarchon_missed")
STORE = os.environ.get("FUZZ_STORE", "")
NAME = os.environ.get("FUZZ_NAME", "")
SNAPSHOT = os.environ.get("FUZZ_SNAPSHOT", "")


def label(host):
    """The host, and the network store the calls go to."""
    return "%s/%s" % (host, NAME) if STORE else host


def runs(one, sql):
    """What is stored: the local runs table, and the network store's whole state."""
    rows = one(sql)
    if SNAPSHOT:
        rows = (rows, subprocess.run(SNAPSHOT, shell=True, capture_output=True, text=True).stdout)
    return rows


def what_is_stored(stored):
    """The words for what runs() read."""
    if SNAPSHOT:
        return "%d runs in the local table, %d lines of the store's dump" % (len(stored[0]), len(stored[1].splitlines()))
    return "%d runs" % len(stored)


def report(name, problems):
    if problems:
        print("not ok - " + name)
        for p in problems[:15]:
            print("#   " + p[:300])
        if len(problems) > 15:
            print("#   ... and %d more" % (len(problems) - 15))
        FAILED.append(name)
    else:
        print("ok - " + name)


# Bad values of each kind of argument, as SQL text.  Each must be refused.
BAD_TEXT = {"NULL": "NULL", "empty": "''", "1 MB": "'%s'" % MB}
BAD_JOB = dict(BAD_TEXT, **{"a newline": "'a' || char(10) || 'b'"})
BAD_TOKEN = dict(BAD_TEXT, **{"a space": "'a b'", "65 bytes": "'%s'" % ("a" * 65)})
BAD_SLOT = {"NULL": "NULL", "negative": "-1000", "not a whole second": "1893456000002",
            "before 1973": "12345000", "the largest bigint": "9223372036854775807"}
BAD_SCHEDULE = dict(BAD_TEXT, **{"not a schedule": "'every day'", "an unknown zone":
                                 "'CRON_TZ=Mars/Olympus 0 3 * * *'", "61 minutes": "'61 * * * *'"})
# A time that is not a slot (anarchon_slot's `at`, a range's ends): any millisecond
# from 1973-03-03 on is fine, and 0; a Unix time in seconds is refused as such.
BAD_AT = {"NULL": "NULL", "negative": "-1000", "the largest bigint": "9223372036854775807",
          "in seconds": "1717243200"}
BAD_MS = {"NULL": "NULL", "negative": "-1"}

# Extra bad values per host: the wrong types SQLite lets through to the function.
SQLITE_TEXT_TYPES = {"a blob": "X'00ff'", "a real": "1.5", "an integer": "42"}
SQLITE_INT_TYPES = {"text": "'abc'", "a real": "1.5", "a blob": "X'00'"}


def calls(host):
    """(description, SQL) of every bad call."""
    text_types = SQLITE_TEXT_TYPES if host == "sqlite" else {}
    int_types = SQLITE_INT_TYPES if host == "sqlite" else {}
    job = dict(BAD_JOB, **text_types)
    token = dict(BAD_TOKEN, **text_types)
    slot = dict(BAD_SLOT, **int_types)
    at = dict(BAD_AT, **int_types)
    schedule = dict(BAD_SCHEDULE, **text_types)
    ms = dict(BAD_MS, **int_types)
    status = dict(BAD_TEXT, **{"an unknown status": "'maybe'", "running": "'running'"}, **text_types)
    good = {"job": "'fz'", "slot": str(SLOT), "token": "'%s'" % TOKEN, "schedule": "'0 3 * * *'",
            "status": "'succeeded'", "ms": "1000", "at": str(SLOT), "from": str(SLOT),
            "to": str(SLOT + 86400000)}
    bad = {"job": job, "slot": slot, "token": token, "schedule": schedule, "status": status,
           "ms": ms, "at": at, "from": at, "to": at}
    fns = [
        ("anarchon_claim", ["job", "slot", "token"]),
        ("anarchon_heartbeat", ["job", "slot", "token"]),
        ("anarchon_finish", ["job", "slot", "token", "status"]),
        ("anarchon_fence", ["job", "slot", "token"]),
        ("anarchon_check", ["job", "slot"]),
        ("anarchon_slot", ["schedule", "at"]),
        ("anarchon_next_slot", ["schedule", "at"]),
        ("anarchon_fire_at", ["job", "slot", "ms"]),
        ("anarchon_slots", ["schedule", "from", "to"]),
        ("anarchon_missed", ["job", "schedule", "from", "to"]),
    ]
    out = []
    for fn, args in fns:
        for i, arg in enumerate(args):
            for what, value in bad[arg].items():
                vals = [good[a] for a in args]
                vals[i] = value
                if host == "pg" and arg in ("slot", "at", "from", "to") and value == "NULL":
                    vals[i] = "NULL::bigint"    # which of the two forms: the ms one
                # SQLite: scalar functions in the select list, table-valued ones in FROM.
                form = "SELECT * FROM %s(%s)" if host == "pg" or fn in TABLE_VALUED else "SELECT %s(%s)"
                sql = form % (fn, ", ".join(vals))
                out.append(("%s with %s %s" % (fn, arg, what), sql))
    # anarchon_prune's retention: negative, too short, wrong type.  (The largest
    # bigint is "keep everything": allowed, and it must delete nothing, which
    # the check of the stored runs below sees.)
    for what, value in dict({"negative": "-1", "zero": "0"}, **int_types).items():
        out.append(("anarchon_prune with keep_ms %s" % what, "SELECT anarchon_prune(%s)" % value))
    # A range of slots too long to list, and one whose end comes before its start.
    out.append(("anarchon_slots over more than 1 000 000 slots",
                "SELECT count(*) FROM anarchon_slots('* * * * * *', %d, %d)" % (SLOT, SLOT + 2000000 * 1000)))
    if host == "pg":
        claim = "SELECT anarchon_claim('fz', %s, '" + TOKEN + "'%s)"
        out += [("anarchon_claim with slot infinity", claim % ("'infinity'::timestamptz", "")),
                ("anarchon_claim with slot -infinity", claim % ("'-infinity'::timestamptz", "")),
                ("anarchon_claim with slot in 200000 AD", claim % ("'200000-01-01 UTC'::timestamptz", "")),
                ("anarchon_slots from infinity",
                 "SELECT * FROM anarchon_slots('0 3 * * *', 'infinity'::timestamptz, now())"),
                ("anarchon_claim with lease_ms => -1", claim % (str(SLOT), ", lease_ms => -1")),
                ("anarchon_claim with attempts => 0", claim % (str(SLOT), ", attempts => 0")),
                ("anarchon_claim with overlap => 'maybe'", claim % (str(SLOT), ", overlap => 'maybe'")),
                ("anarchon.run with job NULL", "CALL anarchon.run(NULL, '* * * * *', 'SELECT 1')"),
                ("anarchon.run with a bad schedule", "CALL anarchon.run('fz', 'every day', 'SELECT 1')"),
                ("anarchon.run with command NULL", "CALL anarchon.run('fz', '* * * * *', NULL)"),
                ("anarchon.run with a 1 MB job", "CALL anarchon.run('%s', '* * * * *', 'SELECT 1')" % MB),
                ("anarchon.run with a job that has a space", "CALL anarchon.run('a b', '* * * * *', 'SELECT 1')"),
                ("anarchon.run with an empty command", "CALL anarchon.run('fz', '* * * * *', '')"),
                ("anarchon.run with a command of two statements",
                 "CALL anarchon.run('fz', '* * * * *', 'SELECT 1; SELECT 2')"),
                ("anarchon.run with a command that is only a comment",
                 "CALL anarchon.run('fz', '* * * * *', '-- nothing')")]
    return out


# Extreme but allowed: each must answer as given and change nothing stored.
HARMLESS = [("anarchon_prune keeping everything (the largest bigint)",
             "SELECT anarchon_prune(9223372036854775807)", [(0,)])]


RESTORE_STORE = "SELECT anarchon_config('store', '%s')" % (STORE or "local")


def odd_settings(host):
    """(description, SQL) of settings that must be refused, and leave the old value."""
    vals = [("lease_ms", "-5"), ("lease_ms", "10s"), ("lease_ms", "99999999999999999999"),
            ("max_late_ms", "-1"), ("attempts", "0"), ("attempts", "1.5"), ("overlap", "maybe"),
            ("busy_timeout_ms", "-1"), ("store", "ftp://127.0.0.1/"), ("store", "redis://127.0.0.1:1?strategy=nope"),
            ("store", "nats://127.0.0.1:1?" + "a" * 5000 + "=1"), ("no_such_setting", "1")]
    out = []
    for name, value in vals:
        if host == "sqlite" and name == "store":
            # Refused, and yet the connection's store from now on: the claim
            # that follows must fail too, never be decided anywhere else.
            out.append(("anarchon_config('store', '%s'), then a claim" % value[:40],
                        "SELECT anarchon_config('store', '%s')" % value))
            out.append(("a claim after anarchon_config('store', '%s')" % value[:40],
                        "SELECT anarchon_claim('fz', %d, '%s')" % (SLOT, TOKEN)))
            out.append(("the store set back", RESTORE_STORE))
        elif host == "sqlite":
            out.append(("anarchon_config('%s', '%s')" % (name, value[:40]),
                        "SELECT anarchon_config('%s', '%s')" % (name, value)))
        elif name == "store" and "://" in value:
            # A URL names no foreign server: PostgreSQL keeps what SET is given
            # (refusing it would print a URL's credentials in the error), and
            # the next call refuses it with the commands that do what was meant
            # (or, past a name's 63 bytes, without repeating the value).
            out.append(("SET anarchon.store = '%s', then a claim" % value[:40],
                        "SET anarchon.store = '%s'; SELECT anarchon_claim('fz', %d, '%s')" % (value, SLOT, TOKEN)))
        elif name != "no_such_setting":
            out.append(("SET anarchon.%s = '%s'" % (name, value[:40]), "SET anarchon.%s = '%s'" % (name, value)))
    return out


def harmless(one, host):
    if STORE:
        return      # anarchon_prune is the local store's: a network store refuses it
    problems = []
    for what, sql, want in HARMLESS:
        try:
            got = one(sql)
            if got != want:
                problems.append("%s: answered %r, not %r" % (what, got, want))
        except Exception as e:     # noqa: BLE001 -- any failure is the finding
            problems.append("%s: %s" % (what, str(e)[:200]))
    report("%s: extreme but allowed values answer as they should" % host, problems)


# ---------------------------------------------------------------- SQLite

def sqlite_main(ext, path):
    import sqlite3
    con = sqlite3.connect(path, isolation_level=None)
    con.enable_load_extension(True)
    con.load_extension(ext)

    def one(sql):
        return con.execute(sql).fetchall()

    if STORE:
        one("SELECT anarchon_config('store', '%s')" % STORE)
    host = label("sqlite")

    # Something to damage: a finished run, a running one.
    one("SELECT anarchon_claim('fz', %d, '%s')" % (SLOT - 60000, TOKEN))
    one("SELECT anarchon_finish('fz', %d, '%s')" % (SLOT - 60000, TOKEN))
    one("SELECT anarchon_claim('fz', %d, '%s')" % (SLOT, TOKEN))
    before = runs(one, "SELECT * FROM anarchon_runs ORDER BY 1, 2")
    settings = [one("SELECT anarchon_config('%s')" % n)
                for n in ("lease_ms", "max_late_ms", "attempts", "overlap", "busy_timeout_ms", "store")]

    problems = []
    for what, sql in calls("sqlite") + odd_settings("sqlite"):
        if sql == RESTORE_STORE:
            one(sql)
            continue
        try:
            res = one(sql)
            problems.append("%s: accepted, answered %r" % (what, res[:3]))
        except sqlite3.Error as e:
            msg = str(e)
            fn = re.search(r"anarchon_\w+", sql).group(0)
            if fn not in msg or len(msg) < len(fn) + 20:
                problems.append("%s: unclear error %r" % (what, msg[:200]))
            if "internal" in msg.lower() or "the store failed" in msg:
                problems.append("%s: internal error %r" % (what, msg[:200]))
    report("%s: %d bad calls and odd settings each end in a clear error" %
           (host, len(calls("sqlite")) + len(odd_settings("sqlite")) - 3), problems)
    harmless(one, host)

    after = runs(one, "SELECT * FROM anarchon_runs ORDER BY 1, 2")
    report("%s: what is stored is unchanged by the bad calls (%s)" % (host, what_is_stored(before)),
           [] if after == before else ["before %r" % (before,), "after  %r" % (after,)])
    now = [one("SELECT anarchon_config('%s')" % n)
           for n in ("lease_ms", "max_late_ms", "attempts", "overlap", "busy_timeout_ms", "store")]
    report("%s: the connection's settings are unchanged by the refused ones" % host,
           [] if now == settings else ["before %r" % settings, "after  %r" % now])
    again = one("SELECT anarchon_claim('fz', %d, '%s')" % (SLOT, TOKEN))
    report(host + ": a good claim afterwards still answers as before (won, our own run)",
           [] if again == [("won",)] else ["answered %r" % again])


# ---------------------------------------------------------------- PostgreSQL

def pg_main():
    import psycopg2
    host = label("pg")
    con = psycopg2.connect("")
    con.autocommit = True
    con.cursor().execute("CREATE EXTENSION IF NOT EXISTS anarchon")
    options = ""
    if STORE:
        con.cursor().execute("CREATE SERVER \"%s\" FOREIGN DATA WRAPPER anarchon OPTIONS (url '%s')" % (NAME, STORE))
        # The session's own value, which each RESET below returns to.
        options = "-c anarchon.store=" + NAME
        con.close()
        con = psycopg2.connect("", options=options)
        con.autocommit = True
    cur = con.cursor()

    def one(sql):
        cur.execute(sql)
        return cur.fetchall() if cur.description else None

    one("SELECT anarchon_claim('fz', %d, '%s')" % (SLOT - 60000, TOKEN))
    one("SELECT anarchon_finish('fz', %d, '%s')" % (SLOT - 60000, TOKEN))
    one("SELECT anarchon_claim('fz', %d, '%s')" % (SLOT, TOKEN))
    before = runs(one, "SELECT * FROM anarchon.runs ORDER BY job, slot")
    names = ("lease_ms", "max_late_ms", "attempts", "overlap", "busy_timeout_ms", "store")
    settings = [one("SELECT current_setting('anarchon.%s', true)" % n) for n in names]

    problems = []
    n = 0
    for what, sql in calls("pg") + odd_settings("pg"):
        n += 1
        try:
            res = one(sql)
            problems.append("%s: accepted, answered %r" % (what, (res or [])[:3]))
        except psycopg2.Error as e:
            code = e.pgcode or ""
            msg = e.diag.message_primary or ""
            if not code or code == "XX000" or code.startswith("58"):
                problems.append("%s: SQLSTATE %r: %s" % (what, code, msg[:200]))
            if not msg or msg[0].isupper() or len(msg) < 12:
                problems.append("%s: unclear message %r (SQLSTATE %s)" % (what, msg[:200], code))
            if con.closed:
                problems.append("%s: the session was lost" % what)
                con = psycopg2.connect("", options=options)
                con.autocommit = True
                cur = con.cursor()
        one("RESET anarchon.store")
    report("%s: %d bad calls and odd settings each end in a clear error with a proper SQLSTATE" % (host, n),
           problems)
    harmless(one, host)

    after = runs(one, "SELECT * FROM anarchon.runs ORDER BY job, slot")
    report("%s: what is stored is unchanged by the bad calls (%s)" % (host, what_is_stored(before)),
           [] if after == before else ["before %r" % (before,), "after  %r" % (after,)])
    now = [one("SELECT current_setting('anarchon.%s', true)" % n) for n in names]
    report("%s: the session's settings are unchanged by the refused ones" % host,
           [] if now == settings else ["before %r" % settings, "after  %r" % now])
    again = one("SELECT anarchon_claim('fz', %d, '%s')" % (SLOT, TOKEN))
    report(host + ": a good claim afterwards still answers as before (won, our own run)",
           [] if again == [("won",)] else ["answered %r" % again])


if __name__ == "__main__":
    if sys.argv[1] == "sqlite":
        sqlite_main(sys.argv[2], sys.argv[3])
    else:
        pg_main()
    sys.exit(1 if FAILED else 0)
