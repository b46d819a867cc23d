#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# nic.* facts (collect-udev.c, collect-ethtool.c) on interfaces made for the
# test in a private network and mount namespace: a veth pair with 4 queues,
# a bridge and a tun device, compared with what ethtool(8) prints for them;
# then the sysfs fallback of --root on the same namespace and on the
# fixture tree tests/fixtures/nic-sysfs/root. Nothing on the host changes:
# the interfaces, the sysfs mount and the bind mount die with the namespace.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "# SKIP needs root for unshare -nm"
	exit 77
fi
for tool in unshare ip ethtool jq; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "# SKIP $tool not installed"
		exit 77
	fi
done

# Runs inside the namespaces. Writes what the tool and ethtool say to $TMP;
# the assertions run outside, where lib.sh counts them. Exit 77: no veth.
cat >"$TMP/inner.sh" <<'EOF'
set -u
facts() { "$HOSTTUNE" --no-measure --format json "$@" facts; }
# Before the mount, /sys is the host's: its interfaces are not this
# namespace's (lo and the pair v9/v10, made before the reading).
ip link add v9 type veth peer name v10 || exit 77
facts >"$TMP/hostsys.json" || exit 1
ip link del v9
# sysfs of this network namespace, so libudev and /sys/class/net see only its devices.
mount -t sysfs sysfs /sys || exit 1
# A udev database on the host is keyed by ifindex, which means other devices here.
if [ -d /run/udev ]; then mount -t tmpfs tmpfs /run/udev || exit 1; fi
ip link add v0 numrxqueues 4 numtxqueues 4 type veth \
	peer name v1 numrxqueues 4 numtxqueues 4 || exit 77
ip link set v0 up && ip link set v1 up || exit 1

facts >"$TMP/veth.json" || exit 1
ethtool v0 >"$TMP/ethtool-v0.txt" 2>&1
ethtool -l v0 >"$TMP/ethtool-l-v0.txt" 2>&1
echo "--- ethtool v0 / ethtool -l v0 in the namespace:"
grep -E 'Speed|Duplex' "$TMP/ethtool-v0.txt"
cat "$TMP/ethtool-l-v0.txt"

ethtool -L v0 rx 2 tx 2 || echo "ethtool -L failed" >"$TMP/ethtool-L.err"
facts >"$TMP/veth2.json" || exit 1
ethtool -l v0 >"$TMP/ethtool-l-v0-2.txt" 2>&1

# The sysfs fallback on the same devices: --root over a bind mount of this /sys.
mkdir -p "$TMP/root/sys" && mount --bind /sys "$TMP/root/sys" || exit 1
facts --root "$TMP/root" >"$TMP/sysfs.json" || exit 1
umount "$TMP/root/sys"

ip link add br0 type bridge && ip link set br0 up || exit 1
ip tuntap add tun0 mode tun || exit 1
facts >"$TMP/more.json" || exit 1
ethtool -l br0 >"$TMP/ethtool-l-br0.txt" 2>&1
ethtool tun0 >"$TMP/ethtool-tun0.txt" 2>&1
cat /sys/class/net/tun0/type >"$TMP/tun0.type"
echo "--- ethtool -l br0 / ethtool tun0:"
cat "$TMP/ethtool-l-br0.txt"
grep -E 'Speed|Duplex' "$TMP/ethtool-tun0.txt"

# v1 as an up port of br0.
ip link set v1 master br0 || exit 1
facts >"$TMP/bridged.json" || exit 1
ethtool br0 >"$TMP/ethtool-br0.txt" 2>&1
exit 0
EOF

HOSTTUNE=$HOSTTUNE TMP=$TMP unshare -nm sh "$TMP/inner.sh" >"$TMP/inner.out" 2>&1
rc=$?
sed 's/^/# /' "$TMP/inner.out"
if [ $rc -eq 77 ]; then
	echo "# SKIP the kernel cannot make a veth pair"
	exit 77
fi
if [ $rc -ne 0 ] && [ ! -s "$TMP/veth.json" ]; then
	echo "# SKIP unshare -nm or sysfs mount refused (exit $rc)"
	exit 77
fi
expect_eq "namespace script ran to the end" 0 "$rc"

# fact FILE NAME: the value, "null" when unavailable
fact() { jget "$1" ".facts[\"$2\"].value"; }
err() { jget "$1" ".facts[\"$2\"].error"; }
# ethtool_field FILE LABEL N: the Nth "LABEL:" value in ethtool's output
# (ethtool -l prints the maximums first, then the current counts).
ethtool_field() { grep "^$2:" "$1" | sed -n "${3}p" | awk '{print $2}'; }

# The host's /sys, read from this namespace: its list (the host's devices)
# is not the kernel's for this namespace (v9 and v10), so nic.list is the
# kernel's (if_nameindex), what only sysfs tells is unavailable (EREMOTE)
# and says why, and what the kernel tells this namespace (ethtool's speed
# over netlink, the driver's name over SIOCETHTOOL) is there.
J=$TMP/hostsys.json
expect_eq "the host's sysfs in a private namespace: nic.list is this namespace's" "v10 v9" \
	"$(fact "$J" nic.list)"
expect_eq "... v9's kind unavailable (only sysfs tells it)" EREMOTE "$(err "$J" nic.v9.kind)"
expect_contains "... and says why" "shows the interfaces of another network namespace" \
	"$(jget "$J" '.facts["nic.v9.kind"].source')"
expect_eq "... v9's driver from SIOCETHTOOL" veth "$(fact "$J" nic.v9.driver)"
expect_eq "... v9's speed over ethtool netlink (veth: SPEED_10000)" 10000 "$(fact "$J" nic.v9.speed)"
hostnics=$(ls /sys/class/net | grep -vx 'lo\|v9\|v10' | tr '\n' ' ')
bad=""
for n in $hostnics; do
	[ "$(jq --arg n "nic.$n.driver" '.facts | has($n)' "$J")" = false ] || bad="$bad $n"
done
expect_eq "... no interface of the host ($hostnics) described" "" "$bad"

J=$TMP/veth.json
# Only lo (skipped) and the pair exist in the new namespace.
expect_eq "nic.list: the veth pair" "v0 v1" "$(fact "$J" nic.list)"
# drivers/net/veth.c veth_get_link_ksettings(): SPEED_10000, DUPLEX_FULL.
expect_eq "v0 speed 10000 Mb/s (SPEED_10000)" 10000 "$(fact "$J" nic.v0.speed)"
expect_eq "v0 speed unit" "Mb/s" "$(jget "$J" '.facts["nic.v0.speed"].unit')"
expect_eq "v0 speed as ethtool prints it" \
	"$(fact "$J" nic.v0.speed)Mb/s" "$(grep 'Speed:' "$TMP/ethtool-v0.txt" | awk '{print $2}')"
expect_eq "v0 duplex full (DUPLEX_FULL)" full "$(fact "$J" nic.v0.duplex)"
expect_eq "v0 duplex as ethtool prints it" Full \
	"$(grep 'Duplex:' "$TMP/ethtool-v0.txt" | awk '{print $2}')"
# veth_get_channels(): max = numrxqueues/numtxqueues = 4, current = real_num_*_queues,
# which veth sets to the requested 4 as well.
expect_eq "v0 channels.rx 4" 4 "$(fact "$J" nic.v0.channels.rx)"
expect_eq "v0 channels.tx 4" 4 "$(fact "$J" nic.v0.channels.tx)"
expect_eq "v0 channels.max.rx 4" 4 "$(fact "$J" nic.v0.channels.max.rx)"
expect_eq "v0 channels.max.tx 4" 4 "$(fact "$J" nic.v0.channels.max.tx)"
expect_eq "v0 channels unit" queues "$(jget "$J" '.facts["nic.v0.channels.rx"].unit')"
expect_eq "v1 channels.rx 4 (its own numrxqueues)" 4 "$(fact "$J" nic.v1.channels.rx)"
# veth sets no combined channels, so max_combined is 0 and the kernel leaves
# both attributes out (channels_fill_reply() in net/ethtool/channels.c).
expect_eq "v0 channels.combined unavailable" ENODATA "$(err "$J" nic.v0.channels.combined)"
expect_eq "v0 channels.max.combined unavailable" ENODATA \
	"$(err "$J" nic.v0.channels.max.combined)"
expect_eq "ethtool -l v0 also has no combined maximum" n/a \
	"$(ethtool_field "$TMP/ethtool-l-v0.txt" Combined 1)"
expect_eq "max.rx as ethtool -l prints it" "$(ethtool_field "$TMP/ethtool-l-v0.txt" RX 1)" \
	"$(fact "$J" nic.v0.channels.max.rx)"
expect_eq "rx as ethtool -l prints it" "$(ethtool_field "$TMP/ethtool-l-v0.txt" RX 2)" \
	"$(fact "$J" nic.v0.channels.rx)"
expect_eq "v0 driver veth" veth "$(fact "$J" nic.v0.driver)"
expect_eq "v0 not physical (no parent device)" false "$(fact "$J" nic.v0.physical)"
expect_eq "v0 kind veth" veth "$(fact "$J" nic.v0.kind)"
expect_eq "v0 bus none" none "$(fact "$J" nic.v0.bus)"
expect_eq "speed source" "ethtool netlink ETHTOOL_MSG_LINKMODES_GET" \
	"$(jget "$J" '.facts["nic.v0.speed"].source')"

# ethtool -L v0 rx 2 tx 2: current counts 2/2, maximums stay 4/4.
J=$TMP/veth2.json
if [ -f "$TMP/ethtool-L.err" ]; then
	not_ok "ethtool -L v0 rx 2 tx 2" "$(cat "$TMP/ethtool-L.err")"
fi
expect_eq "after -L: channels.rx 2" 2 "$(fact "$J" nic.v0.channels.rx)"
expect_eq "after -L: channels.tx 2" 2 "$(fact "$J" nic.v0.channels.tx)"
expect_eq "after -L: channels.max.rx still 4" 4 "$(fact "$J" nic.v0.channels.max.rx)"
expect_eq "after -L: channels.max.tx still 4" 4 "$(fact "$J" nic.v0.channels.max.tx)"
expect_eq "after -L: tx as ethtool -l prints it" \
	"$(ethtool_field "$TMP/ethtool-l-v0-2.txt" TX 2)" "$(fact "$J" nic.v0.channels.tx)"
expect_eq "after -L: v1 unchanged" 4 "$(fact "$J" nic.v1.channels.rx)"

# The sysfs fallback on the same namespace after -L: speed and duplex files,
# and one rx-N / tx-N directory per queue in use (2 each).
J=$TMP/sysfs.json
expect_eq "sysfs: nic.list" "v0 v1" "$(fact "$J" nic.list)"
expect_eq "sysfs: v0 speed 10000" 10000 "$(fact "$J" nic.v0.speed)"
expect_eq "sysfs: speed source" /sys/class/net/v0/speed \
	"$(jget "$J" '.facts["nic.v0.speed"].source')"
expect_eq "sysfs: v0 duplex full" full "$(fact "$J" nic.v0.duplex)"
expect_eq "sysfs: v0 rx-0, rx-1 -> 2" 2 "$(fact "$J" nic.v0.channels.rx)"
expect_eq "sysfs: v0 tx-0, tx-1 -> 2" 2 "$(fact "$J" nic.v0.channels.tx)"
expect_eq "sysfs: v1 rx-0..rx-3 -> 4" 4 "$(fact "$J" nic.v1.channels.rx)"
expect_eq "sysfs: no maximum" ENOENT "$(err "$J" nic.v0.channels.max.rx)"
expect_eq "sysfs: v0 not physical" false "$(fact "$J" nic.v0.physical)"
expect_eq "sysfs: v0 bus none" none "$(fact "$J" nic.v0.bus)"
# No device/driver link and no ioctl under --root: the driver is not known.
expect_eq "sysfs: v0 driver unavailable" ENOENT "$(err "$J" nic.v0.driver)"

# A bridge: DEVTYPE=bridge (SET_NETDEV_DEVTYPE in net/bridge/br_device.c), no
# get_channels, and no ports yet, so br_get_link_ksettings() reports
# SPEED_UNKNOWN and DUPLEX_UNKNOWN.
J=$TMP/more.json
expect_eq "nic.list: sorted, lo left out" "br0 tun0 v0 v1" "$(fact "$J" nic.list)"
expect_eq "br0 kind bridge" bridge "$(fact "$J" nic.br0.kind)"
expect_eq "br0 kind from DEVTYPE" "libudev DEVTYPE" "$(jget "$J" '.facts["nic.br0.kind"].source')"
expect_eq "br0 not physical" false "$(fact "$J" nic.br0.physical)"
expect_eq "br0 bus none" none "$(fact "$J" nic.br0.bus)"
# br_getinfo() names the driver "bridge" (what udev's ID_NET_DRIVER would hold).
expect_eq "br0 driver bridge" bridge "$(fact "$J" nic.br0.driver)"
expect_eq "br0 channels not supported" EOPNOTSUPP "$(err "$J" nic.br0.channels.rx)"
expect_eq "br0 channels.max.combined not supported" EOPNOTSUPP \
	"$(err "$J" nic.br0.channels.max.combined)"
expect_contains "ethtool -l br0 gets the same answer" "Operation not supported" \
	"$(cat "$TMP/ethtool-l-br0.txt")"
expect_eq "br0 without ports: speed unknown" ENODATA "$(err "$J" nic.br0.speed)"
expect_contains "br0 speed: why" "the driver reports unknown speed" \
	"$(jget "$J" '.facts["nic.br0.speed"].source')"
expect_eq "br0 duplex unknown" ENODATA "$(err "$J" nic.br0.duplex)"

# A tun device: ARPHRD_NONE (65534), no MAC address, no parent.
expect_eq "tun0 is MAC-less (type ARPHRD_NONE)" 65534 "$(cat "$TMP/tun0.type")"
expect_eq "tun0 kind tun (tun_flags has IFF_TUN)" tun "$(fact "$J" nic.tun0.kind)"
expect_eq "tun0 driver tun" tun "$(fact "$J" nic.tun0.driver)"
expect_eq "tun0 not physical" false "$(fact "$J" nic.tun0.physical)"
expect_eq "tun0 bus none" none "$(fact "$J" nic.tun0.bus)"
# tun_default_link_ksettings(): SPEED_10 before 6.2, SPEED_10000 since; ethtool tells.
expect_eq "tun0 speed as ethtool prints it" \
	"$(grep 'Speed:' "$TMP/ethtool-tun0.txt" | awk '{print $2}')" "$(fact "$J" nic.tun0.speed)Mb/s"
expect_eq "tun0 duplex full" full "$(fact "$J" nic.tun0.duplex)"

# v1 (up, its peer up) as a port: the bridge reports its fastest port's
# speed, max(10000) = 10000, and still DUPLEX_UNKNOWN.
J=$TMP/bridged.json
expect_eq "br0 with port v1: speed 10000" 10000 "$(fact "$J" nic.br0.speed)"
expect_eq "br0 speed as ethtool prints it" \
	"$(grep 'Speed:' "$TMP/ethtool-br0.txt" | awk '{print $2}')" "$(fact "$J" nic.br0.speed)Mb/s"
expect_eq "br0 with port v1: duplex still unknown" ENODATA "$(err "$J" nic.br0.duplex)"

# The fixture: a virtio NIC eth0 (virtio0 on PCI 0000:00:03.0), a bridge and a
# tun device, as /sys shows them on a KVM guest.
R=$FIXTURES/nic-sysfs/root
"$HOSTTUNE" --root "$R" --no-measure --format json facts >"$TMP/fixture.json"
expect_eq "fixture: facts exits 0" 0 $?
J=$TMP/fixture.json
expect_eq "fixture: nic.list, lo left out" "br0 eth0 tun0" "$(fact "$J" nic.list)"
expect_eq "fixture: nic.list source" /sys/class/net "$(jget "$J" '.facts["nic.list"].source')"
expect_eq "fixture: eth0 physical (device link)" true "$(fact "$J" nic.eth0.physical)"
expect_eq "fixture: eth0 driver (device/driver link)" virtio_net "$(fact "$J" nic.eth0.driver)"
expect_eq "fixture: eth0 driver source" /sys/class/net/eth0/device/driver \
	"$(jget "$J" '.facts["nic.eth0.driver"].source')"
expect_eq "fixture: eth0 bus (device/subsystem -> bus/virtio)" virtio "$(fact "$J" nic.eth0.bus)"
expect_eq "fixture: eth0 kind (type 1 with a device)" ethernet "$(fact "$J" nic.eth0.kind)"
# speed -1 is SPEED_UNKNOWN as speed_show() prints it, virtio's answer.
expect_eq "fixture: eth0 speed -1 -> unavailable" ENODATA "$(err "$J" nic.eth0.speed)"
expect_eq "fixture: eth0 speed source" \
	"/sys/class/net/eth0/speed: the driver reports unknown speed" \
	"$(jget "$J" '.facts["nic.eth0.speed"].source')"
expect_eq "fixture: eth0 duplex unknown" ENODATA "$(err "$J" nic.eth0.duplex)"
# queues/rx-0 and queues/tx-0: one each.
expect_eq "fixture: eth0 channels.rx 1" 1 "$(fact "$J" nic.eth0.channels.rx)"
expect_eq "fixture: eth0 channels.tx 1" 1 "$(fact "$J" nic.eth0.channels.tx)"
expect_eq "fixture: eth0 channels.max.rx" ENOENT "$(err "$J" nic.eth0.channels.max.rx)"
expect_eq "fixture: eth0 channels.combined" ENOENT "$(err "$J" nic.eth0.channels.combined)"
expect_eq "fixture: br0 kind (uevent DEVTYPE)" bridge "$(fact "$J" nic.br0.kind)"
expect_eq "fixture: br0 not physical" false "$(fact "$J" nic.br0.physical)"
expect_eq "fixture: br0 bus none" none "$(fact "$J" nic.br0.bus)"
expect_eq "fixture: br0 driver unknown" ENOENT "$(err "$J" nic.br0.driver)"
# tun_flags 0x1001 = IFF_TUN | IFF_NO_PI (include/uapi/linux/if_tun.h).
expect_eq "fixture: tun0 kind tun" tun "$(fact "$J" nic.tun0.kind)"
expect_eq "fixture: tun0 speed 10000" 10000 "$(fact "$J" nic.tun0.speed)"
expect_eq "fixture: tun0 duplex full" full "$(fact "$J" nic.tun0.duplex)"

# A tree without /sys/class/net: nic.list unavailable, no per-interface facts.
mkdir -p "$TMP/empty"
"$HOSTTUNE" --root "$TMP/empty" --no-measure --format json facts >"$TMP/empty.json"
expect_eq "no /sys/class/net: nic.list ENOENT" ENOENT "$(err "$TMP/empty.json" nic.list)"
expect_eq "no /sys/class/net: no nic.IF facts" 0 \
	"$(jq '[.facts | keys[] | select(startswith("nic.") and . != "nic.list" and . != "nic.max_speed" and . != "nic.skipped")] | length' \
		"$TMP/empty.json")"
expect_eq "no /sys/class/net: nic.skipped ENOENT" ENOENT "$(err "$TMP/empty.json" nic.skipped)"
expect_eq "no /sys/class/net: nic.max_speed ENOENT" ENOENT "$(err "$TMP/empty.json" nic.max_speed)"

finish
