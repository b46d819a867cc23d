/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "shared/util.h"
#include "engine/value.h"

/*
 * The rule expression language (documented for users in man/hosttune.rules.5.scd).
 *
 *   literals   42  0.05  true  false  "text"  v5.15  v5.15.0
 *              a number may carry a unit suffix, no space: 30s 2min 1h (seconds),
 *              512KiB 480MiB 4GiB 1TiB (bytes, powers of 1024). 1.5GiB is exact
 *              when the product is integral.
 *   names      facts, workload variables and rule ids: [A-Za-z_][A-Za-z0-9_.]*
 *              (dots allowed inside: net.netfilter.nf_conntrack_max)
 *   operators  by precedence, loosest first:
 *              ?:   ||   &&   == !=   < <= > >=   + -   * / %   unary ! -
 *   functions  min(a, b, ...)  max(a, b, ...)  clamp(x, lo, hi)
 *              pow2ceil(x)  pow2floor(x)  ceil(x)  floor(x)  round(x)  abs(x)
 *              available(name)  (true when the named fact has a value)
 *              text(a, b, ...)  (a string: the values as a template's holes show them)
 *   aggregates over a family of instances (ht_expr_ops): count(F, COND),
 *              sum(F, X), min(F, X), max(F, X), any(F, COND). F names the family
 *              (nic, listener, process, storage); inside the second argument its
 *              FAMILY.SUFFIX names mean each instance's fact or rule value.
 *              count of none is 0, sum 0, any false; min and max of none have no
 *              value (-ENODATA). An instance whose X or COND has no value makes
 *              count, sum, min and max have none; any is true when one instance
 *              holds, else without value when one had none.
 *
 * Semantics: integers are int64_t; + - * % on two integers overflow-check and
 * fail with -ERANGE. "/" is exact: an integer when the division leaves no
 * remainder, a decimal otherwise (4096 / 120 is 34.1333...); floor() and
 * ceil() bring it back to an integer. Any operation with a decimal operand
 * yields a decimal; a decimal result that is non-finite is -ERANGE. Division
 * or % by zero is -EDOM. % takes integers only. ceil/floor/round of a decimal
 * outside int64_t is -ERANGE. pow2ceil(x) is the least power of two >= x
 * (x <= 1 gives 1); pow2floor(x) the greatest power of two <= x (x < 1 is
 * -EDOM). Comparisons: numbers with numbers (int and decimal mixed exactly),
 * versions with versions, strings and bools with == and != only. && || ?:
 * short-circuit: an unavailable fact in the branch not taken does no harm.
 */

/* Position in a source file, LINE and COL count from 1; COL counts bytes. */
struct ht_srcpos {
	const char *file; /* not owned */
	unsigned line;
	unsigned col;
};

struct ht_expr; /* opaque AST */

/*
 * struct ht_arena - memory handed out by bumping a pointer and given back
 * all at once: the expression trees of a ruleset (ht_expr_parse_in()) and
 * the strings that live as long as they do. It grows by blocks, each at
 * least twice the last, up to 1 MiB: malloc()ed below 64 KiB, mapped and
 * populated at once from there (no page fault at each first touch).
 * Nothing in it is freed on its own. Not safe to share between threads.
 */
struct ht_arena;

/* A new arena whose first block holds @first bytes (0: a default); NULL on ENOMEM. */
struct ht_arena *ht_arena_new(size_t first);

/* Frees @a and everything allocated in it. NULL is a no-op. */
void ht_arena_free(struct ht_arena *a);

/*
 * ht_arena_alloc - @size bytes owned by @a, aligned for any object and not
 * initialised. NULL on ENOMEM (also when @size is absurdly large).
 */
void *ht_arena_alloc(struct ht_arena *a, size_t size);

/* A copy of the @n bytes at @s with a NUL after them, owned by @a; NULL on ENOMEM. */
char *ht_arena_strndup(struct ht_arena *a, const char *s, size_t n);

/*
 * ht_expr_parse - parse @text into an expression tree.
 * @pos: where text[0] sits in its file; error positions are offsets from it
 *       (text is one line: a column offset is added to pos->col).
 * @out: set to the new tree; free with ht_expr_free().
 *
 * Returns 0, -EINVAL on a syntax error (err: "FILE:LINE:COL: expected ... ,
 * found ..."), -ERANGE for an integer literal outside int64_t, -ENOMEM.
 * pos->file must outlive the tree (it is kept, not copied).
 */
int ht_expr_parse(const char *text, const struct ht_srcpos *pos, struct ht_expr **out,
                  struct ht_error *err);

/*
 * ht_expr_parse_in - ht_expr_parse() with the tree (its nodes, names and
 * string literals) allocated in @arena: it lives until ht_arena_free(), and
 * ht_expr_free() on it does nothing. On failure what the parser allocated
 * stays in @arena until then. Same returns and messages as ht_expr_parse().
 */
int ht_expr_parse_in(const char *text, const struct ht_srcpos *pos, struct ht_arena *arena,
                     struct ht_expr **out, struct ht_error *err);

/* Frees a tree of ht_expr_parse() (all of it at once); NULL and ht_expr_parse_in() trees: no-op. */
void ht_expr_free(struct ht_expr *e);

/* Source position of the expression's first token. */
const struct ht_srcpos *ht_expr_pos(const struct ht_expr *e);

/* The name @e reads when it is a bare name (a fact, variable or rule), else NULL. */
const char *ht_expr_name(const struct ht_expr *e);

/* The kinds of unit a number literal may carry (ht_expr_units()). */
enum {
	HT_UNIT_TIME = 1u << 0, /* s, min, h */
	HT_UNIT_SIZE = 1u << 1, /* KiB, MiB, GiB, TiB */
};

/*
 * ht_expr_units - the kinds of unit the number literals of @e are written
 * with (HT_UNIT_* bits; 0 when none has one): "30s" gives HT_UNIT_TIME,
 * "1GiB + 1s" both. A unit only scales its number (the value carries none),
 * so this is the one way to know that 570s was written as a time.
 */
unsigned ht_expr_units(const struct ht_expr *e);

/*
 * ht_expr_foreach_name - call @cb for every name the expression references,
 * in source order, including the argument of available(). Stops at and
 * returns the first non-zero return of @cb; 0 otherwise.
 */
typedef int (*ht_name_cb)(const char *name, const struct ht_srcpos *pos, void *userdata);
int ht_expr_foreach_name(const struct ht_expr *e, ht_name_cb cb, void *userdata);

/*
 * ht_expr_check - static type check.
 * @type_of: gives the static type of a name: HT_T_INT or HT_T_DEC (both mean
 *           "number"), HT_T_BOOL, HT_T_STR or HT_T_VER, and returns 0; or
 *           returns a negative errno (-ENOENT: unknown name), in which case
 *           the checker reports "FILE:LINE:COL: unknown name 'x'" for -ENOENT
 *           or passes a message the callback put in @err through unchanged.
 * @result: static type of the whole expression (HT_T_INT for any number).
 *
 * Returns 0, or -EINVAL with err "FILE:LINE:COL: type error: ..." naming the
 * operator or function and the types it got, or the callback's error.
 */
typedef int (*ht_type_cb)(const char *name, const struct ht_srcpos *pos, enum ht_type *type,
                          struct ht_error *err, void *userdata);
int ht_expr_check(const struct ht_expr *e, ht_type_cb type_of, void *userdata,
                  enum ht_type *result, struct ht_error *err);

/*
 * ht_expr_eval - evaluate.
 * @lookup: fills *out (caller of lookup owns and clears it) with the value of
 *          a name and returns 0; or returns -ENODATA when the name is a fact
 *          without a value (unavailable on this host), or another negative
 *          errno. If it returns an error and leaves err->msg empty, the
 *          evaluator writes "FILE:LINE:COL: ..." for it ("'x' is unavailable"
 *          for -ENODATA, "unknown name 'x'" for -ENOENT); a message the
 *          callback wrote (e.g. from evaluating another rule) passes unchanged.
 * @out:    the result; caller clears it with ht_value_clear().
 *
 * Returns 0; -ENODATA when the value needs an unavailable fact; -ERANGE on
 * overflow; -EDOM on division by zero; -EINVAL on a type error found only at
 * run time; the callback's error otherwise. err always holds a message on
 * failure.
 */
typedef int (*ht_lookup_cb)(const char *name, const struct ht_srcpos *pos, struct ht_value *out,
                            struct ht_error *err, void *userdata);
int ht_expr_eval(const struct ht_expr *e, ht_lookup_cb lookup, void *userdata, struct ht_value *out,
                 struct ht_error *err);

/*
 * ht_family_cb - the static check of an aggregate: @enter true makes
 * @family's instance names valid (until the call with @enter false, which
 * must not fail). Returns 0, or -ENOENT when @family is no family (for
 * min() and max() of two values then not an error), or another negative
 * errno with @err set.
 */
typedef int (*ht_family_cb)(const char *family, const struct ht_srcpos *pos, bool enter,
                            struct ht_error *err, void *userdata);

/*
 * ht_instance_fn - evaluates an aggregate's body for the instance the
 * iterator made current: 0 to go on, 1 to stop (any() found one), or a
 * negative errno (the iteration stops and returns it).
 */
typedef int (*ht_instance_fn)(void *ctx);

/*
 * ht_iterate_cb - evaluation of an aggregate: makes each instance of
 * @family current in turn (in the family's list order) and calls @fn(@ctx)
 * for it, then restores what was current before. Returns 0 (also when @fn
 * stopped it with 1), -ENOENT when @family is no family (err empty),
 * -ENODATA when its instances are unknown (err says why), or @fn's error.
 */
typedef int (*ht_iterate_cb)(const char *family, const struct ht_srcpos *pos, ht_instance_fn fn,
                             void *ctx, struct ht_error *err, void *userdata);

/*
 * struct ht_expr_ops - the callbacks of the check (type_of, family) and of
 * the evaluation (lookup, iterate). family and iterate may be NULL: an
 * aggregate then fails as naming no family.
 */
/*
 * ht_source_cb - source(NAME): sets *out (malloc()ed, the caller frees it) to
 * where fact @name's value came from ("/etc/sysctl.d/70-site.conf:1") and
 * returns 0; -ENODATA when the fact is unavailable or has no source (err
 * says which), -ENOENT when @name is no fact, or another negative errno.
 */
typedef int (*ht_source_cb)(const char *name, const struct ht_srcpos *pos, char **out,
                            struct ht_error *err, void *userdata);

struct ht_expr_ops {
	ht_type_cb type_of;
	ht_family_cb family;
	ht_lookup_cb lookup;
	ht_iterate_cb iterate;
	ht_source_cb source; /* may be NULL: source() is then unavailable (-ENODATA) */
};

/* ht_expr_check() and ht_expr_eval() with aggregates: the same contracts, @ops' callbacks. */
int ht_expr_check_ops(const struct ht_expr *e, const struct ht_expr_ops *ops, void *userdata,
                      enum ht_type *result, struct ht_error *err);
int ht_expr_eval_ops(const struct ht_expr *e, const struct ht_expr_ops *ops, void *userdata,
                     struct ht_value *out, struct ht_error *err);

/*
 * ht_expr_conditions - the conditions @e tests, for hosttune rules --lint:
 * @cb gets the canonical text (no blanks, binary operators in parentheses)
 * and position of every atom of every ?: condition in @e, the atoms being
 * the condition split at && and || with ! taken off. With @whole, @e is a
 * condition itself (a case's, a {?COND}'s) and is split too. Returns 0, the
 * first non-zero return of @cb, or -ENOMEM.
 */
typedef int (*ht_atom_cb)(const char *atom, const struct ht_srcpos *pos, void *userdata);
int ht_expr_conditions(const struct ht_expr *e, bool whole, ht_atom_cb cb, void *userdata);

/* ht_expr_string_conds - how many ?: of @e have a string (a literal, text()) in a branch. */
unsigned ht_expr_string_conds(const struct ht_expr *e);
