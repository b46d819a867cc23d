#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Process names (comm) that a fact name cannot hold as they are: a.b, a:b,
# a_b, é0 and "x y", five users each near their RLIMIT_NPROC in a --root
# tree. Each comm is escaped into its own process.NAME.* facts
# (shared/escape.h, as an interface's name: tests/odd-ifnames.sh), so the
# three that a '_' for every odd byte once merged into one "a_b" are judged
# apart; a facts file reads back to the same audit, and the rows, the JSON
# and the Prometheus labels name each process by its comm.
. "$(dirname "$0")/lib.sh"

T=$TMP/tree
mkdir -p "$T/proc/sys/kernel" "$T/etc"
printf '5.15.0-91-generic\n' >"$T/proc/sys/kernel/osrelease"
printf 'MemTotal:        4194304 kB\n' >"$T/proc/meminfo"
printf 'root:x:0:0:root:/root:/bin/bash\n' >"$T/etc/passwd"
# task PID COMM UID: a process of UID with 62 threads and RLIMIT_NPROC 64.
task() {
	d=$T/proc/$1
	mkdir -p "$d/fd"
	printf '%s\n' "$2" >"$d/comm"
	printf 'Name:\t%s\nPid:\t%s\nPPid:\t1\nUid:\t%s\t%s\t%s\t%s\nThreads:\t62\nCapEff:\t0000000000000000\n' \
		"$2" "$1" "$3" "$3" "$3" "$3" >"$d/status"
	printf 'Limit                     Soft Limit           Hard Limit           Units     \n' >"$d/limits"
	printf 'Max processes             64                   64                   processes \n' >>"$d/limits"
	printf 'Max open files            1024                 524288               files     \n' >>"$d/limits"
	printf '0::/user.slice\n' >"$d/cgroup"
}
mkdir -p "$T/proc/1/fd"
printf 'systemd\n' >"$T/proc/1/comm"
# COMM|ESCAPED, one a line: '.' stays, ':' is 0x3a, '_' doubled, 'é' 0xc3 0xa9, ' ' 0x20.
e_acute=$(printf '\303\251')
cat >"$TMP/names" <<EOF
a.b|a.b
a:b|a_3ab
a_b|a__b
${e_acute}0|_c3_a90
x y|x_20y
EOF
pid=2000
while IFS='|' read -r comm esc; do
	pid=$((pid + 1))
	task $pid "$comm" $((pid - 1000))
done <"$TMP/names"

ht --root "$T" facts >"$TMP/facts"
expect_eq "facts exits 0" 0 $?
# Sorted by the escaped names: '_' (0x5f) after '.' (0x2e) and '3' (0x33), before 'a' and 'x'.
expect_contains "process.list: five names, escaped" \
	"process.list = \"_c3_a90 a.b a_3ab a__b x_20y\" from" "$(cat "$TMP/facts")"
ht --root "$T" audit >"$TMP/audit"
expect_eq "audit exits 1 (critical findings)" 1 $?
ht --facts "$TMP/facts" audit >"$TMP/back"
expect_eq "the facts file: exit 1 too" 1 $?
expect_eq "the facts file gives the same audit" "$(sed 1d "$TMP/audit")" "$(sed 1d "$TMP/back")"
ht --root "$T" --format json audit >"$TMP/json"
expect_eq "json exits 1" 1 $?
ht --root "$T" --format prometheus audit >"$TMP/prom"
expect_eq "prometheus exits 1" 1 $?

while IFS='|' read -r comm esc; do
	expect_contains "$comm: its comm under its own name" \
		"process.$esc.comm = \"$comm\" from" "$(cat "$TMP/facts")"
	# 62 tasks of its user against its own limit of 64: 62 >= 0.9 x 64 = 57.6.
	expect_eq "$comm: its row, named by its comm" \
		"process.limit_nproc[$comm]|62 tasks|-|critical" \
		"$(K="process.limit_nproc[$comm] " awk 'index($0, ENVIRON["K"]) == 1 {
			n = split(substr($0, length(ENVIRON["K"]) + 1), w, "  +")
			s = substr(ENVIRON["K"], 1, length(ENVIRON["K"]) - 1)
			for (i = 1; i <= n; i++) if (w[i] != "") s = s "|" w[i]
			print s; exit }' "$TMP/audit")"
	expect_eq "$comm: json instance" critical \
		"$(jq -r --arg i "$comm" '.findings[] | select(.rule == "process.limit_nproc" and .instance == $i) | .severity' "$TMP/json")"
	expect_contains "$comm: prometheus label" \
		"hosttune_finding_severity{rule=\"process.limit_nproc\",process=\"$comm\"} 3" "$(cat "$TMP/prom")"
	expect_contains "$comm: its open files' label, the comm" \
		"hosttune_process_open_files{process=\"$comm\",pid=" "$(cat "$TMP/prom")"
done <"$TMP/names"

finish
