# lib.sh — what every suite sources: result lines, temporary folders, ports.
#
# A suite is test/<area>/run.sh.  It prints TAP: one line per check, "ok -
# NAME" or "not ok - NAME", comments starting with "#", and its plan, and
# test/run runs it with prove.  Anything it starts (servers, folders) it stops
# and removes in an EXIT trap registered with at_exit.

TEST_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$TEST_ROOT/.." && pwd)
T_FAILED=0

ok() { echo "ok - $*"; }
# step: a set-up step that worked is said, not counted as a check passed (one
# that failed is a not_ok).
step() { echo "# $*"; }
# A detail of several lines is a comment on every line: a line of a server's
# log that began "ok" or "1..3" would otherwise read as a check or a plan.
not_ok() {
	echo "not ok - $1"
	shift
	[ $# -gt 0 ] && printf '%s\n' "$@" | sed 's/^/#   /'
	T_FAILED=$((T_FAILED + 1))
	return 0
}

# check NAME CMD...: ok when CMD succeeds; its output is shown only on failure.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$(printf '%s' "$out" | tail -n 20)"; fi
}

# has NAME TEXT WANT: ok when TEXT holds WANT, whatever the case (PostgreSQL's
# DETAIL starts with a capital), else what was wanted and what came.
# same NAME WANT GOT: ok when GOT is exactly WANT; else both are shown.
same() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "want: $2" "got: $3"; fi; }
# (A match in the shell itself: a pipe into grep -q under pipefail failed a
# check whose text held WANT, once, on a loaded machine.)
has() { if [[ ${2,,} == *"${3,,}"* ]]; then ok "$1"; else not_ok "$1" "want: $3" "got: $2"; fi; }

# diff_ok NAME EXPECTED ACTUAL: ok when the files are the same, else the diff.
diff_ok() {
	if diff -u "$2" "$3" > "$3.diff" 2>&1; then ok "$1"; rm -f "$3.diff"
	else not_ok "$1" "$(head -n 40 "$3.diff")"; fi
}

# vg_log_ok NAME LOG RC: ok when valgrind (run with -q --error-exitcode=99
# --log-file=LOG) exited with RC other than 99, wrote its log and reported
# nothing in it, else the start of its report.  A log that does not exist
# means valgrind never ran: that is a failure, not a pass.
vg_log_ok() {
	if [ ! -e "$2" ]; then not_ok "$1" "valgrind wrote no log at $2: it did not run"
	elif [ "${3:-}" = 99 ]; then not_ok "$1" "valgrind exited 99 (errors or leaks): $(head -n 30 "$2")"
	elif [ -s "$2" ]; then not_ok "$1" "$(head -n 30 "$2")"; else ok "$1"; fi
}

# have_valgrind NAME: true when valgrind is installed; otherwise NAME fails
# (test/deps.sh installs it), so that checks under valgrind are never
# dropped without a line.
have_valgrind() {
	command -v valgrind > /dev/null && return 0
	not_ok "$1" "valgrind is not installed (bash test/deps.sh installs it)"
	return 1
}

# vg_ok NAME INPUT CMD...: ok when CMD, run under valgrind with the file INPUT
# on its standard input, exits 0 with no error and no definite or indirect
# leak reported.  A machine without valgrind fails the check (test/deps.sh
# installs it): a check that did not run is not a pass.
vg_ok() {
	local name=$1 input=$2 log rc
	shift 2
	if ! command -v valgrind > /dev/null; then
		not_ok "$name" "valgrind is not installed (bash test/deps.sh installs it)"
		return
	fi
	log=$(mktemp "${TMPDIR:-/tmp}/anarchon-vg.XXXXXX")
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		"$@" < "$input" > /dev/null 2> "$log"
	rc=$?
	if [ "$rc" -eq 0 ]; then ok "$name"; else not_ok "$name" "exit $rc: $(head -n 20 "$log")"; fi
	rm -f "$log"
}

# tap_ok NAME PROG...: run a test program that prints TAP of its own (its
# checks, then its plan "1..N"); its lines are passed on, the plan as a
# comment.  NAME is ok only when it exited 0, and its plan is there and
# counts N > 0 checks, exactly those it printed: a crash, or a program that
# stopped before it checked everything, is a failure.
tap_ok() {
	local name=$1 out rc n plan
	shift
	out=$(mktemp "${TMPDIR:-/tmp}/anarchon-unit.XXXXXX")
	"$@" > "$out" 2>&1
	rc=$?
	cat "$out"
	n=$(grep -cE '^(not )?ok\b' "$out")
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$out" | tail -n 1)
	if [ "$rc" -ne 0 ]; then not_ok "$name" "exit $rc: $(tail -n 3 "$out")"
	elif [ -z "$plan" ]; then not_ok "$name" "it printed no plan: $(tail -n 3 "$out")"
	elif [ "$plan" -eq 0 ] || [ "$plan" -ne "$n" ]; then not_ok "$name" "its plan is 1..$plan and it printed $n checks"
	else ok "$name"; fi
	rm -f "$out"
}

# ---------------------------------------------------------------- TAP
#
# A suite's plan comes at its end, as PostgreSQL's TAP suites write theirs
# with done_testing(): "1..N" for the N checks it printed, written by a filter
# that every line of the suite (stdout and stderr, its programs' too) passes
# through, once suite_end has been reached.  A suite that stops before that
# (set -e, a crash, an exit in the middle) gets no plan but a failed check
# saying so, and prove fails it; so does a suite that printed no check at
# all.  Within the stream, what TAP would misread is made a comment: a second
# plan, "Bail out!", and a "# SKIP" or "# TODO" in a check's name, which would
# turn a failure into a pass.  Only the suite's own run.sh sets the filter up;
# scripts it starts that source this file print into it.
T_TAP_END="# anarchon-tap: the suite reached its end"
T_TAP_EXIT="# anarchon-tap: the suite's clean-up is over"
t_tap_owner() { [ "${T_TAP_OWNER:-}" = "$$" ]; }
# (Perl, which prove needs anyway: mawk, Debian's awk, reads a pipe in blocks
# and would see the last marker only at the end of the input.)  The filter
# outlives a stop of the whole group (a TERM to CI, a ^C) and a reader that is
# gone: were it to die first, the suite's clean-up would die of SIGPIPE at its
# next line, and leave its servers running.
t_tap_filter() {
	SUITE=$1 END_MARKER=$T_TAP_END EXIT_MARKER=$T_TAP_EXIT perl -e '
		$SIG{$_} = "IGNORE" for qw(TERM INT HUP PIPE);
		$| = 1;
		my ($n, $ended) = (0, 0);
		while (my $l = <STDIN>) {
			chomp $l;
			last if $l eq $ENV{EXIT_MARKER};
			if ($l eq $ENV{END_MARKER}) { $ended = 1; next; }
			if ($l =~ /^(not )?ok\b/) {
				$n++;
				$l =~ s/#/\\#/g if $l =~ /#\s*(skip|todo)/i;
			}
			$l = "# $l" if $l =~ /^\d+\.\.\d+/ || $l =~ /^Bail out!/;
			print "$l\n";
		}
		if (!$ended) { print "not ok - $ENV{SUITE}: the suite stopped before its end (suite_end)\n"; $n++; }
		if ($n == 0) { print "not ok - $ENV{SUITE}: the suite ran no check\n"; $n++; }
		print "1..$n\n";'
}
if [ -z "${T_TAP_OWNER:-}" ] && [ "$(basename "$0")" = run.sh ] &&
	[ "$(cd "$(dirname "$0")/.." 2> /dev/null && pwd)" = "$TEST_ROOT" ]; then
	T_TAP_OWNER=$$
	export T_TAP_OWNER
	# Through a FIFO and a disowned job rather than `exec > >(...)`: a suite's
	# bare `wait` waits for a process substitution too, and the filter ends
	# only after the suite.
	T_TAP_FIFO=$(mktemp -u "${TMPDIR:-/tmp}/anarchon-tap.XXXXXX")
	mkfifo -m 600 "$T_TAP_FIFO"
	t_tap_filter "$(basename "$(dirname "$0")")" < "$T_TAP_FIFO" &
	disown $!
	exec > "$T_TAP_FIFO" 2>&1
	rm -f "$T_TAP_FIFO"
fi

# Cleanup handlers run in reverse order of registration, even on failure.
# They are kept in a file, so that at_exit works from a subshell too, e.g.
# inside tmp=$(t_tmpdir).
T_EXIT_FILE=$(mktemp "${TMPDIR:-/tmp}/anarchon-exit.XXXXXX")
at_exit() { printf '%s\n' "$*" >> "$T_EXIT_FILE"; }
t_run_exit() {
	local h
	[ -f "$T_EXIT_FILE" ] || return 0
	while IFS= read -r h; do eval "$h" || true; done < <(tac "$T_EXIT_FILE")
	rm -f "$T_EXIT_FILE" "$T_EXIT_FILE.ports"
	t_tap_owner && echo "$T_TAP_EXIT"
	return 0
}
trap t_run_exit EXIT
trap 'exit 130' INT TERM

# t_tmpdir: a fresh temporary folder, removed when the suite ends.
t_tmpdir() {
	local d
	d=$(mktemp -d "${TMPDIR:-/tmp}/anarchon-test.XXXXXX")
	chmod 755 "$d"
	at_exit "rm -rf '$d'"
	echo "$d"
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on right now, and
# that this suite has not handed out before (a server given it may not be
# listening yet).  It is taken below the kernel's ephemeral range: a port in
# that range can be the local end of any outgoing connection (16 clients at
# once, pgbench, ...), and a server started on it then fails to bind.
# ANARCHON_PORT_LANE=I/N takes the I-th of N equal parts of that range: runs
# that share the machine's network at once (CI's host run beside a chroot's)
# each get their own part.  Without it, a port that one run had chosen and
# not yet bound was chosen by the other; the loser's server failed to bind,
# its wait for the port was answered by the other run's server, and its
# checks then spoke to a server that vanished under them.
T_PORTS_FILE=$T_EXIT_FILE.ports
free_port() {
	local p lo=32768 hi=60999 base=20000 span lane=${ANARCHON_PORT_LANE:-0/1}
	read -r lo hi < /proc/sys/net/ipv4/ip_local_port_range 2> /dev/null || true
	if [ "$lo" -gt $((base + 2000)) ]; then span=$((lo - base)); else base=$((hi + 1)) span=$((65535 - hi)); fi
	[ "$span" -gt 500 ] || { base=20000 span=40000; }
	if [[ $lane =~ ^([0-9]+)/([1-9][0-9]*)$ ]] && [ "${BASH_REMATCH[1]}" -lt "${BASH_REMATCH[2]}" ]; then
		span=$((span / BASH_REMATCH[2]))
		base=$((base + span * BASH_REMATCH[1]))
	fi
	for _ in $(seq 1 200); do
		p=$((base + (RANDOM * 32768 + RANDOM) % span))
		grep -qx "$p" "$T_PORTS_FILE" 2> /dev/null && continue
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p" >> "$T_PORTS_FILE"
			echo "$p"
			return 0
		fi
	done
	return 1
}

# wait_port PORT SECONDS: until something accepts on 127.0.0.1:PORT.
wait_port() {
	local i
	for i in $(seq 1 $(( $2 * 10 ))); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# wait_for SECONDS NAME CMD...: poll CMD every 0.1 s until it succeeds, for
# SECONDS at most: a wait for a condition, never a fixed sleep.  Quiet when
# the condition comes; past the deadline NAME fails, saying what was waited
# for, and it returns 1.
wait_for() {
	local secs=$1 name=$2 end
	shift 2
	end=$(( $(date +%s%3N) + secs * 1000 ))
	until "$@" > /dev/null 2>&1; do
		if [ "$(date +%s%3N)" -ge "$end" ]; then
			not_ok "$name" "waited $secs s in vain for: $*"
			return 1
		fi
		sleep 0.1 # the poll's step
	done
}

# sqlite_cli_norm: the sqlite3 shell's error lines in one form, whatever its
# version.  Before 3.5x it writes "Runtime error near line N: MESSAGE (CODE)"
# (the code for some errors only) and "Error: stepping, MESSAGE" for a
# command-line statement; 3.5x writes "Error near line N: MESSAGE" and
# "Error in Nth command line argument: MESSAGE".  Out: "Error near line N:
# MESSAGE" and "Error: MESSAGE".
sqlite_cli_norm() {
	sed -E -e 's/^Runtime error( near line [0-9]+:)/Error\1/' \
		-e '/^Error near line [0-9]+:/s/ \([0-9]{1,3}\)$//' \
		-e 's/^Error: stepping, /Error: /' -e 's/^Error in [^:]* command line argument: /Error: /'
}

# suite_end: the suite's exit status (non-zero when a check failed).
# It is also the suite's done_testing: the plan is written only once a suite
# got here (see "TAP" above).
suite_end() {
	t_tap_owner && echo "$T_TAP_END"
	[ "$T_FAILED" -eq 0 ]
}

# sleep_until MS: wait until the wall clock (ms since the epoch) reaches MS.
sleep_until() {
	local d=$(( $1 - $(date +%s%3N) ))
	# Until that moment: the wait is the point.
	[ "$d" -le 0 ] || sleep "$(( d / 1000 )).$(printf '%03d' $(( d % 1000 )))"
}

# built_or_end SUITE TARGET...: make the targets; if that fails, report it
# and end the suite (the caller exits when this returns non-zero).
built_or_end() {
	local suite=$1 out
	shift
	out=$(make -s -C "$REPO_ROOT" "$@" 2>&1) && return 0
	not_ok "$suite: build $*" "$out"
	suite_end
	return 1
}

# The suites call the Redis-protocol server and its client redis-server and
# redis-cli.  Debian unstable ships Valkey under its own names only
# (valkey-server, valkey-cli, and no package of redis-* links), so when
# redis-server is missing and valkey-server is there, these names lead to
# Valkey's programs for the suite.  ANARCHON_REDIS_SERVER, ANARCHON_REDIS_CLI
# (a command or a path) choose a server and client explicitly.
t_redis_names() {
	local server=${ANARCHON_REDIS_SERVER:-} cli=${ANARCHON_REDIS_CLI:-} bench="" d
	if [ -z "$server" ] && ! command -v redis-server > /dev/null && command -v valkey-server > /dev/null; then
		server=valkey-server cli=${cli:-valkey-cli} bench=valkey-benchmark
	fi
	[ -n "$server$cli" ] || return 0
	d=$(mktemp -d "${TMPDIR:-/tmp}/anarchon-redis-names.XXXXXX")
	at_exit "rm -rf '$d'"
	[ -n "$server" ] && ln -s "$(command -v "$server")" "$d/redis-server"
	[ -n "$cli" ] && ln -s "$(command -v "$cli")" "$d/redis-cli"
	[ -n "$bench" ] && command -v "$bench" > /dev/null && ln -s "$(command -v "$bench")" "$d/redis-benchmark"
	PATH=$d:$PATH
	export PATH
}
t_redis_names
