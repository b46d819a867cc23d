#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# idle.sh BENCH HOSTTUNE SRCDIR NOOP: hosttune on this host as it is (an
# idle host): the CPU time (user + system, wait4(2); the median of RUNS
# runs, default 200) of `hosttune --rules SRCDIR/rules --no-measure audit`
# beside `sysctl -a`, which reads every setting hosttune could ask for, and
# beside NOOP (bench/noop), a program that does nothing linked with the same
# libraries as hosttune: what merely starting hosttune costs. Goal: hosttune
# at most 0.2x sysctl -a's CPU time (it reads the facts its rules ask for,
# not every setting); the no-op's ratio is the floor under that. Figures,
# never a pass or fail; needs no root (sysctl -a then skips what it may not
# read), skipped with the reason when sysctl(8) is missing.
# BEFORE=DIR, a source tree of an earlier version with src/hosttune built in
# it: that binary with its own rules is timed in the same run, and the
# ratio printed against a goal of at most 1.05x (what a change may add to
# an idle host's audit).
set -u
bench=$1
hosttune=$2
src=$3
noop=$4
runs=${RUNS:-200}

echo "hosttune on an idle host: CPU time, median of $runs runs"
sysctl=$(command -v sysctl 2>/dev/null || true)
[ -n "$sysctl" ] || for d in /usr/sbin /sbin; do [ -x $d/sysctl ] && sysctl=$d/sysctl && break; done
if [ -z "$sysctl" ]; then
	echo "idle host: skipped: sysctl(8) not installed (procps)"
	exit 0
fi
if [ ! -x "$noop" ]; then
	echo "idle host: skipped: $noop not built (make bench/noop)"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hosttune-idle.XXXXXX") || exit 0
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

"$bench" "hosttune --no-measure audit" "$runs" "$hosttune" --rules "$src/rules" --no-measure \
	audit | tee "$tmp/hosttune"
"$bench" "sysctl -a" "$runs" "$sysctl" -a | tee "$tmp/sysctl"
"$bench" "no-op with hosttune's libraries" "$runs" "$noop" | tee "$tmp/noop"
before=${BEFORE:-}
if [ -n "$before" ] && [ -x "$before/src/hosttune" ]; then
	"$bench" "hosttune before ($(cd "$before" && git log -1 --format=%h 2>/dev/null))" "$runs" \
		"$before/src/hosttune" --rules "$before/rules" --no-measure audit | tee "$tmp/before"
fi

# The median CPU time of a bench/bench line, in ms.
cpu() {
	awk '{ for (i = 1; i < NF; i++) if ($i == "cpu") print $(i + 1) }' "$1"
}
h=$(cpu "$tmp/hosttune")
s=$(cpu "$tmp/sysctl")
n=$(cpu "$tmp/noop")
if [ -z "$h" ] || [ -z "$s" ] || [ -z "$n" ]; then
	echo "idle host: no ratio: a command above failed"
	exit 0
fi
awk -v h="$h" -v s="$s" -v n="$n" 'BEGIN {
	if (s <= 0) { print "  ratio: sysctl -a took no measurable CPU time"; exit }
	printf "  ratio hosttune / sysctl -a, CPU:  %6.2fx  (%.2f / %.2f ms)  [goal <= 0.20x: %s]\n",
		h / s, h, s, h / s <= 0.2 ? "within" : "OVER"
	printf "  ratio no-op / sysctl -a, CPU:     %6.2fx  (%.2f / %.2f ms)  [the floor]\n",
		n / s, n, s
}'
if [ -s "$tmp/before" ]; then
	b=$(cpu "$tmp/before")
	awk -v h="$h" -v b="$b" 'BEGIN {
		if (b <= 0) { print "  ratio: the earlier binary took no measurable CPU time"; exit }
		printf "  ratio hosttune / before, CPU:     %6.2fx  (%.2f / %.2f ms)  [goal <= 1.05x: %s]\n",
			h / b, h, b, h / b <= 1.05 ? "within" : "OVER"
	}'
fi
