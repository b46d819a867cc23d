#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Interface counters and overlays on devices made for the test in a private
# network and mount namespace (nothing on the host changes: the devices, the
# sysfs mount and the child namespace die with it):
#  - a veth pair va/vb, vb in a child namespace, 100 UDP datagrams across it
#    while `facts --sample` reads twice: nic.va.stats.{tx,rx}_packets.delta
#    are the 100 datagrams and the 100 ICMP port unreachables that answer
#    them, and the NIC rules are quiet;
#  - VXLAN devices over va: vx0 without outer UDP checksums, vx1 with them
#    (the default). With va's tx-udp_tnl-segmentation turned off (ethtool
#    -K), vx0 gives the offload warning naming va and the feature, vx1 none
#    (its packets need tx-udp_tnl-csum-segmentation, still on); with va's MTU
#    lowered to 1400, vx0's 1450 gives the MTU warning with 1400 - 50 = 1350;
#  - with the feature back on and MTU 1500, no overlay finding.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "# SKIP needs root for unshare -nm"
	exit 77
fi
for tool in unshare ip ethtool jq bash seq nsenter; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "# SKIP $tool not installed"
		exit 77
	fi
done

cat >"$TMP/inner.sh" <<'EOF'
set -u
ht() { "$HOSTTUNE" --rules "$HT_RULES_DIR" --no-measure --format json "$@"; }
mount -t sysfs sysfs /sys || exit 1
if [ -d /run/udev ]; then mount -t tmpfs tmpfs /run/udev || exit 1; fi
# No IPv6 in this namespace: no router or neighbour solicitations to count.
echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6 2>/dev/null
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6 2>/dev/null
ip link set lo up
ip link add va type veth peer name vb || exit 77
unshare -n sleep 300 &
child=$!
# Until the child has left this namespace (unshare(2) done), however slow the machine.
for _ in $(seq 100); do [ "$(readlink /proc/$child/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break; sleep 0.05; done
# No IPv6 in the child either (router and neighbour solicitations from vb).
nsenter -t "$child" -n sh -c 'echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6;
	echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6' 2>/dev/null
ip link set vb netns "$child" || exit 1
# The child answers every datagram to a closed port with an ICMP port
# unreachable: no rate limit on them in its namespace (these sysctls are the
# namespace's own).
nsenter -t "$child" -n sh -c 'ip link set lo up; ip addr add 10.99.0.2/24 dev vb;
	ip link set vb up; echo 0 >/proc/sys/net/ipv4/icmp_ratelimit;
	echo 100000 >/proc/sys/net/ipv4/icmp_msgs_per_sec;
	echo 100000 >/proc/sys/net/ipv4/icmp_msgs_burst' || exit 1
ip addr add 10.99.0.1/24 dev va && ip link set va up || exit 1
# Resolve the neighbours first (both ways): no ARP in the measured interval.
# vb learns va from va's request as STALE, and its first reply puts that
# entry in DELAY: 5 s later (delay_first_probe_time) vb probes va with a
# unicast ARP, one packet each way. Wait that out, then the entries stay
# REACHABLE for 15 s or more (base_reachable_time 30 s, randomised).
bash -c 'echo x >/dev/udp/10.99.0.2/9' 2>/dev/null
sleep 6.5
send() { bash -c 'for i in $(seq "$1"); do echo x >/dev/udp/10.99.0.2/9; done' sh "$1"; }

# 100 datagrams, sent after the first reading and long before the second.
(sleep 1.5; send 100) &
sender=$!
ht facts --sample 5s >"$TMP/sampled.json" || exit 1
wait "$sender"
ht audit --sample 2s >"$TMP/clean-audit.json"
echo "clean audit exit $?" >"$TMP/clean-audit.rc"

ip link add vx0 type vxlan id 42 dev va remote 10.99.0.2 dstport 4789 noudpcsum || exit 77
ip link add vx1 type vxlan id 43 dev va remote 10.99.0.2 dstport 4790 || exit 1
ip link set vx0 up && ip link set vx1 up || exit 1
ethtool -K va tx-udp_tnl-segmentation off || exit 1
ethtool -k va >"$TMP/ethtool-k.txt" 2>&1
ip link set va mtu 1400 || exit 1
ip -d link show vx0 >"$TMP/vx0.txt"
ht facts >"$TMP/overlay-facts.json" || exit 1
ht audit >"$TMP/overlay-audit.json"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --no-measure --format prometheus audit >"$TMP/overlay.prom"

ethtool -K va tx-udp_tnl-segmentation on || exit 1
ip link set va mtu 1500 || exit 1
ht audit >"$TMP/fixed-audit.json"
kill "$child" 2>/dev/null
exit 0
EOF

HOSTTUNE=$HOSTTUNE HT_RULES_DIR=$HT_RULES_DIR TMP=$TMP unshare -nm sh "$TMP/inner.sh" \
	>"$TMP/inner.out" 2>&1
rc=$?
sed 's/^/# /' "$TMP/inner.out"
if [ $rc -eq 77 ]; then
	echo "# SKIP the kernel cannot make a veth pair or a VXLAN device"
	exit 77
fi
if [ $rc -ne 0 ] && [ ! -s "$TMP/sampled.json" ]; then
	echo "# SKIP unshare -nm or sysfs mount refused (exit $rc)"
	exit 77
fi
expect_eq "namespace script ran to the end" 0 "$rc"

fact() { jget "$1" ".facts[\"$2\"].value"; }
# finding FILE RULE FIELD: a field of the finding of RULE ("" when there is none)
finding() { jq -r --arg id "$2" "[.findings[] | select(.rule == \$id)][0].$3 // empty" "$1"; }

J=$TMP/sampled.json
# Over the interval va sent the 100 datagrams and received the 100 ICMP port
# unreachables, nothing else (ARP resolved before, no IPv6): deltas of 100.
expect_eq "va tx_packets.delta: 100 datagrams" 100 "$(fact "$J" nic.va.stats.tx_packets.delta)"
expect_eq "va rx_packets.delta: 100 port unreachables" 100 \
	"$(fact "$J" nic.va.stats.rx_packets.delta)"
expect_eq "va rx_errors.delta 0" 0 "$(fact "$J" nic.va.stats.rx_errors.delta)"
expect_eq "va carrier_changes.delta 0" 0 "$(fact "$J" nic.va.stats.carrier_changes.delta)"
expect_contains "delta source names the interval" "over --sample's " \
	"$(jget "$J" '.facts["nic.va.stats.tx_packets.delta"].source')"
expect_eq "tx_packets source: rtnetlink" "rtnetlink RTM_GETLINK IFLA_STATS64" \
	"$(jget "$J" '.facts["nic.va.stats.tx_packets"].source')"
expect_eq "sample.seconds: at least the 5 s asked" true "$(jq '.facts["sample.seconds"].value >= 5' "$J")"
# The since-boot value is at least the 1 + 100 datagrams sent.
expect_eq "va tx_packets >= 101" true "$(jq '.facts["nic.va.stats.tx_packets"].value >= 101' "$J")"
expect_eq "va is no overlay" none "$(fact "$J" nic.va.overlay)"
expect_eq "softnet.dropped.delta is a count" true \
	"$(jq '.facts["softnet.dropped.delta"].value >= 0' "$J")"

J=$TMP/clean-audit.json
for rule in nic.errors nic.drops nic.flaps nic.overlay_offload nic.overlay_mtu; do
	expect_eq "clean veth: no $rule finding" "" \
		"$(jq -r --arg id "$rule" '[.findings[] | select(.rule == $id and .applicable and .severity != "ok")] | length | select(. > 0)' "$J")"
done

# ethtool agrees: tx-udp_tnl-segmentation off (not fixed on veth), the csum variant on.
expect_contains "ethtool -k va: tx-udp_tnl-segmentation off" "tx-udp_tnl-segmentation: off" \
	"$(cat "$TMP/ethtool-k.txt")"
expect_contains "ethtool -k va: tx-udp_tnl-csum-segmentation on" \
	"tx-udp_tnl-csum-segmentation: on" "$(cat "$TMP/ethtool-k.txt")"
expect_contains "vx0 sends no UDP checksums" "noudpcsum" "$(cat "$TMP/vx0.txt")"

J=$TMP/overlay-facts.json
expect_eq "vx0 overlay vxlan" vxlan "$(fact "$J" nic.vx0.overlay)"
expect_eq "vx0 underlay va (IFLA_VXLAN_LINK)" va "$(fact "$J" nic.vx0.underlay)"
# VXLAN over IPv4: 20 (IP) + 8 (UDP) + 8 (VXLAN) + 14 (inner Ethernet) = 50.
expect_eq "vx0 headroom 50" 50 "$(fact "$J" nic.vx0.overlay_headroom)"
# The kernel set vx0's MTU from va's 1500 at creation: 1500 - 50 = 1450.
expect_eq "vx0 MTU 1450" 1450 "$(fact "$J" nic.vx0.mtu)"
expect_eq "va MTU lowered to 1400" 1400 "$(fact "$J" nic.vx0.underlay_mtu)"
expect_eq "vx0 needs tx-udp_tnl-segmentation" tx-udp_tnl-segmentation \
	"$(fact "$J" nic.vx0.underlay_tnl_feature)"
expect_eq "vx0: off on va" false "$(fact "$J" nic.vx0.underlay_tnl_segmentation)"
expect_eq "vx0: not fixed on va" false "$(fact "$J" nic.vx0.underlay_tnl_segmentation_fixed)"
expect_eq "vx1 needs tx-udp_tnl-csum-segmentation" tx-udp_tnl-csum-segmentation \
	"$(fact "$J" nic.vx1.underlay_tnl_feature)"
expect_eq "vx1: on on va" true "$(fact "$J" nic.vx1.underlay_tnl_segmentation)"

J=$TMP/overlay-audit.json
expect_eq "offload finding for vx0: warning" warning \
	"$(jq -r '[.findings[] | select(.rule == "nic.overlay_offload" and .instance == "vx0")][0].severity' "$J")"
expect_contains "offload finding names the underlay and the feature" \
	"sends through va, whose tx-udp_tnl-segmentation is off" \
	"$(jq -r '[.findings[] | select(.rule == "nic.overlay_offload" and .instance == "vx0")][0].explanation' "$J")"
expect_contains "offload remedy: the driver offers it" "ethtool -K va tx-udp_tnl-segmentation on" \
	"$(jq -r '[.findings[] | select(.rule == "nic.overlay_offload" and .instance == "vx0")][0].remedy' "$J")"
remedy=$(jq -r '[.findings[] | select(.rule == "nic.overlay_offload" and .instance == "vx0")][0].remedy' "$J")
case "$remedy" in
*sysctl\ -w* | *net.core.* | *net.ipv4.*) not_ok "offload remedy names no sysctl" "$remedy" ;;
*) ok "offload remedy names no sysctl" ;;
esac
expect_eq "no offload finding for vx1 (its feature is on)" 0 \
	"$(jq '[.findings[] | select(.rule == "nic.overlay_offload" and .instance == "vx1" and .severity != "ok")] | length' "$J")"
# 1450 > 1400 - 50 = 1350: the MTU that fits is 1350.
expect_eq "MTU finding for vx0: warning" warning \
	"$(jq -r '[.findings[] | select(.rule == "nic.overlay_mtu" and .instance == "vx0")][0].severity' "$J")"
expect_eq "MTU finding: recommended 1350" 1350 \
	"$(jq -r '[.findings[] | select(.rule == "nic.overlay_mtu" and .instance == "vx0")][0].recommended' "$J")"
expect_eq "MTU finding: current 1450" 1450 \
	"$(jq -r '[.findings[] | select(.rule == "nic.overlay_mtu" and .instance == "vx0")][0].current' "$J")"

# Prometheus: the offload state and the MTU that fits, labelled by device.
P=$(cat "$TMP/overlay.prom")
expect_contains "prometheus: vx0 segments in software" \
	'hosttune_nic_overlay_tunnel_segmentation{device="vx0",underlay="va",feature="tx-udp_tnl-segmentation"} 0' "$P"
expect_contains "prometheus: vx1 offloaded" \
	'hosttune_nic_overlay_tunnel_segmentation{device="vx1",underlay="va",feature="tx-udp_tnl-csum-segmentation"} 1' "$P"
expect_contains "prometheus: vx0 MTU that fits, 1400 - 50" \
	'hosttune_nic_overlay_mtu_fit_bytes{device="vx0"} 1350' "$P"

J=$TMP/fixed-audit.json
expect_eq "feature on and MTU 1500: no overlay finding" 0 \
	"$(jq '[.findings[] | select((.rule == "nic.overlay_offload" or .rule == "nic.overlay_mtu") and .applicable and .severity != "ok")] | length' "$J")"

finish
