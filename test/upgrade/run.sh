#!/usr/bin/env bash
# run.sh — upgrading the PostgreSQL extension (doc/upgrading.md): a database
# made by an older build, the new library over its old SQL objects, ALTER
# EXTENSION anarchon UPDATE, and what must hold at each step.
#
# The old builds are the sources kept in test/upgrade/releases/ (git archive
# tarballs: the suite needs no git history): the 0.1.0 release (44733c6) and
# 3b996f2, a development build of 2026-12-04 that also called itself 0.1.0
# but had no pauses, no run-now and an anarchon_stats() without
# claims_paused.  A tarball that is missing or does not build is a not ok:
# the suite never skips an old build.
#
# Other suites run at the same time and load the system's anarchon.so, so no
# old build is ever installed there.  The suite copies the server's own
# tree into its temporary folder (test/upgrade/pg_tree.sh says how a server
# started from the copy loads the copy's anarchon.so).  Each build is
# installed into the copy with `make install DESTDIR=`, and the suite checks
# in /proc/self/maps of a backend that the library it runs is the copy's.
#
# For each old build, in a database of its own:
#   - CREATE EXTENSION with the old files, then use it: a claim won and
#     finished, a run with a live lease, a job given to a role and one a role
#     claimed, anarchon.run (run_log, run_schedules), and a pause and a
#     run-now where the build has them;
#   - install this build's files: in the gap, every function that reads the
#     SQL objects refuses with AN002, both versions named and the hint to
#     run ALTER EXTENSION anarchon UPDATE, never "does not exist"; a plain
#     statement, pg_dump and DROP EXTENSION (of another database) still work;
#   - ALTER EXTENSION anarchon UPDATE in the very session that was refused;
#   - every catalog fact of the extension (test/upgrade/catalog.sql) equal to
#     a fresh CREATE EXTENSION's; the history, owners, pauses, schedules and
#     log unchanged; the old slots not won again, a new slot won; the run
#     that was running across the update heartbeats, and a wrong token is
#     refused (finish false, fence AN001);
# then a library older than the SQL objects (0.1.0's over 0.2.0's objects,
# and this library over objects that say a later version), and pg_dump +
# pg_restore of an updated database into a new one.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$TEST_ROOT/pg/server.sh"
source "$TEST_ROOT/upgrade/pg_tree.sh"

VERSION=$(cat "$REPO_ROOT/VERSION")
RELEASES=$TEST_ROOT/upgrade/releases
OLD_BUILDS=(0.1.0 3b996f2)
tmp=$(t_tmpdir)
LATE="max_late_ms => 3600000"

# ---------------------------------------------------------------- builds

built_or_end upgrade || exit 1
for b in "${OLD_BUILDS[@]}"; do
	tarball=$RELEASES/anarchon-$b.tar.xz
	if [ ! -f "$tarball" ]; then
		not_ok "upgrade: the sources of the old build $b" "$tarball is missing: the suite cannot test an update from it"
		suite_end
		exit
	fi
	mkdir -p "$tmp/src"
	if ! tar -xJf "$tarball" -C "$tmp/src" || [ ! -d "$tmp/src/anarchon-$b" ]; then
		not_ok "upgrade: unpack $tarball"
		suite_end
		exit
	fi
	# Built with this machine's pg_config (PostgreSQL 15, 17 or 18), as
	# that release's users would; both trees build on all three unpatched.
	if ! make -s -j2 -C "$tmp/src/anarchon-$b" > "$tmp/build-$b.log" 2>&1; then
		not_ok "upgrade: build the old build $b" "$(tail -n 20 "$tmp/build-$b.log")"
		suite_end
		exit
	fi
	step "upgrade: built $b"
done

# ---------------------------------------------------------------- a private PostgreSQL

ROOT=$tmp/root
if ! pg_tree_copy "$ROOT" 2> "$tmp/copy.log"; then
	not_ok "upgrade: copy PostgreSQL's tree into the suite's folder" "$(tail -n 5 "$tmp/copy.log")"
	suite_end
	exit
fi
BIN=$PG_TREE_BIN
MYLIB=$ROOT$PG_TREE_PKGLIB/anarchon.so

# install_build DIR: DIR's anarchon (library, control file, scripts) is the
# one the private server has, and nothing of another build is left.
install_build() { pg_tree_install "$ROOT" "$1" "$tmp/install.log"; }

if ! install_build "$REPO_ROOT"; then
	not_ok "upgrade: install this build into the private tree" "$(tail -n 20 "$tmp/install.log")"
	suite_end
	exit
fi
PG_BINDIR=$ROOT$BIN
# fsync stays on: with it off, pg_start adds anarchon.durability = accept-loss,
# a setting the old builds do not know, and their sessions then begin with a
# warning that is not an answer.
pg_start 2> "$tmp/start.log" || {
	not_ok "upgrade: start the private PostgreSQL" "$(tail -n 20 "$tmp/start.log")"
	suite_end
	exit
}
step "upgrade: PostgreSQL from $PG_BINDIR on port $PGPORT"

q() { psql -X -A -t -q -v ON_ERROR_STOP=1 "$@" 2>&1; }
# loaded DB: the anarchon.so a backend of DB maps once it called anarchon.
loaded() { pg_tree_loaded -d "$1"; }
# catalog DB FILE: every catalog fact of the extension in DB.
catalog() { q -d "$1" -f "$TEST_ROOT/upgrade/catalog.sql" > "$2"; }
# data DB FILE: the extension's data in DB, in a fixed order.
data() {
	q -d "$1" > "$2" <<-'EOF'
		SELECT 'runs', job, slot, attempt, token, state, lease_until, claimed_at, finished_at FROM anarchon.runs WHERE job <> 'jk' ORDER BY 2, 3;
		SELECT 'jobs', job, last_claim_at FROM anarchon.runs_jobs WHERE job <> 'jk' ORDER BY 2;
		SELECT 'owners', job, owner::regrole, since FROM anarchon.job_owners WHERE job <> 'jk' ORDER BY 2;
		SELECT 'log', id, job, slot, outcome, status, error, run_by, application_name, started_at, finished_at FROM anarchon.run_log WHERE job <> 'jk' ORDER BY 2;
		SELECT 'schedules', job, schedule, since FROM anarchon.run_schedules WHERE job <> 'jk' ORDER BY 2;
		SELECT pg_catalog.to_regclass('anarchon.pauses') IS NOT NULL AS has_pauses \gset
		\if :has_pauses
		SELECT 'pauses', job, since, until FROM anarchon.pauses ORDER BY 2, 3;
		\endif
	EOF
}

out=$(q -c "CREATE ROLE upg_app" -c "CREATE DATABASE fresh" 2>&1) || not_ok "upgrade: a role and a database" "$out"
out=$(q -d fresh -c "CREATE EXTENSION anarchon" -c "SELECT anarchon_version()")
same "upgrade: a fresh CREATE EXTENSION of $VERSION answers anarchon_version() = $VERSION" "$VERSION" "$out"
lib=$(loaded fresh)
check "upgrade: the server runs the private tree's anarchon.so ($lib)" test "$lib" = "$MYLIB"
catalog fresh "$tmp/fresh.catalog"
check "upgrade: the catalog of a fresh install lists the extension's functions and tables" \
	grep -q "^function|anarchon.anarchon_claim(text,timestamp with time zone,text" "$tmp/fresh.catalog"

# The comparison sees a difference: a privilege and a volatility changed by
# hand in another database are two lines of its diff.
out=$(q -c "CREATE DATABASE drifted" && q -d drifted -c "CREATE EXTENSION anarchon" \
	-c "ALTER FUNCTION anarchon.anarchon_token() STABLE" \
	-c "GRANT EXECUTE ON FUNCTION anarchon.anarchon_prune(bigint) TO upg_app")
[ -z "$out" ] || not_ok "upgrade: a database that drifted" "$out"
catalog drifted "$tmp/drifted.catalog"
check "upgrade: the catalog comparison sees a changed volatility and privilege" \
	test "$(diff "$tmp/fresh.catalog" "$tmp/drifted.catalog" | grep -c '^>')" -eq 2

# ---------------------------------------------------------------- each old build

# round B: the whole story for old build B (see the top of this file).
round() {
	local b=$1 src=$tmp/src/anarchon-$1 db=old_${1//./_} base s1 s2 s3 has_pause has_run_now want out
	base=$(date +%s)
	s1=$(((base - 20) * 1000)) s2=$(((base - 19) * 1000)) s3=$(((base - 5) * 1000))

	if ! install_build "$src"; then
		not_ok "upgrade $b: install the old build into the private tree" "$(tail -n 20 "$tmp/install.log")"
		return
	fi
	if ! out=$(q -c "CREATE DATABASE $db" -c "CREATE DATABASE ${db}_drop" &&
		q -d "$db" -c "CREATE EXTENSION anarchon" && q -d "${db}_drop" -c "CREATE EXTENSION anarchon"); then
		not_ok "upgrade $b: CREATE EXTENSION with the old build" "$out"
		return
	fi
	lib=$(loaded "$db")
	check "upgrade $b: the server runs the old build's library from the private tree" \
		eval 'test "$lib" = "$MYLIB" && cmp "$src/anarchon.so" "$MYLIB"'

	has_pause=$(q -d "$db" -c "SELECT to_regprocedure('anarchon.anarchon_pause(text,timestamptz)') IS NOT NULL")
	has_run_now=$(q -d "$db" -c "SELECT to_regprocedure('anarchon.anarchon_run_now(text,text,bigint,bigint,integer,text,bigint)') IS NOT NULL")
	step "upgrade $b: pause $has_pause, run-now $has_run_now"

	# Use it.
	want=$'won\nt\ndone\nwon\n\nwon\nwon'
	out=$(q -d "$db" <<-EOF
		SELECT anarchon_claim('j1', $s1::bigint, 'tok-j1', $LATE);
		SELECT anarchon_finish('j1', $s1::bigint, 'tok-j1');
		SELECT anarchon_claim('j1', $s1::bigint, 'tok-other', $LATE);
		SELECT anarchon_claim('jr', $s2::bigint, 'tok-jr', lease_ms => 600000, $LATE);
		SELECT anarchon.set_job_owner('jo', 'upg_app');
		SET ROLE upg_app;
		SELECT anarchon_claim('ja', $s1::bigint, 'tok-ja', $LATE);
		RESET ROLE;
		CALL anarchon.run('js', '* * * * * *', 'SELECT 1');
	EOF
	)
	same "upgrade $b: claims won, done and running, owners, anarchon.run with the old build" "$want" "$out"
	if [ "$has_pause" = t ]; then
		out=$(q -d "$db" -c "SELECT anarchon.set_job_owner('jp', 'upg_app')" \
			-c "SELECT anarchon_pause('jp', now() + interval '1 day')" \
			-c "SELECT anarchon_claim('jp', $s1::bigint, 'tok-jp', $LATE)")
		same "upgrade $b: a pause with the old build" $'\n\npaused' "$out"
	fi
	if [ "$has_run_now" = t ]; then
		out=$(q -d "$db" -c "SELECT (anarchon_run_now('jn')).outcome")
		same "upgrade $b: a run-now with the old build" won "$out"
	fi
	# A command of anarchon.run that runs across the update (0.1.0 only: it
	# costs 12 s): the backend keeps the old library, its keep-alive worker
	# starts from the file on disk (the new library), which is refused in the
	# gap and heartbeats again after the update; the run ends succeeded.
	local kpid="" deadline
	if [ "$b" = 0.1.0 ]; then
		q -d "$db" -c "CALL anarchon.run('jk', '* * * * * *', 'SELECT pg_sleep(12)', lease_ms => 4000)" \
			> "$tmp/jk.out" 2>&1 &
		kpid=$!
		deadline=$((SECONDS + 10))
		until [ "$(q -d "$db" -c "SELECT count(*) FROM anarchon.runs WHERE job = 'jk' AND state = 'running'")" = 1 ]; do
			[ $SECONDS -lt $deadline ] || break
			sleep 0.1
		done
		check "upgrade $b: a command of anarchon.run is running before the new files are installed" \
			test "$(q -d "$db" -c "SELECT count(*) FROM anarchon.runs WHERE job = 'jk' AND state = 'running'")" = 1
	fi
	data "$db" "$tmp/$b.before"

	# This build's files over the old SQL objects.
	if ! install_build "$REPO_ROOT"; then
		not_ok "upgrade $b: install this build into the private tree" "$(tail -n 20 "$tmp/install.log")"
		return
	fi
	check "upgrade $b: pg_dump of the old objects under the new library" \
		pg_dump -d "$db" -f "$tmp/$b.gap.sql"
	check "upgrade $b: DROP EXTENSION of old objects under the new library" \
		q -d "${db}_drop" -c "DROP EXTENSION anarchon"

	# The gap, then the update in the same session.
	psql -X -A -t -d "$db" > "$tmp/$b.gap" 2>&1 <<-EOF
		\set VERBOSITY verbose
		SELECT 'plain ' || 1;
		SELECT anarchon_claim('j1', $s1::bigint, 'tok-gap', $LATE);
		SELECT anarchon_heartbeat('jr', $s2::bigint, 'tok-jr');
		SELECT anarchon_check('j1', $s1::bigint);
		SELECT 'maps ' || (pg_read_file('/proc/self/maps') LIKE '%$MYLIB%');
		ALTER EXTENSION anarchon UPDATE;
		SELECT 'extversion ' || extversion FROM pg_extension WHERE extname = 'anarchon';
		SELECT 'version ' || anarchon_version();
	EOF
	out=$(cat "$tmp/$b.gap")
	has "upgrade $b: gap: a statement without anarchon works" "$out" "plain 1"
	check "upgrade $b: gap: the claim, heartbeat and check are refused with AN002, each naming both versions" \
		test "$(grep -c "ERROR:  AN002: anarchon library $VERSION does not match its SQL objects 0.1.0" "$tmp/$b.gap")" -eq 3
	check "upgrade $b: gap: each refusal says to run ALTER EXTENSION anarchon UPDATE" \
		test "$(grep -c "HINT:  Run ALTER EXTENSION anarchon UPDATE." "$tmp/$b.gap")" -eq 3
	check "upgrade $b: gap: no other error, never 'does not exist'" \
		eval '! grep -q "does not exist" "$tmp/$b.gap" && test "$(grep -c ERROR: "$tmp/$b.gap")" -eq 3'
	has "upgrade $b: gap: the refused session ran the new library" "$out" "maps true"
	has "upgrade $b: ALTER EXTENSION anarchon UPDATE in the session that was refused" "$out" "ALTER EXTENSION"
	has "upgrade $b: the objects are $VERSION after the update" "$out" "extversion $VERSION"
	check "upgrade $b: anarchon_version() after the update" grep -qx "version $VERSION" "$tmp/$b.gap"

	if [ -n "$kpid" ]; then
		check "upgrade $b: the command of anarchon.run was still running when the update was done" kill -0 "$kpid"
	fi
	data "$db" "$tmp/$b.after"
	diff_ok "upgrade $b: runs, job locks, owners, run_log, schedules and pauses kept by the update" \
		"$tmp/$b.before" "$tmp/$b.after"
	catalog "$db" "$tmp/$b.catalog"
	diff_ok "upgrade $b: every catalog fact of the extension equals a fresh install's" \
		"$tmp/fresh.catalog" "$tmp/$b.catalog"

	out=$(q -d "$db" <<-EOF
		SELECT anarchon_claim('j1', $s1::bigint, 'tok-again', $LATE);
		SELECT anarchon_claim('jr', $s2::bigint, 'tok-again', $LATE);
		SELECT anarchon_claim('j1', $s3::bigint, 'tok-new', $LATE);
	EOF
	)
	check "upgrade $b: the old slots are not won again (done, running) and a new slot is won" \
		test "$out" = $'done\nrunning\nwon'
	out=$(q -d "$db" -c "SELECT anarchon_heartbeat('jr', $s2::bigint, 'tok-jr', 600000)" \
		-c "SELECT anarchon_finish('jr', $s2::bigint, 'tok-wrong')")
	check "upgrade $b: the run running across the update heartbeats; a wrong token's finish is refused" \
		test "$out" = $'t\nf'
	out=$(q -d "$db" -c "\\set VERBOSITY verbose" -c "BEGIN" -c "SELECT anarchon_fence('jr', $s2::bigint, 'tok-wrong')")
	has "upgrade $b: a wrong token's fence is refused (AN001)" "$out" "AN001"
	out=$(q -d "$db" -c "SELECT anarchon_finish('jr', $s2::bigint, 'tok-jr')" -c "SELECT anarchon_check('jr', $s2::bigint)")
	same "upgrade $b: the run's own token finishes it" $'t\nsucceeded' "$out"
	out=$(q -d "$db" -c "SELECT owner::regrole FROM anarchon.job_owners WHERE job IN ('jo', 'ja') ORDER BY job")
	same "upgrade $b: the jobs' owners are kept" $'upg_app\nupg_app' "$out"
	if [ "$has_pause" = t ]; then
		out=$(q -d "$db" -c "SELECT anarchon_claim('jp', $s3::bigint, 'tok-jp', $LATE)")
	else
		out=$(q -d "$db" -c "SELECT anarchon.set_job_owner('jp', 'upg_app')" \
			-c "SELECT anarchon_pause('jp', now() + interval '1 day')" \
			-c "SELECT anarchon_claim('jp', $s3::bigint, 'tok-jp', $LATE)")
		out=${out#$'\n\n'}
	fi
	same "upgrade $b: a paused job's claim answers paused after the update" paused "$out"
	if [ -n "$kpid" ]; then
		wait "$kpid"
		out=$(cat "$tmp/jk.out"; q -d "$db" -c "SELECT state FROM anarchon.runs WHERE job = 'jk'" \
			-c "SELECT status FROM anarchon.run_log WHERE job = 'jk'")
		check "upgrade $b: the run that went on across the update kept its lease and finished succeeded" \
			test "$out" = $'won\nsucceeded\nsucceeded'
	fi
	out=$(q -d "$db" -c "SELECT (anarchon_run_now('jn2')).outcome" -c "CALL anarchon.run('js', '* * * * * *', 'SELECT 1')")
	case $out in
		won$'\n'*) ok "upgrade $b: run-now and anarchon.run after the update" ;;
		*) not_ok "upgrade $b: run-now and anarchon.run after the update" "$out" ;;
	esac
}

for b in "${OLD_BUILDS[@]}"; do
	round "$b"
done

# ---------------------------------------------------------------- a library older than its objects

# This library over objects of a later release: refused, with the hint to
# install the matching package.  (The objects are marked later by hand: the
# check reads pg_extension.extversion, as it would after a later update.)
out=$(q -c "CREATE DATABASE newer" && q -d newer -c "CREATE EXTENSION anarchon" \
	-c "UPDATE pg_extension SET extversion = '99.0.0' WHERE extname = 'anarchon'")
[ -z "$out" ] || not_ok "upgrade: objects of a later release" "$out"
out=$(q -d newer -c "\\set VERBOSITY verbose" -c "SELECT anarchon_claim('j', $(($(date +%s) * 1000))::bigint, 'tok')")
has "upgrade: a library older than its SQL objects refuses (AN002, both versions)" "$out" \
	"AN002: anarchon library $VERSION does not match its SQL objects 99.0.0"
has "upgrade: ... and says to install the matching package" "$out" "HINT:  Install the anarchon 99.0.0 package"
out=$(q -d newer -c "SELECT anarchon_version()")
check "upgrade: anarchon_version() names both versions ($out)" \
	test "$out" = "$VERSION (SQL objects 99.0.0: install the library of the same version)"
out=$(q -d newer -c "ALTER EXTENSION anarchon UPDATE TO '$VERSION'" 2>&1)
has "upgrade: ... and ALTER EXTENSION is not blocked by the check (no path down is PostgreSQL's own answer)" \
	"$out" "has no update path from version \"99.0.0\""

# 0.1.0's library over 0.2.0's objects.  It predates the check, so it cannot
# refuse; what matters is that it never answers wrong: the tables are the
# same, its claims are right, and the function it lacks is an error.
if install_build "$tmp/src/anarchon-0.1.0"; then
	out=$(q -d old_0_1_0 -c "SELECT anarchon_claim('j1', (SELECT min(extract(epoch FROM slot) * 1000)::bigint FROM anarchon.runs WHERE job = 'j1'), 'tok-old', $LATE)")
	check "upgrade: 0.1.0's library over $VERSION objects answers right (done), never a win of a decided slot" \
		test "$out" = done
	out=$(q -d old_0_1_0 -c "SELECT anarchon_version()")
	has "upgrade: 0.1.0's library over $VERSION objects: anarchon_version() is an error, not an answer" \
		"$out" 'could not find function "anarchon_version"'
else
	not_ok "upgrade: install 0.1.0 again into the private tree" "$(tail -n 20 "$tmp/install.log")"
fi

# ---------------------------------------------------------------- pg_dump and pg_restore

if install_build "$REPO_ROOT"; then
	if out=$(pg_dump -Fc -d old_0_1_0 -f "$tmp/old.dump" 2>&1 && q -c "CREATE DATABASE restored" &&
		pg_restore -d restored --exit-on-error "$tmp/old.dump" 2>&1); then
		ok "upgrade: pg_dump and pg_restore of an updated database"
		data old_0_1_0 "$tmp/dumped.data"
		data restored "$tmp/restored.data"
		diff_ok "upgrade: the restored database has the history, owners, log, schedules and pauses" \
			"$tmp/dumped.data" "$tmp/restored.data"
		catalog restored "$tmp/restored.catalog"
		diff_ok "upgrade: the restored extension's catalog equals a fresh install's" \
			"$tmp/fresh.catalog" "$tmp/restored.catalog"
		out=$(q -d restored -c "SELECT anarchon_claim(job, (extract(epoch FROM slot) * 1000)::bigint, 'tok-restored', $LATE) FROM anarchon.runs WHERE state <> 'running' ORDER BY job, slot")
		if [ "$(printf '%s\n' "$out" | sort -u)" = done ] && [ "$(printf '%s\n' "$out" | wc -l)" -ge 3 ]; then
			ok "upgrade: slots won before the dump are not won again after the restore ($(printf '%s\n' "$out" | wc -l) finished runs: done)"
		else
			not_ok "upgrade: slots won before the dump are not won again after the restore" "$out"
		fi
	else
		not_ok "upgrade: pg_dump and pg_restore of an updated database" "$out"
	fi
else
	not_ok "upgrade: install this build again" "$(tail -n 20 "$tmp/install.log")"
fi

# ---------------------------------------------------------------- a session that matched, then another version

# A backend keeps the match of its library with the SQL objects across
# transactions (pg/version.c).  A later release's update, run by another
# session, must still be refused at this session's next transaction, and a
# fresh CREATE EXTENSION seen at the one after.  The later release is an
# update script put into the private tree, as its package would; like every
# update script it creates a function (test/build checks ours).
cat > "$ROOT$PG_TREE_SHARE/extension/anarchon--$VERSION--99.1.0.sql" <<-EOF
	CREATE FUNCTION anarchon.later_release() RETURNS int LANGUAGE sql AS 'SELECT 1';
EOF
s0=$(( ($(date +%s) + 60) * 1000 ))
out=$(q -c "CREATE DATABASE matched" && q -d matched -c "CREATE EXTENSION anarchon")
[ -z "$out" ] || not_ok "upgrade: a database for the matched session" "$out"
psql -X -A -t -q -d matched > "$tmp/matched.out" 2>&1 <<-EOF
	\set VERBOSITY verbose
	SELECT 'first ' || anarchon_claim('jm', $s0::bigint, 'tok', $LATE);
	\! psql -X -q -d matched -c "ALTER EXTENSION anarchon UPDATE TO '99.1.0'" 2>&1
	SELECT 'second ' || anarchon_claim('jm', $((s0 + 1000))::bigint, 'tok', $LATE);
	\! psql -X -q -d matched -c "DROP EXTENSION anarchon" -c "CREATE EXTENSION anarchon" 2>&1
	SELECT 'third ' || anarchon_claim('jm', $((s0 + 2000))::bigint, 'tok', $LATE);
EOF
same "upgrade: a session that matched $VERSION wins, is refused once another session updated the objects to a later release (AN002), wins again on new objects" \
	"first won|ERROR:  AN002: anarchon library $VERSION does not match its SQL objects 99.1.0|third won" \
	"$(grep -E '^(first|second|third) |^ERROR' "$tmp/matched.out" | paste -sd '|')"

suite_end
