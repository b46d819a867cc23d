#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# plan, apply and revert on a copy of the Garage VM's --root tree
# (tests/fixtures/garage-vm/root): the exact dry-run diff, the files and
# modes apply writes, a second apply that changes nothing, a revert that
# restores the tree byte for byte (directories and modes too), rollback when
# a live write fails, files hosttune did not write, symlinks below --root that
# would lead a write out of the tree, state files revert must refuse, files
# edited since apply, keys gone since apply, and the emitted files read by the
# real tools.
. "$(dirname "$0")/lib.sh"

G="--profile garage --set workload.conn_rate=570"
fresh() {
	rm -rf "$TMP/g"
	cp -a "$FIXTURES/garage-vm/root" "$TMP/g"
}
# The whole tree: every directory, file and symlink, with modes and content hashes.
sums() {
	tree_sums "$TMP/g"
}
# same_tree NAME DESCRIPTION: the tree now is the one saved as $TMP/NAME.sums
same_tree() {
	sums >"$TMP/now.sums"
	if cmp -s "$TMP/$1.sums" "$TMP/now.sums"; then ok "$2"
	else not_ok "$2" "$(diff "$TMP/$1.sums" "$TMP/now.sums" | head -20)"; fi
}
# state_json FILTER: rewrites the state file with a jq filter
state_json() {
	jq "$1" "$TMP/g/var/lib/hosttune/state" >"$TMP/state.new" &&
		cat "$TMP/state.new" >"$TMP/g/var/lib/hosttune/state"
}

# ---- plan: the exact diff and live table (golden file) ----
fresh
sums >"$TMP/before.sums"
ht --root "$TMP/g" $G plan >"$TMP/plan.out"
# The fresh tree needs every change of the golden file: 1, as diff(1) with differences.
expect_eq "plan with changes exits 1" 1 $?
if cmp -s "$FIXTURES/garage-vm/plan.expected" "$TMP/plan.out"; then ok "plan output is the golden file"
else not_ok "plan output is the golden file" "$(diff "$FIXTURES/garage-vm/plan.expected" "$TMP/plan.out" | head -20)"; fi
ht --root "$TMP/g" $G --dry-run apply >"$TMP/dry.out"
if cmp -s "$TMP/plan.out" "$TMP/dry.out"; then ok "apply --dry-run prints the same plan"
else not_ok "apply --dry-run prints the same plan"; fi
ht --root "$TMP/g" $G plan >"$TMP/plan2.out"
if cmp -s "$TMP/plan.out" "$TMP/plan2.out"; then ok "plan is the same on every run"
else not_ok "plan is the same on every run"; fi
sums >"$TMP/after-plan.sums"
if cmp -s "$TMP/before.sums" "$TMP/after-plan.sums"; then ok "plan writes nothing"
else not_ok "plan writes nothing" "$(diff "$TMP/before.sums" "$TMP/after-plan.sums")"; fi

# ---- the diff applied with patch -p1 gives the files apply writes ----
cp -a "$TMP/g" "$TMP/patched"
sed -n '/^Live changes:/q;p' "$TMP/plan.out" >"$TMP/plan.diff"
(cd "$TMP/patched" && patch -s -p1 <"$TMP/plan.diff")
expect_eq "patch -p1 applies the plan's diff" 0 $?
# plan --format json: changes nothing (changed false), would change (issue 13),
# and its "diff" is the text plan's diff byte for byte (jq -j: no newline added).
ht --root "$TMP/g" $G --format json plan >"$TMP/plan.json"
expect_eq "plan JSON: changed false, would_change true" "false true" \
	"$(jq -r '"\(.changed) \(.would_change)"' "$TMP/plan.json")"
jq -j .diff "$TMP/plan.json" >"$TMP/plan-json.diff"
# The text puts a blank line between the diff and "Live changes:".
sed '${/^$/d;}' "$TMP/plan.diff" >"$TMP/plan-text.diff"
if cmp -s "$TMP/plan-text.diff" "$TMP/plan-json.diff"; then ok "plan JSON: diff is the text plan's diff"
else not_ok "plan JSON: diff is the text plan's diff" "$(diff "$TMP/plan-text.diff" "$TMP/plan-json.diff" | head)"; fi

# ---- apply ----
ht --root "$TMP/g" $G apply >"$TMP/apply.out"
expect_eq "apply exits 0" 0 $?
expect_contains "apply says what it did" "set net.netfilter.nf_conntrack_max from 4096 to 65536" \
	"$(cat "$TMP/apply.out")"
for f in etc/sysctl.d/90-hosttune.conf etc/modprobe.d/hosttune.conf etc/modules-load.d/hosttune.conf; do
	expect_eq "$f: mode 0644" 644 "$(stat -c %a "$TMP/g/$f")"
	if cmp -s "$TMP/g/$f" "$TMP/patched/$f"; then ok "$f: same as the patched tree"
	else not_ok "$f: same as the patched tree"; fi
done
expect_eq "exactly three files written under etc/" 3 "$(find "$TMP/g/etc" -type f | wc -l)"
expect_eq "live nf_conntrack_max" 65536 "$(cat "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max")"
expect_eq "live TIME_WAIT" 30 \
	"$(cat "$TMP/g/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait")"
expect_eq "live hashsize" 65536 "$(cat "$TMP/g/sys/module/nf_conntrack/parameters/hashsize")"
expect_eq "state file mode 0600" 600 "$(stat -c %a "$TMP/g/var/lib/hosttune/state")"

# ---- a second apply changes nothing ----
ht --root "$TMP/g" $G apply >"$TMP/apply2.out"
expect_eq "second apply exits 0" 0 $?
expect_eq "second apply says so" "No changes: the files and live values already match the plan." \
	"$(cat "$TMP/apply2.out")"
ht --root "$TMP/g" $G --format json apply >"$TMP/apply2.json"
expect_eq "second apply: changed false (JSON)" false "$(jq .changed "$TMP/apply2.json")"
ht --root "$TMP/g" $G --format json plan >"$TMP/plan3.json"
expect_eq "plan after apply: would_change false, empty diff" "false " \
	"$(jq -r '"\(.would_change) \(.diff)"' "$TMP/plan3.json")"
expect_eq "second apply: every file unchanged" unchanged \
	"$(jq -r '[.files[].action] | unique | join(",")' "$TMP/apply2.json")"

# ---- revert restores the tree byte for byte ----
ht --root "$TMP/g" revert >"$TMP/revert.out"
expect_eq "revert exits 0" 0 $?
sums >"$TMP/after-revert.sums"
if cmp -s "$TMP/before.sums" "$TMP/after-revert.sums"; then ok "revert restores every file"
else not_ok "revert restores every file" "$(diff "$TMP/before.sums" "$TMP/after-revert.sums")"; fi
# The fixture has no etc/ and no var/: apply created them, revert removes them.
expect_eq "revert removes the directories apply created" "" \
	"$(ls -d "$TMP/g/etc" "$TMP/g/var" 2>/dev/null)"
expect_contains "revert says so" "removed directory /etc/sysctl.d" "$(cat "$TMP/revert.out")"
ht --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
expect_eq "revert with nothing to revert: exit 0 (ok, nothing changed), one line" \
	"0 1 nothing to revert" "$? $(wc -l <"$TMP/out") $(grep -o 'nothing to revert' "$TMP/out")"

# ---- JSON of a first apply ----
fresh
ht --root "$TMP/g" $G --format json apply >"$TMP/apply.json"
expect_eq "JSON: changed true" true "$(jq .changed "$TMP/apply.json")"
expect_eq "JSON: three files created" "create,create,create" \
	"$(jq -r '[.files[].action] | join(",")' "$TMP/apply.json")"
expect_eq "JSON: live change from/to" "4096 65536" \
	"$(jq -r '.live[] | select(.key == "net.netfilter.nf_conntrack_max") | "\(.from) \(.to)"' "$TMP/apply.json")"
ht --root "$TMP/g" revert >/dev/null

# ---- a failed live write rolls everything back ----
# Live keys are written in key order: module.nf_conntrack.hashsize, then
# net.netfilter.nf_conntrack_max. Make the second fail for real: a symlink
# where the sysctl is. The collector reads through it (4096); apply never
# writes through a symlink (O_NOFOLLOW, ELOOP).
fresh
mv "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max" "$TMP/g/proc/sys/net/netfilter/max.real"
ln -s max.real "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max"
sums >"$TMP/before-fail.sums"
ht --root "$TMP/g" $G apply >"$TMP/out" 2>"$TMP/err"
expect_eq "failed live write: exit 3" 3 $?
expect_contains "failed live write: names the step" \
	"netfilter/nf_conntrack_max is a symlink; hosttune does not write through symlinks" \
	"$(cat "$TMP/err")"
expect_contains "failed live write: says it rolled back" "every change rolled back" "$(cat "$TMP/err")"
expect_eq "failed live write: the first key is back" 4096 \
	"$(cat "$TMP/g/sys/module/nf_conntrack/parameters/hashsize")"
sums >"$TMP/after-fail.sums"
if cmp -s "$TMP/before-fail.sums" "$TMP/after-fail.sums"; then
	ok "failed live write: every file as it was, no state file"
else
	not_ok "failed live write: every file as it was" "$(diff "$TMP/before-fail.sums" "$TMP/after-fail.sums")"
fi

# ---- a file hosttune did not write ----
fresh
mkdir -p "$TMP/g/etc/sysctl.d"
printf 'net.netfilter.nf_conntrack_max = 131072\n' >"$TMP/g/etc/sysctl.d/90-hosttune.conf"
sums >"$TMP/before-foreign.sums"
ht --root "$TMP/g" $G apply >"$TMP/out" 2>"$TMP/err"
expect_eq "foreign file: exit 2" 2 $?
expect_contains "foreign file: says so" "90-hosttune.conf exists and was not written by hosttune" \
	"$(cat "$TMP/err")"
# With --format json: the same exit and line, and on stdout one JSON document,
# the error object (issue 13: stdout was empty, from_json failed).
ht --root "$TMP/g" $G --format json apply >"$TMP/out.json" 2>"$TMP/err.json"
rc=$?
expect_eq "foreign file, JSON: exit 2, one error object with the stderr's message" \
	"2 1 2 $(sed 's/^hosttune: //' "$TMP/err")" \
	"$rc $(jq -s length "$TMP/out.json") $(jq -r '"\(.error.exit) \(.error.message)"' "$TMP/out.json")"
sums >"$TMP/after-foreign.sums"
if cmp -s "$TMP/before-foreign.sums" "$TMP/after-foreign.sums"; then ok "foreign file: nothing written"
else not_ok "foreign file: nothing written"; fi
ht --root "$TMP/g" $G --force apply >/dev/null
expect_eq "--force: takes over" 0 $?
expect_eq "--force: keeps the original" "net.netfilter.nf_conntrack_max = 131072" \
	"$(cat "$TMP/g/etc/sysctl.d/90-hosttune.conf.hosttune-orig")"
ht --root "$TMP/g" revert >/dev/null
sums >"$TMP/after-force-revert.sums"
if cmp -s "$TMP/before-foreign.sums" "$TMP/after-force-revert.sums"; then
	ok "--force then revert: the original is back, the copy gone"
else
	not_ok "--force then revert" "$(diff "$TMP/before-foreign.sums" "$TMP/after-force-revert.sums")"
fi

# ---- --persist-only, --live-only, --only ----
fresh
ht --root "$TMP/g" $G --persist-only apply >/dev/null
expect_eq "--persist-only: live value untouched" 4096 \
	"$(cat "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max")"
expect_eq "--persist-only: files written" 3 "$(find "$TMP/g/etc" -type f | wc -l)"
ht --root "$TMP/g" revert >/dev/null
ht --root "$TMP/g" $G --live-only --only conntrack.time_wait apply >/dev/null
expect_eq "--live-only --only: TIME_WAIT set" 30 \
	"$(cat "$TMP/g/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait")"
expect_eq "--live-only --only: max untouched" 4096 \
	"$(cat "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max")"
expect_eq "--live-only: no files" 0 "$(find "$TMP/g" -path '*/etc/*' -type f | wc -l)"
ht --root "$TMP/g" revert >/dev/null
ht --root "$TMP/g" $G --only nosuch.rule apply 2>"$TMP/err"
expect_eq "--only with an unknown rule: exit 2" 2 $?

# ---- a foreign file of mode 0600 comes back as it was ----
# After a failed apply (the same symlinked nf_conntrack_max as above) and
# after revert: content, mode 0600, and no .hosttune-orig copy left.
fresh
mkdir -p "$TMP/g/etc/modprobe.d"
printf 'options nf_conntrack hashsize=1024\n' >"$TMP/g/etc/modprobe.d/hosttune.conf"
chmod 600 "$TMP/g/etc/modprobe.d/hosttune.conf"
sums >"$TMP/before-0600.sums"
mv "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max" "$TMP/g/proc/sys/net/netfilter/max.real"
ln -s max.real "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max"
ht --root "$TMP/g" $G --force apply >"$TMP/out" 2>"$TMP/err"
expect_eq "0600 foreign file, failed apply: exit 3" 3 $?
rm "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max"
mv "$TMP/g/proc/sys/net/netfilter/max.real" "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max"
same_tree before-0600 "0600 foreign file, failed apply: content, mode 0600, no copy left"
ht --root "$TMP/g" $G --force apply >/dev/null
expect_eq "0600 foreign file: the copy keeps mode 0600" 600 \
	"$(stat -c %a "$TMP/g/etc/modprobe.d/hosttune.conf.hosttune-orig")"
ht --root "$TMP/g" revert >/dev/null
expect_eq "0600 foreign file: revert exits 0" 0 $?
same_tree before-0600 "0600 foreign file, revert: content, mode 0600, no copy left"
# The copy is never overwritten: a second take-over while it exists is refused.
ht --root "$TMP/g" $G --force apply >/dev/null
printf 'options nf_conntrack hashsize=2048\n' >"$TMP/g/etc/modprobe.d/hosttune.conf"
ht --root "$TMP/g" $G --force apply >"$TMP/out" 2>"$TMP/err"
expect_eq "copy in the way: exit 2" 2 $?
expect_contains "copy in the way: says so" "hosttune.conf.hosttune-orig exists" "$(cat "$TMP/err")"
expect_eq "copy in the way: the copy keeps the first original" \
	"options nf_conntrack hashsize=1024" \
	"$(cat "$TMP/g/etc/modprobe.d/hosttune.conf.hosttune-orig")"

# ---- no write leaves --root through a symlinked directory ----
# etc/sysctl.d is a symlink to a directory outside the tree: the sysctl rules
# are refused alone (no line, no live value, the link named in "Not
# persisted"), the module's files are written, and nothing appears outside.
fresh
mkdir -p "$TMP/g/etc" "$TMP/outside"
ln -s "$TMP/outside" "$TMP/g/etc/sysctl.d"
max_before=$(cat "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max")
ht --root "$TMP/g" $G apply >"$TMP/out" 2>"$TMP/err"
# Exit 1: the sysctl rules were refused ("Not persisted"), as for a setting
# that will not hold at boot.
expect_eq "symlinked etc/sysctl.d: the other rules apply, exit 1 for the refused ones" 1 $?
expect_contains "symlinked etc/sysctl.d: the sysctl rules refused, the link named" \
	"net.netfilter.nf_conntrack_max: /etc/sysctl.d is a link to $TMP/outside, which hosttune does not write through: put net.netfilter.nf_conntrack_max = " \
	"$(cat "$TMP/out")"
expect_eq "symlinked etc/sysctl.d: nothing written outside" "" "$(ls -A "$TMP/outside")"
expect_eq "symlinked etc/sysctl.d: the live nf_conntrack_max untouched" "$max_before" \
	"$(cat "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max")"
expect_eq "symlinked etc/sysctl.d: the link stays" "$TMP/outside" "$(readlink "$TMP/g/etc/sysctl.d")"
expect_eq "symlinked etc/sysctl.d: the module's file is written" "options nf_conntrack hashsize=" \
	"$(grep -o '^options nf_conntrack hashsize=' "$TMP/g/etc/modprobe.d/hosttune.conf")"

# var/ a symlink out of the tree: the state file is not written there.
fresh
ln -s "$TMP/outside" "$TMP/g/var"
sums >"$TMP/before-link.sums"
ht --root "$TMP/g" $G apply >"$TMP/out" 2>"$TMP/err"
expect_eq "symlinked var/: refused, exit 2 (a file in the way)" 2 $?
expect_contains "symlinked var/: names it" "$TMP/g/var is a symlink" "$(cat "$TMP/err")"
expect_eq "symlinked var/: no state file outside" "" "$(ls -A "$TMP/outside")"
same_tree before-link "symlinked var/: the tree as it was"

# proc/sys/net a symlink out of the tree: it resolves inside the tree, where
# nothing is, so no net value is read or planned; the outside is untouched.
fresh
rm -rf "$TMP/outnet"
mv "$TMP/g/proc/sys/net" "$TMP/outnet"
ln -s "$TMP/outnet" "$TMP/g/proc/sys/net"
ht --root "$TMP/g" $G plan >"$TMP/out" 2>"$TMP/err"
if grep -q nf_conntrack_max "$TMP/out"; then
	not_ok "proc/sys/net linked out of the tree: no net value planned" "$(cat "$TMP/out")"
else ok "proc/sys/net linked out of the tree: no net value planned"; fi
ht --root "$TMP/g" $G apply >"$TMP/out" 2>"$TMP/err"
expect_eq "proc/sys/net linked out of the tree: the value outside untouched" 4096 \
	"$(cat "$TMP/outnet/netfilter/nf_conntrack_max")"

# proc/sys/net a symlink inside the tree: read through it, as the host
# would, but the live write is refused (apply writes through no link), the
# files and the first live value (hashsize) rolled back.
fresh
rm -rf "$TMP/g/proc/net-real"
mv "$TMP/g/proc/sys/net" "$TMP/g/proc/net-real"
ln -s ../net-real "$TMP/g/proc/sys/net"
sums >"$TMP/before-link.sums"
ht --root "$TMP/g" $G apply >"$TMP/out" 2>"$TMP/err"
expect_eq "symlinked proc/sys/net: exit 3" 3 $?
expect_contains "symlinked proc/sys/net: names it" "$TMP/g/proc/sys/net is a symlink" \
	"$(cat "$TMP/err")"
expect_eq "symlinked proc/sys/net: the value behind the link untouched" 4096 \
	"$(cat "$TMP/g/proc/net-real/netfilter/nf_conntrack_max")"
same_tree before-link "symlinked proc/sys/net: everything rolled back"

# ---- plan with a symlink at a target path ----
fresh
mkdir -p "$TMP/g/etc/sysctl.d"
ln -s "$TMP/outside/x.conf" "$TMP/g/etc/sysctl.d/90-hosttune.conf"
ht --root "$TMP/g" $G plan >"$TMP/out" 2>"$TMP/err"
expect_eq "symlink at the target: plan refuses, exit 2" 2 $?
expect_contains "symlink at the target: says why" \
	"90-hosttune.conf" "$(cat "$TMP/err")"
expect_contains "symlink at the target: says hosttune does not write through it" \
	"hosttune does not write through symlinks" "$(cat "$TMP/err")"

# ---- revert refuses a state file that names anything hosttune does not write ----
fresh
ht --root "$TMP/g" $G apply >/dev/null
cp "$TMP/g/var/lib/hosttune/state" "$TMP/state.good"
state_json '.files[2].path = "/../../outside-c/evil.conf"'
sums >"$TMP/before-bad.sums"
ht --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
expect_eq "state with /../../outside-c/evil.conf: refused, exit 2" 2 $?
expect_contains "state with a bad path: names the entry" \
	'state: files entry 3: path "/../../outside-c/evil.conf" is not a file hosttune writes' \
	"$(cat "$TMP/err")"
expect_eq "state with a bad path: nothing written outside" no \
	"$([ -e "$TMP/g/../../outside-c" ] && echo yes || echo no)"
same_tree before-bad "state with a bad path: nothing changed, the state file kept"
cp "$TMP/state.good" "$TMP/g/var/lib/hosttune/state"
state_json '.live[1].path = "/proc/sys/../../etc/passwd"'
ht --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
expect_eq "state with a bad live path: refused, exit 2" 2 $?
expect_contains "state with a bad live path: names the entry" \
	'live entry 2: path "/proc/sys/../../etc/passwd" is not the procfs/sysfs file' \
	"$(cat "$TMP/err")"
cp "$TMP/state.good" "$TMP/g/var/lib/hosttune/state"
state_json '.live[0].old = 4096'
sums >"$TMP/before-bad.sums"
ht --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
expect_eq "state with a number for old: refused, exit 2" 2 $?
expect_contains "state with a number for old: says so" \
	'live entry 1: "old" is 4096: not a string or null' "$(cat "$TMP/err")"
same_tree before-bad "state with a number for old: nothing changed"
cp "$TMP/state.good" "$TMP/g/var/lib/hosttune/state"
ht --root "$TMP/g" revert >/dev/null
expect_eq "the good state file still reverts" 0 $?

# ---- a state file that is not JSON: apply changes nothing ----
fresh
mkdir -p "$TMP/g/var/lib/hosttune"
printf '{ "files": [ \n' >"$TMP/g/var/lib/hosttune/state"
sums >"$TMP/before-bad.sums"
ht --root "$TMP/g" $G apply >"$TMP/out" 2>"$TMP/err"
expect_eq "corrupt state: apply refused, exit 2" 2 $?
expect_contains "corrupt state: says so" "state: not a hosttune state file" "$(cat "$TMP/err")"
same_tree before-bad "corrupt state: nothing changed"

# A NUL byte in the state file, and a state file that is a symlink: refused
# like any state file that is not hosttune's (exit 2, one line naming it),
# by apply and by revert alike; a symlinked config file is exit 2 too.
fresh
mkdir -p "$TMP/g/var/lib/hosttune"
printf '{"files": [], "live": []}\0\n' >"$TMP/g/var/lib/hosttune/state"
sums >"$TMP/before-bad.sums"
for cmd in "$G apply" revert; do
	ht --root "$TMP/g" $cmd >"$TMP/out" 2>"$TMP/err"
	expect_eq "NUL in the state file: ${cmd##* } refused, exit 2" 2 $?
	expect_eq "NUL in the state file: ${cmd##* } says so in one line" \
		"hosttune: ${cmd##* } refused, nothing was changed: $TMP/g/var/lib/hosttune/state: holds a NUL byte: not a text file" \
		"$(cat "$TMP/err")"
done
same_tree before-bad "NUL in the state file: nothing changed"
fresh
mkdir -p "$TMP/g/var/lib/hosttune"
echo '{"files": [], "live": []}' >"$TMP/outside/state"
ln -s "$TMP/outside/state" "$TMP/g/var/lib/hosttune/state"
sums >"$TMP/before-bad.sums"
for cmd in "$G apply" revert; do
	ht --root "$TMP/g" $cmd >"$TMP/out" 2>"$TMP/err"
	expect_eq "symlinked state file: ${cmd##* } refused, exit 2" 2 $?
	expect_contains "symlinked state file: ${cmd##* } names it" \
		"$TMP/g/var/lib/hosttune/state is a symlink" "$(cat "$TMP/err")"
done
same_tree before-bad "symlinked state file: nothing changed"
rm -f "$TMP/outside/state"

# ---- revert leaves a file the admin edited since apply ----
fresh
sums >"$TMP/before-edit.sums"
ht --root "$TMP/g" $G apply >/dev/null
printf '# mine now\noptions nf_conntrack hashsize=8192\n' >"$TMP/g/etc/modprobe.d/hosttune.conf"
ht --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
expect_eq "edited file: revert exits 0" 0 $?
expect_contains "edited file: revert says it left it" \
	"left /etc/modprobe.d/hosttune.conf: edited since hosttune wrote it" "$(cat "$TMP/out")"
expect_eq "edited file: the admin's content stays" "# mine now" \
	"$(head -n1 "$TMP/g/etc/modprobe.d/hosttune.conf")"
left=$(cd "$TMP/g" && find etc var -type f 2>/dev/null | LC_ALL=C sort | tr '\n' ' ')
expect_eq "edited file: the other files and the state are gone" \
	"etc/modprobe.d/hosttune.conf " "$left"
expect_eq "edited file: live values restored" 4096 \
	"$(cat "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max")"

# ---- revert that cannot restore everything keeps what remains ----
# nf_conntrack_max turned into a symlink after apply: that one value cannot
# be restored; the rest is, and the state keeps only that entry (exit 3).
# With the symlink gone, a second revert finishes: the tree as before apply.
fresh
sums >"$TMP/before-partial.sums"
ht --root "$TMP/g" $G apply >/dev/null
mv "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max" "$TMP/g/proc/sys/net/netfilter/max.real"
ln -s max.real "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max"
ht --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
expect_eq "partial revert: exit 3" 3 $?
expect_contains "partial revert: names what it could not restore" \
	"could not restore net.netfilter.nf_conntrack_max to 4096" "$(cat "$TMP/out")"
expect_contains "partial revert: says the rest stays in the state" \
	"1 change not restored; kept in the state file for another revert" "$(cat "$TMP/err")"
# The files stay recorded with the directories apply created for them, which
# the second revert removes; of the live values only the one not restored.
expect_eq "partial revert: the state keeps that value and the files of etc/" "3 net.netfilter.nf_conntrack_max" \
	"$(jget "$TMP/g/var/lib/hosttune/state" '"\(.files | length) \([.live[].key] | join(","))"')"
expect_eq "partial revert: TIME_WAIT restored" 120 \
	"$(cat "$TMP/g/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait")"
rm "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max"
mv "$TMP/g/proc/sys/net/netfilter/max.real" "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max"
ht --root "$TMP/g" revert >/dev/null
expect_eq "partial revert, second run: exit 0" 0 $?
same_tree before-partial "partial revert, second run: the tree as before apply"

# ---- revert after the module was unloaded ----
# sys/module/nf_conntrack is gone: hashsize is skipped, the rest restored,
# the state file removed.
fresh
ht --root "$TMP/g" $G apply >/dev/null
rm -r "$TMP/g/sys/module/nf_conntrack"
ht --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
expect_eq "module unloaded: revert exits 0" 0 $?
expect_contains "module unloaded: hashsize skipped" \
	"skipped module.nf_conntrack.hashsize: does not exist now" "$(cat "$TMP/out")"
expect_eq "module unloaded: state file removed" no \
	"$([ -e "$TMP/g/var/lib/hosttune/state" ] && echo yes || echo no)"
expect_eq "module unloaded: nf_conntrack_max restored" 4096 \
	"$(cat "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max")"

# ---- the emitted files, read by the real tools ----
fresh
ht --root "$TMP/g" $G --persist-only apply >/dev/null
if command -v modprobe >/dev/null; then
	expect_contains "modprobe --showconfig reads the option" "options nf_conntrack hashsize=65536" \
		"$(modprobe -C "$TMP/g/etc/modprobe.d" --showconfig 2>/dev/null)"
fi
# Every module in modules-load.d exists for the fixture's kernel (5.15.0-91-generic):
# listed in its modules.dep or modules.builtin. nf_conntrack_ipv4 would not be.
mods=$TMP/g/lib/modules/5.15.0-91-generic
for m in $(grep -v '^#' "$TMP/g/etc/modules-load.d/hosttune.conf" | grep .); do
	if grep -q "/$m.ko[: ]" "$mods/modules.dep" "$mods/modules.builtin" 2>/dev/null ||
		grep -q "/$m.ko$" "$mods/modules.builtin"; then
		ok "modules-load.d: $m exists for 5.15.0-91-generic"
	else
		not_ok "modules-load.d: $m exists for 5.15.0-91-generic"
	fi
done
# A file hosttune wrote that holds a NUL byte now: edited, left as it is; the
# rest is reverted and revert exits 0 (it used to say "refused, nothing was
# changed", exit 2, after changing the tree).
fresh
ht --root "$TMP/g" $G apply >/dev/null
printf 'x\0y\n' >>"$TMP/g/etc/sysctl.d/90-hosttune.conf"
ht --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
expect_eq "NUL in an applied file: revert exits 0" 0 $?
expect_contains "NUL in an applied file: left, and says why" \
	"left /etc/sysctl.d/90-hosttune.conf: edited since hosttune wrote it (it holds a NUL byte now)" \
	"$(cat "$TMP/out")"
expect_eq "NUL in an applied file: the state file is gone" no \
	"$([ -e "$TMP/g/var/lib/hosttune/state" ] && echo yes || echo no)"
ht --root "$TMP/g" $G plan >/dev/null 2>"$TMP/err"
expect_eq "NUL in a target file: plan exits 2 (in the way)" 2 $?

# A lost report: exit 5 only when apply changed the host; exit 3 when not.
fresh
ht --root "$TMP/g" $G apply >/dev/full 2>"$TMP/err"
expect_eq "report lost after a change: exit 5" 5 $?
ht --root "$TMP/g" $G apply >/dev/full 2>"$TMP/err"
expect_eq "report lost, nothing changed: exit 3" 3 $?
ht --root "$TMP/g" revert >/dev/full 2>"$TMP/err"
expect_eq "revert's report lost: exit 5" 5 $?
ht --root "$TMP/g" revert >/dev/full 2>"$TMP/err"
expect_eq "nothing to revert, stdout full: exit 3 (nothing changed, the report lost)" 3 $?

if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v sysctl >/dev/null &&
	[ -e /proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait ]; then
	# Only the per-netns key, in a private network namespace: never nf_conntrack_max.
	fresh
	ht --root "$TMP/g" $G --only conntrack.time_wait --persist-only apply >/dev/null
	out=$(unshare -n sysctl -p "$TMP/g/etc/sysctl.d/90-hosttune.conf" 2>&1)
	expect_eq "sysctl -p in a netns applies the file" \
		"net.netfilter.nf_conntrack_tcp_timeout_time_wait = 30" "$out"
else
	echo "# SKIP sysctl -p: needs root, unshare, sysctl and nf_conntrack"
fi

# ---- revert restores only the live values still at what apply wrote ----
# apply sets nf_conntrack_max 4096 -> 65536 (garage profile at 570/s);
# then an admin raises it to 1048576 by hand: revert leaves theirs and says
# so; hashsize, still at hosttune's value, goes back to 4096. A live value
# already back at its old value is not written again.
fresh
ht --root "$TMP/g" $G apply >/dev/null
expect_eq "apply wrote max" 65536 "$(cat "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max")"
echo 1048576 >"$TMP/g/proc/sys/net/netfilter/nf_conntrack_max"
ht --root "$TMP/g" revert >"$TMP/revert.out"
expect_eq "revert after a hand change: exit 0" 0 $?
expect_eq "revert leaves the admin's value" 1048576 "$(cat "$TMP/g/proc/sys/net/netfilter/nf_conntrack_max")"
expect_contains "revert says so" \
	"left net.netfilter.nf_conntrack_max at 1048576: changed since hosttune set 65536 (it was 4096 before)" \
	"$(cat "$TMP/revert.out")"
expect_eq "revert restores hashsize, still at hosttune's value" 4096 \
	"$(cat "$TMP/g/sys/module/nf_conntrack/parameters/hashsize")"
fresh
ht --root "$TMP/g" $G apply >/dev/null
echo 4096 >"$TMP/g/proc/sys/net/netfilter/nf_conntrack_max"
ht --root "$TMP/g" revert >"$TMP/revert.out"
expect_contains "a value already back: said, not written" "net.netfilter.nf_conntrack_max is 4096 already" \
	"$(cat "$TMP/revert.out")"

# ---- a state revert could not read is refused up front ----
# A foreign file of 1,040,000 bytes taken over with --force would be kept in
# the state: over the 1 MiB revert reads. apply refuses (exit 2) and the
# tree is as it was.
fresh
mkdir -p "$TMP/g/etc/sysctl.d"
i=0
while [ $i -lt 10400 ]; do printf '# %097d\n' 0; i=$((i + 1)); done >"$TMP/g/etc/sysctl.d/90-hosttune.conf"
expect_eq "the foreign file: 1,040,000 bytes" 1040000 "$(wc -c <"$TMP/g/etc/sysctl.d/90-hosttune.conf")"
sums >"$TMP/before-big.sums"
ht --root "$TMP/g" $G --force apply >"$TMP/out" 2>"$TMP/err"
expect_eq "a state over 1 MiB: apply refused, exit 2" 2 $?
expect_contains "a state over 1 MiB: says why" "over the 1 MiB revert reads" "$(cat "$TMP/err")"
sums >"$TMP/after-big.sums"
if cmp -s "$TMP/before-big.sums" "$TMP/after-big.sums"; then ok "a state over 1 MiB: nothing changed"
else not_ok "a state over 1 MiB: nothing changed" "$(diff "$TMP/before-big.sums" "$TMP/after-big.sums" | head)"; fi

finish
