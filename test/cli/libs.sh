# libs.sh — a run loads only the client library its store's URL needs.
#
# The command links none of them (core/dl.h): a run on SQLite or NATS maps
# no hiredis, rabbitmq-c, OpenSSL or libpq, a run on Redis maps hiredis
# alone, and so on.  The run's command reads what its parent, the running
# anarchon, has mapped (/proc/PPID/maps) at the moment it runs, after the
# claim: everything the claim needed is loaded by then.
#
#   cli_libs NAME=URL...

# libs_of NAME URL: the libraries of interest that a run on URL had mapped,
# one line, sorted ("none" when none; "failed: ..." when the run did not run).
libs_of() {
	local name=$1 url=$2 out=$CLI_TMP/libs.$1 rc libs
	# A slot of the clock's current second: every store takes it (a run-now is not every store's).
	"$AN" run --store "$url" --job "libs-$name" --slot $(( $(date +%s) * 1000 )) -- \
		sh -c "cat /proc/\$PPID/maps > '$out.maps'" > "$out.log" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] || [ ! -s "$out.maps" ]; then
		echo "failed: exit $rc: $(tr '\n' ' ' < "$out.log" | head -c 300)"
		return
	fi
	libs=$(grep -oE 'lib(hiredis|rabbitmq|ssl|crypto|pq)\.so[^ ]*' "$out.maps" | sed 's/\.so.*//' | sort -u | tr '\n' ' ')
	libs=${libs% }
	echo "${libs:-none}"
}

cli_libs() {
	local arg name url got want
	for arg in "$@"; do
		name=${arg%%=*} url=${arg#*=}
		got=$(libs_of "$name" "$url")
		# rabbitmq-c and libpq bring OpenSSL with them: loaded, but by their own need.
		case "$name" in
			sqlite|nats) want="none" ;;
			redis*) want="libhiredis" ;;
			rabbitmq) want="libcrypto librabbitmq libssl" ;;
			postgresql) want="libcrypto libpq libssl" ;;
		esac
		if [ "$got" = "$want" ]; then
			ok "cli libs $name: a run loads only what its URL needs ($want)"
		else
			not_ok "cli libs $name: a run loads only what its URL needs" "want: $want" "got: $got"
		fi
	done
}
