#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# containers.sh BENCH HOSTTUNE SRCDIR HOLD: hosttune on a host of containers.
# For each count of CONTAINERS (default "100 250 500"): that many network
# namespaces (ip netns add htbench-PID-N), each with one process (bench/hold
# established: a listener and 10 connections to it, 21 sockets) in a control
# group of its own with a pids and a memory limit (below a group of this
# bench, removed at exit). Then the CPU time (user + system, bench/bench:
# wait4(2) rusage) and peak RSS of `hosttune --no-measure audit`, beside what
# a user would run for the same figures: `nsenter --net=/run/netns/N ss -tan`
# for every namespace and `cat` of every group's memory and pids usage, in the
# same run. Goals: hosttune's CPU at most 0.1x that; its CPU per container at
# the largest count within 1.5x of that at the smallest; peak RSS at most 12
# MiB at the largest (the text report; the JSON one is shown beside it).
# hosttune reads every group and every namespace (it enters each with
# setns(2) for its sysctls and a sock_diag dump), which the figures count.
# Figures and the goals met or not, never a pass or fail.
# Root only; the namespaces, groups and processes go at exit.
# Environment: RUNS (default 5), CONTAINERS ("100 250 500").
set -u
bench=$1
hosttune=$2
src=$3
hold=$4
runs=${RUNS:-5}
counts=${CONTAINERS:-100 250 500}

skip() {
	echo "containers: skipped: $*"
	exit 0
}

echo "hosttune on a host of containers (a network namespace, a control group and 21 sockets each)"
[ "$(id -u)" -eq 0 ] || skip "needs root (ip netns, cgroups)"
for tool in ip nsenter ss; do
	command -v $tool >/dev/null 2>&1 || skip "$tool(8) not installed"
done
[ -x "$hold" ] || skip "$hold not built (make bench/hold)"
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	v=2 base=/sys/fs/cgroup/htbench-$$
	grep -qw pids /sys/fs/cgroup/cgroup.controllers && grep -qw memory /sys/fs/cgroup/cgroup.controllers ||
		skip "cgroup v2 without the pids and memory controllers"
elif [ -d /sys/fs/cgroup/pids ] && [ -d /sys/fs/cgroup/memory ]; then
	v=1 base=htbench-$$
else
	skip "no cgroup v2 nor v1 pids and memory hierarchies"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hosttune-containers.XXXXXX") || skip "mktemp failed"
made=0
cleanup() {
	i=1
	while [ "$i" -le "$made" ]; do
		ip netns pids "htbench-$$-$i" 2>/dev/null | xargs -r kill 2>/dev/null
		i=$((i + 1))
	done
	sleep 0.2
	i=1
	while [ "$i" -le "$made" ]; do
		ip netns del "htbench-$$-$i" 2>/dev/null
		if [ $v = 2 ]; then rmdir "$base/c$i" 2>/dev/null
		else rmdir "/sys/fs/cgroup/pids/$base/c$i" "/sys/fs/cgroup/memory/$base/c$i" 2>/dev/null; fi
		i=$((i + 1))
	done
	if [ $v = 2 ]; then rmdir "$base" 2>/dev/null
	else rmdir "/sys/fs/cgroup/pids/$base" "/sys/fs/cgroup/memory/$base" 2>/dev/null; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

if [ $v = 2 ]; then
	mkdir "$base" && echo "+pids +memory" >"$base/cgroup.subtree_control" ||
		skip "cannot make $base with the pids and memory controllers"
else
	mkdir "/sys/fs/cgroup/pids/$base" "/sys/fs/cgroup/memory/$base" || skip "cannot make $base"
fi

# container N: a namespace, a group and its process.
container() {
	ns=htbench-$$-$1
	ip netns add "$ns" || return 1
	ip -n "$ns" link set lo up
	if [ $v = 2 ]; then
		g=$base/c$1
		mkdir "$g" && echo 512 >"$g/pids.max" && echo 268435456 >"$g/memory.max"
	else
		mkdir "/sys/fs/cgroup/pids/$base/c$1" "/sys/fs/cgroup/memory/$base/c$1" &&
			echo 512 >"/sys/fs/cgroup/pids/$base/c$1/pids.max" &&
			echo 268435456 >"/sys/fs/cgroup/memory/$base/c$1/memory.limit_in_bytes"
	fi
	ip netns exec "$ns" "$hold" established 127.0.0.1 127.0.0.1 9000 10 >"$tmp/hold$1" &
	pid=$!
	if [ $v = 2 ]; then echo "$pid" >"$base/c$1/cgroup.procs"
	else
		echo "$pid" >"/sys/fs/cgroup/pids/$base/c$1/cgroup.procs"
		echo "$pid" >"/sys/fs/cgroup/memory/$base/c$1/cgroup.procs"
	fi
}

# The comparison: ss in every namespace and the groups' usage, one shell.
cat >"$tmp/compare.sh" <<EOT
i=1
while [ "\$i" -le "\$1" ]; do
	nsenter --net=/run/netns/htbench-$$-\$i ss -tan >/dev/null
	if [ $v = 2 ]; then
		cat $base/c\$i/memory.current $base/c\$i/pids.current >/dev/null
	else
		cat /sys/fs/cgroup/memory/$base/c\$i/memory.usage_in_bytes /sys/fs/cgroup/pids/$base/c\$i/pids.current >/dev/null
	fi
	i=\$((i + 1))
done
EOT

# field LINE NAME: the number after NAME in a bench/bench line ("cpu 12.3 ms").
field() {
	awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' "$1"
}

first_per="" last_per="" last_rss="" last_n=""
for n in $counts; do
	while [ "$made" -lt "$n" ]; do
		container $((made + 1)) || skip "could not make container $((made + 1))"
		made=$((made + 1))
	done
	i=0
	while [ "$(cat "$tmp"/hold* 2>/dev/null | grep -c '^ready')" -lt "$made" ]; do
		[ $i -ge 600 ] && skip "bench/hold did not start in every namespace"
		sleep 0.1
		i=$((i + 1))
	done
	echo "  $n containers:"
	"$bench" "    hosttune --no-measure audit" "$runs" "$hosttune" --rules "$src/rules" --no-measure \
		--output "$tmp/audit.txt" audit | tee "$tmp/h"
	"$bench" "    hosttune --format json audit" "$runs" "$hosttune" --rules "$src/rules" --no-measure \
		--format json --output "$tmp/audit.json" audit
	"$bench" "    nsenter ss -tan + cat, x$n" "$runs" /bin/sh "$tmp/compare.sh" "$n" | tee "$tmp/c"
	h=$(field "$tmp/h" cpu) c=$(field "$tmp/c" cpu) r=$(field "$tmp/h" RSS)
	groups=$(jq '[.findings[] | select(.rule == "cgroup.pids" and .applicable)] | length' "$tmp/audit.json" 2>/dev/null)
	nets=$(jq '[.findings[] | select(.rule == "netns.listen" and .applicable)] | length' "$tmp/audit.json" 2>/dev/null)
	awk -v n="$n" -v h="$h" -v c="$c" -v g="${groups:-?}" -v s="${nets:-?}" 'BEGIN {
		printf "    hosttune judged %s groups and the listeners of %s network namespaces\n", g, s
		printf "    CPU %.2f ms against %.2f ms: %.3fx  [goal <= 0.1x: %s]; %.3f ms a container\n",
			h, c, (c > 0 ? h / c : 0), (c > 0 && h / c <= 0.1 ? "met" : "NOT MET"), h / n
	}'
	per=$(awk -v h="$h" -v n="$n" 'BEGIN { printf "%.6f", h / n }')
	[ -n "$first_per" ] || first_per=$per
	last_per=$per last_rss=$r last_n=$n
done
awk -v a="$first_per" -v b="$last_per" -v r="$last_rss" -v n="$last_n" 'BEGIN {
	printf "  CPU a container at %s against the first count: %.2fx  [goal <= 1.5x: %s]\n",
		n, (a > 0 ? b / a : 0), (a > 0 && b / a <= 1.5 ? "met" : "NOT MET")
	printf "  peak RSS at %s: %.2f MiB  [goal <= 12 MiB: %s]\n", n, r, (r <= 12 ? "met" : "NOT MET")
}'
