#!/usr/bin/python3
"""txn_driver.py -- claims from inside the callers' own transactions (SQLite).

    txn_driver.py DB EXTENSION PROCS SLOTS FIRST

PROCS processes, each with Python's sqlite3 in its default mode, claim the
same SLOTS slots (FIRST, FIRST + 1000, ...) of three jobs.  For each slot a
process opens a connection, BEGINs and reads (a read transaction), claims,
and then, by job: commits ("commit"), rolls back ("rollback"), or closes the
connection without committing ("close").  Then a second connection of the
same process, in autocommit, claims the same slot with another token.  Each
claim prints "JOB SLOT first|second OUTCOME".

The claim commits on its own connection before it answers, so no rollback
of the caller's can take a `won` back: over every process and both claims,
each slot of each job has exactly one winner.  The suite counts them.

A last line checks a write transaction: after an INSERT (Python opens the
transaction itself), the claim is refused with an error, the caller's
transaction stays open, and its INSERT commits: "write-txn: <what happened>".
"""
import multiprocessing
import sqlite3
import sys

DB, EXT = sys.argv[1], sys.argv[2]
PROCS, SLOTS, FIRST = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
ENDINGS = ("commit", "rollback", "close")


def connect(autocommit):
    db = sqlite3.connect(DB, timeout=60, isolation_level=None if autocommit else "")
    db.enable_load_extension(True)
    db.load_extension(EXT)
    db.execute("SELECT anarchon_config('overlap', 'allow')")
    db.execute("SELECT anarchon_config('busy_timeout_ms', 60000)")
    return db


def claim(db, job, slot):
    return db.execute("SELECT anarchon_claim(?, ?, anarchon_token())", (job, slot)).fetchone()[0]


def worker(proc):
    lines = []
    second = connect(autocommit=True)
    for i in range(SLOTS):
        slot = FIRST + 1000 * ((i + proc * 7) % SLOTS)
        for ending in ENDINGS:
            first = connect(autocommit=False)
            first.execute("BEGIN")
            first.execute("SELECT count(*) FROM sqlite_schema").fetchone()
            lines.append("%s %d first %s" % (ending, slot, claim(first, ending, slot)))
            if ending == "commit":
                first.commit()
            elif ending == "rollback":
                first.rollback()
            first.close()
            lines.append("%s %d second %s" % (ending, slot, claim(second, ending, slot)))
    second.close()
    return lines


def write_transaction():
    db = connect(autocommit=False)
    db.execute("CREATE TABLE IF NOT EXISTS work (n INTEGER)")
    db.commit()
    db.execute("INSERT INTO work VALUES (1)")
    try:
        outcome = claim(db, "write-txn", FIRST)
    except sqlite3.Error as e:
        outcome = "refused (%s)" % ("holds a write transaction" in str(e))
    open_txn = db.in_transaction
    db.commit()
    kept = db.execute("SELECT count(*) FROM work").fetchone()[0]
    db.close()
    return "write-txn: %s, transaction still open %s, insert kept %d" % (outcome, open_txn, kept)


if __name__ == "__main__":
    with multiprocessing.Pool(PROCS) as pool:
        for lines in pool.map(worker, range(PROCS)):
            print("\n".join(lines))
    print(write_transaction())
