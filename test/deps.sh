#!/usr/bin/env bash
# deps.sh — install the Debian packages a target needs, when they are missing.
#
#   deps.sh sqlite   what `make sqlite` and `make demo` need
#   deps.sh all      everything `make test` and `make bench` need
#   deps.sh platforms   what `make test-platforms` needs on the host (debootstrap)
#
# As root it runs apt-get; otherwise it prints the command to run and fails.
# Services that packages would start on their default ports are kept from
# starting (a temporary policy-rc.d): the tests start their own servers.
#
# The same script runs on every Debian release the project is tested on (the
# host, and the chroots of test/platforms.sh), so versioned package names are
# worked out here rather than written down:
#   - PostgreSQL: the major version of a postgresql-server-dev-NN already
#     installed, else the one the `postgresql` metapackage depends on, else a
#     guess from /etc/os-release.  ANARCHON_PG_MAJOR=NN overrides.
#   - the fuzz suite's compiler: clang and libclang-rt-dev, the release's
#     default LLVM (libclang-rt-14-dev on bookworm holds libFuzzer's
#     libclang_rt.fuzzer; libfuzzer-NN-dev is the stand-alone copy, not needed).
#   - busybox-static, whose crond the cli suite runs, is not installed (it
#     conflicts with the busybox the initramfs uses): test/cli/cron.sh fetches
#     it with `apt-get download` and unpacks it into a cache of its own.
#   - the Redis-protocol server: redis-server, except on Debian unstable where
#     Valkey is the server the project is tested against.
#     ANARCHON_REDIS_PKG=redis-server|valkey-server overrides.
#   - promtool (the metrics suite): part of the `prometheus` package on Debian
#     12, a package of its own from Debian 13 on.  ANARCHON_PROMTOOL_PKG
#     overrides.
set -euo pipefail

case "${1:-all}" in
	sqlite|all|platforms) target=${1:-all} ;;
	*) echo "usage: deps.sh sqlite|all|platforms" >&2; exit 2 ;;
esac

is_root() { [ "$(id -u)" -eq 0 ]; }
installed() { [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)" = installed ]; }

# Package lists are read from the cache; a fresh system may not have one yet.
apt_updated=0
apt_update() {
	[ $apt_updated -eq 1 ] && return 0
	is_root || return 1
	# Mirrors of testing/unstable have been seen serving Release files whose
	# Valid-Until had passed; the packages are still the right ones.
	apt-get -o Acquire::Check-Valid-Until=false update -qq > /dev/null
	apt_updated=1
}

os_field() { ( . /etc/os-release 2>/dev/null && eval "printf '%s' \"\${$1:-}\"" ) || true; }

# Debian unstable calls itself "<next>/sid" in PRETTY_NAME and debian_version.
is_unstable() {
	case "$(os_field PRETTY_NAME) $(cat /etc/debian_version 2>/dev/null)" in
		*sid*) return 0 ;;
		*) return 1 ;;
	esac
}

pg_major_installed() {
	dpkg-query -W -f='${Package} ${db:Status-Status}\n' 'postgresql-server-dev-[0-9]*' 2>/dev/null |
		awk '$2 == "installed" { sub("postgresql-server-dev-", "", $1); print $1 }' | sort -n | tail -n 1
}

pg_major_candidate() {
	apt-cache depends postgresql 2>/dev/null |
		sed -n 's/^ *Depends: postgresql-\([0-9][0-9]*\)$/\1/p' | sort -n | tail -n 1
}

pg_major_guess() {
	case "$(os_field VERSION_CODENAME)" in
		bookworm) echo 15 ;;
		trixie) echo 17 ;;
		*) echo 18 ;;
	esac
}

pg_major() {
	local v=${ANARCHON_PG_MAJOR:-}
	[ -n "$v" ] || v=$(pg_major_installed)
	[ -n "$v" ] || v=$(pg_major_candidate)
	if [ -z "$v" ] && apt_update; then v=$(pg_major_candidate); fi
	[ -n "$v" ] || v=$(pg_major_guess)
	echo "$v"
}

redis_pkg() {
	if [ -n "${ANARCHON_REDIS_PKG:-}" ]; then echo "$ANARCHON_REDIS_PKG"
	elif is_unstable; then echo valkey-server
	else echo redis-server
	fi
}

promtool_pkg() {
	if [ -n "${ANARCHON_PROMTOOL_PKG:-}" ]; then echo "$ANARCHON_PROMTOOL_PKG"
	elif [ "$(os_field VERSION_CODENAME)" = bookworm ]; then echo prometheus
	else echo promtool
	fi
}

sqlite_pkgs="gcc g++ make pkg-config libsqlite3-dev sqlite3 libcctz-dev tzdata"
case $target in
	sqlite) want=$sqlite_pkgs ;;
	all)
		pg=$(pg_major)
		want="$sqlite_pkgs postgresql-$pg postgresql-server-dev-$pg postgresql-$pg-cron libpq-dev
			libhiredis-dev librabbitmq-dev libnats-dev libssl-dev openssl $(redis_pkg) rabbitmq-server nats-server
			valgrind python3 python3-psycopg2 python3-pika python3-cryptography procps iproute2 faketime tzdata xz-utils strace perl
			prometheus-postgres-exporter prometheus-node-exporter $(promtool_pkg)"
		# perl holds prove, which runs the suites (test/run), and their TAP
		# filter (test/lib.sh).
		# xz-utils unpacks the earlier releases' sources kept for the upgrade
		# suites (test/upgrade/releases/); strace shows the nats suite that a
		# refused URL opened no socket.  A minbase chroot lacks both.
		# The fuzz suite's compiler, unless that suite is left to the host
		# (the platform matrix: doc/building.md).
		[[ " ${ANARCHON_HOST_ONLY_SUITES:-} " == *" fuzz "* ]] || want="$want clang libclang-rt-dev" ;;
	platforms) want="debootstrap" ;;
esac

missing=()
for p in $want; do
	installed "$p" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}"
if ! is_root; then
	echo "missing packages: ${missing[*]}" >&2
	echo "run as root: $cmd" >&2
	exit 1
fi

echo "# installing: ${missing[*]}"
policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' > "$policy"
	chmod +x "$policy"
	made_policy=1
fi
trap '[ $made_policy -eq 1 ] && rm -f "$policy"' EXIT
apt_update
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
