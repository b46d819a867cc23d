#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Bad rules, profiles, facts and arguments: one line FILE:LINE:COL: message
# on stderr, exit status 2, and no report on stdout.
. "$(dirname "$0")/lib.sh"

mkdir -p "$TMP/r/profiles"
cp "$HT_RULES_DIR/profiles/default.profile" "$TMP/r/profiles/"
# The Garage VM's facts, collected "now": the fixture's 2000-01-01 would
# put audit's warning of facts collected long ago before every error here.
FACTS=$TMP/garage-vm.facts
sed "s/^host.collected_at = .*/host.collected_at = \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\" from time(2)/" \
	"$FIXTURES/garage-vm/expected.facts" >"$FACTS"
U=" (hosttune --help lists the usage)"

# one_error_object FILE: "SCHEMA|EXIT|MESSAGE|FILE:LINE:COLUMN" of the error
# object FILE holds, when FILE is exactly one JSON document; else what it is.
one_error_object() {
	jq -rs 'if length != 1 then "\(length) documents"
		else .[0] | "\(.schema)|\(.error.exit)|\(.error.message)|\(.error.file):\(.error.line):\(.error.column)" end' \
		"$1" 2>&1 | head -c 2000
}

# json_twin DESCRIPTION EXIT EXPECTED-STDERR ARGS...: the same run with
# --format json, once first and once last on the command line: the same exit
# status and stderr, and on stdout exactly one JSON document, the error object
# with that status and the stderr's first line (without "hosttune: "). FILE,
# LINE and COLUMN are those of a "FILE:LINE:COL: " message, null otherwise.
# On an AddressSanitizer build (the distcheck run, whose runs are slower and
# which looks for memory errors on the same code paths) once: --format json
# first in every other case, last in the others (TWIN_WHERE overrides).
if [ -z "${TWIN_WHERE:-}" ] && grep -aq __asan_init "$HOSTTUNE" 2>/dev/null; then
	TWIN_ALTERNATE=yes
else TWIN_ALTERNATE=no; fi
twins=0
json_twin() {
	d=$1
	x=$2
	e=$3
	shift 3
	m=$(printf '%s\n' "$e" | head -n 1)
	m=${m#hosttune: }
	pos=$(printf '%s\n' "$m" | sed -n 's/^\(.*\):\([0-9][0-9]*\):\([0-9][0-9]*\): .*/\1:\2:\3/p')
	twins=$((twins + 1))
	wheres=${TWIN_WHERE:-first last}
	if [ $TWIN_ALTERNATE = yes ]; then
		if [ $((twins % 2)) = 1 ]; then wheres=first; else wheres=last; fi
	fi
	for where in $wheres; do
		if [ $where = first ]; then "$HOSTTUNE" --format json "$@" >"$TMP/jout" 2>"$TMP/jerr"
		else "$HOSTTUNE" "$@" --format json >"$TMP/jout" 2>"$TMP/jerr"; fi
		rc=$?
		expect_eq "$d, --format json $where: exit $x" "$x" "$rc"
		expect_eq "$d, --format json $where: the same stderr" "$e" "$(cat "$TMP/jerr")"
		expect_eq "$d, --format json $where: one error object on stdout" \
			"1|$x|$m|${pos:-null:null:null}" "$(one_error_object "$TMP/jout")"
	done
}

# bad_rules DESCRIPTION RULES-TEXT EXPECTED-STDERR
bad_rules() {
	printf '%s\n' "$2" >"$TMP/r/x.rules"
	out=$("$HOSTTUNE" --rules "$TMP/r" --facts "$FACTS" audit 2>"$TMP/err")
	rc=$?
	expect_eq "$1: exit 2" 2 "$rc"
	expect_eq "$1: message" "hosttune: $TMP/r/x.rules:$3" "$(cat "$TMP/err")"
	expect_eq "$1: no partial report" "" "$out"
	json_twin "$1" 2 "hosttune: $TMP/r/x.rules:$3" --rules "$TMP/r" --facts "$FACTS" audit
}

# line 2 "value = 1 +": the expression starts at column 9, the end is after
# "1 +" at column 9 + 3 = 12.
bad_rules "syntax error" '[a]
value = 1 +' '2:12: expected an expression, found end of expression'
bad_rules "unknown name" '[a]
value = foo.bar + 1' "2:9: unknown name 'foo.bar'"
# a needs b, b (line 4, name at column 9) needs a again.
bad_rules "dependency cycle" '[a]
value = b
[b]
value = a + 1' '4:9: dependency cycle: a -> b -> a'
bad_rules "type error in when" '[a]
target = sysctl net.netfilter.nf_conntrack_max
when = 1 + 2
value = 1' "3:8: type error: 'when' must be a bool, got a number"
# "value = 1 / (mem.total - mem.total)": the '/' is at column 11.
bad_rules "division by zero" '[a]
target = sysctl net.netfilter.nf_conntrack_max
value = 1 / (mem.total - mem.total)' '3:11: division by zero'
# 503316480 x 100000000000 = 5.0e19 > 2^63 - 1 = 9.2e18; the '*' is at column 19.
# A named value no finding uses is still evaluated: "value = mem.total / " is
# 20 characters, the '/' at column 19.
bad_rules "division by zero in an unused value" '[a]
value = mem.total / (cpu.count - cpu.count)' '2:19: division by zero'
bad_rules "integer overflow" '[a]
target = sysctl net.netfilter.nf_conntrack_max
value = mem.total * 100000000000' "3:19: integer overflow in '*' (inputs: mem.total = 503316480 from /proc/meminfo MemTotal)"
bad_rules "type error in +" '[a]
value = "x" + 1' "2:13: type error: '+' needs numbers, got string and number"
bad_rules "unknown key" '[a]
valu = 1' "2:1: unknown key 'valu' in rule 'a' (expected title, target, when, current, value, severity, case.NAME, explain, explain.NAME, remedy, remedy.NAME, lever, rationale, direction, unit, each, writable, default, unlimited, follows, limit, usage, events, holder, held, stray, rest, source or owner)"
bad_rules "key before any rule" 'value = 1' "1:1: expected '[rule-id]' before the first key"
bad_rules "line without =" '[a]
junk line' "2:1: expected '[section]', 'key = value' or a comment"
# the continuation line 3 is padded to its column: "  + )" has ')' at column 5.
bad_rules "error on a continuation line" '[a]
value = 1
  + )' "3:5: expected an expression, found ')'"
# [workload] ranges: "burst = " is 8 characters, the value at column 9.
bad_rules "range without an operator" '[workload]
burst = => 1' "2:9: expected a bound '>= N', '> N', '<= N' or '< N', found '=> 1'"
# ">= 1 and" is 8 characters: the end of line at column 9 + 8 = 17.
bad_rules "range ending in and" '[workload]
burst = >= 1 and' "2:17: expected a bound '>= N', '> N', '<= N' or '< N', found end of line"
bad_rules "empty range" '[workload]
burst = >= 5 and <= 1' "2:9: no number is >= 5 and <= 1"
# "burst = >= 1 and >= " is 20 characters: the second lower bound's '>=' at 18.
bad_rules "two lower bounds" '[workload]
burst = >= 1 and >= 2' "2:18: a second lower bound"
bad_rules "range of a string" '[workload]
burst = >= "x"' "2:12: expected a number, found a string"
# "storage = " is 10 characters: column 11, checked once the profile is read.
bad_rules "range of a bool" '[workload]
storage = >= 1' "2:11: workload.storage is a bool: only a number has a range"

printf '[a]\nvalue = 1\n' >"$TMP/r/x.rules"
# bad_args DESCRIPTION EXPECTED-STDERR-FIRST-LINE ARGS...
bad_args() {
	d=$1
	e=$2
	shift 2
	out=$("$HOSTTUNE" "$@" 2>"$TMP/err")
	rc=$?
	expect_eq "$d: exit 2" 2 "$rc"
	expect_eq "$d: one-line message" "$e" "$(cat "$TMP/err")"
	expect_eq "$d: no report" "" "$out"
	json_twin "$d" 2 "$e" "$@"
}
bad_args "--set of an unknown variable" \
	"hosttune: --set workload.nope=1: expected a workload variable (garage.config, garage.data_dir, garage.metadata_dir, workload.burst, workload.conn_rate, workload.mem_budget, workload.nofile, workload.object_rate, workload.part_size, workload.service, workload.storage, workload.time_wait, workload.upstream_pause), found 'workload.nope'" \
	--rules "$TMP/r" --facts "$FACTS" --set workload.nope=1 audit
bad_args "--set of the wrong type" \
	'hosttune: --set workload.conn_rate="x": expected a number, found a string' \
	--rules "$TMP/r" --facts "$FACTS" --set 'workload.conn_rate="x"' audit
# $TMP/r declares no ranges: a number must then not be negative.
bad_args "--set of a negative rate, no range declared" \
	"hosttune: --set workload.conn_rate=-5: expected a number >= 0, found -5" \
	--rules "$TMP/r" --facts "$FACTS" --set workload.conn_rate=-5 audit
# Every --set error names the assignment, not a parser position ("--set:1:21").
bad_args "--set of a division by zero" \
	"hosttune: --set workload.conn_rate=1/0: division by zero" \
	--rules "$TMP/r" --facts "$FACTS" --set workload.conn_rate=1/0 audit
# 10^23 > 2^63 - 1 = 9.2e18
bad_args "--set of a literal beyond 64 bits" \
	"hosttune: --set workload.conn_rate=99999999999999999999999: integer literal out of range" \
	--rules "$TMP/r" --facts "$FACTS" --set workload.conn_rate=99999999999999999999999 audit

# An overflow a --set causes names the --set: 1000 x 10^17 = 10^20 > 2^63 - 1
# = 9.2e18. "value = workload.conn_rate " is 27 characters: the '*' at 28.
printf '[a]\ntarget = sysctl net.netfilter.nf_conntrack_max\nvalue = workload.conn_rate * 100000000000000000\n' >"$TMP/r/x.rules"
bad_args "overflow from a --set" \
	"hosttune: $TMP/r/x.rules:3:28: integer overflow in '*' (inputs: --set workload.conn_rate=1000)" \
	--rules "$TMP/r" --facts "$FACTS" --set workload.conn_rate=1000 audit
# Through a named value: b reads a, which read the --set and the fact
# (4096 x 10^16 = 4.1e19 > 9.2e18; "value = a * " is 10 characters: '*' at 11).
printf '[a]\nvalue = workload.conn_rate + net.netfilter.nf_conntrack_max\n[b]\ntarget = advice\nvalue = a * 10000000000000000\n' >"$TMP/r/x.rules"
bad_args "overflow through a named value" \
	"hosttune: $TMP/r/x.rules:5:11: integer overflow in '*' (inputs: --set workload.conn_rate=0, net.netfilter.nf_conntrack_max = 4096 from /proc/sys/net/netfilter/nf_conntrack_max)" \
	--rules "$TMP/r" --facts "$FACTS" --set workload.conn_rate=0 audit
printf '[a]\nvalue = 1\n' >"$TMP/r/x.rules"
# In the shipped rules a --set cannot get that far: 10^17 connections a second
# is refused at its range (the working set 10^17 x 120 x 2 would overflow).
bad_args "--set conn_rate=10^17" \
	"hosttune: --set workload.conn_rate=100000000000000000: expected a number >= 0 and <= 10000000, found 100000000000000000" \
	--rules "$HT_RULES_DIR" --facts "$FACTS" --set workload.conn_rate=100000000000000000 audit

# ---- workload ranges (rules/workload.rules) ----
# What each value means, worked out from the profile's comments, not the tool:
# a TIME_WAIT of 0 s would recommend writing 0 to sysctl.d; 1 s up to the
# kernel's 120 s (nf_conntrack_proto_tcp.c) is the sane span.
bad_args "--set time_wait=0" \
	"hosttune: --set workload.time_wait=0: expected an integer >= 1 and <= 120, found 0" \
	--rules "$HT_RULES_DIR" --facts "$FACTS" --set workload.time_wait=0 audit
# A burst of 0 would give "a headroom of 0x": the peak is at least the mean (1x).
bad_args "--set burst=0" \
	"hosttune: --set workload.burst=0: expected a number >= 1 and <= 1000, found 0" \
	--rules "$HT_RULES_DIR" --facts "$FACTS" --set workload.burst=0 audit
# mem_budget is a fraction of RAM: 2 would be 200%, 0 no table at all.
bad_args "--set mem_budget=2" \
	"hosttune: --set workload.mem_budget=2: expected a number > 0 and <= 1, found 2" \
	--rules "$HT_RULES_DIR" --facts "$FACTS" --set workload.mem_budget=2 audit
bad_args "--set mem_budget=0" \
	"hosttune: --set workload.mem_budget=0: expected a number > 0 and <= 1, found 0" \
	--rules "$HT_RULES_DIR" --facts "$FACTS" --set workload.mem_budget=0 audit
bad_args "--set conn_rate=-5" \
	"hosttune: --set workload.conn_rate=-5: expected a number >= 0 and <= 10000000, found -5" \
	--rules "$HT_RULES_DIR" --facts "$FACTS" --set workload.conn_rate=-5 audit
# 1e7 + 1 connections a second: one above the bound.
bad_args "--set conn_rate above its range" \
	"hosttune: --set workload.conn_rate=10000001: expected a number >= 0 and <= 10000000, found 10000001" \
	--rules "$HT_RULES_DIR" --facts "$FACTS" --set workload.conn_rate=10000001 audit
# 121 s is one above the kernel default; 0.5 below 1 s (a decimal shows as typed).
bad_args "--set time_wait above its range" \
	"hosttune: --set workload.time_wait=121s: expected an integer >= 1 and <= 120, found 121" \
	--rules "$HT_RULES_DIR" --facts "$FACTS" --set workload.time_wait=121s audit
bad_args "--set time_wait of half a second" \
	"hosttune: --set workload.time_wait=0.5: expected an integer >= 1 and <= 120, found 0.5" \
	--rules "$HT_RULES_DIR" --facts "$FACTS" --set workload.time_wait=0.5 audit
# 1.5 s is inside 1..120 but not whole: the sysctl it would become is an integer.
bad_args "--set time_wait of 1.5 s" \
	"hosttune: --set workload.time_wait=1.5: expected an integer >= 1 and <= 120, found 1.5" \
	--rules "$HT_RULES_DIR" --facts "$FACTS" --set workload.time_wait=1.5 audit

# Every shipped profile is within the ranges, and at each bound the audit runs:
# 1 s, 120 s; burst 1 and 1000; mem_budget 1 (all of RAM); conn_rate 0 and 1e7.
# At the top of every range together no product of the rules overflows:
# 1e7 x 120 x 1000 = 1.2e12 entries, x 320 bytes = 3.84e14 < 2^63 - 1 = 9.2e18.
for p in "$HT_RULES_DIR"/profiles/*.profile; do
	p=$(basename "$p" .profile)
	ht --facts "$FACTS" --profile "$p" audit >/dev/null 2>"$TMP/err"
	rc=$?
	expect_eq "profile $p is within the ranges" "yes" \
		"$([ "$rc" -le 1 ] && echo yes || echo "no: $rc $(cat "$TMP/err")")"
	for s in "time_wait=1s conn_rate=0 burst=1 mem_budget=1" \
		"time_wait=120s conn_rate=10000000 burst=1000 mem_budget=1"; do
		set --
		for a in $s; do set -- "$@" --set "workload.$a"; done
		ht --facts "$FACTS" --profile "$p" "$@" audit >/dev/null 2>"$TMP/err"
		rc=$?
		expect_eq "profile $p at the bounds $s: audit completes" "yes" \
			"$([ "$rc" -le 1 ] && echo yes || echo "no: $rc $(cat "$TMP/err")")"
	done
done

# A profile file out of range: FILE:LINE:COL of the value ("burst = " is 8
# characters: column 9; "conn_rate = " is 12: column 13).
mkdir -p "$TMP/s/profiles"
cp "$HT_RULES_DIR"/*.rules "$TMP/s/"
cp "$HT_RULES_DIR"/profiles/*.profile "$TMP/s/profiles/"
printf '[profile]\ninclude = default\n[workload]\nburst = 0\n' >"$TMP/s/profiles/zero.profile"
bad_args "profile burst = 0" \
	"hosttune: $TMP/s/profiles/zero.profile:4:9: workload.burst: expected a number >= 1 and <= 1000, found 0" \
	--rules "$TMP/s" --facts "$FACTS" --profile zero audit
# The same variable twice in one profile: the second line, column 1.
printf '[profile]\ninclude = default\n[workload]\nconn_rate = 200\nconn_rate = 300\n' \
	>"$TMP/s/profiles/dup.profile"
bad_args "profile sets conn_rate twice" \
	"hosttune: $TMP/s/profiles/dup.profile:5:1: duplicate workload variable 'workload.conn_rate' (first on line 4)" \
	--rules "$TMP/s" --facts "$FACTS" --profile dup audit
printf '[profile]\ninclude = garage\n[workload]\nconn_rate = -5\n' >"$TMP/s/profiles/neg.profile"
bad_args "profile conn_rate = -5" \
	"hosttune: $TMP/s/profiles/neg.profile:4:13: workload.conn_rate: expected a number >= 0 and <= 10000000, found -5" \
	--rules "$TMP/s" --facts "$FACTS" --profile neg audit
# A --set cannot bring a bad profile value back into range: the profile is refused first.
bad_args "profile out of range, --set in range" \
	"hosttune: $TMP/s/profiles/zero.profile:4:9: workload.burst: expected a number >= 1 and <= 1000, found 0" \
	--rules "$TMP/s" --facts "$FACTS" --profile zero --set workload.burst=2 audit
# Every --set error has one form: "--set KEY=VALUE: " and what was expected.
bad_args "--set with a name" \
	"hosttune: --set workload.conn_rate=abc: expected a constant, found name 'abc'" \
	--rules "$TMP/r" --facts "$FACTS" --set workload.conn_rate=abc audit
bad_args "--set of an incomplete expression" \
	"hosttune: --set workload.conn_rate=1 +: expected an expression, found end of expression" \
	--rules "$TMP/r" --facts "$FACTS" --set 'workload.conn_rate=1 +' audit
bad_args "--set of an unknown unit" \
	"hosttune: --set workload.conn_rate=5x: expected a unit (s, m, min, h, d, w, KiB, MiB, GiB or TiB), found 'x'" \
	--rules "$TMP/r" --facts "$FACTS" --set workload.conn_rate=5x audit
bad_args "--set of a string with a control character" \
	"hosttune: --set workload.service=a\\tb: expected printable text, found a control character" \
	--rules "$HT_RULES_DIR" --facts "$FACTS" --set "workload.service=$(printf 'a\tb')" audit
bad_args "--set without a value" \
	"hosttune: --set workload.conn_rate: expected NAME=VALUE" \
	--rules "$TMP/r" --facts "$FACTS" --set workload.conn_rate audit
# Every --set error of the cases above, and of the ranges, in that one form.
for a in workload.conn_rate=abc 'workload.conn_rate=1 +' workload.conn_rate=5x \
	workload.conn_rate=-5 workload.nope=1 'workload.conn_rate="x"' workload.time_wait=0 \
	workload.conn_rate=570s workload.time_wait=1GiB; do
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$FACTS" --set "$a" audit >/dev/null 2>"$TMP/err"
	case $(cat "$TMP/err") in
	"hosttune: --set $a: expected "*) ok "--set $a: 'hosttune: --set $a: expected ...'" ;;
	*) not_ok "--set $a: 'hosttune: --set $a: expected ...'" "got: $(cat "$TMP/err")" ;;
	esac
done

# A value with a unit where the variable's range has none: a rate is not a
# time (570s is no rate); a time not a size. A time takes s, m, min, h, d, w or none.
bad_args "--set conn_rate=570s" \
	"hosttune: --set workload.conn_rate=570s: expected a number without a unit, found a time" \
	--rules "$HT_RULES_DIR" --facts "$FACTS" --set workload.conn_rate=570s audit
bad_args "--set burst=2MiB" \
	"hosttune: --set workload.burst=2MiB: expected a number without a unit, found a size" \
	--rules "$HT_RULES_DIR" --facts "$FACTS" --set workload.burst=2MiB audit
bad_args "--set time_wait=1GiB" \
	"hosttune: --set workload.time_wait=1GiB: expected a time (s, m, min, h, d, w or none), found a size" \
	--rules "$HT_RULES_DIR" --facts "$FACTS" --set workload.time_wait=1GiB audit
for a in workload.time_wait=2min workload.time_wait=60 workload.conn_rate=570 \
	workload.conn_rate=1.5*100; do
	ht --facts "$FACTS" --set "$a" audit >/dev/null 2>"$TMP/err"
	rc=$?
	expect_eq "--set $a: taken" "yes" "$([ "$rc" -le 1 ] && echo yes || echo "no: $rc $(cat "$TMP/err")")"
done
# The same in a profile: its file, line and column.
printf '[profile]\ninclude = default\n[workload]\nconn_rate = 570s\n' >"$TMP/s/profiles/unit.profile"
bad_args "profile conn_rate = 570s" \
	"hosttune: $TMP/s/profiles/unit.profile:4:13: workload.conn_rate: expected a number without a unit, found a time" \
	--rules "$TMP/s" --facts "$FACTS" --profile unit audit
bad_args "unknown profile" \
	"hosttune: profile 'nosuch' not found (looked for profiles/nosuch.profile in $TMP/r); the profiles are default" \
	--rules "$TMP/r" --facts "$FACTS" --profile nosuch audit
printf '# hosttune facts 1\nmem.total = abc\n' >"$TMP/bad.facts"
# "mem.total = " is 12 characters, the value starts at column 13.
bad_args "bad facts file" \
	"hosttune: $TMP/bad.facts:2:13: expected a value (number, true/false, \"string\" or vN.N), found 'abc'" \
	--rules "$TMP/r" --facts "$TMP/bad.facts" audit
bad_args "unknown command" "hosttune: unknown command 'bogus' (hosttune --help lists the usage)" --rules "$TMP/r" bogus
bad_args "bad format" "hosttune: --format: expected text, json or prometheus, got 'xml' (hosttune --help lists the usage)" --format xml audit
bad_args "bad --fail-on" "hosttune: --fail-on: expected info, warning or critical, got 'ok' (hosttune --help lists the usage)" \
	--fail-on ok audit
bad_args "no command" "hosttune: missing command (audit, facts, explain RULE, rules, profiles, plan, apply, revert, verify, watch) (hosttune --help lists the usage)"
bad_args "unknown rule" "hosttune: no rule 'nosuch' (hosttune rules lists them)" \
	--rules "$TMP/r" explain nosuch
bad_args "--root with --facts" "hosttune: --root and --facts exclude each other (hosttune --help lists the usage)" \
	--root / --facts "$FACTS" audit

# ---- facts files: header, names, values, sources ----
# bad_facts DESCRIPTION FACTS-TEXT (printf format) EXPECTED-AFTER-"FILE:"
bad_facts() {
	printf "$2" >"$TMP/f.facts"
	bad_args "$1" "hosttune: $TMP/f.facts:$3" --rules "$TMP/r" --facts "$TMP/f.facts" audit
}
bad_args "facts file /dev/null" \
	"hosttune: /dev/null:1:1: expected '# hosttune facts 1', found end of file" \
	--rules "$TMP/r" --facts /dev/null audit
bad_facts "facts file without the header" 'mem.total = 503316480 bytes\n' \
	"1:1: expected '# hosttune facts 1', found 'mem.total = 503316480 bytes'"
bad_facts "misspelt fact" '# hosttune facts 1\nmem.totl = 503316480 bytes\n' \
	"2:1: unknown fact 'mem.totl'"
# "mem.total = 1 " is 14 bytes: the unit at 15. A size in MiB is not bytes;
# a time in minutes not seconds; any word for bytes but bytes is refused.
# Facts that contradict each other: a counter's rise over the interval
# above its since-boot value (9999 > 5312), an interval --sample cannot
# give (0 s; 1e6 s is 11.6 days, past its 2-day bound). A rise equal to the
# since-boot value (a counter that started in the interval) is read.
bad_facts "a .delta above its since-boot value" \
	'# hosttune facts 1\nnstat.TcpExtListenOverflows = 5312 packets\nnstat.TcpExtListenOverflows.delta = 9999 packets\n' \
	"3:1: nstat.TcpExtListenOverflows.delta is more than nstat.TcpExtListenOverflows on line 2 (expected a rise over --sample's interval of at most the since-boot value)"
bad_facts "sample.seconds 0" '# hosttune facts 1\nsample.seconds = 0 seconds\n' \
	"2:1: sample.seconds = 0 is no interval --sample gives (expected more than 0 and at most 172800 seconds)"
bad_facts "sample.seconds of 11 days" '# hosttune facts 1\nsample.seconds = 1000000 seconds\n' \
	"2:1: sample.seconds = 1e+06 is no interval --sample gives (expected more than 0 and at most 172800 seconds)"
printf '# hosttune facts 1\nmem.total = 503316480 bytes\nnstat.TcpExtListenOverflows = 7 packets\nnstat.TcpExtListenOverflows.delta = 7 packets\nsample.seconds = 5.01 seconds\n' >"$TMP/f.facts"
"$HOSTTUNE" --rules "$TMP/r" --facts "$TMP/f.facts" audit >/dev/null 2>"$TMP/err"
rc=$?
[ "$rc" -le 1 ] && ok "a .delta equal to its since-boot value is read (exit $rc)" ||
	not_ok "a .delta equal to its since-boot value is read" "exit $rc: $(cat "$TMP/err")"
bad_facts "a size in another unit" '# hosttune facts 1\nmem.total = 1 MiB from x\n' \
	"2:15: mem.total is in bytes, not 'MiB' (hosttune-facts(7))"
bad_facts "a word for a measured fact" '# hosttune facts 1\nmem.total = 1 parsecs\n' \
	"2:15: mem.total is in bytes, not 'parsecs' (hosttune-facts(7))"
# "net.netfilter.nf_conntrack_tcp_timeout_time_wait = " is 48 + 3 = 51 bytes,
# "120 " 52..55: the unit at 56.
bad_facts "a time in minutes" '# hosttune facts 1\nnet.netfilter.nf_conntrack_tcp_timeout_time_wait = 120 min\n' \
	"2:56: net.netfilter.nf_conntrack_tcp_timeout_time_wait is in seconds, not 'min' (hosttune-facts(7))"
# A count's older word (early_drop was in packets) is a label, read as written.
printf '# hosttune facts 1\nconntrack.stat.early_drop = 1 packets from x\n' >"$TMP/f.facts"
"$HOSTTUNE" --rules "$TMP/r" --facts "$TMP/f.facts" facts >/dev/null 2>"$TMP/err"
expect_eq "a count's older word: read, exit 0" "0 " "$? $(cat "$TMP/err")"
# "net.netfilter.nf_conntrack_max = " is 30 + 3 = 33 bytes: the value at 34.
bad_facts "negative count" '# hosttune facts 1\nnet.netfilter.nf_conntrack_max = -1 entries\n' \
	"2:34: net.netfilter.nf_conntrack_max must not be negative, found -1"
# "module.nf_conntrack.acct = " is 7 + 13 + 4 + 3 = 27 bytes: the value at 28.
bad_facts "decimal underflow" '# hosttune facts 1\nmodule.nf_conntrack.acct = 1e-999\n' \
	"2:28: expected a decimal of 0 or at least 4.9e-324 in magnitude, found '1e-999'"
# "mem.total = 1 bytes from " is 12 + 2 + 6 + 5 = 25 bytes; after "caf" (26..28)
# the Latin-1 e-acute is at 29.
bad_facts "source not UTF-8" '# hosttune facts 1\nmem.total = 1 bytes from caf\351\n' \
	"2:29: expected a source of UTF-8 text, found '\\xe9'"

# ---- rules files: entries, BOM, NUL, size ----
mkdir -p "$TMP/r2/y.rules"
cp "$TMP/r/x.rules" "$TMP/r2/"
bad_args "rules entry that is a directory" "hosttune: $TMP/r2/y.rules: not a regular file" \
	--rules "$TMP/r2" --facts "$FACTS" audit
# After the BOM, '[' is column 1 and the id column 2.
bad_rules "UTF-8 BOM before the first section" "$(printf '\357\273\277')[a b]
value = 1" "1:2: expected a rule id of letters, digits, '_' and inner '.', found 'a b'"
# "value = 1" is 9 bytes: the NUL is column 10.
printf '[a]\nvalue = 1\000 + 2\n' >"$TMP/r/x.rules"
bad_args "NUL byte in a rules file" "hosttune: $TMP/r/x.rules:2:10: NUL byte" \
	--rules "$TMP/r" --facts "$FACTS" audit
{ printf '[a]\nvalue = 1\n'; head -c 1048576 /dev/zero | tr '\0' '#'; } >"$TMP/r/x.rules"
bad_args "rules file over 1 MiB" "hosttune: $TMP/r/x.rules: larger than 1 MiB" \
	--rules "$TMP/r" --facts "$FACTS" audit
printf '[a]\nvalue = 1\n' >"$TMP/r/x.rules"

# ---- profiles: include cycle, missing include, unknown or mistyped variables ----
# "include = " is 10 bytes: the included name is at column 11.
printf '[profile]\ninclude = p2\n' >"$TMP/r/profiles/p1.profile"
printf '[profile]\ninclude = p1\n' >"$TMP/r/profiles/p2.profile"
bad_args "profile include cycle" \
	"hosttune: $TMP/r/profiles/p2.profile:2:11: profile include cycle: p1 -> p2 -> p1" \
	--rules "$TMP/r" --facts "$FACTS" --profile p1 audit
printf '[profile]\ninclude = nothere\n' >"$TMP/r/profiles/top.profile"
bad_args "missing include" \
	"hosttune: $TMP/r/profiles/top.profile:2:11: profile 'nothere' not found (looked for profiles/nothere.profile in $TMP/r)" \
	--rules "$TMP/r" --facts "$FACTS" --profile top audit
printf '[workload]\nconn_rate = 100\nstorage = false\n' >"$TMP/r/profiles/base.profile"
printf '[profile]\ninclude = base\n[workload]\nconn_rte = 570\n' >"$TMP/r/profiles/typo.profile"
bad_args "unknown variable over an include" \
	"hosttune: $TMP/r/profiles/typo.profile:4:1: unknown workload variable 'workload.conn_rte' (the included profiles define: workload.conn_rate, workload.storage)" \
	--rules "$TMP/r" --facts "$FACTS" --profile typo audit
# "conn_rate = " is 12 bytes: the value at 13.
printf '[profile]\ninclude = base\n[workload]\nconn_rate = "fast"\n' >"$TMP/r/profiles/str.profile"
bad_args "variable of another type over an include" \
	"hosttune: $TMP/r/profiles/str.profile:4:13: workload.conn_rate is a number, got a string" \
	--rules "$TMP/r" --facts "$FACTS" --profile str audit

# --fail-on: the garage VM has a critical finding; --fail-on critical exits 1.
"$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$FACTS" --profile garage --fail-on critical audit >/dev/null
expect_eq "--fail-on critical with a critical finding" 1 $?
# The default profile on a roomy host (24 GiB, 6.1 defaults): nothing to report.
facts_file "$TMP/big.facts" <<EOT
mem.total = 25769803776 bytes
kernel.version = v6.1.0
kernel.pointer_size = 8 bytes
kernel.page_size = 4096 bytes
cpu.count = 2 CPUs
net.netfilter.nf_conntrack_max = 262144 entries
net.netfilter.nf_conntrack_buckets = 262144 buckets
net.netfilter.nf_conntrack_count = 10 entries
net.netfilter.nf_conntrack_tcp_timeout_time_wait = 120 seconds
module.nf_conntrack.hashsize = 262144 buckets
netns.initial = true
EOT
"$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$TMP/big.facts" --fail-on info audit >/dev/null
expect_eq "roomy host, default profile: exit 0 even with --fail-on info" 0 $?

# Odd but valid facts (a TIME_WAIT of 0, no buckets, no RAM) must not break
# the rules: the audit completes with exit 0 or 1.
facts_file "$TMP/zero.facts" <<EOT
mem.total = 0 bytes
kernel.version = v5.15.0
cpu.count = 1 CPUs
net.netfilter.nf_conntrack_max = 0 entries
net.netfilter.nf_conntrack_buckets = 0 buckets
net.netfilter.nf_conntrack_count = 0 entries
net.netfilter.nf_conntrack_tcp_timeout_time_wait = 0 seconds
module.nf_conntrack.hashsize = 0 buckets
EOT
"$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$TMP/zero.facts" audit >/dev/null 2>"$TMP/err"
rc=$?
case $rc in 0|1) ok "zero-valued facts: audit completes" ;;
*) not_ok "zero-valued facts: audit completes" "exit $rc: $(cat "$TMP/err")" ;; esac

bad_args "unknown long option" "hosttune: unknown option '--bogus'$U" --bogus audit
bad_args "unknown short option" "hosttune: unknown option '-z'$U" -z audit
# A missing argument is at the end: --format json can only come first.
TWIN_WHERE=first
bad_args "missing argument" "hosttune: --profile: missing argument$U" audit --profile
unset TWIN_WHERE
bad_args "argument to --force" "hosttune: --force: takes no argument, got 'yes'$U" --force=yes apply
bad_args "option of another command" \
	"hosttune: --interval applies to watch, not to audit$U" --interval 1s audit
# Every command prints JSON: rules and explain too (they refused before issue 13).
for c in rules "explain conntrack.max"; do
	# shellcheck disable=SC2086
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --format json $c >"$TMP/j" 2>"$TMP/err"
	expect_eq "$c --format json: exit 0, one document with schema 1" "0 1 1" \
		"$? $(jq -s length "$TMP/j") $(jq .schema "$TMP/j")"
done

# A --root that is missing or a file is a usage error (exit 2, like a facts
# file that does not exist): there is nothing to read below it. These two
# exited 3 before issue 10; changed deliberately. An existing directory with
# nothing to collect is a host that could not be collected: exit 3.
# bad_root DESCRIPTION EXIT EXPECTED-STDERR ROOT
bad_root() {
	out=$("$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$4" audit 2>"$TMP/err")
	rc=$?
	expect_eq "$1: exit $2" "$2" "$rc"
	expect_eq "$1: message" "$3" "$(cat "$TMP/err")"
	expect_eq "$1: no report" "" "$out"
	json_twin "$1" "$2" "$3" --rules "$HT_RULES_DIR" --root "$4" audit
}
bad_root "missing --root" 2 "hosttune: --root $TMP/nope: No such file or directory" "$TMP/nope"
: >"$TMP/afile"
bad_root "--root is a file" 2 "hosttune: --root $TMP/afile: not a directory" "$TMP/afile"
mkdir "$TMP/empty"
bad_root "--root is empty" 3 \
	"hosttune: could not collect mem.total or kernel.version from $TMP/empty/proc: not a host's tree" \
	"$TMP/empty"

# ---- the other exit paths with --format json: one document on stdout ----
# json_run DESCRIPTION EXIT ARGS...: exit EXIT, stdout exactly one JSON
# document: the error object with that exit and the stderr's first line.
json_run() {
	d=$1
	x=$2
	shift 2
	"$HOSTTUNE" --format json "$@" >"$TMP/jout" 2>"$TMP/jerr"
	rc=$?
	m=$(head -n 1 "$TMP/jerr")
	expect_eq "$d: exit $x, one error object with the stderr's message" \
		"$x 1|$x|${m#hosttune: }" \
		"$rc $(jq -rs 'if length != 1 then "\(length) documents" else .[0] | "\(.schema)|\(.error.exit)|\(.error.message)" end' "$TMP/jout" 2>&1)"
}
# watch: nothing to sample below an empty tree (exit 3).
json_run "watch on an empty tree" 3 --rules "$HT_RULES_DIR" --root "$TMP/empty" --duration 1s watch
# revert: a state file that is not hosttune's is refused (exit 2).
cp -a "$FIXTURES/garage-vm/root" "$TMP/gs"
mkdir -p "$TMP/gs/var/lib/hosttune"
printf '{ "files": [ \n' >"$TMP/gs/var/lib/hosttune/state"
json_run "revert of a corrupt state file" 2 --rules "$HT_RULES_DIR" --root "$TMP/gs" revert
json_run "apply with a corrupt state file" 2 --rules "$HT_RULES_DIR" --root "$TMP/gs" \
	--profile garage apply
rm "$TMP/gs/var/lib/hosttune/state"
# apply and revert while another run holds the lock (flock(2) on the root): exit 4.
if command -v flock >/dev/null 2>&1; then
	exec 9<"$TMP/gs"
	flock -n 9
	json_run "apply while the lock is held" 4 --rules "$HT_RULES_DIR" --root "$TMP/gs" \
		--profile garage --wait 0 apply
	json_run "revert while the lock is held" 4 --rules "$HT_RULES_DIR" --root "$TMP/gs" \
		--wait 0 revert
	exec 9<&-
fi

# Output that cannot be written is a failure, not a silent success.
if [ -w /dev/full ]; then
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$FACTS" --format json audit >/dev/full 2>"$TMP/err"
	expect_eq "JSON to a full disk: exit 3" 3 $?
	expect_eq "JSON to a full disk: says so" \
		"hosttune: writing the output: No space left on device" "$(cat "$TMP/err")"
fi

# A reader that is gone (hosttune apply | head): no death by SIGPIPE half way.
# perl gives a pipe whose read end is closed before hosttune writes, so the
# first write fails (EPIPE) whatever the timing. apply and revert change
# the tree and say the report was lost (5); audit, which changes nothing,
# ends quietly with its verdict (tests/closed-pipe.sh has every command).
closed_pipe() {
	perl -e 'pipe(R, W) or die; close R; open(STDOUT, ">&", \*W) or die; close W; exec @ARGV' "$@"
}
rm -rf "$TMP/gp"
cp -a "$FIXTURES/garage-vm/root" "$TMP/gp"
closed_pipe "$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/gp" --no-measure apply 2>"$TMP/err"
expect_eq "apply into a closed pipe: exit 5, not 141" 5 $?
expect_eq "apply into a closed pipe: the host changed" "net.netfilter.nf_conntrack_max = 32768" \
	"$(grep '^net.netfilter.nf_conntrack_max' "$TMP/gp/etc/sysctl.d/90-hosttune.conf")"
expect_eq "apply into a closed pipe: says the report is lost" \
	"hosttune: apply is complete, but the report could not be written: Broken pipe" "$(cat "$TMP/err")"
closed_pipe "$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/gp" --no-measure audit 2>"$TMP/err"
rc=$?
"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/gp" --no-measure audit >/dev/null 2>&1
expect_eq "audit into a closed pipe: its verdict's status, as read whole, nothing on stderr" \
	"$? " "$rc $(cat "$TMP/err")"
closed_pipe "$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/gp" revert 2>"$TMP/err"
expect_eq "revert into a closed pipe: exit 5" 5 $?
if [ -e "$TMP/gp/etc/sysctl.d/90-hosttune.conf" ]; then not_ok "revert into a closed pipe: the file is gone"
else ok "revert into a closed pipe: the file is gone"; fi

# A state file given as a host path (--state, inside the tree): apply and
# revert sweep only what writing it leaves (".st.hosttune-XXXXXX" next to
# it), and nothing above the tree: not another temp name beside the tree,
# not a temp-named directory further up.
rm -rf "$TMP/sw"
mkdir -p "$TMP/sw/t"
cp -a "$FIXTURES/garage-vm/root" "$TMP/sw/t/g2"
echo precious >"$TMP/sw/t/.precious.hosttune-ABCDEF"
mkdir -p "$TMP/sw/.t.hosttune-ABCDEF/tree"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/sw/t/g2" --state "$TMP/sw/t/g2/st" --no-measure apply >/dev/null 2>&1
expect_eq "--state as a host path: apply exits 0" 0 $?
echo half >"$TMP/sw/t/g2/.st.hosttune-Ab12Cd"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/sw/t/g2" --state "$TMP/sw/t/g2/st" revert >/dev/null 2>&1
expect_eq "--state as a host path: revert exits 0" 0 $?
expect_eq "--state as a host path: a temp name beside the tree stays" precious \
	"$(cat "$TMP/sw/t/.precious.hosttune-ABCDEF" 2>&1)"
if [ -d "$TMP/sw/.t.hosttune-ABCDEF/tree" ]; then ok "--state as a host path: a temp-named directory above the tree stays"
else not_ok "--state as a host path: a temp-named directory above the tree stays"; fi
if [ -e "$TMP/sw/t/g2/.st.hosttune-Ab12Cd" ]; then not_ok "--state as a host path: its own temp file is swept"
else ok "--state as a host path: its own temp file is swept"; fi
# A --state path with '..' below the tree is refused with what is wrong (not
# "(null)", nor that sg/proc/.. leaves the tree: it does not), by apply and
# revert, given absolute or relative.
rm -rf "$TMP/sg"
cp -a "$FIXTURES/garage-vm/root" "$TMP/sg"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/sg" --state "$TMP/sg/proc/../st" --no-measure apply >/dev/null 2>"$TMP/err"
expect_eq "--state with '..': exit 2" 2 $?
expect_eq "--state with '..': says what is wrong, in one line" \
	"hosttune: apply refused, nothing was changed: --state $TMP/sg/proc/../st has a '..': below --root $TMP/sg hosttune follows none (give the path without it)" \
	"$(cat "$TMP/err")"
(cd "$TMP" && "$HOSTTUNE" --rules "$HT_RULES_DIR" --root sg --state sg/proc/../st revert >/dev/null 2>"$TMP/err")
expect_eq "--state sg/proc/../st, relative: revert refused (exit 2), says what is wrong" \
	"2 hosttune: revert refused, nothing was changed: --state sg/proc/../st has a '..': below --root sg hosttune follows none (give the path without it)" \
	"$? $(cat "$TMP/err")"
if [ -e "$TMP/sg/st" ]; then not_ok "--state with '..': no state file written"; else ok "--state with '..': no state file written"; fi
(cd "$TMP" && "$HOSTTUNE" --rules "$HT_RULES_DIR" --root sg --state sg/proc/../st --no-measure verify >"$TMP/out" 2>&1)
expect_contains "--state sg/proc/../st: verify says what is wrong" \
	"PROBLEM sg/proc/.. has a '..': hosttune writes no path with one (give the path without it) (--state names no hosttune state file)" \
	"$(cat "$TMP/out")"

# The --state path below the tree is walked as the tree's own: a directory on
# its way swapped for a link (after the command line was checked) is refused,
# and nothing beside the tree is swept or written.
rm -rf "$TMP/sl"
mkdir -p "$TMP/sl/out" "$TMP/sl/t"
cp -a "$FIXTURES/garage-vm/root" "$TMP/sl/t/g"
echo keep >"$TMP/sl/out/.st.hosttune-ABCDEF"
ln -s "$TMP/sl/out" "$TMP/sl/t/g/sub"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/sl/t/g" --state "$TMP/sl/t/g/sub/st" --no-measure apply >/dev/null 2>"$TMP/err"
expect_eq "--state through a link in the tree: refused" 2 $?
expect_eq "--state through a link: nothing beside the tree touched" "keep" "$(cat "$TMP/sl/out/.st.hosttune-ABCDEF")"
if [ -e "$TMP/sl/out/st" ]; then not_ok "--state through a link: no state file outside the tree"
else ok "--state through a link: no state file outside the tree"; fi

# The same swap made while apply waits for the lock (the command line was
# checked before): the walk below the tree refuses the link. Whatever the
# timing, nothing beside the tree may change.
if command -v flock >/dev/null 2>&1; then
	rm -rf "$TMP/sl"
	mkdir -p "$TMP/sl/out" "$TMP/sl/t"
	cp -a "$FIXTURES/garage-vm/root" "$TMP/sl/t/g"
	mkdir "$TMP/sl/t/g/sub"
	echo keep >"$TMP/sl/out/.st.hosttune-ABCDEF"
	flock "$TMP/sl/t/g" sh -c "sleep 1; mv '$TMP/sl/t/g/sub' '$TMP/sl/t/g/sub.old'; ln -s '$TMP/sl/out' '$TMP/sl/t/g/sub'; sleep 0.5" &
	holder=$!
	# Until the holder has the lock (flock -n fails then), however slow the machine.
	for _ in $(seq 100); do flock -n "$TMP/sl/t/g" true 2>/dev/null || break; sleep 0.05; done
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/sl/t/g" --state "$TMP/sl/t/g/sub/st" --wait 10 \
		--no-measure apply >/dev/null 2>"$TMP/err"
	rc=$?
	wait "$holder"
	if [ $rc -ne 0 ]; then ok "--state swapped for a link while waiting: refused (exit $rc)"
	else not_ok "--state swapped for a link while waiting: refused" "$(cat "$TMP/err")"; fi
	expect_eq "--state swapped for a link: nothing beside the tree touched" keep \
		"$(cat "$TMP/sl/out/.st.hosttune-ABCDEF")"
	if [ -e "$TMP/sl/out/st" ]; then not_ok "--state swapped for a link: no state file outside the tree"
	else ok "--state swapped for a link: no state file outside the tree"; fi
fi

# The tree itself swapped for a link to a decoy tree while apply waits for
# the lock (by whoever owns the tree's parent): the tree was opened once
# before the wait, so the decoy stays as it was and the writes land in the
# directory first named (now g.old), or apply refuses. The same for a
# --state FILE reached through a link into the tree that is repointed out of
# it during the wait: refused, nothing written where it leads now.
if command -v flock >/dev/null 2>&1; then
	rm -rf "$TMP/sw"
	mkdir -p "$TMP/sw/t"
	cp -a "$FIXTURES/garage-vm/root" "$TMP/sw/t/g"
	cp -a "$FIXTURES/garage-vm/root" "$TMP/sw/decoy"
	decoy_before=$(tree_sums "$TMP/sw/decoy")
	flock "$TMP/sw/t/g" sh -c "sleep 1; mv '$TMP/sw/t/g' '$TMP/sw/t/g.old'; ln -s '$TMP/sw/decoy' '$TMP/sw/t/g'; sleep 0.5" &
	holder=$!
	for _ in $(seq 100); do flock -n "$TMP/sw/t/g" true 2>/dev/null || break; sleep 0.05; done
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/sw/t/g" --profile garage --wait 10 \
		--no-measure apply >/dev/null 2>"$TMP/err"
	rc=$?
	wait "$holder"
	expect_eq "tree swapped for a link while waiting: the decoy is untouched" \
		"$decoy_before" "$(tree_sums "$TMP/sw/decoy")"
	# The plan of the Garage VM writes /etc/sysctl.d/90-hosttune.conf and its state.
	if [ $rc -eq 0 ] && [ -f "$TMP/sw/t/g.old/etc/sysctl.d/90-hosttune.conf" ] &&
		[ -f "$TMP/sw/t/g.old/var/lib/hosttune/state" ]; then
		ok "tree swapped for a link while waiting: the writes land in the tree first opened"
	elif [ $rc -ne 0 ] && [ ! -e "$TMP/sw/t/g.old/var/lib/hosttune/state" ]; then
		ok "tree swapped for a link while waiting: refused (exit $rc)"
	else
		not_ok "tree swapped for a link while waiting: written in the tree first opened, or refused" \
			"exit $rc: $(cat "$TMP/err")"
	fi

	rm -rf "$TMP/sw"
	mkdir -p "$TMP/sw/out"
	cp -a "$FIXTURES/garage-vm/root" "$TMP/sw/g"
	mkdir -p "$TMP/sw/g/var/lib/ht"
	ln -s "$TMP/sw/g/var/lib/ht" "$TMP/sw/lnk"
	flock "$TMP/sw/g" sh -c "sleep 1; ln -sfn '$TMP/sw/out' '$TMP/sw/lnk'; sleep 0.5" &
	holder=$!
	for _ in $(seq 100); do flock -n "$TMP/sw/g" true 2>/dev/null || break; sleep 0.05; done
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/sw/g" --profile garage --state "$TMP/sw/lnk/st" \
		--wait 10 --no-measure apply >/dev/null 2>"$TMP/err"
	rc=$?
	wait "$holder"
	expect_eq "--state link repointed out of the tree while waiting: refused (exit 2)" 2 $rc
	expect_contains "--state link repointed out of the tree: says so" \
		"--state $TMP/sw/lnk/st does not lead into the tree of --root $TMP/sw/g" "$(cat "$TMP/err")"
	expect_eq "--state link repointed out of the tree: nothing written where it leads now" \
		"" "$(ls -A "$TMP/sw/out")"
	if [ -e "$TMP/sw/g/etc/sysctl.d/90-hosttune.conf" ]; then
		not_ok "--state link repointed: nothing written in the tree either"
	else ok "--state link repointed: nothing written in the tree either"; fi
	# Not repointed: the link leads into the tree, and the state is the tree's file there.
	ln -sfn "$TMP/sw/g/var/lib/ht" "$TMP/sw/lnk"
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/sw/g" --profile garage --state "$TMP/sw/lnk/st" \
		--no-measure apply >/dev/null 2>"$TMP/err"
	expect_eq "--state through a link into the tree: applied (exit 0)" "0" "$?$(cat "$TMP/err")"
	if [ -f "$TMP/sw/g/var/lib/ht/st" ]; then ok "--state through a link into the tree: the state is there"
	else not_ok "--state through a link into the tree: the state is there"; fi
fi

# A file not every user may read (/etc/shadow) is not quoted by the header
# error of --facts or --observed; one all may read still is.
printf 'root:$6$SECRETHASH:20000:0:99999:7:::\n' >"$TMP/private"
chmod 0640 "$TMP/private"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$TMP/private" audit >/dev/null 2>"$TMP/err"
expect_eq "--facts of a private file: exit 2" 2 $?
expect_contains "--facts of a private file: says what is expected" \
	"private:1:1: expected '# hosttune facts 1', found another line (not shown: the file is not readable by every user)" \
	"$(cat "$TMP/err")"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$FACTS" --observed "$TMP/private" audit >/dev/null 2>>"$TMP/err"
if grep -q SECRETHASH "$TMP/err"; then not_ok "--facts/--observed of a private file: its content is not shown" "$(cat "$TMP/err")"
else ok "--facts/--observed of a private file: its content is not shown"; fi
chmod 0644 "$TMP/private"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$TMP/private" audit >/dev/null 2>"$TMP/err"
expect_contains "--facts of a file all may read: the line is quoted" "found 'root:" "$(cat "$TMP/err")"

# A file option given twice: refused, not the second silently winning.
"$HOSTTUNE" --rules "$HT_RULES_DIR" --rules "$TMP" --facts "$FACTS" audit >/dev/null 2>"$TMP/err"
expect_eq "--rules twice: exit 2" 2 $?
expect_eq "--rules twice: says so" \
	"hosttune: --rules given twice ('$HT_RULES_DIR', then '$TMP'): give it once (hosttune --help lists the usage)" \
	"$(cat "$TMP/err")"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$FACTS" --profile garage --profile default audit >/dev/null 2>"$TMP/err"
expect_eq "--profile twice: exit 2" 2 $?
"$HOSTTUNE" --rules "$HT_RULES_DIR" --rules "$HT_RULES_DIR" --facts "$FACTS" audit >/dev/null 2>"$TMP/err"
expect_eq "--rules twice with the same value: taken (exit of the audit, 1)" 1 $?


# An absurd fact value is no rule error: the finding it feeds cannot be
# judged (n/a, naming the overflow and the input), and the rest of the audit
# goes on. files.table with fs.file-max = 100000 and files.open = 2^63 - 1:
# files.high holds (2^63 - 1 >= 100000 - 100000 / 4 = 75000), so the value
# takes pow2ceil(files.open * 2), and 2 x (2^63 - 1) > 2^63 - 1 overflows at
# files.rules:44:59. The same facts with files.open = 50000 give as many
# findings: none is lost.
sed -e '/^files.open = /d' -e '/^fs.file-max = /d' "$FACTS" >"$TMP/ovf.facts"
cp "$TMP/ovf.facts" "$TMP/sane.facts"
echo "fs.file-max = 100000 files from /proc/sys/fs/file-max" | tee -a "$TMP/sane.facts" >>"$TMP/ovf.facts"
echo "files.open = 50000 files from /proc/sys/fs/file-nr" >>"$TMP/sane.facts"
echo "files.open = 9223372036854775807 files from /proc/sys/fs/file-nr" >>"$TMP/ovf.facts"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$TMP/ovf.facts" --format json audit >"$TMP/ovf.json" 2>"$TMP/err"
rc=$?
case $rc in 0|1) ok "files.open = 2^63 - 1: the audit goes on (exit $rc)" ;;
*) not_ok "files.open = 2^63 - 1: the audit goes on" "exit $rc: $(cat "$TMP/err")" ;; esac
expect_eq "... files.table n/a" false \
	"$(jq '.findings[] | select(.rule == "files.table") | .applicable' "$TMP/ovf.json")"
expect_contains "... saying why" \
	"cannot be judged: $HT_RULES_DIR/files.rules:44:59: integer overflow in '*' (inputs: files.open = 9223372036854775807 from /proc/sys/fs/file-nr" \
	"$(jq -r '.findings[] | select(.rule == "files.table") | .explanation' "$TMP/ovf.json")"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$TMP/sane.facts" --format json audit >"$TMP/sane.json" 2>&1
expect_eq "... as many findings as with files.open = 50000" \
	"$(jq '.findings | length' "$TMP/sane.json")" "$(jq '.findings | length' "$TMP/ovf.json")"
# process.garage.fds = 2^63 - 1: process.want takes pow2ceil(process.fds * 2)
# (process.high: 2^63 - 1 >= 1024 - 256), overflowing at that '*' of
# process.rules (its line found below); garage's row is n/a, sshd's (7 of
# 1024, ok) stays.
ovf_line=$(grep -n 'pow2ceil(process.fds \* 2)' "$HT_RULES_DIR/process.rules" | head -n 1 | cut -d: -f1)
sed 's/^process.garage.fds = .*/process.garage.fds = 9223372036854775807 descriptors from \/proc\/733\/fd/' \
	"$FIXTURES/verdict/nofile-garage-515.facts" >"$TMP/ovf2.facts"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$TMP/ovf2.facts" --format json audit >"$TMP/ovf2.json" 2>"$TMP/err"
rc=$?
case $rc in 0|1) ok "process.garage.fds = 2^63 - 1: the audit goes on (exit $rc)" ;;
*) not_ok "process.garage.fds = 2^63 - 1: the audit goes on" "exit $rc: $(cat "$TMP/err")" ;; esac
expect_contains "... garage's row cannot be judged" \
	"cannot be judged: $HT_RULES_DIR/process.rules:$ovf_line:67: integer overflow in '*'" \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile" and .instance == "garage") | .explanation' "$TMP/ovf2.json")"
expect_eq "... sshd's row stays ok" ok \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile" and .instance == "sshd") | .severity' "$TMP/ovf2.json")"
# 18446744073709551615 (2^64 - 1) in file-nr does not fit 64 signed bits:
# files.open is unavailable ERANGE, not clamped to 2^63 - 1.
mkdir -p "$TMP/fnr/proc/sys/fs" "$TMP/fnr/proc/sys/kernel"
printf '5.15.0-91-generic\n' >"$TMP/fnr/proc/sys/kernel/osrelease"
printf 'MemTotal:        4194304 kB\n' >"$TMP/fnr/proc/meminfo"
printf '18446744073709551615\t0\t100000\n' >"$TMP/fnr/proc/sys/fs/file-nr"
printf '100000\n' >"$TMP/fnr/proc/sys/fs/file-max"
"$HOSTTUNE" --root "$TMP/fnr" --format json facts >"$TMP/fnr.json" 2>/dev/null
expect_eq "file-nr of 2^64 - 1: files.open unavailable ERANGE" ERANGE \
	"$(jq -r '.facts["files.open"].error' "$TMP/fnr.json")"
# files.table does not vanish when one of its facts is unavailable: it is
# n/a, naming the fact and why (file-nr of 2^64 - 1; "abc"; no file-max).
ft_reason() {
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/fnr" --format json audit 2>/dev/null |
		jq -r '.findings[] | select(.rule == "files.table") | "\(.applicable) \(.explanation)"'
}
expect_eq "file-nr of 2^64 - 1: files.table n/a, why" \
	"false files.open is unavailable (Numerical result out of range: /proc/sys/fs/file-nr: a count beyond 2^63 - 1)" \
	"$(ft_reason)"
printf 'abc\t0\t100000\n' >"$TMP/fnr/proc/sys/fs/file-nr"
expect_eq "file-nr of 'abc': files.table n/a, why" \
	"false files.open is unavailable (Invalid argument: /proc/sys/fs/file-nr: expected three counts)" \
	"$(ft_reason)"
printf '95000\t0\t100000\n' >"$TMP/fnr/proc/sys/fs/file-nr"
rm "$TMP/fnr/proc/sys/fs/file-max"
expect_eq "no file-max: files.table n/a, why" \
	"false fs.file-max is unavailable (No such file or directory: /proc/sys/fs/file-max)" \
	"$(ft_reason)"

finish
