/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/magic.h>

#include "collect/collect.h"
#include "engine/facts.h"
#include "shared/util.h"
#include "engine/value.h"
#include "test-util.h"

/*
 * The storage collector (collect/collect-storage.c): the f_type names, the
 * mountinfo parser on crafted text, the sysfs walk on a fake tree (dm over
 * md over two partitions), the fsync measurement in a scratch directory
 * (with O_TMPFILE refused and fdatasync failing through --wrap), and
 * ht_collect_storage() on --root trees and a live scratch directory. The
 * comparison with stat -f, findmnt and this host's sysfs is
 * tests/storage-live.sh's.
 */

/* ---- fault injection (the library's calls land here through --wrap) ---- */

int __real_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...);
int __real_fdatasync(int fd);
int __wrap_fdatasync(int fd);

static bool refuse_tmpfile;   /* open(O_TMPFILE) fails with EOPNOTSUPP */
static int fdatasync_fail_at; /* the Nth fdatasync (from 1) fails with EIO; 0: none */
static int fdatasync_calls;

int __wrap_open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & O_CREAT || (flags & O_TMPFILE) == O_TMPFILE) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (refuse_tmpfile && (flags & O_TMPFILE) == O_TMPFILE) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return __real_open(path, flags, mode);
}

int __wrap_fdatasync(int fd)
{
	fdatasync_calls++;
	if (fdatasync_fail_at && fdatasync_calls == fdatasync_fail_at) {
		errno = EIO;
		return -1;
	}
	return __real_fdatasync(fd);
}

static void reset_faults(void)
{
	refuse_tmpfile = false;
	fdatasync_fail_at = 0;
	fdatasync_calls = 0;
}

/* ---- helpers ---- */

/* Entries of @dir other than . and .. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

static void link_to(const char *base, const char *rel, const char *target)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s", base, rel) > 0);
	assert_int_equal(symlink(target, p), 0);
	free(p);
}

static void assert_str_fact(const struct ht_facts *f, const char *name, const char *want)
{
	const struct ht_fact *fact = ht_test_fact(f, name);

	if (fact->value.type != HT_T_STR)
		fail_msg("%s: not a string (error %d)", name, fact->error);
	assert_string_equal(fact->value.s, want);
}

static void assert_bool_fact(const struct ht_facts *f, const char *name, bool want)
{
	const struct ht_fact *fact = ht_test_fact(f, name);

	if (fact->value.type != HT_T_BOOL)
		fail_msg("%s: not a boolean (error %d)", name, fact->error);
	assert_int_equal(fact->value.b, want);
}

static void assert_unavailable(const struct ht_facts *f, const char *name, int err,
                               const char *source)
{
	const struct ht_fact *fact = ht_test_fact(f, name);

	assert_int_equal(fact->value.type, HT_T_NONE);
	assert_int_equal(fact->error, err);
	if (source)
		assert_string_equal(fact->source, source);
}

/* ---- ht_fs_type_name ---- */

static void test_fs_type_name(void **state)
{
	static const struct {
		int64_t magic;
		const char *name;
	} cases[] = {
		{ EXT4_SUPER_MAGIC, "ext2/ext3" },
		{ XFS_SUPER_MAGIC, "xfs" },
		{ BTRFS_SUPER_MAGIC, "btrfs" },
		{ TMPFS_MAGIC, "tmpfs" },
		{ OVERLAYFS_SUPER_MAGIC, "overlayfs" },
		{ 0x2fc12fc1, "zfs" }, /* ZFS's own, not in magic.h */
		{ NFS_SUPER_MAGIC, "nfs" },
		{ FUSE_SUPER_MAGIC, "fuseblk" },
		{ SQUASHFS_MAGIC, "squashfs" },
		{ MSDOS_SUPER_MAGIC, "msdos" },
		{ F2FS_SUPER_MAGIC, "f2fs" },
		{ RAMFS_MAGIC, "ramfs" },
		{ V9FS_MAGIC, "v9fs" },
		{ CEPH_SUPER_MAGIC, "ceph" },
		{ CIFS_SUPER_MAGIC, "cifs" },
		{ SMB2_SUPER_MAGIC, "smb2" },
		{ EXFAT_SUPER_MAGIC, "exfat" },
		{ EROFS_SUPER_MAGIC_V1, "erofs" },
		{ PROC_SUPER_MAGIC, "proc" },
		/* f_type is a signed word: 32-bit magics above 0x7fffffff sign-extended. */
		{ (int32_t)BTRFS_SUPER_MAGIC, "btrfs" },
		{ (int32_t)CIFS_SUPER_MAGIC, "cifs" },
		{ (int32_t)F2FS_SUPER_MAGIC, "f2fs" },
		{ 0, NULL },
		{ 0x12345678, NULL },
		{ (int64_t)1 << 32 | EXT4_SUPER_MAGIC, NULL },
		{ -1, NULL },
		{ INT64_MIN, NULL },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *got = ht_fs_type_name(cases[i].magic);

		if (!cases[i].name) {
			if (got)
				fail_msg("0x%llx: expected NULL, got %s", (long long)cases[i].magic, got);
		} else {
			if (!got)
				fail_msg("0x%llx: expected %s, got NULL", (long long)cases[i].magic,
				         cases[i].name);
			assert_string_equal(got, cases[i].name);
		}
	}
}

/* ---- ht_mountinfo_fstype ---- */

static const char mountinfo[] =
	"21 26 0:20 / /proc rw,relatime - proc proc rw\n"
	"26 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,discard\n"
	/* A bind mount of the same device, labelled ext3 here to tell the lines apart. */
	"44 26 254:1 /srv/x /mnt/bind rw,relatime shared:1 master:2 - ext3 /dev/vda1 rw\n"
	"50 26 0:45 /@data /srv/my\\040data rw,relatime - btrfs /dev/sdb rw,subvol=/@data\n"
	/* Two mounts of one device at one place: the later one is on top. */
	"70 26 0:60 / /tie rw - tmpfs a rw\n"
	"71 70 0:60 / /tie rw - ramfs b rw\n"
	/* Lines that do not parse are skipped, even of the device asked for. */
	"80 26 254:1 / /bad rw,relatime no-separator ext2 /dev/vda1 rw\n"
	"81 26 254:x / /bad2 rw - ext2 /dev/vda1 rw\n"
	"82 26 254:1\n"
	"\n"
	"90 26 8:3 / /mnt/tab\\011and\\134slash rw - fuse.sshfs host:/ rw"; /* no final newline */

static void check_fstype(unsigned maj, unsigned min, const char *path, int want_r,
                         const char *want)
{
	char *type = NULL;
	int r = ht_mountinfo_fstype(mountinfo, maj, min, path, &type);

	if (r != want_r)
		fail_msg("%u:%u %s: returned %d, expected %d", maj, min, path, r, want_r);
	if (want) {
		assert_non_null(type);
		if (strcmp(type, want) != 0)
			fail_msg("%u:%u %s: %s, expected %s", maj, min, path, type, want);
	} else {
		assert_null(type);
	}
	free(type);
}

static void test_mountinfo(void **state)
{
	char *type = NULL;

	(void)state;
	check_fstype(254, 1, "/home/x", 0, "ext4");
	check_fstype(254, 1, "/", 0, "ext4");
	check_fstype(254, 1, "/mnt/bind", 0, "ext3");
	check_fstype(254, 1, "/mnt/bind/deeper/dir", 0, "ext3");
	/* Whole components: /mnt/bindx is not below /mnt/bind. */
	check_fstype(254, 1, "/mnt/bindx", 0, "ext4");
	/* \040 is a space in the mount point. */
	check_fstype(0, 45, "/srv/my data/obj", 0, "btrfs");
	/* No mount point of the device above the path: its last line still names it. */
	check_fstype(0, 45, "/elsewhere", 0, "btrfs");
	check_fstype(0, 60, "/tie/x", 0, "ramfs");
	check_fstype(0, 20, "/proc", 0, "proc");
	check_fstype(8, 3, "/mnt/tab\tand\\slash/x", 0, "fuse.sshfs");
	/* Neither a device nobody mounted, nor minor/major swapped. */
	check_fstype(9, 9, "/", -ENOENT, NULL);
	check_fstype(1, 254, "/", -ENOENT, NULL);
	/* The malformed lines' mount points are not taken. */
	check_fstype(254, 1, "/bad", 0, "ext4");

	assert_int_equal(ht_mountinfo_fstype("", 254, 1, "/", &type), -ENOENT);
	assert_int_equal(ht_mountinfo_fstype(NULL, 254, 1, "/", &type), -EINVAL);
	assert_int_equal(ht_mountinfo_fstype(mountinfo, 254, 1, NULL, &type), -EINVAL);
	assert_int_equal(ht_mountinfo_fstype(mountinfo, 254, 1, "/", NULL), -EINVAL);
	assert_null(type);
}

/* ---- ht_block_info on a fake sysfs ---- */

/*
 * T/devices/pci0/block/sd{a,b}/sd{a,b}1: two disks with a partition each
 * (sda spins); md0 over both partitions; dm-0 over md0; sdc without
 * queue/rotational, sdd with "yes" in it; loop0 with a backing file; dm-9
 * its own slave (a broken tree). /sys/block and /sys/dev/block link to them
 * as the kernel's sysfs does.
 */
static char *fake_sysfs(void)
{
	char *t = ht_test_tmp_dir("test-storage");
	static const char *const disks[] = { "sda", "sdb", "sdc", "sdd" };

	for (size_t i = 0; i < ARRAY_SIZE(disks); i++) {
		char rel[128], target[128];

		snprintf(rel, sizeof(rel), "devices/pci0/block/%s/%s1", disks[i], disks[i]);
		ht_test_mkdirs(t, rel);
		snprintf(rel, sizeof(rel), "devices/pci0/block/%s/%s1/partition", disks[i], disks[i]);
		ht_test_put_file(t, rel, "1\n");
		snprintf(rel, sizeof(rel), "devices/pci0/block/%s/slaves", disks[i]);
		ht_test_mkdirs(t, rel);
		snprintf(rel, sizeof(rel), "block/%s", disks[i]);
		snprintf(target, sizeof(target), "../devices/pci0/block/%s", disks[i]);
		ht_test_mkdirs(t, "block");
		link_to(t, rel, target);
	}
	ht_test_mkdirs(t, "devices/pci0/block/sda/queue");
	ht_test_put_file(t, "devices/pci0/block/sda/queue/rotational", "1\n");
	ht_test_mkdirs(t, "devices/pci0/block/sdb/queue");
	ht_test_put_file(t, "devices/pci0/block/sdb/queue/rotational", "0\n");
	ht_test_mkdirs(t, "devices/pci0/block/sdd/queue");
	ht_test_put_file(t, "devices/pci0/block/sdd/queue/rotational", "yes\n");

	ht_test_mkdirs(t, "devices/virtual/block/md0/slaves");
	ht_test_mkdirs(t, "devices/virtual/block/md0/queue");
	ht_test_put_file(t, "devices/virtual/block/md0/queue/rotational", "0\n");
	link_to(t, "devices/virtual/block/md0/slaves/sda1", "../../../../pci0/block/sda/sda1");
	link_to(t, "devices/virtual/block/md0/slaves/sdb1", "../../../../pci0/block/sdb/sdb1");
	link_to(t, "block/md0", "../devices/virtual/block/md0");

	ht_test_mkdirs(t, "devices/virtual/block/dm-0/slaves");
	ht_test_mkdirs(t, "devices/virtual/block/dm-0/queue");
	ht_test_put_file(t, "devices/virtual/block/dm-0/queue/rotational", "0\n");
	link_to(t, "devices/virtual/block/dm-0/slaves/md0", "../../md0");
	link_to(t, "block/dm-0", "../devices/virtual/block/dm-0");

	ht_test_mkdirs(t, "devices/virtual/block/loop0/slaves");
	ht_test_mkdirs(t, "devices/virtual/block/loop0/loop");
	ht_test_put_file(t, "devices/virtual/block/loop0/loop/backing_file", "/var/lib/images/disk.img\n");
	ht_test_mkdirs(t, "devices/virtual/block/loop0/queue");
	ht_test_put_file(t, "devices/virtual/block/loop0/queue/rotational", "0\n");
	link_to(t, "block/loop0", "../devices/virtual/block/loop0");

	/* loop1: bound to nothing readable; dm-1 over loop0 and sda1. */
	ht_test_mkdirs(t, "devices/virtual/block/loop1/queue");
	ht_test_put_file(t, "devices/virtual/block/loop1/queue/rotational", "1\n");
	link_to(t, "block/loop1", "../devices/virtual/block/loop1");
	ht_test_mkdirs(t, "devices/virtual/block/dm-1/slaves");
	link_to(t, "devices/virtual/block/dm-1/slaves/loop0", "../../loop0");
	link_to(t, "devices/virtual/block/dm-1/slaves/sda1", "../../../../pci0/block/sda/sda1");
	link_to(t, "block/dm-1", "../devices/virtual/block/dm-1");

	/* vda: virtio_blk, whose queue/rotational is the block layer's default. */
	ht_test_mkdirs(t, "devices/pci0/virtio1/block/vda/queue");
	ht_test_put_file(t, "devices/pci0/virtio1/block/vda/queue/rotational", "1\n");
	ht_test_mkdirs(t, "bus/virtio/drivers/virtio_blk");
	link_to(t, "devices/pci0/virtio1/driver", "../../../bus/virtio/drivers/virtio_blk");
	link_to(t, "devices/pci0/virtio1/block/vda/device", "../../../virtio1");
	link_to(t, "block/vda", "../devices/pci0/virtio1/block/vda");

	ht_test_mkdirs(t, "devices/virtual/block/dm-9/slaves");
	link_to(t, "devices/virtual/block/dm-9/slaves/dm-9", "../../dm-9");

	ht_test_mkdirs(t, "dev/block");
	link_to(t, "dev/block/253:0", "../../devices/virtual/block/dm-0");
	link_to(t, "dev/block/253:9", "../../devices/virtual/block/dm-9");
	link_to(t, "dev/block/9:0", "../../devices/virtual/block/md0");
	link_to(t, "dev/block/8:1", "../../devices/pci0/block/sda/sda1");
	link_to(t, "dev/block/8:16", "../../devices/pci0/block/sdb");
	link_to(t, "dev/block/8:33", "../../devices/pci0/block/sdc/sdc1");
	link_to(t, "dev/block/8:48", "../../devices/pci0/block/sdd");
	link_to(t, "dev/block/7:0", "../../devices/virtual/block/loop0");
	link_to(t, "dev/block/7:1", "../../devices/virtual/block/loop1");
	link_to(t, "dev/block/253:1", "../../devices/virtual/block/dm-1");
	link_to(t, "dev/block/252:0", "../../devices/pci0/virtio1/block/vda");
	return t;
}

static void check_block(const char *sys, unsigned maj, unsigned min, const char *device,
                        const char *devices, int rot_err, bool rot, const char *rot_file)
{
	struct ht_block_info b;
	char *want_src = NULL;
	int r = ht_block_info(sys, maj, min, &b);

	if (r != 0)
		fail_msg("%u:%u: returned %d", maj, min, r);
	assert_string_equal(b.device, device);
	assert_string_equal(b.devices, devices);
	assert_int_equal(b.rotational_error, rot_err);
	assert_int_equal(b.rotational, rot);
	assert_true(asprintf(&want_src, "%s/block/%s", sys, rot_file) > 0);
	assert_non_null(b.rotational_source);
	assert_string_equal(b.rotational_source, want_src);
	free(want_src);
	ht_block_info_free(&b);
	assert_null(b.device);
}

static void test_block_info(void **state)
{
	char *t = fake_sysfs(), *two = NULL;
	struct ht_block_info b;

	(void)state;
	/* dm-0 over md0 over sda1 + sdb1: the disks, sda spinning. */
	check_block(t, 253, 0, "dm-0", "sda sdb", 0, true, "sda/queue/rotational");
	check_block(t, 9, 0, "md0", "sda sdb", 0, true, "sda/queue/rotational");
	/* A partition is its disk. */
	check_block(t, 8, 1, "sda1", "sda", 0, true, "sda/queue/rotational");
	check_block(t, 8, 16, "sdb", "sdb", 0, false, "sdb/queue/rotational");
	/*
	 * A loop device is a leaf: its backing file is not followed, and its
	 * queue/rotational (0 for loop0, 1 for loop1) is no evidence of the
	 * disk under the file: unknown, saying why.
	 */
	check_block(t, 7, 0, "loop0", "loop0", -ENODATA, false,
	            "loop0/loop/backing_file: a loop device over /var/lib/images/disk.img "
	            "(file-backed: its queue/rotational says nothing of the disk under the file)");
	check_block(t, 7, 1, "loop1", "loop1", -ENODATA, false,
	            "loop1: a loop device (file-backed: its queue/rotational says nothing of "
	            "the disk under the file)");
	/* Beside a spinning disk, the loop device does not hide it. */
	check_block(t, 253, 1, "dm-1", "loop0 sda", 0, true, "sda/queue/rotational");
	/* virtio_blk: its flag 1 is the block layer's default, no evidence either. */
	check_block(t, 252, 0, "vda", "vda", -ENODATA, false,
	            "vda/device/driver: virtio_blk reports no rotation (queue/rotational holds the "
	            "block layer's default, not the host disk's)");
	/* Unreadable or malformed flags. */
	check_block(t, 8, 33, "sdc1", "sdc", -ENOENT, false, "sdc/queue/rotational");
	check_block(t, 8, 48, "sdd", "sdd", -EINVAL, false, "sdd/queue/rotational");

	/* No spinning disk among several: every file read is named. */
	ht_test_put_file(t, "devices/pci0/block/sda/queue/rotational", "0\n");
	assert_int_equal(ht_block_info(t, 253, 0, &b), 0);
	assert_false(b.rotational);
	assert_true(asprintf(&two, "%s/block/sda/queue/rotational, %s/block/sdb/queue/rotational",
	                     t, t) > 0);
	assert_string_equal(b.rotational_source, two);
	ht_block_info_free(&b);
	free(two);

	assert_int_equal(ht_block_info(t, 0, 45, &b), -ENODEV);
	assert_null(b.device);
	assert_int_equal(ht_block_info(t, 8, 99, &b), -ENOENT);
	assert_null(b.device);
	assert_int_equal(ht_block_info(t, 253, 9, &b), -ELOOP);
	assert_null(b.device);
	assert_int_equal(ht_block_info(NULL, 8, 1, &b), -EINVAL);
	ht_test_rm_tree(t);
	free(t);
}

/* ---- ht_fsync_rate ---- */

static void test_fsync_rate(void **state)
{
	char *d = ht_test_tmp_dir("test-storage"), *file = NULL, *ro = NULL, *missing = NULL;
	unsigned rounds = 0;
	uint64_t ns = 0;
	double rate = 0;

	(void)state;
	reset_faults();
	assert_int_equal(ht_fsync_rate(d, 50, 10000, &rate, &rounds, &ns), 0);
	assert_true(rounds >= 1);
	assert_true(rounds <= 10000);
	assert_true(ns > 0);
	assert_true(rate > 0);
	assert_int_equal(fdatasync_calls, (int)rounds);
	assert_int_equal(entries(d), 0);

	/* max_rounds bounds it; a budget of 0 still does one round. */
	rounds = 0;
	assert_int_equal(ht_fsync_rate(d, 60000, 3, &rate, &rounds, &ns), 0);
	assert_true(rounds >= 1 && rounds <= 3);
	assert_int_equal(ht_fsync_rate(d, 0, 10000, &rate, &rounds, &ns), 0);
	assert_int_equal(rounds, 1);
	assert_int_equal(entries(d), 0);

	/* Where O_TMPFILE is refused: a named file, removed at once. */
	reset_faults();
	refuse_tmpfile = true;
	assert_int_equal(ht_fsync_rate(d, 20, 5, &rate, &rounds, &ns), 0);
	assert_true(rounds >= 1 && rounds <= 5);
	assert_true(rate > 0);
	assert_int_equal(entries(d), 0);

	/* A failing fdatasync: its errno, nothing left (both ways of making the file). */
	for (int tmpfile = 0; tmpfile < 2; tmpfile++) {
		reset_faults();
		refuse_tmpfile = !tmpfile;
		fdatasync_fail_at = 2;
		rounds = 77;
		assert_int_equal(ht_fsync_rate(d, 60000, 10, &rate, &rounds, &ns), -EIO);
		assert_int_equal(rounds, 77); /* untouched on error */
		assert_int_equal(entries(d), 0);
	}
	reset_faults();

	/* No directory, or not one. */
	assert_true(asprintf(&missing, "%s/missing", d) > 0);
	assert_int_equal(ht_fsync_rate(missing, 10, 5, &rate, &rounds, &ns), -ENOENT);
	ht_test_put_file(d, "file", "x");
	assert_true(asprintf(&file, "%s/file", d) > 0);
	assert_int_equal(ht_fsync_rate(file, 10, 5, &rate, &rounds, &ns), -ENOTDIR);
	assert_int_equal(unlink(file), 0);
	assert_int_equal(entries(d), 0);

	/* A directory this user cannot write (root writes anywhere: storage-live.sh uses a read-only mount). */
	if (geteuid() != 0) {
		assert_true(asprintf(&ro, "%s/ro", d) > 0);
		assert_int_equal(mkdir(ro, 0555), 0);
		assert_int_equal(ht_fsync_rate(ro, 10, 5, &rate, &rounds, &ns), -EACCES);
		assert_int_equal(entries(ro), 0);
		assert_int_equal(rmdir(ro), 0);
	}

	assert_int_equal(ht_fsync_rate(d, 10, 0, &rate, &rounds, &ns), -EINVAL);
	assert_int_equal(ht_fsync_rate(NULL, 10, 5, &rate, &rounds, &ns), -EINVAL);
	assert_int_equal(entries(d), 0);
	ht_test_rm_tree(d);
	free(d);
	free(file);
	free(ro);
	free(missing);
}

/* ---- ht_collect_storage ---- */

static const char *const fs_suffixes[] = { "fs",         "free",    "size",
	                                   "inodes",     "inodes_free", "device",
	                                   "devices",    "rotational", "read_only_mount",
	                                   "exists",     "probed" };

static char *fname(const char *name, const char *suffix)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "storage.%s.%s", name, suffix);
	return buf;
}

static void test_collect_root(void **state)
{
	char *root = ht_test_tmp_dir("test-storage");
	struct ht_facts *f = ht_facts_new();

	(void)state;
	assert_non_null(f);
	ht_test_mkdirs(root, "var/lib");
	ht_test_mkdirs(root, "only-in-tree/meta");
	/* An absolute link resolves inside the tree, as on the host it stands for. */
	link_to(root, "data", "/only-in-tree");
	ht_test_put_file(root, "var/lib/garage", "a file where a directory should be");

	/* Before deployment: the nearest existing parent. */
	reset_faults();
	assert_int_equal(ht_collect_storage(f, root, "metadata", "metadata", "/var/lib/garage/meta/", true), 0);
	assert_str_fact(f, "storage.metadata.path", "/var/lib/garage/meta/");
	assert_str_fact(f, "storage.metadata.role", "metadata");
	assert_bool_fact(f, "storage.metadata.exists", false);
	assert_str_fact(f, "storage.metadata.probed", "/var/lib");
	/*
	 * The tree's files lie on this machine's filesystem, not on the host's
	 * it stands for: nothing of the filesystem is probed under --root.
	 */
	for (size_t i = 0; i < ARRAY_SIZE(fs_suffixes) - 2; i++) /* all but exists, probed */
		assert_unavailable(f, fname("metadata", fs_suffixes[i]), EOPNOTSUPP,
		                   "not probed under --root: the tree's files lie on this "
		                   "machine's filesystem, not on its host's");
	assert_string_equal(ht_test_fact(f, "storage.metadata.size")->unit, "bytes");
	/* Under --root nothing is measured. */
	assert_unavailable(f, "storage.metadata.fsync_rate", EOPNOTSUPP, "not measured in a --root tree");
	assert_int_equal(fdatasync_calls, 0);
	assert_string_equal(ht_test_fact(f, "storage.metadata.fsync_rate")->unit, "fsyncs/s");

	/* --no-measure says so first. */
	assert_int_equal(ht_collect_storage(f, root, "metadata", "metadata", "/var/lib", false), 0);
	assert_bool_fact(f, "storage.metadata.exists", true);
	assert_str_fact(f, "storage.metadata.probed", "/var/lib");
	assert_unavailable(f, "storage.metadata.fsync_rate", ECANCELED, "skipped (--no-measure)");

	/* A data directory has no fsync_rate; a link in the tree is followed in the tree. */
	assert_int_equal(ht_collect_storage(f, root, "data1", "data", "/data/meta", true), 0);
	assert_bool_fact(f, "storage.data1.exists", true);
	assert_str_fact(f, "storage.data1.probed", "/data/meta");
	assert_null(ht_facts_get(f, "storage.data1.fsync_rate"));

	/* Nothing exists: the root itself is missing. */
	ht_test_rm_tree(root);
	assert_int_equal(ht_collect_storage(f, root, "data", "data", "/srv/garage", true), 0);
	for (size_t i = 0; i < ARRAY_SIZE(fs_suffixes); i++)
		assert_unavailable(f, fname("data", fs_suffixes[i]), ENOENT, NULL);
	assert_str_fact(f, "storage.data.path", "/srv/garage");

	/* A relative path is no directory Garage could mean. */
	assert_int_equal(ht_collect_storage(f, NULL, "m", "metadata", "meta", true), 0);
	for (size_t i = 0; i < ARRAY_SIZE(fs_suffixes); i++)
		assert_unavailable(f, fname("m", fs_suffixes[i]), EINVAL, "not an absolute path");
	assert_unavailable(f, "storage.m.fsync_rate", EINVAL, NULL);

	assert_int_equal(ht_collect_storage(NULL, NULL, "m", "metadata", "/", true), -EINVAL);
	assert_int_equal(ht_collect_storage(f, NULL, NULL, "metadata", "/", true), -EINVAL);
	assert_int_equal(ht_collect_storage(f, NULL, "m", "metadata", NULL, true), -EINVAL);
	ht_facts_free(f);
	free(root);
}

static void test_collect_live(void **state)
{
	char *d = ht_test_tmp_dir("test-storage");
	struct ht_facts *f = ht_facts_new();
	const struct ht_fact *rate;
	char *want = NULL;

	(void)state;
	assert_non_null(f);
	reset_faults();
	assert_int_equal(ht_collect_storage(f, "/", "metadata", "metadata", d, true), 0);
	assert_bool_fact(f, "storage.metadata.exists", true);
	assert_str_fact(f, "storage.metadata.probed", d);
	rate = ht_test_fact(f, "storage.metadata.fsync_rate");
	assert_int_equal(rate->value.type, HT_T_INT);
	assert_true(rate->value.i >= 1);
	assert_true(fdatasync_calls >= 1);
	assert_true(asprintf(&want, "measured: %d fdatasync() of 4 KiB in ", fdatasync_calls) > 0);
	assert_true(strncmp(rate->source, want, strlen(want)) == 0);
	assert_true(strstr(rate->source, d) != NULL);
	assert_int_equal(entries(d), 0);
	/* The mount's read-only flag as statvfs(3) gives it (this directory is writable: false). */
	{
		struct statvfs sv;
		_cleanup_free_ char *src = NULL;

		assert_int_equal(statvfs(d, &sv), 0);
		assert_bool_fact(f, "storage.metadata.read_only_mount", (sv.f_flag & ST_RDONLY) != 0);
		assert_false(sv.f_flag & ST_RDONLY);
		assert_true(asprintf(&src, "statfs(2) of %s", d) > 0);
		assert_string_equal(ht_test_fact(f, "storage.metadata.read_only_mount")->source, src);
		assert_null(ht_test_fact(f, "storage.metadata.read_only_mount")->unit);
	}

	/* The measurement's error is the fact's. */
	reset_faults();
	fdatasync_fail_at = 1;
	assert_int_equal(ht_collect_storage(f, NULL, "metadata", "metadata", d, true), 0);
	assert_unavailable(f, "storage.metadata.fsync_rate", EIO, NULL);
	assert_int_equal(entries(d), 0);
	reset_faults();

	ht_test_rm_tree(d);
	ht_facts_free(f);
	free(d);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fs_type_name),
		cmocka_unit_test(test_mountinfo),
		cmocka_unit_test(test_block_info),
		cmocka_unit_test(test_fsync_rate),
		cmocka_unit_test(test_collect_root),
		cmocka_unit_test(test_collect_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
