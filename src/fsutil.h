/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sys/types.h>

/*
 * File helpers for apply and revert. Paths are full paths (root prefix
 * already applied). No function follows a symlink in the last component.
 */

/*
 * ht_file_read - read a whole file exactly (no newline stripped).
 * @out: newly allocated NUL-terminated content (caller frees), or NULL when
 *       the file does not exist (then 0 is returned).
 * @mode: if not NULL, receives the permission bits.
 * Returns 0; -ELOOP when it is a symlink; -EISDIR for a directory; -EFBIG
 * above 1 MiB or with a NUL byte; another negative errno from open/read.
 */
int ht_file_read(const char *path, char **out, mode_t *mode);

/*
 * ht_file_write_atomic - replace @path with @content: a temp file in the same
 * directory (created with its parents, mode 0755, when missing), fchmod
 * @mode, write, fsync, rename over @path, fsync of the directory. Refuses a
 * symlink at @path (-ELOOP). Returns 0 or a negative errno; @path is then
 * unchanged and no temp file is left.
 */
int ht_file_write_atomic(const char *path, const char *content, mode_t mode);

/* Removes @path (not a directory) and fsyncs its directory; 0 when already absent. */
int ht_file_remove(const char *path);

/*
 * ht_live_write - write a procfs/sysfs value ("65536\n") without O_CREAT or
 * following a symlink, then read it back. Returns 0; -EIO when the value
 * read back differs (the kernel clamped or refused it silently); another
 * negative errno from open/write (-EISDIR, -EACCES, -EINVAL from the kernel).
 */
int ht_live_write(const char *path, const char *value);

/* Reads a procfs/sysfs value with trailing white space removed; NULL + 0 when absent. */
int ht_live_read(const char *path, char **out);
