#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The limit nofile drop-in under --root (issue 14, part 2): a copy of the
# Garage VM's tree plus a garage process (ROOT/proc/4242: comm, limits with a
# soft RLIMIT_NOFILE of 1024 and systemd's hard 524288, cgroup in
# garage.service, fds, one of them the socket listening on port 3900 in
# ROOT/proc/net/tcp) and the shipped process.limit_nofile (garage's 42000).
# plan shows the drop-in and the restart, apply writes it (content exact) and
# creates its directories, a second apply changes nothing, verify wants the
# restart and then holds, a later 99-override.conf with LimitNOFILE=1024 is
# reported by plan and verify with FILE:LINE and its value, and revert removes
# the file and the directories apply made. Needs the process collector.
. "$(dirname "$0")/lib.sh"

D=etc/systemd/system/garage.service.d
# The shipped rule: garage's profile asks for workload.nofile = 42000.
G="--profile garage --only process.limit_nofile"
htr() {
	"$HOSTTUNE" --rules "$HT_RULES_DIR" "$@"
}
cp -a "$FIXTURES/garage-vm/root" "$TMP/g"
P=$TMP/g/proc/4242
mkdir -p "$P/fd"
echo garage >"$P/comm"
cat >"$P/limits" <<'EOT'
Limit                     Soft Limit           Hard Limit           Units     
Max cpu time              unlimited            unlimited            seconds   
Max open files            1024                 524288               files     
Max locked memory         8388608              8388608              bytes     
EOT
echo "0::/system.slice/garage.service" >"$P/cgroup"
ln -s /dev/null "$P/fd/0"
ln -s "socket:[12345]" "$P/fd/3"
ln -s "socket:[12346]" "$P/fd/4"
mkdir -p "$TMP/g/proc/net"
cat >"$TMP/g/proc/net/tcp" <<'EOT'
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:0F3C 00000000:0000 0A 00000000:00000000 00:00000000 00000000   998        0 12345 1 0000000000000000 100 0 0 10 0
EOT
sums() {
	tree_sums "$TMP/g"
}

# ---- the collector gives what the plan needs ----
htr --root "$TMP/g" facts >"$TMP/facts"
expect_eq "facts: process.garage.unit, nofile, nofile_hard" \
	'"garage.service" 1024 524288' \
	"$(for k in unit nofile nofile_hard; do
		sed -n "s/^process\.garage\.$k = \([^ ]*\) .*/\1/p" "$TMP/facts"; done | tr '\n' ' ' |
		sed 's/ $//')"

# ---- plan ----
sums >"$TMP/before.sums"
htr --root "$TMP/g" $G plan >"$TMP/plan.out"
# The drop-in to create is a change: 1, as diff(1) with differences.
expect_eq "plan with changes exits 1" 1 $?
cat >"$TMP/dropin.expected" <<'EOT'
# This file is managed by hosttune (profile garage).
# `hosttune apply` rewrites it and `hosttune revert` removes it; change the
# profile or hosttune's rules.d instead of editing it. systemd reads it at
# `systemctl daemon-reload`; the process gets the limit when garage.service
# is restarted. The hard limit is never lowered.
[Service]
# process.limit_nofile[garage]: open-file limit of a service process
LimitNOFILE=42000:524288
EOT
{
	echo "--- /dev/null"
	echo "+++ b/$D/90-hosttune.conf"
	echo "@@ -0,0 +1,8 @@"
	sed 's/^/+/' "$TMP/dropin.expected"
	echo
	echo "Restart to take effect: systemctl daemon-reload && systemctl restart garage.service"
} >"$TMP/plan.expected"
if cmp -s "$TMP/plan.expected" "$TMP/plan.out"; then ok "plan: the drop-in's diff and the restart line"
else not_ok "plan: the drop-in's diff and the restart line" "$(diff "$TMP/plan.expected" "$TMP/plan.out")"; fi
htr --root "$TMP/g" $G --format json plan >"$TMP/plan.json"
expect_eq "plan JSON: restart, the file to create" '["garage.service"] create' \
	"$(jq -c .restart "$TMP/plan.json") $(jq -r '.files[0].action' "$TMP/plan.json")"
sums >"$TMP/after-plan.sums"
if cmp -s "$TMP/before.sums" "$TMP/after-plan.sums"; then ok "plan writes nothing"
else not_ok "plan writes nothing"; fi

# ---- audit: the fix names the file, the line and the restart ----
htr --root "$TMP/g" --profile garage --format json audit >"$TMP/audit.json"
expect_eq "audit JSON: the fix" \
	"/$D/90-hosttune.conf|[Service] LimitNOFILE=42000:524288|null|garage.service" \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile") | .fix |
		"\(.file)|\(.line)|\(.live)|\(.restart)"' "$TMP/audit.json")"

# ---- apply ----
htr --root "$TMP/g" $G apply >"$TMP/apply.out"
expect_eq "apply exits 0" 0 $?
if cmp -s "$TMP/dropin.expected" "$TMP/g/$D/90-hosttune.conf"; then ok "apply: the drop-in, exact"
else not_ok "apply: the drop-in, exact" "$(diff "$TMP/dropin.expected" "$TMP/g/$D/90-hosttune.conf")"; fi
expect_eq "apply: mode 0644" 644 "$(stat -c %a "$TMP/g/$D/90-hosttune.conf")"
expect_contains "apply says the service must be restarted" \
	"systemctl daemon-reload && systemctl restart garage.service" "$(cat "$TMP/apply.out")"
expect_eq "apply records the directories it created" \
	"/etc /etc/systemd /etc/systemd/system /$D" \
	"$(jq -r '.created_dirs | map(select(startswith("/etc"))) | sort | join(" ")' \
		"$TMP/g/var/lib/hosttune/state")"

# ---- a second apply changes nothing ----
sums >"$TMP/applied.sums"
htr --root "$TMP/g" $G --format json apply >"$TMP/apply2.json"
expect_eq "second apply: changed false, the file unchanged" "false unchanged" \
	"$(jq -r '"\(.changed) \(.files[0].action)"' "$TMP/apply2.json")"
sums >"$TMP/applied2.sums"
if cmp -s "$TMP/applied.sums" "$TMP/applied2.sums"; then ok "second apply: the tree is the same"
else not_ok "second apply: the tree is the same" "$(diff "$TMP/applied.sums" "$TMP/applied2.sums")"; fi

# ---- verify: not restarted yet, then restarted ----
htr --root "$TMP/g" --profile garage --format json verify >"$TMP/verify.json"
expect_eq "verify before the restart: restart-needed" "PROBLEM restart-needed" \
	"$(jq -r '.items[] | select(.key == "process.garage.nofile") | "\(.status | ascii_upcase) \(.check)"' \
		"$TMP/verify.json" | sed 's/^PROBLEM/PROBLEM/')"
sed -i 's/^Max open files            1024 /Max open files            42000/' "$P/limits"
htr --root "$TMP/g" --profile garage --format json verify >"$TMP/verify.json"
expect_eq "verify after the restart: holds" "ok holds" \
	"$(jq -r '.items[] | select(.key == "process.garage.nofile") | "\(.status) \(.check)"' \
		"$TMP/verify.json")"

# ---- a later drop-in that lowers it ----
printf '[Service]\n# local\nLimitNOFILE=1024\n' >"$TMP/g/$D/99-override.conf"
htr --root "$TMP/g" --profile garage verify >"$TMP/verify.out"
expect_contains "verify: overridden, FILE:LINE and the value" \
	"LimitNOFILE=42000:524288 in /$D/90-hosttune.conf:8 is overridden for garage.service by /$D/99-override.conf:3 (LimitNOFILE=1024)" \
	"$(cat "$TMP/verify.out")"
sed -i 's/^Max open files            42000/Max open files            1024 /' "$P/limits"
htr --root "$TMP/g" $G plan >"$TMP/plan2.out"
expect_contains "plan: will not hold" \
	"/$D/99-override.conf:3 sets LimitNOFILE=1024 and is applied later" "$(cat "$TMP/plan2.out")"
if grep -q "Restart to take effect" "$TMP/plan2.out"; then
	not_ok "plan: overridden, so no restart line" "$(cat "$TMP/plan2.out")"
else ok "plan: overridden, so no restart line"; fi
rm "$TMP/g/$D/99-override.conf"

# ---- revert ----
htr --root "$TMP/g" revert >"$TMP/revert.out"
expect_eq "revert exits 0" 0 $?
expect_contains "revert removes the drop-in" "removed /$D/90-hosttune.conf" "$(cat "$TMP/revert.out")"
expect_contains "revert removes its directory" "removed directory /$D" "$(cat "$TMP/revert.out")"
# The limit was put back by hand above, as the restart would not have been undone.
sums >"$TMP/after-revert.sums"
if cmp -s "$TMP/before.sums" "$TMP/after-revert.sums"; then ok "revert restores the tree"
else not_ok "revert restores the tree" "$(diff "$TMP/before.sums" "$TMP/after-revert.sums")"; fi

# ---- a state file naming another path under /etc/systemd/system is refused ----
htr --root "$TMP/g" $G apply >/dev/null
jq '.files[0].path = "/etc/systemd/system/garage.service.d/91-other.conf"' \
	"$TMP/g/var/lib/hosttune/state" >"$TMP/state.new" && cat "$TMP/state.new" >"$TMP/g/var/lib/hosttune/state"
htr --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
expect_eq "revert refuses a state file naming another drop-in: exit 2" 2 "$?"
expect_contains "revert names it" \
	'path "/etc/systemd/system/garage.service.d/91-other.conf" is not a file hosttune writes' \
	"$(cat "$TMP/err")"
# ---- two rules for one service: the larger soft limit decides, unless --only picks ----
cp -a "$FIXTURES/garage-vm/root" "$TMP/g2"
cp -a "$TMP/g/proc/4242" "$TMP/g2/proc/" && mkdir -p "$TMP/g2/proc/net" && cp "$TMP/g/proc/net/tcp" "$TMP/g2/proc/net/"
cp -a "$HT_RULES_DIR" "$TMP/rules2"
cat >"$TMP/rules2/zz-local.rules" <<'EOT'
[local.nofile]
title = a site's own limit for every process
each = process
target = limit nofile
direction = raise
value = 50000
severity = process.nofile < 50000 ? "warning" : "ok"
explain = {process.name} may open {process.nofile} files
EOT
"$HOSTTUNE" --rules "$TMP/rules2" --root "$TMP/g2" --profile garage plan >"$TMP/plan2.out"
# max(42000, 50000) = 50000, from the site's rule; the hard 524288 kept.
expect_contains "two rules: the larger soft limit, its rule named" \
	"+# local.nofile[garage]: a site's own limit for every process
+LimitNOFILE=50000:524288" "$(cat "$TMP/plan2.out")"
"$HOSTTUNE" --rules "$TMP/rules2" --root "$TMP/g2" --profile garage --only process.limit_nofile \
	plan >"$TMP/plan2.out"
expect_contains "two rules, --only the shipped one: 42000" "+LimitNOFILE=42000:524288" "$(cat "$TMP/plan2.out")"
# ---- the unit's own LimitNOFILE= is never lowered ----
# garage.service sets 100000, a local drop-in 65536 (the last one wins): at
# least the 42000 asked for, so no drop-in, only the restart the process
# (still at 1024) needs; an old 90-hosttune.conf is removed.
cp -a "$FIXTURES/garage-vm/root" "$TMP/g3"
cp -a "$TMP/g/proc/4242" "$TMP/g3/proc/" && mkdir -p "$TMP/g3/proc/net" && cp "$TMP/g/proc/net/tcp" "$TMP/g3/proc/net/"
mkdir -p "$TMP/g3/$D"
printf '[Service]\nExecStart=/usr/bin/garage\nLimitNOFILE=100000\n' >"$TMP/g3/etc/systemd/system/garage.service"
printf '[Service]\nLimitNOFILE=65536\n' >"$TMP/g3/$D/10-local.conf"
htr --root "$TMP/g3" $G plan >"$TMP/plan3.out"
cat >"$TMP/plan3.expected" <<EOT
No changes: the files and live values already match the plan.

Restart to take effect: systemctl daemon-reload && systemctl restart garage.service

Not persisted:
  process.garage.nofile: garage.service already gives 65536 from /$D/10-local.conf:2: restart garage.service to take it
EOT
if cmp -s "$TMP/plan3.expected" "$TMP/plan3.out"; then ok "configured 65536: no drop-in, the restart"
else not_ok "configured 65536: no drop-in, the restart" "$(diff "$TMP/plan3.expected" "$TMP/plan3.out")"; fi
htr --root "$TMP/g3" --profile garage audit >"$TMP/audit3.out"
expect_contains "configured 65536: audit's fix names the line, no drop-in" \
	"fix: garage.service already gives 65536 from /$D/10-local.conf:2: restart garage.service to take it" \
	"$(cat "$TMP/audit3.out")"
htr --root "$TMP/g3" --profile garage --format json audit >"$TMP/audit3.json"
expect_eq "configured 65536: audit JSON, no file, the restart" "null|garage.service" \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile") | .fix | "\(.file)|\(.restart)"' \
		"$TMP/audit3.json")"
# hosttune's drop-in from before (42000) is left out when reading the unit, and removed.
cp "$TMP/dropin.expected" "$TMP/g3/$D/90-hosttune.conf"
htr --root "$TMP/g3" $G --format json plan >"$TMP/plan3.json"
expect_eq "configured 65536: an old 90-hosttune.conf is removed" "/$D/90-hosttune.conf remove" \
	"$(jq -r '.files[] | select(.path | endswith(".conf")) | "\(.path) \(.action)"' "$TMP/plan3.json")"
htr --root "$TMP/g3" --profile garage --only conntrack.max --format json plan >"$TMP/plan3.json"
expect_eq "configured 65536, outside --only: the old drop-in stays" "/$D/90-hosttune.conf unchanged" \
	"$(jq -r '.files[] | select(.path | startswith("/etc/systemd")) | "\(.path) \(.action)"' "$TMP/plan3.json")"
rm "$TMP/g3/$D/90-hosttune.conf"
# Lower than asked: 42000, the hard limit the largest of the line's and the process's.
printf '[Service]\nLimitNOFILE=2048:1048576\n' >"$TMP/g3/$D/10-local.conf"
htr --root "$TMP/g3" $G plan >"$TMP/plan3.out"
expect_contains "configured 2048:1048576: a 42000 drop-in, the hard limit kept" \
	"+LimitNOFILE=42000:1048576" "$(cat "$TMP/plan3.out")"
printf '[Service]\nLimitNOFILE=2048\n' >"$TMP/g3/$D/10-local.conf"
htr --root "$TMP/g3" $G plan >"$TMP/plan3.out"
expect_contains "configured 2048: a 42000 drop-in with the process's hard limit" \
	"+LimitNOFILE=42000:524288" "$(cat "$TMP/plan3.out")"
expect_contains "configured 2048: the restart" \
	"Restart to take effect: systemctl daemon-reload && systemctl restart garage.service" \
	"$(cat "$TMP/plan3.out")"
# ---- an escaped unit name is one shell word, quoted, in every restart command ----
U='garage@data\x2d1.service'
cp -a "$FIXTURES/garage-vm/root" "$TMP/g4"
cp -a "$TMP/g/proc/4242" "$TMP/g4/proc/" && mkdir -p "$TMP/g4/proc/net" && cp "$TMP/g/proc/net/tcp" "$TMP/g4/proc/net/"
echo "0::/system.slice/$U" >"$TMP/g4/proc/4242/cgroup"
Q="systemctl daemon-reload && systemctl restart 'garage@data\\x2d1.service'"
htr --root "$TMP/g4" $G plan >"$TMP/plan4.out"
expect_contains "escaped name: plan quotes it" "Restart to take effect: $Q" "$(cat "$TMP/plan4.out")"
htr --root "$TMP/g4" --profile garage audit >"$TMP/audit4.out"
expect_contains "escaped name: audit's fix quotes it" "($Q)" "$(cat "$TMP/audit4.out")"
htr --root "$TMP/g4" $G --format json plan >"$TMP/plan4.json"
expect_eq "escaped name: JSON keeps the raw name" "$U" "$(jq -r '.restart[0]' "$TMP/plan4.json")"
htr --root "$TMP/g4" $G apply >"$TMP/apply4.out"
expect_contains "escaped name: apply quotes it" "$Q" "$(cat "$TMP/apply4.out")"
htr --root "$TMP/g4" --profile garage verify >"$TMP/verify4.out"
expect_contains "escaped name: verify quotes it" "from its next start: $Q" "$(cat "$TMP/verify4.out")"
# ---- an override in /run holds until the next reboot only ----
cp -a "$FIXTURES/garage-vm/root" "$TMP/g5"
cp -a "$TMP/g/proc/4242" "$TMP/g5/proc/" && mkdir -p "$TMP/g5/proc/net" && cp "$TMP/g/proc/net/tcp" "$TMP/g5/proc/net/"
RD=run/systemd/system/garage.service.d
mkdir -p "$TMP/g5/$RD"
printf '[Service]\nLimitNOFILE=2048\n' >"$TMP/g5/$RD/99-local.conf"
htr --root "$TMP/g5" $G plan >"$TMP/plan5.out"
expect_contains "/run override: plan says until the next reboot" \
	"Overridden until the next reboot:
  LimitNOFILE=42000:524288 in /$D/90-hosttune.conf is overridden now: /$RD/99-local.conf:2 sets LimitNOFILE=2048 and is applied later; /run is emptied at boot, so hosttune's value holds after the next reboot" \
	"$(cat "$TMP/plan5.out")"
if grep -q "Will not hold at boot\|Restart to take effect" "$TMP/plan5.out"; then
	not_ok "/run override: no 'will not hold at boot', no restart line" "$(cat "$TMP/plan5.out")"
else ok "/run override: no 'will not hold at boot', no restart line"; fi
htr --root "$TMP/g5" $G --format json plan >"$TMP/plan5.json"
expect_eq "/run override: JSON holds at boot, until_reboot" "true true []" \
	"$(jq -c '"\(.holds_at_boot) \(.will_not_hold[0].until_reboot) \(.restart)"' -r "$TMP/plan5.json")"
htr --root "$TMP/g5" $G apply >/dev/null
htr --root "$TMP/g5" --profile garage verify >"$TMP/verify5.out"
expect_contains "/run override: verify says now, not after a reboot" \
	"is overridden for garage.service now by /$RD/99-local.conf:2 (LimitNOFILE=2048), which systemd applies later; /run is emptied at boot, so hosttune's value holds after the next reboot" \
	"$(cat "$TMP/verify5.out")"
# ---- audit's fix line: the reason when no drop-in can be written, none when ok ----
cp -a "$FIXTURES/garage-vm/root" "$TMP/g6"
cp -a "$TMP/g/proc/4242" "$TMP/g6/proc/" && mkdir -p "$TMP/g6/proc/net" && cp "$TMP/g/proc/net/tcp" "$TMP/g6/proc/net/"
echo '0::/system.slice/gar$age.service' >"$TMP/g6/proc/4242/cgroup"
htr --root "$TMP/g6" --profile garage --set workload.nofile=42000 audit >"$TMP/audit6.out"
# The collector may give no unit for such a name: either reason, never a drop-in.
sed -n '/^\[warning\] process.limit_nofile\[garage\]/,/^$/p' "$TMP/audit6.out" | grep '^    fix: ' >"$TMP/fix6"
if grep -qx "    fix: none from here: process.garage.unit = 'gar\$age.service' is not a service name hosttune writes a drop-in for (\[A-Za-z0-9:_.@\\\\-\] ending in .service, no '/'): nothing written" "$TMP/fix6" ||
	grep -q "^    fix: raise it to 42000 where it is set: what starts it, since it runs in no system service" "$TMP/fix6"
then ok "refused unit name: the fix line gives the reason, no drop-in"
else not_ok "refused unit name: the fix line gives the reason, no drop-in" "$(cat "$TMP/audit6.out")"; fi
htr --root "$TMP/g6" --profile garage --format json audit >"$TMP/audit6.json"
expect_eq "refused unit name: JSON fix null" null \
	"$(jq -c '.findings[] | select(.rule == "process.limit_nofile") | .fix' "$TMP/audit6.json")"
# An ok finding outside a service (not writable here): no fix line at all.
echo python3 >"$TMP/g6/proc/4242/comm"
sed -i 's/^Max open files            1024 /Max open files            20000/' "$TMP/g6/proc/4242/limits"
echo '0::/user.slice/session-1.scope' >"$TMP/g6/proc/4242/cgroup"
htr --root "$TMP/g6" --profile garage audit -v >"$TMP/audit6.out"
expect_eq "ok, outside a service: the finding, and no fix line" "1 0" \
	"$(grep -c '^\[ok\] process.limit_nofile\[python3\]' "$TMP/audit6.out") $(sed -n '/^\[ok\] process.limit_nofile/,/^$/p' "$TMP/audit6.out" | grep -c 'fix:')"
finish
