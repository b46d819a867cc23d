/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/expr.h"
#include "shared/util.h"
#include "engine/value.h"

/*
 * Bounds both the parser's recursion and the height of the tree, so that the
 * recursive check, eval and free cannot run out of stack on hostile input
 * (a left-associative chain such as 1+1+...+1 builds a tall tree without any
 * parser recursion).
 */
#define MAX_DEPTH 256

/* 2^63, the magnitude of INT64_MIN: an integer literal may reach it only when negated. */
#define INT64_MIN_MAG ((uint64_t)INT64_MAX + 1)

enum tok {
	T_END,
	T_INT,
	T_DEC,
	T_STR,
	T_VER,
	T_NAME,
	T_TRUE,
	T_FALSE,
	T_LPAREN,
	T_RPAREN,
	T_COMMA,
	T_QUEST,
	T_COLON,
	T_OR,
	T_AND,
	T_EQ,
	T_NE,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_PLUS,
	T_MINUS,
	T_STAR,
	T_SLASH,
	T_PERCENT,
	T_NOT,
	T_BAD,
};

static const char *const tok_text[] = {
	[T_TRUE] = "true",   [T_FALSE] = "false", [T_LPAREN] = "(",  [T_RPAREN] = ")",
	[T_COMMA] = ",",     [T_QUEST] = "?",     [T_COLON] = ":",   [T_OR] = "||",
	[T_AND] = "&&",      [T_EQ] = "==",       [T_NE] = "!=",     [T_LT] = "<",
	[T_LE] = "<=",       [T_GT] = ">",        [T_GE] = ">=",     [T_PLUS] = "+",
	[T_MINUS] = "-",     [T_STAR] = "*",      [T_SLASH] = "/",   [T_PERCENT] = "%",
	[T_NOT] = "!",
};

enum func {
	F_MIN,
	F_MAX,
	F_CLAMP,
	F_POW2CEIL,
	F_POW2FLOOR,
	F_CEIL,
	F_FLOOR,
	F_ROUND,
	F_ABS,
	F_ISQRT,
	F_AVAILABLE,
	F_TEXT,
	F_SOURCE,
	F_COUNT,
	F_SUM,
	F_ANY,
};

static const struct {
	const char *name;
	unsigned min_args;
	unsigned max_args; /* 0: no upper limit */
} funcs[] = {
	[F_MIN] = { "min", 2, 0 },
	[F_MAX] = { "max", 2, 0 },
	[F_CLAMP] = { "clamp", 3, 3 },
	[F_POW2CEIL] = { "pow2ceil", 1, 1 },
	[F_POW2FLOOR] = { "pow2floor", 1, 1 },
	[F_CEIL] = { "ceil", 1, 1 },
	[F_FLOOR] = { "floor", 1, 1 },
	[F_ROUND] = { "round", 1, 1 },
	[F_ABS] = { "abs", 1, 1 },
	[F_ISQRT] = { "isqrt", 1, 1 },
	[F_AVAILABLE] = { "available", 1, 1 },
	[F_TEXT] = { "text", 1, 0 },
	[F_SOURCE] = { "source", 1, 1 },
	[F_COUNT] = { "count", 2, 2 },
	[F_SUM] = { "sum", 2, 2 },
	[F_ANY] = { "any", 2, 2 },
};

enum node_kind {
	N_LIT,
	N_NAME,
	N_UNARY,
	N_BINARY,
	N_COND,
	N_CALL,
};

struct ht_expr {
	enum node_kind kind;
	struct ht_srcpos pos;  /* first token, for ht_expr_pos() */
	struct ht_srcpos tpos; /* the node's own token (operator, '?', name): errors point here */
	enum tok op;           /* N_UNARY, N_BINARY */
	enum func fn;          /* N_CALL */
	unsigned depth;
	struct ht_value lit; /* N_LIT; a string's text is in the tree's arena */
	unsigned unit;       /* N_LIT: the HT_UNIT_* kind of its unit, 0 for none */
	char *name;          /* N_NAME; in the tree's arena */
	struct ht_arena *own; /* the root of an ht_expr_parse() tree: the arena holding it all */
	size_t nkids;
	struct ht_expr *kids[];
};

/* ---- arena ---- */

#define ARENA_ALIGN _Alignof(max_align_t)
#define ARENA_BLOCK_MAX ((size_t)1 << 17)
#define ARENA_FIRST_DEFAULT ((size_t)16 << 10)
/*
 * Blocks from this size on are mapped with MAP_POPULATE: one system call
 * instead of a page fault at the first touch of each page (a ruleset's
 * arena is filled as soon as it is made; on a VM a fault costs ~0.7 us).
 */
#define ARENA_MAP_MIN ((size_t)64 << 10)
#define ARENA_PAGE ((size_t)4096)

struct arena_block {
	struct arena_block *next;
	size_t size, used; /* bytes of data[] */
	size_t mapped;     /* bytes of the mapping that starts the block (or its arena); 0: malloc() */
	_Alignas(max_align_t) unsigned char data[];
};

struct ht_arena {
	struct arena_block *head; /* the block allocations come from; older ones follow */
	size_t next_size;         /* data bytes of the block made next */
	_Alignas(max_align_t) struct arena_block first; /* data[] follows, in the same memory */
};

/*
 * @header + @data bytes or more (*data raised to what a mapping rounded to
 * pages holds): mapped and populated when large, else malloc()ed. *mapped
 * is the mapping's length, 0 for malloc(). NULL on ENOMEM.
 */
static void *block_get(size_t header, size_t *data, size_t *mapped)
{
	size_t bytes = header + *data;

	*mapped = 0;
	if (*data >= ARENA_MAP_MIN) {
		size_t len = (bytes + ARENA_PAGE - 1) & ~(ARENA_PAGE - 1);
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

		if (p != MAP_FAILED) {
			*mapped = len;
			*data = len - header;
			return p;
		}
	}
	return malloc(bytes);
}

static void block_put(void *p, size_t mapped)
{
	if (mapped)
		munmap(p, mapped);
	else
		free(p);
}

struct ht_arena *ht_arena_new(size_t first)
{
	struct ht_arena *a;
	size_t mapped;

	if (first == 0)
		first = ARENA_FIRST_DEFAULT;
	first = (first + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
	if (first > ARENA_BLOCK_MAX)
		first = ARENA_BLOCK_MAX;
	a = block_get(sizeof(*a), &first, &mapped);
	if (!a)
		return NULL;
	a->first = (struct arena_block){ .size = first, .mapped = mapped };
	a->head = &a->first;
	a->next_size = first * 2 > ARENA_BLOCK_MAX ? ARENA_BLOCK_MAX : first * 2;
	return a;
}

void ht_arena_free(struct ht_arena *a)
{
	struct arena_block *b, *next;

	if (!a)
		return;
	for (b = a->head; b != &a->first; b = next) {
		next = b->next;
		block_put(b, b->mapped);
	}
	block_put(a, a->first.mapped);
}

/* arena_take() when the current block is full: @size bytes at the start of a new one. */
static void *arena_grow(struct ht_arena *a, size_t size)
{
	struct arena_block *b;
	size_t bytes, mapped;

	if (size > SIZE_MAX / 2 - sizeof(*b))
		return NULL;
	bytes = size > a->next_size ? size : a->next_size;
	b = block_get(sizeof(*b), &bytes, &mapped);
	if (!b)
		return NULL;
	*b = (struct arena_block){ .next = a->head, .size = bytes, .used = size, .mapped = mapped };
	a->head = b;
	if (a->next_size < ARENA_BLOCK_MAX)
		a->next_size *= 2;
	return b->data;
}

/* @size bytes at offset @align (a power of two) or more in a block, a new one if none fits. */
static inline void *arena_take(struct ht_arena *a, size_t size, size_t align)
{
	struct arena_block *b = a->head;
	size_t off = (b->used + align - 1) & ~(align - 1);

	if (off <= b->size && b->size - off >= size) {
		b->used = off + size;
		return b->data + off;
	}
	return arena_grow(a, size);
}

void *ht_arena_alloc(struct ht_arena *a, size_t size)
{
	return arena_take(a, size, ARENA_ALIGN);
}

char *ht_arena_strndup(struct ht_arena *a, const char *s, size_t n)
{
	char *d = n < SIZE_MAX ? arena_take(a, n + 1, 1) : NULL;

	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

void ht_expr_free(struct ht_expr *e)
{
	if (e)
		ht_arena_free(e->own);
}

static void value_clearp(struct ht_value *v)
{
	ht_value_clear(v);
}

#define _cleanup_value_ _cleanup_(value_clearp)

const char *ht_expr_name(const struct ht_expr *e)
{
	return e && e->kind == N_NAME ? e->name : NULL;
}

const struct ht_srcpos *ht_expr_pos(const struct ht_expr *e)
{
	return &e->pos;
}

static int pos_error(struct ht_error *err, int errnum, const struct ht_srcpos *pos,
                     const char *fmt, ...) _printf_(4, 5);

static int pos_error(struct ht_error *err, int errnum, const struct ht_srcpos *pos,
                     const char *fmt, ...)
{
	char msg[sizeof(err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ht_error_set(err, errnum, "%s:%u:%u: %s", pos->file, pos->line, pos->col, msg);
}

/* ---- lexer ---- */

struct token {
	enum tok kind;
	size_t start, len; /* byte range in the text */
	uint64_t mag;      /* T_INT: magnitude, at most 2^63 */
	double d;          /* T_DEC */
	struct ht_version ver;
	char *s; /* T_STR: the decoded text, in the parser's arena */
	unsigned unit; /* T_INT, T_DEC: the unit's HT_UNIT_* kind, 0 for none */
};

struct parser {
	const char *text;
	size_t off; /* where the lexer continues */
	struct ht_srcpos base;
	struct ht_error *err;
	struct ht_arena *arena; /* the tree's nodes, names and strings */
	struct token cur;
	unsigned depth;
	/* at()'s last answer: the line of offset @seen_off and where it starts. */
	size_t seen_off, seen_line_start;
	unsigned seen_line;
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/*
 * Rules may continue an expression on indented lines; the loader joins them
 * with '\n' and pads each to its column, so a newline here restarts the
 * column count at 1 on the next line.
 */
static struct ht_srcpos at(const struct parser *p, size_t off)
{
	struct parser *w = (struct parser *)p;
	struct ht_srcpos pos = { .file = p->base.file, .line = p->base.line };
	size_t line_start = 0, from = 0;

	/* The lexer moves forward: count newlines from the last position asked, not from 0. */
	if (off >= p->seen_off && p->seen_line) {
		from = p->seen_off;
		pos.line = p->seen_line;
		line_start = p->seen_line_start;
	}
	/* @off is at most the text's length: the lexer never passes its NUL. */
	for (const char *nl; from < off && (nl = memchr(p->text + from, '\n', off - from));) {
		pos.line++;
		line_start = from = (size_t)(nl - p->text) + 1;
	}
	w->seen_off = off;
	w->seen_line = pos.line;
	w->seen_line_start = line_start;
	pos.col = (pos.line == p->base.line ? p->base.col : 1) + (unsigned)(off - line_start);
	return pos;
}

static void describe_char(char c, char *buf, size_t size)
{
	if (c == '\0')
		snprintf(buf, size, "end of expression");
	else if (c > ' ' && c < 0x7f)
		snprintf(buf, size, "'%c'", c);
	else if (c == ' ' || c == '\t')
		snprintf(buf, size, "white space");
	else
		snprintf(buf, size, "byte 0x%02x", (unsigned char)c);
}

static void describe_token(const struct parser *p, char *buf, size_t size)
{
	const struct token *t = &p->cur;
	const char *src = p->text + t->start;
	int n = t->len > 40 ? 40 : (int)t->len;
	const char *more = t->len > 40 ? "..." : "";

	switch (t->kind) {
	case T_END:
	case T_BAD:
		describe_char(*src, buf, size);
		break;
	case T_INT:
	case T_DEC:
		snprintf(buf, size, "number '%.*s%s'", n, src, more);
		break;
	case T_STR:
		snprintf(buf, size, "string %.*s%s", n, src, more);
		break;
	case T_VER:
		snprintf(buf, size, "version '%.*s%s'", n, src, more);
		break;
	case T_NAME:
		snprintf(buf, size, "name '%.*s%s'", n, src, more);
		break;
	default:
		snprintf(buf, size, "'%s'", tok_text[t->kind]);
		break;
	}
}

static int syntax_error(struct parser *p, const char *expected)
{
	char found[128];
	struct ht_srcpos pos = at(p, p->cur.start);

	describe_token(p, found, sizeof(found));
	return pos_error(p->err, EINVAL, &pos, "expected %s, found %s", expected, found);
}

static int lex_error_at(struct parser *p, size_t off, int errnum, const char *msg)
{
	struct ht_srcpos pos = at(p, off);

	return pos_error(p->err, errnum, &pos, "%s", msg);
}

static int lex_expected(struct parser *p, size_t off, const char *expected)
{
	char found[64];
	struct ht_srcpos pos = at(p, off);

	describe_char(p->text[off], found, sizeof(found));
	return pos_error(p->err, EINVAL, &pos, "expected %s, found %s", expected, found);
}

static const struct {
	const char *name;
	uint64_t mult;
	unsigned kind; /* HT_UNIT_TIME or HT_UNIT_SIZE */
} units[] = {
	/* Time spans as systemd.time(7) writes them (m is a minute). */
	{ "s", 1, HT_UNIT_TIME },
	{ "m", 60, HT_UNIT_TIME },
	{ "min", 60, HT_UNIT_TIME },
	{ "h", 3600, HT_UNIT_TIME },
	{ "d", 86400, HT_UNIT_TIME },
	{ "w", 604800, HT_UNIT_TIME },
	{ "KiB", UINT64_C(1) << 10, HT_UNIT_SIZE },
	{ "MiB", UINT64_C(1) << 20, HT_UNIT_SIZE },
	{ "GiB", UINT64_C(1) << 30, HT_UNIT_SIZE },
	{ "TiB", UINT64_C(1) << 40, HT_UNIT_SIZE },
};

/*
 * A decimal with a unit becomes an integer when the product is integral, and
 * that has to be decided without rounding (1.1GiB is not integral although
 * 1.1 * 2^30 in doubles might look so): the digits are taken as an exact
 * fraction M / 10^k. More digits than fit in 64 bits fall back to a decimal.
 */
static int lex_decimal(struct parser *p, size_t start, size_t dot, size_t end, uint64_t mult,
                       bool unit)
{
	const char *t = p->text;
	_cleanup_free_ char *copy = NULL;
	struct token *tok = &p->cur;
	double d;

	if (unit) {
		unsigned __int128 m = 0, den = 1;
		size_t fend = end;
		bool fits = true;

		while (fend > dot + 1 && t[fend - 1] == '0')
			fend--;
		for (size_t i = start; i < fend && fits; i++) {
			if (i == dot)
				continue;
			m = m * 10 + (unsigned)(t[i] - '0');
			fits = m <= UINT64_MAX;
		}
		for (size_t i = dot + 1; i < fend && fits; i++) {
			den *= 10;
			fits = den <= UINT64_MAX;
		}
		if (fits && (m * mult) % den == 0) {
			unsigned __int128 v = m * mult / den;

			if (v > INT64_MIN_MAG)
				return lex_error_at(p, start, ERANGE,
				                    "integer literal out of range");
			tok->kind = T_INT;
			tok->mag = (uint64_t)v;
			return 0;
		}
	}
	copy = strndup(t + start, end - start);
	if (!copy)
		return -ENOMEM;
	d = strtod(copy, NULL) * (double)mult;
	if (!isfinite(d))
		return lex_error_at(p, start, ERANGE, "decimal literal out of range");
	tok->kind = T_DEC;
	tok->d = d;
	return 0;
}

/* Whether the @n bytes at @name are a time unit of units[]. */
static bool is_time_unit(const char *name, size_t n)
{
	for (size_t k = 0; k < ARRAY_SIZE(units); k++)
		if (units[k].kind == HT_UNIT_TIME && strlen(units[k].name) == n &&
		    !memcmp(units[k].name, name, n))
			return true;
	return false;
}

/*
 * A time span of several parts, as systemd.time(7) writes one: "1h 30min",
 * "2min 5s", "1h30min". After a whole number with a time unit that ends at
 * *@i, each further whole number with a time unit (after blanks or none) is
 * added to *@mag and *@i moves past it; anything else ends the span where
 * it is (two numbers side by side are no expression otherwise). 0, or
 * -ERANGE past INT64_MAX.
 */
static int lex_time_parts(struct parser *p, size_t start, size_t *i, uint64_t *mag)
{
	const char *t = p->text;

	for (;;) {
		size_t j = *i, d, us;
		uint64_t part = 0, mult = 0;

		while (t[j] == ' ' || t[j] == '\t')
			j++;
		if (!is_digit(t[j]))
			return 0;
		for (d = j; is_digit(t[d]); d++)
			if (__builtin_mul_overflow(part, 10, &part) ||
			    __builtin_add_overflow(part, (uint64_t)(t[d] - '0'), &part))
				return lex_error_at(p, start, ERANGE, "integer literal out of range");
		for (us = d; is_alpha(t[us]); us++)
			;
		for (size_t k = 0; k < ARRAY_SIZE(units); k++)
			if (units[k].kind == HT_UNIT_TIME && strlen(units[k].name) == us - d &&
			    !memcmp(units[k].name, t + d, us - d))
				mult = units[k].mult;
		if (!mult || is_digit(t[us]) || t[us] == '.')
			return 0;
		if (__builtin_mul_overflow(part, mult, &part) ||
		    __builtin_add_overflow(*mag, part, mag) || *mag > INT64_MIN_MAG)
			return lex_error_at(p, start, ERANGE, "integer literal out of range");
		*i = us;
	}
}

static int lex_number(struct parser *p, size_t start)
{
	const char *t = p->text;
	struct token *tok = &p->cur;
	size_t i = start, dot = 0, end;
	uint64_t mult = 1, mag = 0;
	bool unit = false;

	while (is_digit(t[i]))
		i++;
	if (t[i] == '.') {
		dot = i++;
		if (!is_digit(t[i]))
			return lex_expected(p, i, "a digit after '.'");
		while (is_digit(t[i]))
			i++;
	}
	end = i;
	if (is_alpha(t[i])) {
		size_t us = i;
		bool found = false;

		while (is_alpha(t[i]))
			i++;
		/* A time unit with the next part right after it: "1h30min". */
		if (!is_digit(t[i]) || !is_time_unit(t + us, i - us))
			while (is_alpha(t[i]) || is_digit(t[i]))
				i++;
		for (size_t k = 0; k < ARRAY_SIZE(units); k++) {
			if (strlen(units[k].name) == i - us &&
			    !memcmp(units[k].name, t + us, i - us)) {
				mult = units[k].mult;
				tok->unit = units[k].kind;
				found = true;
				break;
			}
		}
		if (!found) {
			struct ht_srcpos pos = at(p, us);

			return pos_error(p->err, EINVAL, &pos, "expected a unit (s, m, min, h, d, w, "
			                 "KiB, MiB, GiB or TiB), found '%.*s'", (int)(i - us), t + us);
		}
		unit = true;
	}
	tok->len = i - start;
	if (dot)
		return lex_decimal(p, start, dot, end, mult, unit);

	for (size_t k = start; k < end; k++) {
		mag = mag * 10 + (uint64_t)(t[k] - '0');
		if (mag > INT64_MIN_MAG)
			return lex_error_at(p, start, ERANGE, "integer literal out of range");
	}
	if (__builtin_mul_overflow(mag, mult, &mag) || mag > INT64_MIN_MAG)
		return lex_error_at(p, start, ERANGE, "integer literal out of range");
	if (tok->unit == HT_UNIT_TIME) {
		int r = lex_time_parts(p, start, &i, &mag);

		if (r < 0)
			return r;
		tok->len = i - start;
	}
	tok->kind = T_INT;
	tok->mag = mag;
	return 0;
}

static int lex_version(struct parser *p, size_t start)
{
	const char *end;
	int r;

	r = ht_version_parse(p->text + start + 1, &p->cur.ver, &end);
	if (r == -ERANGE)
		return lex_error_at(p, start, ERANGE, "version part out of range");
	if (r < 0)
		return lex_error_at(p, start, EINVAL, "version literal has more than 4 parts");
	p->cur.kind = T_VER;
	p->cur.len = (size_t)(end - (p->text + start));
	return 0;
}

/*
 * A string literal: its end and the errors are found first, so that the
 * decoded text is copied once into the arena at its exact length.
 */
static int lex_string(struct parser *p, size_t start)
{
	const char *t = p->text;
	size_t i = start + 1, len = 0;
	char *buf;

	for (;;) {
		char c = t[i];

		if (c == '\0')
			return lex_expected(p, i, "'\"'");
		i++;
		if (c == '"')
			break;
		if (c == '\\') {
			if (t[i] != '"' && t[i] != '\\' && t[i] != 'n' && t[i] != 't')
				return lex_expected(p, i, "'\"', '\\', 'n' or 't' after '\\'");
			i++;
		}
		len++;
	}
	buf = arena_take(p->arena, len + 1, 1);
	if (!buf)
		return -ENOMEM;
	len = 0;
	for (size_t k = start + 1; k < i - 1; k++) {
		if (t[k] != '\\') {
			buf[len++] = t[k];
			continue;
		}
		k++;
		buf[len++] = t[k] == 'n' ? '\n' : t[k] == 't' ? '\t' : t[k];
	}
	buf[len] = '\0';
	p->cur.kind = T_STR;
	p->cur.len = i - start;
	p->cur.s = buf;
	return 0;
}

/* The characters of a name after its first: letters, digits, '_' and '.'. */
static bool is_name_char(char c)
{
	static const bool table[256] = {
		['0' ... '9'] = true, ['A' ... 'Z'] = true, ['a' ... 'z'] = true,
		['_'] = true, ['.'] = true,
	};

	return table[(unsigned char)c];
}

static int lex_name(struct parser *p, size_t start)
{
	const char *t = p->text;
	size_t i = start;

	bool dotted = false;

	/*
	 * A '-' between two letters of a dotted name is part of it, as in the
	 * sysctl keys that have one (fs.file-max): a subtraction there is
	 * written with spaces.
	 */
	for (;;) {
		if (is_name_char(t[i])) {
			dotted = dotted || t[i] == '.';
			i++;
		} else if (t[i] == '-' && dotted && isalpha((unsigned char)t[i - 1]) &&
		           isalpha((unsigned char)t[i + 1]))
			i++;
		else
			break;
	}
	/* A name may not end with '.': leave trailing dots to be reported as unexpected. */
	while (t[i - 1] == '.')
		i--;
	p->cur.len = i - start;
	if (p->cur.len == 4 && !memcmp(t + start, "true", 4))
		p->cur.kind = T_TRUE;
	else if (p->cur.len == 5 && !memcmp(t + start, "false", 5))
		p->cur.kind = T_FALSE;
	else
		p->cur.kind = T_NAME;
	return 0;
}

/* An operator or punctuation at @t, *len its length: the two-character ones first; T_BAD if none. */
static enum tok lex_punct(const char *t, size_t *len)
{
	static const enum tok one[128] = {
		['('] = T_LPAREN, [')'] = T_RPAREN, [','] = T_COMMA, ['?'] = T_QUEST,
		[':'] = T_COLON,  ['<'] = T_LT,     ['>'] = T_GT,    ['+'] = T_PLUS,
		['-'] = T_MINUS,  ['*'] = T_STAR,   ['/'] = T_SLASH, ['%'] = T_PERCENT,
		['!'] = T_NOT,
	};
	unsigned char c = (unsigned char)t[0];

	*len = 2;
	if ((c == '|' || c == '&') && t[1] == t[0])
		return c == '|' ? T_OR : T_AND;
	if (t[1] == '=' && (c == '=' || c == '!' || c == '<' || c == '>'))
		return c == '=' ? T_EQ : c == '!' ? T_NE : c == '<' ? T_LE : T_GE;
	*len = 1;
	return c < ARRAY_SIZE(one) && one[c] != T_END ? one[c] : T_BAD;
}

static int lex(struct parser *p)
{
	const char *t = p->text;
	size_t i = p->off;
	int r = 0;

	p->cur = (struct token){ .kind = T_END };
	while (t[i] == ' ' || t[i] == '\t' || t[i] == '\n')
		i++;
	p->cur.start = i;

	if (t[i] == '\0')
		p->cur.kind = T_END;
	else if (is_digit(t[i]))
		r = lex_number(p, i);
	else if (t[i] == 'v' && is_digit(t[i + 1]))
		r = lex_version(p, i);
	else if (is_alpha(t[i]))
		r = lex_name(p, i);
	else if (t[i] == '"')
		r = lex_string(p, i);
	else {
		p->cur.kind = lex_punct(t + i, &p->cur.len);
		/* Single '=', '|', '&' are almost always a typo for the doubled operator. */
		if (p->cur.kind == T_BAD && (t[i] == '=' || t[i] == '|' || t[i] == '&')) {
			struct ht_srcpos pos = at(p, i);

			return pos_error(p->err, EINVAL, &pos, "expected '%c%c', found '%c'", t[i],
			                 t[i], t[i]);
		}
	}
	if (r < 0)
		return r;
	p->off = p->cur.start + p->cur.len;
	return 0;
}

/* ---- parser ---- */

/* A node in the parser's arena; the caller fills kids[]. */
static struct ht_expr *node_new(struct parser *p, enum node_kind kind, struct ht_srcpos pos,
                                size_t nkids)
{
	struct ht_expr *e = ht_arena_alloc(p->arena, sizeof(*e) + nkids * sizeof(e->kids[0]));

	if (!e)
		return NULL;
	*e = (struct ht_expr){ .kind = kind, .pos = pos, .tpos = pos, .nkids = nkids, .depth = 1 };
	return e;
}

static int node_seal(struct parser *p, struct ht_expr *e)
{
	for (size_t k = 0; k < e->nkids; k++)
		if (e->kids[k]->depth + 1 > e->depth)
			e->depth = e->kids[k]->depth + 1;
	if (e->depth > MAX_DEPTH)
		return pos_error(p->err, EINVAL, &e->tpos, "expression nested too deeply");
	return 0;
}

static int enter(struct parser *p)
{
	if (++p->depth > MAX_DEPTH) {
		struct ht_srcpos pos = at(p, p->cur.start);

		return pos_error(p->err, EINVAL, &pos, "expression nested too deeply");
	}
	return 0;
}

static int parse_cond(struct parser *p, struct ht_expr **out);

static int expect(struct parser *p, enum tok kind, const char *expected)
{
	if (p->cur.kind != kind)
		return syntax_error(p, expected);
	return lex(p);
}

static int find_func(const char *name, size_t len)
{
	for (size_t k = 0; k < ARRAY_SIZE(funcs); k++)
		if (strlen(funcs[k].name) == len && !memcmp(funcs[k].name, name, len))
			return (int)k;
	return -1;
}

/* The arguments of a call up to its ')', in *args (@local, or malloc()ed when more). */
static int parse_args(struct parser *p, struct ht_expr **local, size_t nlocal,
                      struct ht_expr ***args, size_t *nargs)
{
	size_t cap = nlocal;
	int r;

	*args = local;
	*nargs = 0;
	if (p->cur.kind == T_RPAREN)
		return 0;
	for (;;) {
		if (*nargs == cap) {
			struct ht_expr **n = malloc(cap * 2 * sizeof(*n));

			if (!n)
				return -ENOMEM;
			memcpy(n, *args, cap * sizeof(*n));
			if (*args != local)
				free(*args);
			*args = n;
			cap *= 2;
		}
		r = parse_cond(p, &(*args)[*nargs]);
		if (r < 0)
			return r;
		(*nargs)++;
		if (p->cur.kind == T_COMMA) {
			r = lex(p);
			if (r < 0)
				return r;
			continue;
		}
		if (p->cur.kind != T_RPAREN)
			return syntax_error(p, "',' or ')'");
		return 0;
	}
}

static int parse_call(struct parser *p, struct ht_srcpos fpos, size_t nstart, size_t nlen,
                      struct ht_expr **out)
{
	struct ht_expr *local[8], **args = local, *call;
	size_t nargs = 0;
	unsigned lo, hi;
	int fn, r;

	fn = find_func(p->text + nstart, nlen);
	if (fn < 0)
		return pos_error(p->err, EINVAL, &fpos, "unknown function '%.*s'", (int)nlen,
		                 p->text + nstart);
	r = lex(p); /* '(' */
	if (r == 0)
		r = parse_args(p, local, ARRAY_SIZE(local), &args, &nargs);
	if (r == 0)
		r = lex(p); /* ')' */
	if (r < 0)
		goto out;

	lo = funcs[fn].min_args;
	hi = funcs[fn].max_args;
	if (nargs < lo || (hi && nargs > hi)) {
		r = pos_error(p->err, EINVAL, &fpos, "%s() takes %s%u argument%s, got %zu",
		              funcs[fn].name, hi ? "" : "at least ", lo, lo == 1 ? "" : "s", nargs);
		goto out;
	}
	if ((fn == F_AVAILABLE || fn == F_SOURCE) && args[0]->kind != N_NAME) {
		r = pos_error(p->err, EINVAL, &args[0]->pos, "%s() takes a name", funcs[fn].name);
		goto out;
	}
	call = node_new(p, N_CALL, fpos, nargs);
	if (!call) {
		r = -ENOMEM;
		goto out;
	}
	call->fn = (enum func)fn;
	memcpy(call->kids, args, nargs * sizeof(*args));
	r = node_seal(p, call);
	if (r == 0)
		*out = call;
out:
	if (args != local)
		free(args);
	return r;
}

/* A literal token's value; a string's text stays in the arena. */
static struct ht_value token_value(const struct token *t)
{
	switch (t->kind) {
	case T_INT:
		return ht_int((int64_t)t->mag);
	case T_DEC:
		return ht_dec(t->d);
	case T_STR:
		return (struct ht_value){ .type = HT_T_STR, .s = t->s };
	case T_VER:
		return (struct ht_value){ .type = HT_T_VER, .v = t->ver };
	default:
		return ht_bool(t->kind == T_TRUE);
	}
}

static int parse_primary(struct parser *p, struct ht_expr **out)
{
	struct ht_expr *e = NULL;
	struct token *t = &p->cur;
	struct ht_srcpos pos = at(p, t->start);
	int r;

	switch (t->kind) {
	case T_INT:
	case T_DEC:
	case T_STR:
	case T_VER:
	case T_TRUE:
	case T_FALSE:
		if (t->kind == T_INT && t->mag > INT64_MAX)
			return pos_error(p->err, ERANGE, &pos, "integer literal out of range");
		e = node_new(p, N_LIT, pos, 0);
		if (!e)
			return -ENOMEM;
		e->lit = token_value(t);
		e->unit = t->unit;
		r = lex(p);
		break;
	case T_NAME: {
		size_t start = t->start, len = t->len;

		r = lex(p);
		if (r < 0)
			return r;
		if (p->cur.kind == T_LPAREN)
			return parse_call(p, pos, start, len, out);
		e = node_new(p, N_NAME, pos, 0);
		if (!e)
			return -ENOMEM;
		e->name = ht_arena_strndup(p->arena, p->text + start, len);
		if (!e->name)
			return -ENOMEM;
		break;
	}
	case T_LPAREN:
		r = lex(p);
		if (r < 0)
			return r;
		r = parse_cond(p, &e);
		if (r < 0)
			return r;
		r = expect(p, T_RPAREN, "')'");
		e->pos = pos;
		break;
	default:
		return syntax_error(p, "an expression");
	}
	if (r < 0)
		return r;
	*out = e;
	return 0;
}

static int parse_unary(struct parser *p, struct ht_expr **out)
{
	struct ht_expr *operand = NULL, *e = NULL;
	struct ht_srcpos pos;
	enum tok op = p->cur.kind;
	int r;

	if (op != T_NOT && op != T_MINUS)
		return parse_primary(p, out);
	pos = at(p, p->cur.start);
	r = enter(p);
	if (r < 0)
		return r;
	r = lex(p);
	if (r < 0)
		return r;
	/* -9223372036854775808 is INT64_MIN, although its digits alone do not fit. */
	if (op == T_MINUS && p->cur.kind == T_INT && p->cur.mag == INT64_MIN_MAG) {
		e = node_new(p, N_LIT, pos, 0);
		if (!e)
			return -ENOMEM;
		e->lit = ht_int(INT64_MIN);
		e->unit = p->cur.unit;
		r = lex(p);
	} else {
		r = parse_unary(p, &operand);
		if (r < 0)
			return r;
		e = node_new(p, N_UNARY, pos, 1);
		if (!e)
			return -ENOMEM;
		e->op = op;
		e->kids[0] = operand;
		r = node_seal(p, e);
	}
	if (r < 0)
		return r;
	p->depth--;
	*out = e;
	return 0;
}

/*
 * The precedence of binary operators, from 1 (||, the loosest) to 6 (* / %);
 * 0 for any other token. Each level is left-associative.
 */
static const unsigned char binary_level[T_BAD + 1] = {
	[T_OR] = 1,   [T_AND] = 2,  [T_EQ] = 3,   [T_NE] = 3,    [T_LT] = 4,    [T_LE] = 4,
	[T_GT] = 4,   [T_GE] = 4,   [T_PLUS] = 5, [T_MINUS] = 5, [T_STAR] = 6,  [T_SLASH] = 6,
	[T_PERCENT] = 6,
};

/* Operands joined by operators of level @min (>= 1) or tighter (precedence climbing). */
static int parse_binary(struct parser *p, unsigned min, struct ht_expr **out)
{
	struct ht_expr *left = NULL;
	unsigned level;
	int r;

	r = parse_unary(p, &left);
	if (r < 0)
		return r;
	while ((level = binary_level[p->cur.kind]) >= min) {
		struct ht_expr *right = NULL, *e;
		struct ht_srcpos oppos = at(p, p->cur.start);
		enum tok op = p->cur.kind;

		r = lex(p);
		if (r < 0)
			return r;
		r = parse_binary(p, level + 1, &right);
		if (r < 0)
			return r;
		e = node_new(p, N_BINARY, left->pos, 2);
		if (!e)
			return -ENOMEM;
		e->op = op;
		e->tpos = oppos;
		e->kids[0] = left;
		e->kids[1] = right;
		r = node_seal(p, e);
		if (r < 0)
			return r;
		left = e;
	}
	*out = left;
	return 0;
}

static int parse_cond(struct parser *p, struct ht_expr **out)
{
	struct ht_expr *c = NULL, *a = NULL, *b = NULL, *e;
	struct ht_srcpos qpos;
	int r;

	r = enter(p);
	if (r < 0)
		return r;
	r = parse_binary(p, 1, &c);
	if (r < 0)
		return r;
	if (p->cur.kind == T_QUEST) {
		qpos = at(p, p->cur.start);
		r = lex(p);
		if (r < 0)
			return r;
		r = parse_cond(p, &a);
		if (r < 0)
			return r;
		r = expect(p, T_COLON, "':'");
		if (r < 0)
			return r;
		/* Right-associative: a ? b : c ? d : e is a ? b : (c ? d : e). */
		r = parse_cond(p, &b);
		if (r < 0)
			return r;
		e = node_new(p, N_COND, c->pos, 3);
		if (!e)
			return -ENOMEM;
		e->tpos = qpos;
		e->kids[0] = c;
		e->kids[1] = a;
		e->kids[2] = b;
		r = node_seal(p, e);
		if (r < 0)
			return r;
		c = e;
	}
	p->depth--;
	*out = c;
	return 0;
}

int ht_expr_parse_in(const char *text, const struct ht_srcpos *pos, struct ht_arena *arena,
                     struct ht_expr **out, struct ht_error *err)
{
	static const struct ht_srcpos nowhere = { "<expression>", 1, 1 };
	struct ht_expr *e = NULL;
	struct ht_error local;
	struct parser p = {
		.text = text,
		.base = pos ? *pos : nowhere,
		.err = err ? err : &local,
		.arena = arena,
	};
	int r;

	p.err->msg[0] = '\0';
	if (!p.base.file)
		p.base.file = nowhere.file;
	r = lex(&p);
	if (r == 0)
		r = parse_cond(&p, &e);
	if (r == 0 && p.cur.kind != T_END)
		r = syntax_error(&p, "an operator or end of expression");
	if (r < 0) {
		if (!p.err->msg[0])
			ht_error_set(p.err, -r, "%s", strerror(-r));
		return r;
	}
	*out = e;
	return 0;
}

int ht_expr_parse(const char *text, const struct ht_srcpos *pos, struct ht_expr **out,
                  struct ht_error *err)
{
	/* Room for the nodes of a short expression in the arena's first block. */
	size_t len = strlen(text);
	struct ht_arena *arena = ht_arena_new(len < 1024 ? 256 + 16 * len : 0);
	int r;

	if (!arena) {
		if (err)
			ht_error_set(err, ENOMEM, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	r = ht_expr_parse_in(text, pos, arena, out, err);
	if (r < 0) {
		ht_arena_free(arena);
		return r;
	}
	(*out)->own = arena;
	return 0;
}

unsigned ht_expr_units(const struct ht_expr *e)
{
	unsigned u = e->kind == N_LIT ? e->unit : 0;

	for (size_t k = 0; k < e->nkids; k++)
		u |= ht_expr_units(e->kids[k]);
	return u;
}

int ht_expr_foreach_name(const struct ht_expr *e, ht_name_cb cb, void *userdata)
{
	int r;

	if (e->kind == N_NAME)
		return cb(e->name, &e->tpos, userdata);
	for (size_t k = 0; k < e->nkids; k++) {
		r = ht_expr_foreach_name(e->kids[k], cb, userdata);
		if (r != 0)
			return r;
	}
	return 0;
}

/* ---- operator typing, shared by the static check and evaluation ---- */

static bool is_arith(enum tok op)
{
	return op == T_PLUS || op == T_MINUS || op == T_STAR || op == T_SLASH || op == T_PERCENT;
}

static bool is_order(enum tok op)
{
	return op == T_LT || op == T_LE || op == T_GT || op == T_GE;
}

static bool binary_types_ok(enum tok op, enum ht_type a, enum ht_type b)
{
	bool nums = ht_type_is_number(a) && ht_type_is_number(b);

	if (is_arith(op))
		return nums;
	if (is_order(op))
		return nums || (a == HT_T_VER && b == HT_T_VER);
	if (op == T_EQ || op == T_NE)
		return nums || (a == b && a != HT_T_NONE);
	return a == HT_T_BOOL && b == HT_T_BOOL;
}

/* @b is HT_T_NONE when only the left operand is known (short-circuit operators). */
static int binary_type_error(struct ht_error *err, const struct ht_expr *e, enum ht_type a,
                             enum ht_type b)
{
	const char *op = tok_text[e->op], *needs;

	if (e->op == T_PERCENT)
		needs = "integers";
	else if (is_arith(e->op))
		needs = "numbers";
	else if (is_order(e->op))
		needs = "two numbers or two versions";
	else if (e->op == T_EQ || e->op == T_NE)
		needs = "two values of the same type";
	else
		needs = "bools";
	if (b == HT_T_NONE)
		return pos_error(err, EINVAL, &e->tpos, "type error: '%s' needs %s, got %s", op,
		                 needs, ht_type_name(a));
	return pos_error(err, EINVAL, &e->tpos, "type error: '%s' needs %s, got %s and %s", op,
	                 needs, ht_type_name(a), ht_type_name(b));
}

static int unary_type_error(struct ht_error *err, const struct ht_expr *e, enum ht_type a)
{
	return pos_error(err, EINVAL, &e->tpos, "type error: '%s' needs %s, got %s",
	                 tok_text[e->op], e->op == T_NOT ? "a bool" : "a number", ht_type_name(a));
}

static int cond_type_error(struct ht_error *err, const struct ht_expr *e, enum ht_type a)
{
	return pos_error(err, EINVAL, &e->tpos, "type error: '?:' needs a bool condition, got %s",
	                 ht_type_name(a));
}

static int call_type_error(struct ht_error *err, const struct ht_expr *e,
                           const enum ht_type *types)
{
	char got[512];
	size_t len = 0;

	got[0] = '\0';
	for (size_t k = 0; k < e->nkids && len < sizeof(got); k++)
		len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s",
		                        k == 0                ? ""
		                        : k + 1 == e->nkids ? " and "
		                                              : ", ",
		                        ht_type_name(types[k]));
	return pos_error(err, EINVAL, &e->tpos, "type error: %s() needs numbers, got %s",
	                 funcs[e->fn].name, got);
}

/* Fills err for a failed name callback unless the callback already said why. */
static int name_error(struct ht_error *err, const struct ht_expr *name, int r)
{
	if (err->msg[0])
		return r;
	if (r == -ENODATA)
		return pos_error(err, -r, &name->tpos, "'%s' is unavailable", name->name);
	if (r == -ENOENT)
		return pos_error(err, -r, &name->tpos, "unknown name '%s'", name->name);
	return pos_error(err, -r, &name->tpos, "'%s': %s", name->name, strerror(-r));
}

/* ---- static check ---- */

struct checker {
	ht_type_cb type_of;
	ht_family_cb family;
	void *userdata;
	struct ht_error *err;
};

/* count, sum and any always take a family; min and max do with two arguments, the first a name. */
static bool maybe_aggregate(const struct ht_expr *e)
{
	if (e->kind != N_CALL || e->nkids != 2 || e->kids[0]->kind != N_NAME)
		return false;
	return e->fn == F_COUNT || e->fn == F_SUM || e->fn == F_ANY || e->fn == F_MIN ||
	       e->fn == F_MAX;
}

static bool must_aggregate(const struct ht_expr *e)
{
	return e->fn == F_COUNT || e->fn == F_SUM || e->fn == F_ANY;
}

static int check_name(struct checker *c, const struct ht_expr *e, enum ht_type *t, bool avail)
{
	enum ht_type type = HT_T_NONE;
	int r;

	c->err->msg[0] = '\0';
	r = c->type_of(e->name, &e->tpos, &type, c->err, c->userdata);
	/* available() exists to test for missing facts, so "no value" is not an error there. */
	if (r == -ENODATA && avail)
		r = 0;
	if (r < 0)
		return name_error(c->err, e, r);
	c->err->msg[0] = '\0';
	if (avail) {
		*t = HT_T_BOOL;
		return 0;
	}
	switch (type) {
	case HT_T_INT:
	case HT_T_DEC:
		*t = HT_T_INT;
		return 0;
	case HT_T_BOOL:
	case HT_T_STR:
	case HT_T_VER:
		*t = type;
		return 0;
	case HT_T_NONE:
		break;
	}
	return pos_error(c->err, EINVAL, &e->tpos, "type error: '%s' has no type", e->name);
}

static int check(struct checker *c, const struct ht_expr *e, enum ht_type *t);

/*
 * An aggregate's check: the family named by its first argument is entered
 * (its FAMILY.SUFFIX names mean each instance's), the body checked in it
 * and left. Returns 1 when @e is no aggregate (min or max of two values),
 * 0 with *t set, or a negative errno with err set.
 */
static int check_aggregate(struct checker *c, const struct ht_expr *e, enum ht_type *t)
{
	const struct ht_expr *fam = e->kids[0];
	enum ht_type body = HT_T_NONE;
	bool want_bool = e->fn == F_COUNT || e->fn == F_ANY;
	int r;

	c->err->msg[0] = '\0';
	r = c->family ? c->family(fam->name, &fam->tpos, true, c->err, c->userdata) : -ENOENT;
	if (r == -ENOENT && !must_aggregate(e)) {
		c->err->msg[0] = '\0';
		return 1;
	}
	if (r < 0) {
		if (c->err->msg[0])
			return r;
		return pos_error(c->err, EINVAL, &fam->tpos, "%s() takes a family of instances "
		                 "(nic, listener, process, storage) first, got '%s'",
		                 funcs[e->fn].name, fam->name);
	}
	r = check(c, e->kids[1], &body);
	c->family(fam->name, &fam->tpos, false, c->err, c->userdata);
	if (r < 0)
		return r;
	if (want_bool ? body != HT_T_BOOL : body != HT_T_INT)
		return pos_error(c->err, EINVAL, &e->kids[1]->pos, "type error: %s() needs %s for "
		                 "each %s, got %s", funcs[e->fn].name, want_bool ? "a bool" : "a number",
		                 fam->name, ht_type_name(body));
	*t = e->fn == F_ANY ? HT_T_BOOL : HT_T_INT;
	return 0;
}

static int check(struct checker *c, const struct ht_expr *e, enum ht_type *t)
{
	enum ht_type k[3] = { HT_T_NONE, HT_T_NONE, HT_T_NONE };
	int r;

	switch (e->kind) {
	case N_LIT:
		*t = ht_type_is_number(e->lit.type) ? HT_T_INT : e->lit.type;
		return 0;
	case N_NAME:
		return check_name(c, e, t, false);
	case N_UNARY:
		r = check(c, e->kids[0], &k[0]);
		if (r < 0)
			return r;
		if (e->op == T_NOT ? k[0] != HT_T_BOOL : !ht_type_is_number(k[0]))
			return unary_type_error(c->err, e, k[0]);
		*t = k[0];
		return 0;
	case N_BINARY:
		for (size_t i = 0; i < 2; i++) {
			r = check(c, e->kids[i], &k[i]);
			if (r < 0)
				return r;
		}
		if (!binary_types_ok(e->op, k[0], k[1]))
			return binary_type_error(c->err, e, k[0], k[1]);
		*t = is_arith(e->op) ? HT_T_INT : HT_T_BOOL;
		return 0;
	case N_COND:
		for (size_t i = 0; i < 3; i++) {
			r = check(c, e->kids[i], &k[i]);
			if (r < 0)
				return r;
		}
		if (k[0] != HT_T_BOOL)
			return cond_type_error(c->err, e, k[0]);
		if (k[1] != k[2])
			return pos_error(c->err, EINVAL, &e->tpos,
			                 "type error: '?:' branches differ, got %s and %s",
			                 ht_type_name(k[1]), ht_type_name(k[2]));
		*t = k[1];
		return 0;
	case N_CALL:
		break;
	}

	if (e->fn == F_AVAILABLE)
		return check_name(c, e->kids[0], t, true);
	if (e->fn == F_SOURCE) {
		/* source(NAME): where the fact's value came from, a string. */
		enum ht_type kt;

		if ((r = check_name(c, e->kids[0], &kt, true)) < 0)
			return r;
		*t = HT_T_STR;
		return 0;
	}
	if (e->fn == F_TEXT) {
		/* text(a, b, ...): any values, shown as a hole shows them, one after the other. */
		for (size_t i = 0; i < e->nkids; i++) {
			enum ht_type kt;

			if ((r = check(c, e->kids[i], &kt)) < 0)
				return r;
		}
		*t = HT_T_STR;
		return 0;
	}
	if (maybe_aggregate(e)) {
		r = check_aggregate(c, e, t);
		if (r <= 0)
			return r;
	} else if (must_aggregate(e))
		return pos_error(c->err, EINVAL, &e->tpos, "%s() takes a family of instances and an "
		                 "expression: %s(listener, listener.queue_full)", funcs[e->fn].name,
		                 funcs[e->fn].name);
	{
		enum ht_type local[8];
		_cleanup_free_ enum ht_type *heap = NULL;
		enum ht_type *types = local;
		bool ok = true;

		if (e->nkids > ARRAY_SIZE(local)) {
			types = heap = calloc(e->nkids, sizeof(*types));
			if (!types)
				return -ENOMEM;
		}
		for (size_t i = 0; i < e->nkids; i++) {
			r = check(c, e->kids[i], &types[i]);
			if (r < 0)
				return r;
			ok = ok && types[i] == HT_T_INT;
		}
		if (!ok)
			return call_type_error(c->err, e, types);
	}
	*t = HT_T_INT;
	return 0;
}

int ht_expr_check(const struct ht_expr *e, ht_type_cb type_of, void *userdata,
                  enum ht_type *result, struct ht_error *err)
{
	const struct ht_expr_ops ops = { .type_of = type_of };

	return ht_expr_check_ops(e, &ops, userdata, result, err);
}

int ht_expr_check_ops(const struct ht_expr *e, const struct ht_expr_ops *ops, void *userdata,
                      enum ht_type *result, struct ht_error *err)
{
	struct ht_error local;
	struct checker c = { .type_of = ops->type_of, .family = ops->family, .userdata = userdata,
	                     .err = err ? err : &local };
	enum ht_type t = HT_T_NONE;
	int r;

	c.err->msg[0] = '\0';
	r = check(&c, e, &t);
	if (r < 0) {
		if (!c.err->msg[0])
			ht_error_set(c.err, -r, "%s", strerror(-r));
		return r;
	}
	if (result)
		*result = t;
	return 0;
}

/* ---- evaluation ---- */

struct evaluator {
	ht_lookup_cb lookup;
	ht_iterate_cb iterate;
	ht_source_cb source;
	void *userdata;
	struct ht_error *err;
};

/*
 * Exact order of an integer and a double: converting the integer to double
 * would round above 2^53 and make 9007199254740993 equal 9007199254740992.0.
 */
static int cmp_int_dec(int64_t i, double d)
{
	double ip, frac;
	int64_t t;

	if (d >= 0x1p63)
		return -1;
	if (d < -0x1p63)
		return 1;
	frac = modf(d, &ip);
	t = (int64_t)ip;
	if (i != t)
		return i < t ? -1 : 1;
	return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

static int num_cmp(const struct ht_value *a, const struct ht_value *b)
{
	if (a->type == HT_T_INT && b->type == HT_T_INT)
		return (a->i > b->i) - (a->i < b->i);
	if (a->type == HT_T_DEC && b->type == HT_T_DEC)
		return (a->d > b->d) - (a->d < b->d);
	if (a->type == HT_T_INT)
		return cmp_int_dec(a->i, b->d);
	return -cmp_int_dec(b->i, a->d);
}

static const char *num_kind(const struct ht_value *v)
{
	return v->type == HT_T_INT ? "integer" : "decimal";
}

static int overflow(struct evaluator *ev, const struct ht_expr *e, bool integer)
{
	const char *what = integer ? "integer" : "decimal";

	if (e->kind == N_CALL)
		return pos_error(ev->err, ERANGE, &e->tpos, "%s overflow in %s()", what,
		                 funcs[e->fn].name);
	return pos_error(ev->err, ERANGE, &e->tpos, "%s overflow in '%s'", what, tok_text[e->op]);
}

static int div_zero(struct evaluator *ev, const struct ht_expr *e)
{
	return pos_error(ev->err, EDOM, &e->tpos, "division by zero");
}

static int arith(struct evaluator *ev, const struct ht_expr *e, const struct ht_value *l,
                 const struct ht_value *r, struct ht_value *out)
{
	double a, b, d = 0;

	if (l->type == HT_T_INT && r->type == HT_T_INT) {
		int64_t x = l->i, y = r->i, z = 0;
		bool ovf = false;

		switch (e->op) {
		case T_PLUS:
			ovf = __builtin_add_overflow(x, y, &z);
			break;
		case T_MINUS:
			ovf = __builtin_sub_overflow(x, y, &z);
			break;
		case T_STAR:
			ovf = __builtin_mul_overflow(x, y, &z);
			break;
		case T_SLASH:
			if (y == 0)
				return div_zero(ev, e);
			if (x == INT64_MIN && y == -1)
				return overflow(ev, e, true);
			if (x % y != 0) {
				/* long double holds any int64_t exactly on x86-64: one rounding. */
				*out = ht_dec((double)((long double)x / (long double)y));
				return 0;
			}
			z = x / y;
			break;
		case T_PERCENT:
			if (y == 0)
				return div_zero(ev, e);
			/* INT64_MIN % -1 traps on x86 although the answer is 0. */
			z = y == -1 ? 0 : x % y;
			break;
		default:
			break;
		}
		if (ovf)
			return overflow(ev, e, true);
		*out = ht_int(z);
		return 0;
	}
	if (e->op == T_PERCENT)
		return pos_error(ev->err, EINVAL, &e->tpos,
		                 "type error: '%%' needs integers, got %s and %s", num_kind(l),
		                 num_kind(r));
	a = ht_value_as_double(l);
	b = ht_value_as_double(r);
	switch (e->op) {
	case T_PLUS:
		d = a + b;
		break;
	case T_MINUS:
		d = a - b;
		break;
	case T_STAR:
		d = a * b;
		break;
	case T_SLASH:
		if (b == 0)
			return div_zero(ev, e);
		d = a / b;
		break;
	default:
		break;
	}
	if (!isfinite(d))
		return overflow(ev, e, false);
	*out = ht_dec(d);
	return 0;
}

static bool values_equal(const struct ht_value *a, const struct ht_value *b)
{
	if (ht_type_is_number(a->type))
		return num_cmp(a, b) == 0;
	switch (a->type) {
	case HT_T_BOOL:
		return a->b == b->b;
	case HT_T_STR:
		return strcmp(a->s, b->s) == 0;
	case HT_T_VER:
		return ht_version_cmp(&a->v, &b->v) == 0;
	default:
		return false;
	}
}

static int binary(struct evaluator *ev, const struct ht_expr *e, const struct ht_value *l,
                  const struct ht_value *r, struct ht_value *out)
{
	int c;

	if (!binary_types_ok(e->op, l->type, r->type))
		return binary_type_error(ev->err, e, l->type, r->type);
	if (is_arith(e->op))
		return arith(ev, e, l, r, out);
	if (e->op == T_EQ || e->op == T_NE) {
		*out = ht_bool(values_equal(l, r) == (e->op == T_EQ));
		return 0;
	}
	c = l->type == HT_T_VER ? ht_version_cmp(&l->v, &r->v) : num_cmp(l, r);
	switch (e->op) {
	case T_LT:
		*out = ht_bool(c < 0);
		break;
	case T_LE:
		*out = ht_bool(c <= 0);
		break;
	case T_GT:
		*out = ht_bool(c > 0);
		break;
	default:
		*out = ht_bool(c >= 0);
		break;
	}
	return 0;
}

static int lookup_name(struct evaluator *ev, const struct ht_expr *name, struct ht_value *out)
{
	int r;

	ev->err->msg[0] = '\0';
	*out = (struct ht_value){ .type = HT_T_NONE };
	r = ev->lookup(name->name, &name->tpos, out, ev->err, ev->userdata);
	if (r == 0 && out->type == HT_T_NONE)
		r = -ENODATA;
	if (r < 0) {
		ht_value_clear(out);
		return name_error(ev->err, name, r);
	}
	ev->err->msg[0] = '\0';
	return 0;
}

static int eval(struct evaluator *ev, const struct ht_expr *e, struct ht_value *out);

static int int_pow2ceil(struct evaluator *ev, const struct ht_expr *e, int64_t x, int64_t *out)
{
	if (x <= 1) {
		*out = 1;
		return 0;
	}
	if (x > INT64_C(1) << 62)
		return overflow(ev, e, true);
	*out = INT64_C(1) << (64 - __builtin_clzll((uint64_t)x - 1));
	return 0;
}

static int dec_to_int(struct evaluator *ev, const struct ht_expr *e, double d, int64_t *out)
{
	if (d < -0x1p63 || d >= 0x1p63)
		return overflow(ev, e, true);
	*out = (int64_t)d;
	return 0;
}

/* An aggregate under way: what the instances gave so far. */
struct aggregate {
	struct evaluator *ev;
	const struct ht_expr *e; /* the call */
	struct ht_value acc;     /* sum, min or max so far (HT_T_NONE before the first) */
	int64_t count;           /* count: instances whose condition holds */
	int unavailable;         /* any: the first instance whose condition had no value */
	struct ht_error why;     /* any: why it had none */
};

/* The body of an aggregate for the current instance: 0 to go on, 1 to stop, or an error. */
static int aggregate_one(void *userdata)
{
	struct aggregate *a = userdata;
	struct evaluator *ev = a->ev;
	const struct ht_expr *e = a->e;
	_cleanup_value_ struct ht_value v = { .type = HT_T_NONE };
	struct ht_value res = { .type = HT_T_NONE };
	int r = eval(ev, e->kids[1], &v);

	if (r == -ENODATA && e->fn == F_ANY) {
		if (!a->unavailable) {
			a->unavailable = r;
			a->why = *ev->err;
		}
		ev->err->msg[0] = '\0';
		return 0;
	}
	if (r < 0)
		return r;
	switch (e->fn) {
	case F_COUNT:
		a->count += v.type == HT_T_BOOL && v.b;
		return 0;
	case F_ANY:
		if (v.type == HT_T_BOOL && v.b) {
			a->count = 1;
			return 1;
		}
		return 0;
	default:
		break;
	}
	if (!ht_type_is_number(v.type))
		return pos_error(ev->err, EINVAL, &e->kids[1]->pos, "type error: %s() needs a number",
		                 funcs[e->fn].name);
	if (a->acc.type == HT_T_NONE) {
		a->acc = v;
		v.type = HT_T_NONE;
		return 0;
	}
	if (e->fn == F_SUM) {
		struct ht_expr plus = *e;

		plus.op = T_PLUS;
		r = arith(ev, &plus, &a->acc, &v, &res);
		if (r < 0)
			return r;
		a->acc = res;
		return 0;
	}
	if (e->fn == F_MIN ? num_cmp(&v, &a->acc) < 0 : num_cmp(&v, &a->acc) > 0) {
		/* A decimal anywhere makes the result a decimal, as min() and max() of values do. */
		bool dec = v.type == HT_T_DEC || a->acc.type == HT_T_DEC;

		a->acc = dec ? ht_dec(ht_value_as_double(&v)) : v;
	} else if (v.type == HT_T_DEC && a->acc.type == HT_T_INT)
		a->acc = ht_dec(ht_value_as_double(&a->acc));
	return 0;
}

/*
 * count(F, COND), sum(F, X), min(F, X), max(F, X), any(F, COND) over the
 * instances of family F (ht_iterate_cb). Returns 1 when F is no family and
 * @e is min() or max() of two values, else as eval().
 */
static int aggregate(struct evaluator *ev, const struct ht_expr *e, struct ht_value *out)
{
	const struct ht_expr *fam = e->kids[0];
	struct aggregate a = { .ev = ev, .e = e, .acc = { .type = HT_T_NONE } };
	int r;

	ev->err->msg[0] = '\0';
	r = ev->iterate ? ev->iterate(fam->name, &fam->tpos, aggregate_one, &a, ev->err, ev->userdata)
	                : -ENOENT;
	if (r == -ENOENT && !ev->err->msg[0] && !must_aggregate(e))
		return 1;
	if (r == -ENOENT && !ev->err->msg[0])
		return pos_error(ev->err, EINVAL, &fam->tpos, "%s(): '%s' is not a family of instances",
		                 funcs[e->fn].name, fam->name);
	if (r < 0) {
		ht_value_clear(&a.acc);
		if (!ev->err->msg[0])
			return pos_error(ev->err, -r, &e->tpos, "%s(): %s", funcs[e->fn].name,
			                 strerror(-r));
		return r;
	}
	switch (e->fn) {
	case F_COUNT:
		*out = ht_int(a.count);
		return 0;
	case F_ANY:
		if (!a.count && a.unavailable) {
			*ev->err = a.why;
			return a.unavailable;
		}
		*out = ht_bool(a.count > 0);
		return 0;
	case F_SUM:
		*out = a.acc.type == HT_T_NONE ? ht_int(0) : a.acc;
		return 0;
	default:
		break;
	}
	if (a.acc.type == HT_T_NONE)
		return pos_error(ev->err, ENODATA, &e->tpos, "%s(): no %s to take it over",
		                 funcs[e->fn].name, fam->name);
	*out = a.acc;
	return 0;
}

/* text(a, b, ...): the arguments as holes show them, joined; -ENODATA when one has no value. */
static int eval_text(struct evaluator *ev, const struct ht_expr *e, struct ht_value *out)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;

	for (size_t k = 0; k < e->nkids; k++) {
		struct ht_value v = { 0 };
		_cleanup_free_ char *piece = NULL;
		char *n;
		int r = eval(ev, e->kids[k], &v);

		if (r < 0)
			return r;
		piece = ht_value_display(&v);
		ht_value_clear(&v);
		if (!piece)
			return -ENOMEM;
		n = realloc(buf, len + strlen(piece) + 1);
		if (!n)
			return -ENOMEM;
		buf = n;
		memcpy(buf + len, piece, strlen(piece) + 1);
		len += strlen(piece);
	}
	*out = (struct ht_value){ .type = HT_T_STR, .s = TAKE_PTR(buf) };
	return 0;
}

/* source(NAME): where the fact came from (the ops' source callback), a string. */
static int eval_source(struct evaluator *ev, const struct ht_expr *e, struct ht_value *out)
{
	char *src = NULL;
	int r;

	ev->err->msg[0] = '\0';
	r = ev->source ? ev->source(e->kids[0]->name, &e->kids[0]->tpos, &src, ev->err, ev->userdata)
	               : -ENODATA;
	if (r < 0)
		return name_error(ev->err, e->kids[0], r);
	*out = (struct ht_value){ .type = HT_T_STR, .s = src };
	return 0;
}

static int call(struct evaluator *ev, const struct ht_expr *e, struct ht_value *out)
{
	struct ht_value local_args[8];
	enum ht_type local_types[8];
	_cleanup_free_ struct ht_value *heap_args = NULL;
	_cleanup_free_ enum ht_type *heap_types = NULL;
	struct ht_value *args = local_args;
	enum ht_type *types = local_types;
	const struct ht_value *x;
	bool any_dec = false, ok = true;
	int64_t n = 0;
	int r = 0;

	if (e->fn == F_AVAILABLE) {
		struct ht_value v;

		r = lookup_name(ev, e->kids[0], &v);
		ht_value_clear(&v);
		if (r == -ENODATA) {
			ev->err->msg[0] = '\0';
			*out = ht_bool(false);
			return 0;
		}
		if (r < 0)
			return r;
		*out = ht_bool(true);
		return 0;
	}
	if (e->fn == F_TEXT)
		return eval_text(ev, e, out);
	if (e->fn == F_SOURCE)
		return eval_source(ev, e, out);
	if (maybe_aggregate(e)) {
		r = aggregate(ev, e, out);
		if (r <= 0)
			return r;
		ev->err->msg[0] = '\0';
		r = 0;
	}

	if (e->nkids > ARRAY_SIZE(local_args)) {
		args = heap_args = calloc(e->nkids, sizeof(*args));
		types = heap_types = calloc(e->nkids, sizeof(*types));
		if (!args || !types)
			return -ENOMEM;
	} else
		memset(local_args, 0, sizeof(local_args));
	for (size_t k = 0; k < e->nkids && r == 0; k++) {
		r = eval(ev, e->kids[k], &args[k]);
		types[k] = args[k].type;
		ok = ok && ht_type_is_number(types[k]);
		any_dec = any_dec || types[k] == HT_T_DEC;
	}
	if (r == 0 && !ok)
		r = call_type_error(ev->err, e, types);
	x = &args[0];

	switch (r < 0 ? -1 : (int)e->fn) {
	case F_MIN:
	case F_MAX:
		for (size_t k = 1; k < e->nkids; k++) {
			int c = num_cmp(&args[k], x);

			if (e->fn == F_MIN ? c < 0 : c > 0)
				x = &args[k];
		}
		*out = any_dec ? ht_dec(ht_value_as_double(x)) : *x;
		break;
	case F_CLAMP:
		if (num_cmp(&args[1], &args[2]) > 0) {
			_cleanup_free_ char *lo = ht_value_display(&args[1]);
			_cleanup_free_ char *hi = ht_value_display(&args[2]);

			if (!lo || !hi) {
				r = -ENOMEM;
				break;
			}
			r = pos_error(ev->err, EDOM, &e->tpos,
			              "clamp() needs lo <= hi, got %s and %s", lo, hi);
			break;
		}
		if (num_cmp(x, &args[1]) < 0)
			x = &args[1];
		else if (num_cmp(x, &args[2]) > 0)
			x = &args[2];
		*out = any_dec ? ht_dec(ht_value_as_double(x)) : *x;
		break;
	case F_POW2CEIL:
		if (x->type == HT_T_INT)
			r = int_pow2ceil(ev, e, x->i, &n);
		else if (x->d <= 1)
			n = 1;
		else if (x->d > 0x1p62)
			r = overflow(ev, e, true);
		else
			r = int_pow2ceil(ev, e, (int64_t)ceil(x->d), &n);
		*out = ht_int(n);
		break;
	case F_POW2FLOOR:
		if (x->type == HT_T_INT ? x->i < 1 : x->d < 1) {
			_cleanup_free_ char *s = ht_value_display(x);

			r = s ? pos_error(ev->err, EDOM, &e->tpos,
			                  "pow2floor() needs a number >= 1, got %s", s)
			      : -ENOMEM;
			break;
		}
		if (x->type == HT_T_DEC)
			r = dec_to_int(ev, e, floor(x->d), &n);
		else
			n = x->i;
		if (r == 0)
			*out = ht_int(INT64_C(1) << (63 - __builtin_clzll((uint64_t)n)));
		break;
	case F_CEIL:
	case F_FLOOR:
	case F_ROUND:
		if (x->type == HT_T_INT) {
			*out = *x;
			break;
		}
		r = dec_to_int(ev, e,
		               e->fn == F_CEIL    ? ceil(x->d)
		               : e->fn == F_FLOOR ? floor(x->d)
		                                  : round(x->d),
		               &n);
		*out = ht_int(n);
		break;
	case F_ISQRT: {
		/* The largest integer whose square is at most x, as the kernel's int_sqrt(). */
		uint64_t v, y;

		if (x->type == HT_T_INT ? x->i < 0 : x->d < 0) {
			_cleanup_free_ char *s = ht_value_display(x);

			r = s ? pos_error(ev->err, EDOM, &e->tpos, "isqrt() needs a number >= 0, got %s",
			                  s)
			      : -ENOMEM;
			break;
		}
		if (x->type == HT_T_DEC)
			r = dec_to_int(ev, e, floor(x->d), &n);
		else
			n = x->i;
		if (r < 0)
			break;
		v = (uint64_t)n;
		y = (uint64_t)sqrt((double)v);
		while (y > 0 && y * y > v)
			y--;
		while ((y + 1) * (y + 1) <= v)
			y++;
		*out = ht_int((int64_t)y);
		break;
	}
	case F_ABS:
		if (x->type == HT_T_DEC)
			*out = ht_dec(fabs(x->d));
		else if (x->i == INT64_MIN)
			r = overflow(ev, e, true);
		else
			*out = ht_int(x->i < 0 ? -x->i : x->i);
		break;
	default:
		break;
	}
	for (size_t k = 0; k < e->nkids; k++)
		ht_value_clear(&args[k]);
	if (r < 0)
		*out = (struct ht_value){ .type = HT_T_NONE };
	return r;
}

static int eval(struct evaluator *ev, const struct ht_expr *e, struct ht_value *out)
{
	_cleanup_value_ struct ht_value l = { .type = HT_T_NONE };
	_cleanup_value_ struct ht_value r = { .type = HT_T_NONE };
	int ret;

	*out = (struct ht_value){ .type = HT_T_NONE };
	switch (e->kind) {
	case N_LIT:
		return ht_value_copy(out, &e->lit);
	case N_NAME:
		return lookup_name(ev, e, out);
	case N_CALL:
		return call(ev, e, out);
	case N_COND:
		ret = eval(ev, e->kids[0], &l);
		if (ret < 0)
			return ret;
		if (l.type != HT_T_BOOL)
			return cond_type_error(ev->err, e, l.type);
		return eval(ev, e->kids[l.b ? 1 : 2], out);
	case N_UNARY:
		ret = eval(ev, e->kids[0], &l);
		if (ret < 0)
			return ret;
		if (e->op == T_NOT && l.type == HT_T_BOOL)
			*out = ht_bool(!l.b);
		else if (e->op == T_MINUS && l.type == HT_T_DEC)
			*out = ht_dec(-l.d);
		else if (e->op == T_MINUS && l.type == HT_T_INT && l.i != INT64_MIN)
			*out = ht_int(-l.i);
		else if (e->op == T_MINUS && l.type == HT_T_INT)
			return overflow(ev, e, true);
		else
			return unary_type_error(ev->err, e, l.type);
		return 0;
	case N_BINARY:
		break;
	}

	ret = eval(ev, e->kids[0], &l);
	if (ret < 0)
		return ret;
	if (e->op == T_AND || e->op == T_OR) {
		if (l.type != HT_T_BOOL)
			return binary_type_error(ev->err, e, l.type, HT_T_NONE);
		/* The right side is not evaluated, so its facts may be unavailable. */
		if (l.b == (e->op == T_OR)) {
			*out = ht_bool(l.b);
			return 0;
		}
		ret = eval(ev, e->kids[1], &r);
		if (ret < 0)
			return ret;
		if (r.type != HT_T_BOOL)
			return binary_type_error(ev->err, e, l.type, r.type);
		*out = ht_bool(r.b);
		return 0;
	}
	ret = eval(ev, e->kids[1], &r);
	if (ret < 0)
		return ret;
	return binary(ev, e, &l, &r, out);
}

int ht_expr_eval(const struct ht_expr *e, ht_lookup_cb lookup, void *userdata, struct ht_value *out,
                 struct ht_error *err)
{
	const struct ht_expr_ops ops = { .lookup = lookup };

	return ht_expr_eval_ops(e, &ops, userdata, out, err);
}

int ht_expr_eval_ops(const struct ht_expr *e, const struct ht_expr_ops *ops, void *userdata,
                     struct ht_value *out, struct ht_error *err)
{
	struct ht_error local;
	struct evaluator ev = { .lookup = ops->lookup, .iterate = ops->iterate,
	                        .source = ops->source, .userdata = userdata,
	                        .err = err ? err : &local };
	int r;

	ev.err->msg[0] = '\0';
	r = eval(&ev, e, out);
	if (r < 0) {
		ht_value_clear(out);
		if (!ev.err->msg[0])
			ht_error_set(ev.err, -r, "%s", strerror(-r));
	}
	return r;
}

/* ---- conditions, for hosttune rules --lint ---- */

/* The canonical text of @e into @buf (no blanks, binary operators in parentheses). */
static int expr_text(const struct ht_expr *e, char **buf, size_t *len)
{
	_cleanup_free_ char *s = NULL;
	int r;

#define PUT(str)                                                                  \
	do {                                                                      \
		const char *p_ = (str);                                           \
		size_t n_ = strlen(p_);                                           \
		char *nb_ = realloc(*buf, *len + n_ + 1);                         \
		if (!nb_)                                                         \
			return -ENOMEM;                                           \
		*buf = nb_;                                                       \
		memcpy(*buf + *len, p_, n_ + 1);                                  \
		*len += n_;                                                       \
	} while (0)
	switch (e->kind) {
	case N_LIT:
		if (!(s = ht_value_format(&e->lit)))
			return -ENOMEM;
		PUT(s);
		return 0;
	case N_NAME:
		PUT(e->name);
		return 0;
	case N_UNARY:
		PUT(tok_text[e->op]);
		return expr_text(e->kids[0], buf, len);
	case N_BINARY:
	case N_COND:
		PUT("(");
		if ((r = expr_text(e->kids[0], buf, len)) < 0)
			return r;
		PUT(e->kind == N_COND ? "?" : tok_text[e->op]);
		if ((r = expr_text(e->kids[1], buf, len)) < 0)
			return r;
		if (e->kind == N_COND) {
			PUT(":");
			if ((r = expr_text(e->kids[2], buf, len)) < 0)
				return r;
		}
		PUT(")");
		return 0;
	case N_CALL:
		PUT(funcs[e->fn].name);
		PUT("(");
		for (size_t i = 0; i < e->nkids; i++) {
			if (i)
				PUT(",");
			if ((r = expr_text(e->kids[i], buf, len)) < 0)
				return r;
		}
		PUT(")");
		return 0;
	}
#undef PUT
	return 0;
}

/* The atoms of condition @e: split at && and ||, without !. */
static int cond_atoms(const struct ht_expr *e, ht_atom_cb cb, void *userdata)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int r;

	if (e->kind == N_BINARY && (e->op == T_AND || e->op == T_OR)) {
		r = cond_atoms(e->kids[0], cb, userdata);
		return r ? r : cond_atoms(e->kids[1], cb, userdata);
	}
	if (e->kind == N_UNARY && e->op == T_NOT)
		return cond_atoms(e->kids[0], cb, userdata);
	if ((r = expr_text(e, &buf, &len)) < 0)
		return r;
	return cb(buf ? buf : "", &e->pos, userdata);
}

int ht_expr_conditions(const struct ht_expr *e, bool whole, ht_atom_cb cb, void *userdata)
{
	int r;

	if (!e)
		return 0;
	if (whole)
		return cond_atoms(e, cb, userdata) ?: ht_expr_conditions(e, false, cb, userdata);
	if (e->kind == N_COND && (r = cond_atoms(e->kids[0], cb, userdata)))
		return r;
	for (size_t i = 0; i < e->nkids; i++)
		if ((r = ht_expr_conditions(e->kids[i], false, cb, userdata)))
			return r;
	return 0;
}

unsigned ht_expr_string_conds(const struct ht_expr *e)
{
	unsigned n = 0;

	if (!e)
		return 0;
	if (e->kind == N_COND)
		for (size_t i = 1; i < 3; i++)
			if ((e->kids[i]->kind == N_LIT && e->kids[i]->lit.type == HT_T_STR) ||
			    (e->kids[i]->kind == N_CALL && e->kids[i]->fn == F_TEXT)) {
				n++;
				break;
			}
	for (size_t i = 0; i < e->nkids; i++)
		n += ht_expr_string_conds(e->kids[i]);
	return n;
}
