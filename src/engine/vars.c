/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Workload variables (workload.NAME): set by profiles (rules.c reads them)
 * and by --set (ht_ruleset_set_var()), read by the evaluation (engine.c).
 * Depends on the expression language only, so rules.c and engine.c both
 * call it without calling each other back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/rules-internal.h"

struct ht_var *rules_var_find(const struct ht_ruleset *rs, const char *name)
{
	for (size_t i = 0; i < rs->nvars; i++)
		if (strcmp(rs->vars[i].name, name) == 0)
			return &rs->vars[i];
	return NULL;
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
	int r;

	r = ht_expr_parse(text, pos, &e, err);
	if (r == 0) {
		r = ht_expr_eval(e, const_lookup, NULL, &v, err);
		ht_expr_free(e);
	}
	if (r < 0)
		goto fail;
	var = rules_var_find(rs, name);
	if (var) {
		ht_value_clear(&var->value);
		var->value = v;
		return 0;
	}
	var = realloc(rs->vars, (rs->nvars + 1) * sizeof(*var));
	if (!var) {
		r = -ENOMEM;
		goto fail;
	}
	rs->vars = var;
	var[rs->nvars].value = v;
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

int ht_ruleset_set_var(struct ht_ruleset *rs, const char *assignment, struct ht_error *err)
{
	const char *eq = strchr(assignment, '=');
	_cleanup_free_ char *name = NULL;
	struct ht_var *var;
	struct ht_value old = { 0 };
	struct ht_srcpos pos;
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
		return ht_error_set(err, EINVAL, "--set %s: unknown workload variable '%s' (known: %s)",
		                    assignment, name, rs->nvars ? known : "none");
	}
	r = ht_value_copy(&old, &var->value);
	if (r < 0)
		return r;
	pos = (struct ht_srcpos){ .file = "--set", .line = 1, .col = (unsigned)(eq - assignment) + 2 };
	r = rules_set_var_text(rs, name, eq + 1, &pos, err, NULL);
	if (r < 0) {
		ht_value_clear(&old);
		return r;
	}
	var = rules_var_find(rs, name);
	if ((ht_type_is_number(old.type) != ht_type_is_number(var->value.type)) ||
	    (!ht_type_is_number(old.type) && old.type != var->value.type)) {
		r = ht_error_set(err, EINVAL, "--set %s: %s is a %s, got a %s", assignment, name,
		                 ht_type_name(old.type), ht_type_name(var->value.type));
		ht_value_clear(&var->value);
		var->value = old;
		return r;
	}
	/* Rates, factors, budgets and times: a negative one means a typo, not a workload. */
	if (ht_type_is_number(var->value.type) && ht_value_as_double(&var->value) < 0) {
		r = ht_error_set(err, EINVAL, "--set %s: %s must not be negative", assignment, name);
		ht_value_clear(&var->value);
		var->value = old;
		return r;
	}
	ht_value_clear(&old);
	return 0;
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
