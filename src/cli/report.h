/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include <json-c/json.h>

#include "engine/rules.h"

/*
 * Emitters for `hosttune audit`: a text report (table, then each finding's
 * explanation and fix) and the JSON document described in hosttune(8).
 */

/* What the facts came from, shown in the report header. */
struct ht_report_info {
	const char *origin;  /* "this host", "--root DIR", "--facts FILE" */
	const struct ht_ruleset *rules;
	struct ht_ruleset *values; /* if set, JSON adds "values": every named value's result */
	bool ct_builtin;     /* nf_conntrack is built in: its parameters need the kernel command line */
	const struct ht_facts *facts; /* for a limit's fix (process.NAME.unit, .nofile_hard); may be NULL */
	const char *root;    /* the tree whose unit files a limit's fix reads (NULL: the host) */
	bool no_disk;        /* the facts are another host's (--facts): read no unit file */
	bool color;          /* text: the severities in colour (ANSI SGR) */
	size_t width;        /* text: wrap explanations at this many columns (0: 100) */
	bool wrap_all;       /* text: wrap the headings and fix lines too (a terminal); else one line each */
};

/*
 * The persistent and live fix for a finding whose target can be set:
 * @file the file hosttune writes ("/etc/sysctl.d/90-hosttune.conf"),
 * @line the line in it, @live the procfs/sysfs path written at apply.
 * @ct_builtin: nf_conntrack is built into the kernel: a module.nf_conntrack
 * parameter persists only on the kernel command line; @file is then NULL and
 * @line the "nf_conntrack.PARAM=N" word, and 2 is returned.
 * A limit nofile finding (persist.h ht_limit_fix(), from @facts) gives @file
 * the service's drop-in, @line "[Service] LimitNOFILE=SOFT:HARD" and @live
 * the service to restart ("garage.service": no live write, the limit takes
 * effect when it starts again), and 3 is returned; 0 when it has no service
 * (or @facts is NULL). When the unit's own files already give at least the
 * recommendation (ht_limit_fix_configured(), unless @info->no_disk), 4: no
 * drop-in, @file the "FILE:LINE" that gives it, @line "LimitNOFILE=N" and
 * @live the service to restart. When ht_limit_fix() refuses the service
 * (an invalid unit name, no hard limit), 5 with @line its reason.
 * @info gives ct_builtin, facts, root and no_disk.
 * Returns 1 (or 2, 3, 4, 5) with newly allocated strings (caller frees), 0 when there is
 * nothing to change (ok, kept, advice, not applicable), -ENOMEM.
 */
int ht_finding_fix(const struct ht_finding *f, const struct ht_report_info *info,
                   char **file, char **line, char **live);

/* Writes the text report. Returns 0 or -EIO. */
int ht_report_text(const struct ht_findings *f, const struct ht_report_info *info, FILE *out);

/* Builds {"profile", "origin", "workload", "findings": [...], "summary"}; NULL on ENOMEM. */
struct json_object *ht_report_json(const struct ht_findings *f, const struct ht_report_info *info);

/* The highest severity among applicable findings (HT_SEV_OK when none). */
enum ht_severity ht_findings_worst(const struct ht_findings *f);
