#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# `storm model`, the max / TIME_WAIT model the storm bench sets beside each
# measured row, against the arithmetic done by hand for the field's ingest:
# N = 6600 objects, 8 workers, paced at 570/s, fetch 1 ms, SYNs retried
# after 1, 2, 4, ... s (tcp_syn_retries 6: connect() fails at 127 s; the
# field's 5.15 has no tcp_syn_linear_timeouts), up to 3 new connections per
# object; then with 6.5's linear timeouts. No root, no network.
. "$(dirname "$0")/lib.sh"

STORM_BIN=${HT_STORM:-${HT_BUILD_TESTS_DIR:+$HT_BUILD_TESTS_DIR/../bench/storm}}
[ -x "$STORM_BIN" ] || { echo "# SKIP bench/storm not built"; exit 77; }
model() { "$STORM_BIN" model --count 6600 --workers 8 --rate 570 --retries 3 --fetch 0.001 "$@"; }
kv() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# wall_near LABEL WANT OUT: the model's wall time within 0.05 s of WANT
wall_near() {
	w=$(kv wall "$3")
	if awk -v w="$w" -v e="$2" 'BEGIN { exit !(w > e - 0.05 && w < e + 0.05) }'; then
		ok "$1: wall $w = $2 s"
	else
		not_ok "$1: wall $2 s" "$w"
	fi
}

# before: M = 4096, T = 120 s. Object 4096 (0-based) starts at 4096 / 570 =
# 7.186 s and finds the table full, as do the next 7 (all 8 workers block).
# Their SYNs go at +0, 1, 3, 7, 15, 31, 63 s: 7 dropped each, 8 x 7 = 56;
# the first entries expire at 120 s, after the last SYN at 7.19 + 63 =
# 70.2 s, so connect() fails at 7.19 + 127 = 134.19 s (slowest connect 127
# s) and each object opens a new connection (8 retried), which finds the
# 4096 entries of 0-7.19 s gone. The other 6600 - 4096 - 8 = 2496 objects
# are overdue: 8 workers x 1 ms take 2496 / 8 x 0.001 = 0.312 s, after the
# retried objects' own 0.001 s: 134.19 + 0.001 + 0.312 = 134.50 s.
out=$(model --max 4096 --time-wait 120)
echo "# before: $out"
expect_eq "before: fetched, failed" "6600 0" "$(kv ok "$out") $(kv failed "$out")"
expect_eq "before: 8 x 7 SYNs dropped, 8 connects over 0.9 s, 8 retried" "56 8 8" \
	"$(kv drops "$out") $(kv slow "$out") $(kv retried "$out")"
expect_eq "before: slowest connect 127 s" 127.000 "$(kv max_connect "$out")"
expect_eq "before: peak at the cap" 4096 "$(kv peak "$out")"
wall_near before 134.50 "$out"

# TIME_WAIT only: T = 30 s. The same 8 block at 7.19 s; the SYN at 7.19 +
# 31 = 38.19 s comes after every entry of 0-7.19 s expired (at 30-37.19 s),
# the one at +15 s (22.19 s) before any did: 5 SYNs dropped each, 8 x 5 =
# 40, slowest connect 31 s, none retried; wall 38.19 + 0.001 + 0.312 = 38.50 s.
out=$(model --max 4096 --time-wait 30)
echo "# tw: $out"
expect_eq "tw: 8 x 5 SYNs dropped, 8 slow, none retried" "40 8 0" \
	"$(kv drops "$out") $(kv slow "$out") $(kv retried "$out")"
expect_eq "tw: slowest connect 31 s" 31.000 "$(kv max_connect "$out")"
wall_near tw 38.50 "$out"

# hosttune's 65536: 570/s x 30 s = 17100 entries at most, never full: the
# pace alone, the last object at 6599 / 570 = 11.577 s + 0.001 = 11.578 s,
# every object in the table at once (6600 < 17100).
out=$(model --max 65536 --time-wait 30)
echo "# hosttune: $out"
expect_eq "hosttune: no drop, no slow connect, peak 6600, wall" "0 0 6600 11.578" \
	"$(kv drops "$out") $(kv slow "$out") $(kv peak "$out") $(kv wall "$out")"

# A table smaller than the working set of the pace: M = 8192 at T = 30 s
# admits 8192 / 30 = 273/s < 570/s; it fills at 8192 / 570 = 14.4 s > 6600
# objects' 11.58 s, so this ingest never reaches it: no drop either.
out=$(model --max 8192 --time-wait 30)
expect_eq "8192: the ingest ends before the table fills" "0 6600" \
	"$(kv drops "$out") $(kv peak "$out")"

# Since 6.5 (tcp_syn_linear_timeouts, default 4) the first 4 retransmission
# timeouts stay at 1 s and 6 + 4 = 10 SYNs are retransmitted: at +1, 2, 3,
# 4, 5, then +2, 4, 8, 16, 32 s: 7, 11, 19, 35, 67; connect() fails 64 s
# later, at 131 s.
# before: every SYN up to +67 s (74.2 s) is before the 120 s expiry: 11
# dropped each, 8 x 11 = 88; failure at 7.19 + 131 = 138.19 s, then the new
# connection gets in: 138.19 + 0.001 + 0.312 = 138.50 s.
out=$(model --syn-linear 4 --max 4096 --time-wait 120)
echo "# before, linear 4: $out"
expect_eq "before, linear 4: 8 x 11 dropped, slowest 131 s, 8 retried" "88 131.000 8" \
	"$(kv drops "$out") $(kv max_connect "$out") $(kv retried "$out")"
wall_near "before, linear 4" 138.50 "$out"
# tw: the SYN at +35 s (42.19 s) is the first after 30-37.19 s: 9 dropped
# each (+0 to +19), 8 x 9 = 72; wall 42.19 + 0.001 + 0.312 = 42.50 s.
out=$(model --syn-linear 4 --max 4096 --time-wait 30)
echo "# tw, linear 4: $out"
expect_eq "tw, linear 4: 8 x 9 dropped, slowest 35 s" "72 35.000" \
	"$(kv drops "$out") $(kv max_connect "$out")"
wall_near "tw, linear 4" 42.50 "$out"

# Without retries a connect that times out fails its object: 8 of 6600.
out=$("$STORM_BIN" model --count 6600 --workers 8 --rate 570 --max 4096 --time-wait 120)
expect_eq "before, no --retries: 8 objects fail" "6592 8" "$(kv ok "$out") $(kv failed "$out")"

"$STORM_BIN" model --count 10 --workers 1 >/dev/null 2>&1
expect_eq "model without --max exits 2" 2 "$?"
"$STORM_BIN" model --count 1000001 --workers 1 --max 4 --time-wait 1 >/dev/null 2>&1
expect_eq "model of over 1000000 objects exits 2" 2 "$?"
"$STORM_BIN" model --count 10 --workers 1 --max 4 --time-wait 1 --rate 1e-300 >/dev/null 2>&1
expect_eq "model with a rate below 0.001/s exits 2" 2 "$?"
finish
