#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /etc managed by another manager, as on a NixOS Garage node: the Garage VM's
# tree plus NixOS's layout. /etc/static links into the store
# (/nix/store/abc-etc/etc); /etc/systemd/system is a link to
# /etc/static/systemd/system (the unit files live in the store, read-only on
# a real host); NixOS's own sysctl.d file is a link in a directory of its own;
# /etc/garage.toml is an absolute link into the store, followed inside the
# tree as the host would follow it. A garage process (PID 4242, in
# garage.service) runs with a soft RLIMIT_NOFILE of 1024 under a hard 524288,
# and the garage profile asks for 42000 (Garage's own unit sets
# LimitNOFILE=42000).
# Expected: the limit is refused alone, with NixOS's option
#   systemd.services."garage".serviceConfig.LimitNOFILE = "42000:524288";
# (soft 42000 from the profile, hard 524288 kept: the process's hard limit is
# higher than the soft one asked for), every other rule plans and applies,
# nothing in the store or below /etc/systemd changes, and revert gives the
# tree back. Without /etc/NIXOS and with the link outside the store, the
# refusal names the link and gives the drop-in's own line.
. "$(dirname "$0")/lib.sh"

G="--profile garage"
htr() {
	"$HOSTTUNE" --rules "$HT_RULES_DIR" "$@"
}

# nixos_tree DIR STORE-LINK-TARGET: the layout above, with /etc/static -> TARGET
nixos_tree() {
	t=$1
	cp -a "$FIXTURES/garage-vm/root" "$t"
	S=$t/nix/store/abc-etc/etc
	mkdir -p "$S/sysctl.d" "$S/systemd/system" "$t/etc/sysctl.d" "$t/etc/systemd" \
		"$t/var/lib/garage/meta" "$t/var/lib/garage/data"
	ln -s "$2" "$t/etc/static"
	echo 'net.core.somaxconn = 4096' >"$S/sysctl.d/60-nixos.conf"
	ln -s /etc/static/sysctl.d/60-nixos.conf "$t/etc/sysctl.d/60-nixos.conf"
	ln -s /etc/static/systemd/system "$t/etc/systemd/system"
	printf '[Service]\nExecStart=/nix/store/g/bin/garage server\n' \
		>"$S/systemd/system/garage.service"
	cat >"$S/garage.toml" <<'EOT'
metadata_dir = "/var/lib/garage/meta"
data_dir = "/var/lib/garage/data"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "[::]:3901"
rpc_secret = "0000000000000000000000000000000000000000000000000000000000000000"
[s3_api]
s3_region = "garage"
api_bind_addr = "[::]:3900"
EOT
	ln -s /etc/static/garage.toml "$t/etc/garage.toml"
	P=$t/proc/4242
	mkdir -p "$P/fd" "$t/proc/net"
	echo garage >"$P/comm"
	cat >"$P/limits" <<'EOT'
Limit                     Soft Limit           Hard Limit           Units     
Max open files            1024                 524288               files     
EOT
	echo "0::/system.slice/garage.service" >"$P/cgroup"
	ln -s /dev/null "$P/fd/0"
	ln -s "socket:[12345]" "$P/fd/3"
	cat >"$t/proc/net/tcp" <<'EOT'
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:0F3C 00000000:0000 0A 00000000:00000000 00:00000000 00000000   998        0 12345 1 0000000000000000 100 0 0 10 0
EOT
}

N=$TMP/nixos
nixos_tree "$N" /nix/store/abc-etc/etc
touch "$N/etc/NIXOS"
tree_sums "$N" >"$TMP/before.sums"

# ---- the absolute link etc/garage.toml is followed inside the tree ----
htr --root "$N" $G facts >"$TMP/facts"
expect_eq "facts: garage.toml through /etc/static into the store" \
	'"sqlite" "/etc/garage.toml"' \
	"$(sed -n 's/^garage\.db_engine = \([^ ]*\) .*/\1/p' "$TMP/facts") $(sed -n \
		's/^garage\.config = \([^ ]*\) .*/\1/p' "$TMP/facts")"

# ---- plan: the limit refused alone, everything else planned ----
htr --root "$N" $G plan >"$TMP/plan.out" 2>"$TMP/plan.err"
# 1: the sysctl.d file is to write (changes, as diff(1)), not 2 (in the way).
expect_eq "plan exits 1 with changes (not 2: /etc/systemd/system is a symlink)" 1 $?
expect_contains "plan: the sysctl.d file is planned" "+++ b/etc/sysctl.d/90-hosttune.conf" \
	"$(cat "$TMP/plan.out")"
expect_contains "plan: the limit is not persisted, with NixOS's option" \
	'process.garage.nofile: NixOS manages /etc/systemd/system (a link to /etc/static/systemd/system): set systemd.services."garage".serviceConfig.LimitNOFILE = "42000:524288"; in configuration.nix, then nixos-rebuild switch' \
	"$(cat "$TMP/plan.out")"
if grep -q 'etc/systemd/system/garage.service.d' "$TMP/plan.out"; then
	not_ok "plan: no drop-in below the store's unit directory"
else ok "plan: no drop-in below the store's unit directory"; fi
htr --root "$N" $G plan --only conntrack.time_wait >"$TMP/only.out" 2>&1
expect_eq "plan --only conntrack.time_wait exits 1 (its line to write)" 1 $?
expect_contains "plan --only conntrack.time_wait: its line" \
	"+net.netfilter.nf_conntrack_tcp_timeout_time_wait = " "$(cat "$TMP/only.out")"

# ---- audit: the fix is NixOS's option, in text and JSON ----
htr --root "$N" $G --format json audit >"$TMP/audit.json"
expect_eq "audit JSON: the limit's fix is NixOS's, with the restart" \
	'NixOS|systemd.services."garage".serviceConfig.LimitNOFILE = "42000:524288";|null|garage.service' \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile") | .fix |
		"\(.managed_by)|\(.line)|\(.file)|\(.restart)"' "$TMP/audit.json")"
expect_eq "audit JSON: a sysctl fix is still hosttune's file" \
	'/etc/sysctl.d/90-hosttune.conf|null' \
	"$(jq -r '.findings[] | select(.rule == "conntrack.time_wait") | .fix |
		"\(.file)|\(.managed_by)"' "$TMP/audit.json")"
htr --root "$N" $G audit >"$TMP/audit.txt"
expect_contains "audit text: the fix line" \
	'fix: systemd.services."garage".serviceConfig.LimitNOFILE = "42000:524288"; in configuration.nix, then nixos-rebuild switch and a restart of garage.service: NixOS manages /etc/systemd/system' \
	"$(cat "$TMP/audit.txt")"

# ---- apply writes the rest; the store and the links stay; revert restores ----
tree_sums "$N" >"$TMP/after-plan.sums"
if cmp -s "$TMP/before.sums" "$TMP/after-plan.sums"; then ok "plan and audit write nothing"
else not_ok "plan and audit write nothing" "$(diff "$TMP/before.sums" "$TMP/after-plan.sums")"; fi
htr --root "$N" $G apply >"$TMP/apply.out" 2>&1
# The limit was refused (NixOS owns /etc/systemd/system): apply made the
# rest, and exits 1 for what it could not, as for "will not hold at boot".
expect_eq "apply exits 1: the limit refused" 1 $?
tree_sums "$N" >"$TMP/applied.sums"
expect_eq "apply: what changed is hosttune's three files and its state" \
	"./etc/modprobe.d ./etc/modprobe.d/hosttune.conf ./etc/modules-load.d ./etc/modules-load.d/hosttune.conf ./etc/sysctl.d/90-hosttune.conf" \
	"$(diff "$TMP/before.sums" "$TMP/applied.sums" | sed -n 's/^> [a-z]* [0-7]* *[0-9a-f]* *\(\.\/etc\/[^ ]*\)$/\1/p' |
		tr '\n' ' ' | sed 's/ $//')"
expect_eq "apply: nothing below the store or /etc/systemd changed" "" \
	"$(diff "$TMP/before.sums" "$TMP/applied.sums" | grep -E '^[<>].*(nix/store|etc/systemd)')"
htr --root "$N" $G verify >"$TMP/verify.out" 2>&1
expect_eq "verify exits 0" 0 $?
htr --root "$N" revert >/dev/null 2>&1
expect_eq "revert exits 0" 0 $?
tree_sums "$N" >"$TMP/reverted.sums"
if cmp -s "$TMP/before.sums" "$TMP/reverted.sums"; then ok "revert: the tree as it was"
else not_ok "revert: the tree as it was" "$(diff "$TMP/before.sums" "$TMP/reverted.sums")"; fi

# ---- every directory a link: all refused, never "already match the plan" ----
# /etc/sysctl.d and /etc/modprobe.d links into the store too: every setting
# (nf_conntrack_max 4096 -> the profile's, hashsize, the limit) is refused.
# The plan is empty only because of that: plan and apply say the host does
# not match the plan, and apply exits 1.
A=$TMP/nixos-all
nixos_tree "$A" /nix/store/abc-etc/etc
touch "$A/etc/NIXOS"
for d in sysctl.d modprobe.d modules-load.d; do
	mkdir -p "$A/nix/store/abc-etc/etc/$d"
	cp -a "$A/etc/$d/." "$A/nix/store/abc-etc/etc/$d/" 2>/dev/null
	rm -rf "${A:?}/etc/$d"
	ln -s "/etc/static/$d" "$A/etc/$d"
done
htr --root "$A" $G plan >"$TMP/all.out" 2>&1
expect_eq "all refused: plan exits 1 (the host does not match the plan)" 1 $?
expect_contains "all refused: plan says the host does not match" \
	"No changes that hosttune may make, but the host does not match the plan" "$(cat "$TMP/all.out")"
case $(cat "$TMP/all.out") in *"already match the plan"*) not_ok "all refused: plan never says 'already match'" ;;
*) ok "all refused: plan never says 'already match'" ;; esac
htr --root "$A" $G apply >"$TMP/all.out" 2>&1
expect_eq "all refused: apply exits 1" 1 $?
expect_contains "all refused: apply says so" \
	"No changes that hosttune may make, but the host does not match the plan" "$(cat "$TMP/all.out")"
htr --root "$A" $G --format json apply >"$TMP/all.json" 2>/dev/null
expect_eq "all refused: JSON apply exits 1" 1 $?
expect_eq "all refused: every skipped entry refused" true \
	"$(jq '[.skipped[] | .refused] | all and length > 0' "$TMP/all.json")"

# ---- modules-load.d owned too: the net.netfilter lines need nf_conntrack loaded ----
M=$TMP/nixos-ml
nixos_tree "$M" /nix/store/abc-etc/etc
touch "$M/etc/NIXOS"
mkdir -p "$M/nix/store/abc-etc/etc/modules-load.d"
ln -s /etc/static/modules-load.d "$M/etc/modules-load.d"
htr --root "$M" $G plan >"$TMP/ml.out" 2>&1
expect_eq "modules-load.d a link: plan exits 1 (sysctl.d to write)" 1 $?
expect_contains "modules-load.d a link: hashsize refused with boot.extraModprobeConfig" \
	'set boot.extraModprobeConfig = "options nf_conntrack hashsize=' "$(cat "$TMP/ml.out")"
expect_contains "modules-load.d a link: a warning names boot.kernelModules" \
	'add boot.kernelModules = [ "nf_conntrack" ]; to configuration.nix' "$(cat "$TMP/ml.out")"

# ---- not NixOS: a link elsewhere is named, with the drop-in's own line ----
O=$TMP/other
nixos_tree "$O" /srv/etc
mkdir -p "$O/srv"
mv "$O/nix/store/abc-etc/etc" "$O/srv/etc"
htr --root "$O" $G plan >"$TMP/other.out" 2>&1
expect_eq "a link outside the store: plan exits 1 (sysctl.d to write)" 1 $?
expect_contains "a link outside the store: named, with the line to put there" \
	'process.garage.nofile: /etc/systemd/system is a link to /etc/static/systemd/system, which hosttune does not write through: put [Service] LimitNOFILE=42000:524288 for garage.service where that is managed' \
	"$(cat "$TMP/other.out")"

finish
