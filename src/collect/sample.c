/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Counters over an interval: the sampled sources, their snapshots, and the
 * two readings of --sample TIME.
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/collect.h"
#include "collect/sample.h"
#include "engine/facts.h"
#include "shared/rootfs.h"
#include "shared/util.h"

/* The most sampled sources the table may hold (static_assert below). */
#define SAMPLE_SOURCES_MAX 16

#define P(...) ((const char *const[]){ __VA_ARGS__, NULL })
static const struct ht_sample_source sample_sources[] = {
	{ "nstat", P("nstat.*"), ht_nstat_snapshot, NULL },
	{ "tcp peers", P("peer.*"), ht_peers_snapshot, ht_peers_facts },
	{ "interface counters", P("nic.*.stats.*"), ht_nicstats_snapshot, NULL },
	{ "softnet", P("softnet.*"), ht_softnet_snapshot, ht_softnet_facts },
	{ "conntrack counters", P("conntrack.stat.drop", "conntrack.stat.early_drop",
	                          "conntrack.stat.insert_failed", "conntrack.stat.search_restart",
	                          "conntrack.stat.count"),
	  ht_ctstats_snapshot, NULL },
};
#undef P

_Static_assert(ARRAY_SIZE(sample_sources) <= SAMPLE_SOURCES_MAX, "SAMPLE_SOURCES_MAX is too small");

const struct ht_sample_source *ht_sample_sources(size_t *n)
{
	*n = ARRAY_SIZE(sample_sources);
	return sample_sources;
}

/* ---- the sampler ---- */

struct ht_sampler {
	char *root;         /* NULL: this host */
	double seconds;     /* --sample; 0 without */
	bool want[SAMPLE_SOURCES_MAX];
	bool started;       /* the first readings are taken */
	bool second_taken;  /* and the second */
	struct timespec t1; /* just before the first reading */
	double measured;    /* seconds between the first and second readings' starts */
	struct ht_snapshot first[SAMPLE_SOURCES_MAX], second[SAMPLE_SOURCES_MAX];
};

int ht_sampler_new(const char *root, struct ht_sampler **out)
{
	struct ht_sampler *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	if (!ht_root_is_live(root) && !(s->root = strdup(root))) {
		free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void ht_sampler_free(struct ht_sampler *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(sample_sources); i++) {
		ht_snapshot_clear(&s->first[i]);
		ht_snapshot_clear(&s->second[i]);
	}
	free(s->root);
	free(s);
}

/*
 * @pattern matches @name as a fact (nstat.*, nic.*.rx_errors) or as the
 * FAMILY.SUFFIX form an `each` rule reads (nic.rx_errors.delta for
 * nic.*.rx_errors), with or without .delta.
 */
static bool pattern_matches(const char *pattern, const char *name)
{
	char base[256], fam[256];
	const char *star = strstr(pattern, ".*.");
	size_t len = strlen(name);

	if (len >= sizeof(base))
		return false;
	memcpy(base, name, len + 1);
	if (len > 6 && strcmp(base + len - 6, ".delta") == 0)
		base[len - 6] = '\0';
	if (fnmatch(pattern, base, 0) == 0)
		return true;
	if (!star || strlen(pattern) >= sizeof(fam))
		return false;
	/* "FAMILY.*.SUFFIX" -> "FAMILY.SUFFIX" */
	snprintf(fam, sizeof(fam), "%.*s.%s", (int)(star - pattern), pattern, star + 3);
	return fnmatch(fam, base, 0) == 0;
}

bool ht_sampler_want(struct ht_sampler *s, const char *name)
{
	bool any = false;

	for (size_t i = 0; i < ARRAY_SIZE(sample_sources); i++)
		for (const char *const *p = sample_sources[i].provides; *p; p++)
			if (!name || pattern_matches(*p, name)) {
				s->want[i] = true;
				any = true;
				break;
			}
	return any;
}

static double ts_diff(const struct timespec *a, const struct timespec *b)
{
	return (double)(a->tv_sec - b->tv_sec) + (double)(a->tv_nsec - b->tv_nsec) / 1e9;
}

/* One reading of source @i into @snap. 0 or -ENOMEM. */
static int read_source(struct ht_sampler *s, size_t i, struct ht_snapshot *snap)
{
	ht_snapshot_clear(snap);
	clock_gettime(CLOCK_MONOTONIC, &snap->at);
	return sample_sources[i].read(s->root, snap);
}

int ht_sampler_start(struct ht_sampler *s, double seconds)
{
	if (!(seconds > 0) || s->started)
		return -EINVAL;
	s->seconds = seconds;
	s->started = true;
	clock_gettime(CLOCK_MONOTONIC, &s->t1);
	for (size_t i = 0; i < ARRAY_SIZE(sample_sources); i++)
		if (s->want[i]) {
			int r = read_source(s, i, &s->first[i]);

			if (r < 0)
				return r;
		}
	return 0;
}

/*
 * Sleeps towards @until (CLOCK_MONOTONIC) telling ht_collect_progress() what
 * is sampled and the seconds left, again each time the whole seconds left
 * go down; returns within the last second (the caller sleeps out the rest).
 */
static void wait_told(const struct ht_sampler *s, const struct timespec *until)
{
	char what[256];
	size_t start, at;

	/* "sampling 60 s of nstat, softnet" (the interval first: a narrow terminal cuts the end). */
	start = at = (size_t)snprintf(what, sizeof(what), "sampling %g s of", s->seconds);

	for (size_t i = 0; i < ARRAY_SIZE(sample_sources) && at < sizeof(what); i++)
		if (s->want[i])
			at += (size_t)snprintf(what + at, sizeof(what) - at, "%s %s",
			                       at > start ? "," : "", sample_sources[i].name);
	if (at == start)
		snprintf(what, sizeof(what), "sampling %g s", s->seconds);
	for (;;) {
		struct timespec now, next;
		double left, step;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = ts_diff(until, &now);
		ht_collect_progress(what, left);
		/* To where the whole seconds left go down: 2.4 s left -> sleep 0.4 s. */
		if (left <= 1)
			return;
		step = left - floor(left);
		if (step < 0.001)
			step = 1;
		next = now;
		next.tv_nsec += (long)(step * 1e9);
		while (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
}

/* The second reading of every wanted source, once the interval is over. 0 or -ENOMEM. */
static int take_second(struct ht_sampler *s)
{
	struct timespec until = s->t1, now;

	if (s->second_taken)
		return 0;
	s->second_taken = true;
	until.tv_sec += (time_t)s->seconds;
	until.tv_nsec += (long)((s->seconds - (double)(time_t)s->seconds) * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	if (ht_collect_progress_wanted())
		wait_told(s, &until);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
	ht_collect_progress(NULL, 0);
	clock_gettime(CLOCK_MONOTONIC, &now);
	s->measured = ts_diff(&now, &s->t1);
	for (size_t i = 0; i < ARRAY_SIZE(sample_sources); i++)
		if (s->want[i]) {
			int r = read_source(s, i, &s->second[i]);

			if (r < 0)
				return r;
		}
	return 0;
}

int ht_sampler_collect(struct ht_sampler *s, struct ht_facts *f, const char *name)
{
	ht_sample_facts_fn facts;
	size_t i;
	int r;

	for (i = 0; i < ARRAY_SIZE(sample_sources); i++)
		if (strcmp(sample_sources[i].name, name) == 0)
			break;
	if (i == ARRAY_SIZE(sample_sources))
		return -ENOENT;
	facts = sample_sources[i].facts ? sample_sources[i].facts : ht_sample_facts_default;
	if (s->started) {
		r = take_second(s);
		if (r < 0)
			return r;
	}
	if (s->started && s->want[i])
		return facts(f, &s->first[i], &s->second[i],
		             ts_diff(&s->second[i].at, &s->first[i].at));
	/* Without --sample, or a source nobody wanted at the start: one reading, no interval. */
	r = read_source(s, i, &s->second[i]);
	return r < 0 ? r : facts(f, NULL, &s->second[i], 0);
}

int ht_sampler_seconds_fact(struct ht_sampler *s, struct ht_facts *f)
{
	char src[64];
	int r;

	if (!s->started)
		return ht_facts_set_unavailable(f, "sample.seconds", ENODATA, "seconds",
		                                "no --sample: counters since boot only");
	r = take_second(s);
	if (r < 0)
		return r;
	snprintf(src, sizeof(src), "--sample %gs, measured (CLOCK_MONOTONIC)", s->seconds);
	return ht_facts_set_dec(f, "sample.seconds", s->measured, "seconds", src);
}

int ht_sampler_no_delta(struct ht_sampler *s, struct ht_facts *f, const char *name)
{
	size_t len = strlen(name);
	char base[256];

	if (len <= 6 || len - 6 >= sizeof(base) || strcmp(name + len - 6, ".delta") != 0)
		return 0;
	memcpy(base, name, len - 6);
	base[len - 6] = '\0';
	if (!ht_fact_has_delta(base) || ht_facts_get(f, name))
		return 0;
	if (!s->started)
		return ht_facts_set_unavailable(f, name, ENODATA, ht_fact_def_unit(base),
		                                "no --sample: counters since boot only");
	return ht_facts_set_unavailable(f, name, ENOENT, ht_fact_def_unit(base),
	                                ht_facts_get(f, base) ? "not in both readings of --sample"
	                                                      : "no such counter");
}
