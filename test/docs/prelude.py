"""prelude.py -- what the documentation's Python examples leave to the reader.

examples.py puts this file before each python-sqlite and python-pg block.
The examples call the application's own work by name (do_the_work,
run_the_job) and write to the application's own table; here those are
stand-ins that do the least that proves the example's path ran: the work
renews its lease once, and must still own the run when it does.
"""
import os


def do_the_work(heartbeat=None):
    """The job's work: one step, then a heartbeat that must still own the run."""
    if heartbeat is not None and not heartbeat():
        raise SystemExit("prelude: the heartbeat of a run just won answered false")


def run_the_job():
    """The job's work, in transactions of its own."""
    do_the_work()


if os.environ.get("DOCS_PRELUDE") == "pg":
    # The application's table the transactional example writes its work to.
    import psycopg2 as _pg

    _db = _pg.connect("dbname=app")
    _db.autocommit = True
    _db.cursor().execute("CREATE TABLE reports (slot timestamptz PRIMARY KEY)")
    _db.close()
