/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "shared/util.h"
#include "engine/value.h"

static struct ht_value str_value(const char *s)
{
	return (struct ht_value){ .type = HT_T_STR, .s = (char *)s };
}

static struct ht_value ver_value(unsigned n, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
	return (struct ht_value){
		.type = HT_T_VER,
		.v = { .part = { a, b, c, d }, .n = (uint8_t)n },
	};
}

/* Same type and same bits (decimals compared by representation, so -0.0 != 0.0). */
static bool same_value(const struct ht_value *a, const struct ht_value *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case HT_T_NONE:
		return true;
	case HT_T_INT:
		return a->i == b->i;
	case HT_T_DEC:
		return memcmp(&a->d, &b->d, sizeof(double)) == 0;
	case HT_T_BOOL:
		return a->b == b->b;
	case HT_T_STR:
		return strcmp(a->s, b->s) == 0;
	case HT_T_VER:
		return a->v.n == b->v.n &&
		       memcmp(a->v.part, b->v.part, a->v.n * sizeof(uint32_t)) == 0;
	}
	return false;
}

static void test_type_name(void **state)
{
	(void)state;
	assert_string_equal(ht_type_name(HT_T_INT), "number");
	assert_string_equal(ht_type_name(HT_T_DEC), "number");
	assert_string_equal(ht_type_name(HT_T_BOOL), "bool");
	assert_string_equal(ht_type_name(HT_T_STR), "string");
	assert_string_equal(ht_type_name(HT_T_VER), "version");
	assert_true(ht_type_is_number(HT_T_INT));
	assert_true(ht_type_is_number(HT_T_DEC));
	assert_false(ht_type_is_number(HT_T_BOOL));
	assert_false(ht_type_is_number(HT_T_NONE));
}

static void test_copy_clear(void **state)
{
	struct ht_value src = str_value("hello"), dst, i = ht_int(-7), none = { .type = HT_T_NONE };

	(void)state;
	assert_int_equal(ht_value_copy(&dst, &src), 0);
	assert_int_equal(dst.type, HT_T_STR);
	assert_ptr_not_equal(dst.s, src.s); /* a deep copy, not an alias */
	assert_string_equal(dst.s, "hello");
	ht_value_clear(&dst);
	assert_int_equal(dst.type, HT_T_NONE);
	ht_value_clear(&dst); /* clearing twice is harmless */
	ht_value_clear(NULL);

	assert_int_equal(ht_value_copy(&dst, &i), 0);
	assert_true(same_value(&dst, &i));
	assert_int_equal(ht_value_copy(&dst, &none), 0);
	assert_int_equal(dst.type, HT_T_NONE);
}

static void test_as_double(void **state)
{
	struct ht_value i = ht_int(-3), d = ht_dec(2.5), b = ht_bool(true);

	(void)state;
	assert_true(ht_value_as_double(&i) == -3.0);
	assert_true(ht_value_as_double(&d) == 2.5);
	assert_true(isnan(ht_value_as_double(&b)));
}

static void test_version_parse(void **state)
{
	struct ht_version v;
	const char *end;

	(void)state;
	assert_int_equal(ht_version_parse("5.15.0-91-generic", &v, &end), 0);
	assert_int_equal(v.n, 3);
	assert_int_equal(v.part[0], 5);
	assert_int_equal(v.part[1], 15);
	assert_int_equal(v.part[2], 0);
	assert_string_equal(end, "-91-generic");

	assert_int_equal(ht_version_parse("6.1", &v, &end), 0);
	assert_int_equal(v.n, 2);
	assert_int_equal(v.part[1], 1);
	assert_string_equal(end, "");

	/* A dot not followed by a digit ends the version and stays unconsumed. */
	assert_int_equal(ht_version_parse("5.", &v, &end), 0);
	assert_int_equal(v.n, 1);
	assert_string_equal(end, ".");
	assert_int_equal(ht_version_parse("4.19.x", &v, &end), 0);
	assert_int_equal(v.n, 2);
	assert_string_equal(end, ".x");

	assert_int_equal(ht_version_parse("1.2.3.4", &v, NULL), 0);
	assert_int_equal(v.n, 4);
	assert_int_equal(v.part[3], 4);
	assert_int_equal(ht_version_parse("4294967295", &v, NULL), 0); /* UINT32_MAX */
	assert_int_equal(v.part[0], UINT32_MAX);

	assert_int_equal(ht_version_parse("1.2.3.4.5", &v, NULL), -EINVAL);
	assert_int_equal(ht_version_parse("4294967296", &v, NULL), -ERANGE); /* UINT32_MAX + 1 */
	assert_int_equal(ht_version_parse("5.99999999999999999999", &v, NULL), -ERANGE);
	assert_int_equal(ht_version_parse("v5.15", &v, NULL), -EINVAL);
	assert_int_equal(ht_version_parse("", &v, NULL), -EINVAL);
	assert_int_equal(ht_version_parse(".5", &v, NULL), -EINVAL);
}

static int vcmp(const char *a, const char *b)
{
	struct ht_version va, vb;

	assert_int_equal(ht_version_parse(a, &va, NULL), 0);
	assert_int_equal(ht_version_parse(b, &vb, NULL), 0);
	return ht_version_cmp(&va, &vb);
}

static void test_version_cmp(void **state)
{
	(void)state;
	assert_true(vcmp("5.4", "5.15") < 0); /* numeric, not lexical */
	assert_true(vcmp("5.15", "5.4") > 0);
	assert_true(vcmp("5.15", "5.15.0") == 0);
	assert_true(vcmp("5.15.0.0", "5.15") == 0);
	assert_true(vcmp("5.15.1", "5.15") > 0);
	assert_true(vcmp("6", "5.99.99.99") > 0);
	assert_true(vcmp("3.14", "3.14.79") < 0);
	assert_true(vcmp("4294967295", "4294967294.9") > 0);
}

static void expect_format(struct ht_value v, const char *want)
{
	_cleanup_free_ char *s = ht_value_format(&v);

	assert_non_null(s);
	assert_string_equal(s, want);
}

static void test_format(void **state)
{
	(void)state;
	expect_format((struct ht_value){ .type = HT_T_NONE }, "unavailable");
	expect_format(ht_int(0), "0");
	expect_format(ht_int(-42), "-42");
	expect_format(ht_int(INT64_MAX), "9223372036854775807");
	expect_format(ht_int(INT64_MIN), "-9223372036854775808");
	expect_format(ht_bool(true), "true");
	expect_format(ht_bool(false), "false");

	/* Integral decimals keep a ".0" so they do not read back as integers. */
	expect_format(ht_dec(2.0), "2.0");
	expect_format(ht_dec(-0.0), "-0.0");
	expect_format(ht_dec(0.1), "0.1");
	expect_format(ht_dec(406.5), "406.5");
	expect_format(ht_dec(1e-300), "1e-300");
	expect_format(ht_dec(1e21), "1e+21");
	expect_format(ht_dec(0.1 + 0.2), "0.30000000000000004"); /* needs all 17 digits */
	expect_format(ht_dec(4096.0 / 120.0), "34.13333333333333"); /* 16 digits suffice */

	expect_format(ver_value(1, 6, 0, 0, 0), "v6");
	expect_format(ver_value(2, 5, 15, 0, 0), "v5.15");
	expect_format(ver_value(3, 5, 15, 0, 0), "v5.15.0");
	expect_format(ver_value(4, 1, 2, 3, 4294967295u), "v1.2.3.4294967295");

	expect_format(str_value(""), "\"\"");
	expect_format(str_value("plain"), "\"plain\"");
	expect_format(str_value("a\"b\\c"), "\"a\\\"b\\\\c\"");
	expect_format(str_value("l1\nl2\tx"), "\"l1\\nl2\\tx\"");
	expect_format(str_value("\x01\x1f\x7f"), "\"\\x01\\x1f\\x7f\"");
	/* Valid UTF-8 stays as it is; stray bytes are escaped. */
	expect_format(str_value("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7"),
	              "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7\"");
	expect_format(str_value("\xff\xc3("), "\"\\xff\\xc3(\"");
	expect_format(str_value("\xc0\xaf"), "\"\\xc0\\xaf\"");         /* overlong '/' */
	expect_format(str_value("\xed\xa0\x80"), "\"\\xed\\xa0\\x80\""); /* surrogate */
}

static void expect_roundtrip(struct ht_value v)
{
	_cleanup_free_ char *s = ht_value_format(&v);
	struct ht_value back;
	const char *end = NULL;

	assert_non_null(s);
	assert_int_equal(ht_value_parse(s, &back, &end), 0);
	assert_non_null(end);
	assert_int_equal(*end, '\0');
	if (!same_value(&v, &back))
		fail_msg("'%s' did not read back to the same value", s);
	ht_value_clear(&back);
}

/* xorshift64: a fixed sequence, so a failure reproduces. */
static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void test_roundtrip(void **state)
{
	static const int64_t ints[] = {
		0, 1, -1, 42, -42, 1024, INT64_MAX, INT64_MIN, INT64_MIN + 1, 9007199254740993,
	};
	static const double decs[] = { 0.0, -0.0, 0.1, 0.2, 0.1 + 0.2, 406.5, -406.5, 2.0,
		                       1e-300, 1e300, 5e-324, 1.7976931348623157e308, 1.0 / 3,
		                       34.1333, 9007199254740993.0, 123456789012345678.0 };
	static const char *const strs[] = {
		"", "x", "with space", "quote\"inside", "back\\slash", "\\\"", "new\nline",
		"tab\there", "\x01\x02\x1b[0m\x7f", "UTF-8: \xc3\xa9\xe2\x82\xac\xf0\x9f\x90\xa7",
		"bad UTF-8 \xff\xfe\x80", "\\x41 is not an escape here", "end\\",
	};
	uint64_t seed = 0x9e3779b97f4a7c15u;

	(void)state;
	for (size_t k = 0; k < ARRAY_SIZE(ints); k++)
		expect_roundtrip(ht_int(ints[k]));
	for (size_t k = 0; k < ARRAY_SIZE(decs); k++)
		expect_roundtrip(ht_dec(decs[k]));
	for (size_t k = 0; k < ARRAY_SIZE(strs); k++)
		expect_roundtrip(str_value(strs[k]));
	expect_roundtrip(ht_bool(true));
	expect_roundtrip(ht_bool(false));
	expect_roundtrip((struct ht_value){ .type = HT_T_NONE });
	for (unsigned n = 1; n <= 4; n++) {
		expect_roundtrip(ver_value(n, 5, 15, 0, 7));
		expect_roundtrip(ver_value(n, 0, 0, 0, 0));
		expect_roundtrip(ver_value(n, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX));
	}

	/* Random bit patterns cover every exponent and the 15/16/17-digit cases. */
	for (int k = 0; k < 20000; k++) {
		uint64_t bits = next_random(&seed);
		double d;

		memcpy(&d, &bits, sizeof(d));
		if (isfinite(d))
			expect_roundtrip(ht_dec(d));
		expect_roundtrip(ht_int((int64_t)bits));
	}
	/* Every single byte in a string. */
	for (int c = 1; c < 256; c++) {
		char s[4] = { 'a', (char)c, 'b', '\0' };

		expect_roundtrip(str_value(s));
	}
}

static void test_parse(void **state)
{
	struct ht_value v;
	const char *end;

	(void)state;
	/* Leading blanks skipped; end stops right after the token. */
	assert_int_equal(ht_value_parse("  \t42 bytes", &v, &end), 0);
	assert_int_equal(v.type, HT_T_INT);
	assert_int_equal(v.i, 42);
	assert_string_equal(end, " bytes");

	assert_int_equal(ht_value_parse("-0", &v, &end), 0);
	assert_int_equal(v.type, HT_T_INT);
	assert_int_equal(v.i, 0);

	assert_int_equal(ht_value_parse("2.0", &v, NULL), 0);
	assert_int_equal(v.type, HT_T_DEC);
	assert_true(v.d == 2.0);
	assert_int_equal(ht_value_parse("1e3", &v, NULL), 0); /* an exponent also means decimal */
	assert_int_equal(v.type, HT_T_DEC);
	assert_true(v.d == 1000.0);
	assert_int_equal(ht_value_parse("1.5E-2", &v, NULL), 0);
	assert_true(v.d == 0.015);

	assert_int_equal(ht_value_parse("\"a b\" from x", &v, &end), 0);
	assert_int_equal(v.type, HT_T_STR);
	assert_string_equal(v.s, "a b");
	assert_string_equal(end, " from x");
	ht_value_clear(&v);
	assert_int_equal(ht_value_parse("\"\\x41\\x7E\"", &v, NULL), 0); /* hex either case */
	assert_string_equal(v.s, "A~");
	ht_value_clear(&v);

	assert_int_equal(ht_value_parse("v5.15.0 (uname)", &v, &end), 0);
	assert_int_equal(v.type, HT_T_VER);
	assert_int_equal(v.v.n, 3);
	assert_string_equal(end, " (uname)");

	assert_int_equal(ht_value_parse("unavailable ENOENT", &v, &end), 0);
	assert_int_equal(v.type, HT_T_NONE);
	assert_string_equal(end, " ENOENT");

	assert_int_equal(ht_value_parse("false", &v, &end), 0);
	assert_int_equal(v.type, HT_T_BOOL);
	assert_false(v.b);
}

static void test_parse_errors(void **state)
{
	static const struct {
		const char *text;
		int ret;
	} cases[] = {
		{ "", -EINVAL },
		{ "   ", -EINVAL },
		{ "abc", -EINVAL },
		{ "True", -EINVAL },
		{ "truex", -EINVAL },         /* a keyword glued to more letters */
		{ "unavailablex", -EINVAL },
		{ "5x", -EINVAL },            /* a number glued to a word */
		{ "5.", -EINVAL },
		{ "5.5.5", -EINVAL },
		{ ".5", -EINVAL },
		{ "+5", -EINVAL },
		{ "--5", -EINVAL },
		{ "1e", -EINVAL },
		{ "0x10", -EINVAL },
		{ "inf", -EINVAL },
		{ "nan", -EINVAL },
		{ "1e999", -ERANGE },
		{ "9223372036854775808", -ERANGE },   /* INT64_MAX + 1 */
		{ "-9223372036854775809", -ERANGE },  /* INT64_MIN - 1 */
		{ "99999999999999999999999", -ERANGE },
		{ "v", -EINVAL },
		{ "v1.2.3.4.5", -EINVAL },
		{ "v4294967296", -ERANGE },
		{ "v5.15x", -EINVAL },
		{ "v5.15.", -EINVAL },
		{ "\"unterminated", -EINVAL },
		{ "\"bad \\q escape\"", -EINVAL },
		{ "\"\\x00\"", -EINVAL },     /* strings cannot hold NUL */
		{ "\"\\x4\"", -EINVAL },
		{ "\"\\xg0\"", -EINVAL },
		{ "\"trailing \\", -EINVAL },
		{ "\"raw\ttab\"", -EINVAL },  /* control characters must be escaped */
	};

	(void)state;
	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		struct ht_value v = ht_int(1);
		int r = ht_value_parse(cases[k].text, &v, NULL);

		if (r != cases[k].ret)
			fail_msg("'%s': got %d, want %d", cases[k].text, r, cases[k].ret);
		assert_int_equal(v.type, HT_T_NONE);
	}
}

static void expect_display(struct ht_value v, const char *want)
{
	_cleanup_free_ char *s = ht_value_display(&v);

	assert_non_null(s);
	assert_string_equal(s, want);
}

static void test_display(void **state)
{
	(void)state;
	expect_display(ht_dec(34.1333), "34.13");
	expect_display(ht_dec(4096.0 / 120.0), "34.13");
	expect_display(ht_dec(2.0), "2");
	expect_display(ht_dec(406.5), "406.5");
	expect_display(ht_dec(0.125), "0.12"); /* an exact tie: printf rounds it to even */
	expect_display(ht_dec(2.675), "2.67"); /* 2.675 is 2.67499999... in binary */
	expect_display(ht_dec(0.999), "1");
	expect_display(ht_dec(-1.5), "-1.5");
	expect_display(ht_dec(-0.001), "0"); /* not "-0" */
	expect_display(ht_dec(-0.0), "0");
	expect_display(ht_dec(1e-300), "0");
	expect_display(ht_dec(123456.789), "123456.79");
	expect_display(ht_dec(1e20), "1e+20");
	expect_display(ht_int(INT64_MIN), "-9223372036854775808");
	expect_display(ht_int(65536), "65536");
	expect_display(ht_bool(true), "true");
	expect_display(str_value("a \"quoted\"\nline"), "a \"quoted\"\nline");
	expect_display(ver_value(3, 5, 15, 0, 0), "5.15.0");
	expect_display(ver_value(2, 6, 1, 0, 0), "6.1");
	expect_display((struct ht_value){ .type = HT_T_NONE }, "unavailable");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_type_name),     cmocka_unit_test(test_copy_clear),
		cmocka_unit_test(test_as_double),     cmocka_unit_test(test_version_parse),
		cmocka_unit_test(test_version_cmp),   cmocka_unit_test(test_format),
		cmocka_unit_test(test_roundtrip),     cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_errors),  cmocka_unit_test(test_display),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
