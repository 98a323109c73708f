#!/usr/bin/python3
"""slots_oracle.py — `anarchon slots` across daylight saving, against zoneinfo.

The oracle is written here from the rule in doc/schedules.md ("Daylight
saving"), with Python's zoneinfo reading the system's tzdata; nothing of
anarchon's code is used to compute what is expected:

  - a fixed-time schedule (none of its second, minute and hour fields starts
    with '*') has one slot per matching wall time: a wall time that happens
    twice at its first occurrence, one that does not exist at the first
    instant after the gap (all the skipped times of one gap: one slot);
  - any other schedule follows the wall clock: every UTC instant whose local
    time matches is a slot.

For each of Berlin's changes in 2024 and 2027, every schedule below is listed
by `anarchon slots --schedule 'CRON_TZ=Europe/Berlin ...' --from --to`
(three days either side, the range given in RFC 3339 with an offset or in
ms) and compared line by line: ms, tab, RFC 3339 UTC.

usage: slots_oracle.py ANARCHON
Prints "ok - ..." / "not ok - ..." lines; exits 1 when one failed.
"""
import subprocess
import sys
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

ZONE = "Europe/Berlin"
TZ = ZoneInfo(ZONE)
UTC = timezone.utc

SCHEDULES = [
    "30 2 * * *",          # fixed-time, inside the gap and the repeated hour
    "0,30 2 * * *",        # two skipped times: one slot
    "15 30 2 * * *",       # six fields: seconds
    "30 2 * * 0",          # fixed-time, Sundays only (both changes are on a Sunday)
    "0 3 * * *",           # fixed-time, just after the gap
    "59 1 * * *",          # fixed-time, just before
    "30 * * * *",          # wall clock: a slot each showing, none in the gap
    "*/30 2 * * *",        # wall clock (minute starts with '*')
    "@hourly",             # wall clock
    "@daily",              # fixed-time: 0 0 * * *
]
CHANGES = [date(2024, 3, 31), date(2024, 10, 27), date(2027, 3, 28), date(2027, 10, 31)]

MACROS = {"@hourly": "0 * * * *", "@daily": "0 0 * * *"}


def field(text, lo, hi):
    """The values a cron field allows: '*', '*/n', 'a-b', 'a-b/n', lists."""
    out = set()
    for part in text.split(","):
        step = 1
        if "/" in part:
            part, s = part.split("/")
            step = int(s)
        if part == "*":
            a, b = lo, hi
        elif "-" in part:
            a, b = map(int, part.split("-"))
        else:
            a = b = int(part)
        out.update(range(a, b + 1, step))
    return out


def parse(expr):
    expr = MACROS.get(expr, expr)
    f = expr.split()
    if len(f) == 5:
        f = ["0"] + f
    sec, mnt, hr, dom, mon, dow = f
    fixed = not any(x.startswith("*") for x in (sec, mnt, hr))
    dows = {d % 7 for d in field(dow, 0, 7)}
    return dict(fixed=fixed, sec=field(sec, 0, 59), min=field(mnt, 0, 59), hour=field(hr, 0, 23),
                dom=field(dom, 1, 31), mon=field(mon, 1, 12), dow=dows,
                dom_star=dom.startswith("*"), dow_star=dow.startswith("*"))


def day_matches(s, d):
    cron_dow = (d.weekday() + 1) % 7
    if d.month not in s["mon"]:
        return False
    dom_ok, dow_ok = d.day in s["dom"], cron_dow in s["dow"]
    if s["dom_star"] or s["dow_star"]:
        return dom_ok and dow_ok
    return dom_ok or dow_ok


def gap_end(u_lo, u_hi):
    """The first UTC second in (u_lo, u_hi] whose offset differs from u_lo's."""
    off = datetime.fromtimestamp(u_lo, TZ).utcoffset()
    while u_hi - u_lo > 1:
        mid = (u_lo + u_hi) // 2
        if datetime.fromtimestamp(mid, TZ).utcoffset() == off:
            u_lo = mid
        else:
            u_hi = mid
    return u_hi


def fixed_slots(s, lo, hi):
    out = set()
    d = datetime.fromtimestamp(lo, UTC).date() - timedelta(days=2)
    end = datetime.fromtimestamp(hi, UTC).date() + timedelta(days=2)
    while d <= end:
        if day_matches(s, d):
            for h in s["hour"]:
                for m in s["min"]:
                    for sec in s["sec"]:
                        wall = datetime(d.year, d.month, d.day, h, m, sec)
                        first = wall.replace(tzinfo=TZ, fold=0)
                        u0 = int(first.timestamp())
                        back = datetime.fromtimestamp(u0, TZ).replace(tzinfo=None)
                        if back == wall:
                            u = u0                      # exists; fold=0 is the first showing
                        else:
                            u1 = int(wall.replace(tzinfo=TZ, fold=1).timestamp())
                            u = gap_end(min(u0, u1), max(u0, u1))   # the first instant after the gap
                        if lo <= u < hi:
                            out.add(u)
        d += timedelta(days=1)
    return out


def wall_slots(s, lo, hi):
    out = set()
    u = lo - lo % 60
    while u < hi:
        t = datetime.fromtimestamp(u, TZ)
        if t.minute in s["min"] and t.hour in s["hour"] and day_matches(s, t.date()):
            for sec in s["sec"]:
                if lo <= u + sec < hi:
                    out.add(u + sec)
        u += 60
    return out


def rfc(u):
    return datetime.fromtimestamp(u, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def oracle(expr, lo, hi):
    s = parse(expr)
    return s["fixed"], sorted(fixed_slots(s, lo, hi) if s["fixed"] else wall_slots(s, lo, hi))


def utc(*a):
    return int(datetime(*a, tzinfo=UTC).timestamp())


def oracle_self_check():
    """The oracle against doc/schedules.md's worked example (Berlin, 2024)."""
    cases = [
        ("30 2 * * *", utc(2024, 3, 30), utc(2024, 4, 2),
         [utc(2024, 3, 30, 1, 30), utc(2024, 3, 31, 1, 0), utc(2024, 4, 1, 0, 30)]),
        ("30 2 * * *", utc(2024, 10, 26), utc(2024, 10, 29),
         [utc(2024, 10, 26, 0, 30), utc(2024, 10, 27, 0, 30), utc(2024, 10, 28, 1, 30)]),
        ("0,30 2 * * *", utc(2024, 3, 31), utc(2024, 3, 31, 12), [utc(2024, 3, 31, 1, 0)]),
        ("30 * * * *", utc(2024, 10, 26, 23), utc(2024, 10, 27, 3),
         [utc(2024, 10, 26, 23, 30), utc(2024, 10, 27, 0, 30), utc(2024, 10, 27, 1, 30), utc(2024, 10, 27, 2, 30)]),
        ("*/30 2 * * *", utc(2024, 10, 27), utc(2024, 10, 27, 12),
         [utc(2024, 10, 27, 0, 0), utc(2024, 10, 27, 0, 30), utc(2024, 10, 27, 1, 0), utc(2024, 10, 27, 1, 30)]),
    ]
    bad = [(e, oracle(e, lo, hi)[1], want) for e, lo, hi, want in cases if oracle(e, lo, hi)[1] != want]
    name = "cli slots: the oracle gives doc/schedules.md's worked example (Berlin, 2024)"
    if bad:
        print(f"not ok - {name}")
        for e, got, want in bad:
            print(f"#   {e}: oracle {[rfc(u) for u in got]}, the doc {[rfc(u) for u in want]}")
        return 1
    print(f"ok - {name}")
    return 0


def main():
    an = sys.argv[1]
    failed = oracle_self_check()
    for change in CHANGES:
        lo_dt = datetime(change.year, change.month, change.day, tzinfo=UTC) - timedelta(days=3)
        hi_dt = lo_dt + timedelta(days=6)
        lo, hi = int(lo_dt.timestamp()), int(hi_dt.timestamp())
        # The range as RFC 3339 with an offset (2024), as ms (2027).
        if change.year == 2024:
            frm = lo_dt.astimezone(timezone(timedelta(hours=2))).isoformat()
            to = hi_dt.astimezone(timezone(timedelta(hours=-5))).isoformat()
        else:
            frm, to = str(lo * 1000), str(hi * 1000)
        report = []
        total = 0
        for expr in SCHEDULES:
            fixed, want = oracle(expr, lo, hi)
            want_lines = [f"{u * 1000}\t{rfc(u)}" for u in want]
            total += len(want)
            sched = f"CRON_TZ={ZONE} {expr}"
            p = subprocess.run([an, "slots", "--schedule", sched, "--from", frm, "--to", to],
                               capture_output=True, text=True)
            got = p.stdout.splitlines()
            if p.returncode == 0 and got == want_lines and want and not p.stderr:
                continue
            extra = [g for g in got if g not in want_lines]
            missing = [w for w in want_lines if w not in got]
            report.append(f"'{sched}' ({'fixed-time' if fixed else 'wall clock'}): exit {p.returncode},"
                          f" {p.stderr.strip()[:200]} not expected {extra[:4]}, missing {missing[:4]}")
        name = (f"cli slots: {len(SCHEDULES)} CRON_TZ={ZONE} schedules from {frm} to {to}, across {change}:"
                f" the {total} slots zoneinfo gives")
        if report:
            failed += 1
            print(f"not ok - {name}")
            for r in report:
                print(f"#   {r}")
        else:
            print(f"ok - {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
