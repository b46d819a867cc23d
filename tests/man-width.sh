#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every man page fits an 80-column terminal: rendered as man(1) shows it at
# MANWIDTH=80 (man -l with groff's warnings; groff -man -t -ww -rLL=80n when
# man-db is not installed), each page gives no warning from groff or tbl
# (a table wider than the line, a line that cannot be broken), no line wider
# than 80 columns, and no word cut at a hyphen (a line that ends in a
# letter, digit, "_" or "." then "-", or groff's hyphenation mark U+2010:
# net.netfilter.nf_conntrack_max, --no-measure, daemon-reload are never
# split). The pages are the built ones
# (BUILDDIR/man, with the configured paths in); skipped when they are not
# built (--disable-man) or groff is missing.
. "$(dirname "$0")/lib.sh"

MANDIR=${HT_MAN_DIR:-$(dirname "$HOSTTUNE")/../man}
PAGES="hosttune.8 hosttune-facts.7 hosttune-json.5 hosttune.rules.5"
for p in $PAGES; do
	if [ ! -f "$MANDIR/$p" ]; then
		echo "# $MANDIR/$p is not built (configure --disable-man?): skipped"
		exit 77
	fi
done
if ! command -v groff >/dev/null 2>&1; then
	echo "# no groff: skipped"
	exit 77
fi
# Characters, not bytes, for grep's counts below.
LC_ALL=C.UTF-8
export LC_ALL
CUT='[[:alnum:]_.]\(-\|‐\)$'

# render PAGE OUT ERR: the page as text at 80 columns (backspaces and
# tabs out), groff's and tbl's warnings in ERR.
render() {
	if command -v man >/dev/null 2>&1; then
		MANWIDTH=80 MAN_KEEP_FORMATTING= MANPAGER=cat PAGER=cat \
			man --warnings=all -l "$1" 2>"$3" | col -bx >"$2"
	else
		groff -man -t -ww -Tutf8 -rLL=80n -rLT=80n "$1" 2>"$3" | col -bx >"$2"
	fi
}

for p in $PAGES; do
	render "$MANDIR/$p" "$TMP/$p.txt" "$TMP/$p.err"
	lines=$(wc -l <"$TMP/$p.txt")
	if [ "$lines" -gt 20 ]; then ok "$p: rendered, $lines lines"
	else not_ok "$p: rendered" "$lines lines"; fi
	if [ ! -s "$TMP/$p.err" ]; then ok "$p: no warning from groff or tbl at 80 columns"
	else not_ok "$p: no warning from groff or tbl at 80 columns" "$(head -n 10 "$TMP/$p.err")"; fi
	wide=$(grep -c '^.\{81,\}' "$TMP/$p.txt")
	if [ "$wide" -eq 0 ]; then ok "$p: no line wider than 80 columns"
	else not_ok "$p: no line wider than 80 columns" "$wide lines, e.g.:" \
		"$(grep -n '^.\{81,\}' "$TMP/$p.txt" | head -n 5)"; fi
	cut=$(grep -c "$CUT" "$TMP/$p.txt")
	if [ "$cut" -eq 0 ]; then ok "$p: no word cut at a hyphen"
	else not_ok "$p: no word cut at a hyphen" "$(grep -n "$CUT" "$TMP/$p.txt" | head -n 5)"; fi
	if grep -q 'issue [0-9]' "$TMP/$p.txt"; then
		not_ok "$p: no project history" "$(grep -n 'issue [0-9]' "$TMP/$p.txt")"
	else ok "$p: no project history"; fi
done

# The pages built under a deep prefix (make distcheck's, in a CI runner's
# work directory): the configured paths, 99 and 110 columns here, break at
# a "/" and no line runs past 80 columns. Made from the shipped man/*.in by
# the build's own tools/man-subst.sh.
SRC=$HT_TESTS_DIR/..
DEEP=/var/lib/ci-runner/builds/0123456789/group/project/hosttune/hosttune-0.1/_build/sub/../../_inst
for p in hosttune.8 hosttune.rules.5; do
	if ! sh "$SRC/tools/man-subst.sh" "$SRC/man/$p.in" "$TMP/deep-$p" \
		"$DEEP/etc" "$DEEP/share/hosttune" 2>"$TMP/deep-$p.subst"; then
		not_ok "$p under a deep prefix: made" "$(cat "$TMP/deep-$p.subst")"
		continue
	fi
	render "$TMP/deep-$p" "$TMP/deep-$p.txt" "$TMP/deep-$p.err"
	wide=$(grep -c '^.\{81,\}' "$TMP/deep-$p.txt")
	# The lines joined (indent and line ends out) hold the whole path.
	if tr -d ' \n' <"$TMP/deep-$p.txt" | grep -qF "$DEEP/etc/hosttune/rules.d"; then
		ok "$p under a deep prefix: $DEEP/etc/hosttune/rules.d in it"
	else not_ok "$p under a deep prefix: $DEEP/etc/hosttune/rules.d in it"; fi
	if [ ! -s "$TMP/deep-$p.err" ] && [ "$wide" -eq 0 ]; then
		ok "$p under a ${#DEEP}-column prefix: no warning, no line wider than 80 columns"
	else not_ok "$p under a ${#DEEP}-column prefix: no warning, no line wider than 80 columns" \
		"$(head -n 5 "$TMP/deep-$p.err")" "$(grep -n '^.\{81,\}' "$TMP/deep-$p.txt" | head -n 3)"; fi
done
# ... which the break points make: without them the same page warns.
sed 's|/\\:|/|g' "$TMP/deep-hosttune.8" >"$TMP/deep-nobreak.8"
render "$TMP/deep-nobreak.8" "$TMP/deep-nobreak.txt" "$TMP/deep-nobreak.err"
if [ -s "$TMP/deep-nobreak.err" ]; then
	ok "without the break points, hosttune(8) under that prefix warns (the check sees it)"
else not_ok "without the break points, hosttune(8) under that prefix warns (the check sees it)"; fi

# The check sees what it is for: a planted table wider than the line, and
# words cut at the end of a line in the page as scdoc made it (without the
# .nh and .cflags lines the build puts after .TH), are caught.
{
	printf '.TH x 8\n.SH NAME\nx\n.SH A\n.TS\nallbox;\nl l.\n'
	printf 'x%.0s' $(seq 90)
	printf '\ty\n.TE\n'
} >"$TMP/wide.8"
render "$TMP/wide.8" "$TMP/wide.txt" "$TMP/wide.err"
if [ -s "$TMP/wide.err" ] || grep -q '^.\{81,\}' "$TMP/wide.txt"; then
	ok "a planted table of 92 columns is caught"
else not_ok "a planted table of 92 columns is caught" "$(cat "$TMP/wide.txt")"; fi
grep -v '^\.if .*cflags 0 -$' "$MANDIR/hosttune.8" >"$TMP/nocflags.8"
render "$TMP/nocflags.8" "$TMP/nocflags.txt" "$TMP/nocflags.err"
if grep -q '[[:alnum:]_.]-$' "$TMP/nocflags.txt"; then
	ok "without .cflags, hosttune(8) has names cut at their hyphen (the check sees them)"
else not_ok "without .cflags, hosttune(8) has names cut at their hyphen (the check sees them)"; fi
grep -v '^\.nh$' "$MANDIR/hosttune-facts.7" >"$TMP/hyph.7"
render "$TMP/hyph.7" "$TMP/hyph.txt" "$TMP/hyph.err"
if grep -q '[[:alnum:]_.]‐$' "$TMP/hyph.txt"; then
	ok "with hyphenation, hosttune-facts(7) has words cut (the check sees them)"
else not_ok "with hyphenation, hosttune-facts(7) has words cut (the check sees them)"; fi

finish
