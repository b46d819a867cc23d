/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shared/fsutil.h"
#include "shared/util.h"

#define FILE_MAX (1024 * 1024)

bool ht_root_confined(const char *root)
{
	return root && *root && strspn(root, "/") != strlen(root);
}

int ht_paths_add(struct ht_paths *p, const char *s)
{
	char **nv;
	char *c;

	if (ht_paths_has(p, s))
		return 0;
	c = strdup(s);
	if (!c)
		return -ENOMEM;
	nv = realloc(p->v, (p->n + 1) * sizeof(*nv));
	if (!nv) {
		free(c);
		return -ENOMEM;
	}
	p->v = nv;
	p->v[p->n++] = c;
	return 0;
}

bool ht_paths_has(const struct ht_paths *p, const char *s)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->v[i], s) == 0)
			return true;
	return false;
}

void ht_paths_free(struct ht_paths *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

/* The first @len bytes of @path as the user sees them: with the --root prefix. */
static char *shown(const char *root, const char *path, size_t len)
{
	size_t rl = 0;
	char *s;

	if (ht_root_confined(root)) {
		rl = strlen(root);
		while (rl > 1 && root[rl - 1] == '/')
			rl--;
	}
	if (asprintf(&s, "%.*s%.*s", (int)rl, root ? root : "", (int)len, path) < 0)
		return NULL;
	return s;
}

/* Fills @err about the first @len bytes of @path (@why, or errnum's text) and returns -@errnum. */
static int path_why(struct ht_error *err, int errnum, const char *root, const char *path,
                    size_t len, const char *why)
{
	_cleanup_free_ char *s = NULL;
	const char *p;

	while (len > 1 && path[len - 1] == '/')
		len--;
	s = shown(root, path, len);
	p = s ? s : path;
	if (why)
		return ht_error_set(err, errnum, "%s: %s", p, why);

	if (errnum == ELOOP && ht_root_confined(root))
		return ht_error_set(err, ELOOP, "%s is a symlink; hosttune does not write through "
		                    "symlinks (below --root %s it follows none, so that no write "
		                    "leaves it)", p, root);
	if (errnum == ELOOP)
		return ht_error_set(err, ELOOP, "%s is a symlink; hosttune does not write through "
		                    "symlinks", p);
	if (errnum == EXDEV)
		return ht_error_set(err, EXDEV, "%s leaves --root %s ('..')", p, root);
	return ht_error_set(err, errnum, "%s: %s", p, strerror(errnum));
}

static int path_error(struct ht_error *err, int errnum, const char *root, const char *path,
                      size_t len)
{
	return path_why(err, errnum, root, path, len, NULL);
}

/*
 * Opens the directory that holds the last component of @path and returns its
 * descriptor (or a negative errno); *@base points at that component in @path.
 * Each directory is opened relative to the one before: below a --root with
 * O_NOFOLLOW, so that a symlink anywhere is refused instead of followed out
 * of the tree (an openat2(2) RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS would
 * resolve the same, but cannot create the missing directories on the way).
 * @create: mkdirat() what is missing, fsyncing the directory that holds each
 *          new one so that the new entry is on disk before anything in it.
 * @missing: if not NULL (and !@create), receives the missing directories
 *           and the walk ends there with -ENOENT.
 */
static int open_parent(const char *root, const char *path, bool create, const char **base,
                       struct ht_paths *missing, struct ht_error *err)
{
	bool confined = ht_root_confined(root);
	_cleanup_close_ int fd = -1;
	const char *p = path, *last = strrchr(path, '/');

	last = last ? last + 1 : path;
	if (confined && path[0] != '/')
		return ht_error_set(err, EINVAL, "%s: not an absolute path", path);
	if (!*last || strcmp(last, ".") == 0 || strcmp(last, "..") == 0)
		return ht_error_set(err, EINVAL, "%s: does not name a file", path);
	fd = open(confined ? root : path[0] == '/' ? "/" : ".",
	          O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ht_error_set(err, errno, "%s: %s", confined ? root : "/", strerror(errno));
	while (p < last) {
		size_t len = strcspn(p, "/");
		_cleanup_free_ char *comp = NULL;
		int nfd, flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (confined ? O_NOFOLLOW : 0);
		bool made = false;
		struct stat st;

		if (len == 0) {
			p++;
			continue;
		}
		comp = strndup(p, len);
		if (!comp)
			return -ENOMEM;
		if (strcmp(comp, ".") == 0) {
			p += len;
			continue;
		}
		if (strcmp(comp, "..") == 0)
			return path_error(err, EXDEV, root, path, (size_t)(p + len - path));
		nfd = openat(fd, comp, flags);
		if (nfd < 0 && errno == ENOENT && missing) {
			for (const char *q = p; q < last; q += strcspn(q, "/") + 1) {
				size_t end = (size_t)(q + strcspn(q, "/") - path);
				_cleanup_free_ char *d = strndup(path, end);

				if (!d || ht_paths_add(missing, d) < 0)
					return -ENOMEM;
			}
			return -ENOENT;
		}
		if (nfd < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, comp, 0755) == 0)
				made = true;
			else if (errno != EEXIST)
				return path_error(err, errno, root, path, (size_t)(p + len - path));
			if (fsync(fd) < 0)
				return path_error(err, errno, root, path, (size_t)(p - path));
			nfd = openat(fd, comp, flags);
		}
		if (nfd < 0) {
			int e = errno;

			/* O_NOFOLLOW | O_DIRECTORY gives ENOTDIR for a symlink: say which. */
			if ((e == ELOOP || e == ENOTDIR) &&
			    fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
				e = ELOOP;
			return path_error(err, e, root, path, (size_t)(p + len - path));
		}
		/* 0755 whatever the umask: systemd-sysctl and others read these as any user. */
		if (made && fchmod(nfd, 0755) < 0) {
			int e = errno;

			close(nfd);
			return path_error(err, e, root, path, (size_t)(p + len - path));
		}
		close(fd);
		fd = nfd;
		p += len;
	}
	*base = last;
	return TAKE_FD(fd);
}

/* A whole file as text: refused above 1 MiB or with a NUL byte (-EFBIG). */
static int read_fd(int fd, char **out)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int r = ht_read_fd(fd, FILE_MAX, &buf, &len);

	if (r < 0)
		return r;
	if (strlen(buf) != len)
		return -EFBIG;
	*out = TAKE_PTR(buf);
	return 0;
}

/*
 * Opens the file @path below @root for reading: the descriptor, -ENOENT when
 * it or its directory is absent (without a message), or another error.
 * O_NONBLOCK: a FIFO planted in a --root tree must not block the open.
 */
static int open_file_read(const char *root, const char *path, struct ht_error *err)
{
	_cleanup_close_ int dfd = -1;
	struct ht_error e2;
	const char *base;
	int fd;

	dfd = open_parent(root, path, false, &base, NULL, &e2);
	if (dfd == -ENOENT)
		return -ENOENT;
	if (dfd < 0) {
		if (err)
			*err = e2;
		return dfd;
	}
	fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : path_error(err, errno, root, path, strlen(path));
	return fd;
}

int ht_file_read_at(const char *root, const char *path, char **out, mode_t *mode,
                    struct ht_error *err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r;

	*out = NULL;
	fd = open_file_read(root, path, err);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return path_error(err, errno, root, path, strlen(path));
	if (S_ISDIR(st.st_mode))
		return path_error(err, EISDIR, root, path, strlen(path));
	if (!S_ISREG(st.st_mode))
		return path_why(err, EINVAL, root, path, strlen(path), "not a regular file");
	if (mode)
		*mode = st.st_mode & 07777;
	r = read_fd(fd, out);
	if (r < 0)
		return path_error(err, -r, root, path, strlen(path));
	return 0;
}

int ht_file_read(const char *path, char **out, mode_t *mode)
{
	return ht_file_read_at(NULL, path, out, mode, NULL);
}

static int write_all(int fd, const char *s, size_t len, bool *wrote)
{
	while (len > 0) {
		ssize_t w = write(fd, s, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (wrote)
			*wrote = true;
		s += w;
		len -= (size_t)w;
	}
	return 0;
}

/*
 * A new temp file next to @base in @dfd, named into @name (caller frees):
 * six random characters as mkstemp(3) uses, O_EXCL so that nothing there is
 * reused or followed.
 */
static int tmp_create(int dfd, const char *base, char **name)
{
	static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                            "abcdefghijklmnopqrstuvwxyz0123456789";

	for (int attempt = 0; attempt < 100; attempt++) {
		unsigned char rnd[6];
		char suffix[sizeof(rnd) + 1];
		int fd;

		if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
			/*
			 * No entropy yet (early boot): uniqueness is all a temp name
			 * needs. 2654435761 is Knuth's multiplicative hash (TAOCP 6.4).
			 */
			unsigned long x = (unsigned long)time(NULL) ^
			                  ((unsigned long)getpid() << 16) ^
			                  (unsigned long)attempt * 2654435761UL;

			for (size_t i = 0; i < sizeof(rnd); i++, x >>= 5)
				rnd[i] = (unsigned char)x;
		}
		for (size_t i = 0; i < sizeof(rnd); i++)
			suffix[i] = chars[rnd[i] % (sizeof(chars) - 1)];
		suffix[sizeof(rnd)] = '\0';
		free(*name);
		if (asprintf(name, ".%s.hosttune-%s", base, suffix) < 0) {
			*name = NULL;
			return -ENOMEM;
		}
		fd = openat(dfd, *name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

int ht_file_write_at(const char *root, const char *path, const char *content, mode_t mode,
                     bool *changed, struct ht_error *err)
{
	_cleanup_close_ int dfd = -1, fd = -1;
	_cleanup_free_ char *tmp = NULL;
	const char *base;
	struct stat st;
	int r;

	*changed = false;
	dfd = open_parent(root, path, true, &base, NULL, err);
	if (dfd < 0)
		return dfd;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			return path_error(err, ELOOP, root, path, strlen(path));
		if (S_ISDIR(st.st_mode))
			return path_error(err, EISDIR, root, path, strlen(path));
	} else if (errno != ENOENT)
		return path_error(err, errno, root, path, strlen(path));
	fd = tmp_create(dfd, base, &tmp);
	if (fd < 0)
		return path_error(err, -fd, root, path, strlen(path));
	r = fchmod(fd, mode) < 0 ? -errno : 0;
	if (r == 0)
		r = write_all(fd, content, strlen(content), NULL);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && close(TAKE_FD(fd)) < 0)
		r = -errno;
	if (r == 0 && renameat(dfd, tmp, dfd, base) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(dfd, tmp, 0);
		return path_error(err, -r, root, path, strlen(path));
	}
	*changed = true;
	if (fsync(dfd) < 0)
		return path_why(err, errno, root, path, strlen(path),
		                "renamed into place, but the fsync of its directory failed");
	return 0;
}

/*
 * Removes the file (@dir false) or empty directory (@dir true) @path below
 * @root without following a symlink, then fsyncs its parent; an absent entry
 * is not an error. *@removed tells whether something was removed.
 */
static int remove_entry(const char *root, const char *path, bool dir, bool *removed,
                        struct ht_error *err)
{
	_cleanup_close_ int dfd = -1;
	struct ht_error e2;
	const char *base;
	struct stat st;

	*removed = false;
	dfd = open_parent(root, path, false, &base, NULL, &e2);
	if (dfd == -ENOENT)
		return 0;
	if (dfd < 0) {
		if (err)
			*err = e2;
		return dfd;
	}
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : path_error(err, errno, root, path, strlen(path));
	if (S_ISLNK(st.st_mode))
		return path_error(err, ELOOP, root, path, strlen(path));
	if (!dir && S_ISDIR(st.st_mode))
		return path_error(err, EISDIR, root, path, strlen(path));
	if (dir && !S_ISDIR(st.st_mode))
		return path_error(err, ENOTDIR, root, path, strlen(path));
	if (unlinkat(dfd, base, dir ? AT_REMOVEDIR : 0) < 0) {
		if (errno == ENOENT)
			return 0;
		/* rmdir(2): EEXIST is allowed for a directory that is not empty. */
		return path_error(err, errno == EEXIST ? ENOTEMPTY : errno, root, path,
		                  strlen(path));
	}
	*removed = true;
	if (fsync(dfd) < 0)
		return path_why(err, errno, root, path, strlen(path),
		                dir ? "removed, but the fsync of its parent failed" :
		                      "removed, but the fsync of its directory failed");
	return 0;
}

int ht_file_remove_at(const char *root, const char *path, bool *changed, struct ht_error *err)
{
	return remove_entry(root, path, false, changed, err);
}

int ht_dirs_missing(const char *root, const char *path, struct ht_paths *missing,
                    struct ht_error *err)
{
	_cleanup_close_ int dfd = -1;
	const char *base;

	dfd = open_parent(root, path, false, &base, missing, err);
	return dfd == -ENOENT ? 0 : dfd < 0 ? dfd : 0;
}

int ht_dir_remove_at(const char *root, const char *path, bool *removed, struct ht_error *err)
{
	return remove_entry(root, path, true, removed, err);
}

static void rstrip(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

int ht_live_read_at(const char *root, const char *path, char **out, struct ht_error *err)
{
	int r = ht_file_read_at(root, path, out, NULL, err);

	if (r == 0 && *out)
		rstrip(*out);
	return r;
}

int ht_live_write_at(const char *root, const char *path, const char *value, bool *changed,
                     struct ht_error *err)
{
	_cleanup_free_ char *line = NULL, *back = NULL;
	_cleanup_close_ int dfd = -1, fd = -1;
	const char *base;
	struct stat st;
	int r;

	*changed = false;
	if (asprintf(&line, "%s\n", value) < 0) {
		line = NULL;
		return -ENOMEM;
	}
	dfd = open_parent(root, path, false, &base, NULL, err);
	if (dfd < 0)
		return dfd;
	/*
	 * O_TRUNC matters only for the plain files of a --root tree; procfs
	 * ignores it. O_NONBLOCK: a FIFO in a --root tree fails (ENXIO) instead
	 * of blocking; procfs and sysfs attributes are regular files.
	 */
	fd = openat(dfd, base, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_TRUNC);
	if (fd < 0)
		return path_error(err, errno, root, path, strlen(path));
	if (fstat(fd, &st) < 0)
		return path_error(err, errno, root, path, strlen(path));
	if (!S_ISREG(st.st_mode))
		return path_why(err, EINVAL, root, path, strlen(path), "not a regular file");
	r = write_all(fd, line, strlen(line), changed);
	if (r < 0)
		return path_error(err, -r, root, path, strlen(path));
	if (close(TAKE_FD(fd)) < 0)
		return path_error(err, errno, root, path, strlen(path));
	r = ht_live_read_at(root, path, &back, err);
	if (r < 0)
		return r;
	if (!back || strcmp(back, value) != 0) {
		_cleanup_free_ char *s = shown(root, path, strlen(path));

		return ht_error_set(err, EIO, "%s: wrote %s but read back %s", s ? s : path, value,
		                    back ? back : "nothing (it is gone)");
	}
	return 0;
}
