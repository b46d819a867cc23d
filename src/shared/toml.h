/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * toml - a strict reader of the TOML subset Garage's configuration file
 * (garage.toml) uses. Debian 12 packages no C TOML library (only C++, Go,
 * Perl and Python ones), so this is the project's own.
 *
 * Accepted:
 *   key = value            bare keys only (A-Z a-z 0-9 _ -)
 *   [table] [a.b]          table headers, bare names joined by dots
 *   [[array.of.tables]]    arrays of tables ([[data_dir]])
 *   "basic"                with the escapes of TOML 1.0: \b \t \n \f \r \" \\ and
 *                          \uXXXX \UXXXXXXXX naming a Unicode scalar value (not a
 *                          surrogate, not above U+10FFFF) other than U+0000
 *   'literal'              taken as written
 *   123 -4 +1_000          decimal integers in 64 bits, '_' only between digits,
 *                          no leading zero
 *   true false
 *   ["a", 'b', ]           arrays of strings, over several lines, with comments
 *   { k = v, k2 = v2 }     inline tables, as TOML 1.0 writes them: on one line
 *                          (an array value inside may span lines), bare keys,
 *                          values of any type above (nested inline tables too),
 *                          no trailing comma; {} is an empty table. A table
 *                          complete as written: no [header] adds to it.
 *   [ {...}, {...}, ]      an array of inline tables, over several lines: the
 *                          same HT_TOML_TABLE_ARRAY as [[name]] entries (Garage's
 *                          documented data_dir = [ { path = ..., capacity = ... } ]),
 *                          but static: no later [[name]] appends to it
 *   # comments, blank lines, LF or CRLF line ends
 *
 * The whole file must be UTF-8 (comments too; no overlong forms, surrogates
 * or code points above U+10FFFF), as Garage reads it into a Rust String: the
 * first byte that starts no well-formed sequence gives "expected UTF-8 text,
 * found byte 0xNN". Strings come out as UTF-8 (escapes decoded).
 *
 * Everything else is refused with -EINVAL and a message
 * "FILE:LINE:COL: expected ..., found ..." (LINE and COL count from 1, COL in
 * bytes): floats, dates and times, multi-line strings, quoted keys, dotted
 * keys (a.b = 1; a dotted header [a.b] is read), hex/octal/binary integers,
 * arrays of integers, booleans or arrays, arrays mixing strings and inline
 * tables, duplicate keys (in an inline table too),
 * a line end or a trailing comma inside braces, inline tables nested more
 * than 64 deep, a table header of more than 64 dotted parts, a table defined twice, a key redefined by a table header (and
 * a table redefined by a key), a header naming an inline table or a table
 * inside one, [[name]] after name = [ {...} ], a NUL byte.
 */

/* What a value holds. */
enum ht_toml_type {
	HT_TOML_STRING,      /* .str */
	HT_TOML_INT,         /* .i */
	HT_TOML_BOOL,        /* .b */
	HT_TOML_STRINGS,     /* .strv / .n_strv: an array of strings */
	HT_TOML_TABLE,       /* .table */
	HT_TOML_TABLE_ARRAY, /* .tables / .n_tables: [[name]] entries, in file order */
};

struct ht_toml_table;

/* One value; owned by the entry that holds it. */
struct ht_toml_value {
	enum ht_toml_type type;
	unsigned line;   /* line of the value (of the header that made a table), from 1 */
	bool is_inline;  /* HT_TOML_TABLE written { ... }, HT_TOML_TABLE_ARRAY written
	                  * [ { ... }, ... ]: complete as written, no header adds to it */
	char *str;       /* HT_TOML_STRING: NUL-terminated, UTF-8, escapes decoded */
	int64_t i;       /* HT_TOML_INT */
	bool b;          /* HT_TOML_BOOL */
	char **strv;     /* HT_TOML_STRINGS: n_strv strings */
	size_t n_strv;
	struct ht_toml_table *table;   /* HT_TOML_TABLE */
	struct ht_toml_table **tables; /* HT_TOML_TABLE_ARRAY: n_tables tables */
	size_t n_tables;
};

/* One key and its value. */
struct ht_toml_entry {
	char *key;
	struct ht_toml_value v;
};

/*
 * A table: its entries in the order the file gives them (a sub-table appears
 * where its first header, or the first header below it, appears).
 * header_defined: a [header] named this very table (a second one is an error).
 * line: the line of the header that made it (of the [[name]] of an array
 * entry; of its own [header] once one names it), or of its '{' when written
 * inline; 0 for the root. From 1.
 */
struct ht_toml_table {
	struct ht_toml_entry *entries;
	size_t n;
	bool header_defined;
	unsigned line;
};

/*
 * Parse len bytes of buf (need not be NUL-terminated) read from the file named
 * file (used in messages only). On success *ret is the root table (free with
 * ht_toml_free()). On a syntax error returns -EINVAL and, if err is not NULL,
 * *err is a malloc'd "FILE:LINE:COL: expected ..., found ..." (free() it);
 * -ENOMEM when out of memory (then *err is NULL). *ret is untouched on error.
 */
int ht_toml_parse(const char *file, const char *buf, size_t len, struct ht_toml_table **ret,
		  char **err);

/* Free a table from ht_toml_parse() and everything in it; NULL is fine. */
void ht_toml_free(struct ht_toml_table *t);

/*
 * The value at a dotted path of bare keys ("s3_api.api_bind_addr"), walking
 * through tables only (not into arrays of tables: take the HT_TOML_TABLE_ARRAY
 * value and look up in each of its tables). NULL when absent. The value is
 * owned by t.
 */
const struct ht_toml_value *ht_toml_get(const struct ht_toml_table *t, const char *path);

/*
 * Typed lookups by dotted path: 0 and *ret set (the string is owned by t);
 * -ENOENT when the path is absent; -EINVAL when the value has another type.
 */
int ht_toml_get_string(const struct ht_toml_table *t, const char *path, const char **ret);
int ht_toml_get_int(const struct ht_toml_table *t, const char *path, int64_t *ret);
int ht_toml_get_bool(const struct ht_toml_table *t, const char *path, bool *ret);

/*
 * A size as Garage reads it for block_size, block_ram_buffer_max,
 * lmdb_map_size (deserialize_capacity in Garage's src/util/config.rs) and
 * [[data_dir]] capacity when given as a string: what the bytesize crate's
 * ByteSize::from_str takes. Either only decimal digits (bytes), or a number
 * with an optional decimal fraction ("1.5", "1.", ".5"), optional spaces or
 * tabs, then a unit, case-insensitive:
 *   B                               bytes
 *   K KB M MB G GB T TB P PB        powers of 1000 ("10M" = 10000000)
 *   Ki KiB Mi MiB Gi GiB Ti TiB Pi PiB  powers of 1024 ("256MiB" = 268435456)
 * A fraction needs a unit ("1.5" alone is refused, as by bytesize); it is
 * truncated to whole bytes, computed exactly (bytesize multiplies in double
 * precision, so it may come out one byte lower). No spaces before or after
 * (bytesize refuses them too). *ret in bytes. -EINVAL on anything else
 * (empty, sign, unknown unit), -ERANGE above UINT64_MAX (bytesize saturates
 * with a unit and refuses without).
 */
int ht_size_parse(const char *s, uint64_t *ret);
