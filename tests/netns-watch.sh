# SPDX-License-Identifier: LGPL-2.1-or-later
# The watch library against a known load: in a fresh network namespace with
# an nftables ct rule (so conntrack tracks loopback), bench/storm opens 200
# connections a second, 800 in all, while `hosttune watch` samples every
# 250 ms for 3 s in the middle of it. The measured rates must be 200/s within
# 10 %, and the table must end with one entry per connection.
. "$(dirname "$0")/lib.sh"

RATE=200
N=800
WATCH_DUMP=${HT_WATCH_DUMP:-${HT_BUILD_TESTS_DIR:+$HT_BUILD_TESTS_DIR/watch-dump}}
STORM=${HT_STORM:-${HT_BUILD_TESTS_DIR:+$HT_BUILD_TESTS_DIR/../bench/storm}}

skip() {
	printf '# SKIP %s\n' "$1"
	exit 77
}

[ "$(id -u)" -eq 0 ] || skip "needs root (unshare -n, nft)"
command -v nft >/dev/null 2>&1 || skip "nft(8) not installed"
command -v unshare >/dev/null 2>&1 || skip "unshare(1) not installed"
for p in "$WATCH_DUMP" "$STORM"; do
	if [ -z "$p" ] || [ ! -x "$p" ]; then
		skip "watch-dump or storm not built (HT_BUILD_TESTS_DIR or HT_WATCH_DUMP, HT_STORM)"
	fi
done
unshare -n true 2>/dev/null || skip "unshare -n refused"
[ -e /proc/sys/net/netfilter/nf_conntrack_max ] || skip "nf_conntrack not loaded"

ct_ruleset "$TMP/ct.nft"

cat >"$TMP/inner.sh" <<'EOF'
set -u
ip link set lo up || exit 10
nft -f "$TMP/ct.nft" 2>"$TMP/nft.err" || exit 77
cat /proc/sys/net/netfilter/nf_conntrack_max >"$TMP/max"
# Connection i starts at i / RATE s: 0 .. 799 / 200 = 3.995 s, from source port
# 20000 + i: a tuple of its own each (the server closes first, so connect()
# could otherwise pick a freed port again and reopen that entry).
"$STORM" loop 127.0.0.1 0 --count "$N" --rate "$RATE" --workers 2 --sport-base 20000 \
	>"$TMP/storm.out" 2>"$TMP/storm.err" &
storm=$!
# The watch runs from about 0.5 s to 3.5 s: inside the storm at both ends.
sleep 0.5
# hosttune watch itself, with the default profile's headroom (workload.burst 2).
"$HOSTTUNE" --rules "$HT_RULES_DIR" --profile default --format json --interval 250ms \
	--duration 3s --record "$TMP/watch.record" watch >"$TMP/watch.json" 2>"$TMP/watch.err" || exit 11
wait "$storm" || exit 12
cat /proc/sys/net/netfilter/nf_conntrack_count >"$TMP/count"
if command -v conntrack >/dev/null 2>&1; then
	conntrack -L 2>/dev/null | grep -c ' TIME_WAIT ' >"$TMP/ct.tw"
fi
# After the storm: 250 ms x 2 = 0.5 s, 3 samples of a table that no longer grows.
"$WATCH_DUMP" 250 500 >"$TMP/after.json" 2>"$TMP/after.err" || exit 13
# Without CAP_NET_ADMIN: no events (EPERM), the count from /proc.
if command -v setpriv >/dev/null 2>&1; then
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
		"$WATCH_DUMP" 100 100 >"$TMP/nopriv.json" 2>"$TMP/nopriv.err" || exit 14
fi
exit 0
EOF
export TMP WATCH_DUMP STORM RATE N HOSTTUNE HT_RULES_DIR
unshare -n sh "$TMP/inner.sh"
rc=$?
[ "$rc" -eq 77 ] && skip "nft could not load a ct rule: $(head -n 1 "$TMP/nft.err")"
expect_eq "netns script ran (exit code)" 0 "$rc"
if [ "$rc" -ne 0 ]; then
	cat "$TMP/storm.err" "$TMP/watch.err" "$TMP/after.err" 2>/dev/null | sed 's/^/# /'
	finish
	exit 1
fi

w() { jget "$TMP/watch.json" "$1"; }
a() { jget "$TMP/after.json" "$1"; }
# within LO HI X: LO <= X <= HI for decimals (awk compares them as numbers).
within() { awk -v lo="$1" -v hi="$2" -v x="$3" 'BEGIN { exit !(x != "" && x >= lo && x <= hi) }'; }

expect_contains "storm made all $N connections" "objects=$N ok=$N failed=0" \
	"$(cat "$TMP/storm.out")"

# Every connection is one conntrack entry (127.0.0.1:20000+i <-> 127.0.0.1:PORT),
# closed with FIN, FIN, ACK: TIME_WAIT for 120 s, far longer than this test; the
# namespace had no entry before and no other traffic: count = 0 + 800 x 1 = 800.
expect_eq "count after the storm: 0 + $N x 1" "$N" "$(cat "$TMP/count")"
if [ -s "$TMP/ct.tw" ]; then
	expect_eq "conntrack -L: all $N in TIME_WAIT" "$N" "$(cat "$TMP/ct.tw")"
fi

# 3000 ms / 250 ms = 12 intervals: 13 samples, 0.250 s apart.
expect_eq "13 samples" 13 "$(w .samples)"
expect_eq "interval 0.25 s" 0.25 "$(w .interval)"
expect_eq "new connections counted from ctnetlink events" "ctnetlink NEW events" "$(w .source)"
# 200/s x 0.25 s = 50 connections an interval; one more or less at a boundary
# is 1 / 0.25 s = 4/s. 10 % of 200/s: 180 .. 220.
pir=$(w .peak_interval_rate)
if within 180 220 "$pir"; then ok "peak interval rate $pir within 10% of $RATE/s"; else
	not_ok "peak interval rate within 10% of $RATE/s" "got $pir"; fi
# The run (3 s) is shorter than the 5 s window: peak_rate is the rate over the
# whole run, the mean rate.
pr=$(w .peak_rate)
mr=$(w .mean_rate)
expect_eq "peak rate over a run under 5 s = mean rate" "$mr" "$pr"
# ... and says so: over the run, of 3.000 s (12 x 0.25 s), not over 5 s.
expect_eq "peak rate over the run" run "$(w .peak_rate_over)"
expect_eq "peak rate span = duration" "$(w .duration)" "$(w .peak_rate_span)"
expect_contains "record t to the nanosecond" "0.000000000 " "$(sed -n 2p "$TMP/watch.record")"
if within 180 220 "$pr"; then ok "peak rate $pr within 10% of $RATE/s"; else
	not_ok "peak rate within 10% of $RATE/s" "got $pr"; fi
# The window (0.5 .. 3.5 s) lies inside the storm (0 .. 3.995 s), so the mean
# over it, inserts / duration, is the paced rate as well: 180 .. 220.
if within 180 220 "$mr"; then ok "mean rate $mr within 10% of $RATE/s"; else
	not_ok "mean rate within 10% of $RATE/s" "got $mr"; fi
# The record agrees: (insert of the last line - of the first) / (t last - t first).
# Its t is to the nanosecond (9 decimals), so the only difference is the
# rounding: mean_rate printed with 1 decimal (off by at most 0.05) and this
# one with 3 (0.0005): they agree within 0.06/s.
rec_mean=$(awk 'NR == 2 { t0 = $1; i0 = $4 } NR > 1 { t = $1; i = $4 }
	END { printf "%.3f", (i - i0) / (t - t0) }' "$TMP/watch.record")
lo=$(awk -v m="$mr" 'BEGIN { print m - 0.06 }')
hi=$(awk -v m="$mr" 'BEGIN { print m + 0.06 }')
if within "$lo" "$hi" "$rec_mean"; then
	ok "the record's inserts / duration $rec_mean = mean_rate $mr"
else not_ok "the record's inserts / duration = mean_rate" "record $rec_mean, summary $mr"; fi
expect_eq "record: a header and 13 sample lines" "# hosttune watch 1 13" \
	"$(head -n 1 "$TMP/watch.record") $(($(wc -l <"$TMP/watch.record") - 1))"
# A table of 262144 (or whatever the host's max) is far from full.
expect_eq "no drops" 0 "$(w .drops)"
expect_eq "never at the cap" 0 "$(w .pinned_samples)"
# The entries seen: between 0.5 s x 200 = 100 and 3.995 s x 200 ~ 800.
pc=$(w .peak_count)
if within 100 800 "$pc"; then ok "peak count $pc within 100 .. $N"; else
	not_ok "peak count within 100 .. $N" "got $pc"; fi

# After the storm the table holds the 800 entries; nothing new arrives.
expect_eq "after: peak count = $N" "$N" "$(a .peak_count)"
expect_eq "after: peak rate 0" 0 "$(a .peak_rate)"
expect_eq "after: peak interval rate 0" 0 "$(a .peak_interval_rate)"
expect_eq "after: 500 / 250 + 1 = 3 samples" 3 "$(a .samples)"
# 800 x headroom 2 = 1600 -> pow2ceil 2048; never below the current max.
max=$(cat "$TMP/max")
want=$((max > 2048 ? max : 2048))
expect_eq "after: recommended max(pow2ceil(800 x 2) = 2048, max $max)" "$want" \
	"$(a .recommended_max)"
expect_eq "after: basis count" count "$(a .basis)"
# TIME_WAIT is 120 s in a fresh namespace (tcp_timeouts[], nf_conntrack_proto_tcp.c).
expect_eq "after: ceiling = max / 120 s" "$(awk -v m="$max" 'BEGIN { printf "%.1f", m / 120 }')" \
	"$(printf '%.1f' "$(a .ceiling)")"

if [ -s "$TMP/nopriv.json" ]; then
	expect_eq "unprivileged: no events, says why" "unknown: ctnetlink NEW events: EPERM" \
		"$(jget "$TMP/nopriv.json" .source)"
	expect_eq "unprivileged: count from /proc still $N" "$N" \
		"$(jget "$TMP/nopriv.json" .peak_count)"
	expect_eq "unprivileged: no rate" null "$(jget "$TMP/nopriv.json" .peak_rate)"
else
	ok "unprivileged run # SKIP setpriv not installed"
fi

finish
