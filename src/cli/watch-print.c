/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hosttune watch's printing: the sample lines, the summary text and its JSON. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli/watch-print.h"
#include "shared/escape.h"

static int out_status(FILE *out)
{
	return ferror(out) ? -EIO : 0;
}

int ht_watch_format_header(FILE *out)
{
	fprintf(out, "%9s %10s %10s %6s %10s %10s\n", "t/s", "count", "max", "%max", "new/s",
	        "drops/s");
	return out_status(out);
}

/* A rate in a 10-wide column, "-" when unknown, ">=" before a lower bound. */
static void put_rate(FILE *out, bool have, bool lower_bound, double v)
{
	char buf[64];

	if (!have)
		fprintf(out, " %10s", "-");
	else if (!lower_bound)
		fprintf(out, " %10.1f", v);
	else {
		snprintf(buf, sizeof(buf), ">=%.1f", v);
		fprintf(out, " %10s", buf);
	}
}

int ht_watch_format_sample(FILE *out, const struct ht_watch_sample *s)
{
	fprintf(out, "%9.3f %10" PRId64 " %10" PRId64 " %6.1f", s->t, s->count, s->max, s->pct_max);
	put_rate(out, s->have_new_rate, s->new_rate_lower_bound, s->new_per_s);
	put_rate(out, s->have_drop_rate, false, s->drops_per_s);
	fputc('\n', out);
	return out_status(out);
}

/* ---- the live view ---- */

void ht_watch_view_init(struct ht_watch_view *v, size_t width, double interval,
                        double duration, const char *source, bool color, bool utf8)
{
	*v = (struct ht_watch_view){ .width = width < 40 ? 40 : width > 1000 ? 1000 : width,
		                     .interval = interval, .duration = duration,
		                     .source = source, .color = color, .utf8 = utf8 };
}

bool ht_watch_view_utf8(void)
{
	static const char *const vars[] = { "LC_ALL", "LC_CTYPE", "LANG" };

	for (size_t i = 0; i < ARRAY_SIZE(vars); i++) {
		const char *l = getenv(vars[i]);

		if (l && *l)
			return strcasestr(l, "UTF-8") || strcasestr(l, "utf8");
	}
	return false;
}

/* A frame's line being built: its bytes, and the columns shown so far. */
struct view_line {
	char buf[4096];
	size_t len, cols, max_cols;
};

/* Appends @text (@cols columns wide on a terminal) unless it would pass max_cols. */
static bool line_put(struct view_line *l, const char *text, size_t cols)
{
	size_t n = strlen(text);

	if (l->cols + cols > l->max_cols || l->len + n >= sizeof(l->buf))
		return false;
	memcpy(l->buf + l->len, text, n + 1);
	l->len += n;
	l->cols += cols;
	return true;
}

/* Appends printable ASCII @text, cut at max_cols. */
static void line_text(struct view_line *l, const char *text)
{
	char one[2] = "";

	for (size_t i = 0; text[i]; i++) {
		one[0] = text[i];
		if (!line_put(l, one, 1))
			return;
	}
}

/* An SGR code (no columns): "" when colour is off. */
static void line_sgr(struct view_line *l, const struct ht_watch_view *v, const char *code)
{
	if (v->color)
		line_put(l, code, 0);
}

static const char *const spark_utf8[8] = { "\u2581", "\u2582", "\u2583", "\u2584",
	                                   "\u2585", "\u2586", "\u2587", "\u2588" };
static const char spark_ascii[] = "_.-:=+*#";

/* Level 0..7 of @rate against @peak, to the nearest (0 when @peak is 0). */
static int spark_level(double rate, double peak)
{
	long k;

	if (!(peak > 0) || !(rate > 0))
		return 0;
	k = lround(rate / peak * 7);
	return k < 0 ? 0 : k > 7 ? 7 : (int)k;
}

/* The rate as the table shows it: "52.0", ">=52.0" for a lower bound. */
static void rate_text(char *buf, size_t size, bool lower_bound, double v)
{
	snprintf(buf, size, "%s%.1f", lower_bound ? ">=" : "", v);
}

/* Writes @l as one line of the frame: erased to its end, then a newline. */
static void put_line(FILE *out, const struct view_line *l)
{
	/* Only the SGR codes in it are hosttune's own: the text is ASCII or block glyphs. */
	ht_escape_raw(out, l->buf);
	ht_escape_raw(out, "\033[K");
	fputc('\n', out);
}

int ht_watch_view_draw(FILE *out, struct ht_watch_view *v, const struct ht_watch_sample *s)
{
	struct view_line l;
	char tail[160], num[64];
	double peak = 0;
	size_t cells, filled, shown, first;
	const char *level;

	if (v->n == HT_WATCH_VIEW_HISTORY) {
		memmove(v->rate, v->rate + 1, (HT_WATCH_VIEW_HISTORY - 1) * sizeof(v->rate[0]));
		v->n--;
	}
	v->rate[v->n++] = s->have_new_rate ? s->new_per_s : NAN;
	if (v->drawn) {
		snprintf(num, sizeof(num), "\r\033[%zuA", v->drawn);
		ht_escape_raw(out, num);
	}

	/* conntrack [####....]  COUNT / MAX  PCT% */
	l = (struct view_line){ .max_cols = v->width - 1 };
	snprintf(tail, sizeof(tail), "  %" PRId64 " / %" PRId64 "  %.1f%%", s->count, s->max,
	         s->pct_max);
	/* What the width leaves, 4 to 50 cells: the figures are cut only below 4. */
	cells = v->width - 1 > 12 + strlen(tail) + 4 ? v->width - 1 - 12 - strlen(tail) : 4;
	if (cells > 50)
		cells = 50;
	filled = s->max > 0 && s->count > 0
	         ? (size_t)fmin((double)cells, floor((double)s->count * (double)cells /
	                                             (double)s->max + 0.5))
	         : 0;
	level = s->pct_max >= 90 ? "\033[31m" : s->pct_max >= 75 ? "\033[33m" : "\033[32m";
	line_text(&l, "conntrack [");
	line_sgr(&l, v, level);
	for (size_t i = 0; i < cells; i++)
		line_put(&l, i < filled ? (v->utf8 ? "\u2588" : "#") : (v->utf8 ? "\u2591" : "."),
		         1);
	line_sgr(&l, v, "\033[0m");
	line_text(&l, "]");
	line_text(&l, tail);
	put_line(out, &l);

	/* new/s     SPARKLINE  NOW, peak PEAK */
	l = (struct view_line){ .max_cols = v->width - 1 };
	line_text(&l, "new/s     ");
	if (v->source && strncmp(v->source, "unknown", 7) == 0) {
		line_text(&l, v->source);
	} else {
		char now[64], pk[64];

		rate_text(now, sizeof(now), s->new_rate_lower_bound, s->new_per_s);
		shown = v->width - 1 - 10;
		/* Room for "  NOW, peak PEAK" after the glyphs. */
		shown = shown > 40 ? shown - 40 : 8;
		if (shown > v->n)
			shown = v->n;
		first = v->n - shown;
		for (size_t i = first; i < v->n; i++)
			if (!isnan(v->rate[i]) && v->rate[i] > peak)
				peak = v->rate[i];
		for (size_t i = first; i < v->n; i++) {
			int k = spark_level(v->rate[i], peak);
			char a[2] = { spark_ascii[k], 0 };

			line_put(&l, isnan(v->rate[i]) ? " " : v->utf8 ? spark_utf8[k] : a, 1);
		}
		snprintf(pk, sizeof(pk), "%.1f", peak);
		snprintf(tail, sizeof(tail), "  %s, peak %s", s->have_new_rate ? now : "-", pk);
		line_text(&l, tail);
	}
	put_line(out, &l);

	/* drops/s   RATE, red above 0 */
	l = (struct view_line){ .max_cols = v->width - 1 };
	line_text(&l, "drops/s   ");
	if (!s->have_drop_rate) {
		line_text(&l, "-");
	} else {
		rate_text(num, sizeof(num), false, s->drops_per_s);
		if (s->drops_per_s > 0)
			line_sgr(&l, v, "\033[1;31m");
		line_text(&l, num);
		if (s->drops_per_s > 0)
			line_sgr(&l, v, "\033[0m");
	}
	put_line(out, &l);

	l = (struct view_line){ .max_cols = v->width - 1 };
	if (v->duration > 0)
		snprintf(tail, sizeof(tail), "t %.3f s of %g s, every %g s: Ctrl-C ends with the"
		         " summary", s->t, v->duration, v->interval);
	else
		snprintf(tail, sizeof(tail), "t %.3f s, every %g s: Ctrl-C ends with the summary",
		         s->t, v->interval);
	line_text(&l, tail);
	put_line(out, &l);
	v->drawn = HT_WATCH_VIEW_LINES;
	return out_status(out);
}

/*
 * What the peak rate is over: "over 5 s", or, when no stretch of known counts
 * spans the window, "over the whole run of 4.000 s (shorter than the 5 s
 * window)" or "over the 7.000 s with known counts (no 5 s window without
 * lost events)".
 */
static void put_peak_span(FILE *out, const struct ht_watch_summary *s)
{
	if (s->peak_windowed)
		fprintf(out, "over %g s", HT_WATCH_RATE_WINDOW);
	else if (s->peak_span >= s->duration)
		fprintf(out, "over the whole run of %.3f s (shorter than the %g s window)",
		        s->peak_span, HT_WATCH_RATE_WINDOW);
	else
		fprintf(out, "over the %.3f s with known counts (no %g s window without lost"
		             " events)", s->peak_span, HT_WATCH_RATE_WINDOW);
}

static void explain_recommendation(FILE *out, const struct ht_watch_summary *s)
{
	double need = ceil(s->need);
	bool held = need > (double)HT_WATCH_MAX_LIMIT;

	switch (s->basis) {
	case HT_WATCH_BASIS_COUNT:
		fprintf(out, "  The table never reached its cap, so its peak count is the working\n"
		             "  set: %" PRId64 " entries x headroom %g", s->peak_count, s->headroom);
		break;
	case HT_WATCH_BASIS_RATE:
		fprintf(out, "  The table sat at its cap for %zu consecutive sample%s: its count\n"
		             "  only shows the cap. The table must hold every connection of the\n"
		             "  last TIME_WAIT seconds: peak rate ", s->pinned_samples,
		        s->pinned_samples == 1 ? "" : "s");
		put_peak_span(out, s);
		fprintf(out, " %s%.1f/s x TIME_WAIT %" PRId64 " s\n  = %s%" PRId64 " entries%s,"
		             " x headroom %g", s->rate_lower_bound ? "at least " : "", s->peak_rate,
		        s->time_wait, s->rate_lower_bound ? "at least " : "",
		        s->working_set_entries,
		        s->working_set_entries == INT64_MAX ? " (2^63 - 1 or more)" : "",
		        s->headroom);
		break;
	case HT_WATCH_BASIS_CAP:
		fprintf(out, "  The table sat at its cap for %zu consecutive sample%s: its count\n"
		             "  only shows the cap, and %s,\n  so the peak count is a lower bound"
		             " of the working set: %" PRId64 " x headroom %g",
		        s->pinned_samples, s->pinned_samples == 1 ? "" : "s",
		        s->have_rate ? "the new-connection rate seen stays below it"
		                     : "no new-connection rate is known",
		        s->peak_count, s->headroom);
		break;
	}
	/* Above 2^30 the product is only said to be more: a double past 2^53 is not exact. */
	if (held)
		fprintf(out, " > 2^30,\n  held to 2^30 = %" PRId64 ", the largest power of two the"
		             " sysctl takes.\n", s->pow2);
	else
		fprintf(out, " = %.0f, next power of two %" PRId64 ".\n", need, s->pow2);
	if (s->pow2 < s->max)
		fprintf(out, "  hosttune only raises the table: the current max %" PRId64
		             " stays.\n", s->max);
	if (s->pinned_samples > 0 && s->full_at_start)
		fprintf(out, "  The table was already full at the first sample: the rate seen is\n"
		             "  at most the ceiling, so this is a lower bound. Watch from before\n"
		             "  the load starts.\n");
	if (s->basis == HT_WATCH_BASIS_RATE && s->rate_lower_bound)
		fprintf(out, "  Events were lost, so the rate and this recommendation are lower\n"
		             "  bounds.\n");
}

/* "at least " before a rate that is a lower bound. */
static const char *lb(const struct ht_watch_summary *s)
{
	return s->rate_lower_bound ? "at least " : "";
}

/*
 * The line about lost events: none; or the overruns, the events dropped
 * and counted, and that the rates are lower bounds; or, for a record of
 * version 1 (or one whose counting restarted), the intervals without a count.
 */
static void put_lost(FILE *out, const struct ht_watch_summary *s)
{
	if (!s->have_rate)
		return;
	if (!s->rate_lower_bound) {
		if (s->have_overruns)
			fprintf(out, "  events lost     none (no receive-queue overrun)\n");
		else
			fprintf(out, "  events lost     none\n");
		return;
	}
	fprintf(out, "  events lost     ");
	if (s->have_overruns && s->overruns > 0) {
		fprintf(out, "%" PRId64 " receive-queue overrun%s", s->overruns,
		        s->overruns == 1 ? "" : "s");
		if (s->have_events_lost)
			fprintf(out, ", %" PRId64 " NEW event%s dropped there (counted by the"
			             " kernel,\n                  included above)", s->events_lost,
			        s->events_lost == 1 ? "" : "s");
		else
			fprintf(out, " (the kernel gives no drop count)");
		fprintf(out, "; %zu of %zu intervals", s->intervals_short,
		        s->samples > 0 ? s->samples - 1 : 0);
	} else {
		fprintf(out, "%zu of %zu intervals %s no count (events lost, or the counting"
		             " restarted)", s->intervals_short, s->samples > 0 ? s->samples - 1 : 0,
		        s->intervals_short == 1 ? "has" : "have");
	}
	fprintf(out, ".\n  The counted rates are lower bounds: the true ones may be higher.\n");
}

int ht_watch_format_summary(FILE *out, const struct ht_watch_summary *s)
{
	fprintf(out, "%zu sample%s over %.3f s, every %.3f s\n", s->samples,
	        s->samples == 1 ? "" : "s", s->duration, s->interval);
	fprintf(out, "  peak count      %" PRId64 " entries = %.1f%% of max %" PRId64 "\n",
	        s->peak_count, s->peak_pct, s->max);
	fprintf(out, "  at the cap      %zu consecutive sample%s (count >= max)\n",
	        s->pinned_samples, s->pinned_samples == 1 ? "" : "s");
	if (s->have_rate) {
		fprintf(out, "  new conns/s     peak %s%.1f ", lb(s), s->peak_rate);
		put_peak_span(out, s);
		fprintf(out, ", %s%.1f over one interval, mean %s%.1f (%s)\n", lb(s),
		        s->peak_interval_rate, lb(s), s->mean_rate, s->source);
	} else
		fprintf(out, "  new conns/s     unknown (%s)\n", s->source);
	put_lost(out, s);
	if (s->have_drops)
		fprintf(out, "  dropped         %" PRId64 " (drop + early_drop)\n", s->drops);
	else
		fprintf(out, "  dropped         unknown (no drop counters)\n");
	fprintf(out, "  ceiling         max %" PRId64 " / TIME_WAIT %" PRId64
	             " s = %.1f new connections/s at a full table\n",
	        s->max, s->time_wait, s->ceiling);
	fprintf(out, "  recommended     nf_conntrack_max = %" PRId64 "\n", s->recommended_max);
	explain_recommendation(out, s);
	return out_status(out);
}

/*
 * A decimal JSON number printed with @decimals fraction digits (no 17-digit
 * noise); one too long for that (above 10^60) in 17 significant digits.
 * Never NaN or infinite here (the summary's arithmetic is bounded).
 */
static struct json_object *json_fixed(double v, int decimals)
{
	char buf[80];
	int n = snprintf(buf, sizeof(buf), "%.*f", decimals, v);

	if (n < 0 || (size_t)n >= sizeof(buf))
		snprintf(buf, sizeof(buf), "%.17g", v);
	return json_object_new_double_s(v, buf);
}

struct json_object *ht_watch_summary_json(const struct ht_watch_summary *s)
{
	struct json_object *o = json_object_new_object();
	const struct {
		const char *key;
		struct json_object *v;
		bool null;
	} f[] = {
		{ "samples", json_object_new_int64((int64_t)s->samples), false },
		{ "duration", json_fixed(s->duration, 3), false },
		{ "interval", json_fixed(s->interval, 3), false },
		{ "max", json_object_new_int64(s->max), false },
		{ "time_wait", json_object_new_int64(s->time_wait), false },
		{ "peak_count", json_object_new_int64(s->peak_count), false },
		{ "peak_pct", json_fixed(s->peak_pct, 1), false },
		{ "peak_rate", s->have_rate ? json_fixed(s->peak_rate, 1) : NULL, !s->have_rate },
		{ "peak_rate_over",
		  s->have_rate ? json_object_new_string(s->peak_windowed ? "window" : "run") : NULL,
		  !s->have_rate },
		{ "peak_rate_span", s->have_rate ? json_fixed(s->peak_span, 3) : NULL,
		  !s->have_rate },
		{ "peak_interval_rate", s->have_rate ? json_fixed(s->peak_interval_rate, 1) : NULL,
		  !s->have_rate },
		{ "mean_rate", s->have_rate ? json_fixed(s->mean_rate, 1) : NULL, !s->have_rate },
		{ "inserts", s->have_rate ? json_object_new_int64(s->inserts) : NULL,
		  !s->have_rate },
		{ "rate_lower_bound", s->have_rate ? json_object_new_boolean(s->rate_lower_bound)
		                                   : NULL, !s->have_rate },
		{ "intervals_short", s->have_rate ? json_object_new_int64((int64_t)s->intervals_short)
		                                  : NULL, !s->have_rate },
		{ "events_lost", s->have_events_lost ? json_object_new_int64(s->events_lost) : NULL,
		  !s->have_events_lost },
		{ "overruns", s->have_overruns ? json_object_new_int64(s->overruns) : NULL,
		  !s->have_overruns },
		{ "drops", s->have_drops ? json_object_new_int64(s->drops) : NULL, !s->have_drops },
		{ "pinned_samples", json_object_new_int64((int64_t)s->pinned_samples), false },
		{ "full_at_start", json_object_new_boolean(s->full_at_start), false },
		{ "ceiling", json_fixed(s->ceiling, 1), false },
		{ "headroom", json_fixed(s->headroom, 2), false },
		{ "basis", json_object_new_string(ht_watch_basis_name(s->basis)), false },
		{ "working_set", json_object_new_int64(s->working_set_entries), false },
		{ "recommended_max", json_object_new_int64(s->recommended_max), false },
		{ "source", json_object_new_string(s->source), false },
	};
	bool failed = !o;

	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		if (failed || (!f[i].v && !f[i].null) ||
		    json_object_object_add(o, f[i].key, f[i].v) < 0) {
			json_object_put(f[i].v);
			failed = true;
		}
	}
	if (failed) {
		json_object_put(o);
		return NULL;
	}
	return o;
}
