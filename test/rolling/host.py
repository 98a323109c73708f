#!/usr/bin/env python3
"""host.py -- one host of the settings fuzz: claims for a while, its settings
drawn at random for every claim, and logs what each claim answered.

    host.py KIND URL SEED SECONDS LOG
      KIND  remote (URL is a store URL, driven through test/bin/rdrive)
            or sqlite (URL is a database file, driven through the sqlite3
            command with the extension loaded)

Slots are whole seconds, mostly the last few, sometimes up to 40 s back, so
that late claims and forgotten runs really happen.  Each claim's settings are
drawn from the allowed ranges: max_late_ms 1-5 s or 60 s, lease_ms 1-5 s,
attempts 1-3, overlap skip or allow.  A won run is finished, or left to run
out its lease (a takeover then wins the next attempt).  A SQLite host also
prunes now and then, with its own settings.

Log lines: "won SLOT ATTEMPT TOKEN", "answer OUTCOME", "error TEXT".
"""
import os
import random
import subprocess
import sys
import time

kind, url, seed, seconds, log_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
rng = random.Random(seed)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

if kind == "remote":
    proc = subprocess.Popen([os.path.join(root, "test/bin/rdrive"), url], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
else:
    proc = subprocess.Popen(["stdbuf", "-oL", "sqlite3", "-batch", url], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                            cwd=root)


def ask(line):
    """Send one command, read its one answer line."""
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    answer = proc.stdout.readline()
    if answer == "":
        raise SystemExit("the driver ended: " + line)
    return answer.strip()


if kind == "sqlite":
    # .load answers nothing: the SELECT's line says it is done.
    proc.stdin.write(".load %s\n" % os.environ.get("ROLLING_SQLITE_EXT", "./sqlite/anarchon"))
    if ask("SELECT 'loaded';") != "loaded":
        raise SystemExit("the extension did not load")

log = open(log_path, "w")
deadline = time.time() + seconds
n = 0
while time.time() < deadline:
    n += 1
    s = {"max_late_ms": rng.choice([1000, 2000, 3000, 5000, 60000]),
         "lease_ms": rng.choice([1000, 2000, 5000]),
         "attempts": rng.choice([1, 1, 2, 3]),
         "overlap": rng.choice(["skip", "allow", "allow"])}
    back = rng.choice([0, 0, 1, 1, 2, 3, 4, 5, 6, 8]) if rng.random() < 0.8 else rng.randint(6, 40)
    slot = (int(time.time()) - back) * 1000
    token = "h%d-%d" % (seed, n)
    if kind == "remote":
        for k, v in s.items():
            a = ask("set %s %s" % (k, v))
            if a != "ok":
                log.write("error set: %s\n" % a)
        a = ask("claim fz %d %s" % (slot, token))
    else:
        a = ask("SELECT %s;" % ", ".join("anarchon_config('%s', '%s')" % kv for kv in s.items()))
        a = ask("SELECT anarchon_claim('fz', %d, '%s');" % (slot, token))
        if a.startswith("won"):
            a = "won %s" % ask("SELECT attempt FROM anarchon_runs WHERE job = 'fz' AND slot = %d AND token = '%s';"
                              % (slot, token))
    w = a.split()
    if a.startswith("error") or "rror" in a:
        log.write("error %s\n" % a)
    elif w and w[0] == "won":
        log.write("won %d %s %s\n" % (slot, w[1] if len(w) > 1 else "1", token))
        if rng.random() < 0.6:
            if kind == "remote":
                ask("finish fz %d %s" % (slot, token))
            else:
                ask("SELECT anarchon_finish('fz', %d, '%s');" % (slot, token))
    else:
        log.write("answer %s\n" % (w[0] if w else "?"))
    if kind == "sqlite" and rng.random() < 0.1:
        p = ask("SELECT anarchon_prune();")
        log.write("pruned %s\n" % p)
    log.flush()
    time.sleep(rng.random() * 0.15)
proc.stdin.close()
proc.wait()
