/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The configuration file reader (cli/settings.h). Input: the text of a
 * hosttune.conf, written to a file and read as --config FILE reads it.
 *
 * Properties: cli_config_load() returns 0 or -EINVAL (the input is at most
 * 64 KiB) and reads nothing but that file (the guard). On -EINVAL the
 * message is "FILE:LINE:COL: ..." with LINE a line of the input and COL at
 * least 1. On success one file was read; a profile is a name of letters,
 * digits and '_'; every [set] has a non-empty name, unique, and an
 * assignment "NAME=VALUE" with a value; every waiver a rule id, a reason
 * that is not empty and has no blank at either end, an instance that is
 * not empty and holds no ']' (or none), a place "FILE:LINE:COL", one
 * waiver per rule and instance, and cli_config_waiver() finds each. ASan's
 * leak check covers cli_config_free().
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/settings.h"
#include "shared/util.h"

#include "fuzz-common.h"

static char dir[4096], path[4200];
static unsigned n_lines;

/* "PATH:LINE:COL" at the start of @s, LINE a line of the input; the rest after it. */
static const char *check_place(const char *s, const char *what)
{
	unsigned long line, col;
	char *end;

	FZ_CHECK(fz_has_place(s, path), "%s without its place: %s", what, s);
	line = strtoul(s + strlen(path) + 1, &end, 10);
	FZ_CHECK(*end == ':', "%s without a column: %s", what, s);
	col = strtoul(end + 1, &end, 10);
	FZ_CHECK(line >= 1 && line <= n_lines, "%s at line %lu of %u: %s", what, line, n_lines, s);
	FZ_CHECK(col >= 1, "%s at column %lu: %s", what, col, s);
	return end;
}

static bool valid_id(const char *s)
{
	if (!*s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
		return false;
	for (const char *p = s; *p; p++)
		if (!(*p == '_' || *p == '.' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z')))
			return false;
	return !strstr(s, "..") && s[strlen(s) - 1] != '.';
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

static void check_config(const struct cli_config *cfg)
{
	FZ_CHECK(cfg->nfiles == 1, "%zu files read", cfg->nfiles);
	if (cfg->profile) {
		FZ_CHECK(valid_id(cfg->profile) && !strchr(cfg->profile, '.'), "profile '%s'",
		         cfg->profile);
		FZ_CHECK(cfg->profile_where, "a profile without its place");
		check_place(cfg->profile_where, "the profile's place");
	}
	if (cfg->has_fail_on)
		FZ_CHECK(cfg->fail_on >= HT_SEV_INFO && cfg->fail_on <= HT_SEV_CRITICAL, "fail-on %d",
		         (int)cfg->fail_on);
	for (size_t i = 0; i < cfg->nsets; i++) {
		const struct cli_set *s = &cfg->sets[i];
		size_t n = strlen(s->name);

		FZ_CHECK(valid_id(s->name), "[set] name '%s'", s->name);
		FZ_CHECK(strncmp(s->assignment, s->name, n) == 0 && s->assignment[n] == '=' &&
		         s->assignment[n + 1], "[set] '%s' as '%s'", s->name, s->assignment);
		check_place(s->where, "a [set] place");
		for (size_t j = 0; j < i; j++)
			FZ_CHECK(strcmp(cfg->sets[j].name, s->name) != 0, "[set] '%s' twice", s->name);
	}
	for (size_t i = 0; i < cfg->nwaivers; i++) {
		const struct cli_waiver *w = &cfg->waivers[i];
		size_t n = strlen(w->reason);

		FZ_CHECK(valid_id(w->rule), "waiver rule '%s'", w->rule);
		FZ_CHECK(n > 0 && !blank(w->reason[0]) && !blank(w->reason[n - 1]),
		         "waiver of '%s': reason '%s'", w->rule, w->reason);
		FZ_CHECK(!w->instance || (w->instance[0] && !strchr(w->instance, ']')),
		         "waiver of '%s': instance '%s'", w->rule, w->instance);
		check_place(w->where, "a waiver's place");
		for (size_t j = 0; j < i; j++) {
			const struct cli_waiver *v = &cfg->waivers[j];

			FZ_CHECK(strcmp(v->rule, w->rule) != 0 || (!v->instance) != (!w->instance) ||
			         (v->instance && strcmp(v->instance, w->instance) != 0),
			         "two waivers of '%s[%s]'", w->rule, w->instance ? w->instance : "");
		}
		FZ_CHECK(cli_config_waiver(cfg, w->rule, w->instance) == w,
		         "cli_config_waiver('%s', '%s') misses it", w->rule,
		         w->instance ? w->instance : "(null)");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cli_config cfg = { .nfiles = 0 };
	struct ht_error err = { "" };
	int r;

	if (size > 65536)
		return 0;
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/settings", fz_workdir());
		snprintf(path, sizeof(path), "%s/hosttune.conf", dir);
	}
	n_lines = 1;
	for (size_t i = 0; i < size; i++)
		n_lines += data[i] == '\n';
	FZ_CHECK(fz_write_file(path, data, size) == 0, "write %s", path);

	fz_guard_begin(dir, false);
	r = cli_config_load(NULL, path, &cfg, &err);
	fz_guard_end();
	FZ_CHECK(r == 0 || r == -EINVAL, "cli_config_load returned %d: %s", r, err.msg);
	if (r == 0)
		check_config(&cfg);
	else
		check_place(err.msg, "the error");
	cli_config_free(&cfg);
	FZ_CHECK(!cfg.profile && !cfg.nsets && !cfg.nwaivers, "cli_config_free left something");
	return 0;
}
