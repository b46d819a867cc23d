#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Hosts from the field (../shared/fixtures/README.md), encoded as facts files
# in tests/fixtures/*/host.facts, and the findings their owners' figures call for.
. "$(dirname "$0")/lib.sh"

# audit NAME PROFILE: JSON in $TMP/NAME.json
audit() {
	ht --facts "$FIXTURES/$1/host.facts" --profile "$2" --format json audit >"$TMP/$1.json"
	rc=$?
	[ $rc -le 1 ] || not_ok "$1: audit exits $rc"
}
# sev NAME RULE [INSTANCE]
field() {
	jget "$TMP/$1.json" ".findings[] | select(.rule == \"$2\" and .instance == ${4:-null}) | $3"
}

# Registry VM: aes flag, AES-GCM 406 MB/s against ChaCha20 1530 MB/s: the
# ratio 406 / 1530 = 0.27 is a software speed (hardware runs ~1.3x ChaCha20).
audit registry-vm registry
expect_eq "registry VM: AES warning" warning "$(field registry-vm cpu.aes .severity)"
expect_contains "registry VM: ratio shown" "a ratio of 0.27" "$(field registry-vm cpu.aes .explanation)"
expect_contains "registry VM: advice" "CPU type host" "$(field registry-vm cpu.aes .explanation)"
# 8 vCPUs, virtio-net 1 combined queue of 8: min(8, 8) = 8 -> warning, fix to 8.
expect_eq "registry VM: queues warning" warning "$(field registry-vm nic.queues .severity '"eth0"')"
expect_eq "registry VM: queues 1 now" 1 "$(field registry-vm nic.queues .current '"eth0"')"
expect_eq "registry VM: queues fix to 8" 8 "$(field registry-vm nic.queues .recommended '"eth0"')"
expect_eq "registry VM: live fix" \
	"ethtool netlink CHANNELS_SET eth0 combined 8 (ethtool -L eth0 combined 8)" \
	"$(field registry-vm nic.queues .fix.live '"eth0"')"
expect_eq "registry VM: persistent fix" "/etc/systemd/network/90-hosttune-eth0.link" \
	"$(field registry-vm nic.queues .fix.file '"eth0"')"
expect_eq "registry VM: no hypervisor advice (the driver allows 8)" "" \
	"$(field registry-vm nic.queues_hypervisor .severity '"eth0"')"
# virtio reports no speed: no link-speed finding.
expect_eq "registry VM: no link speed finding" "" "$(field registry-vm nic.link_speed .severity '"eth0"')"

# The same VM when the hypervisor offers one queue: max 1 on 8 vCPUs.
sed -e 's/^nic.eth0.channels.max.combined = 8/nic.eth0.channels.max.combined = 1/' \
	"$FIXTURES/registry-vm/host.facts" >"$TMP/one-queue.facts"
ht --facts "$TMP/one-queue.facts" --profile registry --format json audit >"$TMP/oneq.json"
expect_eq "one-queue VM: hypervisor advice" warning \
	"$(jget "$TMP/oneq.json" '.findings[] | select(.rule == "nic.queues_hypervisor") | .severity')"
expect_contains "one-queue VM: names Proxmox queues=" "Proxmox queues=8" \
	"$(jget "$TMP/oneq.json" '.findings[] | select(.rule == "nic.queues_hypervisor") | .explanation')"
# min(8, 1) = 1 = what it has: nothing to set inside the guest.
expect_eq "one-queue VM: channels ok" ok \
	"$(jget "$TMP/oneq.json" '.findings[] | select(.rule == "nic.queues") | .severity')"

# Worker with a 1GbE NIC: 1000 / 8 x 1448 / 1538 = 117.7 -> 117 MB/s of payload.
audit registry-worker registry
expect_eq "worker: link speed warning" warning "$(field registry-worker nic.link_speed .severity '"eno1"')"
expect_contains "worker: byte-rate ceiling" "= 117 MB/s of TCP payload" \
	"$(field registry-worker nic.link_speed .explanation '"eno1"')"
expect_eq "worker: AES in hardware is ok" ok "$(field registry-worker cpu.aes .severity)"
# The default profile is not a storage profile: no link-speed finding.
ht --facts "$FIXTURES/registry-worker/host.facts" --format json audit >"$TMP/worker-default.json"
expect_eq "worker, default profile: no link-speed finding" "" \
	"$(jget "$TMP/worker-default.json" '.findings[] | select(.rule == "nic.link_speed") | .severity')"

# Home server without AES-NI: 27.7 vs 172.5 MB/s, no flag: info only.
audit home-server default
expect_eq "home server: info" info "$(field home-server cpu.aes .severity)"
expect_contains "home server: ChaCha20 is right" "ChaCha20-Poly1305 is the right cipher here" \
	"$(field home-server cpu.aes .explanation)"
# 27.7 / 172.5 = 0.16
expect_contains "home server: ratio" "a ratio of 0.16" "$(field home-server cpu.aes .explanation)"
expect_eq "home server: worst is info" info "$(jget "$TMP/home-server.json" .summary.worst)"

# Proxmox x86-64-v3 guest: aes without pclmulqdq, 197 MB/s: warning naming it.
audit proxmox-v3 default
expect_eq "proxmox v3: warning" warning "$(field proxmox-v3 cpu.aes .severity)"
expect_contains "proxmox v3: names pclmulqdq" "but not pclmulqdq" "$(field proxmox-v3 cpu.aes .explanation)"
# Without a measurement the missing pclmulqdq alone gives the warning.
grep -v '^cpu.aes.hw\|^cpu.aes.gcm\|^cpu.chacha' "$FIXTURES/proxmox-v3/host.facts" >"$TMP/v3-nomeasure.facts"
ht --facts "$TMP/v3-nomeasure.facts" --format json audit >"$TMP/v3n.json"
expect_eq "proxmox v3 unmeasured: still a warning" warning \
	"$(jget "$TMP/v3n.json" '.findings[] | select(.rule == "cpu.aes") | .severity')"

finish
