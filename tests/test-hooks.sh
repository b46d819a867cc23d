#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Test-only behaviour is built only into test builds. hosttune watch's small
# receive buffer read only at samples (HOSTTUNE_WATCH_TEST_RCVBUF: lost
# events on demand, tests/netns-watch.sh) changes how watch counts, and
# watch's figures feed audit --observed: the hosttune that is installed does
# not read that variable at all, tests/hosttune-hooks (a check program built
# from the same sources with HT_TEST_HOOKS) does. Its name is checked in
# both binaries, and, as root in a network namespace of its own, what each
# does with a value it cannot take.
. "$(dirname "$0")/lib.sh"

HOOKS=${HT_HOOKS:-${HT_BUILD_TESTS_DIR:+$HT_BUILD_TESTS_DIR/hosttune-hooks}}
if [ -z "$HOOKS" ] || [ ! -x "$HOOKS" ]; then
	echo "# SKIP: tests/hosttune-hooks not built (HT_BUILD_TESTS_DIR or HT_HOOKS)"
	exit 77
fi
# has_name FILE: "yes" when the variable's name is in the binary FILE.
has_name() {
	if grep -aq HOSTTUNE_WATCH_TEST "$1"; then echo yes; else echo no; fi
}
expect_eq "hosttune: the name HOSTTUNE_WATCH_TEST_RCVBUF is not in the binary" no \
	"$(has_name "$HOSTTUNE")"
expect_eq "hosttune-hooks: the name is in the test binary" yes "$(has_name "$HOOKS")"
# The module-load stand-in of first-boot-load.sh, likewise.
expect_eq "hosttune: the name HOSTTUNE_TEST_MODLOAD is not in the binary" no \
	"$(if grep -aq HOSTTUNE_TEST_MODLOAD "$HOSTTUNE"; then echo yes; else echo no; fi)"
expect_eq "hosttune-hooks: HOSTTUNE_TEST_MODLOAD is in the test binary" yes \
	"$(if grep -aq HOSTTUNE_TEST_MODLOAD "$HOOKS"; then echo yes; else echo no; fi)"

# What each does with the variable: a watch of this host's conntrack table
# (its own network namespace: an empty table) for two samples.
if [ "$(id -u)" -eq 0 ] && unshare -n true 2>/dev/null &&
	[ -e /proc/sys/net/netfilter/nf_conntrack_max ]; then
	for b in hosttune hooks; do
		if [ $b = hosttune ]; then bin=$HOSTTUNE; else bin=$HOOKS; fi
		HOSTTUNE_WATCH_TEST_RCVBUF=junk unshare -n "$bin" --rules "$HT_RULES_DIR" \
			--format json --interval 10ms --duration 10ms watch >"$TMP/$b.json" 2>"$TMP/$b.err"
		echo "$? $(jq -r .source "$TMP/$b.json" 2>&1)" >"$TMP/$b.src"
	done
	expect_eq "hosttune: HOSTTUNE_WATCH_TEST_RCVBUF=junk changes nothing" \
		"0 ctnetlink NEW events" "$(cat "$TMP/hosttune.src")"
	expect_eq "hosttune-hooks: HOSTTUNE_WATCH_TEST_RCVBUF=junk is taken (and refused)" \
		"0 unknown: ctnetlink NEW events: EINVAL" "$(cat "$TMP/hooks.src")"
else
	echo "# SKIP the watch runs: need root, unshare -n and nf_conntrack loaded"
fi

finish
