#!/usr/bin/python3
"""oracle.py — CRON_TZ schedules in both databases against an independent oracle.

The oracle is written here, from the rule in doc/schedules.md, with Python's
zoneinfo reading the system's tzdata: nothing of anarchon's code is used to
compute what is expected.

For every change of UTC offset from 1973 to 2037 in each zone below, both
databases list the slots of schedules around it with anarchon_slots, and are
asked anarchon_slot / anarchon_next_slot across it:

  - a fixed-time schedule at a wall time the change skips or repeats
    (daily, one day either side): one slot, at the first showing or at the
    first instant after the gap;
  - the same at the first skipped / repeated minute;
  - wall-clock schedules '*/15 * * * *' and '0 * * * *' over three hours
    either side: a slot at each showing of a matching wall time, none in a
    gap.

The zones are of every kind (half-hour daylight saving, negative daylight
saving, odd offsets, skipped days, changes at midnight, a two-hour shift),
and some whose rules changed in tz releases after 2022 (Greenland, Egypt,
Kazakhstan, Mexico, Paraguay, Moldova): both databases read the system's tz
database (SQLite directly, PostgreSQL built --with-system-tzdata on Debian),
so they must agree with the oracle on every one.  allzones.py does the same
for every zone of the database with fewer schedules.

usage: oracle.py SQLITE_EXTENSION SQLITE_DB  (PostgreSQL from PG* variables)
Prints "ok - ..." / "not ok - ..." lines.
"""
import os
import sqlite3
import sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import psycopg2

ZONES = [
    "Europe/Berlin", "Europe/London", "Europe/Dublin", "Europe/Moscow",
    "America/New_York", "America/Chicago", "America/Los_Angeles", "America/St_Johns",
    "America/Havana", "America/Sao_Paulo", "America/Caracas",
    "Australia/Sydney", "Australia/Adelaide", "Australia/Lord_Howe",
    "Pacific/Auckland", "Pacific/Chatham", "Pacific/Apia", "Pacific/Kiritimati",
    "Asia/Kathmandu", "Asia/Colombo", "Asia/Jerusalem", "Asia/Dhaka",
    "Antarctica/Troll",
    # rules changed by tz releases after 2022e (Iran's 1978 history, Greenland,
    # Kazakhstan, Egypt, Moldova's transitions from 2022 on, ...)
    "Asia/Tehran", "America/Nuuk", "Asia/Almaty", "Africa/Cairo", "America/Mexico_City",
    "America/Asuncion", "Europe/Chisinau",
]

# From just after 1973-03-03 (10^11 ms): an earlier instant in ms is refused as seconds.
START = int(datetime(1973, 3, 10, tzinfo=timezone.utc).timestamp())
END = int(datetime(2038, 1, 1, tzinfo=timezone.utc).timestamp())
STEP = 3 * 3600
DAY = 86400

results = []


def report(good, name, detail=""):
    print(("ok - " if good else "not ok - ") + name, flush=True)
    if not good and detail:
        for line in str(detail).splitlines()[:12]:
            print("#   " + line)
    results.append(good)


def system_tzdata_version():
    try:
        with open("/usr/share/zoneinfo/tzdata.zi") as f:
            first = f.readline().split()
            return first[2] if len(first) >= 3 and first[1] == "version" else "unknown"
    except OSError:
        return "unknown"


class Zone:
    """A zone's offsets from zoneinfo, and its changes of offset."""

    def __init__(self, name):
        self.name = name
        self.tz = ZoneInfo(name)
        self.changes = []          # (instant, offset before, offset after), seconds
        t, o = START, self.off(START)
        while t < END:
            u = t + STEP
            p = self.off(u)
            if p != o:
                lo, hi = t, u      # the change is in (lo, hi]
                while hi - lo > 1:
                    m = (lo + hi) // 2
                    if self.off(m) == o:
                        lo = m
                    else:
                        hi = m
                self.changes.append((hi, o, self.off(hi)))
                t, o = hi, self.off(hi)
                continue
            t = u

    def off(self, t):
        return int(datetime.fromtimestamp(t, self.tz).utcoffset().total_seconds())

    def spans(self, a, b):
        """[(start, end, offset)] covering [a, b)."""
        cuts = [c[0] for c in self.changes if a < c[0] < b]
        edges = [a] + cuts + [b]
        return [(edges[i], edges[i + 1], self.off(edges[i])) for i in range(len(edges) - 1)]


def wall_fields(w):
    d = datetime(1970, 1, 1) + timedelta(seconds=w)
    return d.minute, d.hour, d.second


def expected_wallclock(zone, minutes, a, b):
    """Wall-clock schedule: minute in `minutes`, second 0, any hour."""
    out = []
    for s, e, o in zone.spans(a, b):
        m = -(-(s + o) // 60)
        while m * 60 - o < e:
            w = m * 60
            if wall_fields(w)[0] in minutes:
                out.append(w - o)
            m += 1
    return out


def expected_fixed(zone, hour, minute, a, b):
    """Fixed-time schedule at hour:minute daily: first showing, or the end of its gap."""
    spans = zone.spans(a - 2 * DAY, b + 2 * DAY)
    out = set()
    first_day = (a - 2 * DAY) // DAY
    for day in range(first_day, (b + 2 * DAY) // DAY + 1):
        w = day * DAY + hour * 3600 + minute * 60
        shown = [w - o for s, e, o in spans if s <= w - o < e]
        if shown:
            out.add(min(shown))
            continue
        for i in range(len(spans) - 1):
            s, e, o = spans[i]
            o2 = spans[i + 1][2]
            if o2 > o and e + o <= w < e + o2:
                out.add(e)
    return sorted(t for t in out if a <= t < b)


def cases(zone):
    """(schedule, from, to, expected) around every change of the zone."""
    for t, o1, o2 in zone.changes:
        lo, hi = min(o1, o2), max(o1, o2)
        # the walls the change skips (o2 > o1) or repeats (o2 < o1): [t + lo, t + hi)
        first = -(-(t + lo) // 60) * 60
        middle = (t + (lo + hi) // 2) // 60 * 60
        for w in sorted({first, middle}):
            if t + lo <= w < t + hi:
                _, h, _ = wall_fields(w)
                m = wall_fields(w)[0]
                a, b = t - DAY - 7200, t + DAY + 7200
                yield (f"CRON_TZ={zone.name} {m} {h} * * *", a, b, expected_fixed(zone, h, m, a, b))
        a, b = t - 3 * 3600, t + 3 * 3600
        yield (f"CRON_TZ={zone.name} */15 * * * *", a, b, expected_wallclock(zone, {0, 15, 30, 45}, a, b))
        yield (f"CRON_TZ={zone.name} 0 * * * *", a, b, expected_wallclock(zone, {0}, a, b))


def fmt(ts):
    return ", ".join(datetime.fromtimestamp(x, timezone.utc).strftime("%Y-%m-%d %H:%M:%S") for x in ts)


def main():
    ext, db_path = sys.argv[1], sys.argv[2]
    lite = sqlite3.connect(db_path)
    lite.enable_load_extension(True)
    lite.load_extension(ext)
    pg = psycopg2.connect("")
    pg.autocommit = True
    pgc = pg.cursor()

    v_lite = lite.execute("SELECT anarchon_tzdata_version()").fetchone()[0]
    pgc.execute("SELECT anarchon_tzdata_version()")
    v_pg = pgc.fetchone()[0]
    system = system_tzdata_version()
    print(f"# tz database: {v_lite} (SQLite), {v_pg} (PostgreSQL); the system's {system} (the oracle's)")
    report(v_lite.split()[0] == system and v_pg.split()[0] == system,
           f"both databases read the system's tz database {system} ({v_lite}; {v_pg})")

    def ask(schedule, a, b):
        rows_l = [r[0] // 1000 for r in lite.execute(
            "SELECT slot FROM anarchon_slots(?, ?, ?)", (schedule, a * 1000, b * 1000))]
        pgc.execute("SELECT slot FROM anarchon_slots(%s, %s::bigint, %s::bigint)", (schedule, a * 1000, b * 1000))
        rows_p = [r[0] // 1000 for r in pgc.fetchall()]
        # the single-slot searches: the last slot before b, the first from a on
        one_l = lite.execute("SELECT anarchon_slot(?1, ?2), anarchon_next_slot(?1, ?3)",
                             (schedule, b * 1000 - 1, a * 1000 - 1)).fetchone()
        pgc.execute("SELECT anarchon_slot(%s, %s::bigint), anarchon_next_slot(%s, %s::bigint)",
                    (schedule, b * 1000 - 1, schedule, a * 1000 - 1))
        one_p = tuple(pgc.fetchone())
        return rows_l, rows_p, one_l, one_p

    for name in ZONES:
        zone = Zone(name)
        n = bad = 0
        first_bad = ""
        for schedule, a, b, want in cases(zone):
            rows_l, rows_p, one_l, one_p = ask(schedule, a, b)
            ends = (want[-1] * 1000, want[0] * 1000) if want else one_l
            n += 1
            if rows_l != want or rows_p != want or one_l != ends or one_p != ends:
                bad += 1
                if not first_bad:
                    first_bad = (f"{schedule} over [{fmt([a])}, {fmt([b])}):\n"
                                 f"  oracle     {fmt(want)}\n  SQLite     {fmt(rows_l)}\n"
                                 f"  PostgreSQL {fmt(rows_p)}\n  slot/next  {one_l} {one_p}")
        report(bad == 0 and n > 0,
               f"{name}: {len(zone.changes)} changes of offset 1973-2037, "
               f"{n} schedules, both databases agree with the oracle",
               f"{bad} disagree; first:\n{first_bad}")
    print(f"# {sum(results)} of {len(results)} oracle checks passed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
