/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fsutil (confined reads and writes below --root) and apply/revert on a
 * temporary tree with faults injected where the kernel rarely fails: the
 * test links with -Wl,--wrap=fsync,--wrap=renameat,--wrap=write so that a
 * directory fsync, a rename or a procfs-like write can fail or "clamp" on
 * demand. Nothing outside the temporary directory is touched.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include <json-c/json.h>

#include "shared/fsutil.h"
#include "shared/rootfs.h"
#include "persist/persist.h"
#include "persist/persist-internal.h"
#include "shared/util.h"
#include "test-util.h"

/* ---- fault injection (the library's calls land here through --wrap) ---- */

int __real_fsync(int fd);
int __real_renameat(int olddfd, const char *old, int newdfd, const char *new);
ssize_t __real_write(int fd, const void *buf, size_t n);
int __wrap_fsync(int fd);
int __wrap_renameat(int olddfd, const char *old, int newdfd, const char *new);
ssize_t __wrap_write(int fd, const void *buf, size_t n);

static struct {
	const char *fail_rename_to;     /* renameat() onto this name fails with EIO */
	const char *fail_dirsync_after; /* the next directory fsync after a rename onto it fails */
	const char *clamp;              /* a write to a file of this name stores "1\n" */
	bool clamp_once;
	char last_rename[NAME_MAX + 1];
	char synced[64][PATH_MAX];      /* directories fsynced, in order */
	size_t nsynced;
} fault;

static void fault_reset(void)
{
	memset(&fault, 0, sizeof(fault));
}

static const char *fd_name(int fd, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, len - 1);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

int __wrap_fsync(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (fault.nsynced < ARRAY_SIZE(fault.synced))
			fd_name(fd, fault.synced[fault.nsynced++], PATH_MAX);
		if (fault.fail_dirsync_after &&
		    strcmp(fault.last_rename, fault.fail_dirsync_after) == 0) {
			fault.fail_dirsync_after = NULL;
			errno = EIO;
			return -1;
		}
	}
	return __real_fsync(fd);
}

int __wrap_renameat(int olddfd, const char *old, int newdfd, const char *new)
{
	snprintf(fault.last_rename, sizeof(fault.last_rename), "%s", new);
	if (fault.fail_rename_to && strcmp(new, fault.fail_rename_to) == 0) {
		errno = EIO;
		return -1;
	}
	return __real_renameat(olddfd, old, newdfd, new);
}

/* Like a sysctl whose handler clamps: the write succeeds, another value is stored. */
ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	char name[PATH_MAX];
	const char *base;
	size_t len;

	if (fault.clamp) {
		fd_name(fd, name, sizeof(name));
		base = strrchr(name, '/');
		base = base ? base + 1 : name;
		len = strlen(fault.clamp);
		/* A plain file is replaced through a temp file: ".NAME.hosttune-XXXXXX". */
		if (strcmp(base, fault.clamp) == 0 ||
		    (ht_tmp_name(base) && strncmp(base + 1, fault.clamp, len) == 0 &&
		     strncmp(base + 1 + len, ".hosttune-", 10) == 0)) {
			if (fault.clamp_once)
				fault.clamp = NULL;
			if (__real_write(fd, "1\n", 2) != 2)
				return -1;
			return (ssize_t)n;
		}
	}
	return __real_write(fd, buf, n);
}

/* ---- a temporary tree ---- */

static char root[PATH_MAX / 2], outside[PATH_MAX / 2 + 16];

static void rm_rf(const char *p)
{
	nftw(p, ht_test_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int setup(void **state _unused_)
{
	const char *t = getenv("TMPDIR");

	snprintf(root, sizeof(root), "%s/ht-fsutil.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(root))
		return -1;
	if (snprintf(outside, sizeof(outside), "%s.outside", root) >= (int)sizeof(outside))
		return -1;
	rm_rf(outside);
	if (mkdir(outside, 0755) < 0)
		return -1;
	fault_reset();
	return 0;
}

static int teardown(void **state _unused_)
{
	fault_reset();
	rm_rf(root);
	rm_rf(outside);
	return 0;
}

static char *at(const char *rel)
{
	static char buf[4][PATH_MAX];
	static int k;

	k = (k + 1) % 4;
	if (snprintf(buf[k], PATH_MAX, "%s%s", root, rel) >= PATH_MAX)
		fail_msg("path too long");
	return buf[k];
}

/* Writes @rel below the root (parents created) with @mode. */
static void put(const char *rel, const char *content, mode_t mode)
{
	FILE *f;

	ht_test_mkdir_parents(root, rel);
	f = fopen(at(rel), "w");
	assert_non_null(f);
	fputs(content, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(at(rel), mode), 0);
}

/* The content of @full, or NULL when absent (caller frees). */
static char *slurp(const char *full)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = fopen(full, "r");

	if (!f)
		return NULL;
	assert_int_not_equal(getdelim(&s, &n, '\0', f), -2);
	fclose(f);
	if (!s)
		s = strdup("");
	return s;
}

static mode_t mode_of(const char *full)
{
	struct stat st;

	assert_int_equal(lstat(full, &st), 0);
	return st.st_mode & 07777;
}

static bool exists(const char *full)
{
	struct stat st;

	return lstat(full, &st) == 0;
}

/* Every entry below the root with its type, mode and content: equal listings, equal trees. */
static char **lines;
static size_t nlines;

static int tree_cb(const char *p, const struct stat *st, int flag _unused_,
                   struct FTW *f _unused_)
{
	char *line = NULL, target[PATH_MAX] = "";
	_cleanup_free_ char *content = NULL;

	if (S_ISREG(st->st_mode))
		content = slurp(p);
	if (S_ISLNK(st->st_mode)) {
		ssize_t n = readlink(p, target, sizeof(target) - 1);

		target[n < 0 ? 0 : n] = '\0';
	}
	assert_true(asprintf(&line, "%s %o %s [%s]%s", p + strlen(root),
	                     (unsigned)st->st_mode, S_ISLNK(st->st_mode) ? "link" : "",
	                     content ? content : "", S_ISLNK(st->st_mode) ? target : "") > 0);
	lines = realloc(lines, (nlines + 1) * sizeof(*lines));
	lines[nlines++] = line;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *tree(void)
{
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);

	lines = NULL;
	nlines = 0;
	assert_int_equal(nftw(root, tree_cb, 16, FTW_PHYS), 0);
	qsort(lines, nlines, sizeof(*lines), cmp_str);
	for (size_t i = 0; i < nlines; i++) {
		fprintf(m, "%s\n", lines[i]);
		free(lines[i]);
	}
	free(lines);
	fclose(m);
	return out;
}

/* ---- fsutil ---- */

static void test_read_at(void **state _unused_)
{
	struct ht_error err = { "" };
	_cleanup_free_ char *c = NULL, *want = NULL;
	mode_t mode = 0;

	assert_int_equal(ht_file_read_at(root, "/etc/none/x.conf", &c, NULL, &err), 0);
	assert_null(c);
	put("/etc/sysctl.d/a.conf", "a = 1\n", 0600);
	assert_int_equal(ht_file_read_at(root, "/etc/sysctl.d/a.conf", &c, &mode, &err), 0);
	assert_string_equal(c, "a = 1\n");
	assert_int_equal(mode, 0600);
	free(TAKE_PTR(c));

	/* The file a symlink, even one that stays inside the root. */
	assert_int_equal(symlink("a.conf", at("/etc/sysctl.d/b.conf")), 0);
	assert_int_equal(ht_file_read_at(root, "/etc/sysctl.d/b.conf", &c, NULL, &err), -ELOOP);
	assert_true(asprintf(&want, "%s/etc/sysctl.d/b.conf is a symlink", root) > 0);
	assert_non_null(strstr(err.msg, want));

	/* A directory on the way a symlink out of the root. */
	assert_int_equal(symlink(outside, at("/etc/modprobe.d")), 0);
	assert_int_equal(ht_file_read_at(root, "/etc/modprobe.d/hosttune.conf", &c, NULL, &err),
	                 -ELOOP);
	free(want);
	assert_true(asprintf(&want, "%s/etc/modprobe.d is a symlink", root) > 0);
	assert_non_null(strstr(err.msg, want));
	assert_non_null(strstr(err.msg, "below --root"));

	assert_int_equal(ht_file_read_at(root, "/etc/../../x", &c, NULL, &err), -EXDEV);
	assert_non_null(strstr(err.msg, "leaves --root"));

	/* On the live root directories resolve as usual, the file itself must not be a link. */
	assert_int_equal(ht_file_read_at(NULL, at("/etc/modprobe.d/none"), &c, NULL, &err), 0);
	assert_null(c);
	assert_int_equal(ht_file_read_at(NULL, at("/etc/sysctl.d/b.conf"), &c, NULL, &err),
	                 -ELOOP);
	assert_int_equal(ht_file_read(at("/etc/sysctl.d/a.conf"), &c, NULL), 0);
	assert_string_equal(c, "a = 1\n");
	free(TAKE_PTR(c));

	/* A FIFO planted in the tree never blocks. */
	assert_int_equal(mkfifo(at("/etc/sysctl.d/fifo"), 0644), 0);
	assert_int_equal(ht_file_read_at(root, "/etc/sysctl.d/fifo", &c, NULL, &err), -EINVAL);
	assert_int_equal(mkdir(at("/etc/sysctl.d/dir"), 0755), 0);
	assert_int_equal(ht_file_read_at(root, "/etc/sysctl.d/dir", &c, NULL, &err), -EISDIR);
}

/* A directory fsynced whose path was PREFIX, six temp characters, then SUFFIX. */
static bool synced_under(const char *prefix, const char *suffix)
{
	size_t n = strlen(prefix);

	for (size_t i = 0; i < fault.nsynced; i++)
		if (strncmp(fault.synced[i], prefix, n) == 0 && strlen(fault.synced[i]) > n + 6 - 1 &&
		    strcmp(fault.synced[i] + n + 6, suffix) == 0)
			return true;
	return false;
}

static bool synced(const char *full)
{
	for (size_t i = 0; i < fault.nsynced; i++)
		if (strcmp(fault.synced[i], full) == 0)
			return true;
	return false;
}

/* Temp files left in @rel's directory: names ".*.hosttune-*". */
static int temps(const char *rel_dir)
{
	char pat[PATH_MAX];
	int n = 0;
	DIR *d;

	snprintf(pat, sizeof(pat), "%s", at(rel_dir));
	d = opendir(pat);
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] == '.' && strstr(e->d_name, ".hosttune-"))
			n++;
	closedir(d);
	return n;
}

static void test_write_at(void **state _unused_)
{
	struct ht_error err = { "" };
	_cleanup_free_ char *c = NULL;
	bool changed = true;
	char etc[PATH_MAX];
	mode_t old_umask;

	/*
	 * Missing directories are created 0755 whatever the umask, and appear at
	 * once with the file: built as ROOT/.etc.hosttune-XXXXXX (each directory
	 * fsynced while it has that name), then renamed, then ROOT fsynced.
	 */
	old_umask = umask(077);
	assert_int_equal(ht_file_write_at(root, "/etc/sysctl.d/90-hosttune.conf", "x = 1\n", 0644,
	                                   &changed, &err), 0);
	umask(old_umask);
	assert_true(changed);
	c = slurp(at("/etc/sysctl.d/90-hosttune.conf"));
	assert_string_equal(c, "x = 1\n");
	assert_int_equal(mode_of(at("/etc/sysctl.d/90-hosttune.conf")), 0644);
	assert_int_equal(mode_of(at("/etc")), 0755);
	assert_int_equal(mode_of(at("/etc/sysctl.d")), 0755);
	assert_int_equal(temps("/etc/sysctl.d"), 0);
	snprintf(etc, sizeof(etc), "%s/.etc.hosttune-", root);
	assert_true(synced(root));
	assert_true(synced_under(etc, ""));
	assert_true(synced_under(etc, "/sysctl.d"));
	assert_false(synced(at("/etc")));

	/* The mode asked for, whatever the umask. */
	assert_int_equal(ht_file_write_at(root, "/etc/sysctl.d/90-hosttune.conf", "x = 2\n", 0600,
	                                   &changed, &err), 0);
	assert_int_equal(mode_of(at("/etc/sysctl.d/90-hosttune.conf")), 0600);

	/* A symlinked directory below the root: nothing is written where it points. */
	assert_int_equal(symlink(outside, at("/etc/modprobe.d")), 0);
	assert_int_equal(ht_file_write_at(root, "/etc/modprobe.d/hosttune.conf", "y\n", 0644,
	                                   &changed, &err), -ELOOP);
	assert_false(changed);
	assert_non_null(strstr(err.msg, "/etc/modprobe.d is a symlink"));
	assert_int_equal(rmdir(outside), 0); /* still empty */
	assert_int_equal(mkdir(outside, 0755), 0);

	/* A symlink at the file: refused, the link left as it was. */
	assert_int_equal(symlink("90-hosttune.conf", at("/etc/sysctl.d/91.conf")), 0);
	assert_int_equal(ht_file_write_at(root, "/etc/sysctl.d/91.conf", "z\n", 0644, &changed,
	                                   &err), -ELOOP);
	assert_false(changed);
	free(c);
	c = slurp(at("/etc/sysctl.d/90-hosttune.conf"));
	assert_string_equal(c, "x = 2\n");

	/* The rename fails: the file unchanged, no temp file left. */
	fault.fail_rename_to = "90-hosttune.conf";
	assert_int_equal(ht_file_write_at(root, "/etc/sysctl.d/90-hosttune.conf", "x = 3\n", 0644,
	                                   &changed, &err), -EIO);
	assert_false(changed);
	free(c);
	c = slurp(at("/etc/sysctl.d/90-hosttune.conf"));
	assert_string_equal(c, "x = 2\n");
	assert_int_equal(temps("/etc/sysctl.d"), 0);

	/* The directory fsync after the rename fails: changed, so that the caller undoes it. */
	fault_reset();
	fault.fail_dirsync_after = "90-hosttune.conf";
	assert_int_equal(ht_file_write_at(root, "/etc/sysctl.d/90-hosttune.conf", "x = 4\n", 0644,
	                                   &changed, &err), -EIO);
	assert_true(changed);
	assert_non_null(strstr(err.msg, "fsync of its directory failed"));
	assert_int_equal(temps("/etc/sysctl.d"), 0);

	/* The live root: a symlinked directory is followed, a symlinked file is not. */
	assert_int_equal(ht_file_write_at(NULL, at("/etc/modprobe.d/hosttune.conf"), "y\n", 0644,
	                                   &changed, &err), 0);
	assert_true(exists(at("/etc/modprobe.d/hosttune.conf")));
	assert_int_equal(ht_file_write_at(NULL, at("/etc/sysctl.d/91.conf"), "z\n", 0644,
	                                   &changed, &err), -ELOOP);
}

static void test_remove_and_dirs(void **state _unused_)
{
	struct ht_error err = { "" };
	struct ht_paths missing = { 0 };
	bool changed = true, removed = true;

	assert_int_equal(ht_file_remove_at(root, "/etc/x/none", &changed, &err), 0);
	assert_false(changed);
	put("/etc/sysctl.d/a.conf", "a\n", 0644);
	assert_int_equal(symlink("a.conf", at("/etc/sysctl.d/l.conf")), 0);
	assert_int_equal(ht_file_remove_at(root, "/etc/sysctl.d/l.conf", &changed, &err), -ELOOP);
	assert_true(exists(at("/etc/sysctl.d/l.conf")));
	assert_int_equal(ht_file_remove_at(root, "/etc/sysctl.d/a.conf", &changed, &err), 0);
	assert_true(changed);
	assert_false(exists(at("/etc/sysctl.d/a.conf")));

	/* Missing directories, outermost first: /etc exists, the rest does not. */
	assert_int_equal(ht_dirs_missing(root, "/etc/systemd/network/90-hosttune-eth0.link",
	                                 &missing, &err), 0);
	assert_int_equal(missing.n, 2);
	assert_string_equal(missing.v[0], "/etc/systemd");
	assert_string_equal(missing.v[1], "/etc/systemd/network");
	assert_int_equal(ht_dirs_missing(root, "/var/lib/hosttune/state", &missing, &err), 0);
	assert_int_equal(missing.n, 5);
	assert_string_equal(missing.v[2], "/var");
	assert_string_equal(missing.v[4], "/var/lib/hosttune");
	ht_paths_free(&missing);
	assert_int_equal(symlink(outside, at("/var")), 0);
	assert_int_equal(ht_dirs_missing(root, "/var/lib/hosttune/state", &missing, &err), -ELOOP);
	ht_paths_free(&missing);

	/* Empty directories go, others stay; a symlink is not a directory to remove. */
	assert_int_equal(ht_dir_remove_at(root, "/etc/sysctl.d/l.conf", &removed, &err), -ELOOP);
	put("/etc/sysctl.d/f.conf", "f\n", 0644);
	assert_int_equal(ht_dir_remove_at(root, "/etc/sysctl.d/f.conf", &removed, &err), -ENOTDIR);
	assert_int_equal(unlink(at("/etc/sysctl.d/f.conf")), 0);
	assert_int_equal(ht_dir_remove_at(root, "/etc/sysctl.d", &removed, &err), -ENOTEMPTY);
	assert_false(removed);
	assert_int_equal(unlink(at("/etc/sysctl.d/l.conf")), 0);
	assert_int_equal(ht_dir_remove_at(root, "/etc/sysctl.d", &removed, &err), 0);
	assert_true(removed);
	assert_int_equal(ht_dir_remove_at(root, "/etc/sysctl.d", &removed, &err), 0);
	assert_false(removed);
	assert_int_equal(ht_dir_remove_at(root, "/var", &removed, &err), -ELOOP);
	assert_true(exists(outside));
}

static void test_live_write_at(void **state _unused_)
{
	struct ht_error err = { "" };
	_cleanup_free_ char *c = NULL;
	bool changed = true;

	put("/proc/sys/net/netfilter/nf_conntrack_max", "4096\n", 0644);
	assert_int_equal(ht_live_write_at(root, "/proc/sys/net/netfilter/nf_conntrack_max", "65536",
	                                  &changed, &err), 0);
	assert_true(changed);
	assert_int_equal(ht_live_read_at(root, "/proc/sys/net/netfilter/nf_conntrack_max", &c,
	                                 &err), 0);
	assert_string_equal(c, "65536");

	/* Absent: the key or its directory (a module not loaded). Never created. */
	assert_int_equal(ht_live_write_at(root, "/proc/sys/net/netfilter/none", "1", &changed,
	                                  &err), -ENOENT);
	assert_false(changed);
	assert_int_equal(ht_live_write_at(root, "/sys/module/nf_conntrack/parameters/hashsize",
	                                  "1", &changed, &err), -ENOENT);
	assert_false(exists(at("/sys")));

	/* The kernel clamps: the write took effect, the value read back differs. */
	fault.clamp = "nf_conntrack_max";
	assert_int_equal(ht_live_write_at(root, "/proc/sys/net/netfilter/nf_conntrack_max",
	                                  "262144", &changed, &err), -EIO);
	assert_true(changed);
	assert_non_null(strstr(err.msg, "wrote 262144 but read back 1"));
	fault_reset();

	/* proc/sys/net a symlink out of the root: the file it leads to stays as it is. */
	rm_rf(at("/proc/sys/net"));
	assert_int_equal(symlink(outside, at("/proc/sys/net")), 0);
	assert_int_equal(mkdir(at("/proc/sys/net/netfilter"), 0755), 0);
	put("/proc/sys/net/netfilter/nf_conntrack_max", "4096\n", 0644);
	assert_int_equal(ht_live_write_at(root, "/proc/sys/net/netfilter/nf_conntrack_max", "1",
	                                  &changed, &err), -ELOOP);
	assert_false(changed);
	assert_non_null(strstr(err.msg, "/proc/sys/net is a symlink"));
	free(c);
	c = slurp(at("/proc/sys/net/netfilter/nf_conntrack_max"));
	assert_string_equal(c, "4096\n");
}

static void test_names(void **state _unused_)
{
	assert_true(ht_managed_file("/etc/sysctl.d/90-hosttune.conf"));
	assert_true(ht_managed_file("/etc/modprobe.d/hosttune.conf"));
	assert_true(ht_managed_file("/etc/modules-load.d/hosttune.conf"));
	assert_true(ht_managed_file("/etc/modprobe.d/hosttune.conf.hosttune-orig"));
	assert_true(ht_managed_file("/etc/systemd/network/90-hosttune-eth0.link"));
	assert_true(ht_managed_file("/etc/systemd/network/90-hosttune-enp1s0f1.link"
	                            HT_BACKUP_SUFFIX));
	assert_false(ht_managed_file("/etc/systemd/network/90-hosttune-.link"));
	assert_false(ht_managed_file("/etc/systemd/network/90-hosttune-...link"));
	assert_false(ht_managed_file("/etc/systemd/network/90-hosttune-a/b.link"));
	assert_false(ht_managed_file("/etc/systemd/network/90-hosttune-a b.link"));
	/* 16 bytes: one over IFNAMSIZ - 1 (include/uapi/linux/if.h). */
	assert_false(ht_managed_file("/etc/systemd/network/90-hosttune-abcdefghijklmnop.link"));
	assert_true(ht_managed_file("/etc/systemd/network/90-hosttune-abcdefghijklmno.link"));
	assert_false(ht_managed_file("/etc/passwd"));
	assert_false(ht_managed_file("/etc/sysctl.d/90-hosttune.conf.hosttune-orig.hosttune-orig"));
	assert_false(ht_managed_file("/../../outside-c/evil.conf"));
	assert_false(ht_managed_file("/etc//sysctl.d/90-hosttune.conf"));
	assert_true(ht_ifname_valid("eth0.100"));
	assert_false(ht_ifname_valid("."));
	assert_false(ht_ifname_valid(".."));
	assert_false(ht_ifname_valid("a:1"));
	assert_false(ht_ifname_valid(""));
}

/* ---- apply and revert on a hand-made plan ---- */

#define SYSCTL "/etc/sysctl.d/90-hosttune.conf"
#define MODPROBE "/etc/modprobe.d/hosttune.conf"
#define MAX "/proc/sys/net/netfilter/nf_conntrack_max"
#define HASH "/sys/module/nf_conntrack/parameters/hashsize"
#define FOREIGN "options nf_conntrack hashsize=1024\n"
#define NEW_SYSCTL HT_FILE_HEADER "\nnet.netfilter.nf_conntrack_max = 65536\n"
#define NEW_MODPROBE HT_FILE_HEADER "\noptions nf_conntrack hashsize=65536\n"

/*
 * The tree before apply: a foreign modprobe.d file of mode 0600, no
 * sysctl.d, two live values. The plan: create the sysctl.d file, take over
 * the modprobe.d file (--force), raise hashsize then nf_conntrack_max.
 */
static void make_plan(struct ht_plan *p)
{
	put(MODPROBE, FOREIGN, 0600);
	put(MAX, "4096\n", 0644);
	put(HASH, "4096\n", 0600);
	memset(p, 0, sizeof(*p));
	p->profile = strdup("garage");
	p->nfiles = 2;
	p->files = calloc(2, sizeof(*p->files));
	p->files[0] = (struct ht_plan_file){ .path = strdup(SYSCTL), .new = strdup(NEW_SYSCTL) };
	p->files[1] = (struct ht_plan_file){ .path = strdup(MODPROBE), .old = strdup(FOREIGN),
	                                     .new = strdup(NEW_MODPROBE), .foreign = true };
	p->nlive = 2;
	p->live = calloc(2, sizeof(*p->live));
	p->live[0] = (struct ht_plan_live){ .kind = HT_LIVE_PATH,
	                                    .key = strdup("module.nf_conntrack.hashsize"),
	                                    .path = strdup(HASH), .old = strdup("4096"),
	                                    .new = strdup("65536") };
	p->live[1] = (struct ht_plan_live){ .kind = HT_LIVE_PATH,
	                                    .key = strdup("net.netfilter.nf_conntrack_max"),
	                                    .path = strdup(MAX), .old = strdup("4096"),
	                                    .new = strdup("65536") };
}

/* The live keys the rules set, as ht_state_keys() gives them: those of make_plan(). */
static const struct ht_paths *rule_keys(void)
{
	static struct ht_paths keys;

	if (!keys.n) {
		assert_int_equal(ht_paths_add(&keys, "module.nf_conntrack.hashsize"), 0);
		assert_int_equal(ht_paths_add(&keys, "net.netfilter.nf_conntrack_max"), 0);
	}
	return &keys;
}

/* Runs revert; *out gets its report (caller frees). */
static int revert(char **out, struct ht_error *err)
{
	size_t len;
	FILE *m = open_memstream(out, &len);
	int r = ht_revert(root, NULL, rule_keys(), m, err);

	fclose(m);
	return r;
}

static void test_apply_revert(void **state _unused_)
{
	struct ht_error err = { "" };
	_cleanup_free_ char *before = NULL, *after = NULL, *c = NULL, *report = NULL;
	struct ht_plan p;

	make_plan(&p);
	before = tree();
	assert_int_equal(ht_plan_apply(&p, root, NULL, rule_keys(), false, NULL, &err), -EEXIST);
	assert_int_equal(ht_plan_apply(&p, root, NULL, rule_keys(), true, NULL, &err), 0);
	c = slurp(at(MAX));
	assert_string_equal(c, "65536\n");
	/* The copy of the file taken over keeps its mode; the new file is 0644. */
	assert_int_equal(mode_of(at(MODPROBE ".hosttune-orig")), 0600);
	assert_int_equal(mode_of(at(MODPROBE)), 0644);
	assert_int_equal(mode_of(at(HT_STATE_FILE)), 0600);

	assert_int_equal(revert(&report, &err), 0);
	assert_non_null(strstr(report, "restored " MODPROBE "\n"));
	assert_non_null(strstr(report, "removed " SYSCTL "\n"));
	assert_non_null(strstr(report, "removed directory /etc/sysctl.d\n"));
	assert_non_null(strstr(report, "removed directory /var\n"));
	after = tree();
	assert_string_equal(before, after);
	ht_plan_free(&p);
}

/* The rename of the sysctl file took, the fsync of its directory failed: it is undone too. */
static void test_apply_dirsync_fails(void **state _unused_)
{
	struct ht_error err = { "" };
	_cleanup_free_ char *before = NULL, *after = NULL;
	struct ht_plan p;

	make_plan(&p);
	before = tree();
	fault.fail_dirsync_after = "90-hosttune.conf";
	assert_int_equal(ht_plan_apply(&p, root, NULL, rule_keys(), true, NULL, &err), -EIO);
	assert_non_null(strstr(err.msg, "fsync of its directory failed"));
	after = tree();
	assert_string_equal(before, after);
	ht_plan_free(&p);
}

/* The backup of the foreign file is written, the file's own rename fails: no copy stays. */
static void test_apply_backup_then_fail(void **state _unused_)
{
	struct ht_error err = { "" };
	_cleanup_free_ char *before = NULL, *after = NULL;
	struct ht_plan p;

	make_plan(&p);
	before = tree();
	fault.fail_rename_to = "hosttune.conf";
	assert_int_equal(ht_plan_apply(&p, root, NULL, rule_keys(), true, NULL, &err), -EIO);
	after = tree();
	assert_string_equal(before, after);
	assert_int_equal(mode_of(at(MODPROBE)), 0600);
	/* ... and the same when the copy's own directory fsync fails after its rename. */
	fault_reset();
	fault.fail_dirsync_after = "hosttune.conf.hosttune-orig";
	assert_int_equal(ht_plan_apply(&p, root, NULL, rule_keys(), true, NULL, &err), -EIO);
	free(after);
	after = tree();
	assert_string_equal(before, after);
	ht_plan_free(&p);
}

/* nf_conntrack_max reads back clamped: the write took effect, so it is restored too. */
static void test_apply_clamped(void **state _unused_)
{
	struct ht_error err = { "" };
	_cleanup_free_ char *before = NULL, *after = NULL, *report = NULL;
	struct ht_plan p;

	make_plan(&p);
	before = tree();
	fault.clamp = "nf_conntrack_max";
	fault.clamp_once = true;
	assert_int_equal(ht_plan_apply(&p, root, NULL, rule_keys(), true, NULL, &err), -EIO);
	assert_non_null(strstr(err.msg, "wrote 65536 but read back 1"));
	after = tree();
	assert_string_equal(before, after);

	/* Clamped for good: rollback cannot restore it, so the state file stays for revert. */
	fault.clamp = "nf_conntrack_max";
	fault.clamp_once = false;
	assert_int_equal(ht_plan_apply(&p, root, NULL, rule_keys(), true, NULL, &err), -ENOTRECOVERABLE);
	assert_non_null(strstr(err.msg,
	                       "rollback could not restore net.netfilter.nf_conntrack_max"));
	assert_true(exists(at(HT_STATE_FILE)));
	fault_reset();
	assert_int_equal(revert(&report, &err), 0);
	assert_non_null(strstr(report, "restored net.netfilter.nf_conntrack_max to 4096"));
	free(after);
	after = tree();
	assert_string_equal(before, after);
	ht_plan_free(&p);
}

static void test_apply_bad_state(void **state _unused_)
{
	struct ht_error err = { "" };
	_cleanup_free_ char *before = NULL, *after = NULL;
	struct ht_plan p;

	make_plan(&p);
	put(HT_STATE_FILE, "{ not json", 0600);
	before = tree();
	assert_int_equal(ht_plan_apply(&p, root, NULL, rule_keys(), true, NULL, &err), -EBADMSG);
	assert_non_null(strstr(err.msg, "not a hosttune state file"));
	after = tree();
	assert_string_equal(before, after);
	ht_plan_free(&p);
}

/* Writes a state file from @json; revert must refuse it whole with @msg and change nothing. */
static void expect_refused(const char *json, const char *msg)
{
	struct ht_error err = { "" };
	_cleanup_free_ char *before = NULL, *after = NULL, *report = NULL;

	put(HT_STATE_FILE, json, 0600);
	before = tree();
	assert_int_equal(revert(&report, &err), -EBADMSG);
	if (!strstr(err.msg, msg))
		fail_msg("%s\ndoes not contain\n%s", err.msg, msg);
	assert_string_equal(report, "");
	after = tree();
	assert_string_equal(before, after);
}

static void test_revert_refuses(void **state _unused_)
{
	put(SYSCTL, HT_FILE_HEADER "\n", 0644);
	put(MAX, "65536\n", 0644);
	expect_refused("{\"files\":[{\"path\":\"" SYSCTL "\",\"content\":null,\"written\":null},"
	               "{\"path\":\"" MODPROBE "\",\"content\":null},"
	               "{\"path\":\"/../../outside-c/evil.conf\",\"content\":\"x\"}],\"live\":[]}",
	               "files entry 3: path \"/../../outside-c/evil.conf\" is not a file hosttune "
	               "writes");
	assert_false(exists(at("/../outside-c")));
	expect_refused("{\"files\":[{\"path\":\"/etc/passwd\",\"content\":\"x\"}],\"live\":[]}",
	               "files entry 1: path \"/etc/passwd\" is not a file hosttune writes");
	expect_refused("{\"files\":[{\"path\":\"/etc//sysctl.d/90-hosttune.conf\","
	               "\"content\":null}],\"live\":[]}", "is not a file hosttune writes");
	expect_refused("{\"files\":[{\"path\":\"" SYSCTL "\",\"content\":7}],\"live\":[]}",
	               "files entry 1: \"content\" is of the wrong type");
	expect_refused("{\"files\":[{\"path\":\"" SYSCTL "\",\"content\":null,\"mode\":\"644\"}],"
	               "\"live\":[]}", "\"mode\" is not a number");
	expect_refused("{\"files\":[],\"live\":[{\"key\":\"net.netfilter.nf_conntrack_max\","
	               "\"kind\":\"path\",\"path\":\"" MAX "\",\"old\":4096}]}",
	               "live entry 1: \"old\" is 4096: not a string or null");
	expect_refused("{\"files\":[],\"live\":[{\"key\":\"net.netfilter.nf_conntrack_max\","
	               "\"kind\":\"path\",\"path\":\"/proc/sys/../../etc/shadow\",\"old\":\"x\"}]}",
	               "live entry 1: path \"/proc/sys/../../etc/shadow\" is not the procfs/sysfs "
	               "file of net.netfilter.nf_conntrack_max");
	expect_refused("{\"files\":[],\"live\":[{\"key\":\"kernel.core_pattern\","
	               "\"kind\":\"path\",\"path\":\"/proc/sys/kernel/core_pattern\","
	               "\"old\":\"|/bin/sh\\n-c x\"}]}", "live entry 1: no rule sets kernel.core_pattern");
	expect_refused("{\"files\":[],\"live\":[{\"key\":\"net.netfilter.nf_conntrack_max\","
	               "\"kind\":\"path\",\"path\":\"" MAX "\",\"old\":\"4096\\t1\"}]}",
	               "live entry 1: \"old\" is not an integer");
	expect_refused("{\"files\":[],\"live\":[{\"key\":\"net.netfilter.nf_conntrack_max\","
	               "\"kind\":\"path\",\"path\":\"" MAX "\",\"old\":\"4096\","
	               "\"written\":\"\"}]}", "live entry 1: \"written\" is not an integer");
	expect_refused("{\"files\":[{\"path\":\"" SYSCTL "\",\"content\":\"x\",\"mode\":2468}],"
	               "\"live\":[]}", "files entry 1: \"mode\" 04644 has setuid, setgid or sticky bits");
	expect_refused("{\"files\":[{\"path\":\"" SYSCTL ".hosttune-orig\",\"content\":\"x\"}],"
	               "\"live\":[]}", "is not a file hosttune writes");
	expect_refused("{\"files\":[{\"path\":\"" SYSCTL "\",\"content\":\"a\\u0000b\"}],"
	               "\"live\":[]}", "holds a NUL character (\\u0000)");
	/* An escaped backslash before "u0000" is no NUL: that state is taken. */
	put(HT_STATE_FILE, "{\"files\":[],\"live\":[],\"profile\":\"a\\\\u0000\"}", 0600);
	{
		struct ht_error err = { "" };
		_cleanup_free_ char *report = NULL;

		assert_int_equal(revert(&report, &err), 0);
	}
	expect_refused("{\"root\":\"/\",\"files\":[],\"live\":[]}", "\"machine_id\" is missing");
	expect_refused("{\"root\":\"/elsewhere\",\"machine_id\":null,\"files\":[],\"live\":[]}",
	               "the state of --root /elsewhere (machine-id none), not of --root ");
	expect_refused("{\"files\":[],\"live\":[{\"key\":\"nic.eth0.channels.combined\","
	               "\"kind\":\"channels\",\"ifname\":\"eth0\",\"channel\":\"combined\","
	               "\"old\":\"4\"}]}", "channels are never set under --root");
	expect_refused("{\"files\":[],\"live\":[{\"key\":\"x\",\"kind\":\"exec\",\"old\":null}]}",
	               "\"kind\" is not");
	expect_refused("{\"files\":[{\"path\":\"" SYSCTL "\",\"content\":null}],\"live\":[],"
	               "\"created_dirs\":[\"/etc\",\"/tmp\"]}",
	               "created_dirs entry 2: /tmp holds no file of this state");
	expect_refused("{\"files\":[],\"live\":[],\"created_dirs\":[\"/var/lib/hosttune/state\"]}",
	               "holds no file of this state");
	expect_refused("{\"version\":2,\"files\":[],\"live\":[]}", "\"version\" is not 1");
	expect_refused("[1,2]", "not a hosttune state file");
}

/* Edited since apply: left alone, reported, and the state still goes. Gone keys are skipped. */
static void test_revert_edited_and_gone(void **state _unused_)
{
	struct ht_error err = { "" };
	_cleanup_free_ char *report = NULL, *c = NULL;
	struct ht_plan p;

	make_plan(&p);
	assert_int_equal(ht_plan_apply(&p, root, NULL, rule_keys(), true, NULL, &err), 0);
	put(SYSCTL, "# the admin's now\n", 0644);
	rm_rf(at("/sys/module/nf_conntrack"));
	assert_int_equal(revert(&report, &err), 0);
	assert_non_null(strstr(report, "left " SYSCTL ": edited since hosttune wrote it\n"));
	assert_non_null(strstr(report,
	                       "skipped module.nf_conntrack.hashsize: does not exist now\n"));
	assert_non_null(strstr(report, "left directory /etc/sysctl.d: not empty\n"));
	assert_non_null(strstr(report, "restored " MODPROBE "\n"));
	c = slurp(at(SYSCTL));
	assert_string_equal(c, "# the admin's now\n");
	free(c);
	c = slurp(at(MODPROBE));
	assert_string_equal(c, FOREIGN);
	assert_int_equal(mode_of(at(MODPROBE)), 0600);
	assert_false(exists(at(MODPROBE ".hosttune-orig")));
	assert_false(exists(at(HT_STATE_FILE)));
	assert_false(exists(at("/var")));
	ht_plan_free(&p);
}

/* What revert cannot restore stays in the state file; a second revert finishes. */
static void test_revert_incomplete(void **state _unused_)
{
	struct ht_error err = { "" };
	_cleanup_free_ char *before = NULL, *after = NULL, *report = NULL, *s = NULL;
	struct json_object *st, *v, *k;
	struct ht_plan p;

	make_plan(&p);
	before = tree();
	assert_int_equal(ht_plan_apply(&p, root, NULL, rule_keys(), true, NULL, &err), 0);
	assert_int_equal(rename(at(MAX), at("/proc/sys/net/netfilter/max.real")), 0);
	assert_int_equal(symlink("max.real", at(MAX)), 0);
	assert_int_equal(revert(&report, &err), -ELOOP);
	assert_non_null(strstr(err.msg, "1 change not restored; kept in the state file"));
	assert_non_null(strstr(report, "could not restore net.netfilter.nf_conntrack_max to 4096"));
	s = slurp(at(HT_STATE_FILE));
	st = json_tokener_parse(s);
	assert_non_null(st);
	assert_true(json_object_object_get_ex(st, "live", &v));
	assert_int_equal(json_object_array_length(v), 1);
	assert_true(json_object_object_get_ex(json_object_array_get_idx(v, 0), "key", &k));
	assert_string_equal(json_object_get_string(k), "net.netfilter.nf_conntrack_max");
	/* The file restored in a directory apply created stays: the directory is recorded for it. */
	assert_true(json_object_object_get_ex(st, "files", &v));
	assert_int_equal(json_object_array_length(v), 1);
	assert_true(json_object_object_get_ex(json_object_array_get_idx(v, 0), "path", &k));
	assert_string_equal(json_object_get_string(k), SYSCTL);
	json_object_put(st);

	assert_int_equal(unlink(at(MAX)), 0);
	assert_int_equal(rename(at("/proc/sys/net/netfilter/max.real"), at(MAX)), 0);
	free(report);
	assert_int_equal(revert(&report, &err), 0);
	after = tree();
	assert_string_equal(before, after);
	ht_plan_free(&p);
}

/*
 * The tree's machine ID: ROOT/etc/machine-id when it holds one, else none
 * (absent, empty, an image's "uninitialized", not 32 hex digits, a link
 * below the root); the tree as one path.
 */
static void test_machine_id(void **state _unused_)
{
	static const char *const none[] = { "", "\n", "uninitialized\n",
		                            "0123456789ABCDEF0123456789abcdef\n",
		                            "0123456789abcdef0123456789abcde\n" };
	_cleanup_free_ char *c = NULL, *tidy = NULL;
	char *id = NULL, real[PATH_MAX];

	assert_int_equal(ht_machine_id_read(root, &id), 0);
	assert_null(id);
	for (size_t i = 0; i < ARRAY_SIZE(none); i++) {
		put("/etc/machine-id", none[i], 0644);
		assert_int_equal(ht_machine_id_read(root, &id), 0);
		if (id)
			fail_msg("'%s' taken as machine ID %s", none[i], id);
	}
	put("/etc/machine-id", "0123456789abcdef0123456789abcdef\n", 0644);
	assert_int_equal(ht_machine_id_read(root, &id), 0);
	assert_non_null(id);
	assert_string_equal(id, "0123456789abcdef0123456789abcdef");
	free(id);
	/* A link is not followed below a --root: none. */
	assert_int_equal(rename(at("/etc/machine-id"), at("/etc/id.real")), 0);
	assert_int_equal(symlink("id.real", at("/etc/machine-id")), 0);
	assert_int_equal(ht_machine_id_read(root, &id), 0);
	assert_null(id);

	assert_non_null(realpath(root, real));
	assert_true(asprintf(&tidy, "%s/./etc/..//", root) > 0);
	assert_int_equal(ht_root_canonical(tidy, &c), 0);
	assert_string_equal(c, real);
	free(c);
	assert_int_equal(ht_root_canonical(NULL, &c), 0);
	assert_string_equal(c, "/");
	free(c);
	assert_int_equal(ht_root_canonical("//", &c), 0);
	assert_string_equal(c, "/");
	free(c);
	c = NULL;
	assert_int_equal(ht_root_canonical(at("/no-such-tree"), &c), -ENOENT);
}

/* The temp names ht_file_write_at() gives, and only those, are hosttune's. */
static void test_tmp_name(void **state _unused_)
{
	assert_true(ht_tmp_name(".90-hosttune.conf.hosttune-Ab12Cd"));
	assert_true(ht_tmp_name(".var.hosttune-000000"));
	assert_false(ht_tmp_name("90-hosttune.conf.hosttune-Ab12Cd"));  /* no leading dot */
	assert_false(ht_tmp_name("..hosttune-Ab12Cd"));                 /* no name */
	assert_false(ht_tmp_name(".x.hosttune-Ab12C"));                 /* five characters */
	assert_false(ht_tmp_name(".x.hosttune-Ab12C-"));                /* not alphanumeric */
	assert_false(ht_tmp_name(".x.hosttune-orig"));
	assert_false(ht_tmp_name("hosttune.conf.hosttune-orig"));       /* --force's copy */
}

/*
 * What a killed run leaves (a temp file, a temp directory tree of missing
 * directories) is removed by ht_tmp_sweep(); nothing else is, not a
 * symlink's target, and absent directories are skipped.
 */
static void test_tmp_sweep(void **state _unused_)
{
	static const char *const names[] = { "var", "sysctl.d", NULL };
	_cleanup_(ht_paths_free) struct ht_paths dirs = { 0 }, removed = { 0 };
	_cleanup_free_ char *c = NULL;
	char shown[PATH_MAX];

	put("/etc/sysctl.d/.90-hosttune.conf.hosttune-Ab12Cd", "half", 0600);
	put("/etc/sysctl.d/keep.conf", "k\n", 0644);
	put("/etc/sysctl.d/.keep.conf", "k\n", 0644);
	put("/.var.hosttune-Zz99zZ/lib/hosttune/state", "{}", 0600);
	put("/outside-target", "t\n", 0644);
	assert_int_equal(symlink(at("/outside-target"), at("/etc/.sysctl.d.hosttune-Qq11qQ")), 0);
	assert_int_equal(ht_paths_add(&dirs, "/"), 0);
	assert_int_equal(ht_paths_add(&dirs, "/etc"), 0);
	assert_int_equal(ht_paths_add(&dirs, "/etc/sysctl.d"), 0);
	assert_int_equal(ht_paths_add(&dirs, "/etc/modprobe.d"), 0); /* absent: skipped */
	put("/etc/sysctl.d/.90-hosttune.conf.hosttune-DDDDDD/data", "d\n", 0644);
	/* Another user's file under a temp name is never hosttune's (root can give it away). */
	if (geteuid() == 0) {
		put("/etc/sysctl.d/.other.conf.hosttune-Oo00oO", "o\n", 0644);
		assert_int_equal(chown(at("/etc/sysctl.d/.other.conf.hosttune-Oo00oO"), 65534, 65534), 0);
	}
	assert_int_equal(ht_tmp_sweep(root, &dirs, names, NULL, &removed), 0);
	assert_true(geteuid() != 0 || exists(at("/etc/sysctl.d/.other.conf.hosttune-Oo00oO")));
	/* A directory under a file's temp name is none of hosttune's: it stays. */
	assert_true(exists(at("/etc/sysctl.d/.90-hosttune.conf.hosttune-DDDDDD/data")));
	/* "/" first, then /etc, then /etc/sysctl.d: one entry each. */
	assert_int_equal(removed.n, 3);
	snprintf(shown, sizeof(shown), "%s/.var.hosttune-Zz99zZ", root);
	assert_string_equal(removed.v[0], shown);
	assert_false(exists(at("/.var.hosttune-Zz99zZ")));
	assert_false(exists(at("/etc/.sysctl.d.hosttune-Qq11qQ")));
	c = slurp(at("/outside-target"));
	assert_string_equal(c, "t\n");
	assert_false(exists(at("/etc/sysctl.d/.90-hosttune.conf.hosttune-Ab12Cd")));
	assert_true(exists(at("/etc/sysctl.d/keep.conf")));
	assert_true(exists(at("/etc/sysctl.d/.keep.conf")));
	assert_int_equal(temps("/etc/sysctl.d"), geteuid() == 0 ? 2 : 1);
}

/*
 * With @file_bases, only temp files of those names go: a state file's
 * sweep outside a tree leaves ".precious.hosttune-ABCDEF" next to it.
 */
static void test_tmp_sweep_bases(void **state _unused_)
{
	static const char *const files[] = { "st", NULL };
	static const char *const dirs_named[] = { "x", NULL };
	_cleanup_(ht_paths_free) struct ht_paths dirs = { 0 }, removed = { 0 };

	put("/t/.st.hosttune-Ab12Cd", "half", 0600);
	put("/t/.precious.hosttune-ABCDEF", "mine\n", 0600);
	put("/t/.y.hosttune-Zz99zZ/keep", "k\n", 0600);
	put("/t/.x.hosttune-Zz99zZ/st", "{}", 0600);
	assert_int_equal(ht_paths_add(&dirs, "/t"), 0);
	assert_int_equal(ht_tmp_sweep(root, &dirs, dirs_named, files, &removed), 0);
	assert_int_equal(removed.n, 2);
	assert_false(exists(at("/t/.st.hosttune-Ab12Cd")));
	assert_false(exists(at("/t/.x.hosttune-Zz99zZ")));
	assert_true(exists(at("/t/.precious.hosttune-ABCDEF")));
	assert_true(exists(at("/t/.y.hosttune-Zz99zZ/keep")));
}

/*
 * The state file's directories go at once when they hold nothing else;
 * when they hold something else nothing changes (the caller removes the file
 * and what is empty).
 */
static void test_chain_remove(void **state _unused_)
{
	struct ht_error err = { "" };
	bool retired = true, unsynced = false;

	put("/var/lib/hosttune/state", "{}", 0600);
	assert_int_equal(ht_chain_remove_at(root, "/var", "/var/lib/hosttune/state", &retired,
	                                    &unsynced, &err), 0);
	assert_true(retired);
	assert_false(exists(at("/var")));
	assert_false(unsynced);
	assert_int_equal(temps("/"), 0);

	put("/var/lib/hosttune/state", "{}", 0600);
	put("/var/lib/dpkg/status", "x", 0644);
	assert_int_equal(ht_chain_remove_at(root, "/var", "/var/lib/hosttune/state", &retired,
	                                    &unsynced, &err), 0);
	assert_false(retired);
	assert_true(exists(at("/var/lib/hosttune/state")));
	/* ... and from /var/lib/hosttune, which holds only the state file: it goes. */
	assert_int_equal(ht_chain_remove_at(root, "/var/lib/hosttune", "/var/lib/hosttune/state",
	                                    &retired, &unsynced, &err), 0);
	assert_true(retired);
	assert_false(exists(at("/var/lib/hosttune")));
	assert_true(exists(at("/var/lib/dpkg/status")));
	assert_int_equal(temps("/var/lib"), 0);
	/* Absent: nothing to do. */
	assert_int_equal(ht_chain_remove_at(root, "/var/lib/hosttune", "/var/lib/hosttune/state",
	                                    &retired, &unsynced, &err), 0);
	assert_false(retired);
}

/*
 * Below a --root a live value is a plain file: a write that fails leaves
 * the old value (never an empty file), and the mode stays.
 */
static void test_live_write_keeps_old(void **state _unused_)
{
	_cleanup_free_ char *c = NULL;
	struct ht_error err = { "" };
	bool changed = true;

	put(MAX, "4096\n", 0640);
	fault.fail_rename_to = "nf_conntrack_max";
	assert_int_equal(ht_live_write_at(root, MAX, "65536", &changed, &err), -EIO);
	assert_false(changed);
	c = slurp(at(MAX));
	assert_string_equal(c, "4096\n");
	free(c);
	assert_int_equal(temps("/proc/sys/net/netfilter"), 0);
	fault_reset();
	assert_int_equal(ht_live_write_at(root, MAX, "65536", &changed, &err), 0);
	assert_true(changed);
	c = slurp(at(MAX));
	assert_string_equal(c, "65536\n");
	assert_int_equal(mode_of(at(MAX)), 0640);
}

/* A symlinked directory under the root: apply refuses before it changes anything. */
static void test_apply_symlinked_dir(void **state _unused_)
{
	struct ht_error err = { "" };
	_cleanup_free_ char *before = NULL, *after = NULL;
	struct ht_plan p;

	make_plan(&p);
	assert_int_equal(symlink(outside, at("/var")), 0);
	before = tree();
	assert_int_equal(ht_plan_apply(&p, root, NULL, rule_keys(), true, NULL, &err), -EBADMSG);
	assert_non_null(strstr(err.msg, "/var is a symlink"));
	after = tree();
	assert_string_equal(before, after);
	assert_int_equal(rmdir(outside), 0); /* empty: no state written there */
	assert_int_equal(mkdir(outside, 0755), 0);
	ht_plan_free(&p);
}

/*
 * The host's lock (no --root), in a mount namespace of its own whose /run is
 * an empty tmpfs (never the host's): /run/hosttune.lock made 0600 by root;
 * nobody (uid 65534) cannot open it, so cannot hold apply off; a second run
 * waits for it (-EWOULDBLOCK); a link there, or a file others may read, is
 * refused (-EPERM) and says so.
 */
static int host_lock_child(void)
{
	struct ht_error err = { "" };
	struct stat st;
	int fd, status;
	pid_t pid;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") < 0)
		return 77;
	fd = ht_persist_lock(NULL, 0, &err);
	if (fd < 0 || stat("/run/hosttune.lock", &st) < 0 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & 07777) != 0600 || st.st_uid != 0)
		return 10;
	pid = fork();
	if (pid == 0) {
		/* Another user: no way to the lock. */
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(1);
		_exit(open("/run/hosttune.lock", O_RDONLY) < 0 && errno == EACCES ? 0 : 2);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 11;
	pid = fork();
	if (pid == 0) {
		struct ht_error e2 = { "" };

		_exit(ht_persist_lock(NULL, 0, &e2) == -EWOULDBLOCK &&
		      strstr(e2.msg, "flock(2) on /run/hosttune.lock") ? 0 : 3);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 12;
	close(fd);
	if (chmod("/run/hosttune.lock", 0644) < 0 || ht_persist_lock(NULL, 0, &err) != -EPERM ||
	    !strstr(err.msg, "is not hosttune's lock"))
		return 13;
	if (chmod("/run/hosttune.lock", 0400) < 0 || ht_persist_lock(NULL, 0, &err) != -EPERM)
		return 15;
	if (unlink("/run/hosttune.lock") < 0 || symlink("/etc/passwd", "/run/hosttune.lock") < 0 ||
	    ht_persist_lock(NULL, 0, &err) != -EPERM || !strstr(err.msg, "symbolic link"))
		return 14;
	/* A directory in its place: an error, not a quiet fall back to "/". */
	if (unlink("/run/hosttune.lock") < 0 || mkdir("/run/hosttune.lock", 0700) < 0 ||
	    ht_persist_lock(NULL, 0, &err) != -EISDIR || !strstr(err.msg, "/run/hosttune.lock"))
		return 16;
	/*
	 * A tree: another user holding flock(2) on the tree's directory (which
	 * only needs read access) does not hold root off: root locks a file of
	 * its own in /run, named after the tree's device and inode, and a second
	 * root run waits on that one.
	 */
	umask(022); /* the child below, as nobody, must get into it whatever the caller's umask */
	if (mkdir("/run/tree", 0755) < 0)
		return 17;
	pid = fork();
	if (pid == 0) {
		int dfd;

		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(1);
		dfd = open("/run/tree", O_RDONLY | O_DIRECTORY);
		if (dfd < 0 || flock(dfd, LOCK_EX) < 0)
			_exit(2);
		pause();
		_exit(0);
	}
	if (pid < 0)
		return 18;
	usleep(100000);
	fd = ht_persist_lock("/run/tree", 0, &err);
	status = fd >= 0 ? 0 : 19;
	if (status == 0) {
		pid_t p2 = fork();

		if (p2 == 0) {
			struct ht_error e2 = { "" };

			_exit(ht_persist_lock("/run/tree", 0, &e2) == -EWOULDBLOCK &&
			      strstr(e2.msg, "/run/hosttune-tree-") ? 0 : 3);
		}
		if (p2 < 0 || waitpid(p2, &status, 0) != p2 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			status = 20;
		close(fd);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return status;
}

static void test_host_lock(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	if (geteuid() != 0)
		skip();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(host_lock_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		skip(); /* no mount namespace here */
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * The 1 MiB bound: a file of 1,044,481 or 1,048,576 bytes is read whole (the
 * buffer once grew past the bound early and refused those), one of
 * 1,048,577 bytes is -EFBIG; the same through ht_read_file().
 */
static void test_read_bound(void **state _unused_)
{
	static const size_t sizes[] = { 1044481, 1048576, 1048577 };

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		_cleanup_free_ char *text = malloc(sizes[i] + 1), *c = NULL, *c2 = NULL;
		struct ht_error err = { "" };
		int want = sizes[i] <= 1048576 ? 0 : -EFBIG;

		assert_non_null(text);
		memset(text, 'x', sizes[i]);
		text[sizes[i]] = '\0';
		put("/etc/big.conf", text, 0644);
		assert_int_equal(ht_file_read_at(root, "/etc/big.conf", &c, NULL, &err), want);
		assert_int_equal(ht_read_file(root, "/etc/big.conf", &c2), want);
		if (want == 0) {
			assert_int_equal(strlen(c), sizes[i]);
			assert_int_equal(strlen(c2), sizes[i]);
		}
	}
}

/* ---- rootfs: resolution inside a tree ---- */

/*
 * Property: over random trees of directories, files and links (absolute,
 * relative, with "..", loops, dangling), ht_walk_in_root() resolves every
 * random path to the same inode, or fails with the same errno, as the
 * kernel's openat2(RESOLVE_IN_ROOT) -- and neither ever opens anything
 * outside the tree (a file "outside" beside it holds a marker inode).
 */
static void test_walk_in_root(void **state _unused_)
{
	static const char *const names[] = { "a", "b", "c", "..", ".", "d" };
	struct open_how_probe { uint64_t flags, mode, resolve; } how = { O_PATH | O_CLOEXEC, 0, 0x10 | 0x02 };
	unsigned seed = 4711, compared = 0, failures = 0, links = 0;
	struct stat out_st;
	int probe;

	/* RESOLVE_IN_ROOT = 0x10, RESOLVE_NO_MAGICLINKS = 0x02 (linux/openat2.h). */
	probe = (int)syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));
	if (probe < 0) {
		print_message("openat2 not available (%s): nothing to compare with\n", strerror(errno));
		skip();
	}
	close(probe);
	assert_int_equal(stat(outside, &out_st), 0);
	for (int t = 0; t < 200; t++) {
		_cleanup_close_ int rfd = -1;
		char tdir[PATH_MAX];

		snprintf(tdir, sizeof(tdir), "%s/t%d", root, t);
		assert_int_equal(mkdir(tdir, 0755), 0);
		rfd = open(tdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		assert_true(rfd >= 0);
		/* Up to 12 entries, each at a random place of depth <= 2. */
		for (int e = 0; e < 12; e++) {
			char rel[64], tgt[PATH_MAX];
			int kind = rand_r(&seed) % 4;

			snprintf(rel, sizeof(rel), "%s", names[rand_r(&seed) % 3]);
			if (rand_r(&seed) % 2)
				snprintf(rel + strlen(rel), sizeof(rel) - strlen(rel), "/%s",
				         names[rand_r(&seed) % 3]);
			if (kind == 0)
				mkdirat(rfd, rel, 0755);
			else if (kind == 1)
				close(openat(rfd, rel, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
			else {
				/* A target: absolute (the tree's or the real "/"), or relative. */
				int tk = rand_r(&seed) % 4;

				snprintf(tgt, sizeof(tgt), "%s%s/%s",
				         tk == 0 ? "/" : tk == 1 ? "../../" : tk == 2 ? outside : "",
				         names[rand_r(&seed) % 6], names[rand_r(&seed) % 6]);
				if (symlinkat(tgt, rfd, rel) == 0)
					links++;
			}
		}
		for (int q = 0; q < 40; q++) {
			_cleanup_close_ int k = -1, w = -1;
			char path[128] = "";
			int depth = 1 + rand_r(&seed) % 4;
			struct stat ks, ws;

			if (rand_r(&seed) % 2)
				strcat(path, "/");
			for (int c = 0; c < depth; c++) {
				strcat(path, names[rand_r(&seed) % 6]);
				if (c + 1 < depth)
					strcat(path, "/");
			}
			how.flags = O_PATH | O_CLOEXEC;
			k = (int)syscall(SYS_openat2, rfd, path, &how, sizeof(how));
			k = k < 0 ? -errno : k;
			w = ht_walk_in_root(rfd, path, O_PATH | O_CLOEXEC);
			compared++;
			if (k < 0 || w < 0) {
				if (k != w) {
					print_message("%s in %s: openat2 %d, walk %d\n", path, tdir, k, w);
					failures++;
				}
				continue;
			}
			assert_int_equal(fstat(k, &ks), 0);
			assert_int_equal(fstat(w, &ws), 0);
			if (ks.st_ino != ws.st_ino || ks.st_dev != ws.st_dev) {
				print_message("%s in %s: different inodes\n", path, tdir);
				failures++;
			}
			assert_false(ws.st_ino == out_st.st_ino && ws.st_dev == out_st.st_dev);
			assert_false(ks.st_ino == out_st.st_ino && ks.st_dev == out_st.st_dev);
		}
	}
	print_message("%u paths in 200 trees (%u links): %u differ\n", compared, links, failures);
	assert_true(links > 250);
	assert_int_equal(failures, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_at, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_at, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_and_dirs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_live_write_at, setup, teardown),
		cmocka_unit_test(test_names),
		cmocka_unit_test_setup_teardown(test_apply_revert, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_dirsync_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_backup_then_fail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_clamped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_bad_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revert_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revert_edited_and_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revert_incomplete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_symlinked_dir, setup, teardown),
		cmocka_unit_test(test_tmp_name),
		cmocka_unit_test_setup_teardown(test_machine_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tmp_sweep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tmp_sweep_bases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chain_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_live_write_keeps_old, setup, teardown),
		cmocka_unit_test(test_host_lock),
		cmocka_unit_test_setup_teardown(test_read_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk_in_root, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
