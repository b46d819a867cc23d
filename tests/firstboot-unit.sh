#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The first-boot unit as built (templates/hosttune-firstboot.service): systemd
# loads it without a warning and its start transaction, with this host's
# systemd units, has no ordering cycle (`systemd-analyze verify`), also with
# an early unit such as cloud-init's beside it (where the same unit with
# default dependencies has one, so that the check can fail); and it has the
# ordering hosttune(8) FIRST BOOT describes.
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

# A boot with an early unit that runs after network-pre.target and before
# sysinit.target, as Debian 12's cloud-init.service does: no ordering cycle.
# The control: the same unit with systemd's default dependencies (after
# sysinit.target and basic.target, as it was once) makes one, which systemd
# breaks by deleting a job.
# boot DIR UNIT: systemd-analyze verify of a target that wants UNIT (as
# hosttune-firstboot.service), the early unit and sysinit.target; its output.
boot() {
	mkdir "$1"
	cp "$2" "$1/hosttune-firstboot.service"
	printf '%s\n' '[Unit]' 'DefaultDependencies=no' 'After=network-pre.target' 'Before=sysinit.target' \
		'[Service]' 'Type=oneshot' 'ExecStart=/bin/true' >"$1/early-net.service"
	printf '%s\n' '[Unit]' 'Wants=early-net.service hosttune-firstboot.service sysinit.target' \
		>"$1/boot.target"
	SYSTEMD_UNIT_PATH="$1:" systemd-analyze verify --man=no "$1/boot.target" 2>&1
}
out=$(boot "$TMP/early" "$TMP/hosttune-firstboot.service")
expect_eq "with an early unit after network-pre.target: no ordering cycle" "" "$out"
grep -v '^DefaultDependencies=\|^Conflicts=\|^Before=shutdown\|^After=local-fs' \
	"$TMP/hosttune-firstboot.service" >"$TMP/defaults.service"
out=$(boot "$TMP/control" "$TMP/defaults.service")
expect_contains "the control (default dependencies): an ordering cycle" "ordering cycle" "$out"

# The unit's own lines (all of them: After= and Before= may each appear twice).
values() {
	sed -n "s/^$1=//p" "$TMP/hosttune-firstboot.service" | tr ' ' '\n' | sort | tr '\n' ' '
}
expect_eq "ConditionFirstBoot" "yes " "$(values ConditionFirstBoot)"
expect_eq "After" "local-fs.target systemd-modules-load.service systemd-sysctl.service systemd-udev-trigger.service " \
	"$(values After)"
expect_eq "Before" "first-boot-complete.target network-pre.target shutdown.target " "$(values Before)"
expect_eq "Wants" "first-boot-complete.target network-pre.target " "$(values Wants)"
expect_eq "no default dependencies" "no " "$(values DefaultDependencies)"
expect_eq "Conflicts" "shutdown.target " "$(values Conflicts)"
expect_eq "WantedBy" "multi-user.target " "$(values WantedBy)"
finish
