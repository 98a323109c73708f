#!/usr/bin/env python3
"""check.py: read the fault suite's whole log and judge it.

    check.py TABLE_FILE LOG...

Each log line is one answer to one claim (written by `mq-driver log`, or
by `claimer log` through the SQLite host, whose stores are named sqlite/STORE):

    PROC STORE FAULT JOB SLOT TOKEN OUTCOME ATTEMPT TRY WALL_MS

A line "# injected STORE FAULT N" (the suite adds them) says how many faults
were injected into that run; any other line starting with "#" is a comment
(the claimers write an error answer's message so).

A heartbeat or a finish is a line whose OUTCOME is heartbeat:true|false or
finish:true|false, with the attempt it was won with and, as WALL_MS, the
time it was sent (test/fault/appclaimer.py).

Fails (exit 1, one "FAIL ..." line each) on:
  - a double win: two tokens told `won` for one (store, job, slot, attempt);
    on won/lost stores the attempt is always 0, so for one (store, job, slot);
  - a slot whose claims were all answered (the last try of every token was
    not an error), one of them lost, running or done, and which has no
    winner, on a store whose rules say it must have one.  RabbitMQ's rules do
    not: a claim whose confirm is lost answers lost, and its slot may then go
    without a run;
  - a fenced token accepted: a heartbeat or finish answered true although it
    was sent after another token's `won` of a later attempt of the same run
    had been answered (the takeover was decided before the call reached the
    store, so the store must have refused it).

Writes TABLE_FILE, a Markdown table of store x fault, and prints it.  What
TABLE_FILE holds from a line starting with KEEP_FROM on (cells measured by
other suites, written by hand) is kept below the new table.
"""
import collections
import sys

KEEP_FROM = "<!-- kept below the soak's table -->"

# Stores whose slot may go without a winner when a reply is lost.
MAY_SKIP = {"rabbitmq", "rabbitmq-cluster", "rabbitmq-tls"}


def main():
    table_file, logs = sys.argv[1], sys.argv[2:]
    injected = collections.Counter()
    answers = collections.Counter()
    errors = collections.Counter()
    order = []
    # (store, fault, job, slot) -> token -> list of (outcome, attempt, try, wall)
    slots = collections.defaultdict(lambda: collections.defaultdict(list))
    # (store, fault, job, slot) -> list of (token, attempt, accepted, sent)
    calls = collections.defaultdict(list)
    bad_lines = 0
    for path in logs:
        with open(path, errors="replace") as f:
            for line in f:
                w = line.split()
                if len(w) >= 5 and w[0] == "#" and w[1] == "injected":
                    injected[(w[2], w[3])] += int(w[4])
                    if (w[2], w[3]) not in order:
                        order.append((w[2], w[3]))
                    continue
                if w and w[0] == "#":
                    continue    # a comment: the message of the error answer above
                if len(w) != 10:
                    if line.strip():
                        bad_lines += 1
                        if bad_lines <= 5:
                            print("# unreadable, in %s: %s" % (path.rsplit("/", 1)[-1], line.rstrip()[:300]))
                    continue
                proc, store, fault, job, slot, token, outcome, attempt, tr, wall = w
                key = (store, fault)
                if key not in order:
                    order.append(key)
                if outcome.startswith(("heartbeat:", "finish:")):
                    calls[(store, fault, job, slot)].append(
                        (token, int(attempt), outcome.endswith(":true"), int(wall)))
                    continue
                answers[key] += 1
                if outcome.startswith("error"):
                    errors[key] += 1
                slots[(store, fault, job, slot)][token].append((outcome, int(attempt), int(tr), int(wall)))

    rows = collections.OrderedDict((k, collections.Counter()) for k in order)
    failures = []
    shown_answers = False
    for (store, fault, job, slot), tokens in slots.items():
        row = rows[(store, fault)]
        row["slots"] += 1
        row["claims"] += len(tokens)
        winners = collections.defaultdict(set)
        takeovers = []
        all_answered = True
        for token, tries in tokens.items():
            last = max(tries, key=lambda t: t[2])
            if last[0].startswith("error"):
                all_answered = False
                row["unanswered"] += 1
            for outcome, attempt, _, wall in tries:
                if outcome == "won":
                    winners[attempt].add(token)
                    if attempt > 1:
                        takeovers.append((attempt, token, wall))
        # A slot every answer to which was late or overlap (the job's previous
        # run still going) needs no winner; one answered lost, running or done
        # was decided, and someone must have been told so.
        decided = any(t[0] in ("lost", "running", "done") for tr in tokens.values() for t in tr)
        if winners:
            row["won"] += 1
        for attempt, who in winners.items():
            if len(who) > 1:
                row["double"] += 1
                failures.append("double win: %s under %s, job %s slot %s attempt %d: %s"
                                % (store, fault, job, slot, attempt, " ".join(sorted(who))))
        row["takeovers"] += len(takeovers)
        for token, attempt, accepted, sent in calls.get((store, fault, job, slot), ()):
            row["calls"] += 1
            row["refused"] += not accepted
            later = [t for t in takeovers if t[0] > attempt and t[1] != token and t[2] < sent]
            if accepted and later:
                row["fenced"] += 1
                failures.append("fenced token accepted: %s under %s, job %s slot %s: %s of attempt %d, "
                                "sent %d ms after attempt %d was won by %s"
                                % (store, fault, job, slot, token, attempt, sent - later[0][2],
                                   later[0][0], later[0][1]))
        if not winners and decided:
            row["nowinner"] += 1
            if all_answered and store.split("/")[-1] not in MAY_SKIP:
                failures.append("no winner: %s under %s, job %s slot %s: every claim answered, none won"
                                % (store, fault, job, slot))
                if not shown_answers:
                    shown_answers = True
                    failures.append("answers of that slot: " + "; ".join(
                        "%s %s" % (tok[:8], ",".join(t[0] for t in sorted(tr, key=lambda t: t[2])))
                        for tok, tr in tokens.items()))

    head = ("| store | fault | faults injected | claims | answers | slots won | double wins "
            "| slots without a winner | error answers | claims never answered "
            "| takeovers | heartbeats and finishes | refused as fenced | fenced tokens accepted |")
    out = [head, "|" + "---|" * 14]
    for (store, fault), row in rows.items():
        out.append("| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |" % (
            store, fault, injected[(store, fault)], row["claims"], answers[(store, fault)],
            row["won"], row["double"], row["nowinner"], errors[(store, fault)], row["unanswered"],
            row["takeovers"], row["calls"], row["refused"], row["fenced"]))
    text = "\n".join(out) + "\n"
    kept = ""
    try:
        with open(table_file) as f:
            old = f.read()
        if KEEP_FROM in old:
            kept = "\n" + old[old.index(KEEP_FROM):]
    except OSError:
        pass
    with open(table_file, "w") as f:
        f.write(text + kept)
    sys.stdout.write(text)
    if bad_lines:
        failures.append("%d log lines could not be read" % bad_lines)
    for msg in failures[:20]:
        print("FAIL " + msg)
    if len(failures) > 20:
        print("FAIL ... and %d more" % (len(failures) - 20))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
