# cron.sh — a real cron daemon: three busybox crond processes stand for three
# hosts, each with its own crontab folder holding the same lines
#
#   * * * * * anarchon run --store sqlite:///TMP/cron.db --job cronjob --schedule '* * * * *'
#                 -- /bin/sh -c 'echo "$ANARCHON_SLOT" >> FILE'
#
# and the same on Redis (strategy=lease), each with --verbose and its stderr
# kept per daemon.  They run until two minute boundaries have passed, plus
# 20 s, and are then stopped by pid.  Each minute slot must have exactly one
# line, the two boundaries' slots must both be there, and every daemon must
# have run both lines at both boundaries (won, or another host's).
#
# Debian's busybox has no crond, busybox-static has; it is not installed (it
# conflicts with the busybox the initramfs uses) but fetched with
# `apt-get download` and unpacked with `dpkg-deb -x` into a cache, once:
# /var/cache/anarchon/busybox as root (the matrix's chroots keep it between
# runs), else build/busybox; ANARCHON_BUSYBOX_DIR chooses another.
# busybox crond reads the crontab named after a user and runs its lines as
# that user, which needs root (initgroups): the block needs root.
#
#   cli_cron REDIS_URL

# busybox_static: the path of a busybox that has crond, fetched when needed.
busybox_static() {
	local cache=${ANARCHON_BUSYBOX_DIR:-} bb log
	if [ -z "$cache" ]; then
		if [ "$(id -u)" -eq 0 ]; then cache=/var/cache/anarchon/busybox; else cache=$REPO_ROOT/build/busybox; fi
	fi
	bb=$cache/root/bin/busybox
	mkdir -p "$cache" || return 1
	(
		flock 9
		"$bb" --list 2> /dev/null | grep -qx crond && exit 0
		log=$cache/fetch.log
		rm -rf "$cache/new" && mkdir "$cache/new" || exit 1
		cd "$cache/new" || exit 1
		if ! apt-get download busybox-static > "$log" 2>&1; then
			# Package lists older than the mirror name a file it no longer has.
			[ "$(id -u)" -eq 0 ] && apt-get update -qq >> "$log" 2>&1 &&
				apt-get download busybox-static >> "$log" 2>&1 || { cat "$log" >&2; exit 1; }
		fi
		dpkg-deb -x busybox-static_*.deb root >> "$log" 2>&1 || { cat "$log" >&2; exit 1; }
		# Debian 13 and later ship it in /usr/bin (merged /usr).
		if [ ! -e root/bin/busybox ] && [ -x root/usr/bin/busybox ]; then
			mkdir -p root/bin && ln -s ../usr/bin/busybox root/bin/busybox
		fi
		root/bin/busybox --list | grep -qx crond || { echo "busybox-static has no crond" >&2; exit 1; }
		rm -rf "$cache/root" && mv root "$cache/root" && cd "$cache" && rm -rf "$cache/new"
	) 9> "$cache/.lock" || return 1
	echo "$bb"
}

cron_stop() {
	local f=$1 pid
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	rm -f "$f"
	kill "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
	return 0
}

# cron_judge NAME OUT B1 B2 ERRS...: the checks of one store's line.
cron_judge() {
	local name=$1 out=$2 b1=$3 b2=$4 report e h=0 bad=()
	shift 4
	report=$(awk -v b1="$b1" -v b2="$b2" '
		{ n[$1]++ }
		END {
			for (s in n) { slots++; if (n[s] != 1) r = r " " s "(x" n[s] ")"; if (s % 60000) odd = odd " " s }
			if (!(b1 in n)) r = r " missing " b1
			if (!(b2 in n)) r = r " missing " b2
			if (odd != "") r = r " not minute slots:" odd
			if (slots < 2) r = r " only " slots + 0 " slots"
			print r
		}' "$out" 2> /dev/null)
	[ -f "$out" ] || report="no run wrote $out"
	if [ -z "${report// /}" ]; then
		ok "cli cron $name: 3 crond daemons, one line per minute slot ($(sort -u "$out" | wc -l) slots, both boundaries' among them)"
	else
		not_ok "cli cron $name: 3 crond daemons, one line per minute slot" "$report" "$(head -n 10 "$out" 2> /dev/null)"
	fi
	# Each daemon ran the line at both boundaries: its --verbose lines name both slots.
	for e in "$@"; do
		h=$((h + 1))
		for s in "$b1" "$b2"; do
			grep -qE "^anarchon: cronjob at $(date -u -d "@$((s / 1000))" +%Y-%m-%dT%H:%M:%SZ): (won|(running|done|lost), not this host's)" "$e" 2> /dev/null ||
				bad+=("daemon $h did not run the $name line for $s: $(head -n 5 "$e" 2> /dev/null)")
		done
		bad+=("$(grep -vE "^anarchon: cronjob at [0-9T:-]+Z(: won \(attempt 1\), running /bin/sh| finished succeeded|: (running|done|lost), not this host's to run)$" "$e" 2> /dev/null | head -n 3)")
	done
	if [ -z "$(printf '%s' "${bad[@]}")" ]; then
		ok "cli cron $name: each of the 3 daemons ran the line at both minute boundaries and it said only won or another host's"
	else
		not_ok "cli cron $name: each of the 3 daemons ran the line at both minute boundaries and it said only won or another host's" "${bad[@]}"
	fi
}

cli_cron() {
	local redis=$1 dir=$CLI_TMP/cron bb user start b1 b2 h t pids=()
	mkdir -p "$dir"
	if [ "$(id -u)" -ne 0 ]; then
		not_ok "cli cron: busybox crond runs a crontab's lines as its user (initgroups), which needs root: run the suite as root"
		return
	fi
	if ! bb=$(busybox_static 2> "$dir/fetch.err"); then
		not_ok "cli cron: fetch busybox-static (apt-get download, dpkg-deb -x)" "$(tail -n 10 "$dir/fetch.err")"
		return
	fi
	step "cli cron: $("$bb" | head -n 1) from $bb"
	user=$(id -un)
	for h in 1 2 3; do
		mkdir -p "$dir/tabs$h"
		{
			echo "* * * * * $AN run --verbose --store sqlite://$dir/cron.db --job cronjob --schedule '* * * * *' -- /bin/sh -c 'echo \"\$ANARCHON_SLOT\" >> $dir/sqlite.out' 2>> $dir/sqlite.h$h.err"
			echo "* * * * * $AN run --verbose --store '$redis' --job cronjob --schedule '* * * * *' -- /bin/sh -c 'echo \"\$ANARCHON_SLOT\" >> $dir/redis.out' 2>> $dir/redis.h$h.err"
		} > "$dir/tabs$h/$user"
		"$bb" crond -f -c "$dir/tabs$h" -L "$dir/crond$h.log" -l 5 &
		echo $! > "$dir/crond$h.pid"
		at_exit "cron_stop '$dir/crond$h.pid'"
	done
	start=$(date +%s)
	# The first boundary at least 2 s away: each daemon is asleep until it by then.
	b1=$(( ((start + 2) / 60 + 1) * 60 ))
	b2=$((b1 + 60))
	# A fixed wait: a crond that cannot start has exited by then (checked below).
	sleep 1
	for h in 1 2 3; do
		kill -0 "$(cat "$dir/crond$h.pid")" 2> /dev/null ||
			{ not_ok "cli cron: crond $h is running" "$(tail -n 5 "$dir/crond$h.log")"; return; }
	done
	step "cli cron: 3 crond daemons until $(date -u -d "@$((b2 + 20))" +%H:%M:%S) UTC (boundaries $(date -u -d "@$b1" +%H:%M) and $(date -u -d "@$b2" +%H:%M))"
	sleep_until $(( (b2 + 20) * 1000 ))
	for h in 1 2 3; do cron_stop "$dir/crond$h.pid"; done
	cron_judge sqlite "$dir/sqlite.out" $((b1 * 1000)) $((b2 * 1000)) "$dir"/sqlite.h{1,2,3}.err
	cron_judge redis-lease "$dir/redis.out" $((b1 * 1000)) $((b2 * 1000)) "$dir"/redis.h{1,2,3}.err
}
