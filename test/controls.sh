# controls.sh — the set-up the suites of operators' controls share (catchup,
# pause, replace, runnow): the helpers that start PostgreSQL and Redis, the
# command's valgrind helper, a scratch directory every server's role can
# write to, and where the built command and SQLite extension are.
# Sourced after lib.sh.
source "$TEST_ROOT/pg/server.sh"
source "$TEST_ROOT/redis/server.sh"
source "$TEST_ROOT/cli/common.sh"
cd "$REPO_ROOT" || exit 1
tmp=$(t_tmpdir)
chmod 777 "$tmp"
AN=$REPO_ROOT/cli/anarchon
EXT=$REPO_ROOT/sqlite/anarchon.so
