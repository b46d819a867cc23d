#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Real control groups, made for the test and removed after it: a group with
# pids.max 4 whose shell forks until the kernel refuses, and a memory limit
# of 64 MiB. hosttune's figures must be the cgroup files' own, read in the
# same run, and cgroup.pids must be critical for the refused forks. Needs
# root and a writable pids controller (cgroup v2, or v1's pids and memory
# hierarchies); skipped otherwise.
. "$(dirname "$0")/lib.sh"

cg=/sys/fs/cgroup
name=hosttune-test-$$
if [ -f $cg/cgroup.controllers ]; then
	version=v2
	pdir=$cg/$name
	mdir=$cg/$name
	grep -qw pids $cg/cgroup.subtree_control 2>/dev/null || {
		echo "# SKIP: the pids controller is not enabled for children of $cg"
		exit 77
	}
elif [ -d $cg/pids ] && [ -d $cg/memory ]; then
	version=v1
	pdir=$cg/pids/$name
	mdir=$cg/memory/$name
else
	echo "# SKIP: no cgroup v2 and no v1 pids and memory hierarchies"
	exit 77
fi
if ! mkdir "$pdir" 2>/dev/null; then
	echo "# SKIP: cannot make a group in $pdir (not root, or read-only)"
	exit 77
fi
[ "$mdir" = "$pdir" ] || mkdir "$mdir" || { rmdir "$pdir"; exit 99; }
holder=""
cleanup() {
	# Every process of the group: the holder and the sleeps its subshell left.
	for p in $(cat "$pdir/cgroup.procs" 2>/dev/null); do kill "$p" 2>/dev/null; done
	[ -z "$holder" ] || wait "$holder" 2>/dev/null
	# The group's processes have ended: the directories can go.
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		rmdir "$pdir" 2>/dev/null
		[ "$mdir" = "$pdir" ] || rmdir "$mdir" 2>/dev/null
		[ -d "$pdir" ] || [ -d "$mdir" ] || break
		sleep 0.2
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

echo 4 >"$pdir/pids.max"
if [ $version = v2 ]; then
	echo $((64 << 20)) >"$mdir/memory.max" 2>/dev/null || echo "# no memory controller here"
else
	echo $((64 << 20)) >"$mdir/memory.limit_in_bytes"
fi
# A shell in the group: a subshell of it starts sleeps until the kernel
# refuses one (4 tasks: the shell, the subshell and two sleeps) and ends
# there (a shell exits when it cannot fork), then the shell becomes a sleep
# itself (exec: no fork) until the test ends it.
sh -c "echo \$\$ >$pdir/cgroup.procs; [ $mdir = $pdir ] || echo \$\$ >$mdir/cgroup.procs
	(for i in 1 2 3 4 5 6; do sleep 60 & done) 2>/dev/null; echo ready >$TMP/ready; exec sleep 60" &
holder=$!
for _ in $(seq 50); do
	[ -f "$TMP/ready" ] && break
	sleep 0.1
done
[ -f "$TMP/ready" ] || { not_ok "the group's shell started"; finish; exit 1; }

ht facts >"$TMP/facts"
esc=$name # letters, digits and '-': escaped as it is
fact() { sed -n "s/^cgroup\.$esc\.$1 = \([0-9]*\) .*/\1/p" "$TMP/facts"; }
events=$(sed -n 's/^max //p' "$pdir/pids.events")
expect_eq "$version: pids.max" 4 "$(fact pids_max)"
expect_eq "$version: pids.current as the file says" "$(cat "$pdir/pids.current")" "$(fact pids_current)"
expect_eq "$version: pids.events max as the file says" "$events" "$(fact pids_events)"
# Six sleeps asked for, at most two started: at least one fork refused (the
# subshell ends at the first).
[ "${events:-0}" -ge 1 ] && ok "$version: forks were refused ($events)" || not_ok "$version: forks were refused" "pids.events max: $events"
expect_eq "$version: memory limit" $((64 << 20)) "$(fact memory_max)"
grep -q "^cgroup.list = .*\b$esc\b" "$TMP/facts" && ok "$version: the group is listed" ||
	not_ok "$version: the group is listed" "$(grep '^cgroup.list' "$TMP/facts")"
# The processes of the group: the shell and its sleeps, as cgroup.procs lists them.
expect_eq "$version: processes" "$(wc -l <"$pdir/cgroup.procs")" "$(fact procs)"

ht --format json audit >"$TMP/a.json"
sev=$(jget "$TMP/a.json" ".findings[] | select(.rule == \"cgroup.pids\" and .instance == \"$name\") | .severity")
expect_eq "$version: refused forks are critical" critical "$sev"
expect_contains "$version: the refusals counted" "Events at the limit: $events (forks and clones" \
	"$(jget "$TMP/a.json" ".findings[] | select(.rule == \"cgroup.pids\" and .instance == \"$name\") | .explanation")"
finish
