#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Which settings plan/apply put in hosttune's files: a value already set live
# is still persisted, --only leaves the other rules' lines alone, only-raise
# keeps hosttune's earlier raise, a built-in nf_conntrack gets no modprobe.d
# option, a container gets no modules-load.d, and a host that needs nothing
# gets no files; plan exits 1 when it has changes, 0 when in sync. All on copies of the Garage VM's --root tree.
. "$(dirname "$0")/lib.sh"

G="--profile garage --set workload.conn_rate=570"
fresh() {
	rm -rf "$TMP/$1"
	cp -a "$FIXTURES/garage-vm/root" "$TMP/$1"
}
has() { grep -qx "$2" "$TMP/$1" && echo yes || echo no; }

# A live-only apply, then a full one: the live values match already, but the
# boot would bring back 4096 and 120 s, so they go into the files.
fresh l
ht --root "$TMP/l" $G --live-only apply >/dev/null
ht --root "$TMP/l" $G apply >"$TMP/out"
expect_contains "after --live-only, apply persists" "created /etc/sysctl.d/90-hosttune.conf" "$(cat "$TMP/out")"
expect_eq "TIME_WAIT 30 persisted (the kernel boots with 120)" yes \
	"$(has l/etc/sysctl.d/90-hosttune.conf 'net.netfilter.nf_conntrack_tcp_timeout_time_wait = 30')"
expect_eq "max 65536 persisted (the kernel boots with 4096)" yes \
	"$(has l/etc/sysctl.d/90-hosttune.conf 'net.netfilter.nf_conntrack_max = 65536')"

# --only changes one rule's line and keeps the others.
fresh o
ht --root "$TMP/o" $G apply >/dev/null
# Without --only, a budget of half the RAM would raise the max:
# 503316480 x 0.5 / 328 = 767251 -> 524288; 570 x 30 x 3 = 51300 -> 65536... so
# ask for more: 5000/s x 30 s x 3 = 450000 -> 524288.
B="--profile garage --set workload.conn_rate=5000 --set workload.mem_budget=0.5"
ht --root "$TMP/o" $B plan | grep -q '^+net.netfilter.nf_conntrack_max = 524288'
expect_eq "without --only the max would change" 0 $?
ht --root "$TMP/o" $B --only conntrack.time_wait apply >"$TMP/out"
# TIME_WAIT is 30 already: nothing to do for the one rule named
expect_contains "--only on a setting that holds: no change" "No changes" "$(cat "$TMP/out")"
expect_eq "--only keeps nf_conntrack_max's line" yes \
	"$(has o/etc/sysctl.d/90-hosttune.conf 'net.netfilter.nf_conntrack_max = 65536')"
expect_eq "--only keeps the modprobe.d option" yes \
	"$(has o/etc/modprobe.d/hosttune.conf 'options nf_conntrack hashsize=65536')"
ht --root "$TMP/o" $G --only "" plan 2>"$TMP/err"
expect_eq "--only with nothing: exit 2" 2 $?
expect_eq "--only with nothing: says so" \
	"hosttune: --only: expected rule ids separated by commas, found nothing" "$(cat "$TMP/err")"

# Only raise: after a raise to 65536, a profile that asks for less
# (300/s x 30 s x 3 = 27000 -> 32768) keeps 65536 in the file.
fresh k
ht --root "$TMP/k" $G apply >/dev/null
ht --root "$TMP/k" --profile garage --set workload.conn_rate=300 plan >"$TMP/out"
expect_contains "a smaller recommendation changes nothing" "No changes" "$(cat "$TMP/out")"
ht --root "$TMP/k" --profile garage --set workload.conn_rate=300 apply >/dev/null
expect_eq "hosttune's earlier raise stays persisted" yes \
	"$(has k/etc/sysctl.d/90-hosttune.conf 'net.netfilter.nf_conntrack_max = 65536')"

# nf_conntrack built in: modprobe.d never reaches it, and no modules-load.d is needed.
fresh b
echo "kernel/net/netfilter/nf_conntrack.ko" >>"$TMP/b/lib/modules/5.15.0-91-generic/modules.builtin"
ht --root "$TMP/b" --no-measure facts | grep '^conntrack.module' >"$TMP/state"
if grep -q '"builtin"' "$TMP/state"; then
	ht --root "$TMP/b" $G apply >/dev/null
	expect_eq "built in: no modprobe.d file" no "$([ -e "$TMP/b/etc/modprobe.d/hosttune.conf" ] && echo yes || echo no)"
	expect_eq "built in: no modules-load.d file" no \
		"$([ -e "$TMP/b/etc/modules-load.d/hosttune.conf" ] && echo yes || echo no)"
	expect_eq "built in: hashsize still set live" 65536 "$(cat "$TMP/b/sys/module/nf_conntrack/parameters/hashsize")"
	expect_contains "built in: the finding names the kernel command line" "nf_conntrack.hashsize=65536 on the kernel command line" \
		"$(ht --root "$TMP/b" $G --format json audit | jq -r '.findings[] | select(.rule == "conntrack.buckets") | .explanation')"
else
	not_ok "the tree reads as built in" "$(cat "$TMP/state")"
fi

# A container (nf_conntrack_max read-only): TIME_WAIT only, no modules-load.d.
fresh c
chmod 0444 "$TMP/c/proc/sys/net/netfilter/nf_conntrack_max"
ht --root "$TMP/c" $G apply >/dev/null
expect_eq "container: TIME_WAIT persisted" yes \
	"$(has c/etc/sysctl.d/90-hosttune.conf 'net.netfilter.nf_conntrack_tcp_timeout_time_wait = 30')"
expect_eq "container: no nf_conntrack_max line" no \
	"$(has c/etc/sysctl.d/90-hosttune.conf 'net.netfilter.nf_conntrack_max = 65536')"
expect_eq "container: no modules-load.d file" no \
	"$([ -e "$TMP/c/etc/modules-load.d/hosttune.conf" ] && echo yes || echo no)"

# A host at the kernel's defaults that needs nothing (default profile on the
# 12 GiB 5.10 client: 24000 -> 32768 < the default 262144): no files at all.
mkdir -p "$TMP/h/proc/sys/kernel" "$TMP/h/proc/sys/net/netfilter" "$TMP/h/sys/devices/system/cpu" \
	"$TMP/h/sys/module/nf_conntrack/parameters"
echo 'MemTotal:       12288000 kB' >"$TMP/h/proc/meminfo"
echo 5.10.0-26-amd64 >"$TMP/h/proc/sys/kernel/osrelease"
echo x86_64 >"$TMP/h/proc/sys/kernel/arch"
echo 0-7 >"$TMP/h/sys/devices/system/cpu/online"
echo 262144 >"$TMP/h/proc/sys/net/netfilter/nf_conntrack_max"
echo 65536 >"$TMP/h/proc/sys/net/netfilter/nf_conntrack_buckets"
echo 10 >"$TMP/h/proc/sys/net/netfilter/nf_conntrack_count"
echo 120 >"$TMP/h/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait"
echo 65536 >"$TMP/h/sys/module/nf_conntrack/parameters/hashsize"
ht --root "$TMP/h" --profile default plan >"$TMP/out"
# hashsize: the 4:1 default gives chain length 8, recommended 262144 buckets (info):
# that one setting is wanted, nothing else.
expect_eq "defaults host: only the hashsize option is planned" \
	"+options nf_conntrack hashsize=262144" "$(grep '^+options\|^+net\.' "$TMP/out")"

# plan's exit status, as diff(1)'s: 1 when apply would change the host, 0
# when the host matches the plan. The fresh tree's 4096 entries and 120 s
# TIME_WAIT are below the garage profile's 65536 and 30 s: apply would write.
fresh x
ht --root "$TMP/x" $G plan >/dev/null
expect_eq "plan with changes: exit 1" 1 $?
ht --root "$TMP/x" $G --format json plan >"$TMP/x.json"
expect_eq "plan JSON with changes: exit 1, would_change true" "1 true" "$? $(jq .would_change "$TMP/x.json")"
ht --root "$TMP/x" $G --dry-run apply >/dev/null
expect_eq "apply --dry-run with changes: exit 1, as plan" 1 $?
ht --root "$TMP/x" $G apply >/dev/null
ht --root "$TMP/x" $G plan >"$TMP/out"
expect_eq "plan in sync after apply: exit 0, no changes" \
	"0 No changes: the files and live values already match the plan." "$? $(cat "$TMP/out")"
ht --root "$TMP/x" $G --format json plan >"$TMP/x.json"
expect_eq "plan JSON in sync: exit 0, would_change false" "0 false" "$? $(jq .would_change "$TMP/x.json")"

finish
