#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs the libFuzzer targets one after the other (make fuzz, make fuzz-replay).
#
#   run.sh fuzz   SECONDS BUILDDIR CORPUSDIR NAME...
#       each target for SECONDS, starting from CORPUSDIR/NAME (read only: new
#       inputs go to BUILDDIR/work/NAME/corpus);
#   run.sh replay SECONDS BUILDDIR CORPUSDIR NAME...
#       each target over every file of CORPUSDIR/NAME once, then for SECONDS.
#
# Prints one line a target: executions and findings (crash, leak, timeout,
# out of memory, property violation), and the files that show them. Exits 1
# when any target found anything (or did not run).
set -u

mode=$1 seconds=$2 build=$3 corpus=$4
shift 4

case "$mode" in
fuzz | replay) ;;
*) echo "usage: $0 fuzz|replay SECONDS BUILDDIR CORPUSDIR NAME..." >&2; exit 2 ;;
esac

# Harnesses that write a tree per input do it in memory when they can.
if [ -z "${FUZZ_TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	FUZZ_TMPDIR=/dev/shm
fi
export FUZZ_TMPDIR="${FUZZ_TMPDIR:-${TMPDIR:-/tmp}}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"

# The inputs of a finding: the artifacts; in a replay (libFuzzer writes none
# for the files it is given) the file it was running last.
inputs() {
	if [ -n "$(find "$1" -type f)" ]; then find "$1" -type f | tr '\n' ' '
	else sed -n 's/^Running: //p' "$2" | tail -n 1; fi
}

failed=0
summary=""
printf '%-9s %-7s %12s %7s %6s %6s %8s %4s %9s\n' target mode executions seconds crash leak timeout oom property
for name in "$@"; do
	bin=$build/fuzz-$name
	work=$build/work/$name
	art=$work/artifacts
	log=$work/$mode.log
	mkdir -p "$work/corpus" "$art"
	rm -f "$art"/* "$log"
	: >"$log"
	start=$(date +%s)
	rc=0
	if [ "$mode" = replay ]; then
		# libFuzzer runs each file it is given once.
		files=$(find "$corpus/$name" -type f | sort)
		if [ -n "$files" ]; then
			# shellcheck disable=SC2086
			("$bin" -artifact_prefix="$art/" -timeout=10 $files >>"$log" 2>&1) 2>/dev/null ||
				rc=$?
		fi
		replayed=$(printf '%s\n' "$files" | grep -c .)
		rm -rf "$work/corpus"
		mkdir -p "$work/corpus"
	fi
	if [ "$rc" -eq 0 ]; then
		("$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
			-print_final_stats=1 -artifact_prefix="$art/" \
			"$work/corpus" "$corpus/$name" >>"$log" 2>&1) 2>/dev/null || rc=$?
	fi
	secs=$(( $(date +%s) - start ))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	# Stopped by a finding: the last status line ("#12345	NEW ...") counts the runs.
	[ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9][0-9]*\)[[:space:]].*/\1/p' "$log" | tail -n 1)
	execs=${execs:-0}
	[ "$mode" = replay ] && execs=$((execs + replayed))
	n_of() { find "$art" -name "$1-*" | wc -l; }
	crash=$(n_of crash) leak=$(n_of leak) timeout=$(n_of timeout) oom=$(n_of oom)
	prop=$(grep -a -c "^PROPERTY VIOLATED" "$log")
	if grep -a -q "^PROPERTY VIOLATED" "$log"; then
		crash=$((crash - prop))
		[ "$crash" -lt 0 ] && crash=0
	fi
	printf '%-9s %-7s %12s %7s %6s %6s %8s %4s %9s\n' "$name" "$mode" "$execs" "$secs" \
		"$crash" "$leak" "$timeout" "$oom" "$prop"
	found=$((crash + leak + timeout + oom + prop))
	if [ "$rc" -ne 0 ] && [ "$found" -eq 0 ]; then
		summary="$summary
$name: exit status $rc without an artifact, see $log"
		failed=1
	fi
	if [ "$found" -gt 0 ]; then
		failed=1
		summary="$summary
$name: $(grep -a -m1 -e '^PROPERTY VIOLATED' -e 'ERROR: AddressSanitizer' -e 'runtime error' \
			-e 'ERROR: LeakSanitizer' -e 'ERROR: libFuzzer' "$log")
  log $log, input(s): $(inputs "$art" "$log")"
	fi
done
if [ "$failed" -ne 0 ]; then
	echo "FUZZ FINDINGS:$summary"
	echo "Replay one input: BUILDDIR/tests/fuzz/fuzz-NAME FILE"
	exit 1
fi
echo "fuzz: no findings"
