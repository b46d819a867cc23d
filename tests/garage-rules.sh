#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Garage pre-flight rules (rules/garage.rules) over many hosts: the
# three Garage fixture hosts of tests/fixtures/verdict with their figures
# varied, and each finding's severity and recommendation worked out here,
# independently of the rules.
. "$(dirname "$0")/lib.sh"

V=$FIXTURES/verdict
VM=$V/garage-preflight-512.facts
PI=$V/garage-rpi32-lmdb.facts
HOME_=$V/garage-raid6-home.facts

# finding JSON RULE INSTANCE: "severity|current|recommended"
finding() {
	jq -r --arg r "$2" --arg i "$3" '.findings[] | select(.rule == $r and ((.instance // "") == $i))
		| "\(.severity)|\(.current)|\(.recommended)"' "$1"
}

audit() { # FACTS OUT [ARGS...]
	f=$1 o=$2
	shift 2
	ht --facts "$f" --profile garage --no-measure --format json "$@" audit >"$o"
}

# ---- db_engine against the word size ------------------------------------
# Critical: LMDB (or its binding's name, heed) under a 32-bit userland ->
# sqlite. Warning: sled (removed in v1.0) or a name Garage's documentation
# does not list -> lmdb (sqlite under a 32-bit userland); fjall (recent
# versions) is left alone. The
# userland is the binary's ELF class, else the kernel's pointer size.
for engine in lmdb heed sqlite fjall sled rocks LMDB; do
	for bits in 32 64 none4 none8; do
		case $bits in
		none4) b="garage.binary_bits=-" p=4 w=32 ;;
		none8) b="garage.binary_bits=-" p=8 w=64 ;;
		*) b="garage.binary_bits=$bits bits" p=8 w=$bits ;;
		esac
		vary "$PI" "$TMP/e.facts" "garage.db_engine=\"$engine\"" "$b" "kernel.pointer_size=$p bytes"
		audit "$TMP/e.facts" "$TMP/e.json"
		case $engine in
		lmdb | heed) if [ "$w" = 32 ]; then exp="critical|$engine|sqlite"; else exp="ok|$engine|$engine"; fi ;;
		sqlite | fjall) exp="ok|$engine|$engine" ;;
		*) if [ "$w" = 32 ]; then exp="warning|$engine|sqlite"; else exp="warning|$engine|lmdb"; fi ;;
		esac
		expect_eq "engine $engine, $w-bit userland ($bits)" "$exp" "$(finding "$TMP/e.json" garage.engine "")"
	done
done

# ---- block_ram_buffer_max against RAM ------------------------------------
# Warning above a quarter of MemTotal; recommended an eighth in whole MiB,
# never above what is set.
for mem in 503316480 1073741824 2147483648 8246337536; do
	for buf in 67108864 268435456 1073741824; do
		for bs in 1048576 104857600; do
			vary "$VM" "$TMP/r.facts" "mem.total=$mem bytes" \
				"garage.block_ram_buffer_max=$buf bytes" "garage.block_size=$bs bytes"
			audit "$TMP/r.facts" "$TMP/r.json"
			fit=$((mem / 8 / 1048576 * 1048576))
			if [ "$buf" -gt $((mem / 4)) ]; then
				rec=$buf
				[ "$fit" -lt "$rec" ] && rec=$fit
				exp="warning|$buf|$rec"
			else
				exp="ok|$buf|$buf"
			fi
			expect_eq "ram buffer $buf of $mem, block $bs" "$exp" \
				"$(finding "$TMP/r.json" garage.ram_buffer "")"
		done
	done
done
# The field VM: 256 MiB of 480 MiB = 53%; an eighth: floor(503316480 / 8 /
# 1048576) = 60 MiB, said as the line to write.
audit "$VM" "$TMP/r.json"
text=$(jq -r '.findings[] | select(.rule == "garage.ram_buffer") | .explanation + " " + .remedy' "$TMP/r.json")
expect_contains "ram buffer: the share of RAM" "53% of the 480 MiB of RAM" "$text"
expect_contains "ram buffer: the line to write" 'block_ram_buffer_max = "60MiB"' "$text"

# A buffer far beyond RAM (2^63 - 1 bytes) is a figure, not an overflow of
# the rules (jq reads numbers as doubles: the severity and the recommendation).
vary "$VM" "$TMP/r.facts" "garage.block_ram_buffer_max=9223372036854775807 bytes"
audit "$TMP/r.facts" "$TMP/r.json"
expect_eq "ram buffer of 2^63 - 1: warning, an eighth of RAM" "warning 62914560" \
	"$(jq -r '.findings[] | select(.rule == "garage.ram_buffer") | "\(.severity) \(.recommended)"' "$TMP/r.json")"

# ---- block_size against RAM ----------------------------------------------
# A request in flight holds three blocks (hosttune's count of Garage's "a
# few"): a quarter of RAM holds mem / 12 / block requests. Below 16: warning,
# recommended the largest whole-MiB block (at least 1 MiB) that keeps 16:
# floor(mem / 4 / 48 / MiB) MiB, never above what is set.
for mem in 503316480 2147483648 8246337536; do
	for bs in 1048576 10485760 104857600 1073741824; do
		vary "$VM" "$TMP/s.facts" "mem.total=$mem bytes" "garage.block_size=$bs bytes"
		audit "$TMP/s.facts" "$TMP/s.json"
		req=$((mem / 12 / bs)) # requests in flight, whole
		fit=$((mem / 4 / 48 / 1048576))
		[ "$fit" -lt 1 ] && fit=1
		fit=$((fit * 1048576))
		if [ "$req" -lt 16 ]; then
			rec=$bs
			[ "$fit" -lt "$rec" ] && rec=$fit
			exp="warning|$bs|$rec"
		else
			exp="ok|$bs|$bs"
		fi
		expect_eq "block size $bs against $mem of RAM ($req requests)" "$exp" \
			"$(finding "$TMP/s.json" garage.block_size_ram "")"
	done
done

# ---- block_size against the link -----------------------------------------
# Info when a physical link runs at 1000 Mb/s or more, blocks are below
# 10 MB ("10M" = 10000000 is Garage's own spelling of the advice) and RAM
# holds 16 requests of 10 MiB blocks (the home server's 8 GiB:
# floor(8246337536 / 4 / 48 / MiB) = 40 MiB); recommended 10 MiB then.
for speed in none 100 1000 10000; do
	for bs in 1048576 9999999 10000000 10485760 16777216; do
		if [ "$speed" = none ]; then s="nic.max_speed=-"; else s="nic.max_speed=$speed Mb/s"; fi
		vary "$HOME_" "$TMP/b.facts" "$s" "garage.block_size=$bs bytes"
		audit "$TMP/b.facts" "$TMP/b.json"
		if [ "$speed" != none ] && [ "$speed" -ge 1000 ] && [ "$bs" -lt 10000000 ]; then
			rec=10485760 sev=info
		else
			rec=$bs sev=ok
		fi
		expect_eq "block size $bs, link $speed" "$sev|$bs|$rec" \
			"$(finding "$TMP/b.json" garage.block_size_link "")"
	done
done

# ---- the data filesystem -------------------------------------------------
# Critical in RAM (tmpfs, ramfs) or with fewer than one inode in ten free;
# warning on ext2/3/4 (stat -f names 0xEF53 "ext2/ext3"); recommended xfs
# for those.
for fs in ext4 ext2/ext3 xfs btrfs tmpfs; do
	for ifree in 1700000 189999 190000 0; do
		vary "$VM" "$TMP/d.facts" "storage.data.fs=\"$fs\"" "storage.data.inodes=1900000 inodes" \
			"storage.data.inodes_free=$ifree inodes"
		audit "$TMP/d.facts" "$TMP/d.json"
		rec=$fs
		case $fs in ext*) ext=1 rec=xfs ;; *) ext=0 ;; esac
		[ "$fs" = tmpfs ] && rec=xfs
		if [ "$fs" = tmpfs ] || [ $((ifree * 10)) -lt 1900000 ]; then sev=critical
		elif [ $ext = 1 ]; then sev=warning
		else sev=ok; fi
		expect_eq "data on $fs, $ifree of 1900000 inodes free" "$sev|$fs|$rec" \
			"$(finding "$TMP/d.json" garage.data_fs data)"
	done
done
# 31000000000 / 1900000 = 16315.8 -> 16316 bytes an inode, in the text (not a
# whole number of KiB, so in bytes).
audit "$VM" "$TMP/d.json"
expect_contains "data on ext4: bytes per inode" "one per 16316 bytes" \
	"$(jq -r '.findings[] | select(.rule == "garage.data_fs") | .explanation' "$TMP/d.json")"
# A filesystem that allocates inodes on demand (btrfs: f_files 0) is never short of them.
vary "$VM" "$TMP/d.facts" 'storage.data.fs="btrfs"' "storage.data.inodes=0 inodes" \
	"storage.data.inodes_free=0 inodes"
audit "$TMP/d.facts" "$TMP/d.json"
expect_eq "data on btrfs, inodes on demand" "ok|btrfs|btrfs" "$(finding "$TMP/d.json" garage.data_fs data)"

# ---- a [[data_dir]] capacity against its filesystem ------------------------
for cap in 2000000000000 31000000000 31000000001; do
	vary "$VM" "$TMP/c.facts" "storage.data.capacity=$cap bytes"
	audit "$TMP/c.facts" "$TMP/c.json"
	if [ "$cap" -gt 31000000000 ]; then exp="warning|$cap|31000000000"; else exp="ok|$cap|$cap"; fi
	expect_eq "capacity $cap on a 31000000000-byte filesystem" "$exp" \
		"$(finding "$TMP/c.json" garage.data_capacity data)"
done
expect_eq "no capacity (a single data_dir): no finding" "" "$(finding "$TMP/r.json" garage.data_capacity data)"

# ---- metadata: in RAM, snapshots, a spinning disk --------------------------
for fs in ext4 xfs btrfs zfs tmpfs; do
	for snap in none 6h; do
		for engine in lmdb sqlite; do
			if [ "$snap" = none ]; then sv="garage.metadata_auto_snapshot_interval=-"
			else sv="garage.metadata_auto_snapshot_interval=\"$snap\""; fi
			vary "$VM" "$TMP/m.facts" "storage.metadata.fs=\"$fs\"" "$sv" "garage.db_engine=\"$engine\""
			audit "$TMP/m.facts" "$TMP/m.json"
			if [ "$fs" = tmpfs ]; then vol="critical|tmpfs|a disk-backed filesystem"
			else vol="ok|$fs|$fs"; fi
			expect_eq "metadata on $fs: in RAM?" "$vol" "$(finding "$TMP/m.json" garage.metadata_volatile metadata)"
			if [ "$snap" != none ]; then exp="ok|$snap|$snap"
			elif [ "$fs" = btrfs ] || [ "$fs" = zfs ]; then exp="ok|filesystem snapshots|filesystem snapshots"
			elif [ "$engine" = lmdb ]; then exp="info|none|6h"
			else exp="ok|none|none"; fi
			expect_eq "metadata snapshots: $fs, interval $snap, $engine" "$exp" \
				"$(finding "$TMP/m.json" garage.metadata_snapshots metadata)"
		done
	done
done
for rot in true false -; do
	vary "$PI" "$TMP/m.facts" "storage.metadata.rotational=$rot"
	audit "$TMP/m.facts" "$TMP/m.json"
	case $rot in
	true) exp="warning|rotational|solid-state" ;;
	false) exp="ok|solid-state|solid-state" ;;
	-) exp="" ;; # virtio-blk: no rotation to trust, no finding
	esac
	expect_eq "metadata rotational $rot" "$exp" "$(finding "$TMP/m.json" garage.metadata_disk metadata)"
done

# 128 MiB: even 1 MiB blocks leave 134217728 / 12 / 1048576 = 10 requests:
# a warning whose remedy is RAM (16 x 12 x 1 MiB = 192 MiB), not a block size.
vary "$VM" "$TMP/s.facts" "mem.total=134217728 bytes"
audit "$TMP/s.facts" "$TMP/s.json"
expect_eq "128 MiB, 1 MiB blocks: warning" "warning|1048576|1048576" "$(finding "$TMP/s.json" garage.block_size_ram "")"
expect_contains "128 MiB: the remedy is RAM" "give the host more RAM (at least 192 MiB" \
	"$(jq -r '.findings[] | select(.rule == "garage.block_size_ram") | .remedy' "$TMP/s.json")"

# On the 480 MiB VM 10 MiB blocks do not fit (floor(503316480 / 4 / 48 /
# MiB) = 2 MiB): a fast link recommends nothing there.
vary "$VM" "$TMP/b.facts" "nic.max_speed=10000 Mb/s"
audit "$TMP/b.facts" "$TMP/b.json"
expect_eq "fast link, 480 MiB: no 10 MiB blocks" "ok|1048576|1048576" \
	"$(finding "$TMP/b.json" garage.block_size_link "")"

# ---- the measured fsync rate ---------------------------------------------
# Warning when metadata_fsync is on with LMDB (an fdatasync a commit, and
# Garage syncs several times a PutObject: hosttune counts three) and
# rate / 3 is below workload.object_rate.
for rate in 5 599 600 602 5000; do
	for fsync in true false; do
		for engine in lmdb sqlite; do
			for obj in 0 200; do
				vary "$HOME_" "$TMP/f.facts" "storage.metadata.fsync_rate=$rate fsyncs/s" \
					"garage.metadata_fsync=$fsync" "garage.db_engine=\"$engine\""
				audit "$TMP/f.facts" "$TMP/f.json" --set "workload.object_rate=$obj"
				sev=ok
				[ $fsync = true ] && [ $engine = lmdb ] && [ "$obj" -gt 0 ] && [ $((rate / 3)) -lt "$obj" ] && sev=warning
				expect_eq "fsync $rate/s, metadata_fsync $fsync, $engine, $obj objects/s" "$sev|$rate|$rate" \
					"$(finding "$TMP/f.json" garage.fsync metadata)"
			done
		done
	done
done
audit "$HOME_" "$TMP/f.json"
expect_contains "fsync: the ceiling against the profile's rate" \
	"takes at most 5 / 3 = 1.7 objects a second. That is below the profile's 200" \
	"$(jq -r '.findings[] | select(.rule == "garage.fsync") | .explanation' "$TMP/f.json")"
vary "$HOME_" "$TMP/f.facts" "storage.metadata.fsync_rate=-"
audit "$TMP/f.facts" "$TMP/f.json"
expect_eq "fsync not measured: not applicable" "n/a|null|null" "$(finding "$TMP/f.json" garage.fsync metadata)"

# ---- the unit's LimitNOFILE, before Garage runs ----------------------------
# Garage running (process.garage.pid): process.limit_nofile judges it, no
# finding here. Not running: the unit's soft limit (systemd's 1024 when it
# sets none) against 42000: warning below, info without a unit.
for unit in yes no; do
	for nofile in - 1024 42000 65536; do
		[ $unit = no ] && [ "$nofile" != - ] && continue
		if [ $unit = yes ]; then u='garage.unit="/etc/systemd/system/garage.service"'; else u="garage.unit=-"; fi
		if [ "$nofile" = - ]; then n="garage.unit.nofile=-"; cur=1024; else n="garage.unit.nofile=$nofile descriptors"; cur=$nofile; fi
		vary "$VM" "$TMP/n.facts" "$u" "$n"
		audit "$TMP/n.facts" "$TMP/n.json"
		rec=$cur
		[ "$rec" -lt 42000 ] && rec=42000
		if [ $unit = no ]; then sev=info
		elif [ "$cur" -lt 42000 ]; then sev=warning
		else sev=ok; fi
		expect_eq "unit $unit, LimitNOFILE $nofile" "$sev|$cur|$rec" "$(finding "$TMP/n.json" garage.unit_nofile "")"
	done
done
audit "$PI" "$TMP/n.json"
expect_eq "garage runs: the unit rule steps aside" "" "$(finding "$TMP/n.json" garage.unit_nofile "")"

# ---- Garage's ports --------------------------------------------------------
# 3900 held by another process: critical; by garage: ok; by a process
# hosttune cannot see while garage does not run: warning. A port Garage
# does not use: no finding.
for owner in nginx garage unseen; do
	case $owner in
	unseen) o1="listener.3900.process=-" o2="listener.3900.pid=-" ;;
	*) o1="listener.3900.process=\"$owner\"" o2="listener.3900.pid=900" ;;
	esac
	vary "$VM" "$TMP/p.facts" 'listener.list="22 3900"' "listener.3900.backlog=511 entries" \
		"listener.3900.queue=0 entries" "$o1" "$o2"
	audit "$TMP/p.facts" "$TMP/p.json"
	case $owner in
	nginx) exp="critical|nginx|garage" ;;
	garage) exp="ok|garage|garage" ;;
	unseen) exp="warning|unknown|garage" ;;
	esac
	expect_eq "port 3900 held by $owner" "$exp" "$(finding "$TMP/p.json" garage.ports 3900)"
done
expect_eq "port 22: not Garage's, no finding" "" "$(finding "$TMP/p.json" garage.ports 22)"
expect_contains "listen.backlog names Garage's endpoint" "Port 3900 (Garage's S3 API: " \
	"$(jq -r '.findings[] | select(.rule == "listen.backlog" and .instance == "3900") | .explanation' "$TMP/p.json")"
vary "$VM" "$TMP/p.facts" 'listener.list="22 3900"' "listener.3900.backlog=511 entries" \
	"listener.3900.queue=0 entries" 'listener.3900.process="nginx"' "garage.s3_port=9000"
audit "$TMP/p.facts" "$TMP/p.json"
expect_eq "S3 API moved to 9000: 3900 is free for others" "" "$(finding "$TMP/p.json" garage.ports 3900)"

# Before deployment only 3900 and 3901 are Garage's: [s3_web] and [admin]
# are bound only when garage.toml configures them (the fixture has them
# unavailable), so a listener on 3903 is nobody's business here.
vary "$VM" "$TMP/p.facts" 'listener.list="22 3903"' "listener.3903.backlog=511 entries" \
	"listener.3903.queue=0 entries" 'listener.3903.process="nginx"' "listener.3903.pid=900"
audit "$TMP/p.facts" "$TMP/p.json"
expect_eq "3903 before any garage.toml: not Garage's" "" "$(finding "$TMP/p.json" garage.ports 3903)"

# ---- a read-only mount -------------------------------------------------------
# Critical for metadata and a writable data directory; a read_only
# [[data_dir]] entry is meant to be read only: no finding.
for role in metadata data; do
	for ro in true false; do
		vary "$VM" "$TMP/o.facts" "storage.$role.read_only_mount=$ro"
		audit "$TMP/o.facts" "$TMP/o.json"
		if [ $ro = true ]; then exp="critical|read-only|read-write"; else exp="ok|read-write|read-write"; fi
		expect_eq "$role on a read-only mount: $ro" "$exp" "$(finding "$TMP/o.json" garage.read_only_mount $role)"
	done
done
vary "$VM" "$TMP/o.facts" "storage.data.read_only_mount=true" "storage.data.read_only=true"
audit "$TMP/o.facts" "$TMP/o.json"
expect_eq "a read_only [[data_dir]] on a read-only mount: no finding" "" \
	"$(finding "$TMP/o.json" garage.read_only_mount data)"
expect_eq "a read_only [[data_dir]] on ext4: not judged" "" "$(finding "$TMP/o.json" garage.data_fs data)"

# ---- not a Garage host: no Garage finding at all ---------------------------
vary "$VM" "$TMP/x.facts" "garage.checked=-"
ht --facts "$TMP/x.facts" --no-measure --format json audit >"$TMP/x.json"
expect_eq "garage.checked unavailable: no garage.* finding" "0" \
	"$(jq '[.findings[] | select(.rule | startswith("garage."))] | length' "$TMP/x.json")"
# The other way round, the three field hosts give every Garage finding
# they should (their figures are in each file's comment).
audit "$VM" "$TMP/v.json"
expect_eq "field VM: the Garage findings" \
	"garage.data_fs:warning garage.metadata_snapshots:info garage.ram_buffer:warning garage.unit_nofile:info" \
	"$(jq -r '[.findings[] | select((.rule | startswith("garage.")) and .severity != "ok") | "\(.rule):\(.severity)"] | sort | join(" ")' "$TMP/v.json")"
audit "$PI" "$TMP/v.json"
expect_eq "Raspberry Pi: the Garage findings" \
	"garage.data_fs:warning garage.engine:critical garage.fsync:warning" \
	"$(jq -r '[.findings[] | select((.rule | startswith("garage.")) and .severity != "ok") | "\(.rule):\(.severity)"] | sort | join(" ")' "$TMP/v.json")"
audit "$HOME_" "$TMP/v.json"
expect_eq "RAID-6 home server: the Garage findings" \
	"garage.block_size_link:info garage.fsync:warning garage.metadata_disk:warning garage.metadata_snapshots:info" \
	"$(jq -r '[.findings[] | select((.rule | startswith("garage.")) and .severity != "ok") | "\(.rule):\(.severity)"] | sort | join(" ")' "$TMP/v.json")"

finish
