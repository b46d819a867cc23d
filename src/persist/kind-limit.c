/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The unit limit kind (persist/kind.h): a target "limit nofile" of a
 * process (process.nofile), persisted as LimitNOFILE=SOFT:HARD in a drop-in
 * of hosttune's for the process's systemd service,
 * /etc/systemd/system/UNIT.d/90-hosttune.conf. No live write: the process
 * takes the limit when the service starts again, so the plan names the
 * services to restart. What the unit's own files give (ht_unit_limits_read())
 * is never lowered, and when it is enough hosttune writes nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/facts.h"
#include "engine/fix.h"
#include "engine/rules.h"
#include "shared/bootconf.h"
#include "shared/rootfs.h"
#include "persist/kind.h"
#include "persist/persist-internal.h"
#include "persist/templates.h"

/* A service's drop-in: UNIT_DIR "/" UNIT ".d/" DROPIN_NAME. */
#define UNIT_DIR "/etc/systemd/system"
#define DROPIN_NAME "90-hosttune.conf"
#define TARGET_PREFIX "process."

static const char *const limit_dirs[] = { UNIT_DIR, NULL };

/* True when @path is UNIT_DIR/UNIT@rest (@rest ".d" or ".d/" DROPIN_NAME) for a valid UNIT. */
static bool unit_path(const char *path, const char *rest)
{
	size_t ul = strlen(UNIT_DIR "/"), rl = strlen(rest), n = strlen(path);
	_cleanup_free_ char *unit = NULL;

	if (n <= ul + rl || strncmp(path, UNIT_DIR "/", ul) != 0 ||
	    strcmp(path + n - rl, rest) != 0)
		return false;
	unit = strndup(path + ul, n - ul - rl);
	return unit && ht_unit_name_valid(unit);
}

static bool limit_managed_file(const char *path)
{
	return unit_path(path, ".d/" DROPIN_NAME);
}

static bool limit_instance_dir(const char *dir)
{
	return unit_path(dir, ".d");
}

/* The drop-in: "[Service]" and "LimitNOFILE=SOFT[:HARD]", HARD a number or infinity; nothing else. */
static bool limit_file_line_ok(const char *path _unused_, const char *line)
{
	_cleanup_free_ char *v = NULL;
	char *colon;

	if (ht_template_line(ht_tmpl_nofile_dropin_conf, line))
		return true;
	if (strncmp(line, "LimitNOFILE=", 12) != 0 || !(v = strdup(line + 12)))
		return false;
	colon = strchr(v, ':');
	if (colon)
		*colon++ = '\0';
	return ht_int_text(v, false) && (!colon || strcmp(colon, "infinity") == 0 ||
	                                 ht_int_text(colon, false));
}

static char *limit_line(const char *target, const char *value)
{
	char *s;

	return asprintf(&s, "LimitNOFILE=%s", value) < 0 ? NULL : s;
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
	const struct ht_fact *u, *h, *n;

	*out = (struct ht_limit_fix){ .configured = -1 };
	*why = NULL;
	if (ht_rule_kind(f->rule) != HT_TARGET_LIMIT || !f->instance ||
	    f->recommended.type != HT_T_INT)
		return -EINVAL;
	if (!(uname = ht_finding_fact(f, "process", "unit")) ||
	    !(hname = ht_finding_fact(f, "process", "nofile_hard")))
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
	/* No RLIMIT_NOFILE above fs.nr_open can be set (EPERM: kernel/sys.c,
	 * fs/file.c): a hard limit above it (fs.nr_open lowered since the
	 * process started) is written as fs.nr_open, never below the soft. */
	n = ht_facts_get(facts, "fs.nr_open");
	if (n && n->value.type == HT_T_INT && out->hard > n->value.i)
		out->hard = n->value.i > out->soft ? n->value.i : out->soft;
	out->unit = strdup(u->value.s);
	if (!out->unit)
		return -ENOMEM;
	if (asprintf(&out->path, UNIT_DIR "/%s.d/" DROPIN_NAME, out->unit) < 0) {
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

/* A limit's value is "SOFT:HARD", its current value the soft limit alone. */
static bool limit_wanted(const struct ht_setting *s, const char *file_val)
{
	const struct ht_finding *f = s->f;

	return f->severity != HT_SEV_OK || file_val || f->current.type != HT_T_INT ||
	       f->current.i < s->limit->soft;
}

/*
 * The unit already gives at least the recommendation (@s->limit->enough)
 * and apply may change the finding: no drop-in (an old one of hosttune's is
 * removed), a restart when the process runs below it. Returns 0 or -ENOMEM.
 */
static int limit_enough(struct ht_plan_ctx *c, const struct ht_finding *f,
                        const struct ht_limit_fix *l)
{
	_cleanup_free_ char *msg = NULL;
	int r;

	if (f->current.type != HT_T_INT || f->current.i >= l->configured)
		return 0;
	if (asprintf(&msg, "%s already gives %" PRId64 " from %s: restart %s to take it", l->unit,
	             l->configured, l->source, l->unit) < 0)
		return -ENOMEM;
	r = ht_plan_skip(c->p, f, ht_rule_target(f->rule), msg);
	if (r < 0)
		return r;
	c->p->skipped[c->p->nskipped - 1].satisfied = true;
	return ht_plan_restart(c->p, l->unit);
}

static int limit_setting(struct ht_plan_ctx *c, const struct ht_finding *f, struct ht_setting *s)
{
	_cleanup_free_ char *why = NULL, *full_key = NULL;
	const char *target = ht_rule_target(f->rule);
	int r;

	s->limit = calloc(1, sizeof(*s->limit));
	if (!s->limit)
		return -ENOMEM;
	r = ht_limit_fix(f, c->facts, s->limit, &why);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		/* Only a finding that asks for a change is worth a line. */
		if (s->act && f->severity != HT_SEV_OK)
			return ht_plan_skip(c->p, f, target, why);
		return 0;
	}
	if (!c->no_disk && (r = ht_limit_fix_configured(s->limit, c->root)) < 0)
		return r;
	/* Outside --only, hosttune's file stays as it is (limit_files()). */
	if (s->limit->enough && s->act)
		return limit_enough(c, f, s->limit);
	full_key = ht_finding_fact(f, "process", target + strlen(TARGET_PREFIX));
	s->key = s->full_key = TAKE_PTR(full_key);
	s->value = strdup(s->limit->value);
	if (f->current.type != HT_T_NONE)
		s->current = ht_value_display(&f->current);
	return s->value && s->key && (f->current.type == HT_T_NONE || s->current) ? 1 : -ENOMEM;
}

static int limit_fix(const struct ht_plan_ctx *c, const struct ht_finding *f, struct ht_fix *fix)
{
	struct ht_limit_fix lf;
	_cleanup_free_ char *why = NULL, *line = NULL;
	char given[32];
	int r;

	/* Only a fix that raises the soft limit: an ok finding needs none. */
	if (f->severity == HT_SEV_OK)
		return 0;
	r = ht_limit_fix(f, c->facts, &lf, &why);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		/* Refused: no drop-in to promise, the reason instead. */
		fix->kind = why ? HT_FIX_NONE_HERE : HT_FIX_NONE;
		fix->reason = TAKE_PTR(why);
		return 0;
	}
	if (!c->no_disk && (r = ht_limit_fix_configured(&lf, c->root)) < 0) {
		ht_limit_fix_free(&lf);
		return r;
	}
	fix->restart = TAKE_PTR(lf.unit);
	if (lf.enough) {
		fix->kind = HT_FIX_UNIT_GIVES;
		fix->source = TAKE_PTR(lf.source);
		fix->given = lf.configured;
		snprintf(given, sizeof(given), "%" PRId64, lf.configured);
		fix->line = limit_line(ht_rule_target(f->rule), given);
	} else {
		fix->kind = HT_FIX_DROPIN;
		fix->file = TAKE_PTR(lf.path);
		line = limit_line(ht_rule_target(f->rule), lf.value);
		if (line && asprintf(&fix->line, "[Service] %s", line) < 0)
			fix->line = NULL;
	}
	ht_limit_fix_free(&lf);
	return fix->restart && fix->line ? 0 : -ENOMEM;
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
static int dropin_warning(struct ht_plan *p, const char *root, const struct ht_setting *st)
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
		    strcmp(slash + 1, DROPIN_NAME) <= 0)
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
			r = ht_plan_warn(p, st->key, source, "LimitNOFILE=%s in %s is overridden "
			                 "now: %s:%u sets LimitNOFILE=%s and is applied later; /run "
			                 "is emptied at boot, so hosttune's value holds after the "
			                 "next reboot, not at a restart before it; remove that file "
			                 "(or its line) to have it sooner", st->value,
			                 st->limit->path, a->file, a->line, a->value);
			if (r >= 0)
				p->warnings[p->nwarnings - 1].until_reboot = true;
			break;
		}
		r = ht_plan_warn(p, st->key, source, "LimitNOFILE=%s in %s will not hold: %s:%u "
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
static size_t dropin_setting(const struct ht_setting *s, size_t n, const char *unit)
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
 * The drop-in of the service of @s[i] (dropin_setting() decides; the
 * service's other processes and rules share its file), a restart when it
 * changes or its process runs below it, unless a later drop-in overrides it
 * (a warning: a restart would not give it).
 */
static int dropin_file(struct ht_plan_ctx *c, const struct ht_setting *s, size_t n, size_t i)
{
	_cleanup_free_ char *old = NULL;
	struct ht_plan *p = c->p;
	const struct ht_setting *st = &s[dropin_setting(s, n, s[i].limit->unit)];
	struct ht_setting one;
	size_t n1 = 0, before = p->nfiles, nwarn = p->nwarnings;
	int r;

	if ((r = ht_plan_read(c, st->limit->path, &old)) < 0)
		return r;
	r = ht_plan_select(st, 1, old, &one, &n1);
	if (r < 0)
		return r;
	r = ht_plan_settings_file(c, st->limit->path, ht_tmpl_nofile_dropin_conf, st->limit->unit,
	                          NULL, NULL, &one, n1);
	if (r >= 0 && n1 > 0 && !c->no_disk)
		r = dropin_warning(p, c->root, &one);
	/* A later drop-in overrides it: a restart would not give it (no restart line). */
	if (r >= 0 && p->nwarnings > nwarn)
		;
	else if (r >= 0 && p->nfiles > before && ht_plan_file_changes(&p->files[before]))
		r = ht_plan_restart(p, st->limit->unit);
	/* Written before, not restarted since: the process runs below the file. */
	else if (r >= 0 && n1 > 0 && st->f->current.type == HT_T_INT &&
	         st->f->current.i < limit_soft(one.value))
		r = ht_plan_restart(p, st->limit->unit);
	if (n1)
		free(one.value);
	return r;
}

/* hosttune's drop-ins of services no setting needs any more: removed, and a restart each. */
static int stale_dropins(struct ht_plan_ctx *c)
{
	DIR *d;
	int r = 0;

	d = ht_root_opendir(c->root, UNIT_DIR);
	if (!d)
		return 0;
	for (struct dirent *de; r >= 0 && (de = readdir(d));) {
		_cleanup_free_ char *unit = NULL, *path = NULL;
		size_t l = strlen(de->d_name), before = c->p->nfiles;

		if (l <= 2 || strcmp(de->d_name + l - 2, ".d") != 0)
			continue;
		unit = strndup(de->d_name, l - 2);
		if (!unit) {
			r = -ENOMEM;
			break;
		}
		if (!ht_unit_name_valid(unit))
			continue;
		if (asprintf(&path, UNIT_DIR "/%s/" DROPIN_NAME, de->d_name) < 0) {
			path = NULL;
			r = -ENOMEM;
			break;
		}
		r = ht_plan_drop_file(c, path);
		if (r >= 0 && c->p->nfiles > before)
			r = ht_plan_restart(c->p, unit);
	}
	closedir(d);
	return r;
}

/* One drop-in per service for the limit settings of @all[0..n), then the stale ones. */
static int limit_files(struct ht_plan_ctx *c, const struct ht_setting *all, size_t n,
                       const struct ht_setting *chosen, size_t nchosen)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < n; i++) {
		bool dup = false;

		if (!all[i].limit)
			continue;
		for (size_t k = 0; k < i && !dup; k++)
			dup = all[k].limit && strcmp(all[k].limit->unit, all[i].limit->unit) == 0;
		if (!dup)
			r = dropin_file(c, all, n, i);
	}
	if (r < 0 || c->no_disk)
		return r;
	return stale_dropins(c);
}

const struct ht_kind ht_kind_limit = {
	.target = HT_TARGET_LIMIT,
	.dirs = limit_dirs,
	.dir_per_instance = true,
	.instance_dir = limit_instance_dir,
	.managed_file = limit_managed_file,
	.file_line_ok = limit_file_line_ok,
	.line = limit_line,
	.comment_instance = true,
	.wanted = limit_wanted,
	.files = limit_files,
	.setting = limit_setting,
	.fix = limit_fix,
};
