#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Without root, facts that need it (ctnetlink, the hashsize parameter, which
# the kernel makes 0600) come back unavailable with the reason or from a
# fallback, and `hosttune audit` still completes: rules that need a missing
# fact are marked not applicable, nothing crashes. apply and revert on a
# tree this user may not change fail with a line that says so.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "# SKIP: needs root and setpriv to drop to an unprivileged user"
	exit 77
fi
nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}
# The unprivileged user must reach the binary and the rules, wherever the
# build tree is (a checkout under /root is not readable for it).
cp "$HOSTTUNE" "$TMP/hosttune"
cp -r "$HT_RULES_DIR" "$TMP/rules"
chmod -R a+rX "$TMP"
HOSTTUNE=$TMP/hosttune

nobody "$HOSTTUNE" --no-measure --format json facts >"$TMP/facts.json" 2>"$TMP/err"
expect_eq "facts as nobody: exit 0" 0 $?
expect_eq "facts as nobody: nothing on stderr" "" "$(cat "$TMP/err")"
# Every fact is present, with a value or an errno: none silently missing.
expect_eq "facts as nobody: no fact without value or error" 0 \
	"$(jq '[.facts[] | select(.value == null and .error == null)] | length' "$TMP/facts.json")"
if [ -e /sys/module/nf_conntrack/parameters/hashsize ] &&
	[ "$(stat -c %a /sys/module/nf_conntrack/parameters/hashsize)" = 600 ]; then
	expect_eq "hashsize (mode 0600) unavailable EACCES" EACCES \
		"$(jq -r '.facts["module.nf_conntrack.hashsize"].error' "$TMP/facts.json")"
fi
if [ -e /proc/net/stat/nf_conntrack ]; then
	# ctnetlink refuses an unprivileged socket (EPERM); /proc/net/stat is the fallback.
	expect_contains "conntrack counters from the /proc fallback" "/proc/net/stat/nf_conntrack" \
		"$(jq -r '.facts["conntrack.stat.drop"].source' "$TMP/facts.json")"
fi

nobody "$HOSTTUNE" --rules "$TMP/rules" --no-measure --format json audit >"$TMP/audit.json" 2>"$TMP/err"
rc=$?
case $rc in 0|1) ok "audit as nobody completes (exit $rc)" ;;
*) not_ok "audit as nobody completes" "exit $rc: $(cat "$TMP/err")" ;; esac
expect_eq "audit as nobody: nothing on stderr" "" "$(cat "$TMP/err")"
expect_eq "audit as nobody: every finding applicable or with a reason" 0 \
	"$(jq '[.findings[] | select(.applicable == false and (.explanation | length) == 0)] | length' "$TMP/audit.json")"
# The cipher measurement was skipped: cpu.aes reads "(unavailable)" for the
# figures but still judges the flags.
expect_eq "cpu.aes applicable without a measurement" true \
	"$(jq '.findings[] | select(.rule == "cpu.aes") | .applicable' "$TMP/audit.json")"

# A rule whose `when` reads a fact refused to this user is reported as not
# applicable, saying it needs root, not left out: the near-full table of
# tests/fixtures/verdict/near-full.facts (4092 of 4096) wants the dump,
# which ctnetlink refused (EPERM). With the dump not collected at all (the
# file as it is) the rule has nothing to report and is left out.
cp "$FIXTURES/verdict/near-full.facts" "$TMP/denied.facts"
for n in conntrack.dump.entries conntrack.dump.tcp conntrack.state.ESTABLISHED; do
	echo "$n = unavailable EPERM entries from ctnetlink IPCTNL_MSG_CT_GET dump: EPERM (needs CAP_NET_ADMIN: run as root)" >>"$TMP/denied.facts"
done
"$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$TMP/denied.facts" --format json audit >"$TMP/denied.json" 2>"$TMP/err"
expect_eq "dump refused: conntrack.states is n/a" "false" \
	"$(jq '.findings[] | select(.rule == "conntrack.states") | .applicable' "$TMP/denied.json")"
expect_contains "... saying it needs root" \
	"needs root: conntrack.state.ESTABLISHED is unavailable (Operation not permitted" \
	"$(jq -r '.findings[] | select(.rule == "conntrack.states") | .explanation' "$TMP/denied.json")"
# Every rule whose `when` is conntrack.states_known (conntrack.states and
# conntrack.syn_sent: 2 in conntrack-states.rules) is n/a: the second reads
# the rule's value computed for the first, and what was refused goes with it.
expect_eq "dump refused: conntrack.syn_sent is n/a too" "false" \
	"$(jq '.findings[] | select(.rule == "conntrack.syn_sent") | .applicable' "$TMP/denied.json")"
expect_eq "dump refused: 2 rows of conntrack.states_known, both 'needs root'" 2 \
	"$(jq '[.findings[] | select(.rule == "conntrack.states" or .rule == "conntrack.syn_sent")
		| select(.explanation | startswith("needs root: conntrack.state.ESTABLISHED"))] | length' \
		"$TMP/denied.json")"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$FIXTURES/verdict/near-full.facts" --format json audit \
	>"$TMP/denied.json" 2>"$TMP/err"
expect_eq "dump not collected: conntrack.states left out" "" \
	"$(jq -r '.findings[] | select(.rule == "conntrack.states") | .rule' "$TMP/denied.json")"

# apply and revert by a user who may not change the tree: one line that says
# so, not only "Permission denied"; the tree (root's) as it was.
T=$TMP/tree
cp -a "$FIXTURES/garage-vm/root" "$T"
chown -R 0:0 "$T"
chmod -R a+rX "$T"
snap() { (cd "$1" && find . -printf '%y %m %u %p\n' -exec sh -c 'test -f "$1" && sha256sum <"$1"' _ {} \; | LC_ALL=C sort); }
snap "$T" >"$TMP/before"
nobody "$HOSTTUNE" --rules "$TMP/rules" --root "$T" --no-measure apply >"$TMP/out" 2>"$TMP/err"
expect_eq "apply as nobody on root's tree: exit 3" 3 $?
expect_eq "apply as nobody: one line on stderr" 1 "$(wc -l <"$TMP/err")"
expect_contains "apply as nobody: rolled back, and why" \
	"hosttune: apply failed, every change rolled back: $T/var: Permission denied (this user may not change the tree below --root $T)" \
	"$(cat "$TMP/err")"
nobody "$HOSTTUNE" --rules "$TMP/rules" --root "$T" --no-measure --format json apply >"$TMP/out.json" 2>"$TMP/err"
expect_contains "apply as nobody, --format json: the error object says why" \
	"(this user may not change the tree below --root $T)" "$(jq -r .error.message "$TMP/out.json")"
snap "$T" >"$TMP/now"
expect_eq "apply as nobody: the tree as it was" "" "$(diff "$TMP/before" "$TMP/now")"
# Applied by root, reverted by nobody: refused, and why.
"$HOSTTUNE" --rules "$TMP/rules" --root "$T" --no-measure apply >/dev/null 2>"$TMP/err"
expect_eq "apply as root: exit 0" 0 $?
snap "$T" >"$TMP/applied"
nobody "$HOSTTUNE" --rules "$TMP/rules" --root "$T" revert >"$TMP/out" 2>"$TMP/err"
expect_eq "revert as nobody: exit 3" 3 $?
expect_eq "revert as nobody: one line on stderr" 1 "$(wc -l <"$TMP/err")"
expect_contains "revert as nobody: says why" \
	"Permission denied (this user may not change the tree below --root $T)" "$(cat "$TMP/err")"
snap "$T" >"$TMP/now"
expect_eq "revert as nobody: the tree as root applied it" "" "$(diff "$TMP/applied" "$TMP/now")"
"$HOSTTUNE" --rules "$TMP/rules" --root "$T" revert >/dev/null 2>"$TMP/err"
expect_eq "revert as root: exit 0" 0 $?
snap "$T" >"$TMP/now"
expect_eq "revert as root: the tree as it was" "" "$(diff "$TMP/before" "$TMP/now")"
# The hint is for a user other than root: root's own refusal (a read-only
# file system) says only what failed.
if unshare -m true 2>/dev/null; then
	unshare -m sh -c 'mount -o bind,ro "$1" "$1" && "$2" --rules "$3" --root "$1" --no-measure apply' \
		_ "$T" "$HOSTTUNE" "$TMP/rules" >"$TMP/out" 2>"$TMP/err"
	expect_eq "apply as root on a read-only tree: exit 3" 3 $?
	case $(cat "$TMP/err") in
	*"Read-only file system") ok "apply as root on a read-only tree: no word of users" ;;
	*) not_ok "apply as root on a read-only tree: no word of users" "$(cat "$TMP/err")" ;;
	esac
fi

# An "ok" that rests on what was refused is no verdict: Garage's port 3900
# in a tree whose /proc/PID/fd only root may read (the listen host's
# processes beside the Garage VM's files): who holds it cannot be told, so
# garage.ports is not applicable, "needs root", not ok.
mkdir -p "$TMP/gl"
cp -a "$FIXTURES/garage-vm/root/." "$TMP/gl/"
cp -a "$FIXTURES/listen-host/root/." "$TMP/gl/"
chmod -R a+rX "$TMP/gl"
chmod 700 "$TMP/gl"/proc/*/fd
nobody "$HOSTTUNE" --rules "$TMP/rules" --root "$TMP/gl" --profile garage --no-measure --format json \
	audit >"$TMP/gl.json" 2>"$TMP/err"
expect_eq "garage.ports[3900], owner refused: not applicable" false \
	"$(jq '.findings[] | select(.rule == "garage.ports" and .instance == "3900") | .applicable' "$TMP/gl.json")"
expect_contains "... saying it needs root" "needs root: listener.3900.process is unavailable" \
	"$(jq -r '.findings[] | select(.rule == "garage.ports" and .instance == "3900") | .explanation' "$TMP/gl.json")"

# Process trees as tests/process-family.sh builds them: a /proc/net/tcp
# listener (no backlog: every port's owner is wanted), /proc/PID/{comm,
# limits,cgroup} and PID/fd with FDS entries, the first the socket.
ptree() {
	rm -rf "$1"
	mkdir -p "$1/proc/sys/kernel" "$1/proc/net"
	printf '5.15.0-91-generic\n' >"$1/proc/sys/kernel/osrelease"
	printf 'MemTotal:        4194304 kB\n' >"$1/proc/meminfo"
	printf '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n' >"$1/proc/net/tcp"
	nsock=0
}
plisten() {
	printf '%4d: 00000000:%04X 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 %d 1 ffff8d6c41a2b000 100 0 0 10 0\n' \
		"$nsock" "$2" "$3" >>"$1/proc/net/tcp"
	nsock=$((nsock + 1))
}
pproc() { # DIR PID COMM SOFT HARD FDS CGROUP INODE
	d=$1/proc/$2
	mkdir -p "$d/fd"
	printf '%s\n' "$3" >"$d/comm"
	printf 'Limit                     Soft Limit           Hard Limit           Units     \n' >"$d/limits"
	printf 'Max open files            %-20s %-20s files     \n' "$4" "$5" >>"$d/limits"
	printf '0::%s\n' "$7" >"$d/cgroup"
	ln -s "socket:[$8]" "$d/fd/0"
	(cd "$d/fd" && seq 1 $(($6 - 1)) | xargs touch)
}

# A daemon whose descriptors only root may read: minio, PID 300, at 950 of
# 1024 (950 >= 1024 - 1024 / 10 = 922: critical as root). As nobody its
# port's owner cannot be found: a row says so, naming PID 300, not nothing.
T=$TMP/unread
ptree "$T"
plisten "$T" 9000 7001
pproc "$T" 300 minio 1024 1024 950 /system.slice/minio.service 7001
chmod -R a+rX "$T"
chmod 700 "$T/proc/300/fd"
"$HOSTTUNE" --rules "$TMP/rules" --root "$T" --format json audit >"$TMP/u.json"
expect_eq "unread daemon, as root: process.limit_nofile[minio] critical" critical \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile") | .severity' "$TMP/u.json")"
nobody "$HOSTTUNE" --rules "$TMP/rules" --root "$T" --format json audit >"$TMP/u.json"
expect_eq "unread daemon, as nobody: exit 0 (no verdict), not 2" 0 $?
expect_eq "... process.owner_unread[9000] is n/a" false \
	"$(jq '.findings[] | select(.rule == "process.owner_unread" and .instance == "9000") | .applicable' "$TMP/u.json")"
expect_contains "... needs root, naming PID 300" \
	"needs root: listener.9000.pid is unavailable (Permission denied: no readable /proc/PID/fd holds the socket; refused: /proc/300/fd (minio)" \
	"$(jq -r '.findings[] | select(.rule == "process.owner_unread") | .explanation' "$TMP/u.json")"
# The refused process (one, so named) is judged too: its own row is n/a.
expect_eq "... process.limit_nofile[minio] n/a, needs root" \
	"false needs root: process.minio.fds is unavailable (Permission denied: /proc/300/fd)" \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile" and .instance == "minio") | "\(.applicable) \(.explanation)"' "$TMP/u.json")"
# The facts nobody collects from the same tree, audited from the file, give
# the rows of nobody's live audit (hosttune facts collects every port's
# owner, audit only those its rules want: no row may come from that).
nobody "$HOSTTUNE" --rules "$TMP/rules" --root "$T" --format json audit >"$TMP/u.json"
nobody "$HOSTTUNE" --root "$T" facts >"$TMP/u.facts"
"$HOSTTUNE" --rules "$TMP/rules" --facts "$TMP/u.facts" --format json audit >"$TMP/uf.json"
rows='[.findings[] | "\(.rule)[\(.instance // "")] \(.severity) \(.applicable)"] | sort | join(",")'
expect_eq "... nobody's facts file audits to the rows of nobody's live audit" \
	"$(jq -r "$rows" "$TMP/u.json")" "$(jq -r "$rows" "$TMP/uf.json")"
# A facts file from hosttune facts holds every port's owner, refused ones
# too. listen-capped-419.facts with sshd's port 22 idle below the cap (0
# queued of a backlog of 64 < somaxconn 128) and its owner refused: audit
# wants no owner of such a port (it needs no restart), so no row, as live; port
# 9000's full queue (129 of 128) wants its owner: refused, an n/a row.
sed -e 's|^listener.22.backlog = 128 |listener.22.backlog = 64 |' \
	-e 's|^listener.22.pid = .*|listener.22.pid = unavailable EACCES from no readable /proc/PID/fd holds the socket; refused: /proc/611/fd (sshd)|' \
	-e 's|^listener.22.process = .*|listener.22.process = unavailable EACCES from no readable /proc/PID/fd holds the socket; refused: /proc/611/fd (sshd)|' \
	"$FIXTURES/verdict/listen-capped-419.facts" >"$TMP/idle-refused.facts"
"$HOSTTUNE" --rules "$TMP/rules" --facts "$TMP/idle-refused.facts" --format json audit >"$TMP/ir.json"
expect_eq "facts file, an idle port's owner refused: no process.owner_unread row" 0 \
	"$(jq '[.findings[] | select(.rule == "process.owner_unread")] | length' "$TMP/ir.json")"
sed -e 's|^listener.9000.pid = .*|listener.9000.pid = unavailable EACCES from no readable /proc/PID/fd holds the socket; refused: /proc/812/fd (minio)|' \
	-e 's|^listener.9000.process = .*|listener.9000.process = unavailable EACCES from no readable /proc/PID/fd holds the socket; refused: /proc/812/fd (minio)|' \
	"$FIXTURES/verdict/listen-capped-419.facts" >"$TMP/full-refused.facts"
"$HOSTTUNE" --rules "$TMP/rules" --facts "$TMP/full-refused.facts" --format json audit >"$TMP/ir.json"
expect_eq "facts file, a full port's owner refused: process.owner_unread[9000] n/a" "9000 false" \
	"$(jq -r '.findings[] | select(.rule == "process.owner_unread") | "\(.instance) \(.applicable)"' "$TMP/ir.json")"
# Its port's owner found (as root): no such row.
"$HOSTTUNE" --rules "$TMP/rules" --root "$T" --format json audit >"$TMP/u.json"
expect_eq "... as root: no process.owner_unread row" 0 \
	"$(jq '[.findings[] | select(.rule == "process.owner_unread")] | length' "$TMP/u.json")"

# A family with a member refused: docker-proxy PID 50 at 4 of 1024
# (0.4%, ok) and PID 70 at 1010 of 1024 (98.6% >= 90%: critical), PID 70's
# descriptors root's alone. As root the worst is PID 70, critical; as
# nobody PID 50's "ok" is no verdict: n/a, naming PID 70.
T=$TMP/family
ptree "$T"
plisten "$T" 8080 101
plisten "$T" 8443 103
pproc "$T" 50 docker-proxy 1024 1024 4 /system.slice/docker.service 101
pproc "$T" 70 docker-proxy 1024 1024 1010 /system.slice/docker.service 103
chmod -R a+rX "$T"
chmod 700 "$T/proc/70/fd"
"$HOSTTUNE" --rules "$TMP/rules" --root "$T" --format json audit >"$TMP/f.json"
expect_eq "family, as root: critical" critical \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile") | .severity' "$TMP/f.json")"
expect_contains "... naming PID 70" "docker-proxy is PID 70" \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile") | .explanation' "$TMP/f.json")"
nobody "$HOSTTUNE" --rules "$TMP/rules" --root "$T" --format json audit >"$TMP/f.json"
expect_eq "family, PID 70 refused: not ok but n/a" false \
	"$(jq '.findings[] | select(.rule == "process.limit_nofile") | .applicable' "$TMP/f.json")"
expect_contains "... needs root: PID 70's descriptors could not be read" \
	"needs root: process.docker-proxy.unread is unavailable (Permission denied: PID 70's descriptors could not be read (/proc/70/fd))" \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile") | .explanation' "$TMP/f.json")"

# No row vanishes without root: every fixture tree with a host's
# /proc/meminfo, its /proc/PID/fd root's alone (0700) and the conntrack
# table's file root's alone (0400), audited by root and by nobody under
# every profile: each rule[instance] root reports, nobody reports too
# (as a verdict or as n/a saying why).
vanished=
for r in "$FIXTURES"/*/root; do
	[ -e "$r/proc/meminfo" ] || continue
	V=$TMP/v/$(basename "$(dirname "$r")")
	mkdir -p "$V" && chmod a+rx "$TMP/v"
	cp -a "$r/." "$V/"
	chmod -R a+rX "$V"
	for d in "$V"/proc/[0-9]*/fd; do [ -d "$d" ] && chmod 700 "$d"; done
	[ -e "$V/proc/net/nf_conntrack" ] && chmod 400 "$V/proc/net/nf_conntrack"
	for p in "$HT_RULES_DIR"/profiles/*.profile; do
		prof=$(basename "$p" .profile)
		ids='.findings[]? | .rule + "[" + (.instance // "") + "]"'
		"$HOSTTUNE" --rules "$TMP/rules" --root "$V" --profile "$prof" --no-measure --format json \
			audit 2>/dev/null | jq -r "$ids" | sort >"$TMP/ids.root"
		nobody "$HOSTTUNE" --rules "$TMP/rules" --root "$V" --profile "$prof" --no-measure \
			--format json audit 2>/dev/null | jq -r "$ids" | sort >"$TMP/ids.nobody"
		gone=$(comm -23 "$TMP/ids.root" "$TMP/ids.nobody" | tr '\n' ' ')
		[ -n "$gone" ] && vanished="$vanished $(basename "$V") $prof: $gone;"
	done
done
expect_eq "fixture trees, root's /proc/PID/fd and conntrack table: no row vanishes as nobody" "" "$vanished"

finish
