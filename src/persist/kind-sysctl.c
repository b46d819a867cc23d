/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sysctl kind (persist/kind.h): a key as sysctl(8) prints it
 * ("net.netfilter.nf_conntrack_max"), persisted as "KEY = VALUE" in
 * hosttune's sysctl.d file, written live to its /proc/sys file, and at boot
 * what systemd-sysctl applies from sysctl.d (the last file in name order wins).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/fix.h"
#include "engine/rules.h"
#include "shared/bootconf.h"
#include "persist/kind.h"
#include "persist/templates.h"

#define SYSCTL_FILE "/etc/sysctl.d/90-hosttune.conf"

static const char *const sysctl_dirs[] = { "/etc/sysctl.d", NULL };

static bool sysctl_managed_file(const char *path)
{
	return strcmp(path, SYSCTL_FILE) == 0;
}

static char *sysctl_line(const char *target, const char *value)
{
	char *s;

	return asprintf(&s, "%s = %s", target, value) < 0 ? NULL : s;
}

/* "KEY = INTEGER": a sysctl key as sysctl(8) prints it, never a "-KEY" or a string value. */
static bool sysctl_file_line_ok(const char *path _unused_, const char *line)
{
	size_t k = ht_span_name(line, "_.-/");

	return k > 0 && line[0] != '-' && line[0] != '.' && strncmp(line + k, " = ", 3) == 0 &&
	       ht_int_text(line + k + 3, true);
}

/* /proc/sys/net/netfilter/nf_conntrack_max for net.netfilter.nf_conntrack_max. */
static char *sysctl_live_path(const char *key)
{
	char *p;

	if (!*key || asprintf(&p, "/proc/sys/%s", key) < 0)
		return NULL;
	for (char *c = p + strlen("/proc/sys/"); *c; c++)
		if (*c == '.')
			*c = '/';
	return p;
}

static bool sysctl_needs_conntrack(const struct ht_setting *s)
{
	return strncmp(s->key, "net.netfilter.nf_conntrack", 26) == 0;
}

static const char *sysctl_boot_key(const char *target)
{
	return target;
}

/*
 * The errno of a key that exists but gives no value hosttune can read back
 * (several fields or text: EINVAL; a directory: EISDIR; EACCES): no line is
 * written for it, since neither the live write nor verify could check it.
 * 0 when it reads, or does not exist now (no_live: the line waits for it).
 */
static int sysctl_unreadable(const struct ht_plan_ctx *c, const struct ht_finding *f)
{
	const char *key = ht_rule_target(f->rule);
	const struct ht_fact *k;

	if (f->current.type != HT_T_NONE || f->no_live || !c->facts ||
	    strncmp(key, "net.netfilter.nf_conntrack", 26) == 0)
		return 0;
	k = ht_facts_get(c->facts, key);
	return k && k->value.type == HT_T_NONE ? k->error : 0;
}

static int sysctl_setting(struct ht_plan_ctx *c, const struct ht_finding *f,
                          struct ht_setting *s)
{
	if (sysctl_unreadable(c, f))
		return 0;
	return ht_setting_init(s, f, ht_rule_target(f->rule), NULL, true);
}

static int sysctl_fix(const struct ht_plan_ctx *c, const struct ht_finding *f, struct ht_fix *fix)
{
	_cleanup_free_ char *val = ht_value_display(&f->recommended);
	const char *key = ht_rule_target(f->rule);
	int e;

	if (!val)
		return -ENOMEM;
	if ((e = sysctl_unreadable(c, f))) {
		_cleanup_free_ char *path = sysctl_live_path(key);

		fix->kind = HT_FIX_NONE_HERE;
		if (!path || asprintf(&fix->reason, "%s cannot be read as one integer (%s: %s): "
		                      "hosttune writes no line for a value it cannot read back",
		                      key, path, strerror(e)) < 0) {
			fix->reason = NULL;
			return -ENOMEM;
		}
		return 0;
	}
	fix->kind = HT_FIX_FILE;
	fix->file = strdup(SYSCTL_FILE);
	fix->line = sysctl_line(key, val);
	fix->live = sysctl_live_path(key);
	/*
	 * No live file (nf_conntrack not loaded, a module or interface that is
	 * not there): the line is written all the same. systemd-sysctl applies
	 * it when the key exists at boot and, for a key it cannot find, logs
	 * that it ignores it and goes on (sysctl_write_or_warn() in
	 * src/sysctl/sysctl.c); a network interface's keys are applied again
	 * when the interface appears (99-systemd.rules).
	 */
	fix->live_absent = f->no_live;
	return fix->file && fix->line && fix->live ? 0 : -ENOMEM;
}

/*
 * The settings of hosttune's file that a sysctl.d file read later changes
 * at boot (ht_boot_override()): warnings.
 */
static int sysctl_warnings(struct ht_plan_ctx *c, const struct ht_setting *s, size_t n)
{
	struct ht_conf conf = { 0 };
	int r = ht_sysctl_conf_read(c->root, &conf);

	for (size_t i = 0; r >= 0 && i < n; i++) {
		const char *key = ht_rule_target(s[i].f->rule);
		const struct ht_conf_assign *eff = ht_boot_override(&conf, key, SYSCTL_FILE,
		                                                    s[i].value,
		                                                    ht_rule_only_raise(s[i].f->rule));
		_cleanup_free_ char *source = NULL;

		if (!eff)
			continue;
		if (asprintf(&source, "%s:%u", eff->file, eff->line) < 0) {
			source = NULL;
			r = -ENOMEM;
			break;
		}
		if (eff->value)
			r = ht_plan_warn(c->p, key, source, "%s = %s in %s will not hold at boot: "
			                 "%s:%u sets %s and is read later (systemd-sysctl reads "
			                 "sysctl.d in name order, the last value wins); edit or remove "
			                 "that line", key, s[i].value, SYSCTL_FILE,
			                 ht_conf_file_shown(eff->file), eff->line, eff->value);
		else
			r = ht_plan_warn(c->p, key, source, "%s = %s in %s will not hold at boot: "
			                 "%s:%u ('-%s' without a value) makes systemd-sysctl leave the "
			                 "key alone; remove that line", key, s[i].value, SYSCTL_FILE,
			                 ht_conf_file_shown(eff->file), eff->line, key);
	}
	ht_conf_free(&conf);
	return r < 0 ? r : 0;
}

/*
 * hosttune's sysctl.d file, its header naming how the net.netfilter keys
 * exist when systemd-sysctl runs (only a file this plan writes), then the
 * warnings for what a later file overrides.
 */
static int sysctl_files(struct ht_plan_ctx *c, const struct ht_setting *all, size_t n,
                        const struct ht_setting *chosen, size_t nchosen)
{
	_cleanup_free_ char *note = NULL;
	bool nf_keys = false;
	int r;

	for (size_t i = 0; i < nchosen; i++)
		nf_keys = nf_keys || sysctl_needs_conntrack(&chosen[i]);
	if (c->load_conntrack) {
		if (asprintf(&note, " The net.netfilter\n# keys apply at boot because %s loads\n"
		             "# nf_conntrack before systemd-sysctl runs.", ht_modules_load_file) < 0)
			return -ENOMEM;
	} else if (nf_keys && c->builtin) {
		note = strdup(" nf_conntrack is\n# built into this kernel: its net.netfilter keys "
		              "exist when\n# systemd-sysctl runs.");
		if (!note)
			return -ENOMEM;
	}
	r = ht_plan_settings_file(c, SYSCTL_FILE, ht_tmpl_sysctl_conf, NULL, NULL, note, chosen,
	                          nchosen);
	if (r >= 0 && !c->no_disk)
		r = sysctl_warnings(c, chosen, nchosen);
	return r;
}

const struct ht_kind ht_kind_sysctl = {
	.target = HT_TARGET_SYSCTL,
	.file = SYSCTL_FILE,
	.dirs = sysctl_dirs,
	.managed_file = sysctl_managed_file,
	.file_line_ok = sysctl_file_line_ok,
	.line = sysctl_line,
	.needs_conntrack = sysctl_needs_conntrack,
	.files = sysctl_files,
	.live_path = sysctl_live_path,
	.boot_read = ht_sysctl_conf_read,
	.boot_key = sysctl_boot_key,
	.setting = sysctl_setting,
	.fix = sysctl_fix,
};
