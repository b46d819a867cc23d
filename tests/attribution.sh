#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Who set nf_conntrack_max: hosttune calls a (max, buckets) pair the
# kernel's default only when the kernel's own formula, for this kernel
# version and word size, gives that pair for some RAM. This test computes
# that set here, independently of the rules, by running the formula of
# net/netfilter/nf_conntrack_core.c (nf_conntrack_init_start(),
# nf_ct_alloc_hashtable()) over every RAM size from 0 to 1 GiB in steps of
# 128 KiB (one bucket on 64-bit) plus the constants above 1 GiB, and then
# checks hosttune's attribution of many pairs, on 4.19 and 5.15, 64-bit and
# 32-bit, against it: a pair in the set is called a default (this RAM's or
# other RAM's), a pair outside it never is.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh" || exit 99
[ -n "${TMP:-}" ] && [ -d "$TMP" ] || exit 99

V=$HT_TESTS_DIR/fixtures/verdict
claimed=0 refused=0

# reachable NEW PTR: "buckets:max" pairs the formula gives for some RAM, one a line.
# NEW 1: 5.15+ (floor 1024, > 1 GiB 65536, > 4 GiB 262144 on 64-bit,
# max = buckets); NEW 0: before (floor 32, > 1 GiB 16384, > 4 GiB 65536
# since 3.15, max = 4 x buckets). Rounded up to a multiple of 4096 / PTR.
reachable() {
	awk -v new="$1" -v ptr="$2" 'BEGIN {
		slots = 4096 / ptr
		for (ram = 0; ram <= 1073741824; ram += 131072) {
			b = int(ram / 16384 / ptr)
			if (new && b < 1024) b = 1024
			if (!new && b < 32) b = 32
			seen[b] = 1
		}
		if (new) { seen[65536] = 1; if (ptr >= 8) seen[262144] = 1 }
		else { seen[16384] = 1; seen[65536] = 1 }
		for (b in seen) {
			r = int((b + slots - 1) / slots) * slots
			printf "%d:%d\n", r, (new ? 1 : 4) * r
		}
	}' | sort -u
}

for kv in "v4.19.0:0" "v5.15.0:1"; do
	kver=${kv%%:*} new=${kv#*:}
	for ptr in 8 4; do
		arch=x86_64
		[ "$ptr" = 4 ] && arch=armv7l
		set=$(reachable "$new" "$ptr")
		for buckets in 512 1024 1536 2048 4096 7680 8192 8704 12288 16384 16896 32768 65536 262144 524288 1048576; do
			for ratio in 1 4 2; do
				max=$((buckets * ratio))
				# 16 GiB of RAM: not the RAM that gives the small defaults.
				vary "$V/near-full.facts" "$TMP/a.facts" "kernel.version=$kver" \
					"kernel.pointer_size=$ptr bytes" "cpu.arch=\"$arch\"" \
					"mem.total=17179869184 bytes" "cpu.count=64 CPUs" \
					"module.nf_conntrack.hashsize=$buckets buckets" \
					"net.netfilter.nf_conntrack_buckets=$buckets buckets" \
					"net.netfilter.nf_conntrack_max=$max entries" \
					"net.netfilter.nf_conntrack_count=10 entries"
				ht --facts "$TMP/a.facts" --format json audit >"$TMP/a.json" 2>"$TMP/err"
				text=$(jq -r '.findings[] | select(.rule == "conntrack.max") | .explanation' "$TMP/a.json" | tr '\n' ' ')
				says=no
				case $text in *"Where it is set: most likely the kernel's default"* | *"Where it is set: most likely this kernel's default"* | \
					*"Where it is set: most likely a "*"default ("*) says=yes ;; esac
				is=no
				grep -qx "$buckets:$max" <<<"$set" && is=yes
				if [ "$says" = "$is" ]; then
					[ "$is" = yes ] && claimed=$((claimed + 1)) || refused=$((refused + 1))
				else
					not_ok "$kver ${ptr}-byte pointers: $max / $buckets: a default? hosttune $says, the formula $is" \
						"$(grep -o 'Where it is set: most likely [^.]*' <<<"$text")"
				fi
			done
		done
	done
done
echo "# pairs called a default, rightly: $claimed; called written, rightly: $refused"
[ "$claimed" -gt 20 ] && [ "$refused" -gt 50 ] && ok "attributions agree with the formula ($claimed defaults, $refused writes)" ||
	not_ok "too few cases: $claimed defaults, $refused writes"

# The field's case: 1048576 / 1048576 on 5.15, 64-bit: no RAM gives it.
vary "$V/near-full.facts" "$TMP/a.facts" "module.nf_conntrack.hashsize=1048576 buckets" \
	"net.netfilter.nf_conntrack_buckets=1048576 buckets" "net.netfilter.nf_conntrack_max=1048576 entries"
ht --facts "$TMP/a.facts" --format json audit >"$TMP/a.json"
expect_contains "1048576 / 1048576 on 5.15: written, and why" \
	"a write to the sysctl or to hashsize: no RAM gives these values as this kernel's default" \
	"$(jq -r '.findings[] | select(.rule == "conntrack.max") | .explanation' "$TMP/a.json" | tr '\n' ' ' | sed 's/  */ /g')"
# Written, and the host shows by what: a sysctl.d line that gives the same
# value is named by file and line, from the boot fact's source.
vary "$V/near-full.facts" "$TMP/a.facts" "module.nf_conntrack.hashsize=1048576 buckets" \
	"net.netfilter.nf_conntrack_buckets=1048576 buckets" "net.netfilter.nf_conntrack_max=1048576 entries" \
	"boot.net.netfilter.nf_conntrack_max=1048576 entries from /etc/sysctl.d/70-site.conf:1"
ht --facts "$TMP/a.facts" --format json audit >"$TMP/a.json"
expect_contains "a sysctl.d line: named by file and line" \
	"Where it is set: most likely the boot configuration: /etc/sysctl.d/70-site.conf:1 sets this value." \
	"$(jq -r '.findings[] | select(.rule == "conntrack.max") | .explanation' "$TMP/a.json" | tr '\n' ' ' | sed 's/  */ /g')"
# An active tuned profile whose [sysctl] gives it: the profile and its line.
vary "$V/near-full.facts" "$TMP/a.facts" "module.nf_conntrack.hashsize=1048576 buckets" \
	"net.netfilter.nf_conntrack_buckets=1048576 buckets" "net.netfilter.nf_conntrack_max=1048576 entries" \
	'tuned.profile="site-storage" from /etc/tuned/active_profile' \
	"tuned.sysctl.net.netfilter.nf_conntrack_max=1048576 from /etc/tuned/site-storage/tuned.conf:7 (tuned profile site-storage)"
ht --facts "$TMP/a.facts" --format json audit >"$TMP/a.json"
expect_contains "a tuned profile: named, with its file and line" \
	"Where it is set: most likely tuned: the active tuned profile site-storage sets it in /etc/tuned/site-storage/tuned.conf:7 (tuned profile site-storage) (its [sysctl] section" \
	"$(jq -r '.findings[] | select(.rule == "conntrack.max") | .explanation' "$TMP/a.json" | tr '\n' ' ' | sed 's/  */ /g')"

# The tuned collector on a tree: active_profile "site", whose tuned.conf in
# /usr/lib/tuned includes "base" (nf_conntrack_max=65536 on line 2) and
# sets 131072 itself on line 5: the last assignment wins, 131072 from
# site's line 5; /etc/tuned/site would override /usr/lib/tuned/site.
R=$TMP/tuned
rm -rf "$R"
cp -a "$FIXTURES/garage-vm/root" "$R"
mkdir -p "$R/etc/tuned" "$R/usr/lib/tuned/site" "$R/usr/lib/tuned/base"
echo site >"$R/etc/tuned/active_profile"
printf '[sysctl]\nnet.netfilter.nf_conntrack_max=65536\n' >"$R/usr/lib/tuned/base/tuned.conf"
printf '[main]\ninclude=base\n\n[sysctl]\nnet.netfilter.nf_conntrack_max = 131072\n' >"$R/usr/lib/tuned/site/tuned.conf"
echo 131072 >"$R/proc/sys/net/netfilter/nf_conntrack_max"
ht --root "$R" facts >"$TMP/t.facts" 2>/dev/null
expect_contains "tuned tree: the profile" 'tuned.profile = "site" from /etc/tuned/active_profile' "$(cat "$TMP/t.facts")"
expect_contains "tuned tree: the last assignment, with its file and line" \
	"tuned.sysctl.net.netfilter.nf_conntrack_max = 131072 from /usr/lib/tuned/site/tuned.conf:5 (tuned profile site)" \
	"$(cat "$TMP/t.facts")"
ht --root "$R" --format json audit >"$TMP/a.json" 2>/dev/null
expect_contains "tuned tree: attributed to the profile" "the active tuned profile site sets it in /usr/lib/tuned/site/tuned.conf:5" \
	"$(jq -r '.findings[] | select(.rule == "conntrack.max") | .explanation' "$TMP/a.json" | tr '\n' ' ' | sed 's/  */ /g')"
# The profile owns the value: with 4096 of 4608 entries in use (88.9%) and
# the garage profile's 32768 wanted, hosttune writes no sysctl.d line tuned
# would overwrite when it starts; the remedy is the profile's [sysctl].
printf '[sysctl]\nnet.netfilter.nf_conntrack_max=4608\n' >"$R/usr/lib/tuned/site/tuned.conf"
echo 4608 >"$R/proc/sys/net/netfilter/nf_conntrack_max"
ht --root "$R" --profile garage --format json audit >"$TMP/a.json" 2>/dev/null
expect_contains "tuned owns it: the remedy is the profile's [sysctl]" \
	"set net.netfilter.nf_conntrack_max=32768 in its [sysctl] section (/usr/lib/tuned/site/tuned.conf:2 (tuned profile site)" \
	"$(jq -r '.findings[] | select(.rule == "conntrack.max") | .remedy' "$TMP/a.json" | tr '\n' ' ' | sed 's/  */ /g')"
ht --root "$R" --profile garage plan >"$TMP/plan" 2>/dev/null
case $(cat "$TMP/plan") in *"net.netfilter.nf_conntrack_max = "*) not_ok "tuned owns it: no sysctl.d line for it" ;;
*) ok "tuned owns it: no sysctl.d line for it" ;; esac
finish
