#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# rules/path.rules from facts files: the per-peer finding (path.loss) and the
# host-wide fallback from nstat (path.retrans), since boot and over
# --sample's interval, with the shares, severities and texts worked out
# here. Also: the interval facts (C.delta, sample.seconds) read back from a
# facts file, and --sample's usage errors.
. "$(dirname "$0")/lib.sh"

BASE=$FIXTURES/verdict/listen-capped-419.facts

# finding JSON RULE INSTANCE: "severity|current"
finding() {
	jq -r --arg r "$2" --arg i "$3" '.findings[] | select(.rule == $r and ((.instance // "") == $i))
		| "\(.severity)|\(.current)"' "$1"
}
explain() {
	jq -r --arg r "$2" --arg i "$3" '.findings[] | select(.rule == $r and ((.instance // "") == $i))
		| .explanation' "$1"
}
audit() { ht --facts "$1" --format json audit >"$2"; }

# ---- host-wide, since boot ---------------------------------------------------
# 3 h 12 min = 3 x 3600 + 12 x 60 = 11520 s. Segments sent = TcpOutSegs +
# TcpRetransSegs (OutSegs leaves retransmissions out).
# 2000 / (98000 + 2000) = 2.0% > 1: warning.
vary "$BASE" "$TMP/b.facts" "host.uptime=11520 seconds" "nstat.TcpOutSegs=98000 segments" \
	"nstat.TcpRetransSegs=2000 segments"
audit "$TMP/b.facts" "$TMP/b.json"
expect_eq "since boot 2%: warning" "warning|2" "$(finding "$TMP/b.json" path.retrans "")"
t=$(explain "$TMP/b.json" path.retrans "")
expect_contains "since boot: the share and the counters" \
	"2.0% of the TCP segments this host sent were retransmitted since boot, 3 h 12 min ago (an average" "$t"
expect_contains "since boot: says what since boot means" "an average, in which a loss that happened once" "$t"
expect_contains "since boot: points to --sample" "audit --sample 10s" "$t"
# 6000 / (94000 + 6000) = 6.0% > 5: critical.
vary "$TMP/b.facts" "$TMP/b6.facts" "nstat.TcpOutSegs=94000 segments" "nstat.TcpRetransSegs=6000 segments"
audit "$TMP/b6.facts" "$TMP/b6.json"
expect_eq "since boot 6%: critical" "critical|6" "$(finding "$TMP/b6.json" path.retrans "")"
# 500 / (99500 + 500) = 0.5%: no finding.
vary "$TMP/b.facts" "$TMP/b05.facts" "nstat.TcpOutSegs=99500 segments" "nstat.TcpRetransSegs=500 segments"
audit "$TMP/b05.facts" "$TMP/b05.json"
expect_eq "since boot 0.5%: no finding" "" "$(finding "$TMP/b05.json" path.retrans "")"
# 100 / (800 + 100) = 11%, but 900 segments are below the 1000 judged: none.
vary "$TMP/b.facts" "$TMP/bfew.facts" "nstat.TcpOutSegs=800 segments" "nstat.TcpRetransSegs=100 segments"
audit "$TMP/bfew.facts" "$TMP/bfew.json"
expect_eq "900 segments: too few to judge" "" "$(finding "$TMP/bfew.json" path.retrans "")"
# Without the uptime, no "ago".
vary "$TMP/b.facts" "$TMP/bnu.facts" "host.uptime=-"
audit "$TMP/bnu.facts" "$TMP/bnu.json"
expect_contains "since boot without host.uptime" "were retransmitted since boot (an average" \
	"$(explain "$TMP/bnu.json" path.retrans "")"

# ---- host-wide over an interval: no peer can be named ------------------------
# 500 / (9500 + 500) = 5.0%: not above 5, a warning. The since-boot counters
# (0.5%) are not what is judged.
vary "$TMP/b05.facts" "$TMP/s.facts" "sample.seconds=10.02 seconds" \
	"nstat.TcpOutSegs.delta=9500 segments" "nstat.TcpRetransSegs.delta=500 segments" \
	"peer.list=unavailable EPERM"
audit "$TMP/s.facts" "$TMP/s.json"
expect_eq "interval 5.0%: warning" "warning|5" "$(finding "$TMP/s.json" path.retrans "")"
t=$(explain "$TMP/s.json" path.retrans "")
expect_contains "interval: names the interval" "5.0% of the TCP segments this host sent were retransmitted in the last 10 s: 500 of 10000" "$t"
case "$t" in *"since boot"*) not_ok "interval: no since-boot wording" "$t" ;; *) ok "interval: no since-boot wording" ;; esac
expect_contains "interval, peers refused: says no peer is named" \
	"The connections cannot be listed here (NETLINK_SOCK_DIAG), so no peer is named." "$t"
# A short interval keeps its fraction: "0.50 s", not "0 s".
vary "$TMP/s.facts" "$TMP/s05.facts" "sample.seconds=0.5 seconds"
audit "$TMP/s05.facts" "$TMP/s05.json"
expect_contains "interval under 1 s" "retransmitted in the last 0.50 s: 500 of 10000" \
	"$(explain "$TMP/s05.json" path.retrans "")"

# ---- per peer over an interval -------------------------------------------------
# A: 510 / 10000 = 5.1% > 5: critical, RTT 30 ms against 8 ms (>= 2 x: queued).
# B: 200 / 10000 = 2.0%: warning. C: 50 / 500 = 10% of too few segments: none.
# D: 5 / 20000 = 0.025%: none. A is the worst of the two lossy peers.
{
	cat "$TMP/s.facts" | grep -v '^peer\.list'
	cat <<'EOF'
peer.list = "10.5.5.20 10.5.5.30 10.5.5.40 fd00--7"
peer.10.5.5.20.address = "10.5.5.20"
peer.10.5.5.20.connections = 2 connections
peer.10.5.5.20.retrans = 1466 segments
peer.10.5.5.20.segs_out = 29000 segments
peer.10.5.5.20.retrans.delta = 510 segments
peer.10.5.5.20.segs_out.delta = 10000 segments
peer.10.5.5.20.rtt = 30 ms
peer.10.5.5.20.min_rtt = 8 ms
peer.10.5.5.30.address = "10.5.5.30"
peer.10.5.5.30.connections = 1 connections
peer.10.5.5.30.retrans = 200 segments
peer.10.5.5.30.segs_out = 10000 segments
peer.10.5.5.30.retrans.delta = 200 segments
peer.10.5.5.30.segs_out.delta = 10000 segments
peer.10.5.5.30.rtt = 9.5 ms
peer.10.5.5.30.min_rtt = 8.2 ms
peer.10.5.5.40.address = "10.5.5.40"
peer.10.5.5.40.connections = 1 connections
peer.10.5.5.40.retrans = 50 segments
peer.10.5.5.40.segs_out = 500 segments
peer.10.5.5.40.retrans.delta = 50 segments
peer.10.5.5.40.segs_out.delta = 500 segments
peer.10.5.5.40.rtt = 1 ms
peer.fd00--7.address = "fd00::7"
peer.fd00--7.connections = 1 connections
peer.fd00--7.retrans = 5 segments
peer.fd00--7.segs_out = 20000 segments
peer.fd00--7.retrans.delta = 5 segments
peer.fd00--7.segs_out.delta = 20000 segments
peer.fd00--7.rtt = 0.2 ms
peer.fd00--7.min_rtt = 0.05 ms
EOF
} >"$TMP/p.facts"
audit "$TMP/p.facts" "$TMP/p.json"
expect_eq "peer A 5.1%: critical" "critical|5.1" "$(finding "$TMP/p.json" path.loss 10.5.5.20)"
expect_eq "peer B 2.0%: warning" "warning|2" "$(finding "$TMP/p.json" path.loss 10.5.5.30)"
expect_eq "peer C, 500 segments: not judged" "" "$(finding "$TMP/p.json" path.loss 10.5.5.40)"
expect_eq "peer D 0.025%: no finding" "" "$(finding "$TMP/p.json" path.loss fd00--7)"
expect_eq "a peer is named: no host-wide finding" "" "$(finding "$TMP/p.json" path.retrans "")"
t=$(explain "$TMP/p.json" path.loss 10.5.5.20)
expect_contains "peer A: share, peer, interval, counters" \
	"5.1% of the segments sent to 10.5.5.20 were retransmitted in the last 10 s: 510 of 10000" "$t"
expect_contains "peer A: RTT against min RTT" "Its RTT is 30.000 ms against 8.000 ms at best: segments also wait in a queue on the way." "$t"
expect_contains "peer A: the worst of two" "Peers above 1% here: 2, the most at 5.1%." "$t"
expect_contains "peer A: no sysctl removes it" "No sysctl of this host removes the loss." "$t"
t=$(explain "$TMP/p.json" path.loss 10.5.5.30)
expect_contains "peer B: no queue claim at 9.5 against 8.2 ms" "Its RTT is 9.500 ms against 8.200 ms at best. A retransmission" "$t"
case "$t" in *worst*) not_ok "peer B: not the worst" "$t" ;; *) ok "peer B: not the worst" ;; esac
expect_eq "peer findings: the remedy is the path" \
	"the path to 10.5.5.20, not a sysctl: the cabling and the switch ports on the way (their error counters), a WiFi hop, a saturated uplink, or the peer's own NIC; first rule out this host's own transmit drops (ip -s link: TX dropped; tc -s qdisc: dropped)." \
	"$(jq -r '.findings[] | select(.rule == "path.loss" and .instance == "10.5.5.20") | .remedy' "$TMP/p.json")"
expect_eq "peer findings: no fix hosttune writes" "null" \
	"$(jq -r '.findings[] | select(.rule == "path.loss" and .instance == "10.5.5.20") | .fix' "$TMP/p.json")"

# The same host with the loss spread thin: A 90 / 10000 = 0.9%, B 50 / 10000
# = 0.5%, no peer above 1%; the host's 5.0% (500 / 10000) is named host-wide.
vary "$TMP/p.facts" "$TMP/pt.facts" "peer.10.5.5.20.retrans.delta=90 segments" \
	"peer.10.5.5.30.retrans.delta=50 segments"
audit "$TMP/pt.facts" "$TMP/pt.json"
expect_eq "spread thin: no peer finding" 0 "$(jq '[.findings[] | select(.rule == "path.loss")] | length' "$TMP/pt.json")"
expect_eq "spread thin: the host-wide finding" "warning|5" "$(finding "$TMP/pt.json" path.retrans "")"
expect_contains "spread thin: says why no peer is named" \
	"No established connection reaches 1% of 1000 segments or more on its own" \
	"$(explain "$TMP/pt.json" path.retrans "")"

# The same peers without --sample: the since-open counts (1466 / 29000 = 5.055...%).
grep -v '^sample.seconds\|\.delta = ' "$TMP/p.facts" >"$TMP/po.facts"
audit "$TMP/po.facts" "$TMP/po.json"
expect_eq "peer A since its connections opened: critical" "critical|5.0551724137931" \
	"$(finding "$TMP/po.json" path.loss 10.5.5.20)"
t=$(explain "$TMP/po.json" path.loss 10.5.5.20)
expect_contains "since open: says so" "were retransmitted: 1466 of 29000 (tcpi_total_retrans and tcpi_segs_out of its 2 connections, NETLINK_SOCK_DIAG, as ss -ti shows them; without --sample, since they opened" "$t"
expect_contains "since open: points to --sample" "audit --sample 10s during traffic" "$t"

# ---- Prometheus --------------------------------------------------------------
ht --facts "$TMP/p.facts" --format prometheus audit >"$TMP/p.prom"
# 510 / 10000 = 0.051; min RTT 8 ms = 0.008 s; fd00::7 labelled by its address.
expect_eq "prometheus: ratio of peer A" 'hosttune_peer_retransmit_ratio{peer="10.5.5.20"} 0.051' \
	"$(grep '^hosttune_peer_retransmit_ratio{peer="10.5.5.20"}' "$TMP/p.prom")"
expect_eq "prometheus: min RTT of peer A" 'hosttune_peer_min_rtt_seconds{peer="10.5.5.20"} 0.008' \
	"$(grep '^hosttune_peer_min_rtt_seconds{peer="10.5.5.20"}' "$TMP/p.prom")"
expect_eq "prometheus: an IPv6 peer by its address" 'hosttune_peer_retransmit_ratio{peer="fd00::7"} 0.00025' \
	"$(grep '^hosttune_peer_retransmit_ratio{peer="fd00::7"}' "$TMP/p.prom")"
expect_eq "prometheus: one HELP a family" 1 "$(grep -c '^# HELP hosttune_peer_retransmit_ratio ' "$TMP/p.prom")"
expect_eq "prometheus: the finding labelled by peer" 1 \
	"$(grep -c '^hosttune_finding_severity{rule="path.loss",peer="10.5.5.20"} 3' "$TMP/p.prom")"

# ---- the interval facts in a facts file --------------------------------------
ht --facts "$TMP/p.facts" facts >"$TMP/p2.facts"
expect_eq "C.delta and sample.seconds read back" \
	"$(grep -c '\.delta = \|^sample\.seconds' "$TMP/p.facts")" "$(grep -c '\.delta = \|^sample\.seconds' "$TMP/p2.facts")"
printf '# hosttune facts 1\nnstat.TcpExtTW.delta.delta = 1 sockets\n' >"$TMP/bad.facts"
out=$(ht --facts "$TMP/bad.facts" facts 2>&1)
expect_eq "no delta of a delta" "hosttune: $TMP/bad.facts:2:1: unknown fact 'nstat.TcpExtTW.delta.delta'" "$out"
printf '# hosttune facts 1\nlistener.22.backlog.delta = 1 entries\n' >"$TMP/bad2.facts"
expect_contains "no delta of a value that is no counter" "unknown fact 'listener.22.backlog.delta'" \
	"$(ht --facts "$TMP/bad2.facts" facts 2>&1)"

# ---- --sample on the command line --------------------------------------------
out=$(ht --facts "$TMP/p.facts" audit --sample 5s 2>&1); rc=$?
expect_eq "--sample with --facts: exit 2" 2 "$rc"
expect_contains "--sample with --facts: says why" "--sample and --facts exclude each other" "$out"
out=$(ht audit --sample 5x 2>&1); rc=$?
expect_eq "--sample 5x: exit 2" "2|hosttune: --sample: expected a time such as 5s, 500ms or 1min (1ms to 1 day), got '5x' (hosttune --help lists the usage)" "$rc|$out"
out=$(ht plan --sample 5s 2>&1); rc=$?
expect_eq "plan refuses --sample" 2 "$rc"
# Under --root the files are read twice: the deltas of a tree that does not move are 0.
ht --root "$FIXTURES/garage-vm/root" --no-measure facts --sample 10ms >"$TMP/r.facts"; rc=$?
expect_eq "--sample under --root: exit 0" 0 "$rc"
# The measured interval (CLOCK_MONOTONIC) is at least the 0.01 s asked for;
# how much longer depends on the machine's load, so no upper bound.
secs=$(sed -n 's/^sample\.seconds = \([0-9.]*\) seconds .*/\1/p' "$TMP/r.facts")
expect_eq "--sample: sample.seconds is a measured interval >= 0.01" yes \
	"$(awk -v s="$secs" 'BEGIN { print (s != "" && s + 0 >= 0.01) ? "yes" : "no: " s }')"
# An IPv6 peer: its instance name has '-' for ':' (fact names hold no ':'),
# its Prometheus label and a waiver use the address as written. fd00::7 at
# 2000 of 20000 segments = 10%: critical.
vary "$TMP/p.facts" "$TMP/p6.facts" "peer.fd00--7.retrans.delta=2000 segments"
ht --facts "$TMP/p6.facts" --format prometheus audit >"$TMP/p6.prom"
expect_eq "prometheus: the IPv6 peer's finding labelled by its address" 1 \
	"$(grep -c '^hosttune_finding_severity{rule="path.loss",peer="fd00::7"} 3$' "$TMP/p6.prom")"
printf '[waive]\npath.loss[fd00::7] = a test peer\n' >"$TMP/waive6.conf"
ht --config "$TMP/waive6.conf" --facts "$TMP/p6.facts" --format json audit >"$TMP/p6.json"
expect_eq "a waiver with the IPv6 address waives its finding" "a test peer" \
	"$(jq -r '.findings[] | select(.rule == "path.loss" and .instance == "fd00--7") | .waived' "$TMP/p6.json")"

finish
