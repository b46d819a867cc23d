#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The verdict is one story, on every host: a property test over this host,
# every fixture tree (tests/fixtures/*/root), every field host given as a facts
# file (tests/fixtures/verdict/*.facts), every shipped profile and a few
# workloads (the profile's own, 1, 800 and 5000 new connections/s). For each
# applicable finding of `audit --format json`:
#
#   P1 no text a user reads holds a placeholder: "(unavailable)", a brace,
#      a blank before a full stop, comma or colon that ends a word (" ." of
#      ".link" is fine), or two blanks in a row;
#   P2 warning or critical says what fixes it: a fix (file line), a remedy
#      (the owner's knob, the hypervisor), or a lever that names a finding of
#      the same report which itself has a fix or a remedy;
#   P3 ok has nothing to do: no fix, remedy or lever;
#   P4 a fix changes something: recommended differs from current, and a
#      kept finding (the host has more) offers no fix;
#   P5 a table at its cap (values conntrack.pinned) makes conntrack.max
#      critical, one at 90% or more (conntrack.near_cap) at least a warning,
#      whoever sized it;
#   P6 a value kube-proxy owns (conntrack.owned) gets no sysctl.d fix, a
#      remedy naming kube-proxy's knob, and a text that names kube-proxy;
#   P7 the exit status is 1 exactly when a finding is at warning or above
#      (the default --fail-on), else 0;
#   P8 a limit (hosttune.rules(5) LIMITS) at warning or above says where it
#      is set; a holder of more than half of it is named in the text, and a
#      stray one gets no fix line and a remedy at the holder.
# The field hosts' exact figures are asserted below the property loop.
. "$(dirname "$0")/lib.sh"

# This host too (read only: audit changes nothing).
hosts="live:"
for d in "$FIXTURES"/*/root; do hosts="$hosts root:$d"; done
for f in "$FIXTURES"/verdict/*.facts; do hosts="$hosts facts:$f"; done
profiles=$(cd "$HT_RULES_DIR/profiles" && ls ./*.profile | sed 's|^\./||; s|\.profile$||')
# The rates each host and profile is audited at; on an AddressSanitizer
# build (the distcheck run, several times slower, looking for memory errors
# on the same code paths) the profile's own and the highest only.
if grep -aq __asan_init "$HOSTTUNE" 2>/dev/null; then
	rates=${VERDICT_RATES:-" workload.conn_rate=5000"}
else
	rates=${VERDICT_RATES:-" workload.conn_rate=1 workload.conn_rate=800 workload.conn_rate=5000"}
fi

# The checks (tests/verdict.jq): one line per violation.
VERDICT_JQ=$(cat "$HT_TESTS_DIR/verdict.jq")

nruns=0
for h in $hosts; do
	case "$h" in
	live:) src=""; name="this host" ;;
	root:*) src="--root ${h#root:}"; name=${h#root:}; name=${name%/root}; name=${name##*/} ;;
	facts:*) src="--facts ${h#facts:}"; name=${h##*/} ;;
	esac
	for p in $profiles; do
		# shellcheck disable=SC2086 # the rates, one word each, the first empty
		for set in "" $rates; do
			what="$name, profile $p${set:+, --set $set}"
			# shellcheck disable=SC2086
			ht $src --no-measure --profile "$p" ${set:+--set "$set"} --format json audit \
				>"$TMP/r.json" 2>"$TMP/r.err"
			rc=$?
			# Trees that are not a host's (the reader fixtures: no RAM, no kernel).
			if [ "$rc" -eq 3 ] && grep -q "not a host's tree" "$TMP/r.err"; then
				continue
			fi
			nruns=$((nruns + 1))
			# One jq run: whether it is a report, its worst severity, then
			# the lines of tests/verdict.jq (its errors in $TMP/v.err).
			jq -r "(has(\"findings\") | tostring), (.summary.worst | tostring), ($VERDICT_JQ)" \
				"$TMP/r.json" >"$TMP/j" 2>"$TMP/v.err"
			{ read -r report; read -r worst; cat; } <"$TMP/j" >"$TMP/v"
			if [ "$rc" -gt 1 ] || [ "$report" != true ]; then
				not_ok "$what: audit printed a report" "exit $rc" "$(head -c 300 "$TMP/r.err")"
				continue
			fi
			cat "$TMP/v.err" >>"$TMP/v"
			if [ -s "$TMP/v" ]; then
				not_ok "$what: one story" "$(head -n 5 "$TMP/v")"
			else
				ok "$what: one story"
			fi
			case "$worst" in warning | critical) want=1 ;; *) want=0 ;; esac
			expect_eq "$what: exit status for worst=$worst" "$want" "$rc"
		done
	done
done
[ "$nruns" -ge 100 ] && ok "the property ran over $nruns host/profile/workload runs" ||
	not_ok "the property ran over enough runs" "only $nruns"

# ---- the field hosts, figure by figure ----
j() { jq -r "$1" "$TMP/f.json"; }
aud() { ht --no-measure "$@" --format json audit >"$TMP/f.json" 2>"$TMP/f.err"; }

# 1. A full kube-proxy table on a 24-CPU 3.10 node, 64 GiB: 786432 of 786432.
# kube-proxy's max(32768 x 24, 131072) = 786432, hashsize 786432 / 4 = 196608.
# Full, so demand >= 786432: need max(786433, 786432 x burst 2 = 1572864) =
# 1572864 -> pow2ceil 2097152; the budget 68719476736 x 0.05 / (320 + 8) =
# 10475860 -> 2^23 = 8388608 does not cap it. kube-proxy owns the value: no
# sysctl.d line, its knob instead: 2097152 / 24 = 87381.33 ->
# --conntrack-max-per-core=87382, and above kube-proxy 1.36's cap of 1048576.
aud --facts "$FIXTURES/verdict/kube-full-310.facts"
expect_eq "kube full: conntrack.max critical" critical \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .severity')"
expect_eq "kube full: recommended 2097152" 2097152 \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .recommended')"
expect_eq "kube full: no sysctl.d fix for kube-proxy's value" null \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .fix')"
expect_contains "kube full: remedy gives the per-core figure" "--conntrack-max-per-core=87382" \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .remedy')"
expect_contains "kube full: attributed to kube-proxy" "Where it is set: most likely kube-proxy" \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .explanation')"
ht --no-measure --facts "$FIXTURES/verdict/kube-full-310.facts" plan >"$TMP/plan" 2>&1
if grep -q 'nf_conntrack_max' "$TMP/plan"; then
	not_ok "kube full: plan writes no nf_conntrack_max line" "$(grep nf_conntrack_max "$TMP/plan")"
else
	ok "kube full: plan writes no nf_conntrack_max line"
fi

# 2. A 10-CPU node on 5.15 with kube-proxy's 327680 = max(32768 x 10, 131072)
# and the kernel's own 262144 buckets (>= 327680 / 4 = 81920: kube-proxy left
# hashsize alone): kube-proxy's, not "a write to the sysctl".
aud --facts "$FIXTURES/verdict/kube-10cpu-515.facts"
expect_eq "kube 10 CPUs: owned" true "$(j '.values["conntrack.owned"]')"
expect_contains "kube 10 CPUs: attributed to kube-proxy" "Where it is set: most likely kube-proxy" \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .explanation')"

# 1. 4092 of 4096 (99.9%) with no drop yet: 4092 x 10 = 40920 >= 4096 x 9 =
# 36864, so at least a warning, even with a workload the table admits
# (1/s x burst 2 = 2/s against a ceiling of 4096 / 120 = 34/s).
aud --facts "$FIXTURES/verdict/near-full.facts" --set workload.conn_rate=1
expect_eq "99.9% full: conntrack.max warning" warning \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .severity')"
# ... and a fix with headroom: 4092 x burst 2 = 8184 -> 8192, no budget remedy
# (the budget allows 503316480 x 0.05 / 328 = 76725 -> 65536).
expect_eq "99.9% full: fix raises to 8192" "net.netfilter.nf_conntrack_max = 8192" \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .fix.line')"
expect_eq "99.9% full: no remedy" null \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .remedy')"

# 4092 of 4096 with no drop counted (near-full.facts): near the cap, but
# no claim that drops happen.
aud --facts "$FIXTURES/verdict/near-full.facts"
expect_contains "near the cap, 0 drops: says none counted yet" "in all 0 events of a full table." \
	"$(j '.findings[] | select(.rule == "conntrack.drops") | .explanation' | tr '\n' ' ' | tr -s ' ')"

# The drop counters over --sample's interval. old-drops.facts counted 1 drop
# and 1 early drop since boot, 1 of 4096 entries in use now. Read twice 5 s
# apart with nothing dropped in between: 0 + 0 = 0 events in the interval,
# ok, and the text still gives the since-boot figures (since boot the same
# host is a warning: 1 + 1 = 2 events, the table not near its cap).
aud --facts "$FIXTURES/verdict/old-drops.facts"
expect_eq "old drops since boot: conntrack.drops warning, 2 events" "warning 2" \
	"$(j '.findings[] | select(.rule == "conntrack.drops") | "\(.severity) \(.current)"')"
{ cat "$FIXTURES/verdict/old-drops.facts"
  echo 'conntrack.stat.drop.delta = 0 packets from test, over --sample'"'"'s 5 s'
  echo 'conntrack.stat.early_drop.delta = 0 entries from test, over --sample'"'"'s 5 s'
  echo 'sample.seconds = 5.01 seconds from --sample 5s'
} >"$TMP/old-drops-sampled.facts"
aud --facts "$TMP/old-drops-sampled.facts"
expect_eq "old drops, sampled quiet: conntrack.drops ok, 0 events" "ok 0" \
	"$(j '.findings[] | select(.rule == "conntrack.drops") | "\(.severity) \(.current)"')"
expect_contains "old drops, sampled quiet: the interval and the since-boot counts" \
	"In the last 5 s (the counters read twice, --sample's interval apart; since boot: 1 and 1), conntrack dropped 0 packets for want of an entry and evicted 0 entries early to make room" \
	"$(j '.findings[] | select(.rule == "conntrack.drops") | .explanation' | tr '\n' ' ' | tr -s ' ')"
expect_eq "sampled facts: the text audit's first line says what the counters cover" \
	"hosttune audit of facts file $TMP/old-drops-sampled.facts, counters over a 5.01 s sample, profile default" \
	"$(ht --no-measure --facts "$TMP/old-drops-sampled.facts" audit 2>/dev/null | head -n 1)"
# The table near its cap (4092 of 4096: 4092 x 10 = 40920 >= 4096 x 9 = 36864)
# with 30 drops and 2 early drops in the interval: 30 + 2 = 32 events, critical.
# Since boot at least as many (a rise cannot exceed its counter): 31 and 3.
sed -e 's/^conntrack.stat.count = 1 /conntrack.stat.count = 4092 /' \
	-e 's/^conntrack.stat.drop = 1 /conntrack.stat.drop = 31 /' \
	-e 's/^conntrack.stat.early_drop = 1 /conntrack.stat.early_drop = 3 /' \
	-e 's/^net.netfilter.nf_conntrack_count = 1 /net.netfilter.nf_conntrack_count = 4092 /' \
	"$FIXTURES/verdict/old-drops.facts" >"$TMP/drops-now.facts"
{ echo 'conntrack.stat.drop.delta = 30 packets from test'
  echo 'conntrack.stat.early_drop.delta = 2 entries from test'
  echo 'sample.seconds = 5.01 seconds from --sample 5s'
} >>"$TMP/drops-now.facts"
aud --facts "$TMP/drops-now.facts"
expect_eq "drops in the interval at the cap: conntrack.drops critical, 32 events" "critical 32" \
	"$(j '.findings[] | select(.rule == "conntrack.drops") | "\(.severity) \(.current)"')"
expect_contains "drops in the interval: the text counts them" \
	"In the last 5 s (the counters read twice, --sample's interval apart; since boot: 31 and 3), conntrack dropped 30 packets for want of an entry and evicted 2 entries early" \
	"$(j '.findings[] | select(.rule == "conntrack.drops") | .explanation' | tr '\n' ' ' | tr -s ' ')"

# 1. The Garage VM, full (4096 of 4096), with a workload of 1 connection/s:
# the working set 1 x 30 x 3 = 90 says nothing; the full table says demand
# >= 4096: need max(4097, 4096 x burst 3 = 12288) -> 16384, within the
# budget of 65536.
aud --root "$FIXTURES/garage-vm/root" --profile garage --set workload.conn_rate=1
expect_eq "garage full, 1/s: critical" critical \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .severity')"
expect_eq "garage full, 1/s: fix raises to 16384" "net.netfilter.nf_conntrack_max = 16384" \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .fix.line')"

# 8. 262144 entries, TIME_WAIT 120, garage at 800/s: ceiling 262144 / 120 =
# 2184 < 800 x 3 = 2400, a warning; the working set 800 x 30 x 3 = 72000 ->
# 131072 is below the kernel's 262144, so the table needs no more entries:
# at TIME_WAIT 30 it admits 262144 / 30 = 8738/s. The lever is TIME_WAIT.
aud --facts "$FIXTURES/verdict/big-515.facts" --profile garage --set workload.conn_rate=800
expect_eq "262144 at 800/s: warning" warning \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .severity')"
expect_eq "262144 at 800/s: lever" conntrack.time_wait \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .lever')"
expect_contains "262144 at 800/s: says the table is large enough" "262144 / 30 s = 8738 new" \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .explanation')"
# ... and TIME_WAIT, the lever, is a warning: the ceiling 2184 < 2400.
expect_eq "262144 at 800/s: TIME_WAIT warning, 120 -> 30" "warning 120 30" \
	"$(j '.findings[] | select(.rule == "conntrack.time_wait") | "\(.severity) \(.current) \(.recommended)"')"
# At 100/s (peak 100 x 3 = 300 < 2184), 1000 of 262144 entries (1000 x 10 <
# 262144 x 9), no drops: nothing shows the table short, so the profile's
# shorter TIME_WAIT is info (its fix still offered), not a warning.
aud --facts "$FIXTURES/verdict/big-515.facts" --profile garage --set workload.conn_rate=100
expect_eq "262144 at 100/s: conntrack.max ok" ok \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .severity')"
expect_eq "262144 at 100/s: TIME_WAIT info, 120 -> 30, with its fix" \
	"info 120 30 net.netfilter.nf_conntrack_tcp_timeout_time_wait = 30" \
	"$(j '.findings[] | select(.rule == "conntrack.time_wait") | "\(.severity) \(.current) \(.recommended) \(.fix.line)"')"
expect_contains "262144 at 100/s: TIME_WAIT says why it is only info" \
	"Nothing shows the table short (1000 of 262144 entries now, no event of a full table, a ceiling of 2184 new connections/s, at least the peak of 300 to plan for)" \
	"$(j '.findings[] | select(.rule == "conntrack.time_wait") | .explanation' | tr '\n' ' ' | tr -s ' ')"
# The same table with 2 drops since boot (0 -> 2): the table was full once,
# TIME_WAIT is a warning again and says so.
vary "$FIXTURES/verdict/big-515.facts" "$TMP/big-drops.facts" \
	"conntrack.stat.drop=2 packets from /proc/net/stat/nf_conntrack"
aud --facts "$TMP/big-drops.facts" --profile garage --set workload.conn_rate=100
expect_eq "262144 at 100/s with drops: TIME_WAIT warning" warning \
	"$(j '.findings[] | select(.rule == "conntrack.time_wait") | .severity')"
expect_contains "262144 at 100/s with drops: the evidence" \
	"The table is short: it was full, by the drops it counted (2 events of a full table counted by conntrack.drops, 1000 entries now)" \
	"$(j '.findings[] | select(.rule == "conntrack.time_wait") | .explanation' | tr '\n' ' ' | tr -s ' ')"

# 3. First boot: nf_conntrack in modules.dep, not loaded. 503316480 / 16384 /
# 8 = 3840 -> 4096 buckets, max 4096, TIME_WAIT 120: 4096 / 120 = 34/s.
# Against the garage profile's own rate, 34/s is advice for the load to
# come (info, nothing here shows the rate); against a rate the admin gives
# (the README's pre-flight, --set workload.conn_rate=570), 34 < 570: critical.
aud --root "$FIXTURES/first-boot/root" --profile garage
expect_eq "first boot, the profile's rate: conntrack.max advice" "4096 info planned" \
	"$(j '.findings[] | select(.rule == "conntrack.max") | "\(.current) \(.severity) \(.case)"')"
aud --root "$FIXTURES/first-boot/root" --profile garage --set workload.conn_rate=570
expect_eq "first boot, the rate stated: conntrack.max judged" "4096 critical slow" \
	"$(j '.findings[] | select(.rule == "conntrack.max") | "\(.current) \(.severity) \(.case)"')"
expect_contains "first boot: says the module is not loaded yet" "nf_conntrack is not loaded yet" \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .explanation')"
expect_contains "first boot: ceiling of the table it will load with" "4096 / 120 s = 34 new" \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .explanation')"
expect_eq "first boot: no live write offered" null \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .fix.live')"
cp -a "$FIXTURES/first-boot/root" "$TMP/fb"
ht --no-measure --root "$TMP/fb" --profile garage apply >"$TMP/apply" 2>&1
expect_eq "first boot: apply exits 0" 0 $?
expect_contains "first boot: apply writes modules-load.d" \
	"created /etc/modules-load.d/hosttune.conf" "$(cat "$TMP/apply")"
expect_eq "first boot: sysctl.d has the max" "net.netfilter.nf_conntrack_max = 32768" \
	"$(grep '^net.netfilter.nf_conntrack_max' "$TMP/fb/etc/sysctl.d/90-hosttune.conf")"
ht --no-measure --root "$TMP/fb" --profile garage verify >"$TMP/verify" 2>&1
expect_eq "first boot: verify after apply exits 0" 0 $?
expect_contains "first boot: verify says it holds at boot" \
	"net.netfilter.nf_conntrack_max = 32768 at boot" "$(cat "$TMP/verify")"
# After apply the boot gives nf_conntrack hashsize 32768 (modprobe.d), then
# max 32768 and TIME_WAIT 30 (sysctl.d): nothing of the kernel is left to
# fix. Garage's pre-flight still says what only garage.toml can change (its
# 256 MiB default buffer on 480 MiB of RAM): exit 1 for that one alone.
ht --no-measure --root "$TMP/fb" --profile garage --format json audit >"$TMP/f.json"
expect_eq "first boot: audit after apply exits 1" 1 $?
expect_eq "first boot: after apply, only garage.toml's buffer at warning or above" "garage.ram_buffer" \
	"$(j '[.findings[] | select(.severity == "warning" or .severity == "critical") | .rule] | join(" ")')"
expect_eq "first boot: after apply, the table the boot gives" "32768 30 32768" \
	"$(j '[.findings[] | select(.rule == "conntrack.max" or .rule == "conntrack.time_wait" or .rule == "conntrack.buckets")] | sort_by(.rule) | "\(.[1].current) \(.[2].current) \(.[0].current)"')"

# 4. A later sysctl.d file gives nf_conntrack_max 8192 at boot, below the
# 32768 hosttune writes (the garage profile's 200/s x 30 s x 3 = 18000 ->
# 32768): at least a warning, and the remedy names that line.
cp -a "$FIXTURES/garage-vm/root" "$TMP/late"
ht --no-measure --root "$TMP/late" --profile garage apply >/dev/null 2>&1
printf 'net.netfilter.nf_conntrack_max = 8192\n' >"$TMP/late/etc/sysctl.d/99-local.conf"
aud --root "$TMP/late" --profile garage
expect_eq "later file: conntrack.max warning" warning \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .severity')"
expect_contains "later file: the remedy names the line" "edit or remove /etc/sysctl.d/99-local.conf:1" \
	"$(j '.findings[] | select(.rule == "conntrack.max") | .remedy')"

# 5. A Proxmox guest with kvm64 (tests/fixtures/verdict/proxmox-kvm64.facts):
# no aes in the guest, AES-GCM measured at 212 / 1380 = 0.15 of ChaCha20:
# a warning whose remedy is the VM's CPU type. The same CPU on bare metal
# (cpu.virt none): info, the firmware or nothing, no remedy.
ht --facts "$FIXTURES/verdict/proxmox-kvm64.facts" --format json audit >"$TMP/f.json" 2>"$TMP/f.err"
expect_eq "kvm64 guest: cpu.aes warning" warning "$(j '.findings[] | select(.rule == "cpu.aes") | .severity')"
expect_contains "kvm64 guest: the remedy is the VM's CPU type" "in Proxmox host, or x86-64-v2-AES" \
	"$(j '.findings[] | select(.rule == "cpu.aes") | .remedy' | tr '\n' ' ')"
vary "$FIXTURES/verdict/proxmox-kvm64.facts" "$TMP/bare.facts" 'cpu.virt="none"'
ht --facts "$TMP/bare.facts" --format json audit >"$TMP/f.json" 2>"$TMP/f.err"
expect_eq "bare metal without aes: info, no remedy" "info|null" \
	"$(j '.findings[] | select(.rule == "cpu.aes") | "\(.severity)|\(.remedy)"')"
expect_contains "bare metal without aes: the firmware or nothing" "the only fix is the firmware" \
	"$(j '.findings[] | select(.rule == "cpu.aes") | .explanation' | tr '\n' ' ')"

# 6. A registry VM (tests/fixtures/verdict/registry-oom.facts): 7 OOM kills
# since boot, no swap, 2.3% full stall: a warning resting on the kills, the
# remedy adds swap; the conntrack table's 8192 x (320 + 8) = 2686976 bytes
# (2.6 MiB) is counted in the same budget, 0.3% of 967.3 MiB. The same host
# with 2 GiB of swap: still a warning (the kills happened), no word of adding
# swap. No kill and no stall: ok.
ht --facts "$FIXTURES/verdict/registry-oom.facts" --format json audit >"$TMP/f.json" 2>"$TMP/f.err"
expect_eq "registry OOM: mem.pressure warning, 7 kills" "warning|7|OOM kills" \
	"$(j '.findings[] | select(.rule == "mem.pressure") | "\(.severity)|\(.current)|\(.unit)"')"
expect_contains "registry OOM: the remedy adds swap" "add swap on disk, a swap file" \
	"$(j '.findings[] | select(.rule == "mem.pressure") | .remedy' | tr '\n' ' ')"
expect_contains "registry OOM: the conntrack table in the budget" \
	"the conntrack table at its max of 8192 entries takes up to 2.6 MiB" \
	"$(j '.findings[] | select(.rule == "mem.pressure") | .explanation' | tr '\n' ' ' | sed 's/  */ /g')"
vary "$FIXTURES/verdict/registry-oom.facts" "$TMP/swap.facts" "mem.swap_total=2147483648 bytes"
ht --facts "$TMP/swap.facts" --format json audit >"$TMP/f.json" 2>"$TMP/f.err"
r=$(j '.findings[] | select(.rule == "mem.pressure") | "\(.severity)|\(.remedy)"')
case $r in warning*"add swap"*) not_ok "with swap: no advice to add swap" "$r" ;;
warning*) ok "with swap: still a warning, no advice to add swap" ;;
*) not_ok "with swap: still a warning" "$r" ;; esac
vary "$FIXTURES/verdict/registry-oom.facts" "$TMP/calm.facts" "mem.oom_kills=0 processes" \
	"mem.psi.full_avg60=0.0 %"
ht --facts "$TMP/calm.facts" --format json audit >"$TMP/f.json" 2>"$TMP/f.err"
expect_eq "no kill, no stall: ok" "ok|null" \
	"$(j '.findings[] | select(.rule == "mem.pressure") | "\(.severity)|\(.remedy)"')"

# vm.min_free_kbytes against RAM, with the kills as evidence. The kernel's
# own figure: isqrt(16 x MemTotal in KiB) = isqrt(16 x 990528) = 3981 KiB
# (3981^2 = 15848361 <= 15848448 < 3982^2), inside 128..262144 on 5.15.
# Raised to 67584 KiB (THP or a sysctl): 67584 x 1024 = 69206016 bytes =
# 66 MiB, 6.8% of 1014300672, 67584 - 3981 = 63603 KiB above the kernel's
# figure; the remedy points back to 3981.
vary "$FIXTURES/verdict/registry-oom.facts" "$TMP/mf.facts" "vm.min_free_kbytes=67584"
ht --facts "$TMP/mf.facts" --format json audit >"$TMP/f.json" 2>"$TMP/f.err"
t=$(j '.findings[] | select(.rule == "mem.pressure") | .explanation' | tr '\n' ' ' | sed 's/  */ /g')
expect_contains "min_free_kbytes raised: what it reserves" \
	"vm.min_free_kbytes keeps 67584 KiB (66 MiB) free for the kernel's own allocations" "$t"
expect_contains "min_free_kbytes raised: share of RAM" "6.8% of RAM" "$t"
expect_contains "min_free_kbytes raised: the kernel's figure" "The kernel's own figure for this RAM is at most 3981 KiB" "$t"
expect_contains "min_free_kbytes raised: said so" "what is above it (63603 KiB here)" "$t"
expect_contains "min_free_kbytes raised: the remedy" "bring vm.min_free_kbytes back towards the kernel's 3981 KiB" \
	"$(j '.findings[] | select(.rule == "mem.pressure") | .remedy' | tr '\n' ' ' | sed 's/  */ /g')"
# At the kernel's own 3981: its reserve, not the cause; no remedy for it.
vary "$FIXTURES/verdict/registry-oom.facts" "$TMP/mf.facts" "vm.min_free_kbytes=3981"
ht --facts "$TMP/mf.facts" --format json audit >"$TMP/f.json" 2>"$TMP/f.err"
expect_contains "min_free_kbytes default: the kernel's own reserve" "what is above it (0 KiB here)" \
	"$(j '.findings[] | select(.rule == "mem.pressure") | .explanation' | tr '\n' ' ' | sed 's/  */ /g')"
case $(j '.findings[] | select(.rule == "mem.pressure") | .remedy') in *min_free_kbytes*)
	not_ok "min_free_kbytes default: no remedy for it" ;;
*) ok "min_free_kbytes default: no remedy for it" ;; esac
# 1 TiB: isqrt(16 x 1073741824) = 131072 KiB; 5.15 clamps at 262144 (131072
# stays), 4.19 at 65536.
vary "$FIXTURES/verdict/registry-oom.facts" "$TMP/mf.facts" "vm.min_free_kbytes=131072" \
	"mem.total=1099511627776 bytes"
ht --facts "$TMP/mf.facts" --format json audit >"$TMP/f.json" 2>"$TMP/f.err"
expect_contains "1 TiB on 5.15: 131072 KiB" "at most 131072 KiB" \
	"$(j '.findings[] | select(.rule == "mem.pressure") | .explanation' | tr '\n' ' ' | sed 's/  */ /g')"
vary "$FIXTURES/verdict/registry-oom.facts" "$TMP/mf.facts" "vm.min_free_kbytes=131072" \
	"mem.total=1099511627776 bytes" "kernel.version=v4.19.0"
ht --facts "$TMP/mf.facts" --format json audit >"$TMP/f.json" 2>"$TMP/f.err"
expect_contains "1 TiB on 4.19: clamped at 65536 KiB" "at most 65536 KiB" \
	"$(j '.findings[] | select(.rule == "mem.pressure") | .explanation' | tr '\n' ' ' | sed 's/  */ /g')"
# 512 MiB of swap, all of it /dev/zram0: compressed RAM, not a disk; the
# remedy is swap on disk, as on a host without swap, never more zram.
vary "$FIXTURES/verdict/registry-oom.facts" "$TMP/z.facts" "mem.swap_total=536870912 bytes" \
	"mem.swap_zram=536870912 bytes"
ht --facts "$TMP/z.facts" --format json audit >"$TMP/f.json" 2>"$TMP/f.err"
t=$(j '.findings[] | select(.rule == "mem.pressure") | .explanation' | tr '\n' ' ' | sed 's/  */ /g')
expect_contains "zram swap: named" "swap: 512 MiB, of which 512 MiB on zram" "$t"
expect_contains "zram swap: not a disk" "of which 512 MiB on zram: pages swapped out to it are compressed into RAM, not written to a disk" "$t"
expect_contains "zram swap: the remedy" "add swap on disk, a swap file (zram alone only compresses" \
	"$(j '.findings[] | select(.rule == "mem.pressure") | .remedy' | tr '\n' ' ' | sed 's/  */ /g')"

# The collector: /proc/swaps with /dev/zram0 (524288 KiB) and a swap file
# (1048576 KiB): zram is 524288 x 1024 = 536870912 bytes; /dev/zram10 counts
# too, /dev/zramx (not a zram device) does not.
rm -rf "$TMP/zr" && cp -a "$FIXTURES/garage-vm/root" "$TMP/zr"
printf 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/zram0                              partition\t524288\t\t0\t\t100\n/swapfile                               file\t\t1048576\t\t0\t\t-2\n/dev/zram10 partition 1024 0 100\n/dev/zramx partition 2048 0 100\n' \
	>"$TMP/zr/proc/swaps"
ht --root "$TMP/zr" facts >"$TMP/zr.facts" 2>/dev/null
# 524288 + 1024 KiB = 525312 KiB = 537919488 bytes.
expect_contains "/proc/swaps: zram counted" "mem.swap_zram = 537919488 bytes from /proc/swaps /dev/zram*" \
	"$(cat "$TMP/zr.facts")"

# 7. A MinIO host: --profile minio judges the minio process against MinIO's
# own LimitNOFILE=1048576 and runs no Garage pre-flight (no garage.* rule).
aud --root "$FIXTURES/garage-vm/root" --profile minio
expect_eq "minio profile: no Garage pre-flight" "" \
	"$(j '.findings[] | select(.rule | startswith("garage.")) | .rule' | sort -u)"
expect_eq "minio profile: workload.nofile 1048576, service minio" "1048576 minio" \
	"$(j '"\(.workload["workload.nofile"]) \(.workload["workload.service"])"')"

# 3. No nf_conntrack at all: modules.dep without it, not built in.
mkdir -p "$TMP/nocont"
cp -a "$FIXTURES/first-boot/root/." "$TMP/nocont/"
rel=5.15.0-91-generic
mv "$TMP/nocont/lib/modules/$rel/kernel/net/netfilter/nf_conntrack.ko" \
	"$TMP/nocont/lib/modules/$rel/kernel/net/netfilter/nf_tables.ko"
if command -v depmod >/dev/null 2>&1 && depmod -b "$TMP/nocont" "$rel" 2>/dev/null; then
	aud --root "$TMP/nocont" --profile garage
	expect_eq "no nf_conntrack: module state" absent "$(j '.values["conntrack.absent"] | if . then "absent" else "?" end')"
	expect_contains "no nf_conntrack: said so" "no nf_conntrack" \
		"$(j '.findings[] | select(.rule == "conntrack.presence") | .explanation')"
	expect_eq "no nf_conntrack: no conntrack sizing finding" "" \
		"$(j '.findings[] | select(.rule == "conntrack.max") | .rule')"
else
	echo "# SKIP no nf_conntrack: depmod not available"
fi

finish
