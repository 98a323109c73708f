# old_build.sh — build an older release from its sources kept in
# test/upgrade/releases/ (sourced after lib.sh).
#
#   old_build NAME DIR TARGET...
#       unpack anarchon-NAME.tar.xz (a `git archive --prefix=anarchon-NAME/`)
#       under DIR and make TARGET... there; OLD_TREE is then DIR/anarchon-NAME.
#       A tarball that is missing, does not unpack or does not build is a
#       not ok (with the end of its log) and 1: a suite never skips an old build.
#
# The sources are unpacked with python3's tarfile, not the xz program (CI's
# images may lack it), and git is never asked (a checkout may have no history).

OLD_RELEASES=$TEST_ROOT/upgrade/releases

old_build() {
	local name=$1 dir=$2 tarball=$OLD_RELEASES/anarchon-$1.tar.xz
	shift 2
	OLD_TREE=$dir/anarchon-$name
	if [ ! -f "$tarball" ]; then
		not_ok "old build $name: its sources" "$tarball is missing"
		return 1
	fi
	if ! python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$tarball" "$dir" \
		> "$dir/unpack-$name.log" 2>&1 || [ ! -d "$OLD_TREE" ]; then
		not_ok "old build $name: unpack its sources" "$(tail -n 20 "$dir/unpack-$name.log")"
		return 1
	fi
	# Warnings stay warnings: an old release meets compilers newer than it knew.
	if ! make -s -j2 -C "$OLD_TREE" "$@" WERROR="-Wall -Wextra" \
		TZ_SYSTEM_FLAGS="-Wall -Wextra -O2 -g -fPIC -Ibuild -Icore" > "$dir/build-$name.log" 2>&1; then
		not_ok "old build $name: make $* of its sources" "$(tail -n 30 "$dir/build-$name.log")"
		return 1
	fi
	step "built $* of $name"
}
