#!/usr/bin/env python3
"""expo.py — read Prometheus' text exposition for the metrics suite.

  expo.py scrape URL OUT            GET URL (loopback only) into OUT
  expo.py expect FILE EXPECTED      every sample of EXPECTED ("name{l="v",...} value"
                                    lines) is in FILE with exactly that value; labels
                                    the exporter adds (server) are ignored
  expo.py absent FILE NAME{...}...  no sample of FILE has that name and those labels
  expo.py histogram FILE NAME N     every series of histogram NAME: N bounds besides
                                    +Inf, counts that never decrease, +Inf = _count,
                                    a _sum; prints the series' count
  expo.py same FILE1 FILE2 PREFIX   the families named PREFIX* that both files have
                                    agree on HELP, TYPE, label names and le bounds

Each command prints what differs and exits 1, or exits 0 in silence.
"""
import re
import sys
import urllib.request

IGNORED = {"server"}
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+\d+)?$')
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')


def labels_of(text):
    out, pos = {}, 0
    text = text or ""
    while pos < len(text):
        m = LABEL.match(text, pos)
        if not m:
            raise ValueError("bad labels: " + text)
        out[m.group(1)] = m.group(2)
        pos = m.end()
    return out


def parse(path):
    """(samples {(name, labels): value}, help {name: text}, type {name: text})."""
    samples, helps, types = {}, {}, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if line.startswith("# HELP "):
                name, _, text = line[7:].partition(" ")
                helps[name] = text
            elif line.startswith("# TYPE "):
                name, _, text = line[7:].partition(" ")
                types[name] = text
            elif not line.startswith("#"):
                m = SAMPLE.match(line)
                if not m:
                    raise ValueError("bad sample line: " + line)
                labels = {k: v for k, v in labels_of(m.group(3)).items() if k not in IGNORED}
                samples[(m.group(1), tuple(sorted(labels.items())))] = float(m.group(4))
    return samples, helps, types


def key_of(text):
    m = SAMPLE.match(text.strip() + " 0")
    return m.group(1), tuple(sorted(labels_of(m.group(3)).items()))


def show(key):
    name, labels = key
    return name + "{" + ",".join('%s="%s"' % kv for kv in labels) + "}"


def expect(path, expected):
    samples = parse(path)[0]
    bad = []
    with open(expected, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = SAMPLE.match(line)
            key = (m.group(1), tuple(sorted(labels_of(m.group(3)).items())))
            want = float(m.group(4))
            if key not in samples:
                bad.append("missing: %s (want %g)" % (show(key), want))
            elif samples[key] != want:
                bad.append("%s is %g, want %g" % (show(key), samples[key], want))
    return bad


def absent(path, keys):
    samples = parse(path)[0]
    return ["present: %s = %g" % (show(key_of(k)), samples[key_of(k)]) for k in keys if key_of(k) in samples]


def histogram(path, name, nbounds):
    samples = parse(path)[0]
    series = {}
    for (n, labels), v in samples.items():
        if n == name + "_bucket":
            rest = tuple(kv for kv in labels if kv[0] != "le")
            series.setdefault(rest, []).append((float(dict(labels)["le"]), v))
    bad = []
    if not series:
        bad.append("no series of %s" % name)
    for rest, buckets in sorted(series.items()):
        buckets.sort()
        where = show((name, rest))
        counts = [c for _, c in buckets]
        if len(buckets) != nbounds + 1 or buckets[-1][0] != float("inf"):
            bad.append("%s: %d buckets, want %d and +Inf" % (where, len(buckets) - 1, nbounds))
        if any(b < a for a, b in zip(counts, counts[1:])):
            bad.append("%s: counts decrease: %s" % (where, counts))
        count = samples.get((name + "_count", rest))
        if count is None or count != counts[-1]:
            bad.append("%s: _count %s, +Inf bucket %s" % (where, count, counts[-1]))
        total = samples.get((name + "_sum", rest))
        if total is None or total < 0 or (counts[-1] == 0 and total != 0):
            bad.append("%s: _sum %s with %s calls" % (where, total, counts[-1]))
    return bad


def same(path1, path2, prefix):
    s1, h1, t1 = parse(path1)
    s2, h2, t2 = parse(path2)
    bad = []
    common = sorted(n for n in t1 if n in t2 and n.startswith(prefix))
    if not common:
        bad.append("no family named %s* in both" % prefix)
    for n in common:
        if h1.get(n) != h2.get(n):
            bad.append("%s: HELP %r against %r" % (n, h1.get(n), h2.get(n)))
        if t1[n] != t2[n]:
            bad.append("%s: TYPE %s against %s" % (n, t1[n], t2[n]))
        names = [n + s for s in ("", "_bucket", "_sum", "_count")]
        l1 = {tuple(k for k, _ in lb) for (m, lb) in s1 if m in names}
        l2 = {tuple(k for k, _ in lb) for (m, lb) in s2 if m in names}
        if l1 != l2:
            bad.append("%s: labels %s against %s" % (n, sorted(l1), sorted(l2)))
        le1 = sorted({dict(lb)["le"] for (m, lb) in s1 if m == n + "_bucket"})
        le2 = sorted({dict(lb)["le"] for (m, lb) in s2 if m == n + "_bucket"})
        if le1 != le2:
            bad.append("%s: le %s against %s" % (n, le1, le2))
    return bad


def main(argv):
    cmd = argv[1]
    if cmd == "scrape":
        url = argv[2]
        if not url.startswith("http://127.0.0.1:"):
            return ["not a loopback URL: " + url]
        with urllib.request.urlopen(url, timeout=30) as r, open(argv[3], "wb") as out:
            out.write(r.read())
        return []
    if cmd == "expect":
        return expect(argv[2], argv[3])
    if cmd == "absent":
        return absent(argv[2], argv[3:])
    if cmd == "histogram":
        return histogram(argv[2], argv[3], int(argv[4]))
    if cmd == "same":
        return same(argv[2], argv[3], argv[4])
    return ["unknown command " + cmd]


if __name__ == "__main__":
    problems = main(sys.argv)
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)
