/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "cli/report.h"
#include "engine/fix.h"
#include "engine/rules.h"
#include "engine/value.h"
#include "shared/escape.h"
#include "shared/units.h"
#include "shared/util.h"

/*
 * "nic.queues[eth0]" for a per-interface finding, the rule id otherwise. An
 * instance is named as the kernel names it (an interface, a cgroup path, a
 * process's comm may hold a newline or a bidi control): shown escaped, so
 * that it cannot make a line of the report of its own.
 */
static char *finding_name(const struct ht_finding *f)
{
	_cleanup_free_ char *inst = NULL;
	char *s;

	if (!f->instance)
		return strdup(ht_rule_id(f->rule));
	inst = ht_escape(f->instance, HT_ESCAPE_CONTROL);
	if (!inst || asprintf(&s, "%s[%s]", ht_rule_id(f->rule), inst) < 0)
		return NULL;
	return s;
}

enum ht_severity ht_findings_worst(const struct ht_findings *f)
{
	enum ht_severity w = HT_SEV_OK;

	for (size_t i = 0; i < f->n; i++)
		if (f->items[i].applicable && !f->items[i].waived && f->items[i].severity > w)
			w = f->items[i].severity;
	return w;
}

/*
 * Counts a finding of the summary: a waived one as waived (@counts[WAIVED]),
 * an applicable one at its severity, else as not applicable (@counts[NA]).
 */
enum { COUNT_NA = HT_SEV_CRITICAL + 1, COUNT_WAIVED, COUNT__MAX };
static void count_finding(const struct ht_finding *fi, size_t *counts)
{
	if (fi->waived)
		counts[COUNT_WAIVED]++;
	else if (fi->applicable)
		counts[fi->severity]++;
	else
		counts[COUNT_NA]++;
}

/* " (waived)" after a waived finding's severity in the table. */
static void put_waived_mark(FILE *out, const struct ht_finding *fi)
{
	if (fi->waived)
		fputs(" (waived)", out);
}

/* "waived: REASON" under a waived finding's heading: the site accepts it (hosttune.conf). */
static int print_waiver(const struct ht_finding *fi, const struct ht_report_info *info,
                        size_t width, FILE *out);

/* "4096 entries (boot: 65536)" when the boot configuration sets another value. */
static char *current_text(const struct ht_finding *f, const char *unit);

/*
 * @unit for a count of one: the first word of a plural unit made singular
 * ("queues" -> "queue", "entries a bucket" -> "entry a bucket", "CPUs" ->
 * "CPU", "processes" -> "process"); a rate or abbreviation with a '/' ("MB/s", "connections/s") and a
 * word not ending in 's' stay as they are. Returns a new string or NULL.
 */
static char *unit_singular(const char *unit)
{
	size_t w = strcspn(unit, " ");
	char *s;

	if (memchr(unit, '/', w) || w < 2 || unit[w - 1] != 's' || unit[w - 2] == 's')
		return strdup(unit);
	/* "processes" -> "process", "addresses" -> "address". */
	if (w > 4 && strncmp(unit + w - 4, "sses", 4) == 0) {
		if (asprintf(&s, "%.*s%s", (int)(w - 2), unit, unit + w) < 0)
			return NULL;
		return s;
	}
	if (w > 3 && strncmp(unit + w - 3, "ies", 3) == 0) {
		if (asprintf(&s, "%.*sy%s", (int)(w - 3), unit, unit + w) < 0)
			return NULL;
		return s;
	}
	if (asprintf(&s, "%.*s%s", (int)(w - 1), unit, unit + w) < 0)
		return NULL;
	return s;
}

static char *value_with_unit(const struct ht_value *v, const char *unit)
{
	_cleanup_free_ char *s = NULL, *one = NULL;
	char *r;

	if (v->type == HT_T_NONE)
		return strdup("-");
	/* 268435456 bytes as 256 MiB; the fix lines keep the exact value to copy. */
	if (unit && strcmp(unit, "bytes") == 0 && (v->type == HT_T_INT || v->type == HT_T_DEC) &&
	    fabs(ht_value_as_double(v)) >= 1024)
		return ht_format_bytes(ht_value_as_double(v));
	/* Text from the host in one cell: no newline, tab or bidi control of it shown raw. */
	if (v->type == HT_T_STR)
		return ht_escape(v->s, HT_ESCAPE_CONTROL);
	s = ht_value_display(v);
	if (!s)
		return NULL;
	if (!unit || v->type == HT_T_BOOL)
		return TAKE_PTR(s);
	if (ht_value_as_double(v) == 1) {
		one = unit_singular(unit);
		if (!one)
			return NULL;
		unit = one;
	}
	if (asprintf(&r, "%s %s", s, unit) < 0)
		return NULL;
	return r;
}

static char *current_text(const struct ht_finding *f, const char *unit)
{
	_cleanup_free_ char *c = value_with_unit(&f->current, unit);
	char *s;

	if (!c || !f->boot_value)
		return TAKE_PTR(c);
	if (asprintf(&s, "%s (boot: %s)", c, f->boot_value) < 0)
		return NULL;
	return s;
}

/*
 * Findings by severity, worst first: info and above, then the waived ones,
 * then ok; load order within a severity; the findings that are not
 * applicable last.
 */
static size_t *sorted_order(const struct ht_findings *f)
{
	size_t *idx = malloc((f->n ? f->n : 1) * sizeof(*idx));
	size_t k = 0;

	if (!idx)
		return NULL;
	/* The problems first: the waived ones after those not waived, before ok. */
	for (int pass = 0; pass < 3; pass++)
		for (int s = HT_SEV_CRITICAL; s >= HT_SEV_OK; s--)
			for (size_t i = 0; i < f->n; i++) {
				const struct ht_finding *fi = &f->items[i];
				int in = fi->waived ? 1 : fi->severity > HT_SEV_OK ? 0 : 2;

				if (fi->applicable && (int)fi->severity == s && in == pass)
					idx[k++] = i;
			}
	for (size_t i = 0; i < f->n; i++)
		if (!f->items[i].applicable)
			idx[k++] = i;
	return idx;
}

static const char *sev_label(const struct ht_finding *f)
{
	return f->applicable ? ht_severity_name(f->severity) : "n/a";
}

/* The SGR colour of a finding's severity: critical red, warning yellow, info cyan; "" else. */
static const char *sev_color(const struct ht_finding *f, bool color)
{
	if (!color || !f->applicable)
		return "";
	switch (f->severity) {
	case HT_SEV_CRITICAL:
		return "\033[1;31m";
	case HT_SEV_WARNING:
		return "\033[33m";
	case HT_SEV_INFO:
		return "\033[36m";
	default:
		return "";
	}
}

/*
 * The severity label of @f, in its colour when @color. The colour codes are
 * hosttune's own: they pass a stream that escapes the report's other control
 * characters (shared/escape.h ht_escape_raw()).
 */
static void put_severity(FILE *out, const struct ht_finding *f, bool color)
{
	const char *c = sev_color(f, color);

	if (*c)
		ht_escape_raw(out, c);
	fputs(sev_label(f), out);
	if (*c)
		ht_escape_raw(out, "\033[0m");
}

/*
 * Whether the @n bytes at @w are a number: digits with inner '.' or ',' and
 * an optional leading '(', '-' or '~', ending in a digit ("4096", "(1.5", "-1").
 */
static bool is_number_word(const char *w, size_t n)
{
	size_t i = 0;

	while (i < n && (w[i] == '(' || w[i] == '-' || w[i] == '~'))
		i++;
	if (i == n || n == 0 || !isdigit((unsigned char)w[n - 1]))
		return false;
	for (; i < n; i++)
		if (!isdigit((unsigned char)w[i]) && w[i] != '.' && w[i] != ',')
			return false;
	return true;
}

/*
 * The length of the unit of text that starts at @p and may not be broken: a
 * word, or a number, one space and the word after it when that word starts
 * with a letter ("4096 entries", "20 MiB", "120 s."), so that a number never
 * ends one line with its unit on the next.
 */
static size_t unbreakable_len(const char *p)
{
	size_t n = strcspn(p, " \n");

	if (is_number_word(p, n) && p[n] == ' ' && isalpha((unsigned char)p[n + 1]))
		n += 1 + strcspn(p + n + 1, " \n");
	return n;
}

/*
 * Word-wraps a paragraph to @width columns: the first line after @first (or
 * after what is on the line already: @col columns, when @col > 0), every
 * further line after @indent.
 */
static void print_wrapped_at(FILE *out, const char *text, const char *first, const char *indent,
                             size_t width, size_t col)
{
	const char *p = text;
	bool first_line = true, any = false;

	while (*p) {
		size_t n;

		while (*p == ' ')
			p++;
		n = unbreakable_len(p);
		if (n == 0 && *p == '\n') {
			fputc('\n', out);
			col = 0;
			first_line = false;
			p++;
			continue;
		}
		if (n == 0)
			break;
		if (col > 0 && col + 1 + n > width) {
			fputc('\n', out);
			col = 0;
			first_line = false;
		}
		if (col == 0) {
			const char *in = first_line ? first : indent;

			fputs(in, out);
			col = strlen(in);
		} else if (any) { /* not before the first word after @col's columns */
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, n, out);
		any = true;
		col += n;
		p += n;
	}
	if (col > 0)
		fputc('\n', out);
}

/* Word-wraps a paragraph to @width columns, each line after @indent. */
static void print_wrapped(FILE *out, const char *text, const char *indent, size_t width)
{
	print_wrapped_at(out, text, indent, indent, width, 0);
}

/*
 * One line of the report after four spaces ("fix: ...", "at boot: ...",
 * "not applicable: ..."): on a terminal (@info->wrap_all) wrapped at @width
 * with the lines after it indented by six; elsewhere one line, whatever its
 * length, for grep and scripts.
 */
static int print_item(FILE *out, const struct ht_report_info *info, size_t width,
                      const char *fmt, ...) _printf_(4, 5);
static int print_item(FILE *out, const struct ht_report_info *info, size_t width,
                      const char *fmt, ...)
{
	_cleanup_free_ char *t = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&t, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	if (info->wrap_all)
		print_wrapped_at(out, t, "    ", "      ", width, 0);
	else
		fprintf(out, "    %s\n", t);
	return 0;
}

/*
 * "workload: burst=2, conn_rate=100, ..." (workload.X as X; the [garage]
 * section's variables keep their prefix): every variable with @all, else
 * only those the profile in use or --set changed over the profile it builds
 * on (ht_ruleset_var_changed()). A new string, NULL on ENOMEM; "" when none
 * is shown.
 */
static char *workload_line(const struct ht_ruleset *rs, bool all)
{
	_cleanup_free_ char *line = strdup("workload:");
	size_t shown = 0;

	for (size_t i = 0; line && i < ht_ruleset_var_count(rs); i++) {
		_cleanup_free_ char *v = NULL;
		const char *name = ht_ruleset_var_name(rs, i);
		char *next;

		if (!all && !ht_ruleset_var_changed(rs, i))
			continue;
		/* A path or name as --set gave it: one line, its newlines and tabs escaped. */
		v = ht_ruleset_var_value(rs, i)->type == HT_T_STR
		    ? ht_escape(ht_ruleset_var_value(rs, i)->s, HT_ESCAPE_CONTROL)
		    : ht_value_display(ht_ruleset_var_value(rs, i));
		if (strncmp(name, "workload.", 9) == 0)
			name += 9;
		if (asprintf(&next, "%s%s %s=%s", line, shown++ ? "," : "", name,
		             !v ? "?" : *v ? v : "\"\"") < 0)
			return NULL;
		free(line);
		line = next;
	}
	if (line && shown == 0)
		line[0] = '\0';
	return TAKE_PTR(line);
}

char *ht_report_hint_text(const struct ht_profile_hint *hint)
{
	char *t = strdup("");

	for (size_t i = 0; t && i < hint->nevidence; i++) {
		char *next;

		if (asprintf(&next, "%s%s%s", t, i ? "; " : "", hint->evidence[i]) < 0)
			next = NULL;
		free(t);
		t = next;
	}
	return t;
}

struct json_object *ht_report_hint_json(const char *name, const struct ht_profile_hint *hint)
{
	struct json_object *j = json_object_new_object(), *a = json_object_new_array();

	if (!j || !a) {
		json_object_put(j);
		json_object_put(a);
		return NULL;
	}
	for (size_t i = 0; i < hint->nevidence; i++)
		json_object_array_add(a, json_object_new_string(hint->evidence[i]));
	json_object_object_add(j, "name", json_object_new_string(name));
	json_object_object_add(j, "evidence", a);
	return j;
}

/*
 * "recommended profile: garage (/etc/garage.toml exists; ...): --profile
 * garage": the profile the host's services suggest, and why; a new string,
 * NULL on ENOMEM.
 */
static char *hint_line(const struct ht_report_info *info)
{
	_cleanup_free_ char *why = ht_report_hint_text(info->hint);
	char *line;

	if (!why || asprintf(&line, "recommended profile: %s (%s): --profile %s", info->hint_name,
	                     why, info->hint_name) < 0)
		return NULL;
	return line;
}

/*
 * "audit of ORIGIN, profile P" and the workload variables, then an empty
 * line; on a terminal (@info->wrap_all) the workload line wrapped at @width.
 */
static int print_head(const struct ht_report_info *info, size_t width, FILE *out)
{
	const struct ht_ruleset *rs = info->rules;

	fprintf(out, "hosttune audit of %s, profile %s\n", info->origin,
	        ht_ruleset_profile(rs) ? ht_ruleset_profile(rs) : "(none)");
	if (ht_ruleset_var_count(rs) > 0) {
		_cleanup_free_ char *line = workload_line(rs, info->detail == HT_REPORT_VERBOSE);

		if (!line)
			return -ENOMEM;
		if (line[0] && info->wrap_all)
			print_wrapped_at(out, line, "", "    ", width, 0);
		else if (line[0])
			fprintf(out, "%s\n", line);
	}
	if (info->hint_name) {
		_cleanup_free_ char *line = hint_line(info);

		if (!line)
			return -ENOMEM;
		if (info->wrap_all)
			print_wrapped_at(out, line, "", "    ", width, 0);
		else
			fprintf(out, "%s\n", line);
	}
	fputc('\n', out);
	return 0;
}

/*
 * The sd-daemon priority (<syslog.h>) of @fi's lines: critical LOG_CRIT,
 * warning LOG_WARNING, info, ok and not applicable LOG_INFO.
 */
static int finding_priority(const struct ht_finding *fi)
{
	if (fi->applicable && fi->severity == HT_SEV_CRITICAL)
		return LOG_CRIT;
	if (fi->applicable && fi->severity == HT_SEV_WARNING)
		return LOG_WARNING;
	return LOG_INFO;
}

/* Tells the stream's owner the priority of the lines that follow (info->priority). */
static void report_priority(const struct ht_report_info *info, FILE *out, int prio)
{
	if (info->priority)
		info->priority(out, prio);
}

/* Whether @fi's explanation follows the table: at info and above, or every one when verbose. */
static bool explained(const struct ht_finding *fi, enum ht_report_detail detail)
{
	/* A waived one too: its reason is what the site decided. */
	return detail == HT_REPORT_VERBOSE || fi->waived ||
	       (fi->applicable && fi->severity >= HT_SEV_INFO);
}

/*
 * The table: a row per finding in the order @idx, RULE, CURRENT and
 * RECOMMENDED as wide as their longest; counts each severity (@counts, @na).
 */
static int print_table(const struct ht_findings *f, const size_t *idx,
                       const struct ht_report_info *info, FILE *out, size_t *counts)
{
	int wr = 28, wc = 7, we = 11;

	for (size_t i = 0; i < f->n; i++) {
		const struct ht_finding *fi = &f->items[i];
		_cleanup_free_ char *c = current_text(fi, ht_rule_unit(fi->rule));
		_cleanup_free_ char *r = value_with_unit(&fi->recommended, ht_rule_unit(fi->rule));
		_cleanup_free_ char *name = finding_name(fi);
		int l;

		if (!name)
			return -ENOMEM;
		if ((l = (int)strlen(name)) > wr)
			wr = l;
		if (c && (l = (int)strlen(c)) > wc)
			wc = l;
		if (r && (l = (int)strlen(r)) > we)
			we = l;
	}
	report_priority(info, out, LOG_INFO);
	fprintf(out, "%-*s  %-*s  %-*s  %s\n", wr, "RULE", wc, "CURRENT", we, "RECOMMENDED",
	        "SEVERITY");
	for (size_t k = 0; k < f->n; k++) {
		const struct ht_finding *fi = &f->items[idx[k]];
		_cleanup_free_ char *c = current_text(fi, ht_rule_unit(fi->rule));
		_cleanup_free_ char *r = value_with_unit(&fi->recommended, ht_rule_unit(fi->rule));
		_cleanup_free_ char *name = finding_name(fi);

		if (!c || !r || !name)
			return -ENOMEM;
		report_priority(info, out, finding_priority(fi));
		fprintf(out, "%-*s  %-*s  %-*s  ", wr, name, wc, c, we, fi->applicable ? r : "-");
		put_severity(out, fi, info->color);
		put_waived_mark(out, fi);
		fputc('\n', out);
		count_finding(fi, counts);
	}
	return 0;
}

/* "[critical] " then the rule, its target and title (wrapped on a terminal). */
static int print_heading(const struct ht_finding *fi, const struct ht_report_info *info,
                         size_t width, FILE *out)
{
	const struct ht_rule *r = fi->rule;
	const char *target = ht_rule_target(r), *title = ht_rule_title(r);
	_cleanup_free_ char *name = finding_name(fi), *what = NULL, *head = NULL, *inst = NULL;
	int n;

	if (!name)
		return -ENOMEM;
	fputs("\n[", out);
	put_severity(out, fi, info->color);
	fputs("] ", out);
	inst = fi->instance ? ht_escape(fi->instance, HT_ESCAPE_CONTROL) : NULL;
	if (fi->instance && !inst)
		return -ENOMEM;
	switch (ht_rule_kind(r)) {
	case HT_TARGET_MODULE:
		n = asprintf(&what, " (module parameter %s)", target + strlen("module."));
		break;
	case HT_TARGET_CHANNELS:
		n = asprintf(&what, " (ethtool channels %s%s%s)", inst ? inst : "",
		             inst ? " " : "", target + strlen("nic.channels."));
		break;
	default:
		if (ht_rule_kind(r) == HT_TARGET_LIMIT && inst)
			n = asprintf(&what, " (limit nofile of %s)", inst);
		else if (target)
			n = asprintf(&what, " (%s %s)", ht_target_kind_name(ht_rule_kind(r)), target);
		else
			n = asprintf(&what, "%s", ht_rule_kind(r) == HT_TARGET_ADVICE ? " (advice)" : "");
	}
	if (n < 0 || asprintf(&head, "%s%s%s%s", name, what, title ? ": " : "",
	                      title ? title : "") < 0)
		return -ENOMEM;
	if (info->wrap_all)
		print_wrapped_at(out, head, "", "    ", width, strlen(sev_label(fi)) + 3);
	else
		fprintf(out, "%s\n", head);
	return 0;
}

/* "at boot: ..." when the boot configuration gives another value than the live one. */
static int print_boot(const struct ht_finding *fi, const struct ht_report_info *info,
                      size_t width, FILE *out)
{
	_cleanup_free_ char *rec = NULL;

	if (!fi->boot_value)
		return 0;
	if (!fi->boot_worse && fi->no_live)
		return print_item(out, info, width, "at boot: %s from %s; no live value now",
		                  fi->boot_value, fi->boot_source);
	if (!fi->boot_worse)
		return print_item(out, info, width, "at boot: %s from %s, not the live value: "
		                  "hosttune verify tells why", fi->boot_value, fi->boot_source);
	rec = ht_value_display(&fi->recommended);
	return print_item(out, info, width, "at boot: %s from %s, %s the recommended %s: the host "
	                  "comes back from a reboot with it; edit or remove that line (hosttune "
	                  "verify tells more)", fi->boot_value, fi->boot_source,
	                  ht_rule_only_raise(fi->rule) ? "below" : "not", rec ? rec : "value");
}

/* The "fix: ..." line of @fx, as the plan made it; nothing for HT_FIX_NONE. */
static int print_fix(const struct ht_fix *fx, const struct ht_report_info *info, size_t width,
                     FILE *out)
{
	_cleanup_free_ char *w = NULL;

	switch (fx->kind) {
	case HT_FIX_FILE:
		if (fx->live_absent)
			return print_item(out, info, width, "fix: %s in %s (%s does not exist now: the "
			                  "file applies at boot once the kernel has it)", fx->line,
			                  fx->file, fx->live);
		return print_item(out, info, width, "fix: %s in %s, and live in %s", fx->line,
		                  fx->file, fx->live);
	case HT_FIX_CMDLINE:
		return print_item(out, info, width, "fix: %s on the kernel command line "
		                  "(GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub: "
		                  "modprobe.d never reaches a built-in module), and live in %s",
		                  fx->cmdline, fx->live);
	case HT_FIX_DROPIN:
	case HT_FIX_UNIT_GIVES:
		if (!(w = ht_shell_word(fx->restart)))
			return -ENOMEM;
		if (fx->kind == HT_FIX_DROPIN)
			return print_item(out, info, width, "fix: %s in %s, then restart %s "
			                  "(systemctl daemon-reload && systemctl restart %s): the "
			                  "process gets the limit when the service starts again",
			                  fx->line, fx->file, fx->restart, w);
		return print_item(out, info, width, "fix: %s already gives %" PRId64 " from %s: "
		                  "restart %s to take it (systemctl daemon-reload && systemctl "
		                  "restart %s); hosttune writes no drop-in", fx->restart, fx->given,
		                  fx->source, fx->restart, w);
	case HT_FIX_NONE_HERE:
		return print_item(out, info, width, "fix: none from here: %s", fx->reason);
	case HT_FIX_MANAGED:
		if (fx->nixos)
			return print_item(out, info, width, "fix: %s in configuration.nix, then "
			                  "nixos-rebuild switch%s%s: %s, so hosttune writes no file "
			                  "there", fx->line, fx->restart ? " and a restart of " : "",
			                  fx->restart ? fx->restart : "", fx->reason);
		return print_item(out, info, width, "fix: %s, where that is managed%s%s: %s",
		                  fx->line, fx->restart ? ", then restart " : "",
		                  fx->restart ? fx->restart : "", fx->reason);
	case HT_FIX_NONE:
		break;
	}
	return 0;
}

/* One finding after the table: heading, explanation, boot value, fix, remedy, lever. */
static int print_finding(const struct ht_finding *fi, const struct ht_fix *fx,
                         const struct ht_report_info *info, size_t width, FILE *out)
{
	bool fixed = fx->kind != HT_FIX_NONE;
	int r = print_heading(fi, info, width, out);

	if (r < 0 || (r = print_waiver(fi, info, width, out)) < 0)
		return r;
	if (!fi->applicable)
		return print_item(out, info, width, "not applicable: %s", fi->reason);
	print_wrapped(out, fi->explanation, "    ", width);
	if ((r = print_boot(fi, info, width, out)) < 0 || (r = print_fix(fx, info, width, out)) < 0)
		return r;
	if (fi->remedy) {
		_cleanup_free_ char *t = NULL;

		if (asprintf(&t, "%s: %s", fixed ? "also" : "fix", fi->remedy) < 0)
			return -ENOMEM;
		print_wrapped(out, t, "    ", width);
	}
	if (fi->lever && print_item(out, info, width, "%s: see %s: its fix is the lever for this "
	                            "one", fixed || fi->remedy ? "also" : "fix", fi->lever) < 0)
		return -ENOMEM;
	return 0;
}

static int print_waiver(const struct ht_finding *fi, const struct ht_report_info *info,
                        size_t width, FILE *out)
{
	_cleanup_free_ char *why = NULL;

	if (!fi->waived)
		return 0;
	/* A reason from another host's facts file is text from outside: one line, escaped. */
	why = ht_escape(fi->waived, HT_ESCAPE_CONTROL);
	if (!why)
		return -ENOMEM;
	return print_item(out, info, width, "waived: %s", why);
}

/*
 * "2 ok and 3 not applicable findings are not explained here: --verbose shows
 * them", when the default detail left some out.
 */
static int print_hidden(const struct ht_findings *f, const struct ht_report_info *info,
                        size_t width, FILE *out)
{
	_cleanup_free_ char *t = NULL;
	char okt[32] = "", nat[48] = "";
	size_t ok = 0, na = 0;

	if (info->detail != HT_REPORT_PROBLEMS)
		return 0;
	for (size_t i = 0; i < f->n; i++)
		if (!explained(&f->items[i], info->detail))
			*(f->items[i].applicable ? &ok : &na) += 1;
	if (ok + na == 0)
		return 0;
	if (ok)
		snprintf(okt, sizeof(okt), "%zu ok", ok);
	if (na)
		snprintf(nat, sizeof(nat), "%s%zu not applicable", ok ? " and " : "", na);
	if (asprintf(&t, "%s%s %s not explained here: --verbose shows %s", okt, nat,
	             ok + na == 1 ? "finding is" : "findings are", ok + na == 1 ? "it" : "them") < 0)
		return -ENOMEM;
	report_priority(info, out, LOG_INFO);
	fputc('\n', out);
	if (info->wrap_all)
		print_wrapped(out, t, "", width);
	else
		fprintf(out, "%s\n", t);
	return 0;
}

int ht_report_text(const struct ht_findings *f, const struct ht_report_info *info, FILE *out)
{
	static const struct ht_fix none = { .kind = HT_FIX_NONE };
	_cleanup_free_ size_t *idx = sorted_order(f);
	size_t counts[COUNT__MAX] = { 0 };
	size_t width = info->width ? info->width : 100;
	bool quiet = info->detail == HT_REPORT_QUIET;
	int r = 0;

	if (!idx)
		return -ENOMEM;
	if (quiet) {
		for (size_t i = 0; i < f->n; i++)
			count_finding(&f->items[i], counts);
	} else {
		report_priority(info, out, LOG_INFO);
		r = print_head(info, width, out);
		if (r >= 0)
			r = print_table(f, idx, info, out, counts);
	}
	for (size_t k = 0; !quiet && r >= 0 && k < f->n; k++) {
		const struct ht_finding *fi = &f->items[idx[k]];

		if (!explained(fi, info->detail))
			continue;
		report_priority(info, out, finding_priority(fi));
		r = print_finding(fi, info->fixes ? &info->fixes[idx[k]] : &none, info, width, out);
	}
	if (r < 0)
		return r;
	if (!quiet && (r = print_hidden(f, info, width, out)) < 0)
		return r;
	report_priority(info, out, counts[HT_SEV_CRITICAL] ? LOG_CRIT :
	                           counts[HT_SEV_WARNING] ? LOG_WARNING : LOG_INFO);
	fprintf(out, "%s%zu critical, %zu warning, %zu info, %zu ok, %zu not applicable",
	        quiet ? "" : "\n", counts[HT_SEV_CRITICAL], counts[HT_SEV_WARNING],
	        counts[HT_SEV_INFO], counts[HT_SEV_OK], counts[COUNT_NA]);
	/* Only where the site waived something: the line is as before elsewhere. */
	if (counts[COUNT_WAIVED])
		fprintf(out, ", %zu waived", counts[COUNT_WAIVED]);
	fputc('\n', out);
	return ferror(out) ? -EIO : 0;
}

static struct json_object *jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/*
 * The finding's "fix" member of @o from @fx (NULL: none): {"file", "cmdline",
 * "line", "live", "restart"} for a fix hosttune writes or a restart gives,
 * null otherwise. 0 or -ENOMEM.
 */
/* A number, or null when @known is false. */
static struct json_object *jnum(bool known, double v)
{
	if (!known)
		return NULL;
	if (v == floor(v) && fabs(v) < 9.0e15)
		return json_object_new_int64((int64_t)v);
	return json_object_new_double(v);
}

/* "limit": a limit rule's figures (struct ht_limit_use), or null. -ENOMEM. */
static int limit_json(const struct ht_finding *fi, struct json_object *o)
{
	const struct ht_limit_use *u = &fi->limit;
	struct json_object *l;

	if (!fi->applicable || !u->set) {
		json_object_object_add(o, "limit", NULL);
		return 0;
	}
	if (!(l = json_object_new_object()))
		return -ENOMEM;
	json_object_object_add(l, "limit", ht_value_to_json(&u->limit_v));
	json_object_object_add(l, "usage", ht_value_to_json(&u->usage_v));
	json_object_object_add(l, "events", jnum(u->events_known, u->events));
	json_object_object_add(l, "holder", jstr(u->holder));
	json_object_object_add(l, "held", u->holder && u->held_known ?
	                       ht_value_to_json(&u->held_v) : NULL);
	json_object_object_add(l, "stray", json_object_new_boolean(u->holder && u->stray));
	json_object_object_add(l, "rest", jstr(u->rest));
	json_object_object_add(l, "source", jstr(u->source));
	json_object_object_add(o, "limit", l);
	return 0;
}

static int fix_json(const struct ht_fix *fx, struct json_object *o)
{
	struct json_object *j;

	if (!fx || fx->kind == HT_FIX_NONE || fx->kind == HT_FIX_NONE_HERE) {
		json_object_object_add(o, "fix", NULL);
		return 0;
	}
	j = json_object_new_object();
	if (!j)
		return -ENOMEM;
	json_object_object_add(j, "file", jstr(fx->file));
	json_object_object_add(j, "cmdline", json_object_new_boolean(fx->kind == HT_FIX_CMDLINE));
	json_object_object_add(j, "line", jstr(fx->kind == HT_FIX_CMDLINE ? fx->cmdline : fx->line));
	json_object_object_add(j, "live", fx->live_absent ? NULL : jstr(fx->live));
	/* A limit: no live write, the service to restart instead. */
	json_object_object_add(j, "restart", jstr(fx->restart));
	/* Another manager's directory: who, and its own setting in "line". */
	json_object_object_add(j, "managed_by", fx->kind != HT_FIX_MANAGED ? NULL
	                       : json_object_new_string(fx->nixos ? "NixOS" : "link"));
	json_object_object_add(o, "fix", j);
	return 0;
}

struct json_object *ht_report_json(const struct ht_findings *f, const struct ht_report_info *info)
{
	_cleanup_free_ size_t *idx = sorted_order(f);
	struct json_object *root = json_object_new_object();
	struct json_object *arr = json_object_new_array();
	struct json_object *wl = json_object_new_object();
	struct json_object *sum = json_object_new_object();
	const struct ht_ruleset *rs = info->rules;
	size_t counts[COUNT__MAX] = { 0 };

	if (!idx || !root || !arr || !wl || !sum)
		goto oom;
	json_object_object_add(root, "profile", jstr(ht_ruleset_profile(rs)));
	json_object_object_add(root, "origin", jstr(info->origin));
	for (size_t i = 0; i < ht_ruleset_var_count(rs); i++)
		json_object_object_add(wl, ht_ruleset_var_name(rs, i),
		                       ht_value_to_json(ht_ruleset_var_value(rs, i)));
	json_object_object_add(root, "workload", wl);
	wl = NULL;
	if (info->hint_name) {
		struct json_object *h = ht_report_hint_json(info->hint_name, info->hint);

		if (!h)
			goto oom;
		json_object_object_add(root, "recommended_profile", h);
	} else
		json_object_object_add(root, "recommended_profile", NULL);
	for (size_t k = 0; k < f->n; k++) {
		const struct ht_finding *fi = &f->items[idx[k]];
		const struct ht_rule *r = fi->rule;
		struct json_object *o = json_object_new_object();

		if (!o)
			goto oom;
		json_object_array_add(arr, o);
		json_object_object_add(o, "rule", jstr(ht_rule_id(r)));
		json_object_object_add(o, "instance", jstr(fi->instance));
		json_object_object_add(o, "kind", jstr(ht_target_kind_name(ht_rule_kind(r))));
		json_object_object_add(o, "target", jstr(ht_rule_target(r)));
		json_object_object_add(o, "title", jstr(ht_rule_title(r)));
		json_object_object_add(o, "unit", jstr(ht_rule_unit(r)));
		json_object_object_add(o, "current", fi->current.type == HT_T_NONE ? NULL :
		                       ht_value_to_json(&fi->current));
		json_object_object_add(o, "recommended",
		                       !fi->applicable || fi->recommended.type == HT_T_NONE ? NULL :
		                       ht_value_to_json(&fi->recommended));
		json_object_object_add(o, "severity", jstr(sev_label(fi)));
		json_object_object_add(o, "applicable", json_object_new_boolean(fi->applicable));
		json_object_object_add(o, "kept", json_object_new_boolean(fi->kept));
		json_object_object_add(o, "read_only", json_object_new_boolean(fi->read_only));
		if (fi->boot_value) {
			struct json_object *b = json_object_new_object();

			if (!b)
				goto oom;
			json_object_object_add(b, "value", jstr(fi->boot_value));
			json_object_object_add(b, "source", jstr(fi->boot_source));
			json_object_object_add(b, "worse", json_object_new_boolean(fi->boot_worse));
			json_object_object_add(o, "boot", b);
		} else
			json_object_object_add(o, "boot", NULL);
		json_object_object_add(o, "explanation",
		                       jstr(fi->applicable ? fi->explanation : fi->reason));
		if (fix_json(info->fixes ? &info->fixes[idx[k]] : NULL, o) < 0)
			goto oom;
		json_object_object_add(o, "remedy", jstr(fi->remedy));
		json_object_object_add(o, "lever", jstr(fi->lever));
		json_object_object_add(o, "case", jstr(fi->case_name));
		if (limit_json(fi, o) < 0)
			goto oom;
		json_object_object_add(o, "waived", jstr(fi->waived));
		count_finding(fi, counts);
	}
	json_object_object_add(root, "findings", arr);
	arr = NULL;
	if (info->values) {
		struct json_object *vals = json_object_new_object();
		struct ht_ruleset *mrs = info->values;

		if (!vals)
			goto oom;
		json_object_object_add(root, "values", vals);
		for (size_t i = 0; i < ht_ruleset_rule_count(mrs); i++) {
			const struct ht_rule *r = ht_ruleset_rule_at(mrs, i);
			struct ht_value v = { 0 };
			struct ht_error e;

			if (ht_rule_kind(r) != HT_TARGET_NONE || ht_rule_each(r) != HT_EACH_NONE)
				continue;
			if (ht_ruleset_value(mrs, ht_rule_id(r), &v, &e) < 0)
				json_object_object_add(vals, ht_rule_id(r), NULL);
			else
				json_object_object_add(vals, ht_rule_id(r), ht_value_to_json(&v));
			ht_value_clear(&v);
		}
	}
	for (int s = HT_SEV_OK; s <= HT_SEV_CRITICAL; s++)
		json_object_object_add(sum, ht_severity_name((enum ht_severity)s),
		                       json_object_new_int64((int64_t)counts[s]));
	json_object_object_add(sum, "n/a", json_object_new_int64((int64_t)counts[COUNT_NA]));
	json_object_object_add(sum, "waived", json_object_new_int64((int64_t)counts[COUNT_WAIVED]));
	json_object_object_add(sum, "worst", jstr(ht_severity_name(ht_findings_worst(f))));
	json_object_object_add(root, "summary", sum);
	return root;
oom:
	json_object_put(root);
	json_object_put(arr);
	json_object_put(wl);
	json_object_put(sum);
	return NULL;
}

/* ---- a fleet: several hosts' audits in one report ---- */

/* The rank of @fi in a report: critical 0, warning 1, info 2, ok 3, not applicable 4. */
static int fleet_rank(const struct ht_finding *fi)
{
	return fi->waived ? 5 : fi->applicable ? HT_SEV_CRITICAL - (int)fi->severity : 4;
}

/* The table of every host's findings, a HOST column first, worst first. */
static int print_fleet_table(const struct ht_report_host *hosts, size_t n,
                             const struct ht_report_info *info, FILE *out)
{
	int wh = 4, wr = 28, wc = 7, we = 11;

	for (size_t h = 0; h < n; h++) {
		const struct ht_findings *f = hosts[h].findings;
		int l;

		if ((l = (int)strlen(hosts[h].label)) > wh)
			wh = l;
		for (size_t i = 0; i < f->n; i++) {
			const struct ht_finding *fi = &f->items[i];
			_cleanup_free_ char *c = current_text(fi, ht_rule_unit(fi->rule));
			_cleanup_free_ char *r = value_with_unit(&fi->recommended, ht_rule_unit(fi->rule));
			_cleanup_free_ char *name = finding_name(fi);

			if (!c || !r || !name)
				return -ENOMEM;
			if ((l = (int)strlen(name)) > wr)
				wr = l;
			if ((l = (int)strlen(c)) > wc)
				wc = l;
			if ((l = (int)strlen(r)) > we)
				we = l;
		}
	}
	fprintf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", wh, "HOST", wr, "RULE", wc, "CURRENT", we,
	        "RECOMMENDED", "SEVERITY");
	for (int rank = 0; rank <= 5; rank++)
		for (size_t h = 0; h < n; h++) {
			const struct ht_findings *f = hosts[h].findings;
			_cleanup_free_ size_t *idx = sorted_order(f);

			if (!idx)
				return -ENOMEM;
			for (size_t k = 0; k < f->n; k++) {
				const struct ht_finding *fi = &f->items[idx[k]];
				_cleanup_free_ char *c = NULL, *r = NULL, *name = NULL;

				if (fleet_rank(fi) != rank)
					continue;
				c = current_text(fi, ht_rule_unit(fi->rule));
				r = value_with_unit(&fi->recommended, ht_rule_unit(fi->rule));
				name = finding_name(fi);
				if (!c || !r || !name)
					return -ENOMEM;
				report_priority(info, out, finding_priority(fi));
				fprintf(out, "%-*s  %-*s  %-*s  %-*s  ", wh, hosts[h].label, wr, name, wc, c,
				        we, fi->applicable ? r : "-");
				put_severity(out, fi, info->color);
				put_waived_mark(out, fi);
				fputc('\n', out);
			}
		}
	return 0;
}

/* "N critical, N warning, N info, N ok, N not applicable" of @f, added to @total. */
static void print_fleet_counts(FILE *out, const struct ht_findings *f, size_t *total)
{
	size_t c[6] = { 0 };

	for (size_t i = 0; i < f->n; i++)
		c[fleet_rank(&f->items[i])]++;
	for (int k = 0; k < 6; k++)
		total[k] += c[k];
	fprintf(out, "%zu critical, %zu warning, %zu info, %zu ok, %zu not applicable", c[0], c[1],
	        c[2], c[3], c[4]);
	if (c[5])
		fprintf(out, ", %zu waived", c[5]);
	fputc('\n', out);
}

/*
 * The old and new line counts of a hunk header "@@ -L[,S] +L[,S] @@" (a
 * count left out is 1, as GNU diff writes it); false when @line is not one.
 */
static bool hunk_counts(const char *line, size_t len, long *old, long *new)
{
	const char *p = line + 3, *end = line + len;
	long *c[2] = { old, new };

	if (len < 4 || strncmp(line, "@@ -", 4) != 0)
		return false;
	for (int i = 0; i < 2; i++) {
		char *e;

		if (p >= end || *p != (i == 0 ? '-' : '+'))
			return false;
		(void)strtol(p + 1, &e, 10);
		if (e == p + 1)
			return false;
		*c[i] = 1;
		if (*e == ',') {
			const char *d = e + 1;

			*c[i] = strtol(d, &e, 10);
			if (e == d || *c[i] < 0)
				return false;
		}
		p = e;
		if (p < end && *p == ' ')
			p++;
	}
	return true;
}

int ht_report_plan(FILE *out, const char *text, size_t len, bool color)
{
	long old_left = 0, new_left = 0;
	bool plain = !color;

	for (size_t i = 0; i < len;) {
		const char *line = text + i, *nl = memchr(line, '\n', len - i);
		size_t ll = nl ? (size_t)(nl - line) : len - i;
		const char *c = "";

		if (ll == 0)
			plain = true;       /* the diffs end at the first empty line */
		if (plain) {
			c = "";
		} else if (old_left > 0 || new_left > 0) {
			if (line[0] == '-') {
				c = "\033[31m";
				old_left--;
			} else if (line[0] == '+') {
				c = "\033[32m";
				new_left--;
			} else if (line[0] == ' ') {
				old_left--;
				new_left--;
			}
		} else if (hunk_counts(line, ll, &old_left, &new_left)) {
			c = "\033[36m";
		} else if (ll >= 4 && (strncmp(line, "--- ", 4) == 0 || strncmp(line, "+++ ", 4) == 0)) {
			c = "\033[1m";
		}
		if (*c)
			ht_escape_raw(out, c);
		fwrite(line, 1, ll, out);
		if (*c)
			ht_escape_raw(out, "\033[0m");
		if (nl)
			fputc('\n', out);
		i += ll + (nl != NULL);
	}
	return ferror(out) ? -EIO : 0;
}

int ht_report_fleet_text(const struct ht_report_host *hosts, size_t n,
                         const struct ht_report_info *info, FILE *out)
{
	static const struct ht_fix none = { .kind = HT_FIX_NONE };
	char origin[64];
	struct ht_report_info head = *info;
	size_t width = info->width ? info->width : 100, total[6] = { 0 };
	enum ht_severity worst = HT_SEV_OK;
	bool quiet = info->detail == HT_REPORT_QUIET;
	int wh = 4, r;

	snprintf(origin, sizeof(origin), "%zu host%s", n, n == 1 ? "" : "s");
	head.origin = origin;
	for (size_t h = 0; h < n; h++)
		if ((int)strlen(hosts[h].label) > wh)
			wh = (int)strlen(hosts[h].label);
	if (!quiet) {
		report_priority(info, out, LOG_INFO);
		if ((r = print_head(&head, width, out)) < 0)
			return r;
		for (size_t h = 0; h < n; h++)
			fprintf(out, "  %-*s  %s%s%s\n", wh, hosts[h].label, hosts[h].origin,
			        hosts[h].about ? ": " : "", hosts[h].about ? hosts[h].about : "");
		fputc('\n', out);
		if ((r = print_fleet_table(hosts, n, info, out)) < 0)
			return r;
	}
	/* The problems, host by host: what is ok or not applicable is in the table (-v: all). */
	for (size_t h = 0; !quiet && h < n; h++) {
		const struct ht_findings *f = hosts[h].findings;
		_cleanup_free_ size_t *idx = sorted_order(f);
		bool named = false;

		if (!idx)
			return -ENOMEM;
		for (size_t k = 0; k < f->n; k++) {
			const struct ht_finding *fi = &f->items[idx[k]];

			if (!explained(fi, info->detail))
				continue;
			report_priority(info, out, finding_priority(fi));
			if (!named)
				fprintf(out, "\n== %s ==\n", hosts[h].label);
			named = true;
			r = print_finding(fi, hosts[h].fixes ? &hosts[h].fixes[idx[k]] : &none, info,
			                  width, out);
			if (r < 0)
				return r;
		}
	}
	if (!quiet)
		fputc('\n', out);
	for (size_t h = 0; h < n; h++) {
		enum ht_severity w = ht_findings_worst(hosts[h].findings);

		if (w > worst)
			worst = w;
		report_priority(info, out, w == HT_SEV_CRITICAL  ? LOG_CRIT :
		                           w == HT_SEV_WARNING ? LOG_WARNING : LOG_INFO);
		fprintf(out, "%s: ", hosts[h].label);
		print_fleet_counts(out, hosts[h].findings, total);
	}
	report_priority(info, out, worst == HT_SEV_CRITICAL  ? LOG_CRIT :
	                           worst == HT_SEV_WARNING ? LOG_WARNING : LOG_INFO);
	fprintf(out, "%zu host%s: %zu critical, %zu warning, %zu info, %zu ok, %zu not applicable",
	        n, n == 1 ? "" : "s", total[0], total[1], total[2], total[3], total[4]);
	if (total[5])
		fprintf(out, ", %zu waived", total[5]);
	fputc('\n', out);
	return ferror(out) ? -EIO : 0;
}
