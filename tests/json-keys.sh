#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# hosttune-json(5) documents every key of every command's JSON (issue 13: watch's
# summary had 13 undocumented keys, verify's "holds" check was missing): the
# keys of real documents, from every command on the Garage VM's tree, each
# appear quoted ("key") in hosttune-json(5). Names that are data, not keys (the
# workload variables, the named values, the facts), are skipped; their
# objects' own keys are checked.
. "$(dirname "$0")/lib.sh"

MAN=$HT_TESTS_DIR/../man/hosttune-json.5.scd
G="--profile garage --set workload.conn_rate=570"
cp -a "$FIXTURES/garage-vm/root" "$TMP/g"
FACTS=$FIXTURES/garage-vm/expected.facts
# doc NAME ARGS...: the JSON document of hosttune ARGS in $TMP/NAME.json
doc() {
	n=$1
	shift
	ht --format json "$@" >"$TMP/$n.json" 2>/dev/null
	if jq -e 'type == "object"' "$TMP/$n.json" >/dev/null 2>&1; then ok "$n: one JSON object"
	else not_ok "$n: one JSON object" "$(head -c 300 "$TMP/$n.json")"; fi
}
# shellcheck disable=SC2086
{
	doc plan --root "$TMP/g" $G plan
	doc apply --root "$TMP/g" $G apply
	doc audit --root "$TMP/g" $G audit
	doc audit-facts --facts "$FACTS" $G audit
	mkdir "$TMP/fleet"
	cp "$FACTS" "$TMP/fleet/vm.facts"
	cp "$FIXTURES/home-server/host.facts" "$TMP/fleet/home.facts"
	doc audit-fleet --facts "$TMP/fleet" $G audit
	doc verify --root "$TMP/g" $G verify
	doc revert --root "$TMP/g" revert
	doc revert-nothing --root "$TMP/g" revert
	doc facts --facts "$FACTS" facts
	doc rules rules
	doc explain --facts "$FACTS" explain conntrack.max
	doc explain-value --facts "$FACTS" explain conntrack.default.buckets
	doc profiles --facts "$FACTS" profiles
	doc watch --root "$TMP/g" --interval 250ms --duration 500ms watch
	doc error --root "$TMP/nope" audit
	doc error-file --facts /dev/null audit
}
for f in "$TMP"/*.json; do
	# Every key, recursively, but not the names below workload, values and facts.
	jq -r 'del(.workload, .values) | (if .facts then .facts |= (to_entries | map(.value)) else . end)
		| [paths | .[] | strings] | unique | .[]' "$f"
done | sort -u >"$TMP/keys"
expect_eq "keys found (at least audit's, plan's and watch's)" yes \
	"$([ "$(wc -l <"$TMP/keys")" -gt 60 ] && echo yes || echo "no: $(wc -l <"$TMP/keys")")"
while read -r k; do
	if grep -qF "\"$k\"" "$MAN"; then ok "hosttune-json(5) documents \"$k\""
	else not_ok "hosttune-json(5) documents \"$k\""; fi
done <"$TMP/keys"

finish
