/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The profiles of the rules directories, and the one a host's services point to. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/rules-internal.h"
#include "shared/escape.h"

/* Frees what loading a profile into a ruleset made of dirs only (@p) holds. */
static void probe_clear(struct ht_ruleset *p)
{
	for (size_t i = 0; i < p->nvars; i++) {
		free(p->vars[i].name);
		ht_value_clear(&p->vars[i].value);
	}
	free(p->vars);
	for (size_t i = 0; i < p->nstrings; i++)
		free(p->strings[i]);
	free(p->strings);
	free(p->profile);
	free(p->profile_desc);
}

void ht_profile_infos_free(struct ht_profile_info *p, size_t n)
{
	for (size_t i = 0; p && i < n; i++) {
		free(p[i].name);
		free(p[i].path);
		free(p[i].description);
		free(p[i].service);
		free(p[i].error);
	}
	free(p);
}

/* Profile @name read alone, with its includes: its description and workload.service. */
static int profile_info(const struct ht_ruleset *rs, const char *name, const char *path,
                        struct ht_profile_info *out, struct ht_error *err)
{
	struct ht_ruleset probe = { .dirs = rs->dirs, .ndirs = rs->ndirs };
	struct ht_error perr = { "" };
	struct ht_var *svc;
	int r = ht_ruleset_load_profile(&probe, name, &perr);

	/* One that does not load is listed with its error: the others still count. */
	if (r < 0 && r != -ENOMEM) {
		out->name = strdup(name);
		out->path = strdup(path);
		out->error = strdup(perr.msg[0] ? perr.msg : strerror(-r));
		r = out->name && out->path && out->error ? 0 : -ENOMEM;
		if (r < 0) {
			free(out->name);
			free(out->path);
			free(out->error);
			*out = (struct ht_profile_info){ 0 };
		}
		probe_clear(&probe);
		return r;
	}
	if (r < 0)
		ht_error_set(err, ENOMEM, "out of memory");
	if (r >= 0) {
		svc = rules_var_find(&probe, "workload.service");
		out->name = strdup(name);
		out->path = strdup(path);
		out->description = probe.profile_desc ? strdup(probe.profile_desc) : NULL;
		out->service = svc && svc->value.type == HT_T_STR && svc->value.s[0] ?
		               strdup(svc->value.s) : NULL;
		if (!out->name || !out->path || (probe.profile_desc && !out->description) ||
		    (svc && svc->value.type == HT_T_STR && svc->value.s[0] && !out->service)) {
			free(out->name);
			free(out->path);
			free(out->description);
			free(out->service);
			*out = (struct ht_profile_info){ 0 };
			r = -ENOMEM;
		}
	}
	probe_clear(&probe);
	return r;
}

int ht_ruleset_profiles(const struct ht_ruleset *rs, struct ht_profile_info **out, size_t *n,
                        struct ht_error *err)
{
	struct ht_ruleset probe = { .dirs = rs->dirs, .ndirs = rs->ndirs };
	char **names = NULL;
	size_t nnames = 0;
	struct ht_profile_info *list = NULL;
	size_t count = 0;
	int r = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; r >= 0 && i < rs->ndirs; i++) {
		_cleanup_free_ char *dir = NULL;

		if (asprintf(&dir, "%s/profiles", rs->dirs[i]) < 0)
			r = -ENOMEM;
		else if ((r = rules_list_dir(dir, ".profile", &names, &nnames)) < 0)
			ht_error_set(err, -r, "%s: %s", dir, strerror(-r));
	}
	if (r >= 0 && nnames && !(list = calloc(nnames, sizeof(*list))))
		r = -ENOMEM;
	for (size_t i = 0; r >= 0 && i < nnames; i++) {
		_cleanup_free_ char *path = NULL;
		size_t len = strlen(names[i]) - strlen(".profile");

		r = rules_find_file(&probe, "/profiles", names[i], &path, err);
		if (r == 1 || r == -ENOENT) { /* masked, or gone since the listing */
			r = 0;
			continue;
		}
		if (r < 0)
			break;
		names[i][len] = '\0';
		/* A file whose name no --profile can name is no profile. */
		if (!rules_valid_name(names[i]) || strchr(names[i], '.'))
			continue;
		r = profile_info(rs, names[i], path, &list[count], err);
		if (r >= 0)
			count++;
	}
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	probe_clear(&probe);
	if (r < 0) {
		ht_profile_infos_free(list, count);
		return r;
	}
	*out = list;
	*n = count;
	return 0;
}

/* The string fact @name when @f has it (asking its provider), else NULL; @r: the provider's error. */
static const char *str_fact(struct ht_facts *f, const char *name, int *r, struct ht_error *err)
{
	const struct ht_fact *fact = NULL;

	if (*r < 0 || !ht_fact_def_find(name))
		return NULL;
	*r = ht_facts_need(f, name, 0, &fact, err);
	return *r >= 0 && fact && fact->value.type == HT_T_STR ? fact->value.s : NULL;
}

/* Adds sentence @s (a new string, NULL on ENOMEM) to @h's evidence. */
static int add_evidence(struct ht_profile_hint *h, char *s)
{
	char **n;

	if (!s)
		return -ENOMEM;
	n = realloc(h->evidence, (h->nevidence + 1) * sizeof(*n));
	if (!n) {
		free(s);
		return -ENOMEM;
	}
	h->evidence = n;
	h->evidence[h->nevidence++] = s;
	return 0;
}

/*
 * The evidence for service @svc: its configuration file (SERVICE.config), its
 * unit file (SERVICE.unit), a process of that name and the port it listens on.
 */
static int service_evidence(struct ht_facts *f, const char *svc, struct ht_profile_hint *h,
                            struct ht_error *err)
{
	_cleanup_free_ char *cfg = NULL, *unit = NULL, *esc = NULL;
	const char *v, *procs, *ports;
	int r = 0;

	if (asprintf(&cfg, "%s.config", svc) < 0 || asprintf(&unit, "%s.unit", svc) < 0)
		return -ENOMEM;
	if ((v = str_fact(f, cfg, &r, err)) && v[0] &&
	    (r = add_evidence(h, ht_strdup_printf("%s exists", v))) < 0)
		return r;
	if ((v = str_fact(f, unit, &r, err)) && v[0] &&
	    (r = add_evidence(h, ht_strdup_printf("its unit %s is installed", v))) < 0)
		return r;
	procs = str_fact(f, "process.list", &r, err);
	/* The list has each name escaped (shared/escape.h): a service's name with '_' too. */
	esc = ht_name_escape(svc);
	if (!esc)
		return -ENOMEM;
	if (r < 0 || !procs || !ht_has_word(procs, esc))
		return r;
	ports = str_fact(f, "listener.list", &r, err);
	for (const char *p = ports; r >= 0 && p && *p;) {
		size_t len = strcspn(p, " ");
		_cleanup_free_ char *name = NULL, *port = strndup(p, len);

		if (!port || asprintf(&name, "listener.%s.process", port) < 0)
			return -ENOMEM;
		const struct ht_fact *fact = NULL;

		r = ht_facts_need(f, name, 0, &fact, err);
		if (r >= 0 && fact && fact->value.type == HT_T_STR && strcmp(fact->value.s, svc) == 0)
			return add_evidence(h, ht_strdup_printf("a process named %s listens on :%s", svc, port));
		p += len;
		p += *p == ' ';
	}
	if (r < 0)
		return r;
	return add_evidence(h, ht_strdup_printf("a process named %s runs", svc));
}

void ht_profile_hint_clear(struct ht_profile_hint *h)
{
	for (size_t i = 0; i < h->nevidence; i++)
		free(h->evidence[i]);
	free(h->evidence);
	*h = (struct ht_profile_hint){ 0 };
}

int ht_profile_suggest(const struct ht_profile_info *p, size_t n, const char *active,
                       struct ht_facts *f, struct ht_profile_hint *out, struct ht_error *err)
{
	struct ht_profile_hint best = { 0 };
	size_t active_score = 0;
	int r = 0;

	*out = (struct ht_profile_hint){ 0 };
	for (size_t i = 0; i < n; i++) {
		struct ht_profile_hint h = { .profile = i };

		if (!p[i].service)
			continue;
		r = service_evidence(f, p[i].service, &h, err);
		if (r < 0) {
			ht_profile_hint_clear(&h);
			ht_profile_hint_clear(&best);
			return r;
		}
		/* The profile in use keeps its place when it has as much to show. */
		if (active && strcmp(p[i].name, active) == 0 && h.nevidence > active_score)
			active_score = h.nevidence;
		if (h.nevidence > best.nevidence) {
			ht_profile_hint_clear(&best);
			best = h;
		} else
			ht_profile_hint_clear(&h);
	}
	if (best.nevidence == 0 || active_score >= best.nevidence ||
	    (active && strcmp(p[best.profile].name, active) == 0)) {
		ht_profile_hint_clear(&best);
		return 0;
	}
	*out = best;
	return 1;
}
