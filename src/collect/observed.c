/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A watch recording as a source of facts: audit --observed FILE. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/collect.h"
#include "collect/watch.h"
#include "engine/facts.h"
#include "engine/value.h"
#include "shared/util.h"

static int set_num(struct ht_facts *f, const char *name, double v, bool integer,
                   const char *unit, const char *source)
{
	struct ht_value val = integer ? ht_int((int64_t)v) : ht_dec(v);

	return ht_facts_set(f, name, &val, unit, source);
}

int ht_collect_observed(struct ht_facts *f, const char *path, double headroom,
                        struct ht_error *err)
{
	_cleanup_free_ struct ht_watch_sample *samples = NULL;
	_cleanup_free_ char *src = NULL;
	struct ht_watch_summary sum;
	struct ht_value v;
	size_t n = 0;
	int r;

	r = ht_watch_record_load(path, &samples, &n, err);
	if (r >= 0)
		r = ht_watch_replay(samples, n, headroom, path, &sum);
	if (r < 0) {
		if (!err->msg[0])
			ht_error_set(err, -r, "%s", strerror(-r));
		return r;
	}
	if (asprintf(&src, "--observed %s", path) < 0) {
		src = NULL;
		return -ENOMEM;
	}
	v = (struct ht_value){ .type = HT_T_STR, .s = (char *)path };
	if ((r = set_num(f, "observed.peak_count", (double)sum.peak_count, true, "entries",
	                 src)) < 0 ||
	    (r = set_num(f, "observed.pinned_samples", (double)sum.pinned_samples, true,
	                 "samples", src)) < 0 ||
	    (r = set_num(f, "observed.samples", (double)sum.samples, true, "samples", src)) < 0 ||
	    (r = set_num(f, "observed.max", (double)sum.max, true, "entries", src)) < 0 ||
	    (r = set_num(f, "observed.time_wait", (double)sum.time_wait, true, "seconds",
	                 src)) < 0 ||
	    (r = ht_facts_set(f, "observed.source", &v, NULL, src)) < 0)
		return r;
	if (sum.have_rate &&
	    ((r = set_num(f, "observed.peak_rate", sum.peak_rate, false, "connections/s",
	                  src)) < 0 ||
	     (r = set_num(f, "observed.mean_rate", sum.mean_rate, false, "connections/s",
	                  src)) < 0))
		return r;
	if (sum.have_drops)
		return set_num(f, "observed.drops", (double)sum.drops, true, "packets", src);
	return 0;
}
