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

#include "engine/expr.h"
#include "shared/util.h"
#include "engine/value.h"

/* Every expression sits at column 10 of line 3, so an error at byte offset N shows column 10+N. */
static const struct ht_srcpos tpos = { "t.rules", 3, 10 };

#define UNAVAIL "net.netfilter.nf_conntrack_count"

static const struct fact {
	const char *name;
	struct ht_value value; /* HT_T_NONE: the fact exists but has no value on this host */
	enum ht_type static_type;
} facts[] = {
	{ "mem.total", { .type = HT_T_INT, .i = INT64_C(25769803776) }, HT_T_INT }, /* 24 GiB */
	{ "cpu.count", { .type = HT_T_INT, .i = 8 }, HT_T_INT },
	{ "workload.mem_budget", { .type = HT_T_DEC, .d = 0.05 }, HT_T_DEC },
	{ "kernel.version", { .type = HT_T_VER, .v = { { 5, 15, 0, 0 }, 3 } }, HT_T_VER },
	{ "kernel.release", { .type = HT_T_STR, .s = (char *)"5.15.0-91-generic" }, HT_T_STR },
	{ "cpu.aes.flag", { .type = HT_T_BOOL, .b = true }, HT_T_BOOL },
	{ "big", { .type = HT_T_INT, .i = INT64_MAX }, HT_T_INT },
	{ "small", { .type = HT_T_INT, .i = INT64_MIN }, HT_T_INT },
	{ "zero", { .type = HT_T_INT, .i = 0 }, HT_T_INT },
	{ UNAVAIL, { .type = HT_T_NONE }, HT_T_INT },
	/* Typed as a number but holds a string: only evaluation can catch that. */
	{ "liar", { .type = HT_T_STR, .s = (char *)"x" }, HT_T_INT },
};

static const struct fact *find_fact(const char *name)
{
	for (size_t k = 0; k < ARRAY_SIZE(facts); k++)
		if (strcmp(facts[k].name, name) == 0)
			return &facts[k];
	return NULL;
}

static unsigned lookups_of_unavailable;

static int lookup(const char *name, const struct ht_srcpos *pos, struct ht_value *out,
                  struct ht_error *err, void *userdata)
{
	const struct fact *f = find_fact(name);

	(void)userdata;
	/* Stands for another rule whose own evaluation failed and said why. */
	if (strcmp(name, "rule.broken") == 0)
		return ht_error_set(err, EIO, "rules/other.rules:7:2: something went wrong");
	if (strcmp(name, "rule.silent") == 0)
		return -EIO;
	if (!f)
		return -ENOENT;
	if (f->value.type == HT_T_NONE) {
		lookups_of_unavailable++;
		return -ENODATA;
	}
	assert_non_null(pos);
	return ht_value_copy(out, &f->value);
}

static int type_of(const char *name, const struct ht_srcpos *pos, enum ht_type *type,
                   struct ht_error *err, void *userdata)
{
	const struct fact *f = find_fact(name);

	(void)pos;
	(void)userdata;
	if (strcmp(name, "rule.broken") == 0)
		return ht_error_set(err, EIO, "rules/other.rules:7:2: cycle through 'rule.broken'");
	if (!f)
		return -ENOENT;
	*type = f->static_type;
	return 0;
}

/* Parses, optionally type-checks, and evaluates; the first failure wins. */
static int run(const char *text, bool typecheck, struct ht_value *out, struct ht_error *err)
{
	struct ht_expr *e = NULL;
	enum ht_type t = HT_T_NONE;
	int r;

	*out = (struct ht_value){ .type = HT_T_NONE };
	err->msg[0] = '\0';
	r = ht_expr_parse(text, &tpos, &e, err);
	if (r < 0)
		return r;
	if (typecheck)
		r = ht_expr_check(e, type_of, NULL, &t, err);
	if (r == 0)
		r = ht_expr_eval(e, lookup, NULL, out, err);
	/* The static type has to predict the run-time one. */
	if (r == 0 && typecheck) {
		enum ht_type rt = ht_type_is_number(out->type) ? HT_T_INT : out->type;

		if (rt != t)
			fail_msg("%s: static type %s, run-time type %s", text, ht_type_name(t),
			         ht_type_name(out->type));
	}
	ht_expr_free(e);
	return r;
}

static void get(int line, const char *text, struct ht_value *v)
{
	struct ht_error err;
	int r = run(text, true, v, &err);

	if (r < 0)
		fail_msg("line %d: %s: error %d: %s", line, text, r, err.msg);
}

#define EXPECT_INT(text, want) expect_int(__LINE__, text, want)
static void expect_int(int line, const char *text, int64_t want)
{
	struct ht_value v;

	get(line, text, &v);
	if (v.type != HT_T_INT || v.i != want) {
		_cleanup_free_ char *s = ht_value_format(&v);

		fail_msg("line %d: %s: got %s, want integer %" PRId64, line, text, s, want);
	}
}

#define EXPECT_DEC(text, want) expect_dec(__LINE__, text, want)
static void expect_dec(int line, const char *text, double want)
{
	struct ht_value v;

	get(line, text, &v);
	if (v.type != HT_T_DEC || v.d != want) {
		_cleanup_free_ char *s = ht_value_format(&v);

		fail_msg("line %d: %s: got %s, want decimal %.17g", line, text, s, want);
	}
}

#define EXPECT_BOOL(text, want) expect_bool(__LINE__, text, want)
static void expect_bool(int line, const char *text, bool want)
{
	struct ht_value v;

	get(line, text, &v);
	if (v.type != HT_T_BOOL || v.b != want) {
		_cleanup_free_ char *s = ht_value_format(&v);

		fail_msg("line %d: %s: got %s, want %s", line, text, s, want ? "true" : "false");
	}
}

#define EXPECT_STR(text, want) expect_str(__LINE__, text, want)
static void expect_str(int line, const char *text, const char *want)
{
	struct ht_value v;

	get(line, text, &v);
	if (v.type != HT_T_STR || strcmp(v.s, want) != 0) {
		_cleanup_free_ char *s = ht_value_format(&v);

		fail_msg("line %d: %s: got %s, want string \"%s\"", line, text, s, want);
	}
	ht_value_clear(&v);
}

#define EXPECT_ERR(text, want_r, want_msg) expect_err(__LINE__, text, true, want_r, want_msg)
/* Without the static check, so that evaluation meets the mistake itself. */
#define EXPECT_EVAL_ERR(text, want_r, want_msg) expect_err(__LINE__, text, false, want_r, want_msg)
static void expect_err(int line, const char *text, bool typecheck, int want_r,
                       const char *want_msg)
{
	struct ht_value v;
	struct ht_error err;
	int r = run(text, typecheck, &v, &err);

	if (r != want_r || strcmp(err.msg, want_msg) != 0)
		fail_msg("line %d: %s:\n  got  %d \"%s\"\n  want %d \"%s\"", line, text, r, err.msg,
		         want_r, want_msg);
	assert_int_equal(v.type, HT_T_NONE);
}

static void test_literals(void **state)
{
	(void)state;
	EXPECT_INT("42", 42);
	EXPECT_INT("0", 0);
	EXPECT_INT("007", 7);
	EXPECT_INT("9223372036854775807", INT64_MAX);
	EXPECT_DEC("0.05", 0.05);
	EXPECT_DEC("2.0", 2.0); /* a decimal point makes a decimal, even when integral */
	EXPECT_BOOL("true", true);
	EXPECT_BOOL("false", false);
	EXPECT_STR("\"text\"", "text");
	EXPECT_STR("\"\"", "");
	EXPECT_STR("\"say \\\"hi\\\"\"", "say \"hi\"");
	EXPECT_STR("\"a\\\\b\\nc\\td\"", "a\\b\nc\td");
	EXPECT_STR("\"caf\xc3\xa9\"", "caf\xc3\xa9");
	EXPECT_STR("kernel.release", "5.15.0-91-generic");
	EXPECT_INT("  \t 5  ", 5);
}

static void test_units(void **state)
{
	(void)state;
	EXPECT_INT("30s", 30);
	EXPECT_INT("2min", 120);  /* 2 * 60 */
	EXPECT_INT("1h", 3600);   /* 60 * 60 */
	EXPECT_INT("1h + 30min", 5400); /* 3600 + 1800 */
	/* systemd.time(7): m is a minute; d, w; a span of parts, with or without blanks. */
	EXPECT_INT("5m", 300);          /* 5 * 60 */
	EXPECT_INT("1d", 86400);        /* 24 * 3600 */
	EXPECT_INT("1w", 604800);       /* 7 * 86400 */
	EXPECT_INT("1h 30min", 5400);   /* 3600 + 30 * 60 */
	EXPECT_INT("2min 5s", 125);     /* 120 + 5 */
	EXPECT_INT("1h30m", 5400);      /* 3600 + 1800 */
	EXPECT_INT("1h 30min * 2", 10800); /* the span is one literal: (3600 + 1800) * 2 */
	EXPECT_INT("1h + 2min 5s", 3725);  /* 3600 + 125 */
	EXPECT_INT("512KiB", 524288);         /* 512 * 1024 */
	EXPECT_INT("480MiB", 503316480);      /* 480 * 1048576 */
	EXPECT_INT("4GiB", 4294967296);       /* 4 * 1073741824 */
	EXPECT_INT("1TiB", 1099511627776);    /* 1024^4 */
	EXPECT_INT("1.5GiB", 1610612736);     /* 1.5 * 1073741824 = 1073741824 + 536870912 */
	EXPECT_INT("0.5KiB", 512);            /* 1024 / 2 */
	EXPECT_INT("1.5min", 90);             /* 1.5 * 60 */
	EXPECT_INT("2.50000000000000000000000min", 150); /* 2.5 * 60; extra zeros do not matter */
	EXPECT_INT("0.25h", 900);             /* 3600 / 4 */
	EXPECT_DEC("0.5s", 0.5);              /* not integral: stays a decimal */
	EXPECT_DEC("1.1GiB", 1.1 * 1073741824.0); /* 1181116006.4 */
	EXPECT_INT("8388607TiB", INT64_C(9223370937343148032)); /* (2^23 - 1) * 2^40 */
	EXPECT_INT("24GiB == mem.total ? 1 : 0", 1); /* 24 * 2^30 = 25769803776 */
}

static void test_versions(void **state)
{
	struct ht_value v;

	(void)state;
	get(__LINE__, "v5.15.0", &v);
	assert_int_equal(v.type, HT_T_VER);
	assert_int_equal(v.v.n, 3);
	assert_int_equal(v.v.part[1], 15);
	get(__LINE__, "v6", &v);
	assert_int_equal(v.v.n, 1);
	get(__LINE__, "v1.2.3.4", &v);
	assert_int_equal(v.v.n, 4);

	EXPECT_BOOL("v5.4 < v5.15", true); /* numeric parts, not text */
	EXPECT_BOOL("v5.15 == v5.15.0", true);
	EXPECT_BOOL("v5.15 != v5.15.1", true);
	EXPECT_BOOL("v5.15.1 > v5.15", true);
	EXPECT_BOOL("v6.1 >= v5.15", true);
	EXPECT_BOOL("v3.14 <= v3.14.0.0", true);
	EXPECT_BOOL("kernel.version >= v5.15", true);
	EXPECT_BOOL("kernel.version < v5.15", false);
	EXPECT_INT("kernel.version >= v5.15 ? 1 : 4", 1);
}

static void test_arithmetic(void **state)
{
	(void)state;
	EXPECT_INT("2 + 3", 5);
	EXPECT_INT("2 - 3", -1);
	EXPECT_INT("6 * 7", 42);
	EXPECT_INT("17 % 5", 2);
	EXPECT_INT("-17 % 5", -2); /* the sign follows the dividend, as in C */
	EXPECT_INT("17 % -5", 2);
	EXPECT_INT("small % -1", 0); /* INT64_MIN % -1 is 0, not a trap */
	EXPECT_INT("-5", -5);
	EXPECT_INT("--5", 5);
	EXPECT_INT("-(2 - 7)", 5);
	EXPECT_INT("-9223372036854775808", INT64_MIN); /* the literal folds with its sign */
	EXPECT_BOOL("-9223372036854775808 == small", true);
	EXPECT_INT("- 9223372036854775807 - 1", INT64_MIN);
	EXPECT_INT("big - 1 + 1", INT64_MAX);
	EXPECT_INT("small + big", -1); /* -2^63 + 2^63 - 1 */
	EXPECT_INT("mem.total / cpu.count", 3221225472); /* 25769803776 / 8 */

	/* Decimals spread: any decimal operand gives a decimal. */
	EXPECT_DEC("1 + 0.5", 1.5);
	EXPECT_DEC("2 * 0.5", 1.0);
	EXPECT_DEC("0.5 - 1", -0.5);
	EXPECT_DEC("-0.25", -0.25);
	EXPECT_DEC("1.5 / 0.5", 3.0);
	EXPECT_DEC("mem.total * workload.mem_budget", 25769803776.0 * 0.05); /* ~1288490188.8 */
}

static void test_division(void **state)
{
	(void)state;
	EXPECT_DEC("4096 / 120", 4096.0 / 120.0); /* 34.1333...: remainder 16, so a decimal */
	EXPECT_INT("floor(4096 / 120)", 34);       /* 120 * 34 = 4080 <= 4096 < 4200 */
	EXPECT_INT("ceil(4096 / 120)", 35);
	EXPECT_INT("4096 / 4096", 1);              /* exact: stays an integer */
	EXPECT_INT("4096 / 512", 8);
	EXPECT_INT("-4096 / 512", -8);
	EXPECT_DEC("7 / 2", 3.5);
	EXPECT_DEC("-7 / 2", -3.5);
	EXPECT_DEC("1 / 3", 1.0 / 3.0);
	EXPECT_INT("small / 2", INT64_MIN / 2);
	EXPECT_DEC("big / 2", 4611686018427387903.5); /* rounds to 2^62 as a double */
	EXPECT_INT("100 / 10 / 5", 2);             /* left-assoc: (100 / 10) / 5 */
}

static void test_precedence(void **state)
{
	(void)state;
	EXPECT_INT("10 - 4 - 3", 3);      /* (10 - 4) - 3, not 10 - (4 - 3) = 9 */
	EXPECT_INT("2 * 3 + 4", 10);      /* (2 * 3) + 4 */
	EXPECT_INT("2 + 3 * 4", 14);      /* 2 + (3 * 4) */
	EXPECT_INT("(2 + 3) * 4", 20);
	EXPECT_INT("20 % 6 * 2", 4);      /* (20 % 6) * 2 = 2 * 2 */
	EXPECT_INT("2 * 20 % 6", 4);      /* (2 * 20) % 6 = 40 % 6 */
	EXPECT_INT("-2 * 3", -6);
	EXPECT_INT("-2 - -3", 1);
	EXPECT_BOOL("1 + 1 == 2", true);  /* + binds tighter than == */
	EXPECT_BOOL("1 < 2 == 2 < 3", true); /* (1 < 2) == (2 < 3) */
	EXPECT_BOOL("true || false && false", true);  /* true || (false && false) */
	EXPECT_BOOL("(true || false) && false", false);
	EXPECT_BOOL("!false && false", false); /* (!false) && false */
	EXPECT_BOOL("!(false && false)", true);
	EXPECT_BOOL("false == false == true", true); /* (false == false) == true */
	EXPECT_INT("1 < 2 ? 10 : 20", 10);
	EXPECT_INT("true || false ? 1 : 2", 1);
	/* ?: is right-associative: a ? b : c ? d : e is a ? b : (c ? d : e). */
	EXPECT_INT("true ? 1 : true ? 2 : 3", 1);
	EXPECT_INT("false ? 1 : true ? 2 : 3", 2);
	EXPECT_INT("false ? 1 : false ? 2 : 3", 3);
	EXPECT_INT("true ? false ? 1 : 2 : 3", 2); /* true ? (false ? 1 : 2) : 3 */
	EXPECT_INT("1 + (true ? 2 : 3) * 4", 9);   /* 1 + 2 * 4 */
}

static void test_comparisons(void **state)
{
	(void)state;
	EXPECT_BOOL("1 < 2", true);
	EXPECT_BOOL("2 < 2", false);
	EXPECT_BOOL("2 <= 2", true);
	EXPECT_BOOL("3 <= 2", false);
	EXPECT_BOOL("3 > 2", true);
	EXPECT_BOOL("2 > 2", false);
	EXPECT_BOOL("2 >= 2", true);
	EXPECT_BOOL("1 >= 2", false);
	EXPECT_BOOL("2 == 2", true);
	EXPECT_BOOL("2 != 2", false);
	EXPECT_BOOL("small < big", true);

	/* Integers and decimals compare exactly, in both orders. */
	EXPECT_BOOL("1 == 1.0", true);
	EXPECT_BOOL("1.0 == 1", true);
	EXPECT_BOOL("2 > 1.5", true);
	EXPECT_BOOL("1.5 < 2", true);
	EXPECT_BOOL("-2 < -1.5", true);
	EXPECT_BOOL("-1 > -1.5", true);
	EXPECT_BOOL("4096 / 120 > 34", true);
	EXPECT_BOOL("4096 / 120 < 35", true);
	/* 2^53 + 1 is not a double: converting it would make the two equal. */
	EXPECT_BOOL("9007199254740993 == 9007199254740992.0", false);
	EXPECT_BOOL("9007199254740993 != 9007199254740992.0", true);
	EXPECT_BOOL("9007199254740993 > 9007199254740992.0", true);
	EXPECT_BOOL("9007199254740992.0 < 9007199254740993", true);
	EXPECT_BOOL("9007199254740992 == 9007199254740992.0", true);
	/* big is 2^63 - 1; 9223372036854775807.0 rounds to 2^63, which is larger. */
	EXPECT_BOOL("big < 9223372036854775807.0", true);
	EXPECT_BOOL("big == 9223372036854775807.0", false);
	EXPECT_BOOL("small == -9223372036854775808.0", true); /* -2^63 is exact */
	EXPECT_BOOL("small > -9223372036854777856.0", true);  /* the next double below */
	EXPECT_BOOL("0 == -0.0", true);
	EXPECT_BOOL("mem.total * workload.mem_budget > 1288490188", true); /* .8 above */

	EXPECT_BOOL("\"a\" == \"a\"", true);
	EXPECT_BOOL("\"a\" != \"b\"", true);
	EXPECT_BOOL("\"a\" == \"ab\"", false);
	EXPECT_BOOL("kernel.release == \"5.15.0-91-generic\"", true);
	EXPECT_BOOL("true == true", true);
	EXPECT_BOOL("true != false", true);
	EXPECT_BOOL("cpu.aes.flag == true", true);
}

static void test_logic(void **state)
{
	(void)state;
	EXPECT_BOOL("true && true", true);
	EXPECT_BOOL("true && false", false);
	EXPECT_BOOL("false && true", false);
	EXPECT_BOOL("false && false", false);
	EXPECT_BOOL("true || true", true);
	EXPECT_BOOL("true || false", true);
	EXPECT_BOOL("false || true", true);
	EXPECT_BOOL("false || false", false);
	EXPECT_BOOL("!true", false);
	EXPECT_BOOL("!!true", true);
	EXPECT_BOOL("!cpu.aes.flag", false);
}

static void test_short_circuit(void **state)
{
	(void)state;
	lookups_of_unavailable = 0;
	EXPECT_BOOL("false && " UNAVAIL " > 0", false);
	EXPECT_BOOL("true || " UNAVAIL " > 0", true);
	EXPECT_INT("true ? 1 : " UNAVAIL, 1);
	EXPECT_INT("false ? " UNAVAIL " : 2", 2);
	EXPECT_INT("available(" UNAVAIL ") ? " UNAVAIL " : 0", 0);
	assert_int_equal(lookups_of_unavailable, 1); /* only the available() call looked */
	EXPECT_BOOL("available(" UNAVAIL ")", false);
	EXPECT_BOOL("available(mem.total)", true);
	EXPECT_BOOL("available(kernel.release)", true); /* any type */
	EXPECT_BOOL("!available(" UNAVAIL ") || " UNAVAIL " < 10", true);

	EXPECT_ERR("true && " UNAVAIL " > 0", -ENODATA,
	           "t.rules:3:18: '" UNAVAIL "' is unavailable");
	EXPECT_ERR("false ? 1 : " UNAVAIL, -ENODATA, "t.rules:3:22: '" UNAVAIL "' is unavailable");
}

static void test_functions(void **state)
{
	(void)state;
	EXPECT_INT("min(3, 1, 2)", 1);
	EXPECT_INT("max(3, 1, 2)", 3);
	EXPECT_INT("min(5, 9)", 5);
	EXPECT_INT("max(-5, -9)", -5);
	EXPECT_INT("min(small, big)", INT64_MIN);
	EXPECT_DEC("min(1, 2.5)", 1.0); /* a decimal operand makes the result a decimal */
	EXPECT_DEC("max(1, 2.5)", 2.5);
	EXPECT_INT("max(32768 * cpu.count, 131072)", 262144); /* kube-proxy: 32768 * 8 */

	EXPECT_INT("clamp(5, 1, 10)", 5);
	EXPECT_INT("clamp(-5, 1, 10)", 1);
	EXPECT_INT("clamp(50, 1, 10)", 10);
	EXPECT_INT("clamp(7, 7, 7)", 7);
	EXPECT_DEC("clamp(4096 / 120, 1, 10)", 10.0);
	EXPECT_ERR("clamp(5, 10, 1)", -EDOM, "t.rules:3:10: clamp() needs lo <= hi, got 10 and 1");

	EXPECT_INT("pow2ceil(4097)", 8192);  /* 2^12 = 4096 < 4097 <= 2^13 */
	EXPECT_INT("pow2ceil(4096)", 4096);  /* already a power of two */
	EXPECT_INT("pow2ceil(0)", 1);
	EXPECT_INT("pow2ceil(1)", 1);
	EXPECT_INT("pow2ceil(-7)", 1);
	EXPECT_INT("pow2ceil(3)", 4);
	EXPECT_INT("pow2ceil(4096 / 120)", 64);   /* 32 < 34.13 <= 64 */
	EXPECT_INT("pow2ceil(0.5)", 1);
	EXPECT_INT("pow2ceil(4611686018427387904)", INT64_C(4611686018427387904)); /* 2^62 */

	EXPECT_INT("pow2floor(24 * 1048576 / 320)", 65536); /* 25165824 / 320 = 78643.2; 2^16 */
	EXPECT_INT("pow2floor(1)", 1);
	EXPECT_INT("pow2floor(1.5)", 1);
	EXPECT_INT("pow2floor(4096)", 4096);
	EXPECT_INT("pow2floor(8191)", 4096);
	EXPECT_INT("pow2floor(big)", INT64_C(4611686018427387904)); /* 2^62 <= 2^63 - 1 */

	EXPECT_INT("floor(3.7)", 3);
	EXPECT_INT("floor(-3.5)", -4);
	EXPECT_INT("ceil(3.2)", 4);
	EXPECT_INT("ceil(-3.5)", -3);
	EXPECT_INT("ceil(7)", 7); /* integers pass through */
	EXPECT_INT("floor(small)", INT64_MIN);
	EXPECT_INT("round(2.5)", 3);   /* halves round away from zero */
	EXPECT_INT("round(-2.5)", -3);
	EXPECT_INT("round(2.49)", 2);
	EXPECT_INT("round(4096 / 120)", 34);
	EXPECT_INT("round(-9223372036854775808.0)", INT64_MIN);
	EXPECT_INT("abs(-5)", 5);
	EXPECT_INT("abs(5)", 5);
	EXPECT_INT("abs(big)", INT64_MAX);
	EXPECT_DEC("abs(-2.5)", 2.5);

	EXPECT_INT("min(max(1, 2), clamp(9, 0, 3))", 2);
	EXPECT_INT("floor(mem.total * workload.mem_budget / 320)", 4026531); /* 1288490188.8/320 */
}

static void test_overflow(void **state)
{
	(void)state;
	EXPECT_ERR("9223372036854775807 + 1", -ERANGE, "t.rules:3:30: integer overflow in '+'");
	EXPECT_ERR("big + 1", -ERANGE, "t.rules:3:14: integer overflow in '+'");
	EXPECT_ERR("small - 1", -ERANGE, "t.rules:3:16: integer overflow in '-'");
	EXPECT_ERR("-9223372036854775807 - 2", -ERANGE, "t.rules:3:31: integer overflow in '-'");
	EXPECT_ERR("4611686018427387904 * 2", -ERANGE, "t.rules:3:30: integer overflow in '*'");
	EXPECT_ERR("small * -1", -ERANGE, "t.rules:3:16: integer overflow in '*'");
	EXPECT_ERR("-small", -ERANGE, "t.rules:3:10: integer overflow in '-'");
	EXPECT_ERR("--9223372036854775808", -ERANGE, "t.rules:3:10: integer overflow in '-'");
	EXPECT_ERR("small / -1", -ERANGE, "t.rules:3:16: integer overflow in '/'");
	EXPECT_ERR("abs(small)", -ERANGE, "t.rules:3:10: integer overflow in abs()");
	EXPECT_ERR("pow2ceil(4611686018427387905)", -ERANGE,
	           "t.rules:3:10: integer overflow in pow2ceil()"); /* would be 2^63 */
	EXPECT_ERR("pow2ceil(5000000000000000000.0)", -ERANGE,
	           "t.rules:3:10: integer overflow in pow2ceil()");
	EXPECT_ERR("floor(9223372036854775807.0)", -ERANGE,
	           "t.rules:3:10: integer overflow in floor()"); /* the double is 2^63 */

	/* Literals. */
	EXPECT_ERR("9223372036854775808", -ERANGE, "t.rules:3:10: integer literal out of range");
	EXPECT_ERR("1 + 9223372036854775808", -ERANGE,
	           "t.rules:3:14: integer literal out of range");
	EXPECT_ERR("99999999999999999999", -ERANGE, "t.rules:3:10: integer literal out of range");
	EXPECT_ERR("8388608TiB", -ERANGE, "t.rules:3:10: integer literal out of range"); /* 2^63 */
	EXPECT_ERR("9000000.5TiB", -ERANGE, "t.rules:3:10: integer literal out of range");
}

static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
	size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
	char *s = malloc(hl + ul * n + tl + 1), *p = s;

	assert_non_null(s);
	memcpy(p, head, hl);
	p += hl;
	for (size_t k = 0; k < n; k++, p += ul)
		memcpy(p, unit, ul);
	memcpy(p, tail, tl + 1);
	return s;
}

static void test_decimal_range(void **state)
{
	/* "1" and 300 zeros ".0" is 1e300; squared it is not finite. */
	_cleanup_free_ char *sq = repeat("1", "0", 300, ".0 * 1");
	_cleanup_free_ char *sq2 = NULL, *lit = NULL;
	char want[128];

	(void)state;
	sq2 = repeat(sq, "0", 300, ".0");
	snprintf(want, sizeof(want), "t.rules:3:%u: decimal overflow in '*'", 10 + 303 + 1);
	EXPECT_ERR(sq2, -ERANGE, want);
	/* A literal beyond DBL_MAX (about 1.8e308). */
	lit = repeat("1", "0", 400, ".0");
	EXPECT_ERR(lit, -ERANGE, "t.rules:3:10: decimal literal out of range");
	EXPECT_DEC("0.1 + 0.2", 0.1 + 0.2);
}

static void test_div_zero(void **state)
{
	(void)state;
	EXPECT_ERR("1 / 0", -EDOM, "t.rules:3:12: division by zero");
	EXPECT_ERR("1 % 0", -EDOM, "t.rules:3:12: division by zero");
	EXPECT_ERR("1.5 / 0", -EDOM, "t.rules:3:14: division by zero");
	EXPECT_ERR("1 / 0.0", -EDOM, "t.rules:3:12: division by zero");
	EXPECT_ERR("mem.total / zero", -EDOM, "t.rules:3:20: division by zero");
	EXPECT_ERR("pow2floor(0)", -EDOM, "t.rules:3:10: pow2floor() needs a number >= 1, got 0");
	EXPECT_ERR("pow2floor(0.5)", -EDOM,
	           "t.rules:3:10: pow2floor() needs a number >= 1, got 0.5");
	EXPECT_ERR("pow2floor(-3)", -EDOM, "t.rules:3:10: pow2floor() needs a number >= 1, got -3");
}

static void test_syntax_errors(void **state)
{
	(void)state;
	EXPECT_ERR("(1 + 2", -EINVAL, "t.rules:3:16: expected ')', found end of expression");
	EXPECT_ERR("(1 + 2 3", -EINVAL, "t.rules:3:17: expected ')', found number '3'");
	EXPECT_ERR("1 +", -EINVAL, "t.rules:3:13: expected an expression, found end of expression");
	EXPECT_ERR("", -EINVAL, "t.rules:3:10: expected an expression, found end of expression");
	EXPECT_ERR("* 2", -EINVAL, "t.rules:3:10: expected an expression, found '*'");
	EXPECT_ERR("1 + )", -EINVAL, "t.rules:3:14: expected an expression, found ')'");
	EXPECT_ERR("1 2", -EINVAL,
	           "t.rules:3:12: expected an operator or end of expression, found number '2'");
	EXPECT_ERR("mem.total cpu.count", -EINVAL,
	           "t.rules:3:20: expected an operator or end of expression, found name "
	           "'cpu.count'");
	EXPECT_ERR("1 # 2", -EINVAL,
	           "t.rules:3:12: expected an operator or end of expression, found '#'");
	EXPECT_ERR("1 + \"s\" \"t\"", -EINVAL,
	           "t.rules:3:18: expected an operator or end of expression, found string \"t\"");
	EXPECT_ERR("true v5.15", -EINVAL,
	           "t.rules:3:15: expected an operator or end of expression, found version "
	           "'v5.15'");
	EXPECT_ERR("1 + \xc3\xa9", -EINVAL,
	           "t.rules:3:14: expected an expression, found byte 0xc3");
	EXPECT_ERR("true ? 1", -EINVAL, "t.rules:3:18: expected ':', found end of expression");
	EXPECT_ERR("true ? 1 , 2", -EINVAL, "t.rules:3:19: expected ':', found ','");
	EXPECT_ERR("min(1, 2", -EINVAL,
	           "t.rules:3:18: expected ',' or ')', found end of expression");
	EXPECT_ERR("min(1 2)", -EINVAL, "t.rules:3:16: expected ',' or ')', found number '2'");
	EXPECT_ERR("min(1, )", -EINVAL, "t.rules:3:17: expected an expression, found ')'");
	EXPECT_ERR("1 = 2", -EINVAL, "t.rules:3:12: expected '==', found '='");
	EXPECT_ERR("true | false", -EINVAL, "t.rules:3:15: expected '||', found '|'");
	EXPECT_ERR("true & false", -EINVAL, "t.rules:3:15: expected '&&', found '&'");
	EXPECT_ERR("1.", -EINVAL,
	           "t.rules:3:12: expected a digit after '.', found end of expression");
	EXPECT_ERR("1.x", -EINVAL, "t.rules:3:12: expected a digit after '.', found 'x'");
	EXPECT_ERR("\"abc", -EINVAL, "t.rules:3:14: expected '\"', found end of expression");
	EXPECT_ERR("\"a\\qb\"", -EINVAL,
	           "t.rules:3:13: expected '\"', '\\', 'n' or 't' after '\\', found 'q'");
	/* A name may not end with '.': the dot is left over. */
	EXPECT_ERR("mem.total.", -EINVAL,
	           "t.rules:3:19: expected an operator or end of expression, found '.'");
	EXPECT_ERR(". 5", -EINVAL, "t.rules:3:10: expected an expression, found '.'");
	EXPECT_ERR("v1.2.3.4.5", -EINVAL, "t.rules:3:10: version literal has more than 4 parts");
	EXPECT_ERR("v99999999999", -ERANGE, "t.rules:3:10: version part out of range");

	/* Units. */
#define UNIT_ERR "expected a unit (s, m, min, h, d, w, KiB, MiB, GiB or TiB), found "
	EXPECT_ERR("10xyz", -EINVAL, "t.rules:3:12: " UNIT_ERR "'xyz'");
	EXPECT_ERR("1 + 2.5ms", -EINVAL, "t.rules:3:17: " UNIT_ERR "'ms'");
	EXPECT_ERR("4gib", -EINVAL, "t.rules:3:11: " UNIT_ERR "'gib'"); /* case matters */
	EXPECT_ERR("1e3", -EINVAL, "t.rules:3:11: " UNIT_ERR "'e3'");   /* no exponents */
	EXPECT_ERR("5 s", -EINVAL,
	           "t.rules:3:12: expected an operator or end of expression, found name 's'");
	/* A span's later part must have a time unit; a size does not join it. */
	EXPECT_ERR("1h 30", -EINVAL,
	           "t.rules:3:13: expected an operator or end of expression, found number '30'");
	EXPECT_ERR("1h 2MiB", -EINVAL,
	           "t.rules:3:13: expected an operator or end of expression, found number '2MiB'");

	/* Functions. */
	EXPECT_ERR("foo(1)", -EINVAL, "t.rules:3:10: unknown function 'foo'");
	EXPECT_ERR("1 + mem.total(1)", -EINVAL, "t.rules:3:14: unknown function 'mem.total'");
	EXPECT_ERR("clamp(1, 2)", -EINVAL, "t.rules:3:10: clamp() takes 3 arguments, got 2");
	EXPECT_ERR("clamp(1, 2, 3, 4)", -EINVAL, "t.rules:3:10: clamp() takes 3 arguments, got 4");
	EXPECT_ERR("floor(1, 2)", -EINVAL, "t.rules:3:10: floor() takes 1 argument, got 2");
	EXPECT_ERR("abs()", -EINVAL, "t.rules:3:10: abs() takes 1 argument, got 0");
	EXPECT_ERR("min(1)", -EINVAL, "t.rules:3:10: min() takes at least 2 arguments, got 1");
	EXPECT_ERR("max()", -EINVAL, "t.rules:3:10: max() takes at least 2 arguments, got 0");
	EXPECT_ERR("available(1 + 2)", -EINVAL, "t.rules:3:20: available() takes a name");
	EXPECT_ERR("available(\"mem.total\")", -EINVAL, "t.rules:3:20: available() takes a name");
	EXPECT_ERR("available(mem.total, cpu.count)", -EINVAL,
	           "t.rules:3:10: available() takes 1 argument, got 2");
}

static void test_nesting(void **state)
{
	_cleanup_free_ char *ok = repeat("", "(", 100, "1");
	_cleanup_free_ char *deep = repeat("", "(", 1000, "1");
	_cleanup_free_ char *chain = repeat("1", " + 1", 1000, "");
	_cleanup_free_ char *neg = repeat("", "-", 1000, "1");
	_cleanup_free_ char *ok2 = NULL;
	struct ht_value v;
	struct ht_error err;

	(void)state;
	ok2 = repeat(ok, ")", 100, "");
	EXPECT_INT(ok2, 1);
	assert_int_equal(run(deep, true, &v, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "expression nested too deeply"));
	assert_int_equal(run(chain, true, &v, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "expression nested too deeply"));
	assert_int_equal(run(neg, true, &v, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "expression nested too deeply"));
}

static void test_type_errors(void **state)
{
	(void)state;
	EXPECT_ERR("\"a\" + 1", -EINVAL,
	           "t.rules:3:14: type error: '+' needs numbers, got string and number");
	EXPECT_ERR("1 - true", -EINVAL,
	           "t.rules:3:12: type error: '-' needs numbers, got number and bool");
	EXPECT_ERR("v5.15 * 2", -EINVAL,
	           "t.rules:3:16: type error: '*' needs numbers, got version and number");
	EXPECT_ERR("kernel.release / 2", -EINVAL,
	           "t.rules:3:25: type error: '/' needs numbers, got string and number");
	EXPECT_ERR("true % 2", -EINVAL,
	           "t.rules:3:15: type error: '%' needs integers, got bool and number");
	EXPECT_ERR("1 < \"a\"", -EINVAL,
	           "t.rules:3:12: type error: '<' needs two numbers or two versions, got number "
	           "and string");
	EXPECT_ERR("\"a\" <= \"b\"", -EINVAL,
	           "t.rules:3:14: type error: '<=' needs two numbers or two versions, got string "
	           "and string");
	EXPECT_ERR("true > false", -EINVAL,
	           "t.rules:3:15: type error: '>' needs two numbers or two versions, got bool and "
	           "bool");
	EXPECT_ERR("v5.15 >= 5", -EINVAL,
	           "t.rules:3:16: type error: '>=' needs two numbers or two versions, got version "
	           "and number");
	EXPECT_ERR("1 == true", -EINVAL,
	           "t.rules:3:12: type error: '==' needs two values of the same type, got number "
	           "and bool");
	EXPECT_ERR("kernel.version != \"5.15\"", -EINVAL,
	           "t.rules:3:25: type error: '!=' needs two values of the same type, got version "
	           "and string");
	EXPECT_ERR("1 && true", -EINVAL,
	           "t.rules:3:12: type error: '&&' needs bools, got number and bool");
	EXPECT_ERR("true || \"x\"", -EINVAL,
	           "t.rules:3:15: type error: '||' needs bools, got bool and string");
	EXPECT_ERR("!1", -EINVAL, "t.rules:3:10: type error: '!' needs a bool, got number");
	EXPECT_ERR("-\"a\"", -EINVAL, "t.rules:3:10: type error: '-' needs a number, got string");
	EXPECT_ERR("-true", -EINVAL, "t.rules:3:10: type error: '-' needs a number, got bool");
	EXPECT_ERR("1 ? 2 : 3", -EINVAL,
	           "t.rules:3:12: type error: '?:' needs a bool condition, got number");
	EXPECT_ERR("true ? 1 : \"a\"", -EINVAL,
	           "t.rules:3:15: type error: '?:' branches differ, got number and string");
	EXPECT_ERR("min(1, \"a\")", -EINVAL,
	           "t.rules:3:10: type error: min() needs numbers, got number and string");
	EXPECT_ERR("clamp(1, \"a\", v5.15)", -EINVAL,
	           "t.rules:3:10: type error: clamp() needs numbers, got number, string and "
	           "version");
	EXPECT_ERR("floor(true)", -EINVAL,
	           "t.rules:3:10: type error: floor() needs numbers, got bool");
	/* Numbers unify: an integer branch and a decimal branch are both "number". */
	EXPECT_DEC("false ? 1 : 2.5", 2.5);
	EXPECT_INT("true ? 1 : 2.5", 1);
	/* The first error in source order wins. */
	EXPECT_ERR("(1 + \"a\") + (2 + \"b\")", -EINVAL,
	           "t.rules:3:13: type error: '+' needs numbers, got number and string");

	/* % takes integers only; only evaluation knows a number is a decimal. */
	EXPECT_ERR("1 % 2.5", -EINVAL,
	           "t.rules:3:12: type error: '%' needs integers, got integer and decimal");
	EXPECT_ERR("4096 / 120 % 2", -EINVAL,
	           "t.rules:3:21: type error: '%' needs integers, got decimal and integer");
}

static void test_eval_type_errors(void **state)
{
	(void)state;
	/* Without the static check, evaluation still refuses, with the same words. */
	EXPECT_EVAL_ERR("\"a\" + 1", -EINVAL,
	                "t.rules:3:14: type error: '+' needs numbers, got string and number");
	EXPECT_EVAL_ERR("1 ? 2 : 3", -EINVAL,
	                "t.rules:3:12: type error: '?:' needs a bool condition, got number");
	EXPECT_EVAL_ERR("!1", -EINVAL, "t.rules:3:10: type error: '!' needs a bool, got number");
	EXPECT_EVAL_ERR("-\"a\"", -EINVAL,
	                "t.rules:3:10: type error: '-' needs a number, got string");
	EXPECT_EVAL_ERR("1 && true", -EINVAL,
	                "t.rules:3:12: type error: '&&' needs bools, got number");
	EXPECT_EVAL_ERR("true && 1", -EINVAL,
	                "t.rules:3:15: type error: '&&' needs bools, got bool and number");
	EXPECT_EVAL_ERR("max(1, true, 3)", -EINVAL,
	                "t.rules:3:10: type error: max() needs numbers, got number, bool and "
	                "number");
	/* A fact whose value does not have its declared type. */
	EXPECT_ERR("liar + 1", -EINVAL,
	           "t.rules:3:15: type error: '+' needs numbers, got string and number");
}

static void test_names(void **state)
{
	(void)state;
	EXPECT_ERR("foo.bar + 1", -ENOENT, "t.rules:3:10: unknown name 'foo.bar'");
	EXPECT_ERR("1 + foo.bar", -ENOENT, "t.rules:3:14: unknown name 'foo.bar'");
	EXPECT_EVAL_ERR("1 + foo.bar", -ENOENT, "t.rules:3:14: unknown name 'foo.bar'");
	EXPECT_ERR("available(foo.bar)", -ENOENT, "t.rules:3:20: unknown name 'foo.bar'");
	EXPECT_EVAL_ERR("available(foo.bar)", -ENOENT, "t.rules:3:20: unknown name 'foo.bar'");
	EXPECT_ERR(UNAVAIL " + 1", -ENODATA, "t.rules:3:10: '" UNAVAIL "' is unavailable");
	EXPECT_ERR("(" UNAVAIL ")", -ENODATA, "t.rules:3:11: '" UNAVAIL "' is unavailable");
	/* A message the callback wrote passes through unchanged. */
	EXPECT_ERR("1 + rule.broken", -EIO, "rules/other.rules:7:2: cycle through 'rule.broken'");
	EXPECT_EVAL_ERR("1 + rule.broken", -EIO, "rules/other.rules:7:2: something went wrong");
	EXPECT_EVAL_ERR("available(rule.broken)", -EIO,
	                "rules/other.rules:7:2: something went wrong");
	EXPECT_EVAL_ERR("rule.silent", -EIO, "t.rules:3:10: 'rule.silent': Input/output error");
	/* Names may hold digits, '_' and inner dots; "true"/"false" are words only alone. */
	EXPECT_ERR("a_b.c2.d", -ENOENT, "t.rules:3:10: unknown name 'a_b.c2.d'");
	EXPECT_ERR("true.x", -ENOENT, "t.rules:3:10: unknown name 'true.x'");
	EXPECT_ERR("vm.swappiness", -ENOENT, "t.rules:3:10: unknown name 'vm.swappiness'");
	EXPECT_ERR("_x", -ENOENT, "t.rules:3:10: unknown name '_x'");
}

static int collect(const char *name, const struct ht_srcpos *pos, void *userdata)
{
	char *buf = userdata;
	char add[64];

	snprintf(add, sizeof(add), "%s%s@%u", *buf ? " " : "", name, pos->col);
	strcat(buf, add);
	return strcmp(name, "stop") == 0 ? 7 : 0;
}

static void test_foreach_name(void **state)
{
	struct ht_expr *e = NULL;
	struct ht_error err;
	char buf[256] = "";

	(void)state;
	/* 0         1         2         3         4
	 * 0123456789012345678901234567890123456789012345 */
	assert_int_equal(ht_expr_parse("a + min(b, c) > (available(d) ? e : -f)", &tpos, &e,
	                               &err),
	                 0);
	assert_int_equal(ht_expr_foreach_name(e, collect, buf), 0);
	assert_string_equal(buf, "a@10 b@18 c@21 d@37 e@42 f@47");
	ht_expr_free(e);

	buf[0] = '\0';
	assert_int_equal(ht_expr_parse("x + stop + y", &tpos, &e, &err), 0);
	/* Stops at, and returns, the first non-zero. */
	assert_int_equal(ht_expr_foreach_name(e, collect, buf), 7);
	assert_string_equal(buf, "x@10 stop@14");
	ht_expr_free(e);

	buf[0] = '\0';
	assert_int_equal(ht_expr_parse("1 + 2", &tpos, &e, &err), 0);
	assert_int_equal(ht_expr_foreach_name(e, collect, buf), 0);
	assert_string_equal(buf, "");
	ht_expr_free(e);
}

/* ht_expr_units(): the kinds of unit the literals were written with, wherever they are. */
static void test_unit_kinds(void **state)
{
	static const struct {
		const char *text;
		unsigned units;
	} cases[] = {
		{ "570", 0 },
		{ "1.5 * 100", 0 },
		{ "570s", HT_UNIT_TIME },
		{ "2min + 30", HT_UNIT_TIME },
		{ "-5h", HT_UNIT_TIME },
		{ "-9223372036854775808s", HT_UNIT_TIME },
		{ "max(1, 2, 4GiB)", HT_UNIT_SIZE },
		{ "true ? 1KiB : 1s", HT_UNIT_TIME | HT_UNIT_SIZE },
		{ "\"30s\"", 0 },
		{ "v5.15", 0 },
	};
	struct ht_error err;

	(void)state;
	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		struct ht_expr *e = NULL;

		assert_int_equal(ht_expr_parse(cases[k].text, &tpos, &e, &err), 0);
		if (ht_expr_units(e) != cases[k].units)
			fail_msg("%s: units %u, expected %u", cases[k].text, ht_expr_units(e),
			         cases[k].units);
		ht_expr_free(e);
	}
}

static void test_pos_and_check(void **state)
{
	static const struct {
		const char *text;
		enum ht_type type;
	} cases[] = {
		{ "1 + 2", HT_T_INT },
		{ "1.5", HT_T_INT }, /* any number */
		{ "workload.mem_budget", HT_T_INT },
		{ "4096 / 120", HT_T_INT },
		{ "v5.15", HT_T_VER },
		{ "kernel.version", HT_T_VER },
		{ "\"x\"", HT_T_STR },
		{ "1 < 2", HT_T_BOOL },
		{ "available(" UNAVAIL ")", HT_T_BOOL },
		{ "true ? kernel.release : \"none\"", HT_T_STR },
		{ "min(1, 2.5)", HT_T_INT },
	};
	struct ht_expr *e = NULL;
	struct ht_error err;
	enum ht_type t;

	(void)state;
	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		assert_int_equal(ht_expr_parse(cases[k].text, &tpos, &e, &err), 0);
		t = HT_T_NONE;
		assert_int_equal(ht_expr_check(e, type_of, NULL, &t, &err), 0);
		if (t != cases[k].type)
			fail_msg("%s: type %d, want %d", cases[k].text, t, cases[k].type);
		ht_expr_free(e);
	}

	/* ht_expr_pos() is the first token, after blanks, and '(' counts. */
	assert_int_equal(ht_expr_parse("   a + b", &tpos, &e, &err), 0);
	assert_string_equal(ht_expr_pos(e)->file, "t.rules");
	assert_int_equal(ht_expr_pos(e)->line, 3);
	assert_int_equal(ht_expr_pos(e)->col, 13);
	ht_expr_free(e);
	assert_int_equal(ht_expr_parse("(a) * 2", &tpos, &e, &err), 0);
	assert_int_equal(ht_expr_pos(e)->col, 10);
	ht_expr_free(e);

	/* A NULL err is allowed everywhere. */
	assert_int_equal(ht_expr_parse("(", &tpos, &e, NULL), -EINVAL);
	assert_int_equal(ht_expr_parse("1 / zero", &tpos, &e, NULL), 0);
	assert_int_equal(ht_expr_check(e, type_of, NULL, NULL, NULL), 0);
	{
		struct ht_value v;

		assert_int_equal(ht_expr_eval(e, lookup, NULL, &v, NULL), -EDOM);
		assert_int_equal(v.type, HT_T_NONE);
	}
	ht_expr_free(e);
	ht_expr_free(NULL);
}

static void test_reuse(void **state)
{
	struct ht_expr *e = NULL;
	struct ht_error err;
	struct ht_value v;

	(void)state;
	/* A tree evaluates any number of times and keeps its string literals. */
	assert_int_equal(ht_expr_parse("cpu.aes.flag ? \"aes\" : \"chacha\"", &tpos, &e, &err), 0);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(ht_expr_eval(e, lookup, NULL, &v, &err), 0);
		assert_int_equal(v.type, HT_T_STR);
		assert_string_equal(v.s, "aes");
		ht_value_clear(&v);
	}
	ht_expr_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literals),       cmocka_unit_test(test_units),
		cmocka_unit_test(test_versions),       cmocka_unit_test(test_arithmetic),
		cmocka_unit_test(test_division),       cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_comparisons),    cmocka_unit_test(test_logic),
		cmocka_unit_test(test_short_circuit),  cmocka_unit_test(test_functions),
		cmocka_unit_test(test_overflow),       cmocka_unit_test(test_decimal_range),
		cmocka_unit_test(test_div_zero),       cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_nesting),        cmocka_unit_test(test_type_errors),
		cmocka_unit_test(test_eval_type_errors), cmocka_unit_test(test_names),
		cmocka_unit_test(test_foreach_name),   cmocka_unit_test(test_pos_and_check),
		cmocka_unit_test(test_reuse),          cmocka_unit_test(test_unit_kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
