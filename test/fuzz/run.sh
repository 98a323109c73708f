#!/usr/bin/env bash
# The fuzz suite: the parsers of what comes from users and servers, each
# fuzzed with libFuzzer under AddressSanitizer and UndefinedBehaviorSanitizer
# (test/fuzz/fuzz_*.c say what each one asserts besides "no crash").
#
#   run.sh           `make test`: every target for FUZZ_SHORT_SECONDS (15 s)
#                    from a temporary copy of its committed corpus
#                    (test/fuzz/corpus/<target>/), which stays untouched
#   run.sh --long    `make fuzz`: every target for FUZZ_SECONDS (300 s); the
#                    new inputs it finds are kept in build/fuzz-corpus/<target>/
#                    for the next run (outside git)
#
#   FUZZ_TARGETS="url resp"   only these targets
#   FUZZ_POISON_STACK=0       do not fill the stack with 0x7f before each
#                             schedule search (by default it is, so that a read
#                             of an uninitialised local fails every time:
#                             test/fuzz/fuzz.h)
#
# One line per target: ok, or not ok with the reproducer's path (kept in
# build/fuzz-crashes/<target>/, outside git) and the start of the report.  A
# crash, a leak, an input slower than FUZZ_INPUT_TIMEOUT seconds and a broken
# invariant are all failures.  A missing clang or libFuzzer is a failure too
# (test/deps.sh installs them): this suite is never skipped.
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
here=test/fuzz
tmp=$(t_tmpdir)

long=0
[ "${1:-}" = --long ] && long=1
if [ $long -eq 1 ]; then secs=${FUZZ_SECONDS:-300}; else secs=${FUZZ_SHORT_SECONDS:-15}; fi
targets=${FUZZ_TARGETS:-url schedule json nats resp}
crashes=build/fuzz-crashes

# The longest input each target is given: a little over what its parser
# accepts, so that the refusal of a longer one is fuzzed too.
max_len() {
	case $1 in
		url) echo 4200 ;;
		schedule) echo 600 ;;
		*) echo 8192 ;;
	esac
}

# An impossible allocation (a RESP array that declares 2^40 elements) must
# fail as it would in production, not abort the fuzzer: ASan returns NULL
# above 1 GB, below libFuzzer's own malloc limit (its -rss_limit_mb, 2 GB).
export ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=1024:detect_leaks=1:${ASAN_OPTIONS:-}
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}

if ! command -v "${FUZZ_CC:-clang}" > /dev/null; then
	not_ok "fuzz: ${FUZZ_CC:-clang} is missing" "install clang and libclang-rt-dev (test/deps.sh all does)"
	suite_end
	exit
fi

# All targets at once on both cores; each one's own make below then reports
# only its own failure (and builds nothing when this succeeded).
make -s -j2 -k $(printf 'build/fuzz/bin/%s ' $targets) > /dev/null 2>&1

for t in $targets; do
	name="fuzz $t"
	if ! make -s "build/fuzz/bin/$t" > "$tmp/build-$t" 2>&1; then
		not_ok "$name: build" "$(tail -n 15 "$tmp/build-$t")"
		continue
	fi
	if [ $long -eq 1 ]; then
		work=build/fuzz-corpus/$t
	else
		work=$tmp/corpus-$t
	fi
	mkdir -p "$work" "$crashes/$t"
	# Libfuzzer adds new inputs to the first folder only: the committed
	# corpus is read, never written.
	[ $long -eq 1 ] || cp -R "$here/corpus/$t/." "$work/"
	dict=()
	[ -f "$here/$t.dict" ] && dict=(-dict="$here/$t.dict")
	start=$(date +%s)
	seeds=()
	[ $long -eq 1 ] && seeds=("$here/corpus/$t")
	# -timeout is wall-clock time: one input of the resp target that takes
	# 1.8 s of CPU under the sanitizers took 17 s on a machine running the
	# platform matrix beside it.  30 s still catches a loop that never ends.
	"build/fuzz/bin/$t" "$work" "${seeds[@]}" "${dict[@]}" \
		-max_total_time="$secs" -max_len="$(max_len "$t")" -timeout="${FUZZ_INPUT_TIMEOUT:-30}" \
		-artifact_prefix="$crashes/$t/" -print_final_stats=1 > "$tmp/log-$t" 2>&1
	rc=$?
	took=$(( $(date +%s) - start ))
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/log-$t" | tail -n 1)
	if [ $rc -eq 0 ] && [ -n "$runs" ] && [ "$runs" -gt 0 ]; then
		ok "$name: $runs inputs in ${took}s, no crash, leak, hang or broken invariant"
		continue
	fi
	# The reproducer, and the report from its first error line.
	repro=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$tmp/log-$t" | tail -n 1)
	# (the frames of libFuzzer, the sanitizers and abort() say nothing about the bug)
	report=$(grep -m 1 -A 30 -E '^(invariant failed|==[0-9]+== ?ERROR|.*runtime error:)' "$tmp/log-$t" |
		grep -v -E 'fuzzer::|__sanitizer|libc\.so|pthread_kill|/raise\.c|abort\.c' | head -n 14)
	[ -n "$report" ] || report=$(tail -n 15 "$tmp/log-$t")
	mapfile -t lines <<< "$report"
	not_ok "$name: exit status $rc after ${took}s" "reproducer: ${repro:-none written}" \
		"run it again: build/fuzz/bin/$t ${repro:-<input>}" "${lines[@]}"
done

suite_end
