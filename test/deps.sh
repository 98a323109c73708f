#!/usr/bin/env bash
# deps.sh — install the Debian packages a target needs, when they are missing.
#
#   deps.sh sqlite   what `make sqlite` and `make demo` need
#   deps.sh all      everything `make test` and `make bench` need
#
# As root it runs apt-get; otherwise it prints the command to run and fails.
# Services that packages would start on their default ports are kept from
# starting (a temporary policy-rc.d): the tests start their own servers.
set -euo pipefail

sqlite_pkgs="gcc make pkg-config libsqlite3-dev sqlite3"
all_pkgs="$sqlite_pkgs postgresql-15 postgresql-server-dev-15 postgresql-15-cron libpq-dev
	libhiredis-dev librabbitmq-dev libnats-dev redis-server rabbitmq-server nats-server
	valgrind python3 python3-psycopg2 procps iproute2"

case "${1:-all}" in
	sqlite) want=$sqlite_pkgs ;;
	all) want=$all_pkgs ;;
	*) echo "usage: deps.sh sqlite|all" >&2; exit 2 ;;
esac

missing=()
for p in $want; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
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
apt-get update -qq > /dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
