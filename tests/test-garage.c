/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "collect/collect.h"
#include "engine/facts.h"
#include "shared/util.h"
#include "test-util.h"

/*
 * ht_collect_garage() on the trees of tests/fixtures/garage (garage.toml
 * shaped like the examples of Garage's reference-manual/configuration.md
 * and cookbook/systemd.md, with values of their own) and on malformed files
 * written into a scratch root, each with the exact message it must give.
 * Line numbers in the expected sources were counted on the fixture files.
 *
 * ht_collect_storage() probes the filesystems of this machine; it is
 * replaced here (-Wl,--wrap) by a recorder of the calls, so the test checks
 * what the Garage collector asks for: which directories, as which storage
 * names and roles, in which order, with which measure flag. Its own facts
 * are the storage collector's tests' to check.
 */

/* ---- the recorded ht_collect_storage() calls ---- */

struct call {
	char root[512];
	char name[32];
	char role[16];
	char path[256];
	bool measure;
};

static struct call calls[8];
static size_t ncalls;

int __wrap_ht_collect_storage(struct ht_facts *f, const char *root, const char *name,
                              const char *role, const char *path, bool measure);

int __wrap_ht_collect_storage(struct ht_facts *f, const char *root, const char *name,
                              const char *role, const char *path, bool measure)
{
	struct call *c;

	(void)f;
	assert_true(ncalls < ARRAY_SIZE(calls));
	c = &calls[ncalls++];
	snprintf(c->root, sizeof(c->root), "%s", root ? root : "(null)");
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->role, sizeof(c->role), "%s", role);
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->measure = measure;
	return 0;
}

static void check_call(size_t i, const char *root, const char *name, const char *role,
                       const char *path, bool measure)
{
	assert_true(i < ncalls);
	assert_string_equal(calls[i].root, root);
	assert_string_equal(calls[i].name, name);
	assert_string_equal(calls[i].role, role);
	assert_string_equal(calls[i].path, path);
	assert_int_equal(calls[i].measure, measure);
}

/* ---- fixtures and facts ---- */

/* ROOT of tests/fixtures/garage/@name (static buffer). */
static const char *tree(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/garage/%s", ht_test_fixtures_dir(), name);
	return path;
}

static void src_is(const struct ht_fact *fact, const char *source)
{
	if (!fact->source || strcmp(fact->source, source) != 0)
		fail_msg("%s: source '%s', want '%s'", fact->name, fact->source ? fact->source : "(null)",
		         source);
}

static void str_is(const struct ht_facts *f, const char *name, const char *want,
                   const char *source)
{
	const struct ht_fact *fact = ht_test_fact(f, name);

	if (fact->value.type != HT_T_STR)
		fail_msg("%s: not a string (error %d)", name, fact->error);
	assert_string_equal(fact->value.s, want);
	src_is(fact, source);
}

static void int_is(const struct ht_facts *f, const char *name, int64_t want, const char *source)
{
	const struct ht_fact *fact = ht_test_fact(f, name);

	if (fact->value.type != HT_T_INT)
		fail_msg("%s: not an integer (error %d)", name, fact->error);
	if (fact->value.i != want)
		fail_msg("%s = %lld, want %lld", name, (long long)fact->value.i, (long long)want);
	src_is(fact, source);
}

static void bool_is(const struct ht_facts *f, const char *name, bool want, const char *source)
{
	const struct ht_fact *fact = ht_test_fact(f, name);

	assert_int_equal(fact->value.type, HT_T_BOOL);
	assert_int_equal(fact->value.b, want);
	src_is(fact, source);
}

static void unavailable_is(const struct ht_facts *f, const char *name, int err,
                           const char *source)
{
	const struct ht_fact *fact = ht_test_fact(f, name);

	if (fact->value.type != HT_T_NONE)
		fail_msg("%s: available, want errno %d", name, err);
	assert_int_equal(fact->error, err);
	src_is(fact, source);
}

/* Every fact set is one hosttune knows, with the unit its definition gives. */
static void check_defs(const struct ht_facts *f)
{
	for (size_t i = 0; i < ht_facts_count(f); i++) {
		const struct ht_fact *fact = ht_facts_at(f, i);
		const struct ht_fact_def *def = ht_fact_def_find(fact->name);

		if (!def)
			fail_msg("%s: not a known fact", fact->name);
		if ((def->unit == NULL) != (fact->unit == NULL) ||
		    (def->unit && strcmp(def->unit, fact->unit) != 0))
			fail_msg("%s: unit %s, want %s", fact->name, fact->unit ? fact->unit : "none",
			         def->unit ? def->unit : "none");
	}
}

/* ht_collect_garage() of @root with @in; must succeed. */
static struct ht_facts *collect(const char *root, const struct ht_garage_input *in, bool measure)
{
	struct ht_facts *f = ht_facts_new();
	struct ht_error err = { "" };
	int r;

	assert_non_null(f);
	ncalls = 0;
	r = ht_collect_garage(f, root, in, measure, &err);
	if (r < 0)
		fail_msg("ht_collect_garage(%s): %d: %s", root, r, err.msg);
	check_defs(f);
	return f;
}

/* ---- a scratch root ---- */

static char scratch[64];

static int scratch_setup(void **state)
{
	(void)state;
	strcpy(scratch, "/tmp/test-garage.XXXXXX");
	return mkdtemp(scratch) ? 0 : -1;
}

static int scratch_teardown(void **state)
{
	(void)state;
	return nftw(scratch, ht_test_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes @len bytes of @data to SCRATCH/@path, making its directories. */
static void put_bytes(const char *path, const void *data, size_t len)
{
	ht_test_put_bytes(scratch, path, data, len);
}

static void put(const char *path, const char *text)
{
	put_bytes(path, text, strlen(text));
}

/* ---- the fixture trees ---- */

/* One data_dir, every port, a 64-bit binary, no unit. */
static void test_single(void **state)
{
	const char *root = tree("single");
	struct ht_facts *f;

	(void)state;
	f = collect(root, NULL, false);
	str_is(f, "garage.config", "/etc/garage.toml", "Garage's default path");
	str_is(f, "garage.metadata_dir", "/srv/ssd/garage-meta", "/etc/garage.toml:3");
	str_is(f, "garage.data_dir", "/srv/hdd/garage-data", "/etc/garage.toml:4");
	/* Not in the file: Garage's defaults. */
	str_is(f, "garage.db_engine", "lmdb", "Garage default (reference-manual/configuration.md)");
	int_is(f, "garage.block_size", 1048576, "Garage default (reference-manual/configuration.md)");
	int_is(f, "garage.block_ram_buffer_max", 256 * 1048576,
	       "Garage default (reference-manual/configuration.md)");
	bool_is(f, "garage.metadata_fsync", false,
	        "Garage default (reference-manual/configuration.md)");
	bool_is(f, "garage.data_fsync", false, "Garage default (reference-manual/configuration.md)");
	unavailable_is(f, "garage.metadata_auto_snapshot_interval", ENOENT,
	               "/etc/garage.toml: no metadata_auto_snapshot_interval (Garage's default: no "
	               "snapshots)");
	str_is(f, "garage.compression_level", "3", "/etc/garage.toml:7");
	int_is(f, "garage.rpc_port", 3901, "/etc/garage.toml:10");
	int_is(f, "garage.s3_port", 3900, "/etc/garage.toml:15");
	int_is(f, "garage.web_port", 3902, "/etc/garage.toml:19");
	int_is(f, "garage.admin_port", 3903, "/etc/garage.toml:24");
	str_is(f, "garage.binary", "/usr/local/bin/garage",
	       "the first of /usr/local/bin/garage, /usr/bin/garage");
	int_is(f, "garage.binary_bits", 64, "/usr/local/bin/garage ELF header (EI_CLASS)");
	unavailable_is(f, "garage.unit", ENOENT, "no garage.service in the systemd unit search path");
	unavailable_is(f, "garage.unit.nofile", ENOENT,
	               "no LimitNOFILE= in garage.service or its drop-ins, no DefaultLimitNOFILE= in "
	               "systemd's system.conf or system.conf.d: systemd's built-in default (soft "
	               "1024)");
	str_is(f, "storage.list", "metadata data", "/etc/garage.toml");
	assert_int_equal(ncalls, 2);
	check_call(0, root, "metadata", "metadata", "/srv/ssd/garage-meta", false);
	check_call(1, root, "data", "data", "/srv/hdd/garage-data", false);
	/* A single data_dir: path and role from the data_dir line. */
	str_is(f, "storage.data.path", "/srv/hdd/garage-data", "/etc/garage.toml:4");
	str_is(f, "storage.data.role", "data", "/etc/garage.toml:4");
	/* A single data_dir has neither capacity nor read_only. */
	assert_null(ht_facts_get(f, "storage.data.capacity"));
	assert_null(ht_facts_get(f, "storage.data.read_only"));
	ht_facts_free(f);

	/* measure is handed on as given. */
	f = collect(root, NULL, true);
	assert_int_equal(ncalls, 2);
	check_call(0, root, "metadata", "metadata", "/srv/ssd/garage-meta", true);
	check_call(1, root, "data", "data", "/srv/hdd/garage-data", true);
	ht_facts_free(f);
}

/* [[data_dir]] x 3, sqlite, sizes as strings, compression "None", an admin socket. */
static void test_multi(void **state)
{
	const char *root = tree("multi");
	struct ht_facts *f;

	(void)state;
	f = collect(root, NULL, false);
	str_is(f, "garage.metadata_dir", "/var/lib/garage/meta", "/etc/garage.toml:3");
	bool_is(f, "garage.metadata_fsync", true, "/etc/garage.toml:4");
	bool_is(f, "garage.data_fsync", false, "/etc/garage.toml:5");
	str_is(f, "garage.metadata_auto_snapshot_interval", "6h", "/etc/garage.toml:6");
	str_is(f, "garage.db_engine", "sqlite", "/etc/garage.toml:7");
	/* "10M": bytesize's M is 1000 x 1000 */
	int_is(f, "garage.block_size", 10000000, "/etc/garage.toml:8");
	int_is(f, "garage.block_ram_buffer_max", 67108864, "/etc/garage.toml:9");
	/* Garage takes "none" in any case (eq_ignore_ascii_case). */
	str_is(f, "garage.compression_level", "none", "/etc/garage.toml:10");
	int_is(f, "garage.rpc_port", 3901, "/etc/garage.toml:14");
	/* The first [[data_dir]] header is the value's line. */
	str_is(f, "garage.data_dir", "/mnt/old-disk/garage /mnt/disk1/garage /mnt/disk2/garage",
	       "/etc/garage.toml:20");
	int_is(f, "garage.s3_port", 3900, "/etc/garage.toml:34");
	unavailable_is(f, "garage.web_port", ENOENT, "/etc/garage.toml: no s3_web.bind_addr");
	unavailable_is(f, "garage.admin_port", ENOENT,
	               "/etc/garage.toml:37: admin.api_bind_addr is a Unix socket "
	               "(/run/garage/admin.sock), no TCP port");
	/* No binary in this tree. */
	unavailable_is(f, "garage.binary", ENOENT,
	               "no ExecStart= with a path, no /usr/local/bin/garage or /usr/bin/garage");
	unavailable_is(f, "garage.binary_bits", ENOENT, "no garage executable");

	str_is(f, "storage.list", "metadata data1 data2 data3", "/etc/garage.toml");
	assert_int_equal(ncalls, 4);
	check_call(0, root, "metadata", "metadata", "/var/lib/garage/meta", false);
	check_call(1, root, "data1", "data", "/mnt/old-disk/garage", false);
	check_call(2, root, "data2", "data", "/mnt/disk1/garage", false);
	check_call(3, root, "data3", "data", "/mnt/disk2/garage", false);
	bool_is(f, "storage.data1.read_only", true, "/etc/garage.toml:22");
	assert_null(ht_facts_get(f, "storage.data1.capacity"));
	/* Each entry's path and role from its own path = line, not the first header's. */
	str_is(f, "storage.metadata.path", "/var/lib/garage/meta", "/etc/garage.toml:3");
	str_is(f, "storage.data1.path", "/mnt/old-disk/garage", "/etc/garage.toml:21");
	str_is(f, "storage.data2.path", "/mnt/disk1/garage", "/etc/garage.toml:25");
	str_is(f, "storage.data3.path", "/mnt/disk2/garage", "/etc/garage.toml:29");
	str_is(f, "storage.data3.role", "data", "/etc/garage.toml:29");
	/* "2T" = 2 x 1000^4; "2TiB" = 2 x 1024^4 = 2^41 */
	int_is(f, "storage.data2.capacity", 2000000000000, "/etc/garage.toml:26");
	int_is(f, "storage.data3.capacity", 2199023255552, "/etc/garage.toml:30");
	assert_null(ht_facts_get(f, "storage.data2.read_only"));
	assert_int_equal(ht_test_fact(f, "storage.data2.capacity")->unit != NULL, true);
	assert_string_equal(ht_test_fact(f, "storage.data2.capacity")->unit, "bytes");
	ht_facts_free(f);
}

/*
 * data_dir as an array of inline tables (Garage's reference manual since
 * v0.9.0): the same directories and facts as [[data_dir]] entries, each
 * entry's facts with its own line; an inline table elsewhere is ignored.
 */
static void test_inline(void **state)
{
	const char *root = tree("inline");
	struct ht_facts *f;

	(void)state;
	f = collect(root, NULL, false);
	str_is(f, "garage.metadata_dir", "/var/lib/garage/meta", "/etc/garage.toml:4");
	/* The line of "data_dir = [". */
	str_is(f, "garage.data_dir", "/srv/old-hdd/garage /srv/new-hdd/garage", "/etc/garage.toml:5");
	str_is(f, "garage.db_engine", "lmdb", "/etc/garage.toml:9");
	int_is(f, "garage.block_size", 1048576, "/etc/garage.toml:10");
	int_is(f, "garage.rpc_port", 3901, "/etc/garage.toml:12");
	int_is(f, "garage.s3_port", 3900, "/etc/garage.toml:17");

	str_is(f, "storage.list", "metadata data1 data2", "/etc/garage.toml");
	assert_int_equal(ncalls, 3);
	check_call(0, root, "metadata", "metadata", "/var/lib/garage/meta", false);
	check_call(1, root, "data1", "data", "/srv/old-hdd/garage", false);
	check_call(2, root, "data2", "data", "/srv/new-hdd/garage", false);
	bool_is(f, "storage.data1.read_only", true, "/etc/garage.toml:6");
	str_is(f, "storage.data1.path", "/srv/old-hdd/garage", "/etc/garage.toml:6");
	str_is(f, "storage.data2.path", "/srv/new-hdd/garage", "/etc/garage.toml:7");
	assert_null(ht_facts_get(f, "storage.data1.capacity"));
	/* "3T" = 3 x 1000^4 */
	int_is(f, "storage.data2.capacity", 3000000000000, "/etc/garage.toml:7");
	assert_string_equal(ht_test_fact(f, "storage.data2.capacity")->unit, "bytes");
	assert_null(ht_facts_get(f, "storage.data2.read_only"));
	assert_null(ht_facts_get(f, "storage.data3.path"));
	ht_facts_free(f);
}

/* The unit (in /usr/lib) names -c /srv/g.toml; a drop-in raises LimitNOFILE; 32-bit binary. */
static void test_unit_c(void **state)
{
	const char *root = tree("unit-c");
	struct ht_facts *f;

	(void)state;
	f = collect(root, NULL, false);
	str_is(f, "garage.unit", "/usr/lib/systemd/system/garage.service",
	       "systemd unit search path");
	/* 65536:524288 in the drop-in, applied after the unit's 42000: the soft limit */
	int_is(f, "garage.unit.nofile", 65536,
	       "/etc/systemd/system/garage.service.d/50-limits.conf:3");
	assert_string_equal(ht_test_fact(f, "garage.unit.nofile")->unit, "descriptors");
	str_is(f, "garage.config", "/srv/g.toml", "/usr/lib/systemd/system/garage.service:10 ExecStart=");
	/* /etc/garage.toml of this tree says /wrong/...: not read. */
	str_is(f, "garage.metadata_dir", "/var/lib/garage/meta", "/srv/g.toml:1");
	str_is(f, "garage.db_engine", "lmdb", "/srv/g.toml:3");
	int_is(f, "garage.rpc_port", 3911, "/srv/g.toml:6");
	int_is(f, "garage.s3_port", 3910, "/srv/g.toml:10");
	unavailable_is(f, "garage.web_port", ENOENT, "/srv/g.toml: no s3_web.bind_addr");
	unavailable_is(f, "garage.admin_port", ENOENT, "/srv/g.toml: no admin.api_bind_addr");
	str_is(f, "garage.binary", "/usr/local/bin/garage",
	       "/usr/lib/systemd/system/garage.service:10 ExecStart=");
	/* EI_CLASS 1: ELFCLASS32 */
	int_is(f, "garage.binary_bits", 32, "/usr/local/bin/garage ELF header (EI_CLASS)");
	str_is(f, "storage.list", "metadata data", "/srv/g.toml");
	check_call(0, root, "metadata", "metadata", "/var/lib/garage/meta", false);
	check_call(1, root, "data", "data", "/var/lib/garage/data", false);
	ht_facts_free(f);
}

/* ExecStart=-"/opt/garage/bin/garage" \ --config=PATH server, over two lines. */
static void test_unit_config_equals(void **state)
{
	const char *root = tree("unit-config-eq");
	struct ht_facts *f;

	(void)state;
	f = collect(root, NULL, false);
	str_is(f, "garage.unit", "/etc/systemd/system/garage.service", "systemd unit search path");
	str_is(f, "garage.config", "/etc/garage/garage.toml",
	       "/etc/systemd/system/garage.service:6 ExecStart=");
	/* The '-' prefix and the quotes are systemd's, not the path's. */
	str_is(f, "garage.binary", "/opt/garage/bin/garage",
	       "/etc/systemd/system/garage.service:6 ExecStart=");
	int_is(f, "garage.binary_bits", 64, "/opt/garage/bin/garage ELF header (EI_CLASS)");
	int_is(f, "garage.rpc_port", 3901, "/etc/garage/garage.toml:3");
	unavailable_is(f, "garage.s3_port", ENOENT, "/etc/garage/garage.toml: no s3_api.api_bind_addr");
	check_call(0, root, "metadata", "metadata", "/opt/garage/meta", false);
	check_call(1, root, "data", "data", "/opt/garage/data", false);
	ht_facts_free(f);
}

/* GARAGE_CONFIG_FILE in Environment=, after a drop-in's "Environment=" reset; a script as binary. */
static void test_unit_environment(void **state)
{
	const char *root = tree("unit-env");
	struct ht_facts *f;

	(void)state;
	f = collect(root, NULL, false);
	str_is(f, "garage.config", "/etc/garage/env.toml",
	       "/etc/systemd/system/garage.service.d/override.conf:4 "
	       "Environment=GARAGE_CONFIG_FILE");
	str_is(f, "garage.metadata_dir", "/srv/env/meta", "/etc/garage/env.toml:1");
	str_is(f, "garage.binary", "/usr/bin/garage", "/etc/systemd/system/garage.service:3 ExecStart=");
	/* "#!/bin/sh": not ELF */
	unavailable_is(f, "garage.binary_bits", EINVAL, "/usr/bin/garage ELF header (EI_CLASS)");
	ht_facts_free(f);
}

/* A drop-in resets ExecStart= (its -c goes) and sets GARAGE_CONFIG_FILE; a relative metadata_dir. */
static void test_unit_reset(void **state)
{
	const char *root = tree("unit-reset");
	struct ht_facts *f;

	(void)state;
	f = collect(root, NULL, false);
	str_is(f, "garage.config", "/etc/garage/new.toml",
	       "/etc/systemd/system/garage.service.d/10-exec.conf:4 Environment=GARAGE_CONFIG_FILE");
	str_is(f, "garage.binary", "/usr/bin/garage",
	       "/etc/systemd/system/garage.service.d/10-exec.conf:3 ExecStart=");
	unavailable_is(f, "garage.binary_bits", ENOENT, "/usr/bin/garage ELF header (EI_CLASS)");
	/* As written in the fact; from / (the service's working directory) for the probe. */
	str_is(f, "garage.metadata_dir", "meta", "/etc/garage/new.toml:1");
	int_is(f, "garage.rpc_port", 3901, "/etc/garage/new.toml:3");
	check_call(0, root, "metadata", "metadata", "/meta", false);
	check_call(1, root, "data", "data", "/srv/new/data", false);
	ht_facts_free(f);
}

/* --set garage.config wins over the unit's -c; a named file that does not exist is an error. */
static void test_named_config(void **state)
{
	const char *root = tree("unit-c");
	struct ht_garage_input in = { .config = "/etc/garage.toml" };
	struct ht_facts *f;
	struct ht_error err = { "" };

	(void)state;
	f = collect(root, &in, false);
	str_is(f, "garage.config", "/etc/garage.toml", "--set garage.config");
	str_is(f, "garage.metadata_dir", "/wrong/meta", "/etc/garage.toml:2");
	int_is(f, "garage.rpc_port", 1, "/etc/garage.toml:4");
	ht_facts_free(f);

	in.config = "/etc/nope.toml";
	f = ht_facts_new();
	assert_non_null(f);
	assert_int_equal(ht_collect_garage(f, root, &in, false, &err), -ENOENT);
	assert_string_equal(err.msg,
	                    "/etc/nope.toml: No such file or directory (named by --set garage.config)");
	ht_facts_free(f);
}

/* Before deployment: no garage.toml, no unit; the directories from the input. */
static void test_no_config(void **state)
{
	struct ht_garage_input in = { .config = "", .metadata_dir = "/data/ssd/meta",
		                      .data_dir = "/var/lib/garage/data" };
	struct ht_facts *f;

	(void)state;
	f = collect(scratch, &in, false);
	unavailable_is(f, "garage.config", ENOENT,
	               "/etc/garage.toml: no such file (Garage's default path)");
	str_is(f, "garage.metadata_dir", "/data/ssd/meta",
	       "the profile's garage.metadata_dir (no garage.toml)");
	str_is(f, "garage.data_dir", "/var/lib/garage/data",
	       "the profile's garage.data_dir (no garage.toml)");
	str_is(f, "garage.db_engine", "lmdb", "Garage default (reference-manual/configuration.md)");
	int_is(f, "garage.block_size", 1048576, "Garage default (reference-manual/configuration.md)");
	int_is(f, "garage.block_ram_buffer_max", 268435456,
	       "Garage default (reference-manual/configuration.md)");
	str_is(f, "garage.compression_level", "1", "Garage default (reference-manual/configuration.md)");
	unavailable_is(f, "garage.metadata_auto_snapshot_interval", ENOENT,
	               "Garage default (reference-manual/configuration.md): no snapshots");
#define PORTS "Garage's documented ports (reference-manual/configuration.md examples)"
	int_is(f, "garage.s3_port", 3900, PORTS);
	int_is(f, "garage.rpc_port", 3901, PORTS);
	/* [s3_web] and [admin] are bound only when garage.toml configures them. */
	unavailable_is(f, "garage.web_port", ENOENT,
	               "not configured: Garage binds it only when garage.toml sets [s3_web] "
	               "bind_addr");
	unavailable_is(f, "garage.admin_port", ENOENT,
	               "not configured: Garage binds it only when garage.toml sets [admin] "
	               "api_bind_addr");
	str_is(f, "storage.list", "metadata data", "garage.metadata_dir, garage.data_dir");
	assert_int_equal(ncalls, 2);
	check_call(0, scratch, "metadata", "metadata", "/data/ssd/meta", false);
	check_call(1, scratch, "data", "data", "/var/lib/garage/data", false);
	ht_facts_free(f);

	/*
	 * No input at all: the profile is the one place the directories are
	 * set, so none is known: unavailable, no storage fact, no probe.
	 */
	ncalls = 0;
	f = collect(scratch, NULL, false);
	unavailable_is(f, "garage.metadata_dir", ENOENT,
	               "no garage.toml, and the profile's garage.metadata_dir is empty");
	unavailable_is(f, "garage.data_dir", ENOENT,
	               "no garage.toml, and the profile's garage.data_dir is empty");
	str_is(f, "storage.list", "", "garage.metadata_dir, garage.data_dir");
	assert_int_equal(ncalls, 0);
	ht_facts_free(f);

	/* A unit whose -c names a file not there: unavailable, saying so, and the defaults. */
	put("/etc/systemd/system/garage.service",
	    "[Service]\nExecStart=/usr/local/bin/garage --config /etc/garage/main.toml server\n");
	put("/etc/garage.toml", "metadata_dir = \"/not/this\"\n");
	f = collect(scratch, &in, false);
	unavailable_is(f, "garage.config", ENOENT,
	               "/etc/garage/main.toml: no such file "
	               "(/etc/systemd/system/garage.service:2 ExecStart=)");
	str_is(f, "garage.metadata_dir", "/data/ssd/meta",
	       "the profile's garage.metadata_dir (no garage.toml)");
	ht_facts_free(f);
}

/* ELF headers: 32 and 64 from EI_CLASS; short, unknown class, not ELF. */
static void test_binary_bits(void **state)
{
	static const struct {
		const char *bytes;
		size_t len;
		int bits; /* 0: EINVAL */
	} cases[] = {
		{ "\177ELF\001", 5, 32 },
		{ "\177ELF\002\001\001\000", 8, 64 },
		{ "\177ELF", 4, 0 },           /* no class byte */
		{ "\177ELF\003", 5, 0 },       /* ELFCLASSNUM and beyond: none */
		{ "\177ELF\000", 5, 0 },       /* ELFCLASSNONE */
		{ "MZ\220\000\003", 5, 0 },    /* a PE executable */
		{ "", 0, 0 },
	};

	(void)state;
	put("/etc/garage.toml", "metadata_dir = \"/m\"\ndata_dir = \"/d\"\n"
	                        "rpc_bind_addr = \"[::]:3901\"\n");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ht_facts *f;

		put_bytes("/usr/bin/garage", cases[i].bytes, cases[i].len);
		f = collect(scratch, NULL, false);
		str_is(f, "garage.binary", "/usr/bin/garage",
		       "the first of /usr/local/bin/garage, /usr/bin/garage");
		if (cases[i].bits)
			int_is(f, "garage.binary_bits", cases[i].bits,
			       "/usr/bin/garage ELF header (EI_CLASS)");
		else
			unavailable_is(f, "garage.binary_bits", EINVAL,
			               "/usr/bin/garage ELF header (EI_CLASS)");
		ht_facts_free(f);
	}
}

/* Malformed garage.toml: what Garage would refuse, each with its message. */
static void test_malformed(void **state)
{
#define HEAD "metadata_dir = \"/m\"\ndata_dir = \"/d\"\nrpc_bind_addr = \"[::]:3901\"\n"
	static const struct {
		const char *text;
		const char *msg;
	} cases[] = {
		/* The TOML reader's own message. */
		{ "metadata_dir = /var/lib/garage/meta\n",
		  "/etc/garage.toml:1:16: expected a value, found '/'" },
		{ HEAD "block_size = \"ten\"\n",
		  "/etc/garage.toml:4: block_size: expected a size such as \"1M\" or \"10MiB\" "
		  "(units B, K, M, G, T, P and Ki, Mi, Gi, Ti, Pi, with or without a final B), "
		  "found \"ten\"" },
		{ HEAD "block_ram_buffer_max = -1\n",
		  "/etc/garage.toml:4: block_ram_buffer_max: expected a size in bytes (not negative), "
		  "found -1" },
		{ HEAD "block_size = true\n",
		  "/etc/garage.toml:4: block_size: expected an integer of bytes or a size such as "
		  "\"1M\" or \"10MiB\", found true" },
		{ "metadata_dir = \"/m\"\ndata_dir = \"/d\"\nrpc_bind_addr = \"0.0.0.0:70000\"\n",
		  "/etc/garage.toml:3: rpc_bind_addr: expected a port from 1 to 65535, found 70000" },
		{ "metadata_dir = \"/m\"\ndata_dir = \"/d\"\nrpc_bind_addr = \"[::]:0\"\n",
		  "/etc/garage.toml:3: rpc_bind_addr: expected a port from 1 to 65535, found 0" },
		{ "metadata_dir = \"/m\"\ndata_dir = \"/d\"\nrpc_bind_addr = \"garage.lan:3901\"\n",
		  "/etc/garage.toml:3: rpc_bind_addr: expected IP:PORT or [IPv6]:PORT, found "
		  "\"garage.lan:3901\"" },
		/* rpc_bind_addr is a SocketAddr: no Unix socket, unlike the HTTP endpoints. */
		{ "metadata_dir = \"/m\"\ndata_dir = \"/d\"\nrpc_bind_addr = \"/run/garage.sock\"\n",
		  "/etc/garage.toml:3: rpc_bind_addr: expected IP:PORT or [IPv6]:PORT, found "
		  "\"/run/garage.sock\"" },
		{ "metadata_dir = \"/m\"\ndata_dir = \"/d\"\nrpc_bind_addr = 3901\n",
		  "/etc/garage.toml:3: rpc_bind_addr: expected a string: IP:PORT or [IPv6]:PORT, "
		  "found 3901" },
		{ HEAD "[s3_api]\napi_bind_addr = \"[::1]3900\"\n",
		  "/etc/garage.toml:5: s3_api.api_bind_addr: expected IP:PORT, [IPv6]:PORT or a Unix "
		  "socket path, found \"[::1]3900\"" },
		{ HEAD "[admin]\napi_bind_addr = \"127.0.0.1:99999\"\n",
		  "/etc/garage.toml:5: admin.api_bind_addr: expected a port from 1 to 65535, found "
		  "99999" },
		{ "data_dir = \"/d\"\nrpc_bind_addr = \"[::]:3901\"\n",
		  "/etc/garage.toml: expected metadata_dir = \"DIR\" (Garage does not start without "
		  "it), found none" },
		/* Below a table header the key is the table's, not Garage's metadata_dir. */
		{ "data_dir = \"/d\"\n[s3_api]\nmetadata_dir = \"/m\"\n",
		  "/etc/garage.toml: expected metadata_dir = \"DIR\" (Garage does not start without "
		  "it), found none" },
		{ "metadata_dir = \"/m\"\nrpc_bind_addr = \"[::]:3901\"\n",
		  "/etc/garage.toml: expected data_dir = \"DIR\" or [[data_dir]] entries (Garage does "
		  "not start without it), found none" },
		{ "metadata_dir = \"/m\"\ndata_dir = \"/d\"\n",
		  "/etc/garage.toml: expected rpc_bind_addr = \"IP:PORT\" (Garage does not start "
		  "without it), found none" },
		{ "metadata_dir = \"/m\"\ndata_dir = 5\nrpc_bind_addr = \"[::]:3901\"\n",
		  "/etc/garage.toml:2: data_dir: expected a directory path or [[data_dir]] entries, "
		  "found 5" },
		{ "metadata_dir = \"/m\"\ndata_dir = [\"/d1\", \"/d2\"]\n",
		  "/etc/garage.toml:2: data_dir: expected a directory path or [[data_dir]] entries, "
		  "found an array of strings" },
		{ "metadata_dir = 7\ndata_dir = \"/d\"\n",
		  "/etc/garage.toml:1: metadata_dir: expected a directory path, found 7" },
		{ "metadata_dir = \"\"\ndata_dir = \"/d\"\n",
		  "/etc/garage.toml:1: metadata_dir: expected a directory path, found \"\"" },
		{ HEAD "db_engine = 1\n",
		  "/etc/garage.toml:4: db_engine: expected a string: \"lmdb\" or \"sqlite\", found 1" },
		{ HEAD "metadata_fsync = \"yes\"\n",
		  "/etc/garage.toml:4: metadata_fsync: expected true or false, found \"yes\"" },
		{ HEAD "compression_level = \"fast\"\n",
		  "/etc/garage.toml:4: compression_level: expected an integer or \"none\", found "
		  "\"fast\"" },
		{ HEAD "compression_level = 3000000000\n",
		  "/etc/garage.toml:4: compression_level: expected a level from -2147483648 to "
		  "2147483647 (zstd: -99 to 22), found 3000000000" },
		{ HEAD "metadata_auto_snapshot_interval = 6\n",
		  "/etc/garage.toml:4: metadata_auto_snapshot_interval: expected a duration string "
		  "such as \"6h\", found 6" },
		/* [[data_dir]] entries */
		{ "metadata_dir = \"/m\"\n\n[[data_dir]]\npath = \"/a\"\ncapacity = \"1T\"\n\n"
		  "[[data_dir]]\npath = \"/b\"\n",
		  "/etc/garage.toml:7: [[data_dir]]: expected capacity = \"SIZE\" in this entry "
		  "(Garage requires it unless read_only = true), found none" },
		{ "metadata_dir = \"/m\"\n[[data_dir]]\ncapacity = \"1T\"\n",
		  "/etc/garage.toml:2: [[data_dir]]: expected path = \"DIR\" in this entry (Garage "
		  "does not start without it), found none" },
		{ "metadata_dir = \"/m\"\n[[data_dir]]\npath = \"/a\"\ncapacity = 2000000000000\n",
		  "/etc/garage.toml:4: capacity: expected a string such as \"2T\" (Garage reads "
		  "capacity as a string), found 2000000000000" },
		{ "metadata_dir = \"/m\"\n[[data_dir]]\npath = \"/a\"\ncapacity = \"2 tera\"\n",
		  "/etc/garage.toml:4: capacity: expected a size such as \"1M\" or \"10MiB\" (units "
		  "B, K, M, G, T, P and Ki, Mi, Gi, Ti, Pi, with or without a final B), found "
		  "\"2 tera\"" },
		{ "metadata_dir = \"/m\"\n[[data_dir]]\npath = \"/a\"\ncapacity = \"99999999P\"\n",
		  "/etc/garage.toml:4: capacity: expected a size below 8 EiB, found \"99999999P\"" },
		{ "metadata_dir = \"/m\"\n[[data_dir]]\npath = \"/a\"\nread_only = 1\n",
		  "/etc/garage.toml:4: read_only: expected true or false, found 1" },
		/* data_dir written inline: each entry's message gives its own line */
		{ "metadata_dir = \"/m\"\ndata_dir = [\n  { path = \"/a\", capacity = \"1T\" },\n"
		  "  { path = \"/b\" },\n]\n",
		  "/etc/garage.toml:4: [[data_dir]]: expected capacity = \"SIZE\" in this entry "
		  "(Garage requires it unless read_only = true), found none" },
		{ "metadata_dir = \"/m\"\ndata_dir = [\n\n  { capacity = \"1T\" } ]\n",
		  "/etc/garage.toml:4: [[data_dir]]: expected path = \"DIR\" in this entry (Garage "
		  "does not start without it), found none" },
		{ "metadata_dir = \"/m\"\ndata_dir = [\n  { path = \"/a\", read_only = true },\n"
		  "  { path = \"/b\", capacity = 2000000000000 },\n]\n",
		  "/etc/garage.toml:4: capacity: expected a string such as \"2T\" (Garage reads "
		  "capacity as a string), found 2000000000000" },
		{ "metadata_dir = \"/m\"\ndata_dir = { path = \"/a\", capacity = \"1T\" }\n",
		  "/etc/garage.toml:2: data_dir: expected a directory path or [[data_dir]] entries, "
		  "found a table" },
		/* A static array: no [[data_dir]] appends to it (the TOML reader's message). */
		{ "metadata_dir = \"/m\"\ndata_dir = [ { path = \"/a\", capacity = \"1T\" } ]\n"
		  "[[data_dir]]\npath = \"/b\"\ncapacity = \"1T\"\n",
		  "/etc/garage.toml:3:3: expected a name not yet used for anything but [[...]], found "
		  "'data_dir' already defined at line 2 as an array of inline tables (a static array "
		  "cannot be appended to)" },
		{ "metadata_dir = \"/m\"\ndata_dir = [ \"/a\", { path = \"/b\" } ]\n",
		  "/etc/garage.toml:2:20: expected a string or ']' (this array holds strings), found "
		  "'{'" },
		/* Garage reads its file as UTF-8 text (read_to_string): so does the TOML reader. */
		{ "metadata_dir = \"/srv/caf\xe9\"\ndata_dir = \"/d\"\nrpc_bind_addr = \"[::]:3901\"\n",
		  "/etc/garage.toml:1:25: expected UTF-8 text, found byte 0xe9" },
		/* Control characters stay escaped: the message is one line. */
		{ HEAD "block_size = \"1\\nM\"\n",
		  "/etc/garage.toml:4: block_size: expected a size such as \"1M\" or \"10MiB\" "
		  "(units B, K, M, G, T, P and Ki, Mi, Gi, Ti, Pi, with or without a final B), "
		  "found \"1\\x0aM\"" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ht_facts *f = ht_facts_new();
		struct ht_error err = { "" };
		int r;

		assert_non_null(f);
		put("/etc/garage.toml", cases[i].text);
		r = ht_collect_garage(f, scratch, NULL, false, &err);
		if (r != -EINVAL || strcmp(err.msg, cases[i].msg) != 0)
			fail_msg("case %zu: %d '%s'\n  want -EINVAL '%s'", i, r, err.msg, cases[i].msg);
		ht_facts_free(f);
	}
}

/* A garage.toml that cannot be read: an error with the path, not a silent default. */
static void test_unreadable(void **state)
{
	struct ht_facts *f = ht_facts_new();
	struct ht_error err = { "" };
	_cleanup_free_ char *dir = ht_root_path(scratch, "/etc/garage.toml");

	(void)state;
	assert_non_null(f);
	assert_non_null(dir);
	put("/etc/placeholder", "");
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(ht_collect_garage(f, scratch, NULL, false, &err), -EISDIR);
	assert_string_equal(err.msg, "/etc/garage.toml: Is a directory");
	ht_facts_free(f);
}

/*
 * No LimitNOFILE= in the unit: the manager's DefaultLimitNOFILE= of
 * system.conf and system.conf.d (later drop-in names win), its soft limit;
 * the unit's own LimitNOFILE= still wins over it.
 */
static void test_default_limit_nofile(void **state)
{
	struct ht_facts *f;

	(void)state;
	put("/etc/garage.toml", "metadata_dir = \"/m\"\ndata_dir = \"/d\"\n"
	                        "rpc_bind_addr = \"[::]:3901\"\n");
	put("/etc/systemd/system/garage.service",
	    "[Service]\nExecStart=/usr/local/bin/garage server\n");
	put("/etc/systemd/system.conf", "[Manager]\n#DefaultLimitNOFILE=1024:524288\n"
	                                "DefaultLimitNOFILE=4096:524288\n"); /* 3 */
	f = collect(scratch, NULL, false);
	int_is(f, "garage.unit.nofile", 4096,
	       "/etc/systemd/system.conf:3 DefaultLimitNOFILE= (no LimitNOFILE= in garage.service "
	       "or its drop-ins)");
	ht_facts_free(f);

	/* A drop-in after it; one hidden by the same name in /etc; "infinity" soft. */
	put("/usr/lib/systemd/system.conf.d/50-vendor.conf",
	    "[Manager]\nDefaultLimitNOFILE=8192\n");
	put("/run/systemd/system.conf.d/60-site.conf",
	    "# site\n[Manager]\nDefaultLimitNOFILE=20000:40000\n"); /* 3 */
	put("/usr/lib/systemd/system.conf.d/60-site.conf", "[Manager]\nDefaultLimitNOFILE=1\n");
	f = collect(scratch, NULL, false);
	int_is(f, "garage.unit.nofile", 20000,
	       "/run/systemd/system.conf.d/60-site.conf:3 DefaultLimitNOFILE= (no LimitNOFILE= in "
	       "garage.service or its drop-ins)");
	ht_facts_free(f);
	put("/etc/systemd/system.conf.d/70-inf.conf", "[Manager]\nDefaultLimitNOFILE=infinity\n");
	f = collect(scratch, NULL, false);
	int_is(f, "garage.unit.nofile", INT64_MAX,
	       "/etc/systemd/system.conf.d/70-inf.conf:2 DefaultLimitNOFILE= (no LimitNOFILE= in "
	       "garage.service or its drop-ins)");
	ht_facts_free(f);

	/* The unit's LimitNOFILE= wins over the manager's default. */
	put("/etc/systemd/system/garage.service.d/limits.conf", "[Service]\nLimitNOFILE=42000\n");
	f = collect(scratch, NULL, false);
	int_is(f, "garage.unit.nofile", 42000, "/etc/systemd/system/garage.service.d/limits.conf:2");
	ht_facts_free(f);
}

/* Environment=GARAGE_CONFIG_FILE= (empty) is no path: Garage's default stands. */
static void test_empty_config_env(void **state)
{
	struct ht_facts *f;

	(void)state;
	put("/etc/garage.toml", "metadata_dir = \"/default/meta\"\ndata_dir = \"/d\"\n"
	                        "rpc_bind_addr = \"[::]:3901\"\n");
	put("/etc/garage/other.toml", "metadata_dir = \"/other/meta\"\ndata_dir = \"/d\"\n"
	                              "rpc_bind_addr = \"[::]:3901\"\n");
	put("/etc/systemd/system/garage.service",
	    "[Service]\nEnvironment=GARAGE_CONFIG_FILE=\nExecStart=/usr/bin/garage server\n");
	f = collect(scratch, NULL, false);
	str_is(f, "garage.config", "/etc/garage.toml", "Garage's default path");
	str_is(f, "garage.metadata_dir", "/default/meta", "/etc/garage.toml:1");
	ht_facts_free(f);

	/* An empty one after a set one clears it too. */
	put("/etc/systemd/system/garage.service",
	    "[Service]\nEnvironment=GARAGE_CONFIG_FILE=/etc/garage/other.toml\n"
	    "Environment=\"GARAGE_CONFIG_FILE=\" RUST_LOG=info\nExecStart=/usr/bin/garage server\n");
	f = collect(scratch, NULL, false);
	str_is(f, "garage.config", "/etc/garage.toml", "Garage's default path");
	ht_facts_free(f);

	/* A set one after the empty one is read. */
	put("/etc/systemd/system/garage.service",
	    "[Service]\nEnvironment=GARAGE_CONFIG_FILE=\n"
	    "Environment=GARAGE_CONFIG_FILE=/etc/garage/other.toml\nExecStart=/usr/bin/garage\n");
	f = collect(scratch, NULL, false);
	str_is(f, "garage.config", "/etc/garage/other.toml",
	       "/etc/systemd/system/garage.service:3 Environment=GARAGE_CONFIG_FILE");
	ht_facts_free(f);
}

/*
 * --set garage.config=REL: on the live host from the current directory;
 * under --root refused (no directory of the tree's host to take it from).
 */
static void test_relative_config(void **state)
{
	struct ht_garage_input in = { .config = "sub/rel.toml" };
	struct ht_facts *f;
	struct ht_error err = { "" };
	_cleanup_free_ char *want = NULL, *want_src = NULL, *old = getcwd(NULL, 0);

	(void)state;
	assert_non_null(old);
	put("/sub/rel.toml", "metadata_dir = \"/rel/meta\"\ndata_dir = \"/d\"\n"
	                     "rpc_bind_addr = \"[::]:3901\"\n");
	assert_true(asprintf(&want, "%s/sub/rel.toml", scratch) > 0);
	assert_true(asprintf(&want_src, "%s:1", want) > 0);
	assert_int_equal(chdir(scratch), 0);
	f = collect("/", &in, false);
	str_is(f, "garage.config", want, "--set garage.config");
	str_is(f, "garage.metadata_dir", "/rel/meta", want_src);
	ht_facts_free(f);
	f = collect(NULL, &in, false);
	str_is(f, "garage.config", want, "--set garage.config");
	ht_facts_free(f);
	assert_int_equal(chdir(old), 0);

	/* Under --root: refused, one line. */
	f = ht_facts_new();
	assert_non_null(f);
	assert_int_equal(ht_collect_garage(f, scratch, &in, false, &err), -EINVAL);
	assert_string_equal(err.msg,
	                    "--set garage.config=sub/rel.toml: expected an absolute path below --root");
	ht_facts_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single),
		cmocka_unit_test(test_multi),
		cmocka_unit_test(test_inline),
		cmocka_unit_test(test_unit_c),
		cmocka_unit_test(test_unit_config_equals),
		cmocka_unit_test(test_unit_environment),
		cmocka_unit_test(test_unit_reset),
		cmocka_unit_test(test_named_config),
		cmocka_unit_test_setup_teardown(test_no_config, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_binary_bits, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_malformed, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_unreadable, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_default_limit_nofile, scratch_setup,
		                                scratch_teardown),
		cmocka_unit_test_setup_teardown(test_empty_config_env, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_relative_config, scratch_setup, scratch_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
