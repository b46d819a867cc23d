#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# make bench: wall time and peak RSS of hosttune's main jobs over repeated
# runs. Targets: facts and audit under 10 ms and 8 MiB each without the
# cipher measurement; the measurement adds at most 100 ms. Then the time
# to read a generated sysctl.d of 20,000 and 100,000 keys (target: 100,000
# well under a second), next to systemd-analyze cat-config on the same tree,
# which only concatenates the files (when systemd-analyze is installed).
set -eu
bench=$1
hosttune=$2
src=$3
bootconf_dump=${4:-}
runs=${RUNS:-200}
mruns=${MEASURE_RUNS:-20}
rules="--rules $src/rules"
garage="--root $src/tests/fixtures/garage-vm/root"

echo "hosttune benchmark ($(uname -r), $(nproc) CPUs)"
"$bench" "facts --no-measure" "$runs" "$hosttune" --no-measure facts
"$bench" "facts --format json --no-measure" "$runs" "$hosttune" --no-measure --format json facts
"$bench" "facts (with cipher measurement)" "$mruns" "$hosttune" facts
"$bench" "audit --no-measure" "$runs" "$hosttune" $rules --no-measure audit
"$bench" "audit (with cipher measurement)" "$mruns" "$hosttune" $rules audit
"$bench" "audit garage fixture (--root)" "$runs" "$hosttune" $rules $garage --profile garage audit
"$bench" "audit --format json (--root)" "$runs" "$hosttune" $rules $garage --format json audit

# The cipher measurement next to `openssl speed -evp` (which divides by CPU
# time, as hosttune does), both ciphers, with AES-NI and PCLMULQDQ and
# without them (OPENSSL_ia32cap, x86 only). Target: hosttune within 15% of
# openssl on an idle machine. hosttune: the median and range of CIPHER_RUNS
# runs of its 100 ms measurement; openssl: one run of 1 s on 16 KiB buffers.
cipher_runs=${CIPHER_RUNS:-9}
cipher_row() { # MODE (unmasked|masked)
	if [ "$1" = masked ]; then
		export OPENSSL_ia32cap="~0x200000200000000:~0"
	else
		unset OPENSSL_ia32cap
	fi
	figs=$(for i in $(seq "$cipher_runs"); do
		"$hosttune" --format json facts |
			jq -r '"\(.facts["cpu.aes.gcm_mbps"].value) \(.facts["cpu.chacha.mbps"].value)"'
	done)
	for c in gcm chacha; do
		col=1 evp=aes-128-gcm
		[ $c = chacha ] && col=2 evp=chacha20-poly1305
		ht=$(echo "$figs" | awk -v c=$col '{ print $c }' | sort -n |
			awk '{ v[NR] = $1 } END { printf "%.0f %.0f %.0f", v[int((NR + 1) / 2)], v[1], v[NR] }')
		os=$(openssl speed -mr -evp $evp -bytes 16384 -seconds 1 2>/dev/null |
			awk -F: '/^\+F:/ { printf "%.0f", $4 / 1e6 }')
		set -- $ht
		printf '  %-9s %-18s %8s MB/s [%s-%s] %8s MB/s %7s\n' "$mode" "$evp" "$1" "$2" "$3" \
			"${os:-?}" "$(awk -v h="$1" -v o="$os" 'BEGIN { if (o > 0) printf "%+.0f%%", 100 * (h - o) / o }')"
	done
}
if command -v openssl >/dev/null 2>&1 && command -v jq >/dev/null 2>&1; then
	echo "cipher measurement, 16 KiB buffers: hosttune (median [range] of $cipher_runs runs)" \
		"vs openssl speed -evp (1 s)"
	printf '  %-9s %-18s %25s %13s %7s\n' "" cipher hosttune openssl diff
	for mode in unmasked masked; do
		case $(uname -m) in x86_64 | i?86) ;; *) [ $mode = masked ] && continue ;; esac
		cipher_row $mode
	done
	unset OPENSSL_ia32cap
fi

# sysctl.d: N distinct keys over ten files in /usr/lib/sysctl.d, and one key
# in ten set again in /etc/sysctl.d/50-override.conf (so N x 1.1 lines).
[ -n "$bootconf_dump" ] && [ -x "$bootconf_dump" ] || exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in 20000 100000; do
	t=$tmp/sysctl-$n
	mkdir -p "$t/etc/sysctl.d" "$t/usr/lib/sysctl.d"
	awk -v n="$n" -v d="$t" 'BEGIN {
		for (i = 0; i < n; i++)
			printf "net.bench.k%06d = %d\n", i, i > sprintf("%s/usr/lib/sysctl.d/%02d-gen.conf", d, i % 10)
		for (i = 0; i < n; i += 10)
			printf "net.bench.k%06d = %d\n", i, -i > (d "/etc/sysctl.d/50-override.conf")
	}'
	bytes=$(cat "$t"/etc/sysctl.d/* "$t"/usr/lib/sysctl.d/* | wc -c)
	lines=$(cat "$t"/etc/sysctl.d/* "$t"/usr/lib/sysctl.d/* | wc -l)
	echo "sysctl.d of $n keys: $lines lines, $bytes bytes in 11 files"
	"$bench" "  hosttune reader (bootconf-dump)" 5 "$bootconf_dump" "$t"
	if command -v systemd-analyze >/dev/null 2>&1; then
		"$bench" "  systemd-analyze cat-config" 5 "$(command -v systemd-analyze)" \
			--root="$t" cat-config sysctl.d
	fi
done
