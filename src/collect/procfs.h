/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/util.h"

/*
 * Small helpers of the readers of /proc text that collect-sockets.c,
 * collect-processes.c and collect-nstat.c share; inside collect/ only.
 */

/* closedir() for _cleanup_closedir_; a NULL directory is left alone. */
static inline void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

/* The first character of @p that is not a space or a tab. */
static inline const char *skip_blank(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* The end of the word at @p: its first space, tab, newline or NUL. */
static inline const char *skip_token(const char *p)
{
	while (*p && *p != ' ' && *p != '\t' && *p != '\n')
		p++;
	return p;
}

/*
 * Whether @s names a /proc/PID directory: a positive decimal number, into
 * *@pid; digits stop being read a digit past PID_MAX_LIMIT (4194304), so
 * the value fits an int.
 */
static inline bool parse_pid(const char *s, int *pid)
{
	long v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 4194304) /* PID_MAX_LIMIT */
			return false;
		v = v * 10 + (*s - '0');
	}
	if (v <= 0)
		return false;
	*pid = (int)v;
	return true;
}

/* The inode N of a /proc/PID/fd link "socket:[N]", 0 for anything else. */
static inline uint64_t socket_inode(const char *link)
{
	uint64_t v = 0;
	const char *p;

	if (strncmp(link, "socket:[", 8) != 0)
		return 0;
	for (p = link + 8; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	return strcmp(p, "]") == 0 ? v : 0;
}

/* strcmp() of two char * array elements, for qsort(). */
static inline int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The value of @key in text of "KEY VALUE" lines (/proc/vmstat's
 * "oom_kill 7", memory.events, pids.events, memory.oom_control): 0 and
 * *@out, -ENOENT without the key, -EINVAL when its value is not a count.
 */
static inline int keyed_value(const char *text, const char *key, int64_t *out)
{
	size_t kl = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		long long v;
		char *end;

		if (strncmp(p, key, kl) != 0 || p[kl] != ' ')
			continue;
		errno = 0;
		v = strtoll(p + kl + 1, &end, 10);
		if (errno || end == p + kl + 1 || v < 0 || (*end && *end != '\n'))
			return -EINVAL;
		*out = v;
		return 0;
	}
	return -ENOENT;
}
