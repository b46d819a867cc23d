/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ini.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/rules-internal.h"

static const char *const key_names[K__MAX] = {
	[K_TITLE] = "title",       [K_TARGET] = "target",     [K_WHEN] = "when",
	[K_CURRENT] = "current",   [K_VALUE] = "value",       [K_SEVERITY] = "severity",
	[K_EXPLAIN] = "explain",   [K_RATIONALE] = "rationale", [K_DIRECTION] = "direction",
	[K_UNIT] = "unit",         [K_EACH] = "each",         [K_WRITABLE] = "writable",
	[K_DEFAULT] = "default",   [K_REMEDY] = "remedy",     [K_LEVER] = "lever",
	[K_UNLIMITED] = "unlimited", [K_FOLLOWS] = "follows",  [K_LIMIT] = "limit",
	[K_USAGE] = "usage",       [K_EVENTS] = "events",     [K_HOLDER] = "holder",
	[K_HELD] = "held",         [K_STRAY] = "stray",       [K_REST] = "rest",
	[K_SOURCE] = "source",     [K_OWNER] = "owner",
};

static const char *const severity_names[] = {
	[HT_SEV_OK] = "ok",
	[HT_SEV_INFO] = "info",
	[HT_SEV_WARNING] = "warning",
	[HT_SEV_CRITICAL] = "critical",
};

const char *ht_severity_name(enum ht_severity s)
{
	return (size_t)s < ARRAY_SIZE(severity_names) ? severity_names[s] : "?";
}

int ht_severity_from_name(const char *name, enum ht_severity *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(severity_names); i++)
		if (strcmp(name, severity_names[i]) == 0) {
			*out = (enum ht_severity)i;
			return 0;
		}
	return -EINVAL;
}

const char *ht_target_kind_name(enum ht_target_kind k)
{
	switch (k) {
	case HT_TARGET_SYSCTL:
		return "sysctl";
	case HT_TARGET_MODULE:
		return "module";
	case HT_TARGET_ADVICE:
		return "advice";
	case HT_TARGET_CHANNELS:
		return "channels";
	case HT_TARGET_LIMIT:
		return "limit";
	case HT_TARGET_NONE:
		break;
	}
	return "value";
}

int rules_key_from_name(const char *name)
{
	for (int k = 0; k < K__MAX; k++)
		if (name[0] == key_names[k][0] && strcmp(name, key_names[k]) == 0)
			return k;
	return -1;
}

const char *rules_key_name(int k)
{
	return key_names[k];
}

/* Names usable in expressions; rule ids and workload variables must be one. */
bool rules_valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];

		if (!(c == '_' || c == '.' || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
		      (c >= 'a' && c <= 'z')))
			return false;
		if (c == '.' && (s[i - 1] == '.' || i == n - 1))
			return false;
	}
	return true;
}

void rules_families_clear(struct ht_ruleset *rs)
{
	for (size_t e = 0; e < ARRAY_SIZE(rs->fam); e++) {
		free(rs->fam[e].names);
		free(rs->fam[e].inst);
		rs->fam[e] = (struct ht_family_state){ .cur = -1 };
	}
}

/* What a rule holds outside the arena: its templates and cases. */
static void rule_free_texts(struct ht_rule *r)
{
	free(r->tmpl);
	free(r->remedy);
	free(r->owner);
	for (size_t i = 0; i < r->ncases; i++) {
		free(r->cases[i].tmpl);
		free(r->cases[i].remedy);
	}
	free(r->cases);
}

void ht_ruleset_free(struct ht_ruleset *rs)
{
	if (!rs)
		return;
	/* The rules and all they hold are in the arena; only an evaluated value is not. */
	for (size_t i = 0; i < rs->nrules; i++) {
		ht_value_clear(&rs->rules[i]->val);
		free(rs->rules[i]->eval_msg);
		free(rs->rules[i]->eval_denied);
		rule_free_texts(rs->rules[i]);
	}
	free(rs->rules);
	for (size_t i = 0; i < rs->nshadowed; i++)
		rule_free_texts(rs->shadowed[i]);
	free(rs->shadowed);
	free(rs->names);
	rules_families_clear(rs);
	for (size_t i = 0; i < rs->nvars; i++) {
		free(rs->vars[i].name);
		ht_value_clear(&rs->vars[i].value);
	}
	free(rs->vars);
	for (size_t i = 0; i < rs->nranges; i++) {
		free(rs->ranges[i].name);
		free(rs->ranges[i].expect);
	}
	free(rs->ranges);
	for (size_t i = 0; i < rs->nstrings; i++)
		free(rs->strings[i]);
	free(rs->strings);
	for (size_t i = 0; i < rs->ndirs; i++)
		free(rs->dirs[i]);
	free(rs->dirs);
	free(rs->profile);
	free(rs->profile_desc);
	ht_arena_free(rs->arena);
	free(rs);
}

/* Keeps a string (file names that source positions point to) for the ruleset's lifetime. */
const char *rules_intern(struct ht_ruleset *rs, const char *s)
{
	char **n;
	char *copy;

	for (size_t i = 0; i < rs->nstrings; i++)
		if (strcmp(rs->strings[i], s) == 0)
			return rs->strings[i];
	copy = strdup(s);
	if (!copy)
		return NULL;
	n = realloc(rs->strings, (rs->nstrings + 1) * sizeof(*n));
	if (!n) {
		free(copy);
		return NULL;
	}
	rs->strings = n;
	rs->strings[rs->nstrings++] = copy;
	return copy;
}

/* The hash of the name table: eight bytes at a time, mixed by multiplication (as MurmurHash3's). */
static uint32_t name_hash(const char *s)
{
	size_t len = strlen(s);
	uint64_t h = 0x9e3779b97f4a7c15u ^ len, w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdu;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s, len);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53u;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdu;
	h ^= h >> 33;
	return (uint32_t)h;
}

/* The slot of @name (hash @h) in @slots (@cap a power of two): its entry's, or a free one. */
static struct ht_name **name_slot(struct ht_name **slots, size_t cap, const char *name, uint32_t h)
{
	for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!slots[i] || (slots[i]->hash == h && strcmp(slots[i]->name, name) == 0))
			return &slots[i];
}

static int names_grow(struct ht_ruleset *rs)
{
	size_t cap = rs->names_cap ? rs->names_cap * 2 : 512;
	struct ht_name **n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < rs->names_cap; i++)
		if (rs->names[i])
			*name_slot(n, cap, rs->names[i]->name, rs->names[i]->hash) = rs->names[i];
	free(rs->names);
	rs->names = n;
	rs->names_cap = cap;
	return 0;
}

struct ht_name *rules_name(struct ht_ruleset *rs, const char *name, bool add)
{
	uint32_t h = name_hash(name);
	struct ht_name **slot = rs->names_cap ? name_slot(rs->names, rs->names_cap, name, h) : NULL;
	struct ht_name *e;
	size_t len;

	if ((slot && *slot) || !add || !rs->arena)
		return slot ? *slot : NULL;
	if ((rs->nnames + 1) * 2 > rs->names_cap) {
		if (names_grow(rs) < 0)
			return NULL;
		slot = name_slot(rs->names, rs->names_cap, name, h);
	}
	len = strlen(name);
	e = ht_arena_alloc(rs->arena, sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	*e = (struct ht_name){ .name = memcpy(e + 1, name, len + 1), .hash = h };
	*slot = e;
	rs->nnames++;
	return e;
}

const struct ht_rule *ht_ruleset_find(const struct ht_ruleset *rs, const char *id)
{
	/* Without @add the table is only read. */
	const struct ht_name *n = rules_name((struct ht_ruleset *)rs, id, false);

	return n ? n->rule : NULL;
}

size_t ht_ruleset_rule_count(const struct ht_ruleset *rs)
{
	return rs->nrules;
}

const struct ht_rule *ht_ruleset_rule_at(const struct ht_ruleset *rs, size_t i)
{
	return i < rs->nrules ? rs->rules[i] : NULL;
}

const char *ht_rule_id(const struct ht_rule *r)
{
	return r->id;
}

const char *ht_rule_title(const struct ht_rule *r)
{
	return r->keys[K_TITLE].text;
}

const char *ht_rule_rationale(const struct ht_rule *r)
{
	return r->keys[K_RATIONALE].text;
}

enum ht_target_kind ht_rule_kind(const struct ht_rule *r)
{
	return r->kind;
}

const char *ht_rule_target(const struct ht_rule *r)
{
	return r->target;
}

bool ht_rule_only_raise(const struct ht_rule *r)
{
	return r->only_raise;
}

bool ht_rule_each_nic(const struct ht_rule *r)
{
	return r->each == HT_EACH_NIC;
}

enum ht_each ht_rule_each(const struct ht_rule *r)
{
	return r->each;
}

const char *ht_each_name(enum ht_each e)
{
	static const char *const names[] = { "none", "nic", "listener", "process", "storage",
		                             "peer", "cgroup", "netns", "proxy" };

	return (unsigned)e < ARRAY_SIZE(names) ? names[e] : NULL;
}

const struct ht_srcpos *ht_rule_pos(const struct ht_rule *r)
{
	return &r->pos;
}

const char *ht_rule_unit(const struct ht_rule *r)
{
	const struct ht_fact_def *d;

	if (r->keys[K_UNIT].text)
		return r->keys[K_UNIT].text;
	if (r->target && (d = ht_fact_def_find(r->target)))
		return d->unit;
	return NULL;
}

int ht_rule_case(const struct ht_rule *r, size_t i, const char **name, enum ht_severity *sev,
                 const char **cond)
{
	if (i >= r->ncases)
		return -ENOENT;
	*name = r->cases[i].name;
	*sev = r->cases[i].severity;
	*cond = r->cases[i].cond.text;
	return 0;
}

const char *ht_rule_key_text(const struct ht_rule *r, const char *key)
{
	int k = rules_key_from_name(key);

	return k < 0 ? NULL : r->keys[k].text;
}

struct fact_names {
	const struct ht_ruleset *rs;
	ht_name_cb cb;
	void *userdata;
};

/* A name of an expression that is no rule and no workload variable: a fact's. */
static int fact_name(const char *name, const struct ht_srcpos *pos, void *userdata)
{
	struct fact_names *fn = userdata;

	if (ht_ruleset_find(fn->rs, name) || rules_var_of_rules(fn->rs, name))
		return 0;
	return fn->cb(name, pos, fn->userdata);
}

int ht_ruleset_foreach_fact(const struct ht_ruleset *rs, ht_name_cb cb, void *userdata)
{
	struct fact_names fn = { rs, cb, userdata };
	int r = 0;

	for (size_t i = 0; i < rs->nrules && r == 0; i++) {
		const struct ht_rule *rule = rs->rules[i];

		for (int k = 0; k < K__MAX && r == 0; k++)
			if (rule->keys[k].expr)
				r = ht_expr_foreach_name(rule->keys[k].expr, fact_name, &fn);
		for (size_t t = 0; t < rule->ntmpl && r == 0; t++)
			if (rule->tmpl[t].expr)
				r = ht_expr_foreach_name(rule->tmpl[t].expr, fact_name, &fn);
		for (size_t t = 0; t < rule->nremedy && r == 0; t++)
			if (rule->remedy[t].expr)
				r = ht_expr_foreach_name(rule->remedy[t].expr, fact_name, &fn);
		for (size_t t = 0; t < rule->nowner && r == 0; t++)
			if (rule->owner[t].expr)
				r = ht_expr_foreach_name(rule->owner[t].expr, fact_name, &fn);
		if (r == 0 && rule->target && (rule->kind == HT_TARGET_SYSCTL ||
		                               rule->kind == HT_TARGET_MODULE))
			r = fact_name(rule->target, &rule->pos, &fn);
	}
	return r;
}

/* ---- loading rules files ---------------------------------------------- */

struct load_ctx {
	struct ht_ruleset *rs;
	const char *file; /* interned */
	FILE *f;
	unsigned lineno;
	char *raw; /* the raw line inih is processing */
	size_t rawcap;
	size_t rawlen;     /* its length */
	const char *buf;   /* inih's copy of it (load_reader()'s @str), of @bufsize bytes */
	size_t bufsize;
	struct ht_rule *cur;
	int last_key; /* key of the previous line of this rule, for continuations */
	size_t last_case; /* last_key K_CASE or K_CASE_EXPLAIN: the case's index */
	/*
	 * The text of a key continued on more lines is built here, and the key's
	 * text points here until finish_key() copies it into the arena.
	 */
	struct ht_key *kkey; /* the key being continued, or NULL */
	char *kbuf;
	size_t klen, kcap;
	unsigned cur_section_line;
	bool is_profile;
	bool in_workload; /* rules file: in a [workload] section (ranges of variables) */
	int ret;
	struct ht_error *err;
	size_t bytes; /* read so far, against RULES_FILE_MAX */
	/* profile only */
	char *include;
	unsigned include_line, include_col;
	bool known_vars_only; /* it includes another: only that chain's variables */
};

/*
 * Bounds on what one file can make us hold: a rules or profile file is a
 * few KiB, and a key's text grows by one copy per continuation line.
 */
#define RULES_FILE_MAX (1024 * 1024)
#define RULES_KEY_MAX 65536
/* The first block of a ruleset's arena, which doubles from there: the shipped rules take 1 MiB. */
#define RULES_ARENA_FIRST (64 * 1024)

static int load_fail(struct load_ctx *c, unsigned line, unsigned col, int errnum, const char *fmt, ...)
	_printf_(5, 6);

static int load_fail(struct load_ctx *c, unsigned line, unsigned col, int errnum, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	if (c->ret < 0)
		return c->ret;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->ret = ht_error_set(c->err, errnum, "%s:%u:%u: %s", c->file, line, col, msg);
	return c->ret;
}

static int finish_key(struct load_ctx *c);

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Keeps @r, out of rs->rules, in rs->shadowed to be freed with the ruleset. */
static int shadow_rule(struct ht_ruleset *rs, struct ht_rule *r)
{
	struct ht_rule **n = reallocarray(rs->shadowed, rs->nshadowed + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	rs->shadowed = n;
	rs->shadowed[rs->nshadowed++] = r;
	return 0;
}

/*
 * A new rule @id (in the name table) at @col of the current line. A rule of
 * that id from an earlier directory of the search path is replaced: the new
 * one takes its place in rs->rules (the report keeps its order). One from a
 * later directory, read before (its file name sorts first), wins over this
 * one and moves to this one's place: the section is read and checked, then
 * kept out of the ruleset (rs->shadowed). Two of one directory are the
 * caller's error.
 */
static int add_rule(struct load_ctx *c, struct ht_name *id, unsigned col)
{
	struct ht_ruleset *rs = c->rs;
	struct ht_rule *r, *old = id->rule;

	if (!old && rs->nrules == rs->rules_cap) {
		size_t cap = rs->rules_cap ? rs->rules_cap * 2 : 64;
		struct ht_rule **n = reallocarray(rs->rules, cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		rs->rules = n;
		rs->rules_cap = cap;
	}
	r = ht_arena_alloc(rs->arena, sizeof(*r));
	if (!r)
		return -ENOMEM;
	*r = (struct ht_rule){ .id = id->name, .dir = rs->load_dir,
		               .pos = { .file = c->file, .line = c->lineno, .col = col } };
	c->cur = r;
	if (old && old->dir > r->dir) {
		/* The later directory's rule moves here, to the earlier one's place. */
		size_t i = 0;

		while (rs->rules[i] != old)
			i++;
		memmove(rs->rules + i, rs->rules + i + 1, (rs->nrules - i - 1) * sizeof(*rs->rules));
		rs->rules[rs->nrules - 1] = old;
		return shadow_rule(rs, r);
	}
	if (old) {
		if (shadow_rule(rs, old) < 0)
			return -ENOMEM;
		for (size_t i = 0; i < rs->nrules; i++)
			if (rs->rules[i] == old)
				rs->rules[i] = r;
		id->rule = r;
		return 0;
	}
	id->rule = r;
	rs->rules[rs->nrules++] = r;
	return 0;
}

static int start_section(struct load_ctx *c, const char *line, unsigned col)
{
	const char *close = strchr(line, ']');
	_cleanup_free_ char *name = NULL;
	struct ht_name *id;

	if (!close)
		return load_fail(c, c->lineno, col, EINVAL, "expected ']' to close the section name");
	name = strndup(line + 1, (size_t)(close - line - 1));
	if (!name)
		return -ENOMEM;
	if (finish_key(c) < 0)
		return c->ret;
	c->cur_section_line = c->lineno;
	c->last_key = -1;
	if (c->is_profile) {
		if (strcmp(name, "profile") != 0 && strcmp(name, "workload") != 0 &&
		    strcmp(name, "garage") != 0)
			return load_fail(c, c->lineno, col + 1, EINVAL,
			                 "unknown section '%s' (expected [profile], [workload] or "
			                 "[garage])", name);
		return 0;
	}
	/* [workload] in a rules file declares the ranges of workload variables. */
	c->in_workload = strcmp(name, "workload") == 0;
	if (c->in_workload) {
		c->cur = NULL;
		return 0;
	}
	if (!rules_valid_name(name))
		return load_fail(c, c->lineno, col + 1, EINVAL,
		                 "expected a rule id of letters, digits, '_' and inner '.', found '%s'",
		                 name);
	id = rules_name(c->rs, name, true);
	if (!id)
		return -ENOMEM;
	/* Only another directory's rule may be replaced (or win): one directory defines an id once. */
	if (id->rule && id->rule->dir == c->rs->load_dir)
		return load_fail(c, c->lineno, col + 1, EINVAL,
		                 "duplicate rule id '%s' (first at %s:%u)", name, id->rule->pos.file,
		                 id->rule->pos.line);
	return add_rule(c, id, col);
}

/* inih's reader callback: one call per line, which is what lets us count lines. */
static char *load_reader(char *str, int num, void *stream)
{
	struct load_ctx *c = stream;
	ssize_t n;
	const char *p;

	if (c->ret < 0)
		return NULL;
	errno = 0;
	n = getline(&c->raw, &c->rawcap, c->f);
	/*
	 * Not the end of the file: getline() could not grow its buffer for a
	 * long line (inih would take NULL for the end and parse the rule cut
	 * short), or a read failed (rules_parse_file() checks ferror()).
	 */
	if (n < 0 && !feof(c->f) && errno == ENOMEM)
		c->ret = -ENOMEM;
	if (n < 0)
		return NULL;
	c->lineno++;
	c->bytes += (size_t)n;
	if (c->bytes > RULES_FILE_MAX) {
		c->ret = ht_error_set(c->err, EFBIG, "%s: larger than 1 MiB", c->file);
		return NULL;
	}
	/* A UTF-8 BOM (inih skips it too): columns count from the character after it. */
	if (c->lineno == 1 && n >= 3 && memcmp(c->raw, "\xef\xbb\xbf", 3) == 0) {
		n -= 3;
		memmove(c->raw, c->raw + 3, (size_t)n + 1);
	}
	/* inih and every string function would stop at it and drop the rest of the line. */
	if (memchr(c->raw, '\0', (size_t)n)) {
		load_fail(c, c->lineno, (unsigned)strlen(c->raw) + 1, EINVAL, "NUL byte");
		return NULL;
	}
	if (n > 0 && c->raw[n - 1] == '\n')
		c->raw[--n] = '\0';
	if (n > 0 && c->raw[n - 1] == '\r')
		c->raw[--n] = '\0';
	if (n >= num - 1) {
		load_fail(c, c->lineno, (unsigned)num - 1, EINVAL,
		          "line longer than %d characters; continue it on an indented line", num - 2);
		return NULL;
	}
	p = c->raw;
	while (is_blank(*p))
		p++;
	if (*p == '[' && (p == c->raw || c->last_key < 0) &&
	    start_section(c, p, (unsigned)(p - c->raw) + 1) < 0) {
		if (c->ret == 0)
			c->ret = -ENOMEM;
		return NULL;
	}
	memcpy(str, c->raw, (size_t)n);
	str[n] = '\n';
	str[n + 1] = '\0';
	c->rawlen = (size_t)n;
	c->buf = str;
	c->bufsize = (size_t)num;
	return str;
}

/*
 * Where @value, a part of inih's copy of the line, is in c->raw: the same
 * offset (load_reader() copied it there and inih only cuts it with NULs).
 * NULL when @value is not from that copy or differs from the text there.
 */
static const char *raw_of(const struct load_ctx *c, const char *value)
{
	size_t off, len;

	if (!c->buf || value < c->buf || value >= c->buf + c->bufsize)
		return NULL;
	off = (size_t)(value - c->buf);
	len = strlen(value);
	if (off > c->rawlen || len > c->rawlen - off || memcmp(c->raw + off, value, len) != 0)
		return NULL;
	return c->raw + off;
}

/* Column (from 1) where inih's stripped value starts in the raw line. */
static unsigned value_col(const struct load_ctx *c, bool continuation, const char *value)
{
	const char *p = c->raw;

	if (!continuation) {
		p += strcspn(p, "=:");
		if (*p)
			p++;
	}
	while (is_blank(*p))
		p++;
	/* inih strips the value; find it from there so the column is exact. */
	if (*value) {
		const char *q = raw_of(c, value);

		/*
		 * The first occurrence from p on is where inih took it from when no
		 * character between is its first one; else search, as always.
		 */
		if (q && q < p)
			q = NULL;
		for (const char *s = p; q && s < q; s++)
			if (*s == *value)
				q = NULL;
		if (!q)
			q = strstr(p, value);
		if (q)
			p = q;
	}
	return (unsigned)(p - c->raw) + 1;
}

/* Whether @key's text with @extra more bytes stays within RULES_KEY_MAX; else the error. */
static int key_fits(struct load_ctx *c, const struct ht_key *key, size_t extra, int k,
                    unsigned col)
{
	size_t len = key == c->kkey ? c->klen : strlen(key->text);

	if (len + extra <= RULES_KEY_MAX)
		return 0;
	return load_fail(c, c->lineno, col, EINVAL, "'%s' is longer than %d bytes", key_names[k],
	                 RULES_KEY_MAX);
}

/*
 * Continues @key's text with @sep, @pad blanks and @value, in c->kbuf (the
 * key's text points there until finish_key()).
 */
static int key_continue(struct load_ctx *c, struct ht_key *key, const char *sep, unsigned pad,
                        const char *value)
{
	size_t sl = strlen(sep), vl = strlen(value);
	size_t len = key == c->kkey ? c->klen : strlen(key->text);
	size_t need = len + sl + pad + vl + 1;

	if (need > c->kcap) {
		size_t cap = need < 256 ? 512 : need * 2;
		char *n = realloc(c->kbuf, cap);

		if (!n)
			return -ENOMEM;
		c->kbuf = n;
		c->kcap = cap;
	}
	if (key != c->kkey) {
		memcpy(c->kbuf, key->text, len);
		c->kkey = key;
	}
	memcpy(c->kbuf + len, sep, sl);
	memset(c->kbuf + len + sl, ' ', pad);
	memcpy(c->kbuf + len + sl + pad, value, vl + 1);
	c->klen = need - 1;
	key->text = c->kbuf;
	return 0;
}

/* A template being parsed: the segments of a rule's explain or remedy. */
struct tmpl_dst {
	struct ht_tmpl_seg **segs;
	size_t *n, *cap;
};

/* A new segment at the end of @d (the array grows by doubling in the arena). */
static int tmpl_add(struct load_ctx *c, struct tmpl_dst d, const char *text, size_t len,
                    struct ht_expr *e, int fmt, int prec)
{
	struct ht_tmpl_seg *seg;

	if (*d.n == *d.cap) {
		/* On the heap: arrays outgrown in the arena would stay there (240 KB of 10 files). */
		size_t cap = *d.cap ? *d.cap * 2 : 8;
		struct ht_tmpl_seg *n = reallocarray(*d.segs, cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		*d.segs = n;
		*d.cap = cap;
	}
	seg = &(*d.segs)[*d.n];
	*seg = (struct ht_tmpl_seg){ .expr = e, .fmt = fmt, .prec = prec };
	if (text && !(seg->text = ht_arena_strndup(c->rs->arena, text, len)))
		return -ENOMEM;
	(*d.n)++;
	return 0;
}

/* A hole's format: the text between '|' at @bar and '}' at @end, with @buf to copy it in. */
struct tmpl_hole {
	int fmt, prec;
	char *one, *many; /* TMPL_PLURAL's words, in the arena */
};

static int tmpl_format(struct load_ctx *c, const char *line, unsigned col, const char *bar,
                       const char *end, char *buf, struct tmpl_hole *h)
{
	char *fs = buf;

	memcpy(buf, bar + 1, (size_t)(end - bar - 1));
	buf[end - bar - 1] = '\0';
	while (is_blank(*fs))
		fs++;
	fs[strcspn(fs, " \t")] = '\0';
	if (strcmp(fs, "bytes") == 0)
		h->fmt = TMPL_BYTES;
	else if (strcmp(fs, "pct") == 0)
		h->fmt = TMPL_PCT;
	else if (strcmp(fs, "source") == 0)
		h->fmt = TMPL_SOURCE;
	else if (strcmp(fs, "secs") == 0)
		h->fmt = TMPL_SECS;
	else if (fs[0] == '.' && fs[1] >= '0' && fs[1] <= '6' && !fs[2]) {
		h->fmt = TMPL_FIXED;
		h->prec = fs[1] - '0';
	} else if (strncmp(fs, "plural:", 7) == 0) {
		/* plural:ONE:MANY, two words of letters, '/' or '-' */
		const char *w1 = fs + 7, *colon = strchr(w1, ':');
		unsigned fcol = col + (unsigned)(bar + 1 - line);
		bool good = colon && colon > w1 && colon[1];

		for (const char *q = w1; good && *q; q++)
			good = q == colon || isalpha((unsigned char)*q) || *q == '/' || *q == '-';
		if (!good)
			return load_fail(c, c->lineno, fcol, EINVAL, "bad format '%s' "
			                 "(expected plural:ONE:MANY, two words such as "
			                 "plural:queue:queues)", fs);
		h->fmt = TMPL_PLURAL;
		h->one = ht_arena_strndup(c->rs->arena, w1, (size_t)(colon - w1));
		h->many = ht_arena_strndup(c->rs->arena, colon + 1, strlen(colon + 1));
		if (!h->one || !h->many)
			return -ENOMEM;
	} else
		return load_fail(c, c->lineno, col + (unsigned)(bar + 1 - line), EINVAL,
		                 "unknown format '%s' (expected bytes, pct, secs, source, .N "
		                 "or plural:ONE:MANY)", fs);
	return 0;
}

/*
 * A hole {EXPR} or {EXPR|FORMAT} of @line from @p ('{') to @end ('}'), in
 * @d after the literal text before it (@lit, @litlen); @buf is scratch space
 * as long as the line.
 */
static int tmpl_hole(struct load_ctx *c, struct tmpl_dst d, const char *line, unsigned col,
                     const char *p, const char *end, const char *lit, size_t litlen, char *buf)
{
	const char *start = p + 1, *bar = NULL, *src;
	struct tmpl_hole h = { .fmt = TMPL_PLAIN, .prec = -1 };
	struct ht_expr *e = NULL;
	struct ht_srcpos pos;
	size_t srclen;
	int ret;

	for (const char *q = end - 1; q >= start; q--)
		if (*q == '|' && (q == start || q[-1] != '|') && q[1] != '|') {
			bar = q;
			break;
		}
	if (bar && (ret = tmpl_format(c, line, col, bar, end, buf, &h)) < 0)
		return ret;
	if (litlen > 0 && (ret = tmpl_add(c, d, lit, litlen, NULL, 0, 0)) < 0)
		return ret;
	src = start;
	srclen = (size_t)((bar ? bar : end) - start);
	pos = (struct ht_srcpos){ .file = c->file, .line = c->lineno,
	                          .col = col + (unsigned)(start - line) };
	if (srclen == 2 && src[0] == '/' && src[1] == '?')
		return tmpl_add(c, d, NULL, 0, NULL, TMPL_END, 0);
	if (src[0] == '?' && !bar) {
		h.fmt = TMPL_IF;
		pos.col++;
		src++;
		srclen--;
	}
	memcpy(buf, src, srclen);
	buf[srclen] = '\0';
	ret = ht_expr_parse_in(buf, &pos, c->rs->arena, &e, c->err);
	if (ret < 0) {
		c->ret = ret;
		return ret;
	}
	if (h.fmt == TMPL_SOURCE && !ht_expr_name(e))
		return load_fail(c, c->lineno, pos.col, EINVAL, "format 'source' takes a fact's "
		                 "name, got '%s'", buf);
	/* A condition keeps its text: hosttune rules --lint compares it with the severity's. */
	if ((ret = tmpl_add(c, d, h.fmt == TMPL_IF ? buf : NULL, h.fmt == TMPL_IF ? srclen : 0, e,
	                    h.fmt, h.prec)) < 0)
		return ret;
	(*d.segs)[*d.n - 1].one = h.one;
	(*d.segs)[*d.n - 1].many = h.many;
	return 0;
}

/*
 * One line of an explanation (or remedy) template: text with {EXPR} or
 * {EXPR|FORMAT} holes; "{{" and "}}" stand for literal braces. Holes cannot
 * span lines, so every expression keeps an exact line and column.
 */
static int tmpl_parse_line(struct load_ctx *c, struct ht_rule *r, int key, const char *line,
                           unsigned col)
{
	struct ht_case *cs = key == K_CASE_EXPLAIN || key == K_CASE_REMEDY ?
	                     &r->cases[c->last_case] : NULL;
	struct tmpl_dst d = cs && key == K_CASE_REMEDY ?
	                    (struct tmpl_dst){ &cs->remedy, &cs->nremedy, &cs->remedy_cap } :
	                    cs ? (struct tmpl_dst){ &cs->tmpl, &cs->ntmpl, &cs->tmpl_cap } :
	                    key == K_REMEDY ?
	        (struct tmpl_dst){ &r->remedy, &r->nremedy, &r->remedy_cap } :
	                    key == K_OWNER ?
	        (struct tmpl_dst){ &r->owner, &r->nowner, &r->owner_cap } :
	        (struct tmpl_dst){ &r->tmpl, &r->ntmpl, &r->tmpl_cap };
	size_t len = strlen(line), litlen = 0;
	char lit_local[256], buf_local[256];
	_cleanup_free_ char *lit_heap = NULL, *buf_heap = NULL;
	char *lit = lit_local, *buf = buf_local;
	const char *p = line;
	int ret;

	if (len >= sizeof(lit_local)) {
		lit = lit_heap = malloc(len + 1);
		buf = buf_heap = malloc(len + 1);
		if (!lit || !buf)
			return -ENOMEM;
	}
	/* Continuation lines are one paragraph; the text report wraps it. */
	if (*d.n > 0 && (ret = tmpl_add(c, d, " ", 1, NULL, 0, 0)) < 0)
		return ret;
	while (*p) {
		size_t run = strcspn(p, "{}");
		const char *end;

		/* Up to the next brace: literal text. */
		memcpy(lit + litlen, p, run);
		litlen += run;
		p += run;
		if (!*p)
			break;
		if (p[0] == p[1]) { /* "{{" or "}}" */
			lit[litlen++] = p[0];
			p += 2;
			continue;
		}
		if (*p == '}')
			return load_fail(c, c->lineno, col + (unsigned)(p - line), EINVAL,
			                 "unmatched '}' in explanation (write '}}' for a brace)");
		end = strchr(p + 1, '}');
		if (!end)
			return load_fail(c, c->lineno, col + (unsigned)(p - line), EINVAL,
			                 "expected '}' to close '{' in explanation");
		ret = tmpl_hole(c, d, line, col, p, end, lit, litlen, buf);
		if (ret < 0)
			return ret;
		litlen = 0;
		p = end + 1;
	}
	if (litlen > 0)
		return tmpl_add(c, d, lit, litlen, NULL, 0, 0);
	return 0;
}

/* A copy of @s in the ruleset's arena as r->target. */
static int set_target(struct load_ctx *c, struct ht_rule *r, const char *s)
{
	r->target = ht_arena_strndup(c->rs->arena, s, strlen(s));
	return r->target ? 0 : -ENOMEM;
}

static int parse_target(struct load_ctx *c, struct ht_rule *r, const char *v, unsigned col)
{
	char kind[16], a[160], b[96], extra[2], t[sizeof(a) + sizeof(b) + 16];
	int n = sscanf(v, "%15s %159s %95s %1s", kind, a, b, extra);

	if (n == 1 && strcmp(kind, "advice") == 0) {
		r->kind = HT_TARGET_ADVICE;
		return 0;
	}
	if (n == 2 && strcmp(kind, "sysctl") == 0) {
		/*
		 * sysctl(8) and systemd-sysctl take the slash spelling too: a key
		 * whose first separator is '/' has '/' and '.' swapped
		 * (net/ipv4/conf/eth0.100/rp_filter is net.ipv4.conf.eth0/100.rp_filter).
		 */
		char written[sizeof(a)];

		snprintf(written, sizeof(written), "%s", a);
		if (a[strcspn(a, "./")] == '/')
			for (char *s = a; *s; s++)
				*s = *s == '/' ? '.' : *s == '.' ? '/' : *s;
		/* The errors quote the key as the rule wrote it. */
		if (strchr(a, '/') && a[strlen(a) - 1] != '/' && !strstr(a, "//"))
			return load_fail(c, c->lineno, col + 7, EINVAL,
			                 "expected a sysctl key without a '.' inside a name (an interface "
			                 "such as eth0.100), found '%s'", written);
		if (!ht_sysctl_key_valid(a))
			return load_fail(c, c->lineno, col + 7, EINVAL,
			                 "expected a sysctl key as sysctl(8) prints it "
			                 "(vm.swappiness), found '%s'", written);
		r->kind = HT_TARGET_SYSCTL;
		return set_target(c, r, a);
	}
	if (n == 2 && strcmp(kind, "channels") == 0) {
		if (strcmp(a, "combined") != 0 && strcmp(a, "rx") != 0 && strcmp(a, "tx") != 0)
			return load_fail(c, c->lineno, col + 9, EINVAL,
			                 "expected combined, rx or tx, found '%s'", a);
		r->kind = HT_TARGET_CHANNELS;
		snprintf(t, sizeof(t), "nic.channels.%s", a);
		return set_target(c, r, t);
	}
	if (n == 2 && strcmp(kind, "limit") == 0) {
		if (strcmp(a, "nofile") != 0)
			return load_fail(c, c->lineno, col + 6, EINVAL, "expected nofile, found '%s'", a);
		r->kind = HT_TARGET_LIMIT;
		return set_target(c, r, "process.nofile");
	}
	if (n == 3 && strcmp(kind, "module") == 0) {
		r->kind = HT_TARGET_MODULE;
		snprintf(t, sizeof(t), "module.%s.%s", a, b);
		if (set_target(c, r, t) < 0)
			return -ENOMEM;
		if (!rules_valid_name(r->target))
			return load_fail(c, c->lineno, col + 7, EINVAL,
			                 "expected a module and a parameter name, found '%s %s'", a, b);
		return 0;
	}
	return load_fail(c, c->lineno, col, EINVAL,
	                 "expected 'sysctl KEY', 'module MODULE PARAM', 'channels KIND', 'limit nofile' or 'advice', "
	                 "found '%s'", v);
}

/*
 * Expression keys may continue on indented lines; they are parsed when the
 * key ends. Each continuation is joined with a newline and padded to its
 * column, so the lexer's line and column stay exact across lines.
 */
static int finish_key(struct load_ctx *c)
{
	struct ht_rule *r = c->cur;
	struct ht_key *k;
	bool is_case;
	int ret;

	if (!r || c->last_key < 0 || c->ret < 0)
		return c->ret;
	if (c->last_key == K_CASE_EXPLAIN || c->last_key == K_CASE_REMEDY) {
		c->last_key = -1;
		return 0;
	}
	is_case = c->last_key == K_CASE;
	k = is_case ? &r->cases[c->last_case].cond : &r->keys[c->last_key];
	c->last_key = -1;
	/* A text built in c->kbuf (always this key's) goes to the arena. */
	if (c->kkey) {
		struct ht_key *built = TAKE_PTR(c->kkey);

		built->text = ht_arena_strndup(c->rs->arena, c->kbuf, c->klen);
		if (!built->text)
			return c->ret = -ENOMEM;
	}
	if (k->expr || !k->text)
		return 0;
	if (is_case) {
		ret = ht_expr_parse_in(k->text, &k->pos, c->rs->arena, &k->expr, c->err);
		if (ret < 0)
			c->ret = ret;
		return ret;
	}
	switch ((int)(k - r->keys)) {
	case K_LIMIT:
	case K_USAGE:
	case K_EVENTS:
	case K_HOLDER:
	case K_HELD:
	case K_STRAY:
	case K_REST:
	case K_SOURCE:
	case K_WHEN:
	case K_CURRENT:
	case K_VALUE:
	case K_SEVERITY:
	case K_WRITABLE:
	case K_DEFAULT:
	case K_LEVER:
	case K_UNLIMITED:
		ret = ht_expr_parse_in(k->text, &k->pos, c->rs->arena, &k->expr, c->err);
		if (ret < 0)
			c->ret = ret;
		return ret;
	default:
		return 0;
	}
}

/* Whether @name is the key of the previous line (c->last_key; a case's by its name). */
static bool same_key(const struct load_ctx *c, const char *name)
{
	const char *want, *cname;

	if (c->last_key < 0)
		return false;
	if (c->last_key < K__MAX)
		return strcmp(name, key_names[c->last_key]) == 0;
	want = c->last_key == K_CASE ? "case." : c->last_key == K_CASE_REMEDY ? "remedy." : "explain.";
	cname = c->cur->cases[c->last_case].name;
	return strncmp(name, want, strlen(want)) == 0 && strcmp(name + strlen(want), cname) == 0;
}

/* The case named @name of @r, added (without a condition yet) when it has none. */
static int case_get(struct load_ctx *c, struct ht_rule *r, const char *name, size_t *idx)
{
	for (size_t i = 0; i < r->ncases; i++)
		if (strcmp(r->cases[i].name, name) == 0) {
			*idx = i;
			return 0;
		}
	if (r->ncases == r->cases_cap) {
		size_t cap = r->cases_cap ? r->cases_cap * 2 : 4;
		struct ht_case *n = reallocarray(r->cases, cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->cases = n;
		r->cases_cap = cap;
	}
	r->cases[r->ncases] = (struct ht_case){ .name = ht_arena_strndup(c->rs->arena, name,
	                                                                   strlen(name)) };
	if (!r->cases[r->ncases].name)
		return -ENOMEM;
	*idx = r->ncases++;
	return 0;
}

/*
 * `case.NAME = SEVERITY if COND` (COND may go on over indented lines) or
 * `explain.NAME = TEXT` (a template, like explain) at @col of this line.
 */
static int case_key(struct load_ctx *c, struct ht_rule *r, const char *name, const char *value,
                    unsigned col)
{
	bool is_explain = strncmp(name, "explain.", 8) == 0;
	bool is_remedy = strncmp(name, "remedy.", 7) == 0;
	const char *cname = name + (is_explain ? 8 : is_remedy ? 7 : 5), *p;
	char sev[16];
	size_t idx, n;
	struct ht_case *cs;
	int ret;

	if (!rules_valid_name(cname) || strchr(cname, '.'))
		return load_fail(c, c->lineno, value_col(c, true, name), EINVAL,
		                 "expected a case name of letters, digits and '_' after '%s', "
		                 "found '%s'", is_explain ? "explain." : is_remedy ? "remedy." : "case.",
		                 cname);
	if ((ret = finish_key(c)) < 0)
		return ret;
	if ((ret = case_get(c, r, cname, &idx)) < 0)
		return ret;
	cs = &r->cases[idx];
	c->last_case = idx;
	if (is_remedy) {
		if (cs->remedy_set)
			return load_fail(c, c->lineno, value_col(c, true, name), EINVAL,
			                 "duplicate key '%s' in rule '%s'", name, r->id);
		cs->remedy_set = true;
		c->last_key = K_CASE_REMEDY;
		return tmpl_parse_line(c, r, K_CASE_REMEDY, value, col);
	}
	if (is_explain) {
		if (cs->ntmpl > 0)
			return load_fail(c, c->lineno, value_col(c, true, name), EINVAL,
			                 "duplicate key '%s' in rule '%s'", name, r->id);
		c->last_key = K_CASE_EXPLAIN;
		return tmpl_parse_line(c, r, K_CASE_EXPLAIN, value, col);
	}
	if (cs->cond.text)
		return load_fail(c, c->lineno, value_col(c, true, name), EINVAL,
		                 "duplicate key '%s' in rule '%s' (first on line %u)", name, r->id,
		                 cs->pos.line);
	n = strcspn(value, " \t");
	p = value + n;
	while (is_blank(*p))
		p++;
	snprintf(sev, sizeof(sev), "%.*s", (int)(n < sizeof(sev) ? n : sizeof(sev) - 1), value);
	if (n >= sizeof(sev) || ht_severity_from_name(sev, &cs->severity) < 0 ||
	    strncmp(p, "if", 2) != 0 || !is_blank(p[2]))
		return load_fail(c, c->lineno, col, EINVAL, "expected 'SEVERITY if CONDITION' "
		                 "(ok, info, warning or critical, then if and a bool), found '%s'",
		                 value);
	p += 2;
	while (is_blank(*p))
		p++;
	cs->pos = (struct ht_srcpos){ .file = c->file, .line = c->lineno,
	                              .col = value_col(c, true, name) };
	cs->cond.pos = (struct ht_srcpos){ .file = c->file, .line = c->lineno,
	                                   .col = col + (unsigned)(p - value) };
	cs->cond.text = ht_arena_strndup(c->rs->arena, p, strlen(p));
	if (!cs->cond.text)
		return -ENOMEM;
	c->last_key = K_CASE;
	return 0;
}

static int rule_key(struct load_ctx *c, const char *name, const char *value)
{
	struct ht_rule *r = c->cur;
	bool continuation = is_blank(c->raw[0]) && same_key(c, name);
	unsigned col = value_col(c, continuation, value);
	int k = rules_key_from_name(name);
	int ret;

	if (continuation && (c->last_key == K_CASE_EXPLAIN || c->last_key == K_CASE_REMEDY))
		return tmpl_parse_line(c, r, c->last_key, value, col);
	if (continuation && c->last_key == K_CASE) {
		struct ht_key *ck = &r->cases[c->last_case].cond;

		if (key_fits(c, ck, col + strlen(value), K_SEVERITY, col) < 0)
			return c->ret;
		return key_continue(c, ck, "\n", col - 1, value);
	}
	if (k < 0 && (strncmp(name, "case.", 5) == 0 || strncmp(name, "explain.", 8) == 0 ||
	              strncmp(name, "remedy.", 7) == 0))
		return case_key(c, r, name, value, col);
	if (k < 0) {
		const char *p = c->raw;

		while (is_blank(*p))
			p++;
		return load_fail(c, c->lineno, (unsigned)(p - c->raw) + 1, EINVAL,
		                 "unknown key '%s' in rule '%s' (expected title, target, when, current, "
		                 "value, severity, case.NAME, explain, explain.NAME, remedy, remedy.NAME, lever, "
		                 "rationale, direction, unit, each, writable, default, unlimited, "
		                 "follows, limit, usage, events, holder, held, stray, rest, source or owner)",
		                 name, r->id);
	}
	if (continuation) {
		if (k == K_EXPLAIN || k == K_REMEDY || k == K_OWNER)
			return tmpl_parse_line(c, r, k, value, col);
		if (k == K_RATIONALE || k == K_TITLE) {
			if (key_fits(c, &r->keys[k], 1 + strlen(value), k, col) < 0)
				return c->ret;
			return key_continue(c, &r->keys[k], k == K_TITLE ? " " : "\n", 0, value);
		}
		if (k == K_WHEN || k == K_CURRENT || k == K_VALUE || k == K_SEVERITY ||
		    k == K_WRITABLE || k == K_DEFAULT || k == K_LEVER || k == K_UNLIMITED ||
		    (k >= K_LIMIT && k <= K_SOURCE)) {
			/* The newline and the padding to @col are part of the text. */
			if (key_fits(c, &r->keys[k], col + strlen(value), k, col) < 0)
				return c->ret;
			return key_continue(c, &r->keys[k], "\n", col - 1, value);
		}
		return load_fail(c, c->lineno, col, EINVAL, "'%s' must fit on one line", name);
	}
	if ((ret = finish_key(c)) < 0)
		return ret;
	if (r->keys[k].text)
		return load_fail(c, c->lineno, value_col(c, true, name), EINVAL,
		                 "duplicate key '%s' in rule '%s' (first on line %u)", name, r->id,
		                 r->keys[k].pos.line);
	c->last_key = k;
	r->keys[k].pos = (struct ht_srcpos){ .file = c->file, .line = c->lineno, .col = col };
	r->keys[k].text = ht_arena_strndup(c->rs->arena, value, strlen(value));
	if (!r->keys[k].text)
		return -ENOMEM;
	switch (k) {
	case K_TARGET:
		return parse_target(c, r, value, col);
	case K_EACH:
		for (enum ht_each e = HT_EACH_NIC; e <= HT_EACH_LAST; e++)
			if (strcmp(value, ht_each_name(e)) == 0) {
				r->each = e;
				return 0;
			}
		return load_fail(c, c->lineno, col, EINVAL,
		                 "expected 'nic', 'listener', 'process', 'storage', 'peer' or "
		                 "'cgroup' (one evaluation per network interface, listening port, "
		                 "process, storage directory, TCP peer or control group), found '%s'",
		                 value);
	case K_DIRECTION:
		if (strcmp(value, "raise") == 0)
			r->only_raise = true;
		else if (strcmp(value, "any") != 0)
			return load_fail(c, c->lineno, col, EINVAL,
			                 "expected 'raise' or 'any', found '%s'", value);
		return 0;
	case K_EXPLAIN:
	case K_REMEDY:
	case K_OWNER:
		return tmpl_parse_line(c, r, k, value, col);
	default:
		return 0;
	}
}

/*
 * A [workload] variable. Over an included profile only a variable the
 * included chain defines may be set, and to a value of its type: a typo
 * would otherwise add a variable no rule reads and leave the real one alone.
 */
static int profile_set_var(struct load_ctx *c, const char *full, const char *value,
                           const struct ht_srcpos *pos)
{
	struct ht_var *var = rules_var_find(c->rs, full);
	struct ht_value old = { 0 };
	int r;

	if (!var && c->known_vars_only) {
		char known[512] = "";
		size_t len = 0;
		const char *p = c->raw;

		for (size_t i = 0; i < c->rs->nvars; i++) {
			const char *n = c->rs->vars[i].name;

			/* Leave room for ", ..." when the list does not fit. */
			if (len + strlen(n) + 2 > sizeof(known) - 6) {
				snprintf(known + len, sizeof(known) - len, ", ...");
				break;
			}
			len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", i ? ", " : "",
			                        n);
		}
		while (is_blank(*p))
			p++;
		return load_fail(c, c->lineno, (unsigned)(p - c->raw) + 1, EINVAL,
		                 "unknown workload variable '%s' (the included profiles define: %s)",
		                 full, c->rs->nvars ? known : "none");
	}
	/* Twice in one profile file: a typo or a forgotten edit, not an override. */
	if (var && var->pos.file && strcmp(var->pos.file, pos->file) == 0)
		return load_fail(c, c->lineno, value_col(c, true, strchr(full, '.') + 1), EINVAL,
		                 "duplicate workload variable '%s' (first on line %u)", full,
		                 var->pos.line);
	if (var && (r = ht_value_copy(&old, &var->value)) < 0)
		return r;
	r = rules_set_var_text(c->rs, full, value, pos, c->err, &c->ret);
	if (r < 0 || !var) {
		ht_value_clear(&old);
		return r;
	}
	var = rules_var_find(c->rs, full);
	if (ht_type_is_number(old.type) != ht_type_is_number(var->value.type) ||
	    (!ht_type_is_number(old.type) && old.type != var->value.type)) {
		r = load_fail(c, c->lineno, pos->col, EINVAL, "%s is a %s, got a %s", full,
		              ht_type_name(old.type), ht_type_name(var->value.type));
		ht_value_clear(&var->value);
		var->value = old;
		return r;
	}
	ht_value_clear(&old);
	return 0;
}

static int profile_key(struct load_ctx *c, const char *section, const char *name, const char *value)
{
	unsigned col = value_col(c, false, value);

	/*
	 * Only [workload] (workload.X, read by rules) and [garage] (garage.X,
	 * where the Garage collector looks before a garage.toml exists) set
	 * variables; a key before any section would slip in as one.
	 */
	if (!*section) {
		const char *p = c->raw;

		while (is_blank(*p))
			p++;
		return load_fail(c, c->lineno, (unsigned)(p - c->raw) + 1, EINVAL,
		                 "expected '[profile]' or '[workload]' before the first key");
	}
	if (strcmp(section, "profile") == 0) {
		if (strcmp(name, "include") == 0) {
			if (c->include)
				return load_fail(c, c->lineno, col, EINVAL, "duplicate key 'include'");
			c->include = strdup(value);
			c->include_line = c->lineno;
			c->include_col = col;
			return c->include ? 0 : -ENOMEM;
		}
		if (strcmp(name, "description") == 0) {
			free(c->rs->profile_desc);
			c->rs->profile_desc = strdup(value);
			return c->rs->profile_desc ? 0 : -ENOMEM;
		}
		return load_fail(c, c->lineno, 1, EINVAL,
		                 "unknown key '%s' in [profile] (expected include or description)",
		                 name);
	}
	{
		_cleanup_free_ char *full = NULL;
		struct ht_srcpos pos = { .file = c->file, .line = c->lineno, .col = col };

		if (!rules_valid_name(name))
			return load_fail(c, c->lineno, 1, EINVAL,
			                 "expected a variable name, found '%s'", name);
		if (asprintf(&full, "%s.%s", section, name) < 0)
			return -ENOMEM;
		return profile_set_var(c, full, value, &pos);
	}
}

/* "NAME = BOUNDS" in a rules file's [workload] section (rules_declare_range()). */
static int range_key(struct load_ctx *c, const char *name, const char *value)
{
	_cleanup_free_ char *full = NULL;
	struct ht_srcpos pos = { .file = c->file, .line = c->lineno,
	                         .col = value_col(c, false, value) };

	if (is_blank(c->raw[0]))
		return load_fail(c, c->lineno, value_col(c, true, value), EINVAL,
		                 "a range must fit on one line");
	if (!rules_valid_name(name) || strchr(name, '.'))
		return load_fail(c, c->lineno, 1, EINVAL, "expected a variable name, found '%s'", name);
	if (asprintf(&full, "workload.%s", name) < 0)
		return -ENOMEM;
	return rules_declare_range(c->rs, full, value, &pos, c->err);
}

static int load_handler(void *user, const char *section, const char *name, const char *value)
{
	struct load_ctx *c = user;
	int ret;

	if (c->ret < 0)
		return 1;
	if (c->is_profile)
		ret = profile_key(c, section, name, value);
	else if (c->in_workload)
		ret = range_key(c, name, value);
	else if (!c->cur || !*section) {
		const char *p = c->raw;

		while (is_blank(*p))
			p++;
		ret = load_fail(c, c->lineno, (unsigned)(p - c->raw) + 1, EINVAL,
		                "expected '[rule-id]' before the first key");
	} else
		ret = rule_key(c, name, value);
	if (ret < 0 && c->ret == 0)
		c->ret = ret;
	return 1;
}

int rules_parse_file(struct ht_ruleset *rs, const char *path, bool is_profile,
                     bool known_vars_only, char **include, unsigned *include_line,
                     unsigned *include_col, struct ht_error *err)
{
	_cleanup_fclose_ FILE *f = NULL;
	struct load_ctx c = { .rs = rs, .last_key = -1, .is_profile = is_profile, .err = err,
	                      .known_vars_only = known_vars_only };
	struct stat st;
	int r;

	c.file = rules_intern(rs, path);
	if (!c.file)
		return -ENOMEM;
	/* A profile without a description does not take its include's. */
	if (is_profile) {
		free(rs->profile_desc);
		rs->profile_desc = NULL;
	}
	f = fopen(path, "re");
	if (!f)
		return ht_error_set(err, errno, "%s: %s", path, strerror(errno));
	/* Refused before reading; load_reader() counts too, for files that grow. */
	if (fstat(fileno(f), &st) == 0 && st.st_size > RULES_FILE_MAX)
		return ht_error_set(err, EFBIG, "%s: larger than 1 MiB", path);
	c.f = f;
	r = ini_parse_stream(load_reader, &c, load_handler, &c);
	if (r == 0)
		finish_key(&c);
	free(c.raw);
	free(c.kbuf);
	if (c.ret == 0 && ferror(f))
		c.ret = ht_error_set(err, EIO, "%s: read error", path);
	if (c.ret == 0 && r > 0) {
		c.ret = ht_error_set(err, EINVAL, "%s:%d:1: expected '[section]', 'key = value' or a "
		                     "comment", path, r);
	}
	if (c.ret == 0 && r < 0)
		c.ret = -ENOMEM;
	if (c.ret < 0) {
		free(c.include);
		return c.ret;
	}
	if (include) {
		*include = c.include;
		*include_line = c.include_line;
		*include_col = c.include_col;
	} else
		free(c.include);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rules_list_dir(const char *dir, const char *suffix, char ***names, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t sl = strlen(suffix);

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char **nn;
		bool seen = false;

		if (de->d_name[0] == '.' || l <= sl || strcmp(de->d_name + l - sl, suffix) != 0)
			continue;
		for (size_t i = 0; i < *n; i++)
			if (strcmp((*names)[i], de->d_name) == 0)
				seen = true;
		if (seen)
			continue;
		nn = realloc(*names, (*n + 1) * sizeof(*nn));
		if (!nn) {
			closedir(d);
			return -ENOMEM;
		}
		*names = nn;
		if (!((*names)[*n] = strdup(de->d_name))) {
			closedir(d);
			return -ENOMEM;
		}
		(*n)++;
	}
	closedir(d);
	/* An empty directory leaves *names NULL, which qsort() must not get. */
	if (*n > 1)
		qsort(*names, *n, sizeof(**names), cmp_str);
	return 0;
}

int rules_find_file(struct ht_ruleset *rs, const char *sub, const char *name, char **out,
                    struct ht_error *err)
{
	for (size_t i = rs->ndirs; i-- > 0;) {
		_cleanup_free_ char *p = NULL;
		struct stat st;

		if (asprintf(&p, "%s%s/%s", rs->dirs[i], sub, name) < 0)
			return -ENOMEM;
		/* Only an absent entry lets an earlier directory's file through. */
		if (lstat(p, &st) < 0) {
			if (errno == ENOENT)
				continue;
			return ht_error_set(err, EINVAL, "%s: %s", p, strerror(errno));
		}
		/* A link to /dev/null masks the name, as systemd's drop-ins do; never followed. */
		if (S_ISLNK(st.st_mode)) {
			char target[16];
			ssize_t n = readlink(p, target, sizeof(target));

			if (n == (ssize_t)strlen("/dev/null") && memcmp(target, "/dev/null", (size_t)n) == 0) {
				*out = TAKE_PTR(p);
				return 1;
			}
		}
		if (stat(p, &st) < 0) /* a dangling or looping symlink */
			return ht_error_set(err, EINVAL, "%s: %s", p, strerror(errno));
		if (!S_ISREG(st.st_mode))
			return ht_error_set(err, EINVAL, "%s: not a regular file", p);
		*out = TAKE_PTR(p);
		return 0;
	}
	return -ENOENT;
}

int ht_ruleset_load(const char *const *dirs, size_t ndirs, struct ht_ruleset **out,
                    struct ht_error *err)
{
	struct ht_ruleset *rs = calloc(1, sizeof(*rs));
	char **names = NULL;
	size_t nnames = 0;
	int r = 0;

	if (!rs)
		return -ENOMEM;
	rs->arena = ht_arena_new(RULES_ARENA_FIRST);
	rs->dirs = calloc(ndirs ? ndirs : 1, sizeof(char *));
	if (!rs->arena || !rs->dirs) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ndirs; i++) {
		if (!(rs->dirs[i] = strdup(dirs[i]))) {
			r = -ENOMEM;
			goto out;
		}
		rs->ndirs++;
		r = rules_list_dir(dirs[i], ".rules", &names, &nnames);
		if (r < 0) {
			ht_error_set(err, -r, "%s: %s", dirs[i], strerror(-r));
			goto out;
		}
	}
	if (nnames == 0) {
		r = -ENOENT;
		ht_error_set(err, ENOENT, "no *.rules file found in the rules search path%s%s",
		             ndirs ? " starting at " : "", ndirs ? dirs[0] : "");
		goto out;
	}
	for (size_t i = 0; i < nnames; i++) {
		_cleanup_free_ char *path = NULL;

		r = rules_find_file(rs, "", names[i], &path, err);
		if (r == -ENOENT) /* listed a moment ago, gone now */
			r = ht_error_set(err, ENOENT, "%s: %s", names[i], strerror(ENOENT));
		if (r < 0)
			goto out;
		if (r == 1) { /* masked */
			r = 0;
			continue;
		}
		/* Which directory it is from: a rule may replace only an earlier directory's. */
		for (size_t d = 0; d < rs->ndirs; d++) {
			size_t l = strlen(rs->dirs[d]);

			if (strncmp(path, rs->dirs[d], l) == 0 && path[l] == '/' && !strchr(path + l + 1, '/'))
				rs->load_dir = d;
		}
		r = rules_parse_file(rs, path, false, false, NULL, NULL, NULL, err);
		if (r < 0)
			goto out;
	}
out:
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	if (r < 0) {
		ht_ruleset_free(rs);
		return r;
	}
	*out = rs;
	return 0;
}
