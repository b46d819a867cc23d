#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The text audit puts problems first: the table, then the explanations of
# the findings at info and above; -v/--verbose adds ok and n/a, -q/--quiet
# prints the summary line only; JSON and Prometheus do not change. When
# stdout is the journal (JOURNAL_STREAM names its device and inode), every
# line starts with its sd-daemon priority. Sizes read as IEC units in the
# table, and the fix keeps the exact value; "1 socket is".
. "$(dirname "$0")/lib.sh"

# The Garage VM's facts, collected "now": the fixture's 2000-01-01 would
# put audit's warning of facts collected long ago on the terminal and in
# the journal before the report.
GVM=$TMP/garage-vm.facts
sed "s/^host.collected_at = .*/host.collected_at = \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\" from time(2)/" \
	"$FIXTURES/garage-vm/expected.facts" >"$GVM"
audit() { ht --facts "$GVM" "$@" audit; }

# ---- how much follows the table ------------------------------------------
# garage-vm under the default profile: 2 critical (conntrack.max,
# conntrack.drops), 1 warning (conntrack.buckets), 2 ok (conntrack.time_wait,
# conntrack.chain_length), 3 n/a (cpu.aes, listen.backlog, nic.queues).
audit >"$TMP/default.txt"
expect_eq "default: exit 1 (findings at warning)" 1 $?
audit -v >"$TMP/verbose.txt"
audit --quiet >"$TMP/quiet.txt"
expect_eq "default: 3 explanations, the problems" \
	"[critical] conntrack.max [critical] conntrack.drops [warning] conntrack.buckets" \
	"$(grep -oE '^\[[a-z/]+\] [a-z_.]+' "$TMP/default.txt" | tr '\n' ' ' | sed 's/ $//')"
# 2 ok + 3 n/a = 5 left out, and the line says how to see them.
expect_contains "default: says what it left out and how to see it" \
	"2 ok and 3 not applicable findings are not explained here: --verbose shows them" \
	"$(cat "$TMP/default.txt")"
expect_eq "default: every row of the table is there (8 findings)" 8 \
	"$(sed -n '/^RULE /,/^$/p' "$TMP/default.txt" | grep -cE ' (critical|warning|info|ok|n/a)$')"
expect_eq "verbose: 8 explanations (3 + 2 ok + 3 n/a)" 8 \
	"$(grep -cE '^\[(critical|warning|info|ok|n/a)\] ' "$TMP/verbose.txt")"
expect_eq "verbose: no 'not explained' line" 0 "$(grep -c 'not explained here' "$TMP/verbose.txt")"
expect_eq "quiet: the summary line only" "2 critical, 1 warning, 0 info, 2 ok, 3 not applicable" \
	"$(cat "$TMP/quiet.txt")"
expect_eq "default and verbose end with the same summary" "$(tail -n 1 "$TMP/default.txt")" \
	"$(tail -n 1 "$TMP/verbose.txt")"
# The verbose report is the default one plus the ok and n/a blocks: the
# problem blocks are the same lines.
sed -n '/^\[critical\] conntrack.max/,/^\[ok\]/p' "$TMP/verbose.txt" | sed '$d' >"$TMP/v-problems"
sed -n '/^\[critical\] conntrack.max/,/not explained here/p' "$TMP/default.txt" | sed '$d' >"$TMP/d-problems"
if cmp -s "$TMP/v-problems" "$TMP/d-problems"; then ok "the problem blocks are the same in both"
else not_ok "the problem blocks are the same in both" "$(diff "$TMP/d-problems" "$TMP/v-problems")"; fi
audit -q -v >/dev/null 2>"$TMP/err"
expect_eq "-q with -v: usage error" "2 hosttune: --verbose and --quiet exclude each other (hosttune --help lists the usage)" \
	"$? $(cat "$TMP/err")"
ht --facts "$GVM" -v facts >/dev/null 2>"$TMP/err"
expect_eq "facts refuses -v" "2 hosttune: --verbose applies to audit, not to facts (hosttune --help lists the usage)" \
	"$? $(cat "$TMP/err")"
# A host whose findings are all problems or all ok: no 'not explained' line
# when nothing is left out; "1 ... finding is" for one.
audit --fail-on critical -q >/dev/null
expect_eq "quiet keeps the exit status (2 critical: exit 1)" 1 $?

# ---- JSON and Prometheus do not change -------------------------------------
audit --format json >"$TMP/a.json"
audit --format json -v >"$TMP/b.json"
audit --format json -q >"$TMP/c.json"
if cmp -s "$TMP/a.json" "$TMP/b.json" && cmp -s "$TMP/a.json" "$TMP/c.json"; then
	ok "JSON: the same with -v and -q"
else not_ok "JSON: the same with -v and -q" "$(diff "$TMP/a.json" "$TMP/b.json" | head)"; fi
expect_eq "JSON: every finding's explanation is there (8)" 8 \
	"$(jq '[.findings[] | select(.explanation != null)] | length' "$TMP/a.json")"
audit --format prometheus | grep -v '^hosttune_last_run_timestamp_seconds' >"$TMP/a.prom"
audit --format prometheus -v | grep -v '^hosttune_last_run_timestamp_seconds' >"$TMP/b.prom"
if cmp -s "$TMP/a.prom" "$TMP/b.prom"; then ok "Prometheus: the same with -v"
else not_ok "Prometheus: the same with -v" "$(diff "$TMP/a.prom" "$TMP/b.prom" | head)"; fi

# ---- a terminal (script(1)): the first screen holds the problems -----------
if command -v script >/dev/null 2>&1 && script -qec true /dev/null </dev/null >/dev/null 2>&1; then
	COLUMNS=80 NO_COLOR=1 script -qec "'$HOSTTUNE' --rules '$HT_RULES_DIR' --facts '$GVM' audit" \
		/dev/null </dev/null | tr -d '\r' >"$TMP/tty.txt"
	expect_eq "pty: the same explanations as a pipe" \
		"$(grep -oE '^\[[a-z/]+\] [a-z_.]+' "$TMP/default.txt")" \
		"$(grep -oE '^\[[a-z/]+\] [a-z_.]+' "$TMP/tty.txt")"
	# After the heading line (the origin's path is as long as it is); the
	# workload line is wrapped.
	expect_eq "pty: no line wider than 80 after the heading" 0 \
		"$(tail -n +2 "$TMP/tty.txt" | awk 'length($0) > 80' | wc -l)"
	# The default profile with nothing --set has no workload line; -v lists
	# every variable, a line longer than 80 columns.
	COLUMNS=80 NO_COLOR=1 script -qec "'$HOSTTUNE' --rules '$HT_RULES_DIR' --facts '$GVM' -v audit" \
		/dev/null </dev/null | tr -d '\r' >"$TMP/tty-v.txt"
	expect_eq "pty: the workload line wrapped, its rest indented" "workload:|    " \
		"$(sed -n 2p "$TMP/tty-v.txt" | cut -c1-9)|$(sed -n 3p "$TMP/tty-v.txt" | cut -c1-4)"
	# Every problem's heading within the first 50 lines (a screen).
	expect_eq "pty: the problems within the first screen (50 lines)" 3 \
		"$(head -n 50 "$TMP/tty.txt" | grep -cE '^\[(critical|warning)\] ')"
	echo "# pty report: $(wc -l <"$TMP/tty.txt") lines (verbose: $(wc -l <"$TMP/verbose.txt") at 100 columns)"
else
	echo "# no script(1) or no pty: the terminal checks are skipped"
fi

# ---- the journal: sd-daemon priority prefixes ------------------------------
# JOURNAL_STREAM is DEVICE:INODE of the journal's socket; here those of a
# plain file the output is appended to, as stat(1) gives them.
: >"$TMP/journal"
js=$(stat -c '%d:%i' "$TMP/journal")
JOURNAL_STREAM=$js audit -v >>"$TMP/journal" 2>>"$TMP/journal"
expect_eq "journal: exit status unchanged" 1 $?
expect_eq "journal: every line has a priority" 0 "$(grep -cvE '^<[0-7]>' "$TMP/journal")"
expect_eq "journal: the report without the prefixes is the verbose report" \
	"$(cat "$TMP/verbose.txt")" "$(sed -E 's/^<[0-7]>//' "$TMP/journal")"
row() { grep -E "^<[0-7]>$1 " "$TMP/journal" | head -n 1 | cut -c1-3; }
expect_eq "journal: critical row <2>" "<2>" "$(row conntrack.max)"
expect_eq "journal: warning row <4>" "<4>" "$(row conntrack.buckets)"
expect_eq "journal: ok row <6>" "<6>" "$(row conntrack.time_wait)"
expect_eq "journal: n/a row <6>" "<6>" "$(row cpu.aes)"
expect_eq "journal: heading <6>" "<6>" "$(head -n 1 "$TMP/journal" | cut -c1-3)"
# The critical block: its heading, 12 lines of explanation and the fix, all <2>.
expect_eq "journal: the whole critical block is <2>" "<2>" \
	"$(sed -n '/^<.>\[critical\] conntrack.max/,/^<.>$/p' "$TMP/journal" | cut -c1-3 | sort -u | tr -d '\n')"
expect_eq "journal: the warning's fix line is <4>" "<4>" \
	"$(grep -F 'fix: options nf_conntrack hashsize=32768' "$TMP/journal" | cut -c1-3)"
# The summary line at the worst severity: 2 critical, so <2>.
expect_eq "journal: summary <2>" "<2>2 critical, 1 warning, 0 info, 2 ok, 3 not applicable" \
	"$(tail -n 1 "$TMP/journal")"
# stderr is the journal too: an error is <3>.
: >"$TMP/journal-err"
JOURNAL_STREAM=$(stat -c '%d:%i' "$TMP/journal-err") ht --facts "$TMP/none.facts" audit \
	>/dev/null 2>>"$TMP/journal-err"
expect_eq "journal: an error on stderr is <3>" \
	"<3>hosttune: $TMP/none.facts: No such file or directory" "$(cat "$TMP/journal-err")"
# Not the journal (another file's inode, a malformed value): no prefix.
JOURNAL_STREAM=$js audit -v >"$TMP/not-journal"
expect_eq "journal: another file, no prefix" 0 "$(grep -c '^<[0-7]>' "$TMP/not-journal")"
JOURNAL_STREAM="x:y" audit -v >>"$TMP/journal.bad" 2>&1
expect_eq "journal: a malformed JOURNAL_STREAM, no prefix" 0 "$(grep -c '^<[0-7]>' "$TMP/journal.bad")"
# --output: the file is the report as it is, whatever stdout is.
: >"$TMP/journal.out"
JOURNAL_STREAM=$(stat -c '%d:%i' "$TMP/journal.out") audit --output "$TMP/report.txt" >>"$TMP/journal.out"
expect_eq "journal: --output writes no prefix" "$(cat "$TMP/default.txt")" "$(cat "$TMP/report.txt")"
# JSON is a document, not lines: unchanged.
: >"$TMP/journal.json"
JOURNAL_STREAM=$(stat -c '%d:%i' "$TMP/journal.json") audit --format json >>"$TMP/journal.json"
if cmp -s "$TMP/a.json" "$TMP/journal.json"; then ok "journal: JSON unchanged"
else not_ok "journal: JSON unchanged" "$(head -3 "$TMP/journal.json")"; fi

# ---- sizes: IEC units in the table, exact in the fix -----------------------
# garage-vm under garage: block_ram_buffer_max is Garage's default 256 MiB
# (268435456 = 256 x 1048576 bytes); the bound is RAM / 8 = 480 MiB / 8 = 60 MiB.
ht --root "$FIXTURES/garage-vm/root" --profile garage audit >"$TMP/garage.txt"
expect_eq "table: 256 MiB, 60 MiB" "garage.ram_buffer 256 MiB 60 MiB warning" \
	"$(grep '^garage.ram_buffer ' "$TMP/garage.txt" | tr -s ' ')"
expect_contains "fix: the value to copy into garage.toml" 'block_ram_buffer_max = "60MiB"' \
	"$(cat "$TMP/garage.txt")"
ht --root "$FIXTURES/garage-vm/root" --profile garage --format json audit >"$TMP/garage.json"
expect_eq "JSON: exact bytes" "268435456 62914560" \
	"$(jq -r '.findings[] | select(.rule == "garage.ram_buffer") | "\(.current) \(.recommended)"' "$TMP/garage.json")"

# ---- plurals ---------------------------------------------------------------
vary "$GVM" "$TMP/tw.facts" \
	"net.ipv4.tcp_max_tw_buckets=4096 sockets from /proc/sys/net/ipv4/tcp_max_tw_buckets" \
	"nstat.TcpExtTCPTimeWaitOverflow=0 sockets from /proc/net/netstat" \
	"sockstat.tcp.tw=1 sockets from /proc/net/sockstat"
expect_contains "one socket: is" "net.ipv4.tcp_max_tw_buckets is 4096, with 1 socket in TIME_WAIT now" \
	"$(ht --facts "$TMP/tw.facts" audit -v)"
vary "$TMP/tw.facts" "$TMP/tw2.facts" "sockstat.tcp.tw=2 sockets from /proc/net/sockstat"
expect_contains "two sockets: are" "with 2 sockets in TIME_WAIT now" \
	"$(ht --facts "$TMP/tw2.facts" audit -v)"

# ---- TIME_WAIT overflows, since boot and over --sample's interval ---------
# 300 sockets skipped TIME_WAIT since boot; 1000 of 4096 are in it now
# (1000 x 10 = 10000 < 4096 x 9 = 36864: not near the limit): info, and
# max(4096, pow2ceil(1000 x 2) = 2048) = 4096 stays.
vary "$TMP/tw.facts" "$TMP/tw3.facts" "sockstat.tcp.tw=1000 sockets from /proc/net/sockstat" \
	"nstat.TcpExtTCPTimeWaitOverflow=300 sockets from /proc/net/netstat"
ht --facts "$TMP/tw3.facts" --format json audit >"$TMP/tw3.json"
expect_eq "TIME_WAIT overflows since boot, table not near its limit: info, 4096" "info 4096 4096" \
	"$(jq -r '.findings[] | select(.rule == "ports.tw_buckets") | "\(.severity) \(.current) \(.recommended)"' "$TMP/tw3.json")"
# The same host read twice 5 s apart: 0 more in the interval: still info;
# 25 more: the table reached its limit in the interval, a warning, and at
# least twice the limit: max(4096 x 2 = 8192, 2048) = 8192.
vary "$TMP/tw3.facts" "$TMP/tw4.facts" "nstat.TcpExtTCPTimeWaitOverflow.delta=0 sockets" \
	"sample.seconds=5.01 seconds"
ht --facts "$TMP/tw4.facts" --format json audit >"$TMP/tw4.json"
expect_eq "TIME_WAIT overflows, none in the interval: info" "info 4096 4096" \
	"$(jq -r '.findings[] | select(.rule == "ports.tw_buckets") | "\(.severity) \(.current) \(.recommended)"' "$TMP/tw4.json")"
vary "$TMP/tw4.facts" "$TMP/tw5.facts" "nstat.TcpExtTCPTimeWaitOverflow.delta=25 sockets"
ht --facts "$TMP/tw5.facts" --format json audit >"$TMP/tw5.json"
expect_eq "TIME_WAIT overflows in the interval: warning, 8192" "warning 4096 8192" \
	"$(jq -r '.findings[] | select(.rule == "ports.tw_buckets") | "\(.severity) \(.current) \(.recommended)"' "$TMP/tw5.json")"
# Near the limit now (3900 of 4096: 39000 >= 36864) after overflows since
# boot, read twice with none in the interval: still a warning, as without
# --sample, with twice the sockets now: pow2ceil(7800) = 8192.
vary "$TMP/tw4.facts" "$TMP/tw6.facts" "sockstat.tcp.tw=3900 sockets from /proc/net/sockstat"
ht --facts "$TMP/tw6.facts" --format json audit >"$TMP/tw6.json"
expect_eq "TIME_WAIT at 95% of the limit now, none in the interval: warning, 8192" "warning 4096 8192" \
	"$(jq -r '.findings[] | select(.rule == "ports.tw_buckets") | "\(.severity) \(.current) \(.recommended)"' "$TMP/tw6.json")"
expect_contains "... the text says the table is near its limit now" "The table is at 90% of its limit or more now." \
	"$(jq -r '.findings[] | select(.rule == "ports.tw_buckets") | .explanation' "$TMP/tw6.json" | tr '\n' ' ' | tr -s ' ')"
expect_contains "TIME_WAIT overflows in the interval: the text counts them" \
	"Since boot 300 sockets skipped TIME_WAIT because the limit was reached (TcpExtTCPTimeWaitOverflow; a socket that skips it lets its late segments reach a new connection on the same ports). In the last 5 s alone: 25 sockets." \
	"$(jq -r '.findings[] | select(.rule == "ports.tw_buckets") | .explanation' "$TMP/tw5.json" | tr '\n' ' ' | tr -s ' ')"

finish
