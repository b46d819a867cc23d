/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hosttune plan, apply, revert and verify. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli/cli.h"
#include "cli/report.h"
#include "cli/settings.h"
#include "engine/facts.h"
#include "engine/rules.h"
#include "persist/persist.h"
#include "persist/verify.h"
#include "shared/fsutil.h"
#include "shared/rootfs.h"

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
 * The lock of apply and revert (ht_persist_lock()), waiting --wait: the
 * descriptor, or the exit status after a one-line message.
 */
static int take_lock(const struct options *o, const char *cmd, int *fd)
{
	struct ht_error err = { "" };
	int r = ht_root_pin(o->root);

	/*
	 * The tree is opened once, before the wait: whatever its path leads to
	 * once the lock is held, every read and write goes to this directory.
	 */
	if (r < 0)
		return cli_fail(r, EXIT_COLLECT, "%s: %s: %s", cmd, o->root, strerror(-r));
	r = ht_persist_lock(o->root, o->wait, &err);

	if (r >= 0) {
		*fd = r;
		return 0;
	}
	return cli_fail(r, r == -EWOULDBLOCK ? EXIT_BUSY : EXIT_COLLECT, "%s: %s", cmd,
	                err.msg[0] ? err.msg : strerror(-r));
}

/*
 * The message of apply's or revert's failure @r (@err's, else strerror()):
 * "out of memory" when memory ran out, as persist/ may say it inside its
 * message (revert's -ECANCELED), whichever file it was working on then.
 */
static const char *failure_text(int r, const struct ht_error *err)
{
	const char *msg = err->msg[0] ? err->msg : strerror(-r);

	return r == -ENOMEM || strstr(msg, strerror(ENOMEM)) ? "out of memory" : msg;
}

/*
 * What a failure of apply or revert (@r, @msg: its message) by a user other
 * than root owes to that: " (apply and revert on this host need root)", or
 * below a --root " (this user may not change the tree below --root DIR)",
 * in @buf; "" when the kernel refused nothing (EACCES, EPERM) or the user is
 * root. persist/ folds the errno of a step into the message (revert's
 * "nothing was changed" is -ECANCELED), so its text counts too.
 */
static const char *permission_hint(const struct options *o, int r, const char *msg, char *buf,
                                   size_t len)
{
	bool denied = r == -EACCES || r == -EPERM || strstr(msg, strerror(EACCES)) ||
	              strstr(msg, strerror(EPERM));

	if (!denied || geteuid() == 0)
		return "";
	if (ht_root_is_live(o->root))
		snprintf(buf, len, " (apply and revert on this host need root)");
	else
		snprintf(buf, len, " (this user may not change the tree below --root %s)", o->root);
	return buf;
}

/*
 * After apply or revert changed the host: a report that could not be written
 * (a full disk, a closed pipe) is its own outcome, EXIT_UNREPORTED, not a
 * failure to change it. Returns @r or EXIT_UNREPORTED.
 */
static int check_report(int r, const char *done)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return r;
	cli_error("%s, but the report could not be written: %s\n", done,
	        strerror(errno ? errno : EIO));
	return EXIT_UNREPORTED;
}

/*
 * The JSON report @j (consumed) of an apply or revert that changed the host
 * (@done: "apply is complete"): printed and checked as check_report() does.
 * A report that cannot be made for want of memory is lost too:
 * EXIT_UNREPORTED after "DONE, but the report could not be written: out of
 * memory". Returns @r or EXIT_UNREPORTED.
 */
static int report_json(struct json_object *j, int r, const char *done)
{
	if (cli_put_json(j) < 0) {
		cli_error("%s, but the report could not be written: out of memory", done);
		return EXIT_UNREPORTED;
	}
	return check_report(r, done);
}

/*
 * A sysctl the kernel documents as a security boundary
 * (Documentation/admin-guide/sysctl/kernel.rst, fs.rst, net.rst; Yama's
 * LSM/Yama.rst; user namespaces' limits in user.rst): every kernel.* key
 * (kptr_restrict, dmesg_restrict, unprivileged_bpf_disabled, yama.*),
 * fs.protected_*, fs.suid_dumpable, net.core.bpf_jit_harden and user.*.
 */
static bool security_boundary(const char *key)
{
	return strncmp(key, "kernel.", 7) == 0 || strncmp(key, "fs.protected_", 13) == 0 ||
	       strncmp(key, "user.", 5) == 0 || strcmp(key, "fs.suid_dumpable") == 0 ||
	       strcmp(key, "net.core.bpf_jit_harden") == 0;
}

/*
 * apply changes a security boundary only when asked: a rule whose fix
 * writes such a sysctl needs --force or an [allow] of the configuration.
 * plan says so on stderr and goes on (@refuse false); apply stops before
 * it changes anything (exit 2), naming each rule, its file and line.
 */
static int check_boundaries(const struct options *o, const struct ht_ruleset *rs,
                            const struct ht_findings *fs, bool refuse)
{
	size_t n = 0;

	/* An [allow] for a rule the rules do not have allows nothing: a typo, or a rule gone. */
	for (size_t k = 0; o->config && k < o->config->nallows; k++) {
		const struct cli_waiver *a = &o->config->allows[k];
		const struct ht_rule *r = ht_ruleset_find(rs, a->rule);
		const char *key = r ? ht_rule_target(r) : NULL;

		if (!r)
			cli_note("warning: %s: [allow] of '%s': the rules have no rule of that id",
			         a->where, a->rule);
		else if (ht_rule_kind(r) != HT_TARGET_SYSCTL || !key || !security_boundary(key))
			cli_note("warning: %s: [allow] of '%s': that rule sets no security boundary "
			         "of the kernel, which is all [allow] is for", a->where, a->rule);
	}

	for (size_t i = 0; i < fs->n; i++) {
		const struct ht_finding *fi = &fs->items[i];
		const struct ht_rule *r = fi->rule;
		const char *key = ht_rule_target(r);
		const struct ht_srcpos *pos = ht_rule_pos(r);
		const struct cli_waiver *allow = NULL;

		if (ht_rule_kind(r) != HT_TARGET_SYSCTL || !key || !security_boundary(key) ||
		    !fi->applicable || fi->kept || fi->recommended.type == HT_T_NONE ||
		    fi->severity == HT_SEV_OK || !ht_plan_selects(o->only, ht_rule_id(r)))
			continue;
		for (size_t k = 0; o->config && k < o->config->nallows; k++)
			if (strcmp(o->config->allows[k].rule, ht_rule_id(r)) == 0)
				allow = &o->config->allows[k];
		if (o->force || allow)
			continue;
		if (refuse)
			cli_error("rule %s (%s:%u) sets %s, a security boundary of the kernel: apply "
			          "changes it only with --force, or with '%s = REASON' in the [allow] "
			          "section of hosttune.conf\n", ht_rule_id(r), pos ? pos->file : "?",
			          pos ? pos->line : 0, key, ht_rule_id(r));
		else
			cli_note("note: rule %s (%s:%u) sets %s, a security boundary of the kernel: "
			         "apply will change it only with --force, or with '%s = REASON' in the "
			         "[allow] section of hosttune.conf", ht_rule_id(r),
			         pos ? pos->file : "?", pos ? pos->line : 0, key, ht_rule_id(r));
		n++;
	}
	return n && refuse ? EXIT_USAGE : 0;
}

/*
 * plan's text: the plan as ht_plan_print() writes it, its diff in colour
 * when the terminal takes colour (--color, NO_COLOR: cli_terminal()).
 */
static int print_plan(const struct options *o, const struct ht_plan *plan)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	FILE *m;
	int r;

	if (!o->color)
		return cli_printed(ht_plan_print(plan, stdout));
	m = open_memstream(&text, &len);
	if (!m)
		return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
	r = ht_plan_print(plan, m);
	if (fclose(m) != 0 && r >= 0)
		r = -ENOMEM;
	if (r < 0)
		return cli_printed(r);
	return cli_printed(ht_report_plan(stdout, text, len, true));
}

/*
 * plan and apply: the audit's findings turned into files and live values.
 * A facts file has no host to apply to, so only plan accepts one.
 * plan (and apply --dry-run) exits as diff(1) does: 1 (EXIT_FINDINGS) when
 * the host does not match the plan (apply would change a file or a live
 * value, or a setting is refused), 0 when it matches. apply exits 1 (EXIT_FINDINGS) after a
 * successful apply when a setting will not hold at boot (plan.warnings: a
 * later file overrides it, or only the kernel command line reaches a
 * built-in nf_conntrack): the live values are set, the verdict is not green.
 */
int cmd_apply(const struct options *o)
{
	_cleanup_(ht_paths_free) struct ht_paths swept = { 0 }, keys = { 0 };
	_cleanup_close_ int lock = -1;
	struct ht_facts *facts = NULL;
	struct ht_ruleset *rs = NULL;
	struct ht_findings findings = { 0 };
	struct ht_plan plan = { 0 };
	struct ht_error err = { "" };
	int r;

	/* --facts: plan and apply --dry-run only (main.c's option table). */
	if (!o->dry_run && (r = check_state_in_root(o)) != 0)
		return r;
	/* From before the plan reads the files to after the last fsync. */
	if (!o->dry_run && (r = take_lock(o, "apply", &lock)) != 0)
		return r;
	r = cli_evaluate(o, &rs, &facts, &findings);
	if (r)
		goto out;
	r = check_boundaries(o, rs, &findings, !o->dry_run);
	if (r)
		goto out;
	r = ht_plan_build(&findings, facts, o->root, ht_ruleset_profile(rs), o->only,
	                  o->plan_flags | (o->facts_file ? HT_PLAN_NO_DISK : 0), &plan, &err);
	if (r < 0) {
		/*
		 * -ELOOP, -EXDEV: a target resolves through a symlink; -EBADMSG,
		 * -EFBIG: it is not a text file (shared/fsutil.h): in the way, like bad input.
		 */
		r = cli_fail(r, r == -EINVAL || r == -ELOOP || r == -EXDEV || r == -EBADMSG ||
		             r == -EFBIG ? EXIT_USAGE : EXIT_COLLECT,
		             "%s", err.msg[0] ? err.msg : strerror(-r));
		goto out;
	}
	if (o->dry_run) {
		r = o->json ? cli_print_json(ht_plan_to_json(&plan, false)) : print_plan(o, &plan);
		if (r == 0 && (!ht_plan_empty(&plan) || ht_plan_refused(&plan)))
			r = EXIT_FINDINGS;
		goto out;
	}
	/* The state file may name only what a rule of these sets (an earlier apply's too). */
	if (ht_state_keys(rs, &keys) < 0) {
		r = cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
		goto out;
	}
	r = ht_plan_apply(&plan, o->root, o->state, &keys, o->force, &swept, &err);
	for (size_t i = 0; i < swept.n; i++)
		cli_note("removed %s, left by an interrupted hosttune", swept.v[i]);
	if (r < 0) {
		const char *msg = failure_text(r, &err);
		char why[PATH_MAX + 64];
		const char *hint = permission_hint(o, r, msg, why, sizeof(why));

		if (r == -EEXIST)
			cli_error("apply refused: %s\n", msg);
		else if (r == -EBADMSG)
			cli_error("apply refused, nothing was changed: %s\n", msg);
		else if (r == -ECANCELED)
			cli_error("apply failed, nothing was changed: %s%s\n", msg, hint);
		else if (r == -ENOTRECOVERABLE)
			cli_error("apply failed and could not roll everything back: "
			        "%s%s\n", msg, hint);
		else
			cli_error("apply failed, every change rolled back: %s%s\n", msg, hint);
		/* Refused for what is in the way (a file not hosttune's, a symlink): like bad input. */
		r = r == -EEXIST || r == -EBADMSG ? EXIT_USAGE : EXIT_COLLECT;
		goto out;
	}
	if (o->json && !ht_plan_empty(&plan)) {
		r = report_json(ht_plan_to_json(&plan, true),
		                plan.nwarnings || ht_plan_refused(&plan) ? EXIT_FINDINGS : 0,
		                "apply is complete");
		goto out;
	} else if (o->json)
		r = cli_print_json(ht_plan_to_json(&plan, true));
	else if (ht_plan_empty(&plan) && plan.nwarnings == 0)
		printf("%s\n", ht_plan_empty_text(&plan));
	else if (ht_plan_empty(&plan) && !ht_plan_refused(&plan))
		printf("No changes: the files and live values already match the plan, but:\n");
	else if (ht_plan_empty(&plan))
		printf("%s\n", ht_plan_empty_text(&plan));
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
		if (plan.load_module)
			printf(plan.module_loaded ? "loaded %s (libkmod, with the options in modprobe.d) "
			       "\n" : "%s was loaded already\n", plan.load_module);
		for (size_t i = 0; i < plan.nlive; i++) {
			const struct ht_plan_live *l = &plan.live[i];

			if (l->note)
				printf("skipped %s: %s\n", l->key, l->note);
			else if (l->after_load && l->old && ht_int_text_equal(l->old, l->new))
				printf("%s is %s already, as it loaded\n", l->key, l->new);
			else
				printf("set %s from %s to %s\n", l->key, l->old ? l->old : "-", l->new);
		}
	}
	if (!o->json)
		ht_plan_print_restart(&plan, stdout);
	if (!o->json && plan.nwarnings)
		ht_plan_print_warnings(&plan, stdout);
	/* A refused setting leaves its finding as it was: not a green verdict either. */
	if (r == 0 && (plan.nwarnings || ht_plan_refused(&plan)))
		r = EXIT_FINDINGS;
	/* Exit 5 only when the host changed; else a lost report is exit 3 (main()). */
	if ((r == 0 || r == EXIT_FINDINGS) && !ht_plan_empty(&plan))
		r = check_report(r, "apply is complete");
out:
	ht_plan_free(&plan);
	ht_findings_free(&findings);
	ht_facts_free(facts);
	ht_ruleset_free(rs);
	return r;
}

/*
 * verify: exit 0 when every setting hosttune applied holds now and after a
 * reboot (or none is persisted), 1 otherwise. The text report's first line
 * says so, and that audit is what judges the host against the profile.
 */
int cmd_verify(const struct options *o)
{
	struct ht_facts *facts = NULL;
	struct ht_ruleset *rs = NULL;
	struct ht_findings findings = { 0 };
	struct ht_verify_report report = { 0 };
	int r;

	r = cli_evaluate(o, &rs, &facts, &findings);
	if (r)
		goto out;
	if (ht_verify(rs, &findings, facts, o->root, o->state, &report) < 0) {
		r = cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
		goto out;
	}
	if (o->json)
		r = cli_print_json(ht_verify_to_json(&report));
	else {
		printf("hosttune verify: do the settings hosttune applied hold now and after a "
		       "reboot? (whether the host matches the profile: hosttune audit)\n");
		r = cli_printed(ht_verify_print(&report, stdout));
	}
	if (r == 0 && ht_verify_problems(&report) > 0)
		r = EXIT_FINDINGS;
out:
	ht_verify_report_free(&report);
	ht_findings_free(&findings);
	ht_facts_free(facts);
	ht_ruleset_free(rs);
	return r;
}

/* "PREFIX" at the start of @s: the rest, else NULL. */
static const char *after(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

/* Member @key of @j: the string @s, null when @s is NULL. 0, or -ENOMEM. */
static int add_text(struct json_object *j, const char *key, const char *s)
{
	struct json_object *v = s ? json_object_new_string(s) : NULL;

	if (s && !v)
		return -ENOMEM;
	if (json_object_object_add(j, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

/*
 * One line of ht_revert()'s report (persist/persist.h lists them) as
 * {"action", "kind", "target", "value", "reason", "message"}: action is
 * restored, removed, unchanged, left, skipped or failed; kind live, file or
 * directory (a file's path starts with '/', a live key does not); value the
 * live value restored; reason why it was left, skipped or failed; message the
 * line as text prints it.
 */
static struct json_object *revert_action(const char *line)
{
	static const struct {
		const char *prefix, *action, *kind;
	} forms[] = {
		{ "could not remove directory ", "failed", "directory" },
		{ "could not restore ", "failed", NULL },
		{ "removed directory ", "removed", "directory" },
		{ "left directory ", "left", "directory" },
		{ "restored ", "restored", NULL },
		{ "removed ", "removed", NULL },
		{ "unchanged ", "unchanged", NULL },
		{ "left ", "left", NULL },
		{ "skipped ", "skipped", "live" },
	};
	struct json_object *j = json_object_new_object();
	_cleanup_free_ char *target = NULL, *value = NULL;
	const char *rest = NULL, *action = "other", *kind = NULL, *reason = NULL;

	if (!j)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(forms) && !rest; i++) {
		rest = after(line, forms[i].prefix);
		if (rest) {
			action = forms[i].action;
			kind = forms[i].kind;
		}
	}
	if (rest) {
		/* KEY to VALUE[: WHY] | PATH[: WHY]; keys and paths have no spaces. */
		size_t n = strcspn(rest, kind ? ":" : " :");
		const char *tail = rest + n;

		if (!kind)
			kind = rest[0] == '/' ? "file" : "live";
		target = strndup(rest, n);
		if (after(tail, " to ")) {
			const char *v = tail + 4, *colon = strstr(v, ": ");

			value = colon ? strndup(v, (size_t)(colon - v)) : strdup(v);
			tail = colon ? colon : "";
		}
		if (after(tail, ": "))
			reason = tail + 2;
	}
	/* Every member that has a text has it, or the action is not made (ENOMEM). */
	if ((rest && (!target || (after(rest + strlen(target), " to ") && !value))) ||
	    add_text(j, "action", action) < 0 || add_text(j, "kind", kind) < 0 ||
	    add_text(j, "target", target) < 0 || add_text(j, "value", value) < 0 ||
	    add_text(j, "reason", reason) < 0 || add_text(j, "message", line) < 0) {
		json_object_put(j);
		return NULL;
	}
	return j;
}

/*
 * revert --format json: {"changed", "complete", "root", "actions": [...]}
 * from the report @text; changed when something was restored or removed,
 * complete when nothing is left in the state file; "error" (@error,
 * consumed, cli_error_json()) when revert was incomplete.
 */
static struct json_object *revert_json(const struct options *o, char *text, bool complete,
                                       struct json_object *error)
{
	struct json_object *j = json_object_new_object(), *actions = json_object_new_array();
	bool changed = false;

	if (!j || !actions) {
		json_object_put(j);
		json_object_put(actions);
		json_object_put(error);
		return NULL;
	}
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct json_object *a = revert_action(line);
		const char *act;

		if (!a) {
			json_object_put(actions);
			json_object_put(j);
			json_object_put(error);
			return NULL;
		}
		act = json_object_get_string(json_object_object_get(a, "action"));
		changed |= strcmp(act, "restored") == 0 || strcmp(act, "removed") == 0;
		json_object_array_add(actions, a);
	}
	json_object_object_add(j, "changed", json_object_new_boolean(changed));
	json_object_object_add(j, "complete", json_object_new_boolean(complete));
	json_object_object_add(j, "root", o->root ? json_object_new_string(o->root) : NULL);
	json_object_object_add(j, "actions", actions);
	if (error)
		json_object_object_add(j, "error", error);
	return j;
}

/*
 * revert: the report as ht_revert() writes it, one line an action; with
 * --format json one object (revert_json()), also when revert is incomplete.
 * The rules are read for the live keys they set: the state file may name
 * no other (ht_state_keys()).
 */
int cmd_revert(const struct options *o)
{
	_cleanup_(ht_paths_free) struct ht_paths keys = { 0 };
	struct ht_error err = { "" };
	_cleanup_free_ char *text = NULL;
	char nolines[1] = "", *lines;
	_cleanup_close_ int lock = -1;
	struct ht_ruleset *rs = NULL;
	size_t len = 0;
	FILE *report;
	int r;

	if ((r = check_state_in_root(o)) != 0)
		return r;
	if ((r = take_lock(o, "revert", &lock)) != 0)
		return r;
	if ((r = cli_load_rules(o, &rs)) != 0)
		return r;
	r = ht_state_keys(rs, &keys);
	ht_ruleset_free(rs);
	if (r < 0)
		return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
	/* The report is kept until revert has run: nothing is printed for a refused one. */
	report = open_memstream(&text, &len);
	if (!report)
		return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
	r = ht_revert(o->root, o->state, &keys, report, &err);
	/*
	 * The report lost for want of memory (glibc's memstream even leaves the
	 * text NULL and fclose() 0 when its last realloc() fails): after a
	 * revert that changed the host, its lost report; else revert's own error
	 * below, without the lines.
	 */
	if (fclose(report) != 0 || !text) {
		if (r >= 0) {
			cli_error("revert is complete, but the report could not be written: "
			          "out of memory");
			return EXIT_UNREPORTED;
		}
		len = 0;
	}
	lines = text && len > 0 ? text : nolines;
	/*
	 * No state file: nothing to revert is a success for automation ("ok,
	 * nothing changed"), one line; what an interrupted run left was still
	 * removed (the report's lines).
	 */
	if (r == -ENOENT) {
		if (o->json)
			return cli_print_json(revert_json(o, lines, true, NULL));
		if (len > 0) {
			if (o->root)
				printf("below --root %s:\n", o->root);
			fputs(lines, stdout);
		}
		printf("%s\n", err.msg);
		return 0;
	}
	if (!o->json && len > 0) {
		if (o->root)
			printf("below --root %s:\n", o->root);
		fputs(lines, stdout);
	}
	if (r < 0) {
		const char *msg = failure_text(r, &err);
		char why[PATH_MAX + 64];
		const char *hint = permission_hint(o, r, msg, why, sizeof(why));

		if (r == -EBADMSG)
			cli_error("revert refused, nothing was changed: %s\n", msg);
		else if (r == -ECANCELED)
			cli_error("revert failed, nothing was changed: %s%s\n", msg, hint);
		else
			cli_error("revert incomplete: %s%s\n", msg, hint);
		/*
		 * Refused or failed before any change: the error object alone
		 * (cli_finish()); incomplete: the report with its error, one document.
		 */
		if (o->json && r != -EBADMSG && r != -ECANCELED &&
		    cli_print_json(revert_json(o, lines, false, cli_error_json(EXIT_COLLECT))) != 0)
			return EXIT_COLLECT;
		return r == -EBADMSG ? EXIT_USAGE : EXIT_COLLECT;
	}
	if (o->json)
		return report_json(revert_json(o, lines, true, NULL), 0, "revert is complete");
	return check_report(0, "revert is complete");
}
