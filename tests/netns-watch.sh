# SPDX-License-Identifier: LGPL-2.1-or-later
# The watch library against a known load: in a fresh network namespace with
# an nftables ct rule (so conntrack tracks loopback), bench/storm opens 200
# connections a second, 800 in all, while `hosttune watch` samples every
# 250 ms for 3 s in the middle of it. The measured rates must be 200/s within
# 10 %, and the table must end with one entry per connection.
# Then lost events, forced: the watch's event receive buffer made tiny (a
# few events, HOSTTUNE_WATCH_TEST_RCVBUF, read only at samples: a hook that
# only tests/hosttune-hooks, the test build of hosttune, has) while LN more
# connections come: the summary, the record and audit --observed must say
# that events were lost and that the rates are lower bounds, and the count
# must never pass the connections made.
. "$(dirname "$0")/lib.sh"

RATE=200
N=800
LN=200
WATCH_DUMP=${HT_WATCH_DUMP:-${HT_BUILD_TESTS_DIR:+$HT_BUILD_TESTS_DIR/watch-dump}}
STORM=${HT_STORM:-${HT_BUILD_TESTS_DIR:+$HT_BUILD_TESTS_DIR/../bench/storm}}
HOOKS=${HT_HOOKS:-${HT_BUILD_TESTS_DIR:+$HT_BUILD_TESTS_DIR/hosttune-hooks}}

skip() {
	printf '# SKIP %s\n' "$1"
	exit 77
}

[ "$(id -u)" -eq 0 ] || skip "needs root (unshare -n, nft)"
command -v nft >/dev/null 2>&1 || skip "nft(8) not installed"
command -v unshare >/dev/null 2>&1 || skip "unshare(1) not installed"
for p in "$WATCH_DUMP" "$STORM" "$HOOKS"; do
	if [ -z "$p" ] || [ ! -x "$p" ]; then
		skip "watch-dump, storm or hosttune-hooks not built (HT_BUILD_TESTS_DIR or HT_WATCH_DUMP, HT_STORM, HT_HOOKS)"
	fi
done
unshare -n true 2>/dev/null || skip "unshare -n refused"
[ -e /proc/sys/net/netfilter/nf_conntrack_max ] || skip "nf_conntrack not loaded"
host_lock "connection rates against the clock and the global nf_conntrack_max"

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
# samples FILE: the sample lines of a record so far (0 before it exists).
samples() { cat "$1" 2>/dev/null | grep -c '^[0-9]'; }
# wait_samples FILE N: until the record FILE has N sample lines (at most 10 s).
wait_samples() {
	i=0
	while [ "$(samples "$1")" -lt "$2" ]; do
		i=$((i + 1))
		[ "$i" -gt 200 ] && return 1
		sleep 0.05
	done
}
# Lost events: a 4096-byte receive buffer (the kernel doubles it: a few events)
# read only at the samples, 100 ms apart, while LN connections come at 400/s,
# 40 an interval. Once in JSON, once in text; each watch runs from before its
# storm (its first sample is written) to two samples after it.
base=30000
for fmt in json text; do
	HOSTTUNE_WATCH_TEST_RCVBUF=4096 "$HOOKS" --rules "$HT_RULES_DIR" --profile default \
		--format "$fmt" --interval 100ms --duration 0 --record "$TMP/lost-$fmt.record" watch \
		>"$TMP/lost-$fmt.out" 2>"$TMP/lost-$fmt.err" &
	wpid=$!
	wait_samples "$TMP/lost-$fmt.record" 1 || exit 15
	"$STORM" loop 127.0.0.1 0 --count "$LN" --rate 400 --workers 2 --sport-base "$base" \
		>"$TMP/lost-$fmt.storm" 2>&1 || exit 16
	after=$(samples "$TMP/lost-$fmt.record")
	wait_samples "$TMP/lost-$fmt.record" $((after + 2)) || exit 17
	kill -INT "$wpid"
	wait "$wpid" || exit 18
	base=$((base + LN))
done
exit 0
EOF
export TMP WATCH_DUMP STORM RATE N LN HOSTTUNE HOOKS HT_RULES_DIR
unshare -n sh "$TMP/inner.sh"
rc=$?
[ "$rc" -eq 77 ] && skip "nft could not load a ct rule: $(head -n 1 "$TMP/nft.err")"
expect_eq "netns script ran (exit code)" 0 "$rc"
if [ "$rc" -ne 0 ]; then
	cat "$TMP/storm.err" "$TMP/watch.err" "$TMP/after.err" "$TMP"/lost-*.err \
		"$TMP"/lost-*.storm 2>/dev/null | sed 's/^/# /'
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
expect_eq "record: the column names on line 2" \
	"# t count max insert drop early_drop time_wait lost overruns" "$(sed -n 2p "$TMP/watch.record")"
expect_contains "record t to the nanosecond" "0.000000000 " "$(sed -n 3p "$TMP/watch.record")"
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
expect_eq "record: a header, the column names and 13 sample lines" "# hosttune watch 2 13" \
	"$(head -n 1 "$TMP/watch.record") $(($(wc -l <"$TMP/watch.record") - 2))"
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

# No loss in the paced run (an 8 MiB buffer, read as events come): exact, and said so.
expect_eq "paced run: no lost events" "false 0 0 0" \
	"$(jq -r '"\(.rate_lower_bound) \(.intervals_short) \(.events_lost) \(.overruns)"' "$TMP/watch.json")"

# ---- lost events, forced ----
l() { jget "$TMP/lost-json.out" "$1"; }
expect_contains "lost: storm made all $LN connections" "objects=$LN ok=$LN failed=0" \
	"$(cat "$TMP/lost-json.storm")"
# 40 events an interval into a buffer of a few: every interval overruns.
lost=$(l .events_lost)
overruns=$(l .overruns)
inserts=$(l .inserts)
if [ "$overruns" -gt 0 ] 2>/dev/null; then ok "lost: overruns counted ($overruns)"; else
	not_ok "lost: overruns counted" "got '$overruns'"; fi
if [ "$lost" -gt 0 ] 2>/dev/null; then ok "lost: events dropped at the queue counted ($lost)"; else
	not_ok "lost: events dropped at the queue counted" "got '$lost'"; fi
expect_eq "lost: the summary says the rates are lower bounds" true "$(l .rate_lower_bound)"
short=$(l .intervals_short)
if [ "$short" -gt 0 ] 2>/dev/null; then ok "lost: $short intervals marked short"; else
	not_ok "lost: intervals marked short" "got '$short'"; fi
# The count never passes the truth: each of the LN connections is one new
# entry, and nothing else made one. Below the truth only with the flag (set).
if [ "$inserts" -le "$LN" ] 2>/dev/null; then ok "lost: counted $inserts <= $LN made"; else
	not_ok "lost: counted <= made" "counted '$inserts', made $LN"; fi
# The kernel's drop counter gives every dropped event: received + dropped = LN.
expect_eq "lost: received + dropped (the kernel's drop counter) = $LN" "$LN" "$inserts"
# The record: version 2, its last line lost > 0 and overruns > 0, insert LN.
expect_eq "lost: record header" "# hosttune watch 2" "$(head -n 1 "$TMP/lost-json.record")"
expect_eq "lost: record's last line: insert, lost, overruns as the summary" \
	"$LN $lost $overruns" "$(tail -n 1 "$TMP/lost-json.record" | awk '{ print $4, $8, $9 }')"
# The text summary, from its own run.
expect_contains "lost: the text names the overruns" "receive-queue overrun" \
	"$(cat "$TMP/lost-text.out")"
expect_contains "lost: the text says lower bounds" \
	"The counted rates are lower bounds: the true ones may be higher." "$(cat "$TMP/lost-text.out")"
expect_contains "lost: the text's peak is 'at least'" "peak at least " "$(cat "$TMP/lost-text.out")"
# audit --observed of the record says the rate is a lower bound.
ROOT=$FIXTURES/garage-vm/root
ht --root "$ROOT" --profile garage --observed "$TMP/lost-json.record" --format json audit \
	>"$TMP/lost-audit.json" 2>"$TMP/lost-audit.err"
expect_contains "lost: audit --observed says the rate is a lower bound" \
	"is a lower bound of the peak rate" \
	"$(jget "$TMP/lost-audit.json" '.findings[] | select(.rule == "conntrack.max") | .explanation')"
expect_contains "lost: audit --observed names the overruns" "$overruns overrun" \
	"$(jget "$TMP/lost-audit.json" '.findings[] | select(.rule == "conntrack.max") | .explanation')"

finish
