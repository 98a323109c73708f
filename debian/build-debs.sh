#!/usr/bin/env bash
# build-debs.sh — `make deb`: the Debian packages of this tree, built in a
# copy under build/deb/ so that nothing is written beside the clone, and
# copied to build/deb/*.deb.
#
# debian/control is made from debian/control.in for the PostgreSQL versions
# installed here (pg_buildext updatecontrol), one postgresql-NN-anarchon each,
# plus libsqlite3-mod-anarchon and anarchon-cli.  What a build in the clone
# left behind (build/, objects, sqlite/anarchon.so, cli/anarchon) is not
# copied: the package build makes its own, so `make cli` or `make sqlite`
# before `make deb` changes nothing in the packages.
set -euo pipefail
cd "$(dirname "$0")/.."

# The libraries and PostgreSQL's server headers, then the packaging tools.
bash test/deps.sh all
tools="build-essential debhelper dpkg-dev fakeroot postgresql-server-dev-all"
missing=$(for p in $tools; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" = installed ] || echo "$p"
done)
if [ -n "$missing" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "missing packages: $missing (run as root: apt-get install $missing)" >&2; exit 1; }
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing > /dev/null
fi

version=$(dpkg-parsechangelog -l debian/changelog -S Version)
out=build/deb
work="$out/work"
rm -rf "$work" "$out"/*.deb
mkdir -p "$work/anarchon-$version"
tar --exclude=./.git --exclude=./build --exclude=./test/bin --exclude='*.o' --exclude='*.so' \
	--exclude='./pg/anarchon--*.sql' --exclude=./cli/anarchon -cf - . | tar -xf - -C "$work/anarchon-$version"

cd "$work/anarchon-$version"
pg_buildext updatecontrol
DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" dpkg-buildpackage -us -uc -b
cd - > /dev/null
mv "$work"/*.deb "$out"/
rm -rf "$work"
ls -1 "$out"/*.deb
