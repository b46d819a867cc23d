/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/bootconf-internal.h"
#include "shared/bootconf.h"
#include "shared/util.h"

/* bootconf: systemd unit files, their drop-ins and system.conf ([Service], [Manager]). */

/* systemd's UNIT_NAME_MAX (src/basic/unit-name.h). */
#define UNIT_NAME_MAX 256

bool ht_unit_name_valid(const char *unit)
{
	size_t n = unit ? strlen(unit) : 0, sl = strlen(".service");

	if (n <= sl || n >= UNIT_NAME_MAX || unit[0] == '.' || !endswith(unit, ".service"))
		return false;
	for (const char *c = unit; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr(":_.@\\-", *c))
			return false;
	/* An instance's '@' starts no name and appears once ("foo@bar.service", "foo@.service"). */
	return unit[0] != '@' && (!strchr(unit, '@') || strchr(unit, '@') == strrchr(unit, '@'));
}

/*
 * One number of rlimit_parse_one() for RLIMIT_NOFILE (src/basic/rlimit-util.c,
 * rlimit_parse_u64()): "infinity", or a decimal number (safe_atou64(): no sign,
 * no unit suffix for a count). Returns 0 or -EINVAL.
 */
static int rlimit_one(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == strlen("infinity") && strncmp(s, "infinity", len) == 0) {
		*out = UINT64_MAX;
		return 0;
	}
	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]) || v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

int ht_rlimit_parse(const char *value, uint64_t *soft, uint64_t *hard)
{
	const char *colon;
	uint64_t s, h;

	if (!value)
		return -EINVAL;
	colon = strchr(value, ':');
	if (!colon) {
		if (rlimit_one(value, strlen(value), &s) < 0)
			return -EINVAL;
		h = s;
	} else if (rlimit_one(value, (size_t)(colon - value), &s) < 0 ||
	           rlimit_one(colon + 1, strlen(colon + 1), &h) < 0)
		return -EINVAL;
	if (s > h)
		return -EILSEQ;
	*soft = s;
	*hard = h;
	return 0;
}

/*
 * The @section ("[Service]", "[Manager]") @key= lines of one unit file,
 * drop-in or manager configuration file, as systemd's config_parse() cuts
 * them (src/shared/conf-parser.c): a trailing backslash joins the next
 * line, '#' or ';' starts a comment, "[Section]" switches sections, blanks
 * around the key and the value go. For LimitNOFILE and DefaultLimitNOFILE, a
 * value systemd's config_parse_limit() / config_parse_rlimit() refuses
 * (empty, not a number, soft above hard) is logged and ignored there, so it
 * is a problem here and gives no assignment; any other key's value is
 * recorded as written, "" included.
 */
static int unit_parse(struct ht_conf *c, struct pendings *p, const struct content *ct,
                      const char *section, const char *key)
{
	const char *file = c->files[c->nfiles - 1];
	_cleanup_free_ char *joined = NULL;
	bool service = false;
	unsigned lineno = 0, first = 0;
	const char *raw;
	size_t pos = 0, len;
	int r = 0;

	while (r >= 0 && bootconf_next_line(ct, &pos, &raw, &len)) {
		_cleanup_free_ char *whole = NULL;
		char *l, *eq;
		uint64_t s, h;

		lineno++;
		if (len > LONG_LINE_MAX)
			return bootconf_add_problem(c, HT_CONF_UNREADABLE, file, lineno, NULL, "line longer "
						    "than %u bytes: systemd stops reading the file here",
						    LONG_LINE_MAX);
		if (!joined)
			first = lineno;
		if (asprintf(&whole, "%s%.*s", joined ? joined : "", (int)len, raw) < 0)
			return (whole = NULL), -ENOMEM;
		free(joined);
		joined = NULL;
		l = bootconf_strstrip(whole);
		/* A comment line is never continued. */
		if (!*l || strchr(SYSTEMD_COMMENTS, *l))
			continue;
		if (endswith(l, "\\")) {
			l[strlen(l) - 1] = ' ';
			if (!(joined = strdup(l)))
				return -ENOMEM;
			continue;
		}
		if (l[0] == '[') {
			service = streq(l, section);
			continue;
		}
		eq = strchr(l, '=');
		if (!service || !eq)
			continue;
		*eq = '\0';
		if (!streq(bootconf_strstrip(l), key))
			continue;
		{
			const char *v = bootconf_strstrip(eq + 1);
			struct pending t = { .file = file, .line = first };

			if (!streq(key, "LimitNOFILE") && !streq(key, "DefaultLimitNOFILE")) {
				r = bootconf_pending_add(p, key, v, &t);
				continue;
			}
			r = ht_rlimit_parse(v, &s, &h);
			if (r == -EILSEQ)
				r = bootconf_add_problem(c, HT_CONF_BAD_VALUE, file, first, key,
							 "%s=%s: soft limit above the hard one; systemd "
							 "ignores the line", key, v);
			else if (r < 0 && !*v)
				r = bootconf_add_problem(c, HT_CONF_MISSING_VALUE, file, first, key,
							 "%s= without a value: systemd ignores the line "
							 "(it is no reset), the earlier value stays", key);
			else if (r < 0)
				r = bootconf_add_problem(c, HT_CONF_BAD_VALUE, file, first, key,
							 "%s=%s: not a number, N:M or infinity; systemd "
							 "ignores the line", key, v);
			else
				r = bootconf_pending_add(p, key, v, &t);
		}
	}
	return r;
}

/* @dirs gets "PREFIX/systemd/system/NAME.d" for the five prefixes of bootconf_systemd_dirs(). */
static int unit_dirs(const char *root, const char *name, const char *suffix, char ***dirs,
                     size_t *n)
{
	_cleanup_free_ char *sub = NULL;
	char *d[5] = { 0 };
	size_t nd = 0;
	int r;

	if (asprintf(&sub, "systemd/system/%s%s", name, suffix) < 0)
		return -ENOMEM;
	r = bootconf_systemd_dirs(root, sub, d, &nd);
	for (size_t i = 0; i < nd && r >= 0; i++)
		r = bootconf_strv_push(dirs, n, d[i]);
	bootconf_dirs_free(d, nd);
	return r;
}

/*
 * The names whose NAME.d systemd reads for @unit, most specific first
 * (unit_file_find_dirs() in src/shared/dropin.c): the unit, for an instance
 * its template, then each "-" prefix ("foo-bar-.service" and "foo-.service"
 * for "foo-bar-baz.service"), each of those again for a template.
 */
static int unit_names(const char *unit, char ***names, size_t *n)
{
	_cleanup_free_ char *name = strdup(unit);
	int r;

	if (!name)
		return -ENOMEM;
	for (;;) {
		char *at = strchr(name, '@'), *dot = strrchr(name, '.'), *dash;
		_cleanup_free_ char *tmpl = NULL, *prefix = NULL, *next = NULL;

		r = bootconf_strv_push(names, n, name);
		if (r < 0)
			return r;
		if (at && at + 1 < dot) {
			if (asprintf(&tmpl, "%.*s@%s", (int)(at - name), name, dot) < 0)
				return -ENOMEM;
			r = bootconf_strv_push(names, n, tmpl);
			if (r < 0)
				return r;
		}
		/* The prefix: the part before '@', or before the type suffix. */
		prefix = strndup(name, (size_t)((at ? at : dot) - name));
		if (!prefix)
			return -ENOMEM;
		if (*prefix && prefix[strlen(prefix) - 1] == '-')
			prefix[strlen(prefix) - 1] = '\0';
		dash = strrchr(prefix, '-');
		if (!dash || dash == prefix)
			return 0;
		dash[1] = '\0';
		if (asprintf(&next, "%s%.*s%s", prefix, at ? (int)(dot - at) : 0, at ? at : "",
		             dot) < 0)
			return -ENOMEM;
		free(name);
		name = TAKE_PTR(next);
	}
}

int ht_unit_limits_read(const char *root, const char *unit, struct ht_conf *out)
{
	return ht_unit_setting_read(root, unit, "LimitNOFILE", out);
}

int ht_unit_setting_read(const char *root, const char *unit, const char *key, struct ht_conf *out)
{
	struct ht_conf c = { 0 };
	struct pendings p = { 0 };
	struct entry *e = NULL;
	char **names = NULL, **dirs = NULL;
	size_t nnames = 0, ndirs = 0, ne = 0;
	int r;

	if (!out || !ht_unit_name_valid(unit) || !key || !*key || strchr(key, '='))
		return -EINVAL;
	r = unit_names(unit, &names, &nnames);
	/* The unit file: the first directory that has the unit, else its template. */
	for (size_t i = 0; i < nnames && i < 2 && r >= 0 && c.nfiles == 0 && c.nmasked == 0; i++) {
		if (i == 1 && !strchr(unit, '@'))
			break;
		r = unit_dirs(root, names[i], "", &dirs, &ndirs);
		for (size_t k = 0; k < ndirs && r >= 0; k++) {
			struct content ct = { 0 };

			r = bootconf_read_entry(&c, root, dirs[k], &ct);
			if (r > 0) {
				r = unit_parse(&c, &p, &ct, "[Service]", key);
				free(ct.buf);
				break;
			}
			if (c.nmasked)
				break;
		}
		bootconf_strv_free_n(dirs, ndirs);
		dirs = NULL;
		ndirs = 0;
	}
	/* The drop-in directories: each search path's NAME.d for every name, then service.d. */
	{
		static const char *const prefixes[] = { "/etc/", "/run/", "/usr/local/lib/",
		                                         "/usr/lib/", "/lib/" };
		char **byname = NULL, **typed = NULL;
		size_t nbyname = 0, ntyped = 0;

		for (size_t i = 0; i < nnames && r >= 0; i++)
			r = unit_dirs(root, names[i], ".d", &byname, &nbyname);
		if (r >= 0)
			r = unit_dirs(root, "service", ".d", &typed, &ntyped);
		/* Reordered by search path first, the names within each. */
		for (size_t pi = 0; pi < ARRAY_SIZE(prefixes) && r >= 0; pi++) {
			for (size_t i = 0; i < nbyname && r >= 0; i++)
				if (strncmp(byname[i], prefixes[pi], strlen(prefixes[pi])) == 0)
					r = bootconf_strv_push(&dirs, &ndirs, byname[i]);
		}
		for (size_t i = 0; i < ntyped && r >= 0; i++)
			r = bootconf_strv_push(&dirs, &ndirs, typed[i]);
		bootconf_strv_free_n(byname, nbyname);
		bootconf_strv_free_n(typed, ntyped);
	}
	if (r >= 0)
		r = bootconf_list_files(&c, root, (const char *const *)dirs, ndirs, STYLE_SYSTEMD, &e, &ne);
	for (size_t i = 0; i < ne && r >= 0; i++) {
		struct content ct = { 0 };

		r = bootconf_read_entry(&c, root, e[i].path, &ct);
		if (r <= 0)
			continue;
		r = unit_parse(&c, &p, &ct, "[Service]", key);
		free(ct.buf);
	}
	if (r >= 0)
		r = bootconf_group(&c, &p);
	bootconf_pendings_free(&p);
	bootconf_entries_free(e, ne);
	bootconf_strv_free_n(dirs, ndirs);
	bootconf_strv_free_n(names, nnames);
	if (r < 0) {
		ht_conf_free(&c);
		return r;
	}
	*out = c;
	return 0;
}

int ht_manager_setting_read(const char *root, const char *key, struct ht_conf *out)
{
	struct ht_conf c = { 0 };
	struct pendings p = { 0 };
	struct entry *e = NULL;
	struct content ct = { 0 };
	char *dirs[5] = { 0 };
	size_t ndirs = 0, ne = 0;
	int r;

	if (!out || !key || !*key || strchr(key, '='))
		return -EINVAL;
	/* The main file first (systemd 252's config_parse_many_nulstr()), then its drop-ins. */
	r = bootconf_read_entry(&c, root, "/etc/systemd/system.conf", &ct);
	if (r > 0) {
		r = unit_parse(&c, &p, &ct, "[Manager]", key);
		free(ct.buf);
	}
	if (r >= 0)
		r = bootconf_systemd_dirs(root, "systemd/system.conf.d", dirs, &ndirs);
	if (r >= 0)
		r = bootconf_list_files(&c, root, (const char *const *)dirs, ndirs, STYLE_SYSTEMD, &e, &ne);
	for (size_t i = 0; i < ne && r >= 0; i++) {
		ct = (struct content){ 0 };
		r = bootconf_read_entry(&c, root, e[i].path, &ct);
		if (r <= 0)
			continue;
		r = unit_parse(&c, &p, &ct, "[Manager]", key);
		free(ct.buf);
	}
	if (r >= 0)
		r = bootconf_group(&c, &p);
	bootconf_pendings_free(&p);
	bootconf_entries_free(e, ne);
	bootconf_dirs_free(dirs, ndirs);
	if (r < 0) {
		ht_conf_free(&c);
		return r;
	}
	*out = c;
	return 0;
}
