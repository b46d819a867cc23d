/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers shared by the libFuzzer harnesses in tests/fuzz/ (README.md,
 * "Fuzzing"): input splitting, a private temp tree, and the file-system
 * guard that turns a write (or, confined, any open) outside an allowed
 * directory into a property violation.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* LLVMFuzzerTestOneInput's prototype, for -Wmissing-prototypes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * fz_fail - report a property violation and abort(), so that libFuzzer
 * keeps the input as a crash file. The message starts "PROPERTY VIOLATED:".
 */
_Noreturn void fz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define FZ_CHECK(cond, ...)                                                              \
	do {                                                                             \
		if (!(cond))                                                             \
			fz_fail(__VA_ARGS__);                                            \
	} while (0)

/* A NUL-terminated copy of @data (a NUL inside stays: C string functions stop there). */
char *fz_cstr(const uint8_t *data, size_t size);

/* One piece of the input: not NUL-terminated, points into the input. */
struct fz_part {
	const char *p;
	size_t n;
};

/*
 * fz_split - cut @s (@n bytes) at every line that is exactly @sep (without
 * its newline; "%%" for example). Fills at most @max parts (the last one
 * gets the rest, separators included) and returns how many: at least 1.
 */
size_t fz_split(const char *s, size_t n, const char *sep, struct fz_part *parts, size_t max);

/* A NUL-terminated copy of a part (caller frees; aborts on ENOMEM). */
char *fz_part_str(const struct fz_part *part);

/*
 * fz_workdir - a private directory made once per process below
 * $FUZZ_TMPDIR, else $TMPDIR, else /tmp; removed at exit. Aborts when it
 * cannot be made.
 */
const char *fz_workdir(void);

/* True when @msg starts "FILE:LINE:" (LINE digits) for @file. */
bool fz_has_place(const char *msg, const char *file);

/* mkdir -p of @path's parent directories, then write @n bytes; 0 or -errno. */
int fz_write_file(const char *path, const void *data, size_t n);

/* Remove everything below @dir (not @dir itself), never following a symlink. */
void fz_empty_dir(const char *dir);

/* A canonical text of the tree at @dir: each entry's path, type, mode and content. */
char *fz_tree_snapshot(const char *dir);

/*
 * The guard, around a call into the library:
 * fz_guard_begin(DIR, writes): every open(2) family call, mkdir, unlink,
 * rename, chmod, ... (the calls the library makes; linked with -Wl,--wrap)
 * must name a path below DIR, and only when @writes is true may it write,
 * create or remove anything. DIR NULL: no confinement, but still no writes
 * when @writes is false. A violation aborts with the call and its path.
 */
void fz_guard_begin(const char *dir, bool writes);
void fz_guard_end(void);

struct ht_value;

/* The same type and value (a decimal by ==, a string by its text). */
bool fz_value_same(const struct ht_value *a, const struct ht_value *b);

/*
 * fz_value_round_trip - @v formats (ht_value_format()) to text that
 * ht_value_parse() reads back, whole, to the same value; ht_value_display()
 * works too. Aborts with the text otherwise.
 */
void fz_value_round_trip(const struct ht_value *v);
