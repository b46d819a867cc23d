#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# First boot fixes this boot too. The Garage VM at first boot
# (tests/fixtures/first-boot: 480 MiB, 5.15, nf_conntrack a module not loaded
# yet). apply persists nf_conntrack in modules-load.d, so it loads the module
# now (libkmod, after writing modprobe.d, so with hashsize from it) and then
# sets the live values, instead of leaving the kernel's defaults until the
# next reboot: 4096 buckets and max 4096 (503316480 / 16384 / 8 = 3840 -> 4096
# on 5.15), a ceiling of 4096 / 120 = 34 new connections/s.
#
# The module is never loaded on the host running the tests: tests/hosttune-hooks
# (HT_TEST_HOOKS) "loads" it into the tree by copying $TMP/loaded (what the
# 5.15 kernel creates for 480 MiB: /sys/module/nf_conntrack and its
# /proc/sys/net/netfilter keys with those defaults) and writing the options
# of the tree's etc/modprobe.d/hosttune.conf into its parameters, as the
# kernel takes them. The real binary plans no load below --root.
. "$(dirname "$0")/lib.sh"

HOOKS=${HT_HOOKS:-${HT_BUILD_TESTS_DIR:+$HT_BUILD_TESTS_DIR/hosttune-hooks}}
if [ -z "$HOOKS" ] || [ ! -x "$HOOKS" ]; then
	echo "# SKIP: tests/hosttune-hooks not built (HT_BUILD_TESTS_DIR or HT_HOOKS)"
	exit 77
fi
hk() {
	"$HOOKS" --rules "$HT_RULES_DIR" "$@"
}
L=$TMP/loaded
mkdir -p "$L/sys/module/nf_conntrack/parameters" "$L/proc/sys/net/netfilter"
echo live >"$L/sys/module/nf_conntrack/initstate"
echo 4096 >"$L/sys/module/nf_conntrack/parameters/hashsize"
echo 4096 >"$L/proc/sys/net/netfilter/nf_conntrack_buckets"
echo 4096 >"$L/proc/sys/net/netfilter/nf_conntrack_max"
echo 120 >"$L/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait"
echo 0 >"$L/proc/sys/net/netfilter/nf_conntrack_count"

fresh() {
	rm -rf "$TMP/g"
	cp -a "$FIXTURES/first-boot/root" "$TMP/g"
}
NF=$TMP/g/proc/sys/net/netfilter

# ---- the installed binary: below --root no load is planned ----
fresh
ht --root "$TMP/g" --format json plan >"$TMP/plan-real.json"
expect_eq "hosttune below --root: no load, the keys 'does not exist now'" "null 3" \
	"$(jget "$TMP/plan-real.json" .load_module) $(jq '[.live[] | select(.note != null)] | length' \
		"$TMP/plan-real.json")"

# ---- plan: the load, and the keys set after it ----
export HOSTTUNE_TEST_MODLOAD="$L"
hk --root "$TMP/g" --format json plan >"$TMP/plan.json"
expect_eq "plan: load nf_conntrack, 3 live values after it" "nf_conntrack 3" \
	"$(jget "$TMP/plan.json" .load_module) $(jq '[.live[] | select(.after_load)] | length' \
		"$TMP/plan.json")"
hk --root "$TMP/g" plan >"$TMP/plan.txt"
expect_contains "plan text: says it loads it now" "Load now: nf_conntrack (through libkmod" \
	"$(cat "$TMP/plan.txt")"

# ---- apply: files, then the load with their options, then the live values ----
tree_sums "$TMP/g" >"$TMP/before.sums"
hk --root "$TMP/g" apply >"$TMP/apply.out" 2>&1
expect_eq "apply exits 0" 0 $?
expect_contains "apply: says it loaded it" "loaded nf_conntrack (libkmod" "$(cat "$TMP/apply.out")"
want_hash=$(sed -n 's/^options nf_conntrack hashsize=\([0-9]*\)$/\1/p' "$TMP/g/etc/modprobe.d/hosttune.conf")
expect_eq "the module loaded with the hashsize apply wrote in modprobe.d just before" \
	"$want_hash" "$(cat "$TMP/g/sys/module/nf_conntrack/parameters/hashsize")"
expect_contains "apply: hashsize needed no write" \
	"module.nf_conntrack.hashsize is $want_hash already, as it loaded" "$(cat "$TMP/apply.out")"
want_max=$(sed -n 's/^net.netfilter.nf_conntrack_max = \([0-9]*\)$/\1/p' "$TMP/g/etc/sysctl.d/90-hosttune.conf")
expect_eq "live nf_conntrack_max is the sysctl.d line's, not the 4096 it loaded with" \
	"$want_max" "$(cat "$NF/nf_conntrack_max")"
expect_contains "apply: max set from the value it loaded with" \
	"set net.netfilter.nf_conntrack_max from 4096 to $want_max" "$(cat "$TMP/apply.out")"
expect_eq "modules-load.d lists nf_conntrack" "nf_conntrack" \
	"$(grep -v '^#' "$TMP/g/etc/modules-load.d/hosttune.conf" | grep .)"
expect_eq "the state keeps the loaded defaults for revert" "4096" \
	"$(jq -r '.live[] | select(.key == "net.netfilter.nf_conntrack_max") | .old' \
		"$TMP/g/var/lib/hosttune/state")"
hk --root "$TMP/g" verify >"$TMP/verify.out" 2>&1
expect_eq "verify exits 0: this boot matches the next" 0 $?

# ---- revert: the files go, the live values are the kernel's defaults again ----
hk --root "$TMP/g" revert >"$TMP/revert.out" 2>&1
expect_eq "revert exits 0" 0 $?
expect_eq "revert: nf_conntrack_max back to the 4096 it loaded with" 4096 "$(cat "$NF/nf_conntrack_max")"
expect_eq "revert: no hosttune file left" "" \
	"$(ls "$TMP/g/etc/sysctl.d" "$TMP/g/etc/modprobe.d" "$TMP/g/etc/modules-load.d" 2>/dev/null | grep hosttune)"

# ---- a failed load: exit 3, the tree as it was ----
fresh
tree_sums "$TMP/g" >"$TMP/before.sums"
HOSTTUNE_TEST_MODLOAD_FAIL=1 hk --root "$TMP/g" apply >"$TMP/out" 2>"$TMP/err"
expect_eq "load refused: exit 3" 3 $?
expect_contains "load refused: says so" "loading nf_conntrack (libkmod): Operation not permitted" \
	"$(cat "$TMP/err")"
tree_sums "$TMP/g" >"$TMP/after.sums"
if cmp -s "$TMP/before.sums" "$TMP/after.sums"; then ok "load refused: the tree as it was"
else not_ok "load refused: the tree as it was" "$(diff "$TMP/before.sums" "$TMP/after.sums")"; fi

# ---- a live write fails after the load: rolled back and unloaded ----
fresh
tree_sums "$TMP/g" >"$TMP/before.sums"
mkdir -p "$TMP/L2"
cp -a "$L/." "$TMP/L2/"
rm "$TMP/L2/proc/sys/net/netfilter/nf_conntrack_max"
mkdir "$TMP/L2/proc/sys/net/netfilter/nf_conntrack_max"
HOSTTUNE_TEST_MODLOAD="$TMP/L2" hk --root "$TMP/g" apply >"$TMP/out" 2>"$TMP/err"
expect_eq "write after the load fails: exit 3" 3 $?
tree_sums "$TMP/g" >"$TMP/after.sums"
if cmp -s "$TMP/before.sums" "$TMP/after.sums"; then ok "write after the load fails: unloaded, the tree as it was"
else not_ok "write after the load fails: unloaded, the tree as it was" "$(diff "$TMP/before.sums" "$TMP/after.sums")"; fi

# ---- --persist-only and --live-only load nothing ----
fresh
hk --root "$TMP/g" --format json plan --persist-only >"$TMP/p1.json"
hk --root "$TMP/g" --format json plan --live-only >"$TMP/p2.json"
expect_eq "--persist-only, --live-only: no load" "null null" \
	"$(jget "$TMP/p1.json" .load_module) $(jget "$TMP/p2.json" .load_module)"

finish
