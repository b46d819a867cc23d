/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "util.h"

#define FILE_MAX (1024 * 1024)

static int read_fd(int fd, char **out)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		ssize_t r;

		if (cap - len < 1024) {
			char *nb;

			cap = cap ? cap * 2 : 4096;
			if (cap > FILE_MAX + 4096)
				return -EFBIG;
			nb = realloc(buf, cap);
			if (!nb)
				return -ENOMEM;
			buf = nb;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (!buf && !(buf = calloc(1, 1)))
		return -ENOMEM;
	buf[len] = '\0';
	if (strlen(buf) != len)
		return -EFBIG;
	*out = TAKE_PTR(buf);
	return 0;
}

int ht_file_read(const char *path, char **out, mode_t *mode)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	*out = NULL;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (mode)
		*mode = st.st_mode & 07777;
	return read_fd(fd, out);
}

static int mkdir_parents(const char *dir)
{
	_cleanup_free_ char *copy = strdup(dir);
	char *parent;
	int r;

	if (!copy)
		return -ENOMEM;
	if (mkdir(dir, 0755) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -errno;
	parent = dirname(copy);
	if (strcmp(parent, dir) == 0)
		return -ENOENT;
	r = mkdir_parents(parent);
	if (r < 0)
		return r;
	return mkdir(dir, 0755) == 0 || errno == EEXIST ? 0 : -errno;
}

static int write_all(int fd, const char *s, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, s, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		s += w;
		len -= (size_t)w;
	}
	return 0;
}

static int fsync_dir(const char *dir)
{
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return -errno;
	return fsync(dfd) < 0 ? -errno : 0;
}

int ht_file_write_atomic(const char *path, const char *content, mode_t mode)
{
	_cleanup_free_ char *copy_dir = strdup(path), *copy_base = strdup(path), *tmp = NULL;
	_cleanup_close_ int fd = -1;
	const char *dir, *base;
	struct stat st;
	int r;

	if (!copy_dir || !copy_base)
		return -ENOMEM;
	dir = dirname(copy_dir);
	base = basename(copy_base);
	r = mkdir_parents(dir);
	if (r < 0)
		return r;
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			return -ELOOP;
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
	} else if (errno != ENOENT)
		return -errno;
	if (asprintf(&tmp, "%s/.%s.hosttune-XXXXXX", dir, base) < 0) {
		tmp = NULL;
		return -ENOMEM;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, mode) < 0 || (r = write_all(fd, content, strlen(content))) < 0 ||
	    fsync(fd) < 0) {
		r = r < 0 ? r : -errno;
		unlink(tmp);
		return r;
	}
	r = close(TAKE_FD(fd));
	if (r < 0 || rename(tmp, path) < 0) {
		r = -errno;
		unlink(tmp);
		return r;
	}
	return fsync_dir(dir);
}

int ht_file_remove(const char *path)
{
	_cleanup_free_ char *copy = strdup(path);

	if (!copy)
		return -ENOMEM;
	if (unlink(path) < 0)
		return errno == ENOENT ? 0 : -errno;
	return fsync_dir(dirname(copy));
}

static void rstrip(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

int ht_live_read(const char *path, char **out)
{
	_cleanup_close_ int fd = -1;
	int r;

	*out = NULL;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	r = read_fd(fd, out);
	if (r < 0)
		return r;
	rstrip(*out);
	return 0;
}

int ht_live_write(const char *path, const char *value)
{
	_cleanup_free_ char *line = NULL, *back = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	if (asprintf(&line, "%s\n", value) < 0) {
		line = NULL;
		return -ENOMEM;
	}
	/* O_TRUNC matters only for the plain files of a --root tree; procfs ignores it. */
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_TRUNC);
	if (fd < 0)
		return -errno;
	r = write_all(fd, line, strlen(line));
	if (r < 0)
		return r;
	if (close(TAKE_FD(fd)) < 0)
		return -errno;
	r = ht_live_read(path, &back);
	if (r < 0)
		return r;
	if (!back || strcmp(back, value) != 0)
		return -EIO;
	return 0;
}
