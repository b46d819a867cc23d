/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/bootconf.h"
#include "shared/util.h"

/* systemd's CHASE_SYMLINKS_MAX (src/basic/chase-symlinks.h, once fs-util.h): -ELOOP after. */
#define CHASE_MAX 32
/* systemd's LONG_LINE_MAX (src/basic/def.h): read_line() fails on a longer line. */
#define LONG_LINE_MAX (1024U * 1024U)
/* Ours: a bound on memory for one configuration file; no real one comes near. */
#define CONF_FILE_MAX (16U * 1024U * 1024U)

/* systemd's COMMENTS (string-util.h); kmod knows only '#', in column 1. */
#define SYSTEMD_COMMENTS "#;"
/* systemd's WHITESPACE (string-util.h), what strstrip() removes. */
#define SYSTEMD_WHITESPACE " \t\n\r"
/* systemd's GLOB_CHARS (string-util.h), what string_is_glob() looks for. */
#define GLOB_CHARS "*?["

static bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static bool endswith(const char *s, const char *suffix)
{
	size_t l = strlen(s), sl = strlen(suffix);

	return l >= sl && streq(s + l - sl, suffix);
}

/* systemd's strstrip(): trims SYSTEMD_WHITESPACE at both ends, in place. */
static char *strstrip(char *s)
{
	size_t l;

	s += strspn(s, SYSTEMD_WHITESPACE);
	l = strlen(s);
	while (l > 0 && strchr(SYSTEMD_WHITESPACE, s[l - 1]))
		l--;
	s[l] = '\0';
	return s;
}

static int strv_push(char ***v, size_t *n, const char *s)
{
	char **nv = reallocarray(*v, *n + 1, sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (!(nv[*n] = strdup(s)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

static void strv_free_n(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/*
 * Makes room for one more element in *@v (*@cap of @size bytes each, @n used):
 * the capacity doubles, so that n appends cost O(n) copies in all, not O(n^2).
 * Returns 0 or -ENOMEM (*@v unchanged).
 */
static int grow(void *v, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *nv;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	if (ncap < *cap || !(nv = reallocarray(*(void **)v, ncap, size)))
		return -ENOMEM;
	*(void **)v = nv;
	*cap = ncap;
	return 0;
}

static int add_problem(struct ht_conf *c, enum ht_conf_problem_kind kind, const char *file,
		       unsigned line, const char *key, const char *fmt, ...) _printf_(6, 7);

static int add_problem(struct ht_conf *c, enum ht_conf_problem_kind kind, const char *file,
		       unsigned line, const char *key, const char *fmt, ...)
{
	_cleanup_free_ char *text = NULL;
	struct ht_conf_problem *np, *p;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (r < 0)
		return (text = NULL), -ENOMEM;
	np = reallocarray(c->problems, c->nproblems + 1, sizeof(*np));
	if (!np)
		return -ENOMEM;
	c->problems = np;
	p = &np[c->nproblems];
	*p = (struct ht_conf_problem){ .kind = kind, .line = line };
	if (line)
		r = asprintf(&p->message, "%s:%u: %s", file, line, text);
	else
		r = asprintf(&p->message, "%s: %s", file, text);
	if (r < 0) {
		p->message = NULL;
		return -ENOMEM;
	}
	p->file = strdup(file);
	p->key = key ? strdup(key) : NULL;
	c->nproblems++; /* counted first, so that ht_conf_free() releases a half-made one */
	if (!p->file || (key && !p->key))
		return -ENOMEM;
	return 0;
}

/* The target of the link @full, newly allocated; NULL with errno set on failure. */
static char *read_link(const char *full)
{
	size_t size = 256;

	for (;;) {
		char *buf = malloc(size);
		ssize_t r;

		if (!buf)
			return NULL;
		r = readlink(full, buf, size);
		if (r < 0) {
			free(buf);
			return NULL;
		}
		if ((size_t)r < size) {
			buf[r] = '\0';
			return buf;
		}
		free(buf);
		if (size > PATH_MAX) {
			errno = ENAMETOOLONG;
			return NULL;
		}
		size *= 2;
	}
}

/*
 * resolve - the host path @path with every link in it followed inside @root, as
 * systemd's chase() with CHASE_PREFIX_ROOT does: an absolute target starts again
 * at the root, ".." never climbs above it. The first component that does not
 * exist ends the walk and the rest is kept as written, so that opening the result
 * fails with ENOENT as it would on the host. *@ret: "/"-based, caller frees.
 * Returns 0, -ENOMEM, -ELOOP, or a readlink(2) errno.
 */
static int resolve(const char *root, const char *path, char **ret)
{
	_cleanup_free_ char *done = strdup(""), *todo = strdup(path);
	unsigned links = 0;

	if (!done || !todo)
		return -ENOMEM;
	for (;;) {
		_cleanup_free_ char *cand = NULL, *full = NULL, *target = NULL;
		char *comp = todo, *rest;
		struct stat st;

		comp += strspn(comp, "/");
		if (!*comp)
			break;
		rest = strchrnul(comp, '/');
		if (*rest)
			*rest++ = '\0';
		if (streq(comp, ".")) {
			memmove(todo, rest, strlen(rest) + 1);
			continue;
		}
		if (streq(comp, "..")) {
			char *slash = strrchr(done, '/');

			if (slash)
				*slash = '\0';
			memmove(todo, rest, strlen(rest) + 1);
			continue;
		}
		if (asprintf(&cand, "%s/%s", done, comp) < 0)
			return (cand = NULL), -ENOMEM;
		if (!(full = ht_root_path(root, cand)))
			return -ENOMEM;
		if (lstat(full, &st) < 0) {
			free(done);
			if (*rest) {
				if (asprintf(&done, "%s/%s", cand, rest) < 0)
					return (done = NULL), -ENOMEM;
			} else {
				done = TAKE_PTR(cand);
			}
			break;
		}
		if (!S_ISLNK(st.st_mode)) {
			free(done);
			done = TAKE_PTR(cand);
			memmove(todo, rest, strlen(rest) + 1);
			continue;
		}
		if (++links > CHASE_MAX)
			return -ELOOP;
		if (!(target = read_link(full)))
			return errno == ENOMEM ? -ENOMEM : -errno;
		if (target[0] == '/')
			done[0] = '\0';
		free(cand);
		if (asprintf(&cand, "%s%s%s", target, *rest ? "/" : "", rest) < 0)
			return (cand = NULL), -ENOMEM;
		free(todo);
		todo = TAKE_PTR(cand);
	}
	*ret = strdup(done[0] ? done : "/");
	return *ret ? 0 : -ENOMEM;
}

/* One winning file name and where it is (host path, as the directory is configured). */
struct entry {
	char *name;
	char *path;
};

static void entries_free(struct entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].name);
		free(e[i].path);
	}
	free(e);
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/*
 * Which file names count. systemd (conf_files_list_strv() with flags 0, and
 * FOREACH_DIRENT's hidden_or_backup_file()): "*.conf" not starting with '.',
 * whatever its type, so even a directory hides the name. kmod
 * (conf_files_filter_out()): "*.conf" or "*.alias", not starting with '.',
 * at least 6 characters, directories skipped.
 */
enum style { STYLE_SYSTEMD, STYLE_KMOD };

static bool name_counts(enum style style, int dfd, const char *name, bool *is_dir)
{
	struct stat st;

	*is_dir = false;
	if (name[0] == '.')
		return false;
	if (style == STYLE_SYSTEMD)
		return endswith(name, ".conf");
	if (strlen(name) < 6 || (!endswith(name, ".conf") && !endswith(name, ".alias")))
		return false;
	if (fstatat(dfd, name, &st, 0) == 0 && S_ISDIR(st.st_mode)) {
		*is_dir = true;
		return false;
	}
	return true;
}

/*
 * The files of @dirs (decreasing precedence), one a name, sorted by name.
 * Directories that are absent are skipped silently, as both systemd and kmod
 * do; any other failure to list one is a problem.
 */
static int list_files(struct ht_conf *c, const char *root, const char *const *dirs,
		      size_t ndirs, enum style style, struct entry **ret, size_t *ret_n)
{
	struct entry *e = NULL;
	size_t n = 0;
	int r = 0;

	for (size_t i = 0; i < ndirs && r >= 0; i++) {
		_cleanup_free_ char *res = NULL, *full = NULL;
		struct dirent *de;
		DIR *d;

		r = resolve(root, dirs[i], &res);
		if (r == -ENOMEM)
			break;
		if (r < 0) {
			r = add_problem(c, HT_CONF_UNREADABLE, dirs[i], 0, NULL,
					"cannot resolve: %s", strerror(-r));
			continue;
		}
		if (!(full = ht_root_path(root, res))) {
			r = -ENOMEM;
			break;
		}
		d = opendir(full);
		if (!d) {
			if (errno != ENOENT && errno != ENOTDIR)
				r = add_problem(c, HT_CONF_UNREADABLE, dirs[i], 0, NULL,
						"cannot list: %s", strerror(errno));
			continue;
		}
		for (errno = 0; (de = readdir(d)); errno = 0) {
			struct entry *ne;
			bool is_dir, dup = false;

			if (!name_counts(style, dirfd(d), de->d_name, &is_dir)) {
				if (is_dir)
					r = add_problem(c, HT_CONF_UNREADABLE, dirs[i], 0, NULL,
							"%s is a directory: kmod skips it",
							de->d_name);
				if (r < 0)
					break;
				continue;
			}
			for (size_t k = 0; k < n && !dup; k++)
				dup = streq(e[k].name, de->d_name);
			if (dup)
				continue;
			if (!(ne = reallocarray(e, n + 1, sizeof(*e)))) {
				r = -ENOMEM;
				break;
			}
			e = ne;
			e[n].name = strdup(de->d_name);
			if (asprintf(&e[n].path, "%s/%s", dirs[i], de->d_name) < 0)
				e[n].path = NULL;
			n++;
			if (!e[n - 1].name || !e[n - 1].path) {
				r = -ENOMEM;
				break;
			}
		}
		if (r >= 0 && errno != 0)
			r = add_problem(c, HT_CONF_UNREADABLE, dirs[i], 0, NULL, "cannot list: %s",
					strerror(errno));
		closedir(d);
	}
	if (r < 0) {
		entries_free(e, n);
		return r;
	}
	if (n > 0)
		qsort(e, n, sizeof(*e), entry_cmp);
	*ret = e;
	*ret_n = n;
	return 0;
}

/* What reading one entry gave. */
struct content {
	char *buf; /* NUL-terminated; may hold other NULs before len */
	size_t len;
	dev_t dev;
	ino_t ino;
};

/*
 * read_entry - the content of @path below @root.
 * Returns 1 with @ct filled (and the path added to c->files), 0 when there is
 * nothing to parse (a mask, added to c->masked; a file gone missing, which both
 * systemd and kmod skip in silence; or an unreadable one, now a problem), or
 * -ENOMEM.
 */
static int read_entry(struct ht_conf *c, const char *root, const char *path,
		      struct content *ct)
{
	_cleanup_free_ char *res = NULL, *full = NULL, *buf = NULL;
	_cleanup_close_ int fd = -1;
	size_t len = 0, cap = 0;
	struct stat st;
	int r;

	r = resolve(root, path, &res);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return add_problem(c, HT_CONF_UNREADABLE, path, 0, NULL, "cannot resolve: %s",
				   strerror(-r));
	/* A link to /dev/null masks even below a root that has no dev/null. */
	if (streq(res, "/dev/null"))
		return strv_push(&c->masked, &c->nmasked, path);
	if (!(full = ht_root_path(root, res)))
		return -ENOMEM;
	/* O_NONBLOCK: a FIFO planted in a tree must not hang the reader. */
	fd = open(full, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return add_problem(c, HT_CONF_UNREADABLE, path, 0, NULL, "cannot open: %s",
				   strerror(errno));
	}
	if (fstat(fd, &st) < 0)
		return add_problem(c, HT_CONF_UNREADABLE, path, 0, NULL, "cannot stat: %s",
				   strerror(errno));
	if (S_ISCHR(st.st_mode))
		return strv_push(&c->masked, &c->nmasked, path);
	if (S_ISDIR(st.st_mode))
		return add_problem(c, HT_CONF_UNREADABLE, path, 0, NULL, "cannot read: %s",
				   strerror(EISDIR));
	if (!S_ISREG(st.st_mode))
		return add_problem(c, HT_CONF_UNREADABLE, path, 0, NULL,
				   "not a regular file: skipped");
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *nb;

			if (cap > CONF_FILE_MAX)
				return add_problem(c, HT_CONF_UNREADABLE, path, 0, NULL,
						   "larger than %u MiB: skipped",
						   CONF_FILE_MAX >> 20);
			cap = cap ? cap * 2 : 8192;
			if (!(nb = realloc(buf, cap)))
				return -ENOMEM;
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return add_problem(c, HT_CONF_UNREADABLE, path, 0, NULL, "cannot read: %s",
					   strerror(errno));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len == 0)
		return strv_push(&c->masked, &c->nmasked, path);
	buf[len] = '\0';
	r = strv_push(&c->files, &c->nfiles, path);
	if (r < 0)
		return r;
	ct->buf = TAKE_PTR(buf);
	ct->len = len;
	ct->dev = st.st_dev;
	ct->ino = st.st_ino;
	return 1;
}

/*
 * The next line of @ct from *@pos, as systemd's read_line() cuts it: '\n', '\r',
 * "\r\n" and NUL each end a line; nothing after the last end is no line.
 * Returns false at the end.
 */
static bool next_line(const struct content *ct, size_t *pos, const char **line, size_t *len)
{
	size_t p = *pos, s = p;

	if (p >= ct->len)
		return false;
	while (p < ct->len && ct->buf[p] != '\n' && ct->buf[p] != '\r' && ct->buf[p] != '\0')
		p++;
	*line = ct->buf + s;
	*len = p - s;
	if (p < ct->len) {
		if (ct->buf[p] == '\r' && p + 1 < ct->len && ct->buf[p + 1] == '\n')
			p++;
		p++;
	}
	*pos = p;
	return true;
}

/* ---- results: keys sorted, each with its assignments in precedence order ---- */

/* One assignment on its way into a key. @file and @pattern are borrowed. */
struct pending {
	char *key;           /* owned */
	const char *file;
	unsigned line;
	char *value;         /* owned */
	bool ign;
	const char *pattern;
	int phase;           /* sysctl: 0 from a glob, 1 named: a named key always wins */
	size_t order;        /* sysctl: position of the option in systemd's ordered hashmap */
	size_t seq;          /* the order read */
	bool key_ign;        /* ignore_failure of the option that sets this */
};

struct pendings {
	struct pending *v;
	size_t n, cap;
};

static void pendings_free(struct pendings *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].key);
		free(p->v[i].value);
	}
	free(p->v);
	*p = (struct pendings){ 0 };
}

/* Appends a copy of @tmpl under @key, with @value; both strings are copied. */
static int pending_add(struct pendings *p, const char *key, const char *value,
		       const struct pending *tmpl)
{
	struct pending *t;

	if (grow(&p->v, &p->cap, p->n, sizeof(*p->v)) < 0)
		return -ENOMEM;
	t = &p->v[p->n];
	*t = *tmpl;
	t->seq = p->n;
	t->key = strdup(key);
	t->value = value ? strdup(value) : NULL;
	p->n++; /* counted first, so that pendings_free() releases a half-made one */
	if (!t->key || (value && !t->value))
		return -ENOMEM;
	return 0;
}

static int pending_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	int r = strcmp(x->key, y->key);

	if (r)
		return r;
	if (x->phase != y->phase)
		return x->phase < y->phase ? -1 : 1;
	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static char *strdup_or_null(const char *s, bool *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

/* Sorts @p and turns it into c->keys: O(n log n) for n assignments. */
static int group(struct ht_conf *c, struct pendings *p)
{
	size_t i = 0, nkeys = 0;

	if (p->n == 0)
		return 0;
	qsort(p->v, p->n, sizeof(*p->v), pending_cmp);
	for (size_t m = 0; m < p->n; m++)
		nkeys += m == 0 || !streq(p->v[m].key, p->v[m - 1].key);
	c->keys = calloc(nkeys, sizeof(*c->keys));
	if (!c->keys)
		return -ENOMEM;
	while (i < p->n) {
		struct ht_conf_key *k;
		size_t j = i;
		bool oom = false;

		while (j < p->n && streq(p->v[j].key, p->v[i].key))
			j++;
		k = &c->keys[c->n++];
		*k = (struct ht_conf_key){ .key = TAKE_PTR(p->v[i].key) };
		k->assigns = calloc(j - i, sizeof(*k->assigns));
		if (!k->assigns)
			return -ENOMEM;
		for (size_t m = i; m < j; m++) {
			struct ht_conf_assign *a = &k->assigns[k->n++];

			a->file = strdup_or_null(p->v[m].file, &oom);
			a->line = p->v[m].line;
			a->value = TAKE_PTR(p->v[m].value);
			a->ignore_failure = p->v[m].ign;
			a->pattern = strdup_or_null(p->v[m].pattern, &oom);
		}
		k->ignore_failure = p->v[j - 1].key_ign;
		if (oom)
			return -ENOMEM;
		i = j;
	}
	return 0;
}

/* ---- sysctl.d ---- */

/*
 * systemd's sysctl_normalize() on a copy: the path form ("net/ipv4/conf/eth0.100/x").
 * If the first separator is a '.', dots and slashes swap; then path_simplify()
 * (src/basic/path-util.c) drops empty and "." components ("." if nothing is
 * left of a relative key), and a leading '/' goes unless it is all there is.
 */
static char *sysctl_path_form(const char *key)
{
	char *s = strdup(key), *n, *w;
	const char *r;
	bool abs, first = true;

	if (!s || !*s) /* path_simplify() leaves "" as it is */
		return s;
	n = strpbrk(s, "/.");
	if (n && *n == '.')
		for (; n; n = strpbrk(n + 1, "/."))
			*n = *n == '.' ? '/' : '.';
	abs = s[0] == '/';
	w = s + abs;
	r = s + abs;
	while (*r) {
		const char *e;

		r += strspn(r, "/");
		if (!*r)
			break;
		e = strchrnul(r, '/');
		if (!(e - r == 1 && r[0] == '.')) {
			if (!first)
				*w++ = '/';
			memmove(w, r, (size_t)(e - r));
			w += e - r;
			first = false;
		}
		r = e;
	}
	if (w == s)
		*w++ = '.';
	*w = '\0';
	if (s[0] == '/' && s[1])
		memmove(s, s + 1, strlen(s));
	return s;
}

/* The path form written dotted, as sysctl(8) prints keys: '/' and '.' swap. */
static char *sysctl_dotted(const char *path_form)
{
	char *s = strdup(path_form);

	for (char *p = s; p && *p; p++)
		if (*p == '/')
			*p = '.';
		else if (*p == '.')
			*p = '/';
	return s;
}

char *ht_sysctl_key_normalize(const char *key)
{
	_cleanup_free_ char *p = sysctl_path_form(key);

	if (!p)
		return NULL;
	if (!*p || streq(p, "/") || streq(p, "."))
		return strdup("");
	return sysctl_dotted(p);
}

static bool has_dotdot(const char *path_form)
{
	for (const char *s = path_form; (s = strstr(s, "..")); s += 2)
		if ((s == path_form || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
			return true;
	return false;
}

#define NONE SIZE_MAX

/* One parsed sysctl line. */
struct sline {
	char *key;   /* path form */
	char *value; /* NULL: "-key" without '=' */
	bool ign;
	bool glob;
	size_t file; /* index into c->files */
	unsigned line;
	size_t next; /* the next line with the same key, NONE at the last */
};

/*
 * A key of the sysctl lines: its lines in reading order, and the hashmap
 * entry that holds it now. The keys sit in a dense array, found through an
 * open-addressing hash table (struct slot, linear probing, at most half
 * full). A lookup costs O(1) on average, so reading n lines costs O(n), not
 * the O(n^2) of comparing each line with every entry before it (100,000
 * keys took 110 s that way; bench/run.sh has today's figure).
 */
struct skey {
	const char *key;    /* borrowed from the first line's */
	size_t first, last; /* the lines, chained by sline.next */
	size_t live;        /* the entry of opts that holds the key, NONE if none */
};

/* 8 bytes, so that the table stays small in the cache and cheap to double. */
struct slot {
	uint32_t key;       /* index into keys + 1; 0: free */
	uint32_t hash;      /* the low 32 bits of the key's hash */
};

/* An entry of systemd-sysctl's ordered hashmap, as it stands after all files. */
struct sopt {
	size_t def;  /* the sline that set the value */
	bool ign;
	bool dead;   /* replaced by a later line with another value */
};

struct sysctl_state {
	struct sline *lines;
	size_t nlines, caplines;
	struct sopt *opts;
	size_t nopts, capopts;
	struct skey *keys;
	size_t nkeys, capkeys;
	struct slot *slots; /* nslots: 0 or a power of 2 at least 2 x nkeys */
	size_t nslots;
	/* (dev, ino) of the files read, to tell whether /etc/sysctl.conf is among them */
	dev_t *devs;
	ino_t *inos;
	size_t nids;
};

static void sysctl_state_free(struct sysctl_state *s)
{
	for (size_t i = 0; i < s->nlines; i++) {
		free(s->lines[i].key);
		free(s->lines[i].value);
	}
	free(s->lines);
	free(s->opts);
	free(s->keys);
	free(s->slots);
	free(s->devs);
	free(s->inos);
}

/* FNV-1a, 64 bits. */
static uint64_t key_hash(const char *k)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *k; k++)
		h = (h ^ (unsigned char)*k) * 1099511628211ULL;
	return h;
}

/* The slot of @key (hash @h): its own, or the free one where it would go. */
static struct slot *slot_of(const struct sysctl_state *s, const char *key, uint64_t h)
{
	size_t mask = s->nslots - 1;

	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		struct slot *sl = &s->slots[i];

		if (!sl->key || (sl->hash == (uint32_t)h && streq(s->keys[sl->key - 1].key, key)))
			return sl;
	}
}

/* The key @key, or NULL when no line has it. */
static const struct skey *skey_find(const struct sysctl_state *s, const char *key)
{
	const struct slot *sl;

	if (s->nslots == 0)
		return NULL;
	sl = slot_of(s, key, key_hash(key));
	return sl->key ? &s->keys[sl->key - 1] : NULL;
}

/*
 * Room for one more key: the dense array grown, the table at most half full
 * (doubled and every key put in again). Returns 0 or -ENOMEM; also past
 * UINT32_MAX - 1 keys, which would take some 8 GiB of lines.
 */
static int skey_reserve(struct sysctl_state *s)
{
	struct slot *old = s->slots, *nsl;
	size_t oldn = s->nslots, n;

	if (s->nkeys + 1 >= UINT32_MAX)
		return -ENOMEM;
	if (grow(&s->keys, &s->capkeys, s->nkeys, sizeof(*s->keys)) < 0)
		return -ENOMEM;
	if (2 * (s->nkeys + 1) <= oldn)
		return 0;
	n = oldn ? oldn * 2 : 64;
	if (!(nsl = calloc(n, sizeof(*nsl))))
		return -ENOMEM;
	s->slots = nsl;
	s->nslots = n;
	for (size_t i = 0; i < oldn; i++) {
		size_t j = old[i].hash & (n - 1);

		if (!old[i].key)
			continue;
		/* The low 32 bits of the hash place it while the table has at most 2^32 slots. */
		if (n > ((size_t)1 << 31)) {
			const struct skey *k = &s->keys[old[i].key - 1];

			*slot_of(s, k->key, key_hash(k->key)) = old[i];
			continue;
		}
		while (nsl[j].key)
			j = (j + 1) & (n - 1);
		nsl[j] = old[i];
	}
	free(old);
	return 0;
}

/*
 * One line of a sysctl.d file into the hashmap, as parse_file() in systemd 252's
 * src/sysctl/sysctl.c: a line for a key that holds the same value only ORs the
 * '-' flag in and keeps its place; another value replaces the entry and moves
 * it to the end (the order globs are applied in). The line is also chained
 * to its key's lines.
 */
static int sysctl_put(struct sysctl_state *s, size_t idx)
{
	struct sline *l = &s->lines[idx];
	uint64_t h = key_hash(l->key);
	struct slot *sl;
	struct skey *k;

	if (skey_reserve(s) < 0)
		return -ENOMEM;
	sl = slot_of(s, l->key, h);
	if (!sl->key) {
		*sl = (struct slot){ .key = (uint32_t)(s->nkeys + 1), .hash = (uint32_t)h };
		k = &s->keys[s->nkeys++];
		*k = (struct skey){ .key = l->key, .first = idx, .last = idx, .live = NONE };
	} else {
		k = &s->keys[sl->key - 1];
		s->lines[k->last].next = idx;
		k->last = idx;
	}
	if (k->live != NONE) {
		struct sopt *o = &s->opts[k->live];
		const char *ov = s->lines[o->def].value;

		if ((!ov && !l->value) || (ov && l->value && streq(ov, l->value))) {
			o->ign = o->ign || l->ign;
			return 0;
		}
		o->dead = true;
	}
	if (grow(&s->opts, &s->capopts, s->nopts, sizeof(*s->opts)) < 0)
		return -ENOMEM;
	s->opts[s->nopts] = (struct sopt){ .def = idx, .ign = l->ign };
	k->live = s->nopts++;
	return 0;
}

static int sysctl_parse(struct ht_conf *c, struct sysctl_state *s, const struct content *ct,
			size_t file)
{
	const char *path = c->files[file];
	const char *raw;
	size_t pos = 0, rawlen;
	unsigned lineno = 0;
	int r;

	while (next_line(ct, &pos, &raw, &rawlen)) {
		_cleanup_free_ char *copy = NULL, *key = NULL;
		char *p, *value = NULL;
		struct sline *nl;
		bool ign = false;

		lineno++;
		if (rawlen > LONG_LINE_MAX)
			return add_problem(c, HT_CONF_UNREADABLE, path, lineno, NULL,
					   "line longer than %u bytes: systemd-sysctl stops "
					   "reading the file here", LONG_LINE_MAX);
		if (!(copy = strndup(raw, rawlen)))
			return -ENOMEM;
		p = strstrip(copy);
		if (!*p || strchr(SYSTEMD_COMMENTS, *p))
			continue;
		value = strchr(p, '=');
		if (value) {
			*value++ = '\0';
			value = strstrip(value);
		}
		if (p[0] == '-') {
			/* With '=' a '-' means "ignore failure"; without, a negative match. */
			ign = value != NULL;
			p++;
		} else if (!value) {
			r = add_problem(c, HT_CONF_MALFORMED, path, lineno, NULL,
					"line is not an assignment, ignored: %s", p);
			if (r < 0)
				return r;
			continue;
		}
		p = strstrip(p);
		if (!(key = sysctl_path_form(p)))
			return -ENOMEM;
		if (!*key || streq(key, "/") || streq(key, ".") || has_dotdot(key)) {
			r = add_problem(c, HT_CONF_MALFORMED, path, lineno, NULL,
					"key \"%s\" names no sysctl file, ignored", p);
			if (r < 0)
				return r;
			continue;
		}
		if (grow(&s->lines, &s->caplines, s->nlines, sizeof(*s->lines)) < 0)
			return -ENOMEM;
		nl = s->lines;
		nl[s->nlines] = (struct sline){
			.key = TAKE_PTR(key),
			.ign = ign,
			.file = file,
			.line = lineno,
			.next = NONE,
		};
		nl[s->nlines].glob = strpbrk(nl[s->nlines].key, GLOB_CHARS) != NULL;
		s->nlines++;
		if (value && !(nl[s->nlines - 1].value = strdup(value)))
			return -ENOMEM;
		r = sysctl_put(s, s->nlines - 1);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Backslashes before glob(3)'s special characters in @s, so that a root is literal. */
static char *glob_escape(const char *s)
{
	char *out = malloc(strlen(s) * 2 + 1), *w = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		if (strchr("*?[]\\", *s))
			*w++ = '\\';
		*w++ = *s;
	}
	*w = '\0';
	return out;
}

/*
 * The keys (path form) the glob @pattern matches below ROOT/proc/sys, as
 * systemd's glob_extend() finds them; directories are left out, since writing
 * one fails. @g is the caller's, to free with globfree(); the matches
 * are its paths with *@skip bytes of prefix.
 */
static int sysctl_glob(const char *root, const char *pattern, glob_t *g, size_t *skip)
{
	_cleanup_free_ char *base = ht_root_path(root, "/proc/sys");
	_cleanup_free_ char *ebase = NULL, *full = NULL;
	int r;

	if (!base || !(ebase = glob_escape(base)))
		return -ENOMEM;
	if (asprintf(&full, "%s/%s", ebase, pattern) < 0)
		return (full = NULL), -ENOMEM;
	*skip = strlen(base) + 1;
	r = glob(full, GLOB_MARK, NULL, g);
	if (r == GLOB_NOSPACE)
		return -ENOMEM;
	if (r != 0) {
		globfree(g);
		g->gl_pathc = 0;
		g->gl_pathv = NULL;
	}
	return 0;
}

/* Every line whose key is @key, under the dotted @name; see struct ht_conf_key. */
static int sysctl_history(struct pendings *p, const struct ht_conf *c,
			  const struct sysctl_state *s, const char *key, const char *name,
			  const char *pattern, int phase, size_t order, bool key_ign)
{
	const struct skey *k = skey_find(s, key);

	for (size_t i = k ? k->first : NONE; i != NONE; i = s->lines[i].next) {
		const struct sline *l = &s->lines[i];
		struct pending t = {
			.file = c->files[l->file], .line = l->line, .ign = l->ign,
			.pattern = pattern, .phase = phase, .order = order, .key_ign = key_ign,
		};
		int r;

		r = pending_add(p, name, l->value, &t);
		if (r < 0)
			return r;
	}
	return 0;
}

static int sysctl_collect(struct ht_conf *c, const char *root, const struct sysctl_state *s,
			  struct pendings *p, char ***patterns, size_t *npatterns)
{
	for (size_t i = 0; i < s->nopts; i++) {
		const struct sopt *o = &s->opts[i];
		const struct sline *l = &s->lines[o->def];
		_cleanup_free_ char *dotted = NULL;
		glob_t g = { 0 };
		size_t skip;
		int r;

		if (o->dead)
			continue;
		if (!(dotted = sysctl_dotted(l->key)))
			return -ENOMEM;
		if (!l->glob) {
			r = sysctl_history(p, c, s, l->key, dotted, NULL, 1, i, o->ign);
			if (r < 0)
				return r;
			continue;
		}
		/* A glob set to a negative match is not applied at all. */
		if (!l->value)
			continue;
		r = strv_push(patterns, npatterns, dotted);
		if (r < 0)
			return r;
		r = sysctl_glob(root, l->key, &g, &skip);
		if (r < 0)
			return r;
		for (size_t m = 0; m < g.gl_pathc && r >= 0; m++) {
			const char *match = g.gl_pathv[m];
			_cleanup_free_ char *name = NULL;

			/* GLOB_MARK ends directories with '/': they cannot be written. */
			if (strlen(match) <= skip || endswith(match, "/"))
				continue;
			if (!(name = sysctl_dotted(match + skip))) {
				r = -ENOMEM;
				break;
			}
			r = sysctl_history(p, c, s, l->key, name, (*patterns)[*npatterns - 1], 0,
					   i, o->ign);
		}
		globfree(&g);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Whether @ct has a line systemd-sysctl would act on (not blank, not a comment). */
static bool has_setting(const struct content *ct)
{
	const char *raw;
	size_t pos = 0, len;

	while (next_line(ct, &pos, &raw, &len)) {
		size_t k = 0;

		while (k < len && strchr(SYSTEMD_WHITESPACE, raw[k]))
			k++;
		if (k < len && !strchr(SYSTEMD_COMMENTS, raw[k]))
			return true;
	}
	return false;
}

/*
 * /etc/sysctl.conf: systemd-sysctl (since systemd 207) reads only sysctl.d; Debian
 * links the file in as /etc/sysctl.d/99-sysctl.conf. Settings in it with no such
 * link are dead at boot, which is worth a problem.
 */
static int sysctl_check_conf(struct ht_conf *c, const char *root, const struct sysctl_state *s)
{
	struct ht_conf probe = { 0 };
	struct content ct = { 0 };
	bool found = false, set;
	int r;

	/* read_entry() reports into a scratch conf: only the verdict matters here. */
	r = read_entry(&probe, root, "/etc/sysctl.conf", &ct);
	ht_conf_free(&probe);
	if (r <= 0)
		return r;
	for (size_t i = 0; i < s->nids && !found; i++)
		found = s->devs[i] == ct.dev && s->inos[i] == ct.ino;
	set = has_setting(&ct);
	free(ct.buf);
	if (found || !set)
		return 0;
	return add_problem(c, HT_CONF_NOT_READ, "/etc/sysctl.conf", 0, NULL,
			   "not read at boot: systemd-sysctl reads only the sysctl.d directories "
			   "and no *.conf there links to this file (Debian's is "
			   "/etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf)");
}

/*
 * The directories of systemd's CONF_PATHS_STRV(@sub) below
 * @root: /lib last, and only when ROOT/lib is not a link to /usr/lib, where it
 * would only repeat /usr/lib.
 */
static int systemd_dirs(const char *root, const char *sub, char *dirs[5], size_t *n)
{
	static const char *const prefixes[] = { "/etc/", "/run/", "/usr/local/lib/", "/usr/lib/" };
	_cleanup_free_ char *lib = NULL;
	int r;

	*n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (asprintf(&dirs[(*n)++], "%s%s", prefixes[i], sub) < 0)
			return (dirs[*n - 1] = NULL), -ENOMEM;
	r = resolve(root, "/lib", &lib);
	if (r == -ENOMEM)
		return r;
	if (r == 0 && streq(lib, "/usr/lib"))
		return 0;
	if (asprintf(&dirs[(*n)++], "/lib/%s", sub) < 0)
		return (dirs[*n - 1] = NULL), -ENOMEM;
	return 0;
}

static void dirs_free(char **dirs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
}

int ht_sysctl_conf_read(const char *root, struct ht_conf *out)
{
	struct ht_conf c = { 0 };
	struct sysctl_state s = { 0 };
	struct pendings p = { 0 };
	struct entry *e = NULL;
	char *dirs[5] = { 0 }, **patterns = NULL;
	size_t ndirs = 0, ne = 0, npatterns = 0;
	int r;

	if (!out)
		return -EINVAL;
	r = systemd_dirs(root, "sysctl.d", dirs, &ndirs);
	if (r >= 0)
		r = list_files(&c, root, (const char *const *)dirs, ndirs, STYLE_SYSTEMD, &e, &ne);
	for (size_t i = 0; i < ne && r >= 0; i++) {
		struct content ct = { 0 };
		dev_t *nd;
		ino_t *ni;

		r = read_entry(&c, root, e[i].path, &ct);
		if (r <= 0)
			continue;
		nd = reallocarray(s.devs, s.nids + 1, sizeof(*nd));
		if (nd)
			s.devs = nd;
		ni = nd ? reallocarray(s.inos, s.nids + 1, sizeof(*ni)) : NULL;
		if (ni)
			s.inos = ni;
		if (!nd || !ni) {
			free(ct.buf);
			r = -ENOMEM;
			break;
		}
		s.devs[s.nids] = ct.dev;
		s.inos[s.nids++] = ct.ino;
		r = sysctl_parse(&c, &s, &ct, c.nfiles - 1);
		free(ct.buf);
	}
	if (r >= 0)
		r = sysctl_check_conf(&c, root, &s);
	if (r >= 0)
		r = sysctl_collect(&c, root, &s, &p, &patterns, &npatterns);
	if (r >= 0)
		r = group(&c, &p);
	pendings_free(&p);
	strv_free_n(patterns, npatterns);
	sysctl_state_free(&s);
	entries_free(e, ne);
	dirs_free(dirs, ndirs);
	if (r < 0) {
		ht_conf_free(&c);
		return r;
	}
	*out = c;
	return 0;
}

/* ---- modprobe.d ---- */

/*
 * kmod's getline_wrapped() (libkmod/libkmod-util.c): a backslash before a newline
 * joins the next physical line, a backslash before anything else is dropped.
 * *@first: the first physical line of the logical one (1-based).
 */
static bool kmod_next_line(const struct content *ct, size_t *pos, unsigned *physical,
			   unsigned *first, char **ret)
{
	size_t p = *pos, cap = 256, n = 0;
	char *buf;

	if (p >= ct->len)
		return false;
	if (!(buf = malloc(cap)))
		return (*ret = NULL), true;
	*first = *physical + 1;
	while (p < ct->len) {
		char ch = ct->buf[p++];

		if (ch == '\n')
			break;
		if (ch == '\\' && p < ct->len) {
			ch = ct->buf[p++];
			if (ch == '\n') {
				(*physical)++;
				continue;
			}
		}
		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb) {
				free(buf);
				return (*ret = NULL), true;
			}
			buf = nb;
		}
		buf[n++] = ch;
	}
	(*physical)++;
	buf[n] = '\0';
	*pos = p;
	*ret = buf;
	return true;
}

/* kmod's underscores(): '-' becomes '_' except inside a [...] range. */
static void kmod_underscores(char *s)
{
	for (size_t i = 0; s[i]; i++) {
		if (s[i] == '[') {
			size_t e = strcspn(s + i, "]");

			if (!s[i + e])
				return;
			i += e;
		} else if (s[i] == '-') {
			s[i] = '_';
		}
	}
}

/* One parameter as the kernel's next_arg() cuts it out of the option string. */
struct kparam {
	char *name;  /* points into the line's copy */
	char *value; /* NULL without '=' */
	bool used;   /* taken up by a space-around-'=' report */
};

/*
 * next_arg() (lib/cmdline.c, called by parse_args() in kernel/params.c): blanks
 * separate parameters outside double quotes; the first '=' that is not the
 * first character splits name and value; quotes around the value or the whole
 * parameter are dropped. Returns the rest of @args; *@open_quote tells that
 * the string ended inside quotes.
 */
static char *kernel_next_arg(char *args, struct kparam *kp, bool *open_quote)
{
	size_t i, equals = 0;
	bool in_quote = false, quoted = false;
	char *next;

	if (*args == '"') {
		args++;
		in_quote = quoted = true;
	}
	for (i = 0; args[i]; i++) {
		if (isspace((unsigned char)args[i]) && !in_quote)
			break;
		if (equals == 0 && args[i] == '=')
			equals = i;
		if (args[i] == '"')
			in_quote = !in_quote;
	}
	*open_quote = in_quote;
	kp->name = args;
	kp->value = NULL;
	kp->used = false;
	if (equals) {
		args[equals] = '\0';
		kp->value = args + equals + 1;
		if (*kp->value == '"') {
			kp->value++;
			if (args[i - 1] == '"')
				args[i - 1] = '\0';
		}
	}
	if (quoted && i > 0 && args[i - 1] == '"')
		args[i - 1] = '\0';
	if (args[i]) {
		args[i] = '\0';
		next = args + i + 1;
	} else {
		next = args + i;
	}
	while (isspace((unsigned char)*next))
		next++;
	return next;
}

/*
 * nf_conntrack's parameters: hashsize (net/netfilter/nf_conntrack_core.c),
 * expect_hashsize (nf_conntrack_expect.c), acct (nf_conntrack_acct.c), tstamp
 * (nf_conntrack_timestamp.c), nf_conntrack_helper (nf_conntrack_helper.c, until
 * Linux 6.0 removed it in b118509076b3); and what every module takes: dyndbg
 * (lib/dynamic_debug.c) and async_probe (kernel/module/main.c,
 * unknown_module_param_cb()).
 */
static const char *const nf_conntrack_params[] = {
	"hashsize", "expect_hashsize", "acct", "tstamp", "nf_conntrack_helper",
	"dyndbg", "async_probe",
};

/* The unsigned ones, set through param_set_uint() -> kstrtouint(). */
static bool nf_conntrack_uint(const char *param)
{
	return streq(param, "hashsize") || streq(param, "expect_hashsize");
}

/*
 * kstrtouint(s, 0, ...) (lib/kstrtox.c): an optional '+', then "0x" + hex
 * digits, '0' + octal digits or decimal digits, an optional final newline, and
 * the value within 32 bits.
 */
static bool kstrtouint_ok(const char *s)
{
	unsigned long long v = 0;
	unsigned base = 10;
	size_t digits = 0;

	if (*s == '+')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isxdigit((unsigned char)s[2])) {
		base = 16;
		s += 2;
	} else if (s[0] == '0') {
		base = 8;
	}
	for (; *s; s++, digits++) {
		unsigned d;

		if (isdigit((unsigned char)*s))
			d = (unsigned)(*s - '0');
		else if (isxdigit((unsigned char)*s))
			d = (unsigned)(tolower((unsigned char)*s) - 'a' + 10);
		else
			break;
		if (d >= base)
			break;
		v = v * base + d;
		if (v > 0xffffffffULL)
			return false;
	}
	if (*s == '\n')
		s++;
	return digits > 0 && *s == '\0';
}

/*
 * Reports "p = v", "p =v", "p= v" and a "=" with no name before it among @kp,
 * marking the stray pieces used so that they are not taken for parameters.
 */
static int report_space_eq(struct ht_conf *c, const char *path, unsigned line,
			   const char *mod, struct kparam *kp, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *key = NULL, *seg = NULL, *fix = NULL;
		const char *name = NULL, *val = NULL, *how;
		int r;

		if (kp[i].used)
			continue;
		if (!kp[i].value && kp[i].name[0] == '=') {
			/* "=" or "=v": a blank before the '=' */
			if (i > 0 && !kp[i - 1].value && !kp[i - 1].used)
				name = kp[i - 1].name;
			kp[i].used = true;
			if (kp[i].name[1]) {
				val = kp[i].name + 1;
				r = asprintf(&seg, "%s%s=%s", name ? name : "", name ? " " : "",
					     val);
			} else {
				if (i + 1 < n && !kp[i + 1].value && kp[i + 1].name[0] != '=') {
					val = kp[i + 1].name;
					kp[i + 1].used = true;
				}
				r = asprintf(&seg, "%s%s=%s%s", name ? name : "", name ? " " : "",
					     val ? " " : "", val ? val : "");
			}
			how = name ? "the kernel gets the parameter without a value, which "
				     "fails with EINVAL unless it is a bool, and then the module "
				     "does not load; the pieces after it are ignored as unknown "
				     "parameters"
				   : "the kernel ignores the pieces as unknown parameters";
		} else if (kp[i].value && !kp[i].value[0] && i + 1 < n && !kp[i + 1].value &&
			   kp[i + 1].name[0] != '=') {
			/* "p= v": a blank after the '=' */
			name = kp[i].name;
			val = kp[i + 1].name;
			kp[i + 1].used = true;
			r = asprintf(&seg, "%s= %s", name, val);
			how = "the kernel sets the parameter to an empty value and ignores the "
			      "value as an unknown parameter";
		} else {
			continue;
		}
		if (r < 0)
			return (seg = NULL), -ENOMEM;
		if (asprintf(&fix, "%s=%s", name ? name : "PARAM", val ? val : "VALUE") < 0)
			return (fix = NULL), -ENOMEM;
		if (name && asprintf(&key, "%s.%s", mod, name) < 0)
			return (key = NULL), -ENOMEM;
		r = add_problem(c, HT_CONF_SPACE_AROUND_EQ, path, line, key,
				"options %s: spaces around '=' in \"%s\": %s; write %s", mod, seg,
				how, fix);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The nf_conntrack checks for one parameter; @spaced: already in a space report. */
static int check_nf_conntrack(struct ht_conf *c, const char *path, unsigned line,
			      const char *param, const char *value, bool spaced)
{
	_cleanup_free_ char *key = NULL, *hint = NULL;
	bool known = false;

	for (size_t i = 0; i < ARRAY_SIZE(nf_conntrack_params) && !known; i++)
		known = streq(param, nf_conntrack_params[i]);
	if (asprintf(&key, "nf_conntrack.%s", param) < 0)
		return (key = NULL), -ENOMEM;
	if (!known) {
		/* nf_conntrack_max, nf_conntrack_buckets, ...: names of sysctls */
		if (strncmp(param, "nf_conntrack_", strlen("nf_conntrack_")) == 0 &&
		    asprintf(&hint, "; net.netfilter.%s is a sysctl, set in sysctl.d", param) < 0)
			return (hint = NULL), -ENOMEM;
		return add_problem(c, HT_CONF_UNKNOWN_PARAM, path, line, key,
				   "nf_conntrack has no parameter \"%s\" (it has hashsize, "
				   "expect_hashsize, acct and tstamp): the kernel ignores it%s",
				   param, hint ? hint : "");
	}
	if (spaced || !nf_conntrack_uint(param))
		return 0;
	if (!value)
		return add_problem(c, HT_CONF_MISSING_VALUE, path, line, key,
				   "nf_conntrack %s without a value: the kernel refuses it with "
				   "EINVAL and nf_conntrack does not load", param);
	if (!kstrtouint_ok(value))
		return add_problem(c, HT_CONF_BAD_VALUE, path, line, key,
				   "nf_conntrack %s=%s: not an unsigned 32-bit number as the "
				   "kernel's kstrtouint() reads it; nf_conntrack does not load",
				   param, value);
	return 0;
}

/* State across the lines of all files: modules whose parameters a "--" ended. */
struct kmod_state {
	char **ended;
	size_t nended;
};

static int kmod_options(struct ht_conf *c, struct kmod_state *ks, struct pendings *p,
			const char *path, unsigned line, char *mod, char *opts)
{
	_cleanup_free_ struct kparam *kp = NULL;
	size_t n = 0;
	bool open_quote = false, ended = false;
	int r;

	kmod_underscores(mod);
	for (char *t = opts; *t; t++)
		if (*t == '\t')
			*t = ' ';
	for (size_t i = 0; i < ks->nended && !ended; i++)
		ended = streq(ks->ended[i], mod);
	if (ended)
		return add_problem(c, HT_CONF_MALFORMED, path, line, mod,
				   "options %s: ignored by the kernel, after an earlier \"--\"",
				   mod);
	opts += strspn(opts, " \t\n\v\f\r");
	while (*opts) {
		struct kparam *nk = reallocarray(kp, n + 1, sizeof(*kp));

		if (!nk)
			return -ENOMEM;
		kp = nk;
		opts = kernel_next_arg(opts, &kp[n], &open_quote);
		/* parse_args(): a bare "--" ends the module's parameters, this line's and later. */
		if (!kp[n].value && streq(kp[n].name, "--")) {
			r = strv_push(&ks->ended, &ks->nended, mod);
			if (r >= 0 && *opts)
				r = add_problem(c, HT_CONF_MALFORMED, path, line, mod,
						"options %s: the kernel ignores what follows "
						"\"--\"", mod);
			if (r < 0)
				return r;
			break;
		}
		for (char *d = kp[n].name; *d; d++)
			if (*d == '-')
				*d = '_';
		n++;
	}
	if (open_quote) {
		r = add_problem(c, HT_CONF_MALFORMED, path, line, mod,
				"options %s: a double quote is not closed: the kernel reads the "
				"options of the next line into this value", mod);
		if (r < 0)
			return r;
	}
	r = report_space_eq(c, path, line, mod, kp, n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *key = NULL;
		bool spaced = i + 1 < n && kp[i + 1].used;
		struct pending t = { .file = path, .line = line };

		if (kp[i].used)
			continue;
		if (streq(mod, "nf_conntrack")) {
			r = check_nf_conntrack(c, path, line, kp[i].name, kp[i].value, spaced);
			if (r < 0)
				return r;
		}
		if (asprintf(&key, "%s.%s", mod, kp[i].name) < 0)
			return (key = NULL), -ENOMEM;
		r = pending_add(p, key, kp[i].value, &t);
		if (r < 0)
			return r;
	}
	return 0;
}

/* One logical line, as kmod_config_parse() (libkmod/libkmod-config.c) takes it. */
static int kmod_line(struct ht_conf *c, struct kmod_state *ks, struct pendings *p,
		     const char *path, unsigned line, char *text)
{
	/* command: how many words it needs after it; -1: a module, then the rest */
	static const struct {
		const char *cmd;
		int words;
	} cmds[] = {
		{ "alias", 2 }, { "blacklist", 1 }, { "options", -1 },
		{ "install", -1 }, { "remove", -1 }, { "softdep", -1 },
	};
	char *save = NULL, *cmd, *mod, *rest;
	int words = 0;
	bool known = false;

	if (text[0] == '\0' || text[0] == '#')
		return 0;
	cmd = strtok_r(text, "\t ", &save);
	if (!cmd)
		return 0;
	if (streq(cmd, "include") || streq(cmd, "config"))
		return add_problem(c, HT_CONF_MALFORMED, path, line, NULL,
				   "command %s is deprecated and not parsed by kmod", cmd);
	for (size_t i = 0; i < ARRAY_SIZE(cmds) && !known; i++)
		if (streq(cmd, cmds[i].cmd)) {
			known = true;
			words = cmds[i].words;
		}
	if (!known)
		goto bad;
	mod = strtok_r(NULL, "\t ", &save);
	if (!mod)
		goto bad;
	if (words == 2 && !strtok_r(NULL, "\t ", &save))
		goto bad;
	if (words >= 0)
		return 0;
	/* strtok_r() with no delimiters: all that is left, or NULL when nothing is. */
	rest = strtok_r(NULL, "", &save);
	if (!rest)
		goto bad;
	if (streq(cmd, "options"))
		return kmod_options(c, ks, p, path, line, mod, rest);
	return 0;
bad:
	return add_problem(c, HT_CONF_MALFORMED, path, line, NULL,
			   "kmod ignores this line, starting with '%s'", cmd);
}

int ht_modprobe_conf_read(const char *root, struct ht_conf *out)
{
	/* libkmod/libkmod.c default_config_paths in kmod 30 */
	static const char *const dirs[] = {
		"/etc/modprobe.d",
		"/run/modprobe.d",
		"/usr/local/lib/modprobe.d",
		"/lib/modprobe.d",
	};
	struct ht_conf c = { 0 };
	struct kmod_state ks = { 0 };
	struct pendings p = { 0 };
	struct entry *e = NULL;
	size_t ne = 0;
	int r;

	if (!out)
		return -EINVAL;
	r = list_files(&c, root, dirs, ARRAY_SIZE(dirs), STYLE_KMOD, &e, &ne);
	for (size_t i = 0; i < ne && r >= 0; i++) {
		struct content ct = { 0 };
		unsigned physical = 0, first;
		size_t pos = 0;
		char *text;

		r = read_entry(&c, root, e[i].path, &ct);
		if (r <= 0)
			continue;
		while (r >= 0 && kmod_next_line(&ct, &pos, &physical, &first, &text)) {
			if (!text) {
				r = -ENOMEM;
				break;
			}
			r = kmod_line(&c, &ks, &p, c.files[c.nfiles - 1], first, text);
			free(text);
		}
		free(ct.buf);
	}
	if (r >= 0)
		r = group(&c, &p);
	pendings_free(&p);
	strv_free_n(ks.ended, ks.nended);
	entries_free(e, ne);
	if (r < 0) {
		ht_conf_free(&c);
		return r;
	}
	*out = c;
	return 0;
}

/* ---- modules-load.d ---- */

int ht_modules_load_read(const char *root, struct ht_conf *out)
{
	struct ht_conf c = { 0 };
	struct pendings p = { 0 };
	struct entry *e = NULL;
	char *dirs[5] = { 0 };
	size_t ndirs = 0, ne = 0;
	int r;

	if (!out)
		return -EINVAL;
	r = systemd_dirs(root, "modules-load.d", dirs, &ndirs);
	if (r >= 0)
		r = list_files(&c, root, (const char *const *)dirs, ndirs, STYLE_SYSTEMD, &e, &ne);
	for (size_t i = 0; i < ne && r >= 0; i++) {
		struct content ct = { 0 };
		const char *raw;
		size_t pos = 0, len;
		unsigned lineno = 0;

		r = read_entry(&c, root, e[i].path, &ct);
		if (r <= 0)
			continue;
		/* apply_file() in src/modules-load/modules-load.c: one name a stripped line */
		while (r >= 0 && next_line(&ct, &pos, &raw, &len)) {
			_cleanup_free_ char *copy = NULL;
			struct pending t = { .file = c.files[c.nfiles - 1] };
			char *l;

			lineno++;
			if (len > LONG_LINE_MAX) {
				r = add_problem(&c, HT_CONF_UNREADABLE, t.file, lineno, NULL,
						"line longer than %u bytes: systemd-modules-load "
						"stops reading the file here", LONG_LINE_MAX);
				break;
			}
			if (!(copy = strndup(raw, len))) {
				r = -ENOMEM;
				break;
			}
			l = strstrip(copy);
			if (!*l || strchr(SYSTEMD_COMMENTS, *l))
				continue;
			t.line = lineno;
			r = pending_add(&p, l, l, &t);
		}
		free(ct.buf);
	}
	if (r >= 0)
		r = group(&c, &p);
	pendings_free(&p);
	entries_free(e, ne);
	dirs_free(dirs, ndirs);
	if (r < 0) {
		ht_conf_free(&c);
		return r;
	}
	*out = c;
	return 0;
}

/* ---- common ---- */

static int key_cmp(const void *k, const void *elem)
{
	return strcmp(k, ((const struct ht_conf_key *)elem)->key);
}

const struct ht_conf_key *ht_conf_find(const struct ht_conf *c, const char *key)
{
	if (!c || !key || c->n == 0)
		return NULL;
	return bsearch(key, c->keys, c->n, sizeof(*c->keys), key_cmp);
}

const struct ht_conf_assign *ht_conf_effective(const struct ht_conf_key *k)
{
	return k && k->n > 0 ? &k->assigns[k->n - 1] : NULL;
}

const char *ht_conf_problem_kind_name(enum ht_conf_problem_kind kind)
{
	switch (kind) {
	case HT_CONF_UNREADABLE:
		return "unreadable";
	case HT_CONF_MALFORMED:
		return "malformed";
	case HT_CONF_NOT_READ:
		return "not-read";
	case HT_CONF_SPACE_AROUND_EQ:
		return "space-around-equals";
	case HT_CONF_UNKNOWN_PARAM:
		return "unknown-parameter";
	case HT_CONF_MISSING_VALUE:
		return "missing-value";
	case HT_CONF_BAD_VALUE:
		return "bad-value";
	}
	return "unknown";
}

void ht_conf_free(struct ht_conf *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		for (size_t j = 0; j < c->keys[i].n; j++) {
			free(c->keys[i].assigns[j].file);
			free(c->keys[i].assigns[j].value);
			free(c->keys[i].assigns[j].pattern);
		}
		free(c->keys[i].assigns);
		free(c->keys[i].key);
	}
	free(c->keys);
	strv_free_n(c->files, c->nfiles);
	strv_free_n(c->masked, c->nmasked);
	for (size_t i = 0; i < c->nproblems; i++) {
		free(c->problems[i].file);
		free(c->problems[i].key);
		free(c->problems[i].message);
	}
	free(c->problems);
	*c = (struct ht_conf){ 0 };
}

const char *ht_conf_file_shown(const char *file)
{
	return strcmp(file, "/etc/sysctl.d/99-sysctl.conf") == 0 ?
	       "/etc/sysctl.conf (via /etc/sysctl.d/99-sysctl.conf)" : file;
}

char *ht_kcmdline_param(const char *root, const char *name)
{
	_cleanup_free_ char *cmd = NULL;
	size_t nl = strlen(name);
	char *found = NULL;

	if (ht_read_file(root, "/proc/cmdline", &cmd) < 0)
		return NULL;
	/* The last word for the parameter wins, as parse_args() sets them in turn. */
	for (char *w = cmd, *next; w && *w; w = next) {
		size_t i, len;

		w += strspn(w, " \t\n");
		len = strcspn(w, " \t\n");
		next = w[len] ? w + len + 1 : NULL;
		w[len] = '\0';
		for (i = 0; i < nl && w[i]; i++)
			if (!(w[i] == name[i] || (w[i] == '-' && name[i] == '_')))
				break;
		if (i == nl && w[i] == '=') {
			free(found);
			found = strdup(w + nl + 1);
		}
	}
	return found;
}

/* ---- systemd unit files and drop-ins: [Service] settings, LimitNOFILE= ---- */

/* systemd's UNIT_NAME_MAX (src/basic/unit-name.h). */
#define UNIT_NAME_MAX 256

bool ht_unit_name_valid(const char *unit)
{
	size_t n = unit ? strlen(unit) : 0, sl = strlen(".service");

	if (n <= sl || n >= UNIT_NAME_MAX || unit[0] == '.' || !endswith(unit, ".service"))
		return false;
	for (const char *c = unit; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr(":_.@\\-", *c))
			return false;
	/* An instance's '@' starts no name and appears once ("foo@bar.service", "foo@.service"). */
	return unit[0] != '@' && (!strchr(unit, '@') || strchr(unit, '@') == strrchr(unit, '@'));
}

/*
 * One number of rlimit_parse_one() for RLIMIT_NOFILE (src/basic/rlimit-util.c,
 * rlimit_parse_u64()): "infinity", or a decimal number (safe_atou64(): no sign,
 * no unit suffix for a count). Returns 0 or -EINVAL.
 */
static int rlimit_one(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == strlen("infinity") && strncmp(s, "infinity", len) == 0) {
		*out = UINT64_MAX;
		return 0;
	}
	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]) || v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

int ht_rlimit_parse(const char *value, uint64_t *soft, uint64_t *hard)
{
	const char *colon;
	uint64_t s, h;

	if (!value)
		return -EINVAL;
	colon = strchr(value, ':');
	if (!colon) {
		if (rlimit_one(value, strlen(value), &s) < 0)
			return -EINVAL;
		h = s;
	} else if (rlimit_one(value, (size_t)(colon - value), &s) < 0 ||
	           rlimit_one(colon + 1, strlen(colon + 1), &h) < 0)
		return -EINVAL;
	if (s > h)
		return -EILSEQ;
	*soft = s;
	*hard = h;
	return 0;
}

/*
 * The @section ("[Service]", "[Manager]") @key= lines of one unit file,
 * drop-in or manager configuration file, as systemd's config_parse() cuts
 * them (src/shared/conf-parser.c): a trailing backslash joins the next
 * line, '#' or ';' starts a comment, "[Section]" switches sections, blanks
 * around the key and the value go. For LimitNOFILE and DefaultLimitNOFILE, a
 * value systemd's config_parse_limit() / config_parse_rlimit() refuses
 * (empty, not a number, soft above hard) is logged and ignored there, so it
 * is a problem here and gives no assignment; any other key's value is
 * recorded as written, "" included.
 */
static int unit_parse(struct ht_conf *c, struct pendings *p, const struct content *ct,
                      const char *section, const char *key)
{
	const char *file = c->files[c->nfiles - 1];
	_cleanup_free_ char *joined = NULL;
	bool service = false;
	unsigned lineno = 0, first = 0;
	const char *raw;
	size_t pos = 0, len;
	int r = 0;

	while (r >= 0 && next_line(ct, &pos, &raw, &len)) {
		_cleanup_free_ char *whole = NULL;
		char *l, *eq;
		uint64_t s, h;

		lineno++;
		if (len > LONG_LINE_MAX)
			return add_problem(c, HT_CONF_UNREADABLE, file, lineno, NULL, "line longer "
			                   "than %u bytes: systemd stops reading the file here",
			                   LONG_LINE_MAX);
		if (!joined)
			first = lineno;
		if (asprintf(&whole, "%s%.*s", joined ? joined : "", (int)len, raw) < 0)
			return (whole = NULL), -ENOMEM;
		free(joined);
		joined = NULL;
		l = strstrip(whole);
		/* A comment line is never continued. */
		if (!*l || strchr(SYSTEMD_COMMENTS, *l))
			continue;
		if (endswith(l, "\\")) {
			l[strlen(l) - 1] = ' ';
			if (!(joined = strdup(l)))
				return -ENOMEM;
			continue;
		}
		if (l[0] == '[') {
			service = streq(l, section);
			continue;
		}
		eq = strchr(l, '=');
		if (!service || !eq)
			continue;
		*eq = '\0';
		if (!streq(strstrip(l), key))
			continue;
		{
			const char *v = strstrip(eq + 1);
			struct pending t = { .file = file, .line = first };

			if (!streq(key, "LimitNOFILE") && !streq(key, "DefaultLimitNOFILE")) {
				r = pending_add(p, key, v, &t);
				continue;
			}
			r = ht_rlimit_parse(v, &s, &h);
			if (r == -EILSEQ)
				r = add_problem(c, HT_CONF_BAD_VALUE, file, first, key,
				                "%s=%s: soft limit above the hard one; systemd "
				                "ignores the line", key, v);
			else if (r < 0 && !*v)
				r = add_problem(c, HT_CONF_MISSING_VALUE, file, first, key,
				                "%s= without a value: systemd ignores the line "
				                "(it is no reset), the earlier value stays", key);
			else if (r < 0)
				r = add_problem(c, HT_CONF_BAD_VALUE, file, first, key,
				                "%s=%s: not a number, N:M or infinity; systemd "
				                "ignores the line", key, v);
			else
				r = pending_add(p, key, v, &t);
		}
	}
	return r;
}

/* @dirs gets "PREFIX/systemd/system/NAME.d" for the five prefixes of systemd_dirs(). */
static int unit_dirs(const char *root, const char *name, const char *suffix, char ***dirs,
                     size_t *n)
{
	_cleanup_free_ char *sub = NULL;
	char *d[5] = { 0 };
	size_t nd = 0;
	int r;

	if (asprintf(&sub, "systemd/system/%s%s", name, suffix) < 0)
		return -ENOMEM;
	r = systemd_dirs(root, sub, d, &nd);
	for (size_t i = 0; i < nd && r >= 0; i++)
		r = strv_push(dirs, n, d[i]);
	dirs_free(d, nd);
	return r;
}

/*
 * The names whose NAME.d systemd reads for @unit, most specific first
 * (unit_file_find_dirs() in src/shared/dropin.c): the unit, for an instance
 * its template, then each "-" prefix ("foo-bar-.service" and "foo-.service"
 * for "foo-bar-baz.service"), each of those again for a template.
 */
static int unit_names(const char *unit, char ***names, size_t *n)
{
	_cleanup_free_ char *name = strdup(unit);
	int r;

	if (!name)
		return -ENOMEM;
	for (;;) {
		char *at = strchr(name, '@'), *dot = strrchr(name, '.'), *dash;
		_cleanup_free_ char *tmpl = NULL, *prefix = NULL, *next = NULL;

		r = strv_push(names, n, name);
		if (r < 0)
			return r;
		if (at && at + 1 < dot) {
			if (asprintf(&tmpl, "%.*s@%s", (int)(at - name), name, dot) < 0)
				return -ENOMEM;
			r = strv_push(names, n, tmpl);
			if (r < 0)
				return r;
		}
		/* The prefix: the part before '@', or before the type suffix. */
		prefix = strndup(name, (size_t)((at ? at : dot) - name));
		if (!prefix)
			return -ENOMEM;
		if (*prefix && prefix[strlen(prefix) - 1] == '-')
			prefix[strlen(prefix) - 1] = '\0';
		dash = strrchr(prefix, '-');
		if (!dash || dash == prefix)
			return 0;
		dash[1] = '\0';
		if (asprintf(&next, "%s%.*s%s", prefix, at ? (int)(dot - at) : 0, at ? at : "",
		             dot) < 0)
			return -ENOMEM;
		free(name);
		name = TAKE_PTR(next);
	}
}

int ht_unit_limits_read(const char *root, const char *unit, struct ht_conf *out)
{
	return ht_unit_setting_read(root, unit, "LimitNOFILE", out);
}

int ht_unit_setting_read(const char *root, const char *unit, const char *key, struct ht_conf *out)
{
	struct ht_conf c = { 0 };
	struct pendings p = { 0 };
	struct entry *e = NULL;
	char **names = NULL, **dirs = NULL;
	size_t nnames = 0, ndirs = 0, ne = 0;
	int r;

	if (!out || !ht_unit_name_valid(unit) || !key || !*key || strchr(key, '='))
		return -EINVAL;
	r = unit_names(unit, &names, &nnames);
	/* The unit file: the first directory that has the unit, else its template. */
	for (size_t i = 0; i < nnames && i < 2 && r >= 0 && c.nfiles == 0 && c.nmasked == 0; i++) {
		if (i == 1 && !strchr(unit, '@'))
			break;
		r = unit_dirs(root, names[i], "", &dirs, &ndirs);
		for (size_t k = 0; k < ndirs && r >= 0; k++) {
			struct content ct = { 0 };

			r = read_entry(&c, root, dirs[k], &ct);
			if (r > 0) {
				r = unit_parse(&c, &p, &ct, "[Service]", key);
				free(ct.buf);
				break;
			}
			if (c.nmasked)
				break;
		}
		strv_free_n(dirs, ndirs);
		dirs = NULL;
		ndirs = 0;
	}
	/* The drop-in directories: each search path's NAME.d for every name, then service.d. */
	{
		static const char *const prefixes[] = { "/etc/", "/run/", "/usr/local/lib/",
		                                         "/usr/lib/", "/lib/" };
		char **byname = NULL, **typed = NULL;
		size_t nbyname = 0, ntyped = 0;

		for (size_t i = 0; i < nnames && r >= 0; i++)
			r = unit_dirs(root, names[i], ".d", &byname, &nbyname);
		if (r >= 0)
			r = unit_dirs(root, "service", ".d", &typed, &ntyped);
		/* Reordered by search path first, the names within each. */
		for (size_t pi = 0; pi < ARRAY_SIZE(prefixes) && r >= 0; pi++) {
			for (size_t i = 0; i < nbyname && r >= 0; i++)
				if (strncmp(byname[i], prefixes[pi], strlen(prefixes[pi])) == 0)
					r = strv_push(&dirs, &ndirs, byname[i]);
		}
		for (size_t i = 0; i < ntyped && r >= 0; i++)
			r = strv_push(&dirs, &ndirs, typed[i]);
		strv_free_n(byname, nbyname);
		strv_free_n(typed, ntyped);
	}
	if (r >= 0)
		r = list_files(&c, root, (const char *const *)dirs, ndirs, STYLE_SYSTEMD, &e, &ne);
	for (size_t i = 0; i < ne && r >= 0; i++) {
		struct content ct = { 0 };

		r = read_entry(&c, root, e[i].path, &ct);
		if (r <= 0)
			continue;
		r = unit_parse(&c, &p, &ct, "[Service]", key);
		free(ct.buf);
	}
	if (r >= 0)
		r = group(&c, &p);
	pendings_free(&p);
	entries_free(e, ne);
	strv_free_n(dirs, ndirs);
	strv_free_n(names, nnames);
	if (r < 0) {
		ht_conf_free(&c);
		return r;
	}
	*out = c;
	return 0;
}

int ht_manager_setting_read(const char *root, const char *key, struct ht_conf *out)
{
	struct ht_conf c = { 0 };
	struct pendings p = { 0 };
	struct entry *e = NULL;
	struct content ct = { 0 };
	char *dirs[5] = { 0 };
	size_t ndirs = 0, ne = 0;
	int r;

	if (!out || !key || !*key || strchr(key, '='))
		return -EINVAL;
	/* The main file first (systemd 252's config_parse_many_nulstr()), then its drop-ins. */
	r = read_entry(&c, root, "/etc/systemd/system.conf", &ct);
	if (r > 0) {
		r = unit_parse(&c, &p, &ct, "[Manager]", key);
		free(ct.buf);
	}
	if (r >= 0)
		r = systemd_dirs(root, "systemd/system.conf.d", dirs, &ndirs);
	if (r >= 0)
		r = list_files(&c, root, (const char *const *)dirs, ndirs, STYLE_SYSTEMD, &e, &ne);
	for (size_t i = 0; i < ne && r >= 0; i++) {
		ct = (struct content){ 0 };
		r = read_entry(&c, root, e[i].path, &ct);
		if (r <= 0)
			continue;
		r = unit_parse(&c, &p, &ct, "[Manager]", key);
		free(ct.buf);
	}
	if (r >= 0)
		r = group(&c, &p);
	pendings_free(&p);
	entries_free(e, ne);
	dirs_free(dirs, ndirs);
	if (r < 0) {
		ht_conf_free(&c);
		return r;
	}
	*out = c;
	return 0;
}
