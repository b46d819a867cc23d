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
