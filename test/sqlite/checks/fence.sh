# fence.sh — anarchon_fence between processes (test/sqlite/fence_procs.py):
# a takeover waits for a fenced transaction and then sees the finished run;
# a job taken over first cannot commit fenced writes.
# Sourced by test/sqlite/run.sh (uses $tmp and test/lib.sh).

out=$(/usr/bin/python3 "$here/fence_procs.py" "$REPO_ROOT/sqlite/anarchon" "$tmp/fence.db" 2>&1)
check "sqlite fence: a takeover waits for the fenced transaction, then is told done; the work is written once" \
	grep -qx "fenced-first done 1 1:succeeded" <<< "$out"
check "sqlite fence: a job taken over first cannot commit its fenced writes (nothing written, the backup holds attempt 2)" \
	grep -qx "taken-first won 0 2:running" <<< "$out"
[ -n "$out" ] && sed 's/^/#   /' <<< "$out"
