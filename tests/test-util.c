/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/facts.h"
#include "engine/value.h"
#include "shared/util.h"
#include "test-util.h"

const char *ht_test_fixtures_dir(void)
{
	const char *d = getenv("HT_FIXTURES_DIR");

	if (d && *d)
		return d;
#ifdef FIXTURES_DIR
	return FIXTURES_DIR;
#else
	return "tests/fixtures";
#endif
}

char *ht_test_tmp_dir(const char *name)
{
	const char *t = getenv("TMPDIR");
	char *d;

	assert_true(asprintf(&d, "%s/%s-XXXXXX", t && *t ? t : "/tmp", name) > 0);
	assert_non_null(mkdtemp(d));
	return d;
}

int ht_test_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void ht_test_rm_tree(const char *dir)
{
	assert_int_equal(nftw(dir, ht_test_rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* @dir/@rel as ht_root_path() joins them, newly allocated. */
static char *join(const char *dir, const char *rel)
{
	char *p = ht_root_path(dir, rel);

	assert_non_null(p);
	return p;
}

/* The directories of @path before its last component: every '/' but the first character. */
static void mkdir_parents(char *path)
{
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(path, 0755) < 0)
			assert_int_equal(errno, EEXIST);
		*s = '/';
	}
}

void ht_test_mkdirs(const char *dir, const char *rel)
{
	_cleanup_free_ char *p = join(dir, rel);

	mkdir_parents(p);
	if (mkdir(p, 0755) < 0)
		assert_int_equal(errno, EEXIST);
}

void ht_test_mkdir_parents(const char *dir, const char *rel)
{
	_cleanup_free_ char *p = join(dir, rel);

	mkdir_parents(p);
}

void ht_test_put_bytes(const char *dir, const char *rel, const void *data, size_t len)
{
	_cleanup_free_ char *p = join(dir, rel);
	_cleanup_close_ int fd = -1;

	mkdir_parents(p);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
}

void ht_test_put_file(const char *dir, const char *rel, const char *text)
{
	ht_test_put_bytes(dir, rel, text, strlen(text));
}

void ht_test_put_file_mode(const char *dir, const char *rel, const char *text, mode_t mode)
{
	_cleanup_free_ char *p = join(dir, rel);
	_cleanup_close_ int fd = -1;
	size_t len = strlen(text);

	mkdir_parents(p);
	if (unlink(p) < 0)
		assert_int_equal(errno, ENOENT);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
}

const struct ht_fact *ht_test_fact(const struct ht_facts *f, const char *name)
{
	const struct ht_fact *fact = ht_facts_get(f, name);

	if (!fact)
		fail_msg("fact %s missing", name);
	return fact;
}

void ht_test_fact_int(struct ht_facts *f, const char *name, int64_t i)
{
	struct ht_value v = ht_int(i);

	assert_int_equal(ht_facts_set(f, name, &v, NULL, NULL), 0);
}

void ht_test_assert_str_or_null(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}
