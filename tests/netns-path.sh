#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# TCP per peer over an interval (collect-peers.c, collect/sample.c,
# rules/path.rules) with real traffic: two private network namespaces
# joined by a veth pair, a bulk TCP transfer from A (10.5.5.10) to B
# (10.5.5.20), and in B's input hook an nftables rule that drops 5% of the
# TCP packets at random (numgen random mod 100 < 5): real losses, which A
# retransmits. (A drop in A's own output hook would be a local error that
# TCP retries without counting a retransmission.) hosttune in A, with
# --sample, must report the share that ss -ti and nstat report over the
# same interval, and its finding must name the peer; without the drop
# rule, no finding. Nothing on the host changes: both namespaces, the veth
# pair and the nftables table die with the processes that hold them.
#
# Real traffic on a loaded machine (make -j2 check, two tests at a time)
# is not exact: a clean veth has shown 1.09% of segments retransmitted
# (spurious retransmissions, above the 1% a finding needs), and a lossy run
# has once shown no finding in one of its four readings while the other
# three had it. The scenarios run again, once, when an assertion fails; the
# test fails when the second run fails too, and the log keeps both.
if [ -z "${HT_NETNS_PATH_AGAIN:-}" ]; then
	HT_NETNS_PATH_AGAIN=1 sh "$0" "$@"
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 77 ] && exit $rc
	echo "# the first run failed (exit $rc): the scenarios once more"
	HT_NETNS_PATH_AGAIN=2 exec sh "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "# SKIP needs root for unshare -n"
	exit 77
fi
for tool in unshare nsenter ip nft ss nstat jq awk; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "# SKIP $tool not installed"
		exit 77
	fi
done
STREAM=$HT_TESTS_DIR/tcp-stream
[ -x "$STREAM" ] || STREAM=$(dirname "$HOSTTUNE")/../tests/tcp-stream

# Runs inside namespace A; DROP=1 adds the drop rule in B. Writes to $OUT.
cat >"$TMP/inner.sh" <<'EOF'
set -u
ip link set lo up
unshare -n sleep 600 & B=$!
# Until the child has left this namespace (unshare(2) done), however slow the machine.
for _ in $(seq 100); do [ "$(readlink /proc/$B/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break; sleep 0.05; done
ip link add v0 type veth peer name v1 || exit 77
ip link set v1 netns "$B" || exit 1
ip addr add 10.5.5.10/24 dev v0 && ip link set v0 up || exit 1
nsenter -t "$B" -n sh -c 'ip link set lo up && ip addr add 10.5.5.20/24 dev v1 &&
	ip link set v1 up' || exit 1
if [ "$DROP" = 1 ]; then
	nsenter -t "$B" -n nft -f - <<'NFT' || exit 78
table inet lossy {
	chain input {
		type filter hook input priority 0;
		meta l4proto tcp numgen random mod 100 < 5 drop
	}
}
NFT
fi
nsenter -t "$B" -n "$STREAM" sink 10.5.5.20 5001 >"$OUT/sink.out" & SINK=$!
sleep 0.3
# The transfer runs until the last reading is done (killed then), however
# long the four runs take on a loaded machine.
"$STREAM" send 10.5.5.20 5001 600 >"$OUT/send.out" & SEND=$!
sleep 1
export NSTAT_HISTORY="$OUT/nstat.history"
# The same interval for all three: nstat and ss just before and just after
# hosttune's two readings.
nstat -az TcpRetransSegs TcpOutSegs >"$OUT/nstat1"
ss -tinH dst 10.5.5.20 >"$OUT/ss1"
"$HOSTTUNE" --no-measure --format json facts --sample 3s >"$OUT/facts.json"
ss -tinH dst 10.5.5.20 >"$OUT/ss2"
nstat -az TcpRetransSegs TcpOutSegs >"$OUT/nstat2"
"$HOSTTUNE" --rules "$RULES" --no-measure --format json audit --sample 3s >"$OUT/audit.json"
echo "audit exit $?" >"$OUT/audit.rc"
"$HOSTTUNE" --rules "$RULES" --no-measure audit --sample 2s >"$OUT/audit.txt"
"$HOSTTUNE" --rules "$RULES" --no-measure --format prometheus audit --sample 2s >"$OUT/prom.txt"
kill "$SEND" "$SINK" "$B"
exit 0
EOF

# run NAME DROP: the scenario in fresh namespaces, results in $TMP/NAME.
run() {
	mkdir -p "$TMP/$1"
	OUT=$TMP/$1 DROP=$2 HOSTTUNE=$HOSTTUNE RULES=$HT_RULES_DIR STREAM=$STREAM \
		unshare -n sh "$TMP/inner.sh" >"$TMP/$1/inner.out" 2>&1
	rc=$?
	sed "s/^/# $1: /" "$TMP/$1/inner.out"
	if [ $rc -eq 77 ]; then
		echo "# SKIP the kernel cannot make a veth pair"
		exit 77
	fi
	if [ $rc -eq 78 ]; then
		echo "# SKIP nftables refused the drop rule (no nf_tables, or no numgen)"
		exit 77
	fi
	expect_eq "$1: namespace script ran to the end" 0 "$rc"
}

fact() { jget "$1" ".facts[\"$2\"].value"; }
# ss_field FILE NAME: NAME:VALUE of ss -ti's first connection (" segs_out:",
# not data_segs_out; retrans: is CURRENT/TOTAL, the total taken). ss
# leaves retrans: out while the connection has retransmitted nothing (early
# in the transfer on a loaded machine): 0 then.
ss_field() {
	v=$(grep -o " $2:[0-9/]*" "$1" | head -1 | sed 's/.*[:/]//')
	echo "${v:-0}"
}
nstat_field() { awk -v n="$2" '$1 == n { print $2 }' "$1"; }
# within A B TOL: |A - B| <= TOL (decimals)
within() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }
between() { awk -v a="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(a >= lo && a <= hi) }'; }

run lossy 1
D=$TMP/lossy
J=$D/facts.json
expect_eq "lossy: peer.list is the receiving namespace's address" "10.5.5.20" "$(fact "$J" peer.list)"
expect_eq "lossy: one connection to it" 1 "$(fact "$J" peer.10.5.5.20.connections)"
h_r=$(fact "$J" peer.10.5.5.20.retrans.delta)
h_s=$(fact "$J" peer.10.5.5.20.segs_out.delta)
# Shares in percent: retransmitted segments over segments sent.
h=$(awk -v r="$h_r" -v s="$h_s" 'BEGIN { printf "%.3f", r * 100 / s }')
# ss -ti over an interval that holds hosttune's: the growth of the
# connection's retrans total over the growth of its segs_out.
s_r=$(( $(ss_field "$D/ss2" retrans) - $(ss_field "$D/ss1" retrans) ))
s_s=$(( $(ss_field "$D/ss2" segs_out) - $(ss_field "$D/ss1" segs_out) ))
s=$(awk -v r="$s_r" -v s="$s_s" 'BEGIN { printf "%.3f", r * 100 / s }')
# nstat: TcpOutSegs leaves retransmissions out, so segments sent are
# OutSegs + RetransSegs (the namespace has this one connection).
n_r=$(( $(nstat_field "$D/nstat2" TcpRetransSegs) - $(nstat_field "$D/nstat1" TcpRetransSegs) ))
n_o=$(( $(nstat_field "$D/nstat2" TcpOutSegs) - $(nstat_field "$D/nstat1" TcpOutSegs) ))
n=$(awk -v r="$n_r" -v o="$n_o" 'BEGIN { printf "%.3f", r * 100 / (o + r) }')
echo "# hosttune $h_r of $h_s = $h%; ss -ti $s_r of $s_s = $s%; nstat $n_r of $n_o + $n_r = $n%"
# 5% of the packets into B are dropped, the ACKs of B's data included but
# B sends none: about 5% of A's segments are lost and sent again.
if between "$h" 2.5 8; then ok "lossy: hosttune's share $h% is near the 5% dropped"
else not_ok "lossy: hosttune's share $h% is near the 5% dropped"; fi
# The three intervals differ by the time ss and nstat take around
# hosttune's (tens of ms of 3 s) at a steady rate: within a point.
if within "$h" "$s" 1; then ok "lossy: hosttune's share agrees with ss -ti's ($h% / $s%)"
else not_ok "lossy: hosttune's share agrees with ss -ti's ($h% / $s%)"; fi
if within "$h" "$n" 1; then ok "lossy: hosttune's share agrees with nstat's ($h% / $n%)"
else not_ok "lossy: hosttune's share agrees with nstat's ($h% / $n%)"; fi
# The interval's counts are the increase: below the since-open totals.
if [ "$h_r" -le "$(fact "$J" peer.10.5.5.20.retrans)" ] && [ "$h_r" -gt 0 ]; then
	ok "lossy: retrans.delta is part of the since-open total"
else not_ok "lossy: retrans.delta is part of the since-open total"; fi
between "$(fact "$J" sample.seconds)" 2.99 3.5 && ok "lossy: sample.seconds is the 3 s asked" ||
	not_ok "lossy: sample.seconds is the 3 s asked" "$(fact "$J" sample.seconds)"

A=$D/audit.json
f_sev=$(jget "$A" '[.findings[] | select(.rule == "path.loss")][0].severity')
f_inst=$(jget "$A" '[.findings[] | select(.rule == "path.loss")][0].instance')
f_cur=$(jget "$A" '[.findings[] | select(.rule == "path.loss")][0].current')
expect_eq "lossy: the finding names the peer" "10.5.5.20" "$f_inst"
# Its own interval: the severity follows its share (above 5% critical, else warning).
want=$(awk -v c="$f_cur" 'BEGIN { print (c > 5 ? "critical" : "warning") }')
expect_eq "lossy: severity follows the share ($f_cur%)" "$want" "$f_sev"
between "$f_cur" 2.5 8 && ok "lossy: the audit's share $f_cur% is near 5%" ||
	not_ok "lossy: the audit's share $f_cur% is near 5%"
expect_contains "lossy: the text names the peer and the interval" \
	"of the segments sent to 10.5.5.20 were retransmitted in the last 3 s" \
	"$(jget "$A" '[.findings[] | select(.rule == "path.loss")][0].explanation')"
expect_contains "lossy: the remedy is the path, not a sysctl" "the path to 10.5.5.20, not a sysctl" \
	"$(jget "$A" '[.findings[] | select(.rule == "path.loss")][0].remedy')"
expect_eq "lossy: the per-peer finding, not the host-wide one" 0 \
	"$(jget "$A" '[.findings[] | select(.rule == "path.retrans")] | length')"
expect_contains "lossy: the text report names the peer" "path.loss[10.5.5.20]" "$(cat "$D/audit.txt")"
ratio=$(sed -n 's/^hosttune_peer_retransmit_ratio{peer="10.5.5.20"} //p' "$D/prom.txt")
between "${ratio:-0}" 0.025 0.08 && ok "lossy: Prometheus ratio $ratio for peer 10.5.5.20" ||
	not_ok "lossy: Prometheus ratio for peer 10.5.5.20" "$(grep peer "$D/prom.txt")"
expect_eq "lossy: Prometheus min RTT for the peer" 1 \
	"$(grep -c '^hosttune_peer_min_rtt_seconds{peer="10.5.5.20"} ' "$D/prom.txt")"

run clean 0
D=$TMP/clean
J=$D/facts.json
h=$(awk -v r="$(fact "$J" peer.10.5.5.20.retrans.delta)" -v s="$(fact "$J" peer.10.5.5.20.segs_out.delta)" \
	'BEGIN { printf "%.3f", r * 100 / s }')
echo "# clean: hosttune share $h%"
between "$h" 0 1 && ok "clean: share $h% is below 1%" || not_ok "clean: share $h% is below 1%"
expect_eq "clean: no path finding" 0 \
	"$(jget "$D/audit.json" '[.findings[] | select(.rule | startswith("path."))] | length')"
expect_eq "clean: audit exits 0 for the path" "" "$(grep -o 'path\.[a-z]*\[' "$D/audit.txt")"
finish
