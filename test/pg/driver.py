#!/usr/bin/python3
"""driver.py -- anarchon_claim from psycopg2 in its default mode.

    driver.py PROCS SLOTS FIRST

psycopg2, like most drivers, opens a transaction before the first statement
of a connection.  A claim decided there could be rolled back after it
answered `won`, and another instance would then win the same slot.

PROCS processes claim the same SLOTS slots (FIRST, FIRST + 1000, ...) of six
jobs.  For each slot a process opens a connection in the default mode and
claims; then, by job, it commits, rolls back, or closes the connection
without committing.  Then its second connection, in autocommit, claims the
same slot with another token.

  commit, rollback, close: the first claim is refused (25001, saying how to
      call it); the autocommit claims decide: one winner per slot.
  optin-commit, optin-rollback, optin-close: the first connection opts in
      (SET LOCAL anarchon.in_transaction = on): its claim is part of its
      transaction, and so is the job's work, a row in driver_work written
      when it won.  Whatever is rolled back, one winner per slot commits, and
      its work with it.

Prints "JOB SLOT first|second OUTCOME", the outcome being the claim's answer
or "error SQLSTATE".  The suite counts winners (and the work rows).
"""
import multiprocessing
import sys

import psycopg2

PROCS, SLOTS, FIRST = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
ENDINGS = ("commit", "rollback", "close")
JOBS = ENDINGS + tuple("optin-" + e for e in ENDINGS)


# Slots one second apart, each claimed while the last one's lease is alive;
# leases that outlast the test, so that no run ends "interrupted" meanwhile.
OPTIONS = "-c anarchon.overlap=allow -c anarchon.lease_ms=600000"


def claim_and_work(cur, job, slot, token):
    """Claim; on won, do the job's work in the same transaction."""
    cur.execute("SELECT anarchon_claim(%s, %s::bigint, %s)", (job, slot, token))
    outcome = cur.fetchone()[0]
    if outcome == "won":
        cur.execute("INSERT INTO driver_work (job, slot, token) VALUES (%s, %s, %s)", (job, slot, token))
    return outcome


def worker(proc):
    lines = []
    second = psycopg2.connect("", options=OPTIONS)
    second.autocommit = True
    for i in range(SLOTS):
        slot = FIRST + 1000 * ((i + proc * 7) % SLOTS)
        for job in JOBS:
            first = psycopg2.connect("", options=OPTIONS)   # the default: it opens a transaction
            cur = first.cursor()
            try:
                if job.startswith("optin-"):
                    cur.execute("SET LOCAL anarchon.in_transaction = on")
                outcome = claim_and_work(cur, job, slot, "p%d-first-%d" % (proc, i))
            except psycopg2.Error as e:
                outcome = "error %s" % e.pgcode
            lines.append("%s %d first %s" % (job, slot, outcome))
            ending = job.replace("optin-", "")
            if ending == "commit":
                first.commit()
            elif ending == "rollback":
                first.rollback()
            first.close()                                   # "close": without commit or rollback
            outcome = claim_and_work(second.cursor(), job, slot, "p%d-second-%d" % (proc, i))
            lines.append("%s %d second %s" % (job, slot, outcome))
    second.close()
    return lines


if __name__ == "__main__":
    with psycopg2.connect("") as setup:
        setup.cursor().execute("CREATE TABLE IF NOT EXISTS driver_work (job text, slot bigint, token text)")
    with multiprocessing.Pool(PROCS) as pool:
        for lines in pool.map(worker, range(PROCS)):
            print("\n".join(lines))
