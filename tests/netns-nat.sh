#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Source NAT done inside a network namespace (netns.nat): a router namespace,
# a Kubernetes node in a container, Docker in Docker. Its mappings live in its
# own conntrack table; each mapping to one destination from one NAT address
# takes a source port of that address, 64512 of them (1024-65535,
# nf_nat_l4proto_unique_tuple() in net/netfilter/nf_nat_proto.c).
#
# - A --root tree: a namespace's table is read (ROOT/proc/PID/net/nf_conntrack)
#   only when its count reaches 48384 (75% of 64512) or an insertion failed;
#   otherwise the nat_* facts are unavailable and say why.
# - Facts files: the verdict against the arithmetic (90% critical, 75%
#   warning, a clash when insertions failed and one destination holds most
#   mappings), the holder and namespace named, the fix never the host's
#   nf_conntrack_max or ip_local_port_range.
# - Live, as root: a namespace of its own (unshare -n) with an nft snat rule;
#   hosttune's counts agree with conntrack -L run inside it in the same run,
#   before (not dumped) and after (dumped) its table passes 48384 entries.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh" || exit 99
[ -n "${TMP:-}" ] && [ -d "$TMP" ] || exit 99

# ---- a tree ------------------------------------------------------------------
T=$TMP/tree
netns_tree "$T"
# ns INO PID COMM ENTRIES INSERT_FAILED: a process PID alone in namespace INO
# whose conntrack table holds ENTRIES (hex) with INSERT_FAILED (hex) on one CPU.
ns() {
	mkdir -p "$T/proc/$2/ns" "$T/proc/$2/net/stat"
	ln -s "net:[$1]" "$T/proc/$2/ns/net"
	printf '%s\n' "$3" >"$T/proc/$2/comm"
	printf '0::/lxc.payload.%s\n' "$3" >"$T/proc/$2/cgroup"
	{
		echo "entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart"
		echo "$4  00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 $5 00000000 00000000 00000000  00000000 00000000 00000000 00000000"
	} >"$T/proc/$2/net/stat/nf_conntrack"
}
# 500: 0xBD00 = 48384 entries, the gate: its table is read.
ns 4026532500 500 router 0000bd00 00000000
# 600: 0x10 = 16 entries, no failed insertion: not read.
ns 4026532600 600 quiet 00000010 00000000
# 700: 16 entries but 1 failed insertion: read.
ns 4026532700 700 clashing 00000010 00000001
{
	# 3 mappings from 192.0.2.1 to 198.51.100.7:443 (the reply goes to 192.0.2.1,
	# not to the original source 10.0.0.5), 1 from 192.0.2.2 to the same.
	for p in 40001 40002 40003; do
		echo "ipv4     2 tcp      6 117 TIME_WAIT src=10.0.0.5 dst=198.51.100.7 sport=$p dport=443 src=198.51.100.7 dst=192.0.2.1 sport=443 dport=$p [ASSURED] mark=0 zone=0 use=2"
	done
	echo "ipv4     2 tcp      6 117 TIME_WAIT src=10.0.0.6 dst=198.51.100.7 sport=40009 dport=443 src=198.51.100.7 dst=192.0.2.2 sport=443 dport=40009 [ASSURED] mark=0 zone=0 use=2"
	# No NAT: the reply goes to the original source.
	echo "ipv4     2 tcp      6 431999 ESTABLISHED src=10.0.0.5 dst=10.0.0.7 sport=50001 dport=22 src=10.0.0.7 dst=10.0.0.5 sport=22 dport=50001 [ASSURED] mark=0 zone=0 use=2"
} >"$T/proc/500/net/nf_conntrack"
# 700's table: 1 mapping to 203.0.113.53:53/udp from 192.0.2.9.
echo "ipv4     2 udp      17 20 src=10.1.0.5 dst=203.0.113.53 sport=5353 dport=53 src=203.0.113.53 dst=192.0.2.9 sport=53 dport=5353 mark=0 zone=0 use=2" \
	>"$T/proc/700/net/nf_conntrack"
# 600 has a table file too, which must not be read (its gate is closed).
cp "$T/proc/500/net/nf_conntrack" "$T/proc/600/net/nf_conntrack"
ht --no-measure --root "$T" --format json facts >"$TMP/t.json" 2>"$TMP/t.err" ||
	{ cat "$TMP/t.err"; not_ok "tree: facts"; finish; }
tf() { jget "$TMP/t.json" ".facts[\"netns.$1\"].value"; }
te() { jget "$TMP/t.json" ".facts[\"netns.$1\"].error"; }
ts() { jget "$TMP/t.json" ".facts[\"netns.$1\"].source"; }
# Source NAT: 3 + 1 of the 5 lines.
expect_eq "tree: 48384 entries: the table read, its entries with source NAT" 4 "$(tf 4026532500.nat_entries)"
expect_eq "tree: the busiest NAT address and destination" "198.51.100.7:443/tcp" "$(tf 4026532500.nat_top_destination)"
expect_eq "tree: its NAT address" 192.0.2.1 "$(tf 4026532500.nat_top_source)"
expect_eq "tree: its mappings" 3 "$(tf 4026532500.nat_top_entries)"
expect_eq "tree: NAT addresses to that destination, 192.0.2.1 and .2" 2 "$(tf 4026532500.nat_top_sources)"
expect_eq "tree: read from the namespace's own table" /proc/500/net/nf_conntrack "$(ts 4026532500.nat_entries)"
expect_eq "tree: 16 entries, none failed: not read" ENODATA "$(te 4026532600.nat_top_entries)"
expect_contains "tree: ... and says why, with its count" "not dumped: 16 entries in its table" \
	"$(ts 4026532600.nat_top_entries)"
expect_eq "tree: a failed insertion has it read" "1 203.0.113.53:53/udp 192.0.2.9" \
	"$(tf 4026532700.nat_top_entries) $(tf 4026532700.nat_top_destination) $(tf 4026532700.nat_top_source)"
# A namespace without conntrack: the reason is its missing stat file.
rm -r "$T/proc/600/net/stat"
ht --no-measure --root "$T" --format json facts >"$TMP/t.json" 2>/dev/null
expect_eq "tree: no conntrack in it: nat_* unavailable with the file's errno" ENOENT \
	"$(te 4026532600.nat_entries)"

# The kernel prints each counter as "%08x" of an unsigned int: a wider one
# (7fffffffffffffff) is no kernel's, and its products would overflow the
# rules' arithmetic. Unavailable with EINVAL; the audit goes on (exit 0 or 1).
printf 'entries insert_failed drop early_drop\n7fffffffffffffff 00000000 00000000 00000000\n' \
	>"$T/proc/700/net/stat/nf_conntrack"
ht --no-measure --root "$T" --format json facts >"$TMP/t.json" 2>/dev/null
expect_eq "tree: a 16-digit counter is no kernel's: EINVAL" EINVAL "$(te 4026532700.conntrack_count)"
ht --no-measure --root "$T" audit >"$TMP/t.txt" 2>&1; rc=$?
expect_eq "tree: ... and the audit goes on" yes "$([ "$rc" -le 1 ] && echo yes || echo "no: $rc $(tail -n 2 "$TMP/t.txt")")"
# Nothing unknown is shown as such: 700's table with no entry of source NAT
# (the none case names no destination).
printf 'entries insert_failed drop early_drop\n0000bd00 00000000 00000000 00000000\n' \
	>"$T/proc/700/net/stat/nf_conntrack"
echo "ipv4     2 tcp      6 431999 ESTABLISHED src=10.0.0.5 dst=10.0.0.7 sport=50001 dport=22 src=10.0.0.7 dst=10.0.0.5 sport=22 dport=50001 [ASSURED] mark=0 zone=0 use=2" \
	>"$T/proc/700/net/nf_conntrack"
ht --no-measure --root "$T" -v audit >"$TMP/t.txt" 2>&1
expect_eq "tree: the namespace without NAT: ok, case none" "ok none" \
	"$(ht --no-measure --root "$T" --format json audit 2>/dev/null |
		jq -r '.findings[] | select(.rule == "netns.nat" and .instance == "4026532700") | "\(.severity) \(.case)"')"
expect_eq "tree: no text says (unavailable)" "" "$(grep -F '(unavailable)' "$TMP/t.txt")"

# ---- the verdict, on facts files ----------------------------------------------
base=$TMP/base.facts
{
	cat <<'EOF'
kernel.release = "6.1.0-13-amd64" from /proc/sys/kernel/osrelease
kernel.version = v6.1.0 from /proc/sys/kernel/osrelease
mem.total = 8589934592 bytes from /proc/meminfo
net.netfilter.nf_conntrack_max = 262144 entries from /proc/sys/net/netfilter/nf_conntrack_max
EOF
	netns_facts 4026532500 4242 neutron-l3-agen /system.slice/neutron-l3-agent.service systemd
	cat <<'EOF'
netns.4026532500.conntrack_count = 70000 entries from /proc/4242/net/stat/nf_conntrack
netns.4026532500.conntrack_drops = 0 packets from /proc/4242/net/stat/nf_conntrack
netns.4026532500.conntrack_early_drop = 0 entries from /proc/4242/net/stat/nf_conntrack
netns.4026532500.conntrack_insert_failed = 0 packets from /proc/4242/net/stat/nf_conntrack
netns.4026532500.nat_entries = 60000 entries from ctnetlink IPCTNL_MSG_CT_GET dump in the namespace
netns.4026532500.nat_top_destination = "198.51.100.7:443/tcp" from ctnetlink IPCTNL_MSG_CT_GET dump in the namespace
netns.4026532500.nat_top_source = "192.0.2.1" from ctnetlink IPCTNL_MSG_CT_GET dump in the namespace
netns.4026532500.nat_top_entries = 58061 entries from ctnetlink IPCTNL_MSG_CT_GET dump in the namespace
netns.4026532500.nat_top_sources = 1 addresses from ctnetlink IPCTNL_MSG_CT_GET dump in the namespace
EOF
} | facts_file "$base"
# Bounds a kernel keeps: a table's count is an int, NAT addresses no fewer than 0.
vary "$base" "$TMP/bad.facts" "netns.4026532500.conntrack_count=9223372036854775807 entries"
out=$(ht --facts "$TMP/bad.facts" audit 2>&1); rc=$?
expect_eq "facts: a count past INT32_MAX: exit 2, the file, line and bound" \
	"2 yes" "$rc $(case $out in *"bad.facts:"*"must be at most 2147483647"*) echo yes ;; *) echo "no: $out" ;; esac)"
vary "$base" "$TMP/bad.facts" "netns.4026532500.nat_top_sources=-1 addresses"
out=$(ht --facts "$TMP/bad.facts" audit 2>&1); rc=$?
expect_eq "facts: -1 NAT addresses: exit 2, must not be negative" \
	"2 yes" "$rc $(case $out in *"must not be negative"*) echo yes ;; *) echo "no: $out" ;; esac)"

# v NAME=VALUE...: "SEVERITY CASE" of netns.nat on the base host varied.
v() {
	vary "$base" "$TMP/v.facts" "$@"
	ht --facts "$TMP/v.facts" --format json audit >"$TMP/v.json" 2>/dev/null
	jget "$TMP/v.json" '.findings[] | select(.rule == "netns.nat") | "\(.severity) \(.case // "-")"'
}
# 90% of 64512 is 58060.8, 75% is 48384.
expect_eq "58061 of 64512 (90.0%): critical" "critical full" "$(v)"
x=$(jget "$TMP/v.json" '.findings[] | select(.rule == "netns.nat") | .explanation + " FIX " + .remedy')
expect_contains "critical: the namespace named by its process and cgroup" \
	"neutron-l3-agen, PID 4242, cgroup /system.slice/neutron-l3-agent.service" "$x"
expect_contains "critical: the holder, the destination from the NAT address" \
	"198.51.100.7:443/tcp from 192.0.2.1, with 58061" "$x"
expect_contains "critical: where it is set: this namespace's own NAT rules" "this namespace's own NAT rules" "$x"
expect_contains "critical: the fix picks ports at random or adds addresses" "--random-fully" "${x#* FIX }"
case ${x#* FIX } in
*nf_conntrack_max* | *ip_local_port_range* | *sysctl.d*) not_ok "the fix names no knob that does not govern it" "$x" ;;
*) ok "the fix names no knob that does not govern it" ;;
esac
expect_eq "no file of the host as its fix" null \
	"$(jget "$TMP/v.json" '.findings[] | select(.rule == "netns.nat") | .fix')"
expect_eq "58060 of 64512 (89.99%): warning" "warning high" \
	"$(v "netns.4026532500.nat_top_entries=58060 entries")"
expect_eq "48384 of 64512 (75%): warning" "warning high" \
	"$(v "netns.4026532500.nat_top_entries=48384 entries")"
expect_eq "48383 of 64512: ok" "ok -" "$(v "netns.4026532500.nat_top_entries=48383 entries")"
# Insertions failed and one destination holds 21000 of 26000 mappings (more
# than half): a clash; spread (4 of 26000), the same counter is not NAT's.
expect_eq "insert_failed, one destination most: a clash" "warning clash" \
	"$(v "netns.4026532500.nat_entries=26000 entries" "netns.4026532500.nat_top_entries=21000 entries" \
		"netns.4026532500.conntrack_insert_failed=5200 packets")"
expect_contains "a clash: says how many insertions failed" "5200 insertions failed" \
	"$(jget "$TMP/v.json" '.findings[] | select(.rule == "netns.nat") | .explanation')"
expect_eq "insert_failed, mappings spread: ok" "ok -" \
	"$(v "netns.4026532500.nat_entries=26000 entries" "netns.4026532500.nat_top_entries=4 entries" \
		"netns.4026532500.conntrack_insert_failed=30 packets")"
expect_eq "no source NAT" "ok none" \
	"$(v "netns.4026532500.nat_entries=0 entries" "netns.4026532500.nat_top_entries=0 entries" \
		"netns.4026532500.conntrack_insert_failed=1 packets")"
# A table under the gate was not dumped: nothing to judge, no row.
expect_eq "16 entries, none failed: no row" "" \
	"$(v "netns.4026532500.conntrack_count=16 entries" \
		"netns.4026532500.nat_top_entries=unavailable ENODATA entries")"
# Past the gate but unread (another user's table): not applicable, with why.
v "netns.4026532500.nat_top_entries=unavailable EACCES entries" >/dev/null
expect_eq "70000 entries, the table unread: not applicable" false \
	"$(jget "$TMP/v.json" '.findings[] | select(.rule == "netns.nat") | .applicable')"

# ---- live: NAT in a namespace of its own ---------------------------------------
if [ "$(id -u)" -ne 0 ] || ! unshare -n true 2>/dev/null || ! command -v nft >/dev/null ||
	! command -v conntrack >/dev/null || ! command -v nsenter >/dev/null ||
	! command -v python3 >/dev/null; then
	echo "# SKIP live: needs root, unshare -n, nft, conntrack(8), nsenter and python3"
	finish
fi
# 48400 UDP flows and 150 TCP connections must fit the one global table.
max=$(cat /proc/sys/net/netfilter/nf_conntrack_max 2>/dev/null || echo 0)
if [ "${max:-0}" -lt 60000 ]; then
	echo "# SKIP live: net.netfilter.nf_conntrack_max is $max, below the 60000 the test fills"
	finish
fi
host_lock "48550 entries of the one global conntrack table (nf_conntrack_max)"
# In the namespace: 127.0.0.2 on lo, every packet to 127.0.0.1 given source
# 127.0.0.2 (snat); 150 TCP connections to 127.0.0.1:9321 held open (left in
# the accept queue), then, on a line from the test, one UDP datagram to each
# of 127.0.0.1:10000-58399 (48400 flows of their own).
cat >"$TMP/inner.sh" <<'EOF'
ip link set lo up
ip addr add 127.0.0.2/8 dev lo
nft -f - <<'NFT'
table ip htnsnat {
	chain post {
		type nat hook postrouting priority srcnat;
		ip daddr 127.0.0.1 snat to 127.0.0.2
	}
}
NFT
exec python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 9321)); s.listen(200)
cs = []
for i in range(150):
    c = socket.socket(); c.connect(("127.0.0.1", 9321)); cs.append(c)
print("held", flush=True)
sys.stdin.readline()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for p in range(10000, 58400):
    u.sendto(b"", ("127.0.0.1", p))
print("sprayed", flush=True)
sys.stdin.readline()
'
EOF
mkfifo "$TMP/in"
unshare -n bash "$TMP/inner.sh" <"$TMP/in" >"$TMP/inner.out" 2>&1 &
exec 3>"$TMP/in"
for _ in $(seq 100); do grep -q held "$TMP/inner.out" 2>/dev/null && break; sleep 0.1; done
pid=$(pgrep -f "s.listen\(200\)" | head -1)
if [ -z "$pid" ] || ! grep -q held "$TMP/inner.out"; then
	cat "$TMP/inner.out"
	not_ok "live: the namespace ran"
	exec 3>&-
	finish
fi
ino=$(stat -L -c %i "/proc/$pid/ns/net")
inside() { nsenter --net="/proc/$pid/ns/net" "$@"; }
# Before: 150 entries (and perhaps a few more), under 48384, none failed: not dumped.
ht --no-measure --format json facts >"$TMP/live1.json" 2>"$TMP/live1.err"
c1=$(inside conntrack -C 2>/dev/null)
expect_eq "live: 150 connections, not dumped" ENODATA \
	"$(jget "$TMP/live1.json" ".facts[\"netns.$ino.nat_top_entries\"].error")"
expect_contains "live: ... with the namespace's count, as conntrack -C gives it" \
	"not dumped: $c1 entries" \
	"$(jget "$TMP/live1.json" ".facts[\"netns.$ino.nat_top_entries\"].source")"
echo >&3
for _ in $(seq 200); do grep -q sprayed "$TMP/inner.out" 2>/dev/null && break; sleep 0.1; done
# After: 150 + 48400 entries, every one with source NAT to 127.0.0.2.
inside conntrack -L -n >"$TMP/ct.txt" 2>/dev/null
ht --no-measure --format json facts >"$TMP/live2.json" 2>"$TMP/live2.err"
inside conntrack -L -n >"$TMP/ct2.txt" 2>/dev/null
nat1=$(grep -c 'dst=127.0.0.2 ' "$TMP/ct.txt")
nat2=$(grep -c 'dst=127.0.0.2 ' "$TMP/ct2.txt")
got=$(jget "$TMP/live2.json" ".facts[\"netns.$ino.nat_entries\"].value")
# UDP flows may time out between the two listings: hosttune's count lies between them.
if [ "$nat1" -ge 48384 ] && [ "$got" -le "$nat1" ] && [ "$got" -ge "$nat2" ]; then
	ok "live: hosttune counts the entries with source NAT that conntrack -L does ($got, $nat1 before, $nat2 after)"
else
	not_ok "live: hosttune counts the entries with source NAT that conntrack -L does" \
		"conntrack -L: $nat1 before, $nat2 after; hosttune: $got" "$(head -c 600 "$TMP/live2.err")"
fi
hold=$(grep 'dport=9321 ' "$TMP/ct.txt" | grep -c 'dst=127.0.0.2 ')
expect_eq "live: conntrack -L shows 150 mappings to 127.0.0.1:9321" 150 "$hold"
expect_eq "live: the busiest destination, its NAT address and mappings" \
	"127.0.0.1:9321/tcp 127.0.0.2 $hold" \
	"$(jget "$TMP/live2.json" "[.facts[\"netns.$ino.nat_top_destination\",\"netns.$ino.nat_top_source\",\"netns.$ino.nat_top_entries\"].value] | map(tostring) | join(\" \")")"
expect_contains "live: dumped in the namespace" "dump in the namespace" \
	"$(jget "$TMP/live2.json" ".facts[\"netns.$ino.nat_entries\"].source")"
ht --no-measure --format json audit >"$TMP/live-audit.json" 2>/dev/null
expect_eq "live: 150 of 64512 to one destination: ok" ok \
	"$(jget "$TMP/live-audit.json" ".findings[] | select(.rule == \"netns.nat\" and .instance == \"$ino\") | .severity")"
exec 3>&-
wait
finish
