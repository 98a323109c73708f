#!/usr/bin/python3
"""schedule.py — the schedule rows of `make bench` (run by schedule.sh).

    schedule.py SQLITE_EXTENSION   (PostgreSQL from the PG* variables)

Rows, in both databases, each against its own baseline in the same run:

  slot, CRON_TZ vs UTC   anarchon_slot of a schedule with a time zone against
                         the same schedule in UTC, 200 000 calls in one
                         statement at different instants (ratio = zone speed /
                         UTC speed; the target is >= 0.5, a zone costing at
                         most twice as much)
  a year of minutes      anarchon_slots listing 2025's 525 600 minute slots
                         (UTC, and Europe/Berlin) against the database's own
                         way of counting out as many rows (a recursive CTE in
                         SQLite, generate_series in PostgreSQL)

ops_per_s is calls (or rows) per second, the best of three runs; p50_us and
p99_us are the median and slowest time of one call (or one whole listing).
Prints one JSON row per line.
"""
import json
import sqlite3
import sys
import time

import psycopg2

N = 200000
YEAR = (1735689600000, 1767225600000)      # 2025-01-01 .. 2026-01-01 UTC, ms
PAIRS = [("0 3 * * *", "CRON_TZ=Europe/Berlin 0 3 * * *"),
         ("*/15 * * * *", "CRON_TZ=America/New_York */15 * * * *")]


def timed(fn, runs=3):
    """Seconds of each of `runs` runs of fn, sorted."""
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return sorted(out)


def row(store, scenario, ops, base, p50, p99):
    print(json.dumps({"store": store, "scenario": scenario, "clients": 1,
                      "ops_per_s": round(ops, 1), "baseline_ops_per_s": round(base, 1),
                      "ratio": round(ops / base, 3) if base else 0,
                      "p50_us": round(p50, 3), "p99_us": round(p99, 3)}), flush=True)


def bench(store, q, slot_sql, list_sql, base_sql):
    for utc, zoned in PAIRS:
        t_utc = timed(lambda: q(slot_sql, utc))
        t_zone = timed(lambda: q(slot_sql, zoned))
        row(store, f"slot with CRON_TZ vs UTC ({utc})", N / t_zone[0], N / t_utc[0],
            t_zone[1] / N * 1e6, t_zone[-1] / N * 1e6)
    rows = 525600
    t_base = timed(lambda: q(base_sql))
    for sched in ("* * * * *", "CRON_TZ=Europe/Berlin * * * * *"):
        t = timed(lambda: q(list_sql, sched))
        row(store, f"anarchon_slots: a year of minutes, {rows} rows ({sched})", rows / t[0],
            rows / t_base[0], t[1] * 1e6, t[-1] * 1e6)


def main():
    lite = sqlite3.connect(":memory:")
    lite.enable_load_extension(True)
    lite.load_extension(sys.argv[1])

    def ql(sql, *a):
        return lite.execute(sql, a).fetchall()
    bench("sqlite", ql,
          f"WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {N - 1}) "
          "SELECT sum(anarchon_slot(?, 1700000000000 + i * 7919000)) FROM n",
          f"SELECT count(*) FROM anarchon_slots(?, {YEAR[0]}, {YEAR[1]})",
          "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 525599) "
          "SELECT count(*) FROM n")

    pg = psycopg2.connect("")
    pg.autocommit = True
    cur = pg.cursor()

    def qp(sql, *a):
        cur.execute(sql, a)
        return cur.fetchall()
    bench("postgresql", qp,
          f"SELECT sum(anarchon_slot(%s, 1700000000000 + i::bigint * 7919000)) FROM generate_series(0, {N - 1}) AS i",
          f"SELECT count(*) FROM anarchon_slots(%s, {YEAR[0]}::bigint, {YEAR[1]}::bigint)",
          "SELECT count(*) FROM generate_series('2025-01-01 00:00+00'::timestamptz, "
          "'2025-12-31 23:59+00', interval '1 minute')")


if __name__ == "__main__":
    main()
