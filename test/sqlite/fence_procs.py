#!/usr/bin/python3
"""fence_procs.py -- anarchon_fence in SQLite, between processes.

    fence_procs.py EXTENSION DATABASE

A job process holds a run whose lease (1 s) runs out while it works; a backup
process, with attempts left, claims the run meanwhile.

  fenced-first  the job fences inside BEGIN IMMEDIATE, then stalls past its
                lease; the backup's claim waits for the job's transaction,
                which writes, finishes and commits: the backup is told done,
                and the work is written once.
  taken-first   the job stalls past its lease before fencing; the backup takes
                the run over (attempt 2); the job's fence then fails and its
                transaction rolls back: nothing it wrote is kept.

Prints one line per case: "CASE BACKUP_ANSWER WORK_ROWS STATE".
"""
import multiprocessing
import sqlite3
import sys
import time

EXT, DB = sys.argv[1], sys.argv[2]
SLOT = 4102444800000


def connect():
    db = sqlite3.connect(DB, isolation_level=None, timeout=30)
    db.enable_load_extension(True)
    db.load_extension(EXT)
    for name, value in (("lease_ms", "1000"), ("attempts", "2"), ("overlap", "allow"),
                        ("busy_timeout_ms", "10000")):
        db.execute("SELECT anarchon_config(?, ?)", (name, value))
    return db


def job(case, started):
    db = connect()
    db.execute("SELECT anarchon_claim(?, ?, 'tok-job')", (case, SLOT))
    try:
        if case == "fenced-first":
            db.execute("BEGIN IMMEDIATE")
            db.execute("SELECT anarchon_fence(?, ?, 'tok-job')", (case, SLOT))
            started.set()
            time.sleep(2)                       # past the lease, holding the fence
        else:
            started.set()
            time.sleep(2)                       # past the lease, before fencing
            db.execute("BEGIN IMMEDIATE")
            db.execute("SELECT anarchon_fence(?, ?, 'tok-job')", (case, SLOT))
        db.execute("INSERT INTO work VALUES (?)", (case,))
        db.execute("SELECT anarchon_finish(?, ?, 'tok-job')", (case, SLOT))
        db.execute("COMMIT")
    except sqlite3.Error:
        db.execute("ROLLBACK")


def main():
    setup = connect()
    setup.execute("PRAGMA journal_mode=WAL")
    setup.execute("CREATE TABLE IF NOT EXISTS work (job TEXT)")
    ctx = multiprocessing.get_context("fork")
    for case in ("fenced-first", "taken-first"):
        started = ctx.Event()
        p = ctx.Process(target=job, args=(case, started))
        p.start()
        started.wait()
        time.sleep(1.3)                         # the job's lease has run out
        backup = connect()
        answer = backup.execute("SELECT anarchon_claim(?, ?, 'tok-backup')", (case, SLOT)).fetchone()[0]
        p.join()
        rows = backup.execute("SELECT count(*) FROM work WHERE job = ?", (case,)).fetchone()[0]
        state = backup.execute("SELECT attempt || ':' || state FROM anarchon_runs WHERE job = ?",
                               (case,)).fetchone()[0]
        print(case, answer, rows, state)


if __name__ == "__main__":
    main()
