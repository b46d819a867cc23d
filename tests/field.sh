#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The cases from the field (tests/field/README.md): every public report
# rebuilt as a host is audited and judged against its `expected`, written
# before hosttune ran on it. One line a case (RIGHT, WRONG, SILENT,
# UNUSABLE-FIX, FALSE-ALARM, with the reasons) and the score. Fails when a
# case listed in tests/field/RIGHT is not right, or a right case is not
# listed there: the corpus keeps the cases hosttune gets wrong, and every
# right one stays right.
# HT_FIELD_ONLY=NAME judges one case; HT_FIELD_DIR=DIR another corpus.
. "$(dirname "$0")/lib.sh"

FIELD=${HT_FIELD_DIR:-$HT_TESTS_DIR/field}
[ -f "$FIELD/RIGHT" ] || { echo "# no $FIELD/RIGHT"; exit 99; }

# One line a finding for field.awk; the lever's fix joins the finding's own.
project='
	def rank: {"n/a": -1, "ok": 0, "info": 1, "warning": 2, "critical": 3}[.];
	def flat: map(select(. != null) | tostring) | join(" ") | gsub("[\t\n\r]"; " ") | ascii_downcase;
	def fixes: [.fix.file, .fix.line, .fix.live, .fix.restart, .remedy];
	.findings as $all
	| $all[]
	| . as $f
	| [ (.severity | rank | tostring),
	    (if .waived then "1" else "0" end),
	    .rule, (.instance // ""),
	    ([.title, .explanation, .remedy] | flat),
	    ((fixes + ([$all[] | select(.rule == $f.lever
			and (.instance == $f.instance or .instance == null or $f.instance == null))
		| fixes[]])) | flat) ]
	| join("\t")'

total=0 right=0
: >"$TMP/right"
: >"$TMP/classes"
# The rules hosttune ships: a RULE of an expected file that matches none is a typo.
ht rules | awk 'NR > 0 && $1 ~ /^[a-z][a-z0-9_.]*$/ { print $1 }' >"$TMP/rules.list"
[ -s "$TMP/rules.list" ] || { echo "# hosttune rules listed no rule"; exit 99; }
for dir in "$FIELD"/*/; do
	dir=${dir%/}
	case=${dir##*/}
	[ -z "${HT_FIELD_ONLY:-}" ] || [ "$HT_FIELD_ONLY" = "$case" ] || continue
	if [ ! -f "$dir/expected" ]; then
		not_ok "$case: no expected (a case is judged before it is run)"
		continue
	fi
	total=$((total + 1))
	profile=$(sed -n 's/^[[:space:]]*profile[[:space:]]\{1,\}\([^[:space:]#]*\).*/\1/p' "$dir/expected" | tail -n 1)
	set -- --profile "${profile:-default}" --format json
	if [ -f "$dir/host.facts" ]; then
		set -- "$@" --facts "$dir/host.facts"
	elif [ -d "$dir/root" ]; then
		set -- "$@" --root "$dir/root" --no-measure
	else
		not_ok "$case: neither host.facts nor root/"
		continue
	fi
	# args: extra options, one line, split on blanks (no quoting).
	# shellcheck disable=SC2046
	[ -f "$dir/args" ] && set -- "$@" $(cat "$dir/args")
	rc=0
	ht "$@" audit >"$TMP/$case.json" 2>"$TMP/$case.err" || rc=$?
	# Exit 2 is the case's own fault (a malformed facts file, an unknown
	# profile, a bad option in args): the case is broken, not hosttune.
	if [ $rc -eq 2 ]; then
		not_ok "$case: the case cannot be audited" "$(head -n 1 "$TMP/$case.err")"
		continue
	elif [ $rc -ge 3 ]; then
		verdict="WRONG	audit exits $rc: $(head -n 1 "$TMP/$case.err")"
	elif ! jq -r "$project" "$TMP/$case.json" >"$TMP/$case.tsv"; then
		verdict="WRONG	the audit's JSON could not be read"
	elif ! verdict=$(awk -v findings="$TMP/$case.tsv" -v rules="$TMP/rules.list" \
		-f "$HT_TESTS_DIR/field.awk" "$dir/expected" 2>&1); then
		not_ok "$case: expected cannot be read" "$verdict"
		continue
	fi
	class=${verdict%%	*}
	echo "$class" >>"$TMP/classes"
	if [ "$class" = RIGHT ]; then
		right=$((right + 1))
		echo "$case" >>"$TMP/right"
		echo "# RIGHT        $case"
	else
		printf '# %-12s %s: %s\n' "$class" "$case" "${verdict#*	}"
	fi
	listed=0
	grep -qx "$case" "$FIELD/RIGHT" && listed=1
	if [ "$class" = RIGHT ] && [ $listed = 0 ]; then
		not_ok "$case is right and not in tests/field/RIGHT: add it, so that it stays right"
	elif [ "$class" != RIGHT ] && [ $listed = 1 ]; then
		not_ok "$case was right and is $class now" "${verdict#*	}"
	else
		ok "$case: $class"
	fi
done
[ -z "${HT_FIELD_ONLY:-}" ] || [ "$total" -gt 0 ] || not_ok "HT_FIELD_ONLY=$HT_FIELD_ONLY names no case of $FIELD"
# A name in RIGHT with no case behind it (a renamed or removed case).
if [ -z "${HT_FIELD_ONLY:-}" ]; then
	while read -r name; do
		case $name in '' | '#'*) continue ;; esac
		[ -f "$FIELD/$name/expected" ] || not_ok "tests/field/RIGHT names $name, which has no case"
	done <"$FIELD/RIGHT"
fi
echo "# field score: $right of $total right ($(sort "$TMP/classes" | uniq -c | awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2}'))"
finish
