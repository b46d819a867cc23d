# SPDX-License-Identifier: LGPL-2.1-or-later
# conntrack.state.*, conntrack.dump.* and conntrack.stale.established from a
# ctnetlink dump in a fresh network namespace with connections held open,
# and the same counts from the namespace's /proc/net/nf_conntrack under
# --root. The fixture tree ct-table (every state, IPv6, offload, other
# protocols) is tests/test-facts.c's. Nothing on the host changes: the live
# part runs in `unshare -n`, and the timeouts it sets are the namespace's.
# Needs: tests/tcp-hold (HT_BUILD_TESTS_DIR, or HT_TCP_HOLD), root, nft and
# a kernel with nf_tables + conntrack; skipped (with a "# SKIP" line) without.
. "${HT_TESTS_DIR:-$(dirname "$0")}/lib.sh"

N=50 K=10
HOLD=${HT_TCP_HOLD:-${HT_BUILD_TESTS_DIR:+$HT_BUILD_TESTS_DIR/tcp-hold}}
DUMP="ctnetlink IPCTNL_MSG_CT_GET dump"

skip_live() {
	printf '# SKIP live part: %s\n' "$1"
	ok "netns ctstate # SKIP $1"
	finish
	exit $?
}

[ "$(id -u)" -eq 0 ] || skip_live "needs root (unshare -n, nft)"
command -v nft >/dev/null 2>&1 || skip_live "nft(8) not installed"
[ -n "$HOLD" ] && [ -x "$HOLD" ] || skip_live "tcp-hold not built (set HT_BUILD_TESTS_DIR or HT_TCP_HOLD)"
unshare -n true 2>/dev/null || skip_live "unshare -n refused"

ct_ruleset "$TMP/ct.nft"

# Runs inside the namespace; leaves what it saw in $TMP. Exit 77: nft refused.
cat >"$TMP/inner.sh" <<'EOT'
set -u
NF=/proc/sys/net/netfilter
facts() { "$HOSTTUNE" --no-measure --format json facts >"$TMP/$1.json" 2>>"$TMP/ht.err"; }
# tree NAME: the namespace's conntrack table and timeout as a --root tree
tree() {
	mkdir -p "$TMP/$1/proc/net" "$TMP/$1$NF"
	cat /proc/net/nf_conntrack >"$TMP/$1/proc/net/nf_conntrack"
	cat $NF/nf_conntrack_tcp_timeout_established >"$TMP/$1$NF/nf_conntrack_tcp_timeout_established"
}
ip link set lo up || exit 10
nft -f "$TMP/ct.nft" 2>"$TMP/nft.err" || exit 77
# The kernel's default, set so the arithmetic below holds wherever the suite runs.
echo 432000 >$NF/nf_conntrack_tcp_timeout_established || exit 11
facts empty
mkfifo "$TMP/in" "$TMP/out" || exit 12
"$HOLD" 127.0.0.1 5002 "$N" <"$TMP/in" >"$TMP/out" 2>"$TMP/hold.err" &
exec 3>"$TMP/in" 4<"$TMP/out"
read -r l <&4
[ "$l" = "open $N" ] || exit 13
facts held
tree held-tree
if command -v conntrack >/dev/null 2>&1; then conntrack -L >"$TMP/held.L" 2>/dev/null; fi
if command -v setpriv >/dev/null 2>&1; then
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
		"$HOSTTUNE" --no-measure --format json facts >"$TMP/nopriv.json" 2>>"$TMP/ht.err"
	# The same audit as root and as nobody (the rules copied where nobody reads them).
	"$HOSTTUNE" --rules "$TMP/rules" --no-measure --format json audit >"$TMP/audit-root.json" 2>>"$TMP/ht.err"
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
		"$HOSTTUNE" --rules "$TMP/rules" --no-measure --format json audit \
		>"$TMP/audit-nopriv.json" 2>>"$TMP/ht.err"
fi
echo "close $K" >&3
read -r l <&4
[ "$l" = "closed $K" ] || exit 14
facts closed
if command -v conntrack >/dev/null 2>&1; then conntrack -L >"$TMP/closed.L" 2>/dev/null; fi
echo $((432000 + 3600)) >$NF/nf_conntrack_tcp_timeout_established || exit 15
facts stale
tree stale-tree
exec 3>&-
wait || exit 16
exit 0
EOT
cp -r "$HT_RULES_DIR" "$TMP/rules"
chmod -R a+rX "$TMP/rules"
chmod a+x "$TMP"
export TMP HOLD N K HOSTTUNE
unshare -n sh "$TMP/inner.sh"
rc=$?
[ "$rc" -eq 77 ] && skip_live "nft could not load a ct rule: $(head -n 1 "$TMP/nft.err")"
expect_eq "netns setup and runs (exit code of the namespace script)" 0 "$rc"
[ "$rc" -eq 0 ] || { cat "$TMP/hold.err" 2>/dev/null; finish; exit 1; }
expect_eq "hosttune printed nothing on stderr in the namespace" "" "$(cat "$TMP/ht.err")"

# f JSON NAME FIELD: a field of a fact
f() { jget "$TMP/$1.json" ".facts[\"$2\"].$3"; }
# states JSON: "STATE=N ..." of the states that are not 0, in enum order
states() {
	for s in NONE SYN_SENT SYN_RECV ESTABLISHED FIN_WAIT CLOSE_WAIT LAST_ACK TIME_WAIT CLOSE \
		SYN_SENT2; do
		n=$(f "$1" "conntrack.state.$s" value)
		[ "$n" = 0 ] || printf '%s=%s ' "$s" "$n"
	done
}

# A fresh namespace: an empty table, every state 0 (set, not unavailable).
expect_eq "empty: dump entries 0" 0 "$(f empty conntrack.dump.entries value)"
expect_eq "empty: every state 0" "" "$(states empty)"
expect_eq "empty: ESTABLISHED is 0, not unavailable" 0 "$(f empty conntrack.state.ESTABLISHED value)"
expect_eq "empty: source is the dump" "$DUMP" "$(f empty conntrack.state.ESTABLISHED source)"

# $N connections over lo, each held open by both ends. Each is ONE conntrack
# entry: the client's SYN creates it in OUTPUT (original tuple 127.0.0.1:EPH
# -> 127.0.0.1:5002), and every later packet, either way, matches it (the
# reply tuple is the swapped one); the handshake took it to ESTABLISHED.
# Nothing else runs in the namespace: entries = tcp = ESTABLISHED = 50.
# stale: each entry's timeout was reset to 432000 by its last packet, under
# 3600 s ago, so its remaining timeout is above 432000 - 3600: 0 stale.
expect_eq "held: dump entries = $N x 1" "$N" "$(f held conntrack.dump.entries value)"
expect_eq "held: dump tcp = $N" "$N" "$(f held conntrack.dump.tcp value)"
expect_eq "held: states" "ESTABLISHED=$N " "$(states held)"
expect_eq "held: none stale (all refreshed well within the hour)" 0 \
	"$(f held conntrack.stale.established value)"
expect_eq "held: agrees with CTA_STATS_GLOBAL_ENTRIES" "$N" "$(f held conntrack.stat.count value)"
expect_eq "held: established timeout as set" 432000 \
	"$(f held net.netfilter.nf_conntrack_tcp_timeout_established value)"
if [ -f "$TMP/held.L" ]; then
	expect_eq "held: conntrack -L shows $N ESTABLISHED" "$N" "$(grep -c ' ESTABLISHED ' "$TMP/held.L")"
else
	ok "conntrack -L comparison # SKIP conntrack not installed"
fi

# Closed $K from the client: client FIN (FIN_WAIT), server ACK (CLOSE_WAIT),
# server FIN (LAST_ACK), client ACK: TIME_WAIT, for 120 s. The other 40 stay.
expect_eq "closed $K: dump tcp still $N" "$N" "$(f closed conntrack.dump.tcp value)"
expect_eq "closed $K: states $((N - K)) + $K" "ESTABLISHED=$((N - K)) TIME_WAIT=$K " \
	"$(states closed)"
if [ -f "$TMP/closed.L" ]; then
	expect_eq "closed: conntrack -L shows $K TIME_WAIT" "$K" "$(grep -c ' TIME_WAIT ' "$TMP/closed.L")"
fi

# stale, without waiting an hour: the timeout is raised to 432000 + 3600 with
# no packet on the held connections, so each of the 40 ESTABLISHED entries has
# a remaining timeout <= 432000 (its last reset) = 435600 - 3600: all 40 stale.
# The TIME_WAIT entries are not ESTABLISHED: not counted.
expect_eq "stale: timeout 435600 read" 435600 \
	"$(f stale net.netfilter.nf_conntrack_tcp_timeout_established value)"
expect_eq "stale: the $((N - K)) ESTABLISHED entries are stale" "$((N - K))" \
	"$(f stale conntrack.stale.established value)"

# Without root the dump (CAP_NET_ADMIN) and the descriptors of root's
# tcp-hold are refused: every rule the root audit reports is still reported
# (tests/unprivileged.sh: those that need what was refused say so). The
# other network namespaces (root's processes') cannot be listed at all:
# netns.coverage says so at warning, in place of their rows.
if [ -f "$TMP/audit-nopriv.json" ]; then
	jq -r '[.findings[].rule] | unique | .[]' "$TMP/audit-root.json" >"$TMP/rules-root"
	jq -r '[.findings[].rule] | unique | .[]' "$TMP/audit-nopriv.json" >"$TMP/rules-nopriv"
	covered=$(jq -r '.findings[] | select(.rule == "netns.coverage") | .severity' "$TMP/audit-nopriv.json")
	expect_eq "as nobody: every rule of the root audit is reported" "" \
		"$(comm -23 "$TMP/rules-root" "$TMP/rules-nopriv" |
			if [ "$covered" = warning ]; then grep -v '^netns\.'; else cat; fi)"
else
	ok "audit as nobody # SKIP setpriv not installed"
fi

# The kernel's own /proc/net/nf_conntrack text of the same table, under
# --root: the same counts from the line parser.
"$HOSTTUNE" --no-measure --root "$TMP/held-tree" --format json facts >"$TMP/held-root.json"
expect_eq "held, /proc text: states" "ESTABLISHED=$N " "$(states held-root)"
expect_eq "held, /proc text: source" /proc/net/nf_conntrack \
	"$(f held-root conntrack.state.ESTABLISHED source)"
"$HOSTTUNE" --no-measure --root "$TMP/stale-tree" --format json facts >"$TMP/stale-root.json"
expect_eq "stale, /proc text: states" "ESTABLISHED=$((N - K)) TIME_WAIT=$K " "$(states stale-root)"
expect_eq "stale, /proc text: stale" "$((N - K))" "$(f stale-root conntrack.stale.established value)"
expect_eq "stale, /proc text: entries" "$N" "$(f stale-root conntrack.dump.entries value)"

# Without CAP_NET_ADMIN nfnetlink refuses the dump (EPERM) and
# /proc/net/nf_conntrack is 0440 root: unavailable EPERM, both said.
if [ -s "$TMP/nopriv.json" ]; then
	expect_eq "unprivileged: unavailable EPERM" "null EPERM" \
		"$(jget "$TMP/nopriv.json" '.facts["conntrack.state.ESTABLISHED"] | "\(.value) \(.error)"')"
	expect_eq "unprivileged: both sources said" \
		"$DUMP: EPERM (needs CAP_NET_ADMIN: run as root); /proc/net/nf_conntrack: EACCES" \
		"$(f nopriv conntrack.state.ESTABLISHED source)"
else
	ok "unprivileged # SKIP setpriv not installed"
fi

finish
