/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hosttune rules and hosttune explain RULE. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "cli/cli.h"
#include "cli/report.h"
#include "engine/facts.h"
#include "engine/value.h"
#include "engine/rules.h"
#include "shared/util.h"

/* Multi-line formulas print on one line: runs of white space become one space. */
static void print_text(const char *t)
{
	bool space = false;

	for (; *t; t++) {
		if (*t == ' ' || *t == '\n' || *t == '\t') {
			space = true;
			continue;
		}
		if (space)
			putchar(' ');
		space = false;
		putchar(*t);
	}
	putchar('\n');
}

static void print_key(const struct ht_rule *rule, const char *key, const char *label)
{
	const char *t = ht_rule_key_text(rule, key);

	if (!t)
		return;
	printf("  %-10s ", label);
	print_text(t);
}

static struct json_object *jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/*
 * {"id", "title", "kind", "target"} for rules; explain adds "file", "line",
 * "when", "current", "value", "direction", "severity" (the keys' text as the
 * rules file has it, null when absent) and "rationale".
 */
static struct json_object *rule_json(const struct ht_rule *rule, bool full)
{
	static const char *const keys[] = { "when", "current", "value", "direction", "severity",
		                            "limit", "usage", "events", "holder", "held",
		                            "stray", "source" };
	struct json_object *cases;
	struct json_object *j = json_object_new_object();

	if (!j)
		return NULL;
	json_object_object_add(j, "id", jstr(ht_rule_id(rule)));
	json_object_object_add(j, "title", jstr(ht_rule_title(rule)));
	json_object_object_add(j, "kind", jstr(ht_target_kind_name(ht_rule_kind(rule))));
	json_object_object_add(j, "target", jstr(ht_rule_target(rule)));
	if (!full)
		return j;
	json_object_object_add(j, "file", jstr(ht_rule_pos(rule)->file));
	json_object_object_add(j, "line", json_object_new_int64(ht_rule_pos(rule)->line));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		json_object_object_add(j, keys[i], jstr(ht_rule_key_text(rule, keys[i])));
	cases = json_object_new_array();
	for (size_t i = 0; cases; i++) {
		const char *name, *cond;
		enum ht_severity sev;
		struct json_object *c;

		if (ht_rule_case(rule, i, &name, &sev, &cond) < 0)
			break;
		if ((c = json_object_new_object())) {
			json_object_object_add(c, "name", jstr(name));
			json_object_object_add(c, "severity", jstr(ht_severity_name(sev)));
			json_object_object_add(c, "if", jstr(cond));
			json_object_array_add(cases, c);
		}
	}
	json_object_object_add(j, "cases", cases);
	json_object_object_add(j, "rationale", jstr(ht_rule_rationale(rule)));
	return j;
}

/* What a rule evaluated per instance is evaluated for, in words. */
static const char *each_name(enum ht_each each)
{
	switch (each) {
	case HT_EACH_NIC:
		return "network interface";
	case HT_EACH_LISTENER:
		return "listening port";
	case HT_EACH_PROCESS:
		return "process";
	case HT_EACH_STORAGE:
		return "storage directory";
	default:
		return "instance";
	}
}

/*
 * The rule of @id: a rule id, or one as the audit table shows a finding,
 * "RULE[INSTANCE]" (*instance: INSTANCE, a new string) for a rule evaluated
 * per port, interface, process... *instance is freed first (NULL, or an
 * earlier call's). Returns 0, or the exit status after the error
 * (EXIT_USAGE: no such rule, or an instance for a rule that has none).
 */
static int find_rule(const struct ht_ruleset *rs, const char *id, const struct ht_rule **rule,
                     char **instance)
{
	const char *open = strchr(id, '[');
	size_t n = strlen(id);
	_cleanup_free_ char *base = NULL;

	/* Asked again after the evaluation: the first answer's instance goes. */
	free(*instance);
	*instance = NULL;
	*rule = ht_ruleset_find(rs, id);
	if (*rule)
		return 0;
	if (!open || open == id || n < 3 || id[n - 1] != ']' || open + 1 == id + n - 1) {
		cli_error("no rule '%s' (hosttune rules lists them)\n", id);
		return EXIT_USAGE;
	}
	base = strndup(id, (size_t)(open - id));
	*instance = strndup(open + 1, (size_t)(id + n - 1 - (open + 1)));
	if (!base || !*instance)
		return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
	*rule = ht_ruleset_find(rs, base);
	if (!*rule) {
		cli_error("no rule '%s' (hosttune rules lists them)\n", base);
		return EXIT_USAGE;
	}
	if (ht_rule_each(*rule) == HT_EACH_NONE) {
		cli_error("%s: the rule has no instances, '[%s]' names none (explain %s)\n", id,
		          *instance, base);
		return EXIT_USAGE;
	}
	return 0;
}

/* "VALUE UNIT" of @v, or "-" when it has none; a new string, NULL on ENOMEM. */
static char *value_text(const struct ht_value *v, const char *unit)
{
	_cleanup_free_ char *d = NULL;
	char *t;

	if (v->type == HT_T_NONE)
		return strdup("-");
	if (!(d = ht_value_display(v)))
		return NULL;
	if (asprintf(&t, "%s%s%s", d, unit ? " " : "", unit ? unit : "") < 0)
		return NULL;
	return t;
}

/* Whether finding @fi is of @rule, and of @instance when it is not NULL. */
static bool finding_of(const struct ht_finding *fi, const struct ht_rule *rule,
                       const char *instance)
{
	return fi->rule == rule &&
	       (!instance || (fi->instance && strcmp(fi->instance, instance) == 0));
}

/* Prints @text, each line after @indent spaces. */
static void print_lines(const char *text, int indent)
{
	while (*text) {
		size_t n = strcspn(text, "\n");

		printf("%*s%.*s\n", indent, "", (int)n, text);
		text += n + (text[n] ? 1 : 0);
	}
}

/*
 * "On ORIGIN (profile P):" and what @rule gives there: each finding's
 * current and recommended value, severity and explanation; a named value's
 * value; or why it gives nothing.
 */
static int print_evaluated(const struct options *o, struct ht_ruleset *rs,
                           const struct ht_findings *f, const struct ht_rule *rule,
                           const char *instance)
{
	const char *unit = ht_rule_unit(rule);
	size_t shown = 0;

	printf("\nOn %s%s, profile %s:\n", o->facts_file ? "facts file " : o->root ? "root " : "",
	       o->facts_file ? o->facts_file : o->root ? o->root : "this host",
	       ht_ruleset_profile(rs));
	if (ht_rule_kind(rule) == HT_TARGET_NONE) {
		struct ht_value v = { 0 };
		struct ht_error err = { "" };
		_cleanup_free_ char *t = NULL;
		int r = ht_ruleset_value(rs, ht_rule_id(rule), &v, &err);

		if (r == -ENODATA) {
			printf("  %-11s none: %s\n", "value", err.msg);
			return 0;
		}
		if (r < 0)
			return cli_fail(r, EXIT_USAGE, "%s", err.msg[0] ? err.msg : strerror(-r));
		t = value_text(&v, unit);
		ht_value_clear(&v);
		if (!t)
			return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
		printf("  %-11s %s\n", "value", t);
		return 0;
	}
	for (size_t i = 0; i < f->n; i++) {
		const struct ht_finding *fi = &f->items[i];
		_cleanup_free_ char *cur = NULL, *rec = NULL;

		if (!finding_of(fi, rule, instance))
			continue;
		if (shown++)
			putchar('\n');
		if (fi->instance)
			printf("  %-11s %s\n", "instance", fi->instance);
		if (!fi->applicable) {
			printf("  %-11s %s\n", "not applicable:", fi->reason ? fi->reason : "");
			continue;
		}
		cur = value_text(&fi->current, unit);
		rec = value_text(&fi->recommended, unit);
		if (!cur || !rec)
			return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
		printf("  %-11s %s\n", "current", cur);
		printf("  %-11s %s%s\n", "recommended", rec, fi->kept ? " (kept: the host has more)" : "");
		printf("  %-11s %s%s%s\n", "severity", ht_severity_name(fi->severity),
		       fi->case_name ? ", case." : "", fi->case_name ? fi->case_name : "");
		if (fi->explanation)
			print_lines(fi->explanation, 4);
	}
	if (shown == 0 && instance) {
		size_t k = 0;

		printf("  no finding for %s: the host has no such instance, or the rule's when is "
		       "false for it", instance);
		for (size_t i = 0; i < f->n; i++)
			if (finding_of(&f->items[i], rule, NULL) && f->items[i].instance)
				printf("%s%s", k++ ? ", " : " (findings for: ", f->items[i].instance);
		printf("%s\n", k ? ")" : "");
	}
	else if (shown == 0)
		printf("  the rule does not apply here: its when is false\n");
	return 0;
}

/* {"origin", "profile", "findings": [{"instance", "applicable", ...}], "value"} of @rule here. */
static struct json_object *evaluated_json(const struct options *o, struct ht_ruleset *rs,
                                          const struct ht_findings *f,
                                          const struct ht_rule *rule, const char *instance)
{
	struct json_object *j = json_object_new_object(), *a = json_object_new_array();
	struct json_object *value = NULL;

	if (!j || !a) {
		json_object_put(j);
		json_object_put(a);
		return NULL;
	}
	json_object_object_add(j, "origin", jstr(o->facts_file ? o->facts_file :
	                                         o->root ? o->root : "this host"));
	json_object_object_add(j, "profile", jstr(ht_ruleset_profile(rs)));
	for (size_t i = 0; i < f->n; i++) {
		const struct ht_finding *fi = &f->items[i];
		struct json_object *e;

		if (!finding_of(fi, rule, instance) || !(e = json_object_new_object()))
			continue;
		json_object_object_add(e, "instance", jstr(fi->instance));
		json_object_object_add(e, "applicable", json_object_new_boolean(fi->applicable));
		json_object_object_add(e, "reason", jstr(fi->reason));
		json_object_object_add(e, "severity", jstr(fi->applicable ?
		                                           ht_severity_name(fi->severity) : NULL));
		json_object_object_add(e, "current", ht_value_to_json(&fi->current));
		json_object_object_add(e, "recommended", ht_value_to_json(&fi->recommended));
		json_object_object_add(e, "explanation", jstr(fi->explanation));
		json_object_array_add(a, e);
	}
	json_object_object_add(j, "findings", a);
	if (ht_rule_kind(rule) == HT_TARGET_NONE) {
		struct ht_value v = { 0 };
		struct ht_error err = { "" };

		if (ht_ruleset_value(rs, ht_rule_id(rule), &v, &err) == 0)
			value = ht_value_to_json(&v);
		ht_value_clear(&v);
	}
	json_object_object_add(j, "value", value);
	return j;
}

int cmd_explain(const struct options *o, const char *id)
{
	struct ht_ruleset *rs = NULL;
	struct ht_facts *facts = NULL;
	struct ht_findings findings = { 0 };
	const struct ht_rule *rule;
	const char *t;
	_cleanup_free_ char *instance = NULL;
	/* The rule first: a rule id that does not exist is said before any collecting. */
	int r = cli_load_rules(o, &rs);

	if (!r)
		r = find_rule(rs, id, &rule, &instance);
	if (!r && !o->no_evaluate) {
		ht_ruleset_free(rs);
		rs = NULL;
		r = cli_evaluate(o, &rs, &facts, &findings);
		if (!r)
			r = find_rule(rs, id, &rule, &instance);
	}
	if (r)
		goto out;
	if (o->json) {
		struct json_object *j = json_object_new_object();

		if (j) {
			json_object_object_add(j, "rule", rule_json(rule, true));
			json_object_object_add(j, "instance", jstr(instance));
			json_object_object_add(j, "host", o->no_evaluate ? NULL :
			                       evaluated_json(o, rs, &findings, rule, instance));
		}
		r = cli_print_json(j);
		goto out;
	}
	printf("%s", ht_rule_id(rule));
	if (ht_rule_title(rule))
		printf(": %s", ht_rule_title(rule));
	printf("\n  defined at %s:%u\n", ht_rule_pos(rule)->file, ht_rule_pos(rule)->line);
	if (instance)
		printf("  %-10s %s (the rule is evaluated for each %s)\n", "instance", instance,
		       each_name(ht_rule_each(rule)));
	printf("  %-10s %s%s%s\n", "target", ht_target_kind_name(ht_rule_kind(rule)),
	       ht_rule_target(rule) ? " " : "", ht_rule_target(rule) ? ht_rule_target(rule) : "");
	print_key(rule, "when", "when");
	print_key(rule, "current", "current");
	print_key(rule, "value", "value");
	print_key(rule, "direction", "direction");
	print_key(rule, "severity", "severity");
	for (size_t i = 0;; i++) {
		const char *name, *cond;
		enum ht_severity sev;
		_cleanup_free_ char *label = NULL;

		if (ht_rule_case(rule, i, &name, &sev, &cond) < 0)
			break;
		if (asprintf(&label, "case.%s", name) < 0) {
			r = cli_fail(-ENOMEM, EXIT_COLLECT, "explaining the rule");
			goto out;
		}
		printf("  %s = %s if ", label, ht_severity_name(sev));
		print_text(cond);
	}
	print_key(rule, "limit", "limit");
	print_key(rule, "usage", "usage");
	print_key(rule, "events", "events");
	print_key(rule, "holder", "holder");
	print_key(rule, "held", "held");
	print_key(rule, "stray", "stray");
	print_key(rule, "source", "source");
	if (!o->no_evaluate && (r = print_evaluated(o, rs, &findings, rule, instance)))
		goto out;
	t = ht_rule_rationale(rule);
	if (t) {
		printf("\nRationale:\n");
		print_lines(t, 2);
	}
	r = cli_printed(0);
out:
	ht_findings_free(&findings);
	ht_facts_free(facts);
	ht_ruleset_free(rs);
	return r;
}

/*
 * Whether rules lists @rule: one that gives a finding, or with --all also a
 * named value (kind "value": a step of other rules' arithmetic).
 */
static bool listed(const struct options *o, const struct ht_rule *rule)
{
	return o->all || ht_rule_kind(rule) != HT_TARGET_NONE;
}

/* One line of rules --lint: where the text tests again what the severity tests. */
static int lint_line(const struct ht_rule *rule, const char *atom, const struct ht_srcpos *sev,
                     const struct ht_srcpos *text, void *userdata)
{
	(void)userdata;
	printf("%s:%u: %s: %s decides the severity (line %u) and the text tests it again: give "
	       "that text to a case (case.NAME, explain.NAME)\n", text->file, text->line,
	       ht_rule_id(rule), atom, sev->line);
	return 0;
}

/*
 * hosttune rules --lint: each condition told twice, then the count of the
 * texts' conditionals. Exit 1 when a condition is told twice (as a linter
 * does), 0 when none.
 */
static int rules_lint(struct ht_ruleset *rs)
{
	unsigned ifs, strs;
	int n = ht_ruleset_lint(rs, lint_line, NULL);

	if (n < 0)
		return cli_fail(n, EXIT_COLLECT, "linting the rules");
	ht_ruleset_conditionals(rs, &ifs, &strs);
	printf("%d %s told in both severity and text; the texts hold %u conditionals "
	       "(%u {?...}, %u ?: with a string)\n", n, n == 1 ? "condition" : "conditions",
	       ifs + strs, ifs, strs);
	return n > 0 ? 1 : 0;
}

int cmd_rules(const struct options *o)
{
	struct ht_ruleset *rs = NULL;
	size_t hidden = 0;
	int r = cli_load_rules(o, &rs);

	if (r)
		return r;
	if (o->lint) {
		r = rules_lint(rs);
		ht_ruleset_free(rs);
		return r;
	}
	if (o->json) {
		struct json_object *j = json_object_new_object(), *a = json_object_new_array();

		for (size_t i = 0; a && i < ht_ruleset_rule_count(rs); i++)
			if (listed(o, ht_ruleset_rule_at(rs, i)))
				json_object_array_add(a, rule_json(ht_ruleset_rule_at(rs, i), false));
		if (j)
			json_object_object_add(j, "rules", a);
		else
			json_object_put(a);
		r = cli_print_json(j);
		ht_ruleset_free(rs);
		return r;
	}
	for (size_t i = 0; i < ht_ruleset_rule_count(rs); i++) {
		const struct ht_rule *rule = ht_ruleset_rule_at(rs, i);

		if (!listed(o, rule)) {
			hidden++;
			continue;
		}
		printf("%-34s %-7s %s\n", ht_rule_id(rule), ht_target_kind_name(ht_rule_kind(rule)),
		       ht_rule_target(rule) ? ht_rule_target(rule) :
		       (ht_rule_title(rule) ? ht_rule_title(rule) : ""));
	}
	/* On a terminal only: scripts read the rows. */
	if (hidden && o->terminal)
		printf("(and %zu named %s the rules compute with: hosttune rules --all)\n", hidden,
		       hidden == 1 ? "value" : "values");
	ht_ruleset_free(rs);
	return 0;
}

/*
 * Where the profile in use came from: "--profile", the configuration's
 * "FILE:LINE" (its "FILE:LINE:COL" without the column), or "the default"; in
 * @buf.
 */
static const char *profile_origin(const struct options *o, char *buf, size_t len)
{
	size_t wl = o->profile_where ? strlen(o->profile_where) : 0;

	/* "FILE: hosttune.profile" (a facts file's) as it is; "FILE:LINE:COL" without COL. */
	if (wl > 16 && strcmp(o->profile_where + wl - 16, "hosttune.profile") == 0) {
		snprintf(buf, len, "%s", o->profile_where);
	} else if (o->profile_where) {
		const char *col = strrchr(o->profile_where, ':');

		snprintf(buf, len, "%.*s", col ? (int)(col - o->profile_where) : (int)strlen(o->profile_where),
		         o->profile_where);
	} else
		snprintf(buf, len, "%s", o->profile ? "--profile" : "the default");
	return buf;
}

/* {"profiles": [...], "active": {"name", "from"}, "recommended": null or {"name", "evidence"}} */
static struct json_object *profiles_json(const struct ht_profile_info *p, size_t n,
                                         const char *active, const char *from,
                                         const struct ht_profile_hint *hint, bool hinted)
{
	struct json_object *j = json_object_new_object(), *a = json_object_new_array();
	struct json_object *act = json_object_new_object(), *rec = NULL;

	if (!j || !a || !act) {
		json_object_put(j);
		json_object_put(a);
		json_object_put(act);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_new_object();

		if (!e)
			continue;
		json_object_object_add(e, "name", jstr(p[i].name));
		json_object_object_add(e, "description", jstr(p[i].description));
		json_object_object_add(e, "file", jstr(p[i].path));
		json_object_object_add(e, "service", jstr(p[i].service));
		json_object_object_add(e, "error", jstr(p[i].error));
		json_object_object_add(e, "active", json_object_new_boolean(strcmp(p[i].name, active) == 0));
		json_object_array_add(a, e);
	}
	json_object_object_add(j, "profiles", a);
	json_object_object_add(act, "name", jstr(active));
	json_object_object_add(act, "from", jstr(from));
	json_object_object_add(j, "active", act);
	if (hinted)
		rec = ht_report_hint_json(p[hint->profile].name, hint);
	json_object_object_add(j, "recommended", rec);
	return j;
}

int cmd_profiles(const struct options *o)
{
	struct ht_ruleset *rs = NULL;
	struct ht_facts *f = NULL;
	struct ht_profile_info *p = NULL;
	struct ht_profile_hint hint = { 0 };
	struct ht_error err = { "" };
	char from[4200], where[PATH_MAX + 32];
	const char *active;
	struct options fo;
	size_t n = 0;
	int r, w = 4;

	/* A facts file first: its host's profile is the active one (cli_facts_profile()). */
	if (o->facts_file) {
		r = cli_load_facts(o, NULL, false, &f);
		if (r)
			return r;
		o = cli_facts_profile(o, f, &fo, where, sizeof(where));
		r = cli_load_rules(o, &rs);
	} else {
		r = cli_load_rules(o, &rs);
		if (!r)
			r = cli_load_facts(o, rs, false, &f);
	}
	if (r) {
		ht_ruleset_free(rs);
		ht_facts_free(f);
		return r;
	}
	active = ht_ruleset_profile(rs);
	profile_origin(o, from, sizeof(from));
	r = cli_profile_hint(rs, f, &p, &n, &hint, &err);
	cli_collect_warnings();
	if (r < 0) {
		r = cli_fail(r, cli_collect_status(r), "%s", err.msg[0] ? err.msg : strerror(-r));
		goto out;
	}
	if (o->json) {
		r = cli_print_json(profiles_json(p, n, active, from, &hint, r > 0));
		goto errors;
	}
	for (size_t i = 0; i < n; i++)
		if ((int)strlen(p[i].name) > w)
			w = (int)strlen(p[i].name);
	for (size_t i = 0; i < n; i++)
		printf("%c %-*s  %s\n", strcmp(p[i].name, active) == 0 ? '*' : ' ', w, p[i].name,
		       p[i].error ? "(does not load: see below)" :
		       p[i].description ? p[i].description : "(no description)");
	printf("active profile: %s (%s)\n", active, from);
	if (r > 0) {
		_cleanup_free_ char *why = ht_report_hint_text(&hint);

		if (!why) {
			r = cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
			goto out;
		}
		printf("recommended: %s (%s)\n", p[hint.profile].name, why);
	}
	r = cli_printed(0);
errors:
	/* Each profile that does not load is bad input, as it is for --profile: exit 2. */
	if (r == 0)
		for (size_t i = 0; i < n; i++)
			if (p[i].error) {
				fflush(stdout);
				cli_error("%s\n", p[i].error);
				r = EXIT_USAGE;
			}
out:
	ht_profile_hint_clear(&hint);
	ht_profile_infos_free(p, n);
	ht_facts_free(f);
	ht_ruleset_free(rs);
	return r;
}
