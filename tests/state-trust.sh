#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# What apply and revert take from a state file, on copies of the Garage VM's
# --root tree (tests/fixtures/garage-vm/root):
# - the tree and the machine it belongs to: a state copied from another tree,
#   or kept in a tree whose machine-id is another now, is refused; one that
#   records neither is taken as this tree's, with a note;
# - only what apply writes: live keys a rule sets, integer values, files of
#   hosttune's kinds with modes without setuid/setgid/sticky bits,
#   directories on the way to a file of the state, no NUL anywhere;
# - a state file of the user running hosttune that no one else may write.
# Each refusal is one line on stderr naming the state file and what is wrong,
# exit 2, and the tree as it was, the state file too.
# Then a --state path below the tree in directories apply made, and revert
# in a tree with no free inode (a tmpfs in a private mount namespace).
. "$(dirname "$0")/lib.sh"

G="--profile garage --no-measure"
S=var/lib/hosttune/state
ID_A=0123456789abcdef0123456789abcdef
ID_B=fedcba9876543210fedcba9876543210

# fresh [DIR]: DIR (default $TMP/g) a new copy of the fixture tree.
fresh() {
	rm -rf "${1:-$TMP/g}"
	cp -a "$FIXTURES/garage-vm/root" "${1:-$TMP/g}"
}
# sums [DIR]: every directory, file and symlink of DIR (default $TMP/g) with modes and hashes.
sums() {
	tree_sums "${1:-$TMP/g}"
}
# same_tree NAME DESCRIPTION [DIR]: DIR now is the tree saved as $TMP/NAME.sums
same_tree() {
	sums "${3:-$TMP/g}" >"$TMP/now.sums"
	if cmp -s "$TMP/$1.sums" "$TMP/now.sums"; then ok "$2"
	else not_ok "$2" "$(diff "$TMP/$1.sums" "$TMP/now.sums" | head -20)"; fi
}
# state_json FILTER: rewrites $TMP/g's state file with a jq filter (its mode and owner kept)
state_json() {
	jq "$1" "$TMP/g/$S" >"$TMP/state.new" && cat "$TMP/state.new" >"$TMP/g/$S"
}
# refused CMD WHAT TEXT [DIR]: CMD (revert, or apply) of DIR (default $TMP/g)
# is refused: exit 2, one line on stderr naming the state file and holding
# TEXT, and the tree (its state file too) as it was.
refused() {
	d=${4:-$TMP/g}
	sums "$d" >"$TMP/before-refused.sums"
	if [ "$1" = apply ]; then ht --root "$d" $G apply >"$TMP/out" 2>"$TMP/err"
	else ht --root "$d" revert >"$TMP/out" 2>"$TMP/err"; fi
	expect_eq "$2: $1 exits 2 with one line" "2 1" "$? $(wc -l <"$TMP/err")"
	expect_contains "$2: names the state file" \
		"hosttune: $1 refused, nothing was changed: $d/$S: " "$(cat "$TMP/err")"
	expect_contains "$2: says what is wrong" "$3" "$(cat "$TMP/err")"
	same_tree before-refused "$2: $1 changed nothing" "$d"
}

# ---- the state records its tree and machine ----
fresh
ht --root "$TMP/g" $G apply >/dev/null
expect_eq "apply exits 0" 0 $?
REAL_G=$(cd "$TMP/g" && pwd -P)
expect_eq "the state records the tree (canonical) and no machine-id (none in the tree)" \
	"$REAL_G null" "$(jq -r '"\(.root) \(.machine_id)"' "$TMP/g/$S")"
fresh
mkdir -p "$TMP/g/etc"
echo "$ID_A" >"$TMP/g/etc/machine-id"
sums >"$TMP/before-a.sums"
# Given as a relative path with a '.': recorded as the canonical one all the same.
(cd "$TMP" && ht --root ./g $G apply >/dev/null)
expect_eq "the state records the tree's machine-id" "$REAL_G $ID_A" \
	"$(jq -r '"\(.root) \(.machine_id)"' "$TMP/g/$S")"

# The same path, another machine-id now (the tree of another machine, or one
# whose identity changed): refused; with the machine-id back, it reverts.
echo "$ID_B" >"$TMP/g/etc/machine-id"
refused revert "machine-id changed" \
	"the state of --root $REAL_G (machine-id $ID_A), not of --root $REAL_G (machine-id $ID_B): revert it there"
echo "$ID_A" >"$TMP/g/etc/machine-id"
ht --root "$TMP/g" revert >/dev/null
expect_eq "machine-id as recorded: revert exits 0" 0 $?
same_tree before-a "machine-id as recorded: the tree as before apply"

# A state file copied into another tree: h's admin set nf_conntrack_max to
# the value apply wrote in g and made an (empty) etc/modprobe.d of their own.
# Reverting g's state there would lower h's value and remove h's directory.
fresh
ht --root "$TMP/g" $G apply >/dev/null
fresh "$TMP/h"
jq -r '.live[] | select(.key == "net.netfilter.nf_conntrack_max") | .written' "$TMP/g/$S" \
	>"$TMP/h/proc/sys/net/netfilter/nf_conntrack_max"
mkdir -p "$TMP/h/etc/modprobe.d" "$TMP/h/var/lib/hosttune"
cp -p "$TMP/g/$S" "$TMP/h/$S"
REAL_H=$(cd "$TMP/h" && pwd -P)
refused revert "a state copied from another tree" \
	"the state of --root $REAL_G (machine-id none), not of --root $REAL_H (machine-id none): revert it there, or remove it to keep this tree as it is" \
	"$TMP/h"
refused apply "apply over a state copied from another tree" "the state of --root $REAL_G" "$TMP/h"
expect_eq "the copy's tree keeps its value" \
	"$(jq -r '.live[] | select(.key == "net.netfilter.nf_conntrack_max") | .written' "$TMP/g/$S")" \
	"$(cat "$TMP/h/proc/sys/net/netfilter/nf_conntrack_max")"
# audit counts drops since the last apply from the state's counters: not from
# another tree's.
expect_eq "audit: the drop counters at apply, from the tree's own state" 2 \
	"$(ht --root "$TMP/g" --no-measure facts | grep -c '_at_apply = ')"
expect_eq "audit: none from a state copied from another tree" 0 \
	"$(ht --root "$TMP/h" --no-measure facts | grep -c '_at_apply = ')"

# A state that records neither (written before hosttune recorded them): taken
# as this tree's, and revert says so.
fresh
sums >"$TMP/before.sums"
ht --root "$TMP/g" $G apply >/dev/null
state_json 'del(.root, .machine_id)'
ht --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
expect_eq "a state without owner: revert exits 0" 0 $?
expect_contains "a state without owner: revert says it takes it as this tree's" \
	"note: $TMP/g/$S records no tree or machine-id: taken as the state of --root $REAL_G (machine-id none)" \
	"$(cat "$TMP/out")"
same_tree before "a state without owner: the tree as before apply"
# One of the two alone is no state apply writes.
ht --root "$TMP/g" $G apply >/dev/null
state_json 'del(.machine_id)'
refused revert "a state with a tree but no machine-id" '"machine_id" is missing'
state_json ".machine_id = null | .root = 7"
refused revert "a tree that is not a string" '"root" is not a path'
ht --root "$TMP/g" revert >/dev/null 2>&1 || true

# ---- only what apply writes ----
fresh
mkdir -p "$TMP/g/proc/sys/kernel"
echo core >"$TMP/g/proc/sys/kernel/core_pattern"
echo 0 >"$TMP/g/proc/sys/kernel/sysrq"
sums >"$TMP/before.sums"
ht --root "$TMP/g" $G apply >/dev/null
cp -p "$TMP/g/$S" "$TMP/state.good"
good() { cp -p "$TMP/state.good" "$TMP/g/$S"; }
# kernel.core_pattern is no key a rule sets; nor kernel.sysrq (an integer).
state_json '.live += [{"key": "kernel.core_pattern", "kind": "path",
	"path": "/proc/sys/kernel/core_pattern", "ifname": null, "channel": null,
	"old": "|/tmp/evil %p", "written": "core"}]'
refused revert "kernel.core_pattern" "live entry 4: no rule sets kernel.core_pattern"
expect_eq "kernel.core_pattern: as it was" core "$(cat "$TMP/g/proc/sys/kernel/core_pattern")"
# apply reads the state only when it has something to change.
echo 4096 >"$TMP/g/proc/sys/net/netfilter/nf_conntrack_max"
refused apply "apply over a state with kernel.core_pattern" "live entry 4: no rule sets kernel.core_pattern"
good
state_json '.live += [{"key": "kernel.sysrq", "kind": "path", "path": "/proc/sys/kernel/sysrq",
	"ifname": null, "channel": null, "old": "1", "written": "0"}]'
refused revert "kernel.sysrq" "live entry 4: no rule sets kernel.sysrq"
# A key a rule sets, with a value that is no integer.
good
state_json '(.live[] | select(.key == "net.netfilter.nf_conntrack_max") | .old) = "4096 |/tmp/evil"'
refused revert "a value that is no integer" '"old" is not an integer'
good
state_json '.live[0].written = "1e9"'
refused revert "a written value that is no integer" '"written" is not an integer'
# A file mode with setuid and setgid bits (06777), for a file revert would write.
good
state_json '.files[0].content = "x\n" | .files[0].mode = 3583'
refused revert "mode 06777" '"mode" 06777 has setuid, setgid or sticky bits'
good
state_json '.files[0].content = "x\n" | .files[0].mode = 512'
refused revert "mode 01000 (sticky)" '"mode" 01000 has setuid, setgid or sticky bits'
# apply takes over no file with such bits (revert would give them back).
fresh "$TMP/m"
mkdir -p "$TMP/m/etc/modprobe.d"
printf 'options nf_conntrack hashsize=1024\n' >"$TMP/m/etc/modprobe.d/hosttune.conf"
chmod 4644 "$TMP/m/etc/modprobe.d/hosttune.conf"
sums "$TMP/m" >"$TMP/before-m.sums"
ht --root "$TMP/m" $G --force apply >/dev/null 2>"$TMP/err"
expect_eq "a file of mode 04644 to take over: apply refused (exit 2), says why" \
	"2 hosttune: apply refused, nothing was changed: $TMP/m/etc/modprobe.d/hosttune.conf has mode 4644: hosttune replaces no file with setuid, setgid or sticky bits (revert would give them back)" \
	"$? $(cat "$TMP/err")"
same_tree before-m "a file of mode 04644 to take over: the tree as it was" "$TMP/m"
# A NUL in a string: json-c would cut the content there.
good
state_json '.files[0].content = "net.core.somaxconn = 1\n\u0000# and more\n"'
refused revert "a NUL in a file's content" 'holds a NUL character (\u0000)'
good
state_json '.live[0].key = "module.nf_conntrack.hashsize\u0000x"'
refused revert "a NUL in a live key" 'holds a NUL character (\u0000)'
good
state_json '. + {"pro\u0000file": "garage"}'
refused revert "a NUL in a member's name" 'holds a NUL character (\u0000)'
# A directory no file of the state is in: an admin's empty UNIT.d made since
# apply, /etc/systemd. revert would remove them as its own.
good
mkdir -p "$TMP/g/etc/systemd/system/ssh.service.d"
state_json '.created_dirs += ["/etc/systemd/system/ssh.service.d"]'
refused revert "a UNIT.d of no file of the state" \
	"created_dirs entry 8: /etc/systemd/system/ssh.service.d holds no file of this state"
good
state_json '.created_dirs += ["/etc/systemd"]'
refused revert "a directory above no file of the state" \
	"created_dirs entry 8: /etc/systemd holds no file of this state"
rm -r "$TMP/g/etc/systemd"
# The state file itself: writable by its group or by others, or another user's.
# Refused before anything, even what an interrupted run left is not removed.
good
chmod 0620 "$TMP/g/$S"
echo half >"$TMP/g/etc/sysctl.d/.90-hosttune.conf.hosttune-Ab12Cd"
refused revert "a state file its group may write" "writable by its group or by others"
rm "$TMP/g/etc/sysctl.d/.90-hosttune.conf.hosttune-Ab12Cd"
chmod 0602 "$TMP/g/$S"
refused revert "a state file others may write" "writable by its group or by others"
chmod 0600 "$TMP/g/$S"
if [ "$(id -u)" = 0 ]; then
	chown 65534 "$TMP/g/$S"
	refused revert "another user's state file" "owned by uid 65534, not by uid 0 (the user running hosttune)"
	chown 0 "$TMP/g/$S"
else
	echo "# SKIP another user's state file: needs root to chown"
fi
# With all that undone, the state reverts: the tree as before apply.
good
ht --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
expect_eq "the good state reverts" "0 " "$? $(cat "$TMP/err")"
same_tree before "the good state: the tree as before apply"
# A site rule's key is taken when the rules revert reads have that rule.
RULES=$TMP/rules
cp -R "$HT_RULES_DIR" "$RULES"
printf '[site.sysrq]\ntitle = t\ntarget = sysctl kernel.sysrq\nvalue = 1\nseverity = "warning"\n' \
	>"$RULES/site.rules"
# kernel.sysrq is a security boundary: apply sets it with --force.
"$HOSTTUNE" --rules "$RULES" --root "$TMP/g" $G --only site.sysrq --live-only --force apply >/dev/null
expect_eq "a site rule's key: set" 1 "$(cat "$TMP/g/proc/sys/kernel/sysrq")"
ht --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
expect_eq "a site rule's key, reverted without that rule: refused (exit 2)" 2 $?
expect_contains "a site rule's key without that rule: says how to proceed" \
	"no rule sets kernel.sysrq (give the rules that set it with --rules)" "$(cat "$TMP/err")"
"$HOSTTUNE" --rules "$RULES" --root "$TMP/g" revert >/dev/null
expect_eq "a site rule's key, reverted with that rule: exit 0" 0 $?
same_tree before "a site rule's key: the tree as before apply"

# ---- a --state path below the tree in directories that did not exist ----
# apply creates x/ and x/y/ for it and records them; revert removes them when
# empty, and only those it created.
fresh
sums >"$TMP/before.sums"
(cd "$TMP" && ht --root g $G --state g/x/y/state apply >/dev/null)
expect_eq "--state g/x/y/state: apply exits 0" 0 $?
expect_eq "--state g/x/y/state: the directories it created are recorded" '["/x","/x/y"]' \
	"$(jq -c '[.created_dirs[] | select(startswith("/x"))]' "$TMP/g/x/y/state")"
(cd "$TMP" && ht --root g --state g/x/y/state revert >"$TMP/out")
expect_eq "--state g/x/y/state: revert exits 0" 0 $?
same_tree before "--state g/x/y/state: revert removes x/y/ and x/ (the tree as before apply)"
mkdir "$TMP/g/x"
sums >"$TMP/before.sums"
ht --root "$TMP/g" $G --state "$TMP/g/x/y/state" apply >/dev/null
ht --root "$TMP/g" --state "$TMP/g/x/y/state" revert >"$TMP/out"
expect_eq "x/ there before: revert exits 0" 0 $?
same_tree before "x/ there before: it stays, x/y/ goes"
rmdir "$TMP/g/x"
sums >"$TMP/before.sums"
ht --root "$TMP/g" $G --state "$TMP/g/x/y/state" apply >/dev/null
echo mine >"$TMP/g/x/mine"
ht --root "$TMP/g" --state "$TMP/g/x/y/state" revert >"$TMP/out"
expect_eq "a file of the admin's in x/: revert exits 0" 0 $?
expect_contains "a file of the admin's in x/: x/ left, and said" "left directory /x: not empty" \
	"$(cat "$TMP/out")"
expect_eq "a file of the admin's in x/: x/y/ gone, x/mine kept" "mine mine" \
	"$(ls "$TMP/g/x") $(cat "$TMP/g/x/mine")"
rm -r "$TMP/g/x"
same_tree before "a file of the admin's in x/: the rest as before apply"
# A failed apply (a live value it cannot write: a symlink) takes the state
# file's directories back with it.
NF=proc/sys/net/netfilter
mv "$TMP/g/$NF/nf_conntrack_max" "$TMP/g/$NF/max.real"
ln -s max.real "$TMP/g/$NF/nf_conntrack_max"
sums >"$TMP/before.sums"
ht --root "$TMP/g" $G --state "$TMP/g/x/y/state" apply >/dev/null 2>"$TMP/err"
expect_eq "a failed apply with --state g/x/y/state: exit 3" 3 $?
same_tree before "a failed apply with --state g/x/y/state: x/ and x/y/ gone again"
rm "$TMP/g/$NF/nf_conntrack_max"
mv "$TMP/g/$NF/max.real" "$TMP/g/$NF/nf_conntrack_max"
# What a run killed while it made x/ and x/y/ leaves (".x.hosttune-XXXXXX"
# with the rest inside) is the next run's to remove.
sums >"$TMP/before.sums"
mkdir -p "$TMP/g/.x.hosttune-Ab12Cd/y"
echo '{}' >"$TMP/g/.x.hosttune-Ab12Cd/y/state"
ht --root "$TMP/g" $G --state "$TMP/g/x/y/state" apply >/dev/null 2>"$TMP/err"
expect_eq "a killed run's x/: apply removes it, and says so" \
	"hosttune: removed $TMP/g/.x.hosttune-Ab12Cd, left by an interrupted hosttune" "$(cat "$TMP/err")"
ht --root "$TMP/g" --state "$TMP/g/x/y/state" revert >/dev/null
same_tree before "a killed run's x/: apply and revert leave the tree as before"

# ---- revert in a tree with no free inode ----
# A tmpfs of its own (private mount namespace); after apply every inode is
# taken by empty files. revert must get through without a new one: the
# tree's live values are plain files it rewrites, the state file and its
# directories go at last.
ino() {
	# ino NAME APPLY-OPTIONS [PREP]: in a new tmpfs, apply, run PREP (shell
	# text), fill every inode, revert. Leaves $TMP/NAME.{before,after}.sums,
	# .rc, .out, .err and .full (the exit status of one more touch: 1 when
	# no inode was left).
	unshare -m sh -c '
		T=$1 H=$2 R=$3 N=$4 A=$5 P=$6
		mkdir -p "$T/ino" && mount -t tmpfs -o size=4m,nr_inodes=400 none "$T/ino" || exit 99
		cp -a "$7" "$T/ino/g" && mkdir "$T/ino/fill" || exit 99
		(cd "$T/ino/g" && find . | LC_ALL=C sort | while read -r f; do
			if [ -d "$f" ]; then echo "dir $(stat -c %a "$f") $f"
			else echo "file $(stat -c %a "$f") $(sha256sum <"$f" | cut -d" " -f1) $f"; fi
		done) >"$T/$N.before.sums"
		"$H" --rules "$R" --root "$T/ino/g" --profile garage --no-measure $A apply >/dev/null || exit 99
		eval "$P"
		(cd "$T/ino/fill" && seq 1 1000 | xargs touch 2>/dev/null)
		touch "$T/ino/fill/one-more" 2>/dev/null
		echo $? >"$T/$N.full"
		"$H" --rules "$R" --root "$T/ino/g" revert >"$T/$N.out" 2>"$T/$N.err"
		echo $? >"$T/$N.rc"
		rm -r "$T/ino/fill"
		(cd "$T/ino/g" && find . | LC_ALL=C sort | while read -r f; do
			if [ -d "$f" ]; then echo "dir $(stat -c %a "$f") $f"
			else echo "file $(stat -c %a "$f") $(sha256sum <"$f" | cut -d" " -f1) $f"; fi
		done) >"$T/$N.after.sums"
		umount "$T/ino"
	' sh "$TMP" "$HOSTTUNE" "$HT_RULES_DIR" "$1" "$2" "${3:-}" "$FIXTURES/garage-vm/root"
}
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null && command -v seq >/dev/null; then
	# Files and live values: revert rewrites the values in place.
	ino full ""
	expect_eq "no free inode: every inode taken before revert" 1 "$(cat "$TMP/full.full")"
	expect_eq "no free inode: revert exits 0" "0 " "$(cat "$TMP/full.rc") $(cat "$TMP/full.err")"
	if cmp -s "$TMP/full.before.sums" "$TMP/full.after.sums"; then ok "no free inode: the tree as before apply"
	else not_ok "no free inode: the tree as before apply" "$(diff "$TMP/full.before.sums" "$TMP/full.after.sums" | head)"; fi
	# Live values only, put back by hand: all revert has to do is remove the
	# state file and the directories apply made for it.
	ino live --live-only 'for f in proc/sys/net/netfilter/nf_conntrack_max sys/module/nf_conntrack/parameters/hashsize; do echo 4096 >"$T/ino/g/$f"; done; echo 120 >"$T/ino/g/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait"'
	expect_eq "no free inode, values back by hand: every inode taken" 1 "$(cat "$TMP/live.full")"
	expect_eq "no free inode, values back by hand: revert exits 0" "0 " \
		"$(cat "$TMP/live.rc") $(cat "$TMP/live.err")"
	expect_contains "no free inode, values back by hand: the state's directories removed" \
		"removed directory /var" "$(cat "$TMP/live.out")"
	if cmp -s "$TMP/live.before.sums" "$TMP/live.after.sums"; then ok "no free inode, values back by hand: the tree as before apply"
	else not_ok "no free inode, values back by hand: the tree as before apply" "$(diff "$TMP/live.before.sums" "$TMP/live.after.sums" | head)"; fi
else
	echo "# SKIP no free inode: needs root, unshare -m (a tmpfs of its own) and seq"
fi

finish
