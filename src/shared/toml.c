/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shared/toml.h"
#include "shared/util.h"

/*
 * A hand-written recursive reader: one pass over the buffer, one statement
 * (header or key = value) per line. The first error stops it; its message
 * names the byte where the reader stood.
 */

struct parser {
	const char *file;
	const char *buf;
	size_t len;
	size_t pos;
	char *err;     /* the first error's message */
	bool nomem;
	struct ht_toml_table *root;
	struct ht_toml_table *cur; /* where key = value lines go */
	unsigned depth;            /* inline tables open around pos */
	size_t lc_pos;             /* line_of()'s last place: the line there, from 1, */
	unsigned lc_line;          /* and the offset its line starts at */
	size_t lc_start;
};

static int peek(const struct parser *p, size_t off)
{
	return p->pos + off < p->len ? (unsigned char)p->buf[p->pos + off] : -1;
}

static bool is_bare(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

/* What stands at pos, for "found ...". */
static void describe(const struct parser *p, size_t pos, char *out, size_t n)
{
	int c = pos < p->len ? (unsigned char)p->buf[pos] : -1;

	if (c < 0)
		snprintf(out, n, "end of file");
	else if (c == '\n' || (c == '\r' && pos + 1 < p->len && p->buf[pos + 1] == '\n'))
		snprintf(out, n, "end of line");
	else if (c > 0x20 && c < 0x7f)
		snprintf(out, n, "'%c'", c);
	else if (c == ' ')
		snprintf(out, n, "a space");
	else
		snprintf(out, n, "byte 0x%02x", (unsigned)c);
}

/*
 * The line (and column) of pos. The reader asks mostly in file order: it
 * counts on from the place it last asked about, from the start only when
 * asked about an earlier one, so that a long file costs no quadratic time.
 */
static unsigned line_of(struct parser *p, size_t pos, unsigned *col)
{
	unsigned line = 1;
	size_t i = 0, start = 0;

	if (pos >= p->lc_pos) {
		i = p->lc_pos;
		line = p->lc_line;
		start = p->lc_start;
	}
	for (; i < pos && i < p->len; i++)
		if (p->buf[i] == '\n') {
			line++;
			start = i + 1;
		}
	p->lc_pos = i;
	p->lc_line = line;
	p->lc_start = start;
	if (col)
		*col = (unsigned)(pos - start + 1);
	return line;
}

/* Record "FILE:LINE:COL: expected WHAT, found FOUND" at pos; found NULL: what stands there. */
_printf_(4, 5) static int fail(struct parser *p, size_t pos, const char *found, const char *fmt, ...)
{
	char what[256], here[32];
	unsigned line, col;
	va_list ap;

	if (p->err || p->nomem)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!found) {
		describe(p, pos, here, sizeof(here));
		found = here;
	}
	line = line_of(p, pos, &col);
	if (asprintf(&p->err, "%s:%u:%u: expected %s, found %s", p->file, line, col, what, found) < 0) {
		p->err = NULL;
		p->nomem = true;
		return -ENOMEM;
	}
	return -EINVAL;
}

static int oom(struct parser *p)
{
	p->nomem = true;
	return -ENOMEM;
}

static void value_clear(struct ht_toml_value *v)
{
	free(v->str);
	for (size_t i = 0; i < v->n_strv; i++)
		free(v->strv[i]);
	free(v->strv);
	ht_toml_free(v->table);
	for (size_t i = 0; i < v->n_tables; i++)
		ht_toml_free(v->tables[i]);
	free(v->tables);
	memset(v, 0, sizeof(*v));
}

void ht_toml_free(struct ht_toml_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->entries[i].key);
		value_clear(&t->entries[i].v);
	}
	free(t->entries);
	free(t);
}

static struct ht_toml_entry *find(const struct ht_toml_table *t, const char *key, size_t klen)
{
	for (size_t i = 0; i < t->n; i++)
		if (strlen(t->entries[i].key) == klen && !memcmp(t->entries[i].key, key, klen))
			return &t->entries[i];
	return NULL;
}

/*
 * Keys of one table: lookups are linear (a garage.toml has about 40), so a
 * bound keeps a hostile file from taking seconds (90,000 keys: 30 s).
 */
#define MAX_KEYS 4096

/* "at most MAX_KEYS keys" at pos when t is full, else 0. */
static int check_room(struct parser *p, const struct ht_toml_table *t, size_t pos)
{
	if (t->n < MAX_KEYS)
		return 0;
	return fail(p, pos, "another key", "at most %d keys in a table", MAX_KEYS);
}

/* Append an entry named key[0..klen) to t; its value zeroed. NULL when out of memory. */
static struct ht_toml_entry *add(struct ht_toml_table *t, const char *key, size_t klen)
{
	struct ht_toml_entry *e;
	char *k = strndup(key, klen);

	if (!k)
		return NULL;
	e = realloc(t->entries, (t->n + 1) * sizeof(*e));
	if (!e) {
		free(k);
		return NULL;
	}
	t->entries = e;
	e = &t->entries[t->n++];
	memset(e, 0, sizeof(*e));
	e->key = k;
	return e;
}

/* Spaces and tabs. */
static void skip_ws(struct parser *p)
{
	while (peek(p, 0) == ' ' || peek(p, 0) == '\t')
		p->pos++;
}

/* At a line end (LF, CRLF) or end of file. */
static bool at_eol(const struct parser *p)
{
	int c = peek(p, 0);

	return c < 0 || c == '\n' || (c == '\r' && peek(p, 1) == '\n');
}

static void skip_comment(struct parser *p)
{
	if (peek(p, 0) != '#')
		return;
	while (!at_eol(p))
		p->pos++;
}

/* Spaces, an optional comment, then the line end (consumed) or end of file. */
static int end_line(struct parser *p)
{
	skip_ws(p);
	skip_comment(p);
	if (!at_eol(p))
		return fail(p, p->pos, NULL, "end of line");
	if (peek(p, 0) == '\r')
		p->pos++;
	if (peek(p, 0) == '\n')
		p->pos++;
	return 0;
}

/* A bare key: *key, *klen point into the buffer. */
static int bare_key(struct parser *p, const char **key, size_t *klen, const char *what)
{
	size_t start = p->pos;

	if (peek(p, 0) == '"' || peek(p, 0) == '\'')
		return fail(p, p->pos, "a quoted key", "%s", what);
	while (is_bare(peek(p, 0)))
		p->pos++;
	if (p->pos == start)
		return fail(p, p->pos, NULL, "%s", what);
	*key = p->buf + start;
	*klen = p->pos - start;
	return 0;
}

/* cp (a Unicode scalar value, not 0) as UTF-8 at out + *n: 1 to 4 bytes. */
static void put_utf8(char *out, size_t *n, unsigned long cp)
{
	if (cp < 0x80) {
		out[(*n)++] = (char)cp;
	} else if (cp < 0x800) {
		out[(*n)++] = (char)(0xc0 | (cp >> 6));
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		out[(*n)++] = (char)(0xe0 | (cp >> 12));
		out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		out[(*n)++] = (char)(0xf0 | (cp >> 18));
		out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	}
}

/*
 * The length of the well-formed UTF-8 sequence at b[0..len) (len >= 1), as
 * ht_utf8_len() says (no overlong forms, surrogates, nothing above
 * U+10FFFF), or 0 when none starts there or b[0] is NUL. ht_utf8_len() reads
 * up to 4 bytes, stopping at the first that does not fit: near the end of
 * the buffer (not NUL-terminated) it reads a padded copy.
 */
static size_t utf8_len(const char *b, size_t len)
{
	char tail[5] = { 0 };

	if (len >= 4)
		return (size_t)ht_utf8_len(b);
	memcpy(tail, b, len);
	return (size_t)ht_utf8_len(tail);
}

/* A one-line basic or literal string at pos; *ret malloc'd. */
static int string(struct parser *p, char **ret)
{
	int q = peek(p, 0);
	size_t start = p->pos, n = 0;
	_cleanup_free_ char *out = NULL;

	if (peek(p, 1) == q && peek(p, 2) == q)
		return fail(p, p->pos, q == '"' ? "'\"\"\"'" : "\"'''\"",
			    "a one-line string (multi-line strings are not read)");
	/*
	 * The decoded text is never longer than its source: up to the closing
	 * quote (an escaped one skipped), or the line's end when there is none.
	 * Bounded by the string, not the line: a line of 100,000 strings would
	 * otherwise cost quadratic time.
	 */
	{
		size_t end = start + 1;

		while (end < p->len && p->buf[end] != '\n' && p->buf[end] != q) {
			if (q == '"' && p->buf[end] == '\\' && end + 1 < p->len && p->buf[end + 1] != '\n')
				end++;
			end++;
		}
		out = malloc(end - start + 1);
	}
	if (!out)
		return oom(p);
	p->pos++;
	for (;;) {
		int c = peek(p, 0);

		if (c == q) {
			p->pos++;
			break;
		}
		if (c < 0 || at_eol(p)) {
			unsigned col;

			line_of(p, start, &col);
			return fail(p, p->pos, NULL, "%s closing the string opened at column %u",
				    q == '"' ? "'\"'" : "\"'\"", col);
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return fail(p, p->pos, NULL, "a printable character in the string");
		if (c == '\\' && q == '"') {
			int e = peek(p, 1);
			unsigned long cp = 0;

			switch (e) {
			case '"':
			case '\\':
				out[n++] = (char)e;
				p->pos += 2;
				continue;
			case 'b':
			case 't':
			case 'n':
			case 'f':
			case 'r':
				out[n++] = e == 'b' ? '\b' : e == 't' ? '\t' : e == 'n' ? '\n'
					 : e == 'f' ? '\f' : '\r';
				p->pos += 2;
				continue;
			case 'u':
			case 'U': {
				int digits = e == 'u' ? 4 : 8;
				char f[16];

				for (int i = 0; i < digits; i++) {
					int h = peek(p, 2 + i);

					if (!isxdigit(h))
						return fail(p, p->pos + 2 + i, NULL,
							    "%d hexadecimal digits after \\%c", digits, e);
					cp = cp * 16 + (unsigned long)(isdigit(h) ? h - '0'
										  : (tolower(h) - 'a' + 10));
				}
				/* NUL would cut the C string short */
				if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) {
					snprintf(f, sizeof(f), "%.*s", 2 + digits, p->buf + p->pos);
					return fail(p, p->pos, f,
						    "a Unicode scalar value (not a surrogate, not U+0000%s)",
						    e == 'U' ? ", not above U+10FFFF" : "");
				}
				put_utf8(out, &n, cp);
				p->pos += 2 + (size_t)digits;
				continue;
			}
			default: {
				char f[32];

				if (e > 0x20 && e < 0x7f)
					snprintf(f, sizeof(f), "'\\%c'", e);
				else
					snprintf(f, sizeof(f), "'\\' then %s",
						 e < 0 ? "end of file" : "another byte");
				return fail(p, p->pos, f,
					    "an escape among \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX");
			}
			}
		}
		out[n++] = (char)c;
		p->pos++;
	}
	out[n] = 0;
	/* give back what the worst case took */
	*ret = realloc(out, n + 1) ?: out;
	out = NULL;
	return 0;
}

/* A decimal integer at pos (sign or digit seen). */
static int integer(struct parser *p, int64_t *ret)
{
	size_t start = p->pos;
	bool neg = false;
	uint64_t v = 0, lim;
	int c;

	if (peek(p, 0) == '+' || peek(p, 0) == '-') {
		neg = peek(p, 0) == '-';
		p->pos++;
	}
	if (!isdigit(peek(p, 0))) {
		if (peek(p, 0) == 'i' || peek(p, 0) == 'n')
			return fail(p, start, "inf or nan", "an integer");
		return fail(p, p->pos, NULL, "a digit");
	}
	if (peek(p, 0) == '0' && (peek(p, 1) == 'x' || peek(p, 1) == 'o' || peek(p, 1) == 'b'))
		return fail(p, start, peek(p, 1) == 'x' ? "'0x'" : peek(p, 1) == 'o' ? "'0o'" : "'0b'",
			    "a decimal integer");
	if (peek(p, 0) == '0' && (isdigit(peek(p, 1)) || peek(p, 1) == '_')) {
		size_t k = 1;

		while (isdigit(peek(p, k)))
			k++;
		if (peek(p, k) == ':' || peek(p, k) == '-')
			return fail(p, start, "a date or time", "an integer");
		return fail(p, p->pos, "a leading zero", "a decimal integer");
	}
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (;;) {
		c = peek(p, 0);
		if (c == '_') {
			if (!isdigit(peek(p, 1)))
				return fail(p, p->pos + 1, NULL, "a digit after '_'");
			p->pos++;
			continue;
		}
		if (!isdigit(c))
			break;
		if (v > (lim - (uint64_t)(c - '0')) / 10)
			return fail(p, start, "a number out of range", "an integer in 64 bits");
		v = v * 10 + (uint64_t)(c - '0');
		p->pos++;
	}
	if (c == '.' || c == 'e' || c == 'E')
		return fail(p, start, "a float", "an integer");
	if (c == '-' || c == ':')
		return fail(p, start, "a date or time", "an integer");
	if (is_bare(c))
		return fail(p, p->pos, NULL, "end of the integer");
	*ret = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

/* Spaces, tabs, comments and line ends inside an array. */
static void skip_array_space(struct parser *p)
{
	for (;;) {
		skip_ws(p);
		skip_comment(p);
		if (peek(p, 0) == '\n')
			p->pos++;
		else if (peek(p, 0) == '\r' && peek(p, 1) == '\n')
			p->pos += 2;
		else
			return;
	}
}

static int value(struct parser *p, struct ht_toml_value *v);

/*
 * How deep inline tables may nest (the reader recurses once per level), and
 * how many parts a table header's name may have: tables are freed
 * recursively.
 */
#define MAX_DEPTH 64

/* "expected WHAT, found ..." inside braces, saying why a line end does not do. */
static int fail_inline(struct parser *p, const char *what)
{
	if (at_eol(p))
		return fail(p, p->pos, NULL, "%s on the same line (an inline table is one line)",
			    what);
	return fail(p, p->pos, NULL, "%s", what);
}

/*
 * An inline table at pos ('{'), read into t (already owned by the tree, so
 * that an error frees what was read).
 */
static int inline_table(struct parser *p, struct ht_toml_table *t)
{
	bool first = true;
	int r;

	if (p->depth >= MAX_DEPTH)
		return fail(p, p->pos, "a deeper '{'", "inline tables nested at most %d deep",
			    MAX_DEPTH);
	t->line = line_of(p, p->pos, NULL);
	p->pos++; /* '{' */
	skip_ws(p);
	if (peek(p, 0) == '}') {
		p->pos++;
		return 0;
	}
	p->depth++;
	for (;; first = false) {
		const char *key;
		size_t klen, kpos;
		struct ht_toml_entry *e;

		skip_ws(p);
		if (at_eol(p))
			return fail_inline(p, first ? "a key or '}'" : "a key");
		if (!first && peek(p, 0) == '}')
			return fail(p, p->pos, NULL, "a key (no trailing comma in an inline table)");
		kpos = p->pos;
		r = bare_key(p, &key, &klen, first ? "a key or '}'" : "a key");
		if (r < 0)
			return r;
		skip_ws(p);
		if (peek(p, 0) == '.')
			return fail(p, p->pos, "'.' (dotted keys are not read)", "'='");
		if (peek(p, 0) != '=')
			return fail_inline(p, "'='");
		e = find(t, key, klen);
		if (e) {
			char f[128];

			snprintf(f, sizeof(f), "'%.*s' already defined at line %u", (int)klen, key,
				 e->v.line);
			return fail(p, kpos, f, "a key not yet defined in this inline table");
		}
		p->pos++;
		skip_ws(p);
		if ((r = check_room(p, t, kpos)) < 0)
			return r;
		e = add(t, key, klen);
		if (!e)
			return oom(p);
		r = value(p, &e->v);
		if (r < 0)
			return r;
		skip_ws(p);
		if (peek(p, 0) == '}') {
			p->pos++;
			p->depth--;
			return 0;
		}
		if (peek(p, 0) != ',')
			return fail_inline(p, "',' or '}'");
		p->pos++;
	}
}

/*
 * An array at pos ('['): of strings (also when empty), or of inline tables
 * (HT_TOML_TABLE_ARRAY, is_inline). Its first element says which.
 */
static int array(struct parser *p, struct ht_toml_value *v)
{
	int r;

	p->pos++; /* '[' */
	v->type = HT_TOML_STRINGS;
	for (;;) {
		int c;

		skip_array_space(p);
		c = peek(p, 0);
		if (c == ']') {
			p->pos++;
			return 0;
		}
		if (v->type == HT_TOML_STRINGS && v->n_strv == 0 && c == '{') {
			v->type = HT_TOML_TABLE_ARRAY;
			v->is_inline = true;
		}
		if (v->type == HT_TOML_TABLE_ARRAY) {
			struct ht_toml_table **nt, *t;

			if (c != '{')
				return fail(p, p->pos, NULL,
					    "an inline table or ']' (this array holds inline tables)");
			t = calloc(1, sizeof(*t));
			if (!t)
				return oom(p);
			nt = realloc(v->tables, (v->n_tables + 1) * sizeof(*nt));
			if (!nt) {
				free(t);
				return oom(p);
			}
			v->tables = nt;
			v->tables[v->n_tables++] = t;
			r = inline_table(p, t);
		} else {
			char **nv, *s = NULL;

			if (c != '"' && c != '\'')
				return fail(p, p->pos, NULL, "%s",
					    v->n_strv ? "a string or ']' (this array holds strings)"
						      : "a string, an inline table or ']' (arrays hold "
							"strings or inline tables only)");
			r = string(p, &s);
			if (r < 0)
				return r;
			nv = realloc(v->strv, (v->n_strv + 1) * sizeof(*nv));
			if (!nv) {
				free(s);
				return oom(p);
			}
			v->strv = nv;
			v->strv[v->n_strv++] = s;
		}
		if (r < 0)
			return r;
		skip_array_space(p);
		if (peek(p, 0) == ',')
			p->pos++;
		else if (peek(p, 0) != ']')
			return fail(p, p->pos, NULL, "',' or ']'");
	}
}

static int value(struct parser *p, struct ht_toml_value *v)
{
	int c = peek(p, 0);

	v->line = line_of(p, p->pos, NULL);
	if (c == '"' || c == '\'') {
		v->type = HT_TOML_STRING;
		return string(p, &v->str);
	}
	if (c == '[')
		return array(p, v);
	if (c == '{') {
		v->type = HT_TOML_TABLE;
		v->is_inline = true;
		v->table = calloc(1, sizeof(*v->table));
		if (!v->table)
			return oom(p);
		return inline_table(p, v->table);
	}
	if (c == 't' || c == 'f') {
		const char *w = c == 't' ? "true" : "false";
		size_t wl = strlen(w);

		if (p->len - p->pos >= wl && !memcmp(p->buf + p->pos, w, wl) &&
		    !is_bare(peek(p, wl))) {
			v->type = HT_TOML_BOOL;
			v->b = c == 't';
			p->pos += wl;
			return 0;
		}
		return fail(p, p->pos, NULL, "a value");
	}
	if (c == '+' || c == '-' || isdigit(c)) {
		v->type = HT_TOML_INT;
		return integer(p, &v->i);
	}
	return fail(p, p->pos, NULL, "a value");
}

/* What an entry a header runs into is, for "already defined at line N as ...". */
static const char *kind(const struct ht_toml_value *v)
{
	switch (v->type) {
	case HT_TOML_TABLE:
		return v->is_inline ? "an inline table (complete as written)" : "a table";
	case HT_TOML_TABLE_ARRAY:
		return v->is_inline ? "an array of inline tables (a static array cannot be appended to)"
				    : "an array of tables";
	default:
		return "a key";
	}
}

/* Walk (and make) the tables of a header's name up to its last part. */
static int header(struct parser *p)
{
	bool array = peek(p, 1) == '[';
	size_t hpos = p->pos;
	struct ht_toml_table *t = p->root;
	unsigned line = line_of(p, p->pos, NULL), parts = 0;
	int r;

	p->pos += array ? 2 : 1;
	for (;;) {
		const char *key;
		size_t klen, kpos;
		struct ht_toml_entry *e;
		bool last;

		skip_ws(p);
		kpos = p->pos;
		/* tables are freed (and walked) recursively: bound the depth */
		if (++parts > MAX_DEPTH) {
			char f[32];

			snprintf(f, sizeof(f), "a %uth part", parts); /* always 65 */
			return fail(p, kpos, f, "a table name of at most %d parts", MAX_DEPTH);
		}
		r = bare_key(p, &key, &klen, "a table name");
		if (r < 0)
			return r;
		skip_ws(p);
		last = peek(p, 0) != '.';
		if (!last)
			p->pos++;
		else if (array ? !(peek(p, 0) == ']' && peek(p, 1) == ']') : peek(p, 0) != ']')
			return fail(p, p->pos, NULL, array ? "']]'" : "']'");

		e = find(t, key, klen);
		if (!e) {
			if ((r = check_room(p, t, kpos)) < 0)
				return r;
			e = add(t, key, klen);
			if (!e)
				return oom(p);
			e->v.line = line;
			if (last && array) {
				e->v.type = HT_TOML_TABLE_ARRAY;
				e->v.tables = calloc(1, sizeof(*e->v.tables));
				if (!e->v.tables)
					return oom(p);
				e->v.tables[0] = calloc(1, sizeof(struct ht_toml_table));
				if (!e->v.tables[0])
					return oom(p);
				e->v.n_tables = 1;
				t = e->v.tables[0];
				t->header_defined = true;
				t->line = line;
				break;
			}
			e->v.type = HT_TOML_TABLE;
			e->v.table = calloc(1, sizeof(struct ht_toml_table));
			if (!e->v.table)
				return oom(p);
			t = e->v.table;
			t->line = line;
			if (last) {
				t->header_defined = true;
				break;
			}
			continue;
		}
		if (last && array) {
			struct ht_toml_table **nt, *n;

			if (e->v.type != HT_TOML_TABLE_ARRAY || e->v.is_inline) {
				char f[192];

				snprintf(f, sizeof(f), "'%.*s' already defined at line %u as %s",
					 (int)klen, key, e->v.line, kind(&e->v));
				return fail(p, kpos, f, "a name not yet used for anything but [[...]]");
			}
			n = calloc(1, sizeof(*n));
			if (!n)
				return oom(p);
			nt = realloc(e->v.tables, (e->v.n_tables + 1) * sizeof(*nt));
			if (!nt) {
				free(n);
				return oom(p);
			}
			e->v.tables = nt;
			e->v.tables[e->v.n_tables++] = n;
			n->header_defined = true;
			n->line = line;
			t = n;
			break;
		}
		if (e->v.type == HT_TOML_TABLE_ARRAY && !e->v.is_inline && !last) {
			t = e->v.tables[e->v.n_tables - 1];
			continue;
		}
		if (e->v.type != HT_TOML_TABLE || e->v.is_inline) {
			char f[192];

			snprintf(f, sizeof(f), "'%.*s' already defined at line %u as %s", (int)klen,
				 key, e->v.line, kind(&e->v));
			return fail(p, kpos, f, "a table name not yet used for a value");
		}
		t = e->v.table;
		if (last) {
			if (t->header_defined) {
				char f[128];

				snprintf(f, sizeof(f), "[%.*s] already defined at line %u",
					 (int)(p->pos - hpos - 1), p->buf + hpos + 1, e->v.line);
				return fail(p, hpos, f, "a table not yet defined");
			}
			t->header_defined = true;
			t->line = line;
			e->v.line = line;
			break;
		}
	}
	p->pos += array ? 2 : 1;
	p->cur = t;
	return end_line(p);
}

static int keyval(struct parser *p)
{
	const char *key;
	size_t klen, kpos = p->pos;
	struct ht_toml_entry *e;
	int r;

	r = bare_key(p, &key, &klen, "a key");
	if (r < 0)
		return r;
	skip_ws(p);
	if (peek(p, 0) == '.')
		return fail(p, p->pos, "'.' (dotted keys are not read)", "'='");
	if (peek(p, 0) != '=')
		return fail(p, p->pos, NULL, "'='");
	e = find(p->cur, key, klen);
	if (e) {
		char f[128];

		snprintf(f, sizeof(f), "'%.*s' already defined at line %u", (int)klen, key,
			 e->v.line);
		return fail(p, kpos, f, "a key not yet defined in this table");
	}
	p->pos++;
	skip_ws(p);
	if ((r = check_room(p, p->cur, kpos)) < 0)
		return r;
	e = add(p->cur, key, klen);
	if (!e)
		return oom(p);
	r = value(p, &e->v);
	if (r < 0)
		return r;
	return end_line(p);
}

int ht_toml_parse(const char *file, const char *buf, size_t len, struct ht_toml_table **ret,
		  char **err)
{
	struct parser p = { .file = file ? file : "-", .buf = buf, .len = len, .lc_line = 1 };
	int r = 0;

	if (err)
		*err = NULL;
	p.root = calloc(1, sizeof(*p.root));
	if (!p.root)
		return -ENOMEM;
	p.cur = p.root;
	/* Garage reads the file as a Rust String: UTF-8 throughout, comments too */
	for (size_t i = 0, n; i < len; i += n) {
		n = utf8_len(buf + i, len - i);
		if (!buf[i] || !n) {
			r = fail(&p, i, NULL, "%s", buf[i] ? "UTF-8 text" : "text");
			goto out;
		}
	}
	while (p.pos < len) {
		skip_ws(&p);
		if (peek(&p, 0) == '[')
			r = header(&p);
		else if (peek(&p, 0) == '#' || at_eol(&p))
			r = end_line(&p);
		else
			r = keyval(&p);
		if (r < 0)
			break;
	}
out:
	if (p.nomem) {
		free(p.err);
		ht_toml_free(p.root);
		return -ENOMEM;
	}
	if (r < 0) {
		if (err)
			*err = TAKE_PTR(p.err);
		free(p.err);
		ht_toml_free(p.root);
		return -EINVAL;
	}
	*ret = p.root;
	return 0;
}

const struct ht_toml_value *ht_toml_get(const struct ht_toml_table *t, const char *path)
{
	const struct ht_toml_value *v = NULL;

	if (!t || !path)
		return NULL;
	for (;;) {
		const char *dot = strchr(path, '.');
		size_t klen = dot ? (size_t)(dot - path) : strlen(path);
		const struct ht_toml_entry *e = find(t, path, klen);

		if (!e)
			return NULL;
		v = &e->v;
		if (!dot)
			return v;
		if (v->type != HT_TOML_TABLE)
			return NULL;
		t = v->table;
		path = dot + 1;
	}
}

int ht_toml_get_string(const struct ht_toml_table *t, const char *path, const char **ret)
{
	const struct ht_toml_value *v = ht_toml_get(t, path);

	if (!v)
		return -ENOENT;
	if (v->type != HT_TOML_STRING)
		return -EINVAL;
	*ret = v->str;
	return 0;
}

int ht_toml_get_int(const struct ht_toml_table *t, const char *path, int64_t *ret)
{
	const struct ht_toml_value *v = ht_toml_get(t, path);

	if (!v)
		return -ENOENT;
	if (v->type != HT_TOML_INT)
		return -EINVAL;
	*ret = v->i;
	return 0;
}

int ht_toml_get_bool(const struct ht_toml_table *t, const char *path, bool *ret)
{
	const struct ht_toml_value *v = ht_toml_get(t, path);

	if (!v)
		return -ENOENT;
	if (v->type != HT_TOML_BOOL)
		return -EINVAL;
	*ret = v->b;
	return 0;
}

int ht_size_parse(const char *s, uint64_t *ret)
{
	static const struct {
		const char *name;
		uint64_t mult;
	} units[] = {
		{ "b", 1 },
		{ "k", 1000ULL },
		{ "kb", 1000ULL },
		{ "m", 1000000ULL },
		{ "mb", 1000000ULL },
		{ "g", 1000000000ULL },
		{ "gb", 1000000000ULL },
		{ "t", 1000000000000ULL },
		{ "tb", 1000000000000ULL },
		{ "p", 1000000000000000ULL },
		{ "pb", 1000000000000000ULL },
		{ "ki", 1ULL << 10 },
		{ "kib", 1ULL << 10 },
		{ "mi", 1ULL << 20 },
		{ "mib", 1ULL << 20 },
		{ "gi", 1ULL << 30 },
		{ "gib", 1ULL << 30 },
		{ "ti", 1ULL << 40 },
		{ "tib", 1ULL << 40 },
		{ "pi", 1ULL << 50 },
		{ "pib", 1ULL << 50 },
	};
	uint64_t whole = 0, frac = 0, fdiv = 1, mult = 0, v;
	const char *u;
	size_t ulen;
	bool digits = false, point = false;

	if (!s || !ret)
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		if (whole > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		whole = whole * 10 + (uint64_t)(*s - '0');
		digits = true;
	}
	if (*s == '.') {
		point = true;
		for (s++; isdigit((unsigned char)*s); s++) {
			digits = true;
			if (fdiv < 1000000000000000000ULL) { /* 18 digits are plenty */
				frac = frac * 10 + (uint64_t)(*s - '0');
				fdiv *= 10;
			}
		}
	}
	if (!digits)
		return -EINVAL;
	if (!*s && !point) {
		*ret = whole;
		return 0;
	}
	/* a fraction, or anything after the digits: a unit is required */
	while (*s == ' ' || *s == '\t')
		s++;
	u = s;
	ulen = strlen(u);
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (strlen(units[i].name) == ulen && !strncasecmp(u, units[i].name, ulen)) {
			mult = units[i].mult;
			break;
		}
	if (!mult)
		return -EINVAL;
	if (whole > UINT64_MAX / mult)
		return -ERANGE;
	v = whole * mult;
	/* frac/fdiv of mult, truncated; mult and fdiv share factors of 2 and 5 */
	if (frac) {
		unsigned __int128 f = (unsigned __int128)frac * mult / fdiv;

		if (v > UINT64_MAX - (uint64_t)f)
			return -ERANGE;
		v += (uint64_t)f;
	}
	*ret = v;
	return 0;
}
