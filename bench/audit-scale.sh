#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# audit-scale BENCH HOSTTUNE SRCDIR TCP-CHURN UDP-SPRAY: hosttune on a busy
# host's tables, in a private network namespace (nothing on the host
# changes): 100,000 conntrack entries (one UDP datagram to each of 100,000
# loopback ports and addresses through an nftables `ct state` rule, bench/udp-spray)
# and 10,000 TCP sockets in TIME_WAIT (tests/tcp-churn, 10,000 sequential
# connections closed by the client: 10,000 more conntrack entries in
# TIME_WAIT too). Then the wall time and peak RSS (bench/bench: wait4(2)
# ru_maxrss) of `hosttune --no-measure audit` and `facts`, beside what a user
# would run for the same counts: conntrack -C, conntrack -L, ss -tan state
# time-wait. Targets: audit and facts under 1 s and 16 MiB each; figures,
# never a pass or fail. Root only; skipped with the reason otherwise.
#
# nf_conntrack_max is one global value, the cap of every namespace, and is
# never changed here: with less than ENTRIES + TIME_WAITS + 10% headroom
# the bench says so and skips. It also skips while bench/conntrack-storm
# holds its lock (that bench lowers the global max).
# Environment: RUNS (default 5), ENTRIES (100000), TIME_WAITS (10000).
set -u
bench=$1
hosttune=$2
src=$3
churn=$4
spray=$5
runs=${RUNS:-5}
entries=${ENTRIES:-100000}
time_waits=${TIME_WAITS:-10000}

skip() {
	echo "audit at scale: skipped: $*"
	exit 0
}

echo "hosttune audit at scale: $entries conntrack entries and $time_waits TIME_WAIT sockets" \
	"in a private netns"
[ "$(id -u)" -eq 0 ] || skip "needs root (unshare -n, nft)"
command -v nft >/dev/null 2>&1 || skip "nft(8) not installed"
unshare -n true 2>/dev/null || skip "unshare -n refused"
[ -d /run/hosttune-conntrack-storm.lock ] && skip "bench/conntrack-storm is running (its lock)"
max=$(cat /proc/sys/net/netfilter/nf_conntrack_max 2>/dev/null) ||
	skip "no /proc/sys/net/netfilter/nf_conntrack_max (nf_conntrack not loaded)"
need=$(( (entries + time_waits) * 11 / 10 ))
[ "$max" -ge "$need" ] ||
	skip "the global nf_conntrack_max is $max, below the $need this needs ($entries + $time_waits" \
		"entries + 10%); it is shared by every namespace and this bench does not change it"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hosttune-scale.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export bench hosttune src churn spray runs entries time_waits
cat >"$tmp/inner.sh" <<'EOT'
set -eu
ip link set lo up
# ct on both hooks makes conntrack track the namespace's traffic; the UDP
# datagrams are dropped on input after their entries were confirmed on the
# way out (no socket listens, and this saves 100,000 ICMP errors).
nft -f - <<'EON'
table inet hosttune_bench {
	chain in { type filter hook input priority 0; ct state new,established accept; udp dport 10000-59999 drop; }
	chain out { type filter hook output priority 0; ct state new,established accept; }
}
EON
# The namespace's own UDP timeout (30 s by default) would expire them mid-bench.
echo 3600 >/proc/sys/net/netfilter/nf_conntrack_udp_timeout
sent=$("$spray" "$entries")
echo "  made: $sent UDP flows"
# TIME_WAIT lasts 60 s (TCP_TIMEWAIT_LEN) for sockets, 120 s for conntrack:
# made last, measured at once.
done=$("$churn" 127.0.0.1 5003 "$time_waits")
tw=$(ss -Htan state time-wait | wc -l)
echo "  made: $done TCP connections; $tw sockets in TIME_WAIT;" \
	"$(cat /proc/sys/net/netfilter/nf_conntrack_count) conntrack entries"
"$hosttune" --no-measure facts | grep -E '^conntrack\.(dump\.|stale|state\.(ESTABLISHED|TIME_WAIT))' |
	sed 's/^/  /'
# target: bench/bench's line with the target beside it, and whether the
# median wall time and the peak RSS are within it (a figure, not a verdict).
target() {
	awk '{
		for (i = 1; i < NF; i++) {
			if ($i == "median") ms = $(i + 1)
			if ($i == "RSS") mib = $(i + 1)
		}
		printf "%s  [target < 1000 ms, < 16 MiB: %s]\n", $0,
			ms < 1000 && mib < 16 ? "within" : "OVER"
	}'
}
"$bench" "hosttune --no-measure audit" "$runs" "$hosttune" --rules "$src/rules" --no-measure \
	audit | target
"$bench" "hosttune --no-measure facts" "$runs" "$hosttune" --no-measure facts | target
"$bench" "hosttune --format json audit" "$runs" "$hosttune" --rules "$src/rules" --no-measure \
	--format json audit | target
echo "  what a user would run for the same counts:"
if command -v conntrack >/dev/null 2>&1; then
	ct=$(command -v conntrack)
	"$bench" "conntrack -C" "$runs" "$ct" -C
	"$bench" "conntrack -L > /dev/null" "$runs" "$ct" -L
else
	echo "  conntrack(8) not installed (conntrack-tools): no comparison"
fi
"$bench" "ss -tan state time-wait" "$runs" "$(command -v ss)" -tan state time-wait
echo "  after: $(ss -Htan state time-wait | wc -l) sockets in TIME_WAIT," \
	"$(cat /proc/sys/net/netfilter/nf_conntrack_count) conntrack entries"
EOT
unshare -n sh "$tmp/inner.sh" </dev/null
