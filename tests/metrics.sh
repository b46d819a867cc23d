#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# audit --format prometheus (hosttune(8) PROMETHEUS): the values against
# figures worked out here, the text format checked line by line and, when
# prometheus-node-exporter is installed, read by node_exporter's own textfile
# collector on 127.0.0.1; audit --output FILE: replaced atomically, the old
# file kept on every failure; the systemd unit and timer checked by
# systemd-analyze verify.
. "$(dirname "$0")/lib.sh"

GARAGE=$FIXTURES/garage-vm/root
P=$TMP/garage.prom

# sample FILE NAME{LABELS}: the value of that exact series ("" when absent)
sample() {
	S=$2 awk 'index($0, ENVIRON["S"] " ") == 1 { print substr($0, length(ENVIRON["S"]) + 2) }' "$1"
}

# check_format FILE: "" when FILE is well-formed text format as hosttune
# writes it, else one line per problem: every family has one HELP then one
# TYPE gauge before its samples, its samples together (not interleaved with
# another family's), metric and label names valid, label values quoted with
# only \\ \" \n escapes, one value and no timestamp, no series twice, no
# blank line, a final line feed.
check_format() {
	[ -s "$1" ] || { echo "empty"; return; }
	[ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || echo "no final line feed"
	awk '
	function bad(msg) { printf "line %d: %s: %s\n", NR, msg, $0 }
	/^# HELP / {
		if ($3 !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*$/) bad("metric name")
		if ($3 in help) bad("second HELP")
		help[$3] = 1; pending = $3; next
	}
	/^# TYPE / {
		if ($3 != pending) bad("TYPE without its HELP just before")
		if ($4 != "gauge" || NF != 4) bad("not a gauge")
		if (fam != "") done[fam] = 1
		fam = $3; pending = ""; typed[fam] = 1; next
	}
	/^#/ { bad("other comment"); next }
	/^$/ { bad("blank line"); next }
	{
		line = $0
		if (!match(line, /^[a-zA-Z_:][a-zA-Z0-9_:]*/)) { bad("metric name"); next }
		name = substr(line, 1, RLENGTH); rest = substr(line, RLENGTH + 1)
		if (!(name in typed)) bad("sample before its TYPE")
		if (name != fam) bad("interleaved with " fam)
		if (name in done) bad("family seen before")
		labels = ""
		if (substr(rest, 1, 1) == "{") {
			# label="value" pairs, comma-separated; value: escapes or plain characters
			pair = "[a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\\n]|\\\\[\\\\\"n])*\""
			if (!match(rest, "^\\{" pair "(," pair ")*\\}")) { bad("labels"); next }
			labels = substr(rest, 1, RLENGTH); rest = substr(rest, RLENGTH + 1)
		}
		if (rest !~ /^ -?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$/) bad("value (or a timestamp)")
		if ((name labels) in seen) bad("series twice")
		seen[name labels] = 1
	}' "$1"
}

# ---- the Garage VM (tests/audit-garage.sh): nf_conntrack_max 4096,
# buckets 4096, TIME_WAIT 120 s, profile garage (conn_rate 200, burst 3).
ht --root "$GARAGE" --profile garage --no-measure --format prometheus audit >"$P" 2>"$TMP/err"
expect_eq "audit --format prometheus exits 1 (findings), as audit does" 1 $?
expect_eq "nothing on stderr" "" "$(cat "$TMP/err")"
expect_eq "the text format is well-formed" "" "$(check_format "$P")"
expect_eq "buckets: nf_conntrack_buckets 4096" 4096 "$(sample "$P" hosttune_conntrack_buckets)"
expect_eq "TIME_WAIT 120 s" 120 "$(sample "$P" hosttune_conntrack_time_wait_seconds)"
# 4096 / 120 = 34.1333...: the shortest decimal that reads back as that double.
expect_eq "ceiling 4096 / 120 = 34.13333333333333 connections/s" 34.13333333333333 \
	"$(sample "$P" hosttune_conntrack_new_connection_ceiling_per_second)"
expect_eq "expected rate: the garage profile's 200/s" 200 \
	"$(sample "$P" hosttune_conntrack_expected_rate_per_second)"
expect_eq "planned peak 200 x burst 3 = 600/s" 600 \
	"$(sample "$P" hosttune_conntrack_planned_peak_rate_per_second)"
# node_exporter has these already (node_nf_conntrack_entries, _limit): not again.
expect_eq "no copy of node_exporter's entries or limit" "" \
	"$(grep -E '^hosttune_[a-z_]*(entries|limit|count)[a-z_]* ' "$P")"
expect_eq "profile label" 1 "$(sample "$P" 'hosttune_profile_info{profile="garage"}')"
expect_eq "worst severity: critical = 3" 3 "$(sample "$P" hosttune_audit_worst_severity)"
expect_eq "max: critical = 3" 3 "$(sample "$P" 'hosttune_finding_severity{rule="conntrack.max"}')"
expect_eq "TIME_WAIT: warning = 2" 2 \
	"$(sample "$P" 'hosttune_finding_severity{rule="conntrack.time_wait"}')"
expect_eq "chain length: ok = 0" 0 \
	"$(sample "$P" 'hosttune_finding_severity{rule="conntrack.chain_length"}')"
expect_eq "max: current 4096 with the sysctl's name" 4096 "$(sample "$P" \
	'hosttune_finding_current_value{rule="conntrack.max",key="net.netfilter.nf_conntrack_max",unit="entries"}')"
# 32768, as tests/audit-garage.sh works out for this profile's 200/s.
expect_eq "max: recommended 32768" 32768 "$(sample "$P" \
	'hosttune_finding_recommended_value{rule="conntrack.max",key="net.netfilter.nf_conntrack_max",unit="entries"}')"
expect_eq "TIME_WAIT: 120 -> 30 s" "120 30" "$(sample "$P" \
	'hosttune_finding_current_value{rule="conntrack.time_wait",key="net.netfilter.nf_conntrack_tcp_timeout_time_wait",unit="seconds"}') $(sample "$P" \
	'hosttune_finding_recommended_value{rule="conntrack.time_wait",key="net.netfilter.nf_conntrack_tcp_timeout_time_wait",unit="seconds"}')"
# drops 0x1731 + early_drop 0x4d = 5937 + 77 = 6014 (tests/audit-garage.sh); advice: no key.
expect_eq "drops: 6014, no key label (advice)" 6014 \
	"$(sample "$P" 'hosttune_finding_current_value{rule="conntrack.drops",unit="events"}')"
expect_eq "a not-applicable finding: applicable 0, no severity" "0 " \
	"$(sample "$P" 'hosttune_finding_applicable{rule="cpu.aes"}') $(sample "$P" 'hosttune_finding_severity{rule="cpu.aes"}')"
expect_eq "build info" 1 "$(sample "$P" "hosttune_build_info{version=\"$("$HOSTTUNE" --version | sed -n '1s/^hosttune //p')\"}")"
ts=$(sample "$P" hosttune_last_run_timestamp_seconds)
case $ts in
[1-9]*[0-9]) case $ts in *[!0-9]*) not_ok "last run: an integer" "got $ts" ;; *) ok "last run: an integer of seconds" ;; esac ;;
*) not_ok "last run: an integer" "got $ts" ;;
esac

# Every finding of the JSON report, the same severity (0 ok .. 3 critical),
# and the summary's counts.
ht --root "$GARAGE" --profile garage --no-measure --format json audit >"$TMP/garage.json"
jq -r '.findings[] | select(.applicable) | "\(.rule)\(if .instance then "/" + .instance else "" end) \({"ok": 0, "info": 1, "warning": 2, "critical": 3}[.severity])"' \
	"$TMP/garage.json" | sort >"$TMP/json.sev"
sed -n 's/^hosttune_finding_severity{rule="\([^"]*\)"\(,\(device\|port\|process\|directory\)="\([^"]*\)"\)\{0,1\}} \([0-3]\)$/\1 \4 \5/p' "$P" |
	awk '{ if (NF == 3) print $1 "/" $2, $3; else print $1, $2 }' | sort >"$TMP/prom.sev"
expect_eq "every applicable finding of the JSON report, same severity" "$(cat "$TMP/json.sev")" \
	"$(cat "$TMP/prom.sev")"
[ -s "$TMP/json.sev" ] || not_ok "the JSON report has findings to compare"
for s in ok info warning critical n/a; do
	expect_eq "findings at $s: as the JSON summary" "$(jq -r ".summary[\"$s\"]" "$TMP/garage.json")" \
		"$(sample "$P" "hosttune_audit_findings{severity=\"$s\"}")"
done

# --set workload.conn_rate=570 (the Garage owner's figure): expected 570,
# planned 570 x 3 = 1710; the ceiling is the table's, unchanged.
ht --root "$GARAGE" --profile garage --set workload.conn_rate=570 --no-measure \
	--format prometheus audit >"$TMP/570.prom"
expect_eq "expected rate 570 from --set" 570 "$(sample "$TMP/570.prom" hosttune_conntrack_expected_rate_per_second)"
expect_eq "planned 570 x 3 = 1710" 1710 "$(sample "$TMP/570.prom" hosttune_conntrack_planned_peak_rate_per_second)"

# A facts file: nf_conntrack_max 262144 and TIME_WAIT 45 s give
# 262144 / 45 = 5825.4222...; --fail-on critical still applies.
ht --root "$GARAGE" --no-measure facts >"$TMP/garage.facts"
sed -e 's/^net\.netfilter\.nf_conntrack_max = 4096 /net.netfilter.nf_conntrack_max = 262144 /' \
	-e 's/^net\.netfilter\.nf_conntrack_tcp_timeout_time_wait = 120 /net.netfilter.nf_conntrack_tcp_timeout_time_wait = 45 /' \
	"$TMP/garage.facts" >"$TMP/big.facts"
ht --facts "$TMP/big.facts" --profile garage --format prometheus audit >"$TMP/big.prom"
expect_eq "ceiling 262144 / 45 = 5825.422222222222" 5825.422222222222 \
	"$(sample "$TMP/big.prom" hosttune_conntrack_new_connection_ceiling_per_second)"
expect_eq "TIME_WAIT 45 from the facts file" 45 "$(sample "$TMP/big.prom" hosttune_conntrack_time_wait_seconds)"
expect_eq "the facts file's output is well-formed" "" "$(check_format "$TMP/big.prom")"

# A host without nf_conntrack: no family of the table (no HELP without
# samples); the rates are the profile's (default: 100/s, burst 2 -> 200/s).
ht --root "$FIXTURES/no-conntrack/root" --no-measure --format prometheus audit >"$TMP/noct.prom"
rc=$?
[ $rc -le 1 ] || not_ok "no-conntrack: audit exits $rc"
expect_eq "no-conntrack: no buckets, TIME_WAIT or ceiling" "" \
	"$(grep -E 'hosttune_conntrack_(buckets|time_wait|new_conn)' "$TMP/noct.prom")"
expect_eq "no-conntrack: the profile's rates, 100 and 100 x 2" "100 200" \
	"$(sample "$TMP/noct.prom" hosttune_conntrack_expected_rate_per_second) $(sample "$TMP/noct.prom" hosttune_conntrack_planned_peak_rate_per_second)"
expect_eq "no-conntrack: well-formed" "" "$(check_format "$TMP/noct.prom")"

# Open files of each judged process against its soft limit: garage PID 733
# with 1000 of 1024 (97.7%: process.limit_nofile critical), sshd PID 611 with
# 7 of 1024, as the facts file gives them.
ht --facts "$FIXTURES/verdict/nofile-garage-515.facts" --profile garage --format prometheus \
	audit >"$TMP/nofile.prom"
expect_eq "open files: garage 1000 of 1024, sshd 7 of 1024" "1000 1024 7 1024" \
	"$(sample "$TMP/nofile.prom" 'hosttune_process_open_files{process="garage",pid="733"}') $(sample "$TMP/nofile.prom" \
	'hosttune_process_open_files_limit{process="garage",pid="733"}') $(sample "$TMP/nofile.prom" \
	'hosttune_process_open_files{process="sshd",pid="611"}') $(sample "$TMP/nofile.prom" \
	'hosttune_process_open_files_limit{process="sshd",pid="611"}')"
expect_eq "open files: well-formed" "" "$(check_format "$TMP/nofile.prom")"
# The Garage VM's tree has no process (process.list is ""): no family at all.
expect_eq "no process: no open-files family" 0 "$(grep -c '^# HELP hosttune_process_open_files' "$P")"

# Per-interface findings carry the interface as "device" (node_exporter's
# label for NICs), never "instance" (Prometheus's own target label).
ht --facts "$FIXTURES/registry-vm/host.facts" --profile registry --format prometheus audit >"$TMP/reg.prom"
# 8 vCPUs, 1 of 8 combined channels: min(8, 8) = 8 -> warning (tests/field-hosts.sh).
expect_eq "registry VM: nic.queues on eth0, warning, 1 -> 8" "2 1 8" \
	"$(sample "$TMP/reg.prom" 'hosttune_finding_severity{rule="nic.queues",device="eth0"}') $(sample "$TMP/reg.prom" \
	'hosttune_finding_current_value{rule="nic.queues",device="eth0",key="nic.channels.combined",unit="queues"}') $(sample "$TMP/reg.prom" \
	'hosttune_finding_recommended_value{rule="nic.queues",device="eth0",key="nic.channels.combined",unit="queues"}')"
expect_eq "no instance label anywhere" "" "$(grep 'instance=' "$TMP/reg.prom" "$P")"

# Label values escaped: a rule's unit may hold a double quote and a backslash.
mkdir -p "$TMP/rules"
cp -R "$HT_RULES_DIR/." "$TMP/rules/"
chmod -R u+w "$TMP/rules"
cat >>"$TMP/rules/workload.rules" <<'EOT'

[test.quoted]
title = a unit with a double quote and a backslash
target = advice
current = 7
unit = "odd" C:\units
severity = "info"
explain = a test rule
EOT
"$HOSTTUNE" --rules "$TMP/rules" --root "$GARAGE" --profile garage --no-measure --format prometheus \
	audit >"$TMP/quoted.prom" 2>"$TMP/quoted.err"
expect_eq "quote and backslash escaped in the label" 7 \
	"$(sample "$TMP/quoted.prom" 'hosttune_finding_current_value{rule="test.quoted",unit="\"odd\" C:\\units"}')"
expect_eq "escaped labels are well-formed" "" "$(check_format "$TMP/quoted.prom")"

# The checker itself fails on what node_exporter refuses.
printf '# HELP a x\n# TYPE a gauge\na 1 1700000000000\n' >"$TMP/ts.prom"
expect_contains "the checker refuses a timestamp" "value (or a timestamp)" "$(check_format "$TMP/ts.prom")"
printf '# HELP a x\n# TYPE a gauge\n# HELP b x\n# TYPE b gauge\nb 1\na 1\n' >"$TMP/il.prom"
expect_contains "the checker refuses interleaved families" "interleaved" "$(check_format "$TMP/il.prom")"
printf '# HELP a x\n# TYPE a gauge\na{l="x\\y"} 1\n' >"$TMP/esc.prom"
expect_contains "the checker refuses an unknown escape" "labels" "$(check_format "$TMP/esc.prom")"

# ---- usage: --format prometheus is audit's alone; so is --output.
for cmd in facts rules plan verify; do
	ht --format prometheus "$cmd" >/dev/null 2>"$TMP/err"
	expect_eq "$cmd --format prometheus: usage error" 2 $?
done
ht --format prometheus explain conntrack.max >/dev/null 2>&1
expect_eq "explain --format prometheus: usage error" 2 $?
ht --format yaml audit >/dev/null 2>"$TMP/err"
expect_contains "an unknown format names the three" "expected text, json or prometheus" "$(cat "$TMP/err")"
ht --output "$TMP/x" plan >/dev/null 2>"$TMP/err"
expect_eq "plan --output: usage error" 2 $?
expect_contains "--output is audit's" "--output applies to audit, not to plan" "$(cat "$TMP/err")"

# ---- --output FILE
OUT=$TMP/out
mkdir "$OUT"
printf 'old\n' >"$OUT/hosttune.prom"
chmod 0600 "$OUT/hosttune.prom"
(umask 077 && ht --root "$GARAGE" --profile garage --no-measure --format prometheus \
	--output "$OUT/hosttune.prom" audit >"$TMP/stdout" 2>"$TMP/err")
expect_eq "--output: exit 1 (findings), as without it" 1 $?
expect_eq "--output: nothing on stdout" "" "$(cat "$TMP/stdout")"
expect_eq "--output: nothing on stderr" "" "$(cat "$TMP/err")"
# The timestamp differs between the two runs; every other line is the same.
expect_eq "--output: the same metrics as stdout" "$(grep -v '^hosttune_last_run' "$P")" \
	"$(grep -v '^hosttune_last_run' "$OUT/hosttune.prom")"
expect_eq "--output: mode 0644 whatever the umask (node_exporter runs as another user)" 644 \
	"$(stat -c %a "$OUT/hosttune.prom")"
expect_eq "--output: no temp file left" "hosttune.prom" "$(ls -A "$OUT")"
# A relative path, with "..", from another directory.
mkdir "$TMP/cwd"
(cd "$TMP/cwd" && ht --root "$GARAGE" --profile garage --no-measure --format prometheus \
	--output ../out/rel.prom audit >/dev/null 2>&1)
expect_eq "--output: a relative path with .." "34.13333333333333" \
	"$(sample "$OUT/rel.prom" hosttune_conntrack_new_connection_ceiling_per_second)"
# --output takes every format of audit.
ht --root "$GARAGE" --profile garage --no-measure --format json --output "$OUT/a.json" audit 2>/dev/null
expect_eq "--output with json: exit 1" 1 $?
expect_eq "--output with json: the same document" "$(jq -S . "$TMP/garage.json")" "$(jq -S . "$OUT/a.json")"
ht --root "$GARAGE" --profile garage --no-measure --output "$OUT/a.txt" audit 2>/dev/null
ht --root "$GARAGE" --profile garage --no-measure audit >"$TMP/a.txt" 2>/dev/null
expect_eq "--output with text: the same report" "$(cat "$TMP/a.txt")" "$(cat "$OUT/a.txt")"
rm -f "$OUT/rel.prom" "$OUT/a.json" "$OUT/a.txt"

cp "$OUT/hosttune.prom" "$TMP/good.prom"
# fails OUTPUT DESCRIPTION [hosttune options...]: exit 3, one line naming
# OUTPUT on stderr, nothing on stdout, $OUT/hosttune.prom unchanged and no
# temp file left in $OUT.
fails() {
	_o=$1 _d=$2
	shift 2
	ht --root "$GARAGE" --profile garage --no-measure --format prometheus --output "$_o" "$@" \
		audit >"$TMP/stdout" 2>"$TMP/err"
	expect_eq "$_d: exit 3" 3 $?
	expect_eq "$_d: one line on stderr" 1 "$(wc -l <"$TMP/err")"
	expect_contains "$_d: the line names the file" "--output $_o" "$(cat "$TMP/err")"
	expect_eq "$_d: nothing on stdout" "" "$(cat "$TMP/stdout")"
	if cmp -s "$TMP/good.prom" "$OUT/hosttune.prom"; then ok "$_d: the old file is kept"
	else not_ok "$_d: the old file is kept"; fi
	expect_eq "$_d: no temp file left" "$(ls -A "$OUT")" "$(ls -A "$OUT" | grep -v '^\.')"
}
printf 'x\n' >"$OUT/plain"
fails "$OUT/plain/hosttune.prom" "a non-directory on the way"
fails "$TMP/missing/hosttune.prom" "a missing directory"
mkdir "$OUT/dir.prom"
fails "$OUT/dir.prom" "a directory in the way"
ln -s hosttune.prom "$OUT/link.prom"
fails "$OUT/link.prom" "a symbolic link in the way"
mkfifo "$OUT/fifo.prom"
# A FIFO (or a device: /dev/null as root) is not replaced by a regular file.
fails "$OUT/fifo.prom" "a FIFO in the way"
expect_eq "a FIFO in the way: still a FIFO" yes "$([ -p "$OUT/fifo.prom" ] && echo yes)"
# With --format json a failed --output is the JSON error object on stdout
# (the report went to the memfd, not to stdout): one document, exit 3.
ht --root "$GARAGE" --profile garage --no-measure --format json --output "$OUT/fifo.prom" \
	audit >"$TMP/stdout" 2>/dev/null
expect_eq "--format json, a failed --output: exit 3, the error object" "3 3" \
	"$? $(jq -s '.[0].error.exit' <"$TMP/stdout")"
expect_eq "--format json, a failed --output: one document" 1 "$(jq -s length <"$TMP/stdout")"
ht --root "$GARAGE" --profile garage --no-measure --format json --output "$TMP/missing/a.json" \
	audit >"$TMP/stdout" 2>/dev/null
expect_contains "--format json, a missing directory: the error object names --output" \
	"--output $TMP/missing/a.json" "$(jq -r .error.message <"$TMP/stdout")"
rm -rf "$OUT/plain" "$OUT/dir.prom" "$OUT/link.prom" "$OUT/fifo.prom"

# An unwritable directory: as root, through an unprivileged user (root writes anywhere).
chmod 0555 "$OUT"
cp "$TMP/big.facts" "$TMP/pub.facts"
as_user=""
if [ "$(id -u)" -eq 0 ]; then
	as_user="setpriv --reuid=65534 --regid=65534 --clear-groups --"
	chmod 0755 "$TMP"
	chmod 0644 "$TMP/pub.facts"
fi
if $as_user "$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$TMP/pub.facts" --profile garage \
	--format prometheus audit >/dev/null 2>&1 || [ $? -eq 1 ]; then
	$as_user "$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$TMP/pub.facts" --profile garage \
		--format prometheus --output "$OUT/hosttune.prom" audit >"$TMP/stdout" 2>"$TMP/err"
	expect_eq "an unwritable directory: exit 3" 3 $?
	expect_contains "an unwritable directory: says why" "Permission denied" "$(cat "$TMP/err")"
	if cmp -s "$TMP/good.prom" "$OUT/hosttune.prom"; then ok "an unwritable directory: the old file is kept"
	else not_ok "an unwritable directory: the old file is kept"; fi
else
	echo "# SKIP an unwritable directory: user 65534 cannot run $HOSTTUNE with these rules"
fi
chmod 0700 "$OUT" "$TMP"

# A failed audit (no such --root) writes nothing: exit 2 and the old file stays.
ht --root "$TMP/nothing" --format prometheus --output "$OUT/hosttune.prom" audit >"$TMP/stdout" 2>"$TMP/err"
expect_eq "a failed audit: its exit status (2)" 2 $?
if cmp -s "$TMP/good.prom" "$OUT/hosttune.prom"; then ok "a failed audit: the old file is kept"
else not_ok "a failed audit: the old file is kept"; fi

# ---- node_exporter reads the file (Debian's prometheus-node-exporter).
NE=$(command -v prometheus-node-exporter || command -v node_exporter || true)
if [ -z "$NE" ] || ! command -v curl >/dev/null 2>&1; then
	echo "# SKIP node_exporter: prometheus-node-exporter or curl is not installed"
else
	host_lock "node_exporter on a port of the host's 127.0.0.1"
	# scrape DIR: starts node_exporter on a free port of 127.0.0.1 with only
	# the textfile collector on DIR, prints /metrics, stops it by its PID.
	scrape() {
		port=$((20000 + $$ % 20000))
		for try in 1 2 3 4 5 6 7 8 9 10; do
			"$NE" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
				--collector.textfile --collector.textfile.directory="$1" \
				>"$TMP/ne.log" 2>&1 &
			ne_pid=$!
			n=0
			while [ $n -lt 50 ] && kill -0 "$ne_pid" 2>/dev/null &&
				! curl -fs "http://127.0.0.1:$port/metrics" >"$TMP/scrape" 2>/dev/null; do
				sleep 0.1
				n=$((n + 1))
			done
			if kill -0 "$ne_pid" 2>/dev/null; then
				curl -fs "http://127.0.0.1:$port/metrics"
				kill "$ne_pid"
				wait "$ne_pid" 2>/dev/null
				return 0
			fi
			wait "$ne_pid" 2>/dev/null
			port=$((port + 1)) # in use: the next one
		done
		cat "$TMP/ne.log" >&2
		return 1
	}
	mkdir "$TMP/textfile"
	cp "$P" "$TMP/textfile/hosttune.prom"
	scrape "$TMP/textfile" >"$TMP/ne.metrics"
	expect_eq "node_exporter: node_textfile_scrape_error 0" 0 \
		"$(sample "$TMP/ne.metrics" node_textfile_scrape_error)"
	expect_eq "node_exporter: every hosttune series read" "$(grep -c '^hosttune_' "$P")" \
		"$(grep -c '^hosttune_' "$TMP/ne.metrics")"
	expect_eq "node_exporter: the ceiling reads back the same" 34.13333333333333 \
		"$(sample "$TMP/ne.metrics" hosttune_conntrack_new_connection_ceiling_per_second)"
	# node_exporter gives every series of a family the same label names,
	# an absent one as "" (the directory label of the Garage rules' series):
	# Prometheus reads an empty label as none.
	sed -E 's/[a-z_]+="",?//g; s/,}/}/' "$TMP/ne.metrics" >"$TMP/ne.norm"
	expect_eq "node_exporter: a finding's labels" 3 \
		"$(sample "$TMP/ne.norm" 'hosttune_finding_severity{rule="conntrack.max"}')"
	cp "$TMP/quoted.prom" "$TMP/textfile/hosttune.prom"
	scrape "$TMP/textfile" >"$TMP/ne.metrics"
	expect_eq "node_exporter: escaped label values parse" 0 \
		"$(sample "$TMP/ne.metrics" node_textfile_scrape_error)"
	expect_contains "node_exporter: the escaped unit read back" 'unit="\"odd\" C:\\units"} 7' \
		"$(grep 'rule="test.quoted"' "$TMP/ne.metrics")"
	# A fleet's file (one audit of two facts files, --host-label; fleet.sh):
	# parsed, every series read, two hosts' worst severities.
	rm -f "$TMP/textfile/hosttune.prom"
	ht --facts "$FIXTURES/garage-vm/expected.facts" --facts "$FIXTURES/home-server/host.facts" \
		--format prometheus --host-label --output "$TMP/textfile/fleet.prom" audit
	scrape "$TMP/textfile" >"$TMP/ne.metrics"
	expect_eq "node_exporter: a fleet's file parses" 0 \
		"$(sample "$TMP/ne.metrics" node_textfile_scrape_error)"
	expect_eq "node_exporter: every series of the fleet's file read" \
		"$(grep -c '^hosttune_' "$TMP/textfile/fleet.prom")" "$(grep -c '^hosttune_' "$TMP/ne.metrics")"
	expect_eq "node_exporter: each host's worst severity (garage-vm critical, host.facts info)" \
		"3 1" "$(sample "$TMP/ne.metrics" 'hosttune_audit_worst_severity{host="garage-vm"}') $(sample "$TMP/ne.metrics" 'hosttune_audit_worst_severity{host="host"}')"
	rm -f "$TMP/textfile/fleet.prom"
	# The check can fail: a file with a sample timestamp is refused whole.
	cp "$TMP/ts.prom" "$TMP/textfile/bad.prom"
	scrape "$TMP/textfile" >"$TMP/ne.metrics"
	expect_eq "node_exporter: a timestamped file is an error" 1 \
		"$(sample "$TMP/ne.metrics" node_textfile_scrape_error)"
fi

# ---- promtool, when Prometheus is installed: its lint, and the alert rules.
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$P" >"$TMP/lint" 2>&1
	expect_eq "promtool check metrics: no complaint" "0 " "$? $(cat "$TMP/lint")"
	promtool check rules "$HT_TESTS_DIR/../examples/prometheus/hosttune.rules.yml" >/dev/null 2>"$TMP/lint"
	expect_eq "promtool check rules: the example rules" "0 " "$? $(cat "$TMP/lint")"
	promtool test rules "$HT_TESTS_DIR/prometheus-rules.test.yml" >"$TMP/lint" 2>&1
	expect_eq "promtool test rules: the alerts fire as tests/prometheus-rules.test.yml says" 0 $?
else
	echo "# SKIP promtool: prometheus is not installed"
fi

# ---- the unit and the timer, as systemd reads them.
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir "$TMP/units"
	sed "s|@SBINDIR@|$(dirname "$HOSTTUNE")|" "$HT_TESTS_DIR/../templates/hosttune-metrics.service.in" \
		>"$TMP/units/hosttune-metrics.service"
	cp "$HT_TESTS_DIR/../templates/hosttune-metrics.timer" "$TMP/units/"
	systemd-analyze verify --man=no "$TMP/units/hosttune-metrics.service" \
		"$TMP/units/hosttune-metrics.timer" >"$TMP/verify" 2>&1
	expect_eq "systemd-analyze verify: unit and timer" "0 " "$? $(cat "$TMP/verify")"
	expect_contains "the unit writes Debian's textfile directory" \
		"--output /var/lib/prometheus/node-exporter/hosttune.prom audit" \
		"$(cat "$TMP/units/hosttune-metrics.service")"
	expect_contains "findings (exit 1) are a success" "SuccessExitStatus=1" \
		"$(cat "$TMP/units/hosttune-metrics.service")"
else
	echo "# SKIP systemd-analyze is not installed"
fi

finish
