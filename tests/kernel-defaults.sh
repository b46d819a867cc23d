#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The kernel's own conntrack defaults, written as rules in
# rules/conntrack-defaults.rules, against the worked examples of DESIGN.md
# (net/netfilter/nf_conntrack_core.c, nf_conntrack_init_start), and the
# max/buckets fingerprint of who set the current values.
. "$(dirname "$0")/lib.sh"

# case NAME MEMTOTAL_KB KERNEL POINTER MAX BUCKETS CPUS: writes $TMP/NAME.facts
# and audits it; the JSON lands in $TMP/NAME.json.
host() {
	facts_file "$TMP/$1.facts" <<EOT
mem.total = $(($2 * 1024)) bytes
kernel.release = "$3"
kernel.version = v$3
kernel.pointer_size = $4 bytes
kernel.page_size = 4096 bytes
cpu.count = $7 CPUs
net.netfilter.nf_conntrack_max = $5 entries
net.netfilter.nf_conntrack_buckets = $6 buckets
net.netfilter.nf_conntrack_count = 0 entries
net.netfilter.nf_conntrack_tcp_timeout_time_wait = 120 seconds
module.nf_conntrack.hashsize = $6 buckets
netns.initial = true
conntrack.loaded = true
EOT
	ht --facts "$TMP/$1.facts" --format json --fail-on critical audit >"$TMP/$1.json"
	rc=$?
	[ $rc -le 1 ] || not_ok "$1: audit exits $rc"
}

# default NAME EXPECTED_BUCKETS EXPECTED_MAX
default() {
	expect_eq "$1: default buckets" "$2" "$(jget "$TMP/$1.json" '.values["conntrack.default.buckets"]')"
	expect_eq "$1: default max" "$3" "$(jget "$TMP/$1.json" '.values["conntrack.default.max"]')"
}

# 480 MiB on 5.15: 480 x 1048576 / 16384 / 8 = 3840 buckets, above the 5.15
# floor of 1024; rounded up to a multiple of 4096 / 8 = 512: 8 x 512 = 4096;
# max = 1 x 4096.
host mem480-515 491520 5.15.0 8 4096 4096 1
default mem480-515 4096 4096
expect_eq "480 MiB on 5.15: current is the kernel default" true \
	"$(jget "$TMP/mem480-515.json" '.values["conntrack.is_default"]')"

# 12 GiB on 5.10: above 4 GiB the pre-5.15 kernel uses 65536 buckets;
# max = 4 x 65536 = 262144.
host mem12g-510 12582912 5.10.0 8 262144 65536 4
default mem12g-510 65536 262144
expect_contains "12 GiB on 5.10: attributed to the kernel default" "the kernel's default" \
	"$(jget "$TMP/mem12g-510.json" '.values["conntrack.origin"]')"

# 24 GiB on 6.1: above 4 GiB on 64-bit the 5.15+ kernel uses 262144; max 1 x.
host mem24g-61 25165824 6.1.0 8 262144 262144 2
default mem24g-61 262144 262144

# 2 GiB on 5.15 (MemTotal a little under 2 GiB, still above 1 GiB): 65536 / 65536.
host mem2g-515 2015000 5.15.0 8 65536 65536 1
default mem2g-515 65536 65536

# 960 MiB on 5.15: 960 x 1048576 / 16384 / 8 = 7680 = 15 x 512, no rounding,
# not a power of two; max 7680.
host mem960-515 983040 5.15.0 8 7680 7680 1
default mem960-515 7680 7680

# 960 MiB on 5.4: the same 7680 buckets, max = 4 x 7680 = 30720.
host mem960-54 983040 5.4.0 8 30720 7680 1
default mem960-54 7680 30720

# 64 MiB on 5.15: 64 x 1048576 / 131072 = 512, raised to the 5.15 floor of 1024.
host mem64-515 65536 5.15.0 8 1024 1024 1
default mem64-515 1024 1024
# 64 MiB on 5.4: 512 buckets (above the old floor of 32), max 4 x 512 = 2048.
host mem64-54 65536 5.4.0 8 2048 512 1
default mem64-54 512 2048

# 32-bit, 480 MiB on 5.15: 503316480 / 16384 / 4 = 7680; a page holds
# 4096 / 4 = 1024 bucket heads, so round up to 8 x 1024 = 8192; max 8192.
host mem480-515-32 491520 5.15.0 4 8192 8192 1
default mem480-515-32 8192 8192

# kube-proxy on 4 CPUs: max(32768 x 4, 131072) = 131072, hashsize = 131072 / 4
# = 32768. On 16 GiB 5.10 the kernel default would be 65536 / 262144, so the
# values cannot be the kernel's.
host kube 16777216 5.10.0 8 131072 32768 4
expect_contains "max 131072, buckets 32768 on 4 CPUs is kube-proxy" "kube-proxy" \
	"$(jget "$TMP/kube.json" '.values["conntrack.origin"]')"

# hashsize=16384 as a module option: the kernel sets max = 8 x 16384 = 131072.
host hashsize 16777216 5.10.0 8 131072 16384 2
expect_contains "ratio 8 is a hashsize= option" "hashsize= module option" \
	"$(jget "$TMP/hashsize.json" '.values["conntrack.origin"]')"

# a sysctl write: 100000 / 65536 is no kernel ratio.
host written 16777216 5.10.0 8 100000 65536 2
expect_contains "ratio 1.53 is a sysctl write" "a write to the sysctl" \
	"$(jget "$TMP/written.json" '.values["conntrack.origin"]')"

# The field's client of the Garage VM (tests/fixtures/garage-client/host.facts):
# 12582912000 bytes (12000 MiB) on 5.10, above 4 GiB -> 65536 buckets, max
# 4 x 65536 = 262144, exactly what it has.
ht --facts "$FIXTURES/garage-client/host.facts" --format json audit >"$TMP/client.json"
default client 65536 262144
expect_contains "client: attributed to the kernel default" "the kernel's default" \
	"$(jget "$TMP/client.json" '.values["conntrack.origin"]')"
# default profile: 100/s x 120 s x 2 = 24000 -> 32768 < the default 262144, so
# the recommendation is the kernel default and nothing is wrong.
expect_eq "client: nf_conntrack_max ok" ok \
	"$(jget "$TMP/client.json" '.findings[] | select(.rule == "conntrack.max") | .severity')"
# chain length of the 4:1 default: 2 x 262144 / 65536 = 8, not above 8.
expect_eq "client: chain length 8" 8 \
	"$(jget "$TMP/client.json" '.findings[] | select(.rule == "conntrack.chain_length") | .current')"

finish
