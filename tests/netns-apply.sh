#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# apply and revert for real on the live kernel, inside a private network
# namespace: net.netfilter.nf_conntrack_tcp_timeout_time_wait is per netns,
# so writing it there leaves the host alone. nf_conntrack_max is never
# written (read-only in a non-initial netns, and left out by --only).
. "$(dirname "$0")/lib.sh"

TW=/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null || [ ! -e "$TW" ]; then
	echo "# SKIP: needs root, unshare and nf_conntrack"
	exit 77
fi
host_lock "the global nf_conntrack_max, the host's TIME_WAIT and hosttune's lock on /"
host_tw=$(cat "$TW")
host_max=$(cat /proc/sys/net/netfilter/nf_conntrack_max)
export HOSTTUNE HT_RULES_DIR TMP TW

unshare -n sh -c '
	set -u
	echo "before $(cat "$TW")"
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --no-measure --profile garage --only conntrack.time_wait \
		--live-only --state "$TMP/state" apply >"$TMP/apply.out" 2>&1
	echo "apply $?"
	echo "after $(cat "$TW")"
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --no-measure --profile garage --only conntrack.time_wait \
		--live-only --state "$TMP/state" apply >"$TMP/apply2.out" 2>&1
	echo "again $?"
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --state "$TMP/state" revert >"$TMP/revert.out" 2>&1
	echo "revert $?"
	echo "reverted $(cat "$TW")"
' >"$TMP/netns.out" 2>&1
line() { sed -n "s/^$1 //p" "$TMP/netns.out"; }

# A new netns starts at the kernel default of 120 s (nf_conntrack_proto_tcp.c).
expect_eq "netns starts at the default TIME_WAIT" 120 "$(line before)"
expect_eq "apply exits 0" 0 "$(line apply)"
expect_contains "apply reports the change" \
	"set net.netfilter.nf_conntrack_tcp_timeout_time_wait from 120 to 30" "$(cat "$TMP/apply.out")"
# garage profile: min(120, 30 s) = 30, read back from the kernel
expect_eq "the kernel has the new value" 30 "$(line after)"
expect_eq "a second apply exits 0" 0 "$(line again)"
expect_contains "a second apply changes nothing" "No changes" "$(cat "$TMP/apply2.out")"
expect_eq "revert exits 0" 0 "$(line revert)"
expect_eq "revert restores 120" 120 "$(line reverted)"
expect_eq "the state file is gone" no "$([ -e "$TMP/state" ] && echo yes || echo no)"
expect_eq "the host's TIME_WAIT is untouched" "$host_tw" "$(cat "$TW")"
expect_eq "the host's nf_conntrack_max is untouched" "$host_max" \
	"$(cat /proc/sys/net/netfilter/nf_conntrack_max)"

finish
