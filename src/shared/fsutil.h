/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "shared/util.h"

/*
 * File helpers for plan, apply and revert.
 *
 * The *_at functions take the --root directory (@root: NULL, "" or "/" for
 * the live root) and a host path (@path: "/etc/sysctl.d/90-hosttune.conf")
 * separately, and resolve @path one component at a time from @root (from
 * the descriptor ht_root_pin() opened when @root is the pinned tree: the
 * path @root is not looked up again):
 *
 * - Below a --root, no symlink is followed in any component (each directory
 *   is opened with O_NOFOLLOW relative to the one before, the file too), and
 *   ".." is refused, so that nothing read or written resolves outside the
 *   root. A symlink is -ELOOP, ".." -EXDEV.
 * - On the live root, the directories resolve as usual (some distributions
 *   make directories under /etc symlinks), but the file itself must not be a
 *   symlink (-ELOOP).
 *
 * Missing directories appear at once with the file written into them: the
 * outermost is built under a temp name (mode 0755, whatever the umask) with
 * the rest and the file inside, then renamed into place. @err (may be NULL)
 * gets a message that names the path, with the root prefix, e.g.
 * "/srv/img/etc/sysctl.d is a symlink; hosttune does not write through
 * symlinks (below --root /srv/img it follows none, so that no write leaves
 * it)". Functions return 0 or a negative errno.
 */

/* True when @root is a --root other than "/" (paths are confined below it). */
bool ht_root_confined(const char *root);

/* A growing list of strings without duplicates (directory paths). */
struct ht_paths {
	char **v;
	size_t n;
};

/* Adds a copy of @s unless it is there already: 0 or -ENOMEM. */
int ht_paths_add(struct ht_paths *p, const char *s);
bool ht_paths_has(const struct ht_paths *p, const char *s);
void ht_paths_free(struct ht_paths *p);

/*
 * ht_file_read_at - read @path below @root exactly (no newline stripped).
 * @out: newly allocated NUL-terminated content (caller frees), or NULL when
 *       the file (or a directory on its way) does not exist; 0 is returned.
 * @mode: if not NULL, receives the permission bits.
 * Returns 0; -ELOOP when the file, or below a --root a directory on its way,
 * is a symlink; -EXDEV for a ".." component below a --root; -EISDIR for a
 * directory; -EINVAL for anything else that is not a regular file (a FIFO
 * never blocks the open); -EFBIG above 1 MiB; -EBADMSG with a NUL byte; another
 * negative errno from open/read. This is the check plan needs: a target it
 * could not write shows at plan time.
 */
int ht_file_read_at(const char *root, const char *path, char **out, mode_t *mode,
                    struct ht_error *err);

struct stat;

/*
 * ht_file_read_stat_at - ht_file_read_at() that also gives the file's
 * fstat(2) (@st, filled when *@out is set): owner and mode of the very file
 * read, for a caller that trusts a file only when it is its own.
 */
int ht_file_read_stat_at(const char *root, const char *path, char **out, struct stat *st,
                         struct ht_error *err);

/*
 * ht_machine_id_read - the machine ID of the system below @root:
 * ROOT/etc/machine-id's first line when it is one (32 lowercase hexadecimal
 * digits, machine-id(5)). Below a --root no link is followed (as
 * ht_file_read_at()); on the host /etc/machine-id is read as systemd reads
 * it. @out: newly allocated (caller frees), or NULL when there is none: the
 * file is absent, unreadable, empty or "uninitialized" (an image before its
 * first boot). Returns 0 or -ENOMEM.
 */
int ht_machine_id_read(const char *root, char **out);

/*
 * ht_root_canonical - the tree @root names as one path: realpath(3) of a
 * --root (ht_root_confined()), where the tree is now when ht_root_pin()
 * opened it (rootfs.h ht_root_dir_real()), "/" for the host. @out: newly allocated
 * (caller frees). Returns 0, or the negative errno of realpath(3) (-ENOENT:
 * the tree does not exist) or -ENOMEM.
 */
int ht_root_canonical(const char *root, char **out);

/*
 * ht_file_write_at - replace @path below @root with @content: a temp file in
 * the same directory (missing directories are created, see above), fchmod
 * @mode, write, fsync, rename over @path, fsync of the directory. Refuses a
 * symlink (-ELOOP), a directory (-EISDIR) or another file that is not a
 * regular one (-EINVAL: a device, FIFO or socket, which the rename would
 * replace) at @path.
 * @changed: set to true once the rename took effect, also when the fsync
 *           of the directory then fails (the caller must undo it); false
 *           when @path is unchanged. A failure leaves no temp file; a crash
 *           can (".BASE.hosttune-XXXXXX", a file or a directory of missing
 *           directories): ht_tmp_sweep() removes those.
 */
int ht_file_write_at(const char *root, const char *path, const char *content, mode_t mode,
                     bool *changed, struct ht_error *err);

/*
 * ht_file_remove_at - remove @path (not a directory, not a symlink: -ELOOP)
 * and fsync its directory; 0 with *@changed false when already absent.
 */
int ht_file_remove_at(const char *root, const char *path, bool *changed, struct ht_error *err);

/*
 * ht_dirs_missing - the directories on the way to the file @path that do not
 * exist yet, added to @missing as host paths ("/etc", "/etc/sysctl.d"),
 * outermost first, so that whoever creates them can record them first.
 * Returns 0 or the error resolving the existing part (-ELOOP, -ENOTDIR, ...).
 */
int ht_dirs_missing(const char *root, const char *path, struct ht_paths *missing,
                    struct ht_error *err);

/*
 * ht_dir_remove_at - remove the empty directory @path below @root and fsync
 * its parent. @removed: true when it was there and is gone. Returns 0 (also
 * when it is absent); -ENOTEMPTY when it holds anything (it stays); -ELOOP
 * for a symlink; -ENOTDIR for another file.
 */
int ht_dir_remove_at(const char *root, const char *path, bool *removed, struct ht_error *err);

/*
 * ht_live_write_at - write a procfs/sysfs value ("65536\n") to @path below
 * @root: no O_CREAT, no symlink followed, a regular file only (procfs and
 * sysfs attributes are; -EINVAL otherwise), then read it back. On procfs and
 * sysfs one write(2); a plain file (a --root tree) is replaced like
 * ht_file_write_at() with its mode kept, so that a failed write leaves the
 * old value rather than an empty file; when its file system has no inode
 * (or block) left for the temp file, it is rewritten in place as procfs
 * would take it, and its old content put back if that fails.
 * @changed: set to true once the kernel accepted a write (also when the read
 *           back then differs: the caller must restore the old value).
 * Returns 0; -EIO when the value read back differs (the kernel clamped or
 * refused it silently); -ENOENT when @path (or its directory: a module not
 * loaded) does not exist; another negative errno from open/write (-ELOOP,
 * -EACCES, -EINVAL from the kernel).
 */
int ht_live_write_at(const char *root, const char *path, const char *value, bool *changed,
                     struct ht_error *err);

/* True for a name ht_file_write_at() gives its temp files: ".BASE.hosttune-XXXXXX". */
bool ht_tmp_name(const char *name);

/*
 * ht_tmp_sweep - remove the temp files and directories (ht_tmp_name()) that
 * an interrupted hosttune left in the directories @dirs (host paths below
 * @root; absent ones are skipped). Call it only while holding the lock
 * (persist.h ht_persist_lock()): then no other hosttune is writing them.
 * Only entries owned by this process's effective uid are touched (another
 * user's file is never hosttune's). A file is removed when it is the temp
 * name of one of @file_bases (NULL-terminated; NULL: any), a directory only
 * when its name is the temp name of one of @dir_names (NULL-terminated: the
 * directories hosttune creates), with what it holds (never following a
 * symlink).
 * @removed: receives each path removed, with the root prefix.
 * Returns 0, or the first error removing one (the others are still tried).
 */
int ht_tmp_sweep(const char *root, const struct ht_paths *dirs, const char *const *dir_names,
                 const char *const *file_bases, struct ht_paths *removed);

/*
 * ht_chain_remove_at - remove the directory @top below @root at once when it
 * holds nothing but the directories on the way to the file @path and that
 * file (the state file and the directories apply created for it): @top is
 * renamed to a temp name first (renameat2(RENAME_NOREPLACE): no new inode
 * is needed, where the file system has it), then removed with what it
 * holds, so that a crash leaves only a name ht_tmp_sweep() removes.
 * @retired: true once @top is gone from its place (then an error means that
 * its temp name could not be removed: ht_tmp_sweep() removes it later).
 * @unsynced: set to true when an fsync of the parent failed (gone as far as
 * anyone can see; a crash may bring it back). Returns 0 with *@retired
 * false, changing nothing, when @top is absent or holds anything else; a
 * negative errno otherwise.
 */
int ht_chain_remove_at(const char *root, const char *top, const char *path, bool *retired,
                       bool *unsynced, struct ht_error *err);

/* Reads a procfs/sysfs value with trailing white space removed; NULL + 0 when absent. */
int ht_live_read_at(const char *root, const char *path, char **out, struct ht_error *err);

/*
 * ht_file_read - ht_file_read_at() on the live root with a full path (the
 * root prefix already applied). Kept for callers that join paths first: it
 * follows symlinked directories, so it is not confined to a --root.
 */
int ht_file_read(const char *path, char **out, mode_t *mode);
