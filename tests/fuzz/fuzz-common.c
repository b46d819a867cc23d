/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers of the libFuzzer harnesses (fuzz-common.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/value.h"

#include "fuzz-common.h"

static bool guard_on, guard_writes;
static char guard_dir[PATH_MAX];

_Noreturn void fz_fail(const char *fmt, ...)
{
	va_list ap;

	/* libFuzzer's crash handler writes the input out: let it. */
	guard_on = false;

	fputs("PROPERTY VIOLATED: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	abort();
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		abort();
	return p;
}

char *fz_cstr(const uint8_t *data, size_t size)
{
	char *s = xmalloc(size + 1);

	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

size_t fz_split(const char *s, size_t n, const char *sep, struct fz_part *parts, size_t max)
{
	size_t np = 0, start = 0, seplen = strlen(sep), i = 0;

	while (i < n && np + 1 < max) {
		/* i is at the start of a line */
		const char *nl = memchr(s + i, '\n', n - i);
		size_t end = nl ? (size_t)(nl - s) : n;

		if (end - i == seplen && memcmp(s + i, sep, seplen) == 0) {
			parts[np++] = (struct fz_part){ s + start, i - start };
			start = nl ? end + 1 : n;
		}
		i = nl ? end + 1 : n;
	}
	parts[np++] = (struct fz_part){ s + start, n - start };
	return np;
}

char *fz_part_str(const struct fz_part *part)
{
	return fz_cstr((const uint8_t *)part->p, part->n);
}

static char workdir[PATH_MAX];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	if (ftw->level > 0)
		remove(path);
	return 0;
}

void fz_empty_dir(const char *dir)
{
	/* Depth first, not following links: a planted link to / is removed, not walked. */
	nftw(dir, rm_entry, 32, FTW_DEPTH | FTW_PHYS);
}

static void remove_workdir(void)
{
	if (workdir[0]) {
		fz_empty_dir(workdir);
		rmdir(workdir);
	}
}

const char *fz_workdir(void)
{
	const char *base;
	char tmpl[PATH_MAX];

	if (workdir[0])
		return workdir;
	base = getenv("FUZZ_TMPDIR");
	if (!base || !*base)
		base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	snprintf(tmpl, sizeof(tmpl), "%s/hosttune-fuzz-XXXXXX", base);
	if (!mkdtemp(tmpl) || !realpath(tmpl, workdir)) {
		perror("fuzz: cannot make a private directory");
		abort();
	}
	atexit(remove_workdir);
	return workdir;
}

bool fz_has_place(const char *msg, const char *file)
{
	size_t n = strlen(file);
	const char *p = msg + n;

	if (strncmp(msg, file, n) != 0 || *p++ != ':' || !isdigit((unsigned char)*p))
		return false;
	while (isdigit((unsigned char)*p))
		p++;
	return *p == ':';
}

int fz_write_file(const char *path, const void *data, size_t n)
{
	char buf[PATH_MAX];
	int dfd, fd, r = 0;
	char *comp, *next;

	/*
	 * Component by component from "/", never through a symlink (O_NOFOLLOW):
	 * a link an input planted in the tree must not carry a write out of it.
	 */
	if (path[0] != '/' || strlen(path) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, path);
	dfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	for (comp = buf + 1; (next = strchr(comp, '/')); comp = next + 1) {
		int nfd;

		*next = '\0';
		if (!*comp)
			continue;
		if (mkdirat(dfd, comp, 0755) < 0 && errno != EEXIST) {
			r = -errno;
			break;
		}
		nfd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			r = -errno;
			break;
		}
		close(dfd);
		dfd = nfd;
	}
	if (r < 0) {
		close(dfd);
		return r;
	}
	fd = openat(dfd, comp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	close(dfd);
	if (fd < 0)
		return -errno;
	for (const char *p = data; n > 0;) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			r = -errno;
			break;
		}
		p += w;
		n -= (size_t)w;
	}
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

/* ---- snapshot of a tree ---- */

static FILE *snap_out;
static size_t snap_skip;

static int snap_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)flag;
	(void)ftw;
	fprintf(snap_out, "%s %o ", path + snap_skip, (unsigned)st->st_mode);
	if (S_ISREG(st->st_mode)) {
		FILE *f = fopen(path, "re");
		char buf[4096];
		size_t n;

		if (f) {
			while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
				fwrite(buf, 1, n, snap_out);
			fclose(f);
		}
	} else if (S_ISLNK(st->st_mode)) {
		char buf[PATH_MAX];
		ssize_t n = readlink(path, buf, sizeof(buf));

		if (n > 0)
			fwrite(buf, 1, (size_t)n, snap_out);
	}
	fputs("\n--\n", snap_out);
	return 0;
}

char *fz_tree_snapshot(const char *dir)
{
	char *text = NULL;
	size_t len = 0;

	snap_out = open_memstream(&text, &len);
	if (!snap_out)
		abort();
	snap_skip = strlen(dir);
	/* nftw's order is readdir's: the same for an unchanged directory. */
	nftw(dir, snap_entry, 32, FTW_PHYS);
	fclose(snap_out);
	return text;
}

/* ---- the guard ---- */

void fz_guard_begin(const char *dir, bool writes)
{
	guard_dir[0] = '\0';
	if (dir && !realpath(dir, guard_dir)) {
		perror("fuzz: guard directory");
		abort();
	}
	guard_writes = writes;
	guard_on = true;
}

void fz_guard_end(void)
{
	guard_on = false;
}

/* Lexically normalizes the absolute @path in place: no ".", "..", "//". */
static void normalize(char *path)
{
	char *out = path, *p = path;

	while (*p) {
		char *q;
		size_t len;

		while (*p == '/')
			p++;
		q = p;
		while (*q && *q != '/')
			q++;
		len = (size_t)(q - p);
		if (len == 0 || (len == 1 && p[0] == '.')) {
			/* nothing */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (out > path && *--out != '/')
				;
		} else {
			*out++ = '/';
			memmove(out, p, len);
			out += len;
		}
		p = q;
	}
	if (out == path)
		*out++ = '/';
	*out = '\0';
}

/* The absolute path @path names relative to @dirfd, normalized. */
static void resolve(int dirfd, const char *path, char *out, size_t size)
{
	char dir[PATH_MAX] = "/";

	if (path[0] != '/') {
		if (dirfd == AT_FDCWD) {
			if (!getcwd(dir, sizeof(dir)))
				strcpy(dir, "?");
		} else {
			char link[64];
			ssize_t n;

			snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
			n = readlink(link, dir, sizeof(dir) - 1);
			dir[n > 0 ? n : 0] = '\0';
		}
	}
	snprintf(out, size, "%s/%s", dir, path);
	normalize(out);
}

static bool below(const char *path)
{
	size_t n = strlen(guard_dir);

	return !guard_dir[0] ||
	       (strncmp(path, guard_dir, n) == 0 && (path[n] == '\0' || path[n] == '/'));
}

/* A call naming @path (relative to @dirfd); @write: it creates, changes or removes. */
static void guard_path(const char *call, int dirfd, const char *path, bool write)
{
	char abs[2 * PATH_MAX];

	if (!guard_on || !path)
		return;
	resolve(dirfd, path, abs, sizeof(abs));
	if (write && !guard_writes)
		fz_fail("%s(\"%s\") writes, and this parser must write nothing", call, path);
	/*
	 * A read is judged by what it opened (guard_fd()): a name such as
	 * ROOT/missing/../../x is outside only on paper, the kernel stops at
	 * "missing". A write must not even name a place outside.
	 */
	if (write && !below(abs))
		fz_fail("%s(\"%s\") reaches %s, outside %s", call, path, abs, guard_dir);
}

/* What @fd (just opened) really is: below the guard's directory, or /dev/null. */
static void guard_fd(const char *call, const char *path, int fd)
{
	char link[64], real[PATH_MAX];
	ssize_t n;

	if (!guard_on || fd < 0 || !guard_dir[0])
		return;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, real, sizeof(real) - 1);
	if (n <= 0)
		return;
	real[n] = '\0';
	if (!below(real) && strcmp(real, "/dev/null") != 0)
		fz_fail("%s(\"%s\") opened %s, outside %s (through a symlink?)", call, path, real,
		        guard_dir);
}

static bool open_writes(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)) ||
	       (flags & O_TMPFILE) == O_TMPFILE;
}

static int mode_arg(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, int) : 0;
}

int __real_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...)
{
	va_list ap;
	int mode, fd;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	guard_path("open", AT_FDCWD, path, open_writes(flags));
	fd = __real_open(path, flags, mode);
	guard_fd("open", path, fd);
	return fd;
}

int __real_openat(int dirfd, const char *path, int flags, ...);
int __wrap_openat(int dirfd, const char *path, int flags, ...);
int __wrap_openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	int mode, fd;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	guard_path("openat", dirfd, path, open_writes(flags));
	fd = __real_openat(dirfd, path, flags, mode);
	guard_fd("openat", path, fd);
	return fd;
}

FILE *__real_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode)
{
	FILE *f;

	guard_path("fopen", AT_FDCWD, path, strpbrk(mode, "wa+") != NULL);
	f = __real_fopen(path, mode);
	if (f)
		guard_fd("fopen", path, fileno(f));
	return f;
}

DIR *__real_opendir(const char *path);
DIR *__wrap_opendir(const char *path);
DIR *__wrap_opendir(const char *path)
{
	DIR *d;

	guard_path("opendir", AT_FDCWD, path, false);
	d = __real_opendir(path);
	if (d)
		guard_fd("opendir", path, dirfd(d));
	return d;
}

/*
 * syscall(2), for openat2 (no libc wrapper: shared/rootfs.c calls it so):
 * the descriptor it returns is judged as every other open's. The other
 * calls pass through with five arguments, those the x86-64 and arm64
 * calling conventions pass in registers after the number (reading a sixth
 * would read the caller's stack); the library makes no call with more.
 */
long __real_syscall(long number, ...);
long __wrap_syscall(long number, ...);
long __wrap_syscall(long number, ...)
{
	va_list ap;
	long a[5], r;

	va_start(ap, number);
	for (size_t i = 0; i < 5; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	r = __real_syscall(number, a[0], a[1], a[2], a[3], a[4]);
#ifdef SYS_openat2
	if (number == SYS_openat2)
		guard_fd("openat2", (const char *)a[1], (int)r);
#endif
	return r;
}

#define WRAP_PATH(name, call_args, params, dirfd, path)                                  \
	int __real_##name params;                                                        \
	int __wrap_##name params;                                                        \
	int __wrap_##name params                                                         \
	{                                                                                \
		guard_path(#name, dirfd, path, true);                                    \
		return __real_##name call_args;                                          \
	}

WRAP_PATH(mkdir, (p, m), (const char *p, mode_t m), AT_FDCWD, p)
WRAP_PATH(mkdirat, (d, p, m), (int d, const char *p, mode_t m), d, p)
WRAP_PATH(unlink, (p), (const char *p), AT_FDCWD, p)
WRAP_PATH(unlinkat, (d, p, f), (int d, const char *p, int f), d, p)
WRAP_PATH(rmdir, (p), (const char *p), AT_FDCWD, p)
WRAP_PATH(remove, (p), (const char *p), AT_FDCWD, p)
WRAP_PATH(chmod, (p, m), (const char *p, mode_t m), AT_FDCWD, p)
WRAP_PATH(fchmodat, (d, p, m, f), (int d, const char *p, mode_t m, int f), d, p)
WRAP_PATH(truncate, (p, l), (const char *p, off_t l), AT_FDCWD, p)
WRAP_PATH(symlink, (t, p), (const char *t, const char *p), AT_FDCWD, p)
WRAP_PATH(symlinkat, (t, d, p), (const char *t, int d, const char *p), d, p)
WRAP_PATH(mkstemp, (p), (char *p), AT_FDCWD, p)

int __real_rename(const char *a, const char *b);
int __wrap_rename(const char *a, const char *b);
int __wrap_rename(const char *a, const char *b)
{
	guard_path("rename", AT_FDCWD, a, true);
	guard_path("rename", AT_FDCWD, b, true);
	return __real_rename(a, b);
}

int __real_renameat(int da, const char *a, int db, const char *b);
int __wrap_renameat(int da, const char *a, int db, const char *b);
int __wrap_renameat(int da, const char *a, int db, const char *b)
{
	guard_path("renameat", da, a, true);
	guard_path("renameat", db, b, true);
	return __real_renameat(da, a, db, b);
}

int __real_linkat(int da, const char *a, int db, const char *b, int flags);
int __wrap_linkat(int da, const char *a, int db, const char *b, int flags);
int __wrap_linkat(int da, const char *a, int db, const char *b, int flags)
{
	guard_path("linkat", da, a, true);
	guard_path("linkat", db, b, true);
	return __real_linkat(da, a, db, b, flags);
}

/* fchmod(2) changes the file behind an open descriptor: the guard sees where it is. */
int __real_fchmod(int fd, mode_t mode);
int __wrap_fchmod(int fd, mode_t mode);
int __wrap_fchmod(int fd, mode_t mode)
{
	if (guard_on) {
		char link[64], real[PATH_MAX];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, real, sizeof(real) - 1);
		real[n > 0 ? n : 0] = '\0';
		guard_path("fchmod", AT_FDCWD, real, true);
	}
	return __real_fchmod(fd, mode);
}

/* ---- values ---- */

/* Equal values: the same type and the same value (a decimal bit for bit but for 0 == -0). */
bool fz_value_same(const struct ht_value *a, const struct ht_value *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case HT_T_INT: return a->i == b->i;
	case HT_T_DEC: return a->d == b->d;
	case HT_T_BOOL: return a->b == b->b;
	case HT_T_STR: return strcmp(a->s, b->s) == 0;
	case HT_T_VER: return a->v.n == b->v.n && memcmp(a->v.part, b->v.part, sizeof(a->v.part)) == 0;
	case HT_T_NONE: return true;
	}
	return false;
}

/* A value formats to text that parses back, whole, to the same value. */
void fz_value_round_trip(const struct ht_value *v)
{
	char *text = ht_value_format(v), *shown = ht_value_display(v);
	struct ht_value back = { 0 };
	const char *end = NULL;
	int r;

	FZ_CHECK(text && shown, "format/display returned NULL");
	r = ht_value_parse(text, &back, &end);
	FZ_CHECK(r == 0, "formatted value '%s' does not parse back (%d)", text, r);
	FZ_CHECK(*end == '\0', "formatted value '%s' parses only up to '%s'", text, end);
	FZ_CHECK(fz_value_same(v, &back), "'%s' parses back to another value (type %d, was %d)", text,
	         back.type, v->type);
	ht_value_clear(&back);
	free(text);
	free(shown);
}

