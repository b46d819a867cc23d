#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tools/install-deps without running apt-get: its arguments (nothing or
# --test; anything else exit 2 before any install), the build set a subset
# of the test set, no service enabled by it, and README's two quick-start
# commands as .ci/run runs them (the first before the build, the second
# before make -j2 check).
. "$(dirname "$0")/lib.sh"

SRC=$HT_TESTS_DIR/..
ID=$SRC/tools/install-deps

sh -n "$ID"
expect_eq "the script parses" 0 $?
sh "$ID" --bogus >"$TMP/out" 2>"$TMP/err"
expect_eq "an unknown argument: exit 2, one line, nothing installed" \
	"2 tools/install-deps: unknown argument '--bogus' (expected --test or nothing)|" \
	"$? $(cat "$TMP/err")|$(cat "$TMP/out")"
sh "$ID" --help >"$TMP/out" 2>&1
expect_contains "--help: the usage" "usage: tools/install-deps [--test]" "$?$(cat "$TMP/out")"

# The package lists as the script gives them to apt-get: the build set, and
# the words the test set adds.
sed -n '/^pkgs="/,/"$/p' "$ID" | tr -d '"' | sed 's/^pkgs=//' | tr -s ' \t' '\n\n' |
	grep -v '^$' | sort >"$TMP/build"
sed -n '/pkgs="\$pkgs$/,/"$/p' "$ID" | sed '1d' | tr -d '"' | tr -s ' \t' '\n\n' |
	grep -v '^$' | sort >"$TMP/test"
expect_eq "the build set: compiler, autotools, the libraries, cmocka, scdoc" \
	"autoconf automake gcc libc6-dev libcmocka-dev libinih-dev libjson-c-dev libkmod-dev libmnl-dev libssl-dev libtool libudev-dev make pkg-config scdoc systemd" \
	"$(tr '\n' ' ' <"$TMP/build" | sed 's/ $//')"
expect_eq "the network daemon only in the test set" "0 1" \
	"$(grep -c '^prometheus-node-exporter$' "$TMP/build") $(grep -c '^prometheus-node-exporter$' "$TMP/test")"
# nginx, for tests/proxy-nginx.sh only (started there in a namespace of its own).
expect_eq "nginx only in the test set" "0 1" \
	"$(grep -c '^nginx-light$' "$TMP/build") $(grep -c '^nginx-light$' "$TMP/test")"
expect_eq "no unit enabled or started by the script itself" 0 \
	"$(grep -v '^#' "$ID" | grep -c -E 'systemctl (enable|start)|invoke-rc.d .* start')"

# README's two commands, and .ci/run running them in that order.
readme_cmds=$(sed -n '/^## Quick start/,/^```$/p' "$SRC/README.md" | sed -n '/^```sh$/,/^```$/p' | sed '1d;$d')
expect_eq "README: two commands, install-deps then install-deps --test" \
	"./tools/install-deps && autoreconf -fi && ./configure && make && ./src/hosttune --rules rules audit|./tools/install-deps --test && make -j2 check" \
	"$(printf '%s\n' "$readme_cmds" | paste -sd'|' -)"
if [ -f "$SRC/.ci/run" ]; then
	expect_eq ".ci/run: install-deps, the build, install-deps --test, make -j2 check" \
		"./tools/install-deps|./configure --enable-werror|./tools/install-deps --test|make -j2 check" \
		"$(grep -E '^(\./tools/install-deps|\./configure|make -j2 check$)' "$SRC/.ci/run" | paste -sd'|' -)"
else
	echo "# .ci/run is not in this tree (a release tarball): its order not checked"
fi

finish
