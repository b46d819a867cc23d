#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The storage collector (ht_collect_storage, through tests/storage-probe) on
# this host, against what other tools say: the filesystem type against
# findmnt(8), the f_type name against GNU stat -f -c %T, sizes and inodes
# against stat -f, the block device, the disks below it and
# queue/rotational against a walk of /sys written here in shell. Then the
# fsync measurement in a scratch directory (it runs, gives a positive rate,
# leaves nothing; the rate is printed, never asserted), and, as root, in a
# private mount namespace: a tmpfs of known size and a read-only bind mount
# (EROFS, nothing left). Nothing outside $TMP is written.
. "$(dirname "$0")/lib.sh"

: "${HT_BUILD_TESTS_DIR:=$HT_TESTS_DIR}"
PROBE=$HT_BUILD_TESTS_DIR/storage-probe
if [ ! -x "$PROBE" ]; then
	echo "# SKIP $PROBE not built"
	exit 77
fi
for tool in findmnt stat; do
	command -v $tool >/dev/null || { echo "# SKIP $tool not installed"; exit 77; }
done

# fact FILE NAME: the value of NAME in facts file FILE ("ext4" without quotes;
# "unavailable ENODEV" for an unavailable one; empty when absent)
fact() {
	awk -v n="$2" '$1 == n && $2 == "=" {
		sub(/^[^=]*= /, "")
		if ($0 ~ /^unavailable /) { print "unavailable " $2; exit }
		if ($0 ~ /^"/) { sub(/^"/, ""); sub(/".*$/, ""); print; exit }
		print $1; exit
	}' "$1"
}

# leaves DEVDIR: the disks below a sysfs block device directory, one a line
leaves() (
	d=$(readlink -f "$1")
	[ -e "$d/partition" ] && d=$(dirname "$d")
	found=0
	for s in "$d"/slaves/*; do
		[ -e "$s" ] || continue
		found=1
		leaves "$s"
	done
	[ "$found" = 1 ] || basename "$d"
)

# in_range DESC LOW HIGH VALUE SLACK: LOW - SLACK <= VALUE <= HIGH + SLACK
in_range() {
	if awk -v lo="$2" -v hi="$3" -v v="$4" -v s="$5" 'BEGIN {
		if (lo > hi) { t = lo; lo = hi; hi = t }
		exit !(v >= lo - s && v <= hi + s) }'; then
		ok "$1"
	else
		not_ok "$1" "expected between $2 and $3 (+/- $5)" "got:     $4"
	fi
}

# check_dir DIR LABEL: every storage fact of DIR against stat, findmnt and sysfs
check_dir() {
	dir=$1
	label=$2
	out=$TMP/$label.facts
	before=$(stat -f -c '%a %S %d' "$dir")
	"$PROBE" collect / d data "$dir" no-measure >"$out" 2>"$TMP/$label.err"
	expect_eq "$label: the probe exits 0, nothing on stderr" "0:" "$?:$(cat "$TMP/$label.err")"
	after=$(stat -f -c '%a %S %d' "$dir")

	expect_eq "$label: exists" "true" "$(fact "$out" storage.d.exists)"
	expect_eq "$label: probed" "$dir" "$(fact "$out" storage.d.probed)"
	# findmnt -T lists each mount stacked on that place: the last is on top.
	expect_eq "$label: fs is findmnt's FSTYPE" "$(findmnt -n -o FSTYPE -T "$dir" | tail -n 1)" \
		"$(fact "$out" storage.d.fs)"
	expect_eq "$label: the f_type name is stat -f -c %T's" "$(stat -f -c %T "$dir")" \
		"$("$PROBE" fstype "$dir")"
	expect_eq "$label: size = stat -f %b x %S" "$(stat -f -c '%b %S' "$dir" | awk '{ printf "%.0f", $1 * $2 }')" \
		"$(fact "$out" storage.d.size)"
	expect_eq "$label: inodes = stat -f %c" "$(stat -f -c %c "$dir")" "$(fact "$out" storage.d.inodes)"
	# findmnt's VFS options of the mount on top: "ro" first when read-only.
	case ,$(findmnt -n -o VFS-OPTIONS -T "$dir" | tail -n 1), in
	*,ro,*) ro=true ;;
	*) ro=false ;;
	esac
	expect_eq "$label: read_only_mount is findmnt's ro" "$ro" \
		"$(fact "$out" storage.d.read_only_mount)"
	# Other writers (a build beside the test) move these: between the two
	# stat -f calls around the probe, with 64 MiB and 1000 inodes of slack.
	in_range "$label: free = stat -f %a x %S" \
		"$(echo "$before" | awk '{ printf "%.0f", $1 * $2 }')" \
		"$(echo "$after" | awk '{ printf "%.0f", $1 * $2 }')" \
		"$(fact "$out" storage.d.free)" 67108864
	in_range "$label: inodes_free = stat -f %d" "${before##* }" "${after##* }" \
		"$(fact "$out" storage.d.inodes_free)" 1000

	majmin=$(stat -c '%Hd:%Ld' "$dir")
	case $majmin in
	0:*)
		expect_eq "$label: no block device for $majmin" "unavailable ENODEV" \
			"$(fact "$out" storage.d.device)"
		expect_eq "$label: no disks for $majmin" "unavailable ENODEV" \
			"$(fact "$out" storage.d.devices)"
		return ;;
	esac
	if [ ! -e "/sys/dev/block/$majmin" ]; then
		echo "# /sys/dev/block/$majmin absent: device facts not compared"
		return
	fi
	expect_eq "$label: device is /sys/dev/block/$majmin's" \
		"$(basename "$(readlink "/sys/dev/block/$majmin")")" "$(fact "$out" storage.d.device)"
	disks=$(leaves "/sys/dev/block/$majmin" | sort -u | tr '\n' ' ')
	disks=${disks% }
	expect_eq "$label: devices are the disks below it" "$disks" "$(fact "$out" storage.d.devices)"
	# A spinning disk decides; else a paravirtual one (virtio_blk, Xen's
	# vbd: no rotation to report) or a loop device (file-backed: its flag
	# says nothing of the disk under the file) leaves it unknown; else false.
	rot=false virt=
	for disk in $disks; do
		case $disk in loop[0-9]*) virt=$disk; continue ;; esac
		drv=$(basename "$(readlink -f "/sys/block/$disk/device/driver" 2>/dev/null)" 2>/dev/null)
		case $drv in virtio_blk | vbd) virt=$disk; continue ;; esac
		[ "$(cat "/sys/block/$disk/queue/rotational" 2>/dev/null)" = 1 ] && rot=true
	done
	[ $rot = false ] && [ -n "$virt" ] && rot="unavailable ENODATA"
	expect_eq "$label: rotational from /sys/block/{$disks}/queue/rotational" "$rot" \
		"$(fact "$out" storage.d.rotational)"
	echo "# $label: $(fact "$out" storage.d.fs) on $(fact "$out" storage.d.device) ($disks), rotational $rot"
}

check_dir / root
mkdir "$TMP/scratch"
check_dir "$TMP/scratch" tmpdir
[ -d /dev/shm ] && check_dir /dev/shm devshm

# Before deployment: the nearest existing parent.
"$PROBE" collect / m metadata "$TMP/scratch/garage/meta" no-measure >"$TMP/missing.facts"
expect_eq "a missing directory: exists false" "false" "$(fact "$TMP/missing.facts" storage.m.exists)"
expect_eq "a missing directory: its parent probed" "$TMP/scratch" "$(fact "$TMP/missing.facts" storage.m.probed)"
expect_eq "--no-measure: fsync_rate unavailable" "unavailable ECANCELED" \
	"$(fact "$TMP/missing.facts" storage.m.fsync_rate)"

# The measurement, in a scratch directory.
mkdir "$TMP/fsync"
line=$("$PROBE" fsync "$TMP/fsync" 300 10000)
rounds=$(echo "$line" | sed -n 's/.*rounds=\([0-9]*\).*/\1/p')
rate=$(echo "$line" | sed -n 's/.*rate=\([0-9.]*\).*/\1/p')
expect_eq "ht_fsync_rate returns 0" "rc=0" "${line%% *}"
in_range "at least one round, at most 10000" 1 10000 "${rounds:-0}" 0
if awk -v r="${rate:-0}" 'BEGIN { exit !(r > 0) }'; then ok "a positive rate"; else not_ok "a positive rate" "got: $line"; fi
expect_eq "nothing left in the directory" "" "$(ls -A "$TMP/fsync")"
line=$("$PROBE" fsync "$TMP/fsync" 60000 3)
rounds=$(echo "$line" | sed -n 's/.*rounds=\([0-9]*\).*/\1/p')
in_range "max_rounds 3: at most 3 rounds" 1 3 "${rounds:-0}" 0

"$PROBE" collect / metadata metadata "$TMP/fsync" measure >"$TMP/measured.facts"
rate=$(fact "$TMP/measured.facts" storage.metadata.fsync_rate)
case $rate in
'' | *[!0-9]*) not_ok "fsync_rate measured" "got: $rate" ;;
*) if [ "$rate" -ge 1 ]; then ok "fsync_rate measured: $rate fsyncs/s"; else not_ok "fsync_rate >= 1" "got: $rate"; fi ;;
esac
expect_contains "its source says what was measured" "fdatasync() of 4 KiB in" "$(grep '^storage.metadata.fsync_rate' "$TMP/measured.facts")"
expect_eq "nothing left after the collector's measurement" "" "$(ls -A "$TMP/fsync")"
echo "# fsync rate in $TMP/fsync: $rate fsyncs/s ($(findmnt -n -o FSTYPE -T "$TMP/fsync" | tail -n 1))"

"$PROBE" collect "$TMP/scratch" metadata metadata /garage measure >"$TMP/root.facts"
expect_eq "--root: not measured" "unavailable EOPNOTSUPP" "$(fact "$TMP/root.facts" storage.metadata.fsync_rate)"
expect_eq "--root: read_only_mount not probed" "unavailable EOPNOTSUPP" \
	"$(fact "$TMP/root.facts" storage.metadata.read_only_mount)"
expect_eq "/tmp: read_only_mount false" "false" "$(fact "$TMP/measured.facts" storage.metadata.read_only_mount)"

# As root, in a private mount namespace (unshare -m makes its mounts private:
# the host's mount table never sees them).
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
	echo "# SKIP (part) tmpfs and read-only mounts need root and unshare -m"
	finish
	exit
fi
mkdir "$TMP/tmpfs" "$TMP/ro"
# A tmpfs of 8 MiB and 1000 inodes (the root directory takes one).
unshare -m sh -c 'mount -t tmpfs -o size=8m,nr_inodes=1000 hosttune-test "$1" &&
	exec "$2" collect / t data "$1" no-measure' sh "$TMP/tmpfs" "$PROBE" >"$TMP/tmpfs.facts"
expect_eq "tmpfs: fs" "tmpfs" "$(fact "$TMP/tmpfs.facts" storage.t.fs)"
expect_eq "tmpfs: size 8 MiB" "8388608" "$(fact "$TMP/tmpfs.facts" storage.t.size)"
expect_eq "tmpfs: free 8 MiB" "8388608" "$(fact "$TMP/tmpfs.facts" storage.t.free)"
expect_eq "tmpfs: inodes" "1000" "$(fact "$TMP/tmpfs.facts" storage.t.inodes)"
expect_eq "tmpfs: inodes_free" "999" "$(fact "$TMP/tmpfs.facts" storage.t.inodes_free)"
expect_eq "tmpfs: no block device" "unavailable ENODEV" "$(fact "$TMP/tmpfs.facts" storage.t.device)"
expect_eq "tmpfs: rotational unknown" "unavailable ENODEV" "$(fact "$TMP/tmpfs.facts" storage.t.rotational)"

# A read-only bind mount: EROFS, and nothing left below it.
ro_run() {
	unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"' \
		sh "$TMP/ro" "$@"
}
line=$(ro_run "$PROBE" fsync "$TMP/ro" 50 10)
expect_eq "read-only: ht_fsync_rate gives EROFS" "rc=-30 EROFS" "$line"
ro_run "$PROBE" collect / metadata metadata "$TMP/ro" measure >"$TMP/ro.facts"
expect_eq "read-only: fsync_rate unavailable EROFS" "unavailable EROFS" \
	"$(fact "$TMP/ro.facts" storage.metadata.fsync_rate)"
expect_eq "read-only: exists" "true" "$(fact "$TMP/ro.facts" storage.metadata.exists)"
expect_eq "read-only: read_only_mount true" "true" \
	"$(fact "$TMP/ro.facts" storage.metadata.read_only_mount)"
"$PROBE" collect / metadata metadata "$TMP/ro" no-measure >"$TMP/rw.facts"
expect_eq "the same directory outside the namespace: read_only_mount false" "false" \
	"$(fact "$TMP/rw.facts" storage.metadata.read_only_mount)"
expect_eq "read-only: nothing left" "" "$(ls -A "$TMP/ro")"
finish
