/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What root may trust to steer it (trust.h). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/trust.h"
#include "shared/util.h"

/* One path's verdict: 0, or -EPERM with @why. */
static int trust_one(const char *path, const struct stat *st, uid_t user, char *why, size_t size)
{
	if (st->st_uid != 0 && (user == HT_TRUST_ROOT_ONLY || st->st_uid != user)) {
		snprintf(why, size, "%s is owned by UID %u, not root%s", path, (unsigned)st->st_uid,
		         user == HT_TRUST_ROOT_ONLY || user == 0 ? "" : " or the invoking user");
		return -EPERM;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX))) {
		snprintf(why, size, "%s is writable by %s (mode %04o)", path,
		         st->st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st->st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

int ht_trust_path(const char *path, uid_t user, char *why, size_t size)
{
	_cleanup_free_ char *real = realpath(path, NULL);
	struct stat st;
	char *slash;
	int r;

	if (size)
		why[0] = '\0';
	if (!real)
		return -errno;
	/* A link to /dev/null masks a file (systemd's convention): it reads as nothing. */
	if (strcmp(real, "/dev/null") == 0)
		return 0;
	/* The path itself, then each directory above it up to "/". */
	for (;;) {
		const char *p = real[0] ? real : "/";

		if (stat(p, &st) < 0)
			return -errno;
		r = trust_one(p, &st, user, why, size);
		if (r < 0 || !real[0])
			return r;
		slash = strrchr(real, '/');
		if (!slash)
			return 0;
		*slash = '\0';
	}
}

uid_t ht_trust_invoking_user(void)
{
	const char *sudo = getuid() == 0 ? getenv("SUDO_UID") : NULL;
	char *end;
	unsigned long u;

	if (!sudo || !*sudo)
		return getuid();
	/* sudo writes digits only: a sign or a blank is not sudo's (strtoul would take them). */
	if (!isdigit((unsigned char)sudo[0]))
		return 0;
	errno = 0;
	u = strtoul(sudo, &end, 10);
	if (errno || *end || u >= (unsigned long)(uid_t)-1)
		return 0;
	return (uid_t)u;
}

bool ht_trust_needed(void)
{
	return geteuid() == 0;
}
