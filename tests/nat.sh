#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Source NAT to one destination as a limit (nat.ports): each mapping from one
# NAT address to one destination address, port and protocol takes a source
# port of that address, 64512 of them (1024-65535, nf_nat_l4proto_unique_tuple()
# in net/netfilter/nf_nat_proto.c).
#
# - /proc/net/nf_conntrack under --root: which lines are source NAT (a reply
#   to another address or port than the original source), tallied by NAT
#   address and destination.
# - Facts files: the verdict against the arithmetic (90% critical, 75%
#   warning, a clash when insertions failed and one destination holds most
#   mappings), and the fix never nf_conntrack_max or ip_local_port_range.
# - Live, in `unshare -n`: connections to 127.0.0.1 given 127.0.0.2 by an nft
#   snat rule; hosttune's count agrees with conntrack -L in the same run.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh" || exit 99
[ -n "${TMP:-}" ] && [ -d "$TMP" ] || exit 99

# ---- /proc/net/nf_conntrack: what is source NAT ------------------------------
T=$TMP/tree
mkdir -p "$T/proc/sys/kernel" "$T/proc/sys/net/netfilter" "$T/proc/net/stat" "$T/sys/module/nf_conntrack/parameters"
printf '6.1.0-13-amd64\n' >"$T/proc/sys/kernel/osrelease"
printf 'MemTotal:        4194304 kB\n' >"$T/proc/meminfo"
printf '65536\n' >"$T/proc/sys/net/netfilter/nf_conntrack_max"
printf '65536\n' >"$T/sys/module/nf_conntrack/parameters/hashsize"
{
	# 3 mappings from 192.0.2.1 to 198.51.100.7:443 (MASQUERADE: the reply goes
	# to 192.0.2.1, not to the original source 10.0.0.5).
	for p in 40001 40002 40003; do
		echo "ipv4     2 tcp      6 117 TIME_WAIT src=10.0.0.5 dst=198.51.100.7 sport=$p dport=443 src=198.51.100.7 dst=192.0.2.1 sport=443 dport=$p [ASSURED] mark=0 zone=0 use=2"
	done
	# 1 to the same destination from a second NAT address.
	echo "ipv4     2 tcp      6 117 TIME_WAIT src=10.0.0.6 dst=198.51.100.7 sport=40009 dport=443 src=198.51.100.7 dst=192.0.2.2 sport=443 dport=40009 [ASSURED] mark=0 zone=0 use=2"
	# Port-only source NAT: same address, another port (2 of them, UDP to :53).
	echo "ipv4     2 udp      17 20 src=10.0.0.5 dst=203.0.113.53 sport=5353 dport=53 src=203.0.113.53 dst=10.0.0.5 sport=53 dport=61000 mark=0 zone=0 use=2"
	echo "ipv4     2 udp      17 20 src=10.0.0.5 dst=203.0.113.53 sport=5354 dport=53 src=203.0.113.53 dst=10.0.0.5 sport=53 dport=61001 mark=0 zone=0 use=2"
	# Destination NAT only (a published port): the reply comes from the
	# container, to the original source: not source NAT.
	echo "ipv4     2 tcp      6 431999 ESTABLISHED src=203.0.113.9 dst=192.0.2.1 sport=50000 dport=8080 src=172.17.0.2 dst=203.0.113.9 sport=80 dport=50000 [ASSURED] mark=0 zone=0 use=2"
	# No NAT at all.
	echo "ipv4     2 tcp      6 431999 ESTABLISHED src=10.0.0.5 dst=10.0.0.7 sport=50001 dport=22 src=10.0.0.7 dst=10.0.0.5 sport=22 dport=50001 [ASSURED] mark=0 zone=0 use=2"
	# No sport= in either tuple, the reply to the original source: not NAT.
	echo "ipv4     2 tcp      6 117 TIME_WAIT src=10.0.0.5 dst=198.51.100.8 dport=443 src=198.51.100.8 dst=10.0.0.5 dport=40001 mark=0 zone=0 use=2"
	# A port no packet has (99999) keeps its place: the reply's ports are
	# not taken for the original's, so not NAT either.
	echo "ipv4     2 tcp      6 117 TIME_WAIT src=10.0.0.5 dst=198.51.100.8 sport=99999 dport=99999 src=198.51.100.8 dst=10.0.0.5 sport=443 dport=40002 mark=0 zone=0 use=2"
	# IPv6 source NAT (NAT66): 1 mapping.
	echo "ipv6     10 tcp      6 117 TIME_WAIT src=fd00::5 dst=2001:db8::7 sport=40100 dport=443 src=2001:db8::7 dst=2001:db8::1 sport=443 dport=40100 [ASSURED] mark=0 zone=0 use=2"
} >"$T/proc/net/nf_conntrack"
n=$(wc -l <"$T/proc/net/nf_conntrack")
printf '%s\n' "$n" >"$T/proc/sys/net/netfilter/nf_conntrack_count"
ht --no-measure --root "$T" --format json facts >"$TMP/t.json" 2>"$TMP/t.err"
nf() { jget "$TMP/t.json" ".facts[\"conntrack.nat.$1\"].value"; }
# Source NAT: 3 + 1 + 2 + 1 = 7 of the 11 lines.
expect_eq "proc: entries with source NAT" 7 "$(nf entries)"
expect_eq "proc: the busiest NAT address and destination" "198.51.100.7:443/tcp" "$(nf top_destination)"
expect_eq "proc: its NAT address" 192.0.2.1 "$(nf top_source)"
expect_eq "proc: its mappings" 3 "$(nf top_entries)"
expect_eq "proc: NAT addresses to that destination, 192.0.2.1 and .2" 2 "$(nf top_sources)"

# ---- the verdict, on facts files ---------------------------------------------
# nat FILE NAT_ENTRIES TOP_ENTRIES INSERT_FAILED: a host whose dump found them.
nat() {
	cat >"$1" <<EOF
# hosttune facts 1
kernel.release = "6.1.0-13-amd64" from /proc/sys/kernel/osrelease
kernel.version = v6.1.0 from /proc/sys/kernel/osrelease
mem.total = 8589934592 bytes from /proc/meminfo
conntrack.loaded = true from /sys/module/nf_conntrack
conntrack.module = "loaded" from libkmod
net.netfilter.nf_conntrack_max = 262144 entries from /proc/sys/net/netfilter/nf_conntrack_max
net.netfilter.nf_conntrack_count = $(($2 + 1000)) entries from /proc/sys/net/netfilter/nf_conntrack_count
conntrack.stat.drop = 0 packets from /proc/net/stat/nf_conntrack
conntrack.stat.early_drop = 0 entries from /proc/net/stat/nf_conntrack
conntrack.stat.insert_failed = $4 packets from /proc/net/stat/nf_conntrack
conntrack.dump.entries = $(($2 + 1000)) entries from ctnetlink IPCTNL_MSG_CT_GET dump
conntrack.nat.entries = $2 entries from ctnetlink IPCTNL_MSG_CT_GET dump
conntrack.nat.top_destination = "198.51.100.7:443/tcp" from ctnetlink IPCTNL_MSG_CT_GET dump
conntrack.nat.top_source = "192.0.2.1" from ctnetlink IPCTNL_MSG_CT_GET dump
conntrack.nat.top_entries = $3 entries from ctnetlink IPCTNL_MSG_CT_GET dump
conntrack.nat.top_sources = 1 addresses from ctnetlink IPCTNL_MSG_CT_GET dump
EOF
}
# v FILE: "severity case" of nat.ports.
v() {
	ht --facts "$1" --format json audit >"$TMP/v.json" 2>/dev/null
	jget "$TMP/v.json" '.findings[] | select(.rule == "nat.ports") | "\(.severity) \(.case)"'
}
# 90% of 64512 is 58060.8, 75% is 48384.
nat "$TMP/a.facts" 60000 58061 0
expect_eq "58061 of 64512 (90.0%): critical" "critical full" "$(v "$TMP/a.facts")"
nat "$TMP/a.facts" 60000 58060 0
expect_eq "58060 of 64512 (89.99%): warning" "warning high" "$(v "$TMP/a.facts")"
nat "$TMP/a.facts" 60000 48384 0
expect_eq "48384 of 64512 (75%): warning" "warning high" "$(v "$TMP/a.facts")"
nat "$TMP/a.facts" 60000 48383 0
expect_eq "48383 of 64512: ok" "ok room" "$(v "$TMP/a.facts")"
# Insertions failed and one destination holds 21000 of 26000 mappings (more
# than half): a clash; spread (4 of 255000), the same counter is not NAT's.
nat "$TMP/a.facts" 26000 21000 5200
expect_eq "insert_failed, one destination most: a clash" "warning clash" "$(v "$TMP/a.facts")"
expect_contains "a clash: the fix picks ports at random" "--random-fully" \
	"$(jget "$TMP/v.json" '.findings[] | select(.rule == "nat.ports") | .remedy')"
nat "$TMP/a.facts" 255000 4 30
expect_eq "insert_failed, mappings spread: not a clash" "ok room" "$(v "$TMP/a.facts")"
# A failed insertion has the table dumped: no entry with source NAT.
nat "$TMP/a.facts" 0 0 1
expect_eq "no source NAT" "ok none" "$(v "$TMP/a.facts")"
# 41000 entries (40000 + 1000), under 48384 = 75% of 64512, and no failed
# insertion: no destination can be at 75%, so the table is not dumped for it.
nat "$TMP/a.facts" 40000 40000 0
expect_eq "41000 entries, no failed insertion: not judged" "" "$(v "$TMP/a.facts")"
# The finding names the destination and the count; its fix never names a knob
# that does not govern the mappings.
nat "$TMP/a.facts" 60000 58061 0
v "$TMP/a.facts" >/dev/null
expect_contains "critical: names the destination and its NAT address" \
	"The largest holder is 198.51.100.7:443/tcp from 192.0.2.1, with 58061 of it" \
	"$(jget "$TMP/v.json" '.findings[] | select(.rule == "nat.ports") | .explanation')"
case $(jget "$TMP/v.json" '.findings[] | select(.rule == "nat.ports") | .remedy') in
*nf_conntrack_max* | *ip_local_port_range*) not_ok "the fix names no knob that does not govern it" ;;
*) ok "the fix names no knob that does not govern it" ;;
esac

# ---- live: an nft snat rule in a private network namespace -------------------
if [ "$(id -u)" -ne 0 ] || ! command -v nft >/dev/null || ! command -v conntrack >/dev/null ||
	! unshare -n true 2>/dev/null; then
	echo "# SKIP live: needs root, unshare -n, nft and conntrack(8)"
	finish
fi
HOLD=${HT_BUILD_TESTS_DIR:-$HT_TESTS_DIR}/tcp-hold
cat >"$TMP/inner.sh" <<EOF
set -e
ip link set lo up
ip addr add 127.0.0.2/8 dev lo
nft -f - <<'NFT'
table ip htnat {
	chain post {
		type nat hook postrouting priority srcnat;
		ip daddr 127.0.0.1 tcp dport 9321 snat to 127.0.0.2
	}
}
NFT
# 150 connections held open (tcp-hold), both ends in one process.
mkfifo "$TMP/hold.in"
"$HOLD" 127.0.0.1 9321 150 <"$TMP/hold.in" >"$TMP/hold.out" &
exec 3>"$TMP/hold.in"
for _ in \$(seq 50); do grep -q '^open' "$TMP/hold.out" 2>/dev/null && break; sleep 0.1; done
"$HOSTTUNE" --rules "$HT_RULES_DIR" --no-measure --format json facts >"$TMP/live.json"
conntrack -L -p tcp --dport 9321 -n 2>/dev/null >"$TMP/ct.txt" || true
# An audit dumps the table only from 48384 entries or a failed insertion.
"$HOSTTUNE" --rules "$HT_RULES_DIR" --no-measure --format json audit >"$TMP/live-audit.json" || true
exec 3>&-
wait
EOF
unshare -n bash "$TMP/inner.sh" >"$TMP/inner.out" 2>&1 || { cat "$TMP/inner.out"; not_ok "live: the namespace ran"; finish; }
ct=$(grep -c 'dst=127.0.0.2 ' "$TMP/ct.txt")
expect_eq "live: conntrack -L shows 150 mappings to 127.0.0.2" 150 "$ct"
expect_eq "live: hosttune counts what conntrack -L does" "$ct" \
	"$(jget "$TMP/live.json" '.facts["conntrack.nat.top_entries"].value')"
expect_eq "live: the destination" "127.0.0.1:9321/tcp" \
	"$(jget "$TMP/live.json" '.facts["conntrack.nat.top_destination"].value')"
expect_eq "live: the NAT address" 127.0.0.2 "$(jget "$TMP/live.json" '.facts["conntrack.nat.top_source"].value')"
expect_eq "live: 150 entries, no failed insertion: the audit does not dump for NAT" "" \
	"$(jget "$TMP/live-audit.json" '.findings[] | select(.rule == "nat.ports" and .applicable) | .severity')"
finish
