/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "engine/rules.h"

/* Private to engine/ (rules.c, vars.c, engine.c) and the persist/ and cli/ code that walks
 * rules: the parsed form of rules and profiles. */

enum {
	K_TITLE,
	K_TARGET,
	K_WHEN,
	K_CURRENT,
	K_VALUE,
	K_SEVERITY,
	K_EXPLAIN,
	K_RATIONALE,
	K_DIRECTION,
	K_UNIT,
	K_EACH,
	K_WRITABLE,
	K_DEFAULT,
	K_REMEDY,
	K_LEVER,
	K_UNLIMITED,
	K_FOLLOWS,
	K_LIMIT,  /* the limit model (hosttune.rules(5) LIMITS): the limit, */
	K_USAGE,  /* what is in use of it, */
	K_EVENTS, /* the counter that shows it bit, */
	K_HOLDER, /* the largest holder's name, */
	K_HELD,   /* what that holder holds, */
	K_STRAY,  /* that holder is not what the limit is for, */
	K_REST,   /* who holds the rest, */
	K_SOURCE, /* and where the limit is set */
	K_OWNER,  /* who sets the value when hosttune may not write it (a template) */
	K__MAX,
};

/* Pseudo keys of c->last_key (rules.c): a case's condition, explanation and remedy. */
enum { K_CASE = K__MAX, K_CASE_EXPLAIN, K_CASE_REMEDY };

/*
 * Hole formats; TMPL_IF ({?COND}) and TMPL_END ({/?}) bracket text shown only when COND holds.
 * TMPL_PLURAL ({EXPR|plural:ONE:MANY}) prints the number, a space and ONE when it is 1, else MANY.
 */
/* TMPL_SOURCE: {FACT|source}, where the fact's value came from ("/etc/sysctl.d/70-site.conf:1"). */
/* TMPL_SECS: {EXPR|secs}, a duration in seconds with its unit: "5 s", "0.25 s" under a second. */
enum { TMPL_PLAIN, TMPL_BYTES, TMPL_PCT, TMPL_FIXED, TMPL_IF, TMPL_END, TMPL_PLURAL, TMPL_SOURCE,
       TMPL_SECS };

/* Rules, their texts, templates and expression trees live in their ruleset's arena (rs->arena). */
struct ht_key {
	char *text;           /* source text; NULL when the rule does not set the key */
	struct ht_srcpos pos; /* where the text starts */
	struct ht_expr *expr; /* for when, current, value, severity */
};

/* A piece of an explanation: literal text, or a hole with an expression. */
struct ht_tmpl_seg {
	char *text;
	struct ht_expr *expr;
	int fmt;
	int prec;
	char *one, *many; /* TMPL_PLURAL: the word for 1 and for any other number */
};

/*
 * A named case of a rule's severity: `case.NAME = SEVERITY if COND` and its
 * own `explain.NAME`. The first case whose COND holds gives the finding its
 * severity and adds its explanation; the cases replace `severity`.
 */
struct ht_case {
	const char *name;         /* NAME, in the arena */
	enum ht_severity severity;
	struct ht_key cond;       /* COND; cond.text NULL while only explain.NAME was read */
	struct ht_srcpos pos;     /* where `case.NAME` starts (its key) */
	struct ht_tmpl_seg *tmpl; /* explain.NAME (malloc()ed; its texts in the arena), or NULL */
	size_t ntmpl, tmpl_cap;
	struct ht_tmpl_seg *remedy; /* remedy.NAME: the remedy in this case, or NULL */
	size_t nremedy, remedy_cap;
	bool remedy_set;            /* remedy.NAME was given, perhaps empty: no remedy */
};

enum { ST_NEW, ST_BUSY, ST_DONE };

/* How many inputs (facts, workload variables) an overflow message names at most. */
#define HT_INPUTS_MAX 16

struct ht_rule {
	const char *id; /* the name table's text (struct ht_name) */
	struct ht_srcpos pos;
	size_t dir;     /* the index of its file's directory in the search path (rs->dirs) */
	enum ht_target_kind kind;
	char *target;
	bool only_raise;
	enum ht_each each; /* `each = nic|listener|process`: once per instance; HT_EACH_NONE */
	struct ht_key keys[K__MAX];
	struct ht_tmpl_seg *tmpl;     /* explain (malloc()ed; its texts in the arena) */
	size_t ntmpl, tmpl_cap;
	struct ht_tmpl_seg *remedy;   /* remedy: the same template language (malloc()ed) */
	size_t nremedy, remedy_cap;
	struct ht_tmpl_seg *owner;    /* owner: the same template language (malloc()ed) */
	size_t nowner, owner_cap;
	struct ht_case *cases;        /* case.NAME, in the order written (malloc()ed) */
	size_t ncases, cases_cap;

	/* ht_ruleset_check() */
	int check_state;
	enum ht_type type;

	/*
	 * ht_ruleset_evaluate(): the rule's value, computed once per evaluation
	 * (eval_gen) and, for an `each` rule, per instance (eval_inst: the
	 * instance's index in its family's list; -1 for a host rule, -2 for the
	 * evaluation without instances of add_no_instance_finding()).
	 */
	unsigned eval_gen;
	long eval_inst;
	int eval_state;
	int eval_ret;
	struct ht_value val;
	char *eval_msg; /* eval_ret < 0: its message (malloc()ed; NULL when none could be kept) */
	const char *inputs[HT_INPUTS_MAX]; /* facts and workload variables it read, */
	size_t ninputs;                    /* rules' included (names not owned) */
	bool eval_ovf_fact, eval_ovf_set; /* eval_ret -ERANGE: rs->ovf_fact, rs->ovf_set then */
	char *eval_denied; /* the first fact its evaluation read that was refused to this user,
	                    * as rs->denied words it (malloc()ed); NULL when none: a finding
	                    * that reads the cached value is n/a for want of privilege too */
};

struct ht_var {
	char *name; /* workload.NAME */
	struct ht_value value;
	unsigned units;       /* the HT_UNIT_* kinds its value was written with (30s: time) */
	struct ht_srcpos pos; /* where the value was last set: a profile line, or "--set" */
};

/*
 * What a workload variable may be, from a [workload] section of a rules file
 * ("burst = >= 1 and <= 1000"): a number within the bounds given. A bound is
 * open (> or <) or closed (>= or <=); a side without one is unbounded. The
 * bounds' units say what the number is: a time (1s), a size (1GiB), or,
 * without one, a rate, count or factor that takes no unit.
 */
struct ht_var_range {
	char *name;           /* workload.NAME */
	struct ht_srcpos pos; /* where the declaration's value starts */
	bool integer;         /* "integer" before the bounds: a whole number only */
	unsigned units;       /* HT_UNIT_TIME or HT_UNIT_SIZE from the bounds, 0 for none */
	bool has_lo, lo_open, has_hi, hi_open;
	double lo, hi;
	char *expect; /* "a number >= 1 and <= 1000", "an integer ...", for messages */
};

/*
 * A name of the rules (a rule id, or a name an expression reads) in the
 * ruleset's name table (rules_name()): what it stands for, found once.
 */
struct ht_name {
	const char *name;     /* the text, after the entry in the ruleset's arena */
	uint32_t hash;
	struct ht_rule *rule; /* the rule with this id, or NULL */
	/* ht_ruleset_check()'s answers of the fact tables for the name (they never change) */
	bool defs_known;
	const struct ht_fact_def *def;                    /* ht_fact_def_find() */
	const struct ht_fact_def *inst[HT_EACH_LAST + 1]; /* the per-instance def, by family */
};

struct ht_ruleset {
	struct ht_arena *arena;       /* the rules, their texts, templates and trees, names */
	struct ht_rule **rules;
	size_t nrules, rules_cap;
	struct ht_name **names;       /* open addressing: names_cap slots (a power of two or 0), */
	size_t names_cap, nnames;     /* nnames of them used, at most half; entries in the arena */
	struct ht_var *vars;
	size_t nvars;
	struct ht_var_range *ranges; /* in declaration order; a later one for a name wins */
	size_t nranges;
	char **dirs;
	size_t ndirs;
	size_t load_dir;              /* while loading: the directory of the file being read */
	/*
	 * Rules a later directory's rule of the same id replaced, or that were
	 * read after it from an earlier directory (site overrides): kept out of
	 * rules[] and the name table, held here to be freed with the ruleset.
	 */
	struct ht_rule **shadowed;
	size_t nshadowed;
	char **strings; /* interned file names */
	size_t nstrings;
	char *profile;
	char *profile_desc;           /* [profile] description of the last profile file read */
	const char *profile_base;     /* interned path of the profile the chain starts from
	                               * (the one that includes none) */
	bool checked;
	struct ht_facts *facts;       /* during evaluation: asked for what rules read */
	unsigned gen;                 /* evaluations so far: rule values of older ones are stale */
	unsigned need_flags;          /* ht_facts_need() flags: HT_NEED_CHEAP once the findings
	                               * are made */
	const char *check_stack[64];  /* rule ids being checked, for the cycle message */
	size_t check_depth;
	unsigned check_scope;         /* families in scope while checking (bit 1 << enum ht_each):
	                               * the rule's `each` and the aggregates it is inside */
	unsigned check_nest[HT_EACH_LAST + 1]; /* aggregates over a family already in scope */
	/*
	 * Each family's instances for this evaluation, read from its list fact the
	 * first time a rule or an aggregate needs them, and the one current now
	 * (-1: none; an aggregate inside an `each` rule saves and restores it).
	 */
	struct ht_family_state {
		bool read;
		char *names;          /* the instances, NUL-separated */
		const char **inst;    /* pointers into names */
		size_t n;
		long cur;
	} fam[HT_EACH_LAST + 1];
	/* Names of the facts and workload variables read, in order, repeats and all:
	 * an overflow names the inputs of the expression it happened in. */
	const char *trace[256];
	size_t ntrace;
	enum ht_each no_instance;     /* a per-instance rule on a host without instances of its
	                               * family: FAMILY.X and its name fail with -ENXIO */
	bool ovf_fact, ovf_set;       /* the inputs an integer overflow's message names
	                               * (name_inputs()) include a fact of 2^53 or more (in
	                               * magnitude), a --set variable */
	char denied[512];             /* while a finding is evaluated: the first fact read that is
	                               * unavailable for want of privilege (EPERM, EACCES), as
	                               * "needs root: NAME is unavailable (...)" ("cannot be read
	                               * here: ..." when its source says it was refused even to
	                               * root); "" when none */
};

/*
 * rules_name - the entry of @name in rs->names, or NULL when it has none.
 * With @add a missing name gets a new entry (its text copied into
 * rs->arena); NULL then means ENOMEM (or a ruleset without an arena, a
 * profile's probe). Entries live as long as the ruleset.
 */
struct ht_name *rules_name(struct ht_ruleset *rs, const char *name, bool add);

int rules_key_from_name(const char *name);
const char *rules_key_name(int k);
bool rules_valid_name(const char *s);
const char *rules_intern(struct ht_ruleset *rs, const char *s);
/*
 * Reads one rules file, or a profile (@is_profile) into rs->vars. With
 * @known_vars_only (a profile that includes another) a [workload] key must
 * name a variable already in rs->vars, with a value of its type.
 */
int rules_parse_file(struct ht_ruleset *rs, const char *path, bool is_profile,
                     bool known_vars_only, char **include, unsigned *include_line,
                     unsigned *include_col, struct ht_error *err);
int rules_list_dir(const char *dir, const char *suffix, char ***names, size_t *n);
/*
 * The path DIR@sub/@name of the last of rs->dirs that has an entry @name
 * there, in *out (caller frees). Returns 0; 1 when that entry is a symbolic
 * link to /dev/null, which masks the name (*out is its path; no earlier
 * directory's file is read); -ENOENT when none has it (err untouched);
 * -EINVAL with err "PATH: not a regular file" (a directory, FIFO or device)
 * or "PATH: strerror" (a dangling symlink); -ENOMEM.
 */
int rules_find_file(struct ht_ruleset *rs, const char *sub, const char *name, char **out,
                    struct ht_error *err);

/* The workload variable @name (workload.X) in rs->vars, or NULL (vars.c). */
struct ht_var *rules_var_find(const struct ht_ruleset *rs, const char *name);

/*
 * rules_var_of_rules - the variable @name as rules see it: a workload.*
 * variable. A profile's other sections ([garage]) set inputs of the
 * collectors (where Garage's files are before it is deployed): rules read
 * the facts those give (garage.metadata_dir from garage.toml, else from the
 * variable), never the variables themselves, so a fact and a variable may
 * share a name. NULL when @name is no such variable.
 */
struct ht_var *rules_var_of_rules(const struct ht_ruleset *rs, const char *name);

/*
 * Sets workload variable @name (workload.X) from the constant expression
 * @text at @pos. On error stores it in *ctx_ret too and fills err.
 */
int rules_set_var_text(struct ht_ruleset *rs, const char *name, const char *text,
                       const struct ht_srcpos *pos, struct ht_error *err, int *ctx_ret);

/*
 * Declares the range of workload variable @name (workload.X) from @text,
 * one or two bounds "OP EXPR" joined by "and" (OP one of >= > <= <, EXPR a
 * constant number expression), at @pos. A unit in a bound makes the
 * variable a time or a size (rules_check_var()); a time and a size in one
 * range is an error. A later declaration of the same name replaces the
 * earlier. Returns 0, -EINVAL with err "FILE:LINE:COL: expected ...,
 * found ..." (the column of the offending part), or -ENOMEM.
 */
int rules_declare_range(struct ht_ruleset *rs, const char *name, const char *text,
                        const struct ht_srcpos *pos, struct ht_error *err);

/*
 * Checks @var against its declared range (rules_declare_range()); a number
 * without one must not be negative (rates, factors, budgets and times).
 * With a range, the value's units must be the range's: none where its
 * bounds have none ("PREFIX: expected a number without a unit, found a
 * time" for a rate of 570s), a time or none where they are times.
 * @prefix starts the message: "FILE:LINE:COL: workload.X" for a profile,
 * "--set workload.X=0" for --set. Returns 0, or -EINVAL with err
 * "PREFIX: expected a number >= 1, found 0"; a range declared for a
 * variable that is not a number is -EINVAL at the declaration.
 */
int rules_check_var(const struct ht_ruleset *rs, const struct ht_var *var, const char *prefix,
                    struct ht_error *err);

/* rules_check_var() on every variable, named by where it was set. Returns 0, -EINVAL, -ENOMEM. */
int rules_check_vars(const struct ht_ruleset *rs, struct ht_error *err);

/* Forgets the families' instances read for an evaluation (rules.c). */
void rules_families_clear(struct ht_ruleset *rs);

/* The unit a rule's values carry: the `unit` key, else the target fact's. NULL if none. */
const char *ht_rule_unit(const struct ht_rule *r);
