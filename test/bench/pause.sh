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
# shellcheck disable=SC2317  # called by bench_pair
sq_none() { sq_measure 0 "$c"; }
# shellcheck disable=SC2317
sq_paused() { sq_measure 1 "$c"; }
for c in 1 8; do
	bench_pair sq_none sq_paused
	emit_row sqlite "claim with another job paused vs none" "$c" "$OPS" "$BASE_OPS" "$P50" "$P99"
	echo "pause sqlite x$c: $OPS/s with another job paused, $BASE_OPS/s without (medians of $BENCH_ROUNDS rounds)" >&2
done

# --- Redis -------------------------------------------------------------------
bench_redis benchpause
# rd_measure PAUSED: the clients' claims on an empty Redis, another job
# paused first when PAUSED is 1.
rd_measure() {
	local url="redis://127.0.0.1:$PORT?strategy=lease&prefix=pz$c" rc=0
	redis-cli -p "$PORT" FLUSHALL > /dev/null
	if [ "$1" = 1 ] && ! "$A" pause --store "$url" --job another-job > /dev/null; then
		echo "pause redis: the pause of another job failed" >&2; OPS=0; return 1
	fi
	bench_clients "$dir" "rd-$1-$c" "$c" test/bin/rbench c "$url" "$BENCH_SECONDS" || rc=1
	redis-cli -p "$PORT" FLUSHALL > /dev/null
	return $rc
}
# shellcheck disable=SC2317  # called by bench_pair
rd_none() { rd_measure 0; }
# shellcheck disable=SC2317
rd_paused() { rd_measure 1; }
for c in 1 8; do
	bench_pair rd_none rd_paused
	emit_row redis-lease "claim with another job paused vs none" "$c" "$OPS" "$BASE_OPS" "$P50" "$P99"
	echo "pause redis x$c: $OPS/s with another job paused, $BASE_OPS/s without (medians of $BENCH_ROUNDS rounds)" >&2
done
