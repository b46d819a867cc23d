#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Links in a --root tree resolve inside the tree, as on the host it stands
# for: an absolute link to a secret outside is not read (the tree's own file
# of that name is, when it has one), a ".." never leaves the tree, and what
# libkmod and the rules loader would open through a link is refused with a
# reason. tests/path-safety.sh tries every path; these are the cases a user
# meets, with what hosttune says.
. "$(dirname "$0")/lib.sh" || exit 99

printf 'TOPSECRET-token\n' >"$TMP/secret"
cp -a "$FIXTURES/garage-vm/root" "$TMP/t"
T=$TMP/t

# kernel.release through an absolute link: the tree's $TMP/secret is absent.
ln -sf "$TMP/secret" "$T/proc/sys/kernel/osrelease"
out=$(ht --root "$T" facts 2>&1)
case $out in *TOPSECRET*) not_ok "an absolute link to a file outside is not read" "$out" ;;
*) ok "an absolute link to a file outside is not read" ;; esac
expect_contains "... kernel.release is unavailable: no such file in the tree" \
	'kernel.release = unavailable ENOENT from /proc/sys/kernel/osrelease' "$out"
# The same link resolves to the tree's own file when the tree has one.
mkdir -p "$T$TMP"
printf '6.1.0-tree\n' >"$T$TMP/secret"
expect_contains "... and to the tree's file of that path when there is one" \
	'kernel.release = "6.1.0-tree"' "$(ht --root "$T" facts 2>&1)"
# A relative link with more ".." than the tree is deep stops at its top.
ln -sf ../../../../../../../../../../secret "$T/proc/sys/kernel/osrelease"
printf '6.2.0-top\n' >"$T/secret"
expect_contains "'..' in a link stops at the tree's top" 'kernel.release = "6.2.0-top"' \
	"$(ht --root "$T" facts 2>&1)"
rm -rf "$T"
cp -a "$FIXTURES/garage-vm/root" "$T"

# etc/garage.toml -> a shadow file outside: no garage.toml in the tree, nothing quoted.
printf 'root:$6$SECRETHASH:20000:0:99999:7:::\n' >"$TMP/shadow"
mkdir -p "$T/etc"
ln -s "$TMP/shadow" "$T/etc/garage.toml"
out=$(ht --root "$T" --profile garage audit 2>&1)
case $out in *SECRETHASH*) not_ok "etc/garage.toml -> a shadow file: nothing of it shown" "$out" ;;
*) ok "etc/garage.toml -> a shadow file: nothing of it shown" ;; esac
expect_contains "... the tree has no garage.toml: Garage's own defaults" "from Garage default" "$out"
# --set garage.config with '..' past the top reads the tree's file.
printf 'metadata_dir = "/srv/OUTSIDE"\n' >"$TMP/x.toml"
out=$(ht --root "$T" --profile garage --set "garage.config=/../../../..$TMP/x.toml" facts 2>&1)
expect_contains "--set garage.config=/../..: the file outside is not read (the tree has none)" \
	"x.toml: No such file or directory (named by --set garage.config)" "$out"

# libkmod would open modprobe.d's files itself: a link there is refused.
mkdir -p "$T/etc/modprobe.d"
printf 'options nf_conntrack hashsize=99999\n' >"$TMP/ct.conf"
ln -s "$TMP/ct.conf" "$T/etc/modprobe.d/ct.conf"
out=$(ht --root "$T" facts 2>&1)
case $out in *99999*) not_ok "a modprobe.d link out of the tree is not read" "$out" ;;
*) ok "a modprobe.d link out of the tree is not read" ;; esac
expect_contains "... the options are unavailable, saying why" \
	"/etc/modprobe.d/ct.conf is a symbolic link, which libkmod would follow out of the tree" "$out"
# A link to /dev/null masks a file, as in kmod's own directories: no refusal.
ln -sf /dev/null "$T/etc/modprobe.d/ct.conf"
out=$(ht --root "$T" facts 2>&1)
case $out in *"would follow out"*) not_ok "a modprobe.d mask (link to /dev/null) is taken" "$out" ;;
*) ok "a modprobe.d mask (link to /dev/null) is taken" ;; esac

# A NIC's uevent whose DEVTYPE is not UTF-8 (bytes of the tree): that
# NIC's type is unknown, and the audit runs (it stopped with "collecting
# udev: Invalid argument", exit 2).
cp -a "$FIXTURES/nic-sysfs/root" "$TMP/n"
mkdir -p "$TMP/n/proc/sys/kernel"
printf '6.1.0\n' >"$TMP/n/proc/sys/kernel/osrelease"
printf 'MemTotal:        2000000 kB\n' >"$TMP/n/proc/meminfo"
printf 'DEVTYPE=wla\212n\nINTERFACE=eth0\n' >"$(readlink -f "$TMP/n/sys/class/net/eth0")/uevent"
ht --root "$TMP/n" audit >/dev/null 2>"$TMP/err"
rc=$?
[ "$rc" -le 1 ] && ok "a uevent DEVTYPE that is not UTF-8: the audit runs (exit $rc)" ||
	not_ok "a uevent DEVTYPE that is not UTF-8: the audit runs" "exit $rc: $(cat "$TMP/err")"

# One file of the tree that holds what no kernel writes (TIME_WAIT 'abc'):
# the rules that need it are not applicable, the audit completes (it
# stopped with exit 3 on that one fact).
cp -a "$FIXTURES/garage-vm/root" "$TMP/tw"
printf 'abc\n' >"$TMP/tw/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait"
ht --root "$TMP/tw" --format json audit >"$TMP/tw.json" 2>"$TMP/err"
rc=$?
[ "$rc" -le 1 ] && ok "TIME_WAIT 'abc': the audit completes (exit $rc)" ||
	not_ok "TIME_WAIT 'abc': the audit completes" "exit $rc: $(cat "$TMP/err")"
expect_eq "TIME_WAIT 'abc': conntrack.time_wait not applicable" false \
	"$(jq '.findings[] | select(.rule == "conntrack.time_wait") | .applicable' "$TMP/tw.json")"
# No nf_conntrack_max in the tree: no "(unavailable)" in any text.
rm "$TMP/tw/proc/sys/net/netfilter/nf_conntrack_max"
printf '120\n' >"$TMP/tw/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait"
out=$(ht --root "$TMP/tw" --set workload.time_wait=30 audit 2>&1)
case $out in *"(unavailable)"*) not_ok "no nf_conntrack_max: no (unavailable) in the text" "$out" ;;
*) ok "no nf_conntrack_max: no (unavailable) in the text" ;; esac

# A site rule without a severity whose value differs from the host's: info,
# not ok with a fix; the same value: ok.
mkdir -p "$TMP/rr"
cp -a "$HT_RULES_DIR/." "$TMP/rr/"
printf '[site.swap]\ntitle = swappiness\ntarget = sysctl vm.swappiness\ndirection = any\nvalue = 10\n' \
	>"$TMP/rr/site.rules"
mkdir -p "$TMP/tw/proc/sys/vm"
printf '60\n' >"$TMP/tw/proc/sys/vm/swappiness"
"$HOSTTUNE" --rules "$TMP/rr" --root "$TMP/tw" --format json audit >"$TMP/sw.json" 2>/dev/null
expect_eq "site rule 60 -> 10 without a severity: info with its fix" "info|true" \
	"$(jq -r '.findings[] | select(.rule == "site.swap") | "\(.severity)|\(.fix != null)"' "$TMP/sw.json")"
printf '10\n' >"$TMP/tw/proc/sys/vm/swappiness"
"$HOSTTUNE" --rules "$TMP/rr" --root "$TMP/tw" --format json audit >"$TMP/sw.json" 2>/dev/null
expect_eq "site rule already at 10: ok, no fix" "ok|false" \
	"$(jq -r '.findings[] | select(.rule == "site.swap") | "\(.severity)|\(.fix != null)"' "$TMP/sw.json")"

finish
