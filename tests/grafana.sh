#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# examples/grafana/hosttune.json, the Grafana dashboard over hosttune's
# textfile metrics and node_exporter's: its structure checked with jq (the
# panels the dashboard is for, each query against the Prometheus data source
# variable, no two panels on the same cells of Grafana's 24-column grid);
# every query parsed by promtool (one recording rule a query, Grafana's
# $__rate_interval made 5m); every metric a query names written by hosttune
# (audit --format prometheus on a fixture tree and on a facts file with a
# peer and a process) or one of the node_exporter names listed below.
. "$(dirname "$0")/lib.sh"

D=$HT_TESTS_DIR/../examples/grafana/hosttune.json

# ---- structure (jq) ----
jq empty "$D" 2>"$TMP/err"
expect_eq "the dashboard is JSON" "0 " "$? $(cat "$TMP/err")"
expect_eq "title, uid and a schema version" "hosttune hosttune true" \
	"$(jq -r '"\(.title) \(.uid) \(.schemaVersion | type == "number" and . >= 30)"' "$D")"
expect_eq "a data source variable of type prometheus" "datasource prometheus" \
	"$(jq -r '.templating.list[] | select(.type == "datasource") | "\(.name) \(.query)"' "$D")"
expect_eq "a host variable (instance) from hosttune's own series" \
	'instance ${datasource} label_values(hosttune_audit_worst_severity, instance)' \
	"$(jq -r '.templating.list[] | select(.name == "instance") | "\(.name) \(.datasource.uid) \(.query.query)"' "$D")"
# Each panel: a unique id, a title, a type Grafana ships, its place on the
# grid within 24 columns, the data source variable, and queries with an
# expression and a refId of their own.
jq -r '.panels[] | select(
		(.title | type) != "string" or .title == ""
		or (.type | IN("stat", "timeseries", "bargauge", "gauge", "table") | not)
		or ([.gridPos.h, .gridPos.w, .gridPos.x, .gridPos.y] | map(type == "number") | all | not)
		or .gridPos.x + .gridPos.w > 24
		or .datasource.uid != "${datasource}"
		or (.targets | length) == 0
		or ([.targets[] | select((.expr | type) != "string" or .expr == ""
			or .datasource.uid != "${datasource}")] | length) > 0
		or ([.targets[].refId] | unique | length) != (.targets | length)
	) | .title // "(no title)"' "$D" >"$TMP/bad"
expect_eq "every panel: title, type, grid place, data source, queries" "" "$(cat "$TMP/bad")"
expect_eq "panel ids unique" "$(jq '.panels | length' "$D")" "$(jq '[.panels[].id] | unique | length' "$D")"
# Two panels overlap when their column spans and their row spans both meet.
overlaps() {
	jq -r '[.panels[] | {t: .title, g: .gridPos}] as $p
		| range(0; $p | length) as $i | range($i + 1; $p | length) as $j
		| $p[$i].g as $a | $p[$j].g as $b
		| select($a.x < $b.x + $b.w and $b.x < $a.x + $a.w
			and $a.y < $b.y + $b.h and $b.y < $a.y + $a.h)
		| "\($p[$i].t) / \($p[$j].t)"' "$1"
}
expect_eq "no two panels on the same cells" "" "$(overlaps "$D")"
# The checks above can fail: a panel moved onto another, one without queries.
jq '.panels[1].gridPos = .panels[0].gridPos' "$D" >"$TMP/moved.json"
expect_eq "the overlap check finds a moved panel" "Worst severity / Findings by severity" \
	"$(overlaps "$TMP/moved.json")"

# The four views the dashboard is for, each by the series it plots:
# panel title|a query's expression (each a fixed string of it).
while IFS='|' read -r title expr; do
	expect_eq "panel: $title" 1 "$(T=$title E=$expr jq '[.panels[] | select(.title == env.T)
		| .targets[] | select(.expr | contains(env.E))] | length' "$D")"
done <<'EOF'
Findings by severity|sum by (instance, severity) (hosttune_audit_findings{
Conntrack entries against max|node_nf_conntrack_entries{
Conntrack entries against max|node_nf_conntrack_entries_limit{
Retransmit share per peer|hosttune_peer_retransmit_ratio{
Open files of the worst process|topk by (instance) (1, hosttune_process_open_files{instance=~"$instance"} / hosttune_process_open_files_limit{
EOF
expect_eq "every query keeps to the chosen hosts" "" \
	"$(jq -r '.panels[].targets[].expr | select(contains("instance=~\"$instance\"") | not)' "$D")"

# ---- the metric names of every query ----
# What hosttune writes: a fixture tree (the Garage VM: the findings and the
# conntrack figures) and a facts file adding a peer and a judged process.
ht --root "$FIXTURES/garage-vm/root" --no-measure facts >"$TMP/g.facts" 2>/dev/null
{
	grep -v '^peer\.list \|^process\.list ' "$TMP/g.facts"
	cat <<'EOF'
peer.list = "10.5.5.20"
peer.10.5.5.20.address = "10.5.5.20"
peer.10.5.5.20.connections = 2 connections
peer.10.5.5.20.retrans = 1466 segments
peer.10.5.5.20.segs_out = 29000 segments
peer.10.5.5.20.rtt = 30 ms
peer.10.5.5.20.min_rtt = 8 ms
process.list = "garage"
process.garage.comm = "garage"
process.garage.fds = 1000 descriptors
process.garage.nofile = 1024 descriptors
process.garage.nofile_hard = 524288 descriptors
process.garage.pid = 733
EOF
} >"$TMP/x.facts"
ht --root "$FIXTURES/garage-vm/root" --profile garage --no-measure --format prometheus audit >"$TMP/g.prom"
ht --facts "$TMP/x.facts" --profile garage --format prometheus audit >"$TMP/x.prom"
cat "$TMP/g.prom" "$TMP/x.prom" | sed -n 's/^# TYPE \([^ ]*\) .*/\1/p' | sort -u >"$TMP/hosttune.names"
expect_eq "hosttune wrote the peer and process families" 3 \
	"$(grep -c -x 'hosttune_peer_retransmit_ratio\|hosttune_process_open_files\|hosttune_process_open_files_limit' "$TMP/hosttune.names")"
# node_exporter's, from its conntrack collector (node_exporter 1.5,
# collector/conntrack_linux.go): the table's count and limit, and the drops
# of /proc/net/stat/nf_conntrack.
cat >"$TMP/node.names" <<'EOF'
node_nf_conntrack_entries
node_nf_conntrack_entries_limit
node_nf_conntrack_stat_drop
EOF
# When node_exporter is installed, each of those names is in its binary
# (without the node_ namespace, which it adds).
NE=$(command -v prometheus-node-exporter || command -v node_exporter || true)
if [ -n "$NE" ]; then
	while read -r n; do
		expect_eq "node_exporter writes $n" yes \
			"$(if grep -aq "${n#node_}" "$NE"; then echo yes; else echo no; fi)"
	done <"$TMP/node.names"
else
	echo "# SKIP the names in node_exporter's binary: node_exporter is not installed"
fi

# names EXPR: the metric names EXPR reads, one a line. String literals,
# label matchers, ranges, numbers and durations, and the label lists of by,
# without, on, ignoring, group_left and group_right go first; then every
# identifier but a function (followed by "(") or a keyword is a metric name.
names() {
	printf '%s\n' "$1" | sed -E -e 's/"([^"\\]|\\.)*"//g' -e 's/\{[^}]*\}//g' -e 's/\[[^]]*\]//g' \
		-e 's/(by|without|on|ignoring|group_left|group_right)[[:space:]]*\([^)]*\)//g' \
		-e 's/(^|[^a-zA-Z0-9_:])[0-9][0-9a-zA-Z.]*/\1/g' |
		grep -oE '[a-zA-Z_:][a-zA-Z0-9_:]*[[:space:]]*\(?' | sed 's/[[:space:]]*$//' |
		grep -v '($' | grep -vxE 'and|or|unless|bool|offset|inf|nan' | sort -u
}
expect_eq "the name finder: a query's names, not its functions, labels or keywords" \
	"a_total b:c node_x" \
	"$(names 'sum by (instance, job) (rate(a_total{job="x y",le=~"a|b"}[5m])) / on (instance) group_left(z) b:c > bool 0 or node_x offset 5m' | tr '\n' ' ' | sed 's/ $//')"
cat "$TMP/hosttune.names" "$TMP/node.names" | sort -u >"$TMP/known"
# unknown FILE: "TITLE REFID: NAME" for each name a query of the dashboard
# FILE reads that is not in $TMP/known, "TITLE REFID: none" for a query
# that reads no metric; the queries in $TMP/queries.
unknown() {
	jq -r '.panels[] | .title as $t | .targets[] | "\($t)\t\(.refId)\t\(.expr)"' "$1" >"$TMP/queries"
	while IFS="$(printf '\t')" read -r title ref expr; do
		names "$expr" >"$TMP/q.names"
		[ -s "$TMP/q.names" ] || echo "$title $ref: none"
		comm -23 "$TMP/q.names" "$TMP/known" | sed "s|^|$title $ref: |"
	done <"$TMP/queries"
}
expect_eq "a metric that nobody writes is found" "Retransmit share per peer A: hosttune_peer_retransmits" \
	"$(jq '.panels[5].targets[0].expr |= sub("hosttune_peer_retransmit_ratio"; "hosttune_peer_retransmits")' "$D" >"$TMP/typo.json" &&
		unknown "$TMP/typo.json")"
expect_eq "every query names a metric, hosttune's or node_exporter's" "" "$(unknown "$D")"
expect_eq "the queries read hosttune's and node_exporter's series (10 queries)" 10 "$(wc -l <"$TMP/queries")"

# ---- every query parses (promtool) ----
# rules_of FILE: a rules file with one recording rule a query of the
# dashboard FILE, Grafana's interval variables made a Prometheus duration.
rules_of() {
	jq -r '"groups:\n  - name: grafana-hosttune\n    rules:",
		(.panels[] | .id as $id | .targets[] |
			"      - record: grafana:panel\($id):\(.refId)\n        expr: \(.expr
				| gsub("\\$__rate_interval"; "5m") | gsub("\\$__interval"; "1m")
				| gsub("\\$__range"; "1h") | tojson)")' "$1"
}
if command -v promtool >/dev/null 2>&1; then
	rules_of "$D" >"$TMP/queries.yml"
	promtool check rules "$TMP/queries.yml" >"$TMP/out" 2>&1
	expect_eq "promtool check rules: every query parses" "0" "$?"
	expect_contains "promtool read one rule a query" "SUCCESS: 10 rules found" "$(cat "$TMP/out")"
	# promtool refuses a query that does not parse: a parenthesis left open.
	jq '.panels[0].targets[0].expr |= sub("\\)$"; "")' "$D" >"$TMP/broken.json"
	rules_of "$TMP/broken.json" >"$TMP/broken.yml"
	promtool check rules "$TMP/broken.yml" >/dev/null 2>&1
	expect_eq "promtool check rules refuses an unclosed parenthesis" 1 "$?"
else
	echo "# SKIP promtool: prometheus is not installed (tools/install-deps --test)"
fi

finish
