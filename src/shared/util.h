/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* shared/: helpers for every stage. Rule: includes nothing of the project but shared/. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * Small helpers shared by every module: cleanup attributes in the style of
 * systemd's alloc-util.h and kmod's shared/macro.h, the error record that
 * the library half fills instead of printing, and the one root-prefix helper
 * that every /proc, /sys and /etc path goes through.
 */

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_(x) __attribute__((cleanup(x)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))

/* Hand a pointer out of a cleanup-managed variable: returns it, leaves NULL. */
#define TAKE_PTR(p)                                                                      \
	({                                                                               \
		__typeof__(p) _tp = (p);                                                 \
		(p) = NULL;                                                              \
		_tp;                                                                     \
	})

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * struct ht_error - a one-line, human-readable error message.
 *
 * Filled by library functions that fail with a negative errno and have more
 * to say than strerror(). Messages about input files have the form
 * "FILE:LINE:COL: message" (LINE and COL count from 1). An empty msg means
 * the caller should fall back to strerror(-ret).
 */
struct ht_error {
	char msg[1024];
};

/* Formats into err (if not NULL) and returns -errnum (errnum > 0), so a caller
 * can write `return ht_error_set(err, EINVAL, "...")`. */
int ht_error_set(struct ht_error *err, int errnum, const char *fmt, ...) _printf_(3, 4);

/*
 * ht_root_path - join an absolute host path onto the --root prefix.
 * @root: directory that stands for "/", or NULL / "" / "/" for the real root.
 * @path: absolute path such as "/proc/meminfo".
 *
 * Returns a newly allocated string the caller frees, or NULL when out of memory.
 */
char *ht_root_path(const char *root, const char *path);

/*
 * ht_int_text_equal - true when @a and @b are the same text, or integers
 * (strtoll base 0, as the kernel reads "0x10000") of the same value.
 */
bool ht_int_text_equal(const char *a, const char *b);

/* True when @root means the live host (NULL, "", or only slashes). */
bool ht_root_is_live(const char *root);

/*
 * The default state file of `hosttune apply` (below --root): written by
 * persist/apply.c, whose "counters" member collect/state.c reads back.
 */
#define HT_STATE_FILE "/var/lib/hosttune/state"

/*
 * ht_read_file - read a whole small file below @root into a NUL-terminated
 * buffer with the trailing newline(s) removed (shared/rootfs.c: links
 * resolve inside a --root tree).
 * @out: set to a newly allocated buffer (caller frees) on success.
 *
 * Returns 0, or a negative errno from open(2)/read(2) (-ENOENT when the file
 * or a directory on its path is absent, -EACCES, ...), -EFBIG above 1 MiB.
 * Also -EISDIR for a directory, -EINVAL for anything else that is not a
 * regular file (a FIFO or device; it is opened with O_NONBLOCK so a FIFO
 * cannot block), and -EINVAL when the content holds a NUL byte.
 */
int ht_read_file(const char *root, const char *path, char **out);

/*
 * ht_open_file - open @path below @root for reading (links resolve inside
 * the tree: ht_root_open() of rootfs.h), as
 * ht_read_file() does, for a file too large to read whole (a conntrack
 * table's text). Returns the descriptor (caller closes); a negative errno
 * from open(2)/fstat(2); -EISDIR for a directory; -EINVAL for anything else
 * that is not a regular file (a FIFO or device, opened with O_NONBLOCK);
 * -ENOMEM.
 */
int ht_open_file(const char *root, const char *path);

/*
 * ht_read_fd - read @fd to its end into a newly allocated buffer (caller
 * frees) with a NUL after the @len bytes read. Returns 0; -EFBIG above @max
 * bytes; -ENOMEM; a negative errno from read(2) (EINTR is retried).
 */
int ht_read_fd(int fd, size_t max, char **out, size_t *len);

/*
 * ht_strdup_printf - printf(3) into a new string the caller frees; NULL on
 * ENOMEM (where asprintf(3) leaves its pointer undefined).
 */
char *ht_strdup_printf(const char *fmt, ...) _printf_(1, 2);

/*
 * ht_getline_max - getline(3) that never holds more than @max bytes of a
 * line (its newline included): a file of zeros or one endless line is
 * refused, not read into memory. *@line and *@cap as getline's (the caller
 * frees *@line). Returns the line's length in bytes (newline kept, a NUL
 * after it), -1 at the end of the file; -E2BIG for a line longer than @max
 * (the stream is then at an unknown place in it), -ENOMEM, -EIO on a read
 * error.
 */
ssize_t ht_getline_max(char **line, size_t *cap, FILE *in, size_t max);

/*
 * ht_fd_private - true when @fd is a regular file that not every user may
 * read (no S_IROTH: /etc/shadow): an error about it must not quote what it
 * holds. False for anything else, and when fstat(2) fails.
 */
bool ht_fd_private(int fd);

/*
 * ht_parse_int64 - parse a whole decimal integer (optional sign, optional
 * surrounding white space). Returns 0, -EINVAL if it is not one, -ERANGE if
 * it does not fit in int64_t.
 */
int ht_parse_int64(const char *s, long long *out);

/* errno name such as "ENOENT" for errnum > 0, or NULL when unknown. */
const char *ht_errno_name(int errnum);

/* Inverse of ht_errno_name(): positive errno, or -EINVAL for an unknown name. */
int ht_errno_from_name(const char *name);

/* Hand a file descriptor out of a cleanup-managed variable: returns it, leaves -1. */
#define TAKE_FD(fd)                                                                      \
	({                                                                               \
		int _tf = (fd);                                                          \
		(fd) = -1;                                                               \
		_tf;                                                                     \
	})

/*
 * ht_utf8_len - the length (1 to 4) of the well-formed UTF-8 sequence at @s
 * (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), or
 * 0 when @s starts with its NUL or with a byte that begins none.
 */
int ht_utf8_len(const char *s);

/*
 * ht_utf8_invalid - the first byte of the NUL-terminated @s that does not
 * start a well-formed UTF-8 sequence (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or NULL when all of @s is UTF-8.
 */
const char *ht_utf8_invalid(const char *s);

/*
 * ht_has_word - whether @list, words separated by single spaces (a fact's
 * list such as nic.list), holds @word whole. @list may be NULL (false).
 */
bool ht_has_word(const char *list, const char *word);

/*
 * ht_ifname_valid - whether @name is a name the kernel accepts for a network
 * interface (net/core/dev.c, dev_valid_name(): 1 to IFNAMSIZ - 1 bytes, not
 * "." or "..", no '/', ':' or white space; any other byte, UTF-8 or not).
 */
bool ht_ifname_valid(const char *name);

/*
 * ht_shell_word - @s as one shell word: as is when it has only
 * [A-Za-z0-9:_.@/-], else single-quoted (a ' as '\''), so that a command a
 * message shows can be pasted ("systemctl restart 'a b.service'").
 * Caller frees; NULL on ENOMEM.
 */
char *ht_shell_word(const char *s);
