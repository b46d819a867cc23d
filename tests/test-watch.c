/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <signal.h>
#include <setjmp.h>
#include <cmocka.h>

#include <json-c/json.h>

#include "shared/util.h"
#include "cli/watch-print.h"
#include "collect/watch.h"
#include "test-util.h"

#define assert_near(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-6)

/* A sample with every counter known. */
static struct ht_watch_sample S(double t, int64_t count, int64_t max, int64_t insert,
                                int64_t drop, int64_t early_drop, int64_t time_wait)
{
	return (struct ht_watch_sample){
		.t = t, .count = count, .max = max, .insert = insert, .drop = drop,
		.early_drop = early_drop, .time_wait = time_wait,
		.have_insert = true, .have_drop = true, .have_early_drop = true,
	};
}

static void summarize(struct ht_watch_sample *v, size_t n, double interval, double headroom,
                      struct ht_watch_summary *out)
{
	struct ht_watch_acc a;

	assert_int_equal(ht_watch_acc_init(&a, interval, headroom), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ht_watch_acc_add(&a, &v[i]), 0);
	assert_int_equal(ht_watch_acc_summary(&a, "test", out), 0);
	ht_watch_acc_free(&a);
}

/*
 * The field case, at 1 s samples: the table climbs 1000 entries a second
 * (one per new connection, nothing expires within TIME_WAIT 120 s) to its
 * cap of 4096, then sits there for 11 samples (t = 5 .. 15) while new SYNs
 * are dropped, 500 packets a second.
 */
static size_t field_case(struct ht_watch_sample *v)
{
	size_t n = 0;

	for (int t = 0; t <= 4; t++)
		v[n++] = S(t, 1000 * t, 4096, 1000 * t, 7, 0, 120);
	for (int t = 5; t <= 15; t++)
		v[n++] = S(t, 4096, 4096, 4096, 7 + 500 * (t - 5), 0, 120);
	return n;
}

static void test_field_case(void **state _unused_)
{
	struct ht_watch_sample v[16];
	struct ht_watch_summary s;
	size_t n = field_case(v);

	summarize(v, n, 1.0, 2, &s);
	/* t = 0 .. 15: 16 samples, 15 s. */
	assert_int_equal(s.samples, 16);
	assert_near(s.duration, 15);
	assert_near(s.interval, 1);
	assert_int_equal(s.peak_count, 4096);
	assert_near(s.peak_pct, 100);
	/* Per sample: t = 1: (1000 - 0) / 1 s = 1000/s; t = 5: (4096 - 4000) / 1 = 96/s. */
	assert_true(v[1].have_new_rate);
	assert_near(v[1].new_per_s, 1000);
	assert_near(v[5].new_per_s, 96);
	assert_near(v[1].pct_max, 1000.0 * 100 / 4096);
	/* Drops from t = 6: (507 - 7) / 1 s = 500/s. */
	assert_near(v[6].drops_per_s, 500);
	assert_false(v[0].have_new_rate);
	assert_false(v[0].have_drop_rate);
	/* Intervals t = 0->1 .. 3->4: 1000/s each, the largest single interval. */
	assert_true(s.have_rate);
	assert_near(s.peak_interval_rate, 1000);
	/*
	 * Windows of at least 5 s: t = 0 -> 5, insert 0 -> 4096: 4096 / 5 s =
	 * 819.2/s, the largest (1 -> 6: 3096 / 5 = 619.2; 0 -> 6: 4096 / 6 =
	 * 682.7; the later ones see no insert at all).
	 */
	assert_near(s.peak_rate, 819.2);
	/* 4096 inserts over 15 s = 273.0666.../s. */
	assert_near(s.mean_rate, 4096.0 / 15);
	/* drop goes 7 -> 7 + 500 x 10 = 5007; early_drop stays 0: 5000. */
	assert_true(s.have_drops);
	assert_int_equal(s.drops, 5000);
	/* count == max at t = 5, 6, ..., 15: 11 consecutive samples. */
	assert_int_equal(s.pinned_samples, 11);
	assert_false(s.full_at_start);
	/* 4096 / 120 s = 34.133... */
	assert_near(s.ceiling, 4096.0 / 120);
	/*
	 * Pinned: working set = 5 s peak rate x TIME_WAIT = 819.2 x 120 = 98304,
	 * x headroom 2 = 196608; 2^17 = 131072 < 196608 <= 2^18 = 262144.
	 */
	assert_int_equal(s.basis, HT_WATCH_BASIS_RATE);
	assert_near(s.working_set, 98304);
	assert_near(s.need, 196608);
	assert_int_equal(s.pow2, 262144);
	assert_int_equal(s.recommended_max, 262144);
	assert_int_equal(s.max, 4096);
	assert_int_equal(s.time_wait, 120);
	assert_string_equal(s.source, "test");

	/* Headroom 1: 98304 -> 2^17 = 131072 (2^16 = 65536 is short). */
	summarize(v, n, 1.0, 1, &s);
	assert_int_equal(s.recommended_max, 131072);
}

static void test_not_pinned(void **state _unused_)
{
	/* 200 connections a second for 4 s at 0.25 s samples: 50 each. */
	struct ht_watch_sample v[17];
	struct ht_watch_summary s;

	for (int i = 0; i <= 16; i++)
		v[i] = S(0.25 * i, 50 * i, 262144, 1000 + 50 * i, 0, 0, 120);
	summarize(v, 17, 0.25, 2, &s);
	/*
	 * 16 x 50 = 800 entries, 800 / 4 s = 200/s; every interval 50 / 0.25 =
	 * 200/s. The run (4 s) is shorter than the 5 s window: the peak rate is
	 * the rate over the whole run, 200/s.
	 */
	assert_int_equal(s.peak_count, 800);
	assert_near(s.peak_interval_rate, 200);
	assert_near(s.peak_rate, 200);
	assert_near(s.mean_rate, 200);
	assert_int_equal(s.pinned_samples, 0);
	assert_int_equal(s.drops, 0);
	/* 800 x 2 = 1600 -> 2048, below the max of 262144, which stays. */
	assert_int_equal(s.basis, HT_WATCH_BASIS_COUNT);
	assert_int_equal(s.pow2, 2048);
	assert_int_equal(s.recommended_max, 262144);

	/* The same load under a max of 1024: 2048 is a raise. */
	for (int i = 0; i <= 16; i++)
		v[i].max = 1024;
	summarize(v, 17, 0.25, 2, &s);
	assert_int_equal(s.recommended_max, 2048);
	/* The last sample at the cap (1024 = max): pinned for 1 sample. */
	v[16].count = 1024;
	summarize(v, 17, 0.25, 2, &s);
	assert_int_equal(s.peak_count, 1024);
	assert_int_equal(s.pinned_samples, 1);
}

static void test_longest_run_and_cap_basis(void **state _unused_)
{
	/* At the cap at t = 1, 2, then 4, 5, 6: the longest run is 3. */
	int64_t counts[] = { 100, 512, 512, 400, 512, 600, 512, 10 };
	struct ht_watch_sample v[8];
	struct ht_watch_summary s;

	for (int i = 0; i < 8; i++) {
		v[i] = S(i, counts[i], 512, 0, 0, 0, 60);
		v[i].have_insert = false;
	}
	summarize(v, 8, 0, 2, &s);
	assert_int_equal(s.pinned_samples, 3);
	/* Interval 0 given: the mean spacing, 7 s / 7 = 1 s. */
	assert_near(s.interval, 1);
	/* 600 > max 512 (a lowered max): the peak count, 117.2% of its max. */
	assert_int_equal(s.peak_count, 600);
	assert_near(s.peak_pct, 600.0 * 100 / 512);
	/* No insert known: no rate; pinned, so the cap basis: 600 x 2 = 1200 -> 2048. */
	assert_false(s.have_rate);
	assert_false(v[3].have_new_rate);
	assert_int_equal(s.basis, HT_WATCH_BASIS_CAP);
	assert_int_equal(s.recommended_max, 2048);
	assert_string_equal(ht_watch_basis_name(s.basis), "cap");

	/*
	 * Rate known but small: 9 per 1 s interval, so 9/s over any window
	 * (t = 0 -> 5: 45 / 5 s); 9/s x 60 s = 540, below the peak count 600 -> cap.
	 */
	for (int i = 0; i < 8; i++) {
		v[i].insert = 9 * i;
		v[i].have_insert = true;
	}
	summarize(v, 8, 0, 2, &s);
	assert_near(s.peak_rate, 9);
	assert_int_equal(s.basis, HT_WATCH_BASIS_CAP);
	/* 10/s x 60 s = 600 reaches the peak count: the rate basis, 600 x 2 -> 2048. */
	for (int i = 0; i < 8; i++)
		v[i].insert = 10 * i;
	summarize(v, 8, 0, 2, &s);
	assert_int_equal(s.basis, HT_WATCH_BASIS_RATE);
	assert_near(s.working_set, 600);
	/* Full from the first sample: a lower bound, and said so. */
	v[0].count = 512;
	summarize(v, 8, 0, 2, &s);
	assert_true(s.full_at_start);
	assert_int_equal(s.pinned_samples, 3);
}

static void test_counter_wrap_and_unknown(void **state _unused_)
{
	struct ht_watch_sample v[4];
	struct ht_watch_summary s;

	/* One CPU's u32 wraps: 4294967290 = 2^32 - 6 -> 4, a difference of 10. */
	v[0] = S(0, 0, 100, 0, 4294967290LL, 0, 120);
	v[1] = S(2, 0, 100, 0, 4, 0, 120);
	/* Back by more than 2^32 (another boot): unknown. */
	v[2] = S(3, 0, 100, 0, 4, 5000000000LL, 120);
	v[3] = S(4, 0, 100, 0, 4, 1, 120);
	summarize(v, 4, 1, 2, &s);
	assert_true(v[1].have_drop_rate);
	assert_near(v[1].drops_per_s, 10.0 / 2);
	assert_false(v[3].have_drop_rate);
	assert_false(s.have_drops);

	/* An unknown insert stops the rate across it, not after it. */
	v[0] = S(0, 0, 100, 0, 0, 0, 120);
	v[1] = S(1, 0, 100, 40, 0, 0, 120);
	v[2] = S(2, 0, 100, 0, 0, 0, 120);
	v[2].have_insert = false;
	v[3] = S(3, 0, 100, 130, 0, 0, 120);
	summarize(v, 4, 1, 2, &s);
	assert_true(v[1].have_new_rate);
	assert_false(v[2].have_new_rate);
	assert_false(v[3].have_new_rate);
	/*
	 * Only the interval 0 -> 1 is known: 40 in 1 s; the run (3 s) is under
	 * 5 s, so the peak is the rate over the known second. The mean counts the
	 * unknown 2 s as nothing: 40 / 3 s, a lower bound, as the summary says.
	 */
	assert_near(s.peak_interval_rate, 40);
	assert_near(s.peak_rate, 40);
	assert_near(s.mean_rate, 40.0 / 3);
	assert_int_equal(s.inserts, 40);
	assert_true(s.rate_lower_bound);
	assert_int_equal(s.intervals_short, 2);

	/*
	 * insert going back (40 -> 0: the counting restarted, a record appended
	 * to another) is no wrap: that interval is unknown, not 2^32 - 40 new.
	 */
	v[2].have_insert = true;
	summarize(v, 4, 1, 2, &s);
	assert_false(v[2].have_new_rate);
	/* t = 2 -> 3: 0 -> 130, 130/s, the largest interval. */
	assert_true(v[3].have_new_rate);
	assert_near(v[3].new_per_s, 130);
	assert_near(s.peak_interval_rate, 130);
	/*
	 * Known: 40 in 1 s and 130 in 1 s, (40 + 130) / 2 s = 85/s over the known
	 * time: under 5 s, the peak. The mean over the run of 3 s: 170 / 3, a
	 * lower bound.
	 */
	assert_near(s.mean_rate, 170.0 / 3);
	assert_near(s.peak_rate, 85);
	assert_true(s.rate_lower_bound);
	assert_int_equal(s.intervals_short, 1);
}

/* The 5 s peak from its definition: every pair, no unknown interval between. */
static double brute_window_peak(const struct ht_watch_sample *v, size_t n, bool *have)
{
	double best = 0;

	*have = false;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n && v[j].have_new_rate; j++) {
			double dt = v[j].t - v[i].t;
			double r = (double)(v[j].insert - v[i].insert) / dt;

			if (dt >= 5 - 1e-6 && (!*have || r > best)) {
				best = r;
				*have = true;
			}
		}
	return best;
}

static void test_window_peak(void **state _unused_)
{
	struct ht_watch_sample v[2000];
	struct ht_watch_summary s;
	unsigned seed = 12345;
	double t = 0;
	int64_t ins = 0;
	bool have;

	/*
	 * A burst of 1000 in one 0.25 s interval (t = 9.75 -> 10.00) in a quiet
	 * run of 2 per interval (8/s), t = 0 .. 20 s: 1000 / 0.25 s = 4000/s
	 * over that interval, but over 5 s (20 intervals) at most the burst and
	 * 19 quiet intervals: (1000 + 2 x 19) / 5 s = 1038 / 5 = 207.6/s.
	 */
	for (int i = 0; i <= 80; i++) {
		ins += i == 40 ? 1000 : i > 0 ? 2 : 0;
		v[i] = S(0.25 * i, 0, 4096, ins, 0, 0, 120);
	}
	summarize(v, 81, 0.25, 2, &s);
	assert_near(s.peak_interval_rate, 4000);
	assert_near(s.peak_rate, 207.6);

	/* Irregular times, bursts and lost intervals: the same as every pair tried. */
	for (int round = 0; round < 20; round++) {
		size_t n = 200 + (size_t)round * 90;

		t = 0;
		ins = 0;
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			t += 0.01 + (double)((seed >> 8) % 1000) / 1000.0 * (round % 3 ? 0.5 : 3);
			ins += (seed >> 4) % 7 == 0 ? (seed >> 12) % 5000 : (seed >> 12) % 50;
			v[i] = S(t, 0, 4096, ins, 0, 0, 120);
			/* One sample in 40 with its insert unknown (events lost). */
			v[i].have_insert = (seed >> 20) % 40 != 0;
		}
		summarize(v, n, 0, 2, &s);
		{
			double want = brute_window_peak(v, n, &have);

			if (have) {
				assert_true(fabs(s.peak_rate - want) < 1e-9 * (1 + want));
			} else {
				/* No window: the rate over the intervals with a count. */
				int64_t sum = 0;
				double time = 0;

				for (size_t i = 1; i < n; i++)
					if (v[i].have_new_rate) {
						sum += v[i].insert - v[i - 1].insert;
						time += v[i].t - v[i - 1].t;
					}
				assert_true(fabs(s.peak_rate - (double)sum / time) <
				            1e-9 * (1 + s.peak_rate));
			}
		}
	}
}

static void test_limits(void **state _unused_)
{
	struct ht_watch_sample v[2];
	struct ht_watch_summary s;

	/* 10^7/s x 120 s x 2 = 2.4 x 10^9 > 2^30 = 1073741824: held to 2^30. */
	v[0] = S(0, 4096, 4096, 0, 0, 0, 120);
	v[1] = S(1, 4096, 4096, 10000000, 0, 0, 120);
	summarize(v, 2, 1, 2, &s);
	assert_int_equal(s.pow2, 1073741824);
	assert_int_equal(s.recommended_max, 1073741824);
	/* A max above 2^30 already (2^31 - 1) stays. */
	v[0].max = v[1].max = 2147483647;
	v[0].count = v[1].count = 2147483647;
	summarize(v, 2, 1, 2, &s);
	assert_int_equal(s.recommended_max, 2147483647);
	/* TIME_WAIT 0 counts as 1 s in the ceiling: 4096 / 1. */
	v[0] = S(0, 0, 4096, 0, 0, 0, 0);
	summarize(v, 1, 1, 2, &s);
	assert_near(s.ceiling, 4096);
	/* One sample: no interval, no rate, drops 0. */
	assert_int_equal(s.samples, 1);
	assert_near(s.duration, 0);
	assert_false(s.have_rate);
	assert_true(s.have_drops);
	assert_int_equal(s.drops, 0);
	/* peak count 0: 0 x 2 -> pow2ceil gives 1, and the max stays. */
	assert_int_equal(s.recommended_max, 4096);
}

static void test_acc_errors(void **state _unused_)
{
	struct ht_watch_acc a;
	struct ht_watch_summary s;
	struct ht_watch_sample v;

	assert_int_equal(ht_watch_acc_init(&a, 1, 0.5), -EINVAL);
	assert_int_equal(ht_watch_acc_init(&a, -1, 2), -EINVAL);
	assert_int_equal(ht_watch_acc_init(&a, 1, NAN), -EINVAL);
	assert_int_equal(ht_watch_acc_init(&a, 1, 2), 0);
	assert_int_equal(ht_watch_acc_summary(&a, "", &s), -ENODATA);
	v = S(1, 0, 0, 0, 0, 0, 120);
	assert_int_equal(ht_watch_acc_add(&a, &v), -EINVAL);
	v = S(1, -1, 10, 0, 0, 0, 120);
	assert_int_equal(ht_watch_acc_add(&a, &v), -EINVAL);
	v = S(1, 0, 10, 0, 0, 0, 120);
	assert_int_equal(ht_watch_acc_add(&a, &v), 0);
	v = S(1, 0, 10, 0, 0, 0, 120);
	assert_int_equal(ht_watch_acc_add(&a, &v), -EINVAL);
	v = S(0.5, 0, 10, 0, 0, 0, 120);
	assert_int_equal(ht_watch_acc_add(&a, &v), -EINVAL);
	assert_int_equal(a.samples, 1);
	ht_watch_acc_free(&a);
}

static char *memtext(void (*fn)(FILE *, const void *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	fn(m, arg);
	assert_int_equal(fclose(m), 0);
	return buf;
}

static void write_record(FILE *m, const void *arg)
{
	const struct ht_watch_sample *v = arg;

	assert_int_equal(ht_watch_record_write(m, v, 3), 0);
}

static void test_record_roundtrip(void **state _unused_)
{
	struct ht_watch_sample v[3], *back = NULL;
	_cleanup_free_ char *text = NULL;
	struct ht_error err = { "" };
	size_t n = 0;
	FILE *m;

	v[0] = S(0, 0, 4096, 0, 7, 0, 120);
	v[1] = S(0.25, 51, 4096, 51, 7, 0, 120);
	v[1].have_early_drop = false;
	v[1].lost = 3;
	v[1].overruns = 1;
	v[1].have_lost = v[1].have_overruns = true;
	v[2] = S(12.5, 4096, 4096, 4096, 5007, 3, 30);
	v[2].have_insert = false;
	text = memtext(write_record, v);
	/* t to the nanosecond: 9 decimals; version 2: lost and overruns last. */
	/* The column names on line 2 (a comment to the reader). */
	assert_string_equal(text, "# hosttune watch 2\n"
	                          "# t count max insert drop early_drop time_wait lost overruns\n"
	                          "0.000000000 0 4096 0 7 0 120 - -\n"
	                          "0.250000000 51 4096 51 7 - 120 3 1\n"
	                          "12.500000000 4096 4096 - 5007 3 30 - -\n");
	m = fmemopen(text, strlen(text), "r");
	assert_non_null(m);
	assert_int_equal(ht_watch_record_read(m, "mem", &back, &n, &err), 0);
	fclose(m);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++) {
		assert_near(back[i].t, v[i].t);
		assert_int_equal(back[i].count, v[i].count);
		assert_int_equal(back[i].max, v[i].max);
		assert_int_equal(back[i].have_insert, v[i].have_insert);
		if (v[i].have_insert)
			assert_int_equal(back[i].insert, v[i].insert);
		assert_int_equal(back[i].have_drop, v[i].have_drop);
		assert_int_equal(back[i].drop, v[i].drop);
		assert_int_equal(back[i].have_early_drop, v[i].have_early_drop);
		if (v[i].have_early_drop)
			assert_int_equal(back[i].early_drop, v[i].early_drop);
		assert_int_equal(back[i].time_wait, v[i].time_wait);
		assert_int_equal(back[i].have_lost, v[i].have_lost);
		assert_int_equal(back[i].have_overruns, v[i].have_overruns);
		if (v[i].have_lost)
			assert_int_equal(back[i].lost, v[i].lost);
		if (v[i].have_overruns)
			assert_int_equal(back[i].overruns, v[i].overruns);
	}
	free(back);
	back = NULL;

	/* A record of hosttune before, t with 3 decimals, reads the same. */
	{
		static const char old[] = "# hosttune watch 1\n"
		                          "0.000 0 4096 0 7 0 120\n"
		                          "0.250 51 4096 51 7 - 120\n"
		                          "12.500 4096 4096 - 5007 3 30\n";

		m = fmemopen((void *)old, strlen(old), "r");
		assert_non_null(m);
		assert_int_equal(ht_watch_record_read(m, "old", &back, &n, &err), 0);
		fclose(m);
		assert_int_equal(n, 3);
		for (size_t i = 0; i < n; i++) {
			assert_true(back[i].t == v[i].t);
			/* Version 1 has no lost and overruns: unknown. */
			assert_false(back[i].have_lost || back[i].have_overruns);
		}
		assert_int_equal(back[1].insert, 51);
		free(back);
		back = NULL;
	}

	/* A version 2 record written before the column names were: the same samples. */
	{
		static const char bare[] = "# hosttune watch 2\n"
		                           "0.000000000 0 4096 0 7 0 120 - -\n"
		                           "0.250000000 51 4096 51 7 - 120 3 1\n"
		                           "12.500000000 4096 4096 - 5007 3 30 - -\n";

		m = fmemopen((void *)bare, strlen(bare), "r");
		assert_non_null(m);
		assert_int_equal(ht_watch_record_read(m, "bare", &back, &n, &err), 0);
		fclose(m);
		assert_int_equal(n, 3);
		for (size_t i = 0; i < n; i++) {
			assert_true(back[i].t == v[i].t);
			assert_int_equal(back[i].count, v[i].count);
		}
		assert_int_equal(back[1].lost, 3);
		free(back);
		back = NULL;
	}
}

static void write_record2(FILE *m, const void *arg)
{
	assert_int_equal(ht_watch_record_write(m, arg, 2), 0);
}

/*
 * Two samples 0.4 ms apart (a late sample, or a replay of an --interval 1ms
 * run): with 3 decimals both were written "1.000" and the record was
 * refused as not increasing. To the nanosecond: 1.000200000 and 1.000600000,
 * read back 0.0004 s apart.
 */
static void test_record_submillisecond(void **state _unused_)
{
	struct ht_watch_sample v[2], *back = NULL;
	_cleanup_free_ char *text = NULL;
	struct ht_watch_summary s;
	struct ht_error err = { "" };
	size_t n = 0;
	FILE *m;

	v[0] = S(1.0002, 10, 4096, 100, 0, 0, 120);
	v[1] = S(1.0006, 11, 4096, 101, 0, 0, 120);
	text = memtext(write_record2, v);
	assert_string_equal(text, "# hosttune watch 2\n"
	                          "# t count max insert drop early_drop time_wait lost overruns\n"
	                          "1.000200000 10 4096 100 0 0 120 - -\n"
	                          "1.000600000 11 4096 101 0 0 120 - -\n");
	m = fmemopen(text, strlen(text), "r");
	assert_non_null(m);
	assert_int_equal(ht_watch_record_read(m, "sub", &back, &n, &err), 0);
	fclose(m);
	assert_int_equal(n, 2);
	assert_true(fabs(back[1].t - back[0].t - 0.0004) < 1e-12);
	/* 1 new entry in 0.4 ms: 1 / 0.0004 s = 2500/s over the interval. */
	assert_int_equal(ht_watch_replay(back, n, 2, "sub", &s), 0);
	assert_true(fabs(s.peak_interval_rate - 2500) < 1e-6);
	free(back);
}

/* Parses @text as a record named "r"; returns the error message ("" on success). */
static const char *read_text(const char *text, struct ht_error *err)
{
	struct ht_watch_sample *v = NULL;
	size_t n = 0;
	FILE *m = fmemopen((void *)text, strlen(text), "r");
	int r;

	assert_non_null(m);
	err->msg[0] = '\0';
	r = ht_watch_record_read(m, "r", &v, &n, err);
	fclose(m);
	free(v);
	if (r == 0)
		assert_string_equal(err->msg, "");
	else
		assert_int_equal(r, -EINVAL);
	return err->msg;
}

static void test_record_errors(void **state _unused_)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "", "r:1:1: expected '# hosttune watch 2' or '# hosttune watch 1', found end of file" },
		{ "# hosttune watch 3\n",
		  "r:1:1: expected '# hosttune watch 2' or '# hosttune watch 1',"
		  " found '# hosttune watch 3'" },
		{ "# hosttune watch 2\n", "r:2:1: expected a sample line, found end of file" },
		/* Version 2: 9 fields, lost and overruns last, '-' when unknown. */
		{ "# hosttune watch 2\n0 1 2 3 4 5 6\n",
		  "r:2:14: expected lost (9 fields: t count max insert drop early_drop time_wait"
		  " lost overruns), found end of line" },
		{ "# hosttune watch 2\n0 1 2 3 4 5 6 7 8 9\n",
		  "r:2:19: expected end of line after overruns, found '9'" },
		{ "# hosttune watch 2\n0 1 2 3 4 5 6 7 x\n",
		  "r:2:17: expected overruns, a whole number or '-', found 'x'" },
		{ "# hosttune watch 2\n0 1 2 3 4 5 6 -1 0\n",
		  "r:2:15: expected lost, a whole number or '-', found '-1'" },
		{ "# hosttune watch 2\n0 1 2 3 4 5 6 7 8\n1 1 2 - - - 6 - -\n", "" },
		/* A version-1 line in a version-2 record is refused, and the other way round. */
		{ "# hosttune watch 1\n0 1 2 3 4 5 6 7 8\n",
		  "r:2:15: expected end of line after time_wait, found '7'" },
		{ "# hosttune watch 1\n", "r:2:1: expected a sample line, found end of file" },
		{ "# hosttune watch 1\n# only a comment\n\n",
		  "r:4:1: expected a sample line, found end of file" },
		{ "# hosttune watch 1\n0 1 2 3 4 5\n",
		  "r:2:12: expected time_wait"
		  " (7 fields: t count max insert drop early_drop time_wait),"
		  " found end of line" },
		{ "# hosttune watch 1\n0 1 2 3 4 5 6 7\n",
		  "r:2:15: expected end of line after time_wait, found '7'" },
		{ "# hosttune watch 1\nabc 1 2 3 4 5 6\n",
		  "r:2:1: expected t, seconds such as 1.250 (up to 9 decimals), found 'abc'" },
		{ "# hosttune watch 1\n1. 1 2 3 4 5 6\n",
		  "r:2:1: expected t, seconds such as 1.250 (up to 9 decimals), found '1.'" },
		{ "# hosttune watch 1\n-1 1 2 3 4 5 6\n",
		  "r:2:1: expected t, seconds such as 1.250 (up to 9 decimals), found '-1'" },
		{ "# hosttune watch 1\n0 x 2 3 4 5 6\n",
		  "r:2:3: expected count, a whole number, found 'x'" },
		{ "# hosttune watch 1\n0 - 2 3 4 5 6\n",
		  "r:2:3: expected count, a whole number, found '-'" },
		{ "# hosttune watch 1\n0  1\t0 3 4 5 6\n",
		  "r:2:6: expected max, a number above 0, found '0'" },
		{ "# hosttune watch 1\n0 1 2 3.5 4 5 6\n",
		  "r:2:7: expected insert, a whole number or '-', found '3.5'" },
		{ "# hosttune watch 1\n0 1 2 3 4 5 -\n",
		  "r:2:13: expected time_wait, a whole number, found '-'" },
		{ "# hosttune watch 1\n1.5 1 2 3 4 5 6\n1.500 1 2 3 4 5 6\n",
		  "r:3:1: expected t after the previous sample's 1.5, found '1.500'" },
		/* 2^63 = 9223372036854775808: one past the largest. */
		{ "# hosttune watch 1\n0 1 2 3 4 5 9223372036854775808\n",
		  "r:2:13: expected time_wait, a whole number up to 9223372036854775807 (2^63 - 1),"
		  " found '9223372036854775808'" },
		{ "# hosttune watch 1\n0 1 2 99999999999999999999 4 5 6\n",
		  "r:2:7: expected insert, a whole number up to 9223372036854775807 (2^63 - 1)"
		  " or '-', found '99999999999999999999'" },
		/* 2^63 - 1 itself, and 19 digits below it, are numbers. */
		{ "# hosttune watch 1\n0 9223372036854775807 2 3 4 5 1234567890123456789\n", "" },
		{ "# hosttune watch 1\n"
		  "0 1 2 3 4 5 6 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
		  "r:2:15: expected end of line after time_wait,"
		  " found 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'" },
		/* Comments, blank lines, CRLF and tabs are fine. */
		{ "# hosttune watch 1\n# t count ...\n\n"
		  "0\t1 2 - - - 6\r\n  1.000000001 1 2 3 4 5 6\n",
		  "" },
	};
	struct ht_error err;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_string_equal(read_text(cases[i].text, &err), cases[i].msg);

	/* A NUL byte in a line. */
	{
		static const char text[] = "# hosttune watch 1\n0 1\0 2 3 4 5 6\n";
		struct ht_watch_sample *v = NULL;
		size_t n = 0;
		FILE *m = fmemopen((void *)text, sizeof(text) - 1, "r");

		assert_int_equal(ht_watch_record_read(m, "r", &v, &n, &err), -EINVAL);
		fclose(m);
		assert_string_equal(err.msg, "r:2:4: expected text, found a NUL byte");
	}
	/* A missing file: the errno of fopen(). */
	{
		struct ht_watch_sample *v = NULL;
		size_t n = 0;

		assert_int_equal(ht_watch_record_load("/nonexistent/x.record", &v, &n, &err),
		                 -ENOENT);
		assert_string_equal(err.msg, "/nonexistent/x.record: No such file or directory");
	}
}

static void put_summary(FILE *m, const void *arg)
{
	assert_int_equal(ht_watch_format_summary(m, arg), 0);
}

static void put_samples(FILE *m, const void *arg)
{
	const struct ht_watch_sample *v = arg;

	assert_int_equal(ht_watch_format_header(m), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(ht_watch_format_sample(m, &v[i]), 0);
}

static void test_format(void **state _unused_)
{
	struct ht_watch_sample v[16];
	struct ht_watch_summary s;
	_cleanup_free_ char *lines = NULL, *text = NULL, *text2 = NULL;

	summarize(v, field_case(v), 1.0, 2, &s);
	lines = memtext(put_samples, v);
	/* t = 1: 1000 / 4096 = 24.4%, 1000 new/s, 0 drops/s; t = 0: no rates. */
	assert_string_equal(lines,
	        "      t/s      count        max   %max      new/s    drops/s\n"
	        "    0.000          0       4096    0.0          -          -\n"
	        "    1.000       1000       4096   24.4     1000.0        0.0\n");
	text = memtext(put_summary, &s);
	assert_string_equal(text,
	        "16 samples over 15.000 s, every 1.000 s\n"
	        "  peak count      4096 entries = 100.0% of max 4096\n"
	        "  at the cap      11 consecutive samples (count >= max)\n"
	        "  new conns/s     peak 819.2 over 5 s, 1000.0 over one interval, mean 273.1"
	        " (test)\n"
	        "  events lost     none\n"
	        "  dropped         5000 (drop + early_drop)\n"
	        "  ceiling         max 4096 / TIME_WAIT 120 s = 34.1 new connections/s"
	        " at a full table\n"
	        "  recommended     nf_conntrack_max = 262144\n"
	        "  The table sat at its cap for 11 consecutive samples: its count\n"
	        "  only shows the cap. The table must hold every connection of the\n"
	        "  last TIME_WAIT seconds: peak rate over 5 s 819.2/s x TIME_WAIT 120 s\n"
	        "  = 98304 entries, x headroom 2 = 196608, next power of two 262144.\n");

	/* Not pinned, below the current max. */
	for (int i = 0; i < 16; i++) {
		v[i].count = 10 * i;
		v[i].max = 262144;
	}
	summarize(v, 16, 1.0, 2, &s);
	text2 = memtext(put_summary, &s);
	/* 150 x 2 = 300 -> 512, under 262144. */
	assert_non_null(strstr(text2, "  The table never reached its cap, so its peak count is the"
	                              " working\n  set: 150 entries x headroom 2 = 300, next power"
	                              " of two 512.\n  hosttune only raises the table: the current"
	                              " max 262144 stays.\n"));
}

/* The frames of the live view of @n samples (their derived fields as set), one string. */
static char *view_text(struct ht_watch_view *v, const struct ht_watch_sample *smp, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ht_watch_view_draw(m, v, &smp[i]), 0);
	assert_int_equal(fclose(m), 0);
	return buf;
}

/* The line of @text (a frame's, escape codes kept) that starts with @prefix. */
static void line_of(const char *text, const char *prefix, char *out, size_t size)
{
	const char *p = text, *last = NULL;

	while ((p = strstr(p, prefix))) {
		if (p == text || p[-1] == '\n' || p[-1] == 'A')
			last = p;
		p++;
	}
	assert_non_null(last);
	snprintf(out, size, "%.*s", (int)strcspn(last, "\n"), last);
}

/*
 * The live view: the bar, the sparkline's levels and the drops' colour,
 * worked out by hand; each line cut to the width less one.
 */
static void test_view(void **state _unused_)
{
	/* New connections a second of 5 samples: unknown, 0, 10, 35, 70. */
	static const double rates[] = { NAN, 0, 10, 35, 70 };
	struct ht_watch_sample smp[5];
	struct ht_watch_view v;
	_cleanup_free_ char *text = NULL, *ascii = NULL, *narrow = NULL;
	char line[4096];

	for (size_t i = 0; i < 5; i++) {
		smp[i] = S((double)i, 1024 * (int64_t)i, 4096, 0, 0, 0, 120);
		smp[i].pct_max = 25.0 * (double)i;
		smp[i].have_new_rate = !isnan(rates[i]);
		smp[i].new_per_s = smp[i].have_new_rate ? rates[i] : 0;
		smp[i].have_drop_rate = i > 0;
		smp[i].drops_per_s = i == 4 ? 2.5 : 0;
	}
	ht_watch_view_init(&v, 80, 1, 0, "ctnetlink NEW events", true, true);
	text = view_text(&v, smp, 5);
	/*
	 * The last frame: count 4096 of 4096, 100.0%: red, every cell of
	 * 79 - 12 - 21 ("  4096 / 4096  100.0%") = 46 filled: 79 columns.
	 */
	line_of(text, "conntrack [", line, sizeof(line));
	{
		char want[4096] = "conntrack [\033[31m";

		for (int i = 0; i < 46; i++)
			strcat(want, "\u2588");
		strcat(want, "\033[0m]  4096 / 4096  100.0%\033[K");
		assert_string_equal(line, want);
	}
	/*
	 * Peak 70: levels lround(r / 70 x 7) = 0, 1, 3.5 -> 4, 7 for 0, 10,
	 * 35, 70 (U+2581 + level), the unknown first rate a blank.
	 */
	line_of(text, "new/s", line, sizeof(line));
	assert_string_equal(line, "new/s      \u2581\u2582\u2585\u2588  70.0, peak 70.0\033[K");
	/* 2.5 drops a second in bold red. */
	line_of(text, "drops/s", line, sizeof(line));
	assert_string_equal(line, "drops/s   \033[1;31m2.5\033[0m\033[K");
	line_of(text, "t ", line, sizeof(line));
	assert_string_equal(line, "t 4.000 s, every 1 s: Ctrl-C ends with the summary\033[K");
	/* Each later frame goes back up over the four lines of the one before. */
	assert_int_equal(strncmp(text, "conntrack [", 11), 0);
	{
		size_t ups = 0;

		for (const char *p = text; (p = strstr(p, "\r\033[4A")); p++)
			ups++;
		assert_int_equal(ups, 4);
	}
	/* The second frame: 1024 of 4096, 25.0%: green, 47 x 1024 / 4096 = 11.75 -> 12 of 47. */
	{
		const char *f2 = strstr(text, "\033[4A") + 4;
		char want[4096] = "conntrack [\033[32m";

		for (int i = 0; i < 47; i++)
			strcat(want, i < 12 ? "\u2588" : "\u2591");
		strcat(want, "\033[0m]  1024 / 4096  25.0%\033[K");
		assert_int_equal(strncmp(f2, want, strlen(want)), 0);
		/* No drops then: 0.0, not coloured. */
		assert_non_null(strstr(f2, "drops/s   0.0\033[K"));
	}

	/* No colour, no UTF-8: the same frame in ASCII without SGR codes. */
	ht_watch_view_init(&v, 80, 1, 0, "ctnetlink NEW events", false, false);
	ascii = view_text(&v, smp, 5);
	line_of(ascii, "new/s", line, sizeof(line));
	assert_string_equal(line, "new/s      _.=#  70.0, peak 70.0\033[K");
	line_of(ascii, "drops/s", line, sizeof(line));
	assert_string_equal(line, "drops/s   2.5\033[K");
	assert_null(strstr(ascii, "\033[3"));

	/*
	 * 40 columns: every line at most 39, the bar 39 - 12 - 21 = 6 cells; a
	 * rate source that is unknown shown as it is; the last line cut.
	 */
	ht_watch_view_init(&v, 40, 0.25, 60, "unknown: --root has no events", false, false);
	narrow = view_text(&v, smp, 5);
	line_of(narrow, "conntrack [", line, sizeof(line));
	assert_string_equal(line, "conntrack [######]  4096 / 4096  100.0%\033[K");
	line_of(narrow, "new/s", line, sizeof(line));
	assert_string_equal(line, "new/s     unknown: --root has no events\033[K");
	line_of(narrow, "t ", line, sizeof(line));
	assert_string_equal(line, "t 4.000 s of 60 s, every 0.25 s: Ctrl-C\033[K");
}

static void test_json(void **state _unused_)
{
	struct ht_watch_sample v[16];
	struct ht_watch_summary s;
	struct json_object *j;

	summarize(v, field_case(v), 1.0, 2, &s);
	j = ht_watch_summary_json(&s);
	assert_non_null(j);
	assert_string_equal(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
	                    "{\"samples\":16,\"duration\":15.000,\"interval\":1.000,\"max\":4096,"
	                    "\"time_wait\":120,\"peak_count\":4096,\"peak_pct\":100.0,"
	                    "\"peak_rate\":819.2,\"peak_rate_over\":\"window\","
	                    "\"peak_rate_span\":5.000,\"peak_interval_rate\":1000.0,"
	                    "\"mean_rate\":273.1,\"inserts\":4096,\"rate_lower_bound\":false,"
	                    "\"intervals_short\":0,\"events_lost\":null,\"overruns\":null,"
	                    "\"drops\":5000,"
	                    "\"pinned_samples\":11,\"full_at_start\":false,\"ceiling\":34.1,"
	                    "\"headroom\":2.00,\"basis\":\"rate\",\"working_set\":98304,"
	                    "\"recommended_max\":262144,\"source\":\"test\"}");
	json_object_put(j);

	/* Unknown rates and drops are null. */
	for (int i = 0; i < 16; i++)
		v[i].have_insert = v[i].have_drop = false;
	summarize(v, 16, 1.0, 2, &s);
	j = ht_watch_summary_json(&s);
	assert_non_null(j);
	assert_true(json_object_object_get_ex(j, "peak_rate", NULL));
	assert_null(json_object_object_get(j, "peak_rate"));
	assert_true(json_object_object_get_ex(j, "peak_interval_rate", NULL));
	assert_null(json_object_object_get(j, "peak_interval_rate"));
	assert_null(json_object_object_get(j, "mean_rate"));
	assert_true(json_object_object_get_ex(j, "peak_rate_over", NULL));
	assert_null(json_object_object_get(j, "peak_rate_over"));
	assert_null(json_object_object_get(j, "peak_rate_span"));
	assert_null(json_object_object_get(j, "drops"));
	assert_true(json_object_object_get_ex(j, "rate_lower_bound", NULL));
	assert_null(json_object_object_get(j, "rate_lower_bound"));
	assert_null(json_object_object_get(j, "inserts"));
	assert_null(json_object_object_get(j, "events_lost"));
	assert_null(json_object_object_get(j, "overruns"));
	assert_string_equal(json_object_get_string(json_object_object_get(j, "basis")), "cap");
	json_object_put(j);
}

static void put_json(FILE *m, const void *arg)
{
	struct json_object *j = ht_watch_summary_json(arg);

	assert_non_null(j);
	fputs(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN), m);
	json_object_put(j);
}

/*
 * A run shorter than the 5 s window has no 5 s peak: the peak printed is the
 * rate over the whole run, and it says so. 17 samples 0.25 s apart, t = 0 ..
 * 4 s, 50 new connections each: 800 / 4 s = 200/s.
 */
static void test_short_run_span(void **state _unused_)
{
	struct ht_watch_sample v[17];
	struct ht_watch_summary s;
	_cleanup_free_ char *text = NULL, *json = NULL, *text2 = NULL, *json2 = NULL;

	for (int i = 0; i <= 16; i++)
		v[i] = S(0.25 * i, 50 * i, 262144, 1000 + 50 * i, 0, 0, 120);
	summarize(v, 17, 0.25, 2, &s);
	assert_false(s.peak_windowed);
	assert_near(s.peak_span, 4);
	text = memtext(put_summary, &s);
	assert_non_null(strstr(text, "  new conns/s     peak 200.0 over the whole run of 4.000 s"
	                             " (shorter than the 5 s window), 200.0 over one interval,"
	                             " mean 200.0 (test)\n"));
	assert_null(strstr(text, "over 5 s"));
	json = memtext(put_json, &s);
	assert_non_null(strstr(json, "\"peak_rate\":200.0,\"peak_rate_over\":\"run\","
	                             "\"peak_rate_span\":4.000,"));

	/*
	 * Events lost at t = 2.00 (its insert unknown): the intervals 1.75 ->
	 * 2.00 and 2.00 -> 2.25 are unknown, 14 of 16 known = 3.5 s, 700 new:
	 * 700 / 3.5 s = 200/s, over the known 3.5 s, not the whole 4 s. The
	 * mean counts the unknown 0.5 s as nothing: 700 / 4 s = 175/s. All of
	 * them lower bounds, and said so.
	 */
	v[8].have_insert = false;
	summarize(v, 17, 0.25, 2, &s);
	assert_near(s.peak_span, 3.5);
	assert_near(s.peak_rate, 200);
	assert_near(s.mean_rate, 175);
	text2 = memtext(put_summary, &s);
	assert_non_null(strstr(text2, "peak at least 200.0 over the 3.500 s with known counts"
	                              " (no 5 s window without lost events), at least 200.0 over"
	                              " one interval, mean at least 175.0 (test)\n"
	                              "  events lost     2 of 16 intervals have no count (events"
	                              " lost, or the counting restarted).\n  The counted rates"
	                              " are lower bounds: the true ones may be higher.\n"));
	json2 = memtext(put_json, &s);
	assert_non_null(strstr(json2, "\"peak_rate_over\":\"run\",\"peak_rate_span\":3.500,"));
	assert_non_null(strstr(json2, "\"mean_rate\":175.0,\"inserts\":700,"
	                              "\"rate_lower_bound\":true,\"intervals_short\":2,"
	                              "\"events_lost\":null,\"overruns\":null,"));
}

/* A version-2 sample: every counter known, @lost and @overruns too. */
static struct ht_watch_sample S2(double t, int64_t insert, int64_t lost, int64_t overruns)
{
	struct ht_watch_sample s = S(t, 0, 262144, insert, 0, 0, 120);

	s.lost = lost;
	s.overruns = overruns;
	s.have_lost = s.have_overruns = true;
	return s;
}

/*
 * Lost events, as the sampler records them: insert counts the events
 * received and those dropped at the queue (lost); an interval whose
 * overruns or lost grew is a lower bound, still in the rates.
 */
static void test_lost_events(void **state _unused_)
{
	struct ht_watch_sample v[5];
	struct ht_watch_summary s;
	_cleanup_free_ char *lines = NULL, *text = NULL, *json = NULL, *text2 = NULL;

	/*
	 * t = 0 .. 4 s, 1000 new a second; in 1 -> 2 the queue overran once and
	 * 600 of the 1000 were dropped (counted), in 3 -> 4 twice more, 300
	 * dropped. Every interval has its count: 4000 in 4 s = 1000/s, but two
	 * intervals may miss events no counter saw: lower bounds.
	 */
	v[0] = S2(0, 0, 0, 0);
	v[1] = S2(1, 1000, 0, 0);
	v[2] = S2(2, 2000, 600, 1);
	v[3] = S2(3, 3000, 600, 1);
	v[4] = S2(4, 4000, 900, 3);
	summarize(v, 5, 1, 2, &s);
	assert_false(v[1].new_rate_lower_bound);
	assert_true(v[2].have_new_rate && v[2].new_rate_lower_bound);
	assert_near(v[2].new_per_s, 1000);
	assert_false(v[3].new_rate_lower_bound);
	assert_true(v[4].new_rate_lower_bound);
	assert_true(s.have_rate);
	assert_int_equal(s.inserts, 4000);
	assert_near(s.mean_rate, 1000);
	assert_near(s.peak_rate, 1000);
	assert_true(s.rate_lower_bound);
	assert_int_equal(s.intervals_short, 2);
	assert_true(s.have_events_lost && s.have_overruns);
	assert_int_equal(s.events_lost, 900);
	assert_int_equal(s.overruns, 3);

	lines = memtext(put_samples, &v[1]);
	assert_string_equal(lines,
	        "      t/s      count        max   %max      new/s    drops/s\n"
	        "    1.000          0     262144    0.0     1000.0        0.0\n"
	        "    2.000          0     262144    0.0   >=1000.0        0.0\n");
	text = memtext(put_summary, &s);
	assert_non_null(strstr(text,
	        "  new conns/s     peak at least 1000.0 over the whole run of 4.000 s (shorter than"
	        " the 5 s window), at least 1000.0 over one interval, mean at least 1000.0 (test)\n"
	        "  events lost     3 receive-queue overruns, 900 NEW events dropped there (counted"
	        " by the kernel,\n                  included above); 2 of 4 intervals.\n"
	        "  The counted rates are lower bounds: the true ones may be higher.\n"));
	json = memtext(put_json, &s);
	assert_non_null(strstr(json, "\"mean_rate\":1000.0,\"inserts\":4000,"
	                             "\"rate_lower_bound\":true,\"intervals_short\":2,"
	                             "\"events_lost\":900,\"overruns\":3,"));

	/* No overrun: exact, and said so. */
	for (int i = 0; i < 5; i++)
		v[i] = S2(i, 1000 * i, 0, 0);
	summarize(v, 5, 1, 2, &s);
	assert_false(s.rate_lower_bound);
	assert_int_equal(s.intervals_short, 0);
	text2 = memtext(put_summary, &s);
	assert_non_null(strstr(text2, "  new conns/s     peak 1000.0 over the whole run"));
	assert_non_null(strstr(text2, "  events lost     none (no receive-queue overrun)\n"));

	/* The kernel gives no drop count (lost '-'): the overruns still make lower bounds. */
	for (int i = 0; i < 5; i++) {
		v[i] = S2(i, 400 * i, 0, i >= 2);
		v[i].have_lost = false;
	}
	summarize(v, 5, 1, 2, &s);
	assert_true(s.rate_lower_bound);
	assert_false(s.have_events_lost);
	assert_int_equal(s.overruns, 1);
	assert_int_equal(s.intervals_short, 1);

	/* Drops counted, their overrun not reported yet (it comes a sample later): short. */
	v[0] = S2(0, 0, 0, 0);
	v[1] = S2(1, 100, 50, 0);
	v[2] = S2(2, 200, 50, 1);
	v[3] = S2(3, 300, 50, 1);
	summarize(v, 4, 1, 2, &s);
	assert_true(v[1].new_rate_lower_bound && v[2].new_rate_lower_bound);
	assert_false(v[3].new_rate_lower_bound);
	assert_int_equal(s.intervals_short, 2);

	/* Overruns known at one end only: a lower bound too. */
	v[0] = S2(0, 0, 0, 0);
	v[1] = S(1, 0, 262144, 10, 0, 0, 120);
	summarize(v, 2, 1, 2, &s);
	assert_true(v[1].new_rate_lower_bound && s.rate_lower_bound);

	/* lost or overruns going back: the counting restarted, that interval is unknown. */
	v[0] = S2(0, 0, 5, 2);
	v[1] = S2(1, 10, 5, 1);
	v[2] = S2(2, 20, 1, 1);
	v[3] = S2(3, 30, 1, 1);
	summarize(v, 4, 1, 2, &s);
	assert_false(v[1].have_new_rate);
	assert_false(v[2].have_new_rate);
	assert_true(v[3].have_new_rate && !v[3].new_rate_lower_bound);
	assert_int_equal(s.inserts, 10);
	assert_int_equal(s.events_lost, 0);
	assert_int_equal(s.overruns, 0);
	assert_true(s.rate_lower_bound);
}

/*
 * The promise of the counting, over random runs of a simulated sampler:
 * the true new entries of each interval are received, dropped at the queue
 * (counted when the kernel gives the drop counter) or lost uncounted (an
 * event the kernel could not build), and any loss is an overrun; now and
 * then a sample of a version-1 record has no count. Whatever happens, the
 * counted inserts and the rates never pass the truth, and when they fall
 * short the summary says the rates are lower bounds.
 */
static void test_counted_never_above_truth(void **state _unused_)
{
	enum { N = 60 };
	struct ht_watch_sample v[N];
	struct ht_watch_summary s;
	unsigned seed = 777;

	for (int round = 0; round < 400; round++) {
		int64_t truth = 0, received = 0, dropped = 0, overruns = 0, true_sum = 0;
		int64_t true_cum[N];
		double true_peak_interval = 0, t = 0;
		bool counter = round % 4 != 0, v1 = round % 5 == 0;

		for (int i = 0; i < N; i++) {
			int64_t n = 0, d = 0, u = 0;

			seed = seed * 1103515245u + 12345u;
			if (i > 0) {
				n = (seed >> 8) % 3000;
				/* A loss in about one interval in 4: counted drops, sometimes uncounted. */
				if ((seed >> 3) % 4 == 0) {
					d = n ? (int64_t)((seed >> 14) % (uint64_t)(n + 1)) : 0;
					u = (seed >> 5) % 3 == 0 ? (n - d) / 2 : 0;
				}
				t += 0.1 + (double)((seed >> 20) % 100) / 100.0;
			}
			truth += n;
			received += n - d - u;
			dropped += d;
			if (d + u > 0)
				overruns++;
			true_cum[i] = truth;
			v[i] = S(t, 0, 262144, received + (counter ? dropped : 0), 0, 0, 120);
			if (v1) {
				/* Version 1: '-' after an overrun, no lost and overruns. */
				v[i].have_insert = !(d + u > 0);
			} else {
				v[i].lost = dropped;
				v[i].overruns = overruns;
				v[i].have_lost = counter;
				v[i].have_overruns = true;
			}
		}
		summarize(v, N, 0, 2, &s);
		assert_true(s.have_rate);
		for (int i = 1; i < N; i++) {
			double r = (double)(true_cum[i] - true_cum[i - 1]) / (v[i].t - v[i - 1].t);

			if (r > true_peak_interval)
				true_peak_interval = r;
			/* Each interval's count is at most the truth; below it only when marked. */
			if (v[i].have_new_rate) {
				int64_t c = v[i].insert - v[i - 1].insert;

				assert_true(c <= true_cum[i] - true_cum[i - 1]);
				if (c < true_cum[i] - true_cum[i - 1])
					assert_true(v[i].new_rate_lower_bound);
			}
		}
		true_sum = true_cum[N - 1];
		assert_true(s.inserts <= true_sum);
		assert_true(s.mean_rate <= (double)true_sum / s.duration * (1 + 1e-12));
		assert_true(s.peak_interval_rate <= true_peak_interval * (1 + 1e-12));
		if (s.inserts < true_sum)
			assert_true(s.rate_lower_bound);
		if (!s.rate_lower_bound) {
			assert_int_equal(s.inserts, true_sum);
			assert_true(fabs(s.mean_rate - (double)true_sum / s.duration) < 1e-9 * (1 + s.mean_rate));
		}
		if (counter && !v1 && s.have_events_lost)
			assert_int_equal(s.events_lost, dropped);
	}
}

/* A double as a whole number of entries, never undefined. */
static void test_entries_conversion(void **state _unused_)
{
	assert_int_equal(ht_watch_entries(NAN), 0);
	assert_int_equal(ht_watch_entries(-1), 0);
	assert_int_equal(ht_watch_entries(98304), 98304);
	/* 2^63 - 1024 = 9223372036854774784, the largest double below 2^63. */
	assert_int_equal(ht_watch_entries(9223372036854774784.0), INT64_C(9223372036854774784));
	/* (double)(2^63 - 1) rounds up to 2^63, which no int64_t holds: held at 2^63 - 1. */
	assert_int_equal(ht_watch_entries((double)INT64_MAX), INT64_MAX);
	assert_int_equal(ht_watch_entries(1e300), INT64_MAX);
	assert_int_equal(ht_watch_entries(INFINITY), INT64_MAX);
}

static void read_summary(const char *text, struct ht_watch_summary *s)
{
	struct ht_watch_sample *v = NULL;
	struct ht_error err = { "" };
	size_t n = 0;
	FILE *m = fmemopen((void *)text, strlen(text), "r");

	assert_non_null(m);
	assert_int_equal(ht_watch_record_read(m, "huge", &v, &n, &err), 0);
	fclose(m);
	assert_int_equal(ht_watch_replay(v, n, 2, "huge", s), 0);
	free(v);
}

/*
 * Counts of 2^63 - 1 (found by fuzzing: working_set printed
 * -9223372036854775808, a double of 2^63 converted to int64_t).
 */
static void test_huge_counts(void **state _unused_)
{
	struct ht_watch_summary s;
	_cleanup_free_ char *json = NULL, *text = NULL, *json2 = NULL, *text2 = NULL;

	/*
	 * A table of max 4096 holding 2^63 - 1 = 9223372036854775807 entries
	 * (count >= max: at the cap), no rate known: the cap basis, the peak
	 * count itself the working set, exact: 9223372036854775807. x headroom 2
	 * is far above 2^30, so 2^30 = 1073741824 is recommended.
	 */
	read_summary("# hosttune watch 1\n0 9223372036854775807 4096 - - - 120\n", &s);
	assert_int_equal(s.peak_count, INT64_MAX);
	assert_int_equal(s.basis, HT_WATCH_BASIS_CAP);
	assert_int_equal(s.working_set_entries, INT64_MAX);
	assert_int_equal(s.pow2, 1073741824);
	assert_int_equal(s.recommended_max, 1073741824);
	json = memtext(put_json, &s);
	assert_non_null(strstr(json, "\"peak_count\":9223372036854775807,"));
	assert_non_null(strstr(json, "\"working_set\":9223372036854775807,"
	                             "\"recommended_max\":1073741824,"));
	text = memtext(put_summary, &s);
	assert_non_null(strstr(text, "lower bound of the working set: 9223372036854775807 x"
	                             " headroom 2 > 2^30,\n  held to 2^30 = 1073741824,"));

	/*
	 * The rate basis past 2^63: insert 0 -> 2^63 - 1 in 1 ns, at the cap,
	 * TIME_WAIT 2^63 - 1 s: (2^63 - 1) / 10^-9 s x (2^63 - 1) s ~ 8.5 x 10^46
	 * entries, held at 2^63 - 1 and said to be that or more.
	 */
	read_summary("# hosttune watch 1\n"
	             "0.000000000 4096 4096 0 0 0 9223372036854775807\n"
	             "0.000000001 4096 4096 9223372036854775807 0 0 9223372036854775807\n",
	             &s);
	assert_int_equal(s.basis, HT_WATCH_BASIS_RATE);
	assert_int_equal(s.working_set_entries, INT64_MAX);
	assert_int_equal(s.recommended_max, 1073741824);
	json2 = memtext(put_json, &s);
	assert_non_null(strstr(json2, "\"working_set\":9223372036854775807,"));
	text2 = memtext(put_summary, &s);
	assert_non_null(strstr(text2, "= 9223372036854775807 entries (2^63 - 1 or more), x headroom 2"
	                              " > 2^30,\n  held to 2^30 = 1073741824,"));
}

static volatile sig_atomic_t test_stop;

static void on_test_signal(int sig _unused_)
{
	test_stop = 1;
}

static double since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* ht_watch_wait() with a stop flag, over the --root tree @cfg names. */
static void wait_stop(const struct ht_watch_config *base)
{
	struct ht_watch_config cfg = *base;
	struct sigaction sa = { .sa_handler = on_test_signal }, old_sa;
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGINT };
	struct itimerspec in50ms = { .it_value = { .tv_nsec = 50000000 } };
	struct ht_error err = { "" };
	struct ht_watch_sample smp;
	struct ht_watch *w = NULL;
	struct timespec t0;
	sigset_t mask_before, mask_after;
	timer_t timer;

	/* A 10 s interval: a wait that ends within 2 s was ended by the flag. */
	cfg.interval = 10;
	cfg.duration = 0;
	cfg.stop = &test_stop;
	test_stop = 1;
	assert_int_equal(ht_watch_new(&cfg, &w, &err), 0);
	assert_int_equal(ht_watch_sample(w, &smp, &err), 0);
	/* Already set: -EINTR before any sleep. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ht_watch_wait(w), -EINTR);
	assert_true(since(&t0) < 2);

	/* Set by a SIGINT 50 ms into the wait, as Ctrl-C does; no SA_RESTART. */
	test_stop = 0;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGINT, &sa, &old_sa), 0);
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
	pthread_sigmask(SIG_SETMASK, NULL, &mask_before);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(timer_settime(timer, 0, &in50ms, NULL), 0);
	assert_int_equal(ht_watch_wait(w), -EINTR);
	assert_true(since(&t0) < 2);
	assert_true(test_stop);
	/* The caller's signal mask is back as it was. */
	pthread_sigmask(SIG_SETMASK, NULL, &mask_after);
	assert_int_equal(sigismember(&mask_after, SIGINT), sigismember(&mask_before, SIGINT));
	assert_int_equal(sigismember(&mask_after, SIGTERM), sigismember(&mask_before, SIGTERM));
	timer_delete(timer);
	sigaction(SIGINT, &old_sa, NULL);
	ht_watch_free(w);
}

/* The sampler over a --root tree: procfs values, no events. */
static void test_sampler_root(void **state _unused_)
{
	char dir[] = "/tmp/test-watch.XXXXXX";
	struct ht_watch_config cfg = { .interval = 0.01, .duration = 0.01, .headroom = 2 };
	struct ht_watch_sample s;
	struct ht_watch_summary sum;
	struct ht_error err = { "" };
	struct ht_watch *w = NULL;

	assert_non_null(mkdtemp(dir));
	cfg.root = dir;
	/* No nf_conntrack_max: not loaded. */
	assert_int_equal(ht_watch_new(&cfg, &w, &err), -ENOENT);
	assert_string_equal(err.msg, "/proc/sys/net/netfilter/nf_conntrack_max: no such file: "
	                             "nf_conntrack is not loaded");
	ht_test_put_file(dir, "proc/sys/net/netfilter/nf_conntrack_max", "4096\n");
	ht_test_put_file(dir, "proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait", "120\n");
	/* Two CPUs; entries 0x1000 = 4096 on every row, drop 0x10 + 0x20 = 48, early_drop 1 + 2. */
	ht_test_put_file(dir, "proc/net/stat/nf_conntrack",
	           "entries  clashres found new invalid ignore delete chainlength insert "
	           "insert_failed drop early_drop icmp_error  expect_new expect_create "
	           "expect_delete search_restart\n"
	           "00001000  00000000 00000000 00000000 00000000 00000000 00000000 00000000 "
	           "00000000 00000000 00000010 00000001 00000000  00000000 00000000 00000000 "
	           "00000000\n"
	           "00001000  00000000 00000000 00000000 00000000 00000000 00000000 00000000 "
	           "00000000 00000000 00000020 00000002 00000000  00000000 00000000 00000000 "
	           "00000000\n");
	cfg.headroom = 0.5;
	assert_int_equal(ht_watch_new(&cfg, &w, &err), -EINVAL);
	assert_string_equal(err.msg, "headroom: expected 1 or more, got 0.5");
	cfg.headroom = 2;
	/* --interval 3s --duration 1s would sample at 0 and 3 s: refused. */
	cfg.interval = 3;
	cfg.duration = 1;
	assert_int_equal(ht_watch_new(&cfg, &w, &err), -EINVAL);
	assert_string_equal(err.msg, "duration: expected 0 (until stopped) or at least the interval"
	                             " of 3 s, got 1 s");
	cfg.interval = cfg.duration = 0.01;
	assert_int_equal(ht_watch_new(&cfg, &w, &err), 0);
	assert_string_equal(ht_watch_source(w), "unknown: --root has no events");
	assert_int_equal(ht_watch_sample(w, &s, &err), 0);
	assert_near(s.t, 0);
	assert_int_equal(s.count, 4096);
	assert_int_equal(s.max, 4096);
	assert_int_equal(s.time_wait, 120);
	assert_int_equal(s.drop, 48);
	assert_int_equal(s.early_drop, 3);
	assert_false(s.have_insert);
	assert_false(ht_watch_done(w));
	assert_int_equal(ht_watch_wait(w), 0);
	assert_int_equal(ht_watch_sample(w, &s, &err), 0);
	/* The second sample is due at 0.01 s. */
	assert_true(s.t >= 0.01);
	/* duration 0.01 / interval 0.01 + 1 = 2 samples. */
	assert_true(ht_watch_done(w));
	assert_int_equal(ht_watch_summary(w, &sum), 0);
	assert_int_equal(sum.samples, 2);
	assert_int_equal(sum.pinned_samples, 2);
	assert_true(sum.full_at_start);
	assert_int_equal(sum.drops, 0);
	/* No rate, pinned: the cap basis, 4096 x 2 = 8192. */
	assert_int_equal(sum.basis, HT_WATCH_BASIS_CAP);
	assert_int_equal(sum.recommended_max, 8192);
	ht_watch_free(w);

	/*
	 * A late sample skips a tick: sampled at 0, then 16 ms later (tick 1 at
	 * 10 ms missed), the next tick at least 5 ms (half an interval) after
	 * 16 ms is 30 ms, not 20 ms.
	 */
	cfg.duration = 0;
	assert_int_equal(ht_watch_new(&cfg, &w, &err), 0);
	assert_int_equal(ht_watch_sample(w, &s, &err), 0);
	nanosleep(&(struct timespec){ .tv_nsec = 16000000 }, NULL);
	assert_int_equal(ht_watch_sample(w, &s, &err), 0);
	{
		double late = s.t;

		assert_true(late >= 0.016);
		assert_int_equal(ht_watch_wait(w), 0);
		assert_int_equal(ht_watch_sample(w, &s, &err), 0);
		assert_true(s.t - late >= 0.005);
		assert_true(s.t >= 0.03 || late >= 0.025);
	}
	assert_false(ht_watch_done(w));
	ht_watch_free(w);

	wait_stop(&cfg);
	ht_test_rm_tree(dir);
}

/*
 * tests/fixtures/storm.record: the first ingest of bench/conntrack-storm
 * (6600 objects, 8 workers, nf_conntrack_max lowered to 4096, TIME_WAIT
 * 120 s), sampled every 0.25 s. The expected values are read off the file
 * by hand in the comments.
 */
static void test_storm_record(void **state _unused_)
{
	struct ht_watch_sample *v = NULL;
	struct ht_watch_summary s;
	struct ht_error err = { "" };
	size_t n = 0;

	assert_int_equal(ht_watch_record_load(FIXTURES_DIR "/storm.record", &v, &n, &err), 0);
	assert_int_equal(ht_watch_replay(v, n, 2, "storm.record", &s), 0);
	/* 642 lines: the header, 2 comments, 639 samples at t = 0.000 .. 159.500. */
	assert_int_equal(s.samples, 639);
	assert_near(s.duration, 159.5);
	/* 159.5 s / 638 intervals = 0.25 s. */
	assert_near(s.interval, 0.25);
	assert_int_equal(s.max, 4096);
	assert_int_equal(s.time_wait, 120);
	assert_int_equal(s.peak_count, 4096);
	/*
	 * One interval: the climb, t = 0.500 -> 0.750: insert 18 -> 4096,
	 * (4096 - 18) / 0.25 s = 16312/s.
	 */
	assert_true(s.have_rate);
	assert_near(s.peak_interval_rate, 16312);
	/*
	 * Over at least 5 s: insert is 0 up to t = 0.250 and 4096 from t = 0.750
	 * to 20.000, so the windows t = 0.000 -> 5.000 and 0.250 -> 5.250 hold
	 * all 4096: 4096 / 5 s = 819.2/s. A window starting at 0.500 (insert 18)
	 * gets (4096 - 18) / 5 = 815.6; any longer window divides 4096 by more.
	 * The other climbs: 4096 -> 4353 at t = 20.25 (257 / 5 = 51.4), 4353 ->
	 * 4673 at 89.75 (64), 4673 -> 6594 from t = 125.0 to 127.5 (1921 / 5 =
	 * 384.2), 6594 -> 6600 at 159.25 (1.2). The largest: 819.2/s.
	 */
	assert_near(s.peak_rate, 819.2);
	/* insert 0 at t = 0 to 6600 at t = 159.5: 6600 / 159.5 s = 41.379.../s. */
	assert_near(s.mean_rate, 6600.0 / 159.5);
	/* drop 0 -> 226, early_drop 0 throughout. */
	assert_int_equal(s.drops, 226);
	/*
	 * At the cap (4096) at t = 0.75 .. 17.75 (69 samples), 3839 for 9 (the
	 * conntrack gc freeing closing entries), then 4096 from t = 20.25 to
	 * 79.25: (79.25 - 20.25) / 0.25 + 1 = 237 samples, the longest run.
	 */
	assert_int_equal(s.pinned_samples, 237);
	assert_false(s.full_at_start);
	/*
	 * Pinned: 819.2/s x 120 s = 98304 entries (>= the peak count 4096),
	 * x 2 = 196608; 2^17 = 131072 < 196608 <= 2^18 = 262144. (The single
	 * interval's 16312/s gave 1957440 x 2 -> 4194304 for a run of 6600
	 * connections.)
	 */
	assert_int_equal(s.basis, HT_WATCH_BASIS_RATE);
	assert_near(s.working_set, 98304);
	assert_int_equal(s.recommended_max, 262144);
	/* 4096 / 120 s = 34.13 new connections/s. */
	assert_near(s.ceiling, 4096.0 / 120);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_case),
		cmocka_unit_test(test_not_pinned),
		cmocka_unit_test(test_longest_run_and_cap_basis),
		cmocka_unit_test(test_counter_wrap_and_unknown),
		cmocka_unit_test(test_window_peak),
		cmocka_unit_test(test_lost_events),
		cmocka_unit_test(test_counted_never_above_truth),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_acc_errors),
		cmocka_unit_test(test_record_roundtrip),
		cmocka_unit_test(test_record_submillisecond),
		cmocka_unit_test(test_short_run_span),
		cmocka_unit_test(test_entries_conversion),
		cmocka_unit_test(test_huge_counts),
		cmocka_unit_test(test_record_errors),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_view),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_sampler_root),
		cmocka_unit_test(test_storm_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
