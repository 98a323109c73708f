#!/usr/bin/env bash
# The SQLite upgrade suite: files made by older builds, opened by this one.
#
# The old builds come from the sources kept in test/upgrade/releases/ (git
# archives: 0.1.0, and 5409b4b, a development build from before pauses and
# overlap 'replace'), built here with `make sqlite` only; git is never asked
# (CI's checkout may have no history).  With each old build a file is made
# and used (a run done, a run holding a long lease, a fenced run, a pause
# where the build has them, the application's PRAGMA user_version); then
# this build opens it: one migration, recorded in anarchon_meta; the data
# kept; the old slots not won again; new slots won; the run that was running
# across the upgrade heartbeats, finishes and fences; overlap 'replace' works;
# user_version untouched; the schema that of a fresh file.  Eight processes
# opening one old file at once migrate it once and agree on one winner.  A
# file of a newer format, or with an unreadable format row, or with an
# anarchon_runs no build made, is refused with a message that says so.
source "$(dirname "$0")/../lib.sh"
source "$TEST_ROOT/upgrade/old_build.sh"
cd "$REPO_ROOT" || exit 1

built_or_end sqlite-upgrade sqlite cli || exit 1
tmp=$(t_tmpdir)
new_so=$REPO_ROOT/sqlite/anarchon
version=$(cat VERSION)

# with SO FILE SQL...: the sqlite3 shell on FILE with SO loaded, errors too.
with() {
	local so=$1 file=$2
	shift 2
	sqlite3 -bail "$file" ".load $so" ".timeout 20000" "$@" 2>&1
}
new() { with "$new_so" "$@"; }

# The schema, one line per object, blanks and identifier quotes dropped.
schema() {
	sqlite3 "$1" "SELECT type || ' ' || name || ' ' || lower(replace(replace(replace(sql, ' ', ''), char(10), ''), '\"', ''))
		FROM sqlite_schema WHERE name LIKE 'anarchon%' ORDER BY name"
}

# is NAME GOT WANT: ok when the output is exactly WANT.
is() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "want: $3" "got: $2"; fi; }

# The old builds first: they take a minute or more on a loaded machine, and
# the slots below are read from the clock after them (a slot taken before
# would already be late for the old build's claims).
declare -A OLD_SO
for b in 0.1.0 5409b4b; do old_build "$b" "$tmp" sqlite && OLD_SO[$b]=$OLD_TREE/sqlite/anarchon; done

# The slots of this run: now, cut to the second, and whole seconds ahead.
now_slot=$(( $(date +%s) * 1000 ))
S=$now_slot
S1=$((S + 60000))
S2=$((S + 120000))

fresh=$tmp/fresh.db
new "$fresh" "SELECT anarchon_claim('fresh', $S, 'tfresh')" > /dev/null
is "anarchon_version() is the release in VERSION" "$(new "$fresh" "SELECT anarchon_version()")" "$version"
is "a fresh file records format 4, no migration" \
	"$(sqlite3 "$fresh" "SELECT group_concat(key || '=' || value, ' ') FROM anarchon_meta
		WHERE key IN ('format', 'migrations', 'format_since')")" "format=4 format_since=0.2.0 migrations=0"

# upgrade NAME FORMAT PAUSES: the whole story with the build NAME, whose files are FORMAT.
upgrade() {
	local name=$1 format=$2 pauses=$3 so f out
	so=${OLD_SO[$name]:-}
	[ -n "$so" ] || return 0	# its build failed: a not ok already
	f=$tmp/$name.db

	# Made by the old build: a run done, a run holding a long lease, a run
	# to fence, a run of a job that overlap 'replace' will end, a pause.
	out=$(with "$so" "$f" "PRAGMA user_version = 42" \
		"SELECT anarchon_config('lease_ms', 600000)" \
		"SELECT anarchon_claim('done', $S, 'tdone')" "SELECT anarchon_finish('done', $S, 'tdone')" \
		"SELECT anarchon_claim('run', $S, 'trun')" \
		"SELECT anarchon_claim('fen', $S, 'tfen')" \
		"SELECT anarchon_claim('ovr', $S1, 'tovr')" \
		"CREATE VIEW app_runs AS SELECT job, state FROM anarchon_runs" \
		"CREATE INDEX app_runs_state ON anarchon_runs (state)")
	is "upgrade $name: the old build claims, finishes, holds leases" "$out" "$(printf '600000\nwon\n1\nwon\nwon\nwon')"
	if [ "$pauses" = 1 ]; then
		is "upgrade $name: the old build pauses a job" "$(with "$so" "$f" "SELECT anarchon_pause('held')")" 1
	fi
	is "upgrade $name: the old file has no anarchon_meta" \
		"$(sqlite3 "$f" "SELECT count(*) FROM sqlite_schema WHERE name = 'anarchon_meta'")" 0

	# Read by this build before anything writes: the file as it is (reads do
	# not migrate), as "Checking an upgrade" in doc/upgrading.md does first.
	is "upgrade $name: before any write, this build's checks read the old file" \
		"$(new "$f" "SELECT anarchon_check('done', $S)" "SELECT anarchon_check('run', $S)" \
			"SELECT anarchon_check('never', $S)")" "$(printf 'succeeded\nrunning\nnone')"
	is "upgrade $name: ... and so does the command's check" \
		"$(cli/anarchon check --store "sqlite:$f" --job done --slot "$S" 2>&1)" succeeded
	is "upgrade $name: ... and anarchon_missed and anarchon_due" \
		"$(new "$f" "SELECT count(*) >= 0 FROM anarchon_missed('done', '* * * * *', $S - 120000, $S)" \
			"SELECT count(*) >= 0 FROM anarchon_due('done', '* * * * *')")" "$(printf '1\n1')"
	if [ "$pauses" = 1 ]; then
		is "upgrade $name: ... and anarchon_paused" "$(new "$f" "SELECT anarchon_paused('held') IS NOT NULL")" 1
	fi
	is "upgrade $name: ... and leave it unmigrated" \
		"$(sqlite3 "$f" "SELECT count(*) FROM sqlite_schema WHERE name IN ('anarchon_meta', 'anarchon_pruned')")" 0
	cp "$f" "$f.race"

	# Opened by this build.
	is "upgrade $name: a done slot is not won again" "$(new "$f" "SELECT anarchon_claim('done', $S, 'tnew')")" done
	is "upgrade $name: migrated once, from format $format, recorded in anarchon_meta" \
		"$(sqlite3 "$f" "SELECT (SELECT value FROM anarchon_meta WHERE key = 'format'),
			(SELECT value FROM anarchon_meta WHERE key = 'migrations'),
			(SELECT group_concat(value) FROM anarchon_meta WHERE key LIKE 'migration %')" | sed 's/ at [0-9]*$//')" \
		"4|1|from format $format to 4 by anarchon $version"
	is "upgrade $name: the runs are kept" \
		"$(sqlite3 "$f" "SELECT group_concat(job || ':' || state || ':' || token, ' ') FROM (SELECT * FROM anarchon_runs WHERE job <> 'done' OR token = 'tdone' ORDER BY job)")" \
		"done:succeeded:tdone fen:running:tfen ovr:running:tovr run:running:trun"
	is "upgrade $name: a running slot is not won by another token" \
		"$(new "$f" "SELECT anarchon_claim('run', $S, 'tother')")" running
	is "upgrade $name: the run that was running across the upgrade heartbeats; a stranger is fenced" \
		"$(new "$f" "SELECT anarchon_config('lease_ms', 600000)" \
			"SELECT anarchon_heartbeat('run', $S, 'trun')" "SELECT anarchon_heartbeat('run', $S, 'tother')")" \
		"$(printf '600000\n1\n0')"
	is "upgrade $name: its anarchon_fence holds inside the application's transaction" \
		"$(new "$f" "CREATE TABLE IF NOT EXISTS work (x)" "BEGIN IMMEDIATE" \
			"SELECT anarchon_fence('fen', $S, 'tfen')" "INSERT INTO work VALUES (1)" "COMMIT" \
			"SELECT count(*) FROM work")" "$(printf '1\n1')"
	has "upgrade $name: a fence with another token is refused" \
		"$(new "$f" "BEGIN IMMEDIATE" "SELECT anarchon_fence('fen', $S, 'tbad')")" "fence"
	is "upgrade $name: the run finishes" \
		"$(new "$f" "SELECT anarchon_finish('run', $S, 'trun')" "SELECT anarchon_check('run', $S)")" \
		"$(printf '1\nsucceeded')"
	is "upgrade $name: a new slot is won, once" \
		"$(new "$f" "SELECT anarchon_claim('done', $S2, 'ta')" "SELECT anarchon_claim('done', $S2, 'tb')")" \
		"$(printf 'won\nrunning')"
	is "upgrade $name: overlap 'replace' replaces the run the old build started" \
		"$(new "$f" "SELECT anarchon_config('overlap', 'replace')" "SELECT anarchon_claim('ovr', $S2, 'tovr2')" \
			"SELECT anarchon_check('ovr', $S1)")" "$(printf 'replace\nwon\nreplaced')"
	if [ "$pauses" = 1 ]; then
		is "upgrade $name: the old build's pause holds, and resumes" \
			"$(new "$f" "SELECT anarchon_claim('held', $S2, 'th')" "SELECT anarchon_resume('held')" \
				"SELECT anarchon_claim('held', $S2, 'th')")" "$(printf 'paused\n1\nwon')"
	else
		is "upgrade $name: pauses work on a file made before them" \
			"$(new "$f" "SELECT anarchon_pause('held')" "SELECT anarchon_claim('held', $S2, 'th')")" \
			"$(printf '1\npaused')"
	fi
	is "upgrade $name: PRAGMA user_version is the application's, untouched" "$(sqlite3 "$f" "PRAGMA user_version")" 42
	is "upgrade $name: the application's view and index on anarchon_runs are kept" \
		"$(sqlite3 "$f" "SELECT count(*) FROM app_runs" "SELECT count(*) FROM sqlite_schema WHERE name = 'app_runs_state'")" \
		"$(printf '%s\n1' "$(sqlite3 "$f" "SELECT count(*) FROM anarchon_runs")")"
	is "upgrade $name: the schema is a fresh file's" "$(schema "$f")" "$(schema "$fresh")"
	is "upgrade $name: integrity_check" "$(sqlite3 "$f" "PRAGMA integrity_check")" ok
	new "$f" "SELECT anarchon_claim('again', $S2, 'tx')" > /dev/null
	is "upgrade $name: opened again, not migrated again" \
		"$(sqlite3 "$f" "SELECT value FROM anarchon_meta WHERE key = 'migrations'")" 1

	is "upgrade $name: the old build still claims on the migrated file (processes restarted one by one)" \
		"$(with "$so" "$f" "SELECT anarchon_claim('rolling', $S2, 'tr')" "SELECT anarchon_claim('rolling', $S2, 'ts')")" \
		"$(printf 'won\nrunning')"
	is "upgrade $name: ... and this build sees its run" "$(new "$f" "SELECT anarchon_check('rolling', $S2)")" running

	# The migration under valgrind: no invalid access, no leak.
	if have_valgrind "upgrade $name: valgrind"; then
		cp "$f.race" "$f.vg"
		valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
			--log-file="$tmp/vg-$name.log" sqlite3 "$f.vg" ".load $new_so" \
			"SELECT anarchon_claim('vg', $S2, 'tv')" > "$tmp/vg-$name.out" 2>&1
		vg_log_ok "upgrade $name: the migration under valgrind" "$tmp/vg-$name.log" "$?"
		is "upgrade $name: ... migrated and won there" "$(cat "$tmp/vg-$name.out";
			sqlite3 "$f.vg" "SELECT value FROM anarchon_meta WHERE key = 'migrations'")" "$(printf 'won\n1')"
	fi

	# The command's SQLite store is the same code: it migrates too.
	cp "$f.race" "$f.cli"
	out=$(cli/anarchon claim --store "sqlite://$f.cli" --job cli --slot "$S2" --token tc 2>&1; echo "exit $?")
	is "upgrade $name: the command migrates the file and wins" \
		"$(printf '%s' "$out" | cut -f1 | tr '\n' ' ')$(sqlite3 "$f.cli" "SELECT value FROM anarchon_meta WHERE key = 'migrations'")" \
		"won exit 0 1"

	txn "$name" "$f.race"
	race "$name" "$f.race" delete
}

# txn NAME FILE: the first writing call on an old FILE from inside the caller's transaction.
txn() {
	local name=$1 f=$2 out
	cp "$f" "$f.txn"
	out=$(new "$f.txn" "CREATE TABLE IF NOT EXISTS app (x)" "BEGIN IMMEDIATE" "INSERT INTO app VALUES (1)" \
		"SELECT anarchon_claim('txn', $S2, 'ta')")
	has "txn $name: inside the caller's write transaction the first claim is refused" "$out" \
		"cannot run while this connection holds a write transaction"
	is "txn $name: ... and nothing is migrated" \
		"$(sqlite3 "$f.txn" "SELECT count(*) FROM sqlite_schema WHERE name = 'anarchon_meta'")" 0
	is "txn $name: heartbeat inside the caller's write transaction works on the old tables as they are" \
		"$(new "$f.txn" "SELECT anarchon_config('lease_ms', 600000)" "BEGIN IMMEDIATE" \
			"SELECT anarchon_heartbeat('run', $S, 'trun')" "COMMIT" \
			"SELECT count(*) FROM sqlite_schema WHERE name = 'anarchon_meta'")" "$(printf '600000\n1\n0')"
	is "txn $name: in the caller's BEGIN before it wrote, the claim migrates and wins; the caller's ROLLBACK keeps both" \
		"$(new "$f.txn" "BEGIN" "SELECT anarchon_claim('txn', $S2, 'ta')" "ROLLBACK" \
			"SELECT value FROM anarchon_meta WHERE key = 'migrations'" "SELECT anarchon_check('txn', $S2)")" \
		"$(printf 'won\n1\nrunning')"
}

# race NAME FILE MODE: 8 processes open the old FILE (in journal MODE) at
# once; one migration, one winner.
race() {
	local label="$1 ($3)" name=$1-$3 f=$2.$3 i pids=() fds=() fd errors=0 winners
	cp "$2" "$f"
	sqlite3 "$f" "PRAGMA journal_mode = $3" > /dev/null
	for i in 1 2 3 4 5 6 7 8; do
		mkfifo "$tmp/go-$name-$i"
		sqlite3 -bail "$f" < "$tmp/go-$name-$i" > "$tmp/race-$name-$i.out" 2>&1 &
		pids+=($!)
	done
	# Each shell blocks opening its fifo until it is opened here; the SQL is
	# then written to all eight before any is closed.
	for i in 1 2 3 4 5 6 7 8; do
		exec {fd}> "$tmp/go-$name-$i"
		fds+=("$fd")
	done
	for i in 1 2 3 4 5 6 7 8; do
		printf '%s\n' ".load $new_so" ".timeout 30000" "SELECT 'race', anarchon_claim('race', $S2, 'tok$i');" \
			"SELECT 'own', anarchon_claim('own$i', $S2, 'tok$i');" >&"${fds[$((i - 1))]}"
	done
	for fd in "${fds[@]}"; do exec {fd}>&-; done
	for i in "${!pids[@]}"; do wait "${pids[$i]}" || errors=$((errors + 1)); done
	winners=$(cat "$tmp"/race-"$name"-*.out | grep -c '^race|won$')
	is "race $label: 8 processes opening the old file at once all succeed" \
		"$errors $(cat "$tmp"/race-"$name"-*.out | grep -vc '^\(race|\(won\|running\)\|own|won\)$')" "0 0"
	is "race $label: one winner of the shared slot" "$winners" 1
	is "race $label: each process wins its own new slot" "$(cat "$tmp"/race-"$name"-*.out | grep -c '^own|won$')" 8
	is "race $label: one migration among them" \
		"$(sqlite3 "$f" "SELECT value FROM anarchon_meta WHERE key = 'migrations'" \
			"SELECT count(*) FROM anarchon_meta WHERE key LIKE 'migration %'")" "$(printf '1\n1')"
	is "race $label: the schema is a fresh file's" "$(schema "$f")" "$(schema "$fresh")"
}

upgrade 0.1.0 3 1
race 0.1.0 "$tmp/0.1.0.db.race" wal
upgrade 5409b4b 1 0

# A file of a newer format: refused, with both formats and versions, and untouched.
future=$tmp/future.db
cp "$fresh" "$future"
sqlite3 "$future" "UPDATE anarchon_meta SET value = 5 WHERE key = 'format'" \
	"UPDATE anarchon_meta SET value = '0.3.0' WHERE key = 'format_since'" \
	"UPDATE anarchon_meta SET value = '0.3.1' WHERE key = 'written_by'"
sum=$(cksum < "$future")
out=$(new "$future" "SELECT anarchon_claim('fresh', $S2, 'tz')")
has "a newer format is refused: the file's format" "$out" "in format 5"
has "a newer format is refused: this library's format and version" "$out" "newer than format 4 of this library (anarchon $version)"
out=$(new "$future" "SELECT anarchon_check('fresh', $S)")
has "a newer format is refused by a read too" "$out" "in format 5"
out=$(new "$future" "SELECT anarchon_claim('fresh', $S2, 'tz')")
has "a newer format is refused: what to do" "$out" "anarchon 0.3.0 or later"
has "a newer format is refused inside the caller's write transaction too" \
	"$(cp "$future" "$future.txn" && new "$future.txn" "CREATE TABLE app (x)" "BEGIN IMMEDIATE" \
		"INSERT INTO app VALUES (1)" "SELECT anarchon_heartbeat('fresh', $S, 'tfresh')")" "in format 5"
cli/anarchon claim --store "sqlite://$future" --job fresh --slot "$S2" --token tz > "$tmp/cli-future.out" 2>&1
rc=$?
has "the command refuses a newer format with exit 78 ($rc), saying what to use" \
	"$rc $(cat "$tmp/cli-future.out")" "78 anarchon: this database's anarchon tables are in format 5"
is "a newer format's file is not written" "$(cksum < "$future")" "$sum"

# An unreadable format row, a missing one, an anarchon_runs no build made.
garbled=$tmp/garbled.db
cp "$fresh" "$garbled"
sqlite3 "$garbled" "UPDATE anarchon_meta SET value = 'four' WHERE key = 'format'"
has "a format row that is not a number is refused, never guessed" \
	"$(new "$garbled" "SELECT anarchon_claim('fresh', $S2, 'tz')")" "anarchon_meta holds no format this library can read"
sqlite3 "$garbled" "DELETE FROM anarchon_meta WHERE key = 'format'"
has "a missing format row is refused" "$(new "$garbled" "SELECT anarchon_check('fresh', $S)")" "format row is missing"
odd=$tmp/odd.db
sqlite3 "$odd" "CREATE TABLE anarchon_runs (job TEXT, slot INTEGER, extra BLOB, PRIMARY KEY (job, slot)) WITHOUT ROWID"
has "an anarchon_runs no build made is refused" \
	"$(new "$odd" "SELECT anarchon_claim('fresh', $S2, 'tz')")" "anarchon_runs has a definition no anarchon release made"
is "... and left as it was" "$(sqlite3 "$odd" "SELECT count(*) FROM sqlite_schema")" 1

suite_end
