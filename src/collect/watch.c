/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "collect/collect.h"
#include "shared/util.h"
#include "collect/watch.h"

#define PATH_MAX_ENTRIES "/proc/sys/net/netfilter/nf_conntrack_max"
#define PATH_TIME_WAIT "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait"
#define PATH_EVENTS "/proc/sys/net/netfilter/nf_conntrack_events"
#define SRC_EVENTS "ctnetlink NEW events"

/* The kernel's per-CPU counters are u32 (struct ip_conntrack_stat, include/linux/netfilter/
 * nf_conntrack_common.h): a sum over CPUs goes back by less than this when one of them wraps. */
#define COUNTER_WRAP ((int64_t)1 << 32)

/*
 * An event is a message of a few hundred bytes (ctnetlink_nlmsg_size()),
 * about 1 KiB of receive buffer with the skb's overhead: 8 MiB holds several
 * thousand, seconds of a storm should the sampler be descheduled.
 */
#define EVENT_RCVBUF (8 * 1024 * 1024)

/* libmnl's MNL_SOCKET_BUFFER_SIZE: a page, at most 8 KiB; events come one per message. */
#define EVENT_BUF_SIZE 8192

/* Events read by one recvmmsg(): one system call instead of this many. */
#define EVENT_BATCH 32

/*
 * After reading the events, the sampler leaves the socket alone this long
 * (unless a sample is due), so that one wake-up reads a batch of them and not
 * one: at 30000 new connections a second, 300 events, about 300 KiB of the
 * receive buffer. The count is the same; only the CPU time falls.
 */
#define EVENT_SPACING 0.010

/*
 * Sampling intervals above a day are surely a unit mistake; below 1 ms the
 * time to read the counters is a fair part of the interval. (The record
 * writes t to the nanosecond, so samples never share a recorded t.)
 */
#define INTERVAL_MAX (24.0 * 3600.0)
#define INTERVAL_MIN 0.001

/*
 * Times are decimals read into binary doubles (5.250 - 0.250 may come out a
 * hair under 5): a window this much short of HT_WATCH_RATE_WINDOW still
 * counts. Far below the interval's minimum of 1 ms.
 */
#define WINDOW_SLACK 1e-6

/* ---- the summary arithmetic ---- */

int ht_watch_acc_init(struct ht_watch_acc *a, double interval, double headroom)
{
	if (!isfinite(interval) || interval < 0 || interval > INTERVAL_MAX)
		return -EINVAL;
	if (!isfinite(headroom) || headroom < 1)
		return -EINVAL;
	*a = (struct ht_watch_acc){ .interval = interval, .headroom = headroom };
	return 0;
}

/*
 * The difference of a drop counter between two samples. A sum of u32
 * per-CPU counters that went back by less than 2^32 had one CPU wrap; one
 * that went back further is from another boot (a record stitched together)
 * and has no meaningful difference. Returns false then.
 */
static bool counter_delta(int64_t before, int64_t after, int64_t *d)
{
	int64_t x = after - before; /* both >= 0: cannot overflow */

	if (x < 0)
		x += COUNTER_WRAP;
	if (x < 0)
		return false;
	*d = x;
	return true;
}

/*
 * The difference of insert, a 64-bit count of events: it never wraps, so a
 * decrease means the counting restarted (records appended one after the
 * other, another sampler) and the difference is unknown.
 */
static bool insert_delta(int64_t before, int64_t after, int64_t *d)
{
	if (after < before)
		return false;
	*d = after - before;
	return true;
}

static bool sample_valid(const struct ht_watch_sample *s)
{
	return isfinite(s->t) && s->t >= 0 && s->max > 0 && s->count >= 0 && s->time_wait >= 0 &&
	       (!s->have_insert || s->insert >= 0) && (!s->have_drop || s->drop >= 0) &&
	       (!s->have_early_drop || s->early_drop >= 0) && (!s->have_lost || s->lost >= 0) &&
	       (!s->have_overruns || s->overruns >= 0);
}

/*
 * Adds the difference of a cumulative count that never goes back (lost,
 * overruns) to *sum when both ends are known. Returns 0, 1 when it went
 * back (the counting restarted), -ERANGE when the sum overflows.
 */
static int add_count(bool have_p, int64_t p, bool have_s, int64_t s, bool *have, int64_t *sum)
{
	if (!have_p || !have_s)
		return 0;
	if (s < p)
		return 1;
	if (__builtin_add_overflow(*sum, s - p, sum))
		return -ERANGE;
	*have = true;
	return 0;
}

void ht_watch_acc_free(struct ht_watch_acc *a)
{
	free(a->win);
	a->win = NULL;
	a->win_head = a->win_len = a->win_cap = 0;
}

/* Starts a new stretch of known insert differences: forgets the points before. */
static void window_reset(struct ht_watch_acc *a)
{
	a->win_head = a->win_len = 0;
}

static int window_push(struct ht_watch_acc *a, double t, int64_t insert)
{
	if (a->win_head + a->win_len == a->win_cap) {
		if (a->win_head > 0) {
			memmove(a->win, a->win + a->win_head, a->win_len * sizeof(*a->win));
			a->win_head = 0;
		} else {
			size_t ncap = a->win_cap ? a->win_cap * 2 : 64;
			struct ht_watch_point *nw = reallocarray(a->win, ncap, sizeof(*nw));

			if (!nw)
				return -ENOMEM;
			a->win = nw;
			a->win_cap = ncap;
		}
	}
	a->win[a->win_head + a->win_len++] = (struct ht_watch_point){ .t = t, .insert = insert };
	return 0;
}

/*
 * The rates over the windows of at least HT_WATCH_RATE_WINDOW seconds that
 * end at the newest point j. Every pair (i, j) with t[j] - t[i] >= W is a
 * candidate, but only those with no point k between them such that both
 * (i, k) and (k, j) span W need to be looked at: the rate over (i, j) is
 * the time-weighted mean of the rates over (i, k) and (k, j), so one of them
 * is at least as large. With m the newest point at least W before j, those
 * are the points i <= m with t[m] - t[i] < W; the older ones are dominated
 * for every later j as well (m only moves forward) and are dropped. The
 * buffer so holds about 2 W of samples.
 */
static void window_scan(struct ht_watch_acc *a)
{
	const struct ht_watch_point *w = a->win + a->win_head;
	const struct ht_watch_point *j = &w[a->win_len - 1];
	size_t m = SIZE_MAX, drop = 0;

	for (size_t i = 0; i + 1 < a->win_len; i++) {
		double dt = j->t - w[i].t;
		double rate;

		if (dt < HT_WATCH_RATE_WINDOW - WINDOW_SLACK)
			break;
		m = i;
		rate = (double)(j->insert - w[i].insert) / dt;
		if (!a->have_window_rate || rate > a->window_rate)
			a->window_rate = rate;
		a->have_window_rate = true;
	}
	if (m == SIZE_MAX)
		return;
	while (drop < m && w[m].t - w[drop].t >= HT_WATCH_RATE_WINDOW - WINDOW_SLACK)
		drop++;
	a->win_head += drop;
	a->win_len -= drop;
}

int ht_watch_acc_add(struct ht_watch_acc *a, struct ht_watch_sample *s)
{
	const struct ht_watch_sample *p = &a->last;
	int64_t d, d2;

	if (!sample_valid(s) || (a->samples > 0 && !(s->t > p->t)))
		return -EINVAL;
	s->pct_max = 100.0 * (double)s->count / (double)s->max;
	s->new_per_s = s->drops_per_s = 0;
	s->have_new_rate = s->have_drop_rate = s->new_rate_lower_bound = false;

	if (a->samples == 0) {
		a->first = *s;
		a->drops_unknown = !s->have_drop || !s->have_early_drop;
		if (s->have_insert && window_push(a, s->t, s->insert) < 0)
			return -ENOMEM;
	} else {
		double dt = s->t - p->t;
		int lr = add_count(p->have_lost, p->lost, s->have_lost, s->lost, &a->have_lost,
		                   &a->lost);
		int orr = add_count(p->have_overruns, p->overruns, s->have_overruns, s->overruns,
		                    &a->have_overruns, &a->overruns);

		if (lr < 0 || orr < 0)
			return -ERANGE;
		/* lost or overruns going back: the counting restarted, as for insert. */
		if (lr == 0 && orr == 0 && p->have_insert && s->have_insert &&
		    insert_delta(p->insert, s->insert, &d)) {
			/*
			 * Overruns or drops in the interval (or not known at one end):
			 * events may be missing. Drops count too: their overrun may
			 * be reported only in the next interval.
			 */
			bool short_count = p->have_overruns != s->have_overruns ||
			                   (s->have_overruns && s->overruns > p->overruns) ||
			                   (p->have_lost && s->have_lost && s->lost > p->lost);

			if (__builtin_add_overflow(a->inserts, d, &a->inserts))
				return -ERANGE;
			a->insert_time += dt;
			s->new_per_s = (double)d / dt;
			s->have_new_rate = true;
			s->new_rate_lower_bound = short_count;
			if (short_count) {
				a->inserts_short = true;
				a->intervals_short++;
			}
			if (!a->have_rate || s->new_per_s > a->peak_interval_rate)
				a->peak_interval_rate = s->new_per_s;
			a->have_rate = true;
			if (window_push(a, s->t, s->insert) < 0)
				return -ENOMEM;
			window_scan(a);
		} else {
			a->inserts_lost = true;
			a->intervals_short++;
			window_reset(a);
			if (s->have_insert && window_push(a, s->t, s->insert) < 0)
				return -ENOMEM;
		}
		if (p->have_drop && s->have_drop && p->have_early_drop && s->have_early_drop &&
		    counter_delta(p->drop, s->drop, &d) &&
		    counter_delta(p->early_drop, s->early_drop, &d2)) {
			if (__builtin_add_overflow(d, d2, &d) ||
			    __builtin_add_overflow(a->drops, d, &a->drops))
				return -ERANGE;
			s->drops_per_s = (double)d / dt;
			s->have_drop_rate = true;
		} else {
			a->drops_unknown = true;
		}
	}
	if (a->samples == 0 || s->count > a->peak_count) {
		a->peak_count = s->count;
		a->peak_pct = s->pct_max;
	}
	/* Count passes max by the entry being refused (__nf_conntrack_alloc()) or a lowered max. */
	if (s->count >= s->max) {
		a->run++;
		if (a->run > a->longest_run)
			a->longest_run = a->run;
	} else {
		a->run = 0;
	}
	a->last = *s;
	a->samples++;
	return 0;
}

int64_t ht_watch_entries(double v)
{
	/* 2^63 is the first double above INT64_MAX; (int64_t) of it or more is undefined. */
	if (isnan(v) || v <= 0)
		return 0;
	if (v >= 9223372036854775808.0)
		return INT64_MAX;
	return (int64_t)v;
}

static int64_t pow2ceil_capped(double need)
{
	int64_t p = 1;

	if (!(need <= (double)HT_WATCH_MAX_LIMIT))
		return HT_WATCH_MAX_LIMIT;
	while ((double)p < need)
		p <<= 1;
	return p;
}

int ht_watch_acc_summary(const struct ht_watch_acc *a, const char *source,
                         struct ht_watch_summary *out)
{
	const struct ht_watch_sample *last = &a->last;

	if (a->samples == 0)
		return -ENODATA;
	*out = (struct ht_watch_summary){
		.samples = a->samples,
		.duration = last->t - a->first.t,
		.headroom = a->headroom,
		.max = last->max,
		.time_wait = last->time_wait,
		.peak_count = a->peak_count,
		.peak_pct = a->peak_pct,
		.have_rate = a->have_rate,
		.peak_interval_rate = a->have_rate ? a->peak_interval_rate : 0,
		.inserts = a->inserts,
		.rate_lower_bound = a->have_rate && (a->inserts_lost || a->inserts_short),
		.intervals_short = a->intervals_short,
		.have_events_lost = a->have_lost,
		.events_lost = a->lost,
		.have_overruns = a->have_overruns,
		.overruns = a->overruns,
		.have_drops = !a->drops_unknown,
		.drops = a->drops,
		.pinned_samples = a->longest_run,
		.full_at_start = a->first.count >= a->first.max,
	};
	/*
	 * The mean over the whole run. With intervals unknown, their new entries
	 * count as none: a lower bound of the mean (the rate over the known
	 * intervals alone could be above the truth).
	 */
	out->mean_rate = a->insert_time <= 0 ? 0
	                 : !a->inserts_lost ? (double)a->inserts / a->insert_time
	                                    : (double)a->inserts / out->duration;
	/* No stretch of known differences spans the window: the rate over all of them. */
	out->peak_windowed = a->have_window_rate;
	out->peak_rate = a->have_window_rate ? a->window_rate
	                 : a->insert_time > 0 ? (double)a->inserts / a->insert_time : 0;
	/* The whole duration when every interval is known (insert_time is their sum). */
	out->peak_span = !a->have_rate            ? 0
	                 : a->have_window_rate    ? HT_WATCH_RATE_WINDOW
	                 : !a->inserts_lost       ? out->duration
	                                          : a->insert_time;
	out->interval = a->interval > 0 ? a->interval
	                : a->samples > 1 ? out->duration / (double)(a->samples - 1) : 0;
	/* conntrack.ceiling in rules/conntrack.rules: a TIME_WAIT of 0 counts as 1 s. */
	out->ceiling = (double)out->max / (double)(out->time_wait > 0 ? out->time_wait : 1);

	out->basis = HT_WATCH_BASIS_COUNT;
	out->working_set = (double)out->peak_count;
	out->working_set_entries = out->peak_count;
	if (out->pinned_samples > 0) {
		double by_rate = out->peak_rate * (double)out->time_wait;

		if (out->have_rate && by_rate >= out->working_set) {
			out->basis = HT_WATCH_BASIS_RATE;
			out->working_set = by_rate;
			out->working_set_entries = ht_watch_entries(ceil(by_rate));
		} else {
			out->basis = HT_WATCH_BASIS_CAP;
		}
	}
	out->need = out->working_set * out->headroom;
	out->pow2 = pow2ceil_capped(ceil(out->need));
	out->recommended_max = out->pow2 > out->max ? out->pow2 : out->max;
	snprintf(out->source, sizeof(out->source), "%s", source ? source : "");
	return 0;
}

int ht_watch_replay(struct ht_watch_sample *samples, size_t n, double headroom,
                    const char *source, struct ht_watch_summary *out)
{
	struct ht_watch_acc a;
	int r = ht_watch_acc_init(&a, 0, headroom);

	if (r < 0)
		return r;
	for (size_t i = 0; r == 0 && i < n; i++)
		r = ht_watch_acc_add(&a, &samples[i]);
	if (r == 0)
		r = ht_watch_acc_summary(&a, source, out);
	ht_watch_acc_free(&a);
	return r;
}

const char *ht_watch_basis_name(enum ht_watch_basis b)
{
	switch (b) {
	case HT_WATCH_BASIS_RATE:
		return "rate";
	case HT_WATCH_BASIS_CAP:
		return "cap";
	case HT_WATCH_BASIS_COUNT:
	default:
		return "count";
	}
}

static int out_status(FILE *out)
{
	return ferror(out) ? -EIO : 0;
}

/* ---- record file ---- */

int ht_watch_record_header(FILE *out)
{
	fprintf(out, "%s\n%s\n", HT_WATCH_RECORD_HEADER, HT_WATCH_RECORD_COLUMNS);
	return out_status(out);
}

static void put_counter(FILE *out, bool have, int64_t v)
{
	if (have)
		fprintf(out, " %" PRId64, v);
	else
		fputs(" -", out);
}

int ht_watch_record_sample(FILE *out, const struct ht_watch_sample *s)
{
	/* To the nanosecond, as CLOCK_MONOTONIC gives it: distinct samples stay distinct. */
	fprintf(out, "%.9f %" PRId64 " %" PRId64, s->t, s->count, s->max);
	put_counter(out, s->have_insert, s->insert);
	put_counter(out, s->have_drop, s->drop);
	put_counter(out, s->have_early_drop, s->early_drop);
	fprintf(out, " %" PRId64, s->time_wait);
	put_counter(out, s->have_lost, s->lost);
	put_counter(out, s->have_overruns, s->overruns);
	fputc('\n', out);
	return out_status(out);
}

int ht_watch_record_write(FILE *out, const struct ht_watch_sample *s, size_t n)
{
	int r = ht_watch_record_header(out);

	for (size_t i = 0; r == 0 && i < n; i++)
		r = ht_watch_record_sample(out, &s[i]);
	return r;
}

/* Where the parser is: for "NAME:LINE:COL:" messages. */
struct rec_pos {
	const char *name;
	size_t line;
	const char *start;      /* of the line */
};

/* "found ..." text: the token quoted, shortened, control bytes shown as '?'. */
static void describe_found(char *buf, size_t size, const char *tok, size_t len)
{
	size_t n = 0, shown = len > 40 ? 40 : len;

	if (len == 0) {
		snprintf(buf, size, "end of line");
		return;
	}
	buf[n++] = '\'';
	for (size_t i = 0; i < shown && n + 5 < size; i++)
		buf[n++] = iscntrl((unsigned char)tok[i]) ? '?' : tok[i];
	if (shown < len && n + 5 < size) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n++] = '\'';
	buf[n] = '\0';
}

static int rec_error(struct ht_error *err, const struct rec_pos *pos, const char *at,
                     size_t len, const char *expected)
{
	char found[64];

	describe_found(found, sizeof(found), at, len);
	return ht_error_set(err, EINVAL, "%s:%zu:%zu: expected %s, found %s", pos->name, pos->line,
	                    (size_t)(at - pos->start) + 1, expected, found);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The next blank-separated token at *p: sets @tok and @len (0 at the end of the line). */
static void next_token(const char **p, const char **tok, size_t *len)
{
	const char *s = *p;

	while (is_blank(*s))
		s++;
	*tok = s;
	while (*s && !is_blank(*s))
		s++;
	*len = (size_t)(s - *tok);
	*p = s;
}

/*
 * Whole unsigned decimal, 0 to INT64_MAX (2^63 - 1). Returns 0, -EINVAL
 * when @tok is not digits, -ERANGE when it is more.
 */
static int parse_uint_r(const char *tok, size_t len, int64_t *out)
{
	int64_t v = 0;
	bool over = false;

	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (tok[i] < '0' || tok[i] > '9')
			return -EINVAL;
		over = over || __builtin_mul_overflow(v, 10, &v) ||
		       __builtin_add_overflow(v, tok[i] - '0', &v);
	}
	if (over)
		return -ERANGE;
	*out = v;
	return 0;
}

static bool parse_uint(const char *tok, size_t len, int64_t *out)
{
	return parse_uint_r(tok, len, out) == 0;
}

/*
 * Seconds: digits, optionally '.' and 1 to 9 digits; no sign, no exponent,
 * and no locale (strtod() would take "1,5" in some).
 */
static bool parse_seconds(const char *tok, size_t len, double *out)
{
	const char *dot = memchr(tok, '.', len);
	size_t ilen = dot ? (size_t)(dot - tok) : len, flen = dot ? len - ilen - 1 : 0;
	int64_t ip, fp = 0;

	if (ilen > 12 || !parse_uint(tok, ilen, &ip))
		return false;
	if (dot && (flen == 0 || flen > 9 || !parse_uint(dot + 1, flen, &fp)))
		return false;
	*out = (double)ip + (double)fp / pow(10, (double)flen);
	return true;
}

static const char *const field_names[] = {
	"t", "count", "max", "insert", "drop", "early_drop", "time_wait", "lost", "overruns",
};

/* Fields of a sample line: version 1 has the first 7, version 2 all 9. */
#define FIELDS_V1 7
#define FIELDS_V2 9

/*
 * Parses one sample line (without its newline) of a record of @version (1
 * or 2). Returns 0 or -EINVAL with @err set.
 */
static int parse_sample(const char *line, int version, const struct rec_pos *pos,
                        const struct ht_watch_sample *prev, struct ht_watch_sample *s,
                        struct ht_error *err)
{
	int64_t *ints[] = { NULL, &s->count, &s->max, &s->insert, &s->drop, &s->early_drop,
		            &s->time_wait, &s->lost, &s->overruns };
	bool *have[] = { NULL, NULL, NULL, &s->have_insert, &s->have_drop, &s->have_early_drop,
		         NULL, &s->have_lost, &s->have_overruns };
	size_t fields = version == 1 ? FIELDS_V1 : FIELDS_V2;
	const char *p = line, *tok;
	char expected[160];
	size_t len;
	int r;

	*s = (struct ht_watch_sample){ 0 };
	for (size_t i = 0; i < fields; i++) {
		next_token(&p, &tok, &len);
		if (len == 0) {
			snprintf(expected, sizeof(expected),
			         version == 1
			         ? "%s (7 fields: t count max insert drop early_drop time_wait)"
			         : "%s (9 fields: t count max insert drop early_drop time_wait lost"
			           " overruns)", field_names[i]);
			return rec_error(err, pos, tok, 0, expected);
		}
		if (i == 0) {
			if (!parse_seconds(tok, len, &s->t))
				return rec_error(err, pos, tok, len,
				                 "t, seconds such as 1.250 (up to 9 decimals)");
			if (prev && !(s->t > prev->t)) {
				snprintf(expected, sizeof(expected),
				         "t after the previous sample's %.9g", prev->t);
				return rec_error(err, pos, tok, len, expected);
			}
			continue;
		}
		if (have[i] && len == 1 && tok[0] == '-')
			continue;
		r = parse_uint_r(tok, len, ints[i]);
		if (r < 0) {
			snprintf(expected, sizeof(expected), "%s, a whole number%s%s", field_names[i],
			         r == -ERANGE ? " up to 9223372036854775807 (2^63 - 1)" : "",
			         have[i] ? " or '-'" : "");
			return rec_error(err, pos, tok, len, expected);
		}
		if (i == 2 && *ints[i] == 0)
			return rec_error(err, pos, tok, len, "max, a number above 0");
		if (have[i])
			*have[i] = true;
	}
	next_token(&p, &tok, &len);
	if (len != 0)
		return rec_error(err, pos, tok, len,
		                 version == 1 ? "end of line after time_wait"
		                              : "end of line after overruns");
	return 0;
}

/*
 * What a parsed sample must also be, against the one before it: lost
 * events are part of insert, so lost grows by no more than insert does;
 * and the run's sums must fit (ht_watch_acc_add() on @chk, the record so
 * far). 0 or -EINVAL with @err set to FILE:LINE:1.
 */
static int sample_check(struct ht_watch_acc *chk, const struct ht_watch_sample *prev,
                        const struct ht_watch_sample *s, const struct rec_pos *pos,
                        struct ht_error *err)
{
	struct ht_watch_sample t = *s;
	int r;

	if (prev && prev->have_insert && s->have_insert && prev->have_lost && s->have_lost &&
	    s->insert >= prev->insert && s->lost >= prev->lost &&
	    s->lost - prev->lost > s->insert - prev->insert)
		return ht_error_set(err, EINVAL,
		                    "%s:%zu:1: expected lost to grow by at most insert's %" PRId64
		                    " (lost events are part of insert), found %" PRId64,
		                    pos->name, pos->line, s->insert - prev->insert,
		                    s->lost - prev->lost);
	r = ht_watch_acc_add(chk, &t);
	if (r == -ERANGE)
		return ht_error_set(err, EINVAL,
		                    "%s:%zu:1: expected counts whose sums since the first sample "
		                    "stay within 2^63 - 1, found a sum past it",
		                    pos->name, pos->line);
	if (r < 0)
		return ht_error_set(err, EINVAL, "%s:%zu:1: expected a sample that follows the one "
		                    "before, found one that does not (%s)", pos->name, pos->line,
		                    strerror(-r));
	return 0;
}

/*
 * Bounds on a recording read back (--observed): its lines are under 200
 * bytes; 2^20 samples is 12 days at watch's default 1 s interval, and
 * 112 MiB of samples in memory (112 bytes each).
 */
#define RECORD_LINE_MAX 4096
#define RECORD_SAMPLES_MAX (1 << 20)

int ht_watch_record_read(FILE *in, const char *name, struct ht_watch_sample **samples,
                         size_t *n, struct ht_error *err)
{
	_cleanup_(ht_watch_acc_free) struct ht_watch_acc chk = { 0 };
	_cleanup_free_ struct ht_watch_sample *v = NULL;
	_cleanup_free_ char *line = NULL;
	struct rec_pos pos = { .name = name };
	size_t cap = 0, count = 0, size = 0;
	int version = 0, r;
	ssize_t len;

	r = ht_watch_acc_init(&chk, 0, 1);
	if (r < 0)
		return ht_error_set(err, -r, "%s: %s", name, strerror(-r));
	errno = 0;
	while ((len = ht_getline_max(&line, &size, in, RECORD_LINE_MAX)) >= 0) {
		pos.line++;
		pos.start = line;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (strlen(line) != (size_t)len)
			return ht_error_set(err, EINVAL,
			                    "%s:%zu:%zu: expected text, found a NUL byte", name,
			                    pos.line, strlen(line) + 1);
		if (pos.line == 1) {
			version = strcmp(line, HT_WATCH_RECORD_HEADER) == 0      ? 2
			          : strcmp(line, HT_WATCH_RECORD_HEADER_V1) == 0 ? 1
			                                                         : 0;
			if (version == 0 && ht_fd_private(fileno(in)))
				return ht_error_set(err, EINVAL, "%s:1:1: expected '%s' or '%s', found "
				                    "another line (not shown: the file is not readable "
				                    "by every user)", name, HT_WATCH_RECORD_HEADER,
				                    HT_WATCH_RECORD_HEADER_V1);
			if (version == 0)
				return rec_error(err, &pos, line, (size_t)len,
				                 "'" HT_WATCH_RECORD_HEADER "' or '"
				                 HT_WATCH_RECORD_HEADER_V1 "'");
			continue;
		}
		{
			const char *s = line;

			while (is_blank(*s))
				s++;
			if (*s == '\0' || *s == '#')
				continue;
		}
		if (count == RECORD_SAMPLES_MAX)
			return ht_error_set(err, EFBIG, "%s:%zu: more than %d samples: not read "
			                    "(record a shorter --duration or a longer --interval)",
			                    name, pos.line, RECORD_SAMPLES_MAX);
		if (count == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct ht_watch_sample *nv = reallocarray(v, ncap, sizeof(*v));

			if (!nv)
				return -ENOMEM;
			v = nv;
			cap = ncap;
		}
		if (parse_sample(line, version, &pos, count ? &v[count - 1] : NULL, &v[count],
		                 err) < 0)
			return -EINVAL;
		if (sample_check(&chk, count ? &v[count - 1] : NULL, &v[count], &pos, err) < 0)
			return -EINVAL;
		count++;
		errno = 0;
	}
	if (len == -E2BIG)
		return ht_error_set(err, EINVAL, "%s:%zu: a line longer than %d bytes: not a "
		                    "recording of hosttune watch", name, pos.line + 1,
		                    RECORD_LINE_MAX);
	if (len == -ENOMEM)
		return -ENOMEM;
	if (ferror(in) || len < -1)
		return ht_error_set(err, errno ? errno : EIO, "%s: %s", name,
		                    strerror(errno ? errno : EIO));
	if (pos.line == 0)
		return ht_error_set(err, EINVAL, "%s:1:1: expected '%s' or '%s', found end of file",
		                    name, HT_WATCH_RECORD_HEADER, HT_WATCH_RECORD_HEADER_V1);
	if (count == 0)
		return ht_error_set(err, EINVAL,
		                    "%s:%zu:1: expected a sample line, found end of file", name,
		                    pos.line + 1);
	*samples = TAKE_PTR(v);
	*n = count;
	return 0;
}

int ht_watch_record_load(const char *path, struct ht_watch_sample **samples, size_t *n,
                         struct ht_error *err)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");

	if (!f)
		return ht_error_set(err, errno, "%s: %s", path, strerror(errno));
	return ht_watch_record_read(f, path, samples, n, err);
}

/* ---- the sampler ---- */

struct ht_watch {
	struct ht_watch_config cfg;
	char *root;
	struct ht_watch_acc acc;
	struct timespec t0;
	double next_due;          /* s since t0 when the next sample is due */
	struct mnl_socket *ev;    /* NFNLGRP_CONNTRACK_NEW subscription; NULL without events */
	char *buf;                /* EVENT_BATCH buffers of EVENT_BUF_SIZE */
	struct mmsghdr msgs[EVENT_BATCH];
	struct iovec iov[EVENT_BATCH];
	struct sockaddr_nl addr[EVENT_BATCH];
	int64_t received;         /* IPCTNL_MSG_CT_NEW messages received */
	int64_t overruns;         /* ENOBUFS reports */
	bool have_drops;          /* SO_MEMINFO gives the socket's drop counter */
	uint32_t drops_seen;      /* its last value (a u32 that may wrap) */
	int64_t dropped;          /* events dropped since ht_watch_new() */
#ifdef HT_TEST_HOOKS
	bool test_slow;           /* HT_WATCH_TEST_RCVBUF_ENV: read events only at samples */
#endif
	struct timespec last_drain;
	char source[160];
};

static double ts_diff(const struct timespec *a, const struct timespec *b)
{
	return (double)(a->tv_sec - b->tv_sec) + (double)(a->tv_nsec - b->tv_nsec) / 1e9;
}

/* A whole decimal sysctl below the root. 0 or a negative errno (-EINVAL when not a number). */
static int read_sysctl(const char *root, const char *path, int64_t *out)
{
	_cleanup_free_ char *text = NULL;
	long long v;
	int r = ht_read_file(root, path, &text);

	if (r < 0)
		return r;
	r = ht_parse_int64(text, &v);
	if (r < 0)
		return r;
	*out = v;
	return 0;
}

static int event_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ht_watch *w = data;

	/* ctnetlink_conntrack_event(): a new entry is IPCTNL_MSG_CT_NEW with NLM_F_CREATE. */
	if (nlh->nlmsg_type == ((NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW) &&
	    (nlh->nlmsg_flags & NLM_F_CREATE))
		w->received++;
	return MNL_CB_OK;
}

/*
 * The socket's drop counter into w->dropped: the events the kernel could
 * not queue (sk_drops, SK_MEMINFO_DROPS of SO_MEMINFO, since 4.12). It is a
 * u32 and can wrap; it cannot pass 2^32 between two reads (that many
 * events take hours). Clears w->have_drops when the kernel does not give it.
 */
static void drops_read(struct ht_watch *w)
{
	uint32_t mem[SK_MEMINFO_VARS] = { 0 };
	socklen_t len = sizeof(mem);

	if (!w->have_drops)
		return;
	if (getsockopt(mnl_socket_get_fd(w->ev), SOL_SOCKET, SO_MEMINFO, mem, &len) < 0 ||
	    len < (SK_MEMINFO_DROPS + 1) * sizeof(mem[0])) {
		w->have_drops = false;
		return;
	}
	w->dropped += (uint32_t)(mem[SK_MEMINFO_DROPS] - w->drops_seen);
	w->drops_seen = mem[SK_MEMINFO_DROPS];
}

/*
 * An overrun since the last read that no recvmmsg() has reported yet:
 * SO_ERROR returns the socket's pending error and clears it, so it is
 * counted here, in the sample it belongs to, and never twice. Returns 0,
 * or another pending error as recvmmsg() would have (negative).
 */
static int overrun_pending(struct ht_watch *w)
{
	int e = 0;
	socklen_t len = sizeof(e);

	if (getsockopt(mnl_socket_get_fd(w->ev), SOL_SOCKET, SO_ERROR, &e, &len) < 0)
		return -errno;
	if (e == ENOBUFS)
		w->overruns++;
	else if (e != 0)
		return -e;
	return 0;
}

/*
 * Counts the NEW events in @len bytes of one message. A message the buffer
 * could not hold (MSG_TRUNC: an event is a few hundred bytes, so none
 * should be) still has its header, which is all the count needs.
 */
static int events_count(struct ht_watch *w, const char *buf, size_t len, bool truncated)
{
	if (truncated) {
		if (len >= sizeof(struct nlmsghdr))
			event_cb((const struct nlmsghdr *)buf, w);
		return 0;
	}
	/* Multicast messages carry seq 0 and port 0: mnl_cb_run() checks neither. */
	return mnl_cb_run(buf, len, 0, 0, event_cb, w) < 0 ? -errno : 0;
}

/*
 * Counts the events queued on the (non-blocking) socket, EVENT_BATCH a
 * system call. With @stoppable, returns early once the caller's stop flag
 * is set: a storm can refill the queue as fast as it is read. 0 or a
 * negative errno.
 */
static int events_drain(struct ht_watch *w, bool stoppable)
{
	if (!w->ev)
		return 0;
	for (;;) {
		int n, r;

		if (stoppable && w->cfg.stop && *w->cfg.stop)
			return 0;
		for (size_t i = 0; i < EVENT_BATCH; i++) {
			w->iov[i] = (struct iovec){ .iov_base = w->buf + i * EVENT_BUF_SIZE,
				                    .iov_len = EVENT_BUF_SIZE };
			w->msgs[i] = (struct mmsghdr){ .msg_hdr = {
				.msg_name = &w->addr[i], .msg_namelen = sizeof(w->addr[i]),
				.msg_iov = &w->iov[i], .msg_iovlen = 1 } };
		}
		n = recvmmsg(mnl_socket_get_fd(w->ev), w->msgs, EVENT_BATCH, MSG_DONTWAIT, NULL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			/*
			 * netlink_overrun(): events were dropped (the drop counter
			 * has them), the queue goes on. recvmmsg() reports it once
			 * it has no message to return before it.
			 */
			if (errno == ENOBUFS) {
				w->overruns++;
				continue;
			}
			return -errno;
		}
		for (int i = 0; i < n; i++) {
			const struct msghdr *m = &w->msgs[i].msg_hdr;

			/* Only the kernel's messages (port 0) are events. */
			if (m->msg_namelen != sizeof(struct sockaddr_nl) || w->addr[i].nl_pid != 0)
				continue;
			r = events_count(w, m->msg_iov->iov_base, w->msgs[i].msg_len,
			                 (m->msg_flags & MSG_TRUNC) != 0);
			if (r < 0)
				return r;
		}
		if (n < EVENT_BATCH)
			return 0;
	}
}

/* Subscribes to the NEW events; on failure leaves w->ev NULL and says why in w->source. */
static int events_open(struct ht_watch *w)
{
	unsigned group = NFNLGRP_CONNTRACK_NEW;
#ifdef HT_TEST_HOOKS
	const char *test_rcvbuf = getenv(HT_WATCH_TEST_RCVBUF_ENV);
#endif
	int size = EVENT_RCVBUF, e;
	int64_t enabled;
	const char *en;

	/* nf_conntrack_events: 0 off, 1 on, 2 when listened to (nf_conntrack_ecache.c). */
	if (read_sysctl(NULL, PATH_EVENTS, &enabled) == 0 && enabled == 0) {
		snprintf(w->source, sizeof(w->source),
		         "unknown: net.netfilter.nf_conntrack_events is 0");
		return 0;
	}
	w->buf = malloc((size_t)EVENT_BATCH * EVENT_BUF_SIZE);
	if (!w->buf)
		return -ENOMEM;
	w->ev = mnl_socket_open2(NETLINK_NETFILTER, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!w->ev)
		goto fail;
	if (mnl_socket_bind(w->ev, 0, MNL_SOCKET_AUTOPID) < 0)
		goto fail;
	/* Without CAP_NET_ADMIN: EPERM (af_netlink.c; nfnetlink lacks NL_CFG_F_NONROOT_RECV). */
	if (mnl_socket_setsockopt(w->ev, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0)
		goto fail;
#ifdef HT_TEST_HOOKS
	if (test_rcvbuf && *test_rcvbuf) {
		long long v;

		if (ht_parse_int64(test_rcvbuf, &v) < 0 || v < 1 || v > INT32_MAX) {
			errno = EINVAL;
			goto fail;
		}
		/* Test builds only (watch.h): a small buffer, read at samples only. */
		size = (int)v;
		w->test_slow = true;
		if (setsockopt(mnl_socket_get_fd(w->ev), SOL_SOCKET, SO_RCVBUF, &size,
		               sizeof(size)) < 0)
			goto fail;
	} else
#endif
	if (setsockopt(mnl_socket_get_fd(w->ev), SOL_SOCKET, SO_RCVBUFFORCE, &size,
	               sizeof(size)) < 0) {
		/* SO_RCVBUFFORCE passes net.core.rmem_max with CAP_NET_ADMIN; else take what we get. */
		(void)setsockopt(mnl_socket_get_fd(w->ev), SOL_SOCKET, SO_RCVBUF, &size,
		                 sizeof(size));
	}
	/* The drop counter from now on (0 on a new socket); without it, drops_read() says so. */
	w->have_drops = true;
	drops_read(w);
	w->dropped = 0;
	snprintf(w->source, sizeof(w->source), "%s", SRC_EVENTS);
	return 0;
fail:
	e = errno;
	if (e == ENOMEM)
		return -ENOMEM;
	if (w->ev)
		mnl_socket_close(w->ev);
	w->ev = NULL;
	en = ht_errno_name(e);
	snprintf(w->source, sizeof(w->source), "unknown: %s: %s", SRC_EVENTS, en ? en : "error");
	return 0;
}

int ht_watch_new(const struct ht_watch_config *cfg, struct ht_watch **out, struct ht_error *err)
{
	struct ht_watch *w;
	int64_t max;
	int r;

	if (!isfinite(cfg->interval) || cfg->interval < INTERVAL_MIN ||
	    cfg->interval > INTERVAL_MAX)
		return ht_error_set(err, EINVAL, "interval: expected 1 ms to a day");
	if (!isfinite(cfg->duration) || cfg->duration < 0)
		return ht_error_set(err, EINVAL, "duration: expected 0 (until stopped) or more");
	/* The second sample comes one interval in: a shorter duration would still run that long. */
	if (cfg->duration > 0 && cfg->duration < cfg->interval)
		return ht_error_set(err, EINVAL,
		                    "duration: expected 0 (until stopped) or at least the interval"
		                    " of %g s, got %g s", cfg->interval, cfg->duration);
	if (!isfinite(cfg->headroom) || cfg->headroom < 1)
		return ht_error_set(err, EINVAL, "headroom: expected 1 or more, got %g",
		                    cfg->headroom);
	/* The sysctl exists once nf_conntrack is loaded; a ctnetlink request would load it. */
	r = read_sysctl(cfg->root, PATH_MAX_ENTRIES, &max);
	if (r == -ENOENT)
		return ht_error_set(err, ENOENT, "%s: no such file: nf_conntrack is not loaded",
		                    PATH_MAX_ENTRIES);
	if (r < 0)
		return ht_error_set(err, -r, "%s: %s", PATH_MAX_ENTRIES, strerror(-r));

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->cfg = *cfg;
	if (cfg->root) {
		w->root = strdup(cfg->root);
		if (!w->root) {
			ht_watch_free(w);
			return -ENOMEM;
		}
		w->cfg.root = w->root;
	}
	r = ht_watch_acc_init(&w->acc, cfg->interval, cfg->headroom);
	if (r == 0 && ht_root_is_live(cfg->root))
		r = events_open(w);
	else if (r == 0)
		snprintf(w->source, sizeof(w->source), "unknown: --root has no events");
	if (r < 0) {
		ht_watch_free(w);
		return ht_error_set(err, -r, "%s", strerror(-r));
	}
	*out = w;
	return 0;
}

int ht_watch_sample(struct ht_watch *w, struct ht_watch_sample *s, struct ht_error *err)
{
	struct ht_ct_counters c;
	struct timespec now;
	int r;

	/* Events first, so that the count of the sample covers everything before its time. */
	/* Not stoppable: the last sample's count must be complete. */
	r = events_drain(w, false);
	if (r < 0)
		return ht_error_set(err, -r, "%s: %s", SRC_EVENTS, strerror(-r));
	if (w->ev) {
		/*
		 * Right after the drain and before the clock: the events dropped
		 * so far, and an overrun no read has reported yet.
		 */
		drops_read(w);
		r = overrun_pending(w);
		if (r < 0)
			return ht_error_set(err, -r, "%s: %s", SRC_EVENTS, strerror(-r));
	}
	if (clock_gettime(CLOCK_MONOTONIC, &now) < 0)
		return ht_error_set(err, errno, "clock_gettime: %s", strerror(errno));
	if (w->acc.samples == 0)
		w->t0 = now;

	*s = (struct ht_watch_sample){ .t = ts_diff(&now, &w->t0) };
	r = read_sysctl(w->cfg.root, PATH_MAX_ENTRIES, &s->max);
	if (r < 0)
		return ht_error_set(err, -r, "%s: %s", PATH_MAX_ENTRIES, strerror(-r));
	r = read_sysctl(w->cfg.root, PATH_TIME_WAIT, &s->time_wait);
	if (r < 0)
		return ht_error_set(err, -r, "%s: %s", PATH_TIME_WAIT, strerror(-r));
	r = ht_ctnetlink_counters(w->cfg.root, &c);
	if (r < 0)
		return ht_error_set(err, -r, "conntrack counters (%s): %s", c.source, strerror(-r));
	if (!c.have_count)
		return ht_error_set(err, ENODATA, "conntrack counters (%s): no entry count",
		                    c.source);
	s->count = c.count;
	s->drop = c.drop;
	s->have_drop = c.have_drop;
	s->early_drop = c.early_drop;
	s->have_early_drop = c.have_early_drop;
	if (w->ev) {
		s->insert = w->received + w->dropped;
		s->lost = w->dropped;
		s->overruns = w->overruns;
		s->have_insert = s->have_overruns = true;
		s->have_lost = w->have_drops;
	}

	r = ht_watch_acc_add(&w->acc, s);
	if (r < 0)
		return ht_error_set(err, -r, "sample at %.3f s: %s", s->t, strerror(-r));
	/*
	 * The next tick at least half an interval away: a sample that came late
	 * skips a tick rather than following at once, which would divide a
	 * few entries by a tiny time and make a false peak rate.
	 */
	w->next_due = ceil((s->t + w->cfg.interval / 2) / w->cfg.interval - 1e-9) * w->cfg.interval;
	return 0;
}

static void ts_add(struct timespec *t, double s)
{
	double whole = floor(s);

	t->tv_sec += (time_t)whole;
	t->tv_nsec += (long)((s - whole) * 1e9);
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

/*
 * Sleeps in ppoll() until @due, counting events; @mask is the signal mask
 * during the sleep (NULL: unchanged). Without a stop flag any signal ends
 * the wait; with one, only the flag does. The socket is watched only from
 * EVENT_SPACING after the last read on (a batch a wake-up), and not at all
 * in the test mode of a test build (HT_WATCH_TEST_RCVBUF_ENV).
 */
static int wait_until(struct ht_watch *w, const struct timespec *due, const sigset_t *mask)
{
	volatile sig_atomic_t *stop = w->cfg.stop;

	for (;;) {
		struct pollfd p = { .fd = w->ev ? mnl_socket_get_fd(w->ev) : -1, .events = POLLIN };
		struct timespec now, left = { 0 };
#ifdef HT_TEST_HOOKS
		bool poll_ev = w->ev && !w->test_slow;
#else
		bool poll_ev = w->ev;
#endif
		double d;
		int r;

		/* Before every sleep and so after every drain. */
		if (stop && *stop)
			return -EINTR;
		if (clock_gettime(CLOCK_MONOTONIC, &now) < 0)
			return -errno;
		d = ts_diff(due, &now);
		if (d <= 0)
			return 0;
		if (poll_ev) {
			double rest = EVENT_SPACING - ts_diff(&now, &w->last_drain);

			/* Too soon after a read: sleep without the socket until the spacing is over. */
			if (rest > 0) {
				poll_ev = false;
				if (rest < d)
					d = rest;
			}
		}
		/* A relative timeout, but recomputed from the absolute @due: no drift. */
		ts_add(&left, d);
		r = ppoll(poll_ev ? &p : NULL, poll_ev ? 1 : 0, &left, mask);
		if (r < 0) {
			if (errno == EINTR && stop)
				continue;
			return -errno;
		}
		if (r > 0) {
			r = events_drain(w, true);
			if (r < 0)
				return r;
			if (clock_gettime(CLOCK_MONOTONIC, &w->last_drain) < 0)
				return -errno;
		}
	}
}

int ht_watch_wait(struct ht_watch *w)
{
	struct timespec due = w->t0;
	sigset_t stop_signals, old, during;
	int r;

	if (w->acc.samples == 0)
		return 0;
	ts_add(&due, w->next_due);
	if (!w->cfg.stop)
		return wait_until(w, &due, NULL);
	/*
	 * A SIGINT between the check of *stop and the start of ppoll() would
	 * leave it sleeping a whole interval: keep SIGINT and SIGTERM blocked
	 * but during ppoll(), which unblocks them atomically (so they interrupt
	 * it with EINTR and the flag is seen at once), then restore the mask.
	 */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	r = pthread_sigmask(SIG_BLOCK, &stop_signals, &old);
	if (r != 0)
		return -r;
	during = old;
	sigdelset(&during, SIGINT);
	sigdelset(&during, SIGTERM);
	r = wait_until(w, &due, &during);
	(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

bool ht_watch_done(const struct ht_watch *w)
{
	/* Samples are never early, so one at the duration's tick has t >= duration. */
	return w->cfg.duration > 0 && w->acc.samples > 0 &&
	       w->acc.last.t >= w->cfg.duration - w->cfg.interval * 1e-6;
}

const char *ht_watch_source(const struct ht_watch *w)
{
	return w->source;
}

int ht_watch_summary(const struct ht_watch *w, struct ht_watch_summary *out)
{
	return ht_watch_acc_summary(&w->acc, w->source, out);
}

void ht_watch_free(struct ht_watch *w)
{
	if (!w)
		return;
	if (w->ev)
		mnl_socket_close(w->ev);
	ht_watch_acc_free(&w->acc);
	free(w->buf);
	free(w->root);
	free(w);
}
