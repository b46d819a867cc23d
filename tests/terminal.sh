#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Terminal and JSON conventions (issue 13): the severities in colour on a
# terminal only (script(1) gives the run a pty), never with NO_COLOR,
# --color=never, TERM=dumb or on a pipe; the report wrapped at the terminal's
# width (COLUMNS on the pty), 100 columns on a pipe; --version as GNU tools
# print it; JSON decimals without %.17g noise.
. "$(dirname "$0")/lib.sh"

if ! command -v script >/dev/null 2>&1 || ! script -qec true /dev/null </dev/null >/dev/null 2>&1; then
	echo "# SKIP: no script(1) (util-linux) or no pty for it"
	exit 77
fi
FACTS=$FIXTURES/garage-vm/expected.facts
# The garage VM has two critical findings and two warnings (audit-garage.sh).
set -- "$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$FACTS" --profile garage
AUDIT="$*"
RED=$(printf '\033[1;31m')
YELLOW=$(printf '\033[33m')
ESC=$(printf '\033')

# on_pty ENV... -- ARGS...: audit's stdout on a pty, carriage returns removed.
on_pty() {
	env_args=
	while [ "$1" != -- ]; do env_args="$env_args $1"; shift; done
	shift
	# shellcheck disable=SC2086
	env $env_args script -qec "$AUDIT $* audit" /dev/null </dev/null | tr -d '\r'
}
has_esc() {
	case $1 in *"$ESC"*) echo yes ;; *) echo no ;; esac
}

out=$(on_pty TERM=xterm -- )
expect_contains "pty: critical in red" "${RED}critical$ESC[0m" "$out"
expect_contains "pty: warning in yellow" "${YELLOW}warning$ESC[0m" "$out"
expect_contains "pty: the heading's label in colour too" "[${RED}critical$ESC[0m] conntrack.max" "$out"
expect_eq "pty, NO_COLOR=1: no escape code" no "$(has_esc "$(on_pty TERM=xterm NO_COLOR=1 -- )")"
# no-color.org: set and not empty. An empty NO_COLOR does not count.
expect_eq "pty, NO_COLOR empty: colour" yes "$(has_esc "$(on_pty TERM=xterm NO_COLOR= -- )")"
expect_eq "pty, --color=never: no escape code" no "$(has_esc "$(on_pty TERM=xterm -- --color=never)")"
expect_eq "pty, TERM=dumb: no escape code" no "$(has_esc "$(on_pty TERM=dumb -- )")"
# --output on a terminal: the file is not the terminal (no colour, 100 columns).
on_pty TERM=xterm COLUMNS=60 -- --output "$TMP/report.txt" >/dev/null
expect_eq "pty, --output FILE: no escape code in the file" no "$(has_esc "$(cat "$TMP/report.txt")")"
expect_eq "pty, --output FILE: the file is the pipe's report (100 columns)" "$("$@" audit)" \
	"$(cat "$TMP/report.txt")"
out=$("$@" audit)
expect_eq "pipe: no escape code" no "$(has_esc "$out")"
out=$("$@" --color=always audit)
expect_contains "pipe, --color=always: colour" "${RED}critical" "$out"
out=$("$@" --color always --format json audit)
expect_eq "--color=always --format json: JSON has no escape code" "no 1" \
	"$(has_esc "$out") $(printf '%s\n' "$out" | jq -s length)"
"$@" --color=sometimes audit >/dev/null 2>"$TMP/err"
expect_eq "--color=sometimes: refused" \
	"2 hosttune: --color: expected auto, always or never, got 'sometimes' (hosttune --help lists the usage)" \
	"$? $(cat "$TMP/err")"

# ---- wrapping: the explanations' paragraphs at the width ----
# The explanations' lines: indented by four, not the "fix:", "at boot:",
# "not applicable:" lines or their continuations (indented by six on a
# terminal; one line each on a pipe).
# longest OUTPUT: the longest such line's length.
longest() {
	printf '%s\n' "$1" | grep '^    ' | grep -v '^      \|^    \(fix: \|at boot\|not applicable\|also: see\)' |
		awk '{ if (length > m) m = length } END { print m + 0 }'
}
n60=$(longest "$(on_pty TERM=xterm COLUMNS=60 -- --color=never)")
n120=$(longest "$(on_pty TERM=xterm COLUMNS=120 -- --color=never)")
npipe=$(longest "$("$@" audit)")
expect_eq "pty, COLUMNS=60: wrapped at 60 (longest line 51 to 60)" yes \
	"$([ "$n60" -le 60 ] && [ "$n60" -gt 50 ] && echo yes || echo "no: $n60")"
expect_eq "pty, COLUMNS=120: wrapped at 120 (longest line 101 to 120)" yes \
	"$([ "$n120" -le 120 ] && [ "$n120" -gt 100 ] && echo yes || echo "no: $n120")"
# On a terminal every line after the table wraps: the headings and the
# fix, at boot and not applicable lines too (on a pipe they stay one line
# each, for grep: the pipe's report is byte for byte what it was).
# A line over 60 is one word that cannot be broken (a path), after its indent.
over60=$(on_pty TERM=xterm COLUMNS=60 -- --color=never | sed -n '/^\[/,$p' |
	awk 'length > 60 { w = $0; sub(/^ */, "", w); if (w ~ / /) print }')
expect_eq "pty, COLUMNS=60: headings and fix lines wrapped too (no breakable line after the table over 60)" \
	"" "$over60"
expect_contains "pty, COLUMNS=60: a fix line's continuation indented by six" \
	"$(printf '    fix: net.netfilter.nf_conntrack_max = 32768 in\n      /etc/sysctl.d/90-hosttune.conf')" \
	"$(on_pty TERM=xterm COLUMNS=60 -- --color=never)"
expect_contains "pipe: the fix line is one line" \
	"    fix: net.netfilter.nf_conntrack_max = 32768 in /etc/sysctl.d/90-hosttune.conf, and live in" \
	"$("$@" audit)"
expect_eq "pipe: wrapped at 100 as before (longest line 91 to 100)" yes \
	"$([ "$npipe" -le 100 ] && [ "$npipe" -gt 90 ] && echo yes || echo "no: $npipe")"

# ---- --version ----
"$HOSTTUNE" --version >"$TMP/v"
expect_eq "--version: exit 0, five lines" "0 5" "$? $(wc -l <"$TMP/v")"
expect_eq "--version: name and version first" yes \
	"$(head -n 1 "$TMP/v" | grep -qE '^hosttune [0-9][0-9.]*$' && echo yes)"
expect_contains "--version: the licence (SPDX headers: LGPL-2.1-or-later)" \
	"License LGPL-2.1-or-later" "$(cat "$TMP/v")"
expect_eq "--version: GNU's last two lines" \
	"This is free software: you are free to change and redistribute it.
There is NO WARRANTY, to the extent permitted by law." "$(tail -n 2 "$TMP/v")"

# ---- JSON decimals ----
# The garage profile's mem_budget 0.05 printed as 0.050000000000000003 with
# json-c's %.17g; 1/3-like ratios keep 15 significant digits: 4096 / 120 =
# 34.1333333333333.
"$@" --format json audit >"$TMP/a.json"
expect_eq "JSON: mem_budget is 0.05 as written" '"workload.mem_budget": 0.05,' \
	"$(grep -o '"workload.mem_budget": [^ ]*' "$TMP/a.json")"
expect_eq "JSON: the ceiling 4096 / 120 in 15 significant digits" \
	'"conntrack.ceiling": 34.1333333333333' "$(grep -o '"conntrack.ceiling": [0-9.]*' "$TMP/a.json")"
expect_eq "JSON: no number with 16 or more significant digits" "" \
	"$(grep -oE '[0-9]*\.[0-9]{15,}' "$TMP/a.json" | head -3)"
# An integral decimal: --set burst=2.0 stays a number JSON parsers read as 2.
"$@" --set workload.burst=2.0 --format json audit >"$TMP/b.json"
expect_eq "JSON: an integral decimal is a number" "number 2" \
	"$(jq -r '.workload["workload.burst"] | "\(type) \(.)"' "$TMP/b.json")"
# Every document carries the schema version, first.
expect_eq "JSON: schema 1 is the first key" schema "$(jq -r 'keys_unsorted[0]' "$TMP/a.json")"

finish
