#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# rules/netdev.rules on the nic-counters fixture tree (a clean eth0, an eth1
# with CRC, frame and missed errors and 7 carrier changes, a vxlan0, two
# online CPUs 0 and 2 in /proc/net/softnet_stat, up 3 h 12 min): the
# since-boot findings and their arithmetic; then the same host with the
# counters read twice (facts --sample over the static tree, deltas varied
# in the facts file): the findings over the interval, worded as such.
. "$(dirname "$0")/lib.sh"

R=$FIXTURES/nic-counters/root
# finding JSON RULE INSTANCE FIELD ("" for a host rule's instance)
finding() {
	jq -r --arg id "$2" --arg inst "$3" \
		"[.findings[] | select(.rule == \$id and ((.instance // \"\") == \$inst))][0].$4 // \"none\"" "$1"
}

ht --root "$R" --format json audit >"$TMP/boot.json"
expect_eq "since boot: audit exits 1 (warnings)" 1 $?
J=$TMP/boot.json

# eth1: rx_errors 1234 (CRC 1200 + frame 34) + rx_missed_errors 66 = 1300 bad
# frames of 2000000 + 1300 = 2001300 that arrived: 1300 / 2001300 = 0.06496%.
expect_eq "eth1 errors: warning" warning "$(finding "$J" nic.errors eth1 severity)"
expect_eq "eth1 errors: 1300 bad frames" 1300 "$(finding "$J" nic.errors eth1 current)"
text=$(finding "$J" nic.errors eth1 explanation)
expect_contains "eth1 errors: the share of 2001300" "1300 of 2001300 frames that arrived (0.065%)" "$text"
expect_contains "eth1 errors: the counters" "CRC errors 1200, frame errors 34, FIFO overruns 0, missed 66" "$text"
# /proc/uptime 11532 s = 3 h (10800 s) + 12 min (720 s) + 12 s.
expect_contains "eth1 errors: since boot, said as such" "since it was created (at most since boot, 3 h 12 min ago)" "$text"
expect_contains "eth1 errors: the link for CRC errors" "the cable, the optics or the switch port" "$text"
expect_contains "eth1 errors: the ring for missed frames" "the host did not empty its receive ring" "$text"
expect_contains "eth1 remedy: the link, not a sysctl" "the link of eth1, not a sysctl" \
	"$(finding "$J" nic.errors eth1 remedy)"
expect_eq "eth0 (no errors): no nic.errors finding" none "$(finding "$J" nic.errors eth0 severity)"
# 7 carrier changes since it was created: more than the 1 or 2 of bringing it up.
expect_eq "eth1 flaps since boot: info" info "$(finding "$J" nic.flaps eth1 severity)"
expect_eq "eth1 flaps: 7 changes" 7 "$(finding "$J" nic.flaps eth1 current)"
expect_eq "eth0 (2 changes): no flap finding" none "$(finding "$J" nic.flaps eth0 severity)"
# Drops are judged over an interval only.
expect_eq "eth1 drops since boot: no finding" none "$(finding "$J" nic.drops eth1 severity)"

# softnet: dropped 0 + 0x3e8 = 1000 of processed 0x1e240 + 0xf4240 = 1123456
# plus the 1000 dropped: 1000 / 1124456 = 0.0889%; CPU 2 (column 13) dropped all.
expect_eq "softnet drops: warning" warning "$(finding "$J" softnet.drops "" severity)"
expect_eq "softnet drops: 1000" 1000 "$(finding "$J" softnet.drops "" current)"
text=$(finding "$J" softnet.drops "" explanation)
expect_contains "softnet: share and total" "0.089% of the 1124456 packets queued to it" "$text"
expect_contains "softnet: the worst CPU by number" "CPU 2 dropped 1000 of them" "$text"
expect_contains "softnet: since boot" "since boot, 3 h 12 min ago" "$text"
expect_contains "softnet: the backlog length" "net.core.netdev_max_backlog (1000 packets)" "$text"
# time_squeeze 0x10 + 0x64 = 116.
expect_contains "softnet: squeezes named with the drops" "ran out of budget 116 times" "$text"
expect_eq "no separate squeeze finding when there are drops" none \
	"$(finding "$J" softnet.squeeze "" severity)"

# vxlan0 under --root: the underlay is not recorded, so the overlay rules do not judge it.
expect_eq "vxlan0 under --root: no offload finding" none "$(finding "$J" nic.overlay_offload vxlan0 severity)"
expect_eq "vxlan0 under --root: no MTU finding" none "$(finding "$J" nic.overlay_mtu vxlan0 severity)"

# A software device's errors are no cable's: vxlan0 (no device link, DEVTYPE
# vxlan) with 3 transmit errors.
"$HOSTTUNE" --root "$R" facts >"$TMP/boot.facts"
vary "$TMP/boot.facts" "$TMP/soft.facts" "nic.vxlan0.stats.tx_errors=3"
ht --facts "$TMP/soft.facts" --format json audit >"$TMP/soft.json"
J=$TMP/soft.json
expect_eq "vxlan0 tx errors: warning" warning "$(finding "$J" nic.errors vxlan0 severity)"
# 3 of 5000 + 3 = 5003 packets to send: 0.05996%.
text=$(finding "$J" nic.errors vxlan0 explanation)
expect_contains "vxlan0: share of the packets to send" "3 of 5003 packets to send (0.060%)" "$text"
expect_contains "vxlan0: a software device" "vxlan0 is a software device" "$text"
case "$text$(finding "$J" nic.errors vxlan0 remedy)" in
*cable*) not_ok "vxlan0: no cable blamed" "$text" ;;
*) ok "vxlan0: no cable blamed" ;;
esac
expect_contains "vxlan0 remedy: what it delivers to" "what vxlan0 delivers to" \
	"$(finding "$J" nic.errors vxlan0 remedy)"
# Read from a network namespace that sees another's /sys: physical and kind
# are unavailable (EREMOTE) and the driver came over SIOCETHTOOL. A veth is
# still no cable; a driver hosttune does not know as a software device
# (virtio_net) keeps the link's explanation.
vary "$TMP/soft.facts" "$TMP/ns.facts" \
	"nic.vxlan0.physical=unavailable EREMOTE from /sys/class/net shows the interfaces of another network namespace" \
	"nic.vxlan0.kind=unavailable EREMOTE from /sys/class/net shows the interfaces of another network namespace" \
	"nic.vxlan0.driver=\"veth\" from SIOCETHTOOL ETHTOOL_GDRVINFO"
ht --facts "$TMP/ns.facts" --format json audit >"$TMP/ns.json"
case "$(finding "$TMP/ns.json" nic.errors vxlan0 explanation)$(finding "$TMP/ns.json" nic.errors vxlan0 remedy)" in
*cable*) not_ok "no sysfs, driver veth: no cable blamed" "$(finding "$TMP/ns.json" nic.errors vxlan0 explanation)" ;;
*) ok "no sysfs, driver veth: no cable blamed" ;;
esac
vary "$TMP/ns.facts" "$TMP/ns2.facts" "nic.vxlan0.driver=\"virtio_net\" from SIOCETHTOOL ETHTOOL_GDRVINFO"
ht --facts "$TMP/ns2.facts" --format json audit >"$TMP/ns2.json"
expect_contains "no sysfs, driver virtio_net: the link's explanation" "carrier, FIFO, aborted or window" \
	"$(finding "$TMP/ns2.json" nic.errors vxlan0 explanation)"
J=$TMP/boot.json

# Prometheus: the ratios node_exporter lacks, with the device label.
ht --root "$R" --format prometheus audit >"$TMP/boot.prom"
# 1300 / 2001300 = 0.000649578 (6 significant digits); 1000 / 1124456 = 0.000889319.
expect_contains "prometheus: eth1 bad frame ratio" 'hosttune_nic_bad_frame_ratio{device="eth1"} 0.000649578' \
	"$(cat "$TMP/boot.prom")"
expect_contains "prometheus: eth0 bad frame ratio 0" 'hosttune_nic_bad_frame_ratio{device="eth0"} 0' \
	"$(cat "$TMP/boot.prom")"
expect_contains "prometheus: softnet drop ratio" 'hosttune_softnet_drop_ratio 0.000889319' \
	"$(cat "$TMP/boot.prom")"

# ---- the same host over an interval ---------------------------------------
"$HOSTTUNE" --root "$R" --sample 0.2s facts >"$TMP/sampled.facts"
expect_eq "facts --sample over the tree exits 0" 0 $?
# Over 10 s: eth1 received 995 good frames and 5 with a CRC error (rx_errors
# 5): 5 / (995 + 5) = 0.5%; its link went down and up once. softnet: 5000
# processed, none dropped, 3 squeezes.
vary "$TMP/sampled.facts" "$TMP/interval.facts" \
	"sample.seconds=10" \
	"nic.eth1.stats.rx_packets.delta=995" "nic.eth1.stats.rx_errors.delta=5" \
	"nic.eth1.stats.rx_crc_errors.delta=5" "nic.eth1.stats.carrier_changes.delta=1" \
	"nic.eth1.stats.rx_dropped.delta=2" \
	"softnet.processed.delta=5000" "softnet.time_squeeze.delta=3"
ht --facts "$TMP/interval.facts" --format json audit >"$TMP/interval.json"
J=$TMP/interval.json
expect_eq "interval: eth1 errors warning" warning "$(finding "$J" nic.errors eth1 severity)"
expect_eq "interval: 5 bad frames" 5 "$(finding "$J" nic.errors eth1 current)"
text=$(finding "$J" nic.errors eth1 explanation)
expect_contains "interval: worded over the last 10 s" "These counts are of the last 10 s." "$text"
expect_contains "interval: 5 of 1000 (0.5%)" "5 of 1000 frames that arrived (0.500%)" "$text"
case "$text" in
*"since boot"* | *"since it was created"*) not_ok "interval: no since-boot wording" "$text" ;;
*) ok "interval: no since-boot wording" ;;
esac
expect_eq "interval: eth1 flapped once: warning" warning "$(finding "$J" nic.flaps eth1 severity)"
expect_contains "interval: flap text" "changed state 1 time in the last 10 s" \
	"$(finding "$J" nic.flaps eth1 explanation)"
expect_eq "interval: eth1 drops are info" info "$(finding "$J" nic.drops eth1 severity)"
expect_eq "interval: eth0 quiet (deltas 0)" none "$(finding "$J" nic.errors eth0 severity)"
expect_eq "interval: eth0 no flap (delta 0, 2 since creation)" none "$(finding "$J" nic.flaps eth0 severity)"
# The 1000 drops since boot did not move in the interval: no drop finding;
# the 3 squeezes are an info finding.
expect_eq "interval: no softnet drop finding" none "$(finding "$J" softnet.drops "" severity)"
expect_eq "interval: squeeze info" info "$(finding "$J" softnet.squeeze "" severity)"
expect_contains "interval: squeeze text" "stopped 3 times with packets left (time_squeeze" \
	"$(finding "$J" softnet.squeeze "" explanation)"

# Over the interval: 5 / (5 + 995) = 0.005; softnet 0 / 5000 = 0.
ht --facts "$TMP/interval.facts" --format prometheus audit >"$TMP/interval.prom"
expect_contains "prometheus over the interval: eth1" 'hosttune_nic_bad_frame_ratio{device="eth1"} 0.005' \
	"$(cat "$TMP/interval.prom")"
expect_contains "prometheus over the interval: softnet" 'hosttune_softnet_drop_ratio 0' \
	"$(cat "$TMP/interval.prom")"

finish
