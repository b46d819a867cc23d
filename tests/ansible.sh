#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# examples/ansible/playbook.yml with the real ansible-playbook (Debian's
# ansible-core), connection local, against --root copies of fixture trees,
# never this host's /etc: on a tree whose hosttune.conf sets the profile
# (and a waiver) and a play that sets none, the first run applies the tree's
# profile, the second changes nothing and a hand audit agrees with it; check
# mode (--check --diff) changes nothing and shows the plan's unified diff as
# Ansible renders one; a play's profile wins over the tree's; a host with a
# critical finding apply cannot fix fails the gate with one short line; examples/ansible/fleet.yml fetches two hosts' facts
# to the controller and audits them in one run. Run by .ci/run after make check (not by make check:
# a playbook run takes seconds, and the sanitizer and distcheck runs of the
# suite would repeat it); skipped (77) without ansible-playbook.
. "$(dirname "$0")/lib.sh"

if ! command -v ansible-playbook >/dev/null 2>&1; then
	echo "# SKIP: no ansible-playbook (apt-get install ansible-core)"
	exit 77
fi
PLAYBOOK=$HT_TESTS_DIR/../examples/ansible/playbook.yml
# Nothing written outside $TMP: Ansible's home, temp directories, no retry files.
mkdir -p "$TMP/home"
export HOME="$TMP/home" ANSIBLE_HOME="$TMP/home/.ansible" \
	ANSIBLE_LOCAL_TEMP="$TMP/ansible-local" ANSIBLE_REMOTE_TEMP="$TMP/ansible-remote" \
	ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_PYTHON_INTERPRETER=auto_silent \
	ANSIBLE_DEPRECATION_WARNINGS=0 ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_INVENTORY_UNPARSED_WARNING=0
HT_ABS=$(cd "$(dirname "$HOSTTUNE")" && pwd)/$(basename "$HOSTTUNE")
RULES_ABS=$(cd "$HT_RULES_DIR" && pwd)
# The configured sysconfdir (make check exports it; by hand: from --help).
: "${HT_SYSCONFDIR:=$("$HOSTTUNE" --help | sed -n 's|.* \(/.*\)/hosttune/hosttune.conf and its drop-ins|\1|p')}"

# play ROOT OUT [ANSIBLE-OPTIONS...]: the playbook on ROOT with the garage
# profile at 570 new connections a second; its output in OUT; returns its exit.
play() {
	root=$1
	o=$2
	shift 2
	ansible-playbook -i localhost, -c local "$@" "$PLAYBOOK" -e "{\"hosttune_bin\": \"$HT_ABS\",
		\"hosttune_root\": \"$root\", \"hosttune_profile\": \"garage\",
		\"hosttune_extra_args\": [\"--rules\", \"$RULES_ABS\", \"--no-measure\",
		\"--set\", \"workload.conn_rate=570\"]}" >"$o" 2>&1
}
# play_conf ROOT OUT [ANSIBLE-OPTIONS...]: the playbook on ROOT without a
# profile or --set: the tree's own configuration decides.
play_conf() {
	root=$1
	o=$2
	shift 2
	ansible-playbook -i localhost, -c local "$@" "$PLAYBOOK" -e "{\"hosttune_bin\": \"$HT_ABS\",
		\"hosttune_root\": \"$root\",
		\"hosttune_extra_args\": [\"--rules\", \"$RULES_ABS\", \"--no-measure\"]}" >"$o" 2>&1
}
# configure ROOT: the host's own hosttune.conf: the garage profile at 570
# new connections a second, conntrack.buckets waived.
configure() {
	mkdir -p "$1$HT_SYSCONFDIR/hosttune"
	printf '[hosttune]\nprofile = garage\n[set]\nworkload.conn_rate = 570\n[waive]\nconntrack.buckets = %s\n' \
		"the site accepts the longer chains" >"$1$HT_SYSCONFDIR/hosttune/hosttune.conf"
}
# recap OUT FIELD: FIELD's count on the PLAY RECAP line ("changed=1").
recap() {
	sed -n "s/^localhost *:.* $2=\\([0-9]*\\).*/\\1/p" "$1"
}
# The tree's every path and file content (a change anywhere shows).
sums() {
	(cd "$1" && find . -printf '%p %y %m\n' | sort && find . -type f -exec sha256sum {} + | sort)
}

# ---- the Garage VM configured for garage: apply fixes every critical finding ----
cp -a "$FIXTURES/garage-vm/root" "$TMP/g"
configure "$TMP/g"
sums "$TMP/g" >"$TMP/g.before"
play_conf "$TMP/g" "$TMP/run1.out"
rc=$?
expect_eq "first run: exit 0, nothing failed" "0 0" "$rc $(recap "$TMP/run1.out" failed)"
expect_eq "first run: apply changed the tree (changed=1)" 1 "$(recap "$TMP/run1.out" changed)"
expect_eq "first run: the sysctl file is written below the root" yes \
	"$([ -f "$TMP/g/etc/sysctl.d/90-hosttune.conf" ] && echo yes)"
expect_eq "first run: the host's configured profile, not the play's default" \
	"# This file is managed by hosttune (profile garage)." \
	"$(head -n 1 "$TMP/g/etc/sysctl.d/90-hosttune.conf")"
# garage at 570/s (config.sh): conntrack.max and .drops critical; .buckets,
# .time_wait and garage.ram_buffer warnings; two info. buckets is waived: 2
# warnings, 1 waived, and it is not among the rules listed.
expect_eq "first run: the audit summary, no leading space, the waived rule left out" \
	'"msg": "garage: 2 critical, 2 warning, 2 info, 1 waived: conntrack.max, conntrack.drops, conntrack.time_wait, garage.ram_buffer"' \
	"$(sed -n '/^TASK \[audit summary\]/,/^TASK/s/^ *\("msg": .*\)$/\1/p' "$TMP/run1.out")"
# The fixture's 4096 entries, raised to the garage profile's 65536 (apply-garage.sh).
expect_eq "first run: live nf_conntrack_max set" 65536 \
	"$(cat "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max")"
play_conf "$TMP/g" "$TMP/run2.out"
rc=$?
expect_eq "second run: exit 0, changed=0, failed=0" "0 0 0" \
	"$rc $(recap "$TMP/run2.out" changed) $(recap "$TMP/run2.out" failed)"
# A run by hand, with the host's configuration, agrees with the play: it
# wants TIME_WAIT 30 s, as applied, and plan has nothing to change (exit 0).
"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/g" --no-measure --format json audit >"$TMP/hand.json"
expect_eq "by hand after the play: conntrack.time_wait ok" ok \
	"$(jq -r '.findings[] | select(.rule == "conntrack.time_wait") | .severity' "$TMP/hand.json")"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/g" --no-measure plan >/dev/null
expect_eq "by hand after the play: plan in sync (exit 0)" 0 $?

# ---- check mode with --diff on a fresh copy: the plan, nothing written ----
rm -rf "$TMP/g"
cp -a "$FIXTURES/garage-vm/root" "$TMP/g"
configure "$TMP/g"
play_conf "$TMP/g" "$TMP/check.out" --check --diff
rc=$?
expect_eq "check mode: exit 0, failed=0" "0 0" "$rc $(recap "$TMP/check.out" failed)"
# The plan task reports what apply would change: changed=1 in check mode.
expect_eq "check mode: the plan would change the tree (changed=1)" 1 \
	"$(recap "$TMP/check.out" changed)"
sums "$TMP/g" >"$TMP/g.check"
if cmp -s "$TMP/g.before" "$TMP/g.check"; then ok "check mode: the tree is unchanged"
else not_ok "check mode: the tree is unchanged" "$(diff "$TMP/g.before" "$TMP/g.check" | head)"; fi
# Rendered as Ansible renders a file's diff: the lines themselves, not a
# debug list of quoted strings; the live values as one more diff after them.
sed -n '/^TASK \[plan diff (check mode with --diff)\]/,/^changed: /p' "$TMP/check.out" >"$TMP/check.diff"
expect_eq "check mode --diff: the plan's unified diff, as lines" \
	"--- /dev/null|+++ b/etc/sysctl.d/90-hosttune.conf|+# This file is managed by hosttune (profile garage)." \
	"$(grep -A 3 '^--- /dev/null' "$TMP/check.diff" | sed -n '1,2p;4p' | tr '\n' '|' | sed 's/|$//')"
expect_eq "check mode --diff: the live change, from and to" \
	"-net.netfilter.nf_conntrack_max = 4096|+net.netfilter.nf_conntrack_max = 65536" \
	"$(sed -n '/^+++ b\/live$/,$p' "$TMP/check.diff" | grep '^[-+]net.netfilter.nf_conntrack_max = ' |
		tr '\n' '|' | sed 's/|$//')"
expect_eq "check mode --diff: one task changed, the diff's" "TASK [plan diff (check mode with --diff)]" \
	"$(grep -B 1000 '^changed: ' "$TMP/check.out" | grep '^TASK \[' | tail -n 1 | sed 's/ \**$//')"

# ---- a host where apply cannot fix the critical finding ----
# nf_conntrack_max read-only (0444: inside a container since 5.12.2, as
# audit-garage.sh makes it): the table stays at 4096 entries, below the
# 570/s garage rate's need: conntrack.max stays critical after apply.
cp -a "$FIXTURES/garage-vm/root" "$TMP/c"
chmod 0444 "$TMP/c/proc/sys/net/netfilter/nf_conntrack_max"
play "$TMP/c" "$TMP/gate.out"
rc=$?
expect_eq "critical after apply: the play fails (exit 2, failed=1)" "2 1" \
	"$rc $(recap "$TMP/gate.out" failed)"
line=$(grep '^fatal: ' "$TMP/gate.out")
expect_eq "critical after apply: one fatal line" 1 "$(printf '%s\n' "$line" | grep -c .)"
expect_contains "critical after apply: it names the rule" \
	"hosttune: critical after apply: conntrack.max (conntrack table size" "$line"
n=$(printf '%s' "$line" | wc -c)
expect_eq "critical after apply: the line is short (under 300 bytes, not the report)" yes \
	"$([ "$n" -lt 300 ] && echo yes || echo "no: $n bytes")"
expect_eq "critical after apply: the gate is the failing task" "TASK [gate verdict]" \
	"$(grep '^TASK \[' "$TMP/gate.out" | tail -n 1 | sed 's/ \**$//')"

# ---- an error: the error object's message, one line ----
play "$TMP/nope" "$TMP/err.out"
rc=$?
line=$(grep '^fatal: ' "$TMP/err.out")
expect_eq "missing root: the play fails at the audit's error" "2 TASK [audit error]" \
	"$rc $(grep '^TASK \[' "$TMP/err.out" | tail -n 1 | sed 's/ \**$//')"
expect_contains "missing root: one line, the error object's message" \
	"\"msg\": \"hosttune failed (exit 2): --root $TMP/nope: No such file or directory\"}" "$line"

# ---- hosttune not there: stdout is not JSON; the command module's message ----
ansible-playbook -i localhost, -c local "$PLAYBOOK" -e "{\"hosttune_bin\": \"$TMP/no-hosttune\",
	\"hosttune_root\": \"$TMP/g\"}" >"$TMP/missing.out" 2>&1
rc=$?
line=$(grep '^fatal: ' "$TMP/missing.out")
expect_eq "hosttune missing: the play fails at the audit's error" "2 TASK [audit error]" \
	"$rc $(grep '^TASK \[' "$TMP/missing.out" | tail -n 1 | sed 's/ \**$//')"
expect_contains "hosttune missing: one line, the module's message (no template error)" \
	"\"msg\": \"hosttune failed (exit 2): [Errno 2] No such file or directory" "$line"

# ---- verify's problems are shown: a later sysctl.d file overrides the fix ----
# 99-local.conf is read after hosttune's 90-hosttune.conf (systemd-sysctl's
# order), so nf_conntrack_max = 8192 wins at boot: verify exits 1, the play
# goes on (the gate judges), and the problem's line is in the output.
# The tree's configuration says profile default: the play's garage wins.
rm -rf "$TMP/o"
cp -a "$FIXTURES/garage-vm/root" "$TMP/o"
mkdir -p "$TMP/o$HT_SYSCONFDIR/hosttune" "$TMP/o/etc/sysctl.d"
printf '[hosttune]\nprofile = default\n' >"$TMP/o$HT_SYSCONFDIR/hosttune/hosttune.conf"
echo "net.netfilter.nf_conntrack_max = 8192" >"$TMP/o/etc/sysctl.d/99-local.conf"
play "$TMP/o" "$TMP/verify.out"
rc=$?
expect_eq "overridden: exit 0, failed=0" "0 0" "$rc $(recap "$TMP/verify.out" failed)"
expect_eq "the play's profile wins over the tree's configuration" \
	"# This file is managed by hosttune (profile garage)." \
	"$(head -n 1 "$TMP/o/etc/sysctl.d/90-hosttune.conf")"
expect_contains "overridden: verify's problem is shown" \
	"is overridden at boot by /etc/sysctl.d/99-local.conf:1 (= 8192)" \
	"$(sed -n '/^TASK \[verify problems\]/,/^TASK/p' "$TMP/verify.out")"

# ---- a fleet (examples/ansible/fleet.yml): each host's facts fetched to
# the controller, then one audit of them all there ----
# Two hosts of the inventory, each its own --root tree (an inventory
# variable: the playbook's defaults must not hide it): web1 the Garage VM
# (its hostname garage-vm: 2 critical findings at 570/s, as above), web2 a
# 5.10 host without nf_conntrack and without a hostname (named after its
# file, web2.facts).
rm -rf "$TMP/g" "$TMP/n" "$TMP/fleet"
cp -a "$FIXTURES/garage-vm/root" "$TMP/g"
cp -a "$FIXTURES/no-conntrack/root" "$TMP/n"
sums "$TMP/g" >"$TMP/g.before"
printf 'web1 ansible_connection=local hosttune_root=%s\nweb2 ansible_connection=local hosttune_root=%s\n' \
	"$TMP/g" "$TMP/n" >"$TMP/inventory"
# fleet OUT [EXTRA-VARS-JSON-MEMBERS [EXTRA-ARGS-JSON-MEMBERS]]: fleet.yml
# over the two; its exit.
fleet() {
	o=$1
	ansible-playbook -i "$TMP/inventory" "$HT_TESTS_DIR/../examples/ansible/fleet.yml" \
		-e "{\"hosttune_bin\": \"$HT_ABS\", \"hosttune_profile\": \"garage\",
		\"hosttune_fleet_dir\": \"$TMP/fleet\"${2:-},
		\"hosttune_extra_args\": [\"--rules\", \"$RULES_ABS\", \"--no-measure\",
		\"--set\", \"workload.conn_rate=570\"${3:-}]}" >"$o" 2>&1
}
# The first run with the fleet's gate at critical and the Garage VM's two
# critical findings (conntrack.max, conntrack.drops) waived: a waived
# finding fails no host, and the summary counts it apart, never lists it.
printf '[waive]\nconntrack.max = %s\nconntrack.drops = %s\n' "sized by the operator" \
	"drops accepted during the migration" >"$TMP/waive.conf"
fleet "$TMP/fleet.out" ', "hosttune_fail_on": "critical"' ", \"--config\", \"$TMP/waive.conf\""
rc=$?
expect_eq "fleet, critical findings waived: exit 0, nothing failed" "0 0 0 0" "$rc $(recap "$TMP/fleet.out" failed) \
$(sed -n 's/^web1 *:.* failed=\([0-9]*\).*/\1/p' "$TMP/fleet.out") \
$(sed -n 's/^web2 *:.* failed=\([0-9]*\).*/\1/p' "$TMP/fleet.out")"
expect_eq "fleet: read-only, nothing changed (changed=0 on each host and the controller)" "0 0 0" \
	"$(recap "$TMP/fleet.out" changed) $(sed -n 's/^web1 *:.* changed=\([0-9]*\).*/\1/p' "$TMP/fleet.out") \
$(sed -n 's/^web2 *:.* changed=\([0-9]*\).*/\1/p' "$TMP/fleet.out")"
expect_eq "fleet: one facts file a host on the controller" "web1.facts web2.facts" \
	"$(cd "$TMP/fleet" && echo *)"
expect_eq "fleet: web1's facts are its tree's (host.name of the Garage VM)" \
	'host.name = "garage-vm" from /proc/sys/kernel/hostname' \
	"$(grep '^host.name ' "$TMP/fleet/web1.facts")"
# The summary: one part a host, in the fleet's order (name order of the files).
msg=$(sed -n 's/^ *"msg": "\(.*\)"$/\1/p' "$TMP/fleet.out")
# 2 critical at 570/s (as above), both waived: 0 critical, 2 waived, and
# neither rule in the list (conntrack.time_wait, conntrack.buckets and
# garage.ram_buffer stay: warnings not waived).
expect_contains "fleet: web1's summary counts its waived findings apart" \
	"garage-vm: 0 critical, 3 warning, 2 info, 2 waived: conntrack.time_wait, conntrack.buckets, garage.ram_buffer;" "$msg"
expect_contains "fleet: and web2, named after its file" "; web2: 0 critical, 0 warning" "$msg"
sums "$TMP/g" >"$TMP/g.after"
if cmp -s "$TMP/g.before" "$TMP/g.after"; then ok "fleet: read-only, the host's tree is unchanged"
else not_ok "fleet: read-only, the host's tree is unchanged"; fi
# The fleet's gate: a host with a critical finding not waived fails the
# controller's play.
fleet "$TMP/fleet-gate.out" ', "hosttune_fail_on": "critical"'
rc=$?
expect_eq "fleet gate: the play fails (exit 2)" 2 "$rc"
expect_contains "fleet gate: one line naming the host" \
	'"msg": "hosttune: garage-vm at critical or worse"' "$(grep '^fatal: ' "$TMP/fleet-gate.out")"

finish
