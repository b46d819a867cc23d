#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# busy-host.sh BENCH HOSTTUNE SRCDIR HOLD: a busy host, built in a
# private network namespace (unshare -n; nothing of the host's own settings
# changes), then hosttune's CPU time beside what a user would run to see the
# same: `conntrack -L` and `ss -tlnp` (the CPU time of both added). The host:
#   - a conntrack table whose max is the global nf_conntrack_max (262,144
#     here), loaded through ctnetlink with `conntrack -R -` (generated
#     entries: 85% TCP ESTABLISHED, 10% TCP TIME_WAIT, 5% UDP, each its own
#     address pair, timeouts past the run's end);
#   - 1,000 processes (bench/hold procs, children in the host's PID
#     namespace, so /proc shows them) holding 50 to 200 descriptors each,
#     /dev/null and AF_UNIX socketpairs;
#   - one TCP listener (port 3901) that no process holds: its only reference
#     is a descriptor in flight in an SCM_RIGHTS message that nobody reads
#     (bench/hold hidden-listener), so no /proc/PID/fd links to it and a
#     search for its owner reads every descriptor of every process.
# Two scenarios in the same run and namespace: the table 19% full (50,000
# entries), goal: hosttune --no-measure audit at most 0.1x the CPU time of
# conntrack -L + ss -tlnp (no conntrack dump at 19% full, no walk of every
# descriptor); then 90% full (about 236,000 entries), goal: at most 0.8x.
# Each prints bench/bench's line for each tool, the ratio with its goal, and
# the number of readlinkat(2) calls hosttune made (strace -f -c, one run).
# Figures, never a pass or fail. Root only; skipped with the reason when not
# root, when a tool is missing or when the global nf_conntrack_max is below
# 262,144 (it is shared by every namespace and never changed here; skipped
# too while bench/conntrack-storm, which lowers it, holds its lock).
# Every process, the namespace and its entries go at exit.
# Environment: RUNS (default 7), PROCS (1000), FDS_MIN (50), FDS_MAX (200),
# LOW_ENTRIES (50000), HIGH_PERCENT (90).
set -u
bench=$1
hosttune=$2
src=$3
hold=$4
runs=${RUNS:-7}
procs=${PROCS:-1000}
fds_min=${FDS_MIN:-50}
fds_max=${FDS_MAX:-200}
low=${LOW_ENTRIES:-50000}
high_percent=${HIGH_PERCENT:-90}
port=3901
need_max=262144

skip() {
	echo "busy host: skipped: $*"
	exit 0
}

echo "hosttune on a busy host, in a private netns: $procs processes holding" \
	"$fds_min-$fds_max descriptors each, a listener no process holds, a conntrack table" \
	"19% then $high_percent% full"
[ "$(id -u)" -eq 0 ] || skip "needs root (unshare -n, conntrack -R, every /proc/PID/fd)"
for tool in conntrack ss ip unshare; do
	command -v $tool >/dev/null 2>&1 || skip "$tool(8) not installed"
done
[ -x "$hold" ] || skip "$hold not built (make bench/hold)"
unshare -n true 2>/dev/null || skip "unshare -n refused"
[ -d /run/hosttune-conntrack-storm.lock ] && skip "bench/conntrack-storm is running (its lock)"
max=$(cat /proc/sys/net/netfilter/nf_conntrack_max 2>/dev/null) ||
	skip "no /proc/sys/net/netfilter/nf_conntrack_max (nf_conntrack not loaded)"
[ "$max" -ge "$need_max" ] ||
	skip "the global nf_conntrack_max is $max, below the $need_max this bench's table needs;" \
		"it is shared by every namespace and this bench does not change it"
high=$((max * high_percent / 100))
[ "$low" -lt "$high" ] || skip "LOW_ENTRIES=$low is not below $high_percent% of $max"
strace=$(command -v strace 2>/dev/null || true)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hosttune-busy.XXXXXX") || skip "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
export bench hosttune src hold runs procs fds_min fds_max low high high_percent max port strace tmp
cat >"$tmp/inner.sh" <<'EOT'
set -u
holders=""
cleanup() {
	for p in $holders; do
		kill "$p" 2>/dev/null
	done
	for p in $holders; do
		wait "$p" 2>/dev/null
	done
	holders=""
	conntrack -F >/dev/null 2>&1
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# ready FILE PID WHAT: waits (60 s at most) for the helper's "ready" line.
ready() {
	i=0
	while ! grep -q '^ready' "$1" 2>/dev/null; do
		if ! kill -0 "$2" 2>/dev/null || [ $i -ge 600 ]; then
			echo "busy host: $3 did not start"
			exit 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
}

# entries FIRST LAST: `conntrack -R` lines for entries FIRST .. LAST-1, each
# from its own client 10.A.B.C to one of the Garage ports of 10.0.0.1.
entries() {
	awk -v first="$1" -v last="$2" 'BEGIN {
		for (i = first; i < last; i++) {
			c = sprintf("10.%d.%d.%d", 1 + int(i / 65536), int(i / 256) % 256, i % 256)
			sport = 32768 + i % 28000
			dport = 3900 + i % 3
			k = i % 20
			if (k < 17)
				printf "-I -t 432000 -u ASSURED -s %s -d 10.0.0.1 -r 10.0.0.1 -q %s -p tcp --sport %d --dport %d --reply-port-src %d --reply-port-dst %d --state ESTABLISHED\n", c, c, sport, dport, dport, sport
			else if (k < 19)
				printf "-I -t 3600 -u ASSURED -s %s -d 10.0.0.1 -r 10.0.0.1 -q %s -p tcp --sport %d --dport %d --reply-port-src %d --reply-port-dst %d --state TIME_WAIT\n", c, c, sport, dport, dport, sport
			else
				printf "-I -t 3600 -u ASSURED -s %s -d 10.0.0.1 -r 10.0.0.1 -q %s -p udp --sport %d --dport 53 --reply-port-src 53 --reply-port-dst %d\n", c, c, sport, sport
		}
	}'
}

# fill N: loads entries up to N in all.
fill() {
	have=$(cat /proc/sys/net/netfilter/nf_conntrack_count)
	if [ "$have" -lt "$1" ]; then
		entries "$have" "$1" | conntrack -R - >/dev/null 2>"$tmp/conntrack-R.err" || {
			echo "busy host: conntrack -R failed: $(tail -n 1 "$tmp/conntrack-R.err")"
			exit 1
		}
	fi
	have=$(cat /proc/sys/net/netfilter/nf_conntrack_count)
	[ "$have" -ge "$1" ] || {
		echo "busy host: $have conntrack entries loaded of $1"
		exit 1
	}
}

# The median CPU time of a bench/bench line, in ms.
cpu() {
	awk '{ for (i = 1; i < NF; i++) if ($i == "cpu") print $(i + 1) }' "$1"
}

# scenario NAME GOAL: the three tools, the ratio and hosttune's readlinkat calls.
scenario() {
	count=$(cat /proc/sys/net/netfilter/nf_conntrack_count)
	all_fds=$(find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	nprocs=$(find /proc -mindepth 1 -maxdepth 1 -name '[0-9]*' 2>/dev/null | wc -l)
	awk -v n="$1" -v c="$count" -v m="$max" -v f="$all_fds" -v p="$nprocs" 'BEGIN {
		printf "%s: %d conntrack entries of %d (%.0f%% full); %d processes on the host, %d descriptors in all\n",
			n, c, m, 100 * c / m, p, f
	}'
	"$bench" "    hosttune --no-measure audit" "$runs" "$hosttune" --rules "$src/rules" \
		--no-measure audit | tee "$tmp/h"
	"$bench" "    conntrack -L" "$runs" "$(command -v conntrack)" -L | tee "$tmp/c"
	"$bench" "    ss -tlnp" "$runs" "$(command -v ss)" -tlnp | tee "$tmp/s"
	h=$(cpu "$tmp/h") c=$(cpu "$tmp/c") s=$(cpu "$tmp/s")
	if [ -n "$h" ] && [ -n "$c" ] && [ -n "$s" ]; then
		awk -v h="$h" -v c="$c" -v s="$s" -v g="$2" 'BEGIN {
			printf "    ratio hosttune / (conntrack -L + ss -tlnp), CPU: %5.2fx  (%.2f / %.2f ms)  [goal <= %.1fx: %s]\n",
				h / (c + s), h, c + s, g, h / (c + s) <= g ? "within" : "OVER"
		}'
	else
		echo "    no ratio: a command above failed"
	fi
	if [ -n "$strace" ]; then
		"$strace" -f -c -e trace=readlinkat -o "$tmp/strace" "$hosttune" --rules "$src/rules" \
			--no-measure audit >/dev/null 2>&1
		calls=$(awk '$NF == "readlinkat" { print $4 }' "$tmp/strace")
		echo "    hosttune readlinkat calls (strace -f -c, one run): ${calls:-0}"
	else
		echo "    hosttune readlinkat calls: not counted (strace not installed)"
	fi
}

ip link set lo up
"$hold" procs "$procs" "$fds_min" "$fds_max" >"$tmp/procs.out" &
holders="$holders $!"
ready "$tmp/procs.out" $! "bench/hold procs"
"$hold" hidden-listener "$port" >"$tmp/hidden.out" &
holders="$holders $!"
ready "$tmp/hidden.out" $! "bench/hold hidden-listener"
set -- $(cat "$tmp/procs.out")
echo "  made: $3 processes holding $4 descriptors;" \
	"$(ss -Htln "sport = :$port" | wc -l) listener on port $port, its processes as ss -p sees them:" \
	"$(ss -Htlnp "sport = :$port" | grep -o 'users:.*' || echo none)"

fill "$low"
scenario "  $((100 * low / max))% full" 0.1
fill "$high"
scenario "  $high_percent% full" 0.8
EOT
unshare -n sh "$tmp/inner.sh" </dev/null
