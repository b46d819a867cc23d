/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The module parameter kind (persist/kind.h): a target module.MODULE.PARAM,
 * persisted as "options MODULE PARAM=VALUE" in hosttune's modprobe.d file
 * (kmod applies it when the module loads), written live to
 * /sys/module/MODULE/parameters/PARAM, and at boot what modprobe.d gives
 * (the last file in name order wins). A parameter of nf_conntrack built into
 * the kernel is reached only by the kernel command line (kernel/params.c):
 * the fix says so and no file of hosttune's holds it. Its files load
 * nf_conntrack at boot, too: modules-load.d, so that systemd-sysctl finds
 * its net.netfilter keys.
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

#define MODPROBE_FILE "/etc/modprobe.d/hosttune.conf"
#define PREFIX "module."
#define NF_CONNTRACK PREFIX "nf_conntrack."

const char ht_modules_load_file[] = "/etc/modules-load.d/hosttune.conf";

static const char *const module_dirs[] = { "/etc/modprobe.d", "/etc/modules-load.d", NULL };

static bool module_managed_file(const char *path)
{
	return strcmp(path, MODPROBE_FILE) == 0 || strcmp(path, ht_modules_load_file) == 0;
}

/*
 * "MODULE" (@mlen bytes at *@mod) and "PARAM" (*@param) of module.MODULE.PARAM;
 * false when @target is not of that form.
 */
static bool split(const char *target, const char **mod, int *mlen, const char **param)
{
	const char *dot;

	if (strncmp(target, PREFIX, strlen(PREFIX)) != 0)
		return false;
	*mod = target + strlen(PREFIX);
	dot = strchr(*mod, '.');
	if (!dot || dot == *mod || !dot[1])
		return false;
	*mlen = (int)(dot - *mod);
	*param = dot + 1;
	return true;
}

static char *module_line(const char *target, const char *value)
{
	const char *mod, *param;
	int ml;
	char *s;

	if (!split(target, &mod, &ml, &param) ||
	    asprintf(&s, "options %.*s %s=%s", ml, mod, param, value) < 0)
		return NULL;
	return s;
}

/*
 * modprobe.d: "options MODULE PARAM=INTEGER", never an install, remove or
 * blacklist line; modules-load.d: a module's name alone.
 */
static bool module_file_line_ok(const char *path, const char *line)
{
	size_t m, p;

	if (strcmp(path, ht_modules_load_file) == 0)
		return (m = ht_span_name(line, "_-")) > 0 && !line[m];
	if (strncmp(line, "options ", 8) != 0)
		return false;
	line += 8;
	if ((m = ht_span_name(line, "_-")) == 0 || line[m] != ' ')
		return false;
	line += m + 1;
	if ((p = ht_span_name(line, "_")) == 0 || line[p] != '=')
		return false;
	return ht_int_text(line + p + 1, true);
}

/* /sys/module/nf_conntrack/parameters/hashsize for module.nf_conntrack.hashsize. */
static char *module_live_path(const char *key)
{
	const char *mod, *param;
	int ml;
	char *p;

	if (!split(key, &mod, &ml, &param) ||
	    asprintf(&p, "/sys/module/%.*s/parameters/%s", ml, mod, param) < 0)
		return NULL;
	return p;
}

static bool module_needs_conntrack(const struct ht_setting *s)
{
	return strncmp(s->key, NF_CONNTRACK, strlen(NF_CONNTRACK)) == 0;
}

/* modprobe.d options never reach a built-in module: the kernel command line does. */
static bool module_in_file(const struct ht_plan_ctx *c, const struct ht_setting *s)
{
	return !(c->builtin && module_needs_conntrack(s));
}

/*
 * "nf_conntrack.hashsize" for module.nf_conntrack.hashsize, as modprobe.d
 * and the kernel command line name it.
 */
static const char *module_boot_key(const char *target)
{
	return target + strlen(PREFIX);
}

static int module_setting(struct ht_plan_ctx *c, const struct ht_finding *f,
                          struct ht_setting *s)
{
	return ht_setting_init(s, f, ht_rule_target(f->rule), NULL, true);
}

static int module_fix(const struct ht_plan_ctx *c, const struct ht_finding *f, struct ht_fix *fix)
{
	_cleanup_free_ char *val = ht_value_display(&f->recommended);
	const char *target = ht_rule_target(f->rule);

	if (!val)
		return -ENOMEM;
	fix->live = module_live_path(target);
	fix->live_absent = f->no_live;
	if (c->builtin && strncmp(target, NF_CONNTRACK, strlen(NF_CONNTRACK)) == 0) {
		fix->kind = HT_FIX_CMDLINE;
		if (asprintf(&fix->cmdline, "%s=%s", module_boot_key(target), val) < 0)
			fix->cmdline = NULL;
		return fix->cmdline && fix->live ? 0 : -ENOMEM;
	}
	fix->kind = HT_FIX_FILE;
	fix->file = strdup(MODPROBE_FILE);
	fix->line = module_line(target, val);
	return fix->file && fix->line && fix->live ? 0 : -ENOMEM;
}

/*
 * The options of hosttune's file that a modprobe.d file read later changes
 * at the next load (ht_boot_override()): warnings.
 */
static int modprobe_warnings(struct ht_plan_ctx *c, const struct ht_setting *s, size_t n)
{
	struct ht_conf conf = { 0 };
	int r = ht_modprobe_conf_read(c->root, &conf);

	for (size_t i = 0; r >= 0 && i < n; i++) {
		const char *target = ht_rule_target(s[i].f->rule);
		const char *key = module_boot_key(target), *param = strchr(key, '.') + 1;
		const struct ht_conf_assign *eff = ht_boot_override(&conf, key, MODPROBE_FILE,
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
		r = ht_plan_warn(c->p, target, source, "options nf_conntrack %s=%s in %s will not "
		                 "hold at the next load: %s:%u gives %s%s%s and is read later (kmod "
		                 "reads modprobe.d in name order, the last value wins); edit or "
		                 "remove that line", param, s[i].value, MODPROBE_FILE, eff->file,
		                 eff->line, param, eff->value ? "=" : " without a value",
		                 eff->value ? eff->value : "");
	}
	ht_conf_free(&conf);
	return r < 0 ? r : 0;
}

/*
 * Built in, nf_conntrack's parameters are the kernel command line's: a
 * warning for each one apply may change that it does not give.
 */
static int cmdline_warnings(struct ht_plan_ctx *c, const struct ht_setting *all, size_t n)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && c->builtin && i < n; i++) {
		const struct ht_setting *st = &all[i];
		const char *param;
		_cleanup_free_ char *cmd = NULL;

		if (!st->act || st->kind != &ht_kind_module || !module_needs_conntrack(st) ||
		    !ht_setting_wanted(st, NULL))
			continue;
		param = module_boot_key(st->key);
		cmd = ht_kcmdline_param(c->root, param);
		if (cmd && ht_int_text_equal(cmd, st->value))
			continue;
		if (cmd)
			r = ht_plan_warn(c->p, st->key, "kernel command line", "%s = %s will not hold "
			                 "at boot: nf_conntrack is built into this kernel, so no "
			                 "modprobe.d file reaches it, and the kernel command line gives "
			                 "%s=%s; change it to %s=%s (GRUB_CMDLINE_LINUX in "
			                 "/etc/default/grub, then update-grub)", st->key, st->value, param,
			                 cmd, param, st->value);
		else
			r = ht_plan_warn(c->p, st->key, "kernel command line", "%s = %s will not hold "
			                 "at boot: nf_conntrack is built into this kernel, so no "
			                 "modprobe.d file reaches it and hosttune writes none; add %s=%s "
			                 "to the kernel command line (GRUB_CMDLINE_LINUX in "
			                 "/etc/default/grub, then update-grub)", st->key, st->value, param,
			                 st->value);
	}
	return r;
}

/*
 * hosttune's modprobe.d file, the warnings for what a later file or the
 * kernel command line gives at boot, then the modules-load.d file when
 * c->load_conntrack.
 */
static int module_files(struct ht_plan_ctx *c, const struct ht_setting *all, size_t n,
                        const struct ht_setting *chosen, size_t nchosen)
{
	char *content = NULL;
	int r;

	r = ht_plan_settings_file(c, MODPROBE_FILE, ht_tmpl_modprobe_conf, NULL, NULL, NULL, chosen,
	                          nchosen);
	if (r >= 0 && !c->no_disk)
		r = modprobe_warnings(c, chosen, nchosen);
	if (r >= 0 && !c->no_disk)
		r = cmdline_warnings(c, all, n);
	if (r < 0)
		return r;
	if (c->load_conntrack &&
	    !(content = ht_plan_render(ht_tmpl_modules_load_conf, c->p->profile, "nf_conntrack")))
		return -ENOMEM;
	return ht_plan_add_file(c, ht_modules_load_file, content);
}

const struct ht_kind ht_kind_module = {
	.target = HT_TARGET_MODULE,
	.file = MODPROBE_FILE,
	.dirs = module_dirs,
	.managed_file = module_managed_file,
	.file_line_ok = module_file_line_ok,
	.line = module_line,
	.in_file = module_in_file,
	.needs_conntrack = module_needs_conntrack,
	.files = module_files,
	.key_prefix = PREFIX,
	.live_path = module_live_path,
	.boot_read = ht_modprobe_conf_read,
	.boot_key = module_boot_key,
	.setting = module_setting,
	.fix = module_fix,
};
