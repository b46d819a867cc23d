/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * bootconf - the kernel settings the next boot will apply, read from the files
 * the boot reads and merged the way the boot merges them:
 *
 *   sysctl.d        as systemd-sysctl does (systemd 252, src/sysctl/sysctl.c,
 *                   src/basic/conf-files.c, man sysctl.d(5))
 *   modprobe.d      the "options" lines, as libkmod does (kmod 30,
 *                   libkmod/libkmod-config.c), each option string split into
 *                   parameters as the kernel splits it (kernel/params.c)
 *   modules-load.d  as systemd-modules-load does (src/modules-load/modules-load.c)
 *   UNIT.d          a service's [Service] settings (LimitNOFILE=, ExecStart=, ...)
 *                   from its unit file and drop-ins, as systemd 252 loads them
 *                   (src/shared/dropin.c, systemd.unit(5))
 *
 * Every path is taken below a --root prefix, and symbolic links are resolved
 * inside that root (as systemd's chase() with CHASE_PREFIX_ROOT does), so an
 * absolute link such as ROOT/lib -> /usr/lib never leads to the host's files.
 * Nothing is printed: what the boot would log about a file comes back as a
 * struct ht_conf_problem.
 *
 * Paths in the results are host paths ("/etc/sysctl.d/90-hosttune.conf"),
 * without the root prefix, named by the configured directory (a file read
 * through ROOT/lib -> usr/lib is "/lib/modprobe.d/x.conf", as kmod names it).
 *
 * One file a source: bootconf-sysctl.c, bootconf-modprobe.c (and the kernel
 * command line), bootconf-modules-load.c, bootconf-unit.c (unit files,
 * drop-ins, system.conf); what they share, bootconf-internal.h, is in
 * bootconf.c with struct ht_conf's functions.
 */

/*
 * One line that gives a key a value.
 * @file: host path of the file (owned).
 * @line: 1-based line in @file; for a kmod line continued with a trailing
 *        backslash, its first physical line.
 * @value: the value as the boot applies it (owned). NULL means:
 *         sysctl: a "-key" line without '=' (systemd's "negative match": the
 *         key is excluded from glob patterns and not written at all);
 *         modprobe: a parameter given without '=' (the kernel calls its setter
 *         with no value: a bool becomes true, anything else fails with EINVAL).
 * @ignore_failure: sysctl: the line started with '-' (a failure to write the
 *         key is only logged at debug level). Always false for the others.
 * @pattern: sysctl: the glob key (dotted, normalized) this assignment was
 *         expanded from, or NULL for a line that names the key itself (owned).
 */
struct ht_conf_assign {
	char *file;
	unsigned line;
	char *value;
	bool ignore_failure;
	char *pattern;
};

/*
 * One key and every line that gives it a value, in increasing precedence:
 * the last one is the effective one (ht_conf_effective()).
 * @key: sysctl: dotted as sysctl(8) prints it ("net.ipv4.conf.eth0/100.rp_filter",
 *       ht_sysctl_key_normalize()); modprobe: "MODULE.PARAM" with '-' turned into
 *       '_' in both ("nf_conntrack.hashsize"); modules-load: the module name as
 *       written on the line.
 * @assigns, @n: n >= 1. For sysctl, lines that reach the key through a glob
 *       come first (in the order systemd-sysctl writes them), then the lines
 *       that name it, in the order read: systemd never lets a glob override a
 *       key that some line names explicitly.
 * @ignore_failure: sysctl: the '-' flag systemd-sysctl ends up with for the
 *       effective value (it ORs the flags of repeated lines with the same value).
 */
struct ht_conf_key {
	char *key;
	struct ht_conf_assign *assigns;
	size_t n;
	bool ignore_failure;
};

enum ht_conf_problem_kind {
	HT_CONF_UNREADABLE,      /* a file or directory could not be read; it is skipped */
	HT_CONF_MALFORMED,       /* a line the boot ignores: sysctl without '=' or with a key
	                            naming no file, kmod bad or deprecated command */
	HT_CONF_NOT_READ,        /* /etc/sysctl.conf has settings, but no sysctl.d entry
	                            leads to it: systemd-sysctl does not read it */
	HT_CONF_SPACE_AROUND_EQ, /* options "p = v": the kernel gets "p", "=" and "v" */
	HT_CONF_UNKNOWN_PARAM,   /* nf_conntrack has no such parameter: the kernel ignores it */
	HT_CONF_MISSING_VALUE,   /* an nf_conntrack number without a value: EINVAL, no load;
	                            a unit's "LimitNOFILE=" without one: systemd ignores it */
	HT_CONF_BAD_VALUE,       /* an nf_conntrack number the kernel cannot parse: no load;
	                            a LimitNOFILE= value systemd cannot parse: ignored */
};

/*
 * One thing the boot would complain about (or silently get wrong).
 * @file: host path (owned).
 * @line: 1-based, 0 when it is about the whole file.
 * @key: the key concerned ("nf_conntrack.hashsize", a module name) or NULL (owned).
 * @message: "FILE:LINE: text", or "FILE: text" when @line is 0 (owned).
 */
struct ht_conf_problem {
	enum ht_conf_problem_kind kind;
	char *file;
	unsigned line;
	char *key;
	char *message;
};

/*
 * The result of one reader. Zero it before the first read; everything in it is
 * owned by it and released by ht_conf_free().
 * @keys, @n: sorted by key (strcmp).
 * @files, @nfiles: host paths of the files read, in the order read.
 * @masked, @nmasked: host paths of entries that won their file name but hold
 *       nothing: a link to /dev/null, a character device or an empty regular
 *       file. Each hides the same name in the directories after it; systemd's
 *       null_or_empty() (src/basic/stat-util.c) counts all three as masks.
 * @problems, @nproblems: in the order found.
 */
struct ht_conf {
	struct ht_conf_key *keys;
	size_t n;
	char **files;
	size_t nfiles;
	char **masked;
	size_t nmasked;
	struct ht_conf_problem *problems;
	size_t nproblems;
};

/*
 * ht_sysctl_conf_read - the sysctl settings systemd-sysctl applies at boot.
 * @root: directory that stands for "/", or NULL / "" / "/" for the host.
 * @out: zeroed struct, filled on success; on failure it is left empty.
 *
 * Directories, in decreasing precedence: /etc/sysctl.d, /run/sysctl.d,
 * /usr/local/lib/sysctl.d, /usr/lib/sysctl.d, and /lib/sysctl.d when ROOT/lib
 * is not a link to /usr/lib (Debian's systemd is built with split-usr). Files
 * "*.conf" not starting with '.'; a name in an earlier directory hides the same
 * name in later ones; the survivors are read in name order, across directories.
 * Within and across files the last line for a key wins. /etc/sysctl.conf is
 * read only through a sysctl.d entry that links to it (Debian's
 * /etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf, which a later name such as
 * 99-zzz.conf still overrides); when it has settings and nothing links to it,
 * an HT_CONF_NOT_READ problem says so.
 *
 * Lines: "key = value" (blanks around '=' optional, value kept verbatim after
 * trimming, '=' inside it included); '#' or ';' as the first non-blank starts a
 * comment; a leading '-' sets ignore_failure; "-key" without '=' excludes key
 * from globs. A key with '*', '?' or '[' is a glob: it is expanded against the
 * files below ROOT/proc/sys (directories skipped) and each match gets the
 * value, with the glob as @pattern, unless a line names that key explicitly
 * (see struct ht_conf_key); a glob that matches nothing gives no key. A line
 * without '=' is an HT_CONF_MALFORMED problem and skipped, as systemd logs it
 * and goes on.
 *
 * Returns 0, -ENOMEM, or -EINVAL when @out is NULL. Unreadable files and
 * directories become HT_CONF_UNREADABLE problems; absent ones are no problem.
 */
int ht_sysctl_conf_read(const char *root, struct ht_conf *out);

/*
 * ht_modprobe_conf_read - the module parameters modprobe.d gives at the next load.
 * @root, @out: as for ht_sysctl_conf_read().
 *
 * Directories, in decreasing precedence, as kmod 30 has them
 * (libkmod/libkmod.c default_config_paths): /etc/modprobe.d, /run/modprobe.d,
 * /usr/local/lib/modprobe.d, /lib/modprobe.d. kmod 30 does not read
 * /usr/lib/modprobe.d itself; on a merged-/usr host ROOT/lib links there and it
 * is read as /lib/modprobe.d. Files "*.conf" and "*.alias" not starting with
 * '.', directories skipped; same name hiding and name order as sysctl.d.
 *
 * Lines: a trailing backslash continues a line; '#' as the very first
 * character starts a comment. Only "options MODULE PARAMS" lines give keys;
 * the module name gets '-' -> '_' as kmod's underscores() does, and PARAMS is
 * split as the kernel's next_arg() splits it for parse_args() (lib/cmdline.c,
 * kernel/params.c): blanks separate, double quotes group, the first '=' after
 * the first character separates name and value, a "--" ends the parameters.
 * For each parameter the last line wins, since kmod passes the options of all
 * lines in file order and the kernel sets them in turn.
 *
 * Problems: HT_CONF_SPACE_AROUND_EQ for "p = v", "p =v" and "p= v" (the stray
 * "=", "=v" or "v" pieces are in the problem, not recorded as parameters; "p"
 * is recorded as the kernel gets it: without a value, or "" for "p= v"). For
 * nf_conntrack, HT_CONF_UNKNOWN_PARAM for a name other than hashsize,
 * expect_hashsize, acct, tstamp, nf_conntrack_helper (before Linux 6.0) and
 * the dyndbg / async_probe every module takes, HT_CONF_MISSING_VALUE and
 * HT_CONF_BAD_VALUE for hashsize and expect_hashsize. HT_CONF_MALFORMED for
 * lines kmod ignores, a "--" (the kernel ignores what follows it, in this line
 * and later ones for the module) and an unclosed double quote. Options on the
 * kernel command line (nf_conntrack.hashsize=N) are not read.
 *
 * Returns as ht_sysctl_conf_read().
 */
int ht_modprobe_conf_read(const char *root, struct ht_conf *out);

/*
 * ht_modules_load_read - the modules systemd-modules-load loads at boot.
 * @root, @out: as for ht_sysctl_conf_read().
 *
 * Directories as for sysctl.d with "modules-load.d". One module name a line,
 * trimmed; '#' or ';' as the first non-blank starts a comment. Each key is a
 * name as written (no judgement: "nf_conntrack_ipv4", merged into nf_conntrack
 * in Linux 4.19, is recorded like any other), with every line naming it;
 * the value of each assignment is the name again. The modules_load= kernel
 * command line is not read.
 *
 * Returns as ht_sysctl_conf_read().
 */
int ht_modules_load_read(const char *root, struct ht_conf *out);

/*
 * The key named exactly @key, or NULL (also for a NULL @c or @key). Keys are in
 * the reader's normal form: pass a sysctl key through ht_sysctl_key_normalize()
 * first when it may be written with slashes.
 */
const struct ht_conf_key *ht_conf_find(const struct ht_conf *c, const char *key);

/* The assignment that takes effect: the last of @k (never NULL for a found key). */
const struct ht_conf_assign *ht_conf_effective(const struct ht_conf_key *k);

/*
 * ht_sysctl_key_normalize - a sysctl key as systemd normalizes it
 * (sysctl_normalize() in sysctl-util.c), written dotted as sysctl(8)
 * prints it. When the first separator is a '.', dots and slashes swap; when it
 * is a '/', the key is already a path and dots stay part of names. Empty and
 * "." path components and a leading '/' go. The dotted form is the path form
 * with '/' and '.' swapped: "net/ipv4/conf/eth0.100/rp_filter" and
 * "net.ipv4.conf.eth0/100.rp_filter" both give "net.ipv4.conf.eth0/100.rp_filter".
 *
 * Returns a newly allocated string (caller frees), "" when nothing is left of
 * the key, or NULL when out of memory.
 */
char *ht_sysctl_key_normalize(const char *key);

/*
 * ht_conf_file_shown - @file as a message names it: Debian's
 * /etc/sysctl.d/99-sysctl.conf link as "/etc/sysctl.conf (via
 * /etc/sysctl.d/99-sysctl.conf)", any other path as it is. Static or @file.
 */
const char *ht_conf_file_shown(const char *file);

/*
 * ht_kcmdline_param - the value the kernel command line (ROOT/proc/cmdline)
 * gives module parameter @name ("nf_conntrack.hashsize"), the last word for
 * it winning; '-' in the word matches '_' in @name as the kernel's parameq()
 * allows. Newly allocated (caller frees), or NULL when absent, unreadable or
 * out of memory. This is where a built-in module's parameters come from.
 */
char *ht_kcmdline_param(const char *root, const char *name);

/*
 * ht_unit_name_valid - true when @unit is a service name hosttune writes a
 * drop-in for: 1 to 255 bytes of [A-Za-z0-9:_.@\\-], ending in ".service",
 * with something before it, not starting with '.' or '@', at most one '@'
 * (systemd's UNIT_NAME_MAX and unit_name_is_valid(), restricted to
 * services). No '/': the name becomes a directory name.
 */
bool ht_unit_name_valid(const char *unit);

/*
 * ht_rlimit_parse - a LimitNOFILE= value as systemd's rlimit_parse() reads it
 * for RLIMIT_NOFILE: "N" (soft and hard N), "S:H", with "infinity" for either
 * (UINT64_MAX); decimal digits only. Returns 0; -EILSEQ when the soft limit is
 * above the hard one (systemd ignores the line); -EINVAL for anything else,
 * the empty value included (systemd ignores it too: it is no reset).
 */
int ht_rlimit_parse(const char *value, uint64_t *soft, uint64_t *hard);

/*
 * ht_unit_setting_read - the [Service] @key= lines ("ExecStart",
 * "Environment", "LimitNOFILE") systemd reads for service @unit
 * ("garage.service"), in the order it applies them: the key "@key" of @out
 * holds them, the last one read last (ht_conf_effective()). What an
 * assignment means is the caller's: for a list setting such as ExecStart= or
 * Environment= an empty value ("") resets the list (systemd.service(5),
 * systemd.exec(5)), for a single value the last one wins.
 * @root, @out: as for ht_sysctl_conf_read().
 *
 * The unit file first: UNIT in the first of /etc/systemd/system,
 * /run/systemd/system, /usr/local/lib/systemd/system, /usr/lib/systemd/system
 * and /lib/systemd/system (the last as for sysctl.d: only when ROOT/lib is
 * not a link to /usr/lib) that has it, for an instance "foo@bar.service"
 * else its template "foo@.service". When one is found (and is no mask) it is
 * @out->files[0], the only entry of @out->files whose name ends in ".service"
 * (drop-ins end in ".conf"); a masked unit file is @out->masked[0] instead.
 * Then the drop-ins "*.conf" of the directories, in decreasing precedence:
 * for each of those search paths, UNIT.d, for an instance the template's
 * "foo@.service.d", and the "-" prefixes' ("foo-bar-.service.d",
 * "foo-.service.d" for "foo-bar-baz.service"), most specific first; then
 * each search path's "service.d" (the unit type's drop-ins, documented in
 * systemd.unit(5) of systemd 252, lowest precedence). A file name in an
 * earlier directory hides the same name in later ones (an empty file or a
 * link to /dev/null is a mask: @masked); the survivors are applied in
 * file-name order across directories. Lines: "[Service]" sections only; '#'
 * or ';' starts a comment; a trailing backslash joins the next line (the
 * backslash becomes a space); "KEY = V" with blanks trimmed. Each
 * assignment's value is V as written (quotes and specifiers kept).
 *
 * For @key "LimitNOFILE", a line systemd logs and ignores gives no
 * assignment but a problem: HT_CONF_MISSING_VALUE for "LimitNOFILE="
 * (config_parse_limit() has no reset: rlimit_parse("") fails and the line
 * is ignored, the earlier value stays), HT_CONF_BAD_VALUE for a value
 * ht_rlimit_parse() refuses. Other keys' values are not checked.
 *
 * Returns 0, -ENOMEM, or -EINVAL when @out is NULL, @unit is not
 * ht_unit_name_valid() or @key is NULL, empty or holds a '='.
 */
int ht_unit_setting_read(const char *root, const char *unit, const char *key, struct ht_conf *out);

/*
 * ht_unit_limits_read - ht_unit_setting_read() of "LimitNOFILE": the
 * LimitNOFILE= lines systemd applies to service @unit, the effective one
 * the last (ht_conf_effective() of the key "LimitNOFILE").
 */
int ht_unit_limits_read(const char *root, const char *unit, struct ht_conf *out);

/*
 * ht_manager_setting_read - the [Manager] @key= lines ("DefaultLimitNOFILE")
 * the system manager (PID 1) reads at boot, in the order it applies them:
 * the key "@key" of @out holds them, the last one the effective one
 * (ht_conf_effective()). @root, @out: as for ht_sysctl_conf_read().
 *
 * As systemd 252 reads its configuration (config_parse_many_nulstr(),
 * systemd-system.conf(5)): /etc/systemd/system.conf first, then the drop-ins
 * "*.conf" of /etc/systemd/system.conf.d, /run/systemd/system.conf.d,
 * /usr/local/lib/systemd/system.conf.d, /usr/lib/systemd/system.conf.d (and
 * /lib/systemd/system.conf.d when ROOT/lib is not a link to /usr/lib, as for
 * sysctl.d), a name in an earlier directory hiding the same name in later
 * ones (an empty file or a link to /dev/null is a mask), the survivors
 * applied in file-name order. Lines as for ht_unit_setting_read() but in
 * "[Manager]" sections. For "DefaultLimitNOFILE", a value systemd's
 * config_parse_rlimit() logs and ignores gives no assignment but a problem
 * (HT_CONF_MISSING_VALUE for an empty value, HT_CONF_BAD_VALUE for one
 * ht_rlimit_parse() refuses), as for LimitNOFILE=. Other keys' values are
 * not checked. Nothing found: no key (systemd's built-in default applies,
 * for DefaultLimitNOFILE soft 1024, hard 524288 since systemd 240).
 *
 * Returns 0, -ENOMEM, or -EINVAL when @out is NULL or @key is NULL, empty
 * or holds a '='.
 */
int ht_manager_setting_read(const char *root, const char *key, struct ht_conf *out);

/* A stable lowercase name for @kind ("space-around-equals", ...), for reports. */
const char *ht_conf_problem_kind_name(enum ht_conf_problem_kind kind);

/* Releases everything @c holds and zeroes it; NULL and a zeroed struct are fine. */
void ht_conf_free(struct ht_conf *c);
