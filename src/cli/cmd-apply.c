/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hosttune plan, apply, revert and verify. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "engine/facts.h"
#include "engine/rules.h"
#include "persist/persist.h"
#include "persist/verify.h"
#include "shared/fsutil.h"

/*
 * With --root DIR, --state FILE must be a path below DIR: apply creates the
 * state file's directories, and nothing outside the tree may change (revert
 * would leave them). The path is resolved as far as it exists (symlinks
 * followed, as the write would follow them), the rest taken as written
 * without any ".." component. Returns 0, or EXIT_USAGE after a one-line
 * message.
 */
static int check_state_in_root(const struct options *o)
{
	char root[PATH_MAX], base[PATH_MAX], path[PATH_MAX * 2];
	_cleanup_free_ char *abs = NULL;
	const char *rest;
	size_t cut, rl;

	if (!o->state || !ht_root_confined(o->root))
		return 0;
	if (!realpath(o->root, root))
		return cli_usage_error("--root %s: %s", o->root, strerror(errno));
	if (o->state[0] == '/')
		abs = strdup(o->state);
	else {
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)) || asprintf(&abs, "%s/%s", cwd, o->state) < 0)
			abs = NULL;
	}
	if (!abs)
		return cli_usage_error("--state %s: %s", o->state, strerror(errno ? errno : ENOMEM));
	/* The longest leading part that exists, resolved; the rest as written. */
	for (cut = strlen(abs); cut > 0; cut--) {
		if (abs[cut] != '/' && abs[cut] != '\0')
			continue;
		{
			char save = abs[cut];

			abs[cut] = '\0';
			rest = realpath(abs, base);
			abs[cut] = save;
		}
		if (rest)
			break;
	}
	rest = abs + cut;
	if (cut == 0 && !realpath("/", base))
		return cli_usage_error("--state %s: %s", o->state, strerror(errno));
	for (const char *c = rest; *c;) {
		size_t len;

		c += strspn(c, "/");
		len = strcspn(c, "/");
		if (len == 2 && c[0] == '.' && c[1] == '.')
			return cli_usage_error("--state %s: a '..' in a path that does not exist yet: "
			                       "give a path below --root %s", o->state, o->root);
		c += len;
	}
	snprintf(path, sizeof(path), "%s%s", strcmp(base, "/") == 0 ? "" : base, rest);
	rl = strlen(root);
	if (strcmp(root, "/") != 0 && (strncmp(path, root, rl) != 0 || path[rl] != '/'))
		return cli_usage_error("--state %s is outside --root %s: apply would create it "
		                       "and its directories outside the tree; give a path below %s",
		                       o->state, o->root, root);
	return 0;
}

/*
 * plan and apply: the audit's findings turned into files and live values.
 * A facts file has no host to apply to, so only plan accepts one.
 * plan exits 0 whatever it shows. apply exits 1 (EXIT_FINDINGS) after a
 * successful apply when a setting will not hold at boot (plan.warnings: a
 * later file overrides it, or only the kernel command line reaches a
 * built-in nf_conntrack): the live values are set, the verdict is not green.
 */
int cmd_apply(const struct options *o)
{
	struct ht_facts *facts = NULL;
	struct ht_ruleset *rs = NULL;
	struct ht_findings findings = { 0 };
	struct ht_plan plan = { 0 };
	struct ht_error err = { "" };
	int r;

	if (o->facts_file && !o->dry_run)
		return cli_usage_error("apply needs a host (live or --root), not --facts");
	if (!o->dry_run && (r = check_state_in_root(o)) != 0)
		return r;
	r = cli_evaluate(o, &rs, &facts, &findings);
	if (r)
		goto out;
	r = ht_plan_build(&findings, facts, o->root, ht_ruleset_profile(rs), o->only,
	                  o->plan_flags | (o->facts_file ? HT_PLAN_NO_DISK : 0), &plan, &err);
	if (r < 0) {
		fprintf(stderr, "hosttune: %s\n", err.msg[0] ? err.msg : strerror(-r));
		/* -ELOOP, -EXDEV: a target resolves through a symlink (shared/fsutil.h). */
		r = r == -EINVAL || r == -ELOOP || r == -EXDEV ? EXIT_USAGE : EXIT_COLLECT;
		goto out;
	}
	if (o->dry_run) {
		r = o->json ? cli_print_json(ht_plan_to_json(&plan, false)) :
		    (ht_plan_print(&plan, stdout) < 0 ? EXIT_COLLECT : 0);
		goto out;
	}
	r = ht_plan_apply(&plan, o->root, o->state, o->force, &err);
	if (r < 0) {
		const char *msg = err.msg[0] ? err.msg : strerror(-r);

		if (r == -EEXIST)
			fprintf(stderr, "hosttune: apply refused: %s\n", msg);
		else if (r == -EBADMSG)
			fprintf(stderr, "hosttune: apply refused, nothing was changed: %s\n", msg);
		else if (r == -ENOTRECOVERABLE)
			fprintf(stderr, "hosttune: apply failed and could not roll everything back: "
			        "%s\n", msg);
		else
			fprintf(stderr, "hosttune: apply failed, every change rolled back: %s\n", msg);
		r = r == -EEXIST ? EXIT_USAGE : EXIT_COLLECT;
		goto out;
	}
	if (o->json)
		r = cli_print_json(ht_plan_to_json(&plan, true));
	else if (ht_plan_empty(&plan) && plan.nwarnings == 0)
		printf("No changes: the files and live values already match the plan.\n");
	else if (ht_plan_empty(&plan))
		printf("No changes: the files and live values already match the plan, but:\n");
	else {
		/* The paths below are host paths; say which tree they are in. */
		if (o->root)
			printf("below --root %s:\n", o->root);
		for (size_t i = 0; i < plan.nfiles; i++) {
			const struct ht_plan_file *f = &plan.files[i];

			if (f->old && f->new && strcmp(f->old, f->new) == 0)
				continue;
			printf("%s %s\n", !f->old ? "created" : !f->new ? "removed" : "updated", f->path);
		}
		for (size_t i = 0; i < plan.nlive; i++) {
			const struct ht_plan_live *l = &plan.live[i];

			if (l->note)
				printf("skipped %s: %s\n", l->key, l->note);
			else
				printf("set %s from %s to %s\n", l->key, l->old ? l->old : "-", l->new);
		}
	}
	if (!o->json && plan.nwarnings && ht_plan_print_warnings(&plan, stdout) < 0)
		r = EXIT_COLLECT;
	if (r == 0 && plan.nwarnings)
		r = EXIT_FINDINGS;
out:
	ht_plan_free(&plan);
	ht_findings_free(&findings);
	ht_facts_free(facts);
	ht_ruleset_free(rs);
	return r;
}

/* verify: exit 0 when every setting holds now and after a reboot, 1 otherwise. */
int cmd_verify(const struct options *o)
{
	struct ht_facts *facts = NULL;
	struct ht_ruleset *rs = NULL;
	struct ht_findings findings = { 0 };
	struct ht_verify_report report = { 0 };
	int r;

	if (o->facts_file)
		return cli_usage_error("verify needs a host (live or --root), not --facts");
	r = cli_evaluate(o, &rs, &facts, &findings);
	if (r)
		goto out;
	if (ht_verify(rs, &findings, facts, o->root, o->state, &report) < 0) {
		fprintf(stderr, "hosttune: out of memory\n");
		r = EXIT_COLLECT;
		goto out;
	}
	if (o->json)
		r = cli_print_json(ht_verify_to_json(&report));
	else
		r = ht_verify_print(&report, stdout) < 0 ? EXIT_COLLECT : 0;
	if (r == 0 && ht_verify_problems(&report) > 0)
		r = EXIT_FINDINGS;
out:
	ht_verify_report_free(&report);
	ht_findings_free(&findings);
	ht_facts_free(facts);
	ht_ruleset_free(rs);
	return r;
}

int cmd_revert(const struct options *o)
{
	struct ht_error err = { "" };
	int r;

	if (o->facts_file)
		return cli_usage_error("revert needs a host (live or --root), not --facts");
	if ((r = check_state_in_root(o)) != 0)
		return r;
	if (o->root)
		printf("below --root %s:\n", o->root);
	r = ht_revert(o->root, o->state, stdout, &err);
	if (r < 0) {
		const char *msg = err.msg[0] ? err.msg : strerror(-r);

		if (r == -ENOENT)
			fprintf(stderr, "hosttune: revert: %s\n", msg);
		else if (r == -EBADMSG)
			fprintf(stderr, "hosttune: revert refused, nothing was changed: %s\n", msg);
		else
			fprintf(stderr, "hosttune: revert incomplete: %s\n", msg);
		return r == -ENOENT ? EXIT_USAGE : EXIT_COLLECT;
	}
	return 0;
}
