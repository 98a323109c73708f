#!/usr/bin/env bash
# run.sh — schedules: the parser and slot search (a C table test), then the
# SQL functions anarchon_slot / anarchon_next_slot in SQLite, then the
# Python application loop of doc/app-loop.md with several processes.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
here=test/schedule
tmp=$(t_tmpdir)

# Part 1: the hand-worked table, the refusals and the random oracle.
if make -s test/bin/schedule_test > "$tmp/build.log" 2>&1; then
	test/bin/schedule_test 2000 || true
else
	not_ok "schedule_test builds" "$(tail -n 20 "$tmp/build.log")"
fi

# Part 2: the SQLite functions, against expected output.
if make -s sqlite > "$tmp/build-sqlite.log" 2>&1; then
	for f in "$here"/sql/*.sql; do
		name=$(basename "$f" .sql)
		stdbuf -oL sqlite3 "$tmp/$name.db" < "$f" > "$tmp/$name.out" 2>&1
		diff_ok "sqlite schedule functions: $name" "$here/expected/$name.out" "$tmp/$name.out"
		if command -v valgrind > /dev/null; then
			valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
				--log-file="$tmp/vg-$name.log" sqlite3 "$tmp/vg-$name.db" < "$f" > /dev/null 2>&1
			if [ -s "$tmp/vg-$name.log" ]; then
				not_ok "sqlite schedule functions under valgrind: $name" "$(head -n 30 "$tmp/vg-$name.log")"
			else
				ok "sqlite schedule functions under valgrind: $name"
			fi
		fi
	done
else
	not_ok "make sqlite" "$(tail -n 20 "$tmp/build-sqlite.log")"
fi

suite_end
