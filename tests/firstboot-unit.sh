#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The first-boot unit as built (templates/hosttune-firstboot.service): systemd
# loads it without a warning and its start transaction, with this host's
# systemd units, has no ordering cycle (`systemd-analyze verify`, which a
# copy with a cycle added must fail, so that the check can fail); and it has
# the ordering hosttune(8) FIRST BOOT describes.
. "$(dirname "$0")/lib.sh"

: "${HT_BUILD_TESTS_DIR:=$(dirname "$HOSTTUNE")/../tests}"
UNIT=$HT_BUILD_TESTS_DIR/../templates/hosttune-firstboot.service

if ! command -v systemd-analyze >/dev/null 2>&1 ||
	{ [ ! -f /lib/systemd/system/sysinit.target ] && [ ! -f /usr/lib/systemd/system/sysinit.target ]; }; then
	echo "# SKIP systemd-analyze or systemd's units are not installed"
	exit 77
fi
if [ ! -f "$UNIT" ]; then
	not_ok "the unit is built" "missing: $UNIT"
	finish
	exit 1
fi

# verify checks that ExecStart's program exists: the built one stands for the
# installed one. The man page is not installed yet: --man=no.
sed "s|^ExecStart=[^ ]*/hosttune |ExecStart=$HOSTTUNE |" "$UNIT" >"$TMP/hosttune-firstboot.service"
expect_contains "ExecStart runs hosttune apply" "ExecStart=$HOSTTUNE --no-measure \$HOSTTUNE_ARGS apply" \
	"$(cat "$TMP/hosttune-firstboot.service")"
(cd "$TMP" && systemd-analyze verify --man=no ./hosttune-firstboot.service) >"$TMP/out" 2>&1
expect_eq "systemd-analyze verify: exit 0" 0 $?
expect_eq "systemd-analyze verify: no message" "" "$(cat "$TMP/out")"

# The control: the same unit ordered before sysinit.target, which its default
# dependencies order it after.
mkdir "$TMP/cycle"
sed 's|^\[Unit\]$|[Unit]\nBefore=sysinit.target|' "$TMP/hosttune-firstboot.service" \
	>"$TMP/cycle/hosttune-firstboot.service"
(cd "$TMP/cycle" && systemd-analyze verify --man=no ./hosttune-firstboot.service) >"$TMP/out" 2>&1
rc=$?
expect_eq "a cycle added: verify fails" 1 "$([ "$rc" -ne 0 ] && echo 1 || echo 0)"
expect_contains "a cycle added: verify names it" "ordering cycle" "$(cat "$TMP/out")"

# The unit's own lines (all of them: After= and Before= may each appear twice).
values() {
	sed -n "s/^$1=//p" "$TMP/hosttune-firstboot.service" | tr ' ' '\n' | sort | tr '\n' ' '
}
expect_eq "ConditionFirstBoot" "yes " "$(values ConditionFirstBoot)"
expect_eq "After" "systemd-modules-load.service systemd-sysctl.service systemd-udev-trigger.service " \
	"$(values After)"
expect_eq "Before" "first-boot-complete.target network-pre.target " "$(values Before)"
expect_eq "Wants" "first-boot-complete.target network-pre.target " "$(values Wants)"
expect_eq "default dependencies (after sysinit.target, basic.target)" "" "$(values DefaultDependencies)"
expect_eq "WantedBy" "multi-user.target " "$(values WantedBy)"
finish
