#!/usr/bin/env python3
"""circles.py OBJ_DIR — the two-file circles among the libraries' objects.

Reads every object under OBJ_DIR with nm: A calls B when A uses a symbol B
defines.  Prints each pair of files that call each other ("A <-> B: what
each calls of the other") and exits 1 when there is one; else prints the
count of objects read and exits 0 (2 when it read none).
"""
import collections
import glob
import os
import subprocess
import sys

root = sys.argv[1]
objs = sorted(glob.glob(os.path.join(root, "**", "*.o"), recursive=True))
if not objs:
    print("no object under %s" % root)
    sys.exit(2)
defined, used = {}, {}
for o in objs:
    out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
    defined[o] = {f[2] for f in (l.split() for l in out.splitlines()) if len(f) == 3 and f[1] in "TDBR"}
    used[o] = {f[1] for f in (l.split() for l in out.splitlines()) if len(f) == 2 and f[0] == "U"}
owner = {s: o for o, d in defined.items() for s in d}
calls = collections.defaultdict(lambda: collections.defaultdict(set))
for o, u in used.items():
    for s in u:
        if s in owner and owner[s] != o:
            calls[o][owner[s]].add(s)
name = lambda o: os.path.relpath(o, root)[:-2] + ".c"
found = 0
for a in sorted(calls):
    for b in sorted(calls[a]):
        if a < b and a in calls.get(b, {}):
            found += 1
            print("%s <-> %s: %s / %s" % (name(a), name(b), " ".join(sorted(calls[a][b])),
                                        " ".join(sorted(calls[b][a]))))
if found:
    sys.exit(1)
print("%d objects, no two files call each other" % len(objs))
