#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A reader that goes away (hosttune audit -v | head -1): a read-only command
# ends quietly, nothing on stderr, with the exit status of what it found, as
# sysctl -a does; apply and revert, which changed the host, keep exit 5
# ("done, but the report could not be written"). hosttune(8) EXIT STATUS.
#
# The pipe's reader is gone before hosttune starts (closed_run), so every
# write fails with EPIPE whatever the output's size; one run through a real
# `| head -n 1` too, with an output far larger than a pipe's 64 KiB buffer.
. "$(dirname "$0")/lib.sh"

G="--profile garage"
T=$FIXTURES/garage-vm/root
FACTS=$FIXTURES/garage-vm/expected.facts
mkfifo "$TMP/fifo"
# A fleet: twelve field cases' facts files.
mkdir "$TMP/fleet"
for d in $(ls -d "$HT_TESTS_DIR"/field/*/ | head -n 12); do
	[ -f "$d/host.facts" ] && cp "$d/host.facts" "$TMP/fleet/$(basename "$d").facts"
done

# closed_run ARGS...: hosttune --rules DIR ARGS with stdout a FIFO whose
# reader has closed it; $rc its exit status, $TMP/err its stderr. The shell
# opens the FIFO both ways (no blocking), opens the write end for hosttune,
# then closes its read end: no reader is left before hosttune runs.
closed_run() {
	exec 3<>"$TMP/fifo"
	exec 4>"$TMP/fifo"
	exec 3<&-
	ht "$@" >&4 2>"$TMP/err" 4>&-
	rc=$?
	exec 4>&-
}

# The helper itself: a write to such a pipe fails (EPIPE), so the runs below
# really see a reader that went away (cat, SIGPIPE ignored, says so).
exec 3<>"$TMP/fifo"
exec 4>"$TMP/fifo"
exec 3<&-
echo x | (trap '' PIPE; exec cat >&4 4>&-) 2>"$TMP/cat.err"
exec 4>&-
expect_contains "the closed FIFO: a write fails with EPIPE" "Broken pipe" "$(cat "$TMP/cat.err")"

# full_status ARGS...: the exit status of the same command with its whole
# report read (into /dev/null): the verdict a cut report must keep.
full_status() {
	ht "$@" >/dev/null 2>&1
	echo $?
}

# check NAME EXPECTED ARGS...: closed_run ARGS exits EXPECTED (what the full
# run exits too) and prints nothing on stderr.
check() {
	name=$1 want=$2
	shift 2
	closed_run "$@"
	expect_eq "$name, reader gone: exit $want, nothing on stderr" "$want " "$rc $(cat "$TMP/err")"
	expect_eq "$name: the same status as with its report read whole" "$want" "$(full_status "$@")"
}

# shellcheck disable=SC2086
{
	# The Garage VM has two critical findings (audit-garage.sh): audit exits 1
	# whether its report is read or not; a pipe does not turn a finding green.
	check "audit -v" 1 --root "$T" $G -v audit
	check "audit --format json" 1 --root "$T" $G --format json audit
	check "audit --format prometheus" 1 --root "$T" $G --format prometheus audit
	# Exit 0 where nothing is at or above --fail-on: the home server has no
	# critical finding.
	check "audit --facts, --fail-on critical" 0 --facts "$FIXTURES/home-server/host.facts" \
		--fail-on critical -v audit
	# A fleet's audit has its own printer; its hosts have critical findings.
	check "audit of a fleet -v" 1 --facts "$TMP/fleet" -v audit
	check "audit of a fleet --format json" 1 --facts "$TMP/fleet" --format json audit
	check "audit of a fleet --format prometheus" 1 --facts "$TMP/fleet" --host-label \
		--format prometheus audit
	check "facts" 0 --root "$T" $G facts
	check "facts --format json" 0 --root "$T" $G --format json facts
	check "rules" 0 rules
	check "rules --all" 0 --all rules
	check "rules --format json" 0 --format json rules
	check "explain" 0 explain conntrack.max
	check "explain --format json" 0 --format json explain conntrack.max
	# plan exits as diff(1) does: 1, the Garage VM's tree needs changes.
	check "plan" 1 --root "$T" $G plan
	check "plan --format json" 1 --root "$T" $G --format json plan
	check "apply --dry-run" 1 --root "$T" $G --dry-run apply
	check "verify" 0 --root "$T" $G verify
	check "verify --format json" 0 --root "$T" $G --format json verify
	check "watch" 0 --root "$T" --interval 250ms --duration 500ms watch
	check "watch --format json" 0 --root "$T" --interval 250ms --duration 500ms --format json watch
}

# A whole pipeline as a user types it, its output (a fleet's verbose audit)
# far over a pipe's 64 KiB: head reads one line and exits, hosttune's later
# writes fail. Its own status through the braces, not head's.
size=$(ht --facts "$TMP/fleet" -v audit 2>/dev/null | wc -c)
expect_eq "the fleet's verbose report is over 64 KiB" yes "$([ "$size" -gt 65536 ] && echo yes || echo "no: $size")"
{ ht --facts "$TMP/fleet" -v audit 2>"$TMP/err"; echo $? >"$TMP/rc"; } | head -n 1 >"$TMP/first"
expect_eq "audit -v | head -n 1: hosttune exits 1 (findings), nothing on stderr" "1 " \
	"$(cat "$TMP/rc") $(cat "$TMP/err")"
expect_eq "audit -v | head -n 1: one line read" 1 "$(wc -l <"$TMP/first")"

# Any other write error stays one: a full disk is exit 3 with its message.
ht --root "$T" $G facts >/dev/full 2>"$TMP/err"
expect_eq "facts >/dev/full: exit 3, the error named" \
	"3 hosttune: writing the output: No space left on device" "$? $(cat "$TMP/err")"

# apply and revert changed the tree: a lost report is exit 5, said on stderr.
cp -a "$T" "$TMP/g"
# shellcheck disable=SC2086
closed_run --root "$TMP/g" $G apply
expect_eq "apply, reader gone: exit 5" 5 "$rc"
expect_contains "apply, reader gone: says the report was lost" \
	"apply is complete, but the report could not be written: Broken pipe" "$(cat "$TMP/err")"
closed_run --root "$TMP/g" revert
expect_eq "revert, reader gone: exit 5" 5 "$rc"
expect_contains "revert, reader gone: says the report was lost" \
	"but the report could not be written: Broken pipe" "$(cat "$TMP/err")"

finish
