#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# make bench: wall time and peak RSS of hosttune's main jobs over repeated
# runs. Targets (issue "Audit a real host"): under 10 ms and under 8 MiB each.
set -eu
bench=$1
hosttune=$2
src=$3
runs=${RUNS:-200}
rules="--rules $src/rules"
garage="--root $src/tests/fixtures/garage-vm/root"

echo "hosttune benchmark, $runs runs each ($(uname -r), $(nproc) CPUs)"
"$bench" "facts (this host)" "$runs" "$hosttune" facts
"$bench" "facts --format json" "$runs" "$hosttune" --format json facts
"$bench" "audit (this host)" "$runs" "$hosttune" $rules audit
"$bench" "audit garage fixture" "$runs" "$hosttune" $rules $garage --profile garage audit
"$bench" "audit --format json" "$runs" "$hosttune" $rules $garage --format json audit
