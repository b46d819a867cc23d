#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 10, "the verdict is true", plan/apply/verify/revert's part, on copies
# of the fixture trees: a later file that overrides hosttune's is named by
# plan and apply (exit 1) and judged by audit; a built-in nf_conntrack's
# hashsize points to the kernel command line everywhere; verify reports a
# --live-only apply; conntrack.drops counts from the last apply; --state
# outside --root is refused.
. "$(dirname "$0")/lib.sh"

G="--profile garage --set workload.conn_rate=570"
NF=proc/sys/net/netfilter
fresh() {
	rm -rf "$TMP/$1"
	cp -a "$FIXTURES/garage-vm/root" "$TMP/$1"
	# Garage deployed with a RAM buffer its 480 MiB fit (a quarter: 120 MiB),
	# so that the Garage pre-flight leaves the conntrack verdict to judge.
	mkdir -p "$TMP/$1/etc"
	cat >"$TMP/$1/etc/garage.toml" <<-EOF
		metadata_dir = "/var/lib/garage/meta"
		data_dir = "/var/lib/garage/data"
		block_ram_buffer_max = "32MiB"
		metadata_auto_snapshot_interval = "6h"
		rpc_bind_addr = "[::]:3901"
		rpc_secret = "0000000000000000000000000000000000000000000000000000000000000000"
		[s3_api]
		s3_region = "garage"
		api_bind_addr = "[::]:3900"
	EOF
}
# The garage VM's numbers (tests/fixtures/garage-vm/root): 480 MiB of RAM on
# 5.15, so the kernel's default is 480 MiB / 16384 / 8 = 3840 buckets, a
# multiple of 512: 4096 buckets and max 4096; TIME_WAIT 120 s. The profile
# recommends 570/s x 30 s x 3 = 51300 entries, next power of two 65536, and
# hashsize 65536 (65536 / 512 = 128 whole pages of bucket heads).
REC="systemd-sysctl reads sysctl.d in name order, the last value wins"

# ---- 4: /etc/sysctl.conf, read through Debian's 99-sysctl.conf link, overrides hosttune ----
fresh o
mkdir -p "$TMP/o/etc/sysctl.d"
printf 'net.netfilter.nf_conntrack_max = 4096\n' >"$TMP/o/etc/sysctl.conf"
ln -s ../sysctl.conf "$TMP/o/etc/sysctl.d/99-sysctl.conf"
# "99-sysctl.conf" sorts after "90-hosttune.conf" ('9' > '0' at the second byte).
WARN="  net.netfilter.nf_conntrack_max = 65536 in /etc/sysctl.d/90-hosttune.conf will not hold at boot: /etc/sysctl.conf (via /etc/sysctl.d/99-sysctl.conf):1 sets 4096 and is read later ($REC); edit or remove that line"
ht --root "$TMP/o" $G plan >"$TMP/o.plan"
# The fresh tree's files are still to write: 1 (changes), whatever the warning.
expect_eq "override: plan exits 1 (a preview with changes)" 1 $?
expect_eq "override: plan names the file and line" "Will not hold at boot:
$WARN" "$(sed -n '/^Will not hold at boot:/,$p' "$TMP/o.plan")"
ht --root "$TMP/o" $G apply >"$TMP/o.apply"
expect_eq "override: apply exits 1" 1 $?
expect_contains "override: apply still sets the live value" \
	"set net.netfilter.nf_conntrack_max from 4096 to 65536" "$(cat "$TMP/o.apply")"
expect_eq "override: apply names the file and line" "Will not hold at boot:
$WARN" "$(sed -n '/^Will not hold at boot:/,$p' "$TMP/o.apply")"
ht --root "$TMP/o" $G --format json apply >"$TMP/o.json"
expect_eq "override: a second apply exits 1 too" 1 $?
expect_eq "override: JSON holds_at_boot" false "$(jq .holds_at_boot "$TMP/o.json")"
expect_eq "override: JSON will_not_hold key and source" \
	"net.netfilter.nf_conntrack_max /etc/sysctl.d/99-sysctl.conf:1" \
	"$(jq -r '.will_not_hold[] | "\(.key) \(.source)"' "$TMP/o.json")"
# audit: live 65536 is ok, but the boot brings back 4096 < 65536 (raise-only): warning.
ht --root "$TMP/o" $G audit >"$TMP/o.audit"
expect_eq "override: audit exits 1 (--fail-on warning)" 1 $?
expect_contains "override: audit judges the boot value" \
	"conntrack.max 65536 entries (boot: 4096) 65536 entries warning" \
	"$(tr -s " " <"$TMP/o.audit")"
expect_contains "override: audit says what to do" \
	"at boot: 4096 from /etc/sysctl.conf (via /etc/sysctl.d/99-sysctl.conf):1, below the recommended 65536: the host comes back from a reboot with it; edit or remove that line" \
	"$(cat "$TMP/o.audit")"
expect_eq "override: audit JSON boot.worse" "true warning" \
	"$(ht --root "$TMP/o" $G --format json audit | jq -r '.findings[] | select(.rule == "conntrack.max") | "\(.boot.worse) \(.severity)"')"
# Removing the line the messages name makes everything hold.
: >"$TMP/o/etc/sysctl.conf"
ht --root "$TMP/o" $G apply >"$TMP/o.apply2"
expect_eq "override removed: apply exits 0" 0 $?
ht --root "$TMP/o" $G audit >/dev/null
expect_eq "override removed: audit exits 0" 0 $?

# A later file with more than hosttune's raise-only value is no problem:
# 131072 >= 65536.
fresh hi
mkdir -p "$TMP/hi/etc/sysctl.d"
printf 'net.netfilter.nf_conntrack_max = 131072\n' >"$TMP/hi/etc/sysctl.d/99-big.conf"
ht --root "$TMP/hi" $G plan >"$TMP/hi.plan"
expect_eq "a later, higher max: no warning" 0 "$(grep -c 'Will not hold' "$TMP/hi.plan")"
# TIME_WAIT has no direction: a later 120 is not the recommended 30.
printf 'net.netfilter.nf_conntrack_tcp_timeout_time_wait = 120\n' >"$TMP/hi/etc/sysctl.d/95-tw.conf"
ht --root "$TMP/hi" $G apply >"$TMP/hi.apply"
expect_eq "a later TIME_WAIT: apply exits 1" 1 $?
expect_contains "a later TIME_WAIT: named" \
	"net.netfilter.nf_conntrack_tcp_timeout_time_wait = 30 in /etc/sysctl.d/90-hosttune.conf will not hold at boot: /etc/sysctl.d/95-tw.conf:1 sets 120" \
	"$(cat "$TMP/hi.apply")"
# An earlier name is overridden by hosttune's file: no warning.
fresh early
mkdir -p "$TMP/early/etc/sysctl.d" "$TMP/early/etc/modprobe.d"
printf 'net.netfilter.nf_conntrack_max = 4096\n' >"$TMP/early/etc/sysctl.d/10-old.conf"
printf 'options nf_conntrack hashsize=4096\n' >"$TMP/early/etc/modprobe.d/alpha.conf"
ht --root "$TMP/early" $G apply >/dev/null
expect_eq "earlier names: apply exits 0" 0 $?
# modprobe.d: "local.conf" sorts after "hosttune.conf" ('l' > 'h'), and kmod
# passes every options line in order: the last hashsize wins.
printf 'options nf_conntrack hashsize=4096\n' >"$TMP/early/etc/modprobe.d/local.conf"
ht --root "$TMP/early" $G apply >"$TMP/early.apply"
expect_eq "a later modprobe.d file: apply exits 1" 1 $?
expect_contains "a later modprobe.d file: named" \
	"options nf_conntrack hashsize=65536 in /etc/modprobe.d/hosttune.conf will not hold at the next load: /etc/modprobe.d/local.conf:1 gives hashsize=4096 and is read later (kmod reads modprobe.d in name order, the last value wins); edit or remove that line" \
	"$(cat "$TMP/early.apply")"

# ---- 5: a built-in nf_conntrack ----
fresh b
echo "kernel/net/netfilter/nf_conntrack.ko" >>"$TMP/b/lib/modules/5.15.0-91-generic/modules.builtin"
ht --root "$TMP/b" $G audit >"$TMP/b.audit"
expect_contains "built in: audit's fix is the kernel command line" \
	"fix: nf_conntrack.hashsize=65536 on the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub: modprobe.d never reaches a built-in module), and live in /sys/module/nf_conntrack/parameters/hashsize" \
	"$(cat "$TMP/b.audit")"
expect_eq "built in: no modprobe.d advice in the audit" 0 "$(grep -c 'in /etc/modprobe.d\|in modprobe.d\.' "$TMP/b.audit")"
expect_eq "built in: audit JSON fix" "true null nf_conntrack.hashsize=65536" \
	"$(ht --root "$TMP/b" $G --format json audit | jq -r '.findings[] | select(.rule == "conntrack.buckets") | "\(.fix.cmdline) \(.fix.file) \(.fix.line)"')"
ht --root "$TMP/b" $G plan >"$TMP/b.plan"
expect_eq "built in: plan writes only sysctl.d" "b/etc/sysctl.d/90-hosttune.conf" \
	"$(grep '^+++ ' "$TMP/b.plan" | cut -c5-)"
expect_eq "built in: the header names no modules-load.d file" \
	"+# profile or hosttune's rules.d instead of editing it. nf_conntrack is
+# built into this kernel: its net.netfilter keys exist when
+# systemd-sysctl runs." "$(sed -n '6,8p' "$TMP/b.plan")"
BW="  module.nf_conntrack.hashsize = 65536 will not hold at boot: nf_conntrack is built into this kernel, so no modprobe.d file reaches it and hosttune writes none; add nf_conntrack.hashsize=65536 to the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub)"
expect_eq "built in: plan says the kernel command line" "Will not hold at boot:
$BW" "$(sed -n '/^Will not hold at boot:/,$p' "$TMP/b.plan")"
ht --root "$TMP/b" $G apply >"$TMP/b.apply"
expect_eq "built in: apply exits 1" 1 $?
ht --root "$TMP/b" $G verify >"$TMP/b.verify"
expect_eq "built in: verify exits 1" 1 $?
expect_eq "built in: verify's advice is the kernel command line" \
	"PROBLEM hashsize is 65536 live, not the kernel's default 4096, and nf_conntrack is built into this kernel: only nf_conntrack.hashsize=65536 on the kernel command line keeps it (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub); modprobe.d never reaches it" \
	"$(grep '^PROBLEM' "$TMP/b.verify")"
# The command line gives another value: change it.
echo "root=/dev/vda1 nf_conntrack.hashsize=16384 quiet" >"$TMP/b/proc/cmdline"
ht --root "$TMP/b" $G apply >"$TMP/b.apply2"
expect_eq "built in, cmdline 16384: apply exits 1" 1 $?
expect_contains "built in, cmdline 16384: change it" \
	"the kernel command line gives nf_conntrack.hashsize=16384; change it to nf_conntrack.hashsize=65536" \
	"$(cat "$TMP/b.apply2")"
ht --root "$TMP/b" $G verify >"$TMP/b.verify3"
expect_eq "built in, cmdline 16384: verify says change it" \
	"PROBLEM hashsize is 65536 live, but nf_conntrack is built into this kernel and the kernel command line gives nf_conntrack.hashsize=16384: change it to 65536 (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub)" \
	"$(grep '^PROBLEM' "$TMP/b.verify3")"
# The command line gives it (nf-conntrack: the kernel reads '-' as '_'): holds.
echo "root=/dev/vda1 nf-conntrack.hashsize=65536 quiet" >"$TMP/b/proc/cmdline"
ht --root "$TMP/b" $G apply >/dev/null
expect_eq "built in, on the command line: apply exits 0" 0 $?
ht --root "$TMP/b" $G verify >"$TMP/b.verify2"
expect_eq "built in, on the command line: verify exits 0" 0 $?
expect_contains "built in, on the command line: holds" \
	"hashsize = 65536 live and at boot (nf_conntrack.hashsize=65536 on the kernel command line)" \
	"$(cat "$TMP/b.verify2")"

# Property, every fixture tree and every profile: the sysctl.d header names
# modules-load.d only when that file is written, and apply exits 1 exactly
# when its JSON lists settings that will not hold.
for tree in "$FIXTURES"/*/root; do
	name=$(basename "$(dirname "$tree")")
	for prof in default garage registry; do
		rm -rf "$TMP/p"
		cp -a "$tree" "$TMP/p"
		ht --root "$TMP/p" --profile "$prof" --format json apply >"$TMP/p.json" 2>/dev/null
		rc=$?
		[ "$rc" -le 1 ] || continue # not a host's tree (exit 3): nothing to apply
		n=$(jq '.will_not_hold | length' "$TMP/p.json")
		if { [ "$n" -eq 0 ] && [ "$rc" -eq 0 ]; } || { [ "$n" -gt 0 ] && [ "$rc" -eq 1 ]; }; then
			ok "$name/$prof: exit $rc with $n settings that will not hold"
		else
			not_ok "$name/$prof: exit $rc with $n settings that will not hold"
		fi
		f="$TMP/p/etc/sysctl.d/90-hosttune.conf"
		if [ -f "$f" ] && grep -q modules-load "$f" && [ ! -f "$TMP/p/etc/modules-load.d/hosttune.conf" ]; then
			not_ok "$name/$prof: sysctl.d header names a modules-load.d file not written"
		else
			ok "$name/$prof: sysctl.d header names only files written"
		fi
	done
done

# ---- 6: apply --live-only: live, persisted nowhere ----
fresh l
ht --root "$TMP/l" $G verify >"$TMP/l0.verify"
expect_eq "before any apply: the kernel's own values are no problem" 0 \
	"$(grep -c 'no sysctl.d file sets it' "$TMP/l0.verify")"
ht --root "$TMP/l" $G --live-only apply >/dev/null
ht --root "$TMP/l" $G verify >"$TMP/l.verify"
expect_eq "live-only: verify exits 1" 1 $?
expect_eq "live-only: every live-only value named" \
"hashsize is 65536 live, not the kernel's default 4096, but no modprobe.d option keeps it: it is lost when nf_conntrack next loads
net.netfilter.nf_conntrack_max is 65536 live, not the kernel's default 4096, but no sysctl.d file sets it: it is lost at the next boot (hosttune apply without --live-only persists it)
net.netfilter.nf_conntrack_tcp_timeout_time_wait is 30 live, not the kernel's default 120, but no sysctl.d file sets it: it is lost at the next boot (hosttune apply without --live-only persists it)" \
	"$(grep '^PROBLEM' "$TMP/l.verify" | sed 's/^PROBLEM *//' | LC_ALL=C sort)"

# ---- 7: conntrack.drops counts from the last apply ----
# The fixture's /proc/net/stat/nf_conntrack: drop 0x1731 = 5937, early_drop
# 0x4d = 77, since boot: 6014.
fresh d
ht --root "$TMP/d" $G audit >"$TMP/d0.audit"
expect_contains "before apply: drops since boot" \
	"conntrack.drops 6014 events" "$(tr -s " " <"$TMP/d0.audit")"
ht --root "$TMP/d" $G apply >/dev/null
expect_eq "apply records the counters" "5937 77" \
	"$(jq -r '.counters | "\(.["conntrack.stat.drop"]) \(.["conntrack.stat.early_drop"])"' "$TMP/d/var/lib/hosttune/state")"
ht --root "$TMP/d" $G --fail-on warning audit -v >"$TMP/d1.audit"
expect_eq "after apply: audit --fail-on warning exits 0" 0 $?
expect_contains "after apply: 0 drops since apply, ok" \
	"conntrack.drops 0 events - ok" "$(tr -s " " <"$TMP/d1.audit")"
expect_contains "after apply: both figures" \
	"Since the last hosttune apply (the counters since boot, 5937 and 77, less the 5937 and" "$(cat "$TMP/d1.audit")"
# 37 new drops since apply: 5937 - 5900 = 37, 77 - 77 = 0.
jq '.counters["conntrack.stat.drop"] = 5900' "$TMP/d/var/lib/hosttune/state" >"$TMP/st" &&
	cat "$TMP/st" >"$TMP/d/var/lib/hosttune/state"
ht --root "$TMP/d" $G audit >"$TMP/d2.audit"
expect_eq "drops since apply: exit 1" 1 $?
expect_contains "drops since apply: 37, warning" \
	"conntrack.drops 37 events - warning" "$(tr -s " " <"$TMP/d2.audit")"
# Another boot (boot_id differs): the counters since boot count again, 6014.
mkdir -p "$TMP/d/proc/sys/kernel/random"
echo 11111111-2222-3333-4444-555555555555 >"$TMP/d/proc/sys/kernel/random/boot_id"
jq '.counters.boot_id = "99999999-2222-3333-4444-555555555555"' "$TMP/d/var/lib/hosttune/state" >"$TMP/st" &&
	cat "$TMP/st" >"$TMP/d/var/lib/hosttune/state"
ht --root "$TMP/d" $G audit >"$TMP/d3.audit"
expect_contains "another boot: drops since boot" "conntrack.drops 6014 events" \
	"$(tr -s " " <"$TMP/d3.audit")"
# Counters above today's (no boot_id, a reboot all the same): since boot.
jq '.counters = {"conntrack.stat.drop": 9000, "conntrack.stat.early_drop": 0}' \
	"$TMP/d/var/lib/hosttune/state" >"$TMP/st" && cat "$TMP/st" >"$TMP/d/var/lib/hosttune/state"
ht --root "$TMP/d" $G audit >"$TMP/d4.audit"
expect_contains "counters went down: drops since boot" "conntrack.drops 6014 events" \
	"$(tr -s " " <"$TMP/d4.audit")"
# --state FILE is read for the counters too (the same 5937/77: 0 since apply).
fresh ds
ht --root "$TMP/ds" $G --state "$TMP/ds/st.json" apply >/dev/null
ht --root "$TMP/ds" $G --state "$TMP/ds/st.json" audit >/dev/null
expect_eq "--state: audit reads the counters from it" 0 $?

# ---- 14: --state outside --root ----
fresh s
rm -r "$TMP/s/etc" # the tree as it was: apply must not create etc/
ht --root "$TMP/s" $G --state "$TMP/out/x/state" apply >"$TMP/s.out" 2>"$TMP/s.err"
expect_eq "--state outside --root: exit 2" 2 $?
expect_eq "--state outside --root: one line" \
	"hosttune: --state $TMP/out/x/state is outside --root $TMP/s: apply would create it and its directories outside the tree; give a path below $(cd "$TMP/s" && pwd -P) (hosttune --help lists the usage)" \
	"$(cat "$TMP/s.err")"
expect_eq "--state outside --root: nothing created" "" "$(ls -d "$TMP/out" "$TMP/s/etc" 2>/dev/null)"
ht --root "$TMP/s" $G --state "$TMP/s/../out/state" apply 2>/dev/null
expect_eq "--state leaving --root with ..: exit 2" 2 $?
ht --root "$TMP/s" --state "$TMP/out/state" revert 2>/dev/null
expect_eq "revert with --state outside --root: exit 2" 2 $?
ht --root "$TMP/s" $G --state "$TMP/s/var/st/state" apply >/dev/null
expect_eq "--state below --root: exit 0" 0 $?
ht --root "$TMP/s" --state "$TMP/s/var/st/state" revert >/dev/null
expect_eq "--state below --root: revert exit 0" 0 $?

finish
