/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "shared/fsutil.h"
#include "shared/rootfs.h"
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
	if (errnum == EXDEV && ht_root_confined(root))
		return ht_error_set(err, EXDEV, "%s leaves --root %s ('..')", p, root);
	if (errnum == EXDEV)
		return ht_error_set(err, EXDEV, "%s has a '..': hosttune writes no path with one "
		                    "(give the path without it)", p);
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
 * @missing: if not NULL, receives the missing directories (outermost first)
 *           and the walk ends there with -ENOENT.
 */
static int open_parent(const char *root, const char *path, const char **base,
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
	/* The tree as ht_root_pin() opened it, never its path again. */
	fd = confined ? ht_root_dir_open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) :
	     open(path[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && !confined)
		fd = -errno;
	if (fd < 0)
		return ht_error_set(err, -fd, "%s: %s", confined ? root : "/", strerror(-fd));
	while (p < last) {
		size_t len = strcspn(p, "/");
		_cleanup_free_ char *comp = NULL;
		int nfd, flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (confined ? O_NOFOLLOW : 0);
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
		if (nfd < 0) {
			int e = errno;

			/* O_NOFOLLOW | O_DIRECTORY gives ENOTDIR for a symlink: say which. */
			if ((e == ELOOP || e == ENOTDIR) &&
			    fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
				e = ELOOP;
			return path_error(err, e, root, path, (size_t)(p + len - path));
		}
		close(fd);
		fd = nfd;
		p += len;
	}
	*base = last;
	return TAKE_FD(fd);
}

/* A whole file as text: -EFBIG above 1 MiB, -EBADMSG with a NUL byte. */
static int read_fd(int fd, char **out)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int r = ht_read_fd(fd, FILE_MAX, &buf, &len);

	if (r < 0)
		return r;
	if (strlen(buf) != len)
		return -EBADMSG;
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

	dfd = open_parent(root, path, &base, NULL, &e2);
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

int ht_file_read_stat_at(const char *root, const char *path, char **out, struct stat *st,
                         struct ht_error *err)
{
	_cleanup_close_ int fd = -1;
	int r;

	*out = NULL;
	fd = open_file_read(root, path, err);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	if (fstat(fd, st) < 0)
		return path_error(err, errno, root, path, strlen(path));
	if (S_ISDIR(st->st_mode))
		return path_error(err, EISDIR, root, path, strlen(path));
	if (!S_ISREG(st->st_mode))
		return path_why(err, EINVAL, root, path, strlen(path), "not a regular file");
	r = read_fd(fd, out);
	if (r == -EBADMSG || r == -EFBIG)
		return path_why(err, -r, root, path, strlen(path), r == -EFBIG ?
		                "larger than 1 MiB: not a file hosttune reads" :
		                "holds a NUL byte: not a text file");
	if (r < 0)
		return path_error(err, -r, root, path, strlen(path));
	return 0;
}

int ht_file_read_at(const char *root, const char *path, char **out, mode_t *mode,
                    struct ht_error *err)
{
	struct stat st;
	int r = ht_file_read_stat_at(root, path, out, &st, err);

	if (r == 0 && *out && mode)
		*mode = st.st_mode & 07777;
	return r;
}

/* The 32 lowercase hexadecimal digits of a machine ID (machine-id(5)). */
static bool machine_id_valid(const char *s)
{
	return strlen(s) == 32 && strspn(s, "0123456789abcdef") == 32;
}

int ht_machine_id_read(const char *root, char **out)
{
	_cleanup_free_ char *raw = NULL;
	int r;

	*out = NULL;
	if (ht_root_confined(root)) {
		r = ht_file_read_at(root, "/etc/machine-id", &raw, NULL, NULL);
	} else {
		/* The host's own: a link (to /run/machine-id, say) is followed as systemd does. */
		_cleanup_close_ int fd = open("/etc/machine-id", O_RDONLY | O_CLOEXEC | O_NOCTTY |
		                              O_NONBLOCK);

		r = fd < 0 ? -errno : read_fd(fd, &raw);
	}
	if (r == -ENOMEM)
		return r;
	if (r < 0 || !raw)
		return 0;
	raw[strcspn(raw, "\n")] = '\0';
	if (!machine_id_valid(raw))
		return 0;
	*out = TAKE_PTR(raw);
	return 0;
}

int ht_root_canonical(const char *root, char **out)
{
	*out = ht_root_confined(root) ? ht_root_dir_real(root) : strdup("/");
	return *out ? 0 : -errno;
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

static const char tmp_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "abcdefghijklmnopqrstuvwxyz0123456789";
#define TMP_MARK ".hosttune-"
#define TMP_RANDOM 6

bool ht_tmp_name(const char *name)
{
	size_t n = strlen(name), tail = strlen(TMP_MARK) + TMP_RANDOM;

	/* ".X" + ".hosttune-" + six characters of tmp_chars, X not empty. */
	if (name[0] != '.' || n < 2 + tail || strncmp(name + n - tail, TMP_MARK,
	                                              strlen(TMP_MARK)) != 0)
		return false;
	for (const char *c = name + n - TMP_RANDOM; *c; c++)
		if (!strchr(tmp_chars, *c))
			return false;
	return true;
}

/*
 * A new temp file (@dir false) or directory next to @base in @dfd, named into
 * @name (caller frees) ".BASE.hosttune-XXXXXX": six random characters as
 * mkstemp(3) uses, O_EXCL (mkdirat) so that nothing there is reused or
 * followed. Returns the open descriptor (mode 0600 file; 0755 directory
 * whatever the umask) or a negative errno.
 */
/*
 * A new temp name for @base into @name (the old one freed):
 * ".BASE.hosttune-XXXXXX", six random characters as mkstemp(3) uses.
 * @attempt varies it when there is no entropy yet. 0 or -ENOMEM.
 */
static int tmp_name_next(const char *base, int attempt, char **name)
{
	unsigned char rnd[TMP_RANDOM];
	char suffix[sizeof(rnd) + 1];

	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
		/*
		 * No entropy yet (early boot): uniqueness is all a temp name
		 * needs. 2654435761 is Knuth's multiplicative hash (TAOCP 6.4).
		 */
		unsigned long x = (unsigned long)time(NULL) ^ ((unsigned long)getpid() << 16) ^
		                  (unsigned long)attempt * 2654435761UL;

		for (size_t i = 0; i < sizeof(rnd); i++, x >>= 5)
			rnd[i] = (unsigned char)x;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		suffix[i] = tmp_chars[rnd[i] % (sizeof(tmp_chars) - 1)];
	suffix[sizeof(rnd)] = '\0';
	free(*name);
	if (asprintf(name, ".%s" TMP_MARK "%s", base, suffix) < 0) {
		*name = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int tmp_create(int dfd, const char *base, bool dir, char **name)
{
	for (int attempt = 0; attempt < 100; attempt++) {
		int fd;

		if (tmp_name_next(base, attempt, name) < 0)
			return -ENOMEM;
		if (!dir) {
			fd = openat(dfd, *name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			            0600);
			if (fd >= 0 || errno != EEXIST)
				return fd >= 0 ? fd : -errno;
			continue;
		}
		if (mkdirat(dfd, *name, 0700) < 0) {
			if (errno == EEXIST)
				continue;
			return -errno;
		}
		fd = openat(dfd, *name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* 0755 whatever the umask: systemd-sysctl and others read these as any user. */
		if (fd < 0 || fchmod(fd, 0755) < 0) {
			int e = -errno;

			if (fd >= 0)
				close(fd);
			unlinkat(dfd, *name, AT_REMOVEDIR);
			return e;
		}
		return fd;
	}
	return -EEXIST;
}

/*
 * Removes the entry @name of @dfd and, for a directory, everything in it,
 * never following a symlink (a symlink is removed, not its target). Only
 * hosttune's own temp trees are removed this way; @depth bounds the walk.
 */
static int rm_tree(int dfd, const char *name, int depth)
{
	struct stat st;
	DIR *d;
	int fd, r = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	if (depth <= 0)
		return -ELOOP;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	for (struct dirent *de; (de = readdir(d));) {
		int k;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		k = rm_tree(dirfd(d), de->d_name, depth - 1);
		if (k < 0 && r == 0)
			r = k;
	}
	closedir(d);
	if (r == 0 && unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

/*
 * Writes @content as @base in @dfd: a temp file, fchmod @mode, write, fsync,
 * rename over @base, fsync of @dfd. *@changed true once the rename took
 * effect. On failure *@step names what failed; no temp file stays.
 */
static int replace_in(int dfd, const char *base, const char *content, mode_t mode,
                      bool *changed, const char **step)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	*changed = false;
	*step = NULL;
	fd = tmp_create(dfd, base, false, &tmp);
	if (fd < 0)
		return fd;
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
		return r;
	}
	*changed = true;
	if (fsync(dfd) < 0) {
		*step = "renamed into place, but the fsync of its directory failed";
		return -errno;
	}
	return 0;
}

/*
 * ht_file_write_at() when directories on the way are missing (@missing, from
 * open_parent(), outermost first): the outermost is built under a temp name
 * in its parent, with the rest of the chain and the file inside, then renamed
 * into place, so that the directories and the file appear at once. A crash
 * leaves only a temp name, which ht_tmp_sweep() removes.
 */
static int write_with_dirs(const char *root, const char *path, const struct ht_paths *missing,
                           const char *content, mode_t mode, bool *changed,
                           struct ht_error *err)
{
	const char *top = missing->v[0], *tbase, *rest, *step = NULL;
	_cleanup_close_ int pfd = -1, cur = -1;
	_cleanup_free_ char *tname = NULL;
	bool inner_changed;
	int r;

	pfd = open_parent(root, top, &tbase, NULL, err);
	if (pfd < 0)
		return pfd;
	cur = tmp_create(pfd, tbase, true, &tname);
	if (cur < 0)
		return path_error(err, -cur, root, top, strlen(top));
	/* The components after @top, then the file's name. */
	rest = path + strlen(top);
	for (;;) {
		size_t len;
		_cleanup_free_ char *comp = NULL;
		int nfd;

		rest += strspn(rest, "/");
		len = strcspn(rest, "/");
		if (!rest[len])
			break;
		comp = strndup(rest, len);
		if (!comp) {
			r = -ENOMEM;
			goto fail;
		}
		if (mkdirat(cur, comp, 0755) < 0) {
			r = -errno;
			goto fail;
		}
		nfd = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 || fchmod(nfd, 0755) < 0 || fsync(cur) < 0) {
			r = -errno;
			if (nfd >= 0)
				close(nfd);
			goto fail;
		}
		close(cur);
		cur = nfd;
		rest += len;
	}
	r = replace_in(cur, rest, content, mode, &inner_changed, &step);
	if (r < 0)
		goto fail;
	/* Not renameat2(RENAME_NOREPLACE): some file systems refuse it; the caller holds the lock. */
	if (renameat(pfd, tname, pfd, tbase) < 0) {
		r = -errno;
		goto fail;
	}
	*changed = true;
	if (fsync(pfd) < 0)
		return path_why(err, errno, root, path, strlen(path), "created with its "
		                "directories, but the fsync of their parent failed");
	return 0;
fail:
	path_why(err, -r, root, path, strlen(path), step);
	if (rm_tree(pfd, tname, 8) < 0) {
		/* Say what is left: a run after this one removes it (ht_tmp_sweep()). */
		_cleanup_free_ char *left = NULL, *s = NULL;
		size_t n = strlen(err ? err->msg : "");

		if (err && asprintf(&left, "%.*s%s", (int)(tbase - top), top, tname) >= 0 &&
		    (s = shown(root, left, strlen(left))))
			snprintf(err->msg + n, sizeof(err->msg) - n, "; %s is left, and the next "
			         "apply or revert removes it", s);
	}
	return r;
}

int ht_file_write_at(const char *root, const char *path, const char *content, mode_t mode,
                     bool *changed, struct ht_error *err)
{
	_cleanup_(ht_paths_free) struct ht_paths missing = { 0 };
	_cleanup_close_ int dfd = -1;
	const char *base, *step;
	struct stat st;
	int r;

	*changed = false;
	dfd = open_parent(root, path, &base, &missing, err);
	if (dfd == -ENOENT && missing.n > 0)
		return write_with_dirs(root, path, &missing, content, mode, changed, err);
	if (dfd < 0)
		return dfd;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			return path_error(err, ELOOP, root, path, strlen(path));
		if (S_ISDIR(st.st_mode))
			return path_error(err, EISDIR, root, path, strlen(path));
		/* A device, FIFO or socket: a rename over it would replace it (/dev/null!). */
		if (!S_ISREG(st.st_mode))
			return path_why(err, EINVAL, root, path, strlen(path),
			                "not a regular file (a device, FIFO or socket); hosttune "
			                "replaces regular files only");
	} else if (errno != ENOENT)
		return path_error(err, errno, root, path, strlen(path));
	r = replace_in(dfd, base, content, mode, changed, &step);
	if (r < 0)
		return path_why(err, -r, root, path, strlen(path), step);
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
	dfd = open_parent(root, path, &base, NULL, &e2);
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

	dfd = open_parent(root, path, &base, missing, err);
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

/* @len bytes of @s at the start of @fd, and nothing after them. */
static int put_whole(int fd, const char *s, size_t len)
{
	int r;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	r = write_all(fd, s, len, NULL);
	if (r == 0 && ftruncate(fd, (off_t)len) < 0)
		r = -errno;
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	return r;
}

/*
 * Rewrites the plain file @base of @dfd in place with @content, as the
 * kernel takes a procfs value: for a tree's stand-in of one when no temp
 * file can be made (no inode or block left on its file system). What it
 * held is written back when that fails. *@changed true once it holds
 * @content.
 */
static int rewrite_in_place(int dfd, const char *base, const char *content, bool *changed)
{
	_cleanup_free_ char *old = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r;

	fd = openat(dfd, base, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	r = read_fd(fd, &old);
	if (r < 0)
		return r;
	r = put_whole(fd, content, strlen(content));
	if (r < 0) {
		put_whole(fd, old, strlen(old));
		return r;
	}
	*changed = true;
	return 0;
}

int ht_live_write_at(const char *root, const char *path, const char *value, bool *changed,
                     struct ht_error *err)
{
	_cleanup_free_ char *line = NULL, *back = NULL;
	_cleanup_close_ int dfd = -1, fd = -1;
	const char *base, *step = NULL;
	struct statfs sfs;
	struct stat st;
	int r;

	*changed = false;
	if (asprintf(&line, "%s\n", value) < 0) {
		line = NULL;
		return -ENOMEM;
	}
	dfd = open_parent(root, path, &base, NULL, err);
	if (dfd < 0)
		return dfd;
	/* O_NONBLOCK: a FIFO in a --root tree fails (ENXIO) instead of blocking. */
	fd = openat(dfd, base, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return path_error(err, errno, root, path, strlen(path));
	if (fstat(fd, &st) < 0 || fstatfs(fd, &sfs) < 0)
		return path_error(err, errno, root, path, strlen(path));
	if (!S_ISREG(st.st_mode))
		return path_why(err, EINVAL, root, path, strlen(path), "not a regular file");
	if (sfs.f_type == PROC_SUPER_MAGIC || sfs.f_type == SYSFS_MAGIC) {
		/* The kernel takes the value in one write(2) and replaces it whole. */
		r = write_all(fd, line, strlen(line), changed);
		if (r == 0 && close(TAKE_FD(fd)) < 0)
			r = -errno;
	} else {
		/*
		 * A plain file (a --root tree): replaced like a configuration file,
		 * so that a failed write leaves the old value, never an empty file.
		 */
		close(TAKE_FD(fd));
		r = replace_in(dfd, base, line, st.st_mode & 07777, changed, &step);
		if ((r == -ENOSPC || r == -EDQUOT) && !*changed)
			r = rewrite_in_place(dfd, base, line, changed);
	}
	if (r < 0)
		return path_why(err, -r, root, path, strlen(path), step);
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

/* A DIR stream of the directory @fd, on a copy of it (@fd stays open); NULL with errno set. */
static DIR *dir_of(int fd)
{
	int dfd = dup(fd);
	DIR *d;

	if (dfd < 0)
		return NULL;
	d = fdopendir(dfd);
	if (!d) {
		int e = errno;

		close(dfd);
		errno = e;
	}
	return d;
}

/* Opens the directory @dir below @root itself (not its parent); -ENOENT when absent. */
static int open_dir_at(const char *root, const char *dir, struct ht_error *err)
{
	_cleanup_close_ int pfd = -1;
	struct ht_error e2;
	const char *base;
	int fd;

	if (strspn(dir, "/") == strlen(dir)) {
		return ht_root_dir_open(ht_root_confined(root) ? root : "/",
		                        O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	pfd = open_parent(root, dir, &base, NULL, &e2);
	if (pfd < 0) {
		if (err && pfd != -ENOENT)
			*err = e2;
		return pfd;
	}
	fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
	            (ht_root_confined(root) ? O_NOFOLLOW : 0));
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : path_error(err, errno, root, dir, strlen(dir));
	return fd;
}

/* A temp name of a directory named one of @dir_names: ".NAME.hosttune-XXXXXX". */
static bool tmp_dir_name(const char *name, const char *const *dir_names)
{
	size_t n = strlen(name) - strlen(TMP_MARK) - TMP_RANDOM - 1;

	for (size_t i = 0; dir_names && dir_names[i]; i++)
		if (strlen(dir_names[i]) == n && strncmp(name + 1, dir_names[i], n) == 0)
			return true;
	return false;
}

/* A temp file's name ".BASE.hosttune-XXXXXX" for one of @bases (NULL: any BASE). */
static bool tmp_file_of(const char *name, const char *const *bases)
{
	size_t n = strlen(name) - strlen(TMP_MARK) - TMP_RANDOM - 1;

	if (!bases)
		return true;
	for (size_t i = 0; bases[i]; i++)
		if (strlen(bases[i]) == n && strncmp(name + 1, bases[i], n) == 0)
			return true;
	return false;
}

int ht_tmp_sweep(const char *root, const struct ht_paths *dirs, const char *const *dir_names,
                 const char *const *file_bases, struct ht_paths *removed)
{
	uid_t self = geteuid();

	int first = 0;

	for (size_t i = 0; i < dirs->n; i++) {
		_cleanup_close_ int fd = open_dir_at(root, dirs->v[i], NULL);
		_cleanup_(ht_paths_free) struct ht_paths names = { 0 };
		bool any = false;
		DIR *d;

		if (fd < 0)
			continue;
		d = dir_of(fd);
		if (!d)
			return -errno;
		for (struct dirent *de; (de = readdir(d));) {
			struct stat st;

			if (!ht_tmp_name(de->d_name) ||
			    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			/* Only what this user could have made: never another user's file. */
			if (st.st_uid != self)
				continue;
			/* Files of the names asked for; directories only under the names hosttune builds them with. */
			if (S_ISDIR(st.st_mode) ? !tmp_dir_name(de->d_name, dir_names)
			                        : !tmp_file_of(de->d_name, file_bases))
				continue;
			if (ht_paths_add(&names, de->d_name) < 0) {
				closedir(d);
				return -ENOMEM;
			}
		}
		closedir(d);
		for (size_t k = 0; k < names.n; k++) {
			_cleanup_free_ char *host = NULL, *s = NULL;
			int r = rm_tree(fd, names.v[k], 8);

			if (r < 0) {
				if (!first)
					first = r;
				continue;
			}
			any = true;
			if (asprintf(&host, "%s/%s", strcmp(dirs->v[i], "/") == 0 ? "" : dirs->v[i],
			             names.v[k]) < 0 ||
			    !(s = shown(root, host, strlen(host))) || ht_paths_add(removed, s) < 0)
				return -ENOMEM;
		}
		if (any && fsync(fd) < 0 && !first)
			first = -errno;
	}
	return first;
}

/*
 * Whether the directory @fd holds exactly one entry, @name: 1, 0, or a
 * negative errno.
 */
static int holds_only(int fd, const char *name)
{
	int n = 0, same = 0;
	DIR *d = dir_of(fd);

	if (!d)
		return -errno;
	for (struct dirent *de; (de = readdir(d));) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		n++;
		same += strcmp(de->d_name, name) == 0;
	}
	closedir(d);
	return n == 1 && same == 1;
}

/*
 * Renames the directory @base of @pfd to a new temp name (into @tname), so
 * that from then on a crash leaves only a name ht_tmp_sweep() removes.
 * renameat2(RENAME_NOREPLACE) needs no new inode (a tree with none left
 * still gets rid of it); where the file system lacks it, an empty temp
 * directory is made and @base renamed over it (rename(2) replaces an empty
 * directory). 0 or a negative errno, nothing renamed.
 */
static int rename_to_tmp(int pfd, const char *base, char **tname)
{
	int r;

	for (int attempt = 0; attempt < 100; attempt++) {
		if (tmp_name_next(base, attempt, tname) < 0)
			return -ENOMEM;
		if (renameat2(pfd, base, pfd, *tname, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	r = tmp_create(pfd, base, true, tname);
	if (r < 0)
		return r;
	close(r);
	if (renameat(pfd, base, pfd, *tname) < 0) {
		r = -errno;
		unlinkat(pfd, *tname, AT_REMOVEDIR);
		return r;
	}
	return 0;
}

int ht_chain_remove_at(const char *root, const char *top, const char *path, bool *retired,
                       bool *unsynced, struct ht_error *err)
{
	size_t tl = strlen(top);
	_cleanup_close_ int pfd = -1, cur = -1;
	_cleanup_free_ char *tname = NULL;
	const char *tbase, *rest;
	int r, k;

	*retired = false;
	if (strncmp(path, top, tl) != 0 || path[tl] != '/')
		return ht_error_set(err, EINVAL, "%s is not below %s", path, top);
	cur = open_dir_at(root, top, err);
	if (cur == -ENOENT)
		return 0;
	if (cur < 0)
		return cur;
	/* Each directory from @top down must hold only the next component, the last only the file. */
	for (rest = path + tl;;) {
		_cleanup_free_ char *comp = NULL;
		size_t len;
		int nfd;

		rest += strspn(rest, "/");
		len = strcspn(rest, "/");
		comp = strndup(rest, len);
		if (!comp)
			return -ENOMEM;
		r = holds_only(cur, comp);
		if (r < 0)
			return path_error(err, -r, root, top, tl);
		if (r == 0)
			return 0;
		if (!rest[len])
			break;
		nfd = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0)
			return errno == ENOTDIR || errno == ELOOP ? 0 :
			       path_error(err, errno, root, path, (size_t)(rest + len - path));
		close(cur);
		cur = nfd;
		rest += len;
	}
	pfd = open_parent(root, top, &tbase, NULL, err);
	if (pfd < 0)
		return pfd;
	r = rename_to_tmp(pfd, tbase, &tname);
	if (r < 0)
		return path_error(err, -r, root, top, tl);
	*retired = true;
	r = fsync(pfd) < 0 ? -errno : 0;
	/* Removed whatever the fsync said: nothing of it stays in sight. */
	k = rm_tree(pfd, tname, 8);
	if (k == 0 && r == 0 && fsync(pfd) < 0)
		r = -errno;
	if (k < 0) {
		_cleanup_free_ char *left = NULL;

		if (asprintf(&left, "%.*s%s", (int)(tbase - top), top, tname) < 0)
			return -ENOMEM;
		return path_why(err, -k, root, left, strlen(left), "could not be removed (the "
		                "next apply or revert removes it)");
	}
	if (r < 0)
		*unsynced = true;
	return 0;
}
