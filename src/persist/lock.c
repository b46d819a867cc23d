/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "persist/persist.h"
#include "shared/fsutil.h"
#include "shared/rootfs.h"

/* The host's lock file (no --root). */
#define HT_LOCK_FILE "/run/hosttune.lock"

/* How often a waiting run tries the lock again: 20 ms. */
#define LOCK_POLL_NS (20 * 1000 * 1000L)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The host's lock: HT_LOCK_FILE, which only root can create in /run and
 * nobody else may open (0600, owned by root): a user who can read "/" cannot
 * take it and hold apply off. -ENOENT (no /run), -EROFS, or -EACCES/-EPERM
 * when not root, with err empty: the caller falls back to "/" itself. Any
 * other error has err set (a full /run, a directory there), and so does
 * -EPERM for a file hosttune would not have made (a link is not followed).
 */
static int host_lock_file(const char *path, struct ht_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
	                              O_NONBLOCK, 0600);
	struct stat st;

	if (fd < 0 && errno == ELOOP)
		return ht_error_set(err, EPERM, "%s is a symbolic link: refusing it as hosttune's "
		                    "lock", path);
	/*
	 * No /run, a read-only one, or not root: "/" instead. Anything else (a
	 * full /run, a directory there) is an error, not a quiet fall back to
	 * a lock another user can hold.
	 */
	if (fd < 0 && (errno == ENOENT || errno == EROFS ||
	               (geteuid() != 0 && (errno == EACCES || errno == EPERM))))
		return -errno;
	if (fd < 0)
		return ht_error_set(err, errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		return ht_error_set(err, errno, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 07777) != 0600)
		return ht_error_set(err, EPERM, "%s is not hosttune's lock (a regular file of uid %u, "
		                    "mode 0600): remove it", path, (unsigned)geteuid());
	return TAKE_FD(fd);
}

/*
 * Whether a user other than root and @root's owner could open the directory
 * @root to flock(2) it: it is readable by others (or by a group other than
 * root's), and every directory above it lets them through. A tree under a
 * 0700 directory is out of their reach. True when unsure.
 */
static bool others_reach(const char *root)
{
	_cleanup_free_ char *real = ht_root_dir_real(root);
	struct stat st;
	char *slash;

	if (!real || stat(real, &st) < 0)
		return true;
	if (!(st.st_mode & S_IROTH) && !((st.st_mode & S_IRGRP) && st.st_gid != 0))
		return false;
	while ((slash = strrchr(real, '/'))) {
		slash[slash == real ? 1 : 0] = '\0';
		if (stat(real, &st) < 0)
			return true;
		if (!(st.st_mode & S_IXOTH) && !((st.st_mode & S_IXGRP) && st.st_gid != 0))
			return false;
		if (slash == real)
			break;
	}
	return true;
}

int ht_persist_lock(const char *root, double wait_s, struct ht_error *err)
{
	const char *dir = ht_root_confined(root) ? root : "/";
	const char *what = dir;
	_cleanup_close_ int fd = -1;
	double end = now_s() + (wait_s > 0 ? wait_s : 0);
	char tree_lock[96];
	struct stat st;

	err->msg[0] = '\0';
	/*
	 * The host: HT_LOCK_FILE. A tree: a file of its own in /run named after
	 * the tree's device and inode (the same tree by any path), which only
	 * root can make there, so that no other user who can read the tree
	 * holds root's apply off; nothing is created in the tree. A tree no
	 * other user can reach (below a 0700 directory) is locked itself.
	 */
	if (ht_root_confined(root) && (fd = ht_root_dir_open(root, O_PATH | O_DIRECTORY |
	                                                       O_CLOEXEC)) >= 0 &&
	    fstat(fd, &st) == 0)
		snprintf(tree_lock, sizeof(tree_lock), "/run/hosttune-tree-%llx-%llx.lock",
		         (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	else
		snprintf(tree_lock, sizeof(tree_lock), "%s", HT_LOCK_FILE);
	if (fd >= 0) {
		close(fd);
		fd = -1;
	}
	if (!ht_root_confined(root) || (geteuid() == 0 && others_reach(root))) {
		fd = host_lock_file(tree_lock, err);
		if (fd < 0 && err->msg[0])
			return fd;
		if (fd >= 0)
			what = tree_lock;
	}
	/* Without /run, or not root: the tree's directory, as before. */
	if (fd < 0)
		fd = ht_root_dir_open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ht_error_set(err, -fd, "%s: %s", dir, strerror(-fd));
	for (;;) {
		struct timespec ts = { 0, LOCK_POLL_NS };

		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return TAKE_FD(fd);
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return ht_error_set(err, errno, "locking %s: %s", what, strerror(errno));
		if (now_s() >= end)
			break;
		nanosleep(&ts, NULL);
	}
	return ht_error_set(err, EWOULDBLOCK, "another hosttune apply or revert is running on %s "
	                    "(it holds flock(2) on %s); waited %gs: try again when it has finished, "
	                    "or give --wait a longer time", dir, what, wait_s > 0 ? wait_s : 0);
}
