/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

/*
 * The dry run (`hosttune plan`) shows each file it would write as a unified
 * diff against what is on disk, in the form `diff -u` prints, so that a person
 * can read it and `patch -p1` (run from /) applies it.
 */

/*
 * ht_diff_unified - append to @out (an open_memstream or any FILE) the unified diff
 * that turns @old into @new, with 3 lines of context, in `diff -u` format:
 *   --- a/PATH\n+++ b/PATH\n@@ -l,s +l,s @@\n lines...
 * @path: the file's path without a leading '/' ("etc/sysctl.d/90-hosttune.conf");
 *        no white space or control characters (patch(1) would cut the name there).
 * @old:  current content, or NULL when the file does not exist (then "--- /dev/null");
 * @new:  wanted content, or NULL when the file is to be removed ("+++ /dev/null").
 * Content is text; a last line without a newline gets "\ No newline at end of file".
 *
 * Hunk headers follow GNU diff: a count of 1 is omitted ("@@ -3 +3,2 @@"), an
 * empty range names the line before it ("@@ -0,0 +1,2 @@" for a new file).
 * Changes at most 6 unchanged lines apart share a hunk. The edit script is a
 * shortest one (fewest deleted plus inserted lines); the output depends only
 * on the arguments. No timestamps follow the names.
 *
 * NULL and "" both have no lines, so a file created or removed empty has no
 * diff to show: that returns 0 like equal contents.
 *
 * Nothing is written unless the whole diff could be computed (-ENOMEM and
 * -E2BIG leave @out untouched).
 *
 * Returns 1 when it wrote a diff, 0 when old and new are equal (nothing
 * written), -EINVAL for a NULL @out or a bad @path, -ENOMEM, -E2BIG when the
 * differing middle of the two files exceeds 4000 x 4000 lines, -EIO when
 * writing (or flushing @out) fails.
 */
int ht_diff_unified(FILE *out, const char *path, const char *old, const char *new);
