/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "engine/facts.h"
#include "engine/rules.h"
#include "shared/bootconf.h"
#include "shared/fsutil.h"
#include "persist/kind.h"
#include "persist/persist.h"
#include "persist/persist-internal.h"
#include "persist/verify.h"

static int add(struct ht_verify_report *r, enum ht_verify_status st, const char *check,
               const char *key, const char *fmt, ...) _printf_(5, 6);

static int add(struct ht_verify_report *r, enum ht_verify_status st, const char *check,
               const char *key, const char *fmt, ...)
{
	struct ht_verify_item *n = realloc(r->items, (r->n + 1) * sizeof(*n));
	va_list ap;
	int ret;

	if (!n)
		return -ENOMEM;
	r->items = n;
	n = &r->items[r->n];
	*n = (struct ht_verify_item){ .status = st };
	va_start(ap, fmt);
	ret = vasprintf(&n->message, fmt, ap);
	va_end(ap);
	if (ret < 0) {
		n->message = NULL;
		return -ENOMEM;
	}
	n->check = strdup(check);
	n->key = key ? strdup(key) : NULL;
	r->n++;
	if (!n->check || (key && !n->key))
		return -ENOMEM;
	return 0;
}

void ht_verify_report_free(struct ht_verify_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->items[i].check);
		free(r->items[i].key);
		free(r->items[i].message);
	}
	free(r->items);
	r->items = NULL;
	r->n = 0;
}

size_t ht_verify_problems(const struct ht_verify_report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += r->items[i].status == HT_VERIFY_PROBLEM;
	return n;
}

static const char *fact_str(const struct ht_facts *f, const char *name)
{
	const struct ht_fact *x = ht_facts_get(f, name);

	return x && x->value.type == HT_T_STR ? x->value.s : NULL;
}

static char *fact_text(const struct ht_facts *f, const char *name)
{
	const struct ht_fact *x = ht_facts_get(f, name);

	return x && x->value.type != HT_T_NONE ? ht_value_display(&x->value) : NULL;
}

/*
 * Something in modules-load.d loads nf_conntrack before systemd-sysctl:
 * nf_conntrack itself or a module that depends on it (kmod treats '-' and
 * '_' alike in names).
 */
static const struct ht_conf_assign *conntrack_loader(const struct ht_conf *load)
{
	static const char *const pullers[] = { "nf_conntrack", "nf_nat", "xt_conntrack",
		                               "xt_state", "xt_nat", "nft_ct", "nft_nat",
		                               "iptable_nat", "ip6table_nat" };

	for (size_t i = 0; i < load->n; i++) {
		char name[128];
		size_t n = 0;

		for (const char *c = load->keys[i].key; *c && n + 1 < sizeof(name); c++)
			name[n++] = *c == '-' ? '_' : *c;
		name[n] = '\0';
		if (strcmp(name, "nf_conntrack_ipv4") == 0 || strcmp(name, "nf_conntrack_ipv6") == 0)
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(pullers); k++)
			if (strncmp(name, pullers[k], strlen(pullers[k])) == 0) {
				const struct ht_conf_assign *a = ht_conf_effective(&load->keys[i]);

				if (a)
					return a;
			}
	}
	return NULL;
}

static bool version_at_least(const struct ht_facts *f, unsigned major, unsigned minor)
{
	const struct ht_fact *v = ht_facts_get(f, "kernel.version");
	struct ht_version want = { .part = { major, minor }, .n = 2 };

	return v && v->value.type == HT_T_VER && ht_version_cmp(&v->value.v, &want) >= 0;
}

static int check_sysctl(struct ht_verify_report *r, const struct ht_finding *fi,
                        const struct ht_conf *sys, const struct ht_conf *load,
                        const struct ht_facts *facts)
{
	const char *key = ht_rule_target(fi->rule), *ours_file = ht_kind_sysctl.file;
	const struct ht_conf_key *k = ht_conf_find(sys, key);
	const struct ht_conf_assign *eff = k ? ht_conf_effective(k) : NULL;
	const struct ht_conf_assign *ours = NULL;
	_cleanup_free_ char *live = fi->current.type != HT_T_NONE && !fi->no_live ?
	                            ht_value_display(&fi->current) : NULL;
	const char *state = fact_str(facts, "conntrack.module");
	bool builtin = state && strcmp(state, "builtin") == 0;
	bool needs_module = strncmp(key, "net.netfilter.nf_conntrack", 26) == 0;
	bool problem = false;
	int ret;

	for (size_t i = 0; k && i < k->n; i++)
		if (strcmp(k->assigns[i].file, ours_file) == 0)
			ours = &k->assigns[i];
	if (!eff) {
		_cleanup_free_ char *dflt = fi->kernel_default.type == HT_T_INT ?
		                            ht_value_display(&fi->kernel_default) : NULL;

		/* Set live (apply --live-only, sysctl -w) and persisted nowhere: lost at boot. */
		if (live && dflt && !ht_int_text_equal(live, dflt))
			return add(r, HT_VERIFY_PROBLEM, "live-only", key,
			           "%s is %s live, not the kernel's default %s, but no sysctl.d file "
			           "sets it: it is lost at the next boot (hosttune apply without "
			           "--live-only persists it)", key, live, dflt);
		return 0; /* the kernel's own value, persisted nowhere: audit's business */
	}
	if (!eff->value) {
		/* "-key" without '=': systemd-sysctl leaves the key alone at boot. */
		if (!ours)
			return 0;
		return add(r, HT_VERIFY_PROBLEM, "overridden", key,
		           "%s = %s in %s:%u is cancelled at boot by %s:%u ('-%s' without a value: "
		           "systemd-sysctl leaves the key alone)", key, ours->value, ours_file,
		           ours->line, ht_conf_file_shown(eff->file), eff->line, key);
	}

	if (ours && ours != eff && !ht_int_text_equal(ours->value, eff->value)) {
		problem = true;
		ret = add(r, HT_VERIFY_PROBLEM, "overridden", key,
		          "%s = %s in %s:%u is overridden at boot by %s:%u (= %s), which is read later",
		          key, ours->value, ours_file, ours->line, ht_conf_file_shown(eff->file),
		          eff->line, eff->value);
		if (ret < 0)
			return ret;
	}
	if (needs_module && !builtin && !conntrack_loader(load)) {
		problem = true;
		ret = add(r, HT_VERIFY_PROBLEM, "boot-order", key,
		          "%s is set in %s:%u but nothing loads nf_conntrack before systemd-sysctl "
		          "runs (no modules-load.d entry, not built in): it will not hold at boot",
		          key, ht_conf_file_shown(eff->file), eff->line);
		if (ret < 0)
			return ret;
	}
	/* Overridden already says why the boot value differs from hosttune's. */
	if (live && !ht_int_text_equal(live, eff->value) && !(ours && ours != eff && problem)) {
		problem = true;
		ret = add(r, HT_VERIFY_PROBLEM, "drift", key,
		          "%s is %s live but %s at boot (%s:%u): %s", key, live, eff->value,
		          ht_conf_file_shown(eff->file), eff->line,
		          needs_module && !builtin && !conntrack_loader(load) ?
		          "most likely the boot applied it before nf_conntrack loaded" :
		          ours && ours != eff ? "the file that overrides hosttune's wins at boot" :
		          "someone ran sysctl -w, or the boot did not apply it");
		if (ret < 0)
			return ret;
	}
	if (problem)
		return 0;
	if (fi->no_live)
		return add(r, HT_VERIFY_OK, "holds", key, "%s = %s at boot (%s:%u); no live value "
		           "%s", key, eff->value, ht_conf_file_shown(eff->file), eff->line,
		           needs_module ? "until nf_conntrack loads" : "on this host now");
	return add(r, HT_VERIFY_OK, "holds", key, "%s = %s live and at boot (%s:%u)", key,
	           live ? live : eff->value, ht_conf_file_shown(eff->file), eff->line);
}

/*
 * The bucket count the kernel makes of hashsize=@opt: rounded up to whole
 * pages of bucket heads (nf_ct_alloc_hashtable() in nf_conntrack_core.c),
 * @slots a page. @live matches when it is that count.
 */
static bool hashsize_matches(const char *live, const char *opt, int64_t slots)
{
	char *end;
	long long o;

	if (ht_int_text_equal(live, opt))
		return true;
	errno = 0;
	o = strtoll(opt, &end, 0);
	if (errno || *end || o <= 0 || slots <= 0)
		return false;
	o = (o + slots - 1) / slots * slots;
	return strtoll(live, &end, 10) == o && !*end;
}

static int check_hashsize(struct ht_verify_report *r, const struct ht_finding *fi,
                          const struct ht_conf *mod, const struct ht_facts *facts,
                          int64_t slots, const char *root)
{
	const char *key = "module.nf_conntrack.hashsize";
	const struct ht_conf_key *k = ht_conf_find(mod, "nf_conntrack.hashsize");
	const struct ht_conf_assign *opt = k ? ht_conf_effective(k) : NULL;
	_cleanup_free_ char *live = fact_text(facts, key);
	_cleanup_free_ char *dflt = fi->kernel_default.type != HT_T_NONE ?
	                            ht_value_display(&fi->kernel_default) : NULL;
	const char *state = fact_str(facts, "conntrack.module");
	bool builtin = state && strcmp(state, "builtin") == 0;

	if (opt && opt->value && builtin)
		return add(r, HT_VERIFY_PROBLEM, "hashsize-builtin", key,
		           "hashsize=%s is set in %s:%u but nf_conntrack is built into this kernel: "
		           "modprobe.d never reaches it, only nf_conntrack.hashsize= on the kernel "
		           "command line does", opt->value, opt->file, opt->line);
	if (opt && opt->value && live && !hashsize_matches(live, opt->value, slots))
		return add(r, HT_VERIFY_PROBLEM, "hashsize-stale", key,
		           "hashsize is %s live but %s:%u gives %s: the module loaded before the "
		           "option was written, or the initramfs holds an older copy of modprobe.d "
		           "(update-initramfs -u)", live, opt->file, opt->line, opt->value);
	if (!(opt && opt->value) && live && dflt && !ht_int_text_equal(live, dflt) && builtin) {
		_cleanup_free_ char *cmd = ht_kcmdline_param(root, "nf_conntrack.hashsize");

		/* Built in: the boot's hashsize is the kernel command line's. */
		if (cmd && hashsize_matches(live, cmd, slots))
			return add(r, HT_VERIFY_OK, "holds", key, "hashsize = %s live and at boot "
			           "(nf_conntrack.hashsize=%s on the kernel command line)", live, cmd);
		if (cmd)
			return add(r, HT_VERIFY_PROBLEM, "hashsize-live", key,
			           "hashsize is %s live, but nf_conntrack is built into this kernel and "
			           "the kernel command line gives nf_conntrack.hashsize=%s: change it to "
			           "%s (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub)",
			           live, cmd, live);
		return add(r, HT_VERIFY_PROBLEM, "hashsize-live", key,
		           "hashsize is %s live, not the kernel's default %s, and nf_conntrack is "
		           "built into this kernel: only nf_conntrack.hashsize=%s on the kernel "
		           "command line keeps it (GRUB_CMDLINE_LINUX in /etc/default/grub, then "
		           "update-grub); modprobe.d never reaches it", live, dflt, live);
	}
	if (!(opt && opt->value) && live && dflt && !ht_int_text_equal(live, dflt))
		return add(r, HT_VERIFY_PROBLEM, "hashsize-live", key,
		           "hashsize is %s live, not the kernel's default %s, but no modprobe.d "
		           "option keeps it: it is lost when nf_conntrack next loads", live, dflt);
	if (opt && opt->value)
		return add(r, HT_VERIFY_OK, "holds", key, "hashsize = %s live and at module load "
		           "(%s:%u)", live ? live : opt->value, opt->file, opt->line);
	return 0;
}

static int check_config(struct ht_verify_report *r, const struct ht_conf *sys,
                        const struct ht_conf *mod, const struct ht_conf *load,
                        const struct ht_facts *facts)
{
	int ret;

	/* Everything the readers found wrong: the boot stumbles on it too. */
	for (size_t i = 0; i < mod->nproblems; i++) {
		const struct ht_conf_problem *p = &mod->problems[i];

		ret = add(r, HT_VERIFY_PROBLEM, "broken-config", p->key, "%s", p->message);
		if (ret < 0)
			return ret;
	}
	for (size_t i = 0; i < sys->nproblems; i++) {
		const struct ht_conf_problem *p = &sys->problems[i];

		ret = add(r, HT_VERIFY_PROBLEM, "broken-config", p->key, "%s", p->message);
		if (ret < 0)
			return ret;
	}
	/* The IPv4/IPv6 halves merged into nf_conntrack in 4.19 (commit a0ae2562c6c4). */
	if (!version_at_least(facts, 4, 19))
		return 0;
	for (size_t i = 0; i < load->n; i++) {
		const struct ht_conf_key *k = &load->keys[i];
		const struct ht_conf_assign *a = ht_conf_effective(k);

		if (strcmp(k->key, "nf_conntrack_ipv4") != 0 && strcmp(k->key, "nf_conntrack_ipv6") != 0)
			continue;
		ret = add(r, HT_VERIFY_PROBLEM, "obsolete-module", k->key,
		          "%s:%u loads %s, which does not exist since 4.19 (merged into nf_conntrack): "
		          "systemd-modules-load reports 'Failed to find module' at every boot; "
		          "list nf_conntrack instead",
		          a ? a->file : "modules-load.d", a ? a->line : 0, k->key);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int check_kube_proxy(struct ht_verify_report *r, struct ht_ruleset *rs,
                            const struct ht_facts *facts)
{
	struct ht_value v = { 0 };
	struct ht_error err;
	_cleanup_free_ char *max = fact_text(facts, "net.netfilter.nf_conntrack_max");
	int ret;

	if (ht_ruleset_value(rs, "conntrack.is_kube_proxy", &v, &err) < 0 || v.type != HT_T_BOOL)
		return 0;
	ret = v.b ? add(r, HT_VERIFY_PROBLEM, "other-manager", "net.netfilter.nf_conntrack_max",
	                "nf_conntrack_max %s matches kube-proxy's formula (max(32768 x CPUs, "
	                "131072), hashsize at least max / 4): kube-proxy rewrites it when it starts, so "
	                "sysctl.d is futile; set kube-proxy's --conntrack-max-per-core "
	                "(conntrack.maxPerCore) instead", max ? max : "?") : 0;
	ht_value_clear(&v);
	return ret;
}

static int check_edits(struct ht_verify_report *r, const char *root, const char *state_path)
{
	_cleanup_free_ char *spath = state_path ? strdup(state_path) :
	                             ht_root_path(root, HT_STATE_FILE);
	_cleanup_free_ char *raw = NULL;
	struct json_object *state, *files;
	struct ht_error err = { "" };
	int ret = 0;

	if (!spath)
		return -ENOMEM;
	/* Below --root, read without following symlinks, as apply writes. */
	ret = state_path ? ht_file_read_at(NULL, spath, &raw, NULL, &err) :
	                   ht_file_read_at(root, HT_STATE_FILE, &raw, NULL, &err);
	if (state_path && ret < 0)
		return add(r, HT_VERIFY_PROBLEM, "state", spath, "%s (--state names no hosttune "
		           "state file)", err.msg[0] ? err.msg : strerror(-ret));
	if (state_path && !raw)
		return add(r, HT_VERIFY_PROBLEM, "state", spath, "%s: no such file (--state names "
		           "no hosttune state file)", spath);
	if (ret < 0 || !raw)
		return 0; /* no apply recorded: nothing of ours to compare */
	ret = 0;
	state = ht_state_parse(raw);
	if (!state || !json_object_object_get_ex(state, "files", &files) ||
	    !json_object_is_type(files, json_type_array)) {
		json_object_put(state);
		return add(r, HT_VERIFY_PROBLEM, "state", spath, "%s: not a hosttune state file",
		           spath);
	}
	for (size_t i = 0; i < json_object_array_length(files) && ret >= 0; i++) {
		struct json_object *e = json_object_array_get_idx(files, i), *p, *w;
		_cleanup_free_ char *now = NULL;
		const char *path, *written;

		if (!json_object_object_get_ex(e, "path", &p) ||
		    !json_object_is_type(p, json_type_string) ||
		    !json_object_object_get_ex(e, "written", &w))
			continue;
		path = json_object_get_string(p);
		written = json_object_is_type(w, json_type_string) ? json_object_get_string(w) : NULL;
		if (path[0] != '/' || strstr(path, "..") ||
		    ht_file_read_at(root, path, &now, NULL, &err) < 0)
			now = NULL;
		if ((!now) != (!written) || (now && written && strcmp(now, written) != 0))
			ret = add(r, HT_VERIFY_PROBLEM, "edited", path, "%s %s since hosttune apply "
			          "wrote it", path, now ? "was edited" : "was removed");
	}
	json_object_put(state);
	return ret;
}

/*
 * A limit nofile finding: the LimitNOFILE= systemd gives the service at its
 * next start (its unit file and drop-ins, ht_unit_limits_read()) against
 * hosttune's drop-in, and the process's soft limit now against both.
 */
static int check_limit(struct ht_verify_report *r, const struct ht_finding *fi,
                       const struct ht_facts *facts, const char *root)
{
	struct ht_limit_fix lf;
	_cleanup_free_ char *why = NULL, *key = NULL;
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;
	const struct ht_conf_assign *eff, *ours = NULL;
	uint64_t osoft = 0, ohard = 0, esoft = 0, ehard = 0;
	int ret;

	ret = ht_limit_fix(fi, facts, &lf, &why);
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0)
		return 0; /* no drop-in of hosttune's can exist: audit says why */
	if (!(key = ht_finding_fact(fi, "process", "nofile"))) {
		ht_limit_fix_free(&lf);
		return -ENOMEM;
	}
	ret = ht_unit_limits_read(root, lf.unit, &c);
	if (ret < 0) {
		ht_limit_fix_free(&lf);
		return ret == -ENOMEM ? ret : 0;
	}
	k = ht_conf_find(&c, "LimitNOFILE");
	eff = k ? ht_conf_effective(k) : NULL;
	for (size_t i = 0; k && i < k->n; i++)
		if (strcmp(k->assigns[i].file, lf.path) == 0)
			ours = &k->assigns[i];
	for (size_t i = 0; ret >= 0 && i < c.nproblems; i++)
		if (c.problems[i].key && strcmp(c.problems[i].key, "LimitNOFILE") == 0)
			ret = add(r, HT_VERIFY_PROBLEM, "broken-config", key, "%s", c.problems[i].message);
	if (ret < 0 || !ours)
		goto out; /* nothing of hosttune's for this service: audit's business */
	if (ht_rlimit_parse(ours->value, &osoft, &ohard) < 0 ||
	    ht_rlimit_parse(eff->value, &esoft, &ehard) < 0)
		goto out;
	if (eff != ours && (esoft < osoft || ehard < ohard) && strncmp(eff->file, "/run/", 5) == 0) {
		/* /run/systemd/system is emptied at boot: overridden now, not after a reboot. */
		ret = add(r, HT_VERIFY_PROBLEM, "overridden", key,
		          "LimitNOFILE=%s in %s:%u is overridden for %s now by %s:%u "
		          "(LimitNOFILE=%s), which systemd applies later; /run is emptied at "
		          "boot, so hosttune's value holds after the next reboot, not at a restart "
		          "before it; remove that file (or its line) to have it sooner", ours->value,
		          lf.path, ours->line, lf.unit, eff->file, eff->line, eff->value);
		goto out;
	}
	if (eff != ours && (esoft < osoft || ehard < ohard)) {
		ret = add(r, HT_VERIFY_PROBLEM, "overridden", key,
		          "LimitNOFILE=%s in %s:%u is overridden for %s by %s:%u (LimitNOFILE=%s), "
		          "which systemd applies later; edit or remove that line", ours->value,
		          lf.path, ours->line, lf.unit, eff->file, eff->line, eff->value);
		goto out;
	}
	if (fi->current.type == HT_T_INT && (uint64_t)fi->current.i < esoft) {
		_cleanup_free_ char *w = ht_shell_word(lf.unit);

		if (!w) {
			ret = -ENOMEM;
			goto out;
		}
		ret = add(r, HT_VERIFY_PROBLEM, "restart-needed", key,
		          "%s runs with a soft limit of %" PRId64 " open files, %s gives %s "
		          "(%s:%u) from its next start: systemctl daemon-reload && systemctl "
		          "restart %s", fi->instance, fi->current.i, lf.unit, eff->value,
		          eff->file, eff->line, w);
		goto out;
	}
	ret = add(r, HT_VERIFY_OK, "holds", key, "LimitNOFILE=%s for %s (%s:%u)%s", eff->value,
	          lf.unit, eff->file, eff->line, fi->current.type == HT_T_INT ?
	          ", and the process runs with it" : "");
out:
	ht_conf_free(&c);
	ht_limit_fix_free(&lf);
	return ret;
}

int ht_verify(struct ht_ruleset *rs, const struct ht_findings *findings,
              const struct ht_facts *facts, const char *root, const char *state_path,
              struct ht_verify_report *out)
{
	struct ht_conf sys = { 0 }, mod = { 0 }, load = { 0 };
	struct ht_verify_report r = { 0 };
	struct ht_value v = { 0 };
	struct ht_error e;
	int64_t slots = 512;
	int ret;

	/* PAGE_SIZE / sizeof(pointer) as the rules compute it: 512 on x86_64. */
	if (ht_ruleset_value(rs, "conntrack.default.slots_per_page", &v, &e) == 0 &&
	    v.type == HT_T_INT)
		slots = v.i;
	ht_value_clear(&v);
	ret = ht_sysctl_conf_read(root, &sys);
	if (ret >= 0)
		ret = ht_modprobe_conf_read(root, &mod);
	if (ret >= 0)
		ret = ht_modules_load_read(root, &load);
	for (size_t i = 0; ret >= 0 && i < findings->n; i++) {
		const struct ht_finding *fi = &findings->items[i];

		if (!fi->applicable || fi->read_only)
			continue;
		if (ht_rule_kind(fi->rule) == HT_TARGET_SYSCTL)
			ret = check_sysctl(&r, fi, &sys, &load, facts);
		else if (ht_rule_kind(fi->rule) == HT_TARGET_MODULE &&
		         strcmp(ht_rule_target(fi->rule), "module.nf_conntrack.hashsize") == 0)
			ret = check_hashsize(&r, fi, &mod, facts, slots, root);
		else if (ht_rule_kind(fi->rule) == HT_TARGET_LIMIT)
			ret = check_limit(&r, fi, facts, root);
	}
	if (ret >= 0)
		ret = check_config(&r, &sys, &mod, &load, facts);
	if (ret >= 0)
		ret = check_kube_proxy(&r, rs, facts);
	if (ret >= 0)
		ret = check_edits(&r, root, state_path);
	ht_conf_free(&sys);
	ht_conf_free(&mod);
	ht_conf_free(&load);
	if (ret < 0) {
		ht_verify_report_free(&r);
		return ret;
	}
	*out = r;
	return 0;
}

int ht_verify_print(const struct ht_verify_report *r, FILE *out)
{
	size_t problems = ht_verify_problems(r);

	for (size_t i = 0; i < r->n; i++)
		fprintf(out, "%-7s %s\n", r->items[i].status == HT_VERIFY_OK ? "ok" : "PROBLEM",
		        r->items[i].message);
	if (r->n == 0) {
		fprintf(out, "nothing to verify: no hosttune setting is persisted on this host "
		        "(hosttune apply persists them)\n");
		return ferror(out) ? -EIO : 0;
	}
	fprintf(out, "%zu problem%s: %s\n", problems, problems == 1 ? "" : "s",
	        problems ? "some settings do not hold now or will not after a reboot" :
	                   "every setting holds now and after a reboot");
	return ferror(out) ? -EIO : 0;
}

struct json_object *ht_verify_to_json(const struct ht_verify_report *r)
{
	struct json_object *o = json_object_new_object(), *items = json_object_new_array();

	if (!o || !items) {
		json_object_put(o);
		json_object_put(items);
		return NULL;
	}
	json_object_object_add(o, "holds", json_object_new_boolean(ht_verify_problems(r) == 0));
	json_object_object_add(o, "problems",
	                       json_object_new_int64((int64_t)ht_verify_problems(r)));
	for (size_t i = 0; i < r->n; i++) {
		const struct ht_verify_item *it = &r->items[i];
		struct json_object *e = json_object_new_object();

		if (!e)
			continue;
		json_object_object_add(e, "status", json_object_new_string(
		                       it->status == HT_VERIFY_OK ? "ok" : "problem"));
		json_object_object_add(e, "check", json_object_new_string(it->check));
		json_object_object_add(e, "key", it->key ? json_object_new_string(it->key) : NULL);
		json_object_object_add(e, "message", json_object_new_string(it->message));
		json_object_array_add(items, e);
	}
	json_object_object_add(o, "items", items);
	return o;
}
