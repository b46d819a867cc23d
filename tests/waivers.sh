#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Waivers ([waive] in the configuration): a waived finding keeps its
# severity, is marked waived with its reason in the text report, JSON and
# Prometheus, and leaves the exit status; a waiver of one instance leaves the
# others; a waiver for a rule id the rules do not have is a warning line on
# stderr, not an error; a later drop-in takes a waiver back. On the facts of
# a registry VM whose findings are two warnings (cpu.aes: AES-GCM in
# software; nic.queues[eth0]: one queue of a virtio NIC that allows 8), and
# on the Garage VM's tree (a per-directory finding).
. "$(dirname "$0")/lib.sh"

REG=$FIXTURES/registry-vm/host.facts
CONF=$TMP/hosttune.conf
# run ARGS...: hosttune on the registry VM's facts with $CONF; $rc, $out, $err
run() {
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --config "$CONF" --facts "$REG" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}

# ---- nothing waived: two warnings, exit 1 ----
printf '[hosttune]\n' >"$CONF"
run audit
# 8 not applicable, the 6 network namespace rules and 5 proxy rules: this
# facts file (an older hosttune's) has no netns.list and no proxy.list.
expect_eq "no waiver: two warnings, exit 1" "1 0 critical, 2 warning, 0 info, 0 ok, 19 not applicable" \
	"$rc $(printf '%s\n' "$out" | tail -n 1)"

# ---- the NIC's one queue waived: one warning left, still exit 1 ----
cat >"$CONF" <<'EOF'
[waive]
nic.queues[eth0] = the hypervisor gives this NIC one queue
EOF
run audit
# 2 warnings - 1 waived = 1 warning; the waived one counted apart.
expect_eq "one waived: exit 1 for cpu.aes" "1 0 critical, 1 warning, 0 info, 0 ok, 19 not applicable, 1 waived" \
	"$rc $(printf '%s\n' "$out" | tail -n 1)"
expect_eq "the table row: its severity, marked waived" "nic.queues[eth0] 1 queue 8 queues warning (waived)" \
	"$(printf '%s\n' "$out" | grep '^nic.queues\[eth0\]' | tr -s ' ')"
expect_contains "the finding says why" \
	"$(printf '[warning] nic.queues[eth0] (ethtool channels eth0 combined): NIC queues (channels) against the CPUs that could serve them\n    waived: the hypervisor gives this NIC one queue')" \
	"$out"
expect_eq "cpu.aes is not waived" "cpu.aes 406 MB/s - warning" \
	"$(printf '%s\n' "$out" | grep '^cpu.aes ' | tr -s ' ')"

# ---- both waived: nothing at or above warning, exit 0 ----
cat >>"$CONF" <<'EOF'
cpu.aes = the provider's CPU model hides AES-NI ; a comment after the reason
  and we terminate TLS on the load balancer
EOF
run audit
expect_eq "both waived: exit 0" "0 0 critical, 0 warning, 0 info, 0 ok, 19 not applicable, 2 waived" \
	"$rc $(printf '%s\n' "$out" | tail -n 1)"
run --fail-on info audit
expect_eq "--fail-on info: a waived warning is still out of the exit status" 0 "$rc"

# ---- JSON: kept, with its severity and "waived": the reason ----
run --format json audit
expect_eq "JSON: both findings kept with their severity and reason" \
	"cpu.aes warning the provider's CPU model hides AES-NI and we terminate TLS on the load balancer|nic.queues eth0 warning the hypervisor gives this NIC one queue|" \
	"$(jget "$TMP/out" '.findings[] | select(.waived) | "\(.rule) \(.instance // "")\(if .instance then " " else "" end)\(.severity) \(.waived)"' | tr '\n' '|')"
expect_eq "JSON: a finding not waived has \"waived\": null" "19 null" \
	"$(jget "$TMP/out" '[.findings[] | select(.waived == null)] | "\(length) \(.[0].waived)"')"
# The summary: 2 warnings - 2 waived = 0; worst among the others: ok.
expect_eq "JSON summary: waived 2, warning 0, worst ok" "2 0 ok" \
	"$(jget "$TMP/out" '.summary | "\(.waived) \(.warning) \(.worst)"')"

# ---- Prometheus: hosttune_finding_waived with the reason; severity kept ----
run --format prometheus audit
expect_eq "metrics: exit 0" 0 "$rc"
expect_contains "metrics: the waived series of the NIC" \
	'hosttune_finding_waived{rule="nic.queues",device="eth0",reason="the hypervisor gives this NIC one queue"} 1' "$out"
expect_contains "metrics: the severity series stays (2, warning)" \
	'hosttune_finding_severity{rule="nic.queues",device="eth0"} 2' "$out"
expect_contains "metrics: the count of waived findings" 'hosttune_audit_findings{severity="waived"} 2' "$out"
expect_contains "metrics: the worst severity leaves them out (0, ok)" "hosttune_audit_worst_severity 0" "$out"

# ---- a waiver whose rule does not exist: a warning line, no error ----
cat >>"$CONF" <<'EOF'
nic.channels[eth0] = a rule id that the rules do not have
EOF
run audit
# Line 5: [waive], nic.queues, cpu.aes and its continuation line come first.
expect_eq "an unknown rule id: a warning on stderr, exit as before" \
	"0 hosttune: warning: $CONF:5:1: waiver for 'nic.channels': the rules have no rule of that id" \
	"$rc $err"
# A value other rules read is no rule with findings.
printf '[waive]\nconntrack.default.buckets = a value\n' >"$CONF"
run audit
expect_eq "a waiver naming a value: a warning" \
	"1 hosttune: warning: $CONF:2:1: waiver for 'conntrack.default.buckets': that is a value other rules use, not a rule with findings" \
	"$rc $err"

# ---- an instance's waiver leaves the other instances; the rule's own waives all ----
printf '[waive]\nnic.queues[eth1] = another NIC\n' >"$CONF"
run --format json audit
expect_eq "nic.queues[eth1] does not waive eth0" "null 1" \
	"$(jget "$TMP/out" '"\(.findings[] | select(.rule == "nic.queues") | .waived) \(.summary.warning - 1)"')"
# ... and the VM has no eth1 (its nic.list is eth0): a typo, said on stderr.
expect_eq "an interface the host does not have: a warning" \
	"hosttune: warning: $CONF:2:1: waiver for 'nic.queues[eth1]': this host has no interface eth1 (nic.list: eth0)" \
	"$err"
# An instance for a rule with one finding waives nothing: a warning too.
printf '[waive]\ncpu.aes[eth0] = misplaced\n' >"$CONF"
run audit
expect_eq "an instance of a rule without instances: a warning, cpu.aes not waived" \
	"1 hosttune: warning: $CONF:2:1: waiver for 'cpu.aes[eth0]': that rule gives one finding, not one per instance: waive it as 'cpu.aes'" \
	"$rc $err"
printf '[waive]\nnic.queues = every NIC of this VM has one queue\n' >"$CONF"
run --format json audit
expect_eq "nic.queues (no instance) waives eth0" "every NIC of this VM has one queue" \
	"$(jget "$TMP/out" '.findings[] | select(.rule == "nic.queues") | .waived')"

# ---- README's example configuration, as printed there ----
# Its NIC waiver is for a virtual NIC the hypervisor gives one queue: the
# registry VM's facts with eth0 allowing 1 combined channel (not 8). There
# nic.queues wants min(8 CPUs, 1 allowed) = 1 queue and has it (ok), and the
# warning is nic.queues_hypervisor[eth0].
sed -e 's/^nic\.eth0\.channels\.max\.combined = 8 /nic.eth0.channels.max.combined = 1 /' \
	"$REG" >"$TMP/one-queue.facts"
sed -n '/^```ini$/,/^```$/p' "$HT_TESTS_DIR/../README.md" | sed '1d;$d' >"$CONF"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --config "$CONF" --facts "$TMP/one-queue.facts" audit \
	>"$TMP/out" 2>"$TMP/err"
rc=$? out=$(cat "$TMP/out") err=$(cat "$TMP/err")
# Its two waivers are this VM's two warnings: 0 left, exit 0 (fail-on warning);
# nic.queues[eth0], a warning on the 8-queue facts above, is the 1 ok.
expect_eq "README's configuration: both warnings waived" \
	"0 0 critical, 0 warning, 0 info, 1 ok, 19 not applicable, 2 waived|" \
	"$rc $(printf '%s\n' "$out" | tail -n 1)|$err"

# ---- a drop-in takes a waiver back (an empty reason), below --root ----
: "${HT_SYSCONFDIR:=$("$HOSTTUNE" --help | sed -n 's|.* \(/.*\)/hosttune/hosttune.conf and its drop-ins|\1|p')}"
G=$TMP/g
cp -a "$FIXTURES/garage-vm/root" "$G"
ETC=$G$HT_SYSCONFDIR/hosttune
mkdir -p "$ETC/hosttune.conf.d"
cat >"$ETC/hosttune.conf" <<'EOF'
[hosttune]
profile = garage
[waive]
garage.metadata_snapshots[metadata] = ZFS snapshots the metadata directory
conntrack.time_wait = the load balancer keeps its connections 120 s
EOF
garage() {
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$G" --no-measure "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	out=$(cat "$TMP/out")
}
garage audit
# garage-vm with --profile garage: 2 critical, 3 warning, 2 info (config.sh);
# waived: conntrack.time_wait (a warning) and garage.metadata_snapshots[metadata] (info).
expect_eq "Garage VM: a directory's finding and a host rule waived" \
	"1 2 critical, 2 warning, 1 info, 4 ok, 10 not applicable, 2 waived" \
	"$rc $(printf '%s\n' "$out" | tail -n 1)"
expect_eq "its row" "garage.metadata_snapshots[metadata] none 6h info (waived)" \
	"$(printf '%s\n' "$out" | grep '^garage.metadata_snapshots' | tr -s ' ')"
# The problems first: critical, warning, info not waived, then the waived, then ok.
expect_eq "the table's order: the waived after the problems, before ok" \
	"critical critical warning warning info warning(waived) info(waived) ok ok ok ok" \
	"$(printf '%s\n' "$out" | sed -n '/^RULE /,/^$/p' | sed '1d;/^$/d' | grep -v ' n/a$' |
		sed 's/ (waived)$/(waived)/' | awk '{ print $NF }' | tr '\n' ' ' | sed 's/ $//')"
# Only audit reads waivers: plan and apply still change what a waiver accepts.
garage plan
expect_contains "plan still sets the waived TIME_WAIT (a waiver changes the report, not apply)" \
	"net.netfilter.nf_conntrack_tcp_timeout_time_wait" "$out"
printf '[waive]\nconntrack.time_wait =\n' >"$ETC/hosttune.conf.d/50-local.conf"
garage audit
expect_eq "a drop-in's empty assignment takes the time_wait waiver back" \
	"1 2 critical, 3 warning, 1 info, 4 ok, 10 not applicable, 1 waived" \
	"$rc $(printf '%s\n' "$out" | tail -n 1)"

# ---- rules.d below --root: a /dev/null link masks a rules file ----
# Without the installed rules (make check's case: no $(pkgdatadir)/rules yet)
# the tree's rules.d is the whole search path: a copy of the shipped rules
# with nic.rules masked. (The override of a shipped rule by id from a later
# directory is tests/test-rules.c's test_site_override.)
E=$TMP/empty
mkdir -p "$E"
if "$HOSTTUNE" --no-config --root "$E" rules 2>&1 | grep -q 'no \*.rules file found'; then
	# tree ARGS...: hosttune on the tree with its own rules.d (no --rules)
	tree() {
		"$HOSTTUNE" --root "$G" "$@" >"$TMP/out" 2>"$TMP/err"
		rc=$?
		out=$(cat "$TMP/out")
	}
	RD=$G$HT_SYSCONFDIR/hosttune/rules.d
	mkdir -p "$RD"
	cp -R "$HT_RULES_DIR"/. "$RD"
	tree rules
	# The ids nic.rules defines ([section] lines): none of them may be left.
	sed -n 's/^\[\([a-z0-9_.]*\)\]$/\1/p' "$HT_RULES_DIR/nic.rules" | sort >"$TMP/nic.ids"
	n_all=$(printf '%s\n' "$out" | awk '{print $1}' | sort | comm -12 - "$TMP/nic.ids" | wc -l)
	rm "$RD/nic.rules"
	ln -s /dev/null "$RD/nic.rules"
	tree rules
	expect_eq "nic.rules -> /dev/null: read as masked, its $n_all rules gone" "0 0" \
		"$rc $(printf '%s\n' "$out" | awk '{print $1}' | sort | comm -12 - "$TMP/nic.ids" | wc -l)"
	tree --no-measure --format json audit
	expect_eq "the audit runs without them" "0" \
		"$(jq -r '.findings[].rule' "$TMP/out" | sort | comm -12 - "$TMP/nic.ids" | wc -l)"
	# One id twice in one directory stays an error.
	printf '[conntrack.max]\nvalue = 1\n' >"$RD/zz-site.rules"
	tree rules
	expect_contains "a duplicate id inside rules.d: exit 2, both places named" \
		"2 hosttune: $RD/zz-site.rules:1:2: duplicate rule id 'conntrack.max' (first at $RD/conntrack.rules:" \
		"$rc $(cat "$TMP/err")"
else
	echo "# the rules are installed on this host: the rules.d mask below --root is not tested"
fi

# ---- a waiver that matches only ok rows: it waives nothing, and says so ----
# A VM whose virtual NIC offers one queue: nic.queues wants min(8 CPUs, 1
# allowed) = 1 queue and has 1 (ok); the warning is nic.queues_hypervisor.
# The README's earlier example waived nic.queues[eth0] here: exit 1 all the same.
# one_queue: audit the one-queue VM's facts with $CONF; $rc, stdout and stderr in $TMP/out, err
one_queue() {
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --config "$CONF" --facts "$TMP/one-queue.facts" audit \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
}
printf '[waive]\nnic.queues[eth0] = the hypervisor gives this NIC one queue\n' >"$CONF"
one_queue
expect_eq "a waiver of the ok row: still exit 1, the warning not waived" \
	"1 nic.queues_hypervisor[eth0] 1 queue 8 queues warning|nic.queues[eth0] 1 queue 1 queue ok (waived)" \
	"$rc $(grep '^nic.queues' "$TMP/out" | tr -s ' ' | paste -sd'|' -)"
expect_eq "and a warning line naming the row that is not ok" \
	"hosttune: warning: $CONF:2:1: waiver for 'nic.queues[eth0]': it matches only ok findings and waives nothing; the finding at warning here is nic.queues_hypervisor[eth0]" \
	"$(cat "$TMP/err")"
printf '[waive]\nnic.queues_hypervisor[eth0] = the hypervisor gives this NIC one queue\n' >"$CONF"
one_queue
# Two warnings (cpu.aes, nic.queues_hypervisor) - 1 waived = 1: exit 1 for cpu.aes.
expect_eq "the shipped example's row: waived, no warning line" \
	"1 nic.queues_hypervisor[eth0] 1 queue 8 queues warning (waived)|" \
	"$rc $(grep '^nic.queues_hypervisor' "$TMP/out" | tr -s ' ')|$(cat "$TMP/err")"

finish
