#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Run as root, hosttune trusts configuration, rules and profiles only when
# the file and every directory above it are root's (or, for a path given on
# the command line, the invoking user's: SUDO_UID under sudo) and writable
# by no one else, a sticky directory such as /tmp excepted: a rules.d owned
# by nobody with mode 0777 and a planted rule, a hosttune.conf.d drop-in
# written by nobody that waives a critical finding, a group-writable --rules
# DIR, a profile owned by nobody are each refused with exit 2 naming the
# path; a /dev/null mask stays; a run as another user checks nothing.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP the checks apply to a run as root"
	exit 77
fi
: "${HT_SYSCONFDIR:=$("$HOSTTUNE" --help | sed -n 's|.* \(/.*\)/hosttune/hosttune.conf and its drop-ins|\1|p')}"
NOBODY=65534

# run ARGS...: hosttune; $rc, $err
run() {
	"$HOSTTUNE" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	err=$(cat "$TMP/err")
}

# A tree of the Garage VM; its own rules.d and hosttune.conf.d.
G=$TMP/g
cp -a "$FIXTURES/garage-vm/root" "$G"
ETC=$G$HT_SYSCONFDIR/hosttune
mkdir -p "$ETC/rules.d" "$ETC/hosttune.conf.d"
run --root "$G" --rules "$HT_RULES_DIR" --no-measure audit
base=$rc
expect_eq "the tree as copied: audited" 1 "$([ "$base" -le 1 ] && echo 1)"

# ---- rules.d of another user, writable by all, with a planted rule ----
printf '[site.symlinks]\ntitle = planted\ntarget = sysctl fs.protected_symlinks\nvalue = 0\n' \
	>"$ETC/rules.d/zz-planted.rules"
chown -R "$NOBODY" "$ETC/rules.d"
chmod 0777 "$ETC/rules.d"
run --root "$G" --no-measure plan
expect_eq "rules.d owned by nobody, mode 0777: refused, named" \
	"2 hosttune: not trusted (run as root): $ETC/rules.d is owned by UID $NOBODY, not root" \
	"$rc $err"
chown -R 0 "$ETC/rules.d"
run --root "$G" --no-measure plan
expect_eq "root's, but writable by others: refused" \
	"2 hosttune: not trusted (run as root): $ETC/rules.d is writable by others (mode 0777)" \
	"$rc $err"
chmod 0755 "$ETC/rules.d"
chown "$NOBODY" "$ETC/rules.d/zz-planted.rules"
run --root "$G" --no-measure plan
expect_eq "the directory root's, the planted file nobody's: refused, the file named" \
	"2 hosttune: not trusted (run as root): $ETC/rules.d/zz-planted.rules is owned by UID $NOBODY, not root" \
	"$rc $err"
rm "$ETC/rules.d/zz-planted.rules"
# The shipped rules in the tree's rules.d (none installed here), nic.rules masked.
cp -R "$HT_RULES_DIR"/. "$ETC/rules.d"
rm "$ETC/rules.d/nic.rules"
ln -s /dev/null "$ETC/rules.d/nic.rules"
run --root "$G" --no-measure audit
expect_eq "a /dev/null mask in a trusted rules.d: read" "$base " "$rc $err"
rm -r "$ETC/rules.d"
mkdir "$ETC/rules.d"

# ---- a drop-in written by nobody waives a finding ----
printf '[waive]\nconntrack.max = planted\n' >"$ETC/hosttune.conf.d/50-planted.conf"
chown "$NOBODY" "$ETC/hosttune.conf.d/50-planted.conf"
run --root "$G" --rules "$HT_RULES_DIR" --no-measure audit
expect_eq "a drop-in owned by nobody: refused, named" \
	"2 hosttune: not trusted (run as root): $ETC/hosttune.conf.d/50-planted.conf is owned by UID $NOBODY, not root" \
	"$rc $err"
chown 0 "$ETC/hosttune.conf.d/50-planted.conf"
chmod 0664 "$ETC/hosttune.conf.d/50-planted.conf"
run --root "$G" --rules "$HT_RULES_DIR" --no-measure audit
expect_eq "root's but group-writable: refused" \
	"2 hosttune: not trusted (run as root): $ETC/hosttune.conf.d/50-planted.conf is writable by its group (mode 0664)" \
	"$rc $err"
rm "$ETC/hosttune.conf.d/50-planted.conf"

# ---- --rules DIR and --config FILE: the invoking user's may be trusted ----
R=$TMP/r
cp -R "$HT_RULES_DIR" "$R"
chown -R "$NOBODY" "$R"
run --root "$G" --rules "$R" --no-measure audit
expect_eq "--rules DIR of another user than the invoking one: refused" \
	"2 hosttune: not trusted (run as root): $R is owned by UID $NOBODY, not root" \
	"$rc $err"
SUDO_UID=$NOBODY run --root "$G" --rules "$R" --no-measure audit
expect_eq "under sudo by that user (SUDO_UID): trusted" "$base " "$rc $err"
# sudo writes SUDO_UID as digits; " 65534" is not sudo's, and trusts nobody's files.
SUDO_UID=" $NOBODY" run --root "$G" --rules "$R" --no-measure audit
expect_eq "SUDO_UID with a leading blank: not taken" \
	"2 hosttune: not trusted (run as root): $R is owned by UID $NOBODY, not root" \
	"$rc $err"
chmod 0666 "$R/profiles/default.profile"
SUDO_UID=$NOBODY run --root "$G" --rules "$R" --no-measure audit
expect_eq "a profile writable by others: refused, even for its owner" \
	"2 hosttune: not trusted (run as root): $R/profiles/default.profile is writable by others (mode 0666)" \
	"$rc $err"
chmod 0644 "$R/profiles/default.profile"
printf '[hosttune]\nfail-on = critical\n' >"$TMP/site.conf"
chmod 0646 "$TMP/site.conf"
run --root "$G" --rules "$HT_RULES_DIR" --config "$TMP/site.conf" --no-measure audit
expect_eq "--config FILE writable by others: refused" \
	"2 hosttune: not trusted (run as root): $TMP/site.conf is writable by others (mode 0646)" \
	"$rc $err"

# ---- /tmp is sticky: its mode 1777 stays trusted ----
expect_eq "every test here runs below the sticky ${TMPDIR:-/tmp}" 1 \
	"$([ -k "${TMPDIR:-/tmp}" ] && echo 1)"

# ---- a run as another user trusts nothing more and checks nothing ----
if command -v setpriv >/dev/null; then
	chmod -R a+rX "$TMP"
	chmod 0777 "$R"
	setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups \
		"$HOSTTUNE" --root "$G" --rules "$R" rules >"$TMP/out" 2>"$TMP/err"
	expect_eq "as nobody: no check (nothing it reads steers root)" "0 " "$? $(cat "$TMP/err")"
else
	echo "# setpriv(1) missing: the run as another user is not tested"
fi

# ---- a site rule that changes a security boundary: --force or [allow] ----
# site.symlinks sets fs.protected_symlinks (Documentation/admin-guide/sysctl/
# fs.rst: the protection against symlink races in sticky directories) to 0.
B=$TMP/b
cp -a "$FIXTURES/garage-vm/root" "$B"
mkdir -p "$B/proc/sys/fs"
echo 1 >"$B/proc/sys/fs/protected_symlinks"
S=$TMP/site-rules
cp -R "$HT_RULES_DIR" "$S"
cat >"$S/site.rules" <<'RULE'
[site.symlinks]
title = symlinks followed in sticky directories
target = sysctl fs.protected_symlinks
when = available(fs.protected_symlinks)
value = 0
severity = fs.protected_symlinks != 0 ? "warning" : "ok"
explain = fs.protected_symlinks is {fs.protected_symlinks}.
RULE
line=$(grep -n '^\[site.symlinks\]' "$S/site.rules" | cut -d: -f1)
tree_sums "$B" >"$TMP/b.before"
run --root "$B" --rules "$S" --no-config --no-measure apply
expect_eq "apply: refused, the rule, its file and line named, nothing written" \
	"2 hosttune: rule site.symlinks ($S/site.rules:$line) sets fs.protected_symlinks, a security boundary of the kernel: apply changes it only with --force, or with 'site.symlinks = REASON' in the [allow] section of hosttune.conf|same" \
	"$rc $err|$(tree_sums "$B" | cmp -s - "$TMP/b.before" && echo same)"
run --root "$B" --rules "$S" --no-config --no-measure plan
expect_eq "plan: shows it, with a note on stderr (exit 1: changes)" \
	"1 hosttune: note: rule site.symlinks ($S/site.rules:$line) sets fs.protected_symlinks, a security boundary of the kernel: apply will change it only with --force, or with 'site.symlinks = REASON' in the [allow] section of hosttune.conf" \
	"$rc $err"
expect_contains "plan's diff has the line" "+fs.protected_symlinks = 0" "$(cat "$TMP/out")"
printf '[allow]\nsite.symlinks = the build farm needs it\n' >"$TMP/allow.conf"
run --root "$B" --rules "$S" --config "$TMP/allow.conf" --no-measure apply
expect_eq "allowed in [allow]: applied" "0 1" \
	"$rc $(grep -c '^fs.protected_symlinks = 0$' "$B/etc/sysctl.d/90-hosttune.conf")"
run --root "$B" --rules "$S" --no-config --no-measure revert
# [allow] names a rule: an instance is refused where it is written; a rule
# the rules lack, or one that sets no security boundary, is a warning.
printf '[allow]\nsite.symlinks[eth0] = no\n' >"$TMP/allow-inst.conf"
run --root "$B" --rules "$S" --config "$TMP/allow-inst.conf" --no-measure plan
expect_eq "[allow] RULE[INSTANCE]: refused, file:line:col" \
	"2 hosttune: $TMP/allow-inst.conf:2:14: expected RULE = REASON: [allow] takes a rule id without '[INSTANCE]'" \
	"$rc $err"
printf '[allow]\nsite.symlink = typo\nconntrack.max = not a boundary\n' >"$TMP/allow-typo.conf"
run --root "$B" --rules "$HT_RULES_DIR" --config "$TMP/allow-typo.conf" --no-measure plan
expect_contains "[allow] of an unknown rule: warned" \
	"warning: $TMP/allow-typo.conf:2:1: [allow] of 'site.symlink': the rules have no rule of that id" "$err"
expect_contains "[allow] of a rule that sets no boundary: warned" \
	"warning: $TMP/allow-typo.conf:3:1: [allow] of 'conntrack.max': that rule sets no security boundary" "$err"
cp -a "$FIXTURES/garage-vm/root/." "$B/" 2>/dev/null
run --root "$B" --rules "$S" --no-config --no-measure --force apply
expect_eq "with --force: applied" "0 1" \
	"$rc $(grep -c '^fs.protected_symlinks = 0$' "$B/etc/sysctl.d/90-hosttune.conf")"

finish
