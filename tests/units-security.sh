#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The shipped units' sandboxes (templates/*.service.in of the source tree,
# hosttune(8) SECURITY, "The shipped units"), each setting read from the unit
# file, so that the test follows the unit:
#  1. systemd-analyze security --offline rates the metrics unit 3.0 or less
#     and the first-boot unit 4.0 or less;
#  2. the metrics unit's capability bounding set and NoNewPrivileges
#     (setpriv), in a network namespace of its own (unshare -n), judge a
#     process of another user (nobody) as a root audit does: its open-file
#     row is 804 descriptors of 1024, and the unit's findings and textfile
#     (written as its ExecStart= writes it) judge every row a root audit
#     judges, the host's network namespace's too (entered with setns(2)),
#     and leave none of them not applicable; the control, the bounding set
#     of CAP_NET_ADMIN alone, leaves that process out;
#  3. apply as the first-boot unit runs it (its ExecStart= options), under
#     its capability bounding set, NoNewPrivileges and umask, in a private
#     mount namespace (unshare -m) where every mount is read-only but /proc,
#     /sys and /dev (ProtectSystem=strict) and the tree's ReadWritePaths= and
#     StateDirectory= are writable again, on a scratch --root tree (the
#     host's files are never written): the tree's etc is read-only to it,
#     and its file and live writes succeed with the same result as apply
#     without the sandbox; the control, one ReadWritePaths= directory left
#     out, makes apply fail and roll back.
# Needs root, systemd-analyze with --offline, setpriv, unshare, jq and the
# helper tests/listen-hold; skipped (exit 77) otherwise. Not emulated:
# ProtectHome=, PrivateTmp=, the system call filter, RestrictNamespaces=
# (they take away what the runs here never use).
. "${HT_TESTS_DIR:-$(dirname "$0")}/lib.sh"

HOLD=${HT_BUILD_TESTS_DIR:+$HT_BUILD_TESTS_DIR/listen-hold}
: "${HOLD:=$HT_TESTS_DIR/listen-hold}"
UNITS=$HT_TESTS_DIR/../templates

skip() {
	echo "# SKIP: $1"
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root (unshare, setpriv, another user's process)"
command -v systemd-analyze >/dev/null 2>&1 || skip "systemd-analyze is not installed"
systemd-analyze --help 2>/dev/null | grep -q -- '--offline' || skip "systemd-analyze has no --offline"
command -v setpriv >/dev/null 2>&1 || skip "setpriv is not installed"
command -v unshare >/dev/null 2>&1 || skip "unshare is not installed"
command -v jq >/dev/null 2>&1 || skip "jq is not installed"
command -v ip >/dev/null 2>&1 || skip "ip(8) is not installed"
[ -x "$HOLD" ] || skip "tests/listen-hold is not built"
unshare -m --propagation private true 2>/dev/null || skip "unshare -m refused"
unshare -n true 2>/dev/null || skip "unshare -n refused"

# The units as installed, with the built hosttune for @SBINDIR@/hosttune.
mkdir "$TMP/units"
for u in hosttune-firstboot hosttune-metrics; do
	sed "s|@SBINDIR@/hosttune |$HOSTTUNE |" "$UNITS/$u.service.in" >"$TMP/units/$u.service"
done
M=$TMP/units/hosttune-metrics.service
F=$TMP/units/hosttune-firstboot.service

# The helpers below, in a file that the scripts run in the namespaces source too.
cat >"$TMP/units-lib.sh" <<'EOT'
# values UNIT KEY: every value of KEY= in UNIT (all its lines), space-separated.
values() {
	sed -n "s/^$2=//p" "$1" | tr '\n' ' ' | sed 's/ *$//'
}
# bounding UNIT: its CapabilityBoundingSet= as setpriv's --bounding-set.
bounding() {
	printf '%s' "-all"
	for c in $(values "$1" CapabilityBoundingSet); do
		printf ',+%s' "$(printf '%s' "${c#CAP_}" | tr 'A-Z' 'a-z')"
	done
}
# confine UNIT COMMAND...: COMMAND with UNIT's capability bounding set, no
# inheritable or ambient capabilities, its NoNewPrivileges= and its UMask=.
confine() {
	cu=$1
	shift
	nnp=
	[ "$(values "$cu" NoNewPrivileges)" = yes ] && nnp=--no-new-privs
	um=$(values "$cu" UMask)
	(umask "${um:-0022}" &&
		exec setpriv --bounding-set="$(bounding "$cu")" --inh-caps=-all --ambient-caps=-all \
			$nnp -- "$@")
}
# execstart UNIT: the options of its ExecStart=, HOSTTUNE_ARGS as given.
execstart() {
	sed -n 's/^ExecStart=[^ ]* //p' "$1" | sed "s|\\\$HOSTTUNE_ARGS|$HOSTTUNE_ARGS|"
}
# writable UNIT: the paths below / that UNIT may write under
# ProtectSystem=strict: its ReadWritePaths= ("-": only when there) and its
# StateDirectory= below /var/lib.
writable() {
	for p in $(values "$1" ReadWritePaths); do printf '%s\n' "${p#-}"; done
	for p in $(values "$1" StateDirectory); do printf '/var/lib/%s\n' "$p"; done
}
EOT
. "$TMP/units-lib.sh"

# ---- 1. systemd-analyze security --offline, with a threshold (tenths) ----
for spec in "$M 30 3.0" "$F 40 4.0"; do
	set -- $spec
	out=$(cd "$TMP/units" && systemd-analyze security --offline=yes --threshold="$2" "./${1##*/}" 2>&1)
	rc=$?
	level=$(printf '%s\n' "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
	if [ "$rc" -eq 0 ] && [ -n "$level" ]; then ok "${1##*/}: exposure $level, at most $3"
	else not_ok "${1##*/}: exposure at most $3" "exit $rc, level '$level'" \
		"$(printf '%s\n' "$out" | grep '✗' | head -30)"; fi
done
# The caps the units' jobs need are there (the analysis alone would pass without them).
expect_eq "metrics unit: its bounding set" \
	"CAP_NET_ADMIN CAP_SYS_PTRACE CAP_DAC_READ_SEARCH CAP_SYS_ADMIN" "$(values "$M" CapabilityBoundingSet)"
expect_eq "first-boot unit: its bounding set" \
	"CAP_NET_ADMIN CAP_SYS_MODULE CAP_SYS_PTRACE CAP_DAC_READ_SEARCH" "$(values "$F" CapabilityBoundingSet)"

# ---- 2. the metrics unit judges another user's process ----
# The helper as nobody: a binary nobody may run, under a name of its own
# (comm "units-hold": no other test's processes share it). It listens on
# 127.0.0.1:7000 and holds 800 connections to it: 3 + 1 + 800 = 804
# descriptors (tests/listen-hold.c) of a soft limit of 1024: 78.5%, a warning
# (75% and more).
cp "$HOLD" "$TMP/units-hold"
chmod a+rx "$TMP" "$TMP/units-hold"
HOSTTUNE_ARGS=
cat >"$TMP/metrics.sh" <<'EOT'
set -u
. "$TMP/units-lib.sh"
ip link set lo up || exit 10
(ulimit -S -n 1024 && exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$TMP/units-hold" 127.0.0.1 7000 4096 800) >"$TMP/hold.out" 2>"$TMP/hold.err" &
pid=$!
trap 'kill "$pid" 2>/dev/null' EXIT
echo "$pid" >"$TMP/hold.pid"
i=0
until grep -q ready "$TMP/hold.out" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -le 100 ] || exit 12
	sleep 0.1
done
# A root audit, the unit's (its ExecStart= options, textfile and JSON) and
# the control's (CAP_NET_ADMIN alone).
"$HOSTTUNE" --rules "$HT_RULES_DIR" --no-measure --format json audit >"$TMP/root.json" 2>"$TMP/root.err"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --no-measure --format prometheus audit >"$TMP/root.prom" \
	2>>"$TMP/root.err"
confine "$M" "$HOSTTUNE" --rules "$HT_RULES_DIR" $(execstart "$M" |
	sed "s|/var/lib/prometheus/node-exporter/|$TMP/|") 2>"$TMP/unit.err"
echo $? >"$TMP/unit.rc"
confine "$M" "$HOSTTUNE" --rules "$HT_RULES_DIR" --no-measure --format json audit \
	>"$TMP/unit.json" 2>>"$TMP/unit.err"
setpriv --bounding-set=-all,+net_admin --inh-caps=-all --ambient-caps=-all --no-new-privs -- \
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --no-measure --format json audit >"$TMP/control.json" 2>/dev/null
exit 0
EOT
export TMP HOSTTUNE HT_RULES_DIR HOSTTUNE_ARGS M
unshare -n sh "$TMP/metrics.sh"
rc=$?
expect_eq "the metrics namespace runs (exit code of its script)" 0 "$rc"
pid=$(cat "$TMP/hold.pid" 2>/dev/null)
expect_eq "the unit's command: exit 1 (findings), nothing on stderr" "1 " \
	"$(cat "$TMP/unit.rc" 2>/dev/null) $(cat "$TMP/unit.err" 2>/dev/null)"
# row JSON: the open-file row of units-hold, "severity usage/limit pid".
row() {
	jq -r '.findings[] | select(.rule == "process.limit_nofile" and .instance == "units-hold") |
		"\(.severity) \(.limit.usage)/\(.limit.limit)"' "$1" 2>/dev/null
}
expect_eq "root audit: nobody's process judged, 804 of 1024" "warning 804/1024" "$(row "$TMP/root.json")"
expect_eq "metrics unit: nobody's process judged, 804 of 1024" "warning 804/1024" "$(row "$TMP/unit.json")"
expect_contains "metrics unit: the row names the PID" "units-hold is PID $pid;" \
	"$(jq -r '.findings[] | select(.instance == "units-hold" and .rule == "process.limit_nofile") |
		.explanation' "$TMP/unit.json" 2>/dev/null)"
expect_eq "control (CAP_NET_ADMIN alone): the process is not judged" "" "$(row "$TMP/control.json")"
# Other tests' network namespaces come and go between the runs (make -j):
# the rows compared are those of the test's own namespace and of the host's,
# which hosttune, run in the test's, enters with setns(2) as it enters a
# container's.
host_ns=$(stat -L -c %i /proc/self/ns/net)
# rows FILE: each finding's rule, instance and applicability, sorted; the
# rows of a network namespace only for the host's.
rows() {
	jq -r --arg ns "$host_ns" '.findings[] | select((.rule | startswith("netns.") | not) or
		.instance == null or .instance == $ns) | "\(.rule) \(.instance) \(.applicable)"' "$1" \
		2>/dev/null | sort
}
rows "$TMP/root.json" >"$TMP/root.rows"
rows "$TMP/unit.json" >"$TMP/unit.rows"
rows "$TMP/control.json" >"$TMP/control.rows"
if [ -s "$TMP/root.rows" ] && grep -q "^netns.listen $host_ns true" "$TMP/root.rows" &&
	cmp -s "$TMP/root.rows" "$TMP/unit.rows"; then
	ok "metrics unit: every row a root audit judges, the host's namespace's too ($(wc -l <"$TMP/root.rows") rows)"
else not_ok "metrics unit: every row a root audit has" "$(diff "$TMP/root.rows" "$TMP/unit.rows")"; fi
if cmp -s "$TMP/root.rows" "$TMP/control.rows"; then not_ok "control: rows missing with CAP_NET_ADMIN alone"
else ok "control: rows missing with CAP_NET_ADMIN alone ($(diff "$TMP/root.rows" "$TMP/control.rows" |
	grep -c '^<'))"; fi
# The textfile: each finding's applicable sample, as root's (the host's
# namespace alone among the namespaces').
samples() {
	grep '^hosttune_finding_applicable{' "$1" 2>/dev/null |
		grep -v "netns=\"[0-9]*\"" ; grep "^hosttune_finding_applicable{.*netns=\"$host_ns\"" "$1"
}
samples "$TMP/root.prom" | sort >"$TMP/root.samples"
samples "$TMP/hosttune.prom" | sort >"$TMP/unit.samples"
if [ -s "$TMP/root.samples" ] && cmp -s "$TMP/root.samples" "$TMP/unit.samples"; then
	ok "textfile: no row a root audit judges is left n/a ($(wc -l <"$TMP/unit.samples") samples)"
else not_ok "textfile: the root audit's applicable samples" \
	"$(diff "$TMP/root.samples" "$TMP/unit.samples" | head -20)"; fi
expect_eq "textfile: mode 0644 under the unit's umask $(values "$M" UMask)" 644 \
	"$(stat -c %a "$TMP/hosttune.prom" 2>/dev/null)"

# ---- 3. apply as the first-boot unit runs it, on a scratch tree ----
# The Garage VM's tree with a garage process (PID 4242: 1024 descriptors
# allowed, as systemd's default; the garage profile asks for 42000) listening
# on 3900, and the directories the unit's ReadWritePaths= name, as the host
# has them (the unit creates none).
HOSTTUNE_ARGS="--profile garage --set workload.conn_rate=570"
tree() {
	rm -rf "$1"
	cp -a "$FIXTURES/garage-vm/root" "$1"
	mkdir -p "$1/proc/4242/fd" "$1/proc/net" "$1/run"
	echo garage >"$1/proc/4242/comm"
	printf '%s\n' \
		'Limit                     Soft Limit           Hard Limit           Units     ' \
		'Max open files            1024                 524288               files     ' \
		>"$1/proc/4242/limits"
	echo "0::/system.slice/garage.service" >"$1/proc/4242/cgroup"
	ln -s "socket:[12345]" "$1/proc/4242/fd/3"
	printf '%s\n' \
		'  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode' \
		'   0: 00000000:0F3C 00000000:0000 0A 00000000:00000000 00:00000000 00000000   998        0 12345 1 0000000000000000 100 0 0 10 0' \
		>"$1/proc/net/tcp"
	for p in $(values "$F" ReadWritePaths); do
		mkdir -p "$1${p#-}"
	done
	# StateDirectory=: systemd makes it before the unit runs.
	for p in $(values "$F" StateDirectory); do
		mkdir -p "$1/var/lib/$p"
		m=$(values "$F" StateDirectoryMode)
		chmod "${m:-0755}" "$1/var/lib/$p"
	done
}
tree "$TMP/plain"
tree "$TMP/sb"
cat >"$TMP/sandbox.sh" <<'EOT'
set -u
. "$TMP/units-lib.sh"
T=$1
shift
# ProtectSystem=strict: every mount of this namespace read-only but the API
# file systems.
awk '{ print $5 }' /proc/self/mountinfo | sort -u | while read -r m; do
	case $m in
	/proc | /proc/* | /sys | /sys/* | /dev | /dev/*) continue ;;
	*\\*) echo "# not made read-only (an escaped name): $m"; continue ;;
	esac
	mount -o remount,bind,ro "$m" || echo "# could not make $m read-only"
done
# The tree's API file systems (/proc/sys and /sys read-only under
# ProtectKernelTunables=yes), then what the unit may write.
rw() {
	[ -e "$T$1" ] || return 0
	mount --bind "$T$1" "$T$1" && mount -o remount,bind,rw "$T$1"
}
rw /proc
rw /sys
if [ "$(values "$F" ProtectKernelTunables)" = yes ]; then
	for p in /proc/sys /sys; do
		[ -e "$T$p" ] && mount --bind "$T$p" "$T$p" && mount -o remount,bind,ro "$T$p"
	done
fi
writable "$F" | while read -r p; do
	[ "$p" = "${SKIP_RW:-}" ] || rw "$p" || echo "# could not make $p writable"
done
# The sandbox holds: the tree's etc is read-only here.
# (A subshell: a redirection that fails makes sh leave a special built-in's shell.)
if (: >"$T/etc/hosttune-probe") 2>/dev/null; then echo "probe: written"; else echo "probe: refused"; fi
confine "$F" "$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$T" $(execstart "$F")
echo "apply: exit $?"
EOT
export F HOSTTUNE_ARGS
# Its output through a pipe: no file of this namespace stays open for writing.
unshare -m --propagation private sh "$TMP/sandbox.sh" "$TMP/sb" 2>&1 | cat >"$TMP/sb.out"
expect_eq "sandbox: the tree outside the unit's writable paths is read-only" 1 \
	"$(grep -c '^probe: refused' "$TMP/sb.out")"
expect_eq "sandbox: apply exits 0" 1 "$(grep -c '^apply: exit 0$' "$TMP/sb.out")"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/plain" $(execstart "$F") >"$TMP/plain.out" 2>&1
expect_eq "without the sandbox: apply exits 0" 0 $?
# The garage profile at 570 connections/s, its burst 3x and its TIME_WAIT of
# 30 s: 570 x 30 x 3 = 51300 entries, to the next power of two 65536 (within
# 5% of the tree's 480 MiB at 328 bytes an entry: 76,725 entries); its
# LimitNOFILE is Garage's 42000 (rules/profiles/garage.profile).
expect_eq "sandbox: live nf_conntrack_max written" 65536 \
	"$(cat "$TMP/sb/proc/sys/net/netfilter/nf_conntrack_max")"
expect_contains "sandbox: the drop-in written, its directory made" "LimitNOFILE=42000" \
	"$(cat "$TMP/sb/etc/systemd/system/garage.service.d/90-hosttune.conf" 2>/dev/null)"
for f in etc/sysctl.d/90-hosttune.conf etc/modprobe.d/hosttune.conf etc/modules-load.d/hosttune.conf \
	etc/systemd/system/garage.service.d/90-hosttune.conf; do
	expect_eq "sandbox: $f, mode 0644 under umask $(values "$F" UMask)" 644 \
		"$(stat -c %a "$TMP/sb/$f" 2>/dev/null)"
done
expect_eq "sandbox: the state file, mode 0600" 600 "$(stat -c %a "$TMP/sb/var/lib/hosttune/state" 2>/dev/null)"
# The same tree as apply without the sandbox leaves (the state file aside:
# it names the tree's path).
(cd "$TMP/sb" && tree_sums .) | grep -v 'var/lib/hosttune/state$' >"$TMP/sb.sums"
(cd "$TMP/plain" && tree_sums .) | grep -v 'var/lib/hosttune/state$' >"$TMP/plain.sums"
if cmp -s "$TMP/sb.sums" "$TMP/plain.sums"; then ok "sandbox: the tree apply leaves is the one without it"
else not_ok "sandbox: the tree apply leaves is the one without it" \
	"$(diff "$TMP/plain.sums" "$TMP/sb.sums" | head -20)"; fi
# The control: modules-load.d left out of the writable paths. apply cannot
# write its file there, fails (3) and restores what it wrote.
tree "$TMP/sb"
SKIP_RW=/etc/modules-load.d
export SKIP_RW
(cd "$TMP/sb" && tree_sums .) >"$TMP/before.sums"
unshare -m --propagation private sh "$TMP/sandbox.sh" "$TMP/sb" 2>&1 | cat >"$TMP/sb2.out"
expect_eq "control (modules-load.d read-only): apply exits 3" 1 "$(grep -c '^apply: exit 3$' "$TMP/sb2.out")"
expect_contains "control: the error names the file" "/etc/modules-load.d/hosttune.conf" "$(cat "$TMP/sb2.out")"
(cd "$TMP/sb" && tree_sums .) >"$TMP/after.sums"
if cmp -s "$TMP/before.sums" "$TMP/after.sums"; then ok "control: the tree is as it was (rolled back)"
else not_ok "control: the tree is as it was" "$(diff "$TMP/before.sums" "$TMP/after.sums" | head)"; fi
finish
