/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/rules-internal.h"
#include "shared/escape.h"
#include "shared/units.h"

/* ---- profiles (the workload variables they set: vars.c) -------------- */

/* How many profiles an include chain may hold, the one asked for included. */
#define PROFILE_DEPTH_MAX 64

/* The profiles being loaded, outermost first: the include cycle message names them. */
struct profile_chain {
	const char *names[PROFILE_DEPTH_MAX];
	size_t n;
};

static int profile_fail(struct ht_error *err, const struct ht_srcpos *inc, int errnum,
                        const char *fmt, ...) _printf_(4, 5);

/* The message at the include line @inc that named the profile; none for the one asked for. */
static int profile_fail(struct ht_error *err, const struct ht_srcpos *inc, int errnum,
                        const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!inc)
		return ht_error_set(err, errnum, "%s", msg);
	return ht_error_set(err, errnum, "%s:%u:%u: %s", inc->file, inc->line, inc->col, msg);
}

/* "a -> b -> a": the chain from the first @name on, and @name again. */
static void profile_cycle(const struct profile_chain *chain, size_t from, const char *name,
                          char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = from; i < chain->n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s -> ", chain->names[i]);
	if (len < size)
		snprintf(buf + len, size - len, "%s", name);
}

/*
 * Loads profile @name, named by the include line @inc (NULL for the profile
 * asked for), its includes first so that its own values win.
 */
static int profile_load(struct ht_ruleset *rs, struct profile_chain *chain, const char *name,
                        const struct ht_srcpos *inc, struct ht_error *err)
{
	_cleanup_free_ char *fname = NULL, *path = NULL, *include = NULL;
	unsigned iline = 0, icol = 0;
	int r;

	if (!rules_valid_name(name) || strchr(name, '.'))
		return profile_fail(err, inc, EINVAL,
		                    "profile name '%s': expected letters, digits and '_'", name);
	for (size_t i = 0; i < chain->n; i++)
		if (strcmp(chain->names[i], name) == 0) {
			char cycle[512];

			profile_cycle(chain, i, name, cycle, sizeof(cycle));
			return profile_fail(err, inc, ELOOP, "profile include cycle: %s", cycle);
		}
	if (chain->n == PROFILE_DEPTH_MAX)
		return profile_fail(err, inc, ELOOP, "profile includes nested deeper than %d",
		                    PROFILE_DEPTH_MAX);
	if (asprintf(&fname, "%s.profile", name) < 0)
		return -ENOMEM;
	r = rules_find_file(rs, "/profiles", fname, &path, err);
	if (r == -ENOENT)
		return profile_fail(err, inc, ENOENT,
		                    "profile '%s' not found (looked for profiles/%s in %s%s)", name,
		                    fname, rs->ndirs ? rs->dirs[0] : "no directory",
		                    rs->ndirs > 1 ? " and the other rules directories" : "");
	if (r == 1)
		return profile_fail(err, inc, ENOENT, "profile '%s' is masked: %s is a link to "
		                    "/dev/null", name, path);
	if (r < 0)
		return r;
	/* Read the include first so the including profile's values win. */
	{
		struct ht_ruleset probe = { .dirs = rs->dirs, .ndirs = rs->ndirs };

		r = rules_parse_file(&probe, path, true, false, &include, &iline, &icol, err);
		for (size_t i = 0; i < probe.nvars; i++) {
			free(probe.vars[i].name);
			ht_value_clear(&probe.vars[i].value);
		}
		free(probe.vars);
		for (size_t i = 0; i < probe.nstrings; i++)
			free(probe.strings[i]);
		free(probe.strings);
		free(probe.profile_desc);
		if (r < 0)
			return r;
	}
	if (include) {
		struct ht_srcpos ipos = { .file = path, .line = iline, .col = icol };

		chain->names[chain->n++] = name;
		r = profile_load(rs, chain, include, &ipos, err);
		chain->n--;
		if (r < 0)
			return r;
	}
	/* The profile the chain starts from: what its values are the baseline of. */
	if (!include && !(rs->profile_base = rules_intern(rs, path)))
		return -ENOMEM;
	/* Over an include, only the variables the included chain defines. */
	return rules_parse_file(rs, path, true, include != NULL, NULL, NULL, NULL, err);
}

/* ht_ruleset_load_profile()'s entry: @depth is 0, the chain starts empty. */
static int load_profile(struct ht_ruleset *rs, const char *name, unsigned depth,
                        struct ht_error *err)
{
	struct profile_chain chain = { .n = 0 };

	if (depth != 0)
		return -EINVAL;
	return profile_load(rs, &chain, name, NULL, err);
}

int ht_ruleset_load_profile(struct ht_ruleset *rs, const char *name, struct ht_error *err)
{
	int r = load_profile(rs, name, 0, err);

	/* Every value against its range, once the whole chain is read: a profile may override. */
	if (r >= 0)
		r = rules_check_vars(rs, err);
	if (r < 0)
		return r;
	free(rs->profile);
	rs->profile = strdup(name);
	return rs->profile ? 0 : -ENOMEM;
}

const char *ht_ruleset_profile(const struct ht_ruleset *rs)
{
	return rs->profile;
}

const char *ht_ruleset_profile_description(const struct ht_ruleset *rs)
{
	return rs->profile ? rs->profile_desc : NULL;
}

/* ---- static checks ------------------------------------------------------ */

static struct ht_rule *rule_find(const struct ht_ruleset *rs, const char *id)
{
	return (struct ht_rule *)ht_ruleset_find(rs, id);
}

static int check_rule(struct ht_ruleset *rs, struct ht_rule *r, const struct ht_srcpos *ref,
                      struct ht_error *err);

/* The instance families of `each` (rules.h, enum ht_each), indexed by it. */
static const struct {
	const char *family;   /* FAMILY of FAMILY.INSTANCE.SUFFIX facts */
	const char *list;     /* the fact listing the instances */
	const char *name;     /* the name an each rule reads its instance by */
	enum ht_type type;    /* its type: a port is a number */
	const char *what;     /* for messages */
} each_kinds[] = {
	[HT_EACH_NIC] = { "nic", "nic.list", "nic.name", HT_T_STR, "network interface" },
	[HT_EACH_LISTENER] = { "listener", "listener.list", "listener.port", HT_T_INT,
	                       "listening port" },
	[HT_EACH_PROCESS] = { "process", "process.list", "process.name", HT_T_STR, "process" },
	[HT_EACH_STORAGE] = { "storage", "storage.list", "storage.name", HT_T_STR,
	                      "storage directory" },
	[HT_EACH_PEER] = { "peer", "peer.list", "peer.name", HT_T_STR, "TCP peer" },
	[HT_EACH_CGROUP] = { "cgroup", "cgroup.list", "cgroup.name", HT_T_STR, "control group" },
	[HT_EACH_NETNS] = { "netns", "netns.list", "netns.name", HT_T_STR, "network namespace" },
	[HT_EACH_PROXY] = { "proxy", "proxy.list", "proxy.name", HT_T_STR,
	                    "path from a reverse proxy to the store" },
};

/*
 * Whether family @e's list and facts have each instance escaped
 * (shared/escape.h, ht_name_escape()): a cgroup's path, an interface's name.
 */
static bool each_escaped(enum ht_each e)
{
	return e == HT_EACH_CGROUP || e == HT_EACH_NIC || e == HT_EACH_PROCESS;
}

/*
 * In an `each = FAMILY` rule, FAMILY.SUFFIX names the current instance's
 * fact FAMILY.INSTANCE.SUFFIX and FAMILY.name (listener.port) the instance
 * itself. Returns the per-instance definition for @name ("nic.speed" ->
 * nic.*.speed) when @e is that family, or NULL.
 */
static const struct ht_fact_def *inst_def(enum ht_each e, const char *name)
{
	char pattern[256];
	const struct ht_fact_def *d;
	size_t fl, sl, n;

	if (e == HT_EACH_NONE || (size_t)e >= ARRAY_SIZE(each_kinds))
		return NULL;
	if (name[0] != each_kinds[e].family[0])
		return NULL;
	fl = strlen(each_kinds[e].family);
	if (strncmp(name, each_kinds[e].family, fl) != 0 || name[fl] != '.')
		return NULL;
	/* "FAMILY.*.SUFFIX" */
	sl = strlen(name + fl + 1);
	if (fl + 3 + sl >= sizeof(pattern))
		return NULL;
	memcpy(pattern, name, fl);
	memcpy(pattern + fl, ".*.", 3);
	memcpy(pattern + fl + 3, name + fl + 1, sl + 1);
	d = ht_fact_def_find(pattern);
	/* Only a def of that family's table (not a host fact that happens to match). */
	if (d) {
		const struct ht_fact_def *defs = ht_instance_fact_defs(each_kinds[e].family, &n);

		if (d < defs || d >= defs + n)
			return NULL;
	}
	return d;
}

/* The family of @name when it is a per-instance name of any family, else HT_EACH_NONE. */
static enum ht_each any_inst_def(const char *name)
{
	for (enum ht_each e = HT_EACH_NIC; e <= HT_EACH_LAST; e++)
		if (inst_def(e, name) || strcmp(name, each_kinds[e].name) == 0)
			return e;
	return HT_EACH_NONE;
}

/*
 * What the fact tables say of @name, asked once per name of the ruleset and
 * kept in its entry of the name table (@n; NULL: ask them every time).
 */
static void name_defs(struct ht_name *n, const char *name)
{
	if (!n || n->defs_known)
		return;
	n->def = ht_fact_def_find(name);
	for (enum ht_each e = HT_EACH_NIC; e <= HT_EACH_LAST; e++)
		n->inst[e] = inst_def(e, name);
	n->defs_known = true;
}

/* ht_fact_def_find(@name), from @n's memo when there is one. */
static const struct ht_fact_def *name_def(struct ht_name *n, const char *name)
{
	name_defs(n, name);
	return n ? n->def : ht_fact_def_find(name);
}

/* inst_def(@e, @name), from @n's memo when there is one. */
static const struct ht_fact_def *name_inst(struct ht_name *n, enum ht_each e, const char *name)
{
	name_defs(n, name);
	return n ? n->inst[e] : inst_def(e, name);
}

/* any_inst_def(@name), from @n's memo when there is one. */
static enum ht_each name_any_inst(struct ht_name *n, const char *name)
{
	for (enum ht_each e = HT_EACH_NIC; e <= HT_EACH_LAST; e++)
		if (name_inst(n, e, name) || strcmp(name, each_kinds[e].name) == 0)
			return e;
	return HT_EACH_NONE;
}

static int type_of(const char *name, const struct ht_srcpos *pos, enum ht_type *type,
                   struct ht_error *err, void *userdata)
{
	struct ht_ruleset *rs = userdata;
	/* Without an entry (out of memory) the answers are only not kept. */
	struct ht_name *n = rules_name(rs, name, true);
	const struct ht_fact_def *d;
	struct ht_var *v;
	struct ht_rule *r;
	int ret;

	if ((r = n ? n->rule : rule_find(rs, name))) {
		if (r->each && !(rs->check_scope & (1u << r->each)))
			return ht_error_set(err, EINVAL, "%s:%u:%u: '%s' is evaluated per %s "
			                    "(each = %s); only an 'each = %s' rule or an aggregate "
			                    "over %s can use it",
			                    pos->file, pos->line, pos->col, name,
			                    each_kinds[r->each].what, ht_each_name(r->each),
			                    ht_each_name(r->each), ht_each_name(r->each));
		ret = check_rule(rs, r, pos, err);
		if (ret < 0)
			return ret;
		if (!r->keys[K_VALUE].expr)
			return ht_error_set(err, EINVAL, "%s:%u:%u: rule '%s' has no value to use",
			                    pos->file, pos->line, pos->col, name);
		*type = r->type;
		return 0;
	}
	if ((v = rules_var_of_rules(rs, name))) {
		*type = ht_type_is_number(v->value.type) ? HT_T_INT : v->value.type;
		return 0;
	}
	for (enum ht_each e = HT_EACH_NIC; e <= HT_EACH_LAST; e++) {
		if (!(rs->check_scope & (1u << e)))
			continue;
		if (strcmp(name, each_kinds[e].name) == 0) {
			*type = each_kinds[e].type;
			return 0;
		}
		if ((d = name_inst(n, e, name))) {
			*type = ht_type_is_number(d->type) ? HT_T_INT : d->type;
			return 0;
		}
	}
	if ((d = name_def(n, name))) {
		*type = ht_type_is_number(d->type) ? HT_T_INT : d->type;
		return 0;
	}
	if (strncmp(name, "workload.", 9) == 0)
		return ht_error_set(err, ENOENT, "%s:%u:%u: unknown workload variable '%s' (no profile "
		                    "sets it)", pos->file, pos->line, pos->col, name);
	return -ENOENT;
}

/* The family named @name, or HT_EACH_NONE. */
static enum ht_each family_by_name(const char *name)
{
	for (enum ht_each e = HT_EACH_NIC; e <= HT_EACH_LAST; e++)
		if (strcmp(name, each_kinds[e].family) == 0)
			return e;
	return HT_EACH_NONE;
}

/* ht_family_cb: an aggregate's family comes into scope while its body is checked. */
static int family_scope(const char *name, const struct ht_srcpos *pos, bool enter,
                        struct ht_error *err, void *userdata)
{
	struct ht_ruleset *rs = userdata;
	enum ht_each e = family_by_name(name);

	(void)pos;
	(void)err;
	if (!e)
		return -ENOENT;
	/* Inside a rule or aggregate of the same family the inner instance shadows the outer. */
	if (!enter) {
		if (rs->check_nest[e])
			rs->check_nest[e]--;
		else
			rs->check_scope &= ~(1u << e);
		return 0;
	}
	if (rs->check_scope & (1u << e))
		rs->check_nest[e]++;
	rs->check_scope |= 1u << e;
	return 0;
}

static int lookup(const char *name, const struct ht_srcpos *pos, struct ht_value *out,
                  struct ht_error *err, void *userdata);
static int iterate(const char *family, const struct ht_srcpos *pos, ht_instance_fn fn, void *ctx,
                   struct ht_error *err, void *userdata);
static int source_of(const char *name, const struct ht_srcpos *pos, char **out,
                     struct ht_error *err, void *userdata);

static const struct ht_expr_ops expr_ops = {
	.type_of = type_of,
	.family = family_scope,
	.lookup = lookup,
	.iterate = iterate,
	.source = source_of,
};

static int check_expr(struct ht_ruleset *rs, const struct ht_key *k, enum ht_type want,
                      const char *what, struct ht_error *err)
{
	enum ht_type t;
	int r;

	if (!k->expr)
		return 0;
	r = ht_expr_check_ops(k->expr, &expr_ops, rs, &t, err);
	if (r < 0)
		return r;
	if (want != HT_T_NONE && t != want) {
		const struct ht_srcpos *p = ht_expr_pos(k->expr);

		return ht_error_set(err, EINVAL, "%s:%u:%u: type error: %s must be a %s, got a %s",
		                    p->file, p->line, p->col, what, ht_type_name(want),
		                    ht_type_name(t));
	}
	return 0;
}

static int check_rule(struct ht_ruleset *rs, struct ht_rule *r, const struct ht_srcpos *ref,
                      struct ht_error *err)
{
	unsigned saved_scope;
	int ret;

	if (r->check_state == ST_DONE)
		return 0;
	if (r->check_state == ST_BUSY) {
		char path[512];
		size_t len = 0, start = 0;

		for (size_t i = 0; i < rs->check_depth; i++)
			if (strcmp(rs->check_stack[i], r->id) == 0)
				start = i;
		for (size_t i = start; i < rs->check_depth && len < sizeof(path); i++)
			len += (size_t)snprintf(path + len, sizeof(path) - len, "%s -> ",
			                        rs->check_stack[i]);
		if (len < sizeof(path))
			snprintf(path + len, sizeof(path) - len, "%s", r->id);
		return ht_error_set(err, EINVAL, "%s:%u:%u: dependency cycle: %s", ref->file, ref->line,
		                    ref->col, path);
	}
	if (rs->check_depth >= ARRAY_SIZE(rs->check_stack))
		return ht_error_set(err, EINVAL, "%s:%u:%u: rules nest deeper than %zu", ref->file,
		                    ref->line, ref->col, ARRAY_SIZE(rs->check_stack));
	r->check_state = ST_BUSY;
	rs->check_stack[rs->check_depth++] = r->id;
	saved_scope = rs->check_scope;
	rs->check_scope = r->each ? 1u << r->each : 0;

	if (r->keys[K_VALUE].expr) {
		ret = ht_expr_check_ops(r->keys[K_VALUE].expr, &expr_ops, rs, &r->type, err);
		if (ret < 0)
			return ret;
	}
	ret = check_expr(rs, &r->keys[K_WHEN], HT_T_BOOL, "'when'", err);
	if (ret < 0)
		return ret;
	rs->check_scope = saved_scope;
	rs->check_depth--;
	r->check_state = ST_DONE;
	return 0;
}
/* The static checks of one template (explain or remedy) of rule @r. */
static int check_tmpl(struct ht_ruleset *rs, const struct ht_rule *r, int key,
                      const struct ht_tmpl_seg *segs, size_t n, struct ht_error *err)
{
	const char *what = key == K_REMEDY ? "remedy" : key == K_OWNER ? "owner" : "explanation";
	/* A case's explanation or remedy (key K__MAX + its index) is placed at its case. */
	const struct ht_key *kp = key < K__MAX ? &r->keys[key] : &r->cases[key - K__MAX].cond;
	int ret;

	for (size_t s = 0, depth = 0; s < n; s++) {
		enum ht_type t;

		if (segs[s].fmt == TMPL_END && depth-- == 0)
			return ht_error_set(err, EINVAL, "%s:%u:%u: '{/?}' without an open '{?...}' "
			                    "in the %s of rule '%s'",
			                    kp->pos.file, kp->pos.line, kp->pos.col, what, r->id);
		if (segs[s].fmt == TMPL_IF)
			depth++;
		if (s + 1 == n && depth > 0)
			return ht_error_set(err, EINVAL, "%s:%u:%u: '{?...}' without its '{/?}' in the "
			                    "%s of rule '%s'", kp->pos.file, kp->pos.line,
			                    kp->pos.col, what, r->id);
		if (!segs[s].expr)
			continue;
		ret = ht_expr_check_ops(segs[s].expr, &expr_ops, rs, &t, err);
		if (ret < 0)
			return ret;
		if (segs[s].fmt == TMPL_IF && t != HT_T_BOOL) {
			const struct ht_srcpos *p = ht_expr_pos(segs[s].expr);

			return ht_error_set(err, EINVAL, "%s:%u:%u: type error: '{?...}' needs a "
			                    "bool, got a %s", p->file, p->line, p->col,
			                    ht_type_name(t));
		}
		if (segs[s].fmt != TMPL_PLAIN && segs[s].fmt != TMPL_IF && segs[s].fmt != TMPL_SOURCE &&
		    t != HT_T_INT) {
			const struct ht_srcpos *p = ht_expr_pos(segs[s].expr);

			return ht_error_set(err, EINVAL, "%s:%u:%u: type error: a formatted hole "
			                    "needs a number, got a %s", p->file, p->line, p->col,
			                    ht_type_name(t));
		}
	}
	return 0;
}


/*
 * The limit keys and the cases of @r: types, what goes with what, and each
 * case's condition and explanation. 0 or -EINVAL naming the place.
 */
static int check_limit_cases(struct ht_ruleset *rs, const struct ht_rule *r, struct ht_error *err)
{
	static const struct {
		int key;
		enum ht_type type;
		const char *what;
	} lk[] = {
		{ K_LIMIT, HT_T_INT, "'limit'" },   { K_USAGE, HT_T_INT, "'usage'" },
		{ K_EVENTS, HT_T_INT, "'events'" }, { K_HOLDER, HT_T_STR, "'holder'" },
		{ K_HELD, HT_T_INT, "'held'" },     { K_STRAY, HT_T_BOOL, "'stray'" },
		{ K_REST, HT_T_STR, "'rest'" },     { K_SOURCE, HT_T_STR, "'source'" },
	};
	bool is_limit = r->keys[K_LIMIT].text || r->keys[K_USAGE].text;
	int ret;

	for (size_t i = 0; i < ARRAY_SIZE(lk); i++) {
		const struct ht_key *k = &r->keys[lk[i].key];

		if (k->text && !is_limit)
			return ht_error_set(err, EINVAL, "%s:%u:%u: '%s' belongs to a limit: give rule "
			                    "'%s' a 'limit' and a 'usage'", k->pos.file, k->pos.line,
			                    k->pos.col, rules_key_name(lk[i].key), r->id);
		if ((ret = check_expr(rs, k, lk[i].type, lk[i].what, err)) < 0)
			return ret;
	}
	if (is_limit && (!r->keys[K_LIMIT].text || !r->keys[K_USAGE].text)) {
		const struct ht_key *k = r->keys[K_LIMIT].text ? &r->keys[K_LIMIT] : &r->keys[K_USAGE];

		return ht_error_set(err, EINVAL, "%s:%u:%u: rule '%s' needs both 'limit' and "
		                    "'usage'", k->pos.file, k->pos.line, k->pos.col, r->id);
	}
	if (!!r->keys[K_HOLDER].text != !!r->keys[K_HELD].text) {
		const struct ht_key *k = r->keys[K_HOLDER].text ? &r->keys[K_HOLDER] : &r->keys[K_HELD];

		return ht_error_set(err, EINVAL, "%s:%u:%u: rule '%s' needs both 'holder' and "
		                    "'held'", k->pos.file, k->pos.line, k->pos.col, r->id);
	}
	for (size_t i = 0; i < r->ncases; i++) {
		const struct ht_case *cs = &r->cases[i];

		if (!cs->cond.text)
			return ht_error_set(err, EINVAL, "%s:%u:%u: explain.%s without its case.%s in "
			                    "rule '%s'", r->pos.file, r->pos.line, r->pos.col, cs->name,
			                    cs->name, r->id);
		if (r->keys[K_SEVERITY].text)
			return ht_error_set(err, EINVAL, "%s:%u:%u: case.%s and 'severity' in rule '%s': "
			                    "the cases give the severity, write one or the other",
			                    cs->pos.file, cs->pos.line, cs->pos.col, cs->name, r->id);
		if (r->kind == HT_TARGET_NONE)
			return ht_error_set(err, EINVAL, "%s:%u:%u: case.%s needs a 'target' (rule "
			                    "'%s' is a value only)", cs->pos.file, cs->pos.line,
			                    cs->pos.col, cs->name, r->id);
		if ((ret = check_expr(rs, &cs->cond, HT_T_BOOL, "a case's condition", err)) < 0)
			return ret;
		if ((ret = check_tmpl(rs, r, K__MAX + (int)i, cs->tmpl, cs->ntmpl, err)) < 0 ||
		    (ret = check_tmpl(rs, r, K__MAX + (int)i, cs->remedy, cs->nremedy, err)) < 0)
			return ret;
	}
	if (is_limit && r->keys[K_SEVERITY].text)
		return ht_error_set(err, EINVAL, "%s:%u:%u: 'severity' and a limit in rule '%s': the "
		                    "limit's own cases and case.NAME give the severity",
		                    r->keys[K_SEVERITY].pos.file, r->keys[K_SEVERITY].pos.line,
		                    r->keys[K_SEVERITY].pos.col, r->id);
	if (is_limit && r->kind == HT_TARGET_NONE)
		return ht_error_set(err, EINVAL, "%s:%u:%u: 'limit' needs a 'target' (rule '%s' is a "
		                    "value only)", r->keys[K_LIMIT].pos.file, r->keys[K_LIMIT].pos.line,
		                    r->keys[K_LIMIT].pos.col, r->id);
	return 0;
}

/*
 * `follows = RULE`: RULE is another rule with a target, of the host or of
 * the same family, and follows no rule itself (so that one pass over the
 * findings settles every cap). 0 or -EINVAL naming the key's place.
 */
static int check_follows(const struct ht_ruleset *rs, const struct ht_rule *r,
                         struct ht_error *err)
{
	const struct ht_key *k = &r->keys[K_FOLLOWS];
	const struct ht_rule *led;

	if (!k->text)
		return 0;
	led = rule_find(rs, k->text);
	if (!led || led == r || led->kind == HT_TARGET_NONE)
		return ht_error_set(err, EINVAL, "%s:%u:%u: follows '%s': expected another rule "
		                    "with a target", k->pos.file, k->pos.line, k->pos.col, k->text);
	if (led->each && led->each != r->each)
		return ht_error_set(err, EINVAL, "%s:%u:%u: follows '%s', a per-%s rule: only a "
		                    "rule of the same family can follow it", k->pos.file, k->pos.line,
		                    k->pos.col, k->text, each_kinds[led->each].what);
	if (led->keys[K_FOLLOWS].text)
		return ht_error_set(err, EINVAL, "%s:%u:%u: follows '%s', which follows '%s' itself: "
		                    "name the rule at the head", k->pos.file, k->pos.line, k->pos.col,
		                    k->text, led->keys[K_FOLLOWS].text);
	return 0;
}

static int ruleset_check(struct ht_ruleset *rs, struct ht_error *err)
{
	int ret;

	for (size_t i = 0; i < rs->nrules; i++) {
		struct ht_rule *r = rs->rules[i];
		struct ht_name *n = rules_name(rs, r->id, false);
		enum ht_each fam = name_any_inst(n, r->id);

		if (fam)
			return ht_error_set(err, EINVAL, "%s:%u:%u: rule id '%s' is already the name of "
			                    "a per-%s fact (%s.INSTANCE%s)", r->pos.file, r->pos.line,
			                    r->pos.col + 1, r->id, each_kinds[fam].what,
			                    each_kinds[fam].family, r->id + strlen(each_kinds[fam].family));
		if (name_def(n, r->id) || rules_var_find(rs, r->id))
			return ht_error_set(err, EINVAL, "%s:%u:%u: rule id '%s' is already the name of "
			                    "a %s", r->pos.file, r->pos.line, r->pos.col + 1, r->id,
			                    name_def(n, r->id) ? "fact" : "workload variable");
		if (r->kind != HT_TARGET_ADVICE && !r->keys[K_VALUE].expr)
			return ht_error_set(err, EINVAL, "%s:%u:%u: rule '%s' needs a 'value'",
			                    r->pos.file, r->pos.line, r->pos.col, r->id);
		if (r->kind == HT_TARGET_NONE) {
			for (int k = K_CURRENT; k < K__MAX; k++)
				if (k != K_VALUE && k != K_RATIONALE && k != K_DIRECTION && k != K_UNIT &&
				    k != K_EACH && k != K_WRITABLE && k != K_DEFAULT && r->keys[k].text)
					return ht_error_set(err, EINVAL, "%s:%u:%u: '%s' needs a 'target' "
					                    "(rule '%s' is a value only)",
					                    r->keys[k].pos.file, r->keys[k].pos.line,
					                    r->keys[k].pos.col, rules_key_name(k), r->id);
		}
	}
	for (size_t i = 0; i < rs->nrules; i++) {
		struct ht_rule *r = rs->rules[i];

		rs->check_depth = 0;
		rs->check_scope = 0;
		ret = check_rule(rs, r, &r->pos, err);
		if (ret < 0)
			return ret;
		rs->check_scope = r->each ? 1u << r->each : 0;
		if (r->kind == HT_TARGET_CHANNELS && r->each != HT_EACH_NIC)
			return ht_error_set(err, EINVAL, "%s:%u:%u: a channels target needs 'each = nic'",
			                    r->keys[K_TARGET].pos.file, r->keys[K_TARGET].pos.line,
			                    r->keys[K_TARGET].pos.col);
		if (r->kind == HT_TARGET_LIMIT && r->each != HT_EACH_PROCESS)
			return ht_error_set(err, EINVAL, "%s:%u:%u: a limit target needs 'each = process'",
			                    r->keys[K_TARGET].pos.file, r->keys[K_TARGET].pos.line,
			                    r->keys[K_TARGET].pos.col);
		if ((r->kind == HT_TARGET_SYSCTL || r->kind == HT_TARGET_MODULE) && r->each)
			return ht_error_set(err, EINVAL, "%s:%u:%u: a %s target is one key of the host: "
			                    "not with 'each' (give the per-%s rule a 'lever' to it)",
			                    r->keys[K_TARGET].pos.file, r->keys[K_TARGET].pos.line,
			                    r->keys[K_TARGET].pos.col, ht_target_kind_name(r->kind),
			                    each_kinds[r->each].what);
		if ((r->kind == HT_TARGET_SYSCTL || r->kind == HT_TARGET_MODULE ||
		     r->kind == HT_TARGET_CHANNELS || r->kind == HT_TARGET_LIMIT) &&
		    r->type != HT_T_INT) {
			const struct ht_srcpos *p = ht_expr_pos(r->keys[K_VALUE].expr);

			return ht_error_set(err, EINVAL, "%s:%u:%u: type error: the value of a %s target "
			                    "must be a number, got a %s", p->file, p->line, p->col,
			                    ht_target_kind_name(r->kind), ht_type_name(r->type));
		}
		ret = check_expr(rs, &r->keys[K_WRITABLE], HT_T_BOOL, "'writable'", err);
		if (ret >= 0)
			ret = check_expr(rs, &r->keys[K_DEFAULT], HT_T_NONE, NULL, err);
		if (ret >= 0)
			ret = check_expr(rs, &r->keys[K_UNLIMITED], HT_T_INT, "'unlimited'", err);
		if (ret >= 0)
			ret = check_expr(rs, &r->keys[K_SEVERITY], HT_T_STR, "'severity'", err);
		if (ret >= 0)
			ret = check_expr(rs, &r->keys[K_CURRENT], HT_T_NONE, NULL, err);
		if (ret < 0)
			return ret;
		if (!r->keys[K_CURRENT].expr && r->target &&
		    !name_def(rules_name(rs, r->target, true), r->target) &&
		    !(r->each && name_inst(rules_name(rs, r->target, true), r->each, r->target)))
			return ht_error_set(err, EINVAL, "%s:%u:%u: '%s' is not a fact hosttune collects; "
			                    "give the rule a 'current'", r->keys[K_TARGET].pos.file,
			                    r->keys[K_TARGET].pos.line, r->keys[K_TARGET].pos.col,
			                    r->target);
		ret = check_tmpl(rs, r, K_EXPLAIN, r->tmpl, r->ntmpl, err);
		if (ret >= 0)
			ret = check_tmpl(rs, r, K_REMEDY, r->remedy, r->nremedy, err);
		if (ret >= 0)
			ret = check_tmpl(rs, r, K_OWNER, r->owner, r->nowner, err);
		if (ret >= 0 && r->nowner > 0 && !r->keys[K_WRITABLE].expr)
			ret = ht_error_set(err, EINVAL, "%s:%u:%u: 'owner' without 'writable' in rule "
			                   "'%s': owner says who sets the value where hosttune may "
			                   "not write it", r->keys[K_OWNER].pos.file,
			                   r->keys[K_OWNER].pos.line, r->keys[K_OWNER].pos.col, r->id);
		if (ret >= 0)
			ret = check_expr(rs, &r->keys[K_LEVER], HT_T_STR, "'lever'", err);
		if (ret >= 0)
			ret = check_follows(rs, r, err);
		if (ret >= 0)
			ret = check_limit_cases(rs, r, err);
		if (ret < 0)
			return ret;
	}
	rs->check_scope = 0;
	rs->checked = true;
	return 0;
}

int ht_ruleset_check(struct ht_ruleset *rs, struct ht_error *err)
{
	int ret = ruleset_check(rs, err);

	/*
	 * The type checker reports an unknown name as -ENOENT; to the caller it is a
	 * mistake in a rules file like any other, and -ENOENT would read as "no rules
	 * file found" (hosttune then suggests --rules).
	 */
	return ret < 0 && ret != -ENOMEM ? -EINVAL : ret;
}

/* ---- evaluation --------------------------------------------------------- */

static int rule_value(struct ht_ruleset *rs, struct ht_rule *r, struct ht_value *out,
                      struct ht_error *err);

/* Notes that an input (a fact or workload variable's name, not owned) was read. */
static void trace_add(struct ht_ruleset *rs, const char *name)
{
	if (rs->ntrace < ARRAY_SIZE(rs->trace))
		rs->trace[rs->ntrace++] = name;
}

/*
 * After an integer overflow in an expression: the message gets the inputs
 * that expression read, rules' included (trace[from..]), each with its
 * value and where it came from, so a --set or a fact is named: "...: integer
 * overflow in '*' (inputs: --set workload.conn_rate=1000000, mem.total =
 * 503316480 from /proc/meminfo MemTotal)". Once: an outer expression
 * leaves the message alone.
 */
static void name_inputs(struct ht_ruleset *rs, size_t from, struct ht_error *err)
{
	size_t len = strlen(err->msg), n = 0;

	if (strstr(err->msg, " (inputs: ") || strstr(err->msg, " (no inputs") || len == 0)
		return;
	for (size_t i = from; i < rs->ntrace; i++) {
		const char *name = rs->trace[i];
		const struct ht_fact *f = NULL;
		const struct ht_var *v = rules_var_of_rules(rs, name);
		_cleanup_free_ char *val = NULL;
		bool seen = false;
		int w;

		for (size_t j = from; j < i; j++)
			seen = seen || strcmp(rs->trace[j], name) == 0;
		if (seen)
			continue;
		if (!v && rs->facts)
			f = ht_facts_get(rs->facts, name);
		if (!v && !f)
			continue;
		/*
		 * A fact beyond 2^53 (no count, size or rate a host has: an
		 * "unlimited" 2^63 - 1, or garbage in a tree or a facts file)
		 * caused it; one with plausible values points at the rule.
		 */
		if (v && v->pos.file && strcmp(v->pos.file, "--set") == 0)
			rs->ovf_set = true;
		else if (!v && f->value.type == HT_T_INT &&
		         (f->value.i >= INT64_C(1) << 53 || f->value.i <= -(INT64_C(1) << 53)))
			rs->ovf_fact = true;
		val = ht_value_format(v ? &v->value : &f->value);
		if (!val)
			return;
		if (v && v->pos.file && strcmp(v->pos.file, "--set") == 0)
			w = snprintf(err->msg + len, sizeof(err->msg) - len, "%s--set %s=%s",
			             n ? ", " : " (inputs: ", name, val);
		else if (v)
			w = snprintf(err->msg + len, sizeof(err->msg) - len, "%s%s = %s from %s:%u",
			             n ? ", " : " (inputs: ", name, val, v->pos.file, v->pos.line);
		else
			w = snprintf(err->msg + len, sizeof(err->msg) - len, "%s%s = %s%s%s",
			             n ? ", " : " (inputs: ", name, val, f->source ? " from " : "",
			             f->source ? f->source : "");
		if (w < 0 || (size_t)w >= sizeof(err->msg) - len)
			break;
		len += (size_t)w;
		n++;
	}
	if (len + 2 < sizeof(err->msg))
		snprintf(err->msg + len, sizeof(err->msg) - len, "%s", n ? ")" : " (no inputs)");
}

/*
 * The instances of family @e for this evaluation: its list fact (asked for
 * the first time a rule or an aggregate needs it), split at blanks. A list
 * that is missing or unavailable gives none. Returns 0 or -ENOMEM, or the
 * error of the fact's provider (err set).
 */
static int family_read(struct ht_ruleset *rs, enum ht_each e, struct ht_error *err)
{
	struct ht_family_state *fs = &rs->fam[e];
	const struct ht_fact *f;
	size_t n = 0;
	char *w;
	int r;

	if (fs->read)
		return 0;
	r = ht_facts_need(rs->facts, each_kinds[e].list, rs->need_flags, &f, err);
	if (r < 0)
		return r;
	fs->read = true;
	fs->n = 0;
	fs->cur = -1;
	if (!f || f->value.type != HT_T_STR)
		return 0;
	fs->names = malloc(strlen(f->value.s) + 1);
	fs->inst = calloc(strlen(f->value.s) / 2 + 1, sizeof(*fs->inst));
	if (!fs->names || !fs->inst)
		return -ENOMEM;
	w = fs->names;
	for (const char *p = f->value.s; *p;) {
		size_t len;

		p += strspn(p, " \t");
		len = strcspn(p, " \t");
		if (!len)
			break;
		memcpy(w, p, len);
		w[len] = '\0';
		fs->inst[n++] = w;
		w += len + 1;
		p += len;
	}
	fs->n = n;
	return 0;
}

/* ht_iterate_cb: each instance of @family current in turn, for an aggregate. */
static int iterate(const char *family, const struct ht_srcpos *pos, ht_instance_fn fn, void *ctx,
                   struct ht_error *err, void *userdata)
{
	struct ht_ruleset *rs = userdata;
	enum ht_each e = family_by_name(family);
	const struct ht_fact *list;
	long saved;
	int r;

	if (!e)
		return -ENOENT;
	r = family_read(rs, e, err);
	if (r < 0)
		return r;
	list = ht_facts_get(rs->facts, each_kinds[e].list);
	if (!list)
		return ht_error_set(err, ENODATA, "%s:%u:%u: %s was not collected", pos->file,
		                    pos->line, pos->col, each_kinds[e].list);
	if (list->value.type == HT_T_NONE)
		return ht_error_set(err, ENODATA, "%s is unavailable (%s%s%s)", each_kinds[e].list,
		                    strerror(list->error ? list->error : ENODATA),
		                    list->source ? ": " : "", list->source ? list->source : "");
	saved = rs->fam[e].cur;
	r = 0;
	for (size_t k = 0; k < rs->fam[e].n && r == 0; k++) {
		rs->fam[e].cur = (long)k;
		r = fn(ctx);
	}
	rs->fam[e].cur = saved;
	return r < 0 ? r : 0;
}

/* The value of FAMILY.name: the current instance itself (a port is a number). */
static int instance_value(struct ht_ruleset *rs, enum ht_each e, const char *name,
                          struct ht_value *out, struct ht_error *err)
{
	const char *inst = rs->fam[e].inst[rs->fam[e].cur];

	if (each_kinds[e].type == HT_T_INT) {
		char *end;
		long long n;

		errno = 0;
		n = strtoll(inst, &end, 10);
		if (errno || end == inst || *end)
			return ht_error_set(err, EINVAL, "%s: '%s' in %s is not a number", name, inst,
			                    each_kinds[e].list);
		*out = ht_int(n);
		return 0;
	}
	out->type = HT_T_STR;
	/*
	 * A cgroup's path, an interface's or a process's name, read back from the
	 * escaped name their facts have. An interface or process name of an older
	 * facts file (kept as it was, or its comm with '_' for odd bytes) that is
	 * no escape is taken as it is.
	 */
	if (each_escaped(e)) {
		out->s = ht_name_unescape(inst);
		if (!out->s && errno == EINVAL && e != HT_EACH_CGROUP)
			out->s = strdup(inst);
		else if (!out->s && errno == EINVAL)
			return ht_error_set(err, EINVAL, "%s: '%s' in %s is no escaped name", name, inst,
			                    each_kinds[e].list);
	} else {
		out->s = strdup(inst);
	}
	return out->s ? 0 : -ENOMEM;
}

/*
 * The fact a family's name stands for with its instance current:
 * process.nofile is process.PID.nofile then. *inst_name gets that name
 * (malloc()ed), or NULL when @name is not of a family with a current
 * instance. Returns 0 or -ENOMEM.
 */
static int current_fact_name(struct ht_ruleset *rs, const char *name, char **inst_name)
{
	enum ht_each e = any_inst_def(name);

	*inst_name = NULL;
	if (!e || rs->fam[e].cur < 0 || strlen(name) <= strlen(each_kinds[e].family))
		return 0;
	if (asprintf(inst_name, "%s.%s.%s", each_kinds[e].family, rs->fam[e].inst[rs->fam[e].cur],
	             name + strlen(each_kinds[e].family) + 1) < 0) {
		*inst_name = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* source(NAME): where the fact came from, as {NAME|source} says it. */
static int source_of(const char *name, const struct ht_srcpos *pos, char **out,
                     struct ht_error *err, void *userdata)
{
	struct ht_ruleset *rs = userdata;
	_cleanup_free_ char *inst_name = NULL;
	const struct ht_fact *f = NULL;
	struct ht_var *v;
	int ret;

	(void)pos;
	if ((v = rules_var_of_rules(rs, name))) {
		/* A variable's: the profile line that set it, or "--set" (the command
		 * line or the configuration's [set]). */
		if (!v->pos.file)
			return ht_error_set(err, ENODATA, "%s has no source", name);
		if (strcmp(v->pos.file, "--set") == 0)
			*out = strdup("--set");
		else if (asprintf(out, "%s:%u", v->pos.file, v->pos.line) < 0)
			*out = NULL;
		return *out ? 0 : -ENOMEM;
	}
	if (rule_find(rs, name))
		return ht_error_set(err, ENODATA, "%s is a rule: it has no source", name);
	if ((ret = current_fact_name(rs, name, &inst_name)) < 0)
		return ret;
	if (inst_name)
		name = inst_name;
	if (rs->facts && (ret = ht_facts_need(rs->facts, name, rs->need_flags, &f, err)) < 0)
		return ret;
	if (!f || f->value.type == HT_T_NONE || !f->source)
		return ht_error_set(err, ENODATA, "%s %s", name,
		                    !f ? "was not collected" : f->value.type == HT_T_NONE
		                                                 ? "is unavailable" : "has no source");
	trace_add(rs, f->name);
	*out = strdup(f->source);
	return *out ? 0 : -ENOMEM;
}

static int lookup(const char *name, const struct ht_srcpos *pos, struct ht_value *out,
                  struct ht_error *err, void *userdata)
{
	struct ht_ruleset *rs = userdata;
	const struct ht_fact *f;
	struct ht_rule *r;
	struct ht_var *v;
	enum ht_each e;
	int ret;

	_cleanup_free_ char *inst_name = NULL;

	(void)pos;
	if ((r = rule_find(rs, name)))
		return rule_value(rs, r, out, err);
	if ((v = rules_var_of_rules(rs, name))) {
		trace_add(rs, v->name);
		return ht_value_copy(out, &v->value);
	}
	if (rs->no_instance && (strcmp(name, each_kinds[rs->no_instance].name) == 0 ||
	                        inst_def(rs->no_instance, name)))
		return ht_error_set(err, ENXIO, "%s: no %s to evaluate it for", name,
		                    each_kinds[rs->no_instance].what);
	e = any_inst_def(name);
	if (e && rs->fam[e].cur >= 0 && strcmp(name, each_kinds[e].name) == 0)
		return instance_value(rs, e, name, out, err);
	if ((ret = current_fact_name(rs, name, &inst_name)) < 0)
		return ret;
	if (inst_name)
		name = inst_name;
	f = NULL;
	if (rs->facts) {
		ret = ht_facts_need(rs->facts, name, rs->need_flags, &f, err);
		if (ret < 0)
			return ret;
	}
	if (!f)
		return ht_error_set(err, ENODATA, "%s was not collected", name);
	if (f->value.type == HT_T_NONE) {
		/* Refused to this user: a finding that needs it is n/a, not left out (evaluate_finding()). */
		/*
		 * A source that says it was refused even to root (another PID
		 * namespace, a ptrace restriction) is not "needs root".
		 */
		if ((f->error == EPERM || f->error == EACCES) && !rs->denied[0])
			snprintf(rs->denied, sizeof(rs->denied), "%s: %s is unavailable (%s%s%s)",
			         f->source && strstr(f->source, "refused even to root")
			                 ? "cannot be read here"
			                 : "needs root",
			         name, strerror(f->error), f->source ? ": " : "",
			         f->source ? f->source : "");
		return ht_error_set(err, ENODATA, "%s is unavailable (%s%s%s)", name,
		                    strerror(f->error ? f->error : ENODATA), f->source ? ": " : "",
		                    f->source ? f->source : "");
	}
	trace_add(rs, f->name);
	return ht_value_copy(out, &f->value);
}

static int eval_key(struct ht_ruleset *rs, const struct ht_key *k, struct ht_value *out,
                    struct ht_error *err)
{
	size_t from = rs->ntrace;
	int ret;

	err->msg[0] = '\0';
	ret = ht_expr_eval_ops(k->expr, &expr_ops, rs, out, err);
	if (ret == -ERANGE)
		name_inputs(rs, from, err);
	return ret;
}

/* -ENODATA when `when` is false or needs an unavailable fact; 1 when it holds. */
static int eval_when(struct ht_ruleset *rs, struct ht_rule *r, struct ht_error *err)
{
	struct ht_value v = { 0 };
	int ret;

	if (!r->keys[K_WHEN].expr)
		return 1;
	ret = eval_key(rs, &r->keys[K_WHEN], &v, err);
	if (ret < 0)
		return ret;
	ret = v.b ? 1 : 0;
	ht_value_clear(&v);
	return ret;
}

/* A sysctl or module parameter takes integers: 34.0 is 34, 34.13 is an error in the rule. */
static int to_integer(const struct ht_rule *r, struct ht_value *v, struct ht_error *err)
{
	const struct ht_srcpos *p = ht_expr_pos(r->keys[K_VALUE].expr);

	if (v->type != HT_T_DEC)
		return 0;
	if (v->d != floor(v->d) || fabs(v->d) >= 9.2e18) {
		_cleanup_free_ char *s = ht_value_display(v);

		return ht_error_set(err, EINVAL, "%s:%u:%u: the value of %s must be an integer, got %s; "
		                    "use floor() or ceil()", p->file, p->line, p->col, r->target,
		                    s ? s : "a decimal");
	}
	*v = ht_int((int64_t)v->d);
	return 0;
}

/* Which instance an `each` rule's value is for now (rules-internal.h, eval_inst). */
static long rule_instance(const struct ht_ruleset *rs, const struct ht_rule *r)
{
	if (!r->each)
		return -1;
	if (rs->no_instance == r->each)
		return -2;
	return rs->fam[r->each].cur;
}

static int rule_value(struct ht_ruleset *rs, struct ht_rule *r, struct ht_value *out,
                      struct ht_error *err)
{
	long inst = rule_instance(rs, r);

	if (r->eval_state == ST_BUSY) /* the checker rules this out; stay safe anyway */
		return ht_error_set(err, ELOOP, "%s:%u:%u: dependency cycle at rule '%s'", r->pos.file,
		                    r->pos.line, r->pos.col, r->id);
	if (r->eval_state == ST_DONE && (r->eval_gen != rs->gen || r->eval_inst != inst)) {
		/* Computed for another evaluation or instance: again for this one. */
		ht_value_clear(&r->val);
		r->eval_state = ST_NEW;
	}
	if (r->eval_state == ST_NEW) {
		size_t from = rs->ntrace;
		/* Here, not in the rule: 168 rules would each carry 1 KiB of message. */
		struct ht_error e = { "" };
		/* What was refused before this rule: its own refusal is recorded alone. */
		_cleanup_free_ char *outer_denied = rs->denied[0] ? strdup(rs->denied) : NULL;

		if (rs->denied[0] && !outer_denied)
			return -ENOMEM;
		rs->denied[0] = '\0';
		r->eval_gen = rs->gen;
		r->eval_inst = inst;
		r->eval_state = ST_BUSY;
		free(r->eval_msg);
		r->eval_msg = NULL;
		free(r->eval_denied);
		r->eval_denied = NULL;
		r->eval_ret = eval_when(rs, r, &e);
		if (r->eval_ret == 0)
			r->eval_ret = ht_error_set(&e, ENODATA, "rule %s does not apply here", r->id);
		if (r->eval_ret > 0)
			r->eval_ret = eval_key(rs, &r->keys[K_VALUE], &r->val, &e);
		if (r->eval_ret >= 0 && (r->kind == HT_TARGET_SYSCTL || r->kind == HT_TARGET_MODULE))
			r->eval_ret = to_integer(r, &r->val, &e);
		if (r->eval_ret < 0 && !(r->eval_msg = strdup(e.msg)) && r->eval_ret != -ENOMEM)
			r->eval_ret = -ENOMEM;
		if (rs->denied[0] && !(r->eval_denied = strdup(rs->denied)))
			r->eval_ret = -ENOMEM;
		r->eval_ovf_fact = rs->ovf_fact;
		r->eval_ovf_set = rs->ovf_set;
		if (outer_denied)
			snprintf(rs->denied, sizeof(rs->denied), "%s", outer_denied);
		r->eval_state = ST_DONE;
		/* Its distinct inputs, for an overflow in a rule that reads its value later. */
		r->ninputs = 0;
		for (size_t i = from; i < rs->ntrace && r->ninputs < ARRAY_SIZE(r->inputs); i++) {
			bool seen = false;

			for (size_t j = 0; j < r->ninputs; j++)
				seen = seen || strcmp(r->inputs[j], rs->trace[i]) == 0;
			if (!seen)
				r->inputs[r->ninputs++] = rs->trace[i];
		}
	} else {
		for (size_t i = 0; i < r->ninputs; i++)
			trace_add(rs, r->inputs[i]);
		/* A value computed for an earlier finding: what it was refused still holds. */
		if (r->eval_denied && !rs->denied[0])
			snprintf(rs->denied, sizeof(rs->denied), "%s", r->eval_denied);
	}
	if (r->eval_ret < 0) {
		if (r->eval_ret == -ERANGE) {
			rs->ovf_fact = rs->ovf_fact || r->eval_ovf_fact;
			rs->ovf_set = rs->ovf_set || r->eval_ovf_set;
		}
		if (err)
			snprintf(err->msg, sizeof(err->msg), "%s", r->eval_msg ? r->eval_msg : "");
		return r->eval_ret;
	}
	return ht_value_copy(out, &r->val);
}

static int append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t nc = (*cap ? *cap * 2 : 256) + n;
		char *nb = realloc(*buf, nc);

		if (!nb)
			return -ENOMEM;
		*buf = nb;
		*cap = nc;
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

static char *format_hole(const struct ht_tmpl_seg *seg, const struct ht_value *v)
{
	char *s = NULL;

	switch (seg->fmt) {
	case TMPL_BYTES:
		return ht_format_bytes(ht_value_as_double(v));
	case TMPL_PCT: {
		double pct = ht_value_as_double(v) * 100;

		if (asprintf(&s, pct == floor(pct) ? "%.0f%%" : "%.1f%%", pct) < 0)
			return NULL;
		return s;
	}
	case TMPL_FIXED:
		if (asprintf(&s, "%.*f", seg->prec, ht_value_as_double(v)) < 0)
			return NULL;
		return s;
	case TMPL_SECS: {
		/* Whole seconds from 1 s up; a shorter interval keeps two decimals (0.25 s, not 0 s). */
		double secs = ht_value_as_double(v);

		if (asprintf(&s, "%.*f s", fabs(secs) < 1 ? 2 : 0, secs) < 0)
			return NULL;
		return s;
	}
	case TMPL_PLURAL: {
		_cleanup_free_ char *n = ht_value_display(v);
		/* English: the singular for exactly one, the plural for 0, 2, 0.5, -1 ... */
		const char *word = ht_value_as_double(v) == 1 ? seg->one : seg->many;

		if (!n || asprintf(&s, "%s %s", n, word) < 0)
			return NULL;
		return s;
	}
	default:
		/*
		 * Text from the host (a process's comm, a file's value) shown in one
		 * line: a newline, tab or bidi control in it is escaped, so that it
		 * cannot forge a line of the report or reorder it.
		 */
		if (v->type == HT_T_STR)
			return ht_escape(v->s, HT_ESCAPE_CONTROL);
		return ht_value_display(v);
	}
}

/* Holes that render empty leave runs of blanks; one space between words is enough. */
static void collapse_blanks(char *s)
{
	char *w = s;
	bool blank = false;

	for (const char *p = s; *p; p++) {
		if (*p == ' ') {
			blank = w != s;
			continue;
		}
		if (blank)
			*w++ = ' ';
		blank = false;
		*w++ = *p;
	}
	*w = '\0';
}

static int render(struct ht_ruleset *rs, const struct ht_tmpl_seg *segs, size_t nsegs, char **out,
                  struct ht_error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;
	int ret;

	if ((ret = append(&buf, &len, &cap, "", 0)) < 0)
		return ret;
	/* skip > 0 inside a {?COND} whose COND is false (or unavailable) */
	for (size_t i = 0, depth = 0, skip = 0; i < nsegs; i++) {
		const struct ht_tmpl_seg *seg = &segs[i];
		struct ht_value v = { 0 };
		_cleanup_free_ char *s = NULL;

		if (seg->fmt == TMPL_END) {
			if (skip == depth)
				skip = 0;
			depth--;
			continue;
		}
		if (seg->fmt == TMPL_IF) {
			bool show = false;

			depth++;
			if (skip == 0) {
				err->msg[0] = '\0';
				ret = ht_expr_eval_ops(seg->expr, &expr_ops, rs, &v, err);
				if (ret < 0 && ret != -ENODATA)
					return ret;
				show = ret == 0 && v.b;
				ht_value_clear(&v);
				if (!show)
					skip = depth;
			}
			continue;
		}
		if (skip)
			continue;
		if (seg->text) {
			ret = append(&buf, &len, &cap, seg->text, strlen(seg->text));
			if (ret < 0)
				return ret;
			continue;
		}
		err->msg[0] = '\0';
		ret = ht_expr_eval_ops(seg->expr, &expr_ops, rs, &v, err);
		if (ret == -ENODATA)
			s = strdup("(unavailable)");
		else if (ret < 0)
			return ret;
		else if (seg->fmt == TMPL_SOURCE) {
			/* Where the fact came from; a rule or variable has no source. In an
			 * each rule, FAMILY.X is the current instance's fact. */
			_cleanup_free_ char *inst_name = NULL;
			const char *fname = ht_expr_name(seg->expr);
			const struct ht_fact *f;

			if ((ret = current_fact_name(rs, fname, &inst_name)) < 0) {
				ht_value_clear(&v);
				return ret;
			}
			f = rs->facts ? ht_facts_get(rs->facts, inst_name ? inst_name : fname) : NULL;
			s = strdup(f && f->source ? f->source : "(no source)");
		} else
			s = format_hole(seg, &v);
		ht_value_clear(&v);
		if (!s)
			return -ENOMEM;
		if ((ret = append(&buf, &len, &cap, s, strlen(s))) < 0)
			return ret;
	}
	*out = TAKE_PTR(buf);
	collapse_blanks(*out);
	return 0;
}

/* The finding's current value, and whether its target has no live value now (no_live). */
static int finding_current(struct ht_ruleset *rs, struct ht_rule *r, struct ht_finding *f,
                           struct ht_error *err)
{
	struct ht_value tv = { 0 };
	int ret = 0;

	if (r->keys[K_CURRENT].expr)
		ret = eval_key(rs, &r->keys[K_CURRENT], &f->current, err);
	else if (r->target)
		ret = lookup(r->target, &r->pos, &f->current, err, rs);
	if (ret < 0 && ret != -ENODATA)
		return ret;
	if (ret == -ENODATA && r->target && !r->keys[K_CURRENT].expr && r->kind == HT_TARGET_SYSCTL) {
		/* A key this kernel has no file for now (a module not loaded, an interface not there). */
		const struct ht_fact *k = rs->facts ? ht_facts_get(rs->facts, r->target) : NULL;

		f->no_live = k && k->error == ENOENT;
		err->msg[0] = '\0';
		return 0;
	}
	if (!r->target || !r->keys[K_CURRENT].expr ||
	    (r->kind != HT_TARGET_SYSCTL && r->kind != HT_TARGET_MODULE))
		return 0;
	/* The rule judges another value (what a module will load with): no live one now. */
	ret = lookup(r->target, &r->pos, &tv, err, rs);
	if (ret < 0 && ret != -ENODATA)
		return ret;
	f->no_live = ret == -ENODATA;
	ht_value_clear(&tv);
	err->msg[0] = '\0';
	return 0;
}

/* The severity key's value into f->severity ("ok" without one). 0, -ENODATA or an error. */
/* @a and @b are not the same value (numbers compared as numbers). */
static bool values_differ(const struct ht_value *a, const struct ht_value *b)
{
	if (ht_type_is_number(a->type) && ht_type_is_number(b->type))
		return ht_value_as_double(a) != ht_value_as_double(b);
	if (a->type != b->type)
		return true;
	if (a->type == HT_T_STR)
		return strcmp(a->s, b->s) != 0;
	if (a->type == HT_T_BOOL)
		return a->b != b->b;
	return false;
}

/*
 * An optional figure of a limit (`events`, `holder`, ...): 1 with *@out set,
 * 0 when the rule has no such key or the host did not give it, or an error.
 */
static int limit_key(struct ht_ruleset *rs, struct ht_rule *r, int key, struct ht_value *out,
                     struct ht_error *err)
{
	int ret;

	if (!r->keys[key].expr)
		return 0;
	ret = eval_key(rs, &r->keys[key], out, err);
	if (ret == -ENODATA) {
		err->msg[0] = '\0';
		return 0;
	}
	return ret < 0 ? ret : 1;
}

/* A copy of string @v's text into *@out; -ENOMEM. */
static int limit_str(struct ht_value *v, char **out)
{
	*out = strdup(v->s);
	ht_value_clear(v);
	return *out ? 0 : -ENOMEM;
}

/*
 * The figures of a limit rule (`limit` and `usage`, which it cannot do
 * without: -ENODATA when one is unavailable), and of what it may say about
 * them. 0 or an error.
 */
static int finding_limit(struct ht_ruleset *rs, struct ht_rule *r, struct ht_finding *f,
                         struct ht_error *err)
{
	struct ht_limit_use *u = &f->limit;
	struct ht_value v = { 0 };
	int ret;

	if (!r->keys[K_LIMIT].expr)
		return 0;
	if ((ret = eval_key(rs, &r->keys[K_LIMIT], &u->limit_v, err)) < 0)
		return ret;
	u->limit = ht_value_as_double(&u->limit_v);
	if ((ret = eval_key(rs, &r->keys[K_USAGE], &u->usage_v, err)) < 0)
		return ret;
	u->usage = ht_value_as_double(&u->usage_v);
	u->set = true;
	if ((ret = limit_key(rs, r, K_EVENTS, &v, err)) < 0)
		return ret;
	if (ret > 0) {
		u->events_known = true;
		u->events = ht_value_as_double(&v);
		ht_value_clear(&v);
	}
	if ((ret = limit_key(rs, r, K_SOURCE, &v, err)) < 0 ||
	    (ret > 0 && (ret = limit_str(&v, &u->source)) < 0))
		return ret;
	return 0;
}

/*
 * Who holds a limit at warning or above that is 75% full or bit
 * (`holder`, `held`, `stray`, `rest`): counted only then, since counting
 * holders can walk every process. Unknown holders leave u->holder NULL and the reason in
 * u->holder_why. 0 or an error.
 */
static int limit_holders(struct ht_ruleset *rs, struct ht_rule *r, struct ht_finding *f,
                         struct ht_error *err)
{
	struct ht_limit_use *u = &f->limit;
	struct ht_value v = { 0 };
	int ret;

	/* Only a limit that is nearly full or bit has holders worth naming. */
	if (!u->set || !r->keys[K_HOLDER].expr || f->severity < HT_SEV_WARNING ||
	    !((u->events_known && u->events > 0) ||
	      (u->limit > 0 && u->usage >= u->limit - u->limit / 4)))
		return 0;
	ret = eval_key(rs, &r->keys[K_HOLDER], &v, err);
	if (ret == -ENODATA) {
		u->holder_why = strdup(err->msg[0] ? err->msg : "a fact it needs is unavailable");
		err->msg[0] = '\0';
		return u->holder_why ? 0 : -ENOMEM;
	}
	if (ret < 0 || (ret = limit_str(&v, &u->holder)) < 0)
		return ret;
	/* A holder without a name is none. */
	if (!*u->holder) {
		free(u->holder);
		u->holder = NULL;
		return 0;
	}
	if ((ret = limit_key(rs, r, K_HELD, &u->held_v, err)) < 0)
		return ret;
	/* What no holder can hold (more than is in use, less than nothing) is not told. */
	if (ret > 0 && ht_value_as_double(&u->held_v) >= 0 &&
	    ht_value_as_double(&u->held_v) <= u->usage) {
		u->held_known = true;
		u->held = ht_value_as_double(&u->held_v);
	} else
		ht_value_clear(&u->held_v);
	if ((ret = limit_key(rs, r, K_STRAY, &v, err)) < 0)
		return ret;
	u->stray = ret > 0 && v.b;
	ht_value_clear(&v);
	if ((ret = limit_key(rs, r, K_REST, &v, err)) < 0 ||
	    (ret > 0 && (ret = limit_str(&v, &u->rest)) < 0))
		return ret;
	return 0;
}

/* The holder holds most of the usage and is not what the limit is for. */
static bool limit_stray_holds_most(const struct ht_limit_use *u)
{
	return u->set && u->holder && u->held_known && u->stray && u->held * 2 > u->usage;
}

/*
 * The severity of a rule with cases or a limit: the first case whose
 * condition holds, else, for a limit, the limit's own cases: the limit bit
 * (events), 90% of it in use (full), 75% (high); else ok. -ENODATA when a
 * case's condition needs what is unavailable.
 */
static int finding_cases(struct ht_ruleset *rs, struct ht_rule *r, struct ht_finding *f,
                         struct ht_error *err)
{
	const struct ht_limit_use *u = &f->limit;

	for (size_t i = 0; i < r->ncases; i++) {
		struct ht_value v = { 0 };
		int ret = eval_key(rs, &r->cases[i].cond, &v, err);
		bool holds = ret == 0 && v.b;

		ht_value_clear(&v);
		if (ret < 0)
			return ret;
		if (holds) {
			f->severity = r->cases[i].severity;
			f->case_name = r->cases[i].name;
			return 0;
		}
	}
	if (!u->set)
		return 0;
	/* Written so that no product can overflow: usage >= limit - limit / 10. */
	if (u->events_known && u->events > 0) {
		f->severity = HT_SEV_CRITICAL;
		f->case_name = "events";
	} else if (u->limit > 0 && u->usage >= u->limit - u->limit / 10) {
		f->severity = HT_SEV_CRITICAL;
		f->case_name = "full";
	} else if (u->limit > 0 && u->usage >= u->limit - u->limit / 4) {
		f->severity = HT_SEV_WARNING;
		f->case_name = "high";
	}
	return 0;
}

static int finding_severity(struct ht_ruleset *rs, struct ht_rule *r, struct ht_finding *f,
                            struct ht_error *err)
{
	struct ht_value sev = { 0 };
	int ret;

	f->severity = HT_SEV_OK;
	if (r->ncases > 0 || r->keys[K_LIMIT].expr) {
		ret = finding_limit(rs, r, f, err);
		if (ret >= 0)
			ret = finding_cases(rs, r, f, err);
		return ret < 0 ? ret : limit_holders(rs, r, f, err);
	}
	/*
	 * No severity key: ok when the recommendation is what the host has,
	 * else info, so that a finding with a fix to offer is never "ok" (an ok
	 * finding has nothing to do).
	 */
	if (!r->keys[K_SEVERITY].expr) {
		if (r->target && f->recommended.type != HT_T_NONE &&
		    f->current.type != HT_T_NONE && values_differ(&f->recommended, &f->current))
			f->severity = HT_SEV_INFO;
		return 0;
	}
	ret = eval_key(rs, &r->keys[K_SEVERITY], &sev, err);
	if (ret < 0)
		return ret;
	if (ht_severity_from_name(sev.s, &f->severity) < 0) {
		const struct ht_srcpos *p = &r->keys[K_SEVERITY].pos;

		ret = ht_error_set(err, EINVAL, "%s:%u:%u: severity must be ok, info, warning or "
		                   "critical, got '%s'", p->file, p->line, p->col, sev.s);
	}
	ht_value_clear(&sev);
	return ret;
}

/*
 * `default`, `writable`, and direction = raise: kept when the host has more
 * than the recommendation, or the `unlimited` value (*@unlimited). 0 or an
 * error.
 */
static int finding_keys(struct ht_ruleset *rs, struct ht_rule *r, struct ht_finding *f,
                        bool *unlimited, struct ht_error *err)
{
	struct ht_value v = { 0 };
	int ret;

	*unlimited = false;
	if (r->keys[K_DEFAULT].expr) {
		ret = eval_key(rs, &r->keys[K_DEFAULT], &f->kernel_default, err);
		if (ret < 0 && ret != -ENODATA)
			return ret;
	}
	if (r->keys[K_WRITABLE].expr) {
		ret = eval_key(rs, &r->keys[K_WRITABLE], &v, err);
		if (ret < 0 && ret != -ENODATA)
			return ret;
		f->read_only = ret == 0 && !v.b;
		ht_value_clear(&v);
	}
	if (r->only_raise && ht_type_is_number(f->current.type) &&
	    ht_type_is_number(f->recommended.type) &&
	    ht_value_as_double(&f->current) > ht_value_as_double(&f->recommended)) {
		f->kept = true;
		/* Nothing to raise; a warning or critical (a full table) stands, with its remedy. */
		if (f->severity < HT_SEV_WARNING)
			f->severity = HT_SEV_OK;
	}
	/* `unlimited = 0`: the current value means no limit, above any a rule could raise it to. */
	if (!r->only_raise || !r->keys[K_UNLIMITED].expr || !ht_type_is_number(f->current.type))
		return 0;
	ret = eval_key(rs, &r->keys[K_UNLIMITED], &v, err);
	if (ret < 0 && ret != -ENODATA)
		return ret;
	*unlimited = ret == 0 && ht_value_as_double(&v) == ht_value_as_double(&f->current);
	if (*unlimited) {
		f->kept = true;
		f->severity = HT_SEV_OK;
	}
	ht_value_clear(&v);
	return 0;
}

/*
 * A figure of limit rule @r in its unit: IEC units for bytes, else the
 * number as a hole shows it (@v exactly when it has a value: an integer
 * past 2^53 as it is), else @x.
 */
static char *limit_figure(const struct ht_rule *r, const struct ht_value *v, double x)
{
	const char *unit = ht_rule_unit(r);
	char *s;

	if (unit && strcmp(unit, "bytes") == 0)
		return ht_format_bytes(v && v->type != HT_T_NONE ? ht_value_as_double(v) : x);
	if (v && v->type == HT_T_INT)
		return ht_value_display(v);
	if (asprintf(&s, x == floor(x) && fabs(x) < 1e15 ? "%.0f" : "%.1f", x) < 0)
		return NULL;
	return s;
}

/* What `events` counts: the title of the rule it names, else its text. */
static const char *limit_events_what(const struct ht_ruleset *rs, const struct ht_rule *r)
{
	const char *name = ht_expr_name(r->keys[K_EVENTS].expr);
	const struct ht_rule *e = name ? rule_find(rs, name) : NULL;

	return e && e->keys[K_TITLE].text ? e->keys[K_TITLE].text : r->keys[K_EVENTS].text;
}

/*
 * The limit's own paragraph, before the rule's explanation: what is in use
 * of what, whether it bit, who holds most of it, and where it is set.
 */
static int limit_paragraph(const struct ht_ruleset *rs, const struct ht_rule *r,
                           const struct ht_limit_use *u, char **out)
{
	const char *unit = ht_rule_unit(r);
	bool words = unit && strcmp(unit, "bytes") != 0;
	_cleanup_free_ char *use = limit_figure(r, &u->usage_v, u->usage);
	_cleanup_free_ char *lim = limit_figure(r, &u->limit_v, u->limit);
	_cleanup_free_ char *held = NULL, *rest = NULL;
	_cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL;
	/* To a tenth, but short of the limit is never 100.0%: 65535 of 65536 is 99.9%. */
	double pct = u->limit > 0 ? round(u->usage * 1000 / u->limit) / 10 : 0;

	if (pct >= 100 && u->usage < u->limit)
		pct = 99.9;

	if (!use || !lim)
		return -ENOMEM;
	if (asprintf(&a, u->limit > 0 ? "In use: %s of %s%s%s (%.1f%%)." : "In use: %s of %s%s%s.",
	             use, lim, words ? " " : "", words ? unit : "", pct) < 0)
		return -ENOMEM;
	if (u->events_known) {
		if (asprintf(&b, " Events at the limit: %.0f (%s).", u->events, limit_events_what(rs, r)) < 0)
			return -ENOMEM;
	}
	if (u->holder && !u->held_known &&
	    asprintf(&c, " The largest holder is %s.", u->holder) < 0)
		return -ENOMEM;
	if (u->holder && u->held_known) {
		if (!(held = limit_figure(r, &u->held_v, u->held)) ||
		    !(rest = limit_figure(r, NULL, u->usage > u->held ? u->usage - u->held : 0)))
			return -ENOMEM;
		if (asprintf(&c, " The largest holder is %s, with %s of it%s%s%s%s.%s", u->holder,
		             held, u->rest ? "; the other " : "", u->rest ? rest : "",
		             u->rest ? " are held by " : "", u->rest ? u->rest : "",
		             limit_stray_holds_most(u) ? " That is not what this limit is for: it "
		             "would fill any limit, and a larger one only delays the next fill." : "") < 0)
			return -ENOMEM;
	}
	if (!c && u->holder_why &&
	    asprintf(&c, " Who holds it is not known here: %s.", u->holder_why) < 0)
		return -ENOMEM;
	if (u->source && asprintf(&d, " Where it is set: %s.", u->source) < 0)
		return -ENOMEM;
	if (asprintf(out, "%s%s%s%s", a, b ? b : "", c ? c : "", d ? d : "") < 0)
		return -ENOMEM;
	return 0;
}

/* @a and @b joined by a space into *@a (either may be empty); -ENOMEM. */
static int join_text(char **a, const char *b)
{
	char *n;

	if (!b || !*b)
		return 0;
	if (asprintf(&n, "%s%s%s", *a, **a ? " " : "", b) < 0)
		return -ENOMEM;
	free(*a);
	*a = n;
	return 0;
}

/*
 * The remedy of a limit at warning or critical whose rule's remedy says
 * nothing: the holder when a stray one holds most of it, else the limit's
 * source (an advice target has no file fix). NULL in *@out when neither.
 */
static int limit_remedy(const struct ht_rule *r, const struct ht_finding *f, char **out)
{
	const struct ht_limit_use *u = &f->limit;
	_cleanup_free_ char *held = NULL;

	*out = NULL;
	if (!u->set || f->severity < HT_SEV_WARNING)
		return 0;
	if (limit_stray_holds_most(u)) {
		if (!(held = limit_figure(r, &u->held_v, u->held)))
			return -ENOMEM;
		if (asprintf(out, "stop what fills it, %s, with %s of it; raising the limit%s%s%s "
		             "only delays the next fill", u->holder, held, u->source ? " (" : "",
		             u->source ? u->source : "", u->source ? ")" : "") < 0)
			return *out = NULL, -ENOMEM;
		return 0;
	}
	if (r->kind == HT_TARGET_ADVICE && u->source &&
	    asprintf(out, "raise the limit where it is set: %s", u->source) < 0)
		return *out = NULL, -ENOMEM;
	return 0;
}

/* The finding recommends another value than the current one (or cannot tell). */
static bool finding_changes(const struct ht_finding *f)
{
	if (ht_type_is_number(f->current.type) && ht_type_is_number(f->recommended.type))
		return ht_value_as_double(&f->current) != ht_value_as_double(&f->recommended);
	if (f->current.type == HT_T_STR && f->recommended.type == HT_T_STR)
		return strcmp(f->current.s, f->recommended.s) != 0;
	return true;
}

/* The explanation and remedy templates, and the lever. 0 or an error. */
static int finding_texts(struct ht_ruleset *rs, struct ht_rule *r, struct ht_finding *f,
                         struct ht_error *err)
{
	struct ht_value lv = { 0 };
	bool modelled = r->ncases > 0 || f->limit.set;
	int ret = render(rs, r->tmpl, r->ntmpl, &f->explanation, err);

	if (ret < 0)
		return ret;
	if (f->limit.set) {
		_cleanup_free_ char *para = NULL;

		if ((ret = limit_paragraph(rs, r, &f->limit, &para)) < 0)
			return ret;
		if ((ret = join_text(&para, f->explanation)) < 0)
			return ret;
		free(f->explanation);
		f->explanation = TAKE_PTR(para);
	}
	for (size_t i = 0; i < r->ncases; i++)
		if (f->case_name == r->cases[i].name && r->cases[i].ntmpl > 0) {
			_cleanup_free_ char *ct = NULL;

			if ((ret = render(rs, r->cases[i].tmpl, r->cases[i].ntmpl, &ct, err)) < 0 ||
			    (ret = join_text(&f->explanation, ct)) < 0)
				return ret;
		}
	/*
	 * A rule of cases or a limit says what fixes it only when there is
	 * something to fix; a stray holder of most of a limit is the fix (below).
	 * The case's own remedy, when it has one, replaces the rule's.
	 */
	const struct ht_tmpl_seg *rsegs = r->remedy;
	size_t nrsegs = r->nremedy;
	bool none = false; /* the case's remedy is empty: it has none */

	for (size_t i = 0; i < r->ncases; i++)
		if (f->case_name == r->cases[i].name && r->cases[i].remedy_set) {
			rsegs = r->cases[i].remedy;
			nrsegs = r->cases[i].nremedy;
			none = nrsegs == 0;
		}
	if (nrsegs > 0 && !(modelled && f->severity == HT_SEV_OK) &&
	    !limit_stray_holds_most(&f->limit)) {
		ret = render(rs, rsegs, nrsegs, &f->remedy, err);
		if (ret < 0)
			return ret;
		if (!*f->remedy) {
			free(f->remedy);
			f->remedy = NULL;
		}
	}
	if (!f->remedy && !none && (ret = limit_remedy(r, f, &f->remedy)) < 0)
		return ret;
	/*
	 * Where hosttune may not write the value (writable false here), who sets
	 * it and the knob to turn come first, before what else fixes it.
	 */
	if (r->nowner > 0 && f->read_only && f->severity > HT_SEV_OK && finding_changes(f)) {
		_cleanup_free_ char *owner = NULL;

		if ((ret = render(rs, r->owner, r->nowner, &owner, err)) < 0)
			return ret;
		if (*owner) {
			if (f->remedy && (ret = join_text(&owner, f->remedy)) < 0)
				return ret;
			free(f->remedy);
			f->remedy = TAKE_PTR(owner);
		}
	}
	if (!r->keys[K_LEVER].expr)
		return 0;
	ret = eval_key(rs, &r->keys[K_LEVER], &lv, err);
	if (ret < 0 && ret != -ENODATA)
		return ret;
	if (ret == 0 && lv.s[0]) {
		if (!ht_ruleset_find(rs, lv.s)) {
			const struct ht_srcpos *p = &r->keys[K_LEVER].pos;

			ret = ht_error_set(err, EINVAL, "%s:%u:%u: lever '%s' is not a rule", p->file,
			                   p->line, p->col, lv.s);
			ht_value_clear(&lv);
			return ret;
		}
		f->lever = strdup(lv.s);
		if (!f->lever)
			ret = -ENOMEM;
	}
	ht_value_clear(&lv);
	return ret < 0 ? ret : 0;
}

/* "... hosttune never lowers it." after the explanation of a kept finding. */
static int finding_kept_note(struct ht_finding *f, bool unlimited)
{
	_cleanup_free_ char *cur = ht_value_display(&f->current);
	_cleanup_free_ char *rec = ht_value_display(&f->recommended);
	char *n;

	if (!cur || !rec ||
	    (unlimited ? asprintf(&n, "%s%sThe host has %s, which means no limit: more than "
	                          "the %s recommended here; hosttune never lowers it.",
	                          f->explanation, *f->explanation ? "\n" : "", cur, rec)
	               : asprintf(&n, "%s%sThe host already has %s, more than the %s "
	                          "recommended here; hosttune never lowers it.", f->explanation,
	                          *f->explanation ? "\n" : "", cur, rec)) < 0)
		return -ENOMEM;
	free(f->explanation);
	f->explanation = n;
	return 0;
}

/*
 * What the host comes back with after a reboot: for a sysctl or module
 * target, the fact boot.TARGET (the effective sysctl.d line, modprobe.d's
 * options) when it gives another value than the live one, in boot_value
 * and boot_source. Worse than the recommendation (below it for a raise-only
 * rule, else another value; a "-KEY" line that leaves the kernel's value
 * counts as the rule's `default`): boot_worse, the finding at least a
 * warning, and a remedy naming the line when it has none. 0 or an error.
 */
static int finding_boot(struct ht_ruleset *rs, struct ht_rule *r, struct ht_finding *f,
                        struct ht_error *err)
{
	_cleanup_free_ char *name = NULL, *live = NULL;
	const struct ht_fact *b = NULL;
	int64_t boot;
	int ret;

	if ((r->kind != HT_TARGET_SYSCTL && r->kind != HT_TARGET_MODULE) || !rs->facts)
		return 0;
	if (asprintf(&name, "boot.%s", r->target) < 0)
		return -ENOMEM;
	ret = ht_facts_need(rs->facts, name, rs->need_flags, &b, err);
	if (ret < 0)
		return ret;
	if (!b || (b->value.type != HT_T_INT && b->error != ENODATA) || !b->source)
		return 0;
	if (b->value.type == HT_T_INT) {
		/* Not loaded yet (no_live): current is what the boot gives it already. */
		if (f->current.type != HT_T_NONE && !(live = ht_value_display(&f->current)))
			return -ENOMEM;
		f->boot_value = ht_value_display(&b->value);
		if (!f->boot_value)
			return -ENOMEM;
		if (live && strcmp(live, f->boot_value) == 0) {
			free(TAKE_PTR(f->boot_value));
			return 0;
		}
		boot = b->value.i;
	} else {
		f->boot_value = strdup("left alone (-key)");
		if (!f->boot_value)
			return -ENOMEM;
		boot = f->kernel_default.type == HT_T_INT ? f->kernel_default.i : 0;
	}
	f->boot_source = strdup(b->source);
	if (!f->boot_source)
		return -ENOMEM;
	f->boot_worse = f->applicable && f->recommended.type == HT_T_INT &&
	                (b->value.type == HT_T_INT || f->kernel_default.type == HT_T_INT) &&
	                (r->only_raise ? boot < f->recommended.i : boot != f->recommended.i);
	if (!f->boot_worse)
		return 0;
	if (f->severity < HT_SEV_WARNING)
		f->severity = HT_SEV_WARNING;
	if (f->remedy)
		return 0;
	if (asprintf(&f->remedy, "edit or remove %s, which gives %s at boot; hosttune apply "
	             "rewrites only its own file, and a file read later wins over it",
	             f->boot_source, f->boot_value) < 0) {
		f->remedy = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int evaluate_finding(struct ht_ruleset *rs, struct ht_rule *r, struct ht_finding *f,
                            struct ht_error *err)
{
	bool unlimited = false;
	int ret;

	f->rule = r;
	f->applicable = true;
	rs->ntrace = 0;
	rs->denied[0] = '\0';
	rs->ovf_fact = rs->ovf_set = false;
	ret = eval_when(rs, r, err);
	/*
	 * It does not apply: no finding. Unless what decides that was refused to
	 * this user (the conntrack dump, another user's /proc/PID/fd): the
	 * finding is n/a then, saying what needs root, rather than silently gone.
	 */
	if ((ret == 0 || ret == -ENODATA) && rs->denied[0]) {
		ht_error_set(err, EPERM, "%s", rs->denied);
		ret = -ENODATA;
		goto not_applicable;
	}
	if (ret == 0)
		return 0; /* does not apply: no finding */
	if (ret >= 0)
		ret = finding_current(rs, r, f, err);
	if (ret >= 0 && r->keys[K_VALUE].expr)
		ret = rule_value(rs, r, &f->recommended, err);
	if (ret >= 0)
		ret = finding_severity(rs, r, f, err);
	/*
	 * A stray holder holds most of the limit: the fix is at the holder, and
	 * a larger limit is no recommendation (it only delays the next fill).
	 */
	if (ret >= 0 && limit_stray_holds_most(&f->limit) && f->recommended.type != HT_T_NONE &&
	    ht_type_is_number(f->current.type)) {
		ht_value_clear(&f->recommended);
		ret = ht_value_copy(&f->recommended, &f->current);
	}
	/*
	 * "ok" resting on a fact refused to this user (another user's
	 * /proc/PID/fd: a port's owner) is no verdict: not applicable, saying
	 * what needs root. A warning or critical from other evidence stands.
	 */
	if (ret >= 0 && f->severity == HT_SEV_OK && rs->denied[0]) {
		ht_error_set(err, EPERM, "%s", rs->denied);
		ret = -ENODATA;
	}
	if (ret == -ENODATA)
		goto not_applicable;
	if (ret >= 0)
		ret = finding_keys(rs, r, f, &unlimited, err);
	if (ret >= 0)
		ret = finding_texts(rs, r, f, err);
	if (ret >= 0 && f->kept)
		ret = finding_kept_note(f, unlimited);
	if (ret >= 0)
		ret = finding_boot(rs, r, f, err);
	/* A key past the severity (the lever, the kernel's default) needs what is unavailable. */
	if (ret == -ENODATA)
		goto not_applicable;
	/*
	 * An overflow that a fact's value caused (an absurd count in a tree or a
	 * facts file), with no --set among its inputs: this finding cannot be
	 * judged, and the rest of the audit goes on. One from the rules or
	 * --set alone stays an error.
	 */
	if (ret == -ERANGE && rs->ovf_fact && !rs->ovf_set) {
		char msg[sizeof(err->msg)];

		snprintf(msg, sizeof(msg), "%s", err->msg);
		ht_error_set(err, ERANGE, "cannot be judged: %s", msg);
		goto not_applicable;
	}
	return ret < 0 ? ret : 1;

not_applicable:
	f->applicable = false;
	f->limit.set = false;
	f->case_name = NULL;
	ht_value_clear(&f->recommended);
	f->reason = strdup(err->msg[0] ? err->msg : "a fact it needs is unavailable");
	if (!f->reason)
		return -ENOMEM;
	/* What the boot gives it is known even when the finding is not applicable. */
	ret = finding_boot(rs, r, f, err);
	return ret < 0 ? ret : 1;
}

char *ht_finding_key(const struct ht_finding *f)
{
	if (!f->instance)
		return NULL;
	return f->instance_key ? strdup(f->instance_key) : ht_name_escape(f->instance);
}

char *ht_finding_fact(const struct ht_finding *f, const char *family, const char *suffix)
{
	if (!f->instance)
		return NULL;
	if (f->instance_key)
		return ht_strdup_printf("%s.%s.%s", family, f->instance_key, suffix);
	return ht_instance_fact(family, f->instance, suffix);
}

void ht_findings_free(struct ht_findings *f)
{
	for (size_t i = 0; i < f->n; i++) {
		ht_value_clear(&f->items[i].current);
		ht_value_clear(&f->items[i].recommended);
		ht_value_clear(&f->items[i].kernel_default);
		free(f->items[i].reason);
		free(f->items[i].explanation);
		free(f->items[i].remedy);
		free(f->items[i].lever);
		free(f->items[i].instance);
		free(f->items[i].instance_key);
		free(f->items[i].boot_value);
		free(f->items[i].boot_source);
		free(f->items[i].limit.holder);
		free(f->items[i].limit.holder_why);
		free(f->items[i].limit.rest);
		free(f->items[i].limit.source);
		ht_value_clear(&f->items[i].limit.limit_v);
		ht_value_clear(&f->items[i].limit.usage_v);
		ht_value_clear(&f->items[i].limit.held_v);
	}
	free(f->items);
	f->items = NULL;
	f->n = 0;
}

/* Forgets every computed rule value (a new evaluation, or one that failed). */
static void reset_values(struct ht_ruleset *rs)
{
	for (size_t i = 0; i < rs->nrules; i++) {
		struct ht_rule *r = rs->rules[i];

		ht_value_clear(&r->val);
		r->eval_state = ST_NEW;
	}
}

/* Room for one more finding in @res; -ENOMEM. */
static int findings_grow(struct ht_findings *res, size_t *cap)
{
	struct ht_finding *n;

	if (res->n < *cap)
		return 0;
	n = reallocarray(res->items, *cap ? *cap * 2 : 64, sizeof(*n));
	if (!n)
		return -ENOMEM;
	*cap = *cap ? *cap * 2 : 64;
	res->items = n;
	memset(&res->items[res->n], 0, (*cap - res->n) * sizeof(*n));
	return 0;
}

/* Evaluates one rule (for one instance) and appends its finding, if any. */
static int add_finding(struct ht_ruleset *rs, struct ht_rule *r, const char *instance,
                       struct ht_findings *res, size_t *cap, struct ht_error *err)
{
	struct ht_finding *f;
	int ret = findings_grow(res, cap);

	if (ret < 0)
		return ret;
	f = &res->items[res->n];
	ret = evaluate_finding(rs, r, f, err);
	if (ret > 0 && instance) {
		/*
		 * A cgroup is named by its path, an interface by its name (the list has
		 * them escaped); a name that is no escape as it is.
		 */
		f->instance = each_escaped(r->each) ? ht_name_unescape(instance) : NULL;
		if (!f->instance)
			f->instance = strdup(instance);
		f->instance_key = strdup(instance);
		if (!f->instance || !f->instance_key)
			ret = -ENOMEM;
	}
	if (ret == 0) {
		ht_value_clear(&f->current);
		memset(f, 0, sizeof(*f));
		return 0;
	}
	res->n++;
	return ret < 0 ? ret : 0;
}

/*
 * A per-instance rule without instances: for interfaces (none found below a
 * --root, no udev and no /sys/class/net, or only lo) one finding, not
 * applicable, that says so; for the other families only when the list
 * itself is unknown (a host with no listening port has none to judge, but
 * an uncollected list is missing evidence). None either way when the rule's
 * `when` is false whatever the instance (FAMILY.X and its name fail with
 * -ENXIO meanwhile, so a `when` that needs them yields the finding).
 */
static int add_no_instance_finding(struct ht_ruleset *rs, struct ht_rule *r,
                                   struct ht_findings *res, size_t *cap, struct ht_error *err)
{
	/* Got again after eval_when(): facts it collects can move the table. */
	const struct ht_fact *list = ht_facts_get(rs->facts, each_kinds[r->each].list);
	const char *src;
	_cleanup_free_ char *none = NULL;
	struct ht_finding *f;
	int ret;

	if (r->each != HT_EACH_NIC && list && list->value.type != HT_T_NONE)
		return 0;
	if (asprintf(&none, "no %s to check: %s", each_kinds[r->each].what,
	             each_kinds[r->each].list) < 0) {
		none = NULL;
		return -ENOMEM;
	}
	rs->no_instance = r->each;
	ret = eval_when(rs, r, err);
	rs->no_instance = HT_EACH_NONE;
	if (ret == 0)
		return 0;
	if (ret < 0 && ret != -ENODATA && ret != -ENXIO)
		return ret;
	list = ht_facts_get(rs->facts, each_kinds[r->each].list);
	src = list && list->source ? list->source : NULL;
	ret = findings_grow(res, cap);
	if (ret < 0)
		return ret;
	f = &res->items[res->n];
	*f = (struct ht_finding){ .rule = r, .applicable = false };
	if (!list)
		ret = asprintf(&f->reason, "%s was not collected", none);
	else if (list->value.type == HT_T_NONE)
		ret = asprintf(&f->reason, "%s is unavailable (%s%s%s)", none,
		               strerror(list->error ? list->error : ENODATA), src ? ": " : "",
		               src ? src : "");
	else
		ret = asprintf(&f->reason, "%s names none other than lo%s%s%s", none, src ? " (" : "",
		               src ? src : "", src ? ")" : "");
	if (ret < 0) {
		f->reason = NULL;
		return -ENOMEM;
	}
	res->n++;
	return 0;
}

/* The findings of rule @r: once, or once per instance of its family. */
static int rule_findings(struct ht_ruleset *rs, struct ht_rule *r, struct ht_findings *res,
                         size_t *cap, struct ht_error *err)
{
	struct ht_family_state *fs = &rs->fam[r->each];
	int ret;

	if (!r->each)
		return add_finding(rs, r, NULL, res, cap, err);
	ret = family_read(rs, r->each, err);
	if (ret < 0)
		return ret;
	if (fs->n == 0)
		return add_no_instance_finding(rs, r, res, cap, err);
	for (size_t k = 0; k < fs->n && ret >= 0; k++) {
		fs->cur = (long)k;
		ret = add_finding(rs, r, fs->inst[k], res, cap, err);
	}
	fs->cur = -1;
	return ret;
}

/*
 * `follows = RULE`: a finding sized to follow RULE's recommendation (the
 * hash buckets of the conntrack table its max) is never more severe than
 * RULE's finding (the same instance's, for a family), and no less than
 * info when it has something to say; the explanation says so when it was
 * lowered. Without an applicable finding of RULE its own severity stands.
 * 0 or -ENOMEM.
 */
static int finding_follow(const struct ht_ruleset *rs, const struct ht_findings *res,
                          struct ht_finding *f)
{
	const char *id = f->rule->keys[K_FOLLOWS].text;
	const struct ht_rule *led;
	enum ht_severity led_sev = HT_SEV_OK, cap;
	bool seen = false;
	char *n;

	if (!id || !f->applicable || f->severity <= HT_SEV_INFO)
		return 0;
	led = rule_find(rs, id);
	for (size_t j = 0; j < res->n; j++) {
		const struct ht_finding *g = &res->items[j];

		if (g->rule != led || !g->applicable ||
		    (led->each && (!f->instance || !g->instance || strcmp(f->instance, g->instance))))
			continue;
		seen = true;
		if (g->severity > led_sev)
			led_sev = g->severity;
	}
	cap = led_sev > HT_SEV_INFO ? led_sev : HT_SEV_INFO;
	if (!seen || f->severity <= cap)
		return 0;
	if (asprintf(&n, "%s%sIts size follows %s, which is %s here, so this finding is %s at "
	             "most.", f->explanation ? f->explanation : "",
	             f->explanation && *f->explanation ? "\n" : "", id, ht_severity_name(led_sev),
	             ht_severity_name(cap)) < 0)
		return -ENOMEM;
	free(f->explanation);
	f->explanation = n;
	f->severity = cap;
	return 0;
}

int ht_ruleset_evaluate(struct ht_ruleset *rs, struct ht_facts *facts, struct ht_findings *out,
                        struct ht_error *err)
{
	struct ht_findings res = { 0 };
	size_t cap = 0;
	int ret = 0;

	if (!rs->checked)
		return ht_error_set(err, EINVAL, "internal error: ruleset evaluated before its check");
	rs->facts = facts;
	rs->gen++;
	rs->need_flags = 0;
	rules_families_clear(rs);
	reset_values(rs);
	for (size_t i = 0; i < rs->nrules && ret >= 0; i++) {
		struct ht_rule *r = rs->rules[i];

		if (r->kind != HT_TARGET_NONE)
			ret = rule_findings(rs, r, &res, &cap, err);
	}
	for (size_t i = 0; i < res.n && ret >= 0; i++)
		ret = finding_follow(rs, &res, &res.items[i]);
	/*
	 * Named values no finding used are evaluated too: a division by zero in
	 * one is an error in the rules, not something to report as null. What no
	 * finding needed is not worth a walk or a measurement, here or in the
	 * reports that read values later (ht_ruleset_value()).
	 */
	rs->need_flags = HT_NEED_CHEAP;
	for (size_t i = 0; i < rs->nrules && ret >= 0; i++) {
		struct ht_rule *r = rs->rules[i];
		struct ht_value v = { 0 };

		if (r->kind != HT_TARGET_NONE || r->each)
			continue;
		err->msg[0] = '\0';
		rs->ntrace = 0;
		ret = rule_value(rs, r, &v, err);
		ht_value_clear(&v);
		if (ret == -ENODATA)
			ret = 0;
	}
	if (ret < 0) {
		rs->facts = NULL;
		reset_values(rs);
		ht_findings_free(&res);
		return ret;
	}
	*out = res;
	return 0;
}

int ht_ruleset_holds(struct ht_ruleset *rs, const char *id, const char *instance, bool *holds,
                     struct ht_error *err)
{
	struct ht_rule *r = rule_find(rs, id);
	struct ht_family_state *fs;
	struct ht_value v = { 0 };
	long saved;
	size_t k = 0;
	int ret;

	if (!r || !r->keys[K_VALUE].expr || r->type != HT_T_BOOL)
		return ht_error_set(err, ENOENT, "no rule '%s' with a bool value", id);
	if (!rs->facts)
		return ht_error_set(err, ESRCH, "%s asked outside an evaluation", id);
	if (!r->each != !instance)
		return ht_error_set(err, ENOENT, "%s is %s", id,
		                    r->each ? "evaluated per instance" : "a host rule");
	fs = &rs->fam[r->each];
	if (r->each) {
		ret = family_read(rs, r->each, err);
		if (ret < 0)
			return ret;
		for (k = 0; k < fs->n && strcmp(fs->inst[k], instance) != 0; k++)
			;
		if (k == fs->n)
			return ht_error_set(err, ENOENT, "%s: no %s '%s' in %s", id,
			                    each_kinds[r->each].what, instance, each_kinds[r->each].list);
	}
	/* As an aggregate does: this instance current for the while, the one before restored. */
	saved = fs->cur;
	if (r->each)
		fs->cur = (long)k;
	err->msg[0] = '\0';
	ret = rule_value(rs, r, &v, err);
	fs->cur = saved;
	if (ret < 0)
		return ret;
	*holds = v.type == HT_T_BOOL && v.b;
	ht_value_clear(&v);
	return 0;
}

int ht_ruleset_value(struct ht_ruleset *rs, const char *id, struct ht_value *out,
                     struct ht_error *err)
{
	struct ht_rule *r = rule_find(rs, id);

	if (!rs->facts)
		return ht_error_set(err, EINVAL, "internal error: no evaluation to read values from");
	if (!r || !r->keys[K_VALUE].expr)
		return ht_error_set(err, ENOENT, "no rule '%s' with a value", id);
	err->msg[0] = '\0';
	return rule_value(rs, r, out, err);
}

/* ---- hosttune rules --lint ---- */

struct atom_set {
	char **atoms;
	struct ht_srcpos *pos;
	size_t n, cap;
};

static void atom_set_free(struct atom_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->atoms[i]);
	free(s->atoms);
	free(s->pos);
	*s = (struct atom_set){ 0 };
}

static int atom_add(const char *atom, const struct ht_srcpos *pos, void *userdata)
{
	struct atom_set *s = userdata;

	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->atoms[i], atom) == 0)
			return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		char **a = reallocarray(s->atoms, cap, sizeof(*a));
		struct ht_srcpos *p;

		if (!a)
			return -ENOMEM;
		s->atoms = a;
		p = reallocarray(s->pos, cap, sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->pos = p;
		s->cap = cap;
	}
	if (!(s->atoms[s->n] = strdup(atom)))
		return -ENOMEM;
	s->pos[s->n++] = *pos;
	return 0;
}

/* The {?COND} atoms of a template into @s. */
static int tmpl_atoms(const struct ht_tmpl_seg *segs, size_t n, struct atom_set *s)
{
	for (size_t i = 0; i < n; i++) {
		int r;

		if (segs[i].fmt == TMPL_IF && (r = ht_expr_conditions(segs[i].expr, true, atom_add, s)))
			return r;
	}
	return 0;
}

int ht_ruleset_lint(const struct ht_ruleset *rs, ht_lint_cb cb, void *userdata)
{
	int found = 0, r = 0;

	for (size_t i = 0; i < rs->nrules && r >= 0; i++) {
		const struct ht_rule *rule = rs->rules[i];
		struct atom_set sev = { 0 }, text = { 0 };

		r = ht_expr_conditions(rule->keys[K_SEVERITY].expr, false, atom_add, &sev);
		for (size_t c = 0; !r && c < rule->ncases; c++)
			r = ht_expr_conditions(rule->cases[c].cond.expr, true, atom_add, &sev);
		if (!r)
			r = tmpl_atoms(rule->tmpl, rule->ntmpl, &text);
		if (!r)
			r = tmpl_atoms(rule->remedy, rule->nremedy, &text);
		if (!r)
			r = tmpl_atoms(rule->owner, rule->nowner, &text);
		for (size_t c = 0; !r && c < rule->ncases; c++) {
			r = tmpl_atoms(rule->cases[c].tmpl, rule->cases[c].ntmpl, &text);
			if (!r)
				r = tmpl_atoms(rule->cases[c].remedy, rule->cases[c].nremedy, &text);
		}
		for (size_t t = 0; !r && t < text.n; t++)
			for (size_t s = 0; !r && s < sev.n; s++)
				if (strcmp(text.atoms[t], sev.atoms[s]) == 0) {
					found++;
					r = cb(rule, text.atoms[t], &sev.pos[s], &text.pos[t], userdata);
				}
		atom_set_free(&sev);
		atom_set_free(&text);
	}
	return r < 0 ? r : found;
}

/* The {?COND} of a template. */
static unsigned tmpl_ifs(const struct ht_tmpl_seg *segs, size_t n)
{
	unsigned k = 0;

	for (size_t i = 0; i < n; i++)
		k += segs[i].fmt == TMPL_IF;
	return k;
}

void ht_ruleset_conditionals(const struct ht_ruleset *rs, unsigned *ifs, unsigned *strs)
{
	*ifs = *strs = 0;
	for (size_t i = 0; i < rs->nrules; i++) {
		const struct ht_rule *r = rs->rules[i];

		*ifs += tmpl_ifs(r->tmpl, r->ntmpl) + tmpl_ifs(r->remedy, r->nremedy) +
		        tmpl_ifs(r->owner, r->nowner);
		for (size_t c = 0; c < r->ncases; c++)
			*ifs += tmpl_ifs(r->cases[c].tmpl, r->cases[c].ntmpl) +
			        tmpl_ifs(r->cases[c].remedy, r->cases[c].nremedy);
		for (int k = 0; k < K__MAX; k++)
			if (k != K_SEVERITY && k != K_LEVER)
				*strs += ht_expr_string_conds(r->keys[k].expr);
	}
}
