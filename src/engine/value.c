/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/util.h"
#include "engine/value.h"

void ht_value_clear(struct ht_value *v)
{
	if (!v)
		return;
	if (v->type == HT_T_STR)
		free(v->s);
	*v = (struct ht_value){ .type = HT_T_NONE };
}

int ht_value_copy(struct ht_value *dst, const struct ht_value *src)
{
	struct ht_value tmp = *src;

	if (src->type == HT_T_STR) {
		tmp.s = strdup(src->s);
		if (!tmp.s) {
			*dst = (struct ht_value){ .type = HT_T_NONE };
			return -ENOMEM;
		}
	}
	*dst = tmp;
	return 0;
}

const char *ht_type_name(enum ht_type t)
{
	switch (t) {
	case HT_T_INT:
	case HT_T_DEC:
		return "number";
	case HT_T_BOOL:
		return "bool";
	case HT_T_STR:
		return "string";
	case HT_T_VER:
		return "version";
	case HT_T_NONE:
		break;
	}
	return "none";
}

double ht_value_as_double(const struct ht_value *v)
{
	if (v->type == HT_T_INT)
		return (double)v->i;
	if (v->type == HT_T_DEC)
		return v->d;
	return NAN;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Characters that would glue onto a bare token and make it a different word. */
static bool is_word_char(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       c == '.';
}

int ht_version_parse(const char *s, struct ht_version *out, const char **end)
{
	struct ht_version v = { .n = 0 };

	if (!is_digit(*s))
		return -EINVAL;
	for (;;) {
		uint64_t part = 0;

		if (v.n == ARRAY_SIZE(v.part))
			return -EINVAL;
		for (; is_digit(*s); s++) {
			part = part * 10 + (uint64_t)(*s - '0');
			if (part > UINT32_MAX)
				return -ERANGE;
		}
		v.part[v.n++] = (uint32_t)part;
		if (s[0] != '.' || !is_digit(s[1]))
			break;
		s++;
	}
	*out = v;
	if (end)
		*end = s;
	return 0;
}

int ht_version_cmp(const struct ht_version *a, const struct ht_version *b)
{
	for (size_t k = 0; k < ARRAY_SIZE(a->part); k++) {
		uint32_t x = k < a->n ? a->part[k] : 0;
		uint32_t y = k < b->n ? b->part[k] : 0;

		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/* Length of the valid UTF-8 sequence at @s, or 0 when the byte there does not start one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t k = 1; k < n; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates and code points past U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * Bytes that are not valid UTF-8 are escaped as \xHH too, so that a string
 * read from a file of unknown encoding still formats as valid UTF-8 text and
 * parses back to the same bytes.
 */
static char *format_string(const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	char *buf, *o;

	buf = malloc(strlen(s) * 4 + 3);
	if (!buf)
		return NULL;
	o = buf;
	*o++ = '"';
	while (*p) {
		size_t n;

		switch (*p) {
		case '"':
		case '\\':
			*o++ = '\\';
			*o++ = (char)*p++;
			continue;
		case '\n':
			*o++ = '\\';
			*o++ = 'n';
			p++;
			continue;
		case '\t':
			*o++ = '\\';
			*o++ = 't';
			p++;
			continue;
		}
		n = utf8_len(p);
		if (n == 0 || *p < 0x20 || *p == 0x7f) {
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 0xf];
			p++;
			continue;
		}
		memcpy(o, p, n);
		o += n;
		p += n;
	}
	*o++ = '"';
	*o = '\0';
	return buf;
}

static char *format_decimal(double d)
{
	char buf[64];

	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	/* Without a '.' or an exponent the text would read back as an integer. */
	if (isfinite(d) && !strpbrk(buf, ".e"))
		strcat(buf, ".0");
	return strdup(buf);
}

static char *format_version(const struct ht_version *v, bool prefix)
{
	char buf[64];
	size_t len = 0;

	if (prefix)
		buf[len++] = 'v';
	for (size_t k = 0; k < v->n && k < ARRAY_SIZE(v->part); k++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%" PRIu32, k ? "." : "",
		                        v->part[k]);
	buf[len] = '\0';
	return strdup(buf);
}

char *ht_value_format(const struct ht_value *v)
{
	char *r;

	switch (v->type) {
	case HT_T_INT:
		if (asprintf(&r, "%" PRId64, v->i) < 0)
			return NULL;
		return r;
	case HT_T_DEC:
		return format_decimal(v->d);
	case HT_T_BOOL:
		return strdup(v->b ? "true" : "false");
	case HT_T_STR:
		return format_string(v->s);
	case HT_T_VER:
		return format_version(&v->v, true);
	case HT_T_NONE:
		break;
	}
	return strdup("unavailable");
}

static int hex_value(char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int parse_string(const char *s, struct ht_value *out, const char **end)
{
	_cleanup_free_ char *buf = NULL;
	const char *p = s + 1;
	size_t len = 0;

	/* The decoded text is never longer than the quoted one. */
	buf = malloc(strlen(s));
	if (!buf)
		return -ENOMEM;
	for (;;) {
		unsigned char c = (unsigned char)*p++;

		if (c == '"')
			break;
		if (c < 0x20)
			return -EINVAL;
		if (c != '\\') {
			buf[len++] = (char)c;
			continue;
		}
		c = (unsigned char)*p++;
		switch (c) {
		case '"':
		case '\\':
			buf[len++] = (char)c;
			break;
		case 'n':
			buf[len++] = '\n';
			break;
		case 't':
			buf[len++] = '\t';
			break;
		case 'x': {
			int hi = hex_value(p[0]), lo = hi < 0 ? -1 : hex_value(p[1]);

			if (lo < 0 || (hi | lo) == 0)
				return -EINVAL;
			buf[len++] = (char)(hi << 4 | lo);
			p += 2;
			break;
		}
		default:
			return -EINVAL;
		}
	}
	buf[len] = '\0';
	out->type = HT_T_STR;
	out->s = TAKE_PTR(buf);
	*end = p;
	return 0;
}

static int parse_number(const char *s, struct ht_value *out, const char **end)
{
	const char *p = s;
	bool dec = false;

	if (*p == '-')
		p++;
	if (!is_digit(*p))
		return -EINVAL;
	while (is_digit(*p))
		p++;
	if (p[0] == '.' && is_digit(p[1])) {
		dec = true;
		for (p++; is_digit(*p); p++)
			;
	}
	if ((p[0] == 'e' || p[0] == 'E') &&
	    (is_digit(p[1]) || ((p[1] == '+' || p[1] == '-') && is_digit(p[2])))) {
		dec = true;
		for (p += 2; is_digit(*p); p++)
			;
	}
	if (is_word_char(*p))
		return -EINVAL;

	if (dec) {
		char *e;
		double d;

		errno = 0;
		d = strtod(s, &e);
		if (e != p)
			return -EINVAL;
		/*
		 * ERANGE with 0 is an underflow (1e-999): the text would not read
		 * back as what it says. A subnormal result keeps its value.
		 */
		if (!isfinite(d) || (errno == ERANGE && d == 0))
			return -ERANGE;
		*out = ht_dec(d);
	} else {
		bool neg = *s == '-';
		uint64_t mag = 0;

		for (const char *q = s + neg; q < p; q++) {
			if (mag > (UINT64_MAX - 9) / 10)
				return -ERANGE;
			mag = mag * 10 + (uint64_t)(*q - '0');
		}
		if (mag > (uint64_t)INT64_MAX + neg)
			return -ERANGE;
		*out = ht_int(neg ? (int64_t)(0 - mag) : (int64_t)mag);
	}
	*end = p;
	return 0;
}

int ht_value_parse(const char *s, struct ht_value *out, const char **end)
{
	static const struct {
		const char *word;
		struct ht_value value;
	} words[] = {
		{ "true", { .type = HT_T_BOOL, .b = true } },
		{ "false", { .type = HT_T_BOOL, .b = false } },
		{ "unavailable", { .type = HT_T_NONE } },
	};
	const char *e = NULL;
	int r;

	while (*s == ' ' || *s == '\t')
		s++;
	*out = (struct ht_value){ .type = HT_T_NONE };

	if (*s == '"') {
		r = parse_string(s, out, &e);
	} else if (*s == '-' || is_digit(*s)) {
		r = parse_number(s, out, &e);
	} else if (s[0] == 'v' && is_digit(s[1])) {
		struct ht_version v;

		r = ht_version_parse(s + 1, &v, &e);
		if (r == 0 && is_word_char(*e))
			r = -EINVAL;
		if (r == 0)
			*out = (struct ht_value){ .type = HT_T_VER, .v = v };
	} else {
		r = -EINVAL;
		for (size_t k = 0; k < ARRAY_SIZE(words); k++) {
			size_t n = strlen(words[k].word);

			if (strncmp(s, words[k].word, n) == 0 && !is_word_char(s[n])) {
				*out = words[k].value;
				e = s + n;
				r = 0;
				break;
			}
		}
	}
	if (r < 0)
		return r;
	if (end)
		*end = e;
	return 0;
}

/* Rounds to 2 places for a report; far past 2^53 the fixed form is all noise digits. */
static char *display_decimal(double d)
{
	char buf[64];
	size_t len;

	if (!isfinite(d) || fabs(d) >= 1e15)
		return format_decimal(d);
	snprintf(buf, sizeof(buf), "%.2f", d);
	len = strlen(buf);
	while (buf[len - 1] == '0')
		len--;
	if (buf[len - 1] == '.')
		len--;
	buf[len] = '\0';
	if (strcmp(buf, "-0") == 0)
		return strdup("0");
	return strdup(buf);
}

char *ht_value_display(const struct ht_value *v)
{
	switch (v->type) {
	case HT_T_DEC:
		return display_decimal(v->d);
	case HT_T_STR:
		return strdup(v->s);
	case HT_T_VER:
		return format_version(&v->v, false);
	case HT_T_INT:
	case HT_T_BOOL:
	case HT_T_NONE:
		break;
	}
	return ht_value_format(v);
}
