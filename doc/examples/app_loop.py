#!/usr/bin/python3
"""app_loop.py -- a job loop on SQLite with anarchon (doc/app-loop.md).

Every instance of the application runs this same loop on the same database
file.  For each slot of the schedule exactly one instance wins the claim and
does the work; the others go back to sleep until the next slot.

    python3 doc/examples/app_loop.py DB JOB SCHEDULE [SLOTS]

Prints one line per slot: "<slot> <outcome>" (and the work's own lines).
"""
import os
import sqlite3
import sys
import time

EXTENSION = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sqlite", "anarchon")


def connect(path):
    # Autocommit (isolation_level=None): anarchon_claim commits its decision
    # itself, and must not be called inside an open transaction.
    db = sqlite3.connect(path, isolation_level=None, timeout=10)
    db.enable_load_extension(True)
    db.load_extension(EXTENSION)
    db.enable_load_extension(False)
    return db


def one(db, sql, *args):
    return db.execute(sql, args).fetchone()[0]


def work(db, job, slot, step):
    """One step of the job's work (here: record that it ran).

    Return False when there is nothing left to do."""
    db.execute("CREATE TABLE IF NOT EXISTS work_done(job, slot, step, pid)")
    db.execute("INSERT INTO work_done VALUES (?, ?, ?, ?)", (job, slot, step, os.getpid()))
    return step < 3


def run_slot(db, job, slot):
    """Claim one slot; on 'won' do the work with heartbeats, then finish."""
    token = one(db, "SELECT anarchon_token()")
    outcome = one(db, "SELECT anarchon_claim(?, ?, ?)", job, slot, token)
    print(slot, outcome, flush=True)
    if outcome != "won":
        return                       # another instance has (or had) this slot
    status = "succeeded"
    try:
        step = 1
        while work(db, job, slot, step):
            step += 1
            # Renew the lease between steps; False means the lease ran out
            # and the run is no longer ours: stop at once.
            if not one(db, "SELECT anarchon_heartbeat(?, ?, ?)", job, slot, token):
                print(slot, "fenced", flush=True)
                return
    except Exception as e:           # the work failed: record it, keep looping
        print(slot, "failed:", e, flush=True)
        status = "failed"
    one(db, "SELECT anarchon_finish(?, ?, ?, ?)", job, slot, token, status)


def main():
    path, job, schedule = sys.argv[1:4]
    slots = int(sys.argv[4]) if len(sys.argv) > 4 else None
    db = connect(path)
    done = 0
    while slots is None or done < slots:
        # Sleep to the next slot by the database clock, then claim it.
        now = one(db, "SELECT anarchon_now()")
        slot = one(db, "SELECT anarchon_next_slot(?, ?)", schedule, now)
        time.sleep((slot - now) / 1000.0)
        run_slot(db, job, slot)
        done += 1


if __name__ == "__main__":
    main()
