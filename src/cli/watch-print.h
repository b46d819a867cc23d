/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include "collect/watch.h"

struct json_object;

/*
 * The printing of hosttune watch: what the sampler (collect/watch.h) measured,
 * as text lines for a person and as JSON for a program. Nothing here reads
 * the host.
 */

/* The column header of the sample lines. Returns 0 or -EIO. */
int ht_watch_format_header(FILE *out);

/* One sample as a line of text ("-" for an unknown rate). Returns 0 or -EIO. */
int ht_watch_format_sample(FILE *out, const struct ht_watch_sample *s);

/* The summary with the arithmetic of the recommendation spelled out. Returns 0 or -EIO. */
int ht_watch_format_summary(FILE *out, const struct ht_watch_summary *s);

/*
 * ht_watch_summary_json - {"samples", "duration", "interval", "max", "time_wait",
 * "peak_count", "peak_pct", "peak_rate", "peak_rate_over", "peak_rate_span",
 * "peak_interval_rate", "mean_rate", "inserts", "rate_lower_bound" (true: events
 * were lost, the three rates are lower bounds), "intervals_short", "events_lost"
 * (dropped at the receive queue, counted, included in "inserts"), "overruns",
 * "drops", "pinned_samples", "full_at_start", "ceiling", "headroom", "basis",
 * "working_set", "recommended_max", "source"}; unknown values are null. NULL on
 * ENOMEM.
 */
struct json_object *ht_watch_summary_json(const struct ht_watch_summary *s);
