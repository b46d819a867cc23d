/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The watch record reader (collect/watch.h ht_watch_record_read) and what
 * reads its samples: the replay's summary, its text and JSON (cli/
 * watch-print.h) and audit --observed (ht_collect_observed). Properties: a
 * failure carries "fuzz.record:LINE:COL:"; read, written and read again
 * gives the same samples, and the second write the same text; the summary
 * keeps its promises (never below the current max, a power of two at most
 * 2^30, no negative count, rates called lower bounds exactly when an
 * interval's count is unknown or short); no undefined behaviour
 * (float-cast-overflow included) for any record, version 1 or 2.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli/watch-print.h"
#include "collect/collect.h"
#include "collect/watch.h"
#include "engine/facts.h"
#include "shared/util.h"

#include "fuzz-common.h"

static char *write_text(const struct ht_watch_sample *s, size_t n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int r;

	FZ_CHECK(out, "open_memstream");
	r = ht_watch_record_write(out, s, n);
	fclose(out);
	FZ_CHECK(r == 0, "ht_watch_record_write returned %d", r);
	return text;
}

static bool same_samples(const struct ht_watch_sample *a, const struct ht_watch_sample *b,
                         size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (a[i].t != b[i].t || a[i].count != b[i].count || a[i].max != b[i].max ||
		    a[i].time_wait != b[i].time_wait || a[i].have_insert != b[i].have_insert ||
		    a[i].have_drop != b[i].have_drop || a[i].have_early_drop != b[i].have_early_drop ||
		    (a[i].have_insert && a[i].insert != b[i].insert) ||
		    (a[i].have_drop && a[i].drop != b[i].drop) ||
		    (a[i].have_early_drop && a[i].early_drop != b[i].early_drop) ||
		    a[i].have_lost != b[i].have_lost || a[i].have_overruns != b[i].have_overruns ||
		    (a[i].have_lost && a[i].lost != b[i].lost) ||
		    (a[i].have_overruns && a[i].overruns != b[i].overruns))
			return false;
	}
	return true;
}

static void check_summary(const struct ht_watch_summary *s)
{
	FZ_CHECK(s->recommended_max >= s->max, "recommended_max %lld below max %lld",
	         (long long)s->recommended_max, (long long)s->max);
	FZ_CHECK(s->pow2 >= 1 && s->pow2 <= HT_WATCH_MAX_LIMIT && (s->pow2 & (s->pow2 - 1)) == 0,
	         "pow2 %lld", (long long)s->pow2);
	FZ_CHECK(s->peak_count >= 0 && s->working_set_entries >= 0 && s->drops >= 0,
	         "a negative count in the summary");
	FZ_CHECK(s->working_set_entries >= s->peak_count || s->basis != HT_WATCH_BASIS_RATE,
	         "rate basis below the peak count");
	FZ_CHECK(s->inserts >= 0 && s->events_lost >= 0 && s->overruns >= 0,
	         "a negative count of inserts, lost events or overruns");
	/* A count with an interval unknown or short is never presented as exact. */
	FZ_CHECK(!s->have_rate || s->rate_lower_bound == (s->intervals_short > 0),
	         "rate_lower_bound %d with %zu short intervals", s->rate_lower_bound,
	         s->intervals_short);
}

/* Where the printed forms go: opened once, before the guard. */
static FILE *null_out;

/* The printed forms: they must not trip a sanitizer. */
static void print_summary(const struct ht_watch_summary *s)
{
	struct json_object *j;

	ht_watch_format_summary(null_out, s);
	j = ht_watch_summary_json(s);
	if (j)
		json_object_to_json_string(j);
	json_object_put(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const double headrooms[] = { 1.0, 2.0, 1e300 };
	struct ht_watch_sample *s = NULL, *s2 = NULL, *s3 = NULL;
	size_t n = 0, n2 = 0, n3 = 0;
	struct ht_error err = { "" };
	char *t1 = NULL, *t2 = NULL;
	FILE *in;
	int r;

	if (size == 0 || size > 65536)
		return 0;
	if (!null_out)
		null_out = fopen("/dev/null", "we");
	FZ_CHECK(null_out, "/dev/null");
	fz_guard_begin(NULL, false);
	in = fmemopen((void *)data, size, "r");
	FZ_CHECK(in, "fmemopen");
	r = ht_watch_record_read(in, "fuzz.record", &s, &n, &err);
	fclose(in);
	if (r < 0) {
		FZ_CHECK(err.msg[0] || r == -ENOMEM, "record read failed (%d) without a message", r);
		if (r == -EINVAL)
			FZ_CHECK(fz_has_place(err.msg, "fuzz.record"), "no FILE:LINE: in '%s'",
			         err.msg);
		goto out;
	}
	FZ_CHECK(n >= 1 && s, "a record read with no samples");

	t1 = write_text(s, n);
	in = fmemopen(t1, strlen(t1), "r");
	r = ht_watch_record_read(in, "written.record", &s2, &n2, &err);
	fclose(in);
	FZ_CHECK(r == 0, "what was written does not read back: %s", err.msg);
	FZ_CHECK(n2 == n && same_samples(s, s2, n), "samples changed by a write and a read");
	t2 = write_text(s2, n2);
	FZ_CHECK(strcmp(t1, t2) == 0, "second write differs");
	in = fmemopen(t2, strlen(t2), "r");
	r = ht_watch_record_read(in, "written.record", &s3, &n3, &err);
	fclose(in);
	FZ_CHECK(r == 0 && n3 == n, "third read");

	for (size_t h = 0; h < ARRAY_SIZE(headrooms); h++) {
		struct ht_watch_summary sum;

		memcpy(s3, s, n * sizeof(*s));
		r = ht_watch_replay(s3, n, headrooms[h], "fuzz.record", &sum);
		if (r < 0) {
			FZ_CHECK(r == -EINVAL || r == -ERANGE, "replay returned %d", r);
			continue;
		}
		check_summary(&sum);
		print_summary(&sum);
		for (size_t i = 0; h == 1 && i < n; i++)
			ht_watch_format_sample(null_out, &s3[i]);
	}

	/* audit --observed: the same record from a file, as facts. */
	{
		char path[4096];
		struct ht_facts *f = ht_facts_new();

		fz_guard_end();
		snprintf(path, sizeof(path), "%s/fuzz.record", fz_workdir());
		FZ_CHECK(f && fz_write_file(path, data, size) == 0, "cannot write %s", path);
		fz_guard_begin(fz_workdir(), false);
		err.msg[0] = '\0';
		r = ht_collect_observed(f, path, 2.0, &err);
		FZ_CHECK(r == 0 || err.msg[0], "ht_collect_observed failed (%d) without a message", r);
		ht_facts_free(f);
	}
out:
	fz_guard_end();
	free(s);
	free(s2);
	free(s3);
	free(t1);
	free(t2);
	return 0;
}
