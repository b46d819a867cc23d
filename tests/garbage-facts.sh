#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Garbage and edge values of nf_conntrack_max, from a --root tree and from a
# facts file: a value no kernel writes is unavailable with its real path and
# what the file holds (the audit still completes); a huge valid value does not
# overflow the shipped rules; 0 is no limit (nf_conntrack_core.c,
# __nf_conntrack_alloc: `if (nf_conntrack_max && ct_count >= nf_conntrack_max)`),
# never "full" and never lowered.
. "$(dirname "$0")/lib.sh"

NF=proc/sys/net/netfilter

# tree NAME VALUE: a copy of the garage-vm tree with nf_conntrack_max = VALUE
tree() {
	rm -rf "$TMP/$1"
	mkdir -p "$TMP/$1"
	cp -R "$FIXTURES/garage-vm/root" "$TMP/$1/root"
	printf '%s\n' "$2" >"$TMP/$1/root/$NF/nf_conntrack_max"
}

# finding JSON RULE FIELD
finding() {
	jq -r --arg r "$2" ".findings[] | select(.rule == \$r) | .$3" "$1"
}

# The kernel keeps nf_conntrack_max in an int and accepts 0 to INT_MAX =
# 2^31 - 1 = 2147483647 (nf_conntrack_standalone.c, proc_dointvec_minmax).
# 2^70 = 1180591620717411303424; 2^63 - 1 = 9223372036854775807;
# 2^31 = 2147483648 is one above INT_MAX.
n=0
for bad in abc -5 1180591620717411303424 9223372036854775807 2147483648 1.5; do
	n=$((n + 1))
	tree "g$n" "$bad"
	ht --root "$TMP/g$n/root" --format json audit >"$TMP/g$n.json" 2>"$TMP/g$n.err"
	rc=$?
	# Exit 1: the shipped rules still find the drops in the tree (conntrack.drops).
	expect_eq "nf_conntrack_max '$bad': the audit completes (exit 0 or 1)" yes \
		"$([ "$rc" -le 1 ] && echo yes || echo "no: $rc $(cat "$TMP/g$n.err")")"
	expect_eq "nf_conntrack_max '$bad': conntrack.max not applicable" false \
		"$(finding "$TMP/g$n.json" conntrack.max applicable)"
	expect_eq "nf_conntrack_max '$bad': the reason names the file below the tree and its text" \
		"net.netfilter.nf_conntrack_max is unavailable (Invalid argument: $TMP/g$n/root/$NF/nf_conntrack_max: expected an integer from 0 to 2147483647, found '$bad')" \
		"$(finding "$TMP/g$n.json" conntrack.max explanation)"
done

# An empty file holds nothing to show.
tree empty ""
: >"$TMP/empty/root/$NF/nf_conntrack_max"
ht --root "$TMP/empty/root" --format json audit >"$TMP/empty.json" 2>/dev/null
expect_eq "empty nf_conntrack_max: found nothing" \
	"net.netfilter.nf_conntrack_max is unavailable (Invalid argument: $TMP/empty/root/$NF/nf_conntrack_max: expected an integer from 0 to 2147483647, found nothing)" \
	"$(finding "$TMP/empty.json" conntrack.max explanation)"

# INT_MAX itself is a value a kernel can hold: no overflow anywhere in the
# rules (2 x 2147483647 / 4096 buckets = 1048575.99... entries a bucket), and
# it is above the recommendation of 32768, so it is kept.
tree big 2147483647
ht --root "$TMP/big/root" --format json audit >"$TMP/big.json" 2>"$TMP/big.err"
rc=$?
expect_eq "nf_conntrack_max 2147483647: the audit completes" yes \
	"$([ "$rc" -le 1 ] && echo yes || echo "no: $rc $(cat "$TMP/big.err")")"
expect_eq "nf_conntrack_max 2147483647: kept" true "$(finding "$TMP/big.json" conntrack.max kept)"

# 0 is no limit: conntrack.max ok and kept (hosttune never lowers a limit),
# its text says so, the 4096 entries of the tree are not "full", and the plan
# leaves nf_conntrack_max alone.
tree zero 0
ht --root "$TMP/zero/root" --format json audit >"$TMP/zero.json" 2>"$TMP/zero.err"
expect_eq "nf_conntrack_max 0: conntrack.max ok" ok "$(finding "$TMP/zero.json" conntrack.max severity)"
expect_eq "nf_conntrack_max 0: kept" true "$(finding "$TMP/zero.json" conntrack.max kept)"
expect_contains "nf_conntrack_max 0: explained as no limit" \
	"nf_conntrack_max 0 is no limit: the kernel never finds the table full" \
	"$(finding "$TMP/zero.json" conntrack.max explanation)"
expect_contains "nf_conntrack_max 0: the kept note" \
	"The host has 0, which means no limit: more than the 32768 recommended here" \
	"$(finding "$TMP/zero.json" conntrack.max explanation)"
out=$(finding "$TMP/zero.json" conntrack.max explanation)
case "$out" in
*"full, new connections are dropped"*) not_ok "nf_conntrack_max 0: not called full" "$out" ;;
*) ok "nf_conntrack_max 0: not called full" ;;
esac
# The tree's 5937 drops + 77 early drops are from before; with no limit the
# table is not near its cap, so a warning (an earlier peak), not critical.
expect_eq "nf_conntrack_max 0: drops are from an earlier peak" warning \
	"$(finding "$TMP/zero.json" conntrack.drops severity)"
ht --root "$TMP/zero/root" plan >"$TMP/zero.plan" 2>&1
case "$(cat "$TMP/zero.plan")" in
*nf_conntrack_max*) not_ok "nf_conntrack_max 0: the plan leaves it alone" "$(cat "$TMP/zero.plan")" ;;
*) ok "nf_conntrack_max 0: the plan leaves it alone" ;;
esac

# Every fixture facts file with a conntrack table: 2^63 - 1 is refused at its
# line, with the column of the value ("net.netfilter.nf_conntrack_max = " is
# 33 characters: column 34); 0 is no limit there too.
for facts in "$FIXTURES"/*/*.facts; do
	line=$(grep -n '^net.netfilter.nf_conntrack_max = [0-9]' "$facts" | cut -d: -f1)
	[ -n "$line" ] || continue
	name=$(basename "$(dirname "$facts")")
	sed 's/^net.netfilter.nf_conntrack_max = [0-9]*/net.netfilter.nf_conntrack_max = 9223372036854775807/' \
		"$facts" >"$TMP/$name-huge.facts"
	out=$(ht --facts "$TMP/$name-huge.facts" audit 2>&1)
	rc=$?
	expect_eq "$name: 2^63 - 1 in a facts file: exit 2" 2 "$rc"
	expect_eq "$name: 2^63 - 1 in a facts file: message" \
		"hosttune: $TMP/$name-huge.facts:$line:34: net.netfilter.nf_conntrack_max must be at most 2147483647 (the kernel's bound), found 9223372036854775807" \
		"$out"
	sed 's/^net.netfilter.nf_conntrack_max = [0-9]*/net.netfilter.nf_conntrack_max = 0/' \
		"$facts" >"$TMP/$name-zero.facts"
	ht --facts "$TMP/$name-zero.facts" --format json audit >"$TMP/$name-zero.json" 2>/dev/null
	expect_eq "$name: 0 in a facts file: conntrack.max ok" ok \
		"$(finding "$TMP/$name-zero.json" conntrack.max severity)"
	sev=$(finding "$TMP/$name-zero.json" conntrack.drops severity)
	expect_eq "$name: 0 in a facts file: conntrack.drops not critical" yes \
		"$([ "$sev" != critical ] && echo yes || echo "no: $sev")"
done

# Ports are 1 to 65535: a port range or a listener port above that is not
# what a kernel writes. "ports.range.high = " is 19 characters: column 20.
PF=$FIXTURES/verdict/ports-client-61.facts
line=$(grep -n '^ports.range.high = ' "$PF" | cut -d: -f1)
sed 's/^ports.range.high = 60999/ports.range.high = 65536/' "$PF" >"$TMP/range-high.facts"
out=$(ht --facts "$TMP/range-high.facts" audit 2>&1)
expect_eq "ports.range.high 65536 in a facts file: exit 2" 2 "$?"
expect_eq "ports.range.high 65536 in a facts file: message" \
	"hosttune: $TMP/range-high.facts:$line:20: ports.range.high must be at most 65535 (the kernel's bound), found 65536" \
	"$out"
sed 's/^ports.range.high = 60999/ports.range.high = 65535/' "$PF" >"$TMP/range-max.facts"
ht --facts "$TMP/range-max.facts" audit >/dev/null 2>&1
rc=$?
expect_eq "ports.range.high 65535 in a facts file: read (exit 0 or 1)" yes \
	"$([ "$rc" -le 1 ] && echo yes || echo "no: $rc")"
line=$(grep -n '^ports.range.low = ' "$PF" | cut -d: -f1)
sed 's/^ports.range.low = 32768/ports.range.low = 100000/' "$PF" >"$TMP/range-low.facts"
out=$(ht --facts "$TMP/range-low.facts" audit 2>&1)
expect_eq "ports.range.low 100000 in a facts file: exit 2" 2 "$?"
expect_eq "ports.range.low 100000 in a facts file: message" \
	"hosttune: $TMP/range-low.facts:$line:19: ports.range.low must be at most 65535 (the kernel's bound), found 100000" \
	"$out"
for port in 65536 0 07000; do
	{ cat "$PF"; echo "listener.$port.backlog = 128 entries"; } >"$TMP/listener-$port.facts"
	line=$(wc -l <"$TMP/listener-$port.facts")
	out=$(ht --facts "$TMP/listener-$port.facts" audit 2>&1)
	expect_eq "listener.$port.backlog in a facts file: exit 2" 2 "$?"
	expect_eq "listener.$port.backlog in a facts file: message" \
		"hosttune: $TMP/listener-$port.facts:$line:1: 'listener.$port.backlog' names no TCP port (listener.PORT.*, PORT 1 to 65535)" \
		"$out"
done
{ cat "$PF"; echo "listener.65535.backlog = 128 entries"; } >"$TMP/listener-ok.facts"
ht --facts "$TMP/listener-ok.facts" audit >/dev/null 2>&1
rc=$?
expect_eq "listener.65535.backlog in a facts file: read (exit 0 or 1)" yes \
	"$([ "$rc" -le 1 ] && echo yes || echo "no: $rc")"

finish
