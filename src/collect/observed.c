/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A watch recording as a source of facts: audit --observed FILE. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/collect.h"
#include "collect/watch.h"
#include "engine/facts.h"
#include "engine/value.h"
#include "shared/util.h"

/*
 * The kernel keeps the entry count in an int (atomic_t count, struct
 * netns_ct, include/net/netns/conntrack.h), and nf_conntrack_max and the
 * TIME_WAIT timeout are int sysctls (proc_dointvec*, nf_conntrack_standalone.c):
 * a recording with more is not of a kernel, and the rules' arithmetic on it
 * (peak count x burst) would overflow.
 */
static int check_kernel_range(const struct ht_watch_sample *v, size_t n, const char *path,
                              struct ht_error *err)
{
	for (size_t i = 0; i < n; i++) {
		const char *field = v[i].count > INT32_MAX    ? "count"
		                    : v[i].max > INT32_MAX     ? "max"
		                    : v[i].time_wait > INT32_MAX ? "time_wait"
		                                                 : NULL;
		int64_t x = v[i].count > INT32_MAX ? v[i].count
		            : v[i].max > INT32_MAX ? v[i].max : v[i].time_wait;

		if (field)
			return ht_error_set(err, ERANGE,
			                    "%s: sample %zu (t = %.9g s): expected %s at most "
			                    "2147483647 (an int in the kernel), found %" PRId64,
			                    path, i + 1, v[i].t, field, x);
	}
	return 0;
}

int ht_collect_observed(struct ht_facts *f, const char *path, double headroom,
                        struct ht_error *err)
{
	_cleanup_free_ struct ht_watch_sample *samples = NULL;
	_cleanup_free_ char *src = NULL, *rate_src = NULL;
	struct ht_watch_summary sum;
	size_t n = 0;
	int r;

	r = ht_watch_record_load(path, &samples, &n, err);
	if (r >= 0)
		r = check_kernel_range(samples, n, path, err);
	if (r >= 0)
		r = ht_watch_replay(samples, n, headroom, path, &sum);
	/*
	 * A new-connection rate is a packet rate at least: 2^31 a second is more
	 * than ten 100 Gb/s links carry in 64-byte frames (148.8 million each).
	 * The same bound as the counts keeps the rules' rate x TIME_WAIT x burst
	 * inside their 64-bit integers.
	 */
	if (r >= 0 && sum.have_rate && sum.peak_rate > INT32_MAX)
		r = ht_error_set(err, ERANGE,
		                 "%s: expected a peak rate of at most 2147483647 new connections/s,"
		                 " found %.1f/s", path, sum.peak_rate);
	if (r < 0) {
		if (!err->msg[0])
			ht_error_set(err, -r, "%s", strerror(-r));
		return r;
	}
	if (asprintf(&src, "--observed %s", path) < 0) {
		src = NULL;
		return -ENOMEM;
	}
	/* The rates of a recording that lost events say so where they come from. */
	if (asprintf(&rate_src, "--observed %s%s", path,
	             sum.rate_lower_bound ? " (a lower bound: the recording lost NEW events)"
	                                  : "") < 0) {
		rate_src = NULL;
		return -ENOMEM;
	}
	if ((r = ht_facts_set_int(f, "observed.peak_count", sum.peak_count, "entries", src)) < 0 ||
	    (r = ht_facts_set_int(f, "observed.pinned_samples", (int64_t)sum.pinned_samples,
	                          "samples", src)) < 0 ||
	    (r = ht_facts_set_int(f, "observed.samples", (int64_t)sum.samples, "samples",
	                          src)) < 0 ||
	    (r = ht_facts_set_int(f, "observed.max", sum.max, "entries", src)) < 0 ||
	    (r = ht_facts_set_int(f, "observed.time_wait", sum.time_wait, "seconds", src)) < 0 ||
	    (r = ht_facts_set_str(f, "observed.source", path, src)) < 0)
		return r;
	if (sum.have_rate) {
		if ((r = ht_facts_set_dec(f, "observed.peak_rate", sum.peak_rate, "connections/s",
		                          rate_src)) < 0 ||
		    (r = ht_facts_set_dec(f, "observed.mean_rate", sum.mean_rate, "connections/s",
		                          rate_src)) < 0 ||
		    (r = ht_facts_set_bool(f, "observed.rate_lower_bound", sum.rate_lower_bound,
		                           src)) < 0)
			return r;
	}
	if (sum.have_events_lost &&
	    (r = ht_facts_set_int(f, "observed.events_lost", sum.events_lost, "events", src)) < 0)
		return r;
	if (sum.have_overruns &&
	    (r = ht_facts_set_int(f, "observed.overruns", sum.overruns, "overruns", src)) < 0)
		return r;
	if (sum.have_drops)
		return ht_facts_set_int(f, "observed.drops", sum.drops, "packets", src);
	return 0;
}
