#!/usr/bin/python3
"""allzones.py — every zone of the system's tz database, 1990-2037, in both databases.

A schedule must agree with the database it runs in.  For every zone that
Python's zoneinfo lists (less 'localtime', this machine's setting):

  - SQLite: the slots of 'CRON_TZ=<zone> 0 3 * * *' on every day from 1990 to
    2037, and of 'CRON_TZ=<zone> */15 * * * *' over two days either side of
    every change of UTC offset and on three ordinary days, against an oracle
    written here from the rule of doc/schedules.md over Python's zoneinfo,
    which reads the same files (TZDIR or /usr/share/zoneinfo);
  - PostgreSQL: the same schedules against the server's own conversions
    (AT TIME ZONE, or rather the casts in a session whose timezone is the
    zone, which read the name as a zone and never as an abbreviation),
    computed in SQL in the server.

The changes of offset come from zoneinfo (sampled daily and pinned to the
second: no zone changes twice within a week from 1990 to 2037).  Fixed lines
first: the cases issue 20 found an hour off (ICU's tz 2022e) in both
databases.  Two worker processes share the zones, each with its own SQLite
and PostgreSQL connections.

usage: allzones.py SQLITE_EXTENSION  (PostgreSQL from PG* variables)
Prints "ok - ..." / "not ok - ..." lines and the time taken.
"""
import bisect
import multiprocessing
import sqlite3
import sys
import time
import zoneinfo
from datetime import datetime, timedelta, timezone

import psycopg2

DAY = 86400
A = int(datetime(1990, 1, 1, tzinfo=timezone.utc).timestamp())
B = int(datetime(2038, 1, 1, tzinfo=timezone.utc).timestamp())
MARGIN = 3 * DAY
REACH = 2 * DAY                  # the every-15-minutes windows: a change +- 2 days
ORDINARY = [datetime(1995, 6, 15), datetime(2010, 1, 10), datetime(2030, 9, 1)]
DAILY = "0 3 * * *"
QUARTER = "*/15 * * * *"

# Instants the fixed lines expect: (schedule, asked at (ms), anarchon_slot's answer (UTC)).
FIXED = [
    # Greenland kept -02 as its standard time from 2023 (tz 2023a); 2022e had -03.
    ("CRON_TZ=America/Nuuk 0 3 * * *", "2026-12-03 12:00", "2026-12-03 05:00"),
    # Egypt restored daylight saving in 2023 (tz 2023c); 2022e had none.
    ("CRON_TZ=Africa/Cairo 0 3 * * *", "2024-07-01 12:00", "2024-07-01 00:00"),
    ("CRON_TZ=Africa/Cairo 0 3 * * *", "2024-12-01 12:00", "2024-12-01 01:00"),
]

state = {}


def utc(text):
    return int(datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=timezone.utc).timestamp())


def fmt(t):
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


# ------------------------------------------------------------ the zone, from zoneinfo

class Zone:
    """Changes of offset in [A - MARGIN, B + MARGIN): Ts (instants) and offs (offs[k] holds in [Ts[k-1], Ts[k]))."""

    def __init__(self, name):
        self.name = name
        tz = zoneinfo.ZoneInfo(name)
        fts = datetime.fromtimestamp

        def off(t):
            return int(fts(t, tz).utcoffset().total_seconds())

        self.Ts, self.offs = [], [off(A - MARGIN)]
        t, o = A - MARGIN, self.offs[0]
        prev = fts(t, tz).utcoffset()
        while t < B + MARGIN:
            u = t + DAY
            cur = fts(u, tz).utcoffset()
            if cur != prev:
                lo, hi = t, u
                while hi - lo > 1:
                    m = (lo + hi) // 2
                    if off(m) == o:
                        lo = m
                    else:
                        hi = m
                o = off(hi)
                self.Ts.append(hi)
                self.offs.append(o)
                prev = fts(hi, tz).utcoffset()
                t = hi
                continue
            t, prev = u, cur

    def span(self, k):
        lo = self.Ts[k - 1] if k > 0 else -(1 << 62)
        hi = self.Ts[k] if k < len(self.Ts) else 1 << 62
        return lo, hi, self.offs[k]

    def fixed_slot(self, w):
        """The slot of wall time w for a fixed-time schedule, or None."""
        lo = bisect.bisect_left(self.Ts, w - 2 * DAY - 15 * 3600)
        hi = bisect.bisect_right(self.Ts, w + 2 * DAY + 15 * 3600)
        if lo == hi:
            return w - self.offs[lo]
        spans = [self.span(k) for k in range(lo, hi + 1)]
        shown = [w - o for s, e, o in spans if s <= w - o < e]
        if shown:
            return min(shown)
        for i in range(len(spans) - 1):
            s, e, o = spans[i]
            o2 = spans[i + 1][2]
            if o2 > o and e + o <= w < e + o2:
                return e
        return None

    def daily(self, hour):
        out = set()
        for d in range((A - MARGIN) // DAY, (B + MARGIN) // DAY):
            t = self.fixed_slot(d * DAY + hour * 3600)
            if t is not None and A <= t < B:
                out.add(t)
        return sorted(out)

    def quarter(self, a, b):
        """Wall-clock '*/15 * * * *' over [a, b): each showing of a wall time at a multiple of 15 minutes."""
        out = []
        k = bisect.bisect_right(self.Ts, a)
        while k <= len(self.Ts):
            s, e, o = self.span(k)
            s, e = max(s, a), min(e, b)
            if s >= b:
                break
            first = -(-(s + o) // 900) * 900 - o
            out.extend(range(first, e, 900))
            k += 1
        return out

    def windows(self):
        """[a, b) around every change in [A, B), merged, and the ordinary days."""
        wins = []
        for t in self.Ts:
            if A <= t < B:
                a, b = t - REACH, t + REACH
                if wins and a <= wins[-1][1]:
                    wins[-1][1] = b
                else:
                    wins.append([a, b])
        for day in ORDINARY:
            a = int(day.replace(tzinfo=timezone.utc).timestamp())
            while any(x - 3 * DAY <= a <= x + 3 * DAY for x in self.Ts):
                a += 10 * DAY
            wins.append([a, a + DAY])
        return sorted(wins)


def digest(slots):
    return (len(slots), sum(slots), sum((s // 1000 % 1000003) ** 2 for s in slots) if slots else 0)


# ------------------------------------------------------------ PostgreSQL's side, in SQL
#
# In the session's time zone (SET timezone = <zone>), with the casts between
# timestamp and timestamptz: the server's own conversion, as AT TIME ZONE
# <zone> makes it, except that AT TIME ZONE reads a name as an abbreviation
# first ('CET' is then +01:00 all year), and a schedule's zone is always the
# zone, as the timezone setting reads it.

PG_SETUP = """
CREATE FUNCTION pg_temp.fixed_slot(w timestamp) RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
DECLARE
	offs interval[];
	best timestamptz;
	lo timestamptz;
	hi timestamptz;
	mid timestamptz;
BEGIN
	-- the offsets in force within three days of w, in the session's time zone
	SELECT array_agg(DISTINCT x::timestamp - (x AT TIME ZONE 'UTC')) INTO offs
	FROM generate_series((w - interval '3 days') AT TIME ZONE 'UTC', (w + interval '3 days') AT TIME ZONE 'UTC',
						 interval '1 hour') AS x;
	-- its first showing
	SELECT min(c) INTO best
	FROM (SELECT (w - o) AT TIME ZONE 'UTC' AS c FROM unnest(offs) AS o) AS s
	WHERE c::timestamp = w;
	IF best IS NOT NULL THEN
		RETURN best;
	END IF;
	-- none: w is in a gap, and the slot is the first instant whose wall is past w
	SELECT (w - max(o)) AT TIME ZONE 'UTC', (w - min(o)) AT TIME ZONE 'UTC' INTO lo, hi FROM unnest(offs) AS o;
	WHILE hi - lo > interval '1 second' LOOP
		mid := lo + date_trunc('second', (hi - lo) / 2);
		IF mid::timestamp > w THEN
			hi := mid;
		ELSE
			lo := mid;
		END IF;
	END LOOP;
	RETURN hi;
END
$$;
"""

PG_DAILY = """
WITH d AS (
	SELECT w, w::timestamptz AS t1
	FROM generate_series(timestamp '1989-12-28 03:00', timestamp '2038-01-04 03:00', interval '1 day') AS w),
e AS (
	SELECT w, t1, t1::timestamp = w AS shown, w - (t1 AT TIME ZONE 'UTC') AS o FROM d),
f AS (
	SELECT w, t1, shown, o, lag(o) OVER (ORDER BY w) AS o_prev, lead(o) OVER (ORDER BY w) AS o_next FROM e),
want AS (
	SELECT DISTINCT CASE WHEN shown AND o = o_prev AND o = o_next THEN t1
						 ELSE pg_temp.fixed_slot(w) END AS slot FROM f),
got AS (
	SELECT slot FROM anarchon_slots(%(s)s, timestamptz '1990-01-01 00:00Z', timestamptz '2038-01-01 00:00Z')),
w2 AS (SELECT slot FROM want WHERE slot >= timestamptz '1990-01-01 00:00Z' AND slot < timestamptz '2038-01-01 00:00Z'),
bad AS (
	SELECT w2.slot AS want, got.slot AS got FROM w2 FULL JOIN got ON w2.slot = got.slot
	WHERE w2.slot IS NULL OR got.slot IS NULL)
SELECT (SELECT count(*) FROM w2), (SELECT count(*) FROM bad),
	   (SELECT string_agg(coalesce('want ' || (want AT TIME ZONE 'UTC')::text, 'got ' || (got AT TIME ZONE 'UTC')::text), ', ')
		FROM (SELECT * FROM bad ORDER BY coalesce(want, got) LIMIT 4) AS x)
"""

PG_QUARTER = """
WITH win AS (SELECT a, b FROM unnest(%(a)s::bigint[], %(b)s::bigint[]) AS u(a, b)),
offs AS (
	SELECT DISTINCT a, b, to_timestamp(x)::timestamp - (to_timestamp(x) AT TIME ZONE 'UTC') AS o
	FROM win, generate_series(a - 86400, b + 86400, 3600) AS x),
walls AS (
	SELECT a, b, w FROM win,
		generate_series(date_trunc('hour', to_timestamp(a - 86400) AT TIME ZONE 'UTC'),
						to_timestamp(b + 86400) AT TIME ZONE 'UTC', interval '15 minutes') AS w),
cand AS (
	SELECT walls.a, walls.w, (walls.w - offs.o) AT TIME ZONE 'UTC' AS slot
	FROM walls JOIN offs ON offs.a = walls.a AND offs.b = walls.b
	WHERE (walls.w - offs.o) AT TIME ZONE 'UTC' >= to_timestamp(walls.a)
	  AND (walls.w - offs.o) AT TIME ZONE 'UTC' < to_timestamp(walls.b)),
want AS (SELECT DISTINCT a, slot FROM cand WHERE slot::timestamp = w),
got AS (
	SELECT win.a, s.slot FROM win, LATERAL anarchon_slots(%(s)s, to_timestamp(win.a), to_timestamp(win.b)) AS s),
bad AS (
	SELECT want.slot AS want, got.slot AS got FROM want FULL JOIN got ON want.a = got.a AND want.slot = got.slot
	WHERE want.slot IS NULL OR got.slot IS NULL)
SELECT (SELECT count(*) FROM want), (SELECT count(*) FROM bad),
	   (SELECT string_agg(coalesce('want ' || (want AT TIME ZONE 'UTC')::text, 'got ' || (got AT TIME ZONE 'UTC')::text), ', ')
		FROM (SELECT * FROM bad ORDER BY coalesce(want, got) LIMIT 4) AS x)
"""


# ------------------------------------------------------------ one zone, in a worker

def init(ext):
    lite = sqlite3.connect(":memory:")
    lite.enable_load_extension(True)
    lite.load_extension(ext)
    pg = psycopg2.connect("")
    pg.autocommit = True
    cur = pg.cursor()
    cur.execute("SET timezone = 'UTC'")
    cur.execute(PG_SETUP)
    state["lite"], state["pg"] = lite, cur


CHECKS = ("sqlite daily", "sqlite quarter", "pg daily", "pg quarter")


def check_zone(name):
    """{check: (ok, slots, detail)} for one zone; an error is that check's failure."""
    zone = Zone(name)
    res = {}
    for key in CHECKS:
        try:
            res[key] = CHECK[key](zone)
        except (sqlite3.Error, psycopg2.Error) as e:
            res[key] = (False, 0, f"{name}: {str(e).strip()}")
    return name, sum(1 for t in zone.Ts if A <= t < B), len(zone.windows()), res


def sqlite_daily(zone):
    """Daily, every day of 1990-2037."""
    lite, name = state["lite"], zone.name
    want = [t * 1000 for t in zone.daily(3)]
    got = [r[0] for r in lite.execute("SELECT slot FROM anarchon_slots(?, ?, ?)",
                                      (f"CRON_TZ={name} {DAILY}", A * 1000, B * 1000))]
    detail = ""
    if got != want:
        i = next((i for i, (x, y) in enumerate(zip(want, got)) if x != y), min(len(want), len(got)))
        detail = (f"{name} {DAILY}: {len(want)} slots expected, {len(got)} listed; first difference: "
                  f"zoneinfo {fmt(want[i] // 1000) if i < len(want) else 'none'}, "
                  f"SQLite {fmt(got[i] // 1000) if i < len(got) else 'none'}")
    return (got == want, len(want), detail)


def sqlite_quarter(zone):
    """Every 15 minutes, around each change and on ordinary days."""
    lite, name = state["lite"], zone.name
    wins = zone.windows()
    n = bad = 0
    detail = ""
    for a, b in wins:
        w = [t * 1000 for t in zone.quarter(a, b)]
        n += len(w)
        g = lite.execute("SELECT count(*), coalesce(sum(slot), 0), "
                         "coalesce(sum((slot / 1000 % 1000003) * (slot / 1000 % 1000003)), 0) "
                         "FROM anarchon_slots(?, ?, ?)",
                         (f"CRON_TZ={name} {QUARTER}", a * 1000, b * 1000)).fetchone()
        if tuple(g) != digest(w):
            bad += 1
            if not detail:
                rows = [r[0] for r in lite.execute("SELECT slot FROM anarchon_slots(?, ?, ?)",
                                                   (f"CRON_TZ={name} {QUARTER}", a * 1000, b * 1000))]
                extra = sorted(set(rows) - set(w))[:3]
                missing = sorted(set(w) - set(rows))[:3]
                detail = (f"{name} {QUARTER} over [{fmt(a)}, {fmt(b)}): SQLite lists "
                          f"{[fmt(x // 1000) for x in extra]} that zoneinfo does not, misses "
                          f"{[fmt(x // 1000) for x in missing]}")
    return (bad == 0, n, detail)


def pg_daily(zone):
    """Daily, against the server's conversions in a session whose timezone is the zone."""
    pgc, name = state["pg"], zone.name
    pgc.execute("SELECT set_config('timezone', %s, false)", (name,))
    pgc.execute(PG_DAILY, {"s": f"CRON_TZ={name} {DAILY}"})
    count, nbad, first = pgc.fetchone()
    return (nbad == 0 and count > 0, count, f"{name} {DAILY}: {nbad} differ from AT TIME ZONE: {first}")


def pg_quarter(zone):
    pgc, name = state["pg"], zone.name
    wins = zone.windows()
    pgc.execute("SELECT set_config('timezone', %s, false)", (name,))
    pgc.execute(PG_QUARTER, {"s": f"CRON_TZ={name} {QUARTER}",
                             "a": [w[0] for w in wins], "b": [w[1] for w in wins]})
    count, nbad, first = pgc.fetchone()
    return (nbad == 0 and count > 0, count, f"{name} {QUARTER}: {nbad} differ from AT TIME ZONE: {first}")


CHECK = {"sqlite daily": sqlite_daily, "sqlite quarter": sqlite_quarter, "pg daily": pg_daily,
         "pg quarter": pg_quarter}


# ------------------------------------------------------------ main

def main():
    ext = sys.argv[1]
    started = time.monotonic()
    results = []

    def report(good, name, details=()):
        print(("ok - " if good else "not ok - ") + name, flush=True)
        for d in list(details)[:5] if not good else ():
            print("#   " + str(d))
        results.append(good)

    names = sorted(z for z in zoneinfo.available_timezones() if z != "localtime")
    init(ext)
    lite, pgc = state["lite"], state["pg"]

    # the zones each database offers are the system's
    lz = [r[0] for r in lite.execute("SELECT name FROM anarchon_zones")]
    pgc.execute("SELECT name FROM anarchon_zones()")
    pz = [r[0] for r in pgc.fetchall()]
    report(lz == names, f"SQLite's anarchon_zones lists the {len(names)} zones of the system's tz database",
           [f"only in SQLite: {sorted(set(lz) - set(names))[:5]}", f"missing: {sorted(set(names) - set(lz))[:5]}"])
    report(pz == names, f"PostgreSQL's anarchon_zones() lists the same {len(names)} zones",
           [f"only in PostgreSQL: {sorted(set(pz) - set(names))[:5]}", f"missing: {sorted(set(names) - set(pz))[:5]}"])

    # the fixed lines
    for schedule, at, slot in FIXED:
        want = utc(slot)
        zone = zoneinfo.ZoneInfo(schedule.split()[0].split("=")[1])
        local = datetime.fromtimestamp(want, zone)
        got_l = lite.execute("SELECT anarchon_slot(?, ?)", (schedule, utc(at) * 1000)).fetchone()[0]
        pgc.execute("SELECT anarchon_slot(%s, %s::bigint), "
                    "(%s::timestamp AT TIME ZONE %s) = to_timestamp(%s)",
                    (schedule, utc(at) * 1000, local.strftime("%Y-%m-%d %H:%M"), zone.key, want))
        got_p, pg_agrees = pgc.fetchone()
        report(got_l == want * 1000 and got_p == want * 1000 and local.hour == 3 and pg_agrees,
               f"{schedule} at {at} UTC: the slot is {slot} UTC in both databases, "
               f"as zoneinfo and AT TIME ZONE say",
               [f"SQLite {fmt(got_l // 1000) if got_l else None}, PostgreSQL {fmt(got_p // 1000) if got_p else None}, "
                f"zoneinfo's wall {local}, AT TIME ZONE agrees: {pg_agrees}"])

    # every zone, two workers
    with multiprocessing.Pool(2, initializer=init, initargs=(ext,)) as pool:
        done = pool.map(check_zone, names, chunksize=4)
    changes = sum(c for _, c, _, _ in done)
    windows = sum(w for _, _, w, _ in done)
    what = {
        "sqlite daily": f"SQLite, '{DAILY}' on every day 1990-2037, agrees with zoneinfo",
        "sqlite quarter": f"SQLite, '{QUARTER}' two days either side of {changes} changes of offset "
                          f"and on ordinary days ({windows} windows), agrees with zoneinfo",
        "pg daily": f"PostgreSQL, '{DAILY}' on every day 1990-2037, agrees with AT TIME ZONE",
        "pg quarter": f"PostgreSQL, '{QUARTER}' in the same {windows} windows, agrees with AT TIME ZONE",
    }
    for key, label in what.items():
        bad = [r[key][2] for _, _, _, r in done if not r[key][0]]
        slots = sum(r[key][1] for _, _, _, r in done)
        report(not bad, f"{label}: {len(done)} zones, {slots} slots",
               [f"{len(bad)} zones disagree"] + bad if bad else ())
    print(f"# allzones: {len(names)} zones in {time.monotonic() - started:.1f} s", flush=True)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
