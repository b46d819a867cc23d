#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/conntrack-storm leaves the host as it found it: a small run (300
# objects, no --lower-global-max, so the global cap is never touched) and the
# host's conntrack sysctls, the namespaces and the interfaces compared
# before and after. The bench's figures are printed, never asserted.
. "$(dirname "$0")/lib.sh"

NF=/proc/sys/net/netfilter
STORM_BIN=${HT_STORM:-${HT_BUILD_TESTS_DIR:+$HT_BUILD_TESTS_DIR/../bench/storm}}
if [ "$(id -u)" != 0 ] || ! command -v nft >/dev/null || ! command -v ip >/dev/null ||
	[ ! -x "$STORM_BIN" ] || [ ! -e "$NF/nf_conntrack_max" ]; then
	echo "# SKIP: needs root, nft, ip, jq, nf_conntrack and bench/storm built"
	exit 77
fi
host_lock "named network namespaces, veth pairs and the global conntrack sysctls"
snapshot() {
	for k in nf_conntrack_max nf_conntrack_buckets nf_conntrack_tcp_timeout_time_wait; do
		echo "$k $(cat "$NF/$k")"
	done
	echo "hashsize $(cat /sys/module/nf_conntrack/parameters/hashsize 2>/dev/null)"
	echo "netns $(ip netns list 2>/dev/null | LC_ALL=C sort | tr '\n' ' ')"
	echo "links $(ip -o link show | awk -F': ' '{print $2}' | LC_ALL=C sort | tr '\n' ' ')"
}
snapshot >"$TMP/before"
HOSTTUNE=$HOSTTUNE STORM=$STORM_BIN HT_RULES_DIR=$HT_RULES_DIR \
	sh "$HT_TESTS_DIR/../bench/conntrack-storm" --objects 300 --workers 4 \
	--plan-root "$FIXTURES/garage-vm/root" --record-dir "$TMP" >"$TMP/bench.out" 2>&1
rc=$?
sed 's/^/# /' "$TMP/bench.out" | tail -n 25
expect_eq "the bench runs to the end" 0 "$rc"
snapshot >"$TMP/after"
if cmp -s "$TMP/before" "$TMP/after"; then ok "the host's conntrack sysctls, namespaces and links are as before"
else not_ok "the host is as before" "$(diff "$TMP/before" "$TMP/after")"; fi
finish
