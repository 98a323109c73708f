# isolation.sh — run pg_isolation_regress on test/pg/specs + test/pg/expected
# against the suite's server (sourced by run.sh after pg_start).
#
# pg_isolation_run OUTDIR: one result line per spec; with
# ANARCHON_REGRESS_KEEP=DIR the results are copied to DIR/isolation too.
pg_isolation_run() {
	local out=$1 pgxs specs t
	pgxs=$(dirname "$(pg_config --pgxs)")/../..
	specs=$(cd "$TEST_ROOT/pg/specs" && ls *.spec | sed 's/\.spec$//' | sort)
	mkdir -p "$out"
	chmod 777 "$out"
	"$pgxs/src/test/isolation/pg_isolation_regress" --inputdir="$TEST_ROOT/pg" \
		--outputdir="$out" --bindir="$(pg_config --bindir)" --dbname=anarchon_isolation \
		--host="$PGHOST" --port="$PGPORT" --user="$PGUSER" $specs > "$out/log" 2>&1
	[ -n "${ANARCHON_REGRESS_KEEP:-}" ] && mkdir -p "$ANARCHON_REGRESS_KEEP/isolation" &&
		cp "$out"/results/*.out "$ANARCHON_REGRESS_KEEP/isolation/"
	for t in $specs; do
		if grep -Eq "^(ok|test) +[0-9]* *[-]* *$t +\.\.\. ok|^ok +[0-9]+ +- +$t " "$out/log"; then
			ok "isolation $t"
		else
			not_ok "isolation $t" "$(grep -A40 "^diff .*/$t.out" "$out/regression.diffs" 2>/dev/null | head -n 40)" "$(tail -n 5 "$out/log")"
		fi
	done
}
