"""forker.py — a prefork application using anarchon's SQLite extension.

The parent process loads the extension, points a connection at a store and
makes a claim (so the store has a connection, and its client library its
state), then forks worker processes the way gunicorn --preload, uWSGI or
multiprocessing do.  Each worker claims the same slots with its own tokens
and writes one line "SLOT OUTCOME TOKEN" per claim to OUTDIR/<n>.out; a
failure is written as "SLOT error MESSAGE".

  forker.py EXT URL MODE JOB SLOT0 PROCS SLOTS OUTDIR

MODE own:     each worker opens its own connection to a database file
              (what the workers of a web server do);
MODE inherit: each worker goes on with the parent's connection, to an
              in-memory database, and closes it when done.
After the workers are gone the parent claims one more slot on its own
connection and prints "parent OUTCOME": a worker must not have disturbed it.
Run by Debian's /usr/bin/python3, whose sqlite3 module can load extensions.
"""
import multiprocessing
import os
import sqlite3
import sys

ext, url, mode, job = sys.argv[1:5]
slot0, procs, slots = (int(v) for v in sys.argv[5:8])
outdir = sys.argv[8]


def connect(path):
    db = sqlite3.connect(path, isolation_level=None)
    db.enable_load_extension(True)
    db.load_extension(ext)
    db.execute("SELECT anarchon_config('overlap', 'allow')")
    db.execute("SELECT anarchon_config('store', ?)", (url,))
    return db


def work(n, parent_db):
    db = parent_db if mode == "inherit" else connect(os.path.join(outdir, "app.db"))
    with open(os.path.join(outdir, "%d.out" % n), "w") as out:
        for k in range(slots):
            slot = slot0 + 1000 * k
            try:
                token = db.execute("SELECT anarchon_token()").fetchone()[0]
                outcome = db.execute("SELECT anarchon_claim(?, ?, ?)", (job, slot, token)).fetchone()[0]
                out.write("%d %s %s\n" % (slot, outcome, token))
            except sqlite3.Error as e:
                out.write("%d error %s\n" % (slot, str(e).replace("\n", " ")))
    db.close()


def main():
    parent = connect(":memory:" if mode == "inherit" else os.path.join(outdir, "app.db"))
    token = parent.execute("SELECT anarchon_token()").fetchone()[0]
    print("before", parent.execute("SELECT anarchon_claim(?, ?, ?)", (job, slot0 - 1000, token)).fetchone()[0])
    ctx = multiprocessing.get_context("fork")
    workers = [ctx.Process(target=work, args=(n, parent)) for n in range(procs)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    token = parent.execute("SELECT anarchon_token()").fetchone()[0]
    print("parent", parent.execute("SELECT anarchon_claim(?, ?, ?)",
                                   (job, slot0 + 1000 * slots, token)).fetchone()[0])


if __name__ == "__main__":
    main()
