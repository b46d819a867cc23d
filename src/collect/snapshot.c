/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Counter snapshots (collect/sample.h): what a sampled source's reading
 * holds, and the facts made from two of them. Apart from sample.c, whose
 * table calls the readers that call these.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/sample.h"
#include "engine/facts.h"
#include "shared/util.h"

/* ---- snapshots ---- */

static int snapshot_push(struct ht_snapshot *s, const char *name, uint64_t value, int error,
                         const char *source)
{
	struct ht_counter *c;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct ht_counter *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	c = &s->v[s->n];
	*c = (struct ht_counter){ .name = strdup(name), .value = value, .error = error,
		                  .source = source ? strdup(source) : NULL };
	if (!c->name || (source && !c->source)) {
		free(c->name);
		free(c->source);
		return -ENOMEM;
	}
	s->n++;
	s->sorted = false;
	return 0;
}

int ht_snapshot_add(struct ht_snapshot *s, const char *name, uint64_t value, const char *source)
{
	return snapshot_push(s, name, value, 0, source);
}

int ht_snapshot_add_error(struct ht_snapshot *s, const char *name, int err, const char *source)
{
	return snapshot_push(s, name, 0, err < 0 ? -err : err, source);
}

static int counter_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ht_counter *)a)->name, ((const struct ht_counter *)b)->name);
}

const struct ht_counter *ht_snapshot_find(struct ht_snapshot *s, const char *name)
{
	struct ht_counter key = { .name = (char *)name };

	if (!s || !s->n)
		return NULL;
	if (!s->sorted) {
		qsort(s->v, s->n, sizeof(*s->v), counter_cmp);
		s->sorted = true;
	}
	return bsearch(&key, s->v, s->n, sizeof(*s->v), counter_cmp);
}

void ht_snapshot_clear(struct ht_snapshot *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].name);
		free(s->v[i].source);
	}
	free(s->v);
	if (s->priv)
		(s->priv_free ? s->priv_free : free)(s->priv);
	*s = (struct ht_snapshot){ 0 };
}

int ht_sample_facts_default(struct ht_facts *f, struct ht_snapshot *first,
                            struct ht_snapshot *second, double seconds)
{
	for (size_t i = 0; i < second->n; i++) {
		const struct ht_counter *c = &second->v[i], *p;
		const char *unit = ht_fact_def_unit(c->name);
		_cleanup_free_ char *delta = NULL, *src = NULL;
		int r;

		if (c->error)
			r = ht_facts_set_unavailable(f, c->name, c->error, unit, c->source);
		else if (c->value > INT64_MAX)
			r = ht_facts_set_unavailable(f, c->name, ERANGE, unit, c->source);
		else
			r = ht_facts_set_int(f, c->name, (int64_t)c->value, unit, c->source);
		if (r < 0)
			return r;
		if (!first || !ht_fact_has_delta(c->name))
			continue;
		if (asprintf(&delta, "%s.delta", c->name) < 0)
			return -ENOMEM;
		p = ht_snapshot_find(first, c->name);
		if (!p)
			r = ht_facts_set_unavailable(f, delta, ENOENT, unit,
			                             "not in the first reading of --sample");
		else if (p->error || c->error)
			r = ht_facts_set_unavailable(f, delta, p->error ? p->error : c->error, unit,
			                             p->error ? p->source : c->source);
		else if (c->value < p->value) {
			if (asprintf(&src, "%s went backwards over --sample's %.3g s (%" PRIu64
			             " -> %" PRIu64 "): the counter was reset", c->source ? c->source
			             : c->name, seconds, p->value, c->value) < 0)
				return -ENOMEM;
			r = ht_facts_set_unavailable(f, delta, ESTALE, unit, src);
		} else if (c->value - p->value > INT64_MAX) {
			r = ht_facts_set_unavailable(f, delta, ERANGE, unit, c->source);
		} else {
			if (asprintf(&src, "%s, over --sample's %.3g s", c->source ? c->source : c->name,
			             seconds) < 0)
				return -ENOMEM;
			r = ht_facts_set_int(f, delta, (int64_t)(c->value - p->value), unit, src);
		}
		if (r < 0)
			return r;
	}
	return 0;
}
