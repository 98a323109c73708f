#!/usr/bin/env bash
# The store suite: the store interface's shared parts, no server needed.
#
#   helpers     an error recorded on a store: message, hint (an_store_hintf),
#               the one text SQLite shows ("message. Hint"), clearing
#   check_url   only read from a method table of version 2 or later
#   urls        test/store/urls.txt through each network store's check_url,
#               which refuses what its open would refuse, without connecting
#               (PostgreSQL's foreign-data wrapper validator relies on it)
#   tables      core/'s decision tables row by row (tables_test.c): the lease
#               claim, and the won/lost claim, heartbeat, finish and check
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
here=test/store
tmp=$(t_tmpdir)

if ! make -s test/bin/storecheck test/bin/tables_test > "$tmp/build" 2>&1; then
	not_ok "store: build storecheck and tables_test" "$(tail -n 20 "$tmp/build")"
	suite_end
	exit
fi

test/bin/storecheck < "$here/urls.txt" > "$tmp/out" 2>&1
diff_ok "store: errors, hints, check_url and the URL table" "$here/urls.expected" "$tmp/out"

# Every secret in the table is "s3cret"; the answers (after "->") never show it.
if sed -n 's/^.* -> //p' "$tmp/out" | grep -q s3cret; then
	not_ok "store: no check_url error repeats a password" "$(grep -- '-> .*s3cret' "$tmp/out")"
else ok "store: no check_url error repeats a password"; fi

vg_ok "store: check_url under valgrind (nothing leaked or left open)" "$here/urls.txt" test/bin/storecheck

tap_ok "store: the decision tables' checks all ran and passed" test/bin/tables_test
vg_ok "store: the decision tables under valgrind" /dev/null test/bin/tables_test

suite_end
