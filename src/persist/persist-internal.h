/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "persist/persist.h"
#include "shared/util.h"

/* Shared by the plan (plan.c, plan-add.c, the kinds) and apply.c (apply, revert, state). */

/* The suffix of the copy apply --force keeps of a file it takes over. */
#define HT_BACKUP_SUFFIX ".hosttune-orig"

/* True when @content starts with HT_FILE_HEADER (NULL: false). */
bool ht_has_header(const char *content);

/* @path below @root (ht_root_path); caller frees; NULL on ENOMEM. */
char *ht_root_join(const char *root, const char *path);

/* True when the file's wanted content differs from what is on disk. */
bool ht_plan_file_changes(const struct ht_plan_file *f);

/* True when the live value is to be written (not skipped with a note). */
bool ht_plan_live_changes(const struct ht_plan_live *l);

/*
 * True when @path is exactly one of the files hosttune writes (a kind's
 * managed_file(), persist/kind.h: its sysctl.d, modprobe.d and
 * modules-load.d files, a .link file for a valid interface name, a drop-in
 * for a UNIT that ht_unit_name_valid() accepts) or its HT_BACKUP_SUFFIX
 * copy. (A state file names the files alone, never a copy.)
 */
bool ht_managed_file(const char *path);

/*
 * True when @dir is a directory hosttune may create: a kind's directory or
 * a parent of one (not "/"), the default state file's or a parent of it, or
 * a kind's directory of one instance (a service's UNIT.d for a valid UNIT).
 * Revert removes those an apply recorded (when empty) that a file of the
 * state is in; others it refuses.
 */
bool ht_managed_dir(const char *dir);

/*
 * ht_module_load - load kernel module @name now, as modprobe(8) would,
 * through libkmod: with the options and blacklist of modprobe.d as they are
 * when it is called (apply calls it after writing its modprobe.d file).
 * Never below a tree (@root confined: -EPERM). Returns 0 when it loaded it,
 * 1 when it was loaded already, or a negative errno with @err saying why
 * (-ENOENT: libkmod or the module missing, -EPERM: blacklisted or not
 * allowed).
 */
int ht_module_load(const char *root, const char *name, struct ht_error *err);

/*
 * ht_module_unload - remove module @name that ht_module_load() loaded, as
 * modprobe -r would without force: a module in use stays (-EBUSY). 0 or a
 * negative errno.
 */
int ht_module_unload(const char *root, const char *name);

/* Whether apply may load a module for the host below @root: only the live root. */
bool ht_module_load_here(const char *root);

/*
 * ht_state_parse - the JSON document a state file holds, @text whole: one
 * value, then nothing but white space (apply writes one object and a
 * newline; text after it is not apply's). NULL when @text is not that, or
 * memory ran out; the caller owns the object (json_object_put()).
 */
struct json_object *ht_state_parse(const char *text);
