/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Typed values shared by facts, workload variables and the expression
 * language. Numbers are either exact 64-bit integers or decimals (double);
 * the expression language treats both as "number" for type checking and
 * keeps integers exact as long as an operation's result is integral.
 */
enum ht_type {
	HT_T_NONE = 0, /* no value (unavailable fact, unset) */
	HT_T_INT,      /* int64_t */
	HT_T_DEC,      /* double, finite */
	HT_T_BOOL,
	HT_T_STR,      /* NUL-terminated UTF-8, owned by the value */
	HT_T_VER,      /* dotted version, e.g. a kernel version 5.15.0 */
};

/* A dotted version such as 5.15.0: up to 4 numeric parts, missing parts compare as 0. */
struct ht_version {
	uint32_t part[4];
	uint8_t n; /* parts given, 1..4 */
};

struct ht_value {
	enum ht_type type;
	union {
		int64_t i;
		double d;
		bool b;
		char *s;
		struct ht_version v;
	};
};

/* Frees a string value and resets @v to HT_T_NONE. Safe on HT_T_NONE. */
void ht_value_clear(struct ht_value *v);

/* Deep copy. Returns 0 or -ENOMEM (dst is then HT_T_NONE). */
int ht_value_copy(struct ht_value *dst, const struct ht_value *src);

static inline struct ht_value ht_int(int64_t i)
{
	return (struct ht_value){ .type = HT_T_INT, .i = i };
}
static inline struct ht_value ht_dec(double d)
{
	return (struct ht_value){ .type = HT_T_DEC, .d = d };
}
static inline struct ht_value ht_bool(bool b)
{
	return (struct ht_value){ .type = HT_T_BOOL, .b = b };
}

/* True for HT_T_INT and HT_T_DEC. */
static inline bool ht_type_is_number(enum ht_type t)
{
	return t == HT_T_INT || t == HT_T_DEC;
}

/* Name of a type as shown in error messages: "number", "bool", "string", "version". */
const char *ht_type_name(enum ht_type t);

/* Numeric value as double (HT_T_INT or HT_T_DEC only). */
double ht_value_as_double(const struct ht_value *v);

/*
 * ht_version_parse - parse the leading dotted version of @s ("5.15.0-91-generic"
 * gives 5.15.0; "6.1" gives 6.1). Stops at the first character that is not a
 * digit or a dot followed by a digit; *end (if not NULL) points there.
 * Returns 0, or -EINVAL if @s does not start with a digit or has more than 4
 * parts, -ERANGE if a part exceeds UINT32_MAX.
 */
int ht_version_parse(const char *s, struct ht_version *out, const char **end);

/* <0, 0, >0 like strcmp; missing parts count as 0 (5.15 == 5.15.0). */
int ht_version_cmp(const struct ht_version *a, const struct ht_version *b);

/*
 * ht_value_format - canonical text of a value, the form the facts file uses:
 * integers in decimal, decimals in the shortest "%.*g" form that reads back
 * to the same double, booleans as true/false, versions as "v5.15.0" (with the
 * number of parts given), strings as a double-quoted C string with \" \\ \n
 * \t and \xHH escapes. HT_T_NONE formats as "unavailable".
 * Returns a newly allocated string (caller frees), or NULL on ENOMEM.
 */
char *ht_value_format(const struct ht_value *v);

/*
 * ht_value_parse - inverse of ht_value_format() for one token at the start of
 * @s (leading blanks skipped). *end points after the token.
 * Returns 0, or -EINVAL when @s does not start with a value in that syntax,
 * -ERANGE for an integer outside int64_t or a decimal that overflows or
 * underflows to 0.
 */
int ht_value_parse(const char *s, struct ht_value *out, const char **end);

/*
 * ht_value_display - a value as a person reads it in a report: like
 * ht_value_format() but strings unquoted, versions without the "v", and
 * decimals rounded to at most 2 places. Caller frees; NULL on ENOMEM.
 */
char *ht_value_display(const struct ht_value *v);
