#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A site rule on a sysctl hosttune has no entry for (vm.swappiness on a small
# VM), from a rules directory of its own next to the shipped rules, through
# every command on a copy of the Garage VM's --root tree (480 MiB of RAM):
# audit, facts (and an audit of that facts file), plan, apply, verify, a
# later sysctl.d file that overrides it at boot, and revert back to the tree
# as it was. Then the keys such a rule can name and cannot.
. "$(dirname "$0")/lib.sh"

RULES=$TMP/rules
cp -R "$HT_RULES_DIR" "$RULES"
cat >"$RULES/site.rules" <<'EOF'
[site.swappiness]
title = how eagerly a small VM swaps memory out to keep its page cache
target = sysctl vm.swappiness
when = available(vm.swappiness) && mem.total <= 2GiB
default = 60
value = min(vm.swappiness, 10)
severity = vm.swappiness > 10 ? "warning" : "ok"
explain = vm.swappiness is {vm.swappiness} on {mem.total|bytes} of RAM: at the kernel's 60 the
  storage daemon's heap is swapped out to keep page cache; 10 keeps it in RAM.
EOF
site() {
	"$HOSTTUNE" --rules "$RULES" --root "$TMP/g" "$@"
}
sums() {
	tree_sums "$TMP/g"
}
rm -rf "$TMP/g"
cp -a "$FIXTURES/garage-vm/root" "$TMP/g"
mkdir -p "$TMP/g/proc/sys/vm"
echo 60 >"$TMP/g/proc/sys/vm/swappiness"
sums >"$TMP/before.sums"

# ---- audit: 480 MiB <= 2 GiB, 60 > 10: a warning, recommended min(60, 10) = 10 ----
site --no-measure --format json audit >"$TMP/audit.json"
expect_eq "audit exits 1 (a warning)" 1 $?
F='.findings[] | select(.rule == "site.swappiness")'
expect_eq "the site rule's finding: current, recommended, severity" "60 10 warning sysctl vm.swappiness" \
	"$(jget "$TMP/audit.json" "$F | \"\(.current) \(.recommended) \(.severity) \(.kind) \(.target)\"")"
expect_eq "its fix: the sysctl.d line and the live file" \
	"/etc/sysctl.d/90-hosttune.conf|vm.swappiness = 10|/proc/sys/vm/swappiness" \
	"$(jget "$TMP/audit.json" "$F | \"\(.fix.file)|\(.fix.line)|\(.fix.live)\"")"
expect_contains "the explanation has the host's numbers" "vm.swappiness is 60 on 480 MiB of RAM" \
	"$(jget "$TMP/audit.json" "$F | .explanation")"

# ---- facts: the key is in the snapshot, and the snapshot audits as the tree ----
site --no-measure facts >"$TMP/site.facts"
expect_contains "facts holds the site rule's sysctl" "vm.swappiness = 60 from /proc/sys/vm/swappiness" \
	"$(cat "$TMP/site.facts")"
"$HOSTTUNE" --rules "$RULES" --facts "$TMP/site.facts" --format json audit >"$TMP/facts-audit.json"
expect_eq "the facts file audits as the tree" "60 10 warning" \
	"$(jget "$TMP/facts-audit.json" "$F | \"\(.current) \(.recommended) \(.severity)\"")"

# ---- plan: the line in hosttune's sysctl.d file and the live change ----
site --no-measure plan >"$TMP/plan.out"
expect_contains "plan adds the line" "+vm.swappiness = 10" "$(cat "$TMP/plan.out")"
expect_eq "plan's live table has the key" "vm.swappiness 60 10" \
	"$(awk '$1 == "vm.swappiness" { print $1, $2, $3 }' "$TMP/plan.out")"

# ---- apply, verify ----
site --no-measure apply >"$TMP/apply.out"
expect_eq "apply exits 0" 0 $?
expect_contains "apply says what it set" "set vm.swappiness from 60 to 10" "$(cat "$TMP/apply.out")"
expect_eq "the live value below the root is 10" 10 "$(cat "$TMP/g/proc/sys/vm/swappiness")"
expect_eq "the sysctl.d file sets it" "vm.swappiness = 10" \
	"$(grep '^vm.swappiness' "$TMP/g/etc/sysctl.d/90-hosttune.conf")"
site --no-measure verify >"$TMP/verify.out"
expect_eq "verify exits 0" 0 $?
expect_contains "verify: it holds now and at boot" \
	"vm.swappiness = 10 live and at boot (/etc/sysctl.d/90-hosttune.conf:" "$(cat "$TMP/verify.out")"
site --no-measure --format json audit >"$TMP/audit2.json"
expect_eq "after apply the finding is ok" "10 10 ok" \
	"$(jget "$TMP/audit2.json" "$F | \"\(.current) \(.recommended) \(.severity)\"")"

# ---- a file read after hosttune's puts 60 back at boot: the same checks as hosttune's own keys ----
echo "vm.swappiness = 60" >"$TMP/g/etc/sysctl.d/99-local.conf"
site --no-measure --format json audit >"$TMP/audit3.json"
expect_eq "audit: the boot value from the later file, worse than 10" "60|/etc/sysctl.d/99-local.conf:1|true|warning" \
	"$(jget "$TMP/audit3.json" "$F | \"\(.boot.value)|\(.boot.source)|\(.boot.worse)|\(.severity)\"")"
site --no-measure verify >"$TMP/verify2.out"
expect_eq "verify exits 1" 1 $?
expect_contains "verify names the file that wins" "/etc/sysctl.d/99-local.conf:1" "$(cat "$TMP/verify2.out")"
site --no-measure plan >"$TMP/plan2.out"
expect_contains "plan: it will not hold at boot" \
	"vm.swappiness = 10 in /etc/sysctl.d/90-hosttune.conf will not hold at boot: /etc/sysctl.d/99-local.conf:1 sets 60" \
	"$(cat "$TMP/plan2.out")"
rm "$TMP/g/etc/sysctl.d/99-local.conf"

# ---- revert: the tree as it was, byte for byte ----
# revert reads the rules for the keys they set: vm.swappiness is the site rule's.
"$HOSTTUNE" --rules "$RULES" --root "$TMP/g" revert >"$TMP/revert.out"
expect_eq "revert exits 0" 0 $?
expect_contains "revert restores the key" "restored vm.swappiness to 60" "$(cat "$TMP/revert.out")"
sums >"$TMP/after.sums"
if cmp -s "$TMP/before.sums" "$TMP/after.sums"; then ok "revert leaves the tree as it was"
else not_ok "revert leaves the tree as it was" "$(diff "$TMP/before.sums" "$TMP/after.sums" | head)"; fi

# ---- what a rule may name ----
# A key this kernel does not have: the rule is not applicable, and says why.
sed 's/vm\.swappiness/vm.no_such_key/g' "$RULES/site.rules" >"$TMP/nokey.rules"
cp "$TMP/nokey.rules" "$RULES/site.rules"
site --no-measure --format json audit >"$TMP/nokey.json"
expect_eq "a key that does not exist: no finding (its when needs it)" "" \
	"$(jget "$TMP/nokey.json" "$F | .rule")"
site --no-measure facts >"$TMP/nokey.facts"
expect_contains "facts: unavailable ENOENT with its path" \
	"vm.no_such_key = unavailable ENOENT from /proc/sys/vm/no_such_key" "$(cat "$TMP/nokey.facts")"
# Without a `when`, a key that does not exist now still gets its line:
# systemd-sysctl sets it at boot once the kernel has it (a module loaded,
# an interface there) and otherwise logs that it ignores it; no live write,
# and verify says there is no live value, not that it holds live.
cat >"$RULES/site.rules" <<'EOF'
[site.nokey]
title = a key this kernel lacks
target = sysctl vm.no_such_key
value = 1
severity = "warning"
EOF
site --no-measure audit >"$TMP/nokey.txt"
expect_contains "no such key: the fix is the file, applied at boot" \
	"fix: vm.no_such_key = 1 in /etc/sysctl.d/90-hosttune.conf (/proc/sys/vm/no_such_key does not exist now: the file applies at boot once the kernel has it)" \
	"$(tr -s ' \n' ' ' <"$TMP/nokey.txt")"
site --no-measure --only site.nokey apply >"$TMP/nokey.apply" 2>&1
expect_eq "no such key: apply writes the line" "vm.no_such_key = 1" \
	"$(grep no_such_key "$TMP/g/etc/sysctl.d/90-hosttune.conf")"
if [ -e "$TMP/g/proc/sys/vm/no_such_key" ]; then not_ok "no such key: no live file made"
else ok "no such key: no live file made"; fi
expect_contains "no such key: verify says there is no live value" \
	"vm.no_such_key = 1 at boot (/etc/sysctl.d/90-hosttune.conf:" "$(site --no-measure verify 2>&1)"
expect_contains "no such key: not that it holds live" "no live value on this host now" \
	"$(site --no-measure verify 2>&1)"
site --no-measure --only site.nokey plan >"$TMP/nokey.plan2"
expect_contains "no such key, applied: plan lists it as not set live" \
	"vm.no_such_key  1           does not exist now: the file applies at boot once the kernel has it" \
	"$(cat "$TMP/nokey.plan2")"
if grep -q "^Live changes:" "$TMP/nokey.plan2"; then not_ok "no such key, applied: no live change listed"
else ok "no such key, applied: no live change listed"; fi
expect_contains "no such key, applied: the audit says the boot value has no live one" \
	"at boot: 1 from /etc/sysctl.d/90-hosttune.conf:" "$(site --no-measure audit 2>&1)"
expect_contains "no such key, applied: no live value now" "; no live value now" \
	"$(site --no-measure audit 2>&1)"
site revert >"$TMP/nokey.revert" 2>&1 || cat "$TMP/nokey.revert"
expect_eq "no such key: revert takes the line out" 0 \
	"$(cat "$TMP/g/etc/sysctl.d/90-hosttune.conf" 2>/dev/null | grep -c no_such_key)"
# A key that exists but is no one integer (two fields): neither the live
# write nor verify could read it back: no line, and the fix says why.
printf '1\t2\n' >"$TMP/g/proc/sys/vm/two_fields"
sed -i 's/vm\.no_such_key/vm.two_fields/' "$RULES/site.rules"
site --no-measure audit >"$TMP/two.txt"
expect_contains "two fields: the fix says it cannot be read" \
	"fix: none from here: vm.two_fields cannot be read as one integer (/proc/sys/vm/two_fields: Invalid argument)" \
	"$(tr -s ' \n' ' ' <"$TMP/two.txt")"
site --no-measure --only site.nokey apply >/dev/null 2>&1
expect_eq "two fields: apply writes no line" 0 \
	"$(cat "$TMP/g/etc/sysctl.d/90-hosttune.conf" 2>/dev/null | grep -c two_fields)"
expect_eq "two fields: the live file is as it was" "$(printf '1\t2')" "$(cat "$TMP/g/proc/sys/vm/two_fields")"
if site --no-measure verify 2>&1 | grep -q "two_fields.*live"; then
	not_ok "two fields: verify claims no live value for it"
else ok "two fields: verify claims no live value for it"; fi
rm "$TMP/g/proc/sys/vm/two_fields"
# An interface's key, with a '-' in its name and in the slash spelling
# sysctl(8) also takes: net/ipv4/conf/br-lan/forwarding.
mkdir -p "$TMP/g/proc/sys/net/ipv4/conf/br-lan"
echo 0 >"$TMP/g/proc/sys/net/ipv4/conf/br-lan/forwarding"
cat >"$RULES/site.rules" <<'EOF'
[site.forward]
title = the bridge forwards
target = sysctl net/ipv4/conf/br-lan/forwarding
value = 1
severity = "warning"
EOF
site --no-measure --only site.forward apply >/dev/null 2>&1
expect_eq "a key with '-', slash spelling: apply sets it live" 1 \
	"$(cat "$TMP/g/proc/sys/net/ipv4/conf/br-lan/forwarding")"
expect_contains "and writes it dotted" "net.ipv4.conf.br-lan.forwarding = 1" \
	"$(cat "$TMP/g/etc/sysctl.d/90-hosttune.conf")"
expect_contains "verify: it holds" "ok      net.ipv4.conf.br-lan.forwarding = 1 live and at boot" \
	"$(site --no-measure verify 2>&1)"
site revert >/dev/null 2>&1
expect_eq "revert puts 0 back" 0 "$(cat "$TMP/g/proc/sys/net/ipv4/conf/br-lan/forwarding")"
# A '.' inside a name of the slash spelling (VLAN eth0.100) cannot be a name here.
sed -i 's|^target = .*|target = sysctl net/ipv4/conf/eth0.100/rp_filter|' "$RULES/site.rules"
site audit >/dev/null 2>"$TMP/err"
expect_eq "a '.' inside a name: exit 2" 2 $?
expect_contains "the error says what is expected, and quotes the key as written" \
	"site.rules:3:17: expected a sysctl key without a '.' inside a name (an interface such as eth0.100), found 'net/ipv4/conf/eth0.100/rp_filter'" \
	"$(cat "$TMP/err")"
# A trailing '/' is no interface's '.': the key itself is malformed.
sed -i 's|^target = .*|target = sysctl net/ipv4/tcp_rmem/|' "$RULES/site.rules"
site audit >/dev/null 2>"$TMP/err"
expect_contains "a trailing '/': not a key, as written" \
	"site.rules:3:17: expected a sysctl key as sysctl(8) prints it (vm.swappiness), found 'net/ipv4/tcp_rmem/'" \
	"$(cat "$TMP/err")"
# A key of several fields is not one number: unavailable EINVAL, what it holds in the source.
mkdir -p "$TMP/g/proc/sys/net/ipv4"
printf '4096\t131072\t6291456\n' >"$TMP/g/proc/sys/net/ipv4/tcp_rmem"
cat >"$RULES/site.rules" <<'EOF'
[site.rmem]
title = the TCP receive buffer's bounds
target = advice
current = net.ipv4.tcp_rmem
EOF
site --no-measure facts >"$TMP/rmem.facts"
expect_contains "a key of several fields: unavailable EINVAL, saying what it holds" \
	"net.ipv4.tcp_rmem = unavailable EINVAL from $TMP/g/proc/sys/net/ipv4/tcp_rmem: expected one integer, found '4096 131072 6291456'" \
	"$(cat "$TMP/rmem.facts")"
site --no-measure --format json audit >"$TMP/rmem.json"
expect_eq "its advice has no current value" "null" \
	"$(jget "$TMP/rmem.json" '.findings[] | select(.rule == "site.rmem") | .current')"
# A rule id may not take a sysctl's name; a name outside /proc/sys's top directories is unknown.
printf '[vm.swappiness]\nvalue = 1\n' >"$RULES/site.rules"
site audit >/dev/null 2>"$TMP/err"
expect_eq "a rule named like a sysctl: exit 2" 2 $?
expect_contains "the error names the clash" "rule id 'vm.swappiness' is already the name of a fact" "$(cat "$TMP/err")"
printf '[site.x]\ntarget = advice\ncurrent = vmm.swappiness\n' >"$RULES/site.rules"
site audit >/dev/null 2>"$TMP/err"
expect_eq "an unknown top directory: exit 2" 2 $?
expect_contains "the error names the unknown name" "unknown name 'vmm.swappiness'" "$(cat "$TMP/err")"
finish
