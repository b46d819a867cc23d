/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
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

/*
 * The live view on a terminal: a frame of four lines redrawn in place at
 * each sample instead of a line a sample (the table stays for pipes).
 *
 *   conntrack [###########.........]  3072 / 4096  75.0%
 *   new/s     _.-:=+*#  52.0, peak 80.0
 *   drops/s   0.0
 *   t 12.000 s, every 1.000 s: Ctrl-C ends with the summary
 *
 * The bar is the count against nf_conntrack_max in as many cells as the
 * width leaves (4 to 50), filled to the nearest (count x cells / max, at
 * most all), green below 75%, yellow from
 * 75%, red from 90% (hosttune's verdict on a limit). The sparkline is the
 * new connections a second of the last samples, oldest first, each a level
 * of 8 (rate / the largest shown x 7, to the nearest; all lowest when that
 * largest is 0; a blank for an unknown rate): U+2581 to U+2588 with @utf8,
 * else "_.-:=+*#". The drops a second are red when above 0. Each line is
 * cut to @width - 1 columns, so that no terminal wraps it.
 */
#define HT_WATCH_VIEW_HISTORY 64        /* rates the sparkline keeps */
#define HT_WATCH_VIEW_LINES 4           /* lines a frame has */

struct ht_watch_view {
	double rate[HT_WATCH_VIEW_HISTORY]; /* new conns/s, oldest first; NAN: unknown */
	size_t n;                /* rates held, at most HT_WATCH_VIEW_HISTORY */
	size_t drawn;            /* lines the last frame drew (0 before the first) */
	size_t width;            /* the terminal's columns, 40 to 1000 */
	double interval;         /* s, for the last line */
	double duration;         /* s, 0: until Ctrl-C */
	const char *source;      /* ht_watch_source(): "unknown: WHY" shows instead of the sparkline */
	bool color;              /* SGR colours (--color, NO_COLOR) */
	bool utf8;               /* block characters; else ASCII */
};

/*
 * ht_watch_view_init - an empty view for a terminal of @width columns
 * (held to 40..1000), sampled every @interval s for @duration s (0: until
 * Ctrl-C). @source is where the new connections are counted from
 * (ht_watch_source(); not copied: it must outlive the view, NULL for none):
 * one that starts with "unknown" is shown as it is in place of the
 * sparkline.
 */
void ht_watch_view_init(struct ht_watch_view *v, size_t width, double interval,
                        double duration, const char *source, bool color, bool utf8);

/*
 * ht_watch_view_draw - adds @s's rate to the sparkline and draws the frame:
 * the first below the cursor, each later one over the one before (the
 * cursor moved up by its lines, each line erased to its end), the cursor
 * left below it. Escape sequences go through ht_escape_raw(). Returns 0 or
 * -EIO.
 */
int ht_watch_view_draw(FILE *out, struct ht_watch_view *v, const struct ht_watch_sample *s);

/*
 * ht_watch_view_utf8 - whether the locale's environment names UTF-8: the
 * first of LC_ALL, LC_CTYPE and LANG that is set and not empty contains
 * "UTF-8" or "utf8" (in any case).
 */
bool ht_watch_view_utf8(void);

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
