#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Words and units in the text report: a number is never split from the word
# after it when explanations wrap, a count of one takes the singular unit, no
# "queue(s)", "1 entries" or "(unavailable)" reaches a report; per-interface
# rules stay in the table as n/a rows when no interface is found.
. "$(dirname "$0")/lib.sh"

# ---- wrapping, exact: rules of our own in $TMP/rules ----
mkdir -p "$TMP/rules/profiles"
printf '[profile]\ndescription = words\n' >"$TMP/rules/profiles/default.profile"
x90=$(printf '%090d' 0 | tr 0 x)
x92=$(printf '%092d' 0 | tr 0 x)
cat >"$TMP/rules/words.rules" <<EOT
[t.entries]
target = advice
explain = $x90 {4096} entries.

[t.gib]
target = advice
explain = $x92 {1GiB|bytes} of RAM.

[t.seconds]
target = advice
explain = $x92 {30} s.

[t.one_bucket]
target = advice
current = 1
unit = entries a bucket

[t.two_buckets]
target = advice
current = 2
unit = entries a bucket

[t.one_cpu]
target = advice
current = 1
unit = CPUs

[t.one_queue]
target = advice
current = 1
unit = queues

[t.one_rate]
target = advice
current = 1
unit = MB/s

[t.one_byte]
target = advice
current = 1
unit = bytes
EOT
facts_file "$TMP/host.facts" <<EOT
mem.total = 1073741824 bytes from test
EOT
"$HOSTTUNE" --rules "$TMP/rules" --facts "$TMP/host.facts" audit -v >"$TMP/words.txt"
expect_eq "own rules: audit exits 0" 0 $?
# block RULE: the explanation lines of RULE's finding
block() { awk -v h="[ok] $1 (advice)" 'index($0, h) == 1 { on = 1; next } /^$/ { on = 0 } on' "$TMP/words.txt"; }
# Explanations wrap at 100 columns after a 4-column indent. 4 + 90 = 94, and
# " 4096" would end at 99 <= 100, but " 4096 entries." at 94 + 1 + 13 = 108 > 100:
# the number goes to the next line with its unit.
expect_eq "wrap: 4096 stays with entries" "    $x90
    4096 entries." "$(block t.entries)"
# 4 + 92 = 96; " 1" would end at 98 and " GiB" at 102 > 100; "1 GiB" moves together.
expect_eq "wrap: 1 stays with GiB" "    $x92
    1 GiB of RAM." "$(block t.gib)"
# 4 + 92 = 96; " 30" would end at 99, " s." at 102 > 100.
expect_eq "wrap: 30 stays with s." "    $x92
    30 s." "$(block t.seconds)"
# row RULE: the CURRENT column of RULE's table row
row() { awk -v r="$1" '$1 == r { $1 = ""; sub(/^ +/, ""); sub(/ +- +ok$/, ""); print; exit }' "$TMP/words.txt"; }
expect_eq "table: 1 entry a bucket" "1 entry a bucket" "$(row t.one_bucket)"
expect_eq "table: 2 entries a bucket" "2 entries a bucket" "$(row t.two_buckets)"
expect_eq "table: 1 CPU" "1 CPU" "$(row t.one_cpu)"
expect_eq "table: 1 queue" "1 queue" "$(row t.one_queue)"
expect_eq "table: a rate stays MB/s" "1 MB/s" "$(row t.one_rate)"
expect_eq "table: 1 byte" "1 byte" "$(row t.one_byte)"

# ---- every fixture (facts files and --root trees) under every profile ----
: >"$TMP/all.txt"
n=0
# one ARGS...: one text audit appended to all.txt; exit 0 or 1 (findings) expected
one() {
	ht "$@" audit -v >>"$TMP/all.txt" 2>"$TMP/err"
	rc=$?
	n=$((n + 1))
	[ $rc -le 1 ] || not_ok "audit $*: exits $rc" "$(cat "$TMP/err")"
}
for p in "$HT_RULES_DIR"/profiles/*.profile; do
	prof=$(basename "$p" .profile)
	for f in "$FIXTURES"/*/host.facts "$FIXTURES"/*/expected.facts; do
		one --facts "$f" --profile "$prof"
	done
	for r in "$FIXTURES"/*/root; do
		# trees without /proc/meminfo are not hosts (bootconf, nic-sysfs): exit 2 by design
		[ -e "$r/proc/meminfo" ] || continue
		one --root "$r" --profile "$prof"
	done
done
echo "# $n audits checked"
# A line of an explanation that ends with a number while the next line of it
# starts with a word: the number was split from its unit.
split=$(awk '/^    / {
		if (prev != "" && $0 !~ /^    (fix|at boot|not applicable):/ && $0 ~ /^    [A-Za-z]/)
			print prev " | " $0
		prev = ($0 ~ /(^| |\(|~|-)[0-9][0-9.,]*[0-9]$|(^| |\(|~|-)[0-9]$/) ? $0 : ""
		next
	}
	{ prev = "" }' "$TMP/all.txt")
expect_eq "fixtures: no number split from its unit" "" "$split"
expect_eq "fixtures: no (unavailable)" "" "$(grep -F '(unavailable)' "$TMP/all.txt")"
expect_eq "fixtures: no (s) plurals" "" "$(grep -E 'queue\(s\)|CPU\(s\)|entr(y|ies)\(s\)' "$TMP/all.txt")"
expect_eq "fixtures: no plural after a count of one" "" \
	"$(grep -E '(^|[^0-9.,])1 (queues|entries|CPUs|packets|events|buckets|seconds|samples|bytes)([^a-z]|$)' "$TMP/all.txt")"

# ---- per-interface rules under --root without /sys/class/net: n/a rows ----
ht --root "$FIXTURES/garage-vm/root" --format json audit >"$TMP/gvm.json"
expect_eq "root without interfaces: nic.queues is an n/a row" \
	"n/a|null|no network interface to check: nic.list is unavailable (No such file or directory: /sys/class/net)" \
	"$(jget "$TMP/gvm.json" '.findings[] | select(.rule == "nic.queues") | "\(.severity)|\(.instance)|\(.explanation)"')"
# 1 CPU in the tree: nic.queues_hypervisor (a multi-vCPU VM) never applies, no row.
expect_eq "root without interfaces: no nic.queues_hypervisor row on 1 CPU" "" \
	"$(jget "$TMP/gvm.json" '.findings[] | select(.rule == "nic.queues_hypervisor") | .severity')"
# The storage profile garage adds nic.link_speed as n/a; the default profile has none.
ht --root "$FIXTURES/garage-vm/root" --profile garage --format json audit >"$TMP/gvm-garage.json"
expect_eq "root without interfaces, storage profile: nic.link_speed n/a" "n/a" \
	"$(jget "$TMP/gvm-garage.json" '.findings[] | select(.rule == "nic.link_speed") | .severity')"
expect_eq "root without interfaces, default profile: no nic.link_speed" "" \
	"$(jget "$TMP/gvm.json" '.findings[] | select(.rule == "nic.link_speed") | .severity')"
ht --root "$FIXTURES/garage-vm/root" audit -v >"$TMP/gvm.txt"
expect_contains "text: the n/a row in the table" \
	"nic.queues                    -                   -                   n/a" "$(cat "$TMP/gvm.txt")"
expect_contains "text: the n/a block names the channel" \
	"[n/a] nic.queues (ethtool channels combined): NIC queues (channels) against the CPUs that could serve them
    not applicable: no network interface to check: nic.list is unavailable (No such file or directory: /sys/class/net)" \
	"$(cat "$TMP/gvm.txt")"

# ---- conntrack.drops: packets and evicted entries are not one unit ----
# The garage VM's counters (/proc/net/stat/nf_conntrack of the tree): drop
# 5937 packets, early_drop 77 entries; 5937 + 77 = 6014 events of a full table.
expect_eq "drops: the row counts events" "6014|events" \
	"$(jget "$TMP/gvm.json" '.findings[] | select(.rule == "conntrack.drops") | "\(.current)|\(.unit)"')"
expect_contains "drops: both parts named with their own units" \
	"Since boot (no hosttune apply in this boot to count from), conntrack dropped 5937 packets for want of an entry and evicted 77 entries early to make room; in all 6014 events of a full table." \
	"$(jget "$TMP/gvm.json" '.findings[] | select(.rule == "conntrack.drops") | .explanation')"
expect_contains "drops: text table" "conntrack.drops 6014 events" "$(tr -s " " <"$TMP/gvm.txt")"

# ---- conntrack.max counts: a rate of 0 and a budget of one entry ----
# 0/s x 120 s x 2 = 0 entries (0 takes the plural). A budget of 1e-7 of
# 503316480 bytes = 50 bytes: pow2floor(max(50 / 328, 1)) = 1 entry.
ht --root "$FIXTURES/garage-vm/root" --set workload.conn_rate=0 --set workload.mem_budget=0.0000001 \
	--format json audit >"$TMP/zero.json"
zero=$(jget "$TMP/zero.json" '.findings[] | select(.rule == "conntrack.max") | .explanation')
expect_contains "max: 0 entries" "0/s x 120 s x 2 = 0 entries;" "$zero"
expect_contains "max: the budget allows 1 entry" "an entry and its bucket allows 1 entry." "$zero"


# A fact that a text shows only when it could be read: with it gone from a
# host that has the rest (a tree without that sysctl, a counter the /proc
# fallback lacks), the text leaves it out rather than print a placeholder.
# Each fact below is dropped in turn from every verdict fixture, the
# nic-counters host (softnet drops) and the Garage VM.
"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$FIXTURES/nic-counters/root" facts >"$TMP/nicc.facts" 2>/dev/null
: >"$TMP/drop.txt"
m=0
for f in "$FIXTURES"/verdict/*.facts "$TMP/nicc.facts" "$FIXTURES/garage-vm/expected.facts"; do
	for fact in net.netfilter.nf_conntrack_tcp_timeout_syn_sent conntrack.stat.insert_failed \
		conntrack.stale.established \
		net.core.netdev_max_backlog net.core.netdev_budget net.core.netdev_budget_usecs; do
		grep -q "^$fact = " "$f" || continue
		grep -v "^$fact = " "$f" >"$TMP/drop.facts"
		for prof in default garage; do
			"$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$TMP/drop.facts" --profile $prof -v audit \
				2>&1 | sed "s|^|$(basename "$f") -$fact: |" >>"$TMP/drop.txt"
			m=$((m + 1))
		done
	done
done
echo "# $m audits with a fact dropped"
expect_eq "a fact dropped: no (unavailable)" "" "$(grep -F '(unavailable)' "$TMP/drop.txt")"

finish
