#!/usr/bin/env python3
"""count.py STORE LOG... -- the settings fuzz's verdict for one store.

Counts the winners of every (slot, attempt) across the hosts' logs: one or
none is right, two is a slot won twice.  Prints one summary line (claims,
answers, refusals by reason), then "duplicate ..." lines; exits 1 on a
duplicate, 2 when the run proved nothing (no win, or no late answer)."""
import collections
import re
import sys

store, logs = sys.argv[1], sys.argv[2:]
winners = collections.defaultdict(list)
answers = collections.Counter()
refusals = collections.Counter()
for path in logs:
    for line in open(path):
        w = line.split(None, 1)
        if not w:
            continue
        if w[0] == "won":
            slot, attempt, token = w[1].split()
            winners[(slot, attempt)].append(token)
            answers["won"] += 1
        elif w[0] == "answer":
            answers[w[1].strip()] += 1
        elif w[0] == "error":
            # The reason, without numbers, URLs or names that differ per call.
            reason = re.sub(r"[0-9]+", "N", w[1].strip())
            reason = re.sub(r"(redis|nats|amqp)://[^ :]*", "URL", reason)
            refusals[reason[:150]] += 1
        elif w[0] == "pruned":
            answers["prune"] += 1
dups = {k: v for k, v in winners.items() if len(v) > 1}
print("# rolling %s: %d claims; %s; %d slot attempts won; %d won twice; refusals %d" % (
    store, sum(answers.values()) - answers["prune"] + sum(refusals.values()),
    ", ".join("%s %d" % kv for kv in sorted(answers.items())), len(winners), len(dups),
    sum(refusals.values())))
for reason, n in refusals.most_common():
    print("#   refused %d x: %s" % (n, reason))
for (slot, attempt), tokens in sorted(dups.items()):
    print("duplicate slot %s attempt %s won by %s" % (slot, attempt, " ".join(tokens)))
if dups:
    sys.exit(1)
if not winners or not answers["late"]:
    sys.exit(2)
