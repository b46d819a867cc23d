/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/bootconf-internal.h"
#include "shared/bootconf.h"
#include "shared/rootfs.h"
#include "shared/util.h"

/*
 * What the readers of bootconf.h share (bootconf-internal.h): the root-confined
 * path walk, the listing of drop-in directories, reading one entry, cutting
 * lines, and building a struct ht_conf; and the accessors of struct ht_conf.
 * The readers: bootconf-sysctl.c, bootconf-modprobe.c, bootconf-modules-load.c,
 * bootconf-unit.c.
 */

/* systemd's CHASE_SYMLINKS_MAX (src/basic/chase-symlinks.h, once fs-util.h): -ELOOP after. */
#define CHASE_MAX 32

/* Ours: a bound on memory for one configuration file; no real one comes near. */
#define CONF_FILE_MAX (16U * 1024U * 1024U)

char *bootconf_strstrip(char *s)
{
	size_t l;

	s += strspn(s, SYSTEMD_WHITESPACE);
	l = strlen(s);
	while (l > 0 && strchr(SYSTEMD_WHITESPACE, s[l - 1]))
		l--;
	s[l] = '\0';
	return s;
}

int bootconf_strv_push(char ***v, size_t *n, const char *s)
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

void bootconf_strv_free_n(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int bootconf_grow(void *v, size_t *cap, size_t n, size_t size)
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

int bootconf_add_problem(struct ht_conf *c, enum ht_conf_problem_kind kind, const char *file,
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
	/* Where the tree is now: a pinned tree is not looked up by its --root path again. */
	_cleanup_free_ char *top = ht_root_is_live(root) ? NULL : ht_root_dir_real(root);
	unsigned links = 0;

	if (!done || !todo)
		return -ENOMEM;
	if (top)
		root = top;
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

void bootconf_entries_free(struct entry *e, size_t n)
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

int bootconf_list_files(struct ht_conf *c, const char *root, const char *const *dirs,
			size_t ndirs, enum style style, struct entry **ret, size_t *ret_n)
{
	struct entry *e = NULL;
	size_t n = 0;
	int r = 0;

	for (size_t i = 0; i < ndirs && r >= 0; i++) {
		_cleanup_free_ char *res = NULL;
		struct dirent *de;
		DIR *d;

		r = resolve(root, dirs[i], &res);
		if (r == -ENOMEM)
			break;
		if (r < 0) {
			r = bootconf_add_problem(c, HT_CONF_UNREADABLE, dirs[i], 0, NULL,
						 "cannot resolve: %s", strerror(-r));
			continue;
		}
		d = ht_root_opendir(root, res);
		if (!d) {
			if (errno != ENOENT && errno != ENOTDIR)
				r = bootconf_add_problem(c, HT_CONF_UNREADABLE, dirs[i], 0, NULL,
							 "cannot list: %s", strerror(errno));
			continue;
		}
		for (errno = 0; (de = readdir(d)); errno = 0) {
			struct entry *ne;
			bool is_dir, dup = false;

			if (!name_counts(style, dirfd(d), de->d_name, &is_dir)) {
				if (is_dir)
					r = bootconf_add_problem(c, HT_CONF_UNREADABLE, dirs[i], 0, NULL,
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
			r = bootconf_add_problem(c, HT_CONF_UNREADABLE, dirs[i], 0, NULL, "cannot list: %s",
						 strerror(errno));
		closedir(d);
	}
	if (r < 0) {
		bootconf_entries_free(e, n);
		return r;
	}
	if (n > 0)
		qsort(e, n, sizeof(*e), entry_cmp);
	*ret = e;
	*ret_n = n;
	return 0;
}

int bootconf_read_entry(struct ht_conf *c, const char *root, const char *path,
			struct content *ct)
{
	_cleanup_free_ char *res = NULL, *buf = NULL;
	_cleanup_close_ int fd = -1;
	size_t len = 0, cap = 0;
	struct stat st;
	int r;

	r = resolve(root, path, &res);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return bootconf_add_problem(c, HT_CONF_UNREADABLE, path, 0, NULL, "cannot resolve: %s",
					    strerror(-r));
	/* A link to /dev/null masks even below a root that has no dev/null. */
	if (streq(res, "/dev/null"))
		return bootconf_strv_push(&c->masked, &c->nmasked, path);
	/*
	 * O_NONBLOCK: a FIFO planted in a tree must not hang the reader. The
	 * open resolves inside the tree too, should a link appear since.
	 */
	fd = ht_root_open(root, res, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (fd == -ENOENT)
			return 0;
		return bootconf_add_problem(c, HT_CONF_UNREADABLE, path, 0, NULL, "cannot open: %s",
					    strerror(-fd));
	}
	if (fstat(fd, &st) < 0)
		return bootconf_add_problem(c, HT_CONF_UNREADABLE, path, 0, NULL, "cannot stat: %s",
					    strerror(errno));
	if (S_ISCHR(st.st_mode))
		return bootconf_strv_push(&c->masked, &c->nmasked, path);
	if (S_ISDIR(st.st_mode))
		return bootconf_add_problem(c, HT_CONF_UNREADABLE, path, 0, NULL, "cannot read: %s",
					    strerror(EISDIR));
	if (!S_ISREG(st.st_mode))
		return bootconf_add_problem(c, HT_CONF_UNREADABLE, path, 0, NULL,
					    "not a regular file: skipped");
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *nb;

			if (cap > CONF_FILE_MAX)
				return bootconf_add_problem(c, HT_CONF_UNREADABLE, path, 0, NULL,
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
			return bootconf_add_problem(c, HT_CONF_UNREADABLE, path, 0, NULL, "cannot read: %s",
						    strerror(errno));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len == 0)
		return bootconf_strv_push(&c->masked, &c->nmasked, path);
	buf[len] = '\0';
	r = bootconf_strv_push(&c->files, &c->nfiles, path);
	if (r < 0)
		return r;
	ct->buf = TAKE_PTR(buf);
	ct->len = len;
	ct->dev = st.st_dev;
	ct->ino = st.st_ino;
	return 1;
}

bool bootconf_next_line(const struct content *ct, size_t *pos, const char **line, size_t *len)
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

void bootconf_pendings_free(struct pendings *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].key);
		free(p->v[i].value);
	}
	free(p->v);
	*p = (struct pendings){ 0 };
}

int bootconf_pending_add(struct pendings *p, const char *key, const char *value,
			 const struct pending *tmpl)
{
	struct pending *t;

	if (bootconf_grow(&p->v, &p->cap, p->n, sizeof(*p->v)) < 0)
		return -ENOMEM;
	t = &p->v[p->n];
	*t = *tmpl;
	t->seq = p->n;
	t->key = strdup(key);
	t->value = value ? strdup(value) : NULL;
	p->n++; /* counted first, so that bootconf_pendings_free() releases a half-made one */
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

int bootconf_group(struct ht_conf *c, struct pendings *p)
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

int bootconf_systemd_dirs(const char *root, const char *sub, char *dirs[5], size_t *n)
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

void bootconf_dirs_free(char **dirs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
}

/* ---- struct ht_conf: lookup, names, release ---- */

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
	bootconf_strv_free_n(c->files, c->nfiles);
	bootconf_strv_free_n(c->masked, c->nmasked);
	for (size_t i = 0; i < c->nproblems; i++) {
		free(c->problems[i].file);
		free(c->problems[i].key);
		free(c->problems[i].message);
	}
	free(c->problems);
	*c = (struct ht_conf){ 0 };
}
