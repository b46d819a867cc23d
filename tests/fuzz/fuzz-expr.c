/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rule expression language (engine/expr.h): parse, check, evaluate.
 * Properties: a failure of any stage carries a message, and a parse error
 * names its place ("fuzz.rules:LINE:COL:", a newline continues the
 * expression on the next line); a name is checked with the type
 * the evaluator then gets, so an expression that checks evaluates to a
 * value of its static type (any number for HT_T_INT); that value formats
 * and parses back to itself.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/expr.h"
#include "engine/value.h"
#include "shared/util.h"

#include "fuzz-common.h"

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/*
 * The type of a name, from its first letter: b bool, s string, v version,
 * d decimal, u unknown (-ENOENT), e an error with the callback's own
 * message, q an error without one; anything else a number (n: a fact
 * without a value on this host).
 */
static int type_of(const char *name, const struct ht_srcpos *pos, enum ht_type *type,
                   struct ht_error *err, void *userdata)
{
	(void)pos;
	(void)userdata;
	switch (name[0]) {
	case 'b': *type = HT_T_BOOL; return 0;
	case 's': *type = HT_T_STR; return 0;
	case 'v': *type = HT_T_VER; return 0;
	case 'd': *type = HT_T_DEC; return 0;
	case 'u': return -ENOENT;
	case 'e': return ht_error_set(err, EIO, "other.rules:7:2: '%s' went wrong", name);
	case 'q': return -EIO;
	default: *type = HT_T_INT; return 0;
	}
}

static const int64_t ints[] = { 0, 1, -1, 7, 4096, INT64_MAX, INT64_MIN, INT64_C(1) << 62 };
static const double decs[] = { 0.5, -0.25, 1e308, -1e308, 3.0, 1e-300, 4096.0 };

static int lookup(const char *name, const struct ht_srcpos *pos, struct ht_value *out,
                  struct ht_error *err, void *userdata)
{
	uint32_t h = name_hash(name);
	enum ht_type t;
	int r = type_of(name, pos, &t, err, userdata);

	if (r < 0)
		return r;
	if (name[0] == 'n')
		return -ENODATA;
	switch (t) {
	case HT_T_BOOL:
		*out = ht_bool(h & 1);
		return 0;
	case HT_T_STR:
		out->type = HT_T_STR;
		out->s = strdup(name);
		return out->s ? 0 : -ENOMEM;
	case HT_T_VER: {
		/* Parts past n are 0, as ht_version_parse() leaves them. */
		uint8_t n = (uint8_t)(1 + h % 4);

		*out = (struct ht_value){ .type = HT_T_VER,
			                  .v = { { h % 7, n > 1 ? h % 23 : 0, n > 2 ? h % 3 : 0,
			                           n > 3 ? UINT32_MAX : 0 }, n } };
		return 0;
	}
	case HT_T_DEC:
		*out = ht_dec(decs[h % ARRAY_SIZE(decs)]);
		return 0;
	default:
		*out = ht_int(ints[h % ARRAY_SIZE(ints)]);
		return 0;
	}
}

static int count_name(const char *name, const struct ht_srcpos *pos, void *userdata)
{
	FZ_CHECK(name && *name && pos && pos->line >= 1, "a name without its place");
	(*(size_t *)userdata)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct ht_srcpos pos = { "fuzz.rules", 1, 1 };
	struct ht_expr *e = NULL;
	struct ht_error err = { "" };
	struct ht_value v = { 0 };
	enum ht_type st = HT_T_NONE;
	size_t names = 0;
	char *text;
	int r;

	if (size > 4096)
		return 0;
	text = fz_cstr(data, size);
	fz_guard_begin(NULL, false);
	r = ht_expr_parse(text, &pos, &e, &err);
	if (r < 0) {
		FZ_CHECK(err.msg[0], "parse failed (%d) without a message", r);
		FZ_CHECK(fz_has_place(err.msg, "fuzz.rules"),
		         "parse error without FILE:LINE:COL: '%s'", err.msg);
		FZ_CHECK(r == -EINVAL || r == -ERANGE || r == -ENOMEM, "parse returned %d", r);
		goto out;
	}
	FZ_CHECK(e, "parse succeeded without a tree");
	FZ_CHECK(ht_expr_pos(e)->line >= 1, "expression position lost");
	ht_expr_foreach_name(e, count_name, &names);

	r = ht_expr_check(e, type_of, NULL, &st, &err);
	if (r < 0) {
		FZ_CHECK(err.msg[0], "check failed (%d) without a message", r);
		goto out;
	}
	FZ_CHECK(st == HT_T_INT || st == HT_T_BOOL || st == HT_T_STR || st == HT_T_VER,
	         "check gave type %d", st);

	err.msg[0] = '\0';
	r = ht_expr_eval(e, lookup, NULL, &v, &err);
	if (r < 0) {
		FZ_CHECK(err.msg[0], "eval failed (%d) without a message", r);
		goto out;
	}
	if (st == HT_T_INT)
		FZ_CHECK(ht_type_is_number(v.type), "checked as a number, evaluated to type %d",
		         v.type);
	else
		FZ_CHECK(v.type == st, "checked as type %d, evaluated to type %d", st, v.type);
	if (v.type == HT_T_DEC)
		FZ_CHECK(isfinite(v.d), "a decimal result that is not finite");
	fz_value_round_trip(&v);
out:
	fz_guard_end();
	ht_value_clear(&v);
	ht_expr_free(e);
	free(text);
	return 0;
}
