/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tuned's active profile as a source of facts: the [sysctl] values it sets
 * when tuned starts (after systemd-sysctl), so that a value tuned wrote is
 * attributed to the profile, its owner.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/collect.h"
#include "engine/facts.h"
#include "shared/util.h"

#define ACTIVE_PROFILE "/etc/tuned/active_profile"
#define TUNED_CONF_MAX (256 * 1024)
#define INCLUDE_DEPTH 8

/* The last assignment of the wanted key so far. */
struct tuned_hit {
	char *value;
	char *file;
	unsigned line;
	char *profile;
};

static void hit_clear(struct tuned_hit *h)
{
	free(h->value);
	free(h->file);
	free(h->profile);
	*h = (struct tuned_hit){ 0 };
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* A [sysctl] key as tuned takes it: dots or slashes (net/core/somaxconn). */
static bool key_is(const char *k, const char *want)
{
	for (; *k && *want; k++, want++)
		if (!(*k == *want || (*k == '/' && *want == '.')))
			return false;
	return !*k && !*want;
}

/* Reads ROOT@path; 0 with *@buf, -ENOENT, another negative errno, -ENOMEM. */
static int read_text(const char *root, const char *path, char **buf)
{
	_cleanup_close_ int fd = ht_open_file(root, path);
	size_t len;

	if (fd < 0)
		return fd;
	return ht_read_fd(fd, TUNED_CONF_MAX, buf, &len);
}

static int profile(const char *root, const char *name, const char *key, unsigned depth,
                   struct tuned_hit *hit);

/* One tuned.conf: include= first, then its [sysctl] lines. */
static int conf(const char *root, const char *path, const char *name, const char *text,
                const char *key, unsigned depth, struct tuned_hit *hit)
{
	_cleanup_free_ char *copy = strdup(text);
	char *p, *nl, section[64] = "";
	unsigned lineno = 0;
	int r;

	if (!copy)
		return -ENOMEM;
	for (p = copy; p && *p; p = nl) {
		char *line, *eq;

		nl = strchr(p, '\n');
		if (nl)
			*nl++ = '\0';
		lineno++;
		line = trim(p);
		if (!*line || *line == '#' || *line == ';')
			continue;
		if (*line == '[') {
			char *end = strchr(line, ']');

			if (end && (size_t)(end - line - 1) < sizeof(section)) {
				memcpy(section, line + 1, (size_t)(end - line - 1));
				section[end - line - 1] = '\0';
			} else
				section[0] = '\0';
			continue;
		}
		eq = strchr(line, '=');
		if (!eq)
			continue;
		*eq = '\0';
		if (strcmp(section, "main") == 0 && strcmp(trim(line), "include") == 0) {
			char *parents = trim(eq + 1), *save = NULL;

			for (char *t = strtok_r(parents, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
				r = profile(root, t, key, depth + 1, hit);
				if (r == -ENOMEM)
					return r;
			}
			continue;
		}
		if (strcmp(section, "sysctl") != 0 || !key_is(trim(line), key))
			continue;
		hit_clear(hit);
		hit->value = strdup(trim(eq + 1));
		hit->file = strdup(path);
		hit->profile = strdup(name);
		hit->line = lineno;
		if (!hit->value || !hit->file || !hit->profile)
			return -ENOMEM;
	}
	return 0;
}

/* Profile @name's tuned.conf, the first of its places that exists. */
static int profile(const char *root, const char *name, const char *key, unsigned depth,
                   struct tuned_hit *hit)
{
	static const char *const dirs[] = { "/etc/tuned/profiles", "/etc/tuned",
		                            "/usr/lib/tuned/profiles", "/usr/lib/tuned" };

	if (depth > INCLUDE_DEPTH || !*name || strchr(name, '/') || strcmp(name, "..") == 0)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		_cleanup_free_ char *path = NULL, *text = NULL;
		int r;

		if (asprintf(&path, "%s/%s/tuned.conf", dirs[i], name) < 0)
			return -ENOMEM;
		r = read_text(root, path, &text);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			continue;
		return conf(root, path, name, text, key, depth, hit);
	}
	return 0;
}

int ht_collect_tuned_fact(struct ht_facts *f, const char *root, const char *name)
{
	_cleanup_free_ char *active = NULL, *src = NULL, *names = NULL;
	struct tuned_hit hit = { 0 };
	const char *key = NULL;
	char *save = NULL;
	long long n;
	int r;

	if (strcmp(name, "tuned.profile") != 0) {
		if (strncmp(name, "tuned.sysctl.", 13) != 0)
			return 0;
		key = name + 13;
	}
	r = read_text(root, ACTIVE_PROFILE, &active);
	if (r == -ENOMEM)
		return r;
	if (r >= 0) {
		char *t = trim(active);

		if (!*t)
			r = -ENOENT;
		else if (!(names = strdup(t)))
			return -ENOMEM;
	}
	if (r < 0)
		return ht_facts_set_unavailable(f, name, -r, NULL,
		                                ACTIVE_PROFILE ": tuned has no active profile");
	if (!key)
		return ht_facts_set_str(f, name, names, ACTIVE_PROFILE);
	/* Several profiles are merged in order: the last assignment wins. */
	for (char *t = strtok_r(names, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		r = profile(root, t, key, 0, &hit);
		if (r < 0) {
			hit_clear(&hit);
			return r;
		}
	}
	if (!hit.value)
		return ht_facts_set_unavailable(f, name, ENOENT, NULL,
		                                "the active tuned profile's [sysctl]");
	r = asprintf(&src, "%s:%u (tuned profile %s)", hit.file, hit.line, hit.profile);
	if (r < 0) {
		src = NULL;
		hit_clear(&hit);
		return -ENOMEM;
	}
	r = ht_parse_int64(hit.value, &n) < 0
	    ? ht_facts_set_unavailable(f, name, EINVAL, NULL, src)
	    : ht_facts_set_int(f, name, n, NULL, src);
	hit_clear(&hit);
	return r;
}
