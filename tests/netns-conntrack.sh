# SPDX-License-Identifier: LGPL-2.1-or-later
# conntrack.stat.* facts: ctnetlink in a fresh network namespace with known
# traffic, the /proc/net/stat/nf_conntrack fallback on fixture trees.
# The tests never touch the host: the live part runs in `unshare -n`.
# Needs: tests/tcp-churn (the Makefile exports HT_BUILD_TESTS_DIR; HT_TCP_CHURN
# overrides), root, nft and a kernel with nf_tables + conntrack for the live
# part, which is skipped (with a "# SKIP" line) when any is missing.
. "${HT_TESTS_DIR:-$(dirname "$0")}/lib.sh"

PS=$FIXTURES/proc-stat
SRC_PROC=/proc/net/stat/nf_conntrack

# facts_json ROOT OUT: the facts of a --root tree as JSON into OUT; hosttune
# must exit 0 and print nothing on stderr (sanitizer reports go there).
facts_json() {
	if ! "$HOSTTUNE" --no-measure --root "$1" --format json facts >"$2" 2>"$2.err" ||
		[ -s "$2.err" ]; then
		not_ok "hosttune --root $1 runs cleanly" "$(head -c 2000 "$2.err")"
	fi
}

# cfact JSON NAME FIELD: field of conntrack.stat.NAME in a --format json facts output
cfact() {
	jget "$1" ".facts[\"conntrack.stat.$2\"].$3"
}

# ---- /proc/net/stat/nf_conntrack under --root ----

# two-cpu: the header of 6.x kernels (ct_cpu_seq_show() in
# net/netfilter/nf_conntrack_standalone.c), two CPU rows. Other columns
# (found, insert, ...) hold nonzero values so a wrong column would show.
#   drop:           0x1731 + 0x10 = 5937 + 16 = 5953
#                   (0x1731 = 1*4096 + 7*256 + 3*16 + 1 = 4096 + 1792 + 48 + 1)
#   early_drop:     0x3 + 0x5 = 8
#   insert_failed:  0xc + 0x1 = 12 + 1 = 13
#   search_restart: 0x100 + 0xff = 256 + 255 = 511
#   entries:        0x2a = 2*16 + 10 = 42 on both rows: the global count,
#                   taken once (not 84)
facts_json "$PS/two-cpu" "$TMP/two.json"
expect_eq "two-cpu: drop summed over CPUs" 5953 "$(cfact "$TMP/two.json" drop value)"
expect_eq "two-cpu: early_drop" 8 "$(cfact "$TMP/two.json" early_drop value)"
expect_eq "two-cpu: insert_failed" 13 "$(cfact "$TMP/two.json" insert_failed value)"
expect_eq "two-cpu: search_restart" 511 "$(cfact "$TMP/two.json" search_restart value)"
expect_eq "two-cpu: entries taken once" 42 "$(cfact "$TMP/two.json" count value)"
# early_drop counts entries evicted to make room, not packets.
expect_eq "two-cpu: units" "packets entries packets lookups entries" \
	"$(jget "$TMP/two.json" '[.facts["conntrack.stat.drop","conntrack.stat.early_drop",
		"conntrack.stat.insert_failed","conntrack.stat.search_restart",
		"conntrack.stat.count"].unit] | join(" ")')"
for n in drop early_drop insert_failed search_restart count; do
	expect_eq "two-cpu: $n source" "$SRC_PROC" \
		"$(jget "$TMP/two.json" ".facts[\"conntrack.stat.$n\"].source")"
done

# The text format says the same.
"$HOSTTUNE" --no-measure --root "$PS/two-cpu" facts >"$TMP/two.facts"
expect_contains "two-cpu: facts file line" \
	"conntrack.stat.drop = 5953 packets from $SRC_PROC" "$(cat "$TMP/two.facts")"

# old-kernel: the header of kernels from before the search_restart counter
# ("entries  searched found ... expect_delete", rows ending in "%08x \n"),
# four CPU rows.
#   drop:          1 + 2 + 3 + 4 = 10
#   insert_failed: 0xa + 0x14 + 0x1e + 0x28 = 10 + 20 + 30 + 40 = 100
#   early_drop:    0 on every row = 0
#   entries:       0xabc = 10*256 + 11*16 + 12 = 2560 + 176 + 12 = 2748, once
#   search_restart: no column -> unavailable ENOENT
facts_json "$PS/old-kernel" "$TMP/old.json"
expect_eq "old-kernel: drop" 10 "$(cfact "$TMP/old.json" drop value)"
expect_eq "old-kernel: insert_failed" 100 "$(cfact "$TMP/old.json" insert_failed value)"
expect_eq "old-kernel: early_drop" 0 "$(cfact "$TMP/old.json" early_drop value)"
expect_eq "old-kernel: entries" 2748 "$(cfact "$TMP/old.json" count value)"
expect_eq "old-kernel: search_restart unavailable" "null ENOENT" \
	"$(jget "$TMP/old.json" '.facts["conntrack.stat.search_restart"] | "\(.value) \(.error)"')"
expect_contains "old-kernel: search_restart says which column is missing" \
	"no search_restart column" \
	"$(cfact "$TMP/old.json" search_restart source)"

# expect_all_unavailable DESC JSON ERRNO REASON: all five facts null with
# ERRNO and the path as source; the JSON reason (strerror) contains REASON.
expect_all_unavailable() {
	for n in drop early_drop insert_failed search_restart count; do
		got="$(cfact "$2" "$n" value) $(cfact "$2" "$n" error)"
		got="$got $(cfact "$2" "$n" source)"
		expect_eq "$1: conntrack.stat.$n unavailable" "null $3 $SRC_PROC" "$got"
	done
	expect_contains "$1: a reason is given" "$4" \
		"$(jget "$2" '.facts["conntrack.stat.drop"].reason')"
}

# bad-row: the two-cpu file with one hex digit replaced by "g" (0000001g).
facts_json "$PS/bad-row" "$TMP/bad.json"
expect_all_unavailable "bad-row" "$TMP/bad.json" EINVAL "Invalid argument"

# No file at all (nf_conntrack not loaded on the host the tree comes from).
mkdir -p "$TMP/absent/proc/net/stat"
facts_json "$TMP/absent" "$TMP/absent.json"
expect_all_unavailable "absent" "$TMP/absent.json" ENOENT "No such file"

# More unparsable shapes, each a tree of its own: an empty file, a header
# without CPU rows, a row one column short, a header that does not start with
# "entries" (every kernel's first column), text that is no table at all.
# H and R: the header and first row of the two-cpu fixture.
H=$(sed -n 1p "$PS/two-cpu$SRC_PROC")
R=$(sed -n 2p "$PS/two-cpu$SRC_PROC")
i=0
for text in "" "$H" "$H
${R% *}" "found drop
00000001 00000002" "hello world"; do
	i=$((i + 1))
	mkdir -p "$TMP/bad$i/proc/net/stat"
	printf '%s\n' "$text" >"$TMP/bad$i/proc/net/stat/nf_conntrack"
	facts_json "$TMP/bad$i" "$TMP/bad$i.json"
	expect_all_unavailable "unparsable #$i" "$TMP/bad$i.json" EINVAL "Invalid argument"
done

# ---- ctnetlink in a fresh network namespace ----

N=50
CHURN=${HT_TCP_CHURN:-${HT_BUILD_TESTS_DIR:+$HT_BUILD_TESTS_DIR/tcp-churn}}

skip_live() {
	printf '# SKIP ctnetlink part: %s\n' "$1"
	finish
	exit $?
}

[ "$(id -u)" -eq 0 ] || skip_live "needs root (unshare -n, nft)"
command -v nft >/dev/null 2>&1 || skip_live "nft(8) not installed"
if [ -z "$CHURN" ] || [ ! -x "$CHURN" ]; then
	skip_live "tcp-churn not built (set HT_BUILD_TESTS_DIR or HT_TCP_CHURN)"
fi
unshare -n true 2>/dev/null || skip_live "unshare -n refused"

ct_ruleset "$TMP/ct.nft"

# Runs inside the namespace; leaves its observations in $TMP.
cat >"$TMP/inner.sh" <<'EOF'
set -u
ip link set lo up || exit 10
nft -f "$TMP/ct.nft" 2>"$TMP/nft.err" || exit 77
"$HOSTTUNE" --no-measure --format json facts >"$TMP/before.json" 2>"$TMP/before.err" || exit 11
"$CHURN" 127.0.0.1 5001 "$N" >"$TMP/churn.out" || exit 12
"$HOSTTUNE" --no-measure --format json facts >"$TMP/after.json" 2>"$TMP/after.err" || exit 13
cat /proc/sys/net/netfilter/nf_conntrack_count >"$TMP/sysctl.count"
cat /proc/net/stat/nf_conntrack >"$TMP/proc.stat"
if command -v conntrack >/dev/null 2>&1; then
	conntrack -C >"$TMP/ct.C" 2>/dev/null
	conntrack -S >"$TMP/ct.S" 2>/dev/null
	conntrack -L >"$TMP/ct.L" 2>/dev/null
fi
# Without CAP_NET_ADMIN nfnetlink refuses with EPERM (nfnetlink_rcv()):
# the /proc fallback must give the same numbers.
if command -v setpriv >/dev/null 2>&1; then
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		--bounding-set=-all "$HOSTTUNE" --no-measure --format json facts \
		>"$TMP/nopriv.json" 2>"$TMP/nopriv.err" || exit 14
fi
exit 0
EOF
export TMP CHURN N HOSTTUNE
unshare -n sh "$TMP/inner.sh"
rc=$?
[ "$rc" -eq 77 ] && skip_live "nft could not load a ct rule: $(head -n 1 "$TMP/nft.err")"
expect_eq "netns setup and runs (exit code of the namespace script)" 0 "$rc"
[ "$rc" -eq 0 ] || { finish; exit 1; }

expect_eq "hosttune printed nothing on stderr in the namespace" "" \
	"$(cat "$TMP/before.err" "$TMP/after.err" "$TMP/nopriv.err" 2>/dev/null)"

# A fresh namespace has no conntrack entries of its own: count starts at 0.
expect_eq "fresh netns: count 0 before any traffic" 0 "$(cfact "$TMP/before.json" count value)"

expect_eq "tcp-churn completed $N connections" "$N" "$(cat "$TMP/churn.out")"

# Each connection is one conntrack entry (one tuple pair: 127.0.0.1:EPHEMERAL
# <-> 127.0.0.1:5001), closed with FIN/FIN/ACK, so it stays in TIME_WAIT for
# nf_conntrack_tcp_timeout_time_wait (120 s by default, far longer than this
# test). The client closes first, so its TIME_WAIT socket keeps its port
# from being reused, and no other traffic exists in the namespace:
# count = 0 (before) + 50 connections x 1 entry = 50, exactly.
expect_eq "count after $N connections: 0 + $N x 1" "$N" "$(cfact "$TMP/after.json" count value)"
expect_eq "count agrees with nf_conntrack_count" "$(cat "$TMP/sysctl.count")" \
	"$(cfact "$TMP/after.json" count value)"
for n in drop early_drop insert_failed search_restart; do
	expect_eq "$n source is ctnetlink" "ctnetlink IPCTNL_MSG_CT_GET_STATS_CPU" \
		"$(cfact "$TMP/after.json" "$n" source)"
done
expect_eq "count source is ctnetlink" "ctnetlink IPCTNL_MSG_CT_GET_STATS" \
	"$(cfact "$TMP/after.json" count source)"
# 50 sequential connections on an otherwise idle table: nothing dropped,
# no insert clash (clashes need two packets of one new flow racing on two CPUs).
expect_eq "drop = 0" 0 "$(cfact "$TMP/after.json" drop value)"
expect_eq "insert_failed = 0" 0 "$(cfact "$TMP/after.json" insert_failed value)"
expect_eq "early_drop = 0 (table far from full)" 0 "$(cfact "$TMP/after.json" early_drop value)"

# /proc/net/stat/nf_conntrack of the namespace: 50 = 0x32 in the entries column.
expect_eq "proc entries column: 50 = 0x32" 00000032 "$(sed -n '2{s/ .*//;p;}' "$TMP/proc.stat")"

if [ -s "$TMP/ct.C" ]; then
	expect_eq "conntrack -C agrees" "$(cat "$TMP/ct.C")" \
		"$(cfact "$TMP/after.json" count value)"
	expect_eq "conntrack -L: $N entries in TIME_WAIT" "$N" \
		"$(grep -c ' TIME_WAIT ' "$TMP/ct.L")"
	# conntrack -S: one "cpu=N key=value ..." line per CPU; sum each counter.
	for n in drop early_drop insert_failed search_restart; do
		sum=$(tr ' \t' '\n' <"$TMP/ct.S" |
			awk -F= -v k="$n" '$1 == k { s += $2 } END { print s + 0 }')
		expect_eq "conntrack -S $n (summed over CPUs) agrees" "$sum" \
			"$(cfact "$TMP/after.json" "$n" value)"
	done
else
	ok "conntrack(8) comparisons # SKIP conntrack not installed"
fi

if [ -s "$TMP/nopriv.json" ]; then
	expect_eq "unprivileged: count from /proc still $N" "$N" \
		"$(cfact "$TMP/nopriv.json" count value)"
	expect_eq "unprivileged: falls back to /proc, says why" \
		"$SRC_PROC (ctnetlink IPCTNL_MSG_CT_GET_STATS_CPU: EPERM (needs CAP_NET_ADMIN: run as root))" \
		"$(cfact "$TMP/nopriv.json" drop source)"
	expect_eq "unprivileged: drop from /proc = 0" 0 "$(cfact "$TMP/nopriv.json" drop value)"
else
	ok "unprivileged fallback # SKIP setpriv not installed"
fi

finish
