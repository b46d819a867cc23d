/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Text from a tree made safe for a terminal and for JSON (escape.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "shared/escape.h"

/* The longest text one character escapes to: a bidi control, "\xe2\x80\xae". */
#define UNIT_MAX 12

/*
 * The length of the UTF-8 sequence at @p, of which @avail bytes are there:
 * 1 to 4 for a well-formed one (RFC 3629, as ht_utf8_len(): no overlong form,
 * no surrogate, nothing above U+10FFFF), 0 when none starts there, -1 when
 * the @avail bytes are the start of one that is cut short.
 */
static int seq_len(const unsigned char *p, size_t avail)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	int more;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		more = 1;
	} else if (c >= 0xe0 && c <= 0xef) {
		more = 2;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		more = 3;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	for (int i = 1; i <= more; i++) {
		if ((size_t)i >= avail)
			return -1;
		if (p[i] < lo || p[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return more + 1;
}

/* The escape of byte @c into @out: \t, \n, \r or \xHH. Its length. */
static size_t byte_escape(unsigned char c, char *out)
{
	static const char hex[] = "0123456789abcdef";

	out[0] = '\\';
	switch (c) {
	case '\t':
		out[1] = 't';
		return 2;
	case '\n':
		out[1] = 'n';
		return 2;
	case '\r':
		out[1] = 'r';
		return 2;
	}
	out[1] = 'x';
	out[2] = hex[c >> 4];
	out[3] = hex[c & 0xf];
	return 4;
}

/*
 * Whether the @n-byte UTF-8 character at @p is a bidirectional formatting
 * control (Unicode UAX #9): U+061C ALM, U+200E LRM, U+200F RLM, U+202A-U+202E
 * (embeddings, overrides: U+202E turns "exe.txt" round) and U+2066-U+2069
 * (isolates). Shown, they reorder the text around them.
 */
static bool is_bidi(const unsigned char *p, int n)
{
	if (n == 2)
		return p[0] == 0xd8 && p[1] == 0x9c;
	if (n != 3 || p[0] != 0xe2)
		return false;
	return (p[1] == 0x80 && (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae))) ||
	       (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9);
}

/*
 * The character at @p (@avail bytes there) as it is shown, into @out
 * (UNIT_MAX bytes): copied, or escaped per @flags. *used is how many bytes
 * of @p it took; 0 (and nothing shown) when @more and the bytes are the
 * start of a character cut short: the rest may still come. Returns the
 * length of @out; an escape is always longer than the bytes it stands for.
 */
static size_t unit(const unsigned char *p, size_t avail, unsigned flags, bool more, char *out,
                   size_t *used)
{
	int n = seq_len(p, avail);
	size_t k;

	if (n < 0 && more) {
		*used = 0;
		return 0;
	}
	if (n <= 0) {
		*used = 1;
		return byte_escape(p[0], out);
	}
	*used = (size_t)n;
	if (flags & HT_ESCAPE_CONTROL) {
		bool layout = (flags & HT_ESCAPE_KEEP_LAYOUT) && (p[0] == '\t' || p[0] == '\n');

		if ((p[0] < 0x20 || p[0] == 0x7f) && !layout)
			return byte_escape(p[0], out);
		if ((n == 2 && p[0] == 0xc2 && p[1] < 0xa0) || is_bidi(p, n)) {
			k = 0;
			for (int i = 0; i < n; i++)
				k += byte_escape(p[i], out + k);
			return k;
		}
	}
	memcpy(out, p, (size_t)n);
	return (size_t)n;
}

size_t ht_escape_to(char *buf, size_t size, const char *s, size_t len, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t total = 0, at = 0;
	bool full = size == 0;

	for (size_t i = 0; i < len;) {
		char out[UNIT_MAX];
		size_t used, n = unit(p + i, len - i, flags, false, out, &used);

		if (!full && at + n < size) {
			memcpy(buf + at, out, n);
			at += n;
		} else {
			full = true;
		}
		total += n;
		i += used;
	}
	if (size > 0)
		buf[at] = '\0';
	return total;
}

bool ht_escape_needed(const char *s, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s);

	for (size_t i = 0; i < len;) {
		char out[UNIT_MAX];
		size_t used, n = unit(p + i, len - i, flags, false, out, &used);

		if (n != used)
			return true;
		i += used;
	}
	return false;
}

char *ht_escape(const char *s, unsigned flags)
{
	size_t len = strlen(s), n = ht_escape_to(NULL, 0, s, len, flags);
	char *buf = malloc(n + 1);

	if (!buf)
		return NULL;
	ht_escape_to(buf, n + 1, s, len, flags);
	return buf;
}

/* ---- the stream ---- */

/* A stream of ht_escape_fdopen(); all of them in a list, for ht_escape_raw(). */
struct esc_stream {
	FILE *f;
	int fd;
	unsigned flags;
	bool raw;                 /* ht_escape_raw(): pass the bytes as they are */
	char prefix[16];          /* ht_escape_line_prefix(): before each line, "" for none */
	bool midline;             /* a line is started: the next byte does not get the prefix */
	unsigned char held[4];    /* the start of a character cut short */
	size_t nheld;
	struct esc_stream *next;
};

static struct esc_stream *streams;

static struct esc_stream *stream_of(FILE *f)
{
	for (struct esc_stream *e = streams; e; e = e->next)
		if (e->f == f)
			return e;
	return NULL;
}

/* write(2) of all @n bytes, EINTR retried. 0, or -1 with errno set. */
static int write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		if (w == 0) {
			errno = EIO;
			return -1;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The held bytes, shown as they are decided (@more: the rest may still come), into @out. */
static size_t drain_held(struct esc_stream *e, bool more, char *out)
{
	size_t at = 0;

	while (e->nheld > 0) {
		size_t used, n = unit(e->held, e->nheld, e->flags, more, out + at, &used);

		if (used == 0)
			break;
		at += n;
		memmove(e->held, e->held + used, e->nheld - used);
		e->nheld -= used;
	}
	return at;
}

/* The line prefix into @out at @at when @c starts a line; the new @at. */
static size_t put_prefix(struct esc_stream *e, unsigned char c, char *out, size_t at)
{
	if (!e->midline && e->prefix[0]) {
		size_t n = strlen(e->prefix);

		memcpy(out + at, e->prefix, n);
		at += n;
	}
	e->midline = c != '\n';
	return at;
}

static ssize_t esc_write(void *cookie, const char *buf, size_t size)
{
	struct esc_stream *e = cookie;
	const unsigned char *p = (const unsigned char *)buf;
	char out[1024];
	size_t at = 0;

	if (e->raw && !e->prefix[0])
		return write_all(e->fd, buf, size) < 0 ? -1 : (ssize_t)size;
	for (size_t i = 0; i < size; i++) {
		if (at > sizeof(out) - 4 * UNIT_MAX - sizeof(e->prefix)) {
			if (write_all(e->fd, out, at) < 0)
				return -1;
			at = 0;
		}
		at = put_prefix(e, p[i], out, at);
		/* Plain ASCII between characters, or raw: as it is. */
		if (e->raw || (e->nheld == 0 && p[i] >= 0x20 && p[i] < 0x7f)) {
			out[at++] = (char)p[i];
			continue;
		}
		e->held[e->nheld++] = p[i];
		at += drain_held(e, true, out + at);
	}
	if (at > 0 && write_all(e->fd, out, at) < 0)
		return -1;
	return (ssize_t)size;
}

/* What @e holds back, escaped and written now. 0 or -1 with errno set. */
static int esc_drain(struct esc_stream *e)
{
	char out[4 * UNIT_MAX];
	size_t n = drain_held(e, false, out);

	return n > 0 ? write_all(e->fd, out, n) : 0;
}

static int esc_close(void *cookie)
{
	struct esc_stream *e = cookie;
	int r = esc_drain(e);

	for (struct esc_stream **pp = &streams; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			break;
		}
	free(e);
	return r;
}

FILE *ht_escape_fdopen(int fd, unsigned flags)
{
	static const cookie_io_functions_t io = { .write = esc_write, .close = esc_close };
	struct esc_stream *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->fd = fd;
	e->flags = flags;
	e->f = fopencookie(e, "w", io);
	if (!e->f) {
		free(e);
		return NULL;
	}
	/* As stdio does for a terminal: a line at a time, in step with stderr. */
	if (isatty(fd))
		setvbuf(e->f, NULL, _IOLBF, BUFSIZ);
	e->next = streams;
	streams = e;
	return e->f;
}

int ht_escape_flush(FILE *f)
{
	struct esc_stream *e = stream_of(f);

	if (fflush(f) != 0)
		return EOF;
	return e && esc_drain(e) < 0 ? EOF : 0;
}

int ht_escape_raw(FILE *f, const char *s)
{
	struct esc_stream *e = stream_of(f);
	int r;

	if (!e)
		return fputs(s, f) < 0 ? EOF : 0;
	if (ht_escape_flush(f) != 0)
		return EOF;
	e->raw = true;
	r = fputs(s, f) < 0 || fflush(f) != 0 ? EOF : 0;
	e->raw = false;
	return r;
}

int ht_escape_line_prefix(FILE *f, const char *prefix)
{
	struct esc_stream *e = stream_of(f);

	if (!e)
		return 0;
	if (strlen(prefix) >= sizeof(e->prefix)) {
		errno = EINVAL;
		return EOF;
	}
	if (fflush(f) != 0)
		return EOF;
	strcpy(e->prefix, prefix);
	return 0;
}

static bool name_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '-';
}

char *ht_name_escape(const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;
	char *out, *o;

	if (!*s) {
		errno = EINVAL;
		return NULL;
	}
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += name_byte(*p) ? 1 : *p == '_' ? 2 : 3;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	o = out;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (name_byte(*p)) {
			*o++ = (char)*p;
		} else if (*p == '_') {
			*o++ = '_';
			*o++ = '_';
		} else {
			*o++ = '_';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	*o = '\0';
	return out;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

char *ht_name_unescape(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	for (const char *p = s; *p; p++) {
		int hi, lo;

		if (name_byte((unsigned char)*p)) {
			*o++ = *p;
			continue;
		}
		if (*p != '_')
			goto bad;
		if (p[1] == '_') {
			*o++ = '_';
			p++;
			continue;
		}
		hi = hex_digit(p[1]);
		lo = hi < 0 ? -1 : hex_digit(p[2]);
		/* Only the one spelling ht_name_escape() writes: no NUL, no kept byte, no "_". */
		if (lo < 0 || (hi == 0 && lo == 0) || name_byte((unsigned char)(hi << 4 | lo)) ||
		    (hi << 4 | lo) == '_')
			goto bad;
		*o++ = (char)(hi << 4 | lo);
		p += 2;
	}
	*o = '\0';
	if (o == out)
		goto bad;
	return out;
bad:
	free(out);
	errno = EINVAL;
	return NULL;
}

/*
 * Appends the @len bytes of @s to @buf (@size bytes) at *@n, whole or not at
 * all, with a NUL after them; *@n counts them either way, as snprintf(3).
 */
static void put_bytes(char *buf, size_t size, size_t *n, const char *s, size_t len)
{
	if (*n + len < size) {
		memcpy(buf + *n, s, len);
		buf[*n + len] = '\0';
	}
	*n += len;
}

size_t ht_instance_fact_to(char *buf, size_t size, const char *family, const char *instance,
                           const char *suffix)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	if (size > 0)
		buf[0] = '\0';
	put_bytes(buf, size, &n, family, strlen(family));
	put_bytes(buf, size, &n, ".", 1);
	for (const unsigned char *p = (const unsigned char *)instance; *p; p++) {
		char e[3] = { '_', '_', 0 };

		if (name_byte(*p)) {
			e[0] = (char)*p;
			put_bytes(buf, size, &n, e, 1);
		} else if (*p == '_') {
			put_bytes(buf, size, &n, e, 2);
		} else {
			e[1] = hex[*p >> 4];
			e[2] = hex[*p & 15];
			put_bytes(buf, size, &n, e, 3);
		}
	}
	put_bytes(buf, size, &n, ".", 1);
	put_bytes(buf, size, &n, suffix, strlen(suffix));
	return n;
}

char *ht_instance_fact(const char *family, const char *instance, const char *suffix)
{
	size_t n = ht_instance_fact_to(NULL, 0, family, instance, suffix);
	char *s = malloc(n + 1);

	if (s)
		ht_instance_fact_to(s, n + 1, family, instance, suffix);
	return s;
}
