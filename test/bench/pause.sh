#!/usr/bin/env bash
# pause.sh — the pause's rows of `make bench`: every claim reads its job's
# pause in its own atomic step, so a pause held by another job must cost the
# claims of the rest nothing (target ratio >= 0.95):
#   SQLite (WAL), 1 and 8 processes: claims with another job paused  vs  none
#   Redis (lease), 1 and 8 clients:  the same, from C through the store
# Each claim makes a new run, as in sqlite.sh and redis.sh; the paused job is
# never claimed.  PostgreSQL's claim reads the pause with the run (one
# snapshot), in the rows of pg.sh.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source test/lib.sh
source test/bench/lib.sh
source test/redis/server.sh

dir=$(t_tmpdir)
bench_built sqlite cli test/bin/claimer test/bin/rbench
A=$REPO_ROOT/cli/anarchon

# --- SQLite ----------------------------------------------------------------
sqlite3 "$dir/seed.db" "PRAGMA journal_mode=wal;" > /dev/null
# sq_measure PAUSED CLIENTS: sets OPS, P50, P99 on a fresh copy of the seed
sq_measure() {
	local db=$dir/sq-$1-$2-$RANDOM.db
	cp "$dir/seed.db" "$db"
	if [ "$1" = 1 ] && ! "$A" pause --store "sqlite://$db" --job another-job > /dev/null; then
		echo "pause sqlite: the pause of another job failed" >&2; OPS=0; return 1
	fi
	SQ_DB=$db bench_clients "$dir" "sq-$1-$2" "$2" sq_client
}
sq_client() {
	ANARCHON_OVERLAP=allow ANARCHON_BUSY_TIMEOUT_MS=60000 test/bin/claimer bench "$SQ_DB" "$BENCH_SECONDS" "$1" claim "$2"
}
for c in 1 8; do
	sq_measure 0 "$c"; base=$OPS
	sq_measure 1 "$c"
	emit_row sqlite "claim with another job paused vs none" "$c" "$OPS" "$base" "$P50" "$P99"
	echo "pause sqlite x$c: $OPS/s with another job paused, $base/s without" >&2
done

# --- Redis -------------------------------------------------------------------
bench_redis benchpause
for c in 1 8; do
	url="redis://127.0.0.1:$PORT?strategy=lease&prefix=pz$c"
	bench_clients "$dir" "rd-0-$c" "$c" test/bin/rbench c "$url" "$BENCH_SECONDS"; base=$OPS
	redis-cli -p "$PORT" FLUSHALL > /dev/null
	"$A" pause --store "$url" --job another-job > /dev/null || { echo "pause redis: the pause of another job failed" >&2; OPS=0; }
	bench_clients "$dir" "rd-1-$c" "$c" test/bin/rbench c "$url" "$BENCH_SECONDS"
	redis-cli -p "$PORT" FLUSHALL > /dev/null
	emit_row redis-lease "claim with another job paused vs none" "$c" "$OPS" "$base" "$P50" "$P99"
	echo "pause redis x$c: $OPS/s with another job paused, $base/s without" >&2
done
