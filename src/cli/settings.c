/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The configuration file and its drop-ins (settings.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/settings.h"
#include "shared/rootfs.h"
#include "shared/trust.h"
#include "shared/units.h"
#include "shared/util.h"

/* A configuration file is a few hundred bytes; a drop-in directory a handful of files. */
#define CONFIG_FILE_MAX (1024 * 1024)
#define CONFIG_DROPINS_MAX 1024

enum section { SEC_NONE, SEC_HOSTTUNE, SEC_SET, SEC_WAIVE, SEC_ALLOW, SEC_UNKNOWN };

/* One file being read. */
struct parse {
	struct cli_config *cfg;
	const char *name;  /* the file as messages name it */
	FILE *f;
	unsigned lineno;
	char *raw;         /* the line inih is handling, without its newline */
	size_t rawcap;
	size_t bytes;
	enum section sec;
	char *last;        /* the key of the last assignment in this section (continuations) */
	int ret;
	struct ht_error *err;
};

static int parse_fail(struct parse *p, unsigned col, int errnum, const char *fmt, ...)
	_printf_(4, 5);
static int parse_fail(struct parse *p, unsigned col, int errnum, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	if (p->ret < 0)
		return p->ret;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->ret = ht_error_set(p->err, errnum, "%s:%u:%u: %s", p->name, p->lineno, col, msg);
	return p->ret;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The column (from 1) of the first character of the raw line that is not blank. */
static unsigned first_col(const struct parse *p)
{
	return (unsigned)strspn(p->raw, " \t") + 1;
}

/* A rule id or variable name: letters, digits, '_' and inner single '.'s, a letter or '_' first. */
static bool valid_name(const char *s, size_t n)
{
	if (n == 0 || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];

		if (c == '.' && (s[i - 1] == '.' || i == n - 1))
			return false;
		if (!(c == '_' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z')))
			return false;
	}
	return true;
}

static int set_where(struct parse *p, unsigned col, char **where)
{
	char *w;

	if (asprintf(&w, "%s:%u:%u", p->name, p->lineno, col) < 0)
		return -ENOMEM;
	free(*where);
	*where = w;
	return 0;
}

/* A new string of @a, a space and @b (a continuation line), replacing *@dst. */
static int append(char **dst, const char *b)
{
	char *s;

	if (asprintf(&s, "%s %s", *dst, b) < 0)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

static void waiver_free(struct cli_waiver *w)
{
	free(w->rule);
	free(w->instance);
	free(w->reason);
	free(w->where);
}

static void set_free(struct cli_set *s)
{
	free(s->name);
	free(s->assignment);
	free(s->where);
}

/* [hosttune]: profile, fail-on and facts-max-age. */
static int hosttune_key(struct parse *p, const char *name, const char *value, unsigned col)
{
	struct cli_config *cfg = p->cfg;

	if (strcmp(name, "profile") == 0) {
		free(cfg->profile);
		cfg->profile = NULL;
		if (!*value) /* an empty assignment takes an earlier file's back */
			return 0;
		if (!valid_name(value, strlen(value)) || strchr(value, '.'))
			return parse_fail(p, col, EINVAL, "profile: expected a profile name (letters, "
			                  "digits and '_'), found '%s'", value);
		cfg->profile = strdup(value);
		if (!cfg->profile)
			return -ENOMEM;
		return set_where(p, col, &cfg->profile_where);
	}
	if (strcmp(name, "fail-on") == 0) {
		cfg->has_fail_on = *value != '\0';
		if (!*value)
			return 0;
		if (ht_severity_from_name(value, &cfg->fail_on) < 0 || cfg->fail_on == HT_SEV_OK)
			return parse_fail(p, col, EINVAL, "fail-on: expected info, warning or critical, "
			                  "found '%s'", value);
		return 0;
	}
	if (strcmp(name, "facts-max-age") == 0) {
		cfg->has_facts_max_age = *value != '\0';
		if (!*value)
			return 0;
		if (ht_parse_duration(value, &cfg->facts_max_age) < 0 || cfg->facts_max_age < 0)
			return parse_fail(p, col, EINVAL, "facts-max-age: expected a time such as 1d, "
			                  "12h or 0 (never warn), found '%s'", value);
		return 0;
	}
	return parse_fail(p, first_col(p), EINVAL, "unknown key '%s' in [hosttune] (expected "
	                  "profile, fail-on or facts-max-age)", name);
}

/* [set]: NAME = VALUE, as --set NAME=VALUE; an empty value takes an earlier file's back. */
static int set_key(struct parse *p, const char *name, const char *value, unsigned col)
{
	struct cli_config *cfg = p->cfg;
	struct cli_set *s = NULL;

	if (!valid_name(name, strlen(name)))
		return parse_fail(p, first_col(p), EINVAL, "expected a variable name such as "
		                  "workload.conn_rate, found '%s'", name);
	for (size_t i = 0; i < cfg->nsets; i++)
		if (strcmp(cfg->sets[i].name, name) == 0)
			s = &cfg->sets[i];
	if (!*value) {
		if (s) {
			set_free(s);
			memmove(s, s + 1, (size_t)(cfg->sets + cfg->nsets - s - 1) * sizeof(*s));
			cfg->nsets--;
		}
		return 0;
	}
	if (!s) {
		struct cli_set *n = reallocarray(cfg->sets, cfg->nsets + 1, sizeof(*n));

		if (!n)
			return -ENOMEM;
		cfg->sets = n;
		s = &cfg->sets[cfg->nsets];
		*s = (struct cli_set){ .name = strdup(name) };
		if (!s->name)
			return -ENOMEM;
		cfg->nsets++;
	}
	free(s->assignment);
	if (asprintf(&s->assignment, "%s=%s", name, value) < 0) {
		s->assignment = NULL;
		return -ENOMEM;
	}
	return set_where(p, col, &s->where);
}

/*
 * Where the value of the raw line starts, the key being RULE or
 * RULE[INSTANCE] (an instance may hold ':' and '=', which inih would take for
 * the delimiter): after the '=' that follows the key. NULL when there is none.
 */
static const char *waive_split(const char *line, size_t *keylen)
{
	const char *open = strchr(line, '['), *eq = strchr(line, '=');
	const char *close;

	if (open && (!eq || open < eq) && (close = strchr(open, ']')))
		eq = strchr(close, '=');
	if (!eq)
		return NULL;
	*keylen = (size_t)(eq - line);
	while (*keylen > 0 && blank(line[*keylen - 1]))
		(*keylen)--;
	return eq + 1;
}

/*
 * [waive] and [allow]: RULE[INSTANCE] = REASON from the raw line into the
 * list *@list of *@n; an empty reason takes back an earlier one.
 */
static int reason_line(struct parse *p, struct cli_waiver **list, size_t *n)
{
	const char *line = p->raw + strspn(p->raw, " \t"), *v, *open;
	unsigned col = first_col(p);
	_cleanup_free_ char *rule = NULL, *inst = NULL, *reason = NULL, *key = NULL;
	struct cli_waiver *w = NULL;
	size_t klen = 0, vlen;

	v = waive_split(line, &klen);
	if (!v)
		return parse_fail(p, col, EINVAL, "expected RULE = REASON or RULE[INSTANCE] = REASON");
	v += strspn(v, " \t");
	/* A ';' after white space starts a comment, as inih reads every other line. */
	vlen = strlen(v);
	for (size_t i = 1; i < vlen; i++)
		if (v[i] == ';' && blank(v[i - 1])) {
			vlen = i;
			break;
		}
	while (vlen > 0 && blank(v[vlen - 1]))
		vlen--;
	open = memchr(line, '[', klen);
	if (!(rule = strndup(line, open ? (size_t)(open - line) : klen)))
		return -ENOMEM;
	if (!valid_name(rule, strlen(rule)))
		return parse_fail(p, col, EINVAL, "expected a rule id (letters, digits, '_' and "
		                  "inner '.') before '[' or '=', found '%s'", rule);
	if (open && p->sec == SEC_ALLOW)
		/* A rule writes one key: it is allowed or not, for every instance. */
		return parse_fail(p, (unsigned)(open - p->raw) + 1, EINVAL,
		                  "expected RULE = REASON: [allow] takes a rule id without "
		                  "'[INSTANCE]'");
	if (open) {
		if (line[klen - 1] != ']' || klen - 1 == (size_t)(open - line) + 1 ||
		    memchr(open + 1, ']', klen - 1 - (size_t)(open - line) - 1))
			return parse_fail(p, (unsigned)(open - p->raw) + 1, EINVAL,
			                  "expected '[INSTANCE]' right before '=' (an interface, port, "
			                  "process or directory name)");
		if (!(inst = strndup(open + 1, klen - 2 - (size_t)(open - line))))
			return -ENOMEM;
	}
	if (asprintf(&key, "%.*s", (int)klen, line) < 0) {
		key = NULL;
		return -ENOMEM;
	}
	free(p->last);
	p->last = TAKE_PTR(key);
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*list)[i].rule, rule) == 0 &&
		    (inst ? (*list)[i].instance && strcmp((*list)[i].instance, inst) == 0
		          : !(*list)[i].instance))
			w = &(*list)[i];
	if (vlen == 0) {
		if (w) {
			waiver_free(w);
			memmove(w, w + 1, (size_t)(*list + *n - w - 1) * sizeof(*w));
			(*n)--;
		}
		return 0;
	}
	if (!(reason = strndup(v, vlen)))
		return -ENOMEM;
	if (!w) {
		struct cli_waiver *nl = reallocarray(*list, *n + 1, sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		*list = nl;
		w = &(*list)[(*n)++];
		*w = (struct cli_waiver){ .rule = TAKE_PTR(rule), .instance = TAKE_PTR(inst) };
	}
	free(w->reason);
	w->reason = TAKE_PTR(reason);
	return set_where(p, col, &w->where);
}

int cli_config_add_waiver(struct cli_config *cfg, const char *name, const char *line,
                          struct ht_error *err)
{
	_cleanup_free_ char *raw = strdup(line);
	struct parse p = { .cfg = cfg, .name = name, .lineno = 1, .sec = SEC_WAIVE, .err = err };
	int r;

	if (!raw)
		return -ENOMEM;
	p.raw = raw;
	r = reason_line(&p, &cfg->waivers, &cfg->nwaivers);
	free(p.last);
	return r;
}

/*
 * A continuation line (indented, after a key): more of a [set] value or a
 * reason of [waive] or [allow].
 */
static int continuation(struct parse *p, const char *value)
{
	struct cli_config *cfg = p->cfg;

	if (p->sec == SEC_SET) {
		for (size_t i = 0; i < cfg->nsets; i++)
			if (strcmp(cfg->sets[i].name, p->last) == 0)
				return append(&cfg->sets[i].assignment, value);
	} else if (p->sec == SEC_WAIVE || p->sec == SEC_ALLOW) {
		struct cli_waiver *list = p->sec == SEC_WAIVE ? cfg->waivers : cfg->allows;
		size_t n = p->sec == SEC_WAIVE ? cfg->nwaivers : cfg->nallows;

		for (size_t i = 0; i < n; i++) {
			_cleanup_free_ char *key = NULL;
			const struct cli_waiver *w = &list[i];

			if (asprintf(&key, "%s%s%s%s", w->rule, w->instance ? "[" : "",
			             w->instance ? w->instance : "", w->instance ? "]" : "") < 0)
				return -ENOMEM;
			if (strcmp(key, p->last) == 0)
				return append(&list[i].reason, value);
		}
	}
	return parse_fail(p, first_col(p), EINVAL, "an indented line continues only a [set] value "
	                  "or a reason of [waive] or [allow]; start a key at the beginning of the line");
}

/* inih's handler: one call per assignment (and per continuation line, with the same name). */
static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse *p = user;
	const char *val = strstr(p->raw, value);
	unsigned col = val && *value ? (unsigned)(val - p->raw) + 1 : first_col(p);
	int r = 0;

	(void)section; /* the reader saw the section line and set p->sec */
	if (p->ret < 0)
		return 1;
	if (blank(p->raw[0]) && p->last && strcmp(name, p->last) == 0) {
		r = continuation(p, value);
	} else if (p->sec == SEC_NONE) {
		r = parse_fail(p, first_col(p), EINVAL, "expected a section ([hosttune], [set], "
		               "[waive] or [allow]) before the first key");
	} else if (p->sec == SEC_WAIVE) {
		r = reason_line(p, &p->cfg->waivers, &p->cfg->nwaivers);
	} else if (p->sec == SEC_ALLOW) {
		r = reason_line(p, &p->cfg->allows, &p->cfg->nallows);
	} else {
		free(p->last);
		p->last = strdup(name);
		if (!p->last)
			r = -ENOMEM;
		else if (p->sec == SEC_HOSTTUNE)
			r = hosttune_key(p, name, value, col);
		else if (p->sec == SEC_SET)
			r = set_key(p, name, value, col);
	}
	if (r < 0 && p->ret == 0)
		p->ret = r;
	return 1;
}

/* A section line: which one, or the error. */
static int section_line(struct parse *p, const char *line)
{
	static const struct { const char *name; enum section sec; } secs[] = {
		{ "[hosttune]", SEC_HOSTTUNE }, { "[set]", SEC_SET }, { "[waive]", SEC_WAIVE },
		{ "[allow]", SEC_ALLOW },
	};
	size_t n = strcspn(line, "]");

	free(p->last);
	p->last = NULL;
	if (line[n] != ']')
		return parse_fail(p, first_col(p), EINVAL, "expected ']' to close the section name");
	for (size_t i = 0; i < ARRAY_SIZE(secs); i++)
		if (strncmp(line, secs[i].name, n + 1) == 0 && strlen(secs[i].name) == n + 1) {
			p->sec = secs[i].sec;
			return 0;
		}
	p->sec = SEC_UNKNOWN;
	return parse_fail(p, first_col(p) + 1, EINVAL, "unknown section '%.*s' (expected "
	                  "[hosttune], [set], [waive] or [allow])", (int)n + 1, line);
}

/* inih's reader: one line a call, so that lines are counted and kept raw. */
static char *reader(char *str, int num, void *stream)
{
	struct parse *p = stream;
	ssize_t n;
	const char *line;

	if (p->ret < 0)
		return NULL;
	errno = 0;
	n = getline(&p->raw, &p->rawcap, p->f);
	/* Not the end: a line getline() had no memory for (a read error: ferror()). */
	if (n < 0 && !feof(p->f) && errno == ENOMEM)
		p->ret = -ENOMEM;
	if (n < 0)
		return NULL;
	p->lineno++;
	p->bytes += (size_t)n;
	if (p->bytes > CONFIG_FILE_MAX) {
		p->ret = ht_error_set(p->err, EFBIG, "%s: larger than 1 MiB", p->name);
		return NULL;
	}
	if (p->lineno == 1 && n >= 3 && memcmp(p->raw, "\xef\xbb\xbf", 3) == 0) {
		n -= 3;
		memmove(p->raw, p->raw + 3, (size_t)n + 1);
	}
	if (memchr(p->raw, '\0', (size_t)n)) {
		parse_fail(p, (unsigned)strlen(p->raw) + 1, EINVAL, "expected text, found a NUL byte");
		return NULL;
	}
	if (n > 0 && p->raw[n - 1] == '\n')
		p->raw[--n] = '\0';
	if (n > 0 && p->raw[n - 1] == '\r')
		p->raw[--n] = '\0';
	if (n >= num - 1) {
		parse_fail(p, (unsigned)num - 1, EINVAL, "line longer than %d characters; continue "
		           "a reason on an indented line", num - 2);
		return NULL;
	}
	line = p->raw + strspn(p->raw, " \t");
	if (*line == '[' && line == p->raw && section_line(p, line) < 0)
		return NULL;
	memcpy(str, p->raw, (size_t)n);
	str[n] = '\n';
	str[n + 1] = '\0';
	return str;
}

/* Reads one file, open as @f, named @name in messages. */
static int parse_file(struct cli_config *cfg, FILE *f, const char *name, struct ht_error *err)
{
	struct parse p = { .cfg = cfg, .name = name, .f = f, .err = err };
	int r = ini_parse_stream(reader, &p, handler, &p);

	free(p.raw);
	free(p.last);
	if (p.ret == 0 && ferror(f))
		p.ret = ht_error_set(err, EIO, "%s: read error", name);
	if (p.ret == 0 && r > 0)
		p.ret = ht_error_set(err, EINVAL, "%s:%d:1: expected '[section]', 'key = value' or a "
		                     "comment", name, r);
	if (p.ret == 0 && r < 0)
		p.ret = -ENOMEM;
	if (p.ret == 0)
		cfg->nfiles++;
	return p.ret;
}

/* The path as messages show it: below a tree, with the tree's prefix. */
static char *shown_path(const char *root, const char *path)
{
	char *s;

	if (ht_root_is_live(root))
		return strdup(path);
	if (asprintf(&s, "%s%s", root, path) < 0)
		return NULL;
	return s;
}

/*
 * Reads @path below @root: a link to /dev/null (read as the tree's own host
 * would read it: a mask) and an absent file (when !@must) are nothing.
 */
static int load_path(struct cli_config *cfg, const char *root, const char *path, bool must,
                     struct ht_error *err)
{
	/* --config FILE and a --root tree are the invoking user's to give; /etc is root's. */
	uid_t user = root || must ? ht_trust_invoking_user() : HT_TRUST_ROOT_ONLY;
	char why[512];
	_cleanup_free_ char *name = shown_path(root, path);
	_cleanup_fclose_ FILE *f = NULL;
	char target[16];
	struct stat st;
	int fd;

	if (!name)
		return -ENOMEM;
	if (ht_root_readlink(root, path, target, sizeof(target)) >= 0 &&
	    strcmp(target, "/dev/null") == 0)
		return 0;
	/* Non-blocking: a FIFO in its place is refused, not waited on. */
	fd = ht_root_open(root, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && fd == -ENOENT && !must)
		return 0;
	if (fd < 0)
		return ht_error_set(err, -fd, "%s: %s", name, strerror(-fd));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return ht_error_set(err, EINVAL, "%s: not a regular file", name);
	}
	if (st.st_size > CONFIG_FILE_MAX) {
		close(fd);
		return ht_error_set(err, EFBIG, "%s: larger than 1 MiB", name);
	}
	/* Run as root, a file another user could write steers nothing (waivers, the profile). */
	if (ht_trust_needed() && ht_trust_path(name, user, why, sizeof(why)) == -EPERM) {
		close(fd);
		return strncmp(why, name, strlen(name)) == 0 && why[strlen(name)] == ' '
		       ? ht_error_set(err, EPERM, "not trusted (run as root): %s", why)
		       : ht_error_set(err, EPERM, "%s: not trusted (run as root): %s", name, why);
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	return parse_file(cfg, f, name, err);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.conf names of the drop-in directory below @root, sorted; none when it is absent. */
static int list_dropins(const char *root, char ***names, size_t *n, struct ht_error *err)
{
	DIR *d = ht_root_opendir(root, CLI_CONFIG_DROPINS);
	struct dirent *de;
	int r = 0;

	if (!d) {
		_cleanup_free_ char *name = NULL;

		if (errno == ENOENT)
			return 0;
		r = -errno;
		name = shown_path(root, CLI_CONFIG_DROPINS);
		return name ? ht_error_set(err, -r, "%s: %s", name, strerror(-r)) : -ENOMEM;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char **nn;

		if (de->d_name[0] == '.' || l <= 5 || strcmp(de->d_name + l - 5, ".conf") != 0)
			continue;
		if (*n == CONFIG_DROPINS_MAX) {
			_cleanup_free_ char *name = shown_path(root, CLI_CONFIG_DROPINS);

			r = name ? ht_error_set(err, EFBIG, "%s: more than %d drop-ins", name,
			                        CONFIG_DROPINS_MAX) : -ENOMEM;
			break;
		}
		nn = reallocarray(*names, *n + 1, sizeof(*nn));
		if (!nn || !(nn[*n] = strdup(de->d_name))) {
			if (nn)
				*names = nn;
			r = -ENOMEM;
			break;
		}
		*names = nn;
		(*n)++;
	}
	closedir(d);
	if (r == 0 && *n > 1)
		qsort(*names, *n, sizeof(**names), cmp_str);
	return r;
}

int cli_config_load(const char *root, const char *file, struct cli_config *cfg,
                    struct ht_error *err)
{
	char **names = NULL;
	size_t n = 0;
	int r;

	if (file)
		return load_path(cfg, NULL, file, true, err);
	r = load_path(cfg, root, CLI_CONFIG_FILE, false, err);
	if (r >= 0)
		r = list_dropins(root, &names, &n, err);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		_cleanup_free_ char *path = NULL;

		if (asprintf(&path, "%s/%s", CLI_CONFIG_DROPINS, names[i]) < 0) {
			path = NULL;
			r = -ENOMEM;
			break;
		}
		r = load_path(cfg, root, path, false, err);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

void cli_config_free(struct cli_config *cfg)
{
	free(cfg->profile);
	free(cfg->profile_where);
	for (size_t i = 0; i < cfg->nsets; i++)
		set_free(&cfg->sets[i]);
	free(cfg->sets);
	for (size_t i = 0; i < cfg->nwaivers; i++)
		waiver_free(&cfg->waivers[i]);
	free(cfg->waivers);
	for (size_t i = 0; i < cfg->nallows; i++)
		waiver_free(&cfg->allows[i]);
	free(cfg->allows);
	*cfg = (struct cli_config){ .has_fail_on = false };
}

/*
 * A waiver's instance against a finding's: the same, or a TCP peer's IPv6
 * address as written ("fd00::20") against its instance name ("fd00--20":
 * fact names hold no ':').
 */
static bool same_instance(const char *waived, const char *instance)
{
	for (; *waived && *instance; waived++, instance++)
		if (*waived != *instance && !(*waived == ':' && *instance == '-'))
			return false;
	return *waived == *instance;
}

const struct cli_waiver *cli_config_waiver(const struct cli_config *cfg, const char *id,
                                           const char *instance)
{
	const struct cli_waiver *all = NULL;

	for (size_t i = 0; cfg && i < cfg->nwaivers; i++) {
		const struct cli_waiver *w = &cfg->waivers[i];

		if (strcmp(w->rule, id) != 0)
			continue;
		if (!w->instance)
			all = w;
		else if (instance && same_instance(w->instance, instance))
			return w;
	}
	return all;
}
