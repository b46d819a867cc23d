# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers for hosttune's integration tests (sourced, not run).
# The test harness exports HOSTTUNE (the built binary), HT_TESTS_DIR,
# HT_RULES_DIR and HT_FIXTURES_DIR; run by hand as:
# HOSTTUNE=src/hosttune sh tests/NAME.sh
set -u

: "${HT_TESTS_DIR:=$(cd "$(dirname "$0")" && pwd)}"
: "${HT_RULES_DIR:=$HT_TESTS_DIR/../rules}"
: "${HOSTTUNE:=$HT_TESTS_DIR/../src/hosttune}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hosttune-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# The fixtures as the tests read them: tests/fixtures copied with its links
# made and every file owner-writable (tests/make-fixtures.sh; make check makes
# one copy, BUILDDIR/tests/fixtures-built, and a test run by hand its own).
# Tests read them and copy what they change into $TMP.
if [ -n "${HT_FIXTURES_DIR:-}" ]; then
	FIXTURES=$HT_FIXTURES_DIR
else
	FIXTURES=$TMP/fixtures
	sh "$HT_TESTS_DIR/make-fixtures.sh" "$HT_TESTS_DIR/fixtures" "$FIXTURES" || exit 99
fi
passed=0
failed=0

ht() {
	"$HOSTTUNE" --rules "$HT_RULES_DIR" "$@"
}

ok() {
	passed=$((passed + 1))
	printf 'ok %d - %s\n' "$((passed + failed))" "$1"
}

not_ok() {
	failed=$((failed + 1))
	printf 'not ok %d - %s\n' "$((passed + failed))" "$1"
	shift
	for l in "$@"; do printf '#   %s\n' "$l"; done
}

# expect_eq DESCRIPTION EXPECTED ACTUAL
expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected: $2" "got:      $3"; fi
}

# expect_match DESCRIPTION FIXED-STRING TEXT: TEXT contains the string
expect_contains() {
	case "$3" in
	*"$2"*) ok "$1" ;;
	*) not_ok "$1" "expected to contain: $2" "in: $(printf '%s' "$3" | head -c 2000)" ;;
	esac
}

# jget FILE JQ-FILTER: raw jq output (numbers as JSON prints them)
jget() {
	jq -r "$2" "$1"
}

finish() {
	printf '%d passed, %d failed\n' "$passed" "$failed"
	[ "$failed" -eq 0 ]
}

# facts_file PATH: writes a facts file from "NAME = VALUE" lines on stdin
# vary BASE OUT NAME=VALUE...: the facts file BASE with each NAME's line
# replaced by "NAME = VALUE" ("-" as VALUE drops it), written to OUT.
vary() {
	base=$1 out=$2
	shift 2
	cp "$base" "$out"
	for kv in "$@"; do
		name=${kv%%=*} value=${kv#*=}
		grep -v "^$name = " "$out" >"$out.tmp"
		[ "$value" = "-" ] || echo "$name = $value" >>"$out.tmp"
		mv "$out.tmp" "$out"
	done
}

facts_file() {
	{ echo "# hosttune facts 1"; cat; } >"$1"
}

# ct_ruleset FILE: an nftables ruleset with a ct expression on input and
# output, so that loopback traffic in a namespace goes through conntrack (a
# ct expression registers conntrack's hooks in that namespace).
ct_ruleset() {
	cat >"$1" <<'EOT'
table inet hosttune_test {
	chain in { type filter hook input priority 0; ct state new,established accept; }
	chain out { type filter hook output priority 0; ct state new,established accept; }
}
EOT
}
