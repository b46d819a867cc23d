/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hosttune facts and hosttune audit. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/report.h"
#include "cli/settings.h"
#include "engine/facts.h"
#include "engine/rules.h"
#include "persist/persist.h"
#include "shared/rootfs.h"
#include "shared/util.h"

/* ROOT/etc/garage.toml exists: audit runs the Garage pre-flight then, so facts does too. */
static bool garage_toml_exists(const char *root)
{
	struct stat st;

	return ht_root_stat(root, "/etc/garage.toml", false, &st) == 0;
}

/* The configuration has [set] values for this command (cli/settings.h). */
static bool config_sets(const struct options *o)
{
	return o->config && o->config_sets && o->config->nsets > 0;
}

/*
 * The configuration's waivers into @f, for audit --facts elsewhere to judge
 * the host as it judges itself: hosttune.waivers (how many, 0 too) and
 * hosttune.waiver.N.text, each as its [waive] line holds it, sourced with
 * its FILE:LINE:COL. Returns 0 or the exit status.
 */
static int record_waivers(const struct options *o, struct ht_facts *f)
{
	size_t n = o->config ? o->config->nwaivers : 0;

	if (ht_facts_set_int(f, "hosttune.waivers", (int64_t)n, "waivers",
	                     "the configuration's [waive]") < 0)
		return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const struct cli_waiver *w = &o->config->waivers[i];
		_cleanup_free_ char *name = NULL, *text = NULL;

		if (asprintf(&name, "hosttune.waiver.%zu.text", i + 1) < 0) {
			name = NULL;
			return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
		}
		if (asprintf(&text, "%s%s%s%s = %s", w->rule, w->instance ? "[" : "",
		             w->instance ? w->instance : "", w->instance ? "]" : "", w->reason) < 0) {
			text = NULL;
			return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
		}
		if (ht_facts_set_str(f, name, text, w->where) < 0)
			return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
	}
	return 0;
}

int cmd_facts(const struct options *o)
{
	struct ht_facts *f = NULL;
	struct ht_ruleset *rs = NULL;
	int r = 0;

	/*
	 * With --profile or --set (the configuration's too, or an
	 * /etc/garage.toml), what the profile
	 * asks collected too: its service's process and the Garage pre-flight,
	 * so that a facts file taken here audits elsewhere as this host does.
	 * The rules are read anyway when they can be: the sysctls they read
	 * that hosttune has no entry for (a site rule's) are in the snapshot.
	 */
	if (!o->facts_file && (o->profile || o->nsets || config_sets(o) ||
	                       garage_toml_exists(o->root)))
		r = cli_load_rules(o, &rs);
	else if (!o->facts_file)
		cli_try_load_rules(o, &rs);
	if (r == 0)
		r = cli_load_facts(o, rs, true, &f);
	if (r == 0 && rs)
		r = cli_collect_rule_sysctls(rs, f);
	/* The host's own profile and where it came from, for audit --facts elsewhere. */
	if (r == 0 && !o->facts_file &&
	    ht_facts_set_str(f, "hosttune.profile", o->profile ? o->profile : "default",
	                     o->profile_where ? o->profile_where :
	                     o->profile ? "--profile" : "default") < 0)
		r = cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
	if (r == 0 && !o->facts_file)
		r = record_waivers(o, f);
	ht_ruleset_free(rs);
	if (r)
		return r;
	if (o->json)
		r = cli_print_json(ht_facts_to_json(f));
	else
		r = cli_printed(ht_facts_write(f, stdout));
	ht_facts_free(f);
	return r;
}

static const char *origin_of(const struct options *o, char *buf, size_t len)
{
	if (o->facts_file)
		snprintf(buf, len, "facts file %s", o->facts_file);
	else if (o->root)
		snprintf(buf, len, "root %s", o->root);
	else
		snprintf(buf, len, "this host");
	return buf;
}

int cmd_audit(const struct options *o)
{
	struct ht_facts *facts = NULL;
	struct ht_ruleset *rs = NULL;
	struct ht_findings findings = { 0 };
	struct ht_plan plan = { 0 };
	struct ht_error err = { "" };
	char origin[4200];
	struct ht_report_info info;
	struct ht_profile_info *profiles = NULL;
	struct ht_profile_hint hint = { 0 };
	const char *hint_name = NULL;
	size_t nprofiles = 0;
	int r;

	r = cli_evaluate(o, &rs, &facts, &findings);
	if (r)
		goto out;
	/* The fixes alone: no file, no live value (a facts file's host has no files here). */
	r = ht_plan_build(&findings, facts, o->root, ht_ruleset_profile(rs), NULL,
	                  o->facts_file ? HT_PLAN_NO_DISK : 0, &plan, &err);
	if (r < 0) {
		r = cli_fail(r, EXIT_COLLECT, "%s", err.msg[0] ? err.msg : strerror(-r));
		goto out;
	}
	origin_of(o, origin, sizeof(origin));
	if (!o->json) {
		/* The text says what the counters cover: an interval, not since boot. */
		const struct ht_fact *sf = ht_facts_get(facts, "sample.seconds");

		if (sf && sf->value.type != HT_T_NONE && !sf->error)
			snprintf(origin + strlen(origin), sizeof(origin) - strlen(origin),
			         ", counters over a %.2f s sample", ht_value_as_double(&sf->value));
	}
	/* Advice only: profiles that do not load, or facts a provider cannot give, leave none. */
	r = cli_profile_hint(rs, facts, &profiles, &nprofiles, &hint, &err);
	if (r == -ENOMEM) {
		r = cli_fail(r, EXIT_COLLECT, "out of memory");
		goto out;
	}
	if (r > 0)
		hint_name = profiles[hint.profile].name;
	err.msg[0] = '\0';
	info = (struct ht_report_info){ .origin = origin,
		                        .rules = rs, .values = rs, .fixes = plan.fixes,
		                        .color = o->color, .width = o->width,
		                        .wrap_all = o->terminal,
		                        .detail = (enum ht_report_detail)o->detail,
		                        .priority = cli_journal_priority,
		                        .hint_name = hint_name, .hint = &hint };
	if (o->json)
		r = cli_print_json(ht_report_json(&findings, &info));
	else
		r = cli_printed(ht_report_text(&findings, &info, stdout));
	if (r == 0 && fflush(stdout) != 0)
		r = cli_printed(-EIO);
	if (r == 0 && ht_findings_worst(&findings) >= o->fail_on)
		r = EXIT_FINDINGS;
out:
	ht_profile_hint_clear(&hint);
	ht_profile_infos_free(profiles, nprofiles);
	ht_plan_free(&plan);
	ht_findings_free(&findings);
	ht_facts_free(facts);
	ht_ruleset_free(rs);
	return r;
}
