#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# make bench: wall time and peak RSS of hosttune's main jobs over repeated
# runs. Targets: facts and audit under 10 ms and 8 MiB each without the
# cipher measurement; the measurement adds at most 100 ms.
set -eu
bench=$1
hosttune=$2
src=$3
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
