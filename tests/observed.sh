#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# audit --observed FILE sizes nf_conntrack_max from a `hosttune watch`
# recording instead of the profile's guessed rate. The recording
# (tests/fixtures/storm.record) is bench/conntrack-storm's "before" run: a
# cap of 4096, TIME_WAIT 120 s, pinned for 237 samples.
. "$(dirname "$0")/lib.sh"

R=$FIXTURES/storm.record
ROOT=$FIXTURES/garage-vm/root
ht --root "$ROOT" --profile garage --observed "$R" --format json audit >"$TMP/o.json"
expect_eq "audit --observed: exit 1 (findings)" 1 $?
f() { jget "$TMP/o.json" ".findings[] | select(.rule == \"conntrack.max\") | $1"; }
# The replay (tests/test-watch.c works the figures out from the file): peak
# count 4096, peak rate over 5 s: insert 0 at t = 0.000 to 4096 at t = 5.000,
# 4096 / 5 s = 819.2/s (over the one interval 0.500 -> 0.750 it is
# (4096 - 18) / 0.25 s = 16312/s, which is not what the table holds for
# TIME_WAIT). Working set at the garage TIME_WAIT of 30 s:
# max(819.2 x 30, 4096) x burst 3 = 24576 x 3 = 73728 -> 131072, held to the
# budget: 503316480 x 0.05 / 328 = 76725 -> 65536.
expect_eq "recommended max" 65536 "$(f .recommended)"
# It covers the recorded peak with the profile's headroom: 4096 x 3 = 12288 <= 65536.
[ "$(f .recommended)" -ge 12288 ] && ok "covers the recorded peak x headroom" ||
	not_ok "covers the recorded peak x headroom"
expect_contains "the recording is named" "The recording ($R) peaked at 4096 entries" "$(f .explanation)"
expect_contains "the rate comes from the recording" "max(819.2/s, the recording's peak" \
	"$(f .explanation)"
expect_contains "pinned samples" "pinned at its cap of 4096 for 237 samples" "$(f .explanation)"
expect_contains "the budget is the limit" "bucket allows 65536 entries. Recommended 65536:" "$(f .explanation)"
expect_eq "observed facts are facts" 819.2 \
	"$(ht --root "$ROOT" --profile garage --observed "$R" --format json audit | jq '.values["conntrack.rate"]')"

# With a budget that fits (half the RAM): 503316480 x 0.5 / 328 = 767251 entries
# allowed; the working set's 131072 (73728 -> 2^17, above) fits: 131072.
ht --root "$ROOT" --profile garage --set workload.mem_budget=0.5 --observed "$R" --format json audit \
	>"$TMP/o2.json"
expect_eq "half the RAM: 131072" 131072 \
	"$(jget "$TMP/o2.json" '.findings[] | select(.rule == "conntrack.max") | .recommended')"

# A recording without rates (made without CAP_NET_ADMIN: '-' in the insert
# column) sizes from its peak count: 60000 x burst 3 = 180000 -> 262144,
# within half the RAM's budget (524288).
printf '# hosttune watch 1\n0.000 20000 65536 - 10 0 120\n1.000 40000 65536 - 10 0 120\n2.000 60000 65536 - 10 0 120\n' \
	>"$TMP/norate.record"
ht --root "$ROOT" --profile garage --set workload.mem_budget=0.5 --observed "$TMP/norate.record" \
	--format json audit >"$TMP/o3.json"
expect_eq "no rates: sized from the peak count" 262144 \
	"$(jget "$TMP/o3.json" '.findings[] | select(.rule == "conntrack.max") | .recommended')"
expect_contains "no rates: says so" \
	"the recorded peak count 60000 x 3 (the recording has no connection rate: it was made without CAP_NET_ADMIN, so without ctnetlink events) = 180000 entries" \
	"$(jget "$TMP/o3.json" '.findings[] | select(.rule == "conntrack.max") | .explanation')"

# A recording that lost events (version 2: insert lost overruns): t = 0 .. 3 s,
# 1000, 1500 and 500 new; in 1 -> 2 the queue overran once and 600 events were
# dropped there, counted by the kernel. Peak (run under 5 s): 3000 / 3 s =
# 1000/s, a lower bound, and the audit says so.
printf '# hosttune watch 2\n0 0 4096 0 0 0 120 0 0\n1 1000 4096 1000 0 0 120 0 0\n2 4096 4096 2500 5 0 120 600 1\n3 4096 4096 3000 10 0 120 600 1\n' \
	>"$TMP/lost.record"
ht --root "$ROOT" --profile garage --observed "$TMP/lost.record" --format json audit >"$TMP/o4.json"
x() { jget "$1" '.findings[] | select(.rule == "conntrack.max") | .explanation'; }
expect_contains "lost events: the rate is a lower bound" \
	"The recording lost NEW events (1 overrun of watch's receive queue, 600 events counted from the kernel's drop counter), so 1000/s is a lower bound of the peak rate, and the working set below is a lower bound too." \
	"$(x "$TMP/o4.json" | tr '\n' ' ' | tr -s ' ')"
expect_eq "lost events: the rate is still used" 1000 "$(jq '.values["conntrack.rate"]' "$TMP/o4.json")"
# The same without the overrun and the drops: no such sentence.
printf '# hosttune watch 2\n0 0 4096 0 0 0 120 0 0\n1 1000 4096 1000 0 0 120 0 0\n2 4096 4096 2500 5 0 120 0 0\n3 4096 4096 3000 10 0 120 0 0\n' \
	>"$TMP/nolost.record"
ht --root "$ROOT" --profile garage --observed "$TMP/nolost.record" --format json audit >"$TMP/o5.json"
case "$(x "$TMP/o5.json")" in
*"lower bound"*) not_ok "no overrun: no lower bound" "$(x "$TMP/o5.json")" ;;
*) ok "no overrun: no lower bound" ;;
esac
# A version-1 recording with a sample after an overrun ('-'): the intervals
# around it have no count, so its rates are lower bounds too.
printf '# hosttune watch 1\n0 0 4096 0 0 0 120\n1 1000 4096 1000 0 0 120\n2 4096 4096 - 5 0 120\n3 4096 4096 3000 10 0 120\n' \
	>"$TMP/v1lost.record"
ht --root "$ROOT" --profile garage --observed "$TMP/v1lost.record" --format json audit >"$TMP/o6.json"
expect_contains "version 1, '-' after an overrun: a lower bound" \
	"The recording lost NEW events, so 1000/s is a lower bound of the peak rate" \
	"$(x "$TMP/o6.json" | tr '\n' ' ' | tr -s ' ')"

# A recording that is not one: FILE:LINE:COL, exit 2.
printf '# hosttune watch 1\n0.0 12 x\n' >"$TMP/bad.record"
ht --root "$ROOT" --observed "$TMP/bad.record" audit 2>"$TMP/err" >/dev/null
expect_eq "bad recording: exit 2" 2 $?
expect_contains "bad recording: position" "$TMP/bad.record:2:" "$(cat "$TMP/err")"

# A count no kernel keeps (2^63 - 1; the kernel's is an int, at most 2^31 - 1):
# one line naming the file, the sample and what was expected, exit 2. (Through
# a double it once became 2^63 and undefined behaviour.)
printf '# hosttune watch 1\n0 9223372036854775807 4096 - - - 120\n' >"$TMP/huge.record"
ht --root "$ROOT" --observed "$TMP/huge.record" audit 2>"$TMP/err" >/dev/null
expect_eq "count 2^63 - 1: exit 2" 2 $?
expect_eq "count 2^63 - 1: the message" \
	"hosttune: $TMP/huge.record: sample 1 (t = 0 s): expected count at most 2147483647 (an int in the kernel), found 9223372036854775807" \
	"$(cat "$TMP/err")"

# A rate no host sees: insert 0 -> 2^62 = 4611686018427387904 in 0.5 s,
# 2^62 / 0.5 s = 2^63 = 9223372036854775808/s (exact in binary); the run is
# shorter than 5 s, so that is the peak rate too.
printf '# hosttune watch 1\n0.000000000 4096 4096 0 0 0 120\n0.500000000 4096 4096 4611686018427387904 0 0 120\n' \
	>"$TMP/hugerate.record"
ht --root "$ROOT" --observed "$TMP/hugerate.record" audit 2>"$TMP/err" >/dev/null
expect_eq "rate 2^63/s: exit 2" 2 $?
expect_eq "rate 2^63/s: the message" \
	"hosttune: $TMP/hugerate.record: expected a peak rate of at most 2147483647 new connections/s, found 9223372036854775808.0/s" \
	"$(cat "$TMP/err")"

# Lost events are part of insert (insert = received + lost): a record where
# lost grows by 500 while insert grows by 10 is not one watch writes.
printf '# hosttune watch 2\n0 10 4096 0 0 0 120 0 0\n1 10 4096 10 0 0 120 500 1\n' \
	>"$TMP/lost.record"
ht --root "$ROOT" --observed "$TMP/lost.record" audit 2>"$TMP/err" >/dev/null
expect_eq "lost above insert: exit 2" 2 $?
expect_eq "lost above insert: the message" \
	"hosttune: $TMP/lost.record:3:1: expected lost to grow by at most insert's 10 (lost events are part of insert), found 500" \
	"$(cat "$TMP/err")"
# insert 0 -> 2^63 - 1, back to 0 (counting restarted), 2^63 - 1 again: the
# run's sum of differences, 2 x (2^63 - 1), does not fit; the line that
# passes it is named (line 5, the fourth sample).
printf '# hosttune watch 2\n0 10 4096 0 0 0 120 0 0\n1 10 4096 9223372036854775807 0 0 120 0 0\n2 10 4096 0 0 0 120 0 0\n3 10 4096 9223372036854775807 0 0 120 0 0\n' \
	>"$TMP/sum.record"
ht --root "$ROOT" --observed "$TMP/sum.record" audit 2>"$TMP/err" >/dev/null
expect_eq "sum past 2^63 - 1: exit 2" 2 $?
expect_eq "sum past 2^63 - 1: the message" \
	"hosttune: $TMP/sum.record:5:1: expected counts whose sums since the first sample stay within 2^63 - 1, found a sum past it" \
	"$(cat "$TMP/err")"

# watch refuses a duration shorter than its interval (it would run a whole
# interval, 3 s for --duration 1s), before it samples anything: exit 2.
ht --interval 3s --duration 1s watch 2>"$TMP/err" >/dev/null
expect_eq "watch --interval 3s --duration 1s: exit 2" 2 $?
expect_contains "watch: says why" \
	"hosttune: --duration 1s is shorter than --interval 3s: expected 0 (until Ctrl-C) or at least one interval" \
	"$(cat "$TMP/err")"

finish
