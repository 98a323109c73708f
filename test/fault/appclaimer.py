#!/usr/bin/python3
"""appclaimer.py -- one application instance of the fault suite, through a host.

    appclaimer.py pg|sqlite JOB SLOT0 N STEP TRIES TAG WALL0 WALL_STEP

Claims the plan's slots (test/testutil.h: slot i is SLOT0 + i*STEP, claimed
at wall-clock WALL0 + i*WALL_STEP ms) through PostgreSQL (psycopg2 in
autocommit, the store named by PGOPTIONS' anarchon.store) or through SQLite
(Debian's python3 loading the extension ANARCHON_EXTENSION, into the database
file FAULT_DB, the store set from ANARCHON_STORE).  A claim that ends in an
error, or whose connection was lost (a terminated backend, a restarted
server), is sent again with the same token, on a new connection if need be.
One log line per answer, the same as the C claimers':

    PROC STORE FAULT JOB SLOT TOKEN OUTCOME ATTEMPT TRY WALL_MS

ATTEMPT is the store's attempt number (anarchon_claim_info in PostgreSQL;
the local table in SQLite), WALL_MS the time the answer arrived.

With FAULT_WORK_MS > 0 the instance behaves as a job runner on a lease store:
a won run is worked for FAULT_WORK_MS, with a heartbeat every lease_ms / 3
(FAULT_LEASE_MS), then finished; and a slot answered `running` is watched as
a backup, claimed again (a new token each time) every lease_ms / 2 until it
is won or done.  Each heartbeat and finish is a line whose OUTCOME is
heartbeat:true|false or finish:true|false, ATTEMPT the attempt it was won
with, and WALL_MS the time the call was *sent*: the checker fails a call
that was accepted although it was sent after another token's takeover had
been answered.  While it works a run the instance keeps a file named for its
pid in FAULT_MARK_DIR, so that the suite can freeze a process that holds a
lease.
"""
import os
import secrets
import sys
import time

HOST = sys.argv[1]
JOB = sys.argv[2]
SLOT0, N, STEP, TRIES = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
TAG = sys.argv[7]
WALL0, WALL_STEP = int(sys.argv[8]), int(sys.argv[9])
WORK_MS = int(os.environ.get("FAULT_WORK_MS", "0"))
LEASE_MS = int(os.environ.get("FAULT_LEASE_MS", "30000"))
MARK = os.path.join(os.environ.get("FAULT_MARK_DIR", "/nonexistent"), str(os.getpid()))


def now_ms():
    return int(time.time() * 1000)


def log(slot, token, outcome, attempt, tr, wall):
    print("%s %s %d %s %s %d %d %d" % (TAG, JOB, slot, token, outcome, attempt, tr, wall), flush=True)


def comment(text):
    print("# " + " ".join(str(text).split())[:300], flush=True)


class Lost(Exception):
    """A call ended in an error: its class for the log."""


if HOST == "pg":
    import psycopg2

    def classify(e):
        code = getattr(e, "pgcode", None) or ""
        if code in ("57014",):
            return "canceled"
        if code in ("55P03",):
            return "busy"
        if code.startswith("08") or code.startswith("57P") or isinstance(e, psycopg2.OperationalError):
            return "timeout" if "timed out" in str(e) or "timeout" in str(e) else "connection"
        return "store"

    class Conn:
        def __init__(self):
            self.db = None

        def call(self, sql, args):
            try:
                if self.db is None or self.db.closed:
                    self.db = psycopg2.connect("", application_name="anarchon-fault")
                    self.db.autocommit = True
                cur = self.db.cursor()
                cur.execute(sql, args)
                return cur.fetchone()
            except psycopg2.Error as e:
                comment(e)
                if self.db is not None and (self.db.closed or isinstance(e, psycopg2.OperationalError)):
                    try:
                        self.db.close()
                    except psycopg2.Error:
                        pass
                    self.db = None
                raise Lost(classify(e))

        def claim(self, slot, token):
            outcome, attempt = self.call("SELECT outcome, attempt FROM anarchon_claim_info(%s, %s::bigint, %s)",
                                         (JOB, slot, token))
            return outcome, attempt or 0

        def heartbeat(self, slot, token):
            return self.call("SELECT anarchon_heartbeat(%s, %s::bigint, %s)", (JOB, slot, token))[0]

        def finish(self, slot, token):
            return self.call("SELECT anarchon_finish(%s, %s::bigint, %s)", (JOB, slot, token))[0]
else:
    import sqlite3

    def classify(e):
        msg = str(e)
        if "locked" in msg or "busy" in msg:
            return "busy"
        if "interrupt" in msg:
            return "canceled"
        if "timed out" in msg or "timeout" in msg:
            return "timeout"
        return "connection" if "connect" in msg else "store"

    class Conn:
        def __init__(self):
            self.db = sqlite3.connect(os.environ["FAULT_DB"], isolation_level=None, timeout=60)
            self.db.enable_load_extension(True)
            self.db.load_extension(os.environ["ANARCHON_EXTENSION"])
            for name in ("lease_ms", "max_late_ms", "attempts", "overlap", "store"):
                value = os.environ.get("ANARCHON_" + name.upper())
                if value:
                    self.db.execute("SELECT anarchon_config(?, ?)", (name, value))
            self.local = os.environ.get("ANARCHON_STORE", "local") in ("", "local")

        def call(self, sql, args):
            try:
                return self.db.execute(sql, args).fetchone()
            except sqlite3.Error as e:
                comment(e)
                raise Lost(classify(e))

        def claim(self, slot, token):
            outcome = self.call("SELECT anarchon_claim(?, ?, ?)", (JOB, slot, token))[0]
            attempt = 0
            if self.local:
                row = self.call("SELECT attempt FROM anarchon_runs WHERE job = ? AND slot = ?", (JOB, slot))
                attempt = row[0] if row else 0
            return outcome, attempt

        def heartbeat(self, slot, token):
            return bool(self.call("SELECT anarchon_heartbeat(?, ?, ?)", (JOB, slot, token))[0])

        def finish(self, slot, token):
            return bool(self.call("SELECT anarchon_finish(?, ?, ?)", (JOB, slot, token))[0])


def pause(t):
    time.sleep(0.05 * t if t < 10 else 0.5)


def fresh_token():
    """A token of the claimer's own: no query before the claim, so that a lost
    connection is found by the claim itself and the claim is resent."""
    return secrets.token_hex(16)


def claim(conn, slot, token):
    """Claim until answered, resending the same token; the answer or None."""
    for t in range(1, TRIES + 1):
        try:
            outcome, attempt = conn.claim(slot, token)
        except Lost as e:
            log(slot, token, "error:" + str(e), 0, t, now_ms())
            pause(t)
            continue
        log(slot, token, outcome, attempt, t, now_ms())
        return outcome, attempt
    return None, 0


def call_logged(conn, what, slot, token, attempt):
    """One heartbeat or finish: True/False as answered, None after errors."""
    fn = conn.heartbeat if what == "heartbeat" else conn.finish
    for t in range(1, TRIES + 1):
        sent = now_ms()
        try:
            owned = fn(slot, token)
        except Lost:
            pause(t)
            continue
        log(slot, token, "%s:%s" % (what, "true" if owned else "false"), attempt, t, sent)
        return owned
    return None


def work(conn, slot, token, attempt):
    """Run a won slot: heartbeats while it works, then finish; stop when fenced."""
    if WORK_MS <= 0:
        call_logged(conn, "finish", slot, token, attempt)
        return
    open(MARK, "w").close()
    try:
        end = now_ms() + WORK_MS
        while now_ms() < end:
            time.sleep(min(LEASE_MS / 3, max(end - now_ms(), 0)) / 1000)
            if call_logged(conn, "heartbeat", slot, token, attempt) is False:
                return
        call_logged(conn, "finish", slot, token, attempt)
    finally:
        os.unlink(MARK)


def answer(conn, slot, watched):
    """Claim a slot with a new token and act on the answer."""
    token = fresh_token()
    outcome, attempt = claim(conn, slot, token)
    if outcome == "won":
        work(conn, slot, token, attempt)
    elif outcome == "running" and WORK_MS:
        watched[slot] = now_ms() + LEASE_MS // 2


def main():
    conn = None
    while conn is None:
        try:
            conn = Conn()
        except Exception as e:   # a server that is down at this moment
            comment(e)
            time.sleep(0.2)
    watched = {}    # slot -> when to claim it again, as a backup
    i = 0
    last_end = WALL0 + N * WALL_STEP + 4 * LEASE_MS
    while i < N or (watched and now_ms() < last_end):
        for slot in [s for s, at in watched.items() if at <= now_ms()]:
            del watched[slot]
            answer(conn, slot, watched)
        if i < N and now_ms() >= WALL0 + i * WALL_STEP:
            answer(conn, SLOT0 + i * STEP, watched)
            i += 1
        else:
            time.sleep(0.01)


if __name__ == "__main__":
    main()
