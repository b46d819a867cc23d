/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every command shares: rules, facts, findings and the JSON printer. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli/cli.h"
#include "collect/collect.h"
#include "engine/facts.h"
#include "engine/rules.h"
#include "engine/value.h"
#include "shared/util.h"

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/share/hosttune"
#endif
#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "hosttune: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (hosttune --help lists the usage)\n");
	return EXIT_USAGE;
}

int cli_load_facts(const struct options *o, struct ht_facts **out)
{
	struct ht_facts *f = ht_facts_new();
	struct ht_error err = { "" };
	int r;

	if (!f) {
		fprintf(stderr, "hosttune: out of memory\n");
		return EXIT_COLLECT;
	}
	if (o->facts_file) {
		_cleanup_fclose_ FILE *in = strcmp(o->facts_file, "-") == 0 ? NULL :
		                            fopen(o->facts_file, "re");

		if (!in && strcmp(o->facts_file, "-") != 0) {
			fprintf(stderr, "hosttune: %s: %s\n", o->facts_file, strerror(errno));
			ht_facts_free(f);
			return EXIT_USAGE;
		}
		r = ht_facts_read(f, in ? in : stdin, o->facts_file, &err);
		if (r < 0) {
			fprintf(stderr, "hosttune: %s\n", err.msg[0] ? err.msg : strerror(-r));
			ht_facts_free(f);
			return EXIT_USAGE;
		}
	} else {
		r = ht_facts_collect(f, o->root, o->no_measure ? HT_COLLECT_NO_MEASURE : 0);
		/* hosttune's own record: the drop counters at the last apply. */
		if (r >= 0)
			r = ht_collect_apply_counters(f, o->root, o->state);
		if (r < 0) {
			fprintf(stderr, "hosttune: collecting facts: %s\n", strerror(-r));
			ht_facts_free(f);
			return EXIT_COLLECT;
		}
	}
	*out = f;
	return 0;
}

int cli_load_rules(const struct options *o, struct ht_ruleset **out)
{
	_cleanup_free_ char *etc = NULL;
	const char *dirs[2];
	size_t n = 0;
	struct ht_ruleset *rs = NULL;
	struct ht_error err = { "" };
	int r;

	if (o->rules_dir)
		dirs[n++] = o->rules_dir;
	else {
		etc = ht_root_path(o->root, SYSCONFDIR "/hosttune/rules.d");
		if (!etc) {
			fprintf(stderr, "hosttune: out of memory\n");
			return EXIT_COLLECT;
		}
		dirs[n++] = PKGDATADIR "/rules";
		dirs[n++] = etc;
	}
	r = ht_ruleset_load(dirs, n, &rs, &err);
	if (r >= 0)
		r = ht_ruleset_load_profile(rs, o->profile ? o->profile : "default", &err);
	for (size_t i = 0; r >= 0 && i < o->nsets; i++)
		r = ht_ruleset_set_var(rs, o->sets[i], &err);
	if (r >= 0)
		r = ht_ruleset_check(rs, &err);
	if (r < 0) {
		fprintf(stderr, "hosttune: %s\n", err.msg[0] ? err.msg : strerror(-r));
		if (r == -ENOENT && !o->rules_dir)
			fprintf(stderr, "hosttune: (not installed? run from the source tree with "
			                "--rules rules)\n");
		ht_ruleset_free(rs);
		return EXIT_USAGE;
	}
	*out = rs;
	return 0;
}

int cli_print_json(struct json_object *o)
{
	const char *s;

	if (!o) {
		fprintf(stderr, "hosttune: out of memory\n");
		return EXIT_COLLECT;
	}
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
	                                      JSON_C_TO_STRING_NOSLASHESCAPE);
	puts(s);
	json_object_put(o);
	return 0;
}

/*
 * Every real collection has the RAM and the kernel version (/proc/meminfo,
 * /proc/sys/kernel/osrelease). Without both, the root is not a host's tree
 * or the facts file is not a host's facts: no audit of nothing.
 */
static int check_basic_facts(const struct options *o, const struct ht_facts *f)
{
	static const char *const basic[] = { "mem.total", "kernel.version" };
	size_t missing = 0;

	for (size_t i = 0; i < ARRAY_SIZE(basic); i++) {
		const struct ht_fact *fact = ht_facts_get(f, basic[i]);

		if (!fact || fact->value.type == HT_T_NONE)
			missing++;
	}
	if (missing < ARRAY_SIZE(basic))
		return 0;
	if (o->facts_file) {
		fprintf(stderr, "hosttune: %s: neither mem.total nor kernel.version is given: "
		                "not the facts of a host\n", o->facts_file);
		return EXIT_USAGE;
	}
	fprintf(stderr, "hosttune: could not collect mem.total or kernel.version from %s/proc: "
	                "not a host's tree\n", o->root ? o->root : "");
	return EXIT_COLLECT;
}

/* The profile's burst factor: the headroom a recommendation leaves over a peak. */
double cli_profile_headroom(const struct ht_ruleset *rs)
{
	for (size_t i = 0; i < ht_ruleset_var_count(rs); i++)
		if (strcmp(ht_ruleset_var_name(rs, i), "workload.burst") == 0) {
			const struct ht_value *v = ht_ruleset_var_value(rs, i);

			if (ht_type_is_number(v->type) && ht_value_as_double(v) >= 1)
				return ht_value_as_double(v);
		}
	return 2;
}

/*
 * audit --observed FILE: the recording's summary as observed.* facts
 * (ht_collect_observed()), sized with the profile's burst factor.
 */
static int load_observed(const struct options *o, const struct ht_ruleset *rs,
                         struct ht_facts *f)
{
	struct ht_error err = { "" };
	int r = ht_collect_observed(f, o->observed, cli_profile_headroom(rs), &err);

	if (r < 0 && err.msg[0]) {
		fprintf(stderr, "hosttune: %s\n", err.msg);
		return EXIT_USAGE;
	}
	return r < 0 ? EXIT_COLLECT : 0;
}

/*
 * The common first half of audit, plan/apply and verify: rules and profile,
 * facts (collected, a --root tree or a --facts file, plus --observed), and
 * the findings. Returns 0 or the exit status, with what was loaded in the
 * out-parameters for the caller to free either way.
 */
int cli_evaluate(const struct options *o, struct ht_ruleset **rs, struct ht_facts **facts,
                    struct ht_findings *findings)
{
	struct ht_error err = { "" };
	int r;

	r = cli_load_rules(o, rs);
	if (r == 0)
		r = cli_load_facts(o, facts);
	if (r == 0)
		r = check_basic_facts(o, *facts);
	if (r == 0 && o->observed)
		r = load_observed(o, *rs, *facts);
	if (r)
		return r;
	r = ht_ruleset_evaluate(*rs, *facts, findings, &err);
	if (r < 0) {
		fprintf(stderr, "hosttune: %s\n", err.msg[0] ? err.msg : strerror(-r));
		return EXIT_USAGE;
	}
	return 0;
}
