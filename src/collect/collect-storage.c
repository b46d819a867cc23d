/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>


#include "collect/collect.h"
#include "engine/facts.h"
#include "shared/rootfs.h"
#include "shared/util.h"
#include "engine/value.h"

/*
 * The directories Garage stores in (storage.NAME.*): what filesystem holds
 * each, how full it is, which disks are below it and whether they spin, and
 * for the metadata directory how many fdatasync() a second it takes.
 *
 * Sources: statfs(2)/fstat(2) of the directory (below --root), the live
 * /proc/self/mountinfo for the filesystem's name, the live /sys for the
 * block devices (a --root tree's files are on one of this host's
 * filesystems, so this host's devices are the ones that hold them), and a
 * measurement with a temporary file.
 */

#define PATH_MOUNTINFO "/proc/self/mountinfo"
#define FSYNC_BUDGET_MS 300
#define FSYNC_MAX_ROUNDS 10000
#define FSYNC_BLOCK 4096
/* dm over md over partitions is 3 levels; more than this is a loop in a broken tree. */
#define BLOCK_MAX_DEPTH 16
/* statfs(2) f_flags holds the mount flags (linux/statfs.h ST_VALID) */
#ifndef ST_VALID
#define ST_VALID 0x0020
#endif

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

/* ---- filesystem type names ---- */

/*
 * statfs f_type values (include/uapi/linux/magic.h, and the filesystems
 * that define theirs elsewhere: ZFS, FUSE, Ceph, CIFS) with the names GNU
 * stat -f -c %T prints for them. FUSE has one magic for fuse and fuseblk
 * mounts; stat calls it fuseblk.
 */
static const struct {
	uint32_t magic;
	const char *name;
} fs_names[] = {
	{ 0x00000187, "autofs" },    { 0x00009660, "isofs" },     { 0x00009fa0, "proc" },
	{ 0x0000ef53, "ext2/ext3" }, { 0x00006969, "nfs" },       { 0x00004d44, "msdos" },
	{ 0x0000517b, "smb" },       { 0x00001cd1, "devpts" },    { 0x00003434, "nilfs" },
	{ 0x00c36400, "ceph" },      { 0x01021994, "tmpfs" },     { 0x01021997, "v9fs" },
	{ 0x01161970, "gfs/gfs2" },  { 0x0027e0eb, "cgroupfs" },  { 0x0bd00bd0, "lustre" },
	{ 0x15013346, "udf" },       { 0x2011bab0, "exfat" },     { 0x24051905, "ubifs" },
	{ 0x28cd3d45, "cramfs" },    { 0x2fc12fc1, "zfs" },       { 0x3153464a, "jfs" },
	{ 0x47504653, "gpfs" },      { 0x52654973, "reiserfs" },  { 0x5346544e, "ntfs" },
	{ 0x58465342, "xfs" },       { 0x5a4f4653, "zonefs" },    { 0x61756673, "aufs" },
	{ 0x62656572, "sysfs" },     { 0x63677270, "cgroup2fs" }, { 0x65735543, "fusectl" },
	{ 0x65735546, "fuseblk" },   { 0x7461636f, "ocfs2" },     { 0x73717368, "squashfs" },
	{ 0x786f4256, "vboxsf" },    { 0x794c7630, "overlayfs" }, { 0x858458f6, "ramfs" },
	{ 0x9123683e, "btrfs" },     { 0x958458f6, "hugetlbfs" }, { 0xe0f5e1e2, "erofs" },
	{ 0xf2f52010, "f2fs" },      { 0xfe534d42, "smb2" },      { 0xff534d42, "cifs" },
};

const char *ht_fs_type_name(int64_t magic)
{
	/* f_type is a signed word: a 32-bit magic above 0x7fffffff may come sign-extended. */
	if (magic < INT32_MIN || magic > (int64_t)UINT32_MAX)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(fs_names); i++)
		if (fs_names[i].magic == (uint32_t)magic)
			return fs_names[i].name;
	return NULL;
}

/* ---- /proc/self/mountinfo ---- */

/*
 * The next blank-separated field of the line at *pp, its octal escapes
 * (\040 for a space, as show_mountinfo() mangles " \t\n\\") decoded into
 * @buf (@size bytes). Returns its length, or -EINVAL when the line has no
 * more fields or the field does not fit.
 */
static int next_field(const char **pp, char *buf, size_t size)
{
	const char *p = *pp;
	size_t n = 0;

	while (*p == ' ')
		p++;
	if (!*p || *p == '\n')
		return -EINVAL;
	while (*p && *p != ' ' && *p != '\n') {
		char c = *p++;

		if (c == '\\' && p[0] >= '0' && p[0] <= '3' && p[1] >= '0' && p[1] <= '7' &&
		    p[2] >= '0' && p[2] <= '7') {
			c = (char)((p[0] - '0') << 6 | (p[1] - '0') << 3 | (p[2] - '0'));
			p += 3;
		}
		if (n + 1 >= size)
			return -EINVAL;
		buf[n++] = c;
	}
	buf[n] = '\0';
	*pp = p;
	return (int)n;
}

/* Length of mount point @mp when it is @path or a directory above it, else -1. */
static long mount_prefix(const char *mp, const char *path)
{
	size_t n = strlen(mp);

	if (strcmp(mp, "/") == 0)
		return path[0] == '/' ? 1 : -1;
	if (strncmp(mp, path, n) != 0 || (path[n] != '\0' && path[n] != '/'))
		return -1;
	return (long)n;
}

int ht_mountinfo_fstype(const char *text, unsigned major, unsigned minor, const char *path,
                        char **type)
{
	_cleanup_free_ char *mp = NULL, *fs = NULL, *best = NULL;
	long best_len = -2;
	size_t cap;

	if (!text || !path || !type)
		return -EINVAL;
	/* No field is longer than its line, nor the line than the text. */
	cap = strlen(text) + 1;
	mp = malloc(cap);
	fs = malloc(cap);
	if (!mp || !fs)
		return -ENOMEM;

	for (const char *line = text, *next; *line; line = next) {
		const char *p = line;
		unsigned maj, min;
		int used = 0;
		long len;

		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);

		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS */
		if (next_field(&p, fs, cap) < 0 || next_field(&p, fs, cap) < 0 ||
		    next_field(&p, fs, cap) < 0)
			continue;
		if (sscanf(fs, "%u:%u%n", &maj, &min, &used) != 2 || fs[used] != '\0')
			continue;
		if (next_field(&p, fs, cap) < 0 || next_field(&p, mp, cap) < 0 ||
		    next_field(&p, fs, cap) < 0)
			continue;
		for (;;) {
			if (next_field(&p, fs, cap) < 0) {
				fs[0] = '\0';
				break;
			}
			if (strcmp(fs, "-") == 0)
				break;
		}
		if (!fs[0] || next_field(&p, fs, cap) <= 0)
			continue;
		if (maj != major || min != minor)
			continue;
		/* The deepest mount point above @path; a later line (mounted on top) wins a tie. */
		len = mount_prefix(mp, path);
		if (len >= best_len) {
			free(best);
			best = strdup(fs);
			if (!best)
				return -ENOMEM;
			best_len = len;
		}
	}
	if (!best)
		return -ENOENT;
	*type = TAKE_PTR(best);
	return 0;
}

/* ---- block devices in sysfs ---- */

void ht_block_info_free(struct ht_block_info *b)
{
	if (!b)
		return;
	free(b->device);
	free(b->devices);
	free(b->rotational_source);
	*b = (struct ht_block_info){ 0 };
}

struct leaves {
	char **v;
	size_t n;
};

static void leaves_free(struct leaves *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static int leaves_add(struct leaves *l, const char *name)
{
	char **v;

	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], name) == 0)
			return 0;
	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->v = v;
	l->v[l->n] = strdup(name);
	if (!l->v[l->n])
		return -ENOMEM;
	l->n++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_partition(const char *devdir)
{
	_cleanup_free_ char *p = NULL;

	if (asprintf(&p, "%s/partition", devdir) < 0)
		return false;
	return access(p, F_OK) == 0;
}

/*
 * The disks below the device whose sysfs directory (resolved) is @devdir:
 * a partition stands for its disk (the directory above it); a device with
 * entries in slaves/ for the leaves below them; else the device itself.
 */
static int walk_leaves(const char *devdir, unsigned depth, struct leaves *out)
{
	_cleanup_free_ char *disk = NULL, *slaves = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	const char *base;
	struct dirent *de;
	bool any = false;
	int r;

	if (depth > BLOCK_MAX_DEPTH)
		return -ELOOP;
	disk = strdup(devdir);
	if (!disk)
		return -ENOMEM;
	if (is_partition(disk)) {
		char *slash = strrchr(disk, '/');

		if (!slash || slash == disk)
			return -EINVAL;
		*slash = '\0';
	}
	base = strrchr(disk, '/');
	base = base ? base + 1 : disk;

	if (asprintf(&slaves, "%s/slaves", disk) < 0)
		return -ENOMEM;
	d = opendir(slaves);
	if (d) {
		while ((errno = 0, de = readdir(d))) {
			_cleanup_free_ char *link = NULL, *next = NULL;

			if (de->d_name[0] == '.')
				continue;
			if (asprintf(&link, "%s/%s", slaves, de->d_name) < 0)
				return -ENOMEM;
			next = realpath(link, NULL);
			if (!next)
				return errno == ENOMEM ? -ENOMEM : -errno;
			r = walk_leaves(next, depth + 1, out);
			if (r < 0)
				return r;
			any = true;
		}
		if (errno)
			return -errno;
	} else if (errno != ENOENT) {
		return -errno;
	}
	/* No slaves (a disk, a loop device: its backing file is not a device). */
	if (!any)
		return leaves_add(out, base);
	return 0;
}


/*
 * A disk whose queue/rotational says nothing of the disk behind it. A
 * paravirtual one: virtio-blk has no feature bit for rotation, so the flag
 * keeps the block layer's default (1 for vda of the 6.18 VM hosttune is
 * developed on, whatever disk the host gives it), and Xen's blkfront
 * ("vbd") is the same; a loop device ("loopN"): file-backed. Returns 1
 * with *@src "SYSFS/block/DISK/device/driver: DRIVER reports no rotation
 * ...", "SYSFS/block/loopN/loop/backing_file: a loop device over FILE ..."
 * (or "SYSFS/block/loopN: a loop device ..." when no backing file is
 * readable), 0 for any other disk (or none readable), -ENOMEM.
 */
static int virtual_disk(const char *sysfs, const char *disk, char **src)
{
	_cleanup_free_ char *p = NULL, *target = NULL;
	const char *drv;

	/*
	 * A loop device: a file on some other filesystem. Its queue/rotational
	 * is the loop driver's own setting (0 or 1 by what the backing file's
	 * device said when it was bound, or the default), not evidence of
	 * the disk the file lies on now.
	 */
	if (strncmp(disk, "loop", 4) == 0 && disk[4] && strspn(disk + 4, "0123456789") ==
	                                                     strlen(disk + 4)) {
		_cleanup_free_ char *file = NULL;
		int r;

		if (asprintf(&p, "%s/block/%s/loop/backing_file", sysfs, disk) < 0)
			return -ENOMEM;
		r = ht_read_file(NULL, p, &file);
		if (r == -ENOMEM)
			return r;
		if (r == 0 && file[0])
			r = asprintf(src, "%s: a loop device over %s (file-backed: its "
			             "queue/rotational says nothing of the disk under the file)",
			             p, file);
		else
			r = asprintf(src, "%s/block/%s: a loop device (file-backed: its "
			             "queue/rotational says nothing of the disk under the file)",
			             sysfs, disk);
		return r < 0 ? -ENOMEM : 1;
	}
	if (asprintf(&p, "%s/block/%s/device/driver", sysfs, disk) < 0)
		return -ENOMEM;
	target = realpath(p, NULL);
	if (!target)
		return errno == ENOMEM ? -ENOMEM : 0;
	drv = strrchr(target, '/');
	drv = drv ? drv + 1 : target;
	if (strcmp(drv, "virtio_blk") != 0 && strcmp(drv, "vbd") != 0)
		return 0;
	if (asprintf(src, "%s: %s reports no rotation (queue/rotational holds the block layer's "
	             "default, not the host disk's)", p, drv) < 0)
		return -ENOMEM;
	return 1;
}

/* Reads @path holding "0" or "1". */
static int read_flag(const char *path, bool *flag)
{
	_cleanup_free_ char *s = NULL;
	int r = ht_read_file(NULL, path, &s);

	if (r < 0)
		return r;
	if (strcmp(s, "0") != 0 && strcmp(s, "1") != 0)
		return -EINVAL;
	*flag = s[0] == '1';
	return 0;
}

int ht_block_info(const char *sysfs, unsigned major, unsigned minor, struct ht_block_info *b)
{
	_cleanup_free_ char *link = NULL, *dir = NULL, *joined = NULL, *src = NULL, *err_src = NULL;
	struct leaves l = { 0 };
	char target[PATH_MAX];
	const char *base;
	size_t len = 0;
	bool rot = false;
	int r, rot_err = 0;
	ssize_t n;

	if (!sysfs || !b)
		return -EINVAL;
	*b = (struct ht_block_info){ 0 };
	if (major == 0)
		return -ENODEV;
	if (asprintf(&link, "%s/dev/block/%u:%u", sysfs, major, minor) < 0)
		return -ENOMEM;
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (!*base)
		return -EINVAL;
	b->device = strdup(base);
	if (!b->device)
		return -ENOMEM;

	dir = realpath(link, NULL);
	if (!dir) {
		r = errno == ENOMEM ? -ENOMEM : -errno;
		goto fail;
	}
	r = walk_leaves(dir, 0, &l);
	if (r < 0)
		goto fail;
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(*l.v), cmp_str);
	for (size_t i = 0; i < l.n; i++)
		len += strlen(l.v[i]) + 1;
	joined = calloc(1, len + 1);
	if (!joined) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < l.n; i++) {
		if (i)
			strcat(joined, " ");
		strcat(joined, l.v[i]);
	}

	/* Rotational when any disk spins; an unreadable flag only matters when none does. */
	for (size_t i = 0; i < l.n && !rot; i++) {
		_cleanup_free_ char *p = NULL;
		bool flag;

		r = virtual_disk(sysfs, l.v[i], &p);
		if (r < 0)
			goto fail;
		if (r > 0) {
			/* No flag to trust: as unreadable, it decides only when no other disk spins. */
			if (!rot_err) {
				rot_err = -ENODATA;
				free(err_src);
				err_src = TAKE_PTR(p);
			}
			continue;
		}
		if (asprintf(&p, "%s/block/%s/queue/rotational", sysfs, l.v[i]) < 0) {
			r = -ENOMEM;
			goto fail;
		}
		r = read_flag(p, &flag);
		if (r == -ENOMEM)
			goto fail;
		if (r < 0) {
			if (!rot_err) {
				rot_err = r;
				free(err_src);
				err_src = TAKE_PTR(p);
			}
		} else if (flag) {
			/* This one decides: name only it. */
			rot = true;
			free(src);
			src = TAKE_PTR(p);
		} else if (!src) {
			src = TAKE_PTR(p);
		} else {
			/* None spins so far: name every file read. */
			char *more;

			if (asprintf(&more, "%s, %s", src, p) < 0) {
				r = -ENOMEM;
				goto fail;
			}
			free(src);
			src = more;
		}
	}
	if (!rot && rot_err) {
		free(src);
		src = TAKE_PTR(err_src);
	} else {
		rot_err = 0;
	}
	b->devices = TAKE_PTR(joined);
	b->rotational = rot;
	b->rotational_error = rot_err;
	b->rotational_source = TAKE_PTR(src);
	leaves_free(&l);
	return 0;
fail:
	leaves_free(&l);
	ht_block_info_free(b);
	return r;
}

/* ---- the fsync measurement ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A file in @dir no one else can see: O_TMPFILE, else a name removed at once. */
static int open_anonymous(const char *dir)
{
	_cleanup_free_ char *tmpl = NULL;
	int fd, r;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	/* EISDIR: a kernel before 3.11 read O_TMPFILE as O_DIRECTORY. */
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	if (asprintf(&tmpl, "%s/.hosttune-fsync-XXXXXX", dir) < 0)
		return -ENOMEM;
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (unlink(tmpl) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int ht_fsync_rate(const char *dir, unsigned budget_ms, unsigned max_rounds, double *rate,
                  unsigned *rounds, uint64_t *elapsed_ns)
{
	_cleanup_close_ int fd = -1;
	char buf[FSYNC_BLOCK];
	uint64_t start, elapsed = 0, budget = (uint64_t)budget_ms * 1000000u;
	unsigned done = 0;

	if (!dir || !rate || !rounds || !elapsed_ns || max_rounds == 0)
		return -EINVAL;
	fd = open_anonymous(dir);
	if (fd < 0)
		return fd;
	memset(buf, 'h', sizeof(buf));

	start = now_ns();
	do {
		size_t off = 0;

		while (off < sizeof(buf)) {
			ssize_t n = pwrite(fd, buf + off, sizeof(buf) - off, (off_t)off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -errno;
			if (n == 0)
				return -EIO;
			off += (size_t)n;
		}
		if (fdatasync(fd) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done++;
		elapsed = now_ns() - start;
	} while (done < max_rounds && elapsed < budget);

	if (elapsed == 0)
		elapsed = 1;
	*rounds = done;
	*elapsed_ns = elapsed;
	*rate = (double)done * 1e9 / (double)elapsed;
	return 0;
}

/* ---- the collector ---- */

/* "/a/b/" -> "/a/b"; "/" stays. In place. */
static void strip_slashes(char *p)
{
	size_t n = strlen(p);

	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
}

/* The directory above @p ("/a/b" -> "/a", "/a" -> "/"), in place; false for "/". */
static bool go_up(char *p)
{
	char *slash;

	if (strcmp(p, "/") == 0)
		return false;
	slash = strrchr(p, '/');
	if (!slash)
		return false;
	while (slash > p && slash[-1] == '/')
		slash--;
	if (slash == p)
		p[1] = '\0';
	else
		*slash = '\0';
	return true;
}

/*
 * An O_PATH descriptor of directory @path below @root (@full: the same,
 * joined, on the live host). Below a --root, symbolic links resolve inside
 * the tree (ht_root_open()), as they would on the host the tree stands for.
 */
static int open_dir(const char *root, const char *path, const char *full)
{
	int fd;

	if (!ht_root_is_live(root))
		return ht_root_open(root, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	fd = open(full, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The real path of @fd (for mountinfo's mount points), else @full resolved. */
static char *real_dir(int fd, const char *full)
{
	char proc[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, sizeof(buf) - 1);
	if (n > 0 && buf[0] == '/') {
		buf[n] = '\0';
		return strdup(buf);
	}
	return realpath(full, NULL);
}

/* NAME.SUFFIX into @buf: "storage.metadata.free". */
static const char *fact_name(char *buf, size_t size, const char *name, const char *suffix)
{
	snprintf(buf, size, "storage.%s.%s", name, suffix);
	return buf;
}

/* Sets storage.NAME.fsync_rate: measured in @dir, or unavailable with the reason. */
static int collect_fsync(struct ht_facts *f, const char *root, const char *name, bool measure,
                         const char *dir, int probe_err)
{
	char fn[256], src[PATH_MAX + 128];
	double rate;
	unsigned rounds;
	uint64_t ns;
	int64_t per_s;
	int r;

	fact_name(fn, sizeof(fn), name, "fsync_rate");
	if (!measure)
		return ht_facts_set_errno(f, fn, ECANCELED, ht_fact_def_unit(fn),
		                          "skipped (--no-measure)");
	if (!ht_root_is_live(root))
		return ht_facts_set_errno(f, fn, EOPNOTSUPP, ht_fact_def_unit(fn),
		                          "not measured in a --root tree");
	if (probe_err < 0)
		return ht_facts_set_errno(f, fn, probe_err, ht_fact_def_unit(fn),
		                          "no directory to measure in");
	if (ht_collect_progress_wanted()) {
		snprintf(src, sizeof(src), "measuring the fsync rate in %s", dir);
		ht_collect_progress(src, FSYNC_BUDGET_MS / 1000.0);
	}
	r = ht_fsync_rate(dir, FSYNC_BUDGET_MS, FSYNC_MAX_ROUNDS, &rate, &rounds, &ns);
	ht_collect_progress(NULL, 0);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		snprintf(src, sizeof(src), "a temporary file in %s", dir);
		return ht_facts_set_errno(f, fn, r, ht_fact_def_unit(fn), src);
	}
	per_s = llround(rate);
	if (per_s < 1)
		per_s = 1;
	snprintf(src, sizeof(src), "measured: %u fdatasync() of 4 KiB in %" PRIu64 " ms in %s",
	         rounds, (ns + 500000) / 1000000, dir);
	return ht_facts_set_int(f, fn, per_s, ht_fact_def_unit(fn), src);
}

/* Every filesystem fact unavailable with @r (the directory could not be probed). */
static int all_unavailable(struct ht_facts *f, const char *name, int r, const char *source)
{
	static const char *const suffixes[] = { "exists",      "probed",     "fs",
		                                "free",        "size",       "inodes",
		                                "devices",     "device",     "inodes_free",
		                                "rotational",  "read_only_mount" };
	char fn[256];

	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		const char *fact = fact_name(fn, sizeof(fn), name, suffixes[i]);
		int q = ht_facts_set_errno(f, fact, r, ht_fact_def_unit(fact), source);

		if (q < 0)
			return q;
	}
	return 0;
}

static int collect_block(struct ht_facts *f, const char *name, dev_t dev)
{
	struct ht_block_info b;
	char fn[256], src[128];
	int r;

	snprintf(src, sizeof(src), "/sys/dev/block/%u:%u", major(dev), minor(dev));
	r = ht_block_info("/sys", major(dev), minor(dev), &b);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		static const char *const suffixes[] = { "device", "devices", "rotational" };
		const char *why = r == -ENODEV ? "no block device (major 0 in stat(2) st_dev)" : src;

		for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
			const char *fact = fact_name(fn, sizeof(fn), name, suffixes[i]);
			int q = ht_facts_set_errno(f, fact, r, ht_fact_def_unit(fact), why);

			if (q < 0)
				return q;
		}
		return 0;
	}
	r = ht_facts_set_str(f, fact_name(fn, sizeof(fn), name, "device"), b.device, src);
	if (r >= 0) {
		char dsrc[192];

		snprintf(dsrc, sizeof(dsrc), "%s and /sys/block/*/slaves", src);
		r = ht_facts_set_str(f, fact_name(fn, sizeof(fn), name, "devices"), b.devices,
		                     dsrc);
	}
	if (r >= 0) {
		fact_name(fn, sizeof(fn), name, "rotational");
		if (b.rotational_error < 0)
			r = ht_facts_set_errno(f, fn, b.rotational_error, ht_fact_def_unit(fn),
			                       b.rotational_source ? b.rotational_source : src);
		else
			r = ht_facts_set_bool(f, fn, b.rotational, b.rotational_source);
	}
	ht_block_info_free(&b);
	return r;
}

static int collect_fs(struct ht_facts *f, const char *name, int fd, const char *full,
                      const char *dir_src)
{
	_cleanup_free_ char *real = NULL, *mounts = NULL, *type = NULL;
	struct statfs sfs;
	struct stat st;
	char fn[256], src[PATH_MAX + 64];
	const char *magic_name;
	int r;

	static const char *const fs_suffixes[] = { "fs",          "free",       "size",
		                                   "inodes",      "inodes_free", "device",
		                                   "devices",     "rotational", "read_only_mount" };
	struct {
		const char *suffix;
		uint64_t v;
	} nums[4];
	uint64_t unit;

	if (fstatfs(fd, &sfs) < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		for (size_t i = 0; i < ARRAY_SIZE(fs_suffixes); i++) {
			const char *fact = fact_name(fn, sizeof(fn), name, fs_suffixes[i]);
			int q = ht_facts_set_errno(f, fact, r, ht_fact_def_unit(fact), dir_src);

			if (q < 0)
				return q;
		}
		return 0;
	}
	/* Sizes in f_frsize units (statfs(2)); f_frsize 0 on old kernels means f_bsize. */
	unit = sfs.f_frsize ? (uint64_t)sfs.f_frsize : (uint64_t)sfs.f_bsize;
	nums[0].suffix = "free";
	nums[0].v = (uint64_t)sfs.f_bavail * unit;
	nums[1].suffix = "size";
	nums[1].v = (uint64_t)sfs.f_blocks * unit;
	nums[2].suffix = "inodes";
	nums[2].v = (uint64_t)sfs.f_files;
	nums[3].suffix = "inodes_free";
	nums[3].v = (uint64_t)sfs.f_ffree;
	for (size_t i = 0; i < ARRAY_SIZE(nums); i++) {
		fact_name(fn, sizeof(fn), name, nums[i].suffix);
		/* A count beyond int64_t is no filesystem's: a bogus f_files (-1 on some FUSE). */
		if (nums[i].v > (uint64_t)INT64_MAX)
			r = ht_facts_set_errno(f, fn, ERANGE, ht_fact_def_unit(fn), dir_src);
		else
			r = ht_facts_set_int(f, fn, (int64_t)nums[i].v, ht_fact_def_unit(fn),
			                     dir_src);
		if (r < 0)
			return r;
	}

	/*
	 * Mounted read-only: f_flags (statfs(2), since Linux 2.6.36, which sets
	 * ST_VALID in it) & ST_RDONLY, the mount's flag or the superblock's.
	 */
	fact_name(fn, sizeof(fn), name, "read_only_mount");
	if (sfs.f_flags & ST_VALID)
		r = ht_facts_set_bool(f, fn, (sfs.f_flags & ST_RDONLY) != 0, dir_src);
	else
		r = ht_facts_set_errno(f, fn, EOPNOTSUPP, ht_fact_def_unit(fn),
		                       "statfs(2) f_flags without ST_VALID (a kernel before "
		                       "2.6.36)");
	if (r < 0)
		return r;

	/* The filesystem's name: the mount's, else f_type's. */
	fact_name(fn, sizeof(fn), name, "fs");
	real = real_dir(fd, full);
	r = ht_read_file(NULL, PATH_MOUNTINFO, &mounts);
	if (r == -ENOMEM)
		return r;
	if (r == 0 && real) {
		r = ht_mountinfo_fstype(mounts, major(st.st_dev), minor(st.st_dev), real, &type);
		if (r == -ENOMEM)
			return r;
	}
	if (type) {
		r = ht_facts_set_str(f, fn, type, PATH_MOUNTINFO);
	} else {
		magic_name = ht_fs_type_name((int64_t)sfs.f_type);
		snprintf(src, sizeof(src), "statfs(2) of %s: f_type 0x%llx", full,
		         (unsigned long long)(uint32_t)sfs.f_type);
		r = magic_name ? ht_facts_set_str(f, fn, magic_name, src)
		               : ht_facts_set_errno(f, fn, ENOENT, ht_fact_def_unit(fn), src);
	}
	if (r < 0)
		return r;
	return collect_block(f, name, st.st_dev);
}

int ht_collect_storage(struct ht_facts *f, const char *root, const char *name, const char *role,
                       const char *path, bool measure)
{
	_cleanup_free_ char *want = NULL, *probed = NULL, *full = NULL;
	_cleanup_close_ int fd = -1;
	char fn[256], src[PATH_MAX + 64];
	bool metadata;
	int r;

	/* NAME is a word such as "metadata" or "data12": fact names have room for 200 bytes. */
	if (!f || !name || !*name || strlen(name) > 200 || !role || !path)
		return -EINVAL;
	metadata = strcmp(role, "metadata") == 0;
	if ((r = ht_facts_set_str(f, fact_name(fn, sizeof(fn), name, "path"), path, NULL)) < 0 ||
	    (r = ht_facts_set_str(f, fact_name(fn, sizeof(fn), name, "role"), role, NULL)) < 0)
		return r;

	if (path[0] != '/') {
		r = all_unavailable(f, name, EINVAL, "not an absolute path");
		if (r >= 0 && metadata)
			r = collect_fsync(f, root, name, measure, NULL, -EINVAL);
		return r;
	}
	want = strdup(path);
	probed = strdup(path);
	if (!want || !probed)
		return -ENOMEM;
	strip_slashes(want);
	strip_slashes(probed);

	/* The directory, else its nearest existing parent. */
	for (;;) {
		free(full);
		full = ht_root_path(root, probed);
		if (!full)
			return -ENOMEM;
		strip_slashes(full); /* "/srv/img/" for "/" below --root /srv/img */
		fd = open_dir(root, probed, full);
		if (fd >= 0 || (fd != -ENOENT && fd != -ENOTDIR) || !go_up(probed))
			break;
	}
	if (fd < 0) {
		r = fd;
		snprintf(src, sizeof(src), "open(2) of %s", full);
		r = all_unavailable(f, name, r, src);
		if (r >= 0 && metadata)
			r = collect_fsync(f, root, name, measure, NULL, fd);
		return r;
	}

	snprintf(src, sizeof(src), "stat(2) of %s", full);
	if ((r = ht_facts_set_bool(f, fact_name(fn, sizeof(fn), name, "exists"),
	                           strcmp(want, probed) == 0, src)) < 0 ||
	    (r = ht_facts_set_str(f, fact_name(fn, sizeof(fn), name, "probed"), probed, src)) < 0)
		return r;
	/*
	 * A --root tree is a copy of another host's files: they lie on one of
	 * this machine's filesystems, whose type, space and disks say nothing
	 * of that host's.
	 */
	if (!ht_root_is_live(root)) {
		static const char *const suffixes[] = { "fs",         "free",    "size",
			                                "inodes",     "inodes_free", "device",
			                                "devices",    "rotational", "read_only_mount" };

		for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
			const char *fact = fact_name(fn, sizeof(fn), name, suffixes[i]);

			r = ht_facts_set_errno(f, fact, -EOPNOTSUPP, ht_fact_def_unit(fact),
			                       "not probed under --root: the tree's files lie "
			                       "on this machine's filesystem, not on its host's");
			if (r < 0)
				return r;
		}
		return metadata ? collect_fsync(f, root, name, measure, full, 0) : 0;
	}
	snprintf(src, sizeof(src), "statfs(2) of %s", full);
	r = collect_fs(f, name, fd, full, src);
	if (r < 0)
		return r;
	if (metadata)
		return collect_fsync(f, root, name, measure, full, 0);
	return 0;
}
