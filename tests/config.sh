#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The configuration file, SYSCONFDIR/hosttune/hosttune.conf and its drop-ins
# in hosttune.conf.d/, read below --root from the tree: a tree whose
# configuration says "profile = garage" audits as --profile garage does; the
# command line wins over the file; drop-ins in file-name order, the last
# assignment winning and an empty one taking an earlier one back; [set] as
# --set; fail-on; a link inside the tree resolved inside it; --config FILE and
# --no-config; every command reads it (a bad line stops each with exit 2);
# each kind of bad line with its FILE:LINE:COL message.
. "$(dirname "$0")/lib.sh"

# The configured sysconfdir (make check exports it; by hand: from --help).
: "${HT_SYSCONFDIR:=$("$HOSTTUNE" --help | sed -n 's|.* \(/.*\)/hosttune/hosttune.conf and its drop-ins|\1|p')}"
G=$TMP/g
cp -a "$FIXTURES/garage-vm/root" "$G"
ETC=$G$HT_SYSCONFDIR/hosttune
CONF=$ETC/hosttune.conf
mkdir -p "$ETC/hosttune.conf.d"
U=" (hosttune --help lists the usage)"

# run ARGS...: hosttune with the shipped rules on the tree; $rc, $out, $err
run() {
	run_any --no-measure "$@"
}
# run_any ARGS...: the same without --no-measure (for the commands that measure nothing)
run_any() {
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$G" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}
summary() {
	printf '%s\n' "$out" | tail -n 1
}

# ---- without a configuration: the default profile ----
# garage-vm with the default profile: conntrack.max and conntrack.drops
# critical, conntrack.buckets a warning (audit-garage.sh has the arithmetic).
run audit
expect_eq "no configuration: profile default" "hosttune audit of root $G, profile default" \
	"$(printf '%s\n' "$out" | head -n 1)"
expect_eq "no configuration: the default verdict" \
	"1 2 critical, 1 warning, 0 info, 2 ok, 3 not applicable" "$rc $(summary)"

# ---- profile = garage: the same audit as --profile garage ----
cat >"$CONF" <<'EOF'
# the site's settings
[hosttune]
profile = garage
EOF
run --format json audit
cp "$TMP/out" "$TMP/conf.json"
run --no-config --profile garage --format json audit
cp "$TMP/out" "$TMP/cli.json"
if cmp -s "$TMP/conf.json" "$TMP/cli.json"; then ok "profile = garage: the JSON audit is --profile garage's, byte for byte"
else not_ok "profile = garage: the JSON audit is --profile garage's" "$(diff "$TMP/conf.json" "$TMP/cli.json" | head -20)"; fi
run audit
# garage adds conntrack.time_wait and garage.ram_buffer (warnings), garage.unit_nofile and
# garage.metadata_snapshots (info): 2 critical, 1 + 2 = 3 warnings, 2 info.
expect_eq "profile = garage: the text audit" \
	"1 hosttune audit of root $G, profile garage|2 critical, 3 warning, 2 info, 4 ok, 10 not applicable" \
	"$rc $(printf '%s\n' "$out" | head -n 1)|$(summary)"
run --no-config --profile garage audit
cp "$TMP/out" "$TMP/cli.txt"
run audit
if [ "$out" = "$(cat "$TMP/cli.txt")" ]; then ok "profile = garage: the text audit is --profile garage's"
else not_ok "profile = garage: the text audit is --profile garage's"; fi

# ---- the command line wins ----
run --profile default audit
expect_eq "--profile default wins over the file" "profile default|2 critical, 1 warning, 0 info, 2 ok, 3 not applicable" \
	"$(printf '%s\n' "$out" | head -n 1 | sed 's/.*, //')|$(summary)"

# ---- plan, verify, facts, watch take the profile too ----
run plan
expect_contains "plan writes the configured profile into the file header" \
	"+# This file is managed by hosttune (profile garage)." "$out"
# facts with a profile collects the Garage pre-flight: garage.* facts beyond
# the one (garage.config) every collection has.
run facts
n_conf=$(printf '%s\n' "$out" | grep -c '^garage\.')
run --no-config facts
n_none=$(printf '%s\n' "$out" | grep -c '^garage\.')
if [ "$n_conf" -gt "$n_none" ]; then ok "facts collects the configured profile's Garage facts ($n_conf > $n_none)"
else not_ok "facts collects the configured profile's Garage facts" "$n_conf with, $n_none without"; fi

# ---- [set] and fail-on; the command line's --set after the file's ----
cat >"$CONF" <<'EOF'
[hosttune]
profile = garage
fail-on = critical
[set]
workload.conn_rate = 570
workload.burst = 3
EOF
run --format json audit
expect_eq "[set]: conn_rate 570, burst 3" "570 3" \
	"$(jget "$TMP/out" '"\(.workload["workload.conn_rate"]) \(.workload["workload.burst"])"')"
run --set workload.conn_rate=1000 --format json audit
expect_eq "--set wins over [set]; the file's other value stays" "1000 3" \
	"$(jget "$TMP/out" '"\(.workload["workload.conn_rate"]) \(.workload["workload.burst"])"')"
# fail-on: the facts of registry-vm have two warnings and nothing worse
# (19 n/a: 8, the 6 network namespace rules and 5 proxy rules of an older
# facts file without netns.list or proxy.list).
REG=$FIXTURES/registry-vm/host.facts
printf '[hosttune]\nfail-on = critical\n' >"$TMP/fail.conf"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --config "$TMP/fail.conf" --facts "$REG" audit >"$TMP/out" 2>&1
expect_eq "fail-on = critical: two warnings exit 0" "0 0 critical, 2 warning, 0 info, 0 ok, 19 not applicable" \
	"$? $(tail -n 1 "$TMP/out")"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --config "$TMP/fail.conf" --facts "$REG" --fail-on warning audit >/dev/null 2>&1
expect_eq "--fail-on warning wins over the file: exit 1" 1 $?
"$HOSTTUNE" --rules "$HT_RULES_DIR" --config "$TMP/fail.conf" --facts "$REG" --format prometheus audit >/dev/null 2>&1
expect_eq "audit --format prometheus (the metrics unit) takes fail-on: exit 0" 0 $?

# ---- drop-ins: file-name order, the last assignment wins, an empty one takes it back ----
printf '[hosttune]\nprofile = garage\n' >"$CONF"
printf '[hosttune]\nprofile = minio\n' >"$ETC/hosttune.conf.d/20-b.conf"
printf '[hosttune]\nprofile = registry\n' >"$ETC/hosttune.conf.d/10-a.conf"
printf '[hosttune]\nprofile = nonsense.\n' >"$ETC/hosttune.conf.d/README"
run --format json audit
expect_eq "drop-ins: 20-b.conf after 10-a.conf (README is not read)" minio "$(jget "$TMP/out" .profile)"
printf '[hosttune]\nprofile =\n' >"$ETC/hosttune.conf.d/30-c.conf"
run --format json audit
expect_eq "an empty assignment in a later drop-in takes the profile back" default \
	"$(jget "$TMP/out" .profile)"
rm -f "$ETC/hosttune.conf.d/30-c.conf"
# A link to /dev/null masks nothing here but reads as empty (as systemd's drop-ins).
ln -s /dev/null "$ETC/hosttune.conf.d/40-mask.conf"
run --format json audit
expect_eq "a /dev/null drop-in reads as empty" "minio|" "$(jget "$TMP/out" .profile)|$err"
rm -f "$ETC"/hosttune.conf.d/*

# ---- below --root, the tree's file, links resolved inside the tree ----
mkdir -p "$G/srv"
printf '[hosttune]\nprofile = registry\n' >"$G/srv/site.conf"
rm -f "$CONF"
ln -s /srv/site.conf "$CONF"
run --format json audit
expect_eq "hosttune.conf -> /srv/site.conf: the tree's /srv/site.conf" registry "$(jget "$TMP/out" .profile)"
rm -f "$CONF"
printf '[hosttune]\nprofile = garage\n' >"$CONF"
if command -v strace >/dev/null 2>&1; then
	strace -f -e trace=open,openat,openat2 -o "$TMP/strace" \
		"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$G" --no-measure audit >/dev/null 2>&1
	# The tree's is opened from the tree's top (openat2 RESOLVE_IN_ROOT from its
	# descriptor, or a walk from it), never from the working directory or "/".
	if grep -E "open(at)?\((AT_FDCWD, )?\"$HT_SYSCONFDIR/hosttune/hosttune.conf" "$TMP/strace" >"$TMP/host-opens"; then
		not_ok "--root opens no hosttune.conf of the host" "$(cat "$TMP/host-opens")"
	else ok "--root opens no hosttune.conf of the host"; fi
	expect_contains "--root opens the tree's hosttune.conf" "hosttune.conf" "$(cat "$TMP/strace")"
fi

# ---- --config FILE and --no-config ----
printf '[hosttune]\nprofile = minio\n' >"$TMP/explicit.conf"
run --config "$TMP/explicit.conf" --format json audit
expect_eq "--config FILE: that file, not the tree's" minio "$(jget "$TMP/out" .profile)"
run --no-config --format json audit
expect_eq "--no-config: none" default "$(jget "$TMP/out" .profile)"
run --config "$TMP/none.conf" audit
expect_eq "--config of a missing file: exit 2" "2 hosttune: $TMP/none.conf: No such file or directory" "$rc $err"
run --config "$TMP/explicit.conf" --no-config audit
expect_eq "--config and --no-config exclude each other" \
	"2 hosttune: --config and --no-config exclude each other$U" "$rc $err"
run --config "$TMP" audit
expect_eq "--config of a directory: exit 2" "2 hosttune: $TMP: not a regular file" "$rc $err"

# ---- the shipped hosttune.conf: every setting commented out, and each valid ----
SHIPPED=$HT_TESTS_DIR/../conf/hosttune.conf
run --no-config --format json audit
cp "$TMP/out" "$TMP/none.json"
run --config "$SHIPPED" --format json audit
if cmp -s "$TMP/out" "$TMP/none.json" && [ -z "$err" ]; then ok "the shipped hosttune.conf changes nothing"
else not_ok "the shipped hosttune.conf changes nothing" "$err"; fi
# Its settings are the lines "#key = value" (explanations are "# text").
sed 's/^#\([a-z]\)/\1/' "$SHIPPED" >"$TMP/uncommented.conf"
# profile, fail-on, facts-max-age, workload.conn_rate, workload.mem_budget,
# nic.queues_hypervisor[eth0], cpu.aes, and the [allow] example site.ptrace_scope
expect_eq "the shipped file has 8 settings, each commented out" 8 \
	"$(grep -c '^[a-z]' "$TMP/uncommented.conf")"
run --config "$TMP/uncommented.conf" --format json audit
# profile garage, fail-on warning, conn_rate 570, mem_budget 0.05, and the two
# waivers: rules that exist (no warning), which this tree has no finding of.
expect_eq "each setting of the shipped file is valid" "garage 570 0.05|" \
	"$(jget "$TMP/out" '"\(.profile) \(.workload["workload.conn_rate"]) \(.workload["workload.mem_budget"])"')|$err"

# ---- every command reads it: a bad line stops each, exit 2, nothing on stdout ----
printf '[hosttune]\nprofile garage\n' >"$CONF"
BAD="hosttune: $CONF:2:1: expected '[section]', 'key = value' or a comment"
for c in audit facts rules plan verify watch revert "explain conntrack.max" "--dry-run apply"; do
	# shellcheck disable=SC2086
	run_any $c
	expect_eq "$c reads the configuration: exit 2 on a bad line" "2 $BAD|" "$rc $err|$out"
done
run --format json audit
expect_eq "the JSON error object names the file and line" "$CONF 2" \
	"$(jget "$TMP/out" '"\(.error.file) \(.error.line)"')"
run --no-config audit
expect_eq "--no-config reads none: the bad file does not matter" 1 "$rc"

# ---- each bad line: FILE:LINE:COL and what was expected ----
# bad TEXT MESSAGE: the configuration TEXT (printf format) is refused with MESSAGE
bad() {
	printf "$1" >"$CONF"
	run audit
	expect_eq "bad line: $(printf "$1" | tail -n 1)" "2 hosttune: $CONF:$2" "$rc $err"
}
bad 'profile = garage\n' "1:1: expected a section ([hosttune], [set], [waive] or [allow]) before the first key"
bad '[hosttune]\nprofil = garage\n' "2:1: unknown key 'profil' in [hosttune] (expected profile, fail-on or facts-max-age)"
bad '[main]\nprofile = garage\n' "1:2: unknown section '[main]' (expected [hosttune], [set], [waive] or [allow])"
bad '[hosttune\n' "1:1: expected ']' to close the section name"
bad '[hosttune]\nfail-on = ok\n' "2:11: fail-on: expected info, warning or critical, found 'ok'"
bad '[hosttune]\nprofile = ../etc\n' "2:11: profile: expected a profile name (letters, digits and '_'), found '../etc'"
bad '[hosttune]\nprofile = garage\n  fail-on = info\n' \
	"3:3: an indented line continues only a [set] value or a reason of [waive] or [allow]; start a key at the beginning of the line"
bad '[set]\n9x = 1\n' "2:1: expected a variable name such as workload.conn_rate, found '9x'"
bad '[waive]\nnic.queues[eth0 = one queue\n' "2:11: expected '[INSTANCE]' right before '=' (an interface, port, process or directory name)"
# An empty reason is no waiver (it takes back an earlier file's): nothing to refuse.
printf '[waive]\nnic.queues =\n' >"$CONF"
run audit
expect_eq "an empty waiver is no error: the audit runs" "1 " "$rc $err"
bad '[waive]\nnic.queues\n' "2:1: expected '[section]', 'key = value' or a comment"
# Values the rules refuse, at the line that set them.
bad '[hosttune]\nprofile = nope\n' "2:11: profile 'nope' not found (looked for profiles/nope.profile in $HT_RULES_DIR); the profiles are default, garage, minio, registry"
bad '[set]\nworkload.burst = 0\n' \
	"2:18: [set] workload.burst=0: expected a number >= 1 and <= 1000, found 0"
# facts takes --set: a [set] value the rules refuse stops it too, not silently dropped.
run facts
expect_eq "facts: the refused [set] value, exit 2" \
	"2 hosttune: $CONF:2:18: [set] workload.burst=0: expected a number >= 1 and <= 1000, found 0" \
	"$rc $err"
long=$(printf '%0300d' 0)
bad "[set]\nworkload.conn_rate = $long\n" "2:199: line longer than 198 characters; continue a reason on an indented line"

# A tree with the package's /etc/hosttune/hosttune.conf, audited by a build
# with another sysconfdir: the file that is not read is named.
if [ "$HT_SYSCONFDIR" != /etc ]; then
	mkdir -p "$TMP/pkgtree/etc/hosttune"
	cp -a "$FIXTURES/garage-vm/root/." "$TMP/pkgtree/"
	printf '[hosttune]\nprofile = garage\n' >"$TMP/pkgtree/etc/hosttune/hosttune.conf"
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/pkgtree" audit >/dev/null 2>"$TMP/pkg.err"
	expect_contains "a tree's /etc/hosttune/hosttune.conf under another sysconfdir: said" \
		"$TMP/pkgtree/etc/hosttune/hosttune.conf is not read: this hosttune reads $HT_SYSCONFDIR/hosttune/hosttune.conf" \
		"$(cat "$TMP/pkg.err")"
fi

finish
