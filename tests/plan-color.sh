#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# plan's diff in colour on a terminal (tests/pty-run.py gives the run a pty),
# as git diff colours one: a file's header lines bold, hunk headers cyan,
# removed lines red, added lines green, context and the live changes after
# the diff plain; never with NO_COLOR, --color=never, TERM=dumb or on a
# pipe, where plan prints what it printed before, byte for byte.
. "$(dirname "$0")/lib.sh"

if ! command -v python3 >/dev/null 2>&1; then
	echo "# SKIP: no python3 for the pty"
	exit 77
fi
PTY="python3 $HT_TESTS_DIR/pty-run.py"
ESC=$(printf '\033')
B="$ESC[1m" C="$ESC[36m" R="$ESC[31m" G="$ESC[32m" E="$ESC[0m"

# The Garage VM with an older hosttune sysctl.d file: nf_conntrack_max 16384
# where the plan wants 32768, and a line "-- an old line" that the plan
# drops: removed, it reads "--- an old line", which is not a file header.
cp -R "$FIXTURES/garage-vm/root" "$TMP/root"
mkdir -p "$TMP/root/etc/sysctl.d"
cat >"$TMP/root/etc/sysctl.d/90-hosttune.conf" <<'EOF'
# This file is managed by hosttune (profile garage).
# `hosttune apply` rewrites it and `hosttune revert` removes it; change the
# profile or hosttune's rules.d instead of editing it. The net.netfilter
# keys apply at boot because /etc/modules-load.d/hosttune.conf loads
# nf_conntrack before systemd-sysctl runs.
-- an old line
# conntrack.max: conntrack table size against the new-connection rate
net.netfilter.nf_conntrack_max = 16384

# conntrack.time_wait: how long a closed TCP connection stays in the conntrack table
net.netfilter.nf_conntrack_tcp_timeout_time_wait = 30
EOF
set -- "$HOSTTUNE" --no-config --rules "$HT_RULES_DIR" --root "$TMP/root" --profile garage --no-measure

# on_pty ENV... -- ARGS...: plan's output on a pty, carriage returns removed.
on_pty() {
	env_args=
	while [ "$1" != -- ]; do env_args="$env_args $1"; shift; done
	shift
	# shellcheck disable=SC2086
	env $env_args $PTY --cols 200 -- "$@" plan | tr -d '\r'
}
has_esc() {
	case $1 in *"$ESC"*) echo yes ;; *) echo no ;; esac
}

"$@" plan >"$TMP/pipe.out"
expect_eq "pipe: plan exits 1 (the host does not match), no escape code" "1 no" \
	"$? $(has_esc "$(cat "$TMP/pipe.out")")"
out=$(on_pty TERM=xterm -- "$@")
printf '%s\n' "$out" >"$TMP/pty.out"
# The first file's diff: header bold, hunk cyan, context plain, the dropped
# line and the old max red, the blank line and the new max green.
expect_eq "pty: the first file's diff in colour" \
	"${B}--- a/etc/sysctl.d/90-hosttune.conf$E|${B}+++ b/etc/sysctl.d/90-hosttune.conf$E|${C}@@ -3,9 +3,9 @@$E| # profile or hosttune's rules.d instead of editing it. The net.netfilter|" \
	"$(head -n 4 "$TMP/pty.out" | tr '\n' '|')"
expect_contains "pty: a removed line that reads like a header is red" "$R--- an old line$E" "$out"
expect_contains "pty: the old max red" "$R-net.netfilter.nf_conntrack_max = 16384$E" "$out"
expect_contains "pty: the new max green" "$G+net.netfilter.nf_conntrack_max = 32768$E" "$out"
expect_contains "pty: a new file's header bold, its hunk cyan" \
	"$B--- /dev/null$E
$B+++ b/etc/modprobe.d/hosttune.conf$E
$C@@ -0,0 +1,7 @@$E" "$out"
# After the diffs (the first empty line): the live changes, plain.
expect_eq "pty: nothing coloured after the diffs" no \
	"$(has_esc "$(sed -n '/^$/,$p' "$TMP/pty.out")")"
# The colour codes taken out, the pty shows what the pipe gets.
expect_eq "pty without its colour codes = the pipe's output" "$(cat "$TMP/pipe.out")" \
	"$(sed "s/$ESC\[[0-9;]*m//g" "$TMP/pty.out")"
# The diff removes two lines ("-- an old line", the old max), adds two (a
# blank line, the new max) and creates two files (7 and 6 lines): 2 red
# lines, 2 + 7 + 6 = 15 green.
expect_eq "pty: 2 red lines, 15 green" "2 15" \
	"$(grep -cF "$R" "$TMP/pty.out") $(grep -cF "$G" "$TMP/pty.out")"

# No colour: NO_COLOR (set and not empty), --color=never, TERM=dumb.
expect_eq "pty, NO_COLOR=1: the pipe's output" "$(cat "$TMP/pipe.out")" \
	"$(on_pty TERM=xterm NO_COLOR=1 -- "$@")"
expect_eq "pty, NO_COLOR empty: colour" yes "$(has_esc "$(on_pty TERM=xterm NO_COLOR= -- "$@")")"
expect_eq "pty, --color=never: no escape code" no \
	"$(has_esc "$(on_pty TERM=xterm -- "$@" --color=never)")"
expect_eq "pty, TERM=dumb: no escape code" no "$(has_esc "$(on_pty TERM=dumb -- "$@")")"
# --color=always on a pipe colours it; JSON never.
expect_contains "pipe, --color=always: colour" "$R-net.netfilter.nf_conntrack_max = 16384$E" \
	"$("$@" --color=always plan)"
expect_eq "--color=always --format json: no escape code" no \
	"$(has_esc "$("$@" --color=always --format json plan)")"

finish
