#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A fleet in one run: audit with several --facts files, or a directory of
# them, against each host audited alone. The text report's table holds
# every host's rows with a HOST column, the JSON document every host's
# findings with a "host", the Prometheus document every host's series with
# a host label (only with --host-label); the exit status is the fleet's
# worst. The hosts: the Garage VM (host.name garage-vm), the home server and
# the Proxmox guest (facts files without host.name: named after the file).
. "$(dirname "$0")/lib.sh"

mkdir "$TMP/fleet"
cp "$FIXTURES/garage-vm/expected.facts" "$TMP/fleet/vm1.facts"
cp "$FIXTURES/home-server/host.facts" "$TMP/fleet/home.facts"
cp "$FIXTURES/proxmox-v3/host.facts" "$TMP/fleet/pve.facts"
echo "not a facts file" >"$TMP/fleet/notes.txt"
# Name order of the files: home, pve, vm1 (whose host is garage-vm).
LABELS="home pve garage-vm"
F=$TMP/fleet

# ---- text: one table, the rows of each host's own audit ----
ht --facts "$F" audit >"$TMP/fleet.txt"
expect_eq "text: exit 1 (garage-vm has critical findings)" 1 $?
expect_eq "text: the heading counts the hosts" "hosttune audit of 3 hosts, profile default" \
	"$(head -n 1 "$TMP/fleet.txt")"
# table FILE: the table's rows (from the line after the RULE or HOST heading
# to the first empty line), blanks squeezed.
table() {
	sed -n '/^\(HOST  *\)\{0,1\}RULE  /,/^$/p' "$1" | sed '1d;/^$/d' | tr -s ' '
}
: >"$TMP/expected-rows"
for f in home pve vm1; do
	label=$f
	[ $f = vm1 ] && label=garage-vm
	ht --facts "$F/$f.facts" audit >"$TMP/$f.txt"
	table "$TMP/$f.txt" | sed "s/^/$label /" >>"$TMP/expected-rows"
done
table "$TMP/fleet.txt" >"$TMP/fleet-rows"
expect_eq "text: HOST first in the table's heading" "HOST RULE CURRENT RECOMMENDED SEVERITY" \
	"$(grep '^HOST ' "$TMP/fleet.txt" | tr -s ' ')"
# 10 rows of the home server, 11 of the Proxmox guest, 8 of the Garage VM's
# facts; and the 6 network namespace rules and 5 proxy rules not applicable
# on the first two, whose facts (an older hosttune's) have neither netns.list
# nor proxy.list.
expect_eq "text: the table has every host's rows (21 + 22 + 8)" 51 "$(wc -l <"$TMP/fleet-rows")"
if [ "$(sort "$TMP/expected-rows")" = "$(sort "$TMP/fleet-rows")" ]; then
	ok "text: each row is the host's own audit's row, with its host"
else not_ok "text: each row is the host's own audit's row, with its host" \
	"$(diff "$TMP/expected-rows" "$TMP/fleet-rows" | head -n 8)"; fi
expect_eq "text: worst first across the fleet" \
	"critical critical warning warning info" \
	"$(head -n 5 "$TMP/fleet-rows" | awk '{ print $NF }' | tr '\n' ' ' | sed 's/ $//')"
expect_eq "text: one line a host after the heading, with its file" \
	"  home       facts file $F/home.facts: kernel 6.1.0-18-amd64" \
	"$(sed -n 3p "$TMP/fleet.txt")"
expect_contains "text: the host's kernel, time and hosttune version when its facts say them" \
	"garage-vm  facts file $F/vm1.facts: kernel 5.15.0-91-generic, collected 2000-01-01T00:00:00Z by hosttune 0" \
	"$(sed -n 5p "$TMP/fleet.txt")"
# The explanations, under each host: the findings at info and above only.
expect_eq "text: the problems under their host, ok and n/a only in the table" \
	"== home ==|[info] cpu.aes|== pve ==|[warning] cpu.aes|== garage-vm ==|[critical] conntrack.max|[critical] conntrack.drops|[warning] conntrack.buckets" \
	"$(grep -E '^(== |\[)' "$TMP/fleet.txt" | sed 's/ (.*//' | tr '\n' '|' | sed 's/|$//')"
# Each host's summary line as its own audit prints it; the fleet's is their sum:
# critical 2 + 0 + 0, warning 1 + 0 + 1, info 0 + 1 + 0, ok 2 + 0 + 0, n/a 3 + 8 + 9.
for f in home pve vm1; do
	label=$f
	[ $f = vm1 ] && label=garage-vm
	expect_eq "text: $label's summary line" "$label: $(tail -n 1 "$TMP/$f.txt")" \
		"$(grep "^$label: " "$TMP/fleet.txt")"
done
expect_eq "text: the fleet's summary" \
	"3 hosts: 2 critical, 2 warning, 1 info, 2 ok, 44 not applicable" "$(tail -n 1 "$TMP/fleet.txt")"

# ---- the same hosts named one by one, and a second --facts no longer wins ----
ht --facts "$F/home.facts" --facts "$F/pve.facts" --facts "$F/vm1.facts" audit >"$TMP/files.txt"
expect_eq "three --facts: exit 1" 1 $?
if cmp -s "$TMP/fleet.txt" "$TMP/files.txt"; then
	ok "three --facts FILE: the same report as --facts DIR"
else not_ok "three --facts FILE: the same report as --facts DIR" \
	"$(diff "$TMP/fleet.txt" "$TMP/files.txt" | head -n 5)"; fi
ht --facts "$F/pve.facts" --facts "$F/home.facts" audit >"$TMP/two.txt"
expect_eq "two --facts: both hosts, in the order given" "pve home" \
	"$(sed -n '3,4p' "$TMP/two.txt" | awk '{ print $1 }' | tr '\n' ' ' | sed 's/ $//')"
ht --facts "$F/home.facts" --facts "$F/home.facts" audit >"$TMP/same.txt"
expect_eq "the same file twice: one host's audit, as with one --facts" \
	"hosttune audit of facts file $F/home.facts, profile default" "$(head -n 1 "$TMP/same.txt")"
ht --facts "$F/home.facts" --facts "$F" audit >"$TMP/dup.txt"
expect_eq "a file named twice (itself and in its directory) is one host" \
	"hosttune audit of 3 hosts, profile default" "$(head -n 1 "$TMP/dup.txt")"
# Only the critical findings count with --fail-on critical: the home server
# and the Proxmox guest have none.
ht --facts "$F/home.facts" --facts "$F/pve.facts" --fail-on critical audit >/dev/null
expect_eq "--fail-on critical without a critical host: exit 0" 0 $?
ht --facts "$F/home.facts" --facts "$F/pve.facts" audit >/dev/null
expect_eq "--fail-on warning with pve's warning: exit 1" 1 $?

# ---- JSON: one document, each host's findings with a host ----
ht --facts "$F" --format json audit >"$TMP/fleet.json"
expect_eq "json: exit 1" 1 $?
expect_eq "json: one document of schema 1" "1 1" \
	"$(jq -s 'length' "$TMP/fleet.json") $(jq '.schema' "$TMP/fleet.json")"
expect_eq "json: the hosts in order" "home pve garage-vm" \
	"$(jq -r '[.hosts[].host] | join(" ")' "$TMP/fleet.json")"
for f in home pve vm1; do
	label=$f
	[ $f = vm1 ] && label=garage-vm
	ht --facts "$F/$f.facts" --format json audit >"$TMP/$f.json"
	# The host's findings, host taken out, are its own audit's, in its order.
	expect_eq "json: $label's findings are its own audit's" \
		"$(jq -c '.findings' "$TMP/$f.json")" \
		"$(jq -c --arg h "$label" '[.findings[] | select(.host == $h) | del(.host)]' "$TMP/fleet.json")"
	expect_eq "json: $label's summary is its own audit's" \
		"$(jq -c '.summary' "$TMP/$f.json")" \
		"$(jq -c --arg h "$label" '.hosts[] | select(.host == $h) | .summary' "$TMP/fleet.json")"
done
expect_eq "json: host is each finding's first key" true \
	"$(jq '[.findings[] | keys_unsorted[0] == "host"] | all' "$TMP/fleet.json")"
# 2 + 0 + 0 critical, 1 + 0 + 1 warning, 0 + 1 + 0 info, 2 + 0 + 0 ok, 3 + 8 + 9 n/a.
expect_eq "json: the summary sums the hosts'" \
	'{"ok":2,"info":1,"warning":2,"critical":2,"n/a":44,"worst":"critical"}' \
	"$(jq -c '.summary' "$TMP/fleet.json")"
expect_eq "json: severities in the report's order" "critical warning info ok n/a" \
	"$(jq -r '[.findings[].severity] | reduce .[] as $s ([]; if (.[-1] // "") == $s then . else . + [$s] end) | join(" ")' "$TMP/fleet.json")"
expect_eq "json: what the facts say of each host" \
	"garage-vm 5.15.0-91-generic 2000-01-01T00:00:00Z 0|null 6.1.0-18-amd64 null null" \
	"$(jq -r '[.hosts[] | select(.host == "garage-vm" or .host == "home")
		| [.name, .kernel, .collected_at, .hosttune_version] | map(tostring) | join(" ")]
		| reverse | join("|")' "$TMP/fleet.json")"

# ---- Prometheus: a host label only when asked ----
ht --facts "$F" --format prometheus audit >"$TMP/p.out" 2>"$TMP/p.err"
expect_eq "prometheus, several hosts, no --host-label: exit 2" 2 $?
expect_eq "prometheus, several hosts, no --host-label: says why" \
	"hosttune: --format prometheus with several hosts needs --host-label (each host's series would otherwise be the same series) (hosttune --help lists the usage)" \
	"$(cat "$TMP/p.err")"
ht --facts "$F" --format prometheus --host-label audit >"$TMP/fleet.prom"
expect_eq "prometheus --host-label: exit 1" 1 $?
# Each host's series are its own audit's (--host-label on one host), the
# run's families (version, time, profile) once and without a host. (The
# families come in the order the hosts first name them: home has no
# conntrack table, so its rate families come before the Garage VM's
# bucket count; a host's samples are compared in name order.)
for f in home pve vm1; do
	label=$f
	[ $f = vm1 ] && label=garage-vm
	ht --facts "$F/$f.facts" --format prometheus --host-label audit >"$TMP/$f.prom"
	if [ "$(grep "host=\"$label\"" "$TMP/$f.prom" | sort)" = \
		"$(grep "host=\"$label\"" "$TMP/fleet.prom" | sort)" ]; then
		ok "prometheus: $label's series are its own audit's"
	else not_ok "prometheus: $label's series are its own audit's" \
		"$(diff "$TMP/$f.prom" "$TMP/fleet.prom" | grep "$label" | head -n 4)"; fi
done
expect_eq "prometheus: every series but the run's has a host label" \
	"hosttune_build_info hosttune_last_run_timestamp_seconds hosttune_profile_info" \
	"$(grep '^hosttune_' "$TMP/fleet.prom" | grep -v 'host="' | sed 's/[{ ].*//' | tr '\n' ' ' | sed 's/ $//')"
expect_eq "prometheus: no series twice" 0 \
	"$(grep '^hosttune_' "$TMP/fleet.prom" | sed 's/ [^ ]*$//' | sort | uniq -d | wc -l)"
expect_eq "prometheus: one HELP and one TYPE a family" 0 \
	"$(grep '^# \(HELP\|TYPE\) ' "$TMP/fleet.prom" | cut -d' ' -f2,3 | sort | uniq -d | wc -l)"
# No family interleaved: the metric names of the samples, runs collapsed,
# are each named once.
expect_eq "prometheus: each family's samples together" 0 \
	"$(grep '^hosttune_' "$TMP/fleet.prom" | sed 's/[{ ].*//' | uniq | sort | uniq -d | wc -l)"
# The samples of the fleet: those of the three hosts, less the run's families
# twice over (3 each in the three, once in the fleet).
n=0
for f in home pve vm1; do n=$((n + $(grep -c '^hosttune_' "$TMP/$f.prom"))); done
expect_eq "prometheus: every host's samples, the run's once" $((n - 2 * 3)) \
	"$(grep -c '^hosttune_' "$TMP/fleet.prom")"
# One host, asked: the label too (the tree's hostname on the live path).
ht --root "$FIXTURES/garage-vm/root" --no-measure --format prometheus --host-label audit >"$TMP/one.prom"
expect_eq "prometheus --host-label, a --root tree: its hostname as the label" \
	'hosttune_audit_worst_severity{host="garage-vm"} 3' \
	"$(grep '^hosttune_audit_worst_severity' "$TMP/one.prom")"
ht --facts "$F/home.facts" --format prometheus audit >"$TMP/nolabel.prom"
expect_eq "prometheus, one host, not asked: no host label" 0 "$(grep -c 'host=' "$TMP/nolabel.prom")"

# ---- hosts that share a name: the file's name after it ----
mkdir "$TMP/same"
cp "$FIXTURES/garage-vm/expected.facts" "$TMP/same/a.facts"
cp "$FIXTURES/garage-vm/expected.facts" "$TMP/same/b.facts"
ht --facts "$TMP/same" --format json audit >"$TMP/same.json"
expect_eq "two hosts called garage-vm: told apart by their files" "garage-vm (a)|garage-vm (b)" \
	"$(jq -r '[.hosts[].host] | join("|")' "$TMP/same.json")"

# ---- what a fleet refuses ----
refused() {
	desc=$1 want=$2
	shift 2
	ht "$@" >/dev/null 2>"$TMP/err"
	expect_eq "$desc" "2 $want" "$? $(cat "$TMP/err")"
}
U=" (hosttune --help lists the usage)"
refused "facts of several hosts: refused" \
	"hosttune: --facts FILE --facts FILE: several hosts (more than one --facts, or a directory) are for audit, not for facts: give one facts file$U" \
	--facts "$F/home.facts" --facts "$F/pve.facts" facts
refused "plan of a directory: refused" \
	"hosttune: --facts $F: several hosts (more than one --facts, or a directory) are for audit, not for plan: give one facts file$U" \
	--facts "$F" plan
refused "--observed with several hosts: refused" \
	"hosttune: --observed is one host's recording: it applies to one --facts file, not to several hosts$U" \
	--facts "$F" --observed "$TMP/x" audit
refused "--host-label without prometheus: refused" \
	"hosttune: --host-label applies to --format prometheus (text and JSON name the host of each finding when there are several)$U" \
	--facts "$F" --host-label audit
mkdir "$TMP/empty"
refused "a directory without a facts file" \
	"hosttune: --facts $TMP/empty: no *.facts file in this directory" --facts "$TMP/empty" audit
cp "$F/home.facts" "$TMP/bad.facts"
echo "mem.total = lots" >>"$TMP/bad.facts"
n=$(wc -l <"$TMP/bad.facts")
ht --facts "$F" --facts "$TMP/bad.facts" audit >/dev/null 2>"$TMP/err"
expect_eq "a bad facts file in the fleet: exit 2" 2 $?
expect_contains "a bad facts file in the fleet: its file and line" "$TMP/bad.facts:$n:" "$(cat "$TMP/err")"
ht --facts "$F" --format json --facts "$TMP/bad.facts" audit >"$TMP/err.json" 2>/dev/null
expect_eq "a bad facts file in the fleet, JSON: the error object" "2 $TMP/bad.facts $n" \
	"$(jq -r '[.error.exit, .error.file, .error.line] | map(tostring) | join(" ")' "$TMP/err.json")"

# ---- -q, -v and the journal, as for one host ----
ht --facts "$F/home.facts" --facts "$F/vm1.facts" audit >"$TMP/d.txt"
ht --facts "$F/home.facts" --facts "$F/vm1.facts" -q audit >"$TMP/q.txt"
# -q: the summary lines only, one a host and the fleet's: the last 3 lines of the default.
expect_eq "fleet -q: the summary lines alone" "$(tail -n 3 "$TMP/d.txt")" "$(cat "$TMP/q.txt")"
ht --facts "$F/home.facts" --facts "$F/vm1.facts" -v audit >"$TMP/v.txt"
expect_eq "fleet -v: explains more than the default" yes \
	"$([ "$(wc -l <"$TMP/v.txt")" -gt "$(wc -l <"$TMP/d.txt")" ] && echo yes || echo no)"
: >"$TMP/j.txt"
JOURNAL_STREAM=$(stat -c %d:%i "$TMP/j.txt") ht --facts "$F/home.facts" --facts "$F/vm1.facts" \
	audit >"$TMP/j.txt"
# The garage VM's critical rows carry <2>, as in a one-host audit.
expect_eq "fleet in the journal: a critical row is <2>" yes \
	"$(grep -q '^<2>garage-vm .*critical' "$TMP/j.txt" && echo yes || echo no)"

# ---- facts collected long ago: a warning line, the file and its time ----
# vm1.facts says 2000-01-01T00:00:00Z: older than a day whatever today is
# (the count of days depends on the clock, so only the rest is compared);
# home.facts has no host.collected_at: nothing to judge, no line.
W="hosttune: warning: $F/vm1.facts: the facts were collected 2000-01-01T00:00:00Z, "
WHY=" days ago: the host may have changed since (collect them again; --facts-max-age sets how old is too old)"
ht --facts "$F" audit >/dev/null 2>"$TMP/stale.err"
expect_eq "stale facts: one warning line, for vm1 only" 1 "$(grep -c . "$TMP/stale.err")"
expect_eq "stale facts: names the file and the time, then the days" "$W<N>$WHY" \
	"$(sed 's/, [0-9]* days ago/, <N> days ago/' "$TMP/stale.err")"
expect_eq "stale facts: the exit status is unchanged" 1 "$(ht --facts "$F" audit >/dev/null 2>&1; echo $?)"
ht --facts "$F" --facts-max-age 0 audit >/dev/null 2>"$TMP/stale.err"
expect_eq "--facts-max-age 0: no warning" "" "$(cat "$TMP/stale.err")"
# Collected now (the test's own clock, whatever it says): within a day.
# stale_err NAME TIME: vm1's facts collected at TIME (as written), audited;
# what it says on stderr, in $TMP/NAME.facts's name.
stale_err() {
	sed "s/^host.collected_at = .*/host.collected_at = \"$2\" from time(2)/" \
		"$F/vm1.facts" >"$TMP/$1.facts"
	ht --facts "$TMP/$1.facts" audit >/dev/null 2>"$TMP/stale.err"
	cat "$TMP/stale.err"
}
UNKNOWN="is not a UTC time as YYYY-MM-DDTHH:MM:SSZ: how old the facts are is unknown"
expect_eq "facts collected now: no warning" "" "$(stale_err fresh "$(date -u +%Y-%m-%dT%H:%M:%SZ)")"
# A time with an offset, on a day the month lacks, or in the future: the age
# is unknown, said once.
expect_eq "a time with an offset: warned, not judged" \
	"hosttune: warning: $TMP/offset.facts: host.collected_at '2026-01-01T00:00:00+02:00' $UNKNOWN" \
	"$(stale_err offset 2026-01-01T00:00:00+02:00)"
expect_eq "a day February does not have: warned, not judged" \
	"hosttune: warning: $TMP/feb30.facts: host.collected_at '2026-02-30T00:00:00Z' $UNKNOWN" \
	"$(stale_err feb30 2026-02-30T00:00:00Z)"
expect_eq "a time in the future: warned" \
	"hosttune: warning: $TMP/future.facts: the facts say they were collected 2999-01-01T00:00:00Z, later than this host's clock: how old they are is unknown" \
	"$(stale_err future 2999-01-01T00:00:00Z)"
# 100000 days (274 years) keeps 2000-01-01 quiet until the year 2273; the
# configuration's key does the same, and the command line wins over it.
ht --facts "$F/vm1.facts" --facts-max-age 100000d audit >/dev/null 2>"$TMP/stale.err"
expect_eq "--facts-max-age 100000d: no warning" "" "$(cat "$TMP/stale.err")"
printf '[hosttune]\nfacts-max-age = 100000d\n' >"$TMP/age.conf"
ht --config "$TMP/age.conf" --facts "$F/vm1.facts" audit >/dev/null 2>"$TMP/stale.err"
expect_eq "facts-max-age = 100000d in the configuration: no warning" "" "$(cat "$TMP/stale.err")"
ht --config "$TMP/age.conf" --facts "$F/vm1.facts" --facts-max-age 1d audit >/dev/null 2>"$TMP/stale.err"
expect_eq "--facts-max-age 1d wins over the configuration" 1 "$(grep -c "^$W" "$TMP/stale.err")"
printf '[hosttune]\nfacts-max-age = soon\n' >"$TMP/bad-age.conf"
ht --config "$TMP/bad-age.conf" --facts "$F/vm1.facts" audit >/dev/null 2>"$TMP/stale.err"
expect_eq "facts-max-age = soon: exit 2, file, line and column" \
	"2 hosttune: $TMP/bad-age.conf:2:17: facts-max-age: expected a time such as 1d, 12h or 0 (never warn), found 'soon'" \
	"$? $(cat "$TMP/stale.err")"

# ---- each host's own profile: hosttune.profile in its facts ----
# The Garage VM's tree, its facts taken once with --profile garage and once
# with none (default); audited together without --profile, each is judged
# with its own: conntrack.time_wait (TIME_WAIT 120 s against garage's 30 s)
# is a warning under garage only (config.sh: the default profile's verdict
# has one warning, conntrack.buckets).
mkdir "$TMP/own"
ht --root "$FIXTURES/garage-vm/root" --no-config --no-measure --profile garage facts >"$TMP/own/g.facts"
ht --root "$FIXTURES/garage-vm/root" --no-config --no-measure facts >"$TMP/own/d.facts"
expect_eq "facts: the profile and where it came from" \
	'hosttune.profile = "garage" from --profile|hosttune.profile = "default" from default' \
	"$(grep -h '^hosttune.profile ' "$TMP/own/g.facts" "$TMP/own/d.facts" | tr '\n' '|' | sed 's/|$//')"
ht --no-config --facts "$TMP/own/g.facts" audit >"$TMP/own.txt" 2>/dev/null
expect_eq "audit --facts: the host's profile, from its facts" \
	"hosttune audit of facts file $TMP/own/g.facts, profile garage" "$(head -n 1 "$TMP/own.txt")"
ht --no-config --facts "$TMP/own" --format json audit >"$TMP/own.json" 2>/dev/null
expect_eq "fleet: each host judged with its own profile (time_wait: garage warning, default not)" \
	"garage-vm (d) false|garage-vm (g) true" \
	"$(jq -r '[.hosts[].host as $h | "\($h) \([.findings[] | select(.host == $h and .rule == "conntrack.time_wait"
		and .severity == "warning")] | length > 0)"] | join("|")' "$TMP/own.json")"
ht --no-config --facts "$TMP/own/g.facts" --profile default audit >"$TMP/own.txt" 2>/dev/null
expect_eq "--profile on the auditing machine wins over the facts'" \
	"hosttune audit of facts file $TMP/own/g.facts, profile default" "$(head -n 1 "$TMP/own.txt")"
printf '[hosttune]\nprofile = minio\n' >"$TMP/own.conf"
ht --config "$TMP/own.conf" --facts "$TMP/own/g.facts" audit >"$TMP/own.txt" 2>/dev/null
expect_eq "--config FILE's profile wins over the facts'" \
	"hosttune audit of facts file $TMP/own/g.facts, profile minio" "$(head -n 1 "$TMP/own.txt")"
sed 's/^hosttune.profile = .*/hosttune.profile = "nope" from --profile/' "$TMP/own/g.facts" >"$TMP/nope.facts"
ht --no-config --facts "$TMP/nope.facts" audit >/dev/null 2>"$TMP/err"
expect_eq "a profile in the facts this machine does not have: exit 2, named with the file" 2 $?
expect_contains "a profile in the facts this machine does not have: the file and the fact" \
	"hosttune: $TMP/nope.facts: hosttune.profile: " "$(cat "$TMP/err")"

# ---- each host's own waivers, recorded by hosttune facts ----
# The Garage VM's tree with a configuration waiving conntrack.max (one of
# its two critical findings: conntrack.max and conntrack.buckets) and the
# one-queue NIC warning, which its eth0 does not have (that waiver matches
# only an ok row): 1 waived. Its facts carry both waivers; the home
# server's facts none (an older file: this machine's configuration, here
# none).
W=$TMP/waivers
mkdir -p "$W/fleet"
cp -a "$FIXTURES/garage-vm/root" "$W/root"
printf '[waive]\nconntrack.max = sized by hand\nnic.queues_hypervisor[eth0] = VM NIC, one queue\n' \
	>"$W/host.conf"
ht --root "$W/root" --config "$W/host.conf" facts >"$W/fleet/vm.facts"
expect_eq "facts: the waivers recorded, with their file:line:col" \
"hosttune.waiver.1.text = \"conntrack.max = sized by hand\" from $W/host.conf:2:1
hosttune.waiver.2.text = \"nic.queues_hypervisor[eth0] = VM NIC, one queue\" from $W/host.conf:3:1
hosttune.waivers = 2 waivers from the configuration's [waive]" \
	"$(grep '^hosttune.waiver' "$W/fleet/vm.facts")"
ht --root "$W/root" --config "$W/host.conf" audit >"$W/host.txt"
ht --facts "$W/fleet/vm.facts" audit >"$W/facts.txt"
expect_eq "audit --facts: the host's own waivers, as on the host" \
	"$(tail -n 1 "$W/host.txt")" "$(tail -n 1 "$W/facts.txt")"
expect_contains "audit --facts: 1 waived" "1 waived" "$(tail -n 1 "$W/facts.txt")"
printf '[waive]\n' >"$W/none.conf"
ht --facts "$W/fleet/vm.facts" --config "$W/none.conf" audit >"$W/cfg.txt"
expect_eq "--config FILE on the auditing machine: its waivers instead (none)" "" \
	"$(tail -n 1 "$W/cfg.txt" | grep -o 'waived')"
ht --facts "$W/fleet/vm.facts" --no-config audit >"$W/nocfg.txt"
expect_eq "--no-config: no waivers" "" "$(tail -n 1 "$W/nocfg.txt" | grep -o 'waived')"
cp "$FIXTURES/home-server/host.facts" "$W/fleet/home.facts"
ht --facts "$W/fleet" --format json audit >"$W/fleet.json"
expect_eq "a fleet: each host waived by its own (1 on the VM, none on the home server)" \
	"garage-vm 1" \
	"$(jq -r '[.findings[] | select(.waived != null) | .host] | group_by(.)
		| map("\(.[0]) \(length)") | join("|")' "$W/fleet.json" 2>/dev/null || echo "no jq output")"
# A recorded reason with a newline and a tab: escaped on its one line.
sed 's/^hosttune.waiver.1.text = .*/hosttune.waiver.1.text = "conntrack.max = x\\n[ok] all\\tfine" from here/' \
	"$W/fleet/vm.facts" >"$W/nl.facts"
ht --facts "$W/nl.facts" audit >"$W/nl.txt" 2>/dev/null
expect_eq "a recorded reason with a newline: one escaped line" \
	'    waived: x\n[ok] all\tfine|0' \
	"$(grep 'waived: x' "$W/nl.txt")|$(grep -c '^\[ok\] all' "$W/nl.txt")"
# A count below the texts: exit 2, the count and the text it leaves out.
sed 's/^hosttune.waivers = 2 /hosttune.waivers = 1 /' "$W/fleet/vm.facts" >"$W/count.facts"
ht --facts "$W/count.facts" audit >/dev/null 2>"$W/err"
expect_eq "hosttune.waivers below the texts: exit 2, named" \
	"2|hosttune: $W/count.facts: hosttune.waivers is 1 but hosttune.waiver.2.text is there too: expected as many texts as the count" \
	"$?|$(cat "$W/err")"
# A waiver line that is not one: the file and the fact named, exit 2.
sed 's/^hosttune.waiver.2.text = .*/hosttune.waiver.2.text = "nic.queues[eth0 = x" from here/' \
	"$W/fleet/vm.facts" >"$W/bad.facts"
ht --facts "$W/bad.facts" audit >/dev/null 2>"$W/err"
expect_eq "a recorded waiver that does not parse: exit 2, the file and fact named" \
	"2|hosttune: $W/bad.facts: hosttune.waiver.2.text:1:11: expected '[INSTANCE]' right before '=' (an interface, port, process or directory name)" \
	"$?|$(cat "$W/err")"

finish
