#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# listeners.sh BENCH HOSTTUNE SRCDIR HOLD: hosttune's memory at 10,000
# listening ports. In a private network namespace (unshare -n;
# nothing of the host's own settings changes) one process (bench/hold
# listeners) listens on 127.0.0.1 ports 20000-29999; then the peak resident
# set size (bench/bench: wait4(2) ru_maxrss, the largest of RUNS runs,
# default 10) of `hosttune --no-measure audit` and `hosttune --no-measure
# facts`, beside `ss -tlnp`'s, which lists the same sockets and their
# owners. Goal: hosttune at most 8 MiB in both. Figures, never a pass or
# fail. Root only (to see every process's descriptors, as ss -p and
# hosttune do); skipped with the reason when not root or a tool is missing.
# The process and the namespace go at exit.
# Environment: RUNS (default 10), LISTENERS (10000).
set -u
bench=$1
hosttune=$2
src=$3
hold=$4
runs=${RUNS:-10}
listeners=${LISTENERS:-10000}
first=20000

skip() {
	echo "listeners: skipped: $*"
	exit 0
}

echo "hosttune at $listeners listening ports, in a private netns: peak RSS"
[ "$(id -u)" -eq 0 ] || skip "needs root (unshare -n, every /proc/PID/fd)"
for tool in ss ip unshare; do
	command -v $tool >/dev/null 2>&1 || skip "$tool(8) not installed"
done
[ -x "$hold" ] || skip "$hold not built (make bench/hold)"
if [ "$listeners" -lt 1 ] || [ $((first + listeners - 1)) -gt 65535 ]; then
	skip "LISTENERS=$listeners: ports $first.. must end at 65535 at most"
fi
unshare -n true 2>/dev/null || skip "unshare -n refused"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hosttune-listeners.XXXXXX") || skip "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
export bench hosttune src hold runs listeners first tmp
cat >"$tmp/inner.sh" <<'EOT'
set -u
holder=""
cleanup() {
	if [ -n "$holder" ]; then
		kill "$holder" 2>/dev/null
		wait "$holder" 2>/dev/null
	fi
	holder=""
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

ip link set lo up
"$hold" listeners 127.0.0.1 "$first" "$listeners" >"$tmp/hold.out" &
holder=$!
i=0
while ! grep -q '^ready' "$tmp/hold.out" 2>/dev/null; do
	if ! kill -0 "$holder" 2>/dev/null || [ $i -ge 600 ]; then
		echo "listeners: bench/hold listeners did not start"
		exit 1
	fi
	sleep 0.1
	i=$((i + 1))
done
echo "  made: $(ss -Htln | wc -l) listening TCP sockets held by one process"

"$bench" "    hosttune --no-measure audit" "$runs" "$hosttune" --rules "$src/rules" --no-measure \
	audit | tee "$tmp/audit"
"$bench" "    hosttune --no-measure facts" "$runs" "$hosttune" --no-measure facts | tee "$tmp/facts"
"$bench" "    ss -tlnp" "$runs" "$(command -v ss)" -tlnp | tee "$tmp/ss"

# The peak RSS of a bench/bench line, in MiB.
rss() {
	awk '{ for (i = 1; i < NF; i++) if ($i == "RSS") print $(i + 1) }' "$1"
}
s=$(rss "$tmp/ss")
for job in audit facts; do
	r=$(rss "$tmp/$job")
	if [ -z "$r" ]; then
		echo "    hosttune $job: no figure (it failed above)"
		continue
	fi
	awk -v j="$job" -v r="$r" -v s="${s:-0}" 'BEGIN {
		printf "    peak RSS hosttune %-5s %6.2f MiB (ss -tlnp %s MiB)  [goal <= 8 MiB: %s]\n",
			j, r, (s > 0 ? sprintf("%.2f", s) : "?"), (r <= 8 ? "within" : "OVER")
	}'
done
EOT
unshare -n sh "$tmp/inner.sh" </dev/null
