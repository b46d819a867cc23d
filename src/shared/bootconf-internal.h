/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>

#include "shared/bootconf.h"
#include "shared/util.h"

/*
 * Shared by the readers of bootconf.h, one file a source: bootconf-sysctl.c,
 * bootconf-modprobe.c, bootconf-modules-load.c and bootconf-unit.c; all of it
 * is defined in bootconf.c. A reader lists its directories
 * (bootconf_list_files()), reads each winning file (bootconf_read_entry()),
 * cuts its lines, queues one struct pending an assignment and turns them into
 * the keys of its struct ht_conf (bootconf_group()).
 */

/* systemd's LONG_LINE_MAX (src/basic/def.h): read_line() fails on a longer line. */
#define LONG_LINE_MAX (1024U * 1024U)

/* systemd's COMMENTS (string-util.h); kmod knows only '#', in column 1. */
#define SYSTEMD_COMMENTS "#;"

/* systemd's WHITESPACE (string-util.h), what strstrip() removes. */
#define SYSTEMD_WHITESPACE " \t\n\r"

/* True when @a and @b are the same string. */
static inline bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

/* True when @s ends with @suffix. */
static inline bool endswith(const char *s, const char *suffix)
{
	size_t l = strlen(s), sl = strlen(suffix);

	return l >= sl && streq(s + l - sl, suffix);
}

/* systemd's strstrip(): trims SYSTEMD_WHITESPACE at both ends, in place. */
char *bootconf_strstrip(char *s);

/* Appends a copy of @s to the array *@v of *@n strings. Returns 0 or -ENOMEM. */
int bootconf_strv_push(char ***v, size_t *n, const char *s);

/* Frees the @n strings of @v and @v itself; NULL with 0 is fine. */
void bootconf_strv_free_n(char **v, size_t n);

/*
 * Makes room for one more element in *@v (*@cap of @size bytes each, @n used):
 * the capacity doubles, so that n appends cost O(n) copies in all, not O(n^2).
 * Returns 0 or -ENOMEM (*@v unchanged).
 */
int bootconf_grow(void *v, size_t *cap, size_t n, size_t size);

/*
 * Adds a problem of @kind about @file (line @line, 0 for the whole file; @key
 * or NULL) to @c, its message "FILE:LINE: " or "FILE: " and the text of @fmt.
 * Returns 0 or -ENOMEM.
 */
int bootconf_add_problem(struct ht_conf *c, enum ht_conf_problem_kind kind, const char *file,
			 unsigned line, const char *key, const char *fmt, ...) _printf_(6, 7);

/* One winning file name and where it is (host path, as the directory is configured). */
struct entry {
	char *name;
	char *path;
};

/* Frees the @n entries of @e and @e itself. */
void bootconf_entries_free(struct entry *e, size_t n);

/*
 * Which file names count. systemd (conf_files_list_strv() with flags 0, and
 * FOREACH_DIRENT's hidden_or_backup_file()): "*.conf" not starting with '.',
 * whatever its type, so even a directory hides the name. kmod
 * (conf_files_filter_out()): "*.conf" or "*.alias", not starting with '.',
 * at least 6 characters, directories skipped.
 */
enum style { STYLE_SYSTEMD, STYLE_KMOD };

/*
 * The files of @dirs (decreasing precedence), one a name, sorted by name.
 * Directories that are absent are skipped silently, as both systemd and kmod
 * do; any other failure to list one is a problem.
 */
int bootconf_list_files(struct ht_conf *c, const char *root, const char *const *dirs,
			size_t ndirs, enum style style, struct entry **ret, size_t *ret_n);

/* What reading one entry gave. */
struct content {
	char *buf; /* NUL-terminated; may hold other NULs before len */
	size_t len;
	dev_t dev;
	ino_t ino;
};

/*
 * bootconf_read_entry - the content of @path below @root.
 * Returns 1 with @ct filled (and the path added to c->files), 0 when there is
 * nothing to parse (a mask, added to c->masked; a file gone missing, which both
 * systemd and kmod skip in silence; or an unreadable one, now a problem), or
 * -ENOMEM.
 */
int bootconf_read_entry(struct ht_conf *c, const char *root, const char *path,
			struct content *ct);

/*
 * The next line of @ct from *@pos, as systemd's read_line() cuts it: '\n', '\r',
 * "\r\n" and NUL each end a line; nothing after the last end is no line.
 * Returns false at the end.
 */
bool bootconf_next_line(const struct content *ct, size_t *pos, const char **line, size_t *len);

/* ---- results: keys sorted, each with its assignments in precedence order ---- */

/* One assignment on its way into a key. @file and @pattern are borrowed. */
struct pending {
	char *key;           /* owned */
	const char *file;
	unsigned line;
	char *value;         /* owned */
	bool ign;
	const char *pattern;
	int phase;           /* sysctl: 0 from a glob, 1 named: a named key always wins */
	size_t order;        /* sysctl: position of the option in systemd's ordered hashmap */
	size_t seq;          /* the order read */
	bool key_ign;        /* ignore_failure of the option that sets this */
};

/* The assignments a reader has queued: @n of @cap used. */
struct pendings {
	struct pending *v;
	size_t n, cap;
};

/* Frees what @p holds and zeroes it. */
void bootconf_pendings_free(struct pendings *p);

/* Appends a copy of @tmpl under @key, with @value; both strings are copied. */
int bootconf_pending_add(struct pendings *p, const char *key, const char *value,
			 const struct pending *tmpl);

/* Sorts @p and turns it into c->keys: O(n log n) for n assignments. */
int bootconf_group(struct ht_conf *c, struct pendings *p);

/*
 * The directories of systemd's CONF_PATHS_STRV(@sub) below
 * @root: /lib last, and only when ROOT/lib is not a link to /usr/lib, where it
 * would only repeat /usr/lib.
 */
int bootconf_systemd_dirs(const char *root, const char *sub, char *dirs[5], size_t *n);

/* Frees the @n directory names of @dirs (the array itself is the caller's). */
void bootconf_dirs_free(char **dirs, size_t n);
