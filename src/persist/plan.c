/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "shared/bootconf.h"
#include "persist/diff.h"
#include "shared/fsutil.h"
#include "persist/persist.h"
#include "persist/persist-internal.h"
#include "engine/rules-internal.h"
#include "persist/templates.h"

#define SYSCTL_PATH "/etc/sysctl.d/90-hosttune.conf"
#define MODPROBE_PATH "/etc/modprobe.d/hosttune.conf"
#define MODULES_LOAD_PATH "/etc/modules-load.d/hosttune.conf"
#define LINK_DIR "/etc/systemd/network"
#define LINK_PREFIX "90-hosttune-"

/* One setting a finding asks for. */
struct setting {
	const struct ht_finding *f;
	const char *key;  /* finding target, per interface: nic.IF.channels.KIND */
	char *value;      /* recommended value as text */
	char *current;    /* current value as text, NULL when unavailable */
	char *full_key;   /* owned storage behind key when built */
	bool act;         /* in --only and not kept: apply may change it */
	struct ht_limit_fix *limit; /* HT_TARGET_LIMIT: its drop-in (owned), else NULL */
};

bool ht_has_header(const char *content)
{
	return content && strncmp(content, HT_FILE_HEADER, strlen(HT_FILE_HEADER)) == 0;
}

/* Appends printf output to a growing string; 0 or -ENOMEM. */
static int sbuf_add(char **s, const char *fmt, ...) _printf_(2, 3);

static int sbuf_add(char **s, const char *fmt, ...)
{
	_cleanup_free_ char *piece = NULL;
	char *n;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&piece, fmt, ap);
	va_end(ap);
	if (r < 0) {
		piece = NULL;
		return -ENOMEM;
	}
	if (asprintf(&n, "%s%s", *s ? *s : "", piece) < 0)
		return -ENOMEM;
	free(*s);
	*s = n;
	return 0;
}

/*
 * Fills @tmpl's @PROFILE@, @IFNAME@, @MATCH@ (a .link [Match] line),
 * @BOOT_NOTE@ (@note, NULL: nothing) and @SETTINGS@ (a block without a
 * final newline).
 */
static char *render_match(const char *tmpl, const char *profile, const char *ifname,
                          const char *match, const char *note, const char *settings)
{
	char *out = NULL;
	const char *p = tmpl;

	while (*p) {
		const char *at = strchr(p, '@');
		const char *sub = NULL;
		size_t skip = 0;

		if (!at) {
			if (sbuf_add(&out, "%s", p) < 0)
				goto oom;
			break;
		}
		if (strncmp(at, "@PROFILE@", 9) == 0)
			sub = profile, skip = 9;
		else if (strncmp(at, "@IFNAME@", 8) == 0)
			sub = ifname, skip = 8;
		else if (strncmp(at, "@UNIT@", 6) == 0)
			sub = ifname, skip = 6;
		else if (strncmp(at, "@SETTINGS@", 10) == 0)
			sub = settings, skip = 10;
		else if (strncmp(at, "@MATCH@", 7) == 0)
			sub = match, skip = 7;
		else if (strncmp(at, "@BOOT_NOTE@", 11) == 0)
			sub = note, skip = 11;
		if (sbuf_add(&out, "%.*s%s", (int)(at - p), p, sub ? sub : (skip ? "" : "@")) < 0)
			goto oom;
		p = at + (skip ? skip : 1);
	}
	return out;
oom:
	free(out);
	return NULL;
}

static bool in_only(const char *only, const char *id)
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

static const char *fact_string(const struct ht_facts *facts, const char *name)
{
	const struct ht_fact *f = ht_facts_get(facts, name);

	return f && f->value.type == HT_T_STR ? f->value.s : NULL;
}

/* The file this setting persists in, and the line it takes there. */
static const char *setting_path(const struct ht_finding *f)
{
	switch (f->rule->kind) {
	case HT_TARGET_SYSCTL:
		return SYSCTL_PATH;
	case HT_TARGET_MODULE:
		return MODPROBE_PATH;
	default:
		return NULL;
	}
}

/*
 * The value hosttune's own file @content gives @s, or NULL when it does not
 * set it (caller frees). Settings already in the file stay there.
 */
static char *file_value(const char *content, const struct setting *s)
{
	const struct ht_rule *r = s->f->rule;
	_cleanup_free_ char *needle = NULL;
	const char *at, *v;

	if (!content || !ht_has_header(content))
		return NULL;
	if (r->kind == HT_TARGET_SYSCTL) {
		if (asprintf(&needle, "\n%s = ", r->target) < 0)
			return NULL;
	} else if (r->kind == HT_TARGET_MODULE) {
		const char *mod = r->target + strlen("module.");
		const char *dot = strchr(mod, '.');

		if (asprintf(&needle, "\noptions %.*s %s=", (int)(dot - mod), mod, dot + 1) < 0)
			return NULL;
	} else if (r->kind == HT_TARGET_LIMIT) {
		if (!(needle = strdup("\nLimitNOFILE=")))
			return NULL;
	} else {
		const char *kind = r->target + strlen("nic.channels.");

		if (asprintf(&needle, "\n%s=", strcmp(kind, "combined") == 0 ? "CombinedChannels" :
		             strcmp(kind, "rx") == 0 ? "RxChannels" : "TxChannels") < 0)
			return NULL;
	}
	at = strstr(content, needle);
	if (!at)
		return NULL;
	v = at + strlen(needle);
	return strndup(v, strcspn(v, "\n"));
}

/*
 * Whether a setting apply may change belongs in hosttune's file: it changes
 * the live value, the finding is not ok, the file has it already, or it
 * differs from what the kernel boots with (so that a value set live earlier,
 * by --live-only or by hand, is persisted too).
 */
static bool wanted_in_file(const struct setting *s, const char *file_val)
{
	const struct ht_finding *f = s->f;

	/* A limit's value is "SOFT:HARD", its current value the soft limit alone. */
	if (f->rule->kind == HT_TARGET_LIMIT)
		return f->severity != HT_SEV_OK || file_val || f->current.type != HT_T_INT ||
		       f->current.i < s->limit->soft;
	if (!s->current || strcmp(s->current, s->value) != 0)
		return true;
	if (f->severity != HT_SEV_OK || file_val)
		return true;
	return f->kernel_default.type == HT_T_INT && f->recommended.type == HT_T_INT &&
	       f->kernel_default.i != f->recommended.i;
}

/*
 * The settings of @s[0..n) that go into the file whose content is now @old:
 * those apply may change, with the recommended value, when wanted_in_file();
 * the others (outside --only, or kept because the host has more) keep the
 * value hosttune's file already gives them. @out gets copies (value owned).
 */
static int select_for_file(const struct setting *s, size_t n, const char *old,
                           struct setting *out, size_t *nout)
{
	*nout = 0;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *fv = file_value(old, &s[i]);
		struct setting *o = &out[*nout];

		if (s[i].act ? !wanted_in_file(&s[i], fv) : !fv)
			continue;
		*o = s[i];
		o->current = NULL;
		o->full_key = NULL;
		o->value = strdup(s[i].act ? s[i].value : fv);
		if (!o->value)
			return -ENOMEM;
		(*nout)++;
	}
	return 0;
}

void ht_limit_fix_free(struct ht_limit_fix *l)
{
	free(l->unit);
	free(l->path);
	free(l->value);
	free(l->source);
	*l = (struct ht_limit_fix){ 0 };
}

int ht_limit_fix_configured(struct ht_limit_fix *l, const char *root)
{
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;
	const struct ht_conf_assign *eff = NULL;
	uint64_t soft = 0, hard = 0;
	int r;

	l->configured = -1;
	r = ht_unit_limits_read(root, l->unit, &c);
	if (r < 0)
		return r == -ENOMEM ? r : 0;
	k = ht_conf_find(&c, "LimitNOFILE");
	/* The last line systemd applies, hosttune's own drop-in left out. */
	for (size_t i = k ? k->n : 0; i-- > 0;) {
		if (strcmp(k->assigns[i].file, l->path) == 0)
			continue;
		if (ht_rlimit_parse(k->assigns[i].value, &soft, &hard) < 0)
			continue;
		eff = &k->assigns[i];
		break;
	}
	if (eff) {
		l->configured = soft > INT64_MAX ? INT64_MAX : (int64_t)soft;
		if (asprintf(&l->source, "%s:%u", eff->file, eff->line) < 0) {
			l->source = NULL;
			ht_conf_free(&c);
			return -ENOMEM;
		}
	}
	ht_conf_free(&c);
	if (!eff)
		return 0;
	if (l->configured >= l->soft) {
		l->enough = true;
		return 0;
	}
	if (hard > (uint64_t)l->hard) {
		char *v;

		if (hard == UINT64_MAX)
			r = asprintf(&v, "%" PRId64 ":infinity", l->soft);
		else
			r = asprintf(&v, "%" PRId64 ":%" PRIu64, l->soft, hard);
		if (r < 0)
			return -ENOMEM;
		free(l->value);
		l->value = v;
		l->hard = hard > INT64_MAX ? INT64_MAX : (int64_t)hard;
	}
	return 0;
}

int ht_limit_fix(const struct ht_finding *f, const struct ht_facts *facts,
                 struct ht_limit_fix *out, char **why)
{
	_cleanup_free_ char *uname = NULL, *hname = NULL;
	const struct ht_fact *u, *h;

	*out = (struct ht_limit_fix){ .configured = -1 };
	*why = NULL;
	if (f->rule->kind != HT_TARGET_LIMIT || !f->instance || f->recommended.type != HT_T_INT)
		return -EINVAL;
	if (asprintf(&uname, "process.%s.unit", f->instance) < 0 ||
	    asprintf(&hname, "process.%s.nofile_hard", f->instance) < 0)
		return -ENOMEM;
	u = ht_facts_get(facts, uname);
	h = ht_facts_get(facts, hname);
	if (!u || u->value.type != HT_T_STR) {
		if (asprintf(why, "%s runs outside a systemd service (%s unavailable): no drop-in "
		             "to write; raise its limit where it is started", f->instance,
		             uname) < 0)
			*why = NULL;
		return *why ? -ENODATA : -ENOMEM;
	}
	if (!ht_unit_name_valid(u->value.s)) {
		if (asprintf(why, "%s = '%.200s' is not a service name hosttune writes a drop-in "
		             "for ([A-Za-z0-9:_.@\\-] ending in .service, no '/'): nothing written",
		             uname, u->value.s) < 0)
			*why = NULL;
		return *why ? -EINVAL : -ENOMEM;
	}
	if (!h || h->value.type != HT_T_INT) {
		if (asprintf(why, "%s unavailable: hosttune writes no LimitNOFILE= that could "
		             "lower the hard limit", hname) < 0)
			*why = NULL;
		return *why ? -ENODATA : -ENOMEM;
	}
	out->soft = f->recommended.i;
	out->hard = h->value.i > out->soft ? h->value.i : out->soft;
	out->unit = strdup(u->value.s);
	if (!out->unit)
		return -ENOMEM;
	if (asprintf(&out->path, HT_UNIT_DIR "/%s.d/" HT_DROPIN_NAME, out->unit) < 0) {
		out->path = NULL;
		ht_limit_fix_free(out);
		return -ENOMEM;
	}
	if (asprintf(&out->value, "%" PRId64 ":%" PRId64, out->soft, out->hard) < 0) {
		out->value = NULL;
		ht_limit_fix_free(out);
		return -ENOMEM;
	}
	return 0;
}

char *ht_root_join(const char *root, const char *path)
{
	return ht_root_path(root, path);
}

/* With HT_PLAN_NO_DISK (the facts of another host) there is no disk to read. */
static int read_disk(bool no_disk, const char *root, const char *path, char **out,
                     struct ht_error *err)
{
	*out = NULL;
	if (no_disk)
		return 0;
	/* Resolved as apply writes: below --root no symlink in any component. */
	return ht_file_read_at(root, path, out, NULL, err);
}

static struct ht_plan_file *plan_add_file(struct ht_plan *p)
{
	struct ht_plan_file *n = realloc(p->files, (p->nfiles + 1) * sizeof(*n));

	if (!n)
		return NULL;
	p->files = n;
	memset(&n[p->nfiles], 0, sizeof(*n));
	return &n[p->nfiles++];
}

static struct ht_plan_live *plan_add_live(struct ht_plan *p)
{
	struct ht_plan_live *n = realloc(p->live, (p->nlive + 1) * sizeof(*n));

	if (!n)
		return NULL;
	p->live = n;
	memset(&n[p->nlive], 0, sizeof(*n));
	return &n[p->nlive++];
}

/*
 * Adds @path to the plan with @new_content (NULL: hosttune's file is no longer
 * wanted). A file that is not hosttune's and would only be removed is left
 * out: hosttune never deletes what it did not write.
 */
static int plan_file(struct ht_plan *p, const char *root, const char *path, char *new_content,
                     struct ht_error *err)
{
	_cleanup_free_ char *old = NULL;
	struct ht_plan_file *f;
	int r;

	r = read_disk(p->no_disk, root, path, &old, err);
	if (r < 0) {
		free(new_content);
		return r;
	}
	if (!new_content && (!old || !ht_has_header(old)))
		return 0;
	f = plan_add_file(p);
	if (!f) {
		free(new_content);
		return -ENOMEM;
	}
	f->path = strdup(path);
	f->new = new_content;
	f->foreign = old && !ht_has_header(old);
	f->old = TAKE_PTR(old);
	return f->path ? 0 : -ENOMEM;
}

static int cmp_setting(const void *a, const void *b)
{
	const struct setting *x = a, *y = b;

	return strcmp(x->key, y->key);
}

/* Frees the values select_for_file() copied. */
static void settings_free_values(struct setting *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].value);
}

static bool in_initial_netns(const struct ht_facts *facts)
{
	const struct ht_fact *f = ht_facts_get(facts, "netns.initial");

	return !f || f->value.type != HT_T_BOOL || f->value.b;
}

static void settings_free(struct setting *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].value);
		free(s[i].current);
		free(s[i].full_key);
		if (s[i].limit) {
			ht_limit_fix_free(s[i].limit);
			free(s[i].limit);
		}
	}
	free(s);
}

static char *render(const char *tmpl, const char *profile, const char *ifname,
                    const char *settings)
{
	return render_match(tmpl, profile, ifname, NULL, NULL, settings);
}

/* The settings of one file, as the block that replaces @SETTINGS@. */
static int settings_block(const struct setting *s, size_t n, char **out)
{
	char *block = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct ht_rule *r = s[i].f->rule;
		const char *title = ht_rule_title(r);
		int ret;

		if (r->kind == HT_TARGET_LIMIT)
			ret = sbuf_add(&block, "%s# %s[%s]%s%s\n", i ? "\n\n" : "", r->id,
			               s[i].f->instance, title ? ": " : "", title ? title : "");
		else
			ret = sbuf_add(&block, "%s# %s%s%s\n", i ? "\n\n" : "", r->id,
			               title ? ": " : "", title ? title : "");
		if (ret < 0)
			goto oom;
		if (r->kind == HT_TARGET_SYSCTL)
			ret = sbuf_add(&block, "%s = %s", r->target, s[i].value);
		else if (r->kind == HT_TARGET_MODULE) {
			const char *mod = r->target + strlen("module.");
			const char *dot = strchr(mod, '.');

			ret = sbuf_add(&block, "options %.*s %s=%s", (int)(dot - mod), mod, dot + 1,
			               s[i].value);
		} else if (r->kind == HT_TARGET_LIMIT) {
			ret = sbuf_add(&block, "LimitNOFILE=%s", s[i].value);
		} else {
			const char *kind = r->target + strlen("nic.channels.");

			ret = sbuf_add(&block, "%s=%s",
			               strcmp(kind, "combined") == 0 ? "CombinedChannels" :
			               strcmp(kind, "rx") == 0 ? "RxChannels" : "TxChannels",
			               s[i].value);
		}
		if (ret < 0)
			goto oom;
	}
	*out = block;
	return 0;
oom:
	free(block);
	return -ENOMEM;
}

/* The file for the settings @s[0..n) (all for @path), or NULL content when n is 0. */
static int plan_settings_file(struct ht_plan *p, const char *root, const char *path,
                              const char *tmpl, const char *ifname, const char *match,
                              const char *note, const struct setting *s, size_t n,
                              struct ht_error *err)
{
	_cleanup_free_ char *block = NULL;
	char *content = NULL;
	int r;

	if (n > 0) {
		r = settings_block(s, n, &block);
		if (r < 0)
			return r;
		content = render_match(tmpl, p->profile, ifname, match, note, block);
		if (!content)
			return -ENOMEM;
	}
	return plan_file(p, root, path, content, err);
}

static int live_for(struct ht_plan *p, const struct setting *s, const char *root, bool live_root)
{
	const struct ht_rule *r = s->f->rule;
	struct ht_plan_live *l;

	if (s->current && strcmp(s->current, s->value) == 0)
		return 0;
	l = plan_add_live(p);
	if (!l)
		return -ENOMEM;
	l->key = strdup(s->key);
	l->new = strdup(s->value);
	l->old = s->current ? strdup(s->current) : NULL;
	if (!l->key || !l->new || (s->current && !l->old))
		return -ENOMEM;
	if (r->kind == HT_TARGET_CHANNELS) {
		l->kind = HT_LIVE_CHANNELS;
		l->ifname = strdup(s->f->instance);
		l->channel = strdup(r->target + strlen("nic.channels."));
		if (!l->ifname || !l->channel)
			return -ENOMEM;
		if (!live_root)
			l->note = strdup("not changed under --root: channels are set over netlink");
	} else {
		_cleanup_free_ char *path = NULL;

		l->kind = HT_LIVE_PATH;
		if (r->kind == HT_TARGET_SYSCTL) {
			path = strdup(r->target);
			if (!path)
				return -ENOMEM;
			for (char *c = path; *c; c++)
				if (*c == '.')
					*c = '/';
			if (asprintf(&l->path, "/proc/sys/%s", path) < 0)
				l->path = NULL;
		} else {
			const char *mod = r->target + strlen("module.");
			const char *dot = strchr(mod, '.');

			if (asprintf(&l->path, "/sys/module/%.*s/parameters/%s", (int)(dot - mod), mod,
			             dot + 1) < 0)
				l->path = NULL;
		}
		if (!l->path)
			return -ENOMEM;
	}
	if (!s->current && !l->note)
		l->note = strdup("does not exist now (module not loaded): applies at the next boot");
	(void)root;
	return 0;
}

/* Existing 90-hosttune-IF.link files, so that one no longer wanted is removed. */
static int old_link_files(const char *root, char ***names, size_t *n)
{
	_cleanup_free_ char *dir = ht_root_join(root, LINK_DIR);

	if (!dir)
		return -ENOMEM;
	return rules_list_dir(dir, ".link", names, n);
}

static int add_warning(struct ht_plan *p, const char *key, const char *source,
                       const char *fmt, ...) _printf_(4, 5);

static int add_warning(struct ht_plan *p, const char *key, const char *source,
                       const char *fmt, ...)
{
	struct ht_plan_warning *n = realloc(p->warnings, (p->nwarnings + 1) * sizeof(*n));
	va_list ap;
	int r;

	if (!n)
		return -ENOMEM;
	p->warnings = n;
	n = &n[p->nwarnings++];
	*n = (struct ht_plan_warning){ 0 };
	va_start(ap, fmt);
	r = vasprintf(&n->message, fmt, ap);
	va_end(ap);
	if (r < 0) {
		n->message = NULL;
		return -ENOMEM;
	}
	n->key = strdup(key);
	n->source = strdup(source);
	return n->key && n->source ? 0 : -ENOMEM;
}

/*
 * The settings @s[0..n) of hosttune's @ours (sysctl.d or modprobe.d) that a
 * file read later changes at boot. Both read their files in name order
 * across directories, the last value winning; a sysctl glob never overrides
 * a line naming the key. For a raise-only rule a later value at least as
 * high as hosttune's is no problem.
 */
static int override_warnings(struct ht_plan *p, const struct ht_conf *c, const char *ours,
                             const struct setting *s, size_t n)
{
	const char *ours_base = strrchr(ours, '/') + 1;
	bool modprobe = strcmp(ours, MODPROBE_PATH) == 0;

	for (size_t i = 0; i < n; i++) {
		const struct ht_rule *rule = s[i].f->rule;
		const char *key = modprobe ? rule->target + strlen("module.") : rule->target;
		const struct ht_conf_key *k = ht_conf_find(c, key);
		const struct ht_conf_assign *eff = k ? ht_conf_effective(k) : NULL;
		const char *base, *param = strchr(key, '.') + 1;
		_cleanup_free_ char *source = NULL;
		char *end;
		long long later;
		int r;

		if (!eff || strcmp(eff->file, ours) == 0 || eff->pattern)
			continue;
		base = strrchr(eff->file, '/') ? strrchr(eff->file, '/') + 1 : eff->file;
		/* An earlier name: hosttune's file is read after it and wins. */
		if (strcmp(base, ours_base) <= 0)
			continue;
		if (eff->value && ht_int_text_equal(eff->value, s[i].value))
			continue;
		if (eff->value && rule->only_raise) {
			errno = 0;
			later = strtoll(eff->value, &end, 0);
			if (!errno && end != eff->value && !*end &&
			    later >= strtoll(s[i].value, NULL, 10))
				continue;
		}
		if (asprintf(&source, "%s:%u", eff->file, eff->line) < 0) {
			source = NULL;
			return -ENOMEM;
		}
		if (modprobe)
			r = add_warning(p, rule->target, source, "options nf_conntrack %s=%s in %s will "
			                "not hold at the next load: %s:%u gives %s%s%s and is read "
			                "later (kmod reads modprobe.d in name order, the last value "
			                "wins); edit or remove that line", param, s[i].value, ours,
			                eff->file, eff->line, param, eff->value ? "=" : " without a value",
			                eff->value ? eff->value : "");
		else if (eff->value)
			r = add_warning(p, rule->target, source, "%s = %s in %s will not hold at boot: "
			                "%s:%u sets %s and is read later (systemd-sysctl reads sysctl.d "
			                "in name order, the last value wins); edit or remove that line",
			                key, s[i].value, ours, ht_conf_file_shown(eff->file), eff->line,
			                eff->value);
		else
			r = add_warning(p, rule->target, source, "%s = %s in %s will not hold at boot: "
			                "%s:%u ('-%s' without a value) makes systemd-sysctl leave the key "
			                "alone; remove that line", key, s[i].value, ours,
			                ht_conf_file_shown(eff->file), eff->line, key);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Settings of the plan's files that will not hold at boot (struct ht_plan_warning). */
static int plan_warnings(struct ht_plan *p, const char *root, const struct setting *sys,
                         size_t nsys, const struct setting *mod, size_t nmod,
                         const struct setting *all, size_t nall, bool builtin)
{
	struct ht_conf c = { 0 };
	int r;

	r = ht_sysctl_conf_read(root, &c);
	if (r >= 0)
		r = override_warnings(p, &c, SYSCTL_PATH, sys, nsys);
	ht_conf_free(&c);
	if (r >= 0)
		r = ht_modprobe_conf_read(root, &c);
	if (r >= 0)
		r = override_warnings(p, &c, MODPROBE_PATH, mod, nmod);
	ht_conf_free(&c);
	/* Built in: no file of hosttune's reaches nf_conntrack's parameters. */
	for (size_t i = 0; r >= 0 && builtin && i < nall; i++) {
		const struct setting *st = &all[i];
		const char *param;
		_cleanup_free_ char *cmd = NULL;

		if (!st->act || st->f->rule->kind != HT_TARGET_MODULE ||
		    strncmp(st->key, "module.nf_conntrack.", 20) != 0 || !wanted_in_file(st, NULL))
			continue;
		param = st->key + strlen("module.");
		cmd = ht_kcmdline_param(root, param);
		if (cmd && ht_int_text_equal(cmd, st->value))
			continue;
		if (cmd)
			r = add_warning(p, st->key, "kernel command line", "%s = %s will not hold at "
			                "boot: nf_conntrack is built into this kernel, so no modprobe.d "
			                "file reaches it, and the kernel command line gives %s=%s; change "
			                "it to %s=%s (GRUB_CMDLINE_LINUX in /etc/default/grub, then "
			                "update-grub)", st->key, st->value, param, cmd, param, st->value);
		else
			r = add_warning(p, st->key, "kernel command line", "%s = %s will not hold at "
			                "boot: nf_conntrack is built into this kernel, so no modprobe.d "
			                "file reaches it and hosttune writes none; add %s=%s to the kernel "
			                "command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then "
			                "update-grub)", st->key, st->value, param, st->value);
	}
	return r < 0 ? r : 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_skip(struct ht_plan *p, const char *instance, const char *target,
                    const char *message)
{
	struct ht_plan_skip *n = realloc(p->skipped, (p->nskipped + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	p->skipped = n;
	n = &n[p->nskipped++];
	*n = (struct ht_plan_skip){ 0 };
	if (asprintf(&n->key, "process.%s.%s", instance, target + strlen("process.")) < 0) {
		n->key = NULL;
		return -ENOMEM;
	}
	n->message = strdup(message);
	return n->message ? 0 : -ENOMEM;
}

static int add_restart(struct ht_plan *p, const char *unit)
{
	char **n;

	for (size_t i = 0; i < p->nrestart; i++)
		if (strcmp(p->restart[i], unit) == 0)
			return 0;
	n = realloc(p->restart, (p->nrestart + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	p->restart = n;
	n[p->nrestart] = strdup(unit);
	if (!n[p->nrestart])
		return -ENOMEM;
	p->nrestart++;
	return 0;
}

/* The soft limit of a "SOFT:HARD" (or "N") value, -1 when it is not one. */
static int64_t limit_soft(const char *value)
{
	uint64_t soft, hard;

	if (ht_rlimit_parse(value, &soft, &hard) < 0)
		return -1;
	return soft > INT64_MAX ? INT64_MAX : (int64_t)soft;
}

/*
 * A drop-in read after hosttune's that sets LimitNOFILE lower than @st's
 * value: systemd applies the drop-ins of all directories in file-name order
 * and the last assignment wins, so a later name (99-local.conf) in any of
 * them, service.d included, overrides 90-hosttune.conf, an earlier one does
 * not, and the same name elsewhere is hidden by /etc's.
 */
static int dropin_warning(struct ht_plan *p, const char *root, const struct setting *st)
{
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;
	uint64_t ours_soft, ours_hard;
	int r;

	if (ht_rlimit_parse(st->value, &ours_soft, &ours_hard) < 0)
		return 0;
	r = ht_unit_limits_read(root, st->limit->unit, &c);
	if (r < 0)
		return r == -ENOMEM ? r : 0;
	k = ht_conf_find(&c, "LimitNOFILE");
	for (size_t i = k ? k->n : 0; i-- > 0;) {
		const struct ht_conf_assign *a = &k->assigns[i];
		const char *slash = strrchr(a->file, '/');
		_cleanup_free_ char *source = NULL;
		uint64_t soft, hard;
		size_t dl = slash ? (size_t)(slash - a->file) : 0;

		/* Only drop-ins (a file in a NAME.d directory) come after hosttune's. */
		if (dl < 2 || strncmp(slash - 2, ".d", 2) != 0 ||
		    strcmp(slash + 1, HT_DROPIN_NAME) <= 0)
			break;
		if (ht_rlimit_parse(a->value, &soft, &hard) < 0)
			continue;
		if (soft >= ours_soft && hard >= ours_hard)
			break;
		if (asprintf(&source, "%s:%u", a->file, a->line) < 0) {
			ht_conf_free(&c);
			return -ENOMEM;
		}
		/* /run/systemd/system is a tmpfs: its drop-in is gone after a reboot. */
		if (strncmp(a->file, "/run/", 5) == 0) {
			r = add_warning(p, st->key, source, "LimitNOFILE=%s in %s is overridden now: "
			                "%s:%u sets LimitNOFILE=%s and is applied later; /run is "
			                "emptied at boot, so hosttune's value holds after the next "
			                "reboot, not at a restart before it; remove that file (or "
			                "its line) to have it sooner", st->value, st->limit->path,
			                a->file, a->line, a->value);
			if (r >= 0)
				p->warnings[p->nwarnings - 1].until_reboot = true;
			break;
		}
		r = add_warning(p, st->key, source, "LimitNOFILE=%s in %s will not hold: %s:%u "
		                "sets LimitNOFILE=%s and is applied later (systemd applies the "
		                "drop-ins of %s in file-name order across directories, the last "
		                "value wins); edit or remove that line", st->value, st->limit->path,
		                a->file, a->line, a->value, st->limit->unit);
		break;
	}
	ht_conf_free(&c);
	return r < 0 ? r : 0;
}

/*
 * The setting that decides @unit's drop-in among @s[0..n): one apply may
 * change (in --only and not kept) before one it may not, then the largest
 * soft limit (two processes of one service, or two rules for one process),
 * then the first.
 */
static size_t dropin_setting(const struct setting *s, size_t n, const char *unit)
{
	size_t best = n;

	for (size_t k = 0; k < n; k++) {
		if (!s[k].limit || strcmp(s[k].limit->unit, unit) != 0)
			continue;
		if (best == n || (s[k].act && !s[best].act) ||
		    (s[k].act == s[best].act && limit_soft(s[k].value) > limit_soft(s[best].value)))
			best = k;
	}
	return best;
}

/*
 * One drop-in per service for the limit settings of @s[0..n) (dropin_setting()
 * decides; the service's other processes and rules share its file), a
 * restart for each one that changes or whose process runs below it, and
 * hosttune's drop-ins of services no setting needs any more removed.
 */
static int plan_dropins(struct ht_plan *p, const char *root, const struct setting *s, size_t n,
                        struct ht_error *err)
{
	_cleanup_free_ char *dir = NULL;
	DIR *d;
	int r;

	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *old = NULL;
		const struct setting *st = &s[i];
		struct setting one;
		size_t n1 = 0, before = p->nfiles, nwarn = p->nwarnings;
		bool dup = false;

		if (!st->limit)
			continue;
		for (size_t k = 0; k < i && !dup; k++)
			dup = s[k].limit && strcmp(s[k].limit->unit, st->limit->unit) == 0;
		if (dup)
			continue;
		st = &s[dropin_setting(s, n, st->limit->unit)];
		if ((r = read_disk(p->no_disk, root, st->limit->path, &old, err)) < 0)
			return r;
		r = select_for_file(st, 1, old, &one, &n1);
		if (r < 0)
			return r;
		r = plan_settings_file(p, root, st->limit->path, ht_tmpl_nofile_dropin_conf,
		                       st->limit->unit, NULL, NULL, &one, n1, err);
		if (r >= 0 && n1 > 0 && !p->no_disk)
			r = dropin_warning(p, root, &one);
		/* A later drop-in overrides it: a restart would not give it (no restart line). */
		if (r >= 0 && p->nwarnings > nwarn)
			;
		else if (r >= 0 && p->nfiles > before && ht_plan_file_changes(&p->files[before]))
			r = add_restart(p, st->limit->unit);
		/*
		 * Written before, not restarted since: the process runs below the
		 * file, unless a later drop-in overrides it (a restart would not help).
		 */
		else if (r >= 0 && n1 > 0 && p->nwarnings == nwarn && st->f->current.type == HT_T_INT &&
		         st->f->current.i < limit_soft(one.value))
			r = add_restart(p, st->limit->unit);
		if (n1)
			free(one.value);
		if (r < 0)
			return r;
	}
	if (p->no_disk)
		return 0;
	dir = ht_root_join(root, HT_UNIT_DIR);
	if (!dir)
		return -ENOMEM;
	d = opendir(dir);
	if (!d)
		return 0;
	r = 0;
	for (struct dirent *de; r >= 0 && (de = readdir(d));) {
		_cleanup_free_ char *unit = NULL, *path = NULL;
		size_t l = strlen(de->d_name), before = p->nfiles;
		bool planned = false;

		if (l <= 2 || strcmp(de->d_name + l - 2, ".d") != 0)
			continue;
		unit = strndup(de->d_name, l - 2);
		if (!unit) {
			r = -ENOMEM;
			break;
		}
		if (!ht_unit_name_valid(unit))
			continue;
		if (asprintf(&path, HT_UNIT_DIR "/%s/" HT_DROPIN_NAME, de->d_name) < 0) {
			path = NULL;
			r = -ENOMEM;
			break;
		}
		for (size_t k = 0; k < p->nfiles; k++)
			planned = planned || strcmp(p->files[k].path, path) == 0;
		if (planned)
			continue;
		r = plan_file(p, root, path, NULL, err);
		if (r >= 0 && p->nfiles > before)
			r = add_restart(p, unit);
	}
	closedir(d);
	return r;
}

int ht_plan_build(const struct ht_findings *findings, const struct ht_facts *facts,
                  const char *root, const char *profile, const char *only, unsigned flags,
                  struct ht_plan *out, struct ht_error *err)
{
	struct ht_plan p = { 0 };
	struct setting *s = NULL;
	size_t ns = 0, nsys = 0, nmod = 0;
	_cleanup_free_ char *old_sysctl = NULL, *old_modprobe = NULL;
	char **links = NULL;
	size_t nlinks = 0;
	bool need_module = false;
	bool live_root = !root || !*root || strspn(root, "/") == strlen(root);
	const char *state = fact_string(facts, "conntrack.module");
	bool builtin = state && strcmp(state, "builtin") == 0, nf_keys = false;
	int r;

	err->msg[0] = '\0';
	p.no_disk = flags & HT_PLAN_NO_DISK;
	{
		const struct ht_fact *d = ht_facts_get(facts, "conntrack.stat.drop");
		const struct ht_fact *e = ht_facts_get(facts, "conntrack.stat.early_drop");

		p.ct_drop = d && d->value.type == HT_T_INT ? d->value.i : -1;
		p.ct_early_drop = e && e->value.type == HT_T_INT ? e->value.i : -1;
		if (!p.no_disk && ht_read_file(root, "/proc/sys/kernel/random/boot_id", &p.boot_id) < 0)
			p.boot_id = NULL;
	}
	r = check_only(findings, only, err);
	if (r < 0)
		return r;
	p.profile = strdup(profile ? profile : "default");
	s = calloc(findings->n + 1, sizeof(*s));
	if (!p.profile || !s) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = read_disk(p.no_disk, root, SYSCTL_PATH, &old_sysctl, err)) < 0 ||
	    (r = read_disk(p.no_disk, root, MODPROBE_PATH, &old_modprobe, err)) < 0)
		goto out;

	for (size_t i = 0; i < findings->n; i++) {
		const struct ht_finding *f = &findings->items[i];
		const struct ht_rule *rule = f->rule;
		struct setting *st = &s[ns];

		if (!f->applicable || f->read_only || f->recommended.type != HT_T_INT ||
		    (rule->kind != HT_TARGET_SYSCTL && rule->kind != HT_TARGET_MODULE &&
		     rule->kind != HT_TARGET_CHANNELS && rule->kind != HT_TARGET_LIMIT))
			continue;
		if (rule->kind == HT_TARGET_LIMIT) {
			_cleanup_free_ char *why = NULL;

			st->limit = calloc(1, sizeof(*st->limit));
			if (!st->limit) {
				r = -ENOMEM;
				goto out;
			}
			r = ht_limit_fix(f, facts, st->limit, &why);
			if (r == -ENOMEM) {
				free(TAKE_PTR(st->limit));
				goto out;
			}
			if (r < 0) {
				free(TAKE_PTR(st->limit));
				/* Only a finding that asks for a change is worth a line. */
				if (in_only(only, rule->id) && !f->kept && f->severity != HT_SEV_OK &&
				    (r = add_skip(&p, f->instance, rule->target, why)) < 0)
					goto out;
				continue;
			}
			if (!p.no_disk && (r = ht_limit_fix_configured(st->limit, root)) < 0)
				goto out;
			if (st->limit->enough && in_only(only, rule->id) && !f->kept) {
				/*
				 * The unit already gives at least the recommendation:
				 * no drop-in (an old one of hosttune's is removed), a
				 * restart when the process runs below it. Outside
				 * --only, hosttune's file stays as it is (below).
				 */
				if (f->current.type == HT_T_INT && f->current.i < st->limit->configured) {
					_cleanup_free_ char *msg = NULL;

					if (asprintf(&msg, "%s already gives %" PRId64 " from %s: restart "
					             "%s to take it", st->limit->unit,
					             st->limit->configured, st->limit->source,
					             st->limit->unit) < 0) {
						msg = NULL;
						r = -ENOMEM;
					} else
						r = add_skip(&p, f->instance, rule->target, msg);
					if (r >= 0)
						r = add_restart(&p, st->limit->unit);
				}
				ht_limit_fix_free(st->limit);
				free(TAKE_PTR(st->limit));
				if (r < 0)
					goto out;
				continue;
			}
			st->f = f;
			st->act = in_only(only, rule->id) && !f->kept;
			st->value = strdup(st->limit->value);
			if (f->current.type != HT_T_NONE)
				st->current = ht_value_display(&f->current);
			if (asprintf(&st->full_key, "process.%s.%s", f->instance,
			             rule->target + strlen("process.")) < 0)
				st->full_key = NULL;
			st->key = st->full_key;
			ns++;
			if (!st->value || !st->key || (f->current.type != HT_T_NONE && !st->current)) {
				r = -ENOMEM;
				goto out;
			}
			continue;
		}
		st->f = f;
		st->act = in_only(only, rule->id) && !f->kept;
		st->value = ht_value_display(&f->recommended);
		if (f->current.type != HT_T_NONE && !f->no_live)
			st->current = ht_value_display(&f->current);
		if (rule->kind == HT_TARGET_CHANNELS) {
			if (asprintf(&st->full_key, "nic.%s.%s", f->instance,
			             rule->target + strlen("nic.")) < 0)
				st->full_key = NULL;
			st->key = st->full_key;
		} else
			st->key = rule->target;
		if (!st->value || !st->key ||
		    (f->current.type != HT_T_NONE && !f->no_live && !st->current)) {
			ns++;
			r = -ENOMEM;
			goto out;
		}
		ns++;
	}
	qsort(s, ns, sizeof(*s), cmp_setting);

	/* Live values first in the plan's order: sorted by key. */
	if (flags & HT_PLAN_LIVE)
		for (size_t i = 0; i < ns; i++)
			if (s[i].act && s[i].f->rule->kind != HT_TARGET_LIMIT &&
			    (r = live_for(&p, &s[i], root, live_root)) < 0)
				goto out;

	if (flags & HT_PLAN_PERSIST) {
		struct setting *sys = calloc(ns + 1, sizeof(*sys)), *mod = calloc(ns + 1, sizeof(*mod));

		if (!sys || !mod) {
			free(sys);
			free(mod);
			r = -ENOMEM;
			goto out;
		}
		{
			struct setting *bysys = calloc(ns + 1, sizeof(*bysys));
			struct setting *bymod = calloc(ns + 1, sizeof(*bymod));
			size_t a = 0, b = 0;

			if (!bysys || !bymod) {
				free(bysys);
				free(bymod);
				free(sys);
				free(mod);
				r = -ENOMEM;
				goto out;
			}
			for (size_t i = 0; i < ns; i++) {
				const char *path = setting_path(s[i].f);

				if (path && strcmp(path, SYSCTL_PATH) == 0)
					bysys[a++] = s[i];
				/* modprobe.d options never reach a built-in module (hashsize needs
				 * the kernel command line then: the finding says so). */
				else if (path && strcmp(path, MODPROBE_PATH) == 0 &&
				         !(builtin && strncmp(s[i].key, "module.nf_conntrack.", 20) == 0))
					bymod[b++] = s[i];
			}
			r = select_for_file(bysys, a, old_sysctl, sys, &nsys);
			if (r >= 0)
				r = select_for_file(bymod, b, old_modprobe, mod, &nmod);
			free(bysys);
			free(bymod);
			if (r < 0) {
				settings_free_values(sys, nsys);
				settings_free_values(mod, nmod);
				free(sys);
				free(mod);
				goto out;
			}
		}
		for (size_t i = 0; i < nsys; i++)
			if (strncmp(sys[i].key, "net.netfilter.nf_conntrack", 26) == 0)
				need_module = true;
		for (size_t i = 0; i < nmod; i++)
			if (strncmp(mod[i].key, "module.nf_conntrack.", 20) == 0)
				need_module = true;
		/* Built in, nf_conntrack's keys exist before systemd-sysctl runs. */
		if (builtin)
			need_module = false;

		/* In a container, nf_conntrack is the host's business: no modules-load.d. */
		if (!in_initial_netns(facts))
			need_module = false;
		for (size_t i = 0; i < nsys; i++)
			if (strncmp(sys[i].key, "net.netfilter.nf_conntrack", 26) == 0)
				nf_keys = true;
		/* The header names only files this plan writes. */
		r = plan_settings_file(&p, root, SYSCTL_PATH, ht_tmpl_sysctl_conf, NULL, NULL,
		                       need_module ? " The net.netfilter\n# keys apply at boot "
		                       "because " MODULES_LOAD_PATH " loads\n# nf_conntrack "
		                       "before systemd-sysctl runs." :
		                       nf_keys && builtin ? " nf_conntrack is\n# built into this "
		                       "kernel: its net.netfilter keys exist when\n# "
		                       "systemd-sysctl runs." : NULL, sys, nsys, err);
		if (r >= 0)
			r = plan_settings_file(&p, root, MODPROBE_PATH, ht_tmpl_modprobe_conf, NULL, NULL,
			                       NULL, mod, nmod, err);
		if (r >= 0 && !p.no_disk)
			r = plan_warnings(&p, root, sys, nsys, mod, nmod, s, ns, builtin);
		settings_free_values(sys, nsys);
		settings_free_values(mod, nmod);
		free(sys);
		free(mod);
		if (r < 0)
			goto out;
		{
			char *content = NULL;

			if (need_module && !(content = render(ht_tmpl_modules_load_conf, p.profile, NULL,
			                                      "nf_conntrack")))
				r = -ENOMEM;
			else
				r = plan_file(&p, root, MODULES_LOAD_PATH, content, err);
			if (r < 0)
				goto out;
		}

		/* One .link file per interface with channel settings. */
		for (size_t i = 0; i < ns; i++) {
			_cleanup_free_ char *path = NULL, *old = NULL;
			const struct ht_finding *f = s[i].f;
			struct setting one;
			size_t n1 = 0;

			if (f->rule->kind != HT_TARGET_CHANNELS)
				continue;
			if (asprintf(&path, LINK_DIR "/" LINK_PREFIX "%s.link", f->instance) < 0) {
				path = NULL;
				r = -ENOMEM;
				goto out;
			}
			if ((r = read_disk(p.no_disk, root, path, &old, err)) < 0)
				goto out;
			r = select_for_file(&s[i], 1, old, &one, &n1);
			if (r < 0)
				goto out;
			if (n1 == 0)
				continue;
			{
				_cleanup_free_ char *match = NULL, *mac_name = NULL;
				const char *mac;

				if (asprintf(&mac_name, "nic.%s.mac", f->instance) < 0)
					mac_name = NULL;
				mac = mac_name ? fact_string(facts, mac_name) : NULL;
				if (asprintf(&match, mac ? "MACAddress=%s" : "OriginalName=%s",
				             mac ? mac : f->instance) < 0) {
					match = NULL;
					free(one.value);
					r = -ENOMEM;
					goto out;
				}
				r = plan_settings_file(&p, root, path, ht_tmpl_channels_link, f->instance,
				                       match, NULL, &one, 1, err);
			}
			free(one.value);
			if (r < 0)
				goto out;
		}
		/* hosttune's .link files for interfaces that no longer need one go away. */
		r = p.no_disk ? 0 : old_link_files(root, &links, &nlinks);
		if (r < 0)
			goto out;
		for (size_t i = 0; i < nlinks; i++) {
			_cleanup_free_ char *path = NULL;
			bool planned = false;

			if (strncmp(links[i], LINK_PREFIX, strlen(LINK_PREFIX)) != 0)
				continue;
			if (asprintf(&path, LINK_DIR "/%s", links[i]) < 0) {
				path = NULL;
				r = -ENOMEM;
				goto out;
			}
			for (size_t k = 0; k < p.nfiles; k++)
				planned = planned || strcmp(p.files[k].path, path) == 0;
			if (!planned && (r = plan_file(&p, root, path, NULL, err)) < 0)
				goto out;
		}
		r = plan_dropins(&p, root, s, ns, err);
		if (r < 0)
			goto out;
	}
	if (p.nrestart) /* qsort() of a NULL array is undefined, even of none */
		qsort(p.restart, p.nrestart, sizeof(*p.restart), cmp_str);
	r = 0;
out:
	for (size_t i = 0; i < nlinks; i++)
		free(links[i]);
	free(links);
	settings_free(s, ns);
	if (r < 0) {
		ht_plan_free(&p);
		return r;
	}
	*out = p;
	return 0;
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
	free(p->boot_id);
	free(p->profile);
	memset(p, 0, sizeof(*p));
}

bool ht_plan_file_changes(const struct ht_plan_file *f)
{
	if (!f->old || !f->new)
		return f->old != f->new;
	return strcmp(f->old, f->new) != 0;
}

bool ht_plan_live_changes(const struct ht_plan_live *l)
{
	return !l->note;
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

int ht_plan_print(const struct ht_plan *p, FILE *out)
{
	size_t w = 3;
	bool any_live = false;
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
		any_live = true;
	}
	if (any_live) {
		fprintf(out, "\nLive changes:\n%-*s  %-10s  %-10s  %s\n", (int)w, "KEY", "NOW", "NEW",
		        "NOTE");
		for (size_t i = 0; i < p->nlive; i++) {
			const struct ht_plan_live *l = &p->live[i];

			if (l->note)
				fprintf(out, "%-*s  %-10s  %-10s  %s\n", (int)w, l->key,
				        l->old ? l->old : "-", l->new, l->note);
			else
				fprintf(out, "%-*s  %-10s  %s\n", (int)w, l->key, l->old ? l->old : "-",
				        l->new);
		}
	}
	if (ht_plan_empty(p))
		fprintf(out, "No changes: the files and live values already match the plan.\n");
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
		json_object_array_add(live, e);
	}
	json_object_object_add(o, "files", files);
	json_object_object_add(o, "live", live);
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
			json_object_array_add(sk, e);
		}
		json_object_object_add(o, "restart", rs);
		json_object_object_add(o, "skipped", sk);
	}
	return o;
}

