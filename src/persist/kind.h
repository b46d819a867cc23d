/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/facts.h"
#include "engine/fix.h"
#include "engine/rules.h"
#include "shared/bootconf.h"
#include "shared/util.h"
#include "persist/persist.h"

/*
 * Private to persist/: one file per target kind, behind one table.
 *
 *   kind-sysctl.c    sysctl keys: /etc/sysctl.d, /proc/sys
 *   kind-module.c    module parameters: /etc/modprobe.d (and modules-load.d,
 *                    which loads nf_conntrack before systemd-sysctl runs),
 *                    /sys/module, the kernel command line of a built-in module
 *   kind-channels.c  NIC channels: a systemd .link file, ethtool netlink
 *   kind-limit.c     a service's LimitNOFILE=: a drop-in, a restart
 *
 * Each file defines one struct ht_kind (its file, its line in that file, its
 * live path or live write, how its value in hosttune's file is found, how its
 * boot value is read, how it is written and reverted), and ht_kinds[] in
 * kinds.c lists them. Every path and line format is spelled out once, in its
 * kind's file: the plan (plan.c), apply and revert (apply.c) and verify
 * (verify.c) reach them through the table. Adding a kind is a new file and a
 * row of ht_kinds[].
 *
 * The helpers every kind builds its part of a plan with (plan-add.c) are
 * below the table; they call nothing of the kinds.
 */

struct ht_kind;
struct ht_limit_fix;

/*
 * One setting a finding asks for: what the plan may put in a file and write
 * live. Built by the kind's setting() from an applicable finding with an
 * integer recommendation; strings and limit owned by the plan (plan.c frees them).
 */
struct ht_setting {
	const struct ht_finding *f;
	const struct ht_kind *kind;
	const char *key;  /* the rule's target; per instance: nic.IF.channels.KIND, process.NAME.nofile */
	char *value;      /* the recommended value as text (a limit: "SOFT:HARD") */
	char *current;    /* the current value as text, NULL when unavailable or not live */
	char *full_key;   /* owned storage behind key when built */
	bool act;         /* in --only and not kept: apply may change it */
	struct ht_limit_fix *limit; /* the limit kind's drop-in (owned), else NULL */
};

/*
 * Another manager of a directory a kind writes in (managed.c): below a
 * --root a link on the way to it (apply writes through none), on the host a
 * link into the Nix store or a read-only file system. Strings owned.
 */
struct ht_manager {
	char *dir;    /* the link or read-only directory, a host path ("/etc/systemd/system"); NULL: none */
	char *target; /* the link's text ("/etc/static/systemd/system"), NULL when not a link */
	bool nixos;   /* NixOS: the link leads into /nix/store, or ROOT/etc/NIXOS exists */
};

/*
 * ht_dir_manager - whether someone else manages @dir (a host path) below
 * @root: fills @m and returns 1; 0 when hosttune may write there (or create
 * it); -ENOMEM. Reads only the components' inodes and links.
 */
int ht_dir_manager(const char *root, const char *dir, struct ht_manager *m);
void ht_manager_free(struct ht_manager *m);

/*
 * ht_manager_setting - the manager's own line for @f's recommendation: for
 * NixOS the configuration.nix option (boot.kernel.sysctl."KEY" = N;,
 * boot.extraModprobeConfig, systemd.network.links, systemd.services."UNIT"
 * .serviceConfig.LimitNOFILE), otherwise the line hosttune's file would hold.
 * Newly allocated; NULL on ENOMEM or when @f has no integer recommendation
 * of a kind that writes a file.
 */
char *ht_manager_setting(const struct ht_manager *m, const struct ht_finding *f,
                         const struct ht_facts *facts);

/* One line of who manages @m's directory ("NixOS manages DIR (a link to T)"); NULL on ENOMEM. */
char *ht_manager_text(const struct ht_manager *m);

/* The number of rows of ht_kinds[]. */
#define HT_NKINDS 4

/* The plan being built, as the kinds see it. */
struct ht_plan_ctx {
	struct ht_plan *p;
	const struct ht_facts *facts;
	const char *root;        /* --root, NULL for the host */
	const char *only;        /* --only: comma-separated rule ids, NULL for all */
	struct ht_error *err;    /* names a file that could not be read */
	bool no_disk;            /* HT_PLAN_NO_DISK: another host's facts, no file read */
	bool live_root;          /* no --root: channels are set over netlink */
	bool builtin;            /* conntrack.module is "builtin": nf_conntrack is built in */
	bool initial_netns;      /* netns.initial (true when unknown) */
	/*
	 * The plan's files need nf_conntrack loaded before systemd-sysctl runs
	 * (ht_modules_load_file): a file of theirs sets a key or parameter of
	 * it, nf_conntrack is a module and this is the initial namespace. Set
	 * before the kinds' files() run.
	 */
	bool load_conntrack;
	/*
	 * Per row of ht_kinds[]: another manager of a directory of that kind
	 * (.dir NULL: none). Its settings get the manager's line as their fix,
	 * and the plan writes neither a file nor a live value for them (only
	 * --live-only sets those live).
	 */
	struct ht_manager managed[HT_NKINDS];
	bool persist; /* HT_PLAN_PERSIST: the plan writes files */
};


/*
 * The operations of one target kind. Ops that a kind has no use for are
 * NULL, as said for each. Strings returned are newly allocated (caller
 * frees); int returns are 0 or a negative errno (-ENOMEM, or a read error
 * with ctx->err naming the file).
 */
struct ht_kind {
	enum ht_target_kind target; /* the rules' kind it serves */

	/* ---- its files ---- */
	/*
	 * The one file all its settings go in (sysctl.d, modprobe.d): the plan
	 * reads it before anything else and chooses its lines (ht_plan_select())
	 * for files(). NULL: a file per instance, which files() reads itself.
	 */
	const char *file;
	/*
	 * The directories its files are in, NULL-terminated: hosttune creates
	 * them and their parents, and apply and revert remove what an
	 * interrupted run left there (ht_tmp_sweep()).
	 */
	const char *const *dirs;
	/*
	 * Its files are each in a directory of their own below dirs[0]
	 * (UNIT.d): those are swept only when a file of theirs is known, and
	 * instance_dir() says which directories they are.
	 */
	bool dir_per_instance;
	bool (*instance_dir)(const char *dir);
	/* True when @path (a host path) is exactly one of its files. */
	bool (*managed_file)(const char *path);
	/*
	 * True when @line (one line of its file @path, without the newline; not
	 * blank and no '#' comment) is one apply writes there: a fixed line of
	 * its template, or its line() for a key and a value the plan writes (an
	 * integer). revert puts back no file with another line (a state file's
	 * "content" and "written" are checked with it).
	 */
	bool (*file_line_ok)(const char *path, const char *line);
	/*
	 * The line of @value for rule target @target in its file, without a
	 * newline ("net.core.somaxconn = 4096"). With "" as @value it is what
	 * precedes the value: how the value in hosttune's file is found
	 * (ht_file_value()). NULL on ENOMEM.
	 */
	char *(*line)(const char *target, const char *value);
	/* The comment above a line names the instance: "# RULE[INSTANCE]: TITLE". */
	bool comment_instance;
	/*
	 * Whether @s goes in hosttune's file at all when apply may change it
	 * (@file_val: what hosttune's file gives it now, or NULL). NULL:
	 * ht_setting_wanted().
	 */
	bool (*wanted)(const struct ht_setting *s, const char *file_val);
	/* Whether @s belongs in @file (a parameter of a built-in module does not). NULL: all do. */
	bool (*in_file)(const struct ht_plan_ctx *c, const struct ht_setting *s);
	/* @s, once in hosttune's file, applies at boot only with nf_conntrack loaded. NULL: never. */
	bool (*needs_conntrack)(const struct ht_setting *s);
	/*
	 * Adds its files, and the warnings and restarts they bring, to c->p:
	 * @all[0..n) every setting of the plan (sorted by key; the kind picks
	 * its own), @chosen[0..nchosen) those ht_plan_select() chose for @file.
	 */
	int (*files)(struct ht_plan_ctx *c, const struct ht_setting *all, size_t n,
	             const struct ht_setting *chosen, size_t nchosen);

	/* ---- its live value ---- */
	/*
	 * Its live keys in a state file ("module."): ht_kind_of_live_key(). NULL
	 * with live_path(): every path key no other kind claims (sysctl keys).
	 */
	const char *key_prefix;
	/*
	 * The procfs/sysfs file of live key @key, written by apply and revert
	 * (ht_live_write_at()); NULL when @key names none or on ENOMEM. NULL op:
	 * no such file (see live).
	 */
	char *(*live_path)(const char *key);
	/*
	 * A live value written otherwise (channels: netlink): fills @l's kind
	 * and what it needs, and @l->note when it is not written here. NULL op:
	 * live_path(), or no live value at all (a limit).
	 */
	int (*live)(const struct ht_plan_ctx *c, const struct ht_setting *s, struct ht_plan_live *l);

	/* ---- its boot value ---- */
	/* Reads the configuration the boot applies (shared/bootconf.h). NULL: none. */
	int (*boot_read)(const char *root, struct ht_conf *out);
	/* The key of rule target @target in what boot_read() read (static, inside @target). */
	const char *(*boot_key)(const char *target);

	/* ---- a finding ---- */
	/*
	 * Fills @s (f, kind and act set) for @f, an applicable finding with an
	 * integer recommendation that is not read-only. Returns 1 when the plan
	 * takes the setting, 0 when not (a skip or restart may be added to
	 * c->p), a negative errno; what it put in @s the plan frees either way.
	 */
	int (*setting)(struct ht_plan_ctx *c, const struct ht_finding *f, struct ht_setting *s);
	/*
	 * Fills @fix for @f, a finding that asks for a change (applicable, not
	 * kept, not read-only, the value not already the recommended one).
	 * Returns 0 (@fix may stay HT_FIX_NONE) or -ENOMEM.
	 */
	int (*fix)(const struct ht_plan_ctx *c, const struct ht_finding *f, struct ht_fix *fix);
};

/* The kinds (kinds.c): sysctl, module, channels, limit, in the order their files are planned. */
extern const struct ht_kind *const ht_kinds[HT_NKINDS];
extern const struct ht_kind ht_kind_sysctl, ht_kind_module, ht_kind_channels, ht_kind_limit;

/* The kind of rules' target kind @t, NULL for one hosttune writes nothing for (advice, values). */
const struct ht_kind *ht_kind_of(enum ht_target_kind t);

/* The kind whose file @path is (managed_file()), or NULL. */
const struct ht_kind *ht_kind_of_file(const char *path);

/*
 * The kind with a procfs/sysfs file whose live key @key is: the one whose
 * key_prefix @key starts with, else the one without a prefix. NULL: none.
 */
const struct ht_kind *ht_kind_of_live_key(const char *key);

/* kind-module.c: the modules-load.d file that loads nf_conntrack before systemd-sysctl runs. */
extern const char ht_modules_load_file[];

/* ---- kind-channels.c ---- */

/* True when @channel is "combined", "rx" or "tx" (ethtool -L's names). */
bool ht_channel_valid(const char *channel);

/*
 * "nic.IF.channels.CHANNEL", the live key of a channel count, the fact of
 * interface @ifname (as the kernel names it) with IF escaped
 * (shared/escape.h); NULL on ENOMEM.
 */
char *ht_channels_key(const char *ifname, const char *channel);

/*
 * ht_channels_write - sets @channel of @ifname to @value (a count, 1 to
 * UINT32_MAX, as text) over ethtool netlink and reads it back.
 * *@changed: the set took effect (also when the read-back differs).
 * Returns 0; -EINVAL for a bad count; an error of ht_ethtool_set_channels()
 * (-EIO: set, but reads back otherwise). @err says why.
 */
int ht_channels_write(const char *ifname, const char *channel, const char *value, bool *changed,
                      struct ht_error *err);

/* ---- kind-limit.c ---- */

/*
 * The drop-in of a limit nofile finding (HT_TARGET_LIMIT, current value
 * process.NAME.nofile, NAME the finding's instance). Strings owned.
 * @unit: process.NAME.unit, a name ht_unit_name_valid() accepts.
 * @path: "/etc/systemd/system/UNIT.d/90-hosttune.conf".
 * @value: "SOFT:HARD", SOFT the recommended value, HARD the larger of SOFT
 *         and process.NAME.nofile_hard (never lower the hard limit: systemd
 *         240 and later give services 524288).
 */
struct ht_limit_fix {
	char *unit;
	char *path;
	char *value;
	int64_t soft, hard;
	/*
	 * Filled by ht_limit_fix_configured(): the soft limit the unit's own
	 * files give (hosttune's drop-in left out; -1: none, INT64_MAX:
	 * infinity), the "FILE:LINE" of that line (owned, NULL with none), and
	 * @enough when it is at least the recommended soft limit: then no
	 * drop-in is written, the service only needs a restart to take it.
	 */
	int64_t configured;
	char *source;
	bool enough;
};

/*
 * ht_limit_fix - fill @out for @f (free with ht_limit_fix_free()).
 * Returns 0; -ENODATA when process.NAME.unit or .nofile_hard is unavailable
 * (the process runs outside a service) and -EINVAL when the unit name is
 * refused, with *@why (caller frees) saying so in one line; -EINVAL with
 * *@why NULL for a finding that is no limit with an integer value; -ENOMEM.
 */
int ht_limit_fix(const struct ht_finding *f, const struct ht_facts *facts,
                 struct ht_limit_fix *out, char **why);

/* Frees @l's strings and zeroes it. */
void ht_limit_fix_free(struct ht_limit_fix *l);

/*
 * ht_limit_fix_configured - what the service's unit file and drop-ins give
 * without hosttune's own drop-in (ht_unit_limits_read() below @root), so that
 * hosttune never lowers it: @l->enough when that soft limit is already at
 * least @l->soft; else @l->hard (and @l->value) become the largest of @l's
 * soft limit, the configured hard limit and the process's hard limit.
 * Returns 0 or -ENOMEM (an unreadable unit counts as none configured).
 */
int ht_limit_fix_configured(struct ht_limit_fix *l, const char *root);

/* ---- plan-add.c: what every kind adds to a plan with ---- */

/* True when @line is a line of template @tmpl that has no placeholder and is no comment. */
bool ht_template_line(const char *tmpl, const char *line);

/*
 * True when @s is an integer as the plan writes one: 1 to 20 decimal
 * digits, a '-' before them only with @sign.
 */
bool ht_int_text(const char *s, bool sign);

/* The length of the leading part of @s made of letters, digits and the bytes of @more. */
size_t ht_span_name(const char *s, const char *more);

/*
 * ht_setting_init - @s's value (@f's recommendation as text), current value
 * (as text, unless unavailable or, with @live_only, not live now: no_live)
 * and key (@key, or @full_key, taken). Returns 1, or -ENOMEM.
 */
int ht_setting_init(struct ht_setting *s, const struct ht_finding *f, const char *key,
                    char *full_key, bool live_only);

/*
 * Whether setting @s that apply may change belongs in hosttune's file: it
 * changes the live value, the finding is not ok, the file has it already
 * (@file_val not NULL), or it differs from what the kernel boots with (so
 * that a value set live earlier, by --live-only or by hand, is persisted too).
 * Through the kind's wanted() when it has one.
 */
bool ht_setting_wanted(const struct ht_setting *s, const char *file_val);

/*
 * The value hosttune's own file @content gives @s (its kind's line() with
 * an empty value, after a newline), or NULL when it sets none, the content
 * is not hosttune's or on ENOMEM (caller frees).
 */
char *ht_file_value(const char *content, const struct ht_setting *s);

/*
 * The settings of @s[0..n) that go into the file whose content is now @old:
 * those apply may change, with the recommended value, when
 * ht_setting_wanted(); the others (outside --only, or kept because the host
 * has more) keep the value hosttune's file already gives them. @out (room
 * for @n) gets copies whose value is owned (ht_settings_free_values()).
 * Returns 0 or -ENOMEM.
 */
int ht_plan_select(const struct ht_setting *s, size_t n, const char *old, struct ht_setting *out,
                   size_t *nout);

/* Frees the values ht_plan_select() copied. */
void ht_settings_free_values(struct ht_setting *s, size_t n);

/*
 * Reads hosttune's file @path below the root as apply would (no symlink
 * below --root) into *@out (NULL when absent, and always with
 * HT_PLAN_NO_DISK). Returns 0 or a negative errno, c->err naming the file.
 */
int ht_plan_read(const struct ht_plan_ctx *c, const char *path, char **out);

/*
 * Adds @path to the plan with @new_content (taken; NULL: hosttune's file is
 * no longer wanted). A file that is not hosttune's and would only be
 * removed is left out: hosttune never deletes what it did not write.
 * Returns 0 or a negative errno (reading it, c->err naming it; -ENOMEM).
 */
int ht_plan_add_file(struct ht_plan_ctx *c, const char *path, char *new_content);

/* Plans the removal of hosttune's @path unless the plan has it already; as ht_plan_add_file(). */
int ht_plan_drop_file(struct ht_plan_ctx *c, const char *path);

/*
 * ht_plan_settings_file - the file @path from template @tmpl for the
 * settings @s[0..n) (all of it), NULL content (removed) when n is 0:
 * @ifname fills @IFNAME@ and @UNIT@, @match @MATCH@, @note @BOOT_NOTE@
 * (each NULL: nothing), each setting a comment line and its kind's line().
 * Returns as ht_plan_add_file().
 */
int ht_plan_settings_file(struct ht_plan_ctx *c, const char *path, const char *tmpl,
                          const char *ifname, const char *match, const char *note,
                          const struct ht_setting *s, size_t n);

/* The template @tmpl with @SETTINGS@ as @settings for profile @profile; NULL on ENOMEM. */
char *ht_plan_render(const char *tmpl, const char *profile, const char *settings);

/* Adds a warning (struct ht_plan_warning) with a printf message. Returns 0 or -ENOMEM. */
int ht_plan_warn(struct ht_plan *p, const char *key, const char *source, const char *fmt, ...)
	_printf_(4, 5);

/* Adds @unit to the plan's restarts once. Returns 0 or -ENOMEM. */
int ht_plan_restart(struct ht_plan *p, const char *unit);

/*
 * Adds a skipped finding: key process.INSTANCE.X for rule target
 * process.X of finding @f (INSTANCE as its facts spell it,
 * ht_finding_fact()), and @message. Returns 0 or -ENOMEM.
 */
int ht_plan_skip(struct ht_plan *p, const struct ht_finding *f, const char *target,
                 const char *message);

/* Adds a skipped finding with key @key ("net.core.somaxconn") and @message. 0 or -ENOMEM. */
int ht_plan_skip_key(struct ht_plan *p, const char *key, const char *message);

/*
 * The line of @conf (read by a kind's boot_read()) that gives @key another
 * value than @value at boot, read after hosttune's file @ours: both
 * systemd-sysctl and kmod read their files in name order across
 * directories, the last value winning; a sysctl glob never overrides a line
 * naming the key; for a raise-only rule (@only_raise) a later value at
 * least as high is fine. NULL when none.
 */
const struct ht_conf_assign *ht_boot_override(const struct ht_conf *conf, const char *key,
                                              const char *ours, const char *value,
                                              bool only_raise);

/* The string value of fact @name, or NULL when it is unavailable or no string. */
const char *ht_fact_string(const struct ht_facts *facts, const char *name);
