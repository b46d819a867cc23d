/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every target kind builds its part of a plan with (persist/kind.h):
 * settings, hosttune's files rendered from their templates, warnings,
 * restarts and skipped findings. Calls nothing of the kinds.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/facts.h"
#include "engine/rules.h"
#include "shared/bootconf.h"
#include "shared/fsutil.h"
#include "persist/kind.h"
#include "persist/persist.h"
#include "persist/persist-internal.h"

bool ht_has_header(const char *content)
{
	return content && strncmp(content, HT_FILE_HEADER, strlen(HT_FILE_HEADER)) == 0;
}

char *ht_root_join(const char *root, const char *path)
{
	return ht_root_path(root, path);
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

const char *ht_fact_string(const struct ht_facts *facts, const char *name)
{
	const struct ht_fact *f = ht_facts_get(facts, name);

	return f && f->value.type == HT_T_STR ? f->value.s : NULL;
}

int ht_setting_init(struct ht_setting *s, const struct ht_finding *f, const char *key,
                    char *full_key, bool live_only)
{
	bool cur = f->current.type != HT_T_NONE && !(live_only && f->no_live);

	s->full_key = full_key;
	s->key = full_key ? full_key : key;
	s->value = ht_value_display(&f->recommended);
	if (cur)
		s->current = ht_value_display(&f->current);
	return s->key && s->value && (!cur || s->current) ? 1 : -ENOMEM;
}

bool ht_setting_wanted(const struct ht_setting *s, const char *file_val)
{
	const struct ht_finding *f = s->f;

	if (s->kind->wanted)
		return s->kind->wanted(s, file_val);
	if (!s->current || strcmp(s->current, s->value) != 0)
		return true;
	if (f->severity != HT_SEV_OK || file_val)
		return true;
	return f->kernel_default.type == HT_T_INT && f->recommended.type == HT_T_INT &&
	       f->kernel_default.i != f->recommended.i;
}

char *ht_file_value(const char *content, const struct ht_setting *s)
{
	_cleanup_free_ char *prefix = NULL, *needle = NULL;
	const char *at, *v;

	if (!content || !ht_has_header(content))
		return NULL;
	prefix = s->kind->line(ht_rule_target(s->f->rule), "");
	if (!prefix || asprintf(&needle, "\n%s", prefix) < 0)
		return NULL;
	at = strstr(content, needle);
	if (!at)
		return NULL;
	v = at + strlen(needle);
	return strndup(v, strcspn(v, "\n"));
}

int ht_plan_select(const struct ht_setting *s, size_t n, const char *old, struct ht_setting *out,
                   size_t *nout)
{
	*nout = 0;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *fv = ht_file_value(old, &s[i]);
		struct ht_setting *o = &out[*nout];

		if (s[i].act ? !ht_setting_wanted(&s[i], fv) : !fv)
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

void ht_settings_free_values(struct ht_setting *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].value);
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
 * Fills @tmpl's @PROFILE@, @IFNAME@ and @UNIT@ (@ifname), @MATCH@ (a .link
 * [Match] line), @BOOT_NOTE@ (@note, NULL: nothing) and @SETTINGS@ (a block
 * without a final newline).
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

char *ht_plan_render(const char *tmpl, const char *profile, const char *settings)
{
	return render_match(tmpl, profile, NULL, NULL, NULL, settings);
}

/* The settings of one file, as the block that replaces @SETTINGS@. */
static int settings_block(const struct ht_setting *s, size_t n, char **out)
{
	char *block = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct ht_rule *r = s[i].f->rule;
		const char *title = ht_rule_title(r);
		_cleanup_free_ char *line = NULL;
		int ret;

		if (s[i].kind->comment_instance)
			ret = sbuf_add(&block, "%s# %s[%s]%s%s\n", i ? "\n\n" : "", ht_rule_id(r),
			               s[i].f->instance, title ? ": " : "", title ? title : "");
		else
			ret = sbuf_add(&block, "%s# %s%s%s\n", i ? "\n\n" : "", ht_rule_id(r),
			               title ? ": " : "", title ? title : "");
		if (ret < 0)
			goto oom;
		line = s[i].kind->line(ht_rule_target(r), s[i].value);
		if (!line || sbuf_add(&block, "%s", line) < 0)
			goto oom;
	}
	*out = block;
	return 0;
oom:
	free(block);
	return -ENOMEM;
}

int ht_plan_read(const struct ht_plan_ctx *c, const char *path, char **out)
{
	*out = NULL;
	if (c->no_disk)
		return 0;
	/* Resolved as apply writes: below --root no symlink in any component. */
	return ht_file_read_at(c->root, path, out, NULL, c->err);
}

int ht_plan_add_file(struct ht_plan_ctx *c, const char *path, char *new_content)
{
	_cleanup_free_ char *old = NULL;
	struct ht_plan *p = c->p;
	struct ht_plan_file *f;
	int r;

	r = ht_plan_read(c, path, &old);
	if (r < 0) {
		free(new_content);
		return r;
	}
	if (!new_content && (!old || !ht_has_header(old)))
		return 0;
	f = realloc(p->files, (p->nfiles + 1) * sizeof(*f));
	if (!f) {
		free(new_content);
		return -ENOMEM;
	}
	p->files = f;
	f = &p->files[p->nfiles++];
	*f = (struct ht_plan_file){ .path = strdup(path), .new = new_content };
	f->foreign = old && !ht_has_header(old);
	f->old = TAKE_PTR(old);
	return f->path ? 0 : -ENOMEM;
}

int ht_plan_drop_file(struct ht_plan_ctx *c, const char *path)
{
	for (size_t k = 0; k < c->p->nfiles; k++)
		if (strcmp(c->p->files[k].path, path) == 0)
			return 0;
	return ht_plan_add_file(c, path, NULL);
}

int ht_plan_settings_file(struct ht_plan_ctx *c, const char *path, const char *tmpl,
                          const char *ifname, const char *match, const char *note,
                          const struct ht_setting *s, size_t n)
{
	_cleanup_free_ char *block = NULL;
	char *content = NULL;
	int r;

	if (n > 0) {
		r = settings_block(s, n, &block);
		if (r < 0)
			return r;
		content = render_match(tmpl, c->p->profile, ifname, match, note, block);
		if (!content)
			return -ENOMEM;
	}
	return ht_plan_add_file(c, path, content);
}

int ht_plan_warn(struct ht_plan *p, const char *key, const char *source, const char *fmt, ...)
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

int ht_plan_restart(struct ht_plan *p, const char *unit)
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

int ht_plan_skip_key(struct ht_plan *p, const char *key, const char *message)
{
	struct ht_plan_skip *n = realloc(p->skipped, (p->nskipped + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	p->skipped = n;
	n = &n[p->nskipped++];
	*n = (struct ht_plan_skip){ .key = strdup(key), .message = strdup(message) };
	return n->key && n->message ? 0 : -ENOMEM;
}

int ht_plan_skip(struct ht_plan *p, const struct ht_finding *f, const char *target,
                 const char *message)
{
	_cleanup_free_ char *key = ht_finding_fact(f, "process", target + strlen("process."));

	if (!key)
		return -ENOMEM;
	return ht_plan_skip_key(p, key, message);
}

const struct ht_conf_assign *ht_boot_override(const struct ht_conf *conf, const char *key,
                                              const char *ours, const char *value,
                                              bool only_raise)
{
	const struct ht_conf_key *k = ht_conf_find(conf, key);
	const struct ht_conf_assign *eff = k ? ht_conf_effective(k) : NULL;
	const char *base;
	char *end;
	long long later;

	if (!eff || strcmp(eff->file, ours) == 0 || eff->pattern)
		return NULL;
	base = strrchr(eff->file, '/') ? strrchr(eff->file, '/') + 1 : eff->file;
	/* An earlier name: hosttune's file is read after it and wins. */
	if (strcmp(base, strrchr(ours, '/') + 1) <= 0)
		return NULL;
	if (eff->value && ht_int_text_equal(eff->value, value))
		return NULL;
	if (eff->value && only_raise) {
		errno = 0;
		later = strtoll(eff->value, &end, 0);
		if (!errno && end != eff->value && !*end && later >= strtoll(value, NULL, 10))
			return NULL;
	}
	return eff;
}

bool ht_template_line(const char *tmpl, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = tmpl; *p;) {
		size_t len = strcspn(p, "\n");

		if (len == n && len > 0 && p[0] != '#' && !memchr(p, '@', len) &&
		    strncmp(p, line, n) == 0)
			return true;
		p += len + (p[len] == '\n');
	}
	return false;
}

bool ht_int_text(const char *s, bool sign)
{
	size_t n;

	if (sign && *s == '-')
		s++;
	n = strlen(s);
	return n >= 1 && n <= 20 && strspn(s, "0123456789") == n;
}

size_t ht_span_name(const char *s, const char *more)
{
	size_t n = 0;

	while (s[n] && (((unsigned char)s[n] < 0x80 && isalnum((unsigned char)s[n])) ||
	                strchr(more, s[n])))
		n++;
	return n;
}
