#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Facts on demand: an audit collects what its rules read, and the expensive
# sources run only when a rule wants their evidence.
#  1. the conntrack table of a --root tree (the Garage VM's, with a table of
#     23 entries added) is read only when it is at least half full or its
#     drops moved (conntrack.dump_wanted): the conntrack.states finding and
#     the dump's facts come and go with count, max and the drop counters;
#  2. the client sockets are listed only when all the host's TCP sockets
#     (/proc/net/sockstat) could hold more than half the port range
#     (ports.dump_wanted); else ports.ephemeral gives that sum as the bound;
#  3. every fixture tree audits as the facts file hosttune facts makes of it
#     (the snapshot holds what the audit reads);
#  4. live, in a private network namespace with an empty conntrack table and
#     an idle listener (root, strace): no conntrack dump, no dump of every
#     socket, and no walk of every process's descriptors; a second listener's
#     process at its descriptor limit is judged, its links alone read.
. "$(dirname "$0")/lib.sh"

fresh() {
	rm -rf "$TMP/g"
	cp -a "$FIXTURES/garage-vm/root" "$TMP/g"
	cp "$FIXTURES/ct-table/root/proc/net/nf_conntrack" "$TMP/g/proc/net/nf_conntrack"
	cp "$FIXTURES"/ct-table/root/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_* \
		"$TMP/g/proc/sys/net/netfilter/"
}
# stat_drops DROP EARLY: the one CPU row of /proc/net/stat/nf_conntrack with
# those drop and early_drop counters (hex), the rest as the fixture has it.
stat_drops() {
	awk -v d="$1" -v e="$2" 'NR == 1 { print; next } { $11 = d; $12 = e; print }' \
		"$FIXTURES/garage-vm/root/proc/net/stat/nf_conntrack" >"$TMP/g/proc/net/stat/nf_conntrack"
}
audit_json() {
	ht --root "$TMP/g" --no-measure --format json audit >"$TMP/a.json" 2>"$TMP/a.err"
}
has_states() {
	jget "$TMP/a.json" '[.findings[] | select(.rule == "conntrack.states")] | length'
}

# ---- 1. the conntrack table ----
# 10 of 4096 entries, no drop: 10 x 2 < 4096 and no drop moved -> no dump.
fresh
echo 10 >"$TMP/g/proc/sys/net/netfilter/nf_conntrack_count"
stat_drops 00000000 00000000
audit_json
expect_eq "10 of 4096, no drop: not wanted" false "$(jget "$TMP/a.json" '.values["conntrack.dump_wanted"]')"
expect_eq "10 of 4096, no drop: no conntrack.states finding" 0 "$(has_states)"
expect_eq "10 of 4096, no drop: nothing counted by state" null \
	"$(jget "$TMP/a.json" '.values["conntrack.long_lived"]')"
# 2048 of 4096: 2048 x 2 >= 4096 -> the table is read: 23 entries of which
# 20 TCP (the fixture's lines), the finding there.
echo 2048 >"$TMP/g/proc/sys/net/netfilter/nf_conntrack_count"
audit_json
expect_eq "2048 of 4096: wanted" true "$(jget "$TMP/a.json" '.values["conntrack.dump_wanted"]')"
expect_eq "2048 of 4096: conntrack.states is there" 1 "$(has_states)"
expect_contains "2048 of 4096: the dump's count in its text" \
	"A dump of the table (ctnetlink) found 23 entries" \
	"$(jget "$TMP/a.json" '.findings[] | select(.rule == "conntrack.states") | .explanation')"
# 2047: just below half (2047 x 2 = 4094 < 4096), but drops moved since boot
# (0x10 = 16 packets): read.
echo 2047 >"$TMP/g/proc/sys/net/netfilter/nf_conntrack_count"
stat_drops 00000010 00000000
audit_json
expect_eq "2047 of 4096 with 16 drops: wanted" true "$(jget "$TMP/a.json" '.values["conntrack.dump_wanted"]')"
expect_eq "2047 of 4096 with 16 drops: conntrack.states is there" 1 "$(has_states)"
stat_drops 00000000 00000000
audit_json
expect_eq "2047 of 4096, no drop: not wanted" false "$(jget "$TMP/a.json" '.values["conntrack.dump_wanted"]')"
# hosttune facts reads everything, wanted or not.
ht --root "$TMP/g" --no-measure facts >"$TMP/g.facts"
expect_contains "facts holds the dump all the same" "conntrack.dump.entries = 23 entries" \
	"$(cat "$TMP/g.facts")"
# A timeout apply lowered while the table filled stays in hosttune's file
# once the table is idle: 2048 of 4096 with 420 more ESTABLISHED entries
# idle for 332000 s (remaining 100000 s of 432000: 420 / 4096 = 10.3% of
# max is stale, >= 10%) -> established is lowered to 86400 and max raised
# to 32768. Then 10 of 32768 and no drop: no dump, and plan keeps the line.
fresh
echo 2048 >"$TMP/g/proc/sys/net/netfilter/nf_conntrack_count"
stat_drops 00000000 00000000
i=1
while [ "$i" -le 420 ]; do
	echo "ipv4     2 tcp      6 100000 ESTABLISHED src=10.1.$((i / 200)).$((i % 200 + 1)) dst=10.0.0.1 sport=40000 dport=3900 src=10.0.0.1 dst=10.1.$((i / 200)).$((i % 200 + 1)) sport=3900 dport=40000 [ASSURED] mark=0 zone=0 use=2"
	i=$((i + 1))
done >>"$TMP/g/proc/net/nf_conntrack"
ht --root "$TMP/g" --no-measure apply >"$TMP/apply.out" 2>&1
expect_eq "a stale table: apply lowers established to a day" 86400 \
	"$(cat "$TMP/g/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established")"
cp "$TMP/g/etc/sysctl.d/90-hosttune.conf" "$TMP/applied.conf"
echo 10 >"$TMP/g/proc/sys/net/netfilter/nf_conntrack_count"
audit_json
expect_eq "then 10 of 32768, no drop: not wanted" false "$(jget "$TMP/a.json" '.values["conntrack.dump_wanted"]')"
expect_eq "the established row keeps the live value" "ok 86400" \
	"$(jget "$TMP/a.json" '.findings[] | select(.rule == "conntrack.established_timeout") | "\(.severity) \(.recommended)"')"
ht --root "$TMP/g" --no-measure plan >"$TMP/plan.out" 2>&1
expect_eq "plan keeps hosttune's established line" \
	"No changes: the files and live values already match the plan." "$(cat "$TMP/plan.out")"
ht --root "$TMP/g" --no-measure apply >"$TMP/apply.out" 2>&1
if cmp -s "$TMP/applied.conf" "$TMP/g/etc/sysctl.d/90-hosttune.conf"; then ok "a second apply leaves the file as it was"
else not_ok "a second apply leaves the file as it was" "$(diff "$TMP/applied.conf" "$TMP/g/etc/sysctl.d/90-hosttune.conf")"; fi
expect_contains "verify names it" "nf_conntrack_tcp_timeout_established = 86400 live and at boot" \
	"$(ht --root "$TMP/g" --no-measure verify 2>&1)"
# The table fills again (16384 of 32768: wanted) but its entries cannot be
# read (the tree's /proc/net/nf_conntrack is gone): what it holds is
# unknown, so both timeout rows keep the live value and plan keeps the lines.
echo 16384 >"$TMP/g/proc/sys/net/netfilter/nf_conntrack_count"
rm "$TMP/g/proc/net/nf_conntrack"
audit_json
expect_eq "16384 of 32768, dump failed: wanted" true "$(jget "$TMP/a.json" '.values["conntrack.dump_wanted"]')"
expect_eq "dump failed: the established row keeps the live value" "ok 86400" \
	"$(jget "$TMP/a.json" '.findings[] | select(.rule == "conntrack.established_timeout") | "\(.severity) \(.recommended)"')"
expect_eq "dump failed: the close_wait row keeps the live value" "ok 60" \
	"$(jget "$TMP/a.json" '.findings[] | select(.rule == "conntrack.close_wait_timeout") | "\(.severity) \(.recommended)"')"
expect_contains "dump failed: the text says the entries could not be read" "its entries could not be read" \
	"$(jget "$TMP/a.json" '.findings[] | select(.rule == "conntrack.close_wait_timeout") | .explanation')"
ht --root "$TMP/g" --no-measure plan >"$TMP/plan.out" 2>&1
expect_eq "dump failed: plan keeps hosttune's lines" \
	"No changes: the files and live values already match the plan." "$(cat "$TMP/plan.out")"
# No cap (nf_conntrack_max = 0): nothing to fill, no dump, the text says so
# instead of "16384 of 0".
echo 0 >"$TMP/g/proc/sys/net/netfilter/nf_conntrack_max"
audit_json
expect_contains "no cap: said so" "The table has no cap (nf_conntrack_max = 0)" \
	"$(jget "$TMP/a.json" '.findings[] | select(.rule == "conntrack.established_timeout") | .explanation')"

# ---- 2. the client sockets ----
# The tree with the default port range and the TIME_WAIT sysctls, and no
# sockstat: without the bound the sockets are listed, as before.
fresh
mkdir -p "$TMP/g/proc/sys/net/ipv4"
printf '32768\t60999\n' >"$TMP/g/proc/sys/net/ipv4/ip_local_port_range"
echo 131072 >"$TMP/g/proc/sys/net/ipv4/tcp_max_tw_buckets"
echo 2 >"$TMP/g/proc/sys/net/ipv4/tcp_tw_reuse"
echo 1 >"$TMP/g/proc/sys/net/ipv4/tcp_timestamps"
printf 'TcpExt: TW TCPTimeWaitOverflow\nTcpExt: 0 0\n' >"$TMP/g/proc/net/netstat"
audit_json
expect_eq "no sockstat: wanted" true "$(jget "$TMP/a.json" '.values["ports.dump_wanted"]')"
# 3 in use + 2 in TIME_WAIT = 5 sockets: 5 x 2 <= 28232 ports of the
# default range -> not listed; the bound 5 is the current value.
printf 'sockets: used 12\nTCP: inuse 3 orphan 0 tw 2 alloc 3 mem 1\nUDP: inuse 0 mem 0\n' \
	>"$TMP/g/proc/net/sockstat"
audit_json
expect_eq "5 sockets: not wanted" false "$(jget "$TMP/a.json" '.values["ports.dump_wanted"]')"
expect_eq "ports.ephemeral: the bound, ok" "ok|5" \
	"$(jget "$TMP/a.json" '.findings[] | select(.rule == "ports.ephemeral") | "\(.severity)|\(.current)"')"
expect_contains "ports.ephemeral says what the bound is" \
	"In use: 5 of 28232 ports (0.0%). Where it is set: net.ipv4.ip_local_port_range, in sysctl.d. In use counts the host's TCP sockets in all, 3 in use and 2 in TIME_WAIT (/proc/net/sockstat)" \
	"$(jget "$TMP/a.json" '.findings[] | select(.rule == "ports.ephemeral") | .explanation')"
# 14000 + 117 = 14117 sockets: 14117 x 2 = 28234 > 28232 -> listed.
printf 'sockets: used 12\nTCP: inuse 14000 orphan 0 tw 117 alloc 3 mem 1\n' >"$TMP/g/proc/net/sockstat"
audit_json
expect_eq "14117 sockets: wanted" true "$(jget "$TMP/a.json" '.values["ports.dump_wanted"]')"
printf 'sockets: used 12\nTCP: inuse 14000 orphan 0 tw 116 alloc 3 mem 1\n' >"$TMP/g/proc/net/sockstat"
audit_json
expect_eq "14116 sockets (28232 exactly): not wanted" false \
	"$(jget "$TMP/a.json" '.values["ports.dump_wanted"]')"
# TIME_WAIT for ports.tw_buckets comes from sockstat without a listing.
expect_contains "tw_buckets reads sockstat's TIME_WAIT" "with 116 sockets in TIME_WAIT now" \
	"$(jget "$TMP/a.json" '.findings[] | select(.rule == "ports.tw_buckets") | .explanation')"

# ---- 3. every fixture tree audits as its snapshot ----
for t in "$FIXTURES"/*/root; do
	name=${t#"$FIXTURES"/}
	for p in default garage; do
		ht --root "$t" --profile "$p" --no-measure facts >"$TMP/s.facts" 2>/dev/null || continue
		ht --root "$t" --profile "$p" --no-measure --format json audit 2>/dev/null |
			jq -S '.findings' >"$TMP/live.json"
		ht --facts "$TMP/s.facts" --profile "$p" --format json audit 2>/dev/null |
			jq -S '.findings' >"$TMP/snap.json"
		if cmp -s "$TMP/live.json" "$TMP/snap.json"; then ok "$name $p: audits as its facts file"
		else not_ok "$name $p: audits as its facts file" "$(diff "$TMP/live.json" "$TMP/snap.json" | head)"; fi
	done
done

# ---- 4. live: nothing expensive on an idle namespace ----
if [ "$(id -u)" -ne 0 ] || ! command -v strace >/dev/null 2>&1 || ! unshare -n true 2>/dev/null ||
	[ ! -r /proc/sys/net/netfilter/nf_conntrack_max ] || [ ! -x "${HT_BUILD_TESTS_DIR:-}/listen-hold" ]; then
	echo "# live part skipped: needs root, strace, unshare -n, nf_conntrack and tests/listen-hold"
	finish
	exit
fi
name_lock listen-hold
cat >"$TMP/idle.sh" <<'EOT'
set -u
ip link set lo up || exit 10
# An idle listener: listen(16) below somaxconn, nobody connects.
"$HOLD" 127.0.0.1 7000 16 0 >"$TMP/hold.out" 2>&1 &
pid=$!
i=0
until grep -q ready "$TMP/hold.out" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -le 100 ] || { kill "$pid"; exit 12; }
	sleep 0.1
done
strace -f -o "$TMP/strace.out" -e trace=sendto,sendmsg,readlinkat "$HOSTTUNE" --rules "$HT_RULES_DIR" \
	--no-measure --format json audit >"$TMP/idle.json" 2>"$TMP/idle.err"
echo $? >"$TMP/idle.rc"
# The same listener's twin at its descriptor limit: ulimit -n 4 and
# 0, 1, 2 and the socket open (4 >= 4 - 4 / 10 = 4).
# (The output is redirected before the limit: a shell saves descriptors above 9.)
(ulimit -n 4 && exec "$HOLD" 127.0.0.1 7001 16 0) >"$TMP/hold2.out" 2>&1 &
pid2=$!
i=0
until grep -q ready "$TMP/hold2.out" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -le 100 ] || { kill "$pid" "$pid2"; exit 13; }
	sleep 0.1
done
strace -f -o "$TMP/strace2.out" -e trace=readlinkat "$HOSTTUNE" --rules "$HT_RULES_DIR" \
	--no-measure --format json audit >"$TMP/limit.json" 2>"$TMP/limit.err"
echo "$pid2" >"$TMP/hold2.pid"
kill "$pid" "$pid2"
EOT
HOLD=$HT_BUILD_TESTS_DIR/listen-hold
export TMP HOLD HOSTTUNE HT_RULES_DIR
unshare -n sh "$TMP/idle.sh"
expect_eq "idle audit in a fresh namespace: exit 0 or 1" 1 "$([ "$(cat "$TMP/idle.rc")" -le 1 ] && echo 1)"
# IPCTNL_MSG_CT_GET (the dump) is message 1 of NFNL_SUBSYS_CTNETLINK (1): type 0x101.
expect_eq "no conntrack dump" 0 "$(grep -c 'IPCTNL_MSG_CT_GET,' "$TMP/strace.out")"
# Listeners only: the sock_diag requests ask for LISTEN (1 << 10 = 0x400), never every state.
expect_eq "no dump of every socket" 0 \
	"$(grep 'SOCK_DIAG_BY_FAMILY' "$TMP/strace.out" | grep -vc 'idiag_states=1<<TCP_LISTEN')"
# The idle listener's owner is not looked up: a walk reads every descriptor
# of every process of the host (hundreds at least). The network namespace
# of each process (the link "net" of /proc/PID/ns, one a process) is not a
# descriptor.
n=$(grep '^[0-9]* *readlinkat' "$TMP/strace.out" | grep -vc '/ns/net"\|, "net", ')
if [ "$n" -lt 50 ]; then ok "no walk of every descriptor ($n readlinkat calls)"
else not_ok "no walk of every descriptor" "got $n readlinkat calls"; fi
expect_eq "the idle port has no row" 0 \
	"$(jget "$TMP/idle.json" '[.findings[] | select(.rule == "listen.backlog")] | length')"
expect_eq "but listen.somaxconn counts it" 1 "$(jget "$TMP/idle.json" '.values["listen.ports"]')"
expect_eq "a listener's process at its descriptor limit: critical, by its PID" \
	"critical $(cat "$TMP/hold2.pid")" \
	"$(jget "$TMP/limit.json" '.findings[] | select(.rule == "process.limit_nofile" and .instance == "listen-hold") | "\(.severity) \(.explanation | capture("PID (?<p>[0-9]+)").p)"')"
n=$(grep '^[0-9]* *readlinkat' "$TMP/strace2.out" | grep -vc '/ns/net"\|, "net", ')
if [ "$n" -lt 50 ]; then ok "its descriptors only are read ($n readlinkat calls)"
else not_ok "its descriptors only are read" "got $n readlinkat calls"; fi
finish
