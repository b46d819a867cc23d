/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "persist/diff.h"
#include "shared/util.h"

#define PATH "etc/sysctl.d/90-hosttune.conf"
#define NONL "\\ No newline at end of file\n"

/* Runs ht_diff_unified into a memory stream; *text gets what it wrote (caller frees). */
static int run_diff(const char *path, const char *old, const char *new, char **text)
{
	size_t len = 0;
	FILE *m = open_memstream(text, &len);
	int r;

	assert_non_null(m);
	r = ht_diff_unified(m, path, old, new);
	assert_int_equal(fclose(m), 0);
	assert_int_equal(strlen(*text), len);
	return r;
}

static void expect_diff(const char *old, const char *new, const char *want)
{
	_cleanup_free_ char *got = NULL;

	assert_int_equal(run_diff(PATH, old, new, &got), 1);
	assert_string_equal(got, want);
}

static void expect_no_diff(const char *old, const char *new)
{
	_cleanup_free_ char *got = NULL;

	assert_int_equal(run_diff(PATH, old, new, &got), 0);
	assert_string_equal(got, "");
}

/*
 * "line 1\n" ... "line N\n"; the 1-based line numbers listed after @n (ended by 0)
 * read "LINE k" instead.
 */
static char *numbered(int n, ...)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int changed[8] = { 0 }, nc = 0, k;
	va_list ap;

	assert_non_null(m);
	va_start(ap, n);
	while ((k = va_arg(ap, int)) != 0 && nc < (int)ARRAY_SIZE(changed))
		changed[nc++] = k;
	va_end(ap);
	for (int i = 1; i <= n; i++) {
		bool up = false;

		for (int c = 0; c < nc; c++)
			up = up || changed[c] == i;
		fprintf(m, "%s %d\n", up ? "LINE" : "line", i);
	}
	assert_int_equal(fclose(m), 0);
	return buf;
}

#define HDR "--- a/" PATH "\n+++ b/" PATH "\n"

static void test_new_file(void **state)
{
	(void)state;
	expect_diff(NULL, "# hosttune\nnf_conntrack\n",
		    "--- /dev/null\n"
		    "+++ b/" PATH "\n"
		    "@@ -0,0 +1,2 @@\n"
		    "+# hosttune\n"
		    "+nf_conntrack\n");
	/* One line: GNU omits a count of 1. */
	expect_diff(NULL, "nf_conntrack\n",
		    "--- /dev/null\n"
		    "+++ b/" PATH "\n"
		    "@@ -0,0 +1 @@\n"
		    "+nf_conntrack\n");
}

static void test_removed_file(void **state)
{
	(void)state;
	expect_diff("# hosttune\nnet.core.somaxconn = 4096\nnet.ipv4.tcp_fin_timeout = 30\n", NULL,
		    "--- a/" PATH "\n"
		    "+++ /dev/null\n"
		    "@@ -1,3 +0,0 @@\n"
		    "-# hosttune\n"
		    "-net.core.somaxconn = 4096\n"
		    "-net.ipv4.tcp_fin_timeout = 30\n");
	expect_diff("nf_conntrack\n", NULL,
		    "--- a/" PATH "\n"
		    "+++ /dev/null\n"
		    "@@ -1 +0,0 @@\n"
		    "-nf_conntrack\n");
}

static void test_equal(void **state)
{
	_cleanup_free_ char *t = numbered(20, 0);

	(void)state;
	expect_no_diff(t, t);
	expect_no_diff("a\nb", "a\nb");
	expect_no_diff(NULL, NULL);
	/* Neither has a line to show. */
	expect_no_diff(NULL, "");
	expect_no_diff("", NULL);
	expect_no_diff("", "");
}

static void test_one_change_middle(void **state)
{
	_cleanup_free_ char *old = numbered(20, 0), *new = numbered(20, 10, 0);

	(void)state;
	/* Line 10 with 3 lines each side: old and new lines 7..13, 7 lines. */
	expect_diff(old, new,
		    HDR
		    "@@ -7,7 +7,7 @@\n"
		    " line 7\n"
		    " line 8\n"
		    " line 9\n"
		    "-line 10\n"
		    "+LINE 10\n"
		    " line 11\n"
		    " line 12\n"
		    " line 13\n");
}

static void test_two_hunks_far(void **state)
{
	_cleanup_free_ char *old = numbered(20, 0), *new = numbered(20, 3, 17, 0);

	(void)state;
	/*
	 * Lines 4..16 between the changes: 13 > 6, two hunks. The first has only 2
	 * lines before line 3: lines 1..6, 6 lines; the second lines 14..20, 7 lines.
	 */
	expect_diff(old, new,
		    HDR
		    "@@ -1,6 +1,6 @@\n"
		    " line 1\n"
		    " line 2\n"
		    "-line 3\n"
		    "+LINE 3\n"
		    " line 4\n"
		    " line 5\n"
		    " line 6\n"
		    "@@ -14,7 +14,7 @@\n"
		    " line 14\n"
		    " line 15\n"
		    " line 16\n"
		    "-line 17\n"
		    "+LINE 17\n"
		    " line 18\n"
		    " line 19\n"
		    " line 20\n");
}

static void test_close_changes_merge(void **state)
{
	_cleanup_free_ char *old = numbered(20, 0), *new = numbered(20, 5, 12, 0);
	_cleanup_free_ char *new2 = numbered(20, 5, 13, 0);

	(void)state;
	/* Lines 6..11 between the changes: 6 <= 6, one hunk over lines 2..15, 14 lines. */
	expect_diff(old, new,
		    HDR
		    "@@ -2,14 +2,14 @@\n"
		    " line 2\n"
		    " line 3\n"
		    " line 4\n"
		    "-line 5\n"
		    "+LINE 5\n"
		    " line 6\n"
		    " line 7\n"
		    " line 8\n"
		    " line 9\n"
		    " line 10\n"
		    " line 11\n"
		    "-line 12\n"
		    "+LINE 12\n"
		    " line 13\n"
		    " line 14\n"
		    " line 15\n");
	/* Lines 6..12 between them: 7 > 6, two hunks (2..8 and 10..16) and line 9 unseen. */
	expect_diff(old, new2,
		    HDR
		    "@@ -2,7 +2,7 @@\n"
		    " line 2\n"
		    " line 3\n"
		    " line 4\n"
		    "-line 5\n"
		    "+LINE 5\n"
		    " line 6\n"
		    " line 7\n"
		    " line 8\n"
		    "@@ -10,7 +10,7 @@\n"
		    " line 10\n"
		    " line 11\n"
		    " line 12\n"
		    "-line 13\n"
		    "+LINE 13\n"
		    " line 14\n"
		    " line 15\n"
		    " line 16\n");
}

static void test_first_and_last(void **state)
{
	_cleanup_free_ char *old = numbered(20, 0), *new = numbered(20, 1, 20, 0);
	_cleanup_free_ char *old5 = numbered(5, 0), *new5 = numbered(5, 1, 5, 0);

	(void)state;
	/* No context before line 1 nor after line 20: lines 1..4 and 17..20. */
	expect_diff(old, new,
		    HDR
		    "@@ -1,4 +1,4 @@\n"
		    "-line 1\n"
		    "+LINE 1\n"
		    " line 2\n"
		    " line 3\n"
		    " line 4\n"
		    "@@ -17,4 +17,4 @@\n"
		    " line 17\n"
		    " line 18\n"
		    " line 19\n"
		    "-line 20\n"
		    "+LINE 20\n");
	/* 5 lines: 3 between the changes, one hunk over the whole file. */
	expect_diff(old5, new5,
		    HDR
		    "@@ -1,5 +1,5 @@\n"
		    "-line 1\n"
		    "+LINE 1\n"
		    " line 2\n"
		    " line 3\n"
		    " line 4\n"
		    "-line 5\n"
		    "+LINE 5\n");
}

static void test_no_trailing_newline(void **state)
{
	(void)state;
	/* "c" and "c\n" are different lines. */
	expect_diff("a\nb\nc", "a\nb\nc\n",
		    HDR
		    "@@ -1,3 +1,3 @@\n"
		    " a\n"
		    " b\n"
		    "-c\n" NONL
		    "+c\n");
	expect_diff("a\nb\nc\n", "a\nb\nc",
		    HDR
		    "@@ -1,3 +1,3 @@\n"
		    " a\n"
		    " b\n"
		    "-c\n"
		    "+c\n" NONL);
	/* Both without: the last line is context and carries the marker. */
	expect_diff("a\nb\nc", "a\nX\nc",
		    HDR
		    "@@ -1,3 +1,3 @@\n"
		    " a\n"
		    "-b\n"
		    "+X\n"
		    " c\n" NONL);
	/* Appending to a file without a final newline rewrites its last line. */
	expect_diff("a\nb", "a\nb\nc\n",
		    HDR
		    "@@ -1,2 +1,3 @@\n"
		    " a\n"
		    "-b\n" NONL
		    "+b\n"
		    "+c\n");
	expect_diff(NULL, "x",
		    "--- /dev/null\n"
		    "+++ b/" PATH "\n"
		    "@@ -0,0 +1 @@\n"
		    "+x\n" NONL);
	expect_diff("x", NULL,
		    "--- a/" PATH "\n"
		    "+++ /dev/null\n"
		    "@@ -1 +0,0 @@\n"
		    "-x\n" NONL);
}

static void test_ranges(void **state)
{
	_cleanup_free_ char *ten = numbered(10, 0);
	_cleanup_free_ char *ins = strdup("line 1\nline 2\nline 3\nline 4\nline 5\nnew\n"
					  "line 6\nline 7\nline 8\nline 9\nline 10\n");
	_cleanup_free_ char *del = strdup("line 1\nline 2\nline 3\nline 4\n"
					  "line 6\nline 7\nline 8\nline 9\nline 10\n");

	(void)state;
	assert_non_null(ins);
	assert_non_null(del);
	/* Old range of 1 line written without its count. */
	expect_diff("a\n", "a\nb\n",
		    HDR
		    "@@ -1 +1,2 @@\n"
		    " a\n"
		    "+b\n");
	/* An existing empty file: the empty range is "0,0" (the line before line 1). */
	expect_diff("", "x\n",
		    HDR
		    "@@ -0,0 +1 @@\n"
		    "+x\n");
	expect_diff("x\n", "",
		    HDR
		    "@@ -1 +0,0 @@\n"
		    "-x\n");
	/* Inserted after line 5: old lines 3..8 (6), new 3..9 (7). */
	expect_diff(ten, ins,
		    HDR
		    "@@ -3,6 +3,7 @@\n"
		    " line 3\n"
		    " line 4\n"
		    " line 5\n"
		    "+new\n"
		    " line 6\n"
		    " line 7\n"
		    " line 8\n");
	/* Line 5 removed: old lines 2..8 (7), new 2..7 (6). */
	expect_diff(ten, del,
		    HDR
		    "@@ -2,7 +2,6 @@\n"
		    " line 2\n"
		    " line 3\n"
		    " line 4\n"
		    "-line 5\n"
		    " line 6\n"
		    " line 7\n"
		    " line 8\n");
	/* A run of changes shows all its old lines, then all its new ones. */
	expect_diff("h\nx1\ny1\nx2\nt\n", "h\nX1\nY1\nt\n",
		    HDR
		    "@@ -1,5 +1,4 @@\n"
		    " h\n"
		    "-x1\n"
		    "-y1\n"
		    "-x2\n"
		    "+X1\n"
		    "+Y1\n"
		    " t\n");
	/* Two lines swapped: one of them stays, the other moves (2 edits, not 4). */
	expect_diff("a\nb\n", "b\na\n",
		    HDR
		    "@@ -1,2 +1,2 @@\n"
		    "-a\n"
		    " b\n"
		    "+a\n");
}

/* Distinct lines "PREFIX1\n" .. "PREFIXn\n". */
static char *distinct(const char *prefix, int n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	for (int i = 1; i <= n; i++)
		fprintf(m, "%s%d\n", prefix, i);
	assert_int_equal(fclose(m), 0);
	return buf;
}

static void test_errors(void **state)
{
	_cleanup_free_ char *got = NULL, *o4000 = distinct("o", 4000), *n4000 = distinct("n", 4000);
	_cleanup_free_ char *o4001 = distinct("o", 4001), *n4001 = distinct("n", 4001);
	_cleanup_free_ char *o4001x = NULL;
	const char *bad[] = { "", "/" PATH, "etc/a b", "etc/a\tb", "etc/a\nb", "etc/\x7f" };
	size_t nl = 0;
	FILE *ro;

	(void)state;
	assert_int_equal(ht_diff_unified(NULL, PATH, "a\n", "b\n"), -EINVAL);
	assert_int_equal(run_diff(NULL, "a\n", "b\n", &got), -EINVAL);
	free(TAKE_PTR(got));
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(run_diff(bad[i], "a\n", "b\n", &got), -EINVAL);
		assert_string_equal(got, "");
		free(TAKE_PTR(got));
	}

	/* A stream that cannot be written: fwrite(3) fails, the error flag is set. */
	ro = fopen("/dev/null", "r");
	assert_non_null(ro);
	assert_int_equal(ht_diff_unified(ro, PATH, "a\n", "b\n"), -EIO);
	/* Equal content writes nothing, so nothing can fail. */
	assert_int_equal(ht_diff_unified(ro, PATH, "a\n", "a\n"), 0);
	fclose(ro);

	/* 4000 x 4000 differing lines is the largest table: one hunk of 4000 - and 4000 +. */
	assert_int_equal(run_diff(PATH, o4000, n4000, &got), 1);
	assert_non_null(strstr(got, HDR "@@ -1,4000 +1,4000 @@\n-o1\n"));
	/* 2 header lines + 1 hunk header + 8000 body lines. */
	for (const char *p = got; (p = strchr(p, '\n')); p++)
		nl++;
	assert_int_equal(nl, 2 + 1 + 8000);
	free(TAKE_PTR(got));

	/* 4001 x 4001 is refused, and nothing is written. */
	assert_int_equal(run_diff(PATH, o4001, n4001, &got), -E2BIG);
	assert_string_equal(got, "");
	free(TAKE_PTR(got));

	/* The limit is on the lines that differ: the common head and tail cost nothing. */
	o4001x = strdup(o4001);
	assert_non_null(o4001x);
	o4001x[strlen(o4001x) - 3] = 'X'; /* "o4001\n" -> "o40X1\n" */
	assert_int_equal(run_diff(PATH, o4001, o4001x, &got), 1);
	assert_string_equal(got, HDR
			    "@@ -3998,4 +3998,4 @@\n"
			    " o3998\n"
			    " o3999\n"
			    " o4000\n"
			    "-o4001\n"
			    "+o40X1\n");
}

/* ---- property test: apply every diff with an independent applier ---- */

struct tline {
	const char *s;
	size_t len; /* with its '\n' if it has one */
};

#define MAX_LINES 128

static size_t tsplit(const char *t, struct tline *v)
{
	size_t n = 0;

	while (t && *t) {
		const char *nl = strchr(t, '\n');
		size_t len = nl ? (size_t)(nl - t) + 1 : strlen(t);

		assert_true(n < MAX_LINES);
		v[n++] = (struct tline){ t, len };
		t += len;
	}
	return n;
}

static bool tline_eq(const struct tline *a, const struct tline *b)
{
	return a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
}

/* Length of a longest common subsequence of the lines, by the textbook table. */
static size_t lcs(const struct tline *a, size_t n, const struct tline *b, size_t m)
{
	static size_t t[MAX_LINES + 1][MAX_LINES + 1];

	for (size_t i = 0; i <= n; i++)
		for (size_t j = 0; j <= m; j++) {
			if (i == 0 || j == 0)
				t[i][j] = 0;
			else if (tline_eq(&a[i - 1], &b[j - 1]))
				t[i][j] = t[i - 1][j - 1] + 1;
			else
				t[i][j] = t[i - 1][j] > t[i][j - 1] ? t[i - 1][j] : t[i][j - 1];
		}
	return t[n][m];
}

/* Next line of the diff without its '\n' (every diff line has one); false at the end. */
static bool next_line(const char **p, const char **s, size_t *len)
{
	const char *nl;

	if (!**p)
		return false;
	nl = strchr(*p, '\n');
	assert_non_null(nl);
	*s = *p;
	*len = (size_t)(nl - *p);
	*p = nl + 1;
	return true;
}

static bool starts(const char *s, size_t len, const char *prefix)
{
	return len >= strlen(prefix) && memcmp(s, prefix, strlen(prefix)) == 0;
}

/* "L" or "L,S" of a hunk header; returns the 0-based first line and sets *count. */
static size_t parse_range(const char **q, size_t *count)
{
	char *end;
	size_t start = strtoul(*q, &end, 10);

	assert_true(end > *q);
	*count = 1;
	if (*end == ',') {
		const char *c = end + 1;

		*count = strtoul(c, &end, 10);
		assert_true(end > c);
		/* GNU writes a count of 1 only by omitting it. */
		assert_int_not_equal(*count, 1);
	}
	*q = end;
	/* An empty range names the line before it; others their first line, from 1. */
	if (*count == 0)
		return start;
	assert_true(start >= 1);
	return start - 1;
}

struct applied {
	char *text;          /* what the diff makes of old (caller frees) */
	bool exists;         /* false for "+++ /dev/null" */
	size_t minus, plus;  /* '-' and '+' lines */
};

/*
 * A small patch(1) for one file: applies @diff to @old, checking on the way
 * every rule of the format that ht_diff_unified promises (headers, ranges and
 * counts, context that matches, 3 lines of context, runs of changes more than
 * 6 lines apart in separate hunks, '-' before '+' within a run).
 */
static struct applied apply(const char *diff, const char *path, const char *old)
{
	struct tline ol[MAX_LINES];
	size_t n = tsplit(old, ol), oi = 0, nj = 0, prev_change_end = 0;
	bool first_hunk = true;
	struct applied res = { 0 };
	const char *p = diff, *s = NULL;
	char *want = NULL;
	size_t len = 0, outlen = 0;
	FILE *out = open_memstream(&res.text, &outlen);

	assert_non_null(out);
	assert_true(next_line(&p, &s, &len));
	if (old)
		assert_true(asprintf(&want, "--- a/%s", path) > 0);
	else
		want = strdup("--- /dev/null");
	assert_non_null(want);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(s, want, len);
	free(want);
	assert_true(next_line(&p, &s, &len));
	res.exists = !(len == strlen("+++ /dev/null") && starts(s, len, "+++ /dev/null"));
	if (res.exists) {
		assert_true(starts(s, len, "+++ b/"));
		assert_int_equal(len - strlen("+++ b/"), strlen(path));
		assert_memory_equal(s + strlen("+++ b/"), path, strlen(path));
	}

	assert_true(next_line(&p, &s, &len));
	while (true) {
		size_t a0, ac, b0, bc, oc = 0, nc = 0, lead = 0, trail = 0;
		size_t first_change = SIZE_MAX, last_change_end = 0;
		char prev = 0;
		const char *q;
		bool more;

		assert_true(starts(s, len, "@@ -"));
		q = s + 4;
		a0 = parse_range(&q, &ac);
		assert_true(starts(q, 2, " +"));
		q += 2;
		b0 = parse_range(&q, &bc);
		assert_int_equal((size_t)(s + len - q), strlen(" @@"));
		assert_memory_equal(q, " @@", 3);

		/* Hunks in order, not overlapping; copy the untouched lines before this one. */
		assert_true(a0 >= oi);
		for (; oi < a0; oi++, nj++)
			fwrite(ol[oi].s, 1, ol[oi].len, out);
		assert_int_equal(b0, nj);

		more = next_line(&p, &s, &len);
		while (more && !starts(s, len, "@@")) {
			char mark = s[0];
			struct tline l = { s + 1, len }; /* the text and its '\n' */

			assert_true(len >= 1);
			assert_true(mark == ' ' || mark == '-' || mark == '+');
			more = next_line(&p, &s, &len);
			if (more && starts(s, len, "\\")) {
				assert_int_equal(len, strlen(NONL) - 1);
				assert_memory_equal(s, NONL, len);
				l.len--;
				more = next_line(&p, &s, &len);
			}
			if (mark == ' ') {
				if (first_change == SIZE_MAX)
					lead++;
				trail++;
			} else {
				if (first_change == SIZE_MAX)
					first_change = oi;
				else if (prev == ' ')
					assert_in_range(trail, 1, 6); /* context inside a hunk */
				/* Within a run, old lines first. */
				if (mark == '-')
					assert_true(prev != '+');
				trail = 0;
			}
			if (mark != '+') {
				assert_true(oi < n);
				assert_true(tline_eq(&ol[oi], &l));
				oi++;
				oc++;
			}
			if (mark != '-') {
				fwrite(l.s, 1, l.len, out);
				nj++;
				nc++;
			}
			if (mark != ' ')
				last_change_end = oi;
			res.minus += mark == '-';
			res.plus += mark == '+';
			prev = mark;
		}
		assert_int_equal(oc, ac);
		assert_int_equal(nc, bc);
		/* A hunk has a change, 3 lines of context each side unless a file end is closer. */
		assert_true(first_change != SIZE_MAX);
		assert_true(lead == 3 || (lead < 3 && a0 == 0));
		assert_true(trail == 3 || (trail < 3 && oi == n));
		/* Its changes are more than 6 unchanged lines away from the previous hunk's. */
		if (!first_hunk)
			assert_true(first_change - prev_change_end > 6);
		prev_change_end = last_change_end;
		first_hunk = false;
		if (!more)
			break;
	}
	for (; oi < n; oi++)
		fwrite(ol[oi].s, 1, ol[oi].len, out);
	assert_int_equal(fclose(out), 0);
	return res;
}

/* xorshift64 (Marsaglia, "Xorshift RNGs", 2003, shifts 13, 7, 17): same texts everywhere. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % n);
}

/* Few distinct lines, so that the same line recurs and the edit script has choices. */
static const char *const words[] = {
	"a", "b", "c", "", "# hosttune", "net.core.somaxconn = 4096",
};

static void add_word(FILE *m)
{
	fprintf(m, "%s\n", words[rnd(ARRAY_SIZE(words))]);
}

/* A random text of up to 30 lines, or one derived from @base by deleting, replacing and
 * inserting lines; a quarter lose their final newline; sometimes NULL (no file). */
static char *random_text(const char *base)
{
	struct tline bl[MAX_LINES];
	char *buf = NULL;
	size_t len = 0, n;
	FILE *m;

	if (rnd(10) == 0)
		return NULL;
	m = open_memstream(&buf, &len);
	assert_non_null(m);
	if (base && rnd(4) != 0) {
		n = tsplit(base, bl);
		for (size_t i = 0; i < n; i++) {
			unsigned r = rnd(10);

			if (r < 2)
				add_word(m); /* insert before, or replace */
			if (r == 1 || r == 2)
				continue;
			fprintf(m, "%.*s", (int)(bl[i].len - (bl[i].s[bl[i].len - 1] == '\n')),
				bl[i].s);
			fputc('\n', m);
		}
		if (rnd(5) == 0)
			add_word(m);
	} else {
		n = rnd(31);
		for (size_t i = 0; i < n; i++)
			add_word(m);
	}
	assert_int_equal(fclose(m), 0);
	if (len > 0 && rnd(4) == 0)
		buf[len - 1] = '\0';
	return buf;
}

static void test_random_pairs(void **state)
{
	size_t diffs = 0;

	(void)state;
	for (int it = 0; it < 500; it++) {
		char *old = random_text(NULL);
		char *new = random_text(old);
		char *got = NULL, *again = NULL;
		bool same = strcmp(old ? old : "", new ? new : "") == 0;
		struct tline ol[MAX_LINES], nl[MAX_LINES];
		size_t n = tsplit(old, ol), m = tsplit(new, nl), c;
		struct applied res;
		int r = run_diff(PATH, old, new, &got);

		/* Deterministic. */
		assert_int_equal(run_diff(PATH, old, new, &again), r);
		assert_string_equal(got, again);
		if (same) {
			assert_int_equal(r, 0);
			assert_string_equal(got, "");
		} else {
			assert_int_equal(r, 1);
			res = apply(got, PATH, old);
			assert_string_equal(res.text, new ? new : "");
			assert_true(res.exists == (new != NULL));
			/* A shortest script: every line outside a longest common subsequence. */
			c = lcs(ol, n, nl, m);
			assert_int_equal(res.minus, n - c);
			assert_int_equal(res.plus, m - c);
			free(res.text);
			diffs++;
		}
		free(got);
		free(again);
		free(old);
		free(new);
	}
	/* The generator must actually produce differences, and equal pairs too. */
	assert_in_range(diffs, 300, 499);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_file),
		cmocka_unit_test(test_removed_file),
		cmocka_unit_test(test_equal),
		cmocka_unit_test(test_one_change_middle),
		cmocka_unit_test(test_two_hunks_far),
		cmocka_unit_test(test_close_changes_merge),
		cmocka_unit_test(test_first_and_last),
		cmocka_unit_test(test_no_trailing_newline),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_random_pairs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
