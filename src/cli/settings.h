/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cli/: the configuration file, SYSCONFDIR/hosttune/hosttune.conf and its drop-ins. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "engine/rules.h"

/*
 * What the site keeps for every run (hosttune(8) CONFIGURATION): an INI file
 * read with inih, as the rules are.
 *
 *   [hosttune]
 *   profile = garage            the profile, as --profile
 *   fail-on = critical          as --fail-on
 *   [set]
 *   workload.conn_rate = 570    as --set workload.conn_rate=570
 *   [waive]
 *   nic.channels[eth0] = the hypervisor's NIC has one queue
 *
 * The drop-ins, SYSCONFDIR/hosttune/hosttune.conf.d/ *.conf, are read after
 * the file in file-name order; a later assignment of a key wins, and an
 * empty one ("profile =", "nic.channels[eth0] =") takes back what an
 * earlier file set, as in systemd's drop-ins. The command line wins over
 * all of them.
 */

/* The configuration's path on the host it stands for (below --root in a tree). */
#define CLI_CONFIG_FILE SYSCONFDIR "/hosttune/hosttune.conf"
#define CLI_CONFIG_DROPINS SYSCONFDIR "/hosttune/hosttune.conf.d"

/* A waiver: a finding the site accepts, with why. Strings owned by the configuration. */
struct cli_waiver {
	char *rule;     /* the rule id as written */
	char *instance; /* "eth0", "2024": one instance of a per-instance rule; NULL for every one */
	char *reason;   /* never empty */
	char *where;    /* "FILE:LINE:COL" of its key, for messages */
};

/* A [set] assignment. Strings owned by the configuration. */
struct cli_set {
	char *name;       /* workload.conn_rate */
	char *assignment; /* "workload.conn_rate=570", as --set takes it */
	char *where;      /* "FILE:LINE:COL" of its value */
};

/* The configuration after every file is read; empty when there is none. */
struct cli_config {
	char *profile;        /* NULL: none set */
	char *profile_where;  /* "FILE:LINE:COL" of the profile's value */
	bool has_fail_on;
	enum ht_severity fail_on;
	bool has_facts_max_age;
	double facts_max_age; /* [hosttune] facts-max-age, s; 0: never warn */
	struct cli_set *sets; /* in the order first set */
	size_t nsets;
	struct cli_waiver *waivers; /* in the order first set */
	size_t nwaivers;
	/*
	 * [allow]: rules the site lets apply change a security boundary
	 * (cli_security_boundary()) without --force, each with its reason.
	 */
	struct cli_waiver *allows;
	size_t nallows;
	size_t nfiles;        /* how many files were read (0: no configuration) */
};

/*
 * cli_config_load - reads the configuration into @cfg (zeroed by the
 * caller; free it with cli_config_free() whatever this returns).
 * @root: the tree (--root) whose CLI_CONFIG_FILE and CLI_CONFIG_DROPINS are
 *        read, links resolved inside it (shared/rootfs.h); NULL for this host.
 * @file: --config FILE: that file alone, a path of this machine as given
 *        (neither below @root nor with drop-ins), which must exist; NULL for
 *        the default ones, either of which may be absent.
 * A symbolic link to /dev/null reads as an empty file (a mask).
 * Returns 0; -EINVAL with @err "FILE:LINE:COL: what was expected" for a
 * line that is not valid; -ENOENT, -EACCES, ... with @err "FILE: why" for a
 * file that cannot be read (a missing --config FILE, a directory); -ENOMEM.
 */
int cli_config_load(const char *root, const char *file, struct cli_config *cfg,
                    struct ht_error *err);

/*
 * cli_config_add_waiver - one waiver, "RULE = REASON" or "RULE[INSTANCE] =
 * REASON" as a [waive] line holds it (what the hosttune.waiver.N.text facts
 * carry), added to @cfg; @name names it in messages ("FILE:
 * hosttune.waiver.1", followed by ":1:COL"). Returns 0, -EINVAL with @err
 * set (not a waiver line), or -ENOMEM.
 */
int cli_config_add_waiver(struct cli_config *cfg, const char *name, const char *line,
                          struct ht_error *err);

/* Frees what @cfg holds and zeroes it. */
void cli_config_free(struct cli_config *cfg);

/*
 * cli_config_waiver - the waiver of @cfg for rule @id and @instance (NULL
 * for a host rule): the one for that instance, else the rule's own (which
 * waives every instance); NULL when none.
 */
const struct cli_waiver *cli_config_waiver(const struct cli_config *cfg, const char *id,
                                           const char *instance);
