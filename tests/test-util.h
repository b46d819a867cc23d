/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "engine/facts.h"

/*
 * test-util - what the cmocka unit tests (tests/test-*.c) share: the
 * fixtures' directory, scratch trees below $TMPDIR and the files in them,
 * and looking facts up. Every helper fails the running test (cmocka's
 * assertions) rather than return an error, unless it says otherwise.
 * Files are written with open(2) and write(2): a test that wraps those
 * (-Wl,--wrap) sees these calls too.
 */

/*
 * The fixtures as make check lays them out (tests/make-fixtures.sh: links
 * made, every file owner-writable): $HT_FIXTURES_DIR when set, else the
 * FIXTURES_DIR the build gives, else "tests/fixtures".
 */
const char *ht_test_fixtures_dir(void);

/*
 * A new directory "$TMPDIR/@name-XXXXXX" (/tmp when TMPDIR is unset or
 * empty), made by mkdtemp(3). Caller frees the path (and removes the tree,
 * ht_test_rm_tree()).
 */
char *ht_test_tmp_dir(const char *name);

/*
 * An nftw(3) callback that removes @path: a file, a link (FTW_PHYS) or,
 * walked with FTW_DEPTH, a directory already emptied. Returns remove(3)'s
 * result, so that nftw() stops at the first failure.
 */
int ht_test_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw);

/* Removes the tree @dir, links not followed ("rm -r"); every removal must succeed. */
void ht_test_rm_tree(const char *dir);

/*
 * "mkdir -p @dir/@rel": every directory of the path, 0755 (before the
 * umask), from its first component on; those that exist already are fine.
 */
void ht_test_mkdirs(const char *dir, const char *rel);

/* The directories above @dir/@rel, as ht_test_mkdirs() makes them; not @rel itself. */
void ht_test_mkdir_parents(const char *dir, const char *rel);

/*
 * Writes the @len bytes of @data (NUL bytes and all) to @dir/@rel, making
 * its directories as ht_test_mkdirs() does; a file already there is
 * truncated, a new one is 0644 (before the umask). @rel may start with a
 * '/' (a host path below the root @dir).
 */
void ht_test_put_bytes(const char *dir, const char *rel, const void *data, size_t len);

/* ht_test_put_bytes() of the string @text. */
void ht_test_put_file(const char *dir, const char *rel, const char *text);

/*
 * @text as a new file @dir/@rel of mode @mode (0000 included): its
 * directories made, whatever was there removed first (a link is replaced,
 * not followed), then created 0600, written and given @mode by fchmod(2),
 * which the umask does not touch.
 */
void ht_test_put_file_mode(const char *dir, const char *rel, const char *text, mode_t mode);

/* The fact @name of @f; fails the test when @f has no such fact. */
const struct ht_fact *ht_test_fact(const struct ht_facts *f, const char *name);

/* Sets the fact @name of @f to the integer @i (no unit, no source). */
void ht_test_fact_int(struct ht_facts *f, const char *name, int64_t i);

/* @a and @b are the same string, or both NULL. */
void ht_test_assert_str_or_null(const char *a, const char *b);
