#!/usr/bin/env bash
# The SQLite suite: regression scripts, contention, takeover, memory checks.
#
# Each test/sqlite/sql/NAME.sql runs through the sqlite3 CLI on a fresh
# database file and its output is compared with expected/NAME.out.  The
# contention and takeover checks run many claimer processes on one file.
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1

tmp=$(t_tmpdir)
here=test/sqlite

# run_script NAME [WRAPPER...]: the script's output, in the work folder.
run_script() {
	local name=$1 work=$tmp/$1
	shift
	rm -rf "$work" && mkdir -p "$work"
	ln -s "$REPO_ROOT/sqlite" "$work/sqlite"
	(cd "$work" && "$@" stdbuf -oL sqlite3 ./db.sqlite < "$REPO_ROOT/$here/sql/$name.sql" 2>&1)
}

for f in "$here"/sql/*.sql; do
	name=$(basename "$f" .sql)
	run_script "$name" | sqlite_cli_norm > "$tmp/$name.out"
	diff_ok "sqlite regression $name" "$here/expected/$name.out" "$tmp/$name.out"
done

# The same scripts under valgrind: no invalid access, no definite leak.
if have_valgrind "sqlite valgrind"; then
	for f in "$here"/sql/*.sql; do
		name=$(basename "$f" .sql)
		run_script "$name" valgrind -q --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite,indirect --log-file="$tmp/vg-$name.log" > /dev/null
		vg_log_ok "sqlite valgrind $name" "$tmp/vg-$name.log" "$?"
	done
fi

for t in "$here"/checks/*.sh; do
	[ -f "$t" ] && source "$t"
done

suite_end
