# store_file.sh — the file of a sqlite: store: created 0600 (or the URL's
# mode=), with its -wal and -shm alike, whatever the umask; a bad mode is
# bad usage (64); a symbolic link that someone else put in a directory
# others can write is refused (77, naming the file) and its target left
# alone; a link of the caller's there, or anyone's in a safe directory, is
# followed.  No server.
#
#   cli_store_file

# sf_modes JOB DB [QUERY]: the modes of DB and its -wal/-shm while a run
# holds it open.  A job of its own each time: a second --now of one job in
# the same second is not this host's.
sf_modes() {
	local job=$1 db=$2
	shift 2
	DB=$db cli/anarchon run --store "sqlite://$db$*" --job "$job" --now -- \
		sh -c 'for f in "$DB" "$DB-wal" "$DB-shm"; do [ -e "$f" ] && stat -c %a "$f"; done' 2>&1
}

cli_store_file() {
	local d=$CLI_TMP/store-file out rc
	rm -rf "$d" && mkdir -p "$d"
	out=$( umask 022; sf_modes sf1 "$d/a.db" )
	check "cli store file: created 0600 under umask 022 (got: $out)" test "$out" = 600

	# A WAL file: its -wal and -shm take the database's mode, under umask 077 too.
	( umask 022; sf_modes sf2 "$d/b.db" "?mode=0644" > /dev/null )
	sqlite3 "$d/b.db" "PRAGMA journal_mode = WAL" > /dev/null
	out=$( umask 077; sf_modes sf3 "$d/b.db" "?mode=0644" | tr '\n' ' ' )
	check "cli store file: mode=0644, WAL: the file, -wal and -shm 644 under umask 077 (got: $out)" \
		test "$out" = "644 644 644 "

	local m
	for m in 0400 0700x 9 01777 12345 ""; do
		out=$(cli/anarchon run --store "sqlite://$d/bad.db?mode=$m" --job sf --now -- true 2>&1)
		rc=$?
		if [ "$rc" -eq 64 ] && [ ! -e "$d/bad.db" ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then
			ok "cli store file: mode=$m refused, exit 64, no file"
		else
			not_ok "cli store file: mode=$m refused, exit 64, no file" "exit $rc" "$out"
		fi
	done

	if [ "$(id -u)" -ne 0 ]; then
		not_ok "cli store file: links owned by another user" "needs root to make a link owned by another user"
		return
	fi
	# /tmp's kind: world-writable and sticky; and group-writable, owned by someone else.
	mkdir -p "$d/pub" "$d/grp" "$d/safe"
	chmod 1777 "$d/pub"
	chown nobody "$d/grp" && chmod 0775 "$d/grp"
	local dir
	for dir in pub grp; do
		ln -s "$d/victim-$dir.db" "$d/$dir/l.db" && chown -h nobody "$d/$dir/l.db"
		out=$(cli/anarchon run --store "sqlite://$d/$dir/l.db" --job sf --now -- true 2>&1)
		rc=$?
		if [ "$rc" -eq 77 ] && [ ! -e "$d/victim-$dir.db" ] && [[ $out == *"$d/$dir/l.db"* ]]; then
			ok "cli store file: another user's link in a $dir directory refused, exit 77, target untouched"
		else
			not_ok "cli store file: another user's link in a $dir directory refused, exit 77, target untouched" \
				"exit $rc" "$out" "$(ls -l "$d/victim-$dir.db" 2>&1)"
		fi
	done
	# Followed: the caller's own link in /tmp's kind, another user's in a safe directory.
	ln -s "$d/mine.db" "$d/pub/mine.db"
	ln -s "$d/safe-target.db" "$d/safe/l.db" && chown -h nobody "$d/safe/l.db"
	out=$(cli/anarchon run --store "sqlite://$d/pub/mine.db" --job sf --now -- true 2>&1)
	rc=$?
	check "cli store file: the caller's own link in a world-writable directory is followed (exit $rc: $out)" \
		test "$rc" -eq 0 -a "$(stat -c %a "$d/mine.db" 2>&1)" = 600
	out=$(cli/anarchon run --store "sqlite://$d/safe/l.db" --job sf --now -- true 2>&1)
	rc=$?
	check "cli store file: another user's link in a safe directory is followed (exit $rc: $out)" \
		test "$rc" -eq 0 -a "$(stat -c %a "$d/safe-target.db" 2>&1)" = 600
}
