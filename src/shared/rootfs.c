/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading below a --root tree without leaving it (rootfs.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

#include "shared/rootfs.h"
#include "shared/util.h"

/* The kernel's MAXSYMLINKS (include/linux/namei.h). */
#define LINKS_MAX 40

/* The tree ht_root_pin() opened: its descriptor and the --root string that names it. */
static int pin_fd = -1;
static char *pin_root;

/* True when @root is the pinned tree's --root string. */
static bool pinned(const char *root)
{
	return pin_fd >= 0 && root && strcmp(root, pin_root) == 0;
}

int ht_root_pin(const char *root)
{
	int fd;

	if (ht_root_is_live(root))
		return 0;
	if (pin_fd >= 0)
		return strcmp(root, pin_root) == 0 ? 0 : -EBUSY;
	pin_root = strdup(root);
	if (!pin_root)
		return -ENOMEM;
	fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		free(pin_root);
		pin_root = NULL;
		return -e;
	}
	pin_fd = fd;
	return 0;
}

int ht_root_dir_open(const char *root, int flags)
{
	int fd;

	if (pinned(root))
		fd = openat(pin_fd, ".", flags);
	else
		fd = open(ht_root_is_live(root) ? "/" : root, flags);
	return fd < 0 ? -errno : fd;
}

/* Length of the component at @p, and whether nothing but slashes follows it. */
static size_t component(const char *p, bool *last)
{
	size_t len = strcspn(p, "/");
	const char *q = p + len;

	while (*q == '/')
		q++;
	*last = *q == '\0';
	return len;
}

int ht_walk_in_root(int dirfd, const char *path, int flags)
{
	_cleanup_free_ char *todo = strdup(path), *done = malloc(PATH_MAX);
	char target[PATH_MAX];
	size_t dlen = 0;
	int links = 0;
	char *p;

	if (!todo || !done)
		return -ENOMEM;
	done[0] = '\0';
	p = todo;
	for (;;) {
		_cleanup_close_ int fd = -1;
		size_t len, saved = dlen;
		struct stat st;
		bool last;
		ssize_t n;
		char *next;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		len = component(p, &last);
		if (len == 1 && p[0] == '.') {
			p += len;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (dlen > 0 && done[dlen - 1] != '/')
				dlen--;
			if (dlen > 0)
				dlen--;
			done[dlen] = '\0';
			p += len;
			continue;
		}
		if (dlen + 1 + len >= PATH_MAX)
			return -ENAMETOOLONG;
		if (dlen)
			done[dlen++] = '/';
		memcpy(done + dlen, p, len);
		dlen += len;
		done[dlen] = '\0';
		fd = openat(dirfd, done, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (fstat(fd, &st) < 0)
			return -errno;
		p += len;
		/* "file/..", "file/." and "file/" are ENOTDIR, as the kernel says. */
		if (!S_ISLNK(st.st_mode) && !S_ISDIR(st.st_mode) && *p == '/')
			return -ENOTDIR;
		if (!S_ISLNK(st.st_mode))
			continue;
		if ((last && (flags & O_NOFOLLOW)) || ++links > LINKS_MAX)
			return -ELOOP;
		n = readlinkat(fd, "", target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		/* The link's target, then what was left after the link. */
		if (asprintf(&next, "%s%s", target, p) < 0)
			return -ENOMEM;
		free(todo);
		todo = p = next;
		dlen = target[0] == '/' ? 0 : saved;
		done[dlen] = '\0';
	}
	{
		int fd = openat(dirfd, dlen ? done : ".", flags | O_NOFOLLOW);

		return fd < 0 ? -errno : fd;
	}
}

int ht_openat_confined(int dirfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(unsigned)flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	for (int tries = 0;; tries++) {
		int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

		if (fd >= 0)
			return fd;
		/* A rename or mount somewhere in the tree during the walk (openat2(2)). */
		if (errno == EAGAIN && tries < 8)
			continue;
		/* Before 5.6, or a seccomp filter (a container runtime's) that refuses it. */
		if (errno == ENOSYS || errno == EPERM)
			return ht_walk_in_root(dirfd, path, flags);
		return -errno;
	}
}

int ht_root_open(const char *root, const char *path, int flags)
{
	_cleanup_close_ int rfd = -1;
	int fd;

	if (ht_root_is_live(root)) {
		fd = open(path, flags);
		return fd < 0 ? -errno : fd;
	}
	rfd = ht_root_dir_open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return rfd;
	return ht_openat_confined(rfd, path, flags);
}

DIR *ht_root_opendir(const char *root, const char *path)
{
	int fd = ht_root_open(root, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	DIR *d;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	d = fdopendir(fd);
	if (!d) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return d;
}

int ht_root_stat(const char *root, const char *path, bool nofollow, struct stat *st)
{
	_cleanup_close_ int fd = -1;

	if (ht_root_is_live(root))
		return (nofollow ? lstat(path, st) : stat(path, st)) < 0 ? -errno : 0;
	fd = ht_root_open(root, path, O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0)
		return fd;
	return fstat(fd, st) < 0 ? -errno : 0;
}

/* The real path of the open @fd, into @buf (PATH_MAX bytes). */
static int fd_path(int fd, char *buf)
{
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, PATH_MAX - 1);
	if (n < 0)
		return -errno;
	if (n == 0 || buf[0] != '/' || n >= PATH_MAX - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}

char *ht_root_realpath(const char *root, const char *path)
{
	_cleanup_close_ int fd = -1, rfd = -1;
	char real[PATH_MAX], top[PATH_MAX];
	size_t n;
	int r;

	if (ht_root_is_live(root))
		return realpath(path, NULL);
	rfd = ht_root_dir_open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0) {
		errno = -rfd;
		return NULL;
	}
	fd = ht_openat_confined(rfd, path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	if ((r = fd_path(rfd, top)) < 0 || (r = fd_path(fd, real)) < 0) {
		errno = -r;
		return NULL;
	}
	n = strcmp(top, "/") == 0 ? 0 : strlen(top);
	if (strncmp(real, top, n) != 0 || (real[n] != '/' && real[n] != '\0')) {
		errno = EXDEV;
		return NULL;
	}
	return strdup(real[n] ? real + n : "/");
}

char *ht_root_dir_real(const char *root)
{
	struct stat here, there;
	char buf[PATH_MAX];
	int r;

	if (ht_root_is_live(root))
		return strdup("/");
	if (!pinned(root))
		return realpath(root, NULL);
	r = fd_path(pin_fd, buf);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	/* Removed since it was opened (" (deleted)"): no path leads to it now. */
	if (fstat(pin_fd, &here) < 0 || stat(buf, &there) < 0 || here.st_dev != there.st_dev ||
	    here.st_ino != there.st_ino) {
		errno = ENOENT;
		return NULL;
	}
	return strdup(buf);
}

int ht_root_readlink(const char *root, const char *path, char *buf, size_t size)
{
	_cleanup_free_ char *dir = strdup(path);
	_cleanup_close_ int dfd = -1;
	const char *base;
	char *slash;
	ssize_t n;

	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	base = slash ? slash + 1 : dir;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return -EINVAL;
	if (slash)
		*slash = '\0';
	/* The live host: its directories resolve as open(2) resolves them (ht_root_open()). */
	if (ht_root_is_live(root))
		n = readlink(path, buf, size - 1);
	else {
		dfd = ht_root_open(root, slash ? (dir[0] ? dir : "/") : ".",
		                   O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return dfd;
		n = readlinkat(dfd, slash ? slash + 1 : dir, buf, size - 1);
	}
	if (n < 0)
		return -errno;
	if ((size_t)n >= size - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return (int)n;
}

int ht_openat_in(int dirfd, const char *path, int flags, bool confined)
{
	int fd;

	if (confined)
		return ht_openat_confined(dirfd, path, flags);
	fd = openat(dirfd, path, flags);
	return fd < 0 ? -errno : fd;
}

/* @name starts with @prefix and ends with @suffix (NULL: anything). */
static bool name_fits(const char *name, const char *prefix, const char *suffix)
{
	size_t n = strlen(name), sl = suffix ? strlen(suffix) : 0;

	return (!prefix || strncmp(name, prefix, strlen(prefix)) == 0) &&
	       (!suffix || (n >= sl && strcmp(name + n - sl, suffix) == 0));
}

int ht_root_libdir(const char *root, const char *dir, const char *prefix, const char *suffix,
                   char **out)
{
	_cleanup_free_ char *rel = NULL, *top = NULL;
	DIR *d;
	struct dirent *de;
	int r;

	*out = NULL;
	if (ht_root_is_live(root))
		return (*out = strdup(dir)) ? 0 : -ENOMEM;
	rel = ht_root_realpath(root, dir);
	if (!rel)
		return -errno;
	d = ht_root_opendir(root, rel);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char link[16];
		ssize_t n;

		if ((de->d_type != DT_LNK && de->d_type != DT_UNKNOWN) ||
		    !name_fits(de->d_name, prefix, suffix))
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link));
		if (n < 0 || (n == 9 && memcmp(link, "/dev/null", 9) == 0))
			continue; /* not a link after all (DT_UNKNOWN), or a mask */
		/* The name lives in @d's buffer: copied before closedir(). */
		r = asprintf(out, "%s/%s", strcmp(rel, "/") == 0 ? "" : rel, de->d_name);
		closedir(d);
		if (r < 0) {
			*out = NULL;
			return -ENOMEM;
		}
		return -ELOOP;
	}
	closedir(d);
	top = ht_root_dir_real(root);
	if (!top)
		return -errno;
	if (asprintf(out, "%s%s", strcmp(top, "/") == 0 ? "" : top,
	             strcmp(rel, "/") == 0 && strcmp(top, "/") != 0 ? "" : rel) < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* ---- the readers of util.h (ht_open_file(), ht_read_file()) ---- */

#define HT_READ_FILE_MAX (1024 * 1024)

int ht_open_file(const char *root, const char *path)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	/*
	 * O_NONBLOCK: a FIFO planted in a --root tree must not block the open;
	 * procfs and sysfs attributes are regular files, so anything else is
	 * refused before it is read. A directory keeps the EISDIR that read(2)
	 * gives it.
	 */
	fd = ht_root_open(root, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return TAKE_FD(fd);
}

int ht_read_file(const char *root, const char *path, char **out)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = ht_open_file(root, path);
	size_t len = 0;
	int r;

	if (fd < 0)
		return fd;
	r = ht_read_fd(fd, HT_READ_FILE_MAX, &buf, &len);
	if (r < 0)
		return r;
	/* Text the kernel writes has no NUL; "4096\0garbage" must not read as "4096". */
	if (memchr(buf, '\0', len))
		return -EINVAL;
	while (len > 0 && buf[len - 1] == '\n')
		len--;
	buf[len] = '\0';
	*out = TAKE_PTR(buf);
	return 0;
}
