#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# `hosttune facts` prints a file that `--facts FILE facts` reads back
# exactly, on this host and on every fixture tree; the JSON form parses and
# carries the same values.
. "$(dirname "$0")/lib.sh"

roundtrip() {
	desc=$1
	shift
	"$HOSTTUNE" "$@" facts >"$TMP/a.facts"
	expect_eq "$desc: facts exits 0" 0 $?
	"$HOSTTUNE" --facts "$TMP/a.facts" facts >"$TMP/b.facts"
	if cmp -s "$TMP/a.facts" "$TMP/b.facts"; then ok "$desc: read back byte for byte"
	else not_ok "$desc: read back byte for byte" "$(diff "$TMP/a.facts" "$TMP/b.facts" | head -5)"; fi
	"$HOSTTUNE" "$@" --format json facts >"$TMP/a.json"
	n_text=$(grep -vc '^#' "$TMP/a.facts")
	n_json=$(jq '.facts | length' "$TMP/a.json")
	expect_eq "$desc: JSON has every fact" "$n_text" "$n_json"
}

roundtrip "this host"
for d in "$FIXTURES"/*/root; do
	name=$(basename "$(dirname "$d")")
	roundtrip "fixture $name" --root "$d"
	if [ -f "$FIXTURES/$name/expected.facts" ]; then
		"$HOSTTUNE" --root "$d" facts >"$TMP/c.facts"
		if cmp -s "$FIXTURES/$name/expected.facts" "$TMP/c.facts"; then
			ok "fixture $name: collects as expected.facts"
		else
			not_ok "fixture $name: collects as expected.facts" \
				"$(diff "$FIXTURES/$name/expected.facts" "$TMP/c.facts" | head -5)"
		fi
	fi
done

# The garage VM's JSON: MemTotal 491520 kB x 1024 = 503316480 bytes.
"$HOSTTUNE" --root "$FIXTURES/garage-vm/root" --format json facts >"$TMP/g.json"
expect_eq "JSON value is a number" 503316480 "$(jq '.facts["mem.total"].value' "$TMP/g.json")"
expect_eq "JSON unit" bytes "$(jq -r '.facts["mem.total"].unit' "$TMP/g.json")"
expect_eq "JSON source" "/proc/meminfo MemTotal" "$(jq -r '.facts["mem.total"].source' "$TMP/g.json")"
expect_eq "JSON version as a string" 5.15.0 "$(jq -r '.facts["kernel.version"].value' "$TMP/g.json")"
expect_eq "JSON unavailable is null" null "$(jq '.facts["kernel.page_size"].value' "$TMP/g.json")"
expect_eq "JSON unavailable errno" ENOENT "$(jq -r '.facts["kernel.page_size"].error' "$TMP/g.json")"

finish
