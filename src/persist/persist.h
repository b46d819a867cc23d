/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* persist/: files and live writes. Rule: includes only shared/, engine/ and persist/. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "engine/facts.h"
#include "engine/fix.h"
#include "engine/rules.h"
#include "shared/util.h"

struct ht_paths;

/*
 * persist/ holds plan, apply, revert and verify (the boot-configuration
 * readers they use are shared/bootconf.h): the only stage that writes files
 * and live values.
 *
 * Persistence: turn findings into the files a host reads at boot and the live
 * values it runs with, show the difference (plan), write both with rollback
 * (apply), and undo an apply (revert). DESIGN.md, "Output and persistence".
 *
 * Files (rendered from templates/, compiled in; deterministic, sorted), one
 * file of persist/ per target kind saying where and how (persist/kind.h):
 *   kind-sysctl.c    sysctl targets: hosttune's sysctl.d file
 *   kind-module.c    module targets (options nf_conntrack hashsize=N): its
 *                    modprobe.d file, and a modules-load.d file listing
 *                    nf_conntrack, so that systemd-modules-load loads it
 *                    before systemd-sysctl applies the net.netfilter.* keys
 *   kind-channels.c  channels targets: a .link file per interface
 *                    (systemd.link(5))
 *   kind-limit.c     limit nofile targets: a drop-in per service, [Service]
 *                    LimitNOFILE=SOFT:HARD (no live write: the service must
 *                    be restarted)
 * Every file starts with HT_FILE_HEADER; a file at one of these paths without it
 * is never overwritten unless forced.
 */

#define HT_FILE_HEADER "# This file is managed by hosttune"

/* One file of the plan. Paths are host paths ("/etc/..."), below --root when one is set. */
struct ht_plan_file {
	char *path;
	char *old;     /* content on disk, NULL when absent */
	char *new;     /* wanted content, NULL to remove */
	bool foreign;  /* exists without hosttune's header */
};

enum ht_live_kind {
	HT_LIVE_PATH,     /* a procfs/sysfs file: /proc/sys/..., /sys/module/.../parameters/... */
	HT_LIVE_CHANNELS, /* ethtool channels of an interface (netlink CHANNELS_SET) */
};

/* One live value of the plan. */
struct ht_plan_live {
	enum ht_live_kind kind;
	char *key;     /* net.netfilter.nf_conntrack_max, module.nf_conntrack.hashsize,
	                  nic.eth0.channels.combined */
	char *path;    /* host path for HT_LIVE_PATH, NULL otherwise */
	char *ifname;  /* HT_LIVE_CHANNELS */
	char *channel; /* "combined", "rx" or "tx" */
	char *old;     /* current value as text, NULL when the key does not exist yet */
	char *new;
	char *note;    /* why it is skipped (read-only here, --root), or NULL */
	/*
	 * The key appears when apply loads the plan's load_module: @old is
	 * NULL, apply reads the value the module loaded with, records it for
	 * revert, and writes @new when it differs.
	 */
	bool after_load;
};

/*
 * A setting the plan writes that will not hold after a reboot, and why: a
 * file read after hosttune's sets the key to a lower or other value, or
 * nf_conntrack is built in and only the kernel command line reaches it.
 */
struct ht_plan_warning {
	char *key;     /* net.netfilter.nf_conntrack_max, module.nf_conntrack.hashsize */
	char *source;  /* FILE:LINE of what wins at boot, or "kernel command line" */
	char *message; /* one line: the value, what wins and what to do */
	bool until_reboot; /* what wins is in /run (emptied at boot): it overrides
	                      hosttune's now, not after a reboot */
};

/*
 * A finding the plan writes nothing for although it asks for a change, and
 * why (a limit target whose process runs outside a systemd service, or
 * whose unit name hosttune refuses to make a path of).
 */
struct ht_plan_skip {
	char *key;     /* process.garage.nofile */
	char *message; /* one line */
	/*
	 * true: another file already gives the value (a restart takes it);
	 * false: the setting was refused (another manager owns it, no unit to
	 * write a drop-in for...): the host keeps a value the plan does not want.
	 */
	bool satisfied;
};

struct ht_plan {
	struct ht_plan_file *files;
	size_t nfiles;
	struct ht_plan_live *live;
	size_t nlive;
	struct ht_plan_warning *warnings; /* settings that will not hold at boot */
	size_t nwarnings;
	/*
	 * Services to restart (sorted, unique): those whose drop-in the plan
	 * changes, and those whose process runs with a lower soft limit than
	 * hosttune's drop-in gives (applied before, not restarted since).
	 * systemd takes a drop-in at `systemctl daemon-reload`, the process
	 * its limit only when the service starts again: apply restarts nothing.
	 */
	char **restart;
	size_t nrestart;
	struct ht_plan_skip *skipped;
	size_t nskipped;
	char *profile;
	/*
	 * A module apply loads after writing the files ("nf_conntrack"), or
	 * NULL: on the live root in the initial network namespace, when the
	 * plan lists it in modules-load.d (every boot loads it from now on) and
	 * it is a module that is not loaded, so that this boot matches the next
	 * (it loads with the modprobe.d options just written, then the live
	 * values marked after_load are set).
	 */
	char *load_module;
	/* Set by ht_plan_apply(): it loaded load_module (false: it was loaded already). */
	bool module_loaded;
	bool no_disk; /* built with HT_PLAN_NO_DISK */
	/*
	 * conntrack's drop counters when the plan was made (facts
	 * conntrack.stat.drop and .early_drop, packets since boot; -1 when
	 * unavailable) and ROOT/proc/sys/kernel/random/boot_id (NULL when
	 * unreadable): apply records them as the state file's "counters", so
	 * that audit judges the drops since the last apply.
	 */
	int64_t ct_drop, ct_early_drop;
	char *boot_id;
	/*
	 * What fixes each finding (engine/fix.h): fixes[i] for findings->items[i]
	 * of ht_plan_build(), nfixes of them, whatever the flags: the one place
	 * audit's fix lines come from. Strings owned by the plan.
	 */
	struct ht_fix *fixes;
	size_t nfixes;
};

/* ht_plan_build() flags */
enum {
	HT_PLAN_PERSIST = 1 << 0, /* files */
	HT_PLAN_LIVE = 1 << 1,    /* live values */
	HT_PLAN_NO_DISK = 1 << 2, /* facts of another host (--facts): compare with no files */
};

/*
 * ht_plan_selects - whether --only @only (rule ids separated by commas;
 * NULL: every rule) selects rule @id.
 */
bool ht_plan_selects(const char *only, const char *id);

/*
 * ht_plan_build - what apply would do for @findings on the host below @root.
 * @only: comma-separated rule ids to restrict to, or NULL for all.
 * @profile: profile name for the file headers.
 * A setting goes into the files when its finding applies, is not kept
 * (only-raise) and either changes the live value or is already in hosttune's
 * file (so a second apply is a no-op). Inside a non-initial network namespace
 * nf_conntrack_max and module parameters are left out: only the host can set
 * them. Returns 0, -ENOMEM, -EINVAL (err: an unknown rule id in @only), or a
 * negative errno from reading a file on disk (err names it).
 * With HT_PLAN_PERSIST (and not HT_PLAN_NO_DISK) the boot configuration is
 * read too (bootconf.h): a setting of hosttune's file that a file read later
 * sets otherwise (sysctl.d and modprobe.d name order; for a raise-only rule
 * a later value at least as high is fine), and a module parameter of a
 * built-in nf_conntrack that ROOT/proc/cmdline does not give, become
 * warnings: apply still writes them, but they will not hold at boot.
 * A limit nofile finding (HT_TARGET_LIMIT) gives one drop-in per service
 * (kind-limit.c), no live value and an entry in restart; a drop-in of
 * hosttune's for a service no finding needs any more is removed; a later
 * drop-in that sets LimitNOFILE lower (ht_unit_limits_read()) is a warning;
 * a finding without a service or with a unit name refused is in skipped.
 * Every finding gets its fix (@out->fixes, engine/fix.h), the same with any
 * @flags: with neither HT_PLAN_PERSIST nor HT_PLAN_LIVE the plan holds the
 * fixes alone (audit's), and reads no file but a limit finding's unit files
 * (what the service's own files give, unless HT_PLAN_NO_DISK).
 */
int ht_plan_build(const struct ht_findings *findings, const struct ht_facts *facts,
                  const char *root, const char *profile, const char *only, unsigned flags,
                  struct ht_plan *out, struct ht_error *err);

void ht_plan_free(struct ht_plan *p);

/* True when the plan changes nothing (no file differs, no live value changes). */
bool ht_plan_empty(const struct ht_plan *p);

/*
 * The settings the plan refused ("Not persisted" lines that are not
 * satisfied elsewhere): findings apply leaves as they are. 0 when none.
 */
size_t ht_plan_refused(const struct ht_plan *p);

/*
 * The line plan and apply print when the plan changes nothing: that the
 * host matches the plan, or, when settings were refused, that nothing
 * hosttune may write is left and how many settings were refused. Static
 * storage, no newline.
 */
const char *ht_plan_empty_text(const struct ht_plan *p);

/*
 * ht_plan_print - `hosttune plan`: a unified diff (a/ b/ paths relative to
 * "/", so `patch -p1` in the root applies it) of every file, then a table of
 * live changes (key, now, new), then for each service in restart the line
 * "Restart to take effect: systemctl daemon-reload && systemctl restart
 * UNIT", then "Not persisted:" and one indented line per skipped finding,
 * then "Will not hold at boot:" and one indented line per warning.
 * Returns 0, -ENOMEM, -EIO.
 */
int ht_plan_print(const struct ht_plan *p, FILE *out);

/*
 * The restart lines and the skipped findings alone ("Restart to take effect:
 * ..." per service in restart, "Not persisted:" and "  KEY: MESSAGE" each),
 * as ht_plan_print() ends with them: for apply's report.
 */
void ht_plan_print_restart(const struct ht_plan *p, FILE *out);

/* The warnings alone, one "  MESSAGE" line each under "Will not hold at boot:". */
int ht_plan_print_warnings(const struct ht_plan *p, FILE *out);
/*
 * ht_plan_apply - write the files atomically (temp file in the same
 * directory, fchmod 0644, fsync, rename, fsync of the directory), then the
 * live values, reading each back. Below a --root every path resolves inside
 * it without following any symlink (shared/fsutil.h); on the live root the files
 * themselves must not be symlinks. The previous content and mode of every
 * file, the previous live values and the directories apply creates
 * ("created_dirs": for the files, and for the state file when it is the
 * tree's, the default or a @state_path below a --root) are recorded in the
 * state file (@root + HT_STATE_FILE, or @state_path as given) before
 * anything changes, merged with an earlier apply's record so that revert
 * returns to the state before hosttune; so are the tree the state belongs
 * to ("root": ht_root_canonical()) and its machine ID ("machine_id":
 * ht_machine_id_read(), null for none). An existing state file is checked
 * as ht_revert() checks it (@keys: the live keys a rule sets,
 * ht_state_keys()), and so is the merged one: apply writes none that
 * revert would refuse.
 * On any failure every file, live value and directory already changed is
 * restored, the failed step too when it took effect (a value that read back
 * clamped, a file renamed into place whose directory fsync failed).
 * Directories apply creates appear at once with the file written into them
 * (shared/fsutil.h), the state file's too, so that whatever point a crash
 * stops it at, the state file records everything changed.
 * Call it holding ht_persist_lock(): once the state file is checked, it
 * removes the temp files an interrupted run left (ht_tmp_sweep()) in
 * hosttune's directories, the state file's and, below a --root, the live
 * values'.
 * @force: take over files without hosttune's header, keeping
 *         PATH.hosttune-orig with the original's mode.
 * @swept: if not NULL, receives the leftovers removed (paths with the root
 *         prefix), for the caller to report.
 * Returns 0, or, with err saying why:
 *   -EEXIST   a file lacks the header and @force is false, or the
 *             PATH.hosttune-orig of a file to take over exists; nothing changed;
 *   -EBADMSG  refused before any change: the state file is one ht_revert()
 *             refuses (not JSON, another tree's or machine's, naming
 *             something hosttune does not write, a NUL, a symlink, another
 *             user's or writable by others), @state_path has a ".." below
 *             the tree; a file to write resolves through a symlink, has
 *             setuid, setgid or sticky bits, or changed since the plan;
 *   -ECANCELED  reading the state file or a file to replace failed (an I/O
 *             error, err names it) before any change: nothing changed;
 *   -ENOTRECOVERABLE  a step failed and the rollback could not restore
 *             everything (err lists what): the state file stays, so that
 *             revert can finish;
 *   another negative errno: a step failed (err names it), every change rolled back.
 */
int ht_plan_apply(struct ht_plan *p, const char *root, const char *state_path,
                  const struct ht_paths *keys, bool force, struct ht_paths *swept,
                  struct ht_error *err);

/*
 * ht_revert - undo the applies recorded in the state file: restore every
 * live value and every file's previous content and mode (remove the files
 * hosttune created, and the directories apply created when empty), then
 * remove the state file last (with its directories when apply created them
 * and they hold nothing else, at once: see ht_chain_remove_at()). Call it
 * holding ht_persist_lock(): once the state file is checked (or when there
 * is none) it removes the temp files an interrupted run left
 * (ht_tmp_sweep()), also when there is nothing else to revert.
 * @report (may be NULL) receives one line per action:
 *   restored KEY to OLD | skipped KEY: does not exist now (a module unloaded,
 *   an interface gone) | restored PATH | removed PATH | unchanged PATH: already
 *   as before hosttune | left PATH: edited since hosttune wrote it |
 *   removed directory DIR | left directory DIR: not empty |
 *   removed PATH: left by an interrupted hosttune |
 *   could not restore KEY to OLD: WHY | could not restore PATH: WHY |
 *   could not remove directory DIR: WHY
 * A restored or removed PATH whose directory fsync failed says so in
 * parentheses (a crash may undo it).
 * A file whose content is no longer what apply wrote ("written") is left as
 * the admin made it, and counts as done; so is one that is no longer text
 * ("left PATH: edited since hosttune wrote it (it holds a NUL byte now)").
 * Every entry is checked before anything changes (and before the temp files
 * of an interrupted run are removed); the whole file is refused when it is
 * not this tree's ("root" and "machine_id" are another tree's or machine's;
 * a state recording neither is taken as this tree's, and @report gets
 * "note: STATE records no tree or machine-id: taken as the state of ..."
 * first), when it is a symlink, not owned by the effective user or writable
 * by its group or others, holds a NUL byte or a "\u0000" escape, or names
 * a path that is not one of the files hosttune writes (a kind's file, not
 * the HT_BACKUP_SUFFIX copy), a mode with setuid, setgid or sticky bits, a
 * live key that is not in @keys (ht_state_keys(); NULL: none is), a live
 * value that is not an integer, a live path that is not the procfs/sysfs
 * file of its key, channels under --root, a directory in "created_dirs"
 * that no file of the state is in (nor, for the tree's state file, that
 * file), or a value of the wrong JSON type.
 * A live value below a --root is a plain file: it is rewritten in place when
 * its file system has no inode left for a temp file (ht_live_write_at()),
 * and the state file goes without a new inode (ht_chain_remove_at()).
 * Returns 0; -ENOENT when there is no state file (and only then); -EBADMSG
 * when the state file is refused (err: "STATE: files entry 3: path ... is not
 * a file hosttune writes", "STATE: the state of --root A (machine-id X), not
 * of --root B (machine-id none): revert it there, or remove it to keep this
 * tree as it is", a symlink, a NUL byte) or @state_path has a ".." below the
 * tree, nothing changed;
 * -ECANCELED when reading it failed (I/O), nothing changed; another negative
 * errno when some changes could not be restored or a directory apply created
 * could not be removed: they stay in the rewritten state file for another
 * revert, the rest is restored (err names the first failure), or when the
 * state file could not be removed after everything else was restored.
 */
int ht_revert(const char *root, const char *state_path, const struct ht_paths *keys,
              FILE *report, struct ht_error *err);

/*
 * ht_state_keys - the live keys a state file may name: the targets of the
 * rules of @rs (may be NULL: none) that set a live value, as the plan keys
 * them: a sysctl key (net.netfilter.nf_conntrack_max), a module parameter
 * (module.nf_conntrack.hashsize), a channel count (nic.channels.combined,
 * for nic.IF.channels.combined of any interface). Added to @keys (a
 * shared/fsutil.h list; caller frees). Returns 0 or -ENOMEM.
 */
int ht_state_keys(const struct ht_ruleset *rs, struct ht_paths *keys);

/*
 * ht_persist_lock - serialise apply and revert on one tree: an exclusive
 * flock(2) on the @root directory (nothing is created in a tree), or on the
 * host (no --root) on /run/hosttune.lock, created 0600 by root and refused
 * when it is a link or not a 0600 file of this user, so that no other user
 * can take the lock; "/" itself where /run does not exist or cannot be
 * written (not root). Held until the returned descriptor is closed (at
 * exit). Take it before the plan is built and keep it past the last fsync.
 * Pin the tree first (shared/rootfs.h ht_root_pin()): the lock is then the
 * pinned directory's (its device and inode, or flock(2) on it), and the
 * run that follows stays in it even when the path is swapped for a link
 * while this waits.
 * @wait_s: how long to wait for another run to finish, in seconds (0: try once).
 * Returns the descriptor; -EWOULDBLOCK when another run still holds it after
 * @wait_s (err says so); -EPERM for a lock file that is not hosttune's;
 * another negative errno from open/flock.
 */
int ht_persist_lock(const char *root, double wait_s, struct ht_error *err);

/*
 * {"changed": bool, "would_change": bool, "diff": "unified diff of the files",
 *  "holds_at_boot": bool, "files": [{"path", "action", "foreign"}],
 *  "live": [{"key", "from", "to", "note"}],
 *  "will_not_hold": [{"key", "source", "message"}],
 *  "restart": ["garage.service", ...], "skipped": [{"key", "message"}]}
 * restart: the services to restart (systemctl daemon-reload, then systemctl
 * restart UNIT) for their drop-in to take effect; apply restarts nothing.
 * changed: @applied and the plan was not empty (plan changes nothing);
 * would_change: the plan is not empty (apply changes, or changed, something).
 * NULL on ENOMEM.
 */
struct json_object *ht_plan_to_json(const struct ht_plan *p, bool applied);
