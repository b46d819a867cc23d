/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Text from a tree (file names, rule titles, values read from files) made
 * safe to show: on a terminal no byte of it may start an escape sequence,
 * and in JSON it must be UTF-8. What is escaped is written as C escapes:
 * \t, \n and \r by name, any other byte as \xHH (two lowercase hex digits),
 * each byte of a sequence on its own ("\xc2\x9b" for U+009B). A backslash
 * already in the text stays as it is.
 */

/* What ht_escape_to() and its kin escape besides bytes that are not UTF-8. */
enum {
	/*
	 * The control characters too: C0 (U+0000..U+001F), DEL (U+007F) and
	 * C1 (U+0080..U+009F, of which U+009B starts an escape sequence on
	 * some terminals), and the bidirectional formatting controls (U+061C,
	 * U+200E, U+200F, U+202A..U+202E, U+2066..U+2069), which reorder what
	 * is shown around them.
	 */
	HT_ESCAPE_CONTROL = 1u << 0,
	/* With HT_ESCAPE_CONTROL: tabs and newlines stay (a report's own layout). */
	HT_ESCAPE_KEEP_LAYOUT = 1u << 1,
};

/*
 * ht_escape_to - @len bytes of @s escaped per @flags into @buf (@size bytes,
 * always NUL-terminated when @size > 0; cut at @size - 1 bytes, never inside
 * an escape), as snprintf(3) does. Allocates nothing (safe when memory has run
 * out). Returns the length the whole escaped text has, without its NUL.
 */
size_t ht_escape_to(char *buf, size_t size, const char *s, size_t len, unsigned flags);

/* Whether ht_escape_to() would change the NUL-terminated @s. */
bool ht_escape_needed(const char *s, unsigned flags);

/* @s escaped per @flags (ht_escape_to()) in a new string the caller frees; NULL on ENOMEM. */
char *ht_escape(const char *s, unsigned flags);

/*
 * ht_escape_fdopen - a stream for writing to @fd (left open, not owned) that
 * escapes per @flags what is written to it. A multibyte UTF-8 character cut
 * between two of its writes is held back until the rest arrives (or
 * ht_escape_flush(), fclose(3)). A write error of @fd is the stream's, with
 * write(2)'s errno (fflush(3) returns EOF). Close it with fclose(3). Returns
 * the stream, or NULL with errno set (ENOMEM).
 */
FILE *ht_escape_fdopen(int fd, unsigned flags);

/*
 * ht_escape_flush - fflush(3) of @f; for a stream of ht_escape_fdopen() also
 * what it holds back (an incomplete UTF-8 character, escaped now). Returns 0,
 * or EOF with errno set.
 */
int ht_escape_flush(FILE *f);

/*
 * ht_escape_raw - writes @s to @f unescaped: what the program itself sends a
 * terminal (the SGR colour codes of a report) through a stream of
 * ht_escape_fdopen(); to any other stream fputs(3). Returns 0, or EOF with
 * errno set.
 */
int ht_escape_raw(FILE *f, const char *s);

/*
 * ht_escape_line_prefix - from now on, @prefix (at most 15 bytes, "" for
 * none) starts each line written to @f, a stream of ht_escape_fdopen(),
 * before what the line holds (escaped or raw): "<4>" for sd-daemon(3)'s
 * priority prefixes. What @f buffers is flushed first, with the prefix it
 * had. For any other stream nothing. Returns 0, or EOF with errno set
 * (EINVAL: @prefix too long; a write error).
 */
int ht_escape_line_prefix(FILE *f, const char *prefix);

/*
 * ht_name_escape - an instance as the kernel names it (a cgroup path with
 * "/" and "@", an interface with any byte but "/" and space) made a part of
 * a fact name, which holds only [A-Za-z0-9_.-]: letters, digits, "." and
 * "-" stay, "_" is written "__" and any other byte "_HH" (two lowercase hex
 * digits): "system.slice/docker-1a.scope" -> "system.slice_2fdocker-1a.scope".
 * ht_name_unescape() reads it back unchanged. Returns a new string the
 * caller frees, or NULL (errno ENOMEM, or EINVAL for an empty @s).
 */
char *ht_name_escape(const char *s);

/*
 * ht_name_unescape - the instance ht_name_escape() made @s of, in a new
 * string the caller frees. NULL with errno EINVAL when @s is empty, holds a
 * byte outside [A-Za-z0-9_.-], a "_" not followed by "_" or two lowercase
 * hex digits, or an escape ht_name_escape() would not write (a NUL byte, a
 * byte kept as it is, "_"): one instance has one name; ENOMEM.
 */
char *ht_name_unescape(const char *s);

/* The most bytes ht_name_escape() writes for @n bytes: each at most three ("_HH"). */
#define HT_NAME_ESCAPED_MAX(n) (3 * (n))

/*
 * ht_instance_fact_to - the fact "FAMILY.INSTANCE.SUFFIX" of one instance
 * into @buf (@size bytes, always NUL-terminated when @size > 0, as
 * snprintf(3)), @instance (not empty: an interface, a cgroup path, as the
 * kernel names it) escaped as ht_name_escape() does: ("nic", "a+b",
 * "speed") -> "nic.a_2bb.speed". Every byte string has an escape, so no
 * instance is refused. Allocates nothing. Returns the length the whole name
 * has, without its NUL: @size or more when it was cut.
 */
size_t ht_instance_fact_to(char *buf, size_t size, const char *family, const char *instance,
                           const char *suffix);

/* ht_instance_fact_to() in a new string the caller frees; NULL on ENOMEM. */
char *ht_instance_fact(const char *family, const char *instance, const char *suffix);
