/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <dirent.h>
#include <sys/stat.h>

#include "shared/bootconf-internal.h"
#include "shared/bootconf.h"
#include "shared/rootfs.h"
#include "shared/util.h"

/* bootconf: sysctl.d, as systemd-sysctl reads it (ht_sysctl_conf_read()). */

/* systemd's GLOB_CHARS (string-util.h), what string_is_glob() looks for. */
#define GLOB_CHARS "*?["

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
	if (bootconf_grow(&s->keys, &s->capkeys, s->nkeys, sizeof(*s->keys)) < 0)
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
	if (bootconf_grow(&s->opts, &s->capopts, s->nopts, sizeof(*s->opts)) < 0)
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

	while (bootconf_next_line(ct, &pos, &raw, &rawlen)) {
		_cleanup_free_ char *copy = NULL, *key = NULL;
		char *p, *value = NULL;
		struct sline *nl;
		bool ign = false;

		lineno++;
		if (rawlen > LONG_LINE_MAX)
			return bootconf_add_problem(c, HT_CONF_UNREADABLE, path, lineno, NULL,
						    "line longer than %u bytes: systemd-sysctl stops "
						    "reading the file here", LONG_LINE_MAX);
		if (!(copy = strndup(raw, rawlen)))
			return -ENOMEM;
		p = bootconf_strstrip(copy);
		if (!*p || strchr(SYSTEMD_COMMENTS, *p))
			continue;
		value = strchr(p, '=');
		if (value) {
			*value++ = '\0';
			value = bootconf_strstrip(value);
		}
		if (p[0] == '-') {
			/* With '=' a '-' means "ignore failure"; without, a negative match. */
			ign = value != NULL;
			p++;
		} else if (!value) {
			r = bootconf_add_problem(c, HT_CONF_MALFORMED, path, lineno, NULL,
						 "line is not an assignment, ignored: %s", p);
			if (r < 0)
				return r;
			continue;
		}
		p = bootconf_strstrip(p);
		if (!(key = sysctl_path_form(p)))
			return -ENOMEM;
		if (!*key || streq(key, "/") || streq(key, ".") || has_dotdot(key)) {
			r = bootconf_add_problem(c, HT_CONF_MALFORMED, path, lineno, NULL,
						 "key \"%s\" names no sysctl file, ignored", p);
			if (r < 0)
				return r;
			continue;
		}
		if (bootconf_grow(&s->lines, &s->caplines, s->nlines, sizeof(*s->lines)) < 0)
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
/*
 * glob(3)'s directory functions below a --root tree (GLOB_ALTDIRFUNC): the
 * paths glob() builds begin with the tree's path (glob_root_len bytes of
 * it), the rest is resolved inside the tree, so a link in ROOT/proc/sys is
 * not followed out of it. glob() has no argument for them: set for the one
 * call.
 */
static const char *glob_root;
static size_t glob_root_len;

static void *glob_opendir(const char *path)
{
	return ht_root_opendir(glob_root, path + glob_root_len);
}

static struct dirent *glob_readdir(void *d)
{
	return readdir(d);
}

static void glob_closedir(void *d)
{
	closedir(d);
}

static int glob_stat(const char *path, struct stat *st)
{
	int r = ht_root_stat(glob_root, path + glob_root_len, false, st);

	return r < 0 ? (errno = -r, -1) : 0;
}

static int glob_lstat(const char *path, struct stat *st)
{
	int r = ht_root_stat(glob_root, path + glob_root_len, true, st);

	return r < 0 ? (errno = -r, -1) : 0;
}

static int sysctl_glob(const char *root, const char *pattern, glob_t *g, size_t *skip)
{
	_cleanup_free_ char *base = ht_root_path(root, "/proc/sys");
	_cleanup_free_ char *ebase = NULL, *full = NULL;
	int flags = GLOB_MARK, r;

	if (!base || !(ebase = glob_escape(base)))
		return -ENOMEM;
	if (asprintf(&full, "%s/%s", ebase, pattern) < 0)
		return (full = NULL), -ENOMEM;
	*skip = strlen(base) + 1;
	if (!ht_root_is_live(root)) {
		glob_root = root;
		glob_root_len = strlen(base) - strlen("/proc/sys");
		g->gl_opendir = glob_opendir;
		g->gl_readdir = glob_readdir;
		g->gl_closedir = glob_closedir;
		g->gl_stat = glob_stat;
		g->gl_lstat = glob_lstat;
		flags |= GLOB_ALTDIRFUNC;
	}
	r = glob(full, flags, NULL, g);
	glob_root = NULL;
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

		r = bootconf_pending_add(p, name, l->value, &t);
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
		r = bootconf_strv_push(patterns, npatterns, dotted);
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

	while (bootconf_next_line(ct, &pos, &raw, &len)) {
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

	/* bootconf_read_entry() reports into a scratch conf: only the verdict matters here. */
	r = bootconf_read_entry(&probe, root, "/etc/sysctl.conf", &ct);
	ht_conf_free(&probe);
	if (r <= 0)
		return r;
	for (size_t i = 0; i < s->nids && !found; i++)
		found = s->devs[i] == ct.dev && s->inos[i] == ct.ino;
	set = has_setting(&ct);
	free(ct.buf);
	if (found || !set)
		return 0;
	return bootconf_add_problem(c, HT_CONF_NOT_READ, "/etc/sysctl.conf", 0, NULL,
				    "not read at boot: systemd-sysctl reads only the sysctl.d directories "
				    "and no *.conf there links to this file (Debian's is "
				    "/etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf)");
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
	r = bootconf_systemd_dirs(root, "sysctl.d", dirs, &ndirs);
	if (r >= 0)
		r = bootconf_list_files(&c, root, (const char *const *)dirs, ndirs, STYLE_SYSTEMD, &e, &ne);
	for (size_t i = 0; i < ne && r >= 0; i++) {
		struct content ct = { 0 };
		dev_t *nd;
		ino_t *ni;

		r = bootconf_read_entry(&c, root, e[i].path, &ct);
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
		r = bootconf_group(&c, &p);
	bootconf_pendings_free(&p);
	bootconf_strv_free_n(patterns, npatterns);
	sysctl_state_free(&s);
	bootconf_entries_free(e, ne);
	bootconf_dirs_free(dirs, ndirs);
	if (r < 0) {
		ht_conf_free(&c);
		return r;
	}
	*out = c;
	return 0;
}

const char *ht_conf_file_shown(const char *file)
{
	return strcmp(file, "/etc/sysctl.d/99-sysctl.conf") == 0 ?
	       "/etc/sysctl.conf (via /etc/sysctl.d/99-sysctl.conf)" : file;
}
