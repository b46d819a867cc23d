#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A measurement that takes time shows a progress line on stderr when stderr
# is a terminal (script(1) gives the run a pty): what is measured and the
# seconds left, rewritten in place, erased when done (CR, then ESC [ K);
# nothing when stderr is not a terminal, nothing with --quiet; with --format
# json on stderr only, stdout stays one document. --sample's wait below a
# --root tree; the fsync rate of Garage's metadata directory, which is
# measured only on the live host, in a directory of this test (reading this
# host's /proc, writing only an unnamed temporary file in $TMP/meta).
. "$(dirname "$0")/lib.sh"

if ! command -v script >/dev/null 2>&1 || ! script -qec true /dev/null </dev/null >/dev/null 2>&1; then
	echo "# SKIP: no script(1) (util-linux) or no pty for it"
	exit 77
fi
T=$FIXTURES/garage-vm/root
CR=$(printf '\r')
ESC=$(printf '\033')
H="$HOSTTUNE --no-config --rules $HT_RULES_DIR"

# on_pty ENV... -- ARGS...: hosttune ARGS with stdout in $TMP/out and stderr
# on a pty $COLS columns wide (default 200); what the pty showed (stderr
# alone) in $TMP/pty.
on_pty() {
	env_args=
	while [ "$1" != -- ]; do env_args="$env_args $1"; shift; done
	shift
	# shellcheck disable=SC2086
	env $env_args script -qec "stty cols ${COLS:-200}; $H $* >$TMP/out" /dev/null </dev/null \
		>"$TMP/pty"
}

# ---- --sample 2s on a terminal ----
on_pty TERM=xterm -- --root "$T" --sample 2s audit
pty=$(cat "$TMP/pty")
expect_contains "pty, --sample 2s: what is sampled, for how long" \
	"${CR}hosttune: sampling 2 s of nstat" "$pty"
# The seconds left, each line's: whole seconds rounded up, told as they go
# down; the wait is 2 s from the first reading, so the first is 2 or less
# (1 when the rules took more than 1 s before asking) and the last 1 (the
# last whole second is slept out without a line).
left=$(printf '%s' "$pty" | tr '\r' '\n' | sed -n 's/.*: \([0-9.]*\) s left.*/\1/p' | tr '\n' ' ')
expect_eq "pty, --sample 2s: the seconds left go down to 1" yes \
	"$(case "$left" in "2 1 " | "1 ") echo yes ;; *) echo "no: $left" ;; esac)"
expect_eq "pty, --sample 2s: each line erases what is left of the one before (ESC [ K)" \
	"$(printf '%s' "$pty" | tr -cd '\r' | wc -c)" "$(printf '%s' "$pty" | grep -o "$ESC\[K" | wc -l)"
expect_eq "pty, --sample 2s: the line is erased at the end (CR, ESC [ K)" yes \
	"$(case "$pty" in *"$CR$ESC[K") echo yes ;; *) echo no ;; esac)"
expect_eq "pty, --sample 2s: nothing of it on stdout" "no" \
	"$(grep -q "s left\|$ESC" "$TMP/out" && echo yes || echo no)"
expect_contains "pty, --sample 2s: the report says what it covers" \
	"counters over a 2.0" "$(head -n 1 "$TMP/out")"

# ---- a narrow terminal: WHAT is cut, the time left is not ----
COLS=60 on_pty TERM=xterm -- --root "$T" --sample 1s audit
line=$(tr '\r' '\n' <"$TMP/pty" | grep 'hosttune: ' | head -n 1 | sed "s/$ESC\[K//")
expect_eq "pty, 60 columns: the line is 59 columns, what is sampled cut, the time left kept" \
	"59 yes" "${#line} $(case "$line" in "hosttune: sampling 1 s of nstat, "*"...: "*" s left") echo yes ;; *) echo "no: $line" ;; esac)"

# ---- not a terminal: nothing on stderr ----
$H --root "$T" --sample 500ms audit >"$TMP/out" 2>"$TMP/err"
expect_eq "not a terminal, --sample: nothing on stderr" "" "$(cat "$TMP/err")"
expect_contains "not a terminal, --sample: sampled all the same" "counters over a 0.5" \
	"$(head -n 1 "$TMP/out")"

# ---- --quiet: the summary line only, no progress ----
on_pty TERM=xterm -- --root "$T" --sample 500ms --quiet audit
expect_eq "pty, --quiet: nothing on stderr" "" "$(cat "$TMP/pty")"

# ---- --format json: the line on stderr, stdout one JSON document ----
on_pty TERM=xterm -- --root "$T" --sample 500ms --format json audit
expect_contains "pty, --format json: the progress line on stderr (under 1 s: one decimal)" \
	"hosttune: sampling 0.5 s of nstat" "$(cat "$TMP/pty")"
expect_eq "pty, --format json: stdout is one JSON document" 1 "$(jq -s length "$TMP/out")"

# ---- TERM=dumb: no ESC [ K; the line is overwritten with spaces ----
on_pty TERM=dumb -- --root "$T" --sample 500ms audit
pty=$(cat "$TMP/pty")
expect_eq "pty, TERM=dumb: no escape sequence" no \
	"$(case "$pty" in *"$ESC"*) echo yes ;; *) echo no ;; esac)"
# The last line's length (after its CR) in spaces, between two CRs.
last=${pty%"$CR"*"$CR"}
last=${last##*"$CR"}
expect_eq "pty, TERM=dumb: erased with as many spaces as the line had" \
	"$CR$(printf '%*s' "${#last}" '')$CR" "${pty#"${pty%"$CR"*"$CR"}"}"

# ---- the fsync rate, on the live host, in a directory of this test ----
mkdir "$TMP/meta" "$TMP/data"
sed -e "s|^metadata_dir = .*|metadata_dir = \"$TMP/meta\"|" -e "s|^data_dir = .*|data_dir = \"$TMP/data\"|" \
	"$FIXTURES/garage/single/etc/garage.toml" >"$TMP/garage.toml"
on_pty TERM=xterm -- --profile garage --set "garage.config=$TMP/garage.toml" audit
pty=$(cat "$TMP/pty")
# Its budget is 300 ms (collect-storage.c FSYNC_BUDGET_MS): 0.3 s left at the start.
expect_contains "pty, fsync: what is measured, where, and the time left" \
	"${CR}hosttune: measuring the fsync rate in $TMP/meta: 0.3 s left$ESC[K" "$pty"
expect_eq "pty, fsync: erased at the end" yes \
	"$(case "$pty" in *"$CR$ESC[K") echo yes ;; *) echo no ;; esac)"
expect_eq "fsync: nothing left in the directory" "" "$(ls -A "$TMP/meta")"
$H --profile garage --set "garage.config=$TMP/garage.toml" audit >/dev/null 2>"$TMP/err"
expect_eq "not a terminal, fsync: nothing on stderr" "" "$(cat "$TMP/err")"

finish
