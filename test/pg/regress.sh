# regress.sh — run pg_regress on sql/ + expected/ against the suite's server
# (sourced by run.sh after pg_start).  One result line per test file.
#
# pg_regress_run OUTDIR: writes OUTDIR/results/*.out and regression.diffs;
# with ANARCHON_REGRESS_KEEP=DIR, the results are also copied to DIR, to
# read (and, once each diff is read, to take as the new expected output).
pg_regress_run() {
	local out=$1 pgxs tests t
	pgxs=$(dirname "$(pg_config --pgxs)")/../..
	tests=$(make -s -C "$REPO_ROOT" -f - print-regress <<'MK'
include Makefile
print-regress:
	@echo $(REGRESS)
MK
)
	mkdir -p "$out"
	chmod 777 "$out"
	"$pgxs/src/test/regress/pg_regress" --inputdir="$REPO_ROOT" --outputdir="$out" \
		--bindir="$(pg_config --bindir)" --dbname=anarchon_regress \
		--host="$PGHOST" --port="$PGPORT" --user="$PGUSER" $tests > "$out/pg_regress.log" 2>&1
	[ -n "${ANARCHON_REGRESS_KEEP:-}" ] && mkdir -p "$ANARCHON_REGRESS_KEEP" && cp "$out"/results/*.out "$ANARCHON_REGRESS_KEEP"/
	for t in $tests; do
		if grep -Eq "^(ok|test) +[0-9]* *[-]* *$t +\.\.\. ok|^ok +[0-9]+ +- +$t " "$out/pg_regress.log"; then
			ok "pg_regress $t"
		else
			not_ok "pg_regress $t" "$(grep -A40 "^diff .*/$t.out" "$out/regression.diffs" 2>/dev/null | head -n 40)"
		fi
	done
}
