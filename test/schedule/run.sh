#!/usr/bin/env bash
# run.sh — schedules: the parser and slot search (a C table test), then the
# SQL functions anarchon_slot / anarchon_next_slot in SQLite.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT"

# Part 1: the hand-worked table, the refusals and the random oracle.
if make -s test/bin/schedule_test > /dev/null 2>&1; then
	test/bin/schedule_test 2000
else
	not_ok "schedule_test builds" "$(make test/bin/schedule_test 2>&1 | tail -n 20)"
fi

suite_end
