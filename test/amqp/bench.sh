# bench.sh — the bench rows of one message-queue store, shared by
# test/bench/amqp.sh and test/bench/nats.sh (sourced after test/lib.sh, from
# the top of the repository).
#
#   mq_bench STORE KIND URL   rows for 1 and 8 clients (one process and one
#                             connection each, every claim a new run):
#     claim from C through the store interface  vs  mq-base KIND (the bare
#                                                   server operation from C)
#     claim through SQLite                      vs  the claim from C
#     claim through PostgreSQL                  vs  the claim from C
#     claim through PostgreSQL                  vs  its limit: the claim from C
#                                                   and the same call answered
#                                                   by PostgreSQL alone, in
#                                                   series (composite_limit)
#   The claim clients are test/bin/rbench (c, sqlite, pg modes: any store
#   URL); the baseline is measured before and after each client count and
#   the better of the two is used, so a row is never flattered by a
#   disturbed baseline.  On NATS every measurement starts from empty streams
#   (mq-base nats-reset): a stream that grew during the rows before would
#   otherwise make the later rows slower than the earlier ones for a reason
#   that is not theirs.

source test/bench/lib.sh
MQB_DIR=${MQB_DIR:-$(t_tmpdir)}

# mq_bench_build: the clients and the extension, before the server starts.
mq_bench_build() { make -s sqlite test/bin/rbench test/bin/mq-base > /dev/null; }

# mq_measure PROGRAM MODE TARGET CLIENTS: sets OPS (per second, all clients), P50, P99 (µs).
mq_measure() {
	local prog=$1 mode=$2 target=$3 clients=$4
	if [ "$MQB_KIND" = nats ]; then
		test/bin/mq-base nats-reset "$MQB_URL" "${MQB_STREAM:-CRON}" || { OPS=0; P50=0; P99=0; return 1; }
	fi
	bench_clients "$MQB_DIR" "$mode-$clients-$RANDOM" "$clients" "$prog" "$mode" "$target" "$BENCH_SECONDS"
}

mq_bench() {
	local store=$1 kind=$2 url=$3 have_pg=0 c b1 b2 base c_ops rows r scen ops rbase p50 p99 floor pg_ops pg_p50 pg_p99
	MQB_KIND=$kind MQB_URL=$url
	# Every claim of the bench is a new run, so every one wins: on RabbitMQ each
	# would settle for 2.5 s (doc/stores-amqp-nats.md).  The rows measure the
	# broker's work, without settling.
	if [ "$kind" = amqp ]; then
		case $url in *\?*) url="$url&durability=accept-loss" ;; *) url="$url?durability=accept-loss" ;; esac
	fi
	export RBENCH_EXT=$REPO_ROOT/sqlite/anarchon
	if command -v pg_config > /dev/null && [ -f pg/fdw.c ]; then
		source test/pg/server.sh
		if pg_install > "$MQB_DIR/pg-install.log" 2>&1 && pg_start > "$MQB_DIR/pg-start.log" 2>&1; then
			psql -X -q -c "CREATE EXTENSION anarchon" \
				-c "CREATE SERVER bench_mq FOREIGN DATA WRAPPER anarchon OPTIONS (url '$url')" > /dev/null
			have_pg=1
		else
			echo "# PostgreSQL did not start: no PostgreSQL rows for $store" >&2
		fi
	fi
	for c in 1 8; do
		mq_measure test/bin/mq-base "$kind" "$url" "$c"; b1=$OPS
		rows=()
		mq_measure test/bin/rbench c "$url" "$c"; c_ops=$OPS
		rows+=("claim from C vs the bare operation from C|$OPS|BASE|$P50|$P99")
		echo "$store from C x$c: $OPS/s" >&2
		mq_measure test/bin/rbench sqlite "$url" "$c"
		rows+=("claim via SQLite vs the claim from C|$OPS|$c_ops|$P50|$P99")
		echo "$store via SQLite x$c: $OPS/s" >&2
		if [ $have_pg = 1 ]; then
			mq_measure test/bin/rbench pg bench_mq "$c"
			rows+=("claim via PostgreSQL vs the claim from C|$OPS|$c_ops|$P50|$P99")
			echo "$store via PostgreSQL x$c: $OPS/s" >&2
			pg_ops=$OPS pg_p50=$P50 pg_p99=$P99
			mq_measure test/bin/rbench pg-floor - "$c"; floor=$OPS
			rows+=("claim via PostgreSQL vs its limit (the call alone, then the claim from C)|$pg_ops|$(composite_limit "$floor" "$c_ops")|$pg_p50|$pg_p99")
			echo "$store PostgreSQL call alone x$c: $floor/s" >&2
		fi
		mq_measure test/bin/mq-base "$kind" "$url" "$c"; b2=$OPS
		base=$(awk -v a="$b1" -v b="$b2" 'BEGIN { print (a > b ? a : b) }')
		echo "$store bare operation x$c: $b1/s, $b2/s" >&2
		for r in "${rows[@]}"; do
			IFS='|' read -r scen ops rbase p50 p99 <<< "$r"
			[ "$rbase" = BASE ] && rbase=$base
			emit_row "$store" "$scen" "$c" "$ops" "$rbase" "$p50" "$p99"
		done
	done
}
