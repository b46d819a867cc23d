/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * What root may trust to steer it: configuration, rules and profiles. As
 * sudo does for its sudoers: the file and every directory above it (the
 * path resolved, links followed) owned by root, or by @user for a path the
 * invoking user gave on the command line, and writable by neither group nor
 * others; a directory with the sticky bit (/tmp) may be writable by all,
 * since another user cannot replace what it holds. A link to /dev/null (a
 * mask) is trusted: it reads as nothing.
 */

/* No user besides root is trusted. */
#define HT_TRUST_ROOT_ONLY ((uid_t)-1)

/*
 * ht_trust_path - checks @path (a file or a directory) and every directory
 * above it. Returns 0 when trusted; -EPERM when not, with @why (@size bytes)
 * saying which path and why ("/etc/hosttune/rules.d is writable by others
 * (mode 0777)", "... is owned by UID 65534, not root"); -ENOENT when @path
 * does not exist (the caller decides whether that is an error); another
 * negative errno when it cannot be resolved or examined.
 */
int ht_trust_path(const char *path, uid_t user, char *why, size_t size);

/*
 * ht_trust_invoking_user - the user who asked for this run: the real UID,
 * or under sudo(8) (real UID 0) SUDO_UID when it is a number; 0 otherwise.
 */
uid_t ht_trust_invoking_user(void);

/* ht_trust_needed - whether to check at all: only a run as root (effective UID 0) trusts. */
bool ht_trust_needed(void);
