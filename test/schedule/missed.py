#!/usr/bin/python3
"""missed.py — the dead-man's switch: anarchon_missed lists the slots every instance missed.

    missed.py sqlite DB [STORE_URL]     SQLite (local store, or STORE_URL)
    missed.py pg                        PostgreSQL (PG* variables; anarchon.store as set)

PROCS processes run the same job on a '1 seconds' schedule, each on its own
connection: they claim ROUNDS slots, all stop for GAP slots (an outage of the
whole fleet), then claim ROUNDS more.  Then, once every slot is older than
max_late_ms, anarchon_missed over the whole range must list exactly the slots
nobody won (the outage, and any slot all of them reached too late), never a
slot that was won; a job that no instance ran lists every slot; and every
claimed slot had exactly one winner.  Prints "ok - ..." / "not ok - ..." lines.
"""
import os
import sqlite3
import sys
import time

PROCS, ROUNDS, GAP = 4, 3, 2
MAX_LATE_MS = 3000
EXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sqlite", "anarchon")

failed = 0


def report(good, name, detail=""):
    global failed
    print(("ok - " if good else "not ok - ") + name, flush=True)
    if not good:
        failed += 1
        if detail:
            print("#   " + str(detail)[:600])


def connect(kind, url):
    """A connection and a function running one query that returns rows."""
    if kind == "sqlite":
        db = sqlite3.connect(sys.argv[2], isolation_level=None, timeout=30)
        db.enable_load_extension(True)
        db.load_extension(EXT)
        db.execute("SELECT anarchon_config('max_late_ms', ?)", (MAX_LATE_MS,)).fetchall()
        if url:
            db.execute("SELECT anarchon_config('store', ?)", (url,)).fetchall()
        return lambda sql, *a: db.execute(sql.replace("%s", "?"), a).fetchall()
    import psycopg2
    db = psycopg2.connect("")
    db.autocommit = True
    cur = db.cursor()
    cur.execute("SET anarchon.max_late_ms = %s", (MAX_LATE_MS,))

    def q(sql, *a):
        cur.execute(sql, a)
        return cur.fetchall()
    return q


def worker(kind, url, job, slots, out):
    q = connect(kind, url)
    for slot in slots:
        delay = slot / 1000 - time.time()
        if delay > 0:
            time.sleep(delay)
        token = q("SELECT anarchon_token()")[0][0]
        outcome = q("SELECT anarchon_claim(%s, %s::bigint, %s)" if kind == "pg" else
                    "SELECT anarchon_claim(%s, %s, %s)", job, slot, token)[0][0]
        if outcome == "won":
            q("SELECT anarchon_finish(%s, %s::bigint, %s)" if kind == "pg" else
              "SELECT anarchon_finish(%s, %s, %s)", job, slot, token)
        out.write(f"{slot} {outcome}\n")
        out.flush()


def main():
    kind = sys.argv[1]
    url = sys.argv[3] if kind == "sqlite" and len(sys.argv) > 3 else ""
    what = kind + (" through " + url.split("?")[0].split("://")[0] if url else "")
    job = f"deadman-{os.getpid()}"
    q = connect(kind, url)
    start = (int(time.time()) + 2) * 1000
    before = [start + i * 1000 for i in range(ROUNDS)]
    outage = [start + (ROUNDS + i) * 1000 for i in range(GAP)]
    after = [start + (ROUNDS + GAP + i) * 1000 for i in range(ROUNDS)]
    end = after[-1] + 1000

    logs, pids = [], []
    for i in range(PROCS):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                worker(kind, url, job, before + after, os.fdopen(w, "w"))
                os._exit(0)
            except Exception as e:  # noqa: BLE001 - report any failure of a child
                print(f"# worker: {e}", flush=True)
                os._exit(1)
        os.close(w)
        logs.append(os.fdopen(r))
        pids.append(pid)
    lines = [line.split() for f in logs for line in f.read().splitlines()]
    codes = [os.waitpid(p, 0)[1] for p in pids]
    report(all(c == 0 for c in codes) and len(lines) == PROCS * 2 * ROUNDS,
           f"{what}: {PROCS} processes claimed {2 * ROUNDS} slots each around an outage of {GAP}",
           f"exit codes {codes}, {len(lines)} answers")

    won = {}
    for slot, outcome in lines:
        won[int(slot)] = won.get(int(slot), 0) + (outcome == "won")
    report(all(n <= 1 for n in won.values()) and sum(won.values()) > 0,
           f"{what}: at most one winner per slot ({sum(won.values())} slots won)", won)

    wait = end / 1000 + MAX_LATE_MS / 1000 + 0.5 - time.time()
    if wait > 0:
        time.sleep(wait)
    fn = "anarchon_missed(%s, '1 seconds', %s::bigint, %s::bigint)" if kind == "pg" else \
        "anarchon_missed(%s, '1 seconds', %s, %s)"
    missed = [r[0] for r in q(f"SELECT slot FROM {fn}", job, start, end)]
    nobody = sorted(set(before + outage + after) - {s for s, n in won.items() if n})
    report(missed == nobody and set(outage) <= set(missed),
           f"{what}: anarchon_missed lists the outage's {GAP} slots and every slot nobody won, "
           f"never a slot that ran ({len(missed)} listed)",
           f"listed {missed}, nobody won {nobody}")
    never = [r[0] for r in q(f"SELECT slot FROM {fn}", job + "-never", start, end)]
    report(never == before + outage + after,
           f"{what}: a job that no instance ran lists all {len(never)} slots", never)
    # Not yet: a slot younger than max_late_ms may still be claimed, so it is not listed.
    now_slot = (int(time.time()) - 1) * 1000
    fresh = q(f"SELECT count(*) FROM {fn}", job + "-never", now_slot, now_slot + 1000)[0][0]
    report(fresh == 0, f"{what}: a slot that can still be claimed is not listed as missed", fresh)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
