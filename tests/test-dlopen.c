/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * shared/dlopen: a library loaded on first use with its symbol table filled
 * all or nothing, the result kept for later calls, and an error that names
 * the library and the symbol. libm stands for an optional library (this
 * test does not call libm directly; hosttune links it, which dlopen(3)
 * does not mind).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "shared/dlopen.h"

/* Declared for its type, never defined: no library has it. */
double ht_test_no_such_symbol(double x);

HT_DLSYM_DECLARE(cos);
HT_DLSYM_DECLARE(sqrt);
static const struct ht_dlsym m_syms[] = { HT_DLSYM(cos), HT_DLSYM(sqrt) };

HT_DLSYM_DECLARE(sin);
HT_DLSYM_DECLARE(ht_test_no_such_symbol);
static const struct ht_dlsym partial_syms[] = { HT_DLSYM(sin), HT_DLSYM(ht_test_no_such_symbol) };

HT_DLSYM_DECLARE(tan);
static const struct ht_dlsym absent_syms[] = { HT_DLSYM(tan) };

/* Every byte of @s is printable ASCII (a facts source may hold no control byte). */
static void assert_printable(const char *s)
{
	for (const char *p = s; *p; p++)
		assert_true(*p >= 0x20 && *p <= 0x7e);
}

static void test_loads(void **state)
{
	struct ht_dlib lib = HT_DLIB("libm.so.6", m_syms);

	assert_int_equal(lib.nsyms, 2);
	assert_string_equal(ht_dlopen_error(&lib), "");
	assert_null(sym_cos);
	assert_int_equal(ht_dlopen(&lib), 0);
	assert_non_null(sym_cos);
	assert_non_null(sym_sqrt);
	assert_true(sym_cos(0.0) == 1.0);
	assert_true(sym_sqrt(16.0) == 4.0);
	assert_string_equal(ht_dlopen_error(&lib), "");
	/* Later calls keep the first result and load nothing again. */
	assert_int_equal(ht_dlopen(&lib), 0);
	assert_int_equal(lib.state, 1);
}

static void test_absent_library(void **state)
{
	struct ht_dlib lib = HT_DLIB("libhosttune-test-absent.so.0", absent_syms);
	const char *why;

	assert_int_equal(ht_dlopen(&lib), -ENOENT);
	assert_null(sym_tan);
	why = ht_dlopen_error(&lib);
	assert_non_null(strstr(why, "libhosttune-test-absent.so.0"));
	assert_printable(why);
	/* Not tried again: the same error. */
	assert_int_equal(ht_dlopen(&lib), -ENOENT);
	assert_non_null(strstr(ht_dlopen_error(&lib), "libhosttune-test-absent.so.0"));
}

static void test_missing_symbol(void **state)
{
	struct ht_dlib lib = HT_DLIB("libm.so.6", partial_syms);
	const char *why;

	assert_int_equal(ht_dlopen(&lib), -ELIBACC);
	/* All or nothing: sin was found first and is NULL again. */
	assert_null(sym_sin);
	assert_null(sym_ht_test_no_such_symbol);
	assert_null(lib.handle);
	why = ht_dlopen_error(&lib);
	assert_non_null(strstr(why, "ht_test_no_such_symbol"));
	assert_non_null(strstr(why, "libm.so.6"));
	assert_printable(why);
	assert_int_equal(ht_dlopen(&lib), -ELIBACC);
}

static void test_bad_arguments(void **state)
{
	struct ht_dlib lib = { .soname = NULL };

	assert_int_equal(ht_dlopen(NULL), -EINVAL);
	assert_int_equal(ht_dlopen(&lib), -EINVAL);
	assert_string_equal(ht_dlopen_error(NULL), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loads),
		cmocka_unit_test(test_absent_library),
		cmocka_unit_test(test_missing_symbol),
		cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
