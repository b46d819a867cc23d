#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# peers.sh BENCH HOSTTUNE SRCDIR HOLD: the cost of the per-peer TCP reading
# (one NETLINK_SOCK_DIAG dump with INET_DIAG_INFO, collect-peers.c) at
# 10,000 and 50,000 established connections, beside ss -tin on the same
# sockets (ss -ti without name lookups; both ends of each connection are in
# the namespace, so each reading sees twice as many sockets). In a private
# network namespace (unshare -n; nothing of the host's own settings
# changes), processes of bench/hold established (9,000 connections each) hold the connections
# between 10.9.0.2 and 10.9.0.1, addresses of lo (not 127/8: peers). hosttune runs audit
# with rules/path.rules alone, so that what it reads is the peers, nstat and
# the uptime; then the same with --sample 10ms (two readings). Median CPU
# time (user + system) of RUNS runs (default 10) and the ratio to ss's.
# Goal: at most 0.2 x ss's CPU. Figures, never a pass or fail. Root only;
# skipped with the reason otherwise. Environment: RUNS, COUNTS ("10000 50000").
set -u
bench=$1
hosttune=$2
src=$3
hold=$4
runs=${RUNS:-10}
counts=${COUNTS:-"10000 50000"}

skip() {
	echo "peers: skipped: $*"
	exit 0
}

echo "hosttune's per-peer TCP reading against ss -tin, in a private netns: median CPU time"
[ "$(id -u)" -eq 0 ] || skip "needs root (unshare -n)"
for tool in ss ip unshare; do
	command -v $tool >/dev/null 2>&1 || skip "$tool(8) not installed"
done
[ -x "$hold" ] || skip "$hold not built (make bench/hold)"
unshare -n true 2>/dev/null || skip "unshare -n refused"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hosttune-peers.XXXXXX") || skip "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
# The connections hold no retransmission: path.dump_wanted is made true so
# that the reading runs, as on a host that retransmitted something.
mkdir -p "$tmp/rules/profiles" &&
	sed '/^\[path.dump_wanted\]/,/^\[/s/^value = .*/value = true/' "$src/rules/path.rules" \
		>"$tmp/rules/path.rules" &&
	cp "$src/rules/profiles/default.profile" "$tmp/rules/profiles/" || skip "no rules/path.rules"
export bench hosttune hold runs tmp
for n in $counts; do
	export n
	unshare -n sh <<'EOT'
set -u
holders=""
cleanup() {
	for p in $holders; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
}
trap cleanup EXIT
ip link set lo up
ip addr add 10.9.0.1/32 dev lo && ip addr add 10.9.0.2/32 dev lo || exit 1
# 9,000 connections a process: two descriptors each under a hard RLIMIT_NOFILE
# of 20,000 (a container may not raise it).
left=$n k=0
while [ "$left" -gt 0 ]; do
	c=$((left > 9000 ? 9000 : left))
	"$hold" established 10.9.0.2 10.9.0.1 $((7000 + k)) "$c" >"$tmp/hold.$k" &
	holders="$holders $!"
	i=0
	while ! grep -q '^ready' "$tmp/hold.$k" 2>/dev/null; do
		if ! kill -0 "$!" 2>/dev/null || [ $i -ge 1200 ]; then
			echo "peers: bench/hold established $c did not start"
			exit 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
	left=$((left - c)) k=$((k + 1))
done
echo "  $n connections: $(ss -Htn state established | wc -l) established sockets"
cpu() { awk '{ for (i = 1; i < NF; i++) if ($i == "cpu") print $(i + 1) }' "$1"; }
"$bench" "    hosttune audit (path.rules)" "$runs" "$hosttune" --rules "$tmp/rules" \
	--no-measure audit | tee "$tmp/h"
"$bench" "    hosttune audit --sample 10ms" "$runs" "$hosttune" --rules "$tmp/rules" \
	--no-measure audit --sample 10ms | tee "$tmp/h2"
"$bench" "    ss -tin" "$runs" "$(command -v ss)" -tin | tee "$tmp/ss"
h=$(cpu "$tmp/h") h2=$(cpu "$tmp/h2") s=$(cpu "$tmp/ss")
awk -v h="$h" -v h2="$h2" -v s="$s" 'BEGIN { if (s > 0) printf "    ratio: one reading %.2f x ss, two readings %.2f x ss (goal <= 0.2)\n", h / s, h2 / s }'
EOT
done
