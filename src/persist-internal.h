/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "persist.h"

/* Shared by plan.c (build, print) and apply.c (apply, revert, state). */

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
