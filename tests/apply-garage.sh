#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# plan, apply and revert on a copy of the Garage VM's --root tree
# (tests/fixtures/garage-vm/root): the exact dry-run diff, the files and
# modes apply writes, a second apply that changes nothing, a revert that
# restores the tree byte for byte, rollback when a live write fails, files
# hosttune did not write, and the emitted files read by the real tools.
. "$(dirname "$0")/lib.sh"

G="--profile garage --set workload.conn_rate=570"
fresh() {
	rm -rf "$TMP/g"
	cp -a "$FIXTURES/garage-vm/root" "$TMP/g"
}
sums() {
	(cd "$TMP/g" && find . -type f -o -type l | LC_ALL=C sort | while read -r f; do
		if [ -L "$f" ]; then echo "link $f -> $(readlink "$f")"; else sha256sum "$f"; fi
	done)
}

# ---- plan: the exact diff and live table (golden file) ----
fresh
sums >"$TMP/before.sums"
ht --root "$TMP/g" $G plan >"$TMP/plan.out"
expect_eq "plan exits 0" 0 $?
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
expect_eq "second apply: every file unchanged" unchanged \
	"$(jq -r '[.files[].action] | unique | join(",")' "$TMP/apply2.json")"

# ---- revert restores the tree byte for byte ----
ht --root "$TMP/g" revert >"$TMP/revert.out"
expect_eq "revert exits 0" 0 $?
sums >"$TMP/after-revert.sums"
if cmp -s "$TMP/before.sums" "$TMP/after-revert.sums"; then ok "revert restores every file"
else not_ok "revert restores every file" "$(diff "$TMP/before.sums" "$TMP/after-revert.sums")"; fi
ht --root "$TMP/g" revert 2>"$TMP/err"
expect_eq "revert with nothing to revert: exit 2" 2 $?

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
	"nf_conntrack_max: Too many levels of symbolic links" "$(cat "$TMP/err")"
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

finish
