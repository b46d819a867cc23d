/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The garage.toml reader (shared/toml.h). Input: the text of a garage.toml,
 * given to ht_toml_parse() as it is (not NUL-terminated, so that ASan sees a
 * read past its end).
 *
 * Properties: ht_toml_parse() returns 0 or -EINVAL, nothing else, and the
 * same without a place for the message. On -EINVAL the message is one line
 * of printable text "garage.toml:LINE:COL: expected ..., found ..." with LINE
 * a line of the input and COL at most one past that line's last byte, and
 * the table is untouched. On success there is no message; every key is a
 * non-empty bare key (A-Z a-z 0-9 _ -), unique in its table; every string is
 * UTF-8; values have a known type and a line of the input; ht_toml_get()
 * finds every top-level key, and every key of tables below them by its
 * dotted path, as that very entry; the typed getters agree with the type;
 * ht_size_parse() on every string returns 0, -EINVAL or -ERANGE. ASan's leak
 * check covers ht_toml_free().
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/toml.h"
#include "shared/util.h"

#include "fuzz-common.h"

#define FILE_NAME "garage.toml"

/* Paths through tables are checked this deep (ht_toml_get() walks from the root each time). */
#define MAX_PATH_DEPTH 16

static unsigned n_lines;

static bool is_bare_key(const char *k)
{
	if (!*k)
		return false;
	for (; *k; k++)
		if (!((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') ||
		      (*k >= '0' && *k <= '9') || *k == '_' || *k == '-'))
			return false;
	return true;
}

static void check_string(const char *s, const char *what)
{
	FZ_CHECK(s, "%s: a NULL string", what);
	FZ_CHECK(!ht_utf8_invalid(s), "%s: string '%s' is not UTF-8", what, s);
	{
		uint64_t v;
		int r = ht_size_parse(s, &v);

		FZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE, "ht_size_parse('%s') returned %d",
			 s, r);
	}
}

/* root: the parsed root; path: the dotted path of t from the root, NULL when none
 * (t is inside an array of tables, or deeper than MAX_PATH_DEPTH). */
static void check_table(const struct ht_toml_table *root, const struct ht_toml_table *t,
			const char *path, unsigned depth)
{
	FZ_CHECK(t->n == 0 || t->entries, "table with %zu entries and no array", t->n);
	FZ_CHECK(t == root ? t->line == 0 : t->line >= 1 && t->line <= n_lines,
		 "table line %u of %u", t->line, n_lines);
	for (size_t i = 0; i < t->n; i++) {
		const struct ht_toml_entry *e = &t->entries[i];
		const struct ht_toml_value *v = &e->v;
		char *sub = NULL;

		FZ_CHECK(e->key && is_bare_key(e->key), "key '%s' is empty or not bare",
			 e->key ? e->key : "(null)");
		for (size_t j = 0; j < i; j++)
			FZ_CHECK(strcmp(t->entries[j].key, e->key) != 0, "key '%s' twice in a table",
				 e->key);
		FZ_CHECK(v->line >= 1 && v->line <= n_lines, "'%s' at line %u of %u", e->key,
			 v->line, n_lines);
		if (path && depth < MAX_PATH_DEPTH) {
			const char *s;
			int64_t n;
			bool b;

			FZ_CHECK(asprintf(&sub, "%s%s%s", path, *path ? "." : "", e->key) >= 0,
				 "ENOMEM");
			FZ_CHECK(ht_toml_get(root, sub) == v, "ht_toml_get('%s') misses its entry", sub);
			FZ_CHECK((ht_toml_get_string(root, sub, &s) == 0) == (v->type == HT_TOML_STRING),
				 "ht_toml_get_string('%s') disagrees with the type", sub);
			FZ_CHECK((ht_toml_get_int(root, sub, &n) == 0) == (v->type == HT_TOML_INT),
				 "ht_toml_get_int('%s') disagrees with the type", sub);
			FZ_CHECK((ht_toml_get_bool(root, sub, &b) == 0) == (v->type == HT_TOML_BOOL),
				 "ht_toml_get_bool('%s') disagrees with the type", sub);
		}
		switch (v->type) {
		case HT_TOML_STRING:
			check_string(v->str, e->key);
			break;
		case HT_TOML_INT:
		case HT_TOML_BOOL:
			break;
		case HT_TOML_STRINGS:
			FZ_CHECK(v->n_strv == 0 || v->strv, "'%s': strings without an array", e->key);
			for (size_t j = 0; j < v->n_strv; j++)
				check_string(v->strv[j], e->key);
			break;
		case HT_TOML_TABLE:
			FZ_CHECK(v->table, "'%s': a table without its table", e->key);
			check_table(root, v->table, sub, depth + 1);
			break;
		case HT_TOML_TABLE_ARRAY:
			FZ_CHECK(v->n_tables >= 1 && v->tables, "'%s': an empty array of tables",
				 e->key);
			for (size_t j = 0; j < v->n_tables; j++) {
				FZ_CHECK(v->tables[j], "'%s': table %zu is NULL", e->key, j);
				check_table(root, v->tables[j], NULL, depth + 1);
			}
			break;
		default:
			fz_fail("'%s': type %d", e->key, (int)v->type);
		}
		free(sub);
	}
}

/* "garage.toml:LINE:COL: expected ..., found ..." with LINE and COL in @data. */
static void check_message(const char *msg, const uint8_t *data, size_t size)
{
	const char *p, *found;
	unsigned long line, col, len = 0;
	char *end;
	size_t i, start = 0;

	FZ_CHECK(msg, "-EINVAL without a message");
	p = msg + strlen(FILE_NAME ":");
	for (const char *c = msg; *c; c++)
		FZ_CHECK((*c >= 0x20 && *c < 0x7f) || *c == '\t',
			 "message holds byte 0x%02x: %s", (unsigned char)*c, msg);
	FZ_CHECK(fz_has_place(msg, FILE_NAME), "message without its place: %s", msg);
	line = strtoul(p, &end, 10);
	FZ_CHECK(*end == ':' && end[1] >= '0' && end[1] <= '9', "message without COL: %s", msg);
	col = strtoul(end + 1, &end, 10);
	FZ_CHECK(strncmp(end, ": expected ", 11) == 0, "message without ': expected ': %s", msg);
	found = strstr(end, ", found ");
	FZ_CHECK(found && found > end + 11 && found[8], "message without ', found ...': %s",
		 msg);
	FZ_CHECK(line >= 1 && line <= n_lines, "line %lu of %u: %s", line, n_lines, msg);
	/* the length of that line, without its '\n' */
	for (i = 0, line--; line > 0; i++)
		if (data[i] == '\n') {
			line--;
			start = i + 1;
		}
	while (start + len < size && data[start + len] != '\n')
		len++;
	FZ_CHECK(col >= 1 && col <= len + 1, "column %lu on a line of %lu bytes: %s", col, len,
		 msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ht_toml_table *t = NULL, *t2 = NULL;
	char *err = NULL;
	int r, r2;

	if (size > 65536)
		return 0;
	n_lines = 1;
	for (size_t i = 0; i < size; i++)
		n_lines += data[i] == '\n';

	fz_guard_begin(NULL, false);
	r = ht_toml_parse(FILE_NAME, (const char *)data, size, &t, &err);
	FZ_CHECK(r == 0 || r == -EINVAL, "ht_toml_parse returned %d", r);
	if (r == 0) {
		FZ_CHECK(t, "success without a table");
		FZ_CHECK(!err, "success with a message: %s", err);
		check_table(t, t, "", 0);
		for (size_t i = 0; i < t->n; i++)
			FZ_CHECK(ht_toml_get(t, t->entries[i].key) == &t->entries[i].v,
				 "ht_toml_get('%s') misses the top-level entry", t->entries[i].key);
	} else {
		FZ_CHECK(!t, "-EINVAL, and the table was set");
		check_message(err, data, size);
	}

	/* the same without a place for the message */
	r2 = ht_toml_parse(FILE_NAME, (const char *)data, size, &t2, NULL);
	FZ_CHECK(r2 == r, "%d with a message, %d without", r, r2);
	FZ_CHECK((t2 != NULL) == (r == 0), "the second parse's table");
	fz_guard_end();

	ht_toml_free(t);
	ht_toml_free(t2);
	free(err);
	return 0;
}
