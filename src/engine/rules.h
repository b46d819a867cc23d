/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* engine/: values, facts, rules, evaluation; pure. Rule: includes only shared/ and engine/. */
#pragma once

#include <stdbool.h>

#include <json-c/json.h>

#include "engine/expr.h"
#include "engine/facts.h"
#include "shared/util.h"
#include "engine/value.h"

/*
 * The engine reads rule files and a facts stream the caller opened, and does
 * no other I/O.
 *
 * Rules, profiles and the engine (hosttune.rules(5)).
 *
 * A rules file is an INI file; each section is a rule whose id is the
 * section name. A rule with a target (a sysctl key, a module parameter, or
 * advice) yields a finding; a rule without one is a named value that other
 * rules use (e.g. the kernel's own default for nf_conntrack_buckets).
 * Profiles set workload variables (workload.NAME) and may include another
 * profile. The engine is pure: facts + rules + workload -> findings.
 */

enum ht_severity {
	HT_SEV_OK = 0,
	HT_SEV_INFO,
	HT_SEV_WARNING,
	HT_SEV_CRITICAL,
};

/* "ok", "info", "warning", "critical". */
const char *ht_severity_name(enum ht_severity s);

/* Parses a severity name; returns 0 or -EINVAL. */
int ht_severity_from_name(const char *name, enum ht_severity *out);

enum ht_target_kind {
	HT_TARGET_NONE = 0, /* a named value, no finding */
	HT_TARGET_SYSCTL,   /* target is a sysctl key as sysctl(8) prints it */
	HT_TARGET_MODULE,   /* target is module.MODULE.PARAM */
	HT_TARGET_ADVICE,   /* something no file can set (hypervisor, hardware) */
	HT_TARGET_CHANNELS, /* ethtool channels of the rule's interface: nic.channels.KIND */
	HT_TARGET_LIMIT,    /* a resource limit of the rule's process's systemd unit:
	                       "limit nofile" -> process.nofile (LimitNOFILE= in a drop-in) */
};

/*
 * What a rule is evaluated for, its `each` key: the host once (none), or
 * once per instance of a family, whose list fact names the instances and
 * whose FAMILY.SUFFIX names read that instance's FAMILY.INSTANCE.SUFFIX
 * facts (facts.h, ht_instance_fact_defs()):
 *   nic       nic.list,      nic.name (string): network interfaces but lo, by
 *             name; their facts and the list have the name escaped as a
 *             cgroup's path (below), nic.name and a finding's instance the name
 *   listener  listener.list, listener.port (number): listening TCP ports
 *   process   process.list,  process.name (string): checked processes, by comm,
 *             escaped in their facts and the list as an interface's name
 *   storage   storage.list,  storage.name (string): Garage's directories
 *   peer      peer.list,     peer.name (string): remote addresses of established
 *             TCP connections (10.5.5.20; IPv6 with '-' for ':')
 *   cgroup    cgroup.list,   cgroup.name (string): control groups with a memory or
 *             pids limit, by path ("system.slice/garage.service"); their facts and
 *             the list have the path escaped (shared/escape.h, ht_name_escape()),
 *             cgroup.name and a finding's instance the path itself
 *   netns     netns.list,    netns.name (string): network namespaces other than
 *             hosttune's own with a process in them, by inode ("4026532290")
 *   proxy     proxy.list,    proxy.name (string): paths from a reverse proxy to the
 *             store's ports ("nginx-1")
 */
enum ht_each {
	HT_EACH_NONE = 0,
	HT_EACH_NIC,
	HT_EACH_LISTENER,
	HT_EACH_PROCESS,
	HT_EACH_STORAGE,
	HT_EACH_PEER,
	HT_EACH_CGROUP,
	HT_EACH_NETNS,
	HT_EACH_PROXY,
	HT_EACH_LAST = HT_EACH_PROXY,
};

/*
 * "none", "nic", "listener", "process", "storage", "peer", "cgroup", "netns",
 * "proxy"; NULL out of range.
 */
const char *ht_each_name(enum ht_each e);

/* "value", "sysctl", "module", "advice", "channels", "limit". */
const char *ht_target_kind_name(enum ht_target_kind k);

struct ht_rule;
struct ht_ruleset;

/*
 * ht_ruleset_load - read every *.rules file of the search path.
 * @dirs: directories in increasing precedence; a file name found in a later
 *        directory replaces the same name in an earlier one (systemd's
 *        drop-in rule), and a symbolic link to /dev/null there masks it
 *        (neither is read). A directory that does not exist is skipped.
 *        Files are read in file-name order. A rule id defined in two
 *        directories is the later directory's rule, in the place the
 *        earlier one had in the load order (a site's override of one rule).
 * @out:  the new ruleset; free with ht_ruleset_free().
 *
 * Returns 0; -EINVAL with err "FILE:LINE:COL: message" for a malformed file
 * (syntax, unknown key, a rule id defined twice in one directory,
 * expression syntax); -ENOENT when
 * no rules file was found at all; another negative errno when a file cannot
 * be read; -ENOMEM.
 */
int ht_ruleset_load(const char *const *dirs, size_t ndirs, struct ht_ruleset **out,
                    struct ht_error *err);

void ht_ruleset_free(struct ht_ruleset *rs);

/*
 * ht_ruleset_load_profile - set workload variables from profile @name, the
 * file profiles/NAME.profile in the last directory of the search path that
 * has one. "include = OTHER" in its [profile] section loads OTHER first.
 * Once the chain is read, every number is checked against its range (a
 * [workload] section of a rules file; none declared: not negative).
 * Returns 0; -ENOENT (err names the profile and the directories searched);
 * -ELOOP for an include cycle; -EINVAL for a malformed file (FILE:LINE:COL)
 * or a value out of range ("FILE:LINE:COL: workload.burst: expected a
 * number >= 1 and <= 1000, found 0", at the value that was set last).
 */
int ht_ruleset_load_profile(struct ht_ruleset *rs, const char *name, struct ht_error *err);

/* Name of the profile loaded last, or NULL. */
const char *ht_ruleset_profile(const struct ht_ruleset *rs);

/* The [profile] description of that profile's own file, or NULL when it has none. */
const char *ht_ruleset_profile_description(const struct ht_ruleset *rs);

/*
 * struct ht_profile_info - one profile of the rules directories, as
 * ht_ruleset_profiles() found it. Every string is malloc()ed and freed with
 * ht_profile_infos_free().
 */
struct ht_profile_info {
	char *name;        /* NAME of profiles/NAME.profile */
	char *path;        /* the file that counts: the last directory's that has one */
	char *description; /* its [profile] description; NULL when it has none */
	char *service;     /* its workload.service (or its includes'); NULL when "" or unset */
	char *error;       /* why it does not load ("FILE:LINE:COL: message"), else NULL;
	                    * description and service are NULL then */
};

/*
 * ht_ruleset_profiles - every profile of @rs's rules directories
 * (profiles/NAME.profile of each; a later directory's file of the same name
 * counts, a link to /dev/null masks it), in name order, each read with its
 * includes; a file whose name is no profile name (letters, digits, '_') is
 * left out. *@out (NULL when there is none) and *@n are the caller's to free
 * with ht_profile_infos_free(). A profile that does not load is listed with
 * its error (struct ht_profile_info's error). Returns 0; a negative errno
 * when a directory or file cannot be read (err names it); -ENOMEM.
 */
int ht_ruleset_profiles(const struct ht_ruleset *rs, struct ht_profile_info **out, size_t *n,
                        struct ht_error *err);

/* Frees @n entries of @p and @p itself (NULL allowed). */
void ht_profile_infos_free(struct ht_profile_info *p, size_t n);

/*
 * struct ht_profile_hint - the profile a host's services point to, and why:
 * one sentence per piece of evidence ("/etc/garage.toml exists", "a process
 * named minio listens on :9000"), malloc()ed; clear with ht_profile_hint_clear().
 */
struct ht_profile_hint {
	size_t profile;   /* index into the list given to ht_profile_suggest() */
	char **evidence;
	size_t nevidence; /* at least 1 when there is a hint */
};

/*
 * ht_profile_suggest - the profile of @p (@n of them) whose service
 * (workload.service) the facts @f show most evidence of: the service's
 * configuration file (fact SERVICE.config) and unit (SERVICE.unit) when the
 * facts catalogue has them, a process of that name (process.list) and the
 * first port it listens on (listener.PORT.process). A tie goes to the first
 * in name order. Facts are asked of @f's provider (ht_facts_need()).
 * Returns 1 with *@out filled when that profile is not @active (NULL: none
 * in use) and @active's own service shows less; 0 (*@out empty) when the
 * facts show no service or point to @active; the provider's negative errno.
 */
int ht_profile_suggest(const struct ht_profile_info *p, size_t n, const char *active,
                       struct ht_facts *f, struct ht_profile_hint *out, struct ht_error *err);

void ht_profile_hint_clear(struct ht_profile_hint *h);

/*
 * ht_ruleset_set_var - "workload.NAME=EXPR" from --set: EXPR is a constant
 * expression (numbers with units, strings, bools, versions).
 * Returns 0; -EINVAL with err naming the argument when it is not of that
 * form, names an unknown variable (one no profile or rules file defines),
 * has a different type than the profile's value, or is a number outside the
 * variable's range ("--set workload.burst=0: expected a number >= 1 and <=
 * 1000, found 0"); the variable then keeps its value.
 */
int ht_ruleset_set_var(struct ht_ruleset *rs, const char *assignment, struct ht_error *err);

/* Workload variables in name order: count, name and value of the i-th. */
size_t ht_ruleset_var_count(const struct ht_ruleset *rs);
const char *ht_ruleset_var_name(const struct ht_ruleset *rs, size_t i);
const struct ht_value *ht_ruleset_var_value(const struct ht_ruleset *rs, size_t i);

/*
 * ht_ruleset_var_changed - whether the i-th variable's value is not the one
 * of the profile the chain starts from (the profile that includes none):
 * the profile in use, a profile between them, or --set (the configuration's
 * [set] too) set it. False out of range.
 */
bool ht_ruleset_var_changed(const struct ht_ruleset *rs, size_t i);

/*
 * ht_ruleset_check - static checks over the whole ruleset with the workload
 * variables in place: every name is a known fact (ht_fact_def_find()), a
 * workload variable or a rule id; types fit (when: bool, severity: string,
 * value of a sysctl or module target: number); no dependency cycle between
 * rules. Returns 0 or -EINVAL with err "FILE:LINE:COL: message".
 */
int ht_ruleset_check(struct ht_ruleset *rs, struct ht_error *err);

/* Rules in load order (file name, then position in the file). */
size_t ht_ruleset_rule_count(const struct ht_ruleset *rs);
const struct ht_rule *ht_ruleset_rule_at(const struct ht_ruleset *rs, size_t i);
const struct ht_rule *ht_ruleset_find(const struct ht_ruleset *rs, const char *id);

const char *ht_rule_id(const struct ht_rule *r);
const char *ht_rule_title(const struct ht_rule *r);      /* may be NULL */
const char *ht_rule_rationale(const struct ht_rule *r);  /* may be NULL */
enum ht_target_kind ht_rule_kind(const struct ht_rule *r);
const char *ht_rule_target(const struct ht_rule *r);     /* fact-style name or NULL */
bool ht_rule_each_nic(const struct ht_rule *r);          /* evaluated per interface */
enum ht_each ht_rule_each(const struct ht_rule *r);      /* what it is evaluated for */
const struct ht_srcpos *ht_rule_pos(const struct ht_rule *r);

/*
 * ht_rule_only_raise - true when the rule's `direction` is raise-only
 * (tuned's "=>N"): a host value above the recommendation is kept, never
 * lowered (the finding's `kept`).
 */
bool ht_rule_only_raise(const struct ht_rule *r);

/*
 * ht_rule_unit - the unit the rule's values carry ("entries", "MB/s"): its
 * `unit` key, else the unit of its target fact; NULL when neither has one.
 * Static text owned by the ruleset.
 */
const char *ht_rule_unit(const struct ht_rule *r);

/*
 * ht_rule_key_text - the source text of key @key ("when", "value",
 * "severity", "current", "explain", ...) of rule @r, or NULL when the rule
 * does not set it. For `hosttune explain`.
 */
const char *ht_rule_key_text(const struct ht_rule *r, const char *key);

/*
 * ht_ruleset_foreach_fact - calls @cb for every name the rules read that is
 * no rule id and no workload variable (a fact, the per-instance FAMILY.SUFFIX
 * forms included, and each sysctl or module target), in load order, repeats
 * and all. Stops at and returns @cb's first non-zero return; 0 otherwise.
 */
int ht_ruleset_foreach_fact(const struct ht_ruleset *rs, ht_name_cb cb, void *userdata);

/* One evaluated rule with a target. */
/*
 * The figures of a limit rule's finding (`limit` and `usage`, hosttune.rules(5)
 * LIMITS), in the rule's unit, for the reports. Strings are malloc()ed and
 * freed with the finding; a figure the host did not give is not known.
 */
struct ht_limit_use {
	bool set;               /* the rule is a limit and both figures are known */
	double limit, usage;    /* the limit (> 0 for a share) and what is in use of it */
	bool events_known;      /* `events` had a value: */
	double events;          /* the times the limit bit (since boot, or in the sample) */
	char *holder;           /* the largest holder, NULL when none is known */
	char *holder_why;       /* why it is not known (the fact's reason), else NULL */
	bool held_known;        /* `held` had a value: */
	double held;            /* what the holder holds, in the same unit as usage */
	bool stray;             /* the holder is not what the limit is for (a leak, a storm) */
	char *rest;             /* who holds the rest, NULL when the rule does not say */
	char *source;           /* where the limit is set (the fix goes there), NULL when unknown */
	struct ht_value limit_v, usage_v, held_v; /* the same figures exactly (an integer past
	                                             2^53 as it is); held_v NONE when unknown */
};

struct ht_finding {
	const struct ht_rule *rule;
	char *instance;           /* the instance of an `each` rule (interface, port, process
	                             name) as the kernel names it, else NULL */
	char *instance_key;       /* the same as its facts and its family's list spell it
	                             (escaped, shared/escape.h), else NULL (then escape
	                             @instance: ht_finding_fact()) */
	bool applicable;          /* false: a fact it needs is unavailable */
	char *reason;             /* why not applicable; NULL when applicable */
	enum ht_severity severity;
	struct ht_value current;  /* HT_T_NONE when the rule has no current value */
	struct ht_value recommended; /* HT_T_NONE for advice without a value */
	bool kept;                /* only-raise: the host already has more; nothing to change */
	bool read_only;           /* `writable` is false here (e.g. in a container): no fix */
	bool no_live;             /* the target's live value does not exist now (nf_conntrack not
	                             loaded yet; a sysctl target whose /proc/sys file is ENOENT):
	                             the files apply when it appears, no live write */
	struct ht_value kernel_default; /* `default`: the value the kernel boots with, or NONE */
	char *boot_value;         /* what the boot configuration sets, when it differs from
	                             current (ht_findings_add_boot(), persist/verify.h), else NULL */
	char *boot_source;        /* FILE:LINE of boot_value */
	bool boot_worse;          /* boot_value is worse than the recommendation (below it for
	                             a raise-only rule, another value for any other): the host
	                             comes back from a reboot with it; set with boot_value */
	char *explanation;        /* rendered template, may hold newlines; never NULL when applicable */
	char *remedy;             /* rendered `remedy`: what fixes it when hosttune writes no file
	                             (the owner and its knob, the hypervisor, the hardware); NULL
	                             when the rule has none or it renders empty */
	char *lever;              /* `lever`: id of the rule whose fix resolves this finding (e.g.
	                             conntrack.time_wait for a table too small), NULL for none */
	struct ht_limit_use limit; /* a limit rule's figures; limit.set false for any other */
	const char *case_name;    /* the rule's case that gave the severity (`case.NAME`, or the
	                             limit's own: "events", "full", "high"); NULL for none (not
	                             owned: the ruleset's) */
	const char *waived;       /* the site's reason for accepting it (a waiver of the CLI's
	                             configuration, set after the evaluation; not owned: it lives
	                             as long as that configuration), NULL when not waived; a
	                             waived finding is reported, not counted in the exit status */
};

struct ht_findings {
	struct ht_finding *items;
	size_t n;
};

void ht_findings_free(struct ht_findings *f);

/*
 * ht_finding_fact - "FAMILY.INSTANCE.@suffix", the fact of finding @f's
 * instance (@family "process", "nic"), INSTANCE as its facts spell it
 * (instance_key, else @f's instance escaped: shared/escape.h). Returns a new
 * string the caller frees; NULL on ENOMEM or for a finding without instance.
 */
char *ht_finding_fact(const struct ht_finding *f, const char *family, const char *suffix);

/* ht_finding_fact()'s INSTANCE alone, in a new string; NULL as there. */
char *ht_finding_key(const struct ht_finding *f);

/*
 * ht_ruleset_evaluate - evaluate every rule with a target whose `when` holds,
 * in load order. A rule that needs an unavailable fact becomes a finding that
 * is not applicable, with the reason. ht_ruleset_check() must have succeeded.
 * Facts are read with ht_facts_need(): a fact @facts does not hold yet is
 * asked of its provider (collect/) when a rule first reads it, so a source
 * runs only when a rule that applies needs it; an error of the provider
 * (err set) ends the evaluation with it. A family's list (nic.list, ...) is
 * read when its first `each` rule or aggregate needs it.
 * Returns 0; -EINVAL, -ERANGE or -EDOM with err "FILE:LINE:COL: message"
 * for an evaluation error (division by zero, overflow, bad severity string,
 * a target value that is not an integer); nothing is returned in @out then.
 */
int ht_ruleset_evaluate(struct ht_ruleset *rs, struct ht_facts *facts,
                        struct ht_findings *out, struct ht_error *err);

/*
 * ht_ruleset_value - the value of rule @id from the last successful
 * ht_ruleset_evaluate() (whose facts must still be alive): named values
 * such as conntrack.default.buckets, for reports and tests.
 * @out: caller clears it with ht_value_clear().
 * Returns 0; -ENODATA when it needs an unavailable fact or its `when` is
 * false (err says which); -ENOENT for no such rule or a rule without value;
 * an evaluation error as ht_ruleset_evaluate() does.
 */
int ht_ruleset_value(struct ht_ruleset *rs, const char *id, struct ht_value *out,
                     struct ht_error *err);

/*
 * ht_ruleset_holds - the bool rule @id during an evaluation: a host rule
 * (@instance NULL), or an `each` rule for the instance of its family named
 * @instance ("3900" of listener.list), made current for the while as an
 * aggregate does. For a collector that makes expensive evidence conditional
 * on what a rule says of cheap facts (a provider called by ht_facts_need()).
 * Returns 0 with *@holds set; -ENOENT when there is no such bool rule or
 * instance, or it is of the other kind (per instance, host); -ENODATA when
 * the rule needs an unavailable fact; -ESRCH outside an evaluation; an
 * evaluation error; @err says which.
 */
int ht_ruleset_holds(struct ht_ruleset *rs, const char *id, const char *instance, bool *holds,
                     struct ht_error *err);

/*
 * ht_ruleset_lint - each condition a rule writes both in its severity (the
 * conditions of its ?:, its cases') and in a {?COND} of its explanation,
 * remedy or a case's explanation: the story told twice, which a case with
 * its own explanation tells once. Conditions are compared as atoms (split
 * at && and ||, without !) in a canonical text. @cb gets the rule, the
 * atom, where the severity tests it and where the text does; a negative
 * return stops the walk. Returns the number of reports, -ENOMEM, or @cb's
 * negative return.
 */
typedef int (*ht_lint_cb)(const struct ht_rule *r, const char *atom, const struct ht_srcpos *sev,
                          const struct ht_srcpos *text, void *userdata);
int ht_ruleset_lint(const struct ht_ruleset *rs, ht_lint_cb cb, void *userdata);

/*
 * ht_ruleset_conditionals - the conditionals of the rules' texts: *@ifs the
 * {?COND} of every explanation, remedy and case's explanation, *@strs the
 * ?: with a string in a branch (a literal or text()) in any key but
 * severity and lever. The shipped rules are held to a budget of them
 * (hosttune rules --lint prints both).
 */
void ht_ruleset_conditionals(const struct ht_ruleset *rs, unsigned *ifs, unsigned *strs);

/*
 * ht_rule_case - the @i-th named case of @r (case.NAME, in the order
 * written): its name, severity and condition's text, for hosttune explain.
 * Returns 0, or -ENOENT when @r has no case @i. The strings are the
 * ruleset's.
 */
int ht_rule_case(const struct ht_rule *r, size_t i, const char **name, enum ht_severity *sev,
                 const char **cond);
