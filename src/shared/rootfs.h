/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* shared/: reading below a --root tree without leaving it. */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <sys/stat.h>

/*
 * A --root tree stands for "/" of another host: a symbolic link in it means
 * what it would mean there. An absolute link (etc/garage.toml ->
 * /srv/garage.toml) and a ".." resolve against the tree's top, never against
 * the real "/", so that a planted link reads nothing of the host hosttune
 * runs on. On the live host (root NULL, "" or "/") every function here is
 * the plain system call.
 *
 * Every function returns a negative errno on failure (or NULL with errno
 * set, as opendir(3) does): -ENOENT, -EACCES, -ELOOP (more than 40 links,
 * or a link as the last component with O_NOFOLLOW), -ENOMEM, and what
 * open(2) gives.
 */

/*
 * ht_root_pin - open the tree @root once (O_PATH | O_DIRECTORY) and keep the
 * descriptor for the rest of the process: every function of this file and
 * of fsutil.h that is given the same string @root then resolves from that
 * descriptor, never from the path again, so that a tree swapped for a link
 * by whoever owns its parent (while apply waits for the lock) is not
 * followed: the run stays in the directory it opened first. One tree a
 * process; a second call with another @root is -EBUSY, with the same one 0.
 * Nothing is pinned for the live host (@root NULL, "" or "/"): 0. Returns 0
 * or the negative errno of open(2) (-ENOENT, -ENOTDIR, -EACCES), -ENOMEM.
 */
int ht_root_pin(const char *root);

/*
 * ht_root_dir_open - open the directory @root itself with @flags (O_PATH or
 * O_RDONLY, with O_DIRECTORY | O_CLOEXEC): reopened from the pinned
 * descriptor when @root is the tree ht_root_pin() opened, else open(2) of
 * the path ("/" for the live host). Returns the descriptor (the caller
 * closes it) or a negative errno.
 */
int ht_root_dir_open(const char *root, int flags);

/*
 * ht_root_dir_real - realpath(3) of the directory @root: where the pinned
 * tree is now (its path as /proc/self/fd gives it) when @root is pinned,
 * else realpath(3) of @root; "/" for the live host. Newly allocated (the
 * caller frees); NULL with errno set (ENOENT, ENOMEM).
 */
char *ht_root_dir_real(const char *root);

/*
 * ht_openat_confined - open @path relative to the directory @dirfd as if
 * @dirfd were "/": every symbolic link and ".." on the way resolves inside
 * it (openat2(2) with RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS). Where the
 * kernel has no openat2 (before Linux 5.6, or a seccomp filter refuses it),
 * ht_walk_in_root() resolves the same way. @flags: open(2) flags without
 * O_CREAT. Returns the new descriptor (the caller closes it).
 */
int ht_openat_confined(int dirfd, const char *path, int flags);

/*
 * ht_walk_in_root - the resolution of ht_openat_confined() done component
 * by component in user space: lstat-like opens (O_PATH | O_NOFOLLOW) of
 * each component, readlinkat(2) of each link (at most 40), an absolute
 * target restarting at @dirfd, ".." never above it; the last component is
 * opened with @flags | O_NOFOLLOW. A directory renamed or replaced by a link
 * while the walk runs can still be followed, which openat2 excludes: it is
 * the fallback, and what tests compare openat2 with.
 */
int ht_walk_in_root(int dirfd, const char *path, int flags);

/*
 * ht_root_open - open the absolute @path below @root with @flags (no
 * O_CREAT): open(2) on the live host, ht_openat_confined() from @root's
 * directory below a tree. Returns the descriptor (the caller closes it).
 */
int ht_root_open(const char *root, const char *path, int flags);

/*
 * ht_root_opendir - opendir(3) of @path below @root, resolved as
 * ht_root_open() does. NULL with errno set on failure; the caller
 * closedir()s.
 */
DIR *ht_root_opendir(const char *root, const char *path);

/*
 * ht_root_stat - stat(2) of @path below @root, links followed inside the
 * tree (@nofollow: the last component's own inode, as lstat(2)). 0 or a
 * negative errno.
 */
int ht_root_stat(const char *root, const char *path, bool nofollow, struct stat *st);

/*
 * ht_root_realpath - where @path below @root leads, links resolved inside
 * the tree, as a path of the host the tree stands for ("/sys/devices/...",
 * without the root's prefix). Newly allocated (the caller frees); NULL with
 * errno set (ENOENT, ENOMEM, EXDEV when the result is not below @root: a
 * bind mount inside the tree that leads elsewhere).
 */
char *ht_root_realpath(const char *root, const char *path);

/*
 * ht_root_readlink - the target of the symbolic link @path below @root (its
 * directories resolved inside the tree), as written in the link, into @buf
 * of @size bytes with a NUL. The length, or a negative errno (-EINVAL: not
 * a link; -ENAMETOOLONG: longer than @size - 1).
 */
int ht_root_readlink(const char *root, const char *path, char *buf, size_t size);

/*
 * ht_openat_in - open @path relative to @dirfd, a directory opened by one of
 * the functions above: openat(2) on the live host (@confined false), else
 * ht_openat_confined(), so that no link leads above @dirfd (which is below
 * the tree). Returns the descriptor or a negative errno.
 */
int ht_openat_in(int dirfd, const char *path, int flags, bool confined);

/*
 * ht_root_libdir - directory @dir below @root as a path to give a library
 * that opens the files in it with open(2) (libkmod, the rules loader): its
 * real path, links resolved inside the tree, in *@out (newly allocated;
 * the caller frees). On the live host *@out is a copy of @dir. Returns 0;
 * the negative errno of ht_root_realpath() when the directory is not in
 * the tree (*@out NULL); -ELOOP when an entry of the directory whose name
 * starts with @prefix and ends with @suffix (NULL: any) is a symbolic link
 * (other than one to /dev/null, a mask), which open(2) would follow out of
 * the tree: *@out is then that entry's path in the tree. -ENOMEM.
 */
int ht_root_libdir(const char *root, const char *dir, const char *prefix, const char *suffix,
                   char **out);
