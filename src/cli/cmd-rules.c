/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hosttune rules and hosttune explain RULE. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "cli/cli.h"
#include "engine/rules.h"

/* Multi-line formulas print on one line: runs of white space become one space. */
static void print_key(const struct ht_rule *rule, const char *key, const char *label)
{
	const char *t = ht_rule_key_text(rule, key);
	bool space = false;

	if (!t)
		return;
	printf("  %-10s ", label);
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
	static const char *const keys[] = { "when", "current", "value", "direction", "severity" };
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
	json_object_object_add(j, "rationale", jstr(ht_rule_rationale(rule)));
	return j;
}

int cmd_explain(const struct options *o, const char *id)
{
	struct ht_ruleset *rs = NULL;
	const struct ht_rule *rule;
	const char *t;
	int r = cli_load_rules(o, &rs);

	if (r)
		return r;
	rule = ht_ruleset_find(rs, id);
	if (!rule) {
		cli_error("no rule '%s' (hosttune rules lists them)\n", id);
		ht_ruleset_free(rs);
		return EXIT_USAGE;
	}
	if (o->json) {
		struct json_object *j = json_object_new_object();

		if (j)
			json_object_object_add(j, "rule", rule_json(rule, true));
		r = cli_print_json(j);
		ht_ruleset_free(rs);
		return r;
	}
	printf("%s", ht_rule_id(rule));
	if (ht_rule_title(rule))
		printf(": %s", ht_rule_title(rule));
	printf("\n  defined at %s:%u\n", ht_rule_pos(rule)->file, ht_rule_pos(rule)->line);
	printf("  %-10s %s%s%s\n", "target", ht_target_kind_name(ht_rule_kind(rule)),
	       ht_rule_target(rule) ? " " : "", ht_rule_target(rule) ? ht_rule_target(rule) : "");
	print_key(rule, "when", "when");
	print_key(rule, "current", "current");
	print_key(rule, "value", "value");
	print_key(rule, "direction", "direction");
	print_key(rule, "severity", "severity");
	t = ht_rule_rationale(rule);
	if (t) {
		const char *p = t;

		printf("\nRationale:\n");
		while (*p) {
			size_t n = strcspn(p, "\n");

			printf("  %.*s\n", (int)n, p);
			p += n + (p[n] ? 1 : 0);
		}
	}
	ht_ruleset_free(rs);
	return 0;
}

int cmd_rules(const struct options *o)
{
	struct ht_ruleset *rs = NULL;
	int r = cli_load_rules(o, &rs);

	if (r)
		return r;
	if (o->json) {
		struct json_object *j = json_object_new_object(), *a = json_object_new_array();

		for (size_t i = 0; a && i < ht_ruleset_rule_count(rs); i++)
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

		printf("%-34s %-7s %s\n", ht_rule_id(rule), ht_target_kind_name(ht_rule_kind(rule)),
		       ht_rule_target(rule) ? ht_rule_target(rule) :
		       (ht_rule_title(rule) ? ht_rule_title(rule) : ""));
	}
	ht_ruleset_free(rs);
	return 0;
}
