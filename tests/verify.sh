#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# hosttune verify over copies of the Garage VM's --root tree: after apply
# everything holds; after a simulated reboot without the boot-order fix it
# names exactly the settings that are lost; and each way a setting fails to
# hold (drift, a later file, /etc/sysctl.conf, a -key line, hashsize live
# only or stale or built in, broken modprobe.d, an obsolete module name,
# kube-proxy, a hand edit) is reported with its exact message.
. "$(dirname "$0")/lib.sh"

G="--profile garage --set workload.conn_rate=570"
NF=proc/sys/net/netfilter
fresh() {
	rm -rf "$TMP/$1"
	cp -a "$FIXTURES/garage-vm/root" "$TMP/$1"
	ht --root "$TMP/$1" $G apply >/dev/null || not_ok "$1: apply"
}
# verify NAME: stdout in $TMP/NAME.out, exit status in $rc
verify() {
	ht --root "$TMP/$1" $G verify >"$TMP/$1.out" 2>&1
	rc=$?
}
problems() { grep '^PROBLEM' "$TMP/$1.out" | sed 's/^PROBLEM *//'; }

# A host hosttune never applied to: verify checks hosttune's own settings,
# and there are none, so it exits 0 and says so; its first line says what
# it checks and that audit judges the host against the profile (here 1:
# the fixture's 4096 entries are critical at 570/s).
FIRST="hosttune verify: do the settings hosttune applied hold now and after a reboot? (whether the host matches the profile: hosttune audit)"
rm -rf "$TMP/n"
cp -a "$FIXTURES/garage-vm/root" "$TMP/n"
verify n
expect_eq "never applied: exit 0, what it checks, nothing to verify" "0|$FIRST|nothing to verify: no hosttune setting is persisted on this host (hosttune apply persists them)" \
	"$rc|$(tr '\n' '|' <"$TMP/n.out" | sed 's/|$//')"
ht --root "$TMP/n" $G audit >/dev/null
expect_eq "never applied: audit exits 1 (the host does not match the profile)" 1 $?

fresh a
verify a
expect_eq "after apply: the first line says what verify checks" "$FIRST" "$(head -n 1 "$TMP/a.out")"
expect_eq "after apply: exit 0" 0 "$rc"
expect_eq "after apply: three settings hold" 3 "$(grep -c '^ok' "$TMP/a.out")"
expect_contains "after apply: the boot value's file and line" \
	"net.netfilter.nf_conntrack_max = 65536 live and at boot (/etc/sysctl.d/90-hosttune.conf:8)" \
	"$(cat "$TMP/a.out")"

# A simulated reboot as systemd would do it WITHOUT the boot-order fix:
# live values back to the kernel's defaults (max and buckets 4096 for 480 MiB
# on 5.15, TIME_WAIT 120); systemd-sysctl runs before nf_conntrack is loaded,
# so its net.netfilter keys fail; the module then loads with modprobe.d's
# hashsize=65536.
cp -a "$TMP/a" "$TMP/r"
rm "$TMP/r/etc/modules-load.d/hosttune.conf"
echo 4096 >"$TMP/r/$NF/nf_conntrack_max"
echo 120 >"$TMP/r/$NF/nf_conntrack_tcp_timeout_time_wait"
echo 65536 >"$TMP/r/sys/module/nf_conntrack/parameters/hashsize"
verify r
expect_eq "reboot without the fix: exit 1" 1 "$rc"
expect_eq "reboot without the fix: exactly these settings are lost" \
"net.netfilter.nf_conntrack_max is set in /etc/sysctl.d/90-hosttune.conf:8 but nothing loads nf_conntrack before systemd-sysctl runs (no modules-load.d entry, not built in): it will not hold at boot
net.netfilter.nf_conntrack_max is 4096 live but 65536 at boot (/etc/sysctl.d/90-hosttune.conf:8): most likely the boot applied it before nf_conntrack loaded
net.netfilter.nf_conntrack_tcp_timeout_time_wait is set in /etc/sysctl.d/90-hosttune.conf:11 but nothing loads nf_conntrack before systemd-sysctl runs (no modules-load.d entry, not built in): it will not hold at boot
net.netfilter.nf_conntrack_tcp_timeout_time_wait is 120 live but 30 at boot (/etc/sysctl.d/90-hosttune.conf:11): most likely the boot applied it before nf_conntrack loaded
/etc/modules-load.d/hosttune.conf was removed since hosttune apply wrote it" \
	"$(problems r)"

# audit shows the live and the boot value side by side when they differ.
ht --root "$TMP/r" $G audit >"$TMP/r.audit"
expect_contains "audit: live and boot value" "4096 entries (boot: 65536)" "$(cat "$TMP/r.audit")"
expect_contains "audit: where the boot value comes from" \
	"at boot: 65536 from /etc/sysctl.d/90-hosttune.conf:8" "$(cat "$TMP/r.audit")"
expect_eq "audit JSON: boot source" "/etc/sysctl.d/90-hosttune.conf:8" \
	"$(ht --root "$TMP/r" $G --format json audit | jq -r '.findings[] | select(.rule == "conntrack.max") | .boot.source')"

# The same reboot WITH the fix: nf_conntrack loads first, sysctl.d applies.
cp -a "$TMP/a" "$TMP/r2"
echo 65536 >"$TMP/r2/$NF/nf_conntrack_max"
echo 30 >"$TMP/r2/$NF/nf_conntrack_tcp_timeout_time_wait"
verify r2
expect_eq "reboot with the fix: everything holds" 0 "$rc"

# sysctl -w after apply: drift.
cp -a "$TMP/a" "$TMP/d"
echo 60 >"$TMP/d/$NF/nf_conntrack_tcp_timeout_time_wait"
verify d
expect_eq "drift: exit 1" 1 "$rc"
expect_eq "drift: message" \
	"net.netfilter.nf_conntrack_tcp_timeout_time_wait is 60 live but 30 at boot (/etc/sysctl.d/90-hosttune.conf:11): someone ran sysctl -w, or the boot did not apply it" \
	"$(problems d)"

# A file that sorts later overrides hosttune's.
cp -a "$TMP/a" "$TMP/o"
printf '# local\nnet.netfilter.nf_conntrack_max = 16384\n' >"$TMP/o/etc/sysctl.d/99-local.conf"
verify o
expect_contains "later file: message" \
	"net.netfilter.nf_conntrack_max = 65536 in /etc/sysctl.d/90-hosttune.conf:8 is overridden at boot by /etc/sysctl.d/99-local.conf:2 (= 16384), which is read later" \
	"$(problems o)"

# /etc/sysctl.conf, read through Debian's 99-sysctl.conf link, wins too.
cp -a "$TMP/a" "$TMP/s"
printf 'net.netfilter.nf_conntrack_tcp_timeout_time_wait = 120\n' >"$TMP/s/etc/sysctl.conf"
ln -s ../sysctl.conf "$TMP/s/etc/sysctl.d/99-sysctl.conf"
verify s
expect_contains "/etc/sysctl.conf: message" \
	"is overridden at boot by /etc/sysctl.conf (via /etc/sysctl.d/99-sysctl.conf):1 (= 120)" \
	"$(problems s)"

# A "-key" line (failure ignored) still sets the value.
cp -a "$TMP/a" "$TMP/k"
printf -- '-net.netfilter.nf_conntrack_max = 32768\n' >"$TMP/k/etc/sysctl.d/95-k.conf"
verify k
expect_contains "-key line: overrides" \
	"overridden at boot by /etc/sysctl.d/95-k.conf:1 (= 32768)" "$(problems k)"

# A vendor file in /usr/lib that would override hosttune's, masked by a /dev/null
# link of the same name in /etc: hosttune's value holds.
cp -a "$TMP/a" "$TMP/m"
mkdir -p "$TMP/m/usr/lib/sysctl.d"
printf 'net.netfilter.nf_conntrack_max = 8192\n' >"$TMP/m/usr/lib/sysctl.d/99-vendor.conf"
verify m
expect_contains "vendor file: overrides" "overridden at boot by /usr/lib/sysctl.d/99-vendor.conf:1" \
	"$(problems m)"
ln -s /dev/null "$TMP/m/etc/sysctl.d/99-vendor.conf"
verify m
expect_eq "vendor file masked by /dev/null: holds" 0 "$rc"
# The same name in /etc replaces the vendor file (here without the key): holds.
rm "$TMP/m/etc/sysctl.d/99-vendor.conf"
printf 'kernel.printk = 4 4 1 7\n' >"$TMP/m/etc/sysctl.d/99-vendor.conf"
verify m
expect_eq "vendor file replaced by the same name in /etc: holds" 0 "$rc"

# hashsize set live only (apply --live-only): lost at the next module load.
rm -rf "$TMP/h"
cp -a "$FIXTURES/garage-vm/root" "$TMP/h"
ht --root "$TMP/h" $G --live-only --only conntrack.buckets apply >/dev/null
verify h
expect_contains "hashsize live only" \
	"hashsize is 65536 live, not the kernel's default 4096, but no modprobe.d option keeps it: it is lost when nf_conntrack next loads" \
	"$(problems h)"

# hashsize in modprobe.d but another live value: loaded before, or a stale initramfs.
cp -a "$TMP/a" "$TMP/st"
echo 4096 >"$TMP/st/sys/module/nf_conntrack/parameters/hashsize"
verify st
expect_contains "hashsize stale" \
	"hashsize is 4096 live but /etc/modprobe.d/hosttune.conf:7 gives 65536: the module loaded before the option was written, or the initramfs holds an older copy of modprobe.d (update-initramfs -u)" \
	"$(problems st)"

# hashsize in modprobe.d while nf_conntrack is built in.
cp -a "$TMP/a" "$TMP/b"
echo "kernel/net/netfilter/nf_conntrack.ko" >>"$TMP/b/lib/modules/5.15.0-91-generic/modules.builtin"
verify b
expect_contains "hashsize for a built-in module" \
	"hashsize=65536 is set in /etc/modprobe.d/hosttune.conf:7 but nf_conntrack is built into this kernel: modprobe.d never reaches it, only nf_conntrack.hashsize= on the kernel command line does" \
	"$(problems b)"

# Broken modprobe.d lines: spaces around '=' and a parameter nf_conntrack lacks.
cp -a "$TMP/a" "$TMP/x"
printf 'options nf_conntrack hashsize = 65536\noptions nf_conntrack nf_conntrack_max=65536\n' \
	>"$TMP/x/etc/modprobe.d/local.conf"
verify x
expect_contains "modprobe.d: spaces around =" "/etc/modprobe.d/local.conf:1:" "$(problems x)"
expect_contains "modprobe.d: unknown parameter" "/etc/modprobe.d/local.conf:2:" "$(problems x)"
expect_contains "modprobe.d: unknown parameter named" "nf_conntrack_max" "$(problems x)"

# nf_conntrack_ipv4 in modules-load.d on 5.15 (merged away in 4.19).
cp -a "$TMP/a" "$TMP/v4"
printf 'nf_conntrack_ipv4\n' >"$TMP/v4/etc/modules-load.d/old.conf"
verify v4
expect_eq "obsolete module name" \
	"/etc/modules-load.d/old.conf:1 loads nf_conntrack_ipv4, which does not exist since 4.19 (merged into nf_conntrack): systemd-modules-load reports 'Failed to find module' at every boot; list nf_conntrack instead" \
	"$(problems v4)"

# kube-proxy's values: max(32768 x 4, 131072) = 131072, hashsize 131072 / 4 = 32768.
rm -rf "$TMP/kp"
cp -a "$FIXTURES/garage-vm/root" "$TMP/kp"
echo 0-3 >"$TMP/kp/sys/devices/system/cpu/online"
echo 131072 >"$TMP/kp/$NF/nf_conntrack_max"
echo 32768 >"$TMP/kp/$NF/nf_conntrack_buckets"
echo 32768 >"$TMP/kp/sys/module/nf_conntrack/parameters/hashsize"
verify kp
expect_contains "kube-proxy owns nf_conntrack_max" \
	"nf_conntrack_max 131072 matches kube-proxy's formula (max(32768 x CPUs, 131072), hashsize at least max / 4): kube-proxy rewrites it when it starts, so sysctl.d is futile; set kube-proxy's --conntrack-max-per-core (conntrack.maxPerCore) instead" \
	"$(problems kp)"

# A hand edit of hosttune's file since apply.
cp -a "$TMP/a" "$TMP/e"
sed -i 's/= 30$/= 45/' "$TMP/e/etc/sysctl.d/90-hosttune.conf"
echo 45 >"$TMP/e/$NF/nf_conntrack_tcp_timeout_time_wait"
verify e
expect_eq "hand edit" "/etc/sysctl.d/90-hosttune.conf was edited since hosttune apply wrote it" \
	"$(problems e)"

# "-key" without a value cancels the key at boot: systemd-sysctl leaves it alone.
cp -a "$TMP/a" "$TMP/neg"
printf -- '-net.netfilter.nf_conntrack_max\n' >"$TMP/neg/etc/sysctl.d/99-neg.conf"
verify neg
expect_eq "-key without a value: cancelled" \
	"net.netfilter.nf_conntrack_max = 65536 in /etc/sysctl.d/90-hosttune.conf:8 is cancelled at boot by /etc/sysctl.d/99-neg.conf:1 ('-net.netfilter.nf_conntrack_max' without a value: systemd-sysctl leaves the key alone)" \
	"$(problems neg)"

# Not problems: a later file with the same value; the module named with a
# dash (kmod reads nf-conntrack as nf_conntrack); hashsize=100000, which the
# kernel rounds up to whole pages of 512 heads: 196 x 512 = 100352.
cp -a "$TMP/a" "$TMP/fine"
printf 'net.netfilter.nf_conntrack_max = 65536\n' >"$TMP/fine/etc/sysctl.d/99-same.conf"
verify fine
expect_eq "a later file with the same value: holds" 0 "$rc"
rm "$TMP/fine/etc/modules-load.d/hosttune.conf"
printf 'nf-conntrack\n' >"$TMP/fine/etc/modules-load.d/dash.conf"
verify fine
expect_eq "nf-conntrack in modules-load.d loads it: only the removed file is reported" \
	"/etc/modules-load.d/hosttune.conf was removed since hosttune apply wrote it" "$(problems fine)"
cp -a "$TMP/a" "$TMP/round"
sed -i 's/hashsize=65536/hashsize=100000/' "$TMP/round/etc/modprobe.d/hosttune.conf"
echo 100352 >"$TMP/round/sys/module/nf_conntrack/parameters/hashsize"
verify round
expect_eq "hashsize 100000 is 100352 live: only the hand edit is reported" \
	"/etc/modprobe.d/hosttune.conf was edited since hosttune apply wrote it" "$(problems round)"

# --state naming no file is a problem, not a silent pass.
ht --root "$TMP/a" $G --state "$TMP/a.sate" verify >"$TMP/st.out" 2>&1
expect_eq "--state with no file: exit 1" 1 $?
expect_contains "--state with no file: says so" "--state names no hosttune state file" "$(cat "$TMP/st.out")"

# JSON: holds false and the count.
ht --root "$TMP/e" $G --format json verify >"$TMP/e.json"
expect_eq "JSON: holds" false "$(jq .holds "$TMP/e.json")"
expect_eq "JSON: problems" 1 "$(jq .problems "$TMP/e.json")"

finish
