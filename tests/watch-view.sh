#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# hosttune watch on a terminal (tests/pty-run.py gives it a pty of 80
# columns): a frame of four lines redrawn in place at each sample, the
# count against nf_conntrack_max as a bar coloured by how full the table
# is, the drops a second red when above 0, the summary below the last
# frame; the table of before on a pipe, on TERM=dumb and with --format
# json nothing but the summary. Below a --root tree whose conntrack
# figures the test changes after each frame is shown, before the next
# sample (0.7 s later) reads them: this host is only read.
. "$(dirname "$0")/lib.sh"

if ! command -v python3 >/dev/null 2>&1; then
	echo "# SKIP: no python3 for the pty"
	exit 77
fi
# The width is the pty's (80 columns), not a COLUMNS the caller exported.
unset COLUMNS
ESC=$(printf '\033')
CR=$(printf '\r')
ROOT=$TMP/root
cp -R "$FIXTURES/garage-vm/root" "$ROOT"
# ct_stat ENTRIES DROP: /proc/net/stat/nf_conntrack of one CPU with that
# entry count and drop counter (hex, as the kernel prints them), replaced
# in one rename. In a file of its own: the steps run in another shell.
cat >"$TMP/ct_stat.sh" <<'EOF'
ct_stat() {
	f=$ROOT/proc/net/stat/nf_conntrack
	{
		echo "entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart"
		printf '%08x  00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 %08x 00000000 00000000  00000000 00000000 00000000 00000000\n' "$1" "$2"
	} >"$f.new" && mv "$f.new" "$f"
}
EOF
. "$TMP/ct_stat.sh"
# Sample 1: 1024 of max 4096, no drop yet. After frame 1: 3072 entries, the
# same drops; after frame 2: 4000 entries and 100 more drops.
cat >"$TMP/step" <<EOF
ROOT=$ROOT
. $TMP/ct_stat.sh
case \$1 in
1) ct_stat 3072 0 ;;
2) ct_stat 4000 100 ;;
esac
EOF
H="$HOSTTUNE --no-config --rules $HT_RULES_DIR --root $ROOT --interval 700ms --duration 1400ms"

# watch_pty ENV...: watch on the pty, stepping the tree after each frame.
watch_pty() {
	ct_stat 1024 0
	env "$@" python3 "$HT_TESTS_DIR/pty-run.py" --cols 80 \
		--after "ends with the summary" --do ". $TMP/step" -- $H watch
}

watch_pty TERM=xterm >"$TMP/pty"
expect_eq "pty: watch exits 0" 0 $?
# The frames: split where each later one goes back up over the one before.
sed "s/$CR$ESC\[4A/\n@@FRAME@@\n/g" "$TMP/pty" | tr -d '\r' >"$TMP/frames"
# frame N: the lines of frame N (1-based), SGR codes and the erase kept.
frame() { awk -v n="$1" '/^@@FRAME@@$/ { k++; next } k == n - 1' "$TMP/frames" | head -n 4; }
expect_eq "pty: three samples (0, 0.7, 1.4 s), three frames, the later two redrawn in place" \
	"3 2" "$(grep -c 'ends with the summary' "$TMP/pty") $(grep -c '^@@FRAME@@$' "$TMP/frames")"
expect_eq "pty: no table header on the terminal" 0 "$(grep -c 't/s *count' "$TMP/pty")"
expect_eq "pty: every line of a frame erased to its end (ESC [ K)" 12 "$(grep -c ".$ESC\[K\$" "$TMP/frames")"
# bar CELLS FILLED: FILLED full blocks then empty ones, CELLS in all.
bar() { i=0; while [ $i -lt "$1" ]; do if [ $i -lt "$2" ]; then printf '\342\226\210'; else printf '\342\226\221'; fi; i=$((i + 1)); done; }
# 80 columns: each line at most 79; the figures "  1024 / 4096  25.0%" are
# 20 wide, so the bar has 79 - 12 - 20 = 47 cells.
# 1024 / 4096 = 25.0%: green, 47 x 0.25 = 11.75 -> 12 filled.
expect_eq "frame 1: 1024 of 4096, 12 of 47 cells, green" \
	"conntrack [$ESC[32m$(bar 47 12)$ESC[0m]  1024 / 4096  25.0%$ESC[K" "$(frame 1 | sed -n 1p)"
# 3072 / 4096 = 75.0%: yellow (hosttune warns from 75%), 47 x 0.75 = 35.25 -> 35.
expect_eq "frame 2: 3072 of 4096, 35 of 47 cells, yellow" \
	"conntrack [$ESC[33m$(bar 47 35)$ESC[0m]  3072 / 4096  75.0%$ESC[K" "$(frame 2 | sed -n 1p)"
# 4000 / 4096 = 97.66%: red (critical from 90%), 47 x 0.9766 = 45.9 -> 46.
expect_eq "frame 3: 4000 of 4096, 46 of 47 cells, red" \
	"conntrack [$ESC[31m$(bar 47 46)$ESC[0m]  4000 / 4096  97.7%$ESC[K" "$(frame 3 | sed -n 1p)"
expect_eq "below --root: no new-connection count, said so" \
	"new/s     unknown: --root has no events$ESC[K" "$(frame 2 | sed -n 2p)"
# Drops: unknown at the first sample, none over the first interval, 100
# over the second: a rate above 0 (its value is 100 / the interval the
# clock measured), in bold red.
expect_eq "frame 1: drops unknown" "drops/s   -$ESC[K" "$(frame 1 | sed -n 3p)"
expect_eq "frame 2: no drops, not coloured" "drops/s   0.0$ESC[K" "$(frame 2 | sed -n 3p)"
expect_eq "frame 3: drops above 0 in bold red" yes \
	"$(frame 3 | sed -n 3p | grep -q "^drops/s   $ESC\[1;31m[1-9][0-9]*\.[0-9]$ESC\[0m$ESC\[K\$" && echo yes || echo no)"
expect_contains "frame 3: the time and what ends it" "s of 1.4 s, every 0.7 s: Ctrl-C ends with the summary" \
	"$(frame 3 | sed -n 4p)"
# Columns, with the escape codes taken out (wc -m counts characters in a UTF-8 locale).
expect_eq "every frame line at most 79 columns" "" \
	"$(sed -e "s/$ESC\[[0-9;]*[mK]//g" -e '/^@@FRAME@@$/d' "$TMP/frames" | head -n 12 |
		while IFS= read -r l; do n=$(printf '%s' "$l" | wc -m); [ "$n" -le 79 ] || echo "$n: $l"; done)"
# The summary below the last frame, after erasing what the terminal echoed.
expect_contains "the summary below the frames" "$ESC[K
3 samples over 1." "$(tr -d '\r' <"$TMP/pty")"
expect_contains "the summary: the peak count" "peak count      4000 entries = 97.7% of max 4096" \
	"$(cat "$TMP/pty")"

# NO_COLOR and a locale that is not UTF-8: the view without colour, its
# cells in ASCII; the same frames otherwise.
watch_pty TERM=xterm NO_COLOR=1 LC_ALL=C >"$TMP/plain"
expect_eq "NO_COLOR: redrawn in place, no SGR code" "2 0" \
	"$(grep -c "$ESC\[4A" "$TMP/plain") $(grep -c "$ESC\[[0-9;]*m" "$TMP/plain")"
expect_contains "NO_COLOR, LC_ALL=C: the bar in ASCII" \
	"conntrack [###################################............]  3072 / 4096  75.0%$ESC[K" \
	"$(cat "$TMP/plain")"

# TERM=dumb on the pty, a pipe: the table, as before (two samples, 0.7 s).
H2="$HOSTTUNE --no-config --rules $HT_RULES_DIR --root $ROOT --interval 700ms --duration 700ms"
ct_stat 1024 0
env TERM=dumb python3 "$HT_TESTS_DIR/pty-run.py" --cols 80 -- $H2 watch | tr -d '\r' >"$TMP/dumb"
expect_eq "TERM=dumb: the table's header, no escape code" \
	"      t/s      count        max   %max      new/s    drops/s 0" \
	"$(head -n 1 "$TMP/dumb") $(grep -c "$ESC" "$TMP/dumb")"
$H2 watch >"$TMP/pipe"
expect_eq "pipe: watch exits 0" 0 $?
expect_eq "pipe: the header, then a line a sample as before" \
	"      t/s      count        max   %max      new/s    drops/s|    0.000       1024       4096   25.0          -          -" \
	"$(head -n 2 "$TMP/pipe" | tr '\n' '|' | sed 's/|$//')"
expect_eq "pipe: 2 sample lines, no escape code" "2 0" \
	"$(grep -c '^ *[0-9]*\.[0-9]\{3\} ' "$TMP/pipe") $(grep -c "$ESC" "$TMP/pipe")"
# --format json on the terminal: one document, no view.
env TERM=xterm python3 "$HT_TESTS_DIR/pty-run.py" --cols 80 -- $H2 --format json watch | tr -d '\r' >"$TMP/json"
expect_eq "pty, --format json: one JSON document, no escape code" "1 0" \
	"$(jq -s length "$TMP/json") $(grep -c "$ESC" "$TMP/json")"

finish
