/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plan: one dispatch of the findings through the table of target kinds
 * (persist/kind.h), each kind adding its fix, its setting, its live value and
 * its files; then printing it (plan) and its JSON.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "engine/facts.h"
#include "engine/fix.h"
#include "engine/rules.h"
#include "shared/util.h"
#include "persist/diff.h"
#include "persist/kind.h"
#include "persist/persist.h"
#include "persist/persist-internal.h"

bool ht_plan_selects(const char *only, const char *id)
{
	size_t n = strlen(id);

	if (!only)
		return true;
	for (const char *p = only; *p;) {
		size_t len = strcspn(p, ",");

		if (len == n && strncmp(p, id, n) == 0)
			return true;
		p += len;
		if (*p)
			p++;
	}
	return false;
}

static int check_only(const struct ht_findings *fs, const char *only, struct ht_error *err)
{
	if (only && !*only)
		return ht_error_set(err, EINVAL, "--only: expected rule ids separated by commas, "
		                    "found nothing");
	for (const char *p = only; p && *p;) {
		size_t len = strcspn(p, ",");
		bool found = false;

		for (size_t i = 0; i < fs->n && !found; i++) {
			const char *id = ht_rule_id(fs->items[i].rule);

			found = strlen(id) == len && strncmp(id, p, len) == 0;
		}
		if (!found)
			return ht_error_set(err, EINVAL, "--only: no rule '%.*s' with a finding on this "
			                    "host", (int)len, p);
		p += len;
		if (*p)
			p++;
	}
	return 0;
}

static bool in_initial_netns(const struct ht_facts *facts)
{
	const struct ht_fact *f = ht_facts_get(facts, "netns.initial");

	return !f || f->value.type != HT_T_BOOL || f->value.b;
}

/* The row of @k in ht_kinds[], HT_NKINDS for NULL. */
static size_t kind_row(const struct ht_kind *k)
{
	size_t i = 0;

	while (i < HT_NKINDS && ht_kinds[i] != k)
		i++;
	return i;
}

/* The other manager of @k's directories, or NULL when hosttune writes them. */
static const struct ht_manager *manager_of(const struct ht_plan_ctx *c, const struct ht_kind *k)
{
	size_t i = kind_row(k);

	return i < HT_NKINDS && c->managed[i].dir ? &c->managed[i] : NULL;
}

/* The finding asks for a change: applicable, not kept, not the recommended value already. */
static bool needs_fix(const struct ht_finding *f)
{
	if (!f->applicable || f->kept || f->recommended.type == HT_T_NONE)
		return false;
	if (f->current.type == f->recommended.type && f->current.type == HT_T_INT &&
	    f->current.i == f->recommended.i)
		return false;
	return true;
}

/*
 * The fix of @f (kind @k, NULL for advice and values): its kind's, or for a
 * value that cannot be written on this host and that neither a remedy nor
 * a lever answers, that no fix comes from here.
 */
static int plan_fix(const struct ht_plan_ctx *c, const struct ht_finding *f,
                    const struct ht_kind *k, struct ht_fix *fix)
{
	if (f->read_only) {
		if (!f->applicable || f->remedy || f->lever || f->severity == HT_SEV_OK)
			return 0;
		fix->kind = HT_FIX_NONE_HERE;
		fix->reason = strdup("this value cannot be written on this host");
		return fix->reason ? 0 : -ENOMEM;
	}
	if (!k || !needs_fix(f))
		return 0;
	if (manager_of(c, k) && f->severity != HT_SEV_OK) {
		const struct ht_manager *m = manager_of(c, k);
		struct ht_limit_fix lf;
		_cleanup_free_ char *why = NULL;

		fix->line = ht_manager_setting(m, f, c->facts);
		/* A limit without a service to name: the kind's own reason. */
		if (fix->line) {
			fix->kind = HT_FIX_MANAGED;
			fix->nixos = m->nixos;
			fix->reason = ht_manager_text(m);
			if (ht_rule_kind(f->rule) == HT_TARGET_LIMIT &&
			    ht_limit_fix(f, c->facts, &lf, &why) == 0) {
				fix->restart = TAKE_PTR(lf.unit);
				ht_limit_fix_free(&lf);
			}
			return fix->reason ? 0 : -ENOMEM;
		}
	}
	return k->fix(c, f, fix);
}

/*
 * @f's kind has another manager (@m): no setting, and when apply could
 * change it a "Not persisted" line with that manager's own setting.
 */
static int plan_managed(struct ht_plan_ctx *c, const struct ht_finding *f,
                        const struct ht_kind *k, const struct ht_manager *m)
{
	_cleanup_free_ char *line = NULL, *who = NULL, *msg = NULL, *key = NULL;
	const char *target = ht_rule_target(f->rule);
	bool live = k->live || k->live_path;
	int r;

	if (!ht_plan_selects(c->only, ht_rule_id(f->rule)) || !needs_fix(f) ||
	    f->severity == HT_SEV_OK)
		return 0;
	line = ht_manager_setting(m, f, c->facts);
	who = ht_manager_text(m);
	if (!who)
		return -ENOMEM;
	if (!line)
		return ht_rule_kind(f->rule) == HT_TARGET_LIMIT ? 0 : -ENOMEM;
	if (m->nixos)
		r = asprintf(&msg, "%s: set %s in configuration.nix, then nixos-rebuild switch%s%s%s",
		             who, line, live ? " (`hosttune apply --live-only --only " : "",
		             live ? ht_rule_id(f->rule) : "",
		             live ? "` sets the live value until then)" : "");
	else
		r = asprintf(&msg, "%s: put %s where that is managed%s%s%s", who, line,
		             live ? " (`hosttune apply --live-only --only " : "",
		             live ? ht_rule_id(f->rule) : "",
		             live ? "` sets the live value until then)" : "");
	if (r < 0)
		return -ENOMEM;
	if (ht_rule_kind(f->rule) == HT_TARGET_LIMIT)
		return f->instance ? ht_plan_skip(c->p, f, target, msg) : 0;
	if (ht_rule_kind(f->rule) == HT_TARGET_CHANNELS && f->instance)
		key = ht_finding_fact(f, "nic", target + strlen("nic."));
	else
		key = strdup(target);
	return key ? ht_plan_skip_key(c->p, key, msg) : -ENOMEM;
}

/* Frees @s's strings and limit and zeroes it. */
static void setting_clear(struct ht_setting *s)
{
	free(s->value);
	free(s->current);
	free(s->full_key);
	if (s->limit) {
		ht_limit_fix_free(s->limit);
		free(s->limit);
	}
	*s = (struct ht_setting){ 0 };
}

/*
 * The setting of @f (kind @k) appended to @s[*ns] when its kind takes it: an
 * applicable finding with an integer recommendation that can be written.
 */
static int plan_setting(struct ht_plan_ctx *c, const struct ht_finding *f,
                        const struct ht_kind *k, struct ht_setting *s, size_t *ns)
{
	struct ht_setting *st = &s[*ns];
	int r;

	if (!k || !f->applicable || f->read_only || f->recommended.type != HT_T_INT)
		return 0;
	if (c->persist && manager_of(c, k))
		return plan_managed(c, f, k, manager_of(c, k));
	*st = (struct ht_setting){ .f = f, .kind = k,
	                           .act = ht_plan_selects(c->only, ht_rule_id(f->rule)) && !f->kept };
	r = k->setting(c, f, st);
	if (r > 0) {
		(*ns)++;
		return 0;
	}
	setting_clear(st);
	return r;
}

static int cmp_setting(const void *a, const void *b)
{
	const struct ht_setting *x = a, *y = b;

	return strcmp(x->key, y->key);
}

static void settings_free(struct ht_setting *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		setting_clear(&s[i]);
	free(s);
}

/* The live write of @s, unless its live value is the recommended one already. */
static int live_for(struct ht_plan_ctx *c, const struct ht_setting *s)
{
	struct ht_plan *p = c->p;
	struct ht_plan_live *l;
	int r = 0;

	if (s->current && strcmp(s->current, s->value) == 0)
		return 0;
	l = realloc(p->live, (p->nlive + 1) * sizeof(*l));
	if (!l)
		return -ENOMEM;
	p->live = l;
	l = &p->live[p->nlive++];
	*l = (struct ht_plan_live){ .key = strdup(s->key), .new = strdup(s->value) };
	l->old = s->current ? strdup(s->current) : NULL;
	if (!l->key || !l->new || (s->current && !l->old))
		return -ENOMEM;
	if (s->kind->live)
		r = s->kind->live(c, s, l);
	else {
		l->kind = HT_LIVE_PATH;
		l->path = s->kind->live_path(s->key);
		r = l->path ? 0 : -ENOMEM;
	}
	if (r >= 0 && !s->current && !l->note)
		l->note = strdup("does not exist now: the file applies at boot once the kernel has it");
	return r;
}

/* The live values, in the order of @s (sorted by key), of the kinds that have one. */
static int plan_live(struct ht_plan_ctx *c, const struct ht_setting *s, size_t n)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < n; i++)
		if (s[i].act && (s[i].kind->live || s[i].kind->live_path))
			r = live_for(c, &s[i]);
	return r;
}

/*
 * Every kind's files: first the lines of each kind with one file for all
 * its settings (@old[k]: that file's content), then whether those need
 * nf_conntrack loaded at boot, then each kind's files() in table order.
 */
static int plan_files(struct ht_plan_ctx *c, const struct ht_setting *s, size_t n,
                      char *const *old)
{
	struct ht_setting *chosen[HT_NKINDS] = { 0 };
	size_t nchosen[HT_NKINDS] = { 0 };
	bool nf = false;
	int r = 0;

	for (size_t k = 0; r >= 0 && k < HT_NKINDS; k++) {
		const struct ht_kind *kind = ht_kinds[k];
		_cleanup_free_ struct ht_setting *mine = NULL;
		size_t m = 0;

		if (!kind->file)
			continue;
		mine = calloc(n + 1, sizeof(*mine));
		chosen[k] = calloc(n + 1, sizeof(*chosen[k]));
		if (!mine || !chosen[k]) {
			r = -ENOMEM;
			break;
		}
		for (size_t i = 0; i < n; i++)
			if (s[i].kind == kind && (!kind->in_file || kind->in_file(c, &s[i])))
				mine[m++] = s[i];
		r = ht_plan_select(mine, m, old[k], chosen[k], &nchosen[k]);
		for (size_t i = 0; i < nchosen[k]; i++)
			nf = nf || (kind->needs_conntrack && kind->needs_conntrack(&chosen[k][i]));
	}
	/* Built in, nf_conntrack's keys exist before systemd-sysctl runs; in a
	 * container, nf_conntrack is the host's business. */
	c->load_conntrack = nf && !c->builtin && c->initial_netns;
	if (r >= 0 && c->load_conntrack && c->managed[kind_row(&ht_kind_module)].dir) {
		const struct ht_manager *m = &c->managed[kind_row(&ht_kind_module)];
		_cleanup_free_ char *who = ht_manager_text(m);

		if (!who)
			r = -ENOMEM;
		else
			r = ht_plan_warn(c->p, "nf_conntrack", m->dir, "the net.netfilter.* lines "
			                 "apply at boot only with nf_conntrack loaded before "
			                 "systemd-sysctl runs, and %s: %s", who, m->nixos ?
			                 "add boot.kernelModules = [ \"nf_conntrack\" ]; to "
			                 "configuration.nix" : "list nf_conntrack in a modules-load.d "
			                 "file where that is managed");
	}
	for (size_t k = 0; r >= 0 && k < HT_NKINDS; k++)
		if (!c->managed[k].dir)
			r = ht_kinds[k]->files(c, s, n, chosen[k], nchosen[k]);
	for (size_t k = 0; k < HT_NKINDS; k++) {
		if (chosen[k])
			ht_settings_free_values(chosen[k], nchosen[k]);
		free(chosen[k]);
	}
	return r;
}

/*
 * First boot: the plan lists nf_conntrack in modules-load.d and it is a
 * module not loaded yet. apply loads it after writing the files (with the
 * modprobe.d options just written) and then sets the live values that only
 * exist once it is loaded, so that this boot matches the next instead of
 * running with the kernel's defaults until a reboot. Only on the live root in
 * the initial network namespace, and only when apply writes both the files
 * and the live values.
 */
static int plan_load(struct ht_plan_ctx *c, unsigned flags)
{
	const char *state = ht_fact_string(c->facts, "conntrack.module");
	struct ht_plan *p = c->p;

	if ((flags & (HT_PLAN_PERSIST | HT_PLAN_LIVE)) != (HT_PLAN_PERSIST | HT_PLAN_LIVE) ||
	    c->no_disk || !c->load_conntrack || !c->initial_netns ||
	    !state || strcmp(state, "available") != 0 || !ht_module_load_here(c->root))
		return 0;
	p->load_module = strdup("nf_conntrack");
	if (!p->load_module)
		return -ENOMEM;
	for (size_t i = 0; i < p->nlive; i++) {
		struct ht_plan_live *l = &p->live[i];

		if (l->old || !l->note || l->kind != HT_LIVE_PATH ||
		    (strncmp(l->key, "net.netfilter.", 14) != 0 &&
		     strncmp(l->key, "module.nf_conntrack.", 20) != 0))
			continue;
		free(l->note);
		l->note = NULL;
		l->after_load = true;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The plan's context and what it starts with: the drop counters and boot
 * id for the state file, --only checked, the profile, and the content of
 * each kind's one file (@old) when the plan writes anything.
 */
static int plan_start(struct ht_plan_ctx *c, const struct ht_findings *findings,
                      unsigned flags, const char *profile, char **old)
{
	const struct ht_fact *d = ht_facts_get(c->facts, "conntrack.stat.drop");
	const struct ht_fact *e = ht_facts_get(c->facts, "conntrack.stat.early_drop");
	const char *state = ht_fact_string(c->facts, "conntrack.module");
	bool writes = flags & (HT_PLAN_PERSIST | HT_PLAN_LIVE);
	struct ht_plan *p = c->p;
	int r;

	c->no_disk = p->no_disk = flags & HT_PLAN_NO_DISK;
	c->live_root = !c->root || !*c->root || strspn(c->root, "/") == strlen(c->root);
	c->builtin = state && strcmp(state, "builtin") == 0;
	c->initial_netns = in_initial_netns(c->facts);
	p->ct_drop = d && d->value.type == HT_T_INT ? d->value.i : -1;
	p->ct_early_drop = e && e->value.type == HT_T_INT ? e->value.i : -1;
	if (writes && !p->no_disk &&
	    ht_read_file(c->root, "/proc/sys/kernel/random/boot_id", &p->boot_id) < 0)
		p->boot_id = NULL;
	r = check_only(findings, c->only, c->err);
	if (r < 0)
		return r;
	p->profile = strdup(profile ? profile : "default");
	p->fixes = calloc(findings->n + 1, sizeof(*p->fixes));
	if (!p->profile || !p->fixes)
		return -ENOMEM;
	p->nfixes = findings->n;
	c->persist = flags & HT_PLAN_PERSIST;
	for (size_t k = 0; !p->no_disk && k < HT_NKINDS; k++)
		for (size_t i = 0; !c->managed[k].dir && ht_kinds[k]->dirs[i]; i++)
			if ((r = ht_dir_manager(c->root, ht_kinds[k]->dirs[i], &c->managed[k])) < 0)
				return r;
	for (size_t k = 0; writes && k < HT_NKINDS; k++)
		if (ht_kinds[k]->file && !c->managed[k].dir &&
		    (r = ht_plan_read(c, ht_kinds[k]->file, &old[k])) < 0)
			return r;
	return 0;
}

int ht_plan_build(const struct ht_findings *findings, const struct ht_facts *facts,
                  const char *root, const char *profile, const char *only, unsigned flags,
                  struct ht_plan *out, struct ht_error *err)
{
	struct ht_plan p = { 0 };
	struct ht_plan_ctx c = { .p = &p, .facts = facts, .root = root, .only = only, .err = err };
	struct ht_setting *s = calloc(findings->n + 1, sizeof(*s));
	char *old[HT_NKINDS] = { 0 };
	size_t ns = 0;
	int r;

	err->msg[0] = '\0';
	r = s ? plan_start(&c, findings, flags, profile, old) : -ENOMEM;
	for (size_t i = 0; r >= 0 && i < findings->n; i++) {
		const struct ht_finding *f = &findings->items[i];
		const struct ht_kind *k = ht_kind_of(ht_rule_kind(f->rule));

		r = plan_fix(&c, f, k, &p.fixes[i]);
		if (r >= 0 && (flags & (HT_PLAN_PERSIST | HT_PLAN_LIVE)))
			r = plan_setting(&c, f, k, s, &ns);
	}
	if (r >= 0 && ns > 1)
		qsort(s, ns, sizeof(*s), cmp_setting);
	/* Live values first in the plan's order: sorted by key. */
	if (r >= 0 && (flags & HT_PLAN_LIVE))
		r = plan_live(&c, s, ns);
	if (r >= 0 && (flags & HT_PLAN_PERSIST))
		r = plan_files(&c, s, ns, old);
	if (r >= 0)
		r = plan_load(&c, flags);
	if (r >= 0 && p.nrestart > 1) /* qsort() of a NULL array is undefined, even of none */
		qsort(p.restart, p.nrestart, sizeof(*p.restart), cmp_str);
	settings_free(s, ns);
	for (size_t k = 0; k < HT_NKINDS; k++) {
		free(old[k]);
		ht_manager_free(&c.managed[k]);
	}
	if (r < 0) {
		ht_plan_free(&p);
		return r;
	}
	*out = p;
	return 0;
}

static void fix_free(struct ht_fix *f)
{
	free(f->file);
	free(f->line);
	free(f->cmdline);
	free(f->live);
	free(f->restart);
	free(f->source);
	free(f->reason);
}

void ht_plan_free(struct ht_plan *p)
{
	for (size_t i = 0; i < p->nfiles; i++) {
		free(p->files[i].path);
		free(p->files[i].old);
		free(p->files[i].new);
	}
	free(p->files);
	for (size_t i = 0; i < p->nlive; i++) {
		free(p->live[i].key);
		free(p->live[i].path);
		free(p->live[i].ifname);
		free(p->live[i].channel);
		free(p->live[i].old);
		free(p->live[i].new);
		free(p->live[i].note);
	}
	free(p->live);
	for (size_t i = 0; i < p->nwarnings; i++) {
		free(p->warnings[i].key);
		free(p->warnings[i].source);
		free(p->warnings[i].message);
	}
	free(p->warnings);
	for (size_t i = 0; i < p->nrestart; i++)
		free(p->restart[i]);
	free(p->restart);
	for (size_t i = 0; i < p->nskipped; i++) {
		free(p->skipped[i].key);
		free(p->skipped[i].message);
	}
	free(p->skipped);
	for (size_t i = 0; i < p->nfixes; i++)
		fix_free(&p->fixes[i]);
	free(p->fixes);
	free(p->boot_id);
	free(p->profile);
	free(p->load_module);
	memset(p, 0, sizeof(*p));
}

bool ht_plan_empty(const struct ht_plan *p)
{
	for (size_t i = 0; i < p->nfiles; i++)
		if (ht_plan_file_changes(&p->files[i]))
			return false;
	for (size_t i = 0; i < p->nlive; i++)
		if (ht_plan_live_changes(&p->live[i]))
			return false;
	return true;
}

size_t ht_plan_refused(const struct ht_plan *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nskipped; i++)
		n += !p->skipped[i].satisfied;
	return n;
}

const char *ht_plan_empty_text(const struct ht_plan *p)
{
	if (ht_plan_refused(p))
		return "No changes that hosttune may make, but the host does not match the plan: "
		       "the settings under \"Not persisted\" were refused, and their files and live "
		       "values are as they were.";
	return "No changes: the files and live values already match the plan.";
}

int ht_plan_print(const struct ht_plan *p, FILE *out)
{
	size_t w = 3;
	bool any_live = false, any_note = false;
	int r;

	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ht_plan_file *f = &p->files[i];

		if (!ht_plan_file_changes(f))
			continue;
		if (f->foreign)
			fprintf(out, "# %s exists and is not hosttune's: apply needs --force "
			        "(it keeps a copy as %s" HT_BACKUP_SUFFIX ")\n", f->path, f->path);
		r = ht_diff_unified(out, f->path + 1, f->old, f->new);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < p->nlive; i++) {
		size_t l = strlen(p->live[i].key);

		if (l > w)
			w = l;
		if (ht_plan_live_changes(&p->live[i]))
			any_live = true;
		else
			any_note = true;
	}
	if (p->load_module)
		fprintf(out, "\nLoad now: %s (through libkmod, as modprobe %s would: with the "
		        "modprobe.d options above), because modules-load.d loads it at every boot "
		        "from now on; then the live values it brings are set, so that this boot "
		        "matches the next.\n", p->load_module, p->load_module);
	if (any_live) {
		fprintf(out, "\nLive changes:\n%-*s  %-10s  %s\n", (int)w, "KEY", "NOW", "NEW");
		for (size_t i = 0; i < p->nlive; i++) {
			const struct ht_plan_live *l = &p->live[i];

			if (ht_plan_live_changes(l))
				fprintf(out, "%-*s  %-10s  %s\n", (int)w, l->key,
				        l->old ? l->old : l->after_load ? "at load" : "-", l->new);
		}
	}
	/* What the plan's files set but nothing writes live now: no change, a note. */
	if (any_note) {
		fprintf(out, "\nNot set live:\n%-*s  %-10s  %s\n", (int)w, "KEY", "VALUE", "WHY");
		for (size_t i = 0; i < p->nlive; i++) {
			const struct ht_plan_live *l = &p->live[i];

			if (!ht_plan_live_changes(l))
				fprintf(out, "%-*s  %-10s  %s\n", (int)w, l->key, l->new, l->note);
		}
	}
	if (ht_plan_empty(p))
		fprintf(out, "%s\n", ht_plan_empty_text(p));
	if (p->nrestart)
		fputc('\n', out);
	ht_plan_print_restart(p, out);
	if (p->nwarnings)
		fputc('\n', out);
	return ht_plan_print_warnings(p, out);
}

void ht_plan_print_restart(const struct ht_plan *p, FILE *out)
{
	for (size_t i = 0; i < p->nrestart; i++) {
		_cleanup_free_ char *w = ht_shell_word(p->restart[i]);

		fprintf(out, "Restart to take effect: systemctl daemon-reload && systemctl restart "
		        "%s\n", w ? w : p->restart[i]);
	}
	if (p->nskipped)
		fprintf(out, "\nNot persisted:\n");
	for (size_t i = 0; i < p->nskipped; i++)
		fprintf(out, "  %s: %s\n", p->skipped[i].key, p->skipped[i].message);
}

int ht_plan_print_warnings(const struct ht_plan *p, FILE *out)
{
	size_t nrun = 0;

	for (size_t i = 0; i < p->nwarnings; i++)
		nrun += p->warnings[i].until_reboot;
	if (nrun)
		fprintf(out, "Overridden until the next reboot:\n");
	for (size_t i = 0; i < p->nwarnings; i++)
		if (p->warnings[i].until_reboot)
			fprintf(out, "  %s\n", p->warnings[i].message);
	if (p->nwarnings > nrun)
		fprintf(out, "%sWill not hold at boot:\n", nrun ? "\n" : "");
	for (size_t i = 0; i < p->nwarnings; i++)
		if (!p->warnings[i].until_reboot)
			fprintf(out, "  %s\n", p->warnings[i].message);
	return ferror(out) ? -EIO : 0;
}

struct json_object *ht_plan_to_json(const struct ht_plan *p, bool applied)
{
	struct json_object *o = json_object_new_object(), *files = json_object_new_array();
	struct json_object *live = json_object_new_array();

	if (!o || !files || !live) {
		json_object_put(o);
		json_object_put(files);
		json_object_put(live);
		return NULL;
	}
	json_object_object_add(o, "changed", json_object_new_boolean(applied && !ht_plan_empty(p)));
	json_object_object_add(o, "would_change", json_object_new_boolean(!ht_plan_empty(p)));
	{
		/* The files' unified diff, as plan prints it (without its "# ..." notes). */
		char *text = NULL;
		size_t len = 0;
		FILE *d = open_memstream(&text, &len);
		int r = d ? 0 : -ENOMEM;

		for (size_t i = 0; r >= 0 && i < p->nfiles; i++)
			if (ht_plan_file_changes(&p->files[i]))
				r = ht_diff_unified(d, p->files[i].path + 1, p->files[i].old,
				                    p->files[i].new);
		if (d && fclose(d) != 0)
			r = -ENOMEM;
		if (r < 0) {
			free(text);
			json_object_put(o);
			json_object_put(files);
			json_object_put(live);
			return NULL;
		}
		json_object_object_add(o, "diff", json_object_new_string_len(text, (int)len));
		free(text);
	}
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ht_plan_file *f = &p->files[i];
		struct json_object *e = json_object_new_object();
		const char *action = !ht_plan_file_changes(f) ? "unchanged" : !f->old ? "create" :
		                     !f->new ? "remove" : "update";

		if (!e)
			continue;
		json_object_object_add(e, "path", json_object_new_string(f->path));
		json_object_object_add(e, "action", json_object_new_string(action));
		json_object_object_add(e, "foreign", json_object_new_boolean(f->foreign));
		json_object_array_add(files, e);
	}
	for (size_t i = 0; i < p->nlive; i++) {
		const struct ht_plan_live *l = &p->live[i];
		struct json_object *e = json_object_new_object();

		if (!e)
			continue;
		json_object_object_add(e, "key", json_object_new_string(l->key));
		json_object_object_add(e, "from", l->old ? json_object_new_string(l->old) : NULL);
		json_object_object_add(e, "to", json_object_new_string(l->new));
		json_object_object_add(e, "note", l->note ? json_object_new_string(l->note) : NULL);
		json_object_object_add(e, "after_load", json_object_new_boolean(l->after_load));
		json_object_array_add(live, e);
	}
	json_object_object_add(o, "files", files);
	json_object_object_add(o, "live", live);
	json_object_object_add(o, "load_module",
	                       p->load_module ? json_object_new_string(p->load_module) : NULL);
	json_object_object_add(o, "module_loaded", json_object_new_boolean(p->module_loaded));
	{
		struct json_object *w = json_object_new_array();
		size_t nboot = 0;

		for (size_t i = 0; w && i < p->nwarnings; i++) {
			struct json_object *e = json_object_new_object();

			if (!e)
				continue;
			json_object_object_add(e, "key", json_object_new_string(p->warnings[i].key));
			json_object_object_add(e, "source",
			                       json_object_new_string(p->warnings[i].source));
			json_object_object_add(e, "message",
			                       json_object_new_string(p->warnings[i].message));
			json_object_object_add(e, "until_reboot",
			                       json_object_new_boolean(p->warnings[i].until_reboot));
			json_object_array_add(w, e);
			nboot += !p->warnings[i].until_reboot;
		}
		json_object_object_add(o, "holds_at_boot", json_object_new_boolean(nboot == 0));
		json_object_object_add(o, "will_not_hold", w);
	}
	{
		struct json_object *rs = json_object_new_array(), *sk = json_object_new_array();

		for (size_t i = 0; rs && i < p->nrestart; i++)
			json_object_array_add(rs, json_object_new_string(p->restart[i]));
		for (size_t i = 0; sk && i < p->nskipped; i++) {
			struct json_object *e = json_object_new_object();

			if (!e)
				continue;
			json_object_object_add(e, "key", json_object_new_string(p->skipped[i].key));
			json_object_object_add(e, "message",
			                       json_object_new_string(p->skipped[i].message));
			json_object_object_add(e, "refused",
			                       json_object_new_boolean(!p->skipped[i].satisfied));
			json_object_array_add(sk, e);
		}
		json_object_object_add(o, "restart", rs);
		json_object_object_add(o, "skipped", sk);
	}
	return o;
}

