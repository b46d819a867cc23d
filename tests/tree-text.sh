#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Text from a tree reaches the terminal escaped and JSON as UTF-8: a --root
# tree with a sysctl.d file named with ESC [31m and the byte 0xff (its line
# shown as "FILE:LINE" by audit, plan and verify), and a rules directory with
# a site rule whose file name, title, unit and explanation hold ESC and 0xff. Every command's text output holds no ESC byte and is
# UTF-8, showing them as \x1b and \xff; its JSON parses, is UTF-8 and decodes
# to the same escapes for the bytes that are not UTF-8; the Prometheus
# metrics (the rule's unit is a label) are UTF-8 without ESC; an error naming
# such a file is one escaped line, and its JSON error object parses too.
. "$(dirname "$0")/lib.sh"

ESC=$(printf '\033')
FF=$(printf '\377')
# is_utf8 FILE: iconv(1) reads it as UTF-8 without error.
is_utf8() {
	if iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1; then echo yes; else echo no; fi
}
# no_esc FILE: "yes" when FILE holds no ESC byte.
no_esc() {
	if grep -q "$ESC" "$1"; then echo no; else echo yes; fi
}

T=$TMP/root
cp -a "$FIXTURES/garage-vm/root" "$T"
mkdir -p "$T/etc/sysctl.d"
BAD_CONF="99-$ESC[31mevil$FF.conf"
printf 'net.netfilter.nf_conntrack_max = 1024\n' >"$T/etc/sysctl.d/$BAD_CONF"
# How it is shown: the control byte and the byte that is not UTF-8 as C escapes.
SHOWN_CONF='/etc/sysctl.d/99-\x1b[31mevil\xff.conf:1'

R=$TMP/rules
mkdir -p "$R/profiles"
cp "$HT_RULES_DIR"/*.rules "$R/"
cp "$HT_RULES_DIR"/profiles/*.profile "$R/profiles/"
SITE="$R/site$ESC[2J.rules"
printf '[site.beep]\ntitle = a %s[31mred%s title\ntarget = advice\ncurrent = 7\nunit = u%s[7m%s\nseverity = "warning"\nexplain = %s[5mblink%s here\n' \
	"$ESC" "$FF" "$ESC" "$FF" "$ESC" "$FF" >"$SITE"
SHOWN_TITLE='a \x1b[31mred\xff title'

set -- --rules "$R" --root "$T"

# check_text NAME EXIT-LIST FILE: the run's exit status is one of EXIT-LIST
# and FILE (its stdout or stderr) has no ESC byte and is UTF-8.
check_text() {
	case " $2 " in
	*" $rc "*) ok "$1: exit $rc" ;;
	*) not_ok "$1: exit in ($2)" "exit $rc: $(head -c 600 "$TMP/err" | od -c | head -5)" ;;
	esac
	expect_eq "$1: no ESC byte, UTF-8" "yes yes" "$(no_esc "$3") $(is_utf8 "$3")"
}
# check_json NAME FILE: FILE is one JSON document and UTF-8.
check_json() {
	expect_eq "$1: one JSON document, UTF-8" "1 yes" \
		"$(jq -s length "$2" 2>&1 | head -c 200) $(is_utf8 "$2")"
}

for cmd in audit plan verify rules "explain site.beep" facts; do
	# shellcheck disable=SC2086
	"$HOSTTUNE" "$@" $cmd >"$TMP/out" 2>"$TMP/err"
	rc=$?
	check_text "$cmd" "0 1" "$TMP/out"
	expect_eq "$cmd: stderr empty" "" "$(cat "$TMP/err")"
	cp "$TMP/out" "$TMP/$(echo "$cmd" | cut -d' ' -f1).txt"
	# shellcheck disable=SC2086
	"$HOSTTUNE" "$@" --format json $cmd >"$TMP/out.json" 2>"$TMP/err"
	rc=$?
	check_text "$cmd --format json" "0 1" "$TMP/out.json"
	check_json "$cmd --format json" "$TMP/out.json"
	cp "$TMP/out.json" "$TMP/$(echo "$cmd" | cut -d' ' -f1).json"
done

# What is shown: the escapes, where the text report names the file and the title.
expect_contains "audit: the sysctl.d file as FILE:LINE, escaped" "from $SHOWN_CONF" \
	"$(cat "$TMP/audit.txt")"
expect_contains "audit: the site rule's title, escaped" "site.beep (advice): $SHOWN_TITLE" \
	"$(cat "$TMP/audit.txt")"
expect_contains "audit: the site rule's explanation, escaped" '\x1b[5mblink\xff here' \
	"$(cat "$TMP/audit.txt")"
expect_contains "audit: the site rule's unit, escaped" '7 u\x1b[7m\xff' "$(cat "$TMP/audit.txt")"
expect_contains "plan: the sysctl.d file, escaped" "$SHOWN_CONF" "$(cat "$TMP/plan.txt")"
expect_contains "verify: the sysctl.d file, escaped" '/etc/sysctl.d/99-\x1b[31mevil\xff.conf' \
	"$(cat "$TMP/verify.txt")"
expect_contains "rules: the title, escaped" "$SHOWN_TITLE" "$(cat "$TMP/rules.txt")"
expect_contains "explain: where the rule is, escaped" 'site\x1b[2J.rules:1' \
	"$(cat "$TMP/explain.txt")"
expect_contains "facts: the boot value's source, escaped" "from $SHOWN_CONF" \
	"$(cat "$TMP/facts.txt")"
# JSON: control characters as JSON escapes (the text itself), a byte that is
# not UTF-8 as the four characters \xff.
expect_eq "audit --format json: the title decodes to ESC and \\xff" \
	"a ${ESC}[31mred\\xff title" \
	"$(jq -r '.findings[] | select(.rule == "site.beep") | .title' "$TMP/audit.json")"
expect_eq "audit --format json: the boot source" "$SHOWN_CONF" \
	"$(jq -r '.findings[] | select(.rule == "conntrack.max") | .boot.source' "$TMP/audit.json")"
expect_eq "audit --format json: the unit" "u${ESC}[7m\\xff" \
	"$(jq -r '.findings[] | select(.rule == "site.beep") | .unit' "$TMP/audit.json")"
expect_contains "verify --format json: the sysctl.d file" '\\xff.conf' "$(cat "$TMP/verify.json")"

# Prometheus: the unit is a label value, UTF-8 without ESC.
"$HOSTTUNE" "$@" --no-measure --format prometheus audit >"$TMP/out.prom" 2>"$TMP/err"
rc=$?
check_text "audit --format prometheus" "0 1" "$TMP/out.prom"
expect_contains "audit --format prometheus: the unit label escaped" \
	'hosttune_finding_current_value{rule="site.beep",unit="u\\x1b[7m\\xff"} 7' "$(cat "$TMP/out.prom")"

# --output: the file holds what stdout would.
"$HOSTTUNE" "$@" --output "$TMP/report.txt" audit 2>"$TMP/err"
rc=$?
check_text "audit --output FILE" "0 1" "$TMP/report.txt"

# --color=always: the severities in colour (hosttune's own codes), the tree's escaped.
"$HOSTTUNE" "$@" --color=always audit >"$TMP/out" 2>"$TMP/err"
rc=$?
expect_eq "--color=always: hosttune's colour codes pass" 1 \
	"$(grep -c "\[$ESC\[1;31mcritical$ESC\[0m\] conntrack.max" "$TMP/out")"
expect_eq "--color=always: no other ESC byte" 0 \
	"$(sed "s/$ESC\[[0-9;]*m\(critical\|warning\|info\)$ESC\[0m//g" "$TMP/out" | grep -c "$ESC")"

# An error naming such a file: one line, escaped; its JSON error object parses.
printf '[site.beep]\ntitle = x\nvalue = 1 +\n' >"$SITE"
"$HOSTTUNE" "$@" audit >"$TMP/out" 2>"$TMP/err"
rc=$?
check_text "a bad rules file named with ESC: stderr" "2" "$TMP/err"
expect_eq "a bad rules file named with ESC: one line, escaped" \
	"hosttune: $R/site\\x1b[2J.rules:3:12: expected an expression, found end of expression" \
	"$(cat "$TMP/err")"
"$HOSTTUNE" "$@" --format json audit >"$TMP/out.json" 2>"$TMP/err"
rc=$?
check_json "a bad rules file named with ESC: the JSON error object" "$TMP/out.json"
expect_eq "a bad rules file named with ESC: the error object names the file, escaped" \
	"$R/site\\x1b[2J.rules 3" "$(jq -r '"\(.error.file) \(.error.line)"' "$TMP/out.json")"
printf '[site.beep]\ntitle = a %s title\nvalue = 1 +\n' "$FF" >"$SITE"
"$HOSTTUNE" "$@" --format json audit >"$TMP/out.json" 2>"$TMP/err"
check_json "a bad rules file, 0xff in it: the JSON error object" "$TMP/out.json"
rm -f "$SITE"

finish
