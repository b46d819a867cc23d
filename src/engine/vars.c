/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Workload variables (workload.NAME): set by profiles (rules.c reads them)
 * and by --set (ht_ruleset_set_var()), read by the evaluation (engine.c).
 * Uses only the expression language and values (and shared/), so rules.c
 * and engine.c both call it without calling each other back.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/rules-internal.h"

static int var_key_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct ht_var *)elem)->name);
}

struct ht_var *rules_var_find(const struct ht_ruleset *rs, const char *name)
{
	/* rules_set_var_text() keeps them sorted by name. */
	return rs->nvars ? bsearch(name, rs->vars, rs->nvars, sizeof(*rs->vars), var_key_cmp) : NULL;
}

struct ht_var *rules_var_of_rules(const struct ht_ruleset *rs, const char *name)
{
	return strncmp(name, "workload.", 9) == 0 ? rules_var_find(rs, name) : NULL;
}

static int const_lookup(const char *name, const struct ht_srcpos *pos, struct ht_value *out,
                        struct ht_error *err, void *userdata)
{
	return ht_error_set(err, EINVAL, "%s:%u:%u: expected a constant, found name '%s'",
	                    pos->file, pos->line, pos->col, name);
}

static int var_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ht_var *)a)->name, ((const struct ht_var *)b)->name);
}

int rules_set_var_text(struct ht_ruleset *rs, const char *name, const char *text,
                       const struct ht_srcpos *pos, struct ht_error *err, int *ctx_ret)
{
	struct ht_expr *e = NULL;
	struct ht_value v = { 0 };
	struct ht_var *var;
	unsigned units = 0;
	int r;

	r = ht_expr_parse(text, pos, &e, err);
	if (r == 0) {
		units = ht_expr_units(e);
		r = ht_expr_eval(e, const_lookup, NULL, &v, err);
		ht_expr_free(e);
	}
	if (r < 0)
		goto fail;
	var = rules_var_find(rs, name);
	if (var) {
		ht_value_clear(&var->value);
		var->value = v;
		var->units = units;
		var->pos = *pos;
		return 0;
	}
	var = realloc(rs->vars, (rs->nvars + 1) * sizeof(*var));
	if (!var) {
		r = -ENOMEM;
		goto fail;
	}
	rs->vars = var;
	var[rs->nvars].value = v;
	var[rs->nvars].units = units;
	var[rs->nvars].pos = *pos;
	if (!(var[rs->nvars].name = strdup(name))) {
		r = -ENOMEM;
		goto fail;
	}
	rs->nvars++;
	qsort(rs->vars, rs->nvars, sizeof(*rs->vars), var_cmp);
	return 0;
fail:
	ht_value_clear(&v);
	if (ctx_ret && *ctx_ret == 0)
		*ctx_ret = r;
	return r;
}

/*
 * "--set:1:COL: WHY", a message of the expression parser or of the range
 * check at the --set's position: "--set ASSIGNMENT: WHY", the form of every
 * --set error. Returns @r.
 */
static int set_error(struct ht_error *err, int r, const char *assignment)
{
	_cleanup_free_ char *why = NULL;
	const char *p;

	if (r == -ENOMEM || !err || strncmp(err->msg, "--set:1:", 8) != 0)
		return r;
	p = err->msg + 8 + strspn(err->msg + 8, "0123456789");
	if (strncmp(p, ": ", 2) != 0)
		return r;
	why = strdup(p + 2);
	if (!why)
		return -ENOMEM;
	return ht_error_set(err, -r, "--set %s: %s", assignment, why);
}

int ht_ruleset_set_var(struct ht_ruleset *rs, const char *assignment, struct ht_error *err)
{
	const char *eq = strchr(assignment, '=');
	_cleanup_free_ char *name = NULL;
	struct ht_var *var;
	struct ht_value old = { 0 };
	struct ht_srcpos pos;
	unsigned old_units;
	int r;

	if (!eq)
		return ht_error_set(err, EINVAL, "--set %s: expected NAME=VALUE", assignment);
	name = strndup(assignment, (size_t)(eq - assignment));
	if (!name)
		return -ENOMEM;
	var = rules_var_find(rs, name);
	if (!var) {
		size_t len = 0;
		char known[512] = "";

		for (size_t i = 0; i < rs->nvars && len < sizeof(known) - 1; i++)
			len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", i ? ", " : "",
			                        rs->vars[i].name);
		return ht_error_set(err, EINVAL, "--set %s: expected a workload variable (%s), "
		                    "found '%s'", assignment, rs->nvars ? known : "none defined",
		                    name);
	}
	/*
	 * A string variable takes the text as written, as sysctl(8) and
	 * systemd's --setenv do (--set garage.config=/etc/garage/garage.toml):
	 * quotes are only needed for an expression, and only honoured at the
	 * start ("--set workload.service=\"garage\"" keeps working).
	 */
	if (var->value.type == HT_T_STR && eq[1] != '"') {
		char *s;

		for (const char *p = eq + 1; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				return ht_error_set(err, EINVAL, "--set %s: expected printable text, "
				                    "found a control character", assignment);
		s = strdup(eq + 1);
		if (!s)
			return -ENOMEM;
		free(var->value.s);
		var->value.s = s;
		var->units = 0;
		var->pos = (struct ht_srcpos){ .file = "--set", .line = 1,
		                               .col = (unsigned)(eq - assignment) + 2 };
		return 0;
	}
	r = ht_value_copy(&old, &var->value);
	if (r < 0)
		return r;
	old_units = var->units;
	pos = (struct ht_srcpos){ .file = "--set", .line = 1, .col = (unsigned)(eq - assignment) + 2 };
	r = rules_set_var_text(rs, name, eq + 1, &pos, err, NULL);
	if (r < 0) {
		ht_value_clear(&old);
		return set_error(err, r, assignment);
	}
	var = rules_var_find(rs, name);
	if ((ht_type_is_number(old.type) != ht_type_is_number(var->value.type)) ||
	    (!ht_type_is_number(old.type) && old.type != var->value.type)) {
		r = ht_error_set(err, EINVAL, "--set %s: expected a %s, found a %s", assignment,
		                 ht_type_name(old.type), ht_type_name(var->value.type));
		goto restore;
	}
	/* Out of the variable's range or unit: a typo, or a number that means nothing here. */
	if (ht_type_is_number(var->value.type)) {
		_cleanup_free_ char *prefix = NULL;

		if (asprintf(&prefix, "--set %s", assignment) < 0) {
			r = -ENOMEM;
			goto restore;
		}
		r = rules_check_var(rs, var, prefix, err);
		if (r < 0)
			goto restore;
	}
	ht_value_clear(&old);
	return 0;
restore:
	ht_value_clear(&var->value);
	var->value = old;
	var->units = old_units;
	return r;
}

size_t ht_ruleset_var_count(const struct ht_ruleset *rs)
{
	return rs->nvars;
}

const char *ht_ruleset_var_name(const struct ht_ruleset *rs, size_t i)
{
	return i < rs->nvars ? rs->vars[i].name : NULL;
}

const struct ht_value *ht_ruleset_var_value(const struct ht_ruleset *rs, size_t i)
{
	return i < rs->nvars ? &rs->vars[i].value : NULL;
}

bool ht_ruleset_var_changed(const struct ht_ruleset *rs, size_t i)
{
	const char *file = i < rs->nvars ? rs->vars[i].pos.file : NULL;

	return file && (!rs->profile_base || strcmp(file, rs->profile_base) != 0);
}

/* ---- ranges ([workload] sections of rules files) ------------------------ */

static struct ht_var_range *range_find(const struct ht_ruleset *rs, const char *name)
{
	for (size_t i = rs->nranges; i-- > 0;)
		if (strcmp(rs->ranges[i].name, name) == 0)
			return &rs->ranges[i];
	return NULL;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The length of the bound's expression at @p: up to a blank-delimited "and" or the end. */
static size_t bound_len(const char *p)
{
	for (const char *q = p; *q; q++)
		if (is_blank(*q) && strncmp(q + 1, "and", 3) == 0 &&
		    (is_blank(q[4]) || q[4] == '\0'))
			return (size_t)(q - p);
	return strlen(p);
}

int rules_declare_range(struct ht_ruleset *rs, const char *name, const char *text,
                        const struct ht_srcpos *pos, struct ht_error *err)
{
	struct ht_var_range rg = { .pos = *pos };
	char expect[256] = "a number";
	size_t elen;
	const char *p = text;
	struct ht_var_range *n;
	int r = 0;

	while (is_blank(*p))
		p++;
	/* "integer >= 1s and <= 120s": a value that goes into an integer sysctl. */
	if (strncmp(p, "integer", 7) == 0 && (is_blank(p[7]) || !p[7])) {
		rg.integer = true;
		snprintf(expect, sizeof(expect), "an integer");
		p += 7;
	}
	elen = strlen(expect);

	for (unsigned nb = 0;; nb++) {
		static const char *const ops[] = { ">=", "<=", ">", "<" };
		const char *op = NULL;
		_cleanup_free_ char *sub = NULL;
		struct ht_expr *e = NULL;
		struct ht_value v = { 0 };
		struct ht_srcpos bpos;
		unsigned opcol;
		size_t len;

		while (is_blank(*p))
			p++;
		for (size_t i = 0; i < ARRAY_SIZE(ops) && !op; i++)
			if (strncmp(p, ops[i], strlen(ops[i])) == 0)
				op = ops[i];
		if (!op || nb == 2)
			return ht_error_set(err, EINVAL, "%s:%u:%u: expected %s, found %s%s%s",
			                    pos->file, pos->line, pos->col + (unsigned)(p - text),
			                    !op ? "a bound '>= N', '> N', '<= N' or '< N'"
			                        : "at most two bounds",
			                    *p ? "'" : "", *p ? p : "end of line", *p ? "'" : "");
		opcol = pos->col + (unsigned)(p - text);
		p += strlen(op);
		while (is_blank(*p))
			p++;
		len = bound_len(p);
		if (!(sub = strndup(p, len)))
			return -ENOMEM;
		bpos = (struct ht_srcpos){ .file = pos->file, .line = pos->line,
		                           .col = pos->col + (unsigned)(p - text) };
		r = ht_expr_parse(sub, &bpos, &e, err);
		if (r == 0) {
			rg.units |= ht_expr_units(e);
			r = ht_expr_eval(e, const_lookup, NULL, &v, err);
			ht_expr_free(e);
		}
		if (r < 0)
			return r;
		if (rg.units == (HT_UNIT_TIME | HT_UNIT_SIZE)) {
			ht_value_clear(&v);
			return ht_error_set(err, EINVAL, "%s:%u:%u: expected bounds of one "
			                    "kind, found a time and a size", bpos.file, bpos.line,
			                    bpos.col);
		}
		if (!ht_type_is_number(v.type)) {
			r = ht_error_set(err, EINVAL, "%s:%u:%u: expected a number, found a %s", bpos.file,
			                 bpos.line, bpos.col, ht_type_name(v.type));
			ht_value_clear(&v);
			return r;
		}
		if (op[0] == '>') {
			if (rg.has_lo)
				return ht_error_set(err, EINVAL, "%s:%u:%u: a second lower bound", pos->file,
				                    pos->line, opcol);
			rg.has_lo = true;
			rg.lo_open = op[1] != '=';
			rg.lo = ht_value_as_double(&v);
		} else {
			if (rg.has_hi)
				return ht_error_set(err, EINVAL, "%s:%u:%u: a second upper bound", pos->file,
				                    pos->line, opcol);
			rg.has_hi = true;
			rg.hi_open = op[1] != '=';
			rg.hi = ht_value_as_double(&v);
		}
		{
			_cleanup_free_ char *d = ht_value_format(&v);

			if (!d)
				return -ENOMEM;
			elen += (size_t)snprintf(expect + elen, sizeof(expect) - elen, "%s %s %s",
			                         nb ? " and" : "", op, d);
		}
		p += len;
		while (is_blank(*p))
			p++;
		if (!*p)
			break;
		p += 3; /* "and", which bound_len() stopped at */
	}
	if (rg.has_lo && rg.has_hi && (rg.lo > rg.hi || (rg.lo == rg.hi && (rg.lo_open || rg.hi_open))))
		return ht_error_set(err, EINVAL, "%s:%u:%u: no number is %s", pos->file, pos->line,
		                    pos->col, expect + strlen(rg.integer ? "an integer " : "a number "));
	if (elen >= sizeof(expect))
		return ht_error_set(err, EINVAL, "%s:%u:%u: range longer than %zu bytes", pos->file,
		                    pos->line, pos->col, sizeof(expect) - 1);
	n = realloc(rs->ranges, (rs->nranges + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	rs->ranges = n;
	rg.name = strdup(name);
	rg.expect = strdup(expect);
	if (!rg.name || !rg.expect) {
		free(rg.name);
		free(rg.expect);
		return -ENOMEM;
	}
	rs->ranges[rs->nranges++] = rg;
	return 0;
}

int rules_check_var(const struct ht_ruleset *rs, const struct ht_var *var, const char *prefix,
                    struct ht_error *err)
{
	static const struct ht_var_range nonneg = { .has_lo = true, .lo = 0,
	                                            .expect = (char *)"a number >= 0" };
	const struct ht_var_range *rg = range_find(rs, var->name);
	_cleanup_free_ char *found = NULL;
	double x;

	if (!ht_type_is_number(var->value.type)) {
		if (!rg)
			return 0;
		return ht_error_set(err, EINVAL, "%s:%u:%u: %s is a %s: only a number has a range",
		                    rg->pos.file, rg->pos.line, rg->pos.col, var->name,
		                    ht_type_name(var->value.type));
	}
	/* A declared range says what the number is: its unit kind, or none. */
	if (rg && (var->units & ~rg->units))
		return ht_error_set(err, EINVAL, "%s: expected %s, found %s", prefix,
		                    rg->units == HT_UNIT_TIME ? "a time (s, m, min, h, d, w or none)" :
		                    rg->units == HT_UNIT_SIZE ? "a size (KiB, MiB, GiB, TiB or none)" :
		                    "a number without a unit",
		                    (var->units & ~rg->units) == HT_UNIT_TIME ? "a time" :
		                    (var->units & ~rg->units) == HT_UNIT_SIZE ? "a size" :
		                    "a time and a size");
	if (!rg)
		rg = &nonneg;
	x = ht_value_as_double(&var->value);
	if ((!rg->has_lo || (rg->lo_open ? x > rg->lo : x >= rg->lo)) &&
	    (!rg->has_hi || (rg->hi_open ? x < rg->hi : x <= rg->hi)) &&
	    (!rg->integer || x == floor(x)))
		return 0;
	found = ht_value_format(&var->value);
	if (!found)
		return -ENOMEM;
	return ht_error_set(err, EINVAL, "%s: expected %s, found %s", prefix, rg->expect, found);
}

int rules_check_vars(const struct ht_ruleset *rs, struct ht_error *err)
{
	for (size_t i = 0; i < rs->nvars; i++) {
		const struct ht_var *v = &rs->vars[i];
		_cleanup_free_ char *prefix = NULL;
		int r;

		if (asprintf(&prefix, "%s:%u:%u: %s", v->pos.file, v->pos.line, v->pos.col,
		             v->name) < 0)
			return -ENOMEM;
		r = rules_check_var(rs, v, prefix, err);
		if (r < 0)
			return r;
	}
	return 0;
}
