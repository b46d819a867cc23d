/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "persist/diff.h"
#include "shared/util.h"

/*
 * The edit script is the classic longest-common-subsequence table over the
 * lines that remain once the common head and tail are cut off (what GNU
 * diff's analyze.c also trims first). hosttune's files are a few dozen lines,
 * so the quadratic table is cheap, and unlike a heuristic it always finds a
 * shortest script; the cap keeps a pathological pair from taking gigabytes.
 */

/* Lines of context around each change: the default of GNU diff -u (diff(1), "-U NUM"). */
#define CONTEXT 3

/*
 * Largest table: 4000 x 4000 differing lines (plus the empty row and column),
 * 32 MiB of uint16_t. A common subsequence is at most min(N, M) <= 4000 lines
 * long then, so uint16_t cannot overflow.
 */
#define MAX_SIDE 4000
#define MAX_CELLS (((size_t)MAX_SIDE + 1) * ((size_t)MAX_SIDE + 1))

/* FNV-1a 32-bit offset basis and prime (draft-eastlake-fnv, "FNV-1a", section 2). */
#define FNV32_BASIS 2166136261u
#define FNV32_PRIME 16777619u

/* One line; @len counts its '\n' when it has one, so "x" and "x\n" differ as in diff(1). */
struct line {
	const char *s;
	size_t len;
	uint32_t hash;
};

/* A run of differing lines: old [a0, a1) becomes new [b0, b1); 0-based line indexes. */
struct block {
	size_t a0, a1, b0, b1;
};

static bool line_eq(const struct line *x, const struct line *y)
{
	return x->hash == y->hash && x->len == y->len && memcmp(x->s, y->s, x->len) == 0;
}

/* Splits @t (NULL or "" give no lines) into *lines (caller frees) and *n. */
static int split_lines(const char *t, struct line **lines, size_t *n)
{
	size_t count = 0, len = t ? strlen(t) : 0;
	struct line *v;

	*lines = NULL;
	*n = 0;
	if (len == 0)
		return 0;
	for (const char *p = t; (p = memchr(p, '\n', len - (size_t)(p - t))); p++)
		count++;
	if (t[len - 1] != '\n')
		count++;
	v = calloc(count, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		const char *nl = memchr(t, '\n', len);
		size_t l = nl ? (size_t)(nl - t) + 1 : len;
		uint32_t h = FNV32_BASIS;

		for (size_t k = 0; k < l; k++)
			h = (h ^ (unsigned char)t[k]) * FNV32_PRIME;
		v[i] = (struct line){ .s = t, .len = l, .hash = h };
		t += l;
		len -= l;
	}
	*lines = v;
	*n = count;
	return 0;
}

/*
 * Finds a shortest edit script from @a (@n lines) to @b (@m lines) as the
 * list of differing runs, in order, into *blocks (caller frees) and *nblocks.
 */
static int edit_script(const struct line *a, size_t n, const struct line *b, size_t m,
		       struct block **blocks, size_t *nblocks)
{
	_cleanup_free_ uint16_t *tab = NULL;
	_cleanup_free_ struct block *v = NULL;
	size_t pre = 0, suf = 0, N, M, w, i, j, nb = 0;

	*blocks = NULL;
	*nblocks = 0;
	while (pre < n && pre < m && line_eq(&a[pre], &b[pre]))
		pre++;
	while (suf < n - pre && suf < m - pre && line_eq(&a[n - 1 - suf], &b[m - 1 - suf]))
		suf++;
	N = n - pre - suf;
	M = m - pre - suf;
	if (N == 0 && M == 0)
		return 0;
	if (N == 0 || M == 0) {
		v = malloc(sizeof(*v));
		if (!v)
			return -ENOMEM;
		v[0] = (struct block){ pre, pre + N, pre, pre + M };
		*blocks = TAKE_PTR(v);
		*nblocks = 1;
		return 0;
	}
	if (N + 1 > MAX_CELLS / (M + 1))
		return -E2BIG;

	/* Each run ends at a common line or at the end, so there are at most min(N, M) + 1. */
	v = calloc((N < M ? N : M) + 1, sizeof(*v));
	w = M + 1;
	tab = calloc((N + 1) * w, sizeof(*tab));
	if (!v || !tab)
		return -ENOMEM;
	a += pre;
	b += pre;

	/* tab[i * w + j]: length of a longest common subsequence of a[i..N) and b[j..M). */
	for (i = N; i-- > 0;)
		for (j = M; j-- > 0;) {
			uint16_t down = tab[(i + 1) * w + j], right = tab[i * w + j + 1];

			if (line_eq(&a[i], &b[j]))
				tab[i * w + j] = (uint16_t)(tab[(i + 1) * w + j + 1] + 1);
			else
				tab[i * w + j] = down >= right ? down : right;
		}

	/*
	 * Walk from the top: pairing two equal lines is always part of some longest
	 * subsequence; otherwise drop the old line when that loses nothing, so that
	 * among equally short scripts the deletions come as early as they can.
	 */
	i = j = 0;
	while (i < N || j < M) {
		struct block *bl;

		if (i < N && j < M && line_eq(&a[i], &b[j])) {
			i++;
			j++;
			continue;
		}
		bl = &v[nb++];
		bl->a0 = pre + i;
		bl->b0 = pre + j;
		while ((i < N || j < M) && !(i < N && j < M && line_eq(&a[i], &b[j]))) {
			if (i < N && (j == M || tab[(i + 1) * w + j] >= tab[i * w + j + 1]))
				i++;
			else
				j++;
		}
		bl->a1 = pre + i;
		bl->b1 = pre + j;
	}
	*blocks = TAKE_PTR(v);
	*nblocks = nb;
	return 0;
}

struct writer {
	FILE *f;
	bool failed;
};

static void put(struct writer *w, const char *s, size_t len)
{
	if (!w->failed && len > 0 && fwrite(s, 1, len, w->f) != len)
		w->failed = true;
}

static void puts_w(struct writer *w, const char *s)
{
	put(w, s, strlen(s));
}

/* One body line: its mark (' ', '-', '+'), the text, and the marker patch(1) needs for a
 * last line without a newline. */
static void put_line(struct writer *w, char mark, const struct line *l)
{
	put(w, &mark, 1);
	put(w, l->s, l->len);
	if (l->s[l->len - 1] != '\n')
		puts_w(w, "\n\\ No newline at end of file\n");
}

/*
 * A hunk range as GNU diff's print_unidiff_number_range() writes it: "L,S", "L"
 * when S is 1, and for an empty range the line before it with ",0", which is
 * what patch(1) expects to recognise a diff against an empty file.
 */
static void put_range(struct writer *w, size_t start0, size_t count)
{
	char buf[64];

	if (count == 0)
		snprintf(buf, sizeof(buf), "%zu,0", start0);
	else if (count == 1)
		snprintf(buf, sizeof(buf), "%zu", start0 + 1);
	else
		snprintf(buf, sizeof(buf), "%zu,%zu", start0 + 1, count);
	puts_w(w, buf);
}

static bool path_ok(const char *path)
{
	if (!path || !*path || *path == '/')
		return false;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		if (*p <= ' ' || *p == 0x7f)
			return false;
	return true;
}

int ht_diff_unified(FILE *out, const char *path, const char *old, const char *new)
{
	_cleanup_free_ struct line *a = NULL, *b = NULL;
	_cleanup_free_ struct block *bl = NULL;
	struct writer w = { .f = out };
	size_t n, m, nb;
	int r;

	if (!out || !path_ok(path))
		return -EINVAL;
	r = split_lines(old, &a, &n);
	if (r < 0)
		return r;
	r = split_lines(new, &b, &m);
	if (r < 0)
		return r;
	r = edit_script(a, n, b, m, &bl, &nb);
	if (r < 0)
		return r;
	if (nb == 0)
		return 0;

	puts_w(&w, old ? "--- a/" : "--- /dev/null");
	if (old)
		puts_w(&w, path);
	puts_w(&w, new ? "\n+++ b/" : "\n+++ /dev/null");
	if (new)
		puts_w(&w, path);
	puts_w(&w, "\n");

	for (size_t k = 0, last; k < nb; k = last + 1) {
		/* Runs more than 2 x CONTEXT lines apart get hunks of their own (GNU diff's
		 * find_hunk() threshold, 2 * context + 1). */
		for (last = k; last + 1 < nb && bl[last + 1].a0 - bl[last].a1 <= 2 * CONTEXT;)
			last++;

		/* The neighbouring run is farther than CONTEXT, so only the file's ends limit these. */
		size_t before = bl[k].a0 < CONTEXT ? bl[k].a0 : CONTEXT;
		size_t after = n - bl[last].a1 < CONTEXT ? n - bl[last].a1 : CONTEXT;
		size_t a0 = bl[k].a0 - before, a1 = bl[last].a1 + after;
		size_t b0 = bl[k].b0 - before, b1 = bl[last].b1 + after;
		size_t cur = a0;

		puts_w(&w, "@@ -");
		put_range(&w, a0, a1 - a0);
		puts_w(&w, " +");
		put_range(&w, b0, b1 - b0);
		puts_w(&w, " @@\n");
		for (size_t q = k; q <= last; q++) {
			for (; cur < bl[q].a0; cur++)
				put_line(&w, ' ', &a[cur]);
			for (size_t i = bl[q].a0; i < bl[q].a1; i++)
				put_line(&w, '-', &a[i]);
			for (size_t j = bl[q].b0; j < bl[q].b1; j++)
				put_line(&w, '+', &b[j]);
			cur = bl[q].a1;
		}
		for (; cur < a1; cur++)
			put_line(&w, ' ', &a[cur]);
	}

	if (w.failed || fflush(out) == EOF || ferror(out))
		return -EIO;
	return 1;
}
