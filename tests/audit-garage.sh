#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Garage VM from the field (../shared/fixtures/README.md): 512 MiB VM
# (MemTotal 480 MiB), 1 vCPU, kernel 5.15, nf_conntrack_max 4096, buckets
# 4096, TIME_WAIT 120 s, count pinned at 4096; audited with --profile garage
# --set workload.conn_rate=570, from its --root tree and from a facts file.
. "$(dirname "$0")/lib.sh"

ROOT=$FIXTURES/garage-vm/root
J=$TMP/garage.json

ht --root "$ROOT" --profile garage --set workload.conn_rate=570 --format json audit >"$J"
expect_eq "audit exits 1: findings at or above warning" 1 $?

f() { jget "$J" ".findings[] | select(.rule == \"$1\") | $2"; }

# nf_conntrack_max: ceiling 4096 / 120 = 34.13 < 570 connections/s -> critical.
expect_eq "nf_conntrack_max severity" critical "$(f conntrack.max .severity)"
expect_eq "nf_conntrack_max current" 4096 "$(f conntrack.max .current)"
expect_contains "ceiling 4096 / 120 = 34 connections/s" "4096 / 120 s = 34 new connections/s" "$(f conntrack.max .explanation)"
# 5.15 default for 480 MiB: 503316480 / 16384 / 8 = 3840 -> 4096 (8 x 512), max 1 x 4096.
expect_contains "current value identified as the 5.15 default" \
	"Where it is set: most likely the kernel's default for this RAM and kernel" "$(f conntrack.max .explanation)"
expect_contains "the default's arithmetic is shown" "= 3840 buckets" "$(f conntrack.max .explanation)"
expect_contains "the default's rounding is shown" \
	"of 512 that is 4096 buckets, and max = 1 x buckets = 4096 (kernel 5.15.0)" "$(f conntrack.max .explanation)"
# Working set 570 x 30 s x 3 = 51300 -> next power of two 65536. Budget:
# 5% of 503316480 = 25165824 bytes / (320 + 8) = 76725 -> power of two 65536.
# max(min(65536, 65536), 4096) = 65536.
rec=$(f conntrack.max .recommended)
expect_eq "recommended nf_conntrack_max" 65536 "$rec"
case $rec in 32768|65536) ok "recommended max is a power of two in [32768, 65536]" ;;
*) not_ok "recommended max is a power of two in [32768, 65536]" "got $rec" ;; esac
# Memory: 65536 x 320 = 20971520 bytes = 20 MiB, 20971520 / 503316480 = 4.2% of
# RAM, within the 5% budget (24 MiB).
expect_contains "memory cost stated" "Recommended 65536: 20 MiB of entries" "$(f conntrack.max .explanation)"
expect_contains "memory cost as a share of RAM" "4.2% of RAM" "$(f conntrack.max .explanation)"
expect_contains "budget stated" "5% of RAM (24 MiB)" "$(f conntrack.max .explanation)"
expect_contains "table pinned at its cap" "In use: 4096 of 4096 entries (100.0%)" "$(f conntrack.max .explanation)"
expect_eq "fix line for sysctl.d" "net.netfilter.nf_conntrack_max = 65536" "$(f conntrack.max .fix.line)"

# TIME_WAIT: 120 s against the garage profile's 30 s -> warning, 120 -> 30.
expect_eq "TIME_WAIT severity" warning "$(f conntrack.time_wait .severity)"
expect_eq "TIME_WAIT current" 120 "$(f conntrack.time_wait .current)"
expect_eq "TIME_WAIT recommended" 30 "$(f conntrack.time_wait .recommended)"
# with 30 s the current table admits 4096 / 30 = 136.5 -> 136 connections/s
expect_contains "TIME_WAIT gain shown" "the current table admits 4096 / 30 s = 136 new connections/s, against 34 now" "$(f conntrack.time_wait .explanation)"

# hashsize: recommended 65536 (one bucket an entry), 65536 x 8 bytes = 512 KiB.
# With max 65536 and 4096 buckets the chain would be 2 x 65536 / 4096 = 32 > 8.
expect_eq "hashsize recommended" 65536 "$(f conntrack.buckets .recommended)"
expect_eq "hashsize severity" warning "$(f conntrack.buckets .severity)"
expect_contains "hashsize cost" "= 512 KiB" "$(f conntrack.buckets .explanation)"
expect_eq "hashsize fix" "options nf_conntrack hashsize=65536" "$(f conntrack.buckets .fix.line)"
expect_eq "chain now: 2 x 4096 / 4096 = 2" 2 "$(f conntrack.chain_length .current)"

# Drops since boot from proc/net/stat/nf_conntrack (one CPU row): drop 0x1731 =
# 5937, early_drop 0x4d = 77; 5937 + 77 = 6014, and count 4096 >= 90% of 4096.
expect_eq "drops critical" critical "$(f conntrack.drops .severity)"
expect_eq "drops counted" 6014 "$(f conntrack.drops .current)"
expect_contains "drops explained" "dropped 5937 packets" "$(f conntrack.drops .explanation)"
expect_contains "drops happening now" "at or near its cap" "$(f conntrack.drops .explanation)"

# The text report carries the same numbers.
out=$(ht --root "$ROOT" --profile garage --set workload.conn_rate=570 audit)
expect_contains "text table row" "conntrack.max" "$out"
expect_contains "text severity" "[critical] conntrack.max" "$out"

# The same host from a facts file audits the same.
ht --root "$ROOT" --profile garage facts >"$TMP/garage.facts"
ht --facts "$TMP/garage.facts" --profile garage --set workload.conn_rate=570 --format json audit \
	| jq 'del(.origin)' >"$TMP/from-facts.json"
jq 'del(.origin)' "$J" >"$TMP/from-root.json"
if cmp -s "$TMP/from-facts.json" "$TMP/from-root.json"; then ok "facts file audits like the root tree"
else not_ok "facts file audits like the root tree" "$(diff "$TMP/from-root.json" "$TMP/from-facts.json" | head -5)"; fi

# Inside a container nf_conntrack_max is read-only (0444 since 5.12.2).
cp -a "$ROOT" "$TMP/ct"
chmod 0444 "$TMP/ct/proc/sys/net/netfilter/nf_conntrack_max"
ht --root "$TMP/ct" --profile garage --format json audit >"$TMP/ct.json"
expect_contains "container: only the host can change it" "only the host can change the conntrack table's size" \
	"$(jget "$TMP/ct.json" '.findings[] | select(.rule == "conntrack.max") | .explanation')"
expect_eq "container: nf_conntrack_max has no fix" null \
	"$(jget "$TMP/ct.json" '.findings[] | select(.rule == "conntrack.max") | .fix')"
expect_eq "container: flagged read-only" true \
	"$(jget "$TMP/ct.json" '.findings[] | select(.rule == "conntrack.max") | .read_only')"
expect_eq "container: hashsize has no fix either" null \
	"$(jget "$TMP/ct.json" '.findings[] | select(.rule == "conntrack.buckets") | .fix')"
# TIME_WAIT is per network namespace: a container may set it.
expect_eq "container: TIME_WAIT still fixable" "net.netfilter.nf_conntrack_tcp_timeout_time_wait = 30" \
	"$(jget "$TMP/ct.json" '.findings[] | select(.rule == "conntrack.time_wait") | .fix.line')"

# Only raise: an admin's 262144 stays, reported ok.
cp -a "$ROOT" "$TMP/big"
echo 262144 >"$TMP/big/proc/sys/net/netfilter/nf_conntrack_max"
echo 0 >"$TMP/big/proc/sys/net/netfilter/nf_conntrack_count"
echo 30 >"$TMP/big/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait"
ht --root "$TMP/big" --profile garage --set workload.conn_rate=570 --format json audit >"$TMP/big.json"
expect_eq "larger max kept: ok" ok \
	"$(jget "$TMP/big.json" '.findings[] | select(.rule == "conntrack.max") | .severity')"
expect_eq "larger max kept: flagged kept" true \
	"$(jget "$TMP/big.json" '.findings[] | select(.rule == "conntrack.max") | .kept')"
expect_contains "larger max kept: says why" "never lowers it" \
	"$(jget "$TMP/big.json" '.findings[] | select(.rule == "conntrack.max") | .explanation')"

# Module not loaded: conntrack facts unavailable, the audit completes.
ht --root "$FIXTURES/no-conntrack/root" --format json audit >"$TMP/none.json"
rc=$?
expect_eq "no conntrack: audit completes" 0 "$rc"
expect_eq "no conntrack: max finding not applicable" false \
	"$(jget "$TMP/none.json" '.findings[] | select(.rule == "conntrack.max") | .applicable')"

# An /etc/garage.toml hosttune cannot read (a float: beyond its TOML subset)
# on a host nobody asked a Garage pre-flight of: the audit goes on without
# it, saying why on stderr; --profile garage makes it the error it is.
cp -a "$ROOT" "$TMP/badtoml"
mkdir -p "$TMP/badtoml/etc"
printf 'foo = 1.5\n' >"$TMP/badtoml/etc/garage.toml"
ht --root "$TMP/badtoml" --format json audit >"$TMP/bt.json" 2>"$TMP/bt.err"
expect_eq "unreadable garage.toml, default profile: the audit reports (exit 1, findings)" 1 $?
expect_eq "unreadable garage.toml, default profile: one warning line" \
	"hosttune: warning: /etc/garage.toml:1:7: expected an integer, found a float; the Garage pre-flight is skipped (--profile garage makes this an error)" \
	"$(cat "$TMP/bt.err")"
expect_eq "unreadable garage.toml, default profile: no Garage finding" 0 \
	"$(jq '[.findings[] | select(.rule | startswith("garage."))] | length' "$TMP/bt.json")"
ht --root "$TMP/badtoml" --profile garage audit >/dev/null 2>"$TMP/bt.err"
expect_eq "unreadable garage.toml, --profile garage: exit 2" 2 $?
expect_eq "unreadable garage.toml, --profile garage: the error" \
	"hosttune: /etc/garage.toml:1:7: expected an integer, found a float" "$(cat "$TMP/bt.err")"

# /etc/garage.toml a loop of links (-> /srv/loop.toml -> /etc/garage.toml):
# there, but no file at its end. Never "no /etc/garage.toml" (absent): the
# default profile warns and goes on; --profile garage goes on too (exit 1 for
# the conntrack findings of the tree, not 2), with garage.config unavailable
# ELOOP naming the file and the n/a row of garage.config_read saying so.
cp -a "$ROOT" "$TMP/loop"
mkdir -p "$TMP/loop/etc" "$TMP/loop/srv"
rm -f "$TMP/loop/etc/garage.toml"
ln -s /srv/loop.toml "$TMP/loop/etc/garage.toml"
ln -s /etc/garage.toml "$TMP/loop/srv/loop.toml"
ht --root "$TMP/loop" --format json audit >"$TMP/lp.json" 2>"$TMP/lp.err"
expect_eq "looping garage.toml, default profile: the audit reports (exit 1)" 1 $?
expect_eq "looping garage.toml, default profile: ELOOP on stderr" \
	"hosttune: warning: /etc/garage.toml: Too many levels of symbolic links; the Garage pre-flight is skipped" \
	"$(cat "$TMP/lp.err")"
ht --root "$TMP/loop" facts >"$TMP/lp.facts" 2>/dev/null
expect_contains "looping garage.toml, default profile: garage.checked false, ELOOP said" \
	"garage.checked = false from skipped: /etc/garage.toml: Too many levels of symbolic links" "$(cat "$TMP/lp.facts")"
ht --root "$TMP/loop" --profile garage --format json audit >"$TMP/lp.json" 2>"$TMP/lp.err"
expect_eq "looping garage.toml, --profile garage: not aborted (exit 1, not 2)" 1 $?
expect_eq "looping garage.toml, --profile garage: the n/a row names the file and ELOOP" \
	"n/a|garage.config is unavailable (Too many levels of symbolic links: /etc/garage.toml (Garage's default path))" \
	"$(jq -r '.findings[] | select(.rule == "garage.config_read") | "\(.severity)|\(.explanation)"' "$TMP/lp.json")"
ht --root "$TMP/loop" --profile garage facts >"$TMP/lp.facts" 2>/dev/null
expect_contains "looping garage.toml, --profile garage: garage.config ELOOP" \
	"garage.config = unavailable ELOOP from /etc/garage.toml" "$(cat "$TMP/lp.facts")"

finish
