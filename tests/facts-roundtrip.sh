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

# host.collected_at (now) and hosttune.version as the expected files have them.
PIN='s/^host\.collected_at = "[0-9T:Z-]*" from time(2)$/host.collected_at = "2000-01-01T00:00:00Z" from time(2)/
s/^hosttune\.version = "[^"]*" from hosttune --version$/hosttune.version = "0" from hosttune --version/'

roundtrip "this host"
for d in "$FIXTURES"/*/root; do
	name=$(basename "$(dirname "$d")")
	roundtrip "fixture $name" --root "$d"
	if [ -f "$FIXTURES/$name/expected.facts" ]; then
		# The facts of the run, not of the tree, pinned as test-facts.c pins them.
		"$HOSTTUNE" --root "$d" facts | sed -e "$PIN" >"$TMP/c.facts"
		if cmp -s "$FIXTURES/$name/expected.facts" "$TMP/c.facts"; then
			ok "fixture $name: collects as expected.facts"
		else
			not_ok "fixture $name: collects as expected.facts" \
				"$(diff "$FIXTURES/$name/expected.facts" "$TMP/c.facts" | head -5)"
		fi
	fi
done

# The host a snapshot is of: the tree's hostname, the time it was taken
# (between two readings of the clock around it, UTC; ISO 8601 strings sort
# as the times do) and the version of hosttune that took it.
t0=$(date -u +%Y-%m-%dT%H:%M:%SZ)
"$HOSTTUNE" --root "$FIXTURES/garage-vm/root" --format json facts >"$TMP/h.json"
t1=$(date -u +%Y-%m-%dT%H:%M:%SZ)
expect_eq "host.name: the tree's /proc/sys/kernel/hostname" garage-vm \
	"$(jq -r '.facts["host.name"].value' "$TMP/h.json")"
at=$(jq -r '.facts["host.collected_at"].value' "$TMP/h.json")
if [ "$(printf '%s\n' "$t0" "$at" "$t1" | LC_ALL=C sort)" = "$(printf '%s\n' "$t0" "$at" "$t1")" ]; then
	ok "host.collected_at $at: between $t0 and $t1"
else not_ok "host.collected_at: between $t0 and $t1" "got: $at"; fi
expect_eq "hosttune.version: hosttune --version's" \
	"$("$HOSTTUNE" --version | sed -n '1s/^hosttune //p')" \
	"$(jq -r '.facts["hosttune.version"].value' "$TMP/h.json")"

# The garage VM's JSON: MemTotal 491520 kB x 1024 = 503316480 bytes.
"$HOSTTUNE" --root "$FIXTURES/garage-vm/root" --format json facts >"$TMP/g.json"
expect_eq "JSON value is a number" 503316480 "$(jq '.facts["mem.total"].value' "$TMP/g.json")"
expect_eq "JSON unit" bytes "$(jq -r '.facts["mem.total"].unit' "$TMP/g.json")"
expect_eq "JSON source" "/proc/meminfo MemTotal" "$(jq -r '.facts["mem.total"].source' "$TMP/g.json")"
expect_eq "JSON version as a string" 5.15.0 "$(jq -r '.facts["kernel.version"].value' "$TMP/g.json")"
expect_eq "JSON unavailable is null" null "$(jq '.facts["kernel.page_size"].value' "$TMP/g.json")"
expect_eq "JSON unavailable errno" ENOENT "$(jq -r '.facts["kernel.page_size"].error' "$TMP/g.json")"

finish
