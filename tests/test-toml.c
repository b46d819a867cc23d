/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "shared/toml.h"
#include "shared/util.h"

/*
 * The garage.toml reader on configurations shaped like the examples of
 * Garage's documentation (quick start, configuration reference: [[data_dir]]
 * with capacity, sqlite, rpc_secret_file, [s3_web], [admin]), and on
 * malformed inputs with the exact message each must give. Line and column
 * numbers below were counted by hand on the strings.
 */

static struct ht_toml_table *parse_ok(const char *text)
{
	struct ht_toml_table *t = NULL;
	char *err = NULL;
	int r = ht_toml_parse("garage.toml", text, strlen(text), &t, &err);

	if (r < 0)
		fail_msg("parse failed (%d): %s", r, err ? err : "(no message)");
	assert_null(err);
	assert_non_null(t);
	return t;
}

static void assert_str(const struct ht_toml_table *t, const char *path, const char *want)
{
	const char *s = NULL;

	assert_int_equal(ht_toml_get_string(t, path, &s), 0);
	assert_string_equal(s, want);
}

static void assert_int(const struct ht_toml_table *t, const char *path, int64_t want)
{
	int64_t v = 0;

	assert_int_equal(ht_toml_get_int(t, path, &v), 0);
	assert_true(v == want);
}

/* A single-node quick start configuration. */
static const char quickstart[] =
	"metadata_dir = \"/tmp/meta\"\n"               /* 1 */
	"data_dir = \"/tmp/data\"\n"                   /* 2 */
	"db_engine = \"sqlite\"\n"                     /* 3 */
	"\n"                                           /* 4 */
	"replication_factor = 1\n"                     /* 5 */
	"\n"                                           /* 6 */
	"rpc_bind_addr = \"[::]:3901\"\n"              /* 7 */
	"rpc_public_addr = \"127.0.0.1:3901\"\n"       /* 8 */
	"rpc_secret = \"0123abcd\"\n"                  /* 9 */
	"\n"                                           /* 10 */
	"[s3_api]\n"                                   /* 11 */
	"s3_region = \"garage\"\n"                     /* 12 */
	"api_bind_addr = \"[::]:3900\"\n"              /* 13 */
	"root_domain = \".s3.garage.localhost\"\n"     /* 14 */
	"\n"                                           /* 15 */
	"[s3_web]\n"                                   /* 16 */
	"bind_addr = \"[::]:3902\"\n"                  /* 17 */
	"root_domain = \".web.garage.localhost\"\n"    /* 18 */
	"index = \"index.html\"\n"                     /* 19 */
	"\n"                                           /* 20 */
	"[k2v_api]\n"                                  /* 21 */
	"api_bind_addr = \"[::]:3904\"\n"              /* 22 */
	"\n"                                           /* 23 */
	"[admin]\n"                                    /* 24 */
	"api_bind_addr = \"[::]:3903\"\n"              /* 25 */
	"admin_token = \"tok1\"\n"                     /* 26 */
	"metrics_token = \"tok2\"\n";                  /* 27 */

static void test_quickstart(void **state)
{
	struct ht_toml_table *t = parse_ok(quickstart);
	const struct ht_toml_value *v;

	(void)state;
	assert_str(t, "metadata_dir", "/tmp/meta");
	assert_str(t, "data_dir", "/tmp/data");
	assert_str(t, "db_engine", "sqlite");
	assert_int(t, "replication_factor", 1);
	assert_str(t, "rpc_bind_addr", "[::]:3901");
	assert_str(t, "s3_api.api_bind_addr", "[::]:3900");
	assert_str(t, "s3_api.s3_region", "garage");
	assert_str(t, "s3_web.bind_addr", "[::]:3902");
	assert_str(t, "s3_web.root_domain", ".web.garage.localhost");
	assert_str(t, "k2v_api.api_bind_addr", "[::]:3904");
	assert_str(t, "admin.api_bind_addr", "[::]:3903");
	assert_str(t, "admin.metrics_token", "tok2");

	/* 7 top-level keys then 4 tables, in file order */
	assert_int_equal(t->n, 11);
	assert_string_equal(t->entries[0].key, "metadata_dir");
	assert_string_equal(t->entries[6].key, "rpc_secret");
	assert_string_equal(t->entries[7].key, "s3_api");
	assert_string_equal(t->entries[10].key, "admin");
	assert_int_equal(t->entries[10].v.line, 24);
	assert_int_equal(t->entries[4].v.line, 7);

	v = ht_toml_get(t, "s3_api");
	assert_non_null(v);
	assert_int_equal(v->type, HT_TOML_TABLE);
	assert_int_equal(v->table->n, 3);

	/* absent keys, wrong types, paths through a non-table */
	assert_null(ht_toml_get(t, "block_size"));
	assert_null(ht_toml_get(t, "s3_api.nope"));
	assert_null(ht_toml_get(t, "metadata_dir.x"));
	assert_null(ht_toml_get(t, "s3"));
	{
		const char *s;
		int64_t i;
		bool b;

		assert_int_equal(ht_toml_get_string(t, "block_size", &s), -ENOENT);
		assert_int_equal(ht_toml_get_string(t, "replication_factor", &s), -EINVAL);
		assert_int_equal(ht_toml_get_int(t, "db_engine", &i), -EINVAL);
		assert_int_equal(ht_toml_get_bool(t, "s3_api", &b), -EINVAL);
		assert_int_equal(ht_toml_get_bool(t, "metadata_fsync", &b), -ENOENT);
	}
	ht_toml_free(t);
}

/* The reference manual's shape: several data directories, sizes, booleans, peers. */
static const char multi_hdd[] =
	"# garage.toml for a node with two HDDs\n"
	"metadata_dir = '/var/lib/garage/meta'\n"
	"metadata_fsync = true\n"
	"data_fsync = false\n"
	"metadata_auto_snapshot_interval = \"6h\"\n"
	"db_engine = \"lmdb\"\n"
	"block_size = \"10M\"\n"
	"block_ram_buffer_max = \"256MiB\"\n"
	"lmdb_map_size = \"1T\"\n"
	"compression_level = 2\n"
	"rpc_secret_file = \"/etc/garage/rpc_secret\"   # kept out of this file\n"
	"rpc_bind_addr = \"[::]:3901\"\n"
	"bootstrap_peers = [\n"
	"    \"563e1ac8@[fc00:1::1]:3901\",  # first\n"
	"\n"
	"    'a1b2c3d4@[fc00:1::2]:3901',\n"
	"]\n"
	"\n"
	"[[data_dir]]\n"
	"path = \"/mnt/hdd1\"\n"
	"capacity = \"2T\"\n"
	"\n"
	"[[data_dir]]\n"
	"path = \"/mnt/hdd2\"\n"
	"capacity = \"4T\"\n"
	"\n"
	"[[data_dir]]\n"
	"path = \"/mnt/old\"\n"
	"read_only = true\n"
	"\n"
	"[s3_api]\n"
	"api_bind_addr = \"[::]:3900\"\n"
	"s3_region = \"garage\"\n"
	"\n"
	"[consul_discovery]\n"
	"api = \"catalog\"\n"
	"tags = [ \"dns-enabled\" ]\n"
	"[consul_discovery.meta]\n"
	"rack = \"r1\"\n";

static void test_data_dirs(void **state)
{
	struct ht_toml_table *t = parse_ok(multi_hdd);
	const struct ht_toml_value *v;
	const char *s;
	bool b = false;
	uint64_t size;

	(void)state;
	assert_str(t, "metadata_dir", "/var/lib/garage/meta");
	assert_int_equal(ht_toml_get_bool(t, "metadata_fsync", &b), 0);
	assert_true(b);
	assert_int_equal(ht_toml_get_bool(t, "data_fsync", &b), 0);
	assert_false(b);
	assert_int(t, "compression_level", 2);
	assert_str(t, "rpc_secret_file", "/etc/garage/rpc_secret");

	assert_int_equal(ht_toml_get_string(t, "block_size", &s), 0);
	assert_int_equal(ht_size_parse(s, &size), 0);
	assert_true(size == 10000000);
	assert_int_equal(ht_toml_get_string(t, "block_ram_buffer_max", &s), 0);
	assert_int_equal(ht_size_parse(s, &size), 0);
	assert_true(size == 268435456);

	v = ht_toml_get(t, "bootstrap_peers");
	assert_non_null(v);
	assert_int_equal(v->type, HT_TOML_STRINGS);
	assert_int_equal(v->n_strv, 2);
	assert_string_equal(v->strv[0], "563e1ac8@[fc00:1::1]:3901");
	assert_string_equal(v->strv[1], "a1b2c3d4@[fc00:1::2]:3901");
	assert_int_equal(v->line, 13);

	v = ht_toml_get(t, "data_dir");
	assert_non_null(v);
	assert_int_equal(v->type, HT_TOML_TABLE_ARRAY);
	assert_int_equal(v->n_tables, 3);
	assert_int_equal(ht_toml_get_string(v->tables[0], "path", &s), 0);
	assert_string_equal(s, "/mnt/hdd1");
	assert_int_equal(ht_toml_get_string(v->tables[1], "capacity", &s), 0);
	assert_string_equal(s, "4T");
	assert_int_equal(ht_size_parse(s, &size), 0);
	assert_true(size == 4000000000000ULL);
	assert_int_equal(ht_toml_get_bool(v->tables[2], "read_only", &b), 0);
	assert_true(b);
	assert_int_equal(ht_toml_get_string(v->tables[2], "capacity", &s), -ENOENT);
	/* no lookup through an array of tables */
	assert_null(ht_toml_get(t, "data_dir.path"));

	v = ht_toml_get(t, "consul_discovery.tags");
	assert_non_null(v);
	assert_int_equal(v->n_strv, 1);
	assert_string_equal(v->strv[0], "dns-enabled");
	assert_str(t, "consul_discovery.meta.rack", "r1");
	ht_toml_free(t);
}

static void test_values(void **state)
{
	static const char text[] =
		"a = \"q\\\"b\\\\s\\nn\\tt\"\n"
		"b = \"\\u00e9\\u20ac\\u0041\"\n"
		"c = 'C:\\path\\n'\n"
		"d = -42\n"
		"e = +1_000_000\n"
		"f = 0\n"
		"g = 9223372036854775807\n"
		"h = -9223372036854775808\n"
		"i=\"\"\r\n"
		"\t[ t . u ]  # comment\n"
		"x = 'y'";
	struct ht_toml_table *t = parse_ok(text);

	(void)state;
	assert_str(t, "a", "q\"b\\s\nn\tt");
	assert_str(t, "b", "\xc3\xa9\xe2\x82\xac" "A");
	assert_str(t, "c", "C:\\path\\n");
	assert_int(t, "d", -42);
	assert_int(t, "e", 1000000);
	assert_int(t, "f", 0);
	assert_int(t, "g", INT64_MAX);
	assert_int(t, "h", INT64_MIN);
	assert_str(t, "i", "");
	assert_str(t, "t.u.x", "y");
	/* [t.u] made t implicitly: t may still get its own header, once */
	ht_toml_free(t);

	t = parse_ok("[a.b]\nx = 1\n[a]\ny = 2\n[[a.c]]\nz = 3\n");
	assert_int(t, "a.b.x", 1);
	assert_int(t, "a.y", 2);
	ht_toml_free(t);

	t = parse_ok("empty = []\n");
	{
		const struct ht_toml_value *v = ht_toml_get(t, "empty");

		assert_int_equal(v->type, HT_TOML_STRINGS);
		assert_int_equal(v->n_strv, 0);
	}
	ht_toml_free(t);

	t = parse_ok("");
	assert_int_equal(t->n, 0);
	ht_toml_free(t);
	t = parse_ok("# only a comment");
	assert_int_equal(t->n, 0);
	ht_toml_free(t);

	/* sub-tables of the last [[x]] entry */
	t = parse_ok("[[x]]\nn = 1\n[x.sub]\nk = 'a'\n[[x]]\nn = 2\n[x.sub]\nk = 'b'\n");
	{
		const struct ht_toml_value *v = ht_toml_get(t, "x");

		assert_int_equal(v->n_tables, 2);
		assert_str(v->tables[0], "sub.k", "a");
		assert_str(v->tables[1], "sub.k", "b");
	}
	ht_toml_free(t);
}

/*
 * Inline tables: data_dir as the reference manual writes it since Garage
 * v0.9.0 (an array of inline tables), [consul_discovery] meta as an inline
 * table, nesting, empty tables, and each table's line.
 */
static const char inline_doc[] =
	"metadata_dir = \"/var/lib/garage/meta\"\n"                    /* 1 */
	"data_dir = [\n"                                               /* 2 */
	"    { path = \"/path/to/old_data\", read_only = true },\n"    /* 3 */
	"    { path = \"/path/to/new_hdd1\", capacity = \"2T\" },\n"   /* 4 */
	"\n"                                                           /* 5 */
	"    # a comment between elements\n"                           /* 6 */
	"    {path='/path/to/new_hdd2',capacity='4T'}\n"               /* 7 */
	"]\n"                                                          /* 8 */
	"\n"                                                           /* 9 */
	"[consul_discovery]\n"                                         /* 10 */
	"api = \"catalog\"\n"                                          /* 11 */
	"meta = { rack = \"r1\", zone = { name = 'z', n = -3, on = false, "
	"tags = [\"a\", \"b\"], e = {} } }   # nested\n"               /* 12 */
	"empty = {}\n"                                                 /* 13 */
	"blank = {  }\n"                                               /* 14 */
	"list = [ {}, { } , ]\n"                                       /* 15 */
	"deep = { l = [\r\n"                                           /* 16 */
	"  \"x\", # one\r\n"                                           /* 17 */
	"  'y' ], t = [ { k = 1 }, { k = 2 } ] }\r\n";                 /* 18 */

static void test_inline(void **state)
{
	struct ht_toml_table *t = parse_ok(inline_doc);
	const struct ht_toml_value *v;
	const char *s;
	bool b = true;
	uint64_t size;

	(void)state;
	assert_str(t, "metadata_dir", "/var/lib/garage/meta");

	/* the same type as [[data_dir]], one table per element, each with its line */
	v = ht_toml_get(t, "data_dir");
	assert_non_null(v);
	assert_int_equal(v->type, HT_TOML_TABLE_ARRAY);
	assert_true(v->is_inline);
	assert_int_equal(v->line, 2);
	assert_int_equal(v->n_tables, 3);
	assert_int_equal(v->tables[0]->line, 3);
	assert_int_equal(v->tables[1]->line, 4);
	assert_int_equal(v->tables[2]->line, 7);
	assert_int_equal(v->tables[0]->n, 2);
	assert_str(v->tables[0], "path", "/path/to/old_data");
	assert_int_equal(ht_toml_get_bool(v->tables[0], "read_only", &b), 0);
	assert_true(b);
	assert_int_equal(ht_toml_get_string(v->tables[0], "capacity", &s), -ENOENT);
	assert_str(v->tables[1], "path", "/path/to/new_hdd1");
	assert_int_equal(ht_toml_get_string(v->tables[1], "capacity", &s), 0);
	assert_int_equal(ht_size_parse(s, &size), 0);
	assert_true(size == 2000000000000ULL);
	assert_int_equal(ht_toml_get_bool(v->tables[1], "read_only", &b), -ENOENT);
	assert_str(v->tables[2], "path", "/path/to/new_hdd2");
	assert_str(v->tables[2], "capacity", "4T");
	/* the values' own lines */
	assert_int_equal(ht_toml_get(v->tables[1], "capacity")->line, 4);
	assert_int_equal(ht_toml_get(v->tables[2], "path")->line, 7);

	/* nested inline tables, looked up by dotted path like any table */
	v = ht_toml_get(t, "consul_discovery.meta");
	assert_non_null(v);
	assert_int_equal(v->type, HT_TOML_TABLE);
	assert_true(v->is_inline);
	assert_int_equal(v->line, 12);
	assert_int_equal(v->table->line, 12);
	assert_int_equal(v->table->n, 2);
	assert_string_equal(v->table->entries[0].key, "rack");
	assert_string_equal(v->table->entries[1].key, "zone");
	assert_str(t, "consul_discovery.api", "catalog");
	assert_str(t, "consul_discovery.meta.rack", "r1");
	assert_str(t, "consul_discovery.meta.zone.name", "z");
	assert_int(t, "consul_discovery.meta.zone.n", -3);
	assert_int_equal(ht_toml_get_bool(t, "consul_discovery.meta.zone.on", &b), 0);
	assert_false(b);
	v = ht_toml_get(t, "consul_discovery.meta.zone.tags");
	assert_non_null(v);
	assert_int_equal(v->type, HT_TOML_STRINGS);
	assert_int_equal(v->n_strv, 2);
	assert_string_equal(v->strv[0], "a");
	assert_string_equal(v->strv[1], "b");
	v = ht_toml_get(t, "consul_discovery.meta.zone.e");
	assert_int_equal(v->type, HT_TOML_TABLE);
	assert_int_equal(v->table->n, 0);
	/* the [consul_discovery] table itself was made by its header */
	v = ht_toml_get(t, "consul_discovery");
	assert_false(v->is_inline);
	assert_int_equal(v->table->line, 10);
	assert_int_equal(v->table->n, 6);

	/* empty inline tables, alone or in an array (a trailing comma is fine in an array) */
	v = ht_toml_get(t, "consul_discovery.empty");
	assert_int_equal(v->type, HT_TOML_TABLE);
	assert_true(v->is_inline);
	assert_int_equal(v->table->n, 0);
	v = ht_toml_get(t, "consul_discovery.blank");
	assert_int_equal(v->type, HT_TOML_TABLE);
	assert_int_equal(v->table->n, 0);
	v = ht_toml_get(t, "consul_discovery.list");
	assert_int_equal(v->type, HT_TOML_TABLE_ARRAY);
	assert_int_equal(v->n_tables, 2);
	assert_int_equal(v->tables[0]->n, 0);
	assert_int_equal(v->tables[1]->n, 0);

	/* an array value inside an inline table may span lines (TOML 1.0) */
	v = ht_toml_get(t, "consul_discovery.deep.l");
	assert_non_null(v);
	assert_int_equal(v->n_strv, 2);
	assert_string_equal(v->strv[1], "y");
	v = ht_toml_get(t, "consul_discovery.deep.t");
	assert_non_null(v);
	assert_int_equal(v->type, HT_TOML_TABLE_ARRAY);
	assert_int_equal(v->n_tables, 2);
	assert_int(v->tables[1], "k", 2);
	assert_int_equal(v->tables[1]->line, 18);
	ht_toml_free(t);

	/* tables made by headers: the line of the header that made or named them */
	t = parse_ok("[a.b]\nx = 1\n\n[a]\n[[c]]\n[[c]]\n");
	assert_int_equal(ht_toml_get(t, "a.b")->table->line, 1);
	assert_int_equal(ht_toml_get(t, "a")->table->line, 4);
	v = ht_toml_get(t, "c");
	assert_false(v->is_inline);
	assert_int_equal(v->tables[0]->line, 5);
	assert_int_equal(v->tables[1]->line, 6);
	assert_int_equal(t->line, 0);
	ht_toml_free(t);
}

/* 64 nested inline tables are read, 65 are refused. */
/* 4096 keys in a table are read; the 4097th, in the root, a [table] or an inline table, is refused. */
static void test_many_keys(void **state)
{
	static const char *const openers[] = { "", "[t]\n", "x = {" };
	size_t cap = 4097 * 16 + 16;
	char *text = malloc(cap), *err = NULL;
	struct ht_toml_table *t = NULL;

	(void)state;
	assert_non_null(text);
	for (size_t o = 0; o < 3; o++) {
		for (unsigned keys = 4096; keys <= 4097; keys++) {
			bool in_line = o == 2;
			size_t n = (size_t)snprintf(text, cap, "%s", openers[o]);

			for (unsigned i = 0; i < keys; i++) {
				if (in_line)
					n += (size_t)snprintf(text + n, cap - n, "%sk%u = 1", i ? ", " : "", i);
				else
					n += (size_t)snprintf(text + n, cap - n, "k%u = 1\n", i);
			}
			if (in_line)
				n += (size_t)snprintf(text + n, cap - n, "}\n");
			if (keys == 4096) {
				assert_int_equal(ht_toml_parse("f", text, n, &t, &err), 0);
				ht_toml_free(t);
				t = NULL;
				continue;
			}
			assert_int_equal(ht_toml_parse("f", text, n, &t, &err), -EINVAL);
			/*
			 * The 4097th key: line 4097 of the root (col 1), line 4098 below
			 * "[t]", or on line 1 of "x = {k0 = 1, ..., k4095 = 1, k4096":
			 * 5 + the 4096 keys "kI = 1" (10 x 6 + 90 x 7 + 900 x 8 + 3096 x 9
			 * = 35754 bytes) + 4096 x ", " (8192) + 1 = column 43952.
			 */
			if (o == 0)
				assert_string_equal(err, "f:4097:1: expected at most 4096 keys in a table, "
				                         "found another key");
			else if (o == 1)
				assert_string_equal(err, "f:4098:1: expected at most 4096 keys in a table, "
				                         "found another key");
			else
				assert_string_equal(err, "f:1:43952: expected at most 4096 keys in a table, "
				                         "found another key");
			free(err);
			err = NULL;
		}
	}
	free(text);
}

static void test_inline_depth(void **state)
{
	char text[512], *err = NULL;
	struct ht_toml_table *t = NULL;
	const struct ht_toml_value *v;
	size_t n = 0;

	(void)state;
	n += (size_t)snprintf(text + n, sizeof(text) - n, "x = ");
	for (int i = 0; i < 64; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "{a=");
	n += (size_t)snprintf(text + n, sizeof(text) - n, "1");
	for (int i = 0; i < 64; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "}");
	t = parse_ok(text);
	v = ht_toml_get(t, "x");
	for (int i = 0; i < 64; i++) {
		assert_int_equal(v->type, HT_TOML_TABLE);
		v = ht_toml_get(v->table, "a");
		assert_non_null(v);
	}
	assert_int_equal(v->type, HT_TOML_INT);
	assert_true(v->i == 1);
	ht_toml_free(t);
	t = NULL;

	/* "x = " then 65 x "{a=": the 65th '{' is at column 4 + 64 x 3 + 1 */
	n = (size_t)snprintf(text, sizeof(text), "x = ");
	for (int i = 0; i < 65; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "{a=");
	n += (size_t)snprintf(text + n, sizeof(text) - n, "1");
	for (int i = 0; i < 65; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "}");
	assert_int_equal(ht_toml_parse("f", text, n, &t, &err), -EINVAL);
	assert_null(t);
	assert_string_equal(err, "f:1:197: expected inline tables nested at most 64 deep, found a "
				 "deeper '{'");
	free(err);
	err = NULL;

	/* a header of 64 parts is read; of 65 refused at the 65th ("[" + 64 x "a." then 'a') */
	n = (size_t)snprintf(text, sizeof(text), "[[a");
	for (int i = 1; i < 64; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, ".a");
	n += (size_t)snprintf(text + n, sizeof(text) - n, "]]\nk = 1\n");
	t = parse_ok(text);
	v = ht_toml_get(t, "a");
	for (int i = 1; i < 64; i++) {
		assert_int_equal(v->type, HT_TOML_TABLE);
		v = ht_toml_get(v->table, "a");
		assert_non_null(v);
	}
	assert_int_equal(v->type, HT_TOML_TABLE_ARRAY);
	assert_int_equal(v->n_tables, 1);
	assert_int_equal(v->tables[0]->n, 1);
	ht_toml_free(t);
	t = NULL;

	n = (size_t)snprintf(text, sizeof(text), "[a");
	for (int i = 1; i < 65; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, ".a");
	n += (size_t)snprintf(text + n, sizeof(text) - n, "]\n");
	assert_int_equal(ht_toml_parse("f", text, n, &t, &err), -EINVAL);
	assert_null(t);
	assert_string_equal(err, "f:1:130: expected a table name of at most 64 parts, found a "
				 "65th part");
	free(err);
}

struct bad {
	const char *text;
	const char *msg;
};

static const struct bad bad[] = {
	{ "block_size = 1.5\n", "f:1:14: expected an integer, found a float" },
	{ "x = 1e6\n", "f:1:5: expected an integer, found a float" },
	{ "when = 2024-01-01\n", "f:1:8: expected an integer, found a date or time" },
	{ "at = 07:32:00\n", "f:1:6: expected an integer, found a date or time" },
	{ "x = inf\n", "f:1:5: expected a value, found 'i'" },
	{ "x = -inf\n", "f:1:5: expected an integer, found inf or nan" },
	{ "x = 0x10\n", "f:1:5: expected a decimal integer, found '0x'" },
	{ "x = 012\n", "f:1:5: expected a decimal integer, found a leading zero" },
	{ "x = 1__0\n", "f:1:7: expected a digit after '_', found '_'" },
	{ "x = 10_\n", "f:1:8: expected a digit after '_', found end of line" },
	{ "x = 99999999999999999999\n",
	  "f:1:5: expected an integer in 64 bits, found a number out of range" },
	{ "x = 9223372036854775808\n",
	  "f:1:5: expected an integer in 64 bits, found a number out of range" },
	{ "x = 12abc\n", "f:1:7: expected end of the integer, found 'a'" },
	{ "x = \"\"\"a\"\"\"\n",
	  "f:1:5: expected a one-line string (multi-line strings are not read), found '\"\"\"'" },
	{ "x = '''a'''\n",
	  "f:1:5: expected a one-line string (multi-line strings are not read), found \"'''\"" },
	{ "x = \"abc\n", "f:1:9: expected '\"' closing the string opened at column 5, found end of line" },
	{ "x = 'abc", "f:1:9: expected \"'\" closing the string opened at column 5, found end of file" },
	{ "x = \"a\\ac\"\n",
	  "f:1:7: expected an escape among \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX, "
	  "found '\\a'" },
	{ "x = \"\\e\"\n",
	  "f:1:6: expected an escape among \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX, "
	  "found '\\e'" },
	{ "x = \"\\u12g4\"\n", "f:1:10: expected 4 hexadecimal digits after \\u, found 'g'" },
	{ "x = \"\\U0001F60\"\n",
	  "f:1:15: expected 8 hexadecimal digits after \\U, found '\"'" },
	{ "x = \"\\ud800\"\n",
	  "f:1:6: expected a Unicode scalar value (not a surrogate, not U+0000), found \\ud800" },
	{ "x = \"ab\\uDFFF\"\n",
	  "f:1:8: expected a Unicode scalar value (not a surrogate, not U+0000), found \\uDFFF" },
	{ "x = \"\\u0000\"\n",
	  "f:1:6: expected a Unicode scalar value (not a surrogate, not U+0000), found \\u0000" },
	{ "x = \"\\U0000D800\"\n",
	  "f:1:6: expected a Unicode scalar value (not a surrogate, not U+0000, not above "
	  "U+10FFFF), found \\U0000D800" },
	{ "x = \"\\U00000000\"\n",
	  "f:1:6: expected a Unicode scalar value (not a surrogate, not U+0000, not above "
	  "U+10FFFF), found \\U00000000" },
	{ "x = \"\\U00110000\"\n",
	  "f:1:6: expected a Unicode scalar value (not a surrogate, not U+0000, not above "
	  "U+10FFFF), found \\U00110000" },
	{ "x = \"\\UFFFFFFFF\"\n",
	  "f:1:6: expected a Unicode scalar value (not a surrogate, not U+0000, not above "
	  "U+10FFFF), found \\UFFFFFFFF" },
	/* not UTF-8, anywhere in the file: the first byte that starts no valid sequence */
	{ "x = \"\xff\xfe\"\n", "f:1:6: expected UTF-8 text, found byte 0xff" },
	{ "x = \"\xc0\xaf\"\n", "f:1:6: expected UTF-8 text, found byte 0xc0" },      /* overlong '/' */
	{ "x = \"\xe0\x80\xaf\"\n", "f:1:6: expected UTF-8 text, found byte 0xe0" },  /* overlong */
	{ "x = \"\xf0\x8f\xbf\xbf\"\n", "f:1:6: expected UTF-8 text, found byte 0xf0" }, /* overlong */
	{ "x = \"\xed\xa0\x80\"\n", "f:1:6: expected UTF-8 text, found byte 0xed" },  /* U+D800 */
	{ "x = '\xed\xbf\xbf'\n", "f:1:6: expected UTF-8 text, found byte 0xed" },     /* U+DFFF */
	{ "x = \"\xf4\x90\x80\x80\"\n", "f:1:6: expected UTF-8 text, found byte 0xf4" }, /* 110000 */
	{ "x = \"\xf5\x80\x80\x80\"\n", "f:1:6: expected UTF-8 text, found byte 0xf5" },
	{ "x = \"a\x80\"\n", "f:1:7: expected UTF-8 text, found byte 0x80" },
	{ "x = \"\xc3\"\n", "f:1:6: expected UTF-8 text, found byte 0xc3" },        /* cut short */
	{ "x = 'a\xe2\x82", "f:1:7: expected UTF-8 text, found byte 0xe2" },         /* at the end */
	{ "# caf\xe9\nx = 1\n", "f:1:6: expected UTF-8 text, found byte 0xe9" },     /* a comment */
	{ "a = 1\nmetadata_dir = \"/srv/caf\xe9\"\n",
	  "f:2:25: expected UTF-8 text, found byte 0xe9" },                          /* Latin-1 */
	{ "x = 1.5\n# \xff\n", "f:2:3: expected UTF-8 text, found byte 0xff" },      /* before syntax */
	{ "x = \xe2\x82\xac\n", "f:1:5: expected a value, found byte 0xe2" },        /* valid, no value */
	{ "x = \"a\x01\"\n", "f:1:7: expected a printable character in the string, found byte 0x01" },
	{ "s3_api.api_bind_addr = \"x\"\n",
	  "f:1:7: expected '=', found '.' (dotted keys are not read)" },
	{ "\"quoted\" = 1\n", "f:1:1: expected a key, found a quoted key" },
	{ "x = 1\ny = 2\nx = 3\n",
	  "f:3:1: expected a key not yet defined in this table, found 'x' already defined at line 1" },
	{ "[s3_api]\na = 1\n\n[s3_api]\n",
	  "f:4:1: expected a table not yet defined, found [s3_api] already defined at line 1" },
	{ "s3_api = 1\n[s3_api]\n",
	  "f:2:2: expected a table name not yet used for a value, found 's3_api' already defined at line 1 as a key" },
	{ "[a]\nb = 1\n[a.b]\n",
	  "f:3:4: expected a table name not yet used for a value, found 'b' already defined at line 2 as a key" },
	{ "[a.b]\n[a]\nb = 2\n",
	  "f:3:1: expected a key not yet defined in this table, found 'b' already defined at line 1" },
	{ "[data_dir]\n[[data_dir]]\n",
	  "f:2:3: expected a name not yet used for anything but [[...]], found 'data_dir' already defined at line 1 as a table" },
	{ "data_dir = '/d'\n[[data_dir]]\n",
	  "f:2:3: expected a name not yet used for anything but [[...]], found 'data_dir' already defined at line 1 as a key" },
	{ "[[data_dir]]\n[data_dir]\n",
	  "f:2:2: expected a table name not yet used for a value, found 'data_dir' already defined at line 1 as an array of tables" },
	{ "[s3_api\n", "f:1:8: expected ']', found end of line" },
	{ "[[data_dir]\n", "f:1:11: expected ']]', found ']'" },
	{ "[]\n", "f:1:2: expected a table name, found ']'" },
	{ "[a.]\n", "f:1:4: expected a table name, found ']'" },
	{ "[a] b = 1\n", "f:1:5: expected end of line, found 'b'" },
	{ "x = 1 y = 2\n", "f:1:7: expected end of line, found 'y'" },
	{ "x\n", "f:1:2: expected '=', found end of line" },
	{ "x =\n", "f:1:4: expected a value, found end of line" },
	{ "x = yes\n", "f:1:5: expected a value, found 'y'" },
	{ "x = truex\n", "f:1:5: expected a value, found 't'" },
	{ "= 1\n", "f:1:1: expected a key, found '='" },
	{ "peers = [1, 2]\n",
	  "f:1:10: expected a string, an inline table or ']' (arrays hold strings or inline tables "
	  "only), found '1'" },
	{ "peers = [\"a\", 2]\n",
	  "f:1:15: expected a string or ']' (this array holds strings), found '2'" },
	{ "peers = [\"a\" \"b\"]\n", "f:1:14: expected ',' or ']', found '\"'" },
	{ "peers = [\"a\",\n",
	  "f:2:1: expected a string or ']' (this array holds strings), found end of file" },
	{ "peers = [[\"a\"]]\n",
	  "f:1:10: expected a string, an inline table or ']' (arrays hold strings or inline tables "
	  "only), found '['" },
	/* inline tables */
	{ "x = { a = 1, a = 2 }\n",
	  "f:1:14: expected a key not yet defined in this inline table, found 'a' already defined "
	  "at line 1" },
	{ "x = { a = { b = 1 }, a = 2 }\n",
	  "f:1:22: expected a key not yet defined in this inline table, found 'a' already defined "
	  "at line 1" },
	{ "x = { a = 1,\n b = 2 }\n",
	  "f:1:13: expected a key on the same line (an inline table is one line), found end of line" },
	{ "x = {\n}\n",
	  "f:1:6: expected a key or '}' on the same line (an inline table is one line), found end "
	  "of line" },
	{ "x = { a = 1\r\n}\n",
	  "f:1:12: expected ',' or '}' on the same line (an inline table is one line), found end "
	  "of line" },
	{ "x = { a = 1",
	  "f:1:12: expected ',' or '}' on the same line (an inline table is one line), found end "
	  "of file" },
	{ "x = { a =\n1 }\n", "f:1:10: expected a value, found end of line" },
	{ "x = { a = 1, }\n",
	  "f:1:14: expected a key (no trailing comma in an inline table), found '}'" },
	{ "x = { a = 1, b = 2, }\n",
	  "f:1:21: expected a key (no trailing comma in an inline table), found '}'" },
	{ "x = { , }\n", "f:1:7: expected a key or '}', found ','" },
	{ "x = { \"a\" = 1 }\n", "f:1:7: expected a key or '}', found a quoted key" },
	{ "x = { a.b = 1 }\n", "f:1:8: expected '=', found '.' (dotted keys are not read)" },
	{ "x = { a }\n", "f:1:9: expected '=', found '}'" },
	{ "x = { a = 1 b = 2 }\n", "f:1:13: expected ',' or '}', found 'b'" },
	{ "x = { a = 1 # no\n", "f:1:13: expected ',' or '}', found '#'" },
	{ "x = { a = 1.5 }\n", "f:1:11: expected an integer, found a float" },
	{ "x = { a = 1 } }\n", "f:1:15: expected end of line, found '}'" },
	{ "x = {}\nx = 1\n",
	  "f:2:1: expected a key not yet defined in this table, found 'x' already defined at line 1" },
	/* arrays of inline tables; arrays mixing strings and tables */
	{ "d = [ \"a\", { p = 1 } ]\n",
	  "f:1:12: expected a string or ']' (this array holds strings), found '{'" },
	{ "d = [ { p = 1 }, \"a\" ]\n",
	  "f:1:18: expected an inline table or ']' (this array holds inline tables), found '\"'" },
	{ "d = [\n  { p = 1 },\n  [],\n]\n",
	  "f:3:3: expected an inline table or ']' (this array holds inline tables), found '['" },
	{ "d = [ { p = 1 }\n  { p = 2 } ]\n", "f:2:3: expected ',' or ']', found '{'" },
	{ "d = [ { p = 1 },\n  { p = 2,\n  q = 3 } ]\n",
	  "f:2:11: expected a key on the same line (an inline table is one line), found end of line" },
	/* an inline table is complete: no header adds to it or to a table inside it */
	{ "data_dir = [ { path = '/a' } ]\n[[data_dir]]\npath = '/b'\n",
	  "f:2:3: expected a name not yet used for anything but [[...]], found 'data_dir' already "
	  "defined at line 1 as an array of inline tables (a static array cannot be appended to)" },
	{ "data_dir = [\n  { path = '/a' },\n]\n[data_dir.x]\n",
	  "f:4:2: expected a table name not yet used for a value, found 'data_dir' already defined "
	  "at line 1 as an array of inline tables (a static array cannot be appended to)" },
	{ "meta = { a = 1 }\n[meta]\nb = 2\n",
	  "f:2:2: expected a table name not yet used for a value, found 'meta' already defined at "
	  "line 1 as an inline table (complete as written)" },
	{ "meta = {}\n[meta.sub]\n",
	  "f:2:2: expected a table name not yet used for a value, found 'meta' already defined at "
	  "line 1 as an inline table (complete as written)" },
	{ "meta = { a = 1 }\n[[meta]]\n",
	  "f:2:3: expected a name not yet used for anything but [[...]], found 'meta' already "
	  "defined at line 1 as an inline table (complete as written)" },
	{ "[[x]]\ny = { a = 1 }\n[x.y]\n",
	  "f:3:4: expected a table name not yet used for a value, found 'y' already defined at "
	  "line 2 as an inline table (complete as written)" },
	{ "x = { y = { a = 1 } }\n[x.y.z]\n",
	  "f:2:2: expected a table name not yet used for a value, found 'x' already defined at "
	  "line 1 as an inline table (complete as written)" },
	{ "x = 1\r\ny = 2\rz = 3\n", "f:2:6: expected end of line, found byte 0x0d" },
	{ "a = 1\n\n  # fine\nb = \"x\" junk\n", "f:4:9: expected end of line, found 'j'" },
};

static void test_malformed(void **state)
{
	unsigned failed = 0;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct ht_toml_table *t = NULL;
		char *err = NULL;
		int r = ht_toml_parse("f", bad[i].text, strlen(bad[i].text), &t, &err);

		if (r != -EINVAL || !err || strcmp(err, bad[i].msg)) {
			print_error("case %zu (%s): r=%d\n got  %s\n want %s\n", i, bad[i].text, r,
				    err ? err : "(null)", bad[i].msg);
			failed++;
		}
		assert_null(t);
		free(err);
	}
	assert_int_equal(failed, 0);
}

static void test_nul(void **state)
{
	static const char text[] = "a = 1\nb = \"x\0y\"\n";
	struct ht_toml_table *t = NULL;
	char *err = NULL;

	(void)state;
	assert_int_equal(ht_toml_parse("/etc/garage.toml", text, sizeof(text) - 1, &t, &err),
			 -EINVAL);
	assert_string_equal(err, "/etc/garage.toml:2:7: expected text, found byte 0x00");
	assert_null(t);
	free(err);
	/* err may be NULL */
	assert_int_equal(ht_toml_parse("f", "x = \n", 5, &t, NULL), -EINVAL);
	assert_null(t);
}

/* TOML 1.0's escapes, and UTF-8 text at the edges of each sequence length. */
static void test_unicode(void **state)
{
	static const char text[] =
		"ctl = \"\\b\\t\\n\\f\\r\\\"\\\\\"\n"
		"big = \"\\U0001F600\\U0010FFFF\\U000000E9\\U00000041\\u00E9\\uFFFD\\uD7FF\\uE000\"\n"
		"raw = \"\xc2\x80|\xdf\xbf|\xe0\xa0\x80|\xed\x9f\xbf|\xee\x80\x80|\xef\xbf\xbf|"
		"\xf0\x90\x80\x80|\xf4\x8f\xbf\xbf\"\n"
		"lit = 'caf\xc3\xa9 \\U0001F600' # \xc3\xa9t\xc3\xa9 \xe2\x82\xac\n";
	struct ht_toml_table *t = parse_ok(text);
	char *err = NULL;

	(void)state;
	assert_str(t, "ctl", "\x08\x09\x0a\x0c\x0d\x22\x5c");
	/* U+1F600 F0 9F 98 80, U+10FFFF F4 8F BF BF, U+E9 C3 A9, U+FFFD EF BF BD,
	 * U+D7FF ED 9F BF, U+E000 EE 80 80 */
	assert_str(t, "big", "\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\xc3\xa9" "A" "\xc3\xa9\xef\xbf\xbd"
		   "\xed\x9f\xbf\xee\x80\x80");
	assert_str(t, "raw", "\xc2\x80|\xdf\xbf|\xe0\xa0\x80|\xed\x9f\xbf|\xee\x80\x80|\xef\xbf\xbf|"
		   "\xf0\x90\x80\x80|\xf4\x8f\xbf\xbf");
	assert_str(t, "lit", "caf\xc3\xa9 \\U0001F600");
	ht_toml_free(t);

	/* well-formed UTF-8 where a bare name stands is refused by the grammar */
	assert_int_equal(ht_toml_parse("f", "[caf\xc3\xa9]\n", 8, &t, &err), -EINVAL);
	assert_string_equal(err, "f:1:5: expected ']', found byte 0xc3");
	free(err);
}

static void test_size(void **state)
{
	static const struct {
		const char *s;
		int r;
		uint64_t v;
	} cases[] = {
		{ "1048576", 0, 1048576 },
		{ "10M", 0, 10000000 },
		{ "10MB", 0, 10000000 },
		{ "10mb", 0, 10000000 },
		{ "1MiB", 0, 1048576 },
		{ "1mi", 0, 1048576 },
		{ "256MiB", 0, 268435456 },
		{ "256 MiB", 0, 268435456 },
		{ "4k", 0, 4000 },
		{ "4 k", 0, 4000 },
		{ "4\tKB", 0, 4000 },
		{ " 4k", -EINVAL, 0 },
		{ "4k ", -EINVAL, 0 },
		{ "1.5", -EINVAL, 0 },
		{ "1.K", 0, 1000 },
		{ ".5K", 0, 500 },
		{ ".K", -EINVAL, 0 },
		{ "1.2.3K", -EINVAL, 0 },
		{ "10b", 0, 10 },
		{ "4KiB", 0, 4096 },
		{ "1G", 0, 1000000000 },
		{ "1GiB", 0, 1073741824 },
		{ "2T", 0, 2000000000000ULL },
		{ "1TiB", 0, 1099511627776ULL },
		{ "1P", 0, 1000000000000000ULL },
		{ "1PiB", 0, 1125899906842624ULL },
		{ "100B", 0, 100 },
		{ "1.5G", 0, 1500000000 },
		{ "0.5KiB", 0, 512 },
		{ "1.0001K", 0, 1000 },
		{ "0", 0, 0 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "20000P", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "M", -EINVAL, 0 },
		{ "-1M", -EINVAL, 0 },
		{ "10X", -EINVAL, 0 },
		{ "10 M B", -EINVAL, 0 },
		{ "10MiBs", -EINVAL, 0 },
		{ "1.", -EINVAL, 0 },
		{ "+1K", -EINVAL, 0 },
		{ "1e6", -EINVAL, 0 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t v = 12345;
		int r = ht_size_parse(cases[i].s, &v);

		if (r != cases[i].r || (r == 0 && v != cases[i].v))
			fail_msg("'%s': r=%d v=%llu, want r=%d v=%llu", cases[i].s, r,
				 (unsigned long long)v, cases[i].r, (unsigned long long)cases[i].v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quickstart), cmocka_unit_test(test_data_dirs),
		cmocka_unit_test(test_values),     cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_nul),        cmocka_unit_test(test_size),
		cmocka_unit_test(test_inline),     cmocka_unit_test(test_inline_depth),
		cmocka_unit_test(test_many_keys),
		cmocka_unit_test(test_unicode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
