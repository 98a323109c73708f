#!/usr/bin/env bash
# platforms.sh — `make test-platforms`: every suite again, on other Debian
# releases than the host's, each in a chroot.
#
#   bash test/platforms.sh [--bootstrap] [trixie] [sid]      (default: both)
#
# --bootstrap builds the chroots that are not cached yet and stops there, to
# make a machine ready ahead of a run (about 90 s for both on a fresh one).
#
# The host runs `make test` against its own PostgreSQL, SQLite, client
# libraries and servers; newer releases ship other major versions of all of
# them (PostgreSQL 17 and 18, RabbitMQ 4, Redis 8, Valkey 9, ...), and this is
# where the project meets them.  For each release:
#
#   1. a `debootstrap --variant=minbase` chroot with the packages of
#      `test/deps.sh all`, cached outside the clone in
#      $ANARCHON_CHROOT_DIR/<release> (default /var/cache/anarchon/chroots)
#      and reused while its ready-marker is there.  It is built in a sibling
#      folder and renamed only once complete, so an interrupted bootstrap is
#      never reused;
#   2. the work tree's tracked files (with their uncommitted changes, without
#      build products) copied fresh to /root/anarchon inside it;
#   3. `make test` run there with a clean environment, its output streamed
#      with the release's name in front of each line (on trixie also
#      test/deb-install.sh: the Debian packages installed and used from
#      their installed paths).
#
# Each release ends with "# platform NAME: N passed, N failed", the whole with
# "N passed, N failed"; the exit status is non-zero when a check failed or a
# release could not be set up.  Run as root (debootstrap, mount, chroot).
#
# The mirror is the host's own (the first Debian entry of its apt sources),
# or $ANARCHON_MIRROR.  Whatever is mounted into a chroot is unmounted on exit,
# and whatever this run started inside it is killed, also on failure or ^C.
#
# ANARCHON_PLATFORMS_JOBS=2 runs the releases side by side (their lines are
# told apart by the prefix): most of a suite's time is spent waiting on
# servers and clocks, so two at once take much less than twice one.
#
# The whole script is one function called on its last line: bash reads a
# script as it runs it, and this one runs long enough for the file to be
# edited meanwhile.
main() {
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

CHROOT_DIR=${ANARCHON_CHROOT_DIR:-/var/cache/anarchon/chroots}
MARKER=.anarchon-ready
INNER_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Processes this run starts inside a chroot carry this in their environment,
# so that cleanup kills them and nothing else that may be using the chroot.
RUN_TAG=ANARCHON_PLATFORM_RUN=$$.$(date +%s%N)

bootstrap_only=0
platforms=()
for p in "$@"; do
	case $p in
		--bootstrap) bootstrap_only=1 ;;
		trixie|sid) platforms+=("$p") ;;
		*) echo "usage: platforms.sh [--bootstrap] [trixie] [sid]" >&2; exit 2 ;;
	esac
done
[ ${#platforms[@]} -gt 0 ] || platforms=(trixie sid)

if [ "$(id -u)" -ne 0 ]; then
	echo "platforms.sh needs root (debootstrap, mount, chroot)" >&2
	exit 1
fi
bash test/deps.sh platforms || exit 1

# ------------------------------------------------------------ mirror

# The first entry of the host's apt sources for the host's own release (so not
# its -security or -updates suite, nor a third-party repository).
host_mirror() {
	local codename f
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	if [ -f /etc/apt/sources.list ]; then
		awk -v c="$codename" '$1 == "deb" {
			i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
			if ($(i + 1) == c) { print $i; exit } }' /etc/apt/sources.list | grep . && return 0
	fi
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v c="$codename" '
			function flush() { if (deb && uri != "" && (" " suites " ") ~ (" " c " ")) { print uri; found = 1; exit } }
			/^[ \t]*$/ { flush(); deb = 0; uri = ""; suites = ""; next }
			/^Types:/ { deb = ($0 ~ /[ \t]deb([ \t]|$)/) }
			/^URIs:/ { uri = $2 }
			/^Suites:/ { sub(/^Suites:[ \t]*/, ""); suites = $0 }
			END { if (!found) flush() }' "$f" | grep . && return 0
	done
	return 1
}

MIRROR=${ANARCHON_MIRROR:-$(host_mirror | head -n 1)}
if [ -z "$MIRROR" ]; then
	echo "no Debian mirror in the host's apt sources; set ANARCHON_MIRROR" >&2
	exit 1
fi

# ------------------------------------------------------------ mounts and processes

MOUNTED=()	# mount points this run mounted, in order
ROOTS=()	# chroots this run has used, for the cleanup of their processes

do_mount() {	# do_mount TARGET MOUNT-ARGS...
	local target=$1
	shift
	mount "$@" "$target" || return 1
	MOUNTED+=("$target")
}

# enter_root ROOT: mount what package scripts and the suites need, and put
# the files the chroot needs from the host (DNS, no service start-up) in place.
enter_root() {
	local r=$1
	ROOTS+=("$r")
	mkdir -p "$r/proc" "$r/dev/pts" "$r/dev/shm" "$r/sys" "$r/usr/sbin" "$r/etc"
	do_mount "$r/proc" -t proc proc || return 1
	do_mount "$r/dev/pts" --bind /dev/pts || return 1
	# A fresh tmpfs rather than the host's: POSIX shared memory (Python
	# multiprocessing, PostgreSQL, Erlang) stays private to the chroot.
	do_mount "$r/dev/shm" -t tmpfs -o mode=1777,nosuid,nodev shm || return 1
	do_mount "$r/sys" -t sysfs -o ro sysfs 2>/dev/null || true
	# The suites' servers and files live under /tmp (t_tmpdir).  A tmpfs there
	# keeps the two lanes of CI (the host and a release) from waiting on each
	# other's fsyncs: with both on one disk, a SQLite commit was seen to take
	# seconds, longer than the short leases of the takeover tests.  The
	# crashes the suites make are of processes, which a tmpfs survives.
	do_mount "$r/tmp" -t tmpfs -o mode=1777,nosuid,nodev,size=8g anarchon-tmp || return 1
	cp /etc/resolv.conf "$r/etc/resolv.conf"
	[ -s "$r/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' > "$r/etc/hosts"
	printf '#!/bin/sh\n# Package scripts must not start services: the suites start their own.\nexit 101\n' > "$r/usr/sbin/policy-rc.d"
	chmod 755 "$r/usr/sbin/policy-rc.d"
	# Mirrors of testing and unstable have been seen serving Release files past
	# their Valid-Until date.
	mkdir -p "$r/etc/apt/apt.conf.d"
	echo 'Acquire::Check-Valid-Until "false";' > "$r/etc/apt/apt.conf.d/99anarchon-valid-until"
}

# split_suites RELEASE: the suites the matrix runs on RELEASE and not on the
# other one.  trixie takes the RabbitMQ-heavy and schedule suites, sid the
# Redis (Valkey 9) and TLS ones; each lane then takes about the host's time.
split_suites() {
	case $1 in
		trixie) echo "${ANARCHON_MATRIX_TRIXIE_SUITES-fault amqp schedule hostile catchup mixed}" ;;
		sid) echo "${ANARCHON_MATRIX_SID_SUITES-redis tls cli crond runnow pause nats fork replace conformance}" ;;
	esac
}

# in_root ROOT CMD...: run CMD in the chroot with a clean environment (but
# ANARCHON_SUITES, test/run's choice of suites, when it is set,
# ANARCHON_HOST_ONLY_SUITES, the suites the matrix leaves to the host, and
# the ANARCHON_MATRIX_* choices of the cells and rounds it runs, below).
in_root() {
	local r=$1 pass=()
	shift
	[ -n "${ANARCHON_SUITES:-}" ] && pass=("ANARCHON_SUITES=$ANARCHON_SUITES")
	# Suites whose findings do not depend on the release (doc/building.md).
	pass+=("ANARCHON_HOST_ONLY_SUITES=${ANARCHON_HOST_ONLY_SUITES-fuzz rolling}")
	# Ports of its own, apart from the host's run beside it (test/lib.sh, free_port).
	case ${release:-} in
		trixie) pass+=("ANARCHON_PORT_LANE=1/3") ;;
		sid) pass+=("ANARCHON_PORT_LANE=2/3") ;;
	esac
	# When both releases run, the suites whose findings depend least on the
	# release are split between them: each runs on the host and on one of
	# the two (doc/building.md, "Which suites run where").
	if [ -n "${release:-}" ] && [ ${#platforms[@]} -gt 1 ]; then
		local other=trixie
		[ "$release" = trixie ] && other=sid
		pass+=("ANARCHON_ELSEWHERE=Debian ${other}" "ANARCHON_ELSEWHERE_SUITES=$(split_suites "$other")")
	fi
	# The fault suite's cells that depend on the release's servers: each
	# network server SIGKILLed under claims from C (over TLS too), SQLite and
	# PostgreSQL (PostgreSQL's own too), and the failovers of its clusters
	# through PostgreSQL and of a synchronous standby.  The cells that attack
	# anarchon's own resends, timeouts and takeovers (the proxy's cuts,
	# prefork, a frozen server, terminated backends, frozen job runners, a
	# TLS record cut short) and the measured asynchronous standby run on the
	# host only (doc/building.md, "Which suites run where").
	pass+=("ANARCHON_FAULTS=${ANARCHON_MATRIX_FAULTS-sigkill}")
	pass+=("ANARCHON_FAULT_TLS_FAULTS=${ANARCHON_MATRIX_TLS_FAULTS-sigkill}")
	pass+=("ANARCHON_FAULT_PG_FAULTS=${ANARCHON_MATRIX_PG_FAULTS-sigkill}")
	pass+=("ANARCHON_FAULT_SQLITE_FAULTS=${ANARCHON_MATRIX_SQLITE_FAULTS-sigkill}")
	pass+=("ANARCHON_FAULT_PG_PAIRS=${ANARCHON_MATRIX_PG_PAIRS-pg-sync}")
	# Each server is killed under the C hosts' claims (over TLS too); through
	# the databases only PostgreSQL's own death and the clusters' failovers:
	# the same server killed under a database host runs the same client code,
	# which the release does not change.
	pass+=("ANARCHON_FAULT_PG_STORES=${ANARCHON_MATRIX_PG_STORES-local}")
	pass+=("ANARCHON_FAULT_SQLITE_STORES=${ANARCHON_MATRIX_SQLITE_STORES-}")
	# A cluster's failover is the servers' own: through one host per release.
	local h=${ANARCHON_MATRIX_CLUSTER_HOSTS-pg}
	pass+=("ANARCHON_FAULT_NATS_CLUSTER=$h" "ANARCHON_FAULT_REDIS_CLUSTER=$h" "ANARCHON_FAULT_RMQ_CLUSTER=$h")
	# Rounds that bound a rate are the host's; a release checks the
	# mechanism with fewer: RabbitMQ killed right after confirmed wins (the
	# host's 14 rounds bound the loss rate), pg_cron's minute slots, the
	# command's one-second slots (the host's 60 per store).
	pass+=("AMQP_KILL_ROUNDS=${ANARCHON_MATRIX_AMQP_KILL_ROUNDS-4}" "PGCRON_ROUNDS=${ANARCHON_MATRIX_PGCRON_ROUNDS-2}")
	pass+=("CLI_SLOTS=${ANARCHON_MATRIX_CLI_SLOTS-30}")
	# PostgreSQL stopped at once after each decision: 20 rounds on the host
	# (what was lost before, 4 runs in 10, makes 20 a strong test); each
	# release's PostgreSQL shows with 5 that its commit is flushed.  A rolling
	# upgrade's 0.1.0 and 0.2.0 hosts: 30 slots per store on the host, 10 per
	# release, which build 0.1.0 against the release's libraries and claim
	# beside it on its servers.
	pass+=("DURABLE_ROUNDS=${ANARCHON_MATRIX_DURABLE_ROUNDS-5}" "MIXED_SLOTS=${ANARCHON_MATRIX_MIXED_SLOTS-10}")
	# The command under busybox crond waits for two minute boundaries and
	# shows the crontab line, not the release: host only.
	pass+=("CLI_BLOCKS=${ANARCHON_MATRIX_CLI_BLOCKS-contention takeover exits badinput valgrind}")
	chroot "$r" /usr/bin/env -i PATH="$INNER_PATH" HOME=/root LANG=C.UTF-8 "$RUN_TAG" "${pass[@]}" "$@"
}

# root_pids ROOT: the processes whose root folder is ROOT or inside it.
# One find and one awk for all of them: a fork per process would make a scan
# take seconds where forks are slow.
root_pids() {
	find /proc -mindepth 2 -maxdepth 2 -path '/proc/[0-9]*/root' -printf '%h\t%l\n' 2>/dev/null |
		awk -F '\t' -v r="$1" '$2 == r || index($2, r "/") == 1 { sub("^/proc/", "", $1); print $1 }'
}

# run_pids ROOT: those of them that this run started.
run_pids() {
	local pids files=() f
	pids=$(root_pids "$1")
	for f in $pids; do files+=("/proc/$f/environ"); done
	[ ${#files[@]} -gt 0 ] || return 0
	grep -lzxF -e "$RUN_TAG" "${files[@]}" 2>/dev/null | while IFS=/ read -r _ _ pid _; do echo "$pid"; done
}

kill_inside() {
	local r=$1 pids i
	pids=$(run_pids "$r")
	[ -n "$pids" ] || return 0
	echo "# stopping what is left inside $r: $(echo $pids)" >&2
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null
	for i in $(seq 1 50); do
		pids=$(run_pids "$r")
		[ -n "$pids" ] || return 0
		sleep 0.1
	done
	# shellcheck disable=SC2086
	kill -KILL $pids 2>/dev/null
	# The killed processes are gone (SIGKILL is not refused) before their folder is removed.
	sleep 0.2
}

leave_roots() {
	local r i
	for r in "${ROOTS[@]}"; do kill_inside "$r"; done
	for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
		umount "${MOUNTED[i]}" 2>/dev/null || umount -l "${MOUNTED[i]}" 2>/dev/null ||
			echo "# could not unmount ${MOUNTED[i]}" >&2
	done
	MOUNTED=()
	ROOTS=()
}

# umount_under DIR: whatever is still mounted below DIR (a bootstrap that was
# killed outright), before DIR is removed.
umount_under() {
	local m
	awk -v d="$1/" 'index($2 "/", d) == 1 { print $2 }' /proc/self/mounts | sort -r |
		while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
}

BOOT_PIDS=()
BOOT_DIRS=()
RUN_PIDS=()
cleanup() {
	local pid d
	# Each background job cleans up after itself on TERM (its EXIT trap).
	for pid in "${BOOT_PIDS[@]}" "${RUN_PIDS[@]}"; do
		kill -TERM -- "-$pid" 2>/dev/null
	done
	for pid in "${BOOT_PIDS[@]}" "${RUN_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	# An interrupted bootstrap leaves its staging folder (removed by the next
	# one), but nothing running in it and nothing mounted on it.
	for d in "${BOOT_DIRS[@]}"; do
		[ ${#BOOT_PIDS[@]} -gt 0 ] || break
		ROOTS+=("$d")
		kill_inside "$d"
		umount_under "$d"
	done
	leave_roots
	rm -rf "${LOG_DIR:-}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

LOG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/anarchon-platforms.XXXXXX")

# ------------------------------------------------------------ chroots

# bootstrap SUITE: build the chroot in a sibling folder, install the packages
# with the release's own deps.sh, then mark and rename it.  Runs in its own
# process group (set -m): the main cleanup stops all of it at once.
bootstrap() {
	local suite=$1 new=$CHROOT_DIR/.$1.new final=$CHROOT_DIR/$1
	trap leave_roots EXIT
	trap 'exit 130' INT TERM HUP
	# Two runs must not build (or use) the same chroot at once.
	exec 9> "$CHROOT_DIR/.$suite.lock"
	flock 9
	[ -f "$final/$MARKER" ] && return 0
	umount_under "$new"
	rm -rf --one-file-system "$new"
	if ! debootstrap --variant=minbase "$suite" "$new" "$MIRROR" > "$LOG_DIR/$suite.bootstrap" 2>&1; then
		echo "# $suite: debootstrap failed:" >&2
		tail -n 20 "$LOG_DIR/$suite.bootstrap" | sed "s/^/[$suite] /" >&2
		return 1
	fi
	enter_root "$new" || return 1
	cp test/deps.sh "$new/root/deps.sh"
	if ! in_root "$new" bash /root/deps.sh all > "$LOG_DIR/$suite.packages" 2>&1; then
		echo "# $suite: installing the packages failed:" >&2
		tail -n 20 "$LOG_DIR/$suite.packages" | sed "s/^/[$suite] /" >&2
		return 1
	fi
	in_root "$new" apt-get clean
	leave_roots
	date -u +%FT%TZ > "$new/$MARKER"
	umount_under "$final"
	rm -rf --one-file-system "$final"
	mv "$new" "$final"
}

mkdir -p "$CHROOT_DIR"
declare -A BOOT_OK
to_build=()
for p in "${platforms[@]}"; do
	if [ -f "$CHROOT_DIR/$p/$MARKER" ]; then BOOT_OK[$p]=1; else to_build+=("$p"); fi
done
if [ ${#to_build[@]} -gt 0 ]; then
	# Bootstraps wait on the mirror more than on the CPU: run them side by side.
	echo "# bootstrapping ${to_build[*]} from $MIRROR into $CHROOT_DIR"
	t0=$(date +%s)
	set -m
	for p in "${to_build[@]}"; do
		BOOT_DIRS+=("$CHROOT_DIR/.$p.new")
		bootstrap "$p" &
		BOOT_PIDS+=($!)
	done
	set +m
	for i in "${!to_build[@]}"; do
		if wait "${BOOT_PIDS[i]}"; then BOOT_OK[${to_build[i]}]=1; else BOOT_OK[${to_build[i]}]=0; fi
	done
	BOOT_PIDS=()
	echo "# bootstrap took $(( $(date +%s) - t0 ))s"
fi
if [ "$bootstrap_only" = 1 ]; then
	for p in "${platforms[@]}"; do
		[ "${BOOT_OK[$p]:-0}" = 1 ] || { echo "# $p: the chroot could not be set up"; exit 1; }
	done
	echo "# chroots ready: ${platforms[*]}"
	exit 0
fi

# ------------------------------------------------------------ the suites

# copy_tree ROOT: the work tree's tracked files, as they are now, to
# ROOT/root/anarchon (removed first: nothing of an earlier run survives).
# ANARCHON_PLATFORMS_UNTRACKED=1 adds the files git does not track yet but
# does not ignore either (new sources not yet added); build products are
# ignored, so they stay out either way.
# ANARCHON_PLATFORMS_REF=COMMIT copies that commit's tree instead of the
# work tree.
copy_tree() {
	local dest=$1/root/anarchon others=()
	[ "${ANARCHON_PLATFORMS_UNTRACKED:-0}" = 1 ] && others=(--others --exclude-standard)
	rm -rf --one-file-system "$dest"
	mkdir -p "$dest"
	if [ -n "${ANARCHON_PLATFORMS_REF:-}" ]; then
		git -C "$REPO" archive --format=tar "$ANARCHON_PLATFORMS_REF" | tar -C "$dest" -xf -
		return
	fi
	git -C "$REPO" ls-files -z --cached "${others[@]}" |
		while IFS= read -r -d '' f; do
			[ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"
		done |
		tar -C "$REPO" --null -T - -cf - | tar -C "$dest" -xf -
}

# run_platform P: make test (and on one release the packages) in P's chroot;
# ends with P's count line and writes "PASSED FAILED" to $LOG_DIR/P.count.
# Runs in its own process group, like bootstrap.
run_platform() {
	local p=$1 r=$CHROOT_DIR/$1 t0 last np nf deb_p=0 deb_f=0
	trap leave_roots EXIT
	trap 'exit 130' INT TERM HUP
	echo "1 1" > "$LOG_DIR/$p.count"
	if [ "${BOOT_OK[$p]:-0}" != 1 ]; then
		echo "not ok - platform $p: the chroot could not be set up"
		echo "# platform $p: 0 passed, 1 failed"
		echo "0 1" > "$LOG_DIR/$p.count"
		return
	fi
	# Two runs must not share a chroot: each would stop the other's servers.
	exec 9> "$CHROOT_DIR/.$p.lock"
	if ! flock -w 3600 9; then
		echo "not ok - platform $p: chroot busy"
		echo "# platform $p: 0 passed, 1 failed"
		echo "0 1" > "$LOG_DIR/$p.count"
		return
	fi
	echo "# platform $p: Debian $(cat "$r/etc/debian_version"), chroot $r, tree ${ANARCHON_PLATFORMS_REF:-of the work tree}"
	t0=$(date +%s)
	if ! copy_tree "$r" || ! enter_root "$r"; then
		echo "not ok - platform $p: copying the work tree or mounting failed"
		echo "# platform $p: 0 passed, 1 failed"
		echo "0 1" > "$LOG_DIR/$p.count"
		return
	fi
	# In the background and waited for, so that a TERM is handled at once
	# (the EXIT trap stops the run inside the chroot).
	release=$p in_root "$r" bash -c 'cd /root/anarchon && make test' 2>&1 | tee "$LOG_DIR/$p.out" | sed -u "s/^/[$p] /" &
	wait $!
	# The Debian packages, built, installed and used from their installed
	# paths (test/deb-install.sh changes the system's packages, so only here,
	# and on one release: the packaging is the same on each).
	if [ "$p" = "${ANARCHON_DEB_PLATFORM:-trixie}" ]; then
		in_root "$r" bash -c 'cd /root/anarchon && bash test/deb-install.sh' 2>&1 | tee "$LOG_DIR/$p.deb.out" | sed -u "s/^/[$p] /" &
		wait $!
		deb_p=$(grep -c '^ok - ' "$LOG_DIR/$p.deb.out")
		deb_f=$(grep -c '^not ok - ' "$LOG_DIR/$p.deb.out")
		[ "$deb_p" -gt 0 ] || deb_f=$((deb_f + 1))
	fi
	leave_roots
	exec 9>&-
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$LOG_DIR/$p.out" | tail -n 1)
	if [ -n "$last" ]; then
		np=${last%% passed*}
		nf=${last#*, }
		nf=${nf%% failed*}
	else
		echo "not ok - platform $p: make test ended without its count"
		np=0 nf=1
	fi
	np=$((np + deb_p))
	nf=$((nf + deb_f))
	echo "# platform $p: $np passed, $nf failed in $(( $(date +%s) - t0 ))s"
	echo "$np $nf" > "$LOG_DIR/$p.count"
}

jobs=${ANARCHON_PLATFORMS_JOBS:-1}
t0=$(date +%s)
for p in "${platforms[@]}"; do
	set -m
	run_platform "$p" &
	RUN_PIDS+=($!)
	set +m
	[ "$jobs" -gt 1 ] || wait $!
done
for pid in "${RUN_PIDS[@]}"; do wait "$pid"; done
RUN_PIDS=()

total_p=0
total_f=0
for p in "${platforms[@]}"; do
	read -r np nf < "$LOG_DIR/$p.count"
	total_p=$((total_p + np))
	total_f=$((total_f + nf))
done
echo "# platforms ${platforms[*]} in $(( $(date +%s) - t0 ))s"
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
}

main "$@"
exit
