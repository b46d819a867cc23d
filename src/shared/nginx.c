/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/nginx.h"
#include "shared/rootfs.h"
#include "shared/util.h"

/*
 * The tokenizer follows ngx_conf_read_token() of nginx's
 * src/core/ngx_conf_file.c; ngx_conf_parse() builds the blocks; the include
 * directive is ngx_conf_include() with ngx_open_glob().
 */

enum tok { T_WORD, T_SEMI, T_OPEN, T_CLOSE, T_EOF };

struct parser {
	struct ht_nginx_conf *conf;
	const char *root;     /* for includes; NULL when only parsing */
	bool load;            /* read includes */
	const char *prefix;   /* the main file's directory, with a trailing '/' */
	char **err;
	/* the file being read */
	const char *file;     /* owned by conf->files */
	const char *buf;
	size_t len, pos;
	unsigned line;
	unsigned incl_depth;
};

static void dir_free(struct ht_nginx_dir *d)
{
	free(d->name);
	for (size_t i = 0; i < d->nargs; i++)
		free(d->args[i]);
	free(d->args);
	for (size_t i = 0; i < d->nsub; i++)
		dir_free(&d->sub[i]);
	free(d->sub);
}

void ht_nginx_free(struct ht_nginx_conf *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		dir_free(&c->dirs[i]);
	free(c->dirs);
	for (size_t i = 0; i < c->nfiles; i++)
		free(c->files[i]);
	free(c->files);
	free(c);
}

/* "FILE:LINE: MSG" into *p->err; returns -EINVAL (-ENOMEM when the message cannot be made). */
_printf_(3, 4) static int fail(struct parser *p, unsigned line, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	int r;

	if (!p->err)
		return -EINVAL;
	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	free(*p->err);
	if (asprintf(p->err, "%s:%u: %s", p->file, line, msg) < 0) {
		*p->err = NULL;
		return -ENOMEM;
	}
	/* One line: a control character of a path or a word shows as '?'. */
	for (char *c = *p->err; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return -EINVAL;
}

/* A character as a message shows it: "x", or a byte's value. */
static const char *show(char c, char out[16])
{
	if (c > 0x20 && c < 0x7f)
		snprintf(out, 16, "\"%c\"", c);
	else
		snprintf(out, 16, "byte 0x%02x", (unsigned char)c);
	return out;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The word of @n bytes at @s with nginx's escapes decoded: a new string or NULL. */
static char *decode(const char *s, size_t n)
{
	char *out = malloc(n + 1), *d = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n) {
			switch (s[i + 1]) {
			case '"':
			case '\'':
			case '\\':
				i++;
				break;
			case 't':
				*d++ = '\t';
				i++;
				continue;
			case 'r':
				*d++ = '\r';
				i++;
				continue;
			case 'n':
				*d++ = '\n';
				i++;
				continue;
			}
		}
		*d++ = s[i];
	}
	*d = '\0';
	return out;
}

/*
 * The next token: T_WORD with *word (a new string) and *line its line,
 * or a punctuation token and its line. Negative errno on an error.
 */
static int next_token(struct parser *p, char **word, unsigned *line)
{
	char tmp[16];

	*word = NULL;
	for (;;) {
		char c;

		if (p->pos >= p->len)
			return T_EOF;
		c = p->buf[p->pos];
		if (c == '\0')
			return fail(p, p->line, "expected text, found a NUL byte");
		if (blank(c)) {
			p->line += c == '\n';
			p->pos++;
			continue;
		}
		*line = p->line;
		if (c == '#') {
			while (p->pos < p->len && p->buf[p->pos] != '\n')
				p->pos++;
			continue;
		}
		if (c == ';' || c == '{' || c == '}') {
			p->pos++;
			return c == ';' ? T_SEMI : c == '{' ? T_OPEN : T_CLOSE;
		}
		if (c == '"' || c == '\'') {
			size_t start = ++p->pos;
			unsigned first = p->line;

			for (;;) {
				if (p->pos >= p->len)
					return fail(p, first, "expected a closing %c, found the end of the "
					            "file", c);
				if (p->buf[p->pos] == '\0')
					return fail(p, p->line, "expected text, found a NUL byte");
				if (p->buf[p->pos] == '\\' && p->pos + 1 < p->len) {
					p->line += p->buf[p->pos + 1] == '\n';
					p->pos += 2;
					continue;
				}
				if (p->buf[p->pos] == c)
					break;
				p->line += p->buf[p->pos] == '\n';
				p->pos++;
			}
			*word = decode(p->buf + start, p->pos - start);
			if (!*word)
				return -ENOMEM;
			p->pos++;
			if (p->pos < p->len) {
				char n = p->buf[p->pos];

				if (!blank(n) && n != ';' && n != '{' && n != ')') {
					free(*word);
					*word = NULL;
					return fail(p, p->line, "expected a blank, \";\" or \"{\" after a "
					            "quoted word, found %s", show(n, tmp));
				}
			}
			return T_WORD;
		}
		/* An unquoted word: up to a blank, ';' or '{' ('{' right after '$' excepted). */
		{
			size_t start = p->pos;
			bool dollar = false;

			while (p->pos < p->len) {
				char w = p->buf[p->pos];

				if (w == '\0')
					return fail(p, p->line, "expected text, found a NUL byte");
				if (w == '{' && dollar) {
					dollar = false;
					p->pos++;
					continue;
				}
				dollar = false;
				if (w == '\\' && p->pos + 1 < p->len) {
					if (p->buf[p->pos + 1] == '\0')
						return fail(p, p->line, "expected text, found a NUL byte");
					p->line += p->buf[p->pos + 1] == '\n';
					p->pos += 2;
					continue;
				}
				if (w == '$')
					dollar = true;
				if (blank(w) || w == ';' || w == '{')
					break;
				p->pos++;
			}
			*word = decode(p->buf + start, p->pos - start);
			return *word ? T_WORD : -ENOMEM;
		}
	}
}

static int push_arg(struct ht_nginx_dir *d, char *w)
{
	char **a = reallocarray(d->args, d->nargs + 1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	d->args = a;
	a[d->nargs++] = w;
	return 0;
}

/* Appends @d to the list (taking its contents), or frees them on failure. */
static int push_dir(struct ht_nginx_dir **list, size_t *n, size_t *cap, struct ht_nginx_dir *d)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		struct ht_nginx_dir *l = reallocarray(*list, nc, sizeof(*l));

		if (!l) {
			dir_free(d);
			return -ENOMEM;
		}
		*list = l;
		*cap = nc;
	}
	(*list)[(*n)++] = *d;
	return 0;
}

static int include(struct parser *p, const struct ht_nginx_dir *d, unsigned depth,
                   struct ht_nginx_dir **list, size_t *n, size_t *cap);

/*
 * The directives up to the '}' closing this block (@depth > 0) or the end
 * of the file (@depth 0), appended to *@list.
 */
static int parse_block(struct parser *p, unsigned depth, unsigned open_line,
                       struct ht_nginx_dir **list, size_t *n, size_t *cap)
{
	char tmp[16];

	for (;;) {
		struct ht_nginx_dir d = { 0 };
		char *w = NULL;
		unsigned line = p->line;
		int t = next_token(p, &w, &line), r;

		if (t < 0)
			return t;
		if (t == T_EOF) {
			if (depth > 0 && p->incl_depth == 0)
				return fail(p, open_line, "expected a \"}\" closing the block opened "
				            "here, found the end of the file");
			return 0;
		}
		if (t == T_CLOSE) {
			if (depth == 0)
				return fail(p, line, "expected a directive, found a \"}\" with no "
				            "block open");
			return 1;
		}
		if (t != T_WORD)
			return fail(p, line, "expected a directive name, found %s",
			            show(t == T_SEMI ? ';' : '{', tmp));
		if (++p->conf->ndirectives > HT_NGINX_DIRECTIVES_MAX) {
			free(w);
			return fail(p, line, "expected at most %d directives, found more",
			            HT_NGINX_DIRECTIVES_MAX);
		}
		d.name = w;
		d.file = p->file;
		d.line = line;
		for (;;) {
			unsigned l2 = line;

			t = next_token(p, &w, &l2);
			if (t < 0) {
				dir_free(&d);
				return t;
			}
			if (t == T_WORD) {
				if (push_arg(&d, w) < 0) {
					free(w);
					dir_free(&d);
					return -ENOMEM;
				}
				continue;
			}
			if (t == T_SEMI)
				break;
			if (t == T_OPEN) {
				size_t scap = 0;

				if (depth + 1 > HT_NGINX_DEPTH_MAX) {
					dir_free(&d);
					return fail(p, l2, "expected blocks at most %d deep, found "
					            "deeper", HT_NGINX_DEPTH_MAX);
				}
				d.block = true;
				r = parse_block(p, depth + 1, l2, &d.sub, &d.nsub, &scap);
				if (r < 0) {
					dir_free(&d);
					return r;
				}
				if (r == 0) {
					/* The end of an included file inside a block it did not open. */
					dir_free(&d);
					return fail(p, l2, "expected a \"}\" closing the block opened "
					            "here, found the end of the file");
				}
				break;
			}
			dir_free(&d);
			return fail(p, l2, "expected \";\" or \"{\" ending the directive of line %u, "
			            "found %s", line, t == T_EOF ? "the end of the file" : "\"}\"");
		}
		if (p->load && !d.block && strcmp(d.name, "include") == 0) {
			if (d.nargs != 1) {
				r = fail(p, d.line, "expected one file or pattern after include, "
				         "found %zu words", d.nargs);
				dir_free(&d);
				return r;
			}
			r = include(p, &d, depth, list, n, cap);
			dir_free(&d);
			if (r < 0)
				return r;
			p->conf->ndirectives--;
			continue;
		}
		r = push_dir(list, n, cap, &d);
		if (r < 0)
			return r;
	}
}

/* ---- include: files below the root ---- */

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

struct names {
	char **v;
	size_t n;
};

static int names_add(struct names *m, const char *s)
{
	char **v;

	if (m->n >= HT_NGINX_FILES_MAX)
		return -E2BIG;
	v = reallocarray(m->v, m->n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	m->v = v;
	if (!(v[m->n] = strdup(s)))
		return -ENOMEM;
	m->n++;
	return 0;
}

static void names_free(struct names *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i]);
	free(m->v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The paths below @root matching the absolute @pattern, component by
 * component (glob(3) with the tree's own links): @dir is what matched so
 * far ("" for "/"), @rest the components still to match.
 */
static int glob_below(const char *root, const char *dir, const char *rest, struct names *out)
{
	const char *slash;
	_cleanup_free_ char *comp = NULL;
	struct names here = { 0 };
	DIR *dp;
	struct dirent *e;
	int r = 0;

	while (*rest == '/')
		rest++;
	if (!*rest)
		return names_add(out, *dir ? dir : "/");
	slash = strchr(rest, '/');
	comp = slash ? strndup(rest, (size_t)(slash - rest)) : strdup(rest);
	if (!comp)
		return -ENOMEM;
	if (!has_glob(comp)) {
		_cleanup_free_ char *next = NULL;

		if (asprintf(&next, "%s/%s", dir, comp) < 0)
			return -ENOMEM;
		return glob_below(root, next, slash ? slash : "", out);
	}
	dp = ht_root_opendir(root, *dir ? dir : "/");
	if (!dp)
		return errno == ENOMEM ? -ENOMEM : 0;
	while ((e = readdir(dp))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fnmatch(comp, e->d_name, FNM_PERIOD) != 0)
			continue;
		r = names_add(&here, e->d_name);
		if (r < 0)
			break;
	}
	closedir(dp);
	if (r >= 0 && here.n > 1)
		qsort(here.v, here.n, sizeof(*here.v), cmp_str);
	for (size_t i = 0; r >= 0 && i < here.n; i++) {
		_cleanup_free_ char *next = NULL;

		if (asprintf(&next, "%s/%s", dir, here.v[i]) < 0)
			r = -ENOMEM;
		else
			r = glob_below(root, next, slash ? slash : "", out);
	}
	names_free(&here);
	return r;
}

/* Reads @path below the root into a new file of the configuration, parsed into *@list. */
static int read_into(struct parser *p, const char *path, unsigned at_line, unsigned depth,
                     struct ht_nginx_dir **list, size_t *n, size_t *cap)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct parser saved = *p;
	char **files;
	size_t len = 0;
	int r;

	if (p->conf->nfiles >= HT_NGINX_FILES_MAX)
		return fail(p, at_line, "expected at most %d files, found more", HT_NGINX_FILES_MAX);
	fd = ht_open_file(p->root, path);
	if (fd == -ENOMEM)
		return fd;
	if (fd < 0 && p->conf->nfiles == 0)
		return fd;
	if (fd < 0)
		return fail(p, at_line, "expected a file to include, found %s: %s", path,
		            strerror(-fd));
	r = ht_read_fd(fd, HT_NGINX_FILE_MAX, &buf, &len);
	if (r == -EFBIG)
		return fail(p, at_line, "expected a file of at most 1 MiB, found %s larger", path);
	if (r < 0)
		return r == -ENOMEM ? r : fail(p, at_line, "expected a file to read, found %s: %s",
		                               path, strerror(-r));
	files = reallocarray(p->conf->files, p->conf->nfiles + 1, sizeof(*files));
	if (!files)
		return -ENOMEM;
	p->conf->files = files;
	if (!(files[p->conf->nfiles] = strdup(path)))
		return -ENOMEM;
	p->file = files[p->conf->nfiles++];
	p->buf = buf;
	p->len = len;
	p->pos = 0;
	p->line = 1;
	r = parse_block(p, depth, at_line, list, n, cap);
	if (r == 1) {
		/* A '}' closing a block of the including file: nginx refuses it. */
		r = fail(p, p->line, "expected a directive, found a \"}\" closing a block of "
		         "another file");
	}
	if (r >= 0) {
		saved.conf = p->conf;
		*p = saved;
	}
	return r;
}

static int include(struct parser *p, const struct ht_nginx_dir *d, unsigned depth,
                   struct ht_nginx_dir **list, size_t *n, size_t *cap)
{
	_cleanup_free_ char *full = NULL;
	struct names m = { 0 };
	const char *pat = d->args[0];
	int r;

	if (p->incl_depth + 1 > HT_NGINX_INCLUDE_MAX)
		return fail(p, d->line, "expected includes at most %d deep, found deeper (a loop?)",
		            HT_NGINX_INCLUDE_MAX);
	if (pat[0] == '/')
		full = strdup(pat);
	else if (asprintf(&full, "%s%s", p->prefix, pat) < 0)
		full = NULL;
	if (!full)
		return -ENOMEM;
	if (!has_glob(full))
		r = names_add(&m, full);
	else
		r = glob_below(p->root, "", full, &m);
	if (r == -E2BIG)
		r = fail(p, d->line, "expected at most %d files, found more", HT_NGINX_FILES_MAX);
	p->incl_depth++;
	for (size_t i = 0; r >= 0 && i < m.n; i++)
		r = read_into(p, m.v[i], d->line, depth, list, n, cap);
	p->incl_depth--;
	names_free(&m);
	return r;
}

/*
 * The end of a load: on failure @c freed and *@err dropped when memory ran
 * out (a message could not be trusted to be whole); else *@ret = @c.
 * Returns @r.
 */
static int load_done(struct ht_nginx_conf *c, int r, struct ht_nginx_conf **ret, char **err)
{
	if (r < 0) {
		ht_nginx_free(c);
		if (r == -ENOMEM && err) {
			free(*err);
			*err = NULL;
		}
		return r;
	}
	*ret = c;
	return 0;
}

int ht_nginx_parse(const char *file, const char *buf, size_t len, struct ht_nginx_conf **ret,
                   char **err)
{
	struct ht_nginx_conf *c;
	struct parser p = { .err = err };
	size_t cap = 0;
	int r;

	if (err)
		*err = NULL;
	if (!file || (!buf && len) || !ret)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c || !(c->files = calloc(1, sizeof(*c->files))) || !(c->files[0] = strdup(file))) {
		ht_nginx_free(c);
		return -ENOMEM;
	}
	c->nfiles = 1;
	p.conf = c;
	p.file = c->files[0];
	p.buf = buf;
	p.len = len;
	p.line = 1;
	if (len > HT_NGINX_FILE_MAX)
		r = fail(&p, 1, "expected a file of at most 1 MiB, found %zu bytes", len);
	else
		r = parse_block(&p, 0, 0, &c->dirs, &c->n, &cap);
	return load_done(c, r, ret, err);
}

int ht_nginx_load(const char *root, const char *path, struct ht_nginx_conf **ret, char **err)
{
	_cleanup_free_ char *prefix = NULL;
	struct ht_nginx_conf *c;
	struct parser p = { .root = root, .load = true, .err = err, .file = path };
	const char *slash;
	size_t cap = 0;
	int r;

	if (err)
		*err = NULL;
	if (!path || path[0] != '/' || !ret)
		return -EINVAL;
	slash = strrchr(path, '/');
	prefix = strndup(path, (size_t)(slash - path) + 1);
	c = calloc(1, sizeof(*c));
	if (!prefix || !c) {
		free(c);
		return -ENOMEM;
	}
	p.conf = c;
	p.prefix = prefix;
	r = read_into(&p, path, 1, 0, &c->dirs, &c->n, &cap);
	if (r < 0 && c->nfiles == 0 && r != -ENOENT && r != -ENOMEM && err && !*err) {
		if (asprintf(err, "%s: %s", path, strerror(-r)) < 0)
			*err = NULL;
	}
	return load_done(c, r, ret, err);
}

const struct ht_nginx_dir *ht_nginx_find(const struct ht_nginx_dir *d, size_t n,
                                         const char *name)
{
	const struct ht_nginx_dir *last = NULL;

	for (size_t i = 0; d && name && i < n; i++)
		if (strcmp(d[i].name, name) == 0)
			last = &d[i];
	return last;
}
