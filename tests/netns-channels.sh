#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# ht_ethtool_set_channels() (ethtool-set.c), the live half of nic.queues, in a
# private network namespace: a veth pair with 4 rx / 4 tx queues whose
# counts are set through the test driver tests/set-channels (until `hosttune
# apply` calls the function) and read back with ethtool -l; the refusals
# (above the maximum, combined on veth, no such device, no get_channels)
# compared with what ethtool -L gets from the kernel for the same request.
# Nothing on the host changes: the interfaces die with the namespace.
. "$(dirname "$0")/lib.sh"

: "${HT_BUILD_TESTS_DIR:=$(dirname "$HOSTTUNE")/../tests}"
SETCH=$HT_BUILD_TESTS_DIR/set-channels

if [ "$(id -u)" != 0 ]; then
	echo "# SKIP needs root for unshare -n"
	exit 77
fi
for tool in unshare ip ethtool; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "# SKIP $tool not installed"
		exit 77
	fi
done
if [ ! -x "$SETCH" ]; then
	echo "# SKIP $SETCH not built (make check builds it)"
	exit 77
fi

# Runs inside the namespace. Keeps what set-channels and ethtool say in $TMP;
# the assertions run outside, where lib.sh counts them. Exit 77: no veth.
cat >"$TMP/inner.sh" <<'EOF'
set -u
# call NAME ARGS...: set-channels' stdout, stderr and exit code in $TMP/NAME.*
call() {
	name=$1
	shift
	"$SETCH" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	echo $? >"$TMP/$name.rc"
}
ip link add v0 numrxqueues 4 numtxqueues 4 type veth \
	peer name v1 numrxqueues 4 numtxqueues 4 || exit 77
ip link set v0 up && ip link set v1 up || exit 1
ethtool -l v0 >"$TMP/l0.txt" 2>&1

call rx2 v0 rx 2
ethtool -l v0 >"$TMP/l-rx2.txt" 2>&1
call tx3 v0 tx 3
ethtool -l v0 >"$TMP/l-tx3.txt" 2>&1

call rx9 v0 rx 9
ethtool -L v0 rx 9 >"$TMP/L-rx9.txt" 2>&1
ethtool -l v0 >"$TMP/l-rx9.txt" 2>&1
call comb1 v0 combined 1
ethtool -L v0 combined 1 >"$TMP/L-comb1.txt" 2>&1

call nodev nosuch0 rx 1
ethtool -L nosuch0 rx 1 >"$TMP/L-nodev.txt" 2>&1

ip link add br0 type bridge || exit 1
call br br0 rx 1
ethtool -L br0 rx 1 >"$TMP/L-br.txt" 2>&1

call kind v0 other 1
call zero v0 rx 0

# Restore rx with the old count the first call printed.
call restore v0 rx "$(cat "$TMP/rx2.out")"
ethtool -l v0 >"$TMP/l-restore.txt" 2>&1
# The same count again: the kernel changes nothing and answers with a plain ACK.
call same v0 rx 4
exit 0
EOF

SETCH=$SETCH TMP=$TMP unshare -n sh "$TMP/inner.sh" >"$TMP/inner.out" 2>&1
rc=$?
sed 's/^/# /' "$TMP/inner.out"
if [ $rc -eq 77 ]; then
	echo "# SKIP the kernel cannot make a veth pair"
	exit 77
fi
if [ $rc -ne 0 ] && [ ! -s "$TMP/l0.txt" ]; then
	echo "# SKIP unshare -n refused (exit $rc)"
	exit 77
fi
expect_eq "namespace script ran to the end" 0 "$rc"
for f in "$TMP"/*.err; do
	[ -s "$f" ] && sed "s|^|# $(basename "$f" .err): |" "$f"
done

# ethtool_field FILE LABEL N: the Nth "LABEL:" value of ethtool -l
# (the maximums first, then the current counts).
ethtool_field() { grep "^$2:" "$1" | sed -n "${3}p" | awk '{print $2}'; }
# netlink_msg FILE: the extack text ethtool prints as "netlink error: TEXT (offset N)"
netlink_msg() { sed -n 's/^netlink error: \(.*\) (offset [0-9]*)$/\1/p' "$1" | head -n 1; }
rc_of() { cat "$TMP/$1.rc"; }
out_of() { cat "$TMP/$1.out"; }
err_of() { cat "$TMP/$1.err"; }

# veth_get_channels() (drivers/net/veth.c): max_rx/max_tx = numrxqueues/numtxqueues
# = 4, current = real_num_{rx,tx}_queues = 4; no combined channels.
expect_eq "before: ethtool -l v0 max RX 4" 4 "$(ethtool_field "$TMP/l0.txt" RX 1)"
expect_eq "before: ethtool -l v0 RX 4" 4 "$(ethtool_field "$TMP/l0.txt" RX 2)"
expect_eq "before: ethtool -l v0 TX 4" 4 "$(ethtool_field "$TMP/l0.txt" TX 2)"

# rx 4 -> 2: the old count 4 printed, ethtool sees 2, tx untouched at 4.
expect_eq "rx 2: exit 0" 0 "$(rc_of rx2)"
expect_eq "rx 2: old count 4" 4 "$(out_of rx2)"
expect_eq "rx 2: ethtool -l v0 RX 2" 2 "$(ethtool_field "$TMP/l-rx2.txt" RX 2)"
expect_eq "rx 2: TX still 4" 4 "$(ethtool_field "$TMP/l-rx2.txt" TX 2)"
expect_eq "rx 2: max RX still 4" 4 "$(ethtool_field "$TMP/l-rx2.txt" RX 1)"

# tx 4 -> 3: old 4, ethtool sees 3, rx stays at the 2 set above.
expect_eq "tx 3: exit 0" 0 "$(rc_of tx3)"
expect_eq "tx 3: old count 4" 4 "$(out_of tx3)"
expect_eq "tx 3: ethtool -l v0 TX 3" 3 "$(ethtool_field "$TMP/l-tx3.txt" TX 2)"
expect_eq "tx 3: RX still 2" 2 "$(ethtool_field "$TMP/l-tx3.txt" RX 2)"

# rx 9 > max_rx 4: ethnl_set_channels() (net/ethtool/channels.c) refuses it
# with EINVAL and the extack "requested channel count exceeds maximum"
# before the driver is called.
expect_eq "rx 9: exit 1" 1 "$(rc_of rx9)"
expect_eq "rx 9: EINVAL with the kernel's extack" \
	"EINVAL: v0: ETHTOOL_MSG_CHANNELS_SET: requested channel count exceeds maximum" \
	"$(err_of rx9)"
expect_eq "rx 9: ethtool -L v0 rx 9 gets the same extack" \
	"requested channel count exceeds maximum" "$(netlink_msg "$TMP/L-rx9.txt")"
expect_contains "rx 9: ethtool -L also says EINVAL" "Invalid argument" "$(cat "$TMP/L-rx9.txt")"
expect_eq "rx 9: nothing printed on stdout" "" "$(out_of rx9)"
expect_eq "rx 9: RX still 2" 2 "$(ethtool_field "$TMP/l-rx9.txt" RX 2)"
expect_eq "rx 9: TX still 3" 3 "$(ethtool_field "$TMP/l-rx9.txt" TX 2)"

# combined 1 on veth: veth_get_channels() leaves max_combined 0, and 1 > 0 is
# the same "exceeds maximum" check, on ETHTOOL_A_CHANNELS_COMBINED_COUNT.
expect_eq "combined 1: exit 1" 1 "$(rc_of comb1)"
expect_eq "combined 1: EINVAL, max_combined is 0 on veth" \
	"EINVAL: v0: ETHTOOL_MSG_CHANNELS_SET: requested channel count exceeds maximum" \
	"$(err_of comb1)"
expect_eq "combined 1: ethtool -L v0 combined 1 gets the same extack" \
	"requested channel count exceeds maximum" "$(netlink_msg "$TMP/L-comb1.txt")"

# No such device: the first request (CHANNELS_GET) fails in the kernel's header
# parsing, ethnl_parse_header_dev_get() in net/ethtool/netlink.c.
expect_eq "nosuch0: exit 1" 1 "$(rc_of nodev)"
expect_eq "nosuch0: ENODEV with the kernel's extack" \
	"ENODEV: nosuch0: ETHTOOL_MSG_CHANNELS_GET: no device matches name" "$(err_of nodev)"
expect_eq "nosuch0: ethtool -L gets the same extack" "no device matches name" \
	"$(netlink_msg "$TMP/L-nodev.txt")"
expect_contains "nosuch0: ethtool -L also says ENODEV" "No such device" \
	"$(cat "$TMP/L-nodev.txt")"

# A bridge has no get_channels (net/bridge/br_device.c): EOPNOTSUPP without an
# extack (channels_prepare_data() in net/ethtool/channels.c).
expect_eq "br0: exit 1" 1 "$(rc_of br)"
expect_eq "br0: EOPNOTSUPP" "EOPNOTSUPP: br0: ETHTOOL_MSG_CHANNELS_GET: $(
	)Operation not supported (the driver has no get_channels)" "$(err_of br)"
expect_contains "br0: ethtool -L gets EOPNOTSUPP too" "Operation not supported" \
	"$(cat "$TMP/L-br.txt")"

# Arguments the library refuses before it asks the kernel.
expect_eq "kind other: EINVAL" \
	"EINVAL: v0: unknown channel kind 'other' (combined, rx or tx)" "$(err_of kind)"
expect_eq "kind other: exit 1" 1 "$(rc_of kind)"
expect_eq "count 0: EINVAL" "EINVAL: v0: rx channel count 0: must be at least 1" "$(err_of zero)"

# Restoring with the old count: rx 2 -> 4, which prints the 2 set before.
expect_eq "restore rx 4: exit 0" 0 "$(rc_of restore)"
expect_eq "restore rx 4: old count 2" 2 "$(out_of restore)"
expect_eq "restore rx 4: ethtool -l v0 RX 4" 4 "$(ethtool_field "$TMP/l-restore.txt" RX 2)"
expect_eq "rx 4 again: exit 0 (no change)" 0 "$(rc_of same)"
expect_eq "rx 4 again: old count 4" 4 "$(out_of same)"

finish
