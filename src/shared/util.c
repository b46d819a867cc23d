/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "shared/util.h"

int ht_error_set(struct ht_error *err, int errnum, const char *fmt, ...)
{
	if (err) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return -errnum;
}

bool ht_int_text_equal(const char *a, const char *b)
{
	char *ea, *eb;
	long long x, y;

	if (strcmp(a, b) == 0)
		return true;
	errno = 0;
	x = strtoll(a, &ea, 0);
	y = strtoll(b, &eb, 0);
	return !errno && ea != a && eb != b && !*ea && !*eb && x == y;
}

bool ht_root_is_live(const char *root)
{
	if (!root)
		return true;
	while (*root == '/')
		root++;
	return *root == '\0';
}

char *ht_root_path(const char *root, const char *path)
{
	char *p;
	size_t rl;

	if (!root || !*root || (root[0] == '/' && root[1] == '\0'))
		return strdup(path);
	rl = strlen(root);
	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (asprintf(&p, "%.*s%s%s", (int)rl, root, path[0] == '/' ? "" : "/", path) < 0)
		return NULL;
	return p;
}

char *ht_strdup_printf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	return r < 0 ? NULL : s;
}

ssize_t ht_getline_max(char **line, size_t *cap, FILE *in, size_t max)
{
	size_t n = 0;
	int c;

	if (max == 0 || max > (size_t)SSIZE_MAX - 1)
		return -EINVAL;
	while ((c = getc_unlocked(in)) != EOF) {
		if (n == max)
			return -E2BIG;
		/* Room for this byte and the NUL: doubled, at most max + 1 bytes. */
		if (n + 2 > *cap) {
			size_t ncap = *cap < 128 ? 128 : *cap * 2;
			char *p;

			if (ncap > max + 1)
				ncap = max + 1;
			if (ncap < n + 2)
				ncap = n + 2;
			p = realloc(*line, ncap);
			if (!p)
				return -ENOMEM;
			*line = p;
			*cap = ncap;
		}
		(*line)[n++] = (char)c;
		if (c == '\n')
			break;
	}
	if (ferror(in))
		return -EIO;
	if (n == 0)
		return -1;
	(*line)[n] = '\0';
	return (ssize_t)n;
}

int ht_read_fd(int fd, size_t max, char **out, size_t *len)
{
	_cleanup_free_ char *buf = NULL;
	size_t n = 0, cap = 0;

	for (;;) {
		ssize_t r;

		/*
		 * At most @max + 2 bytes: one past @max tells a larger file,
		 * one for the NUL. A file of exactly @max bytes is read.
		 */
		if (cap - n < 4096 && cap < max + 2) {
			size_t nc = cap ? cap * 2 : 8192;
			char *nb;

			if (nc > max + 2)
				nc = max + 2;
			nb = realloc(buf, nc);
			if (!nb)
				return -ENOMEM;
			buf = nb;
			cap = nc;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max)
			return -EFBIG;
	}
	if (!buf && !(buf = malloc(1)))
		return -ENOMEM;
	buf[n] = '\0';
	*out = TAKE_PTR(buf);
	*len = n;
	return 0;
}

bool ht_fd_private(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && !(st.st_mode & S_IROTH);
}

int ht_parse_int64(const char *s, long long *out)
{
	char *end;
	long long v;

	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	if (!*s)
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (end == s)
		return -EINVAL;
	while (*end == ' ' || *end == '\t' || *end == '\n')
		end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

const char *ht_errno_name(int errnum)
{
	return errnum > 0 ? strerrorname_np(errnum) : NULL;
}

int ht_errno_from_name(const char *name)
{
	/* 4095 is the kernel's MAX_ERRNO (include/linux/err.h). */
	for (int e = 1; e < 4096; e++) {
		const char *n = strerrorname_np(e);

		if (n && strcmp(n, name) == 0)
			return e;
	}
	return -EINVAL;
}

int ht_utf8_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	int more;

	/* The well-formed byte sequences of RFC 3629, section 4 (Unicode Table 3-7). */
	if (c < 0x80)
		return c ? 1 : 0;
	if (c >= 0xc2 && c <= 0xdf) {
		more = 1;
	} else if (c >= 0xe0 && c <= 0xef) {
		more = 2;
		if (c == 0xe0)
			lo = 0xa0; /* overlong below U+0800 */
		else if (c == 0xed)
			hi = 0x9f; /* UTF-16 surrogates U+D800..U+DFFF */
	} else if (c >= 0xf0 && c <= 0xf4) {
		more = 3;
		if (c == 0xf0)
			lo = 0x90; /* overlong below U+10000 */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		return 0; /* a continuation byte, C0/C1 (overlong ASCII) or F5..FF */
	}
	for (int i = 1; i <= more; i++) {
		if (p[i] < lo || p[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return more + 1;
}

bool ht_has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; p && n && (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

const char *ht_utf8_invalid(const char *s)
{
	while (*s) {
		int n = ht_utf8_len(s);

		if (n == 0)
			return s;
		s += n;
	}
	return NULL;
}

char *ht_shell_word(const char *s)
{
	size_t n = 3;
	char *out, *o;

	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	                    ":_.@/-") == strlen(s))
		return strdup(s);
	for (const char *c = s; *c; c++)
		n += *c == '\'' ? 4 : 1;
	out = o = malloc(n);
	if (!out)
		return NULL;
	*o++ = '\'';
	for (const char *c = s; *c; c++) {
		if (*c == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else
			*o++ = *c;
	}
	*o++ = '\'';
	*o = '\0';
	return out;
}

bool ht_ifname_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n >= IFNAMSIZ || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	for (const char *c = name; *c; c++)
		if (*c == '/' || *c == ':' || isspace((unsigned char)*c))
			return false;
	return true;
}
