/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include <json-c/json.h>

#include "engine/fix.h"
#include "engine/rules.h"

/*
 * Emitters for `hosttune audit`: a text report (table, then each finding's
 * explanation and fix) and the JSON document described in hosttune(8). They
 * print what they are handed (the findings, the plan's fixes) and read no file.
 */

/* What the report shows besides the findings. */
struct ht_report_info {
	const char *origin;  /* "this host", "--root DIR", "--facts FILE" */
	const struct ht_ruleset *rules;
	struct ht_ruleset *values; /* if set, JSON adds "values": every named value's result */
	/*
	 * What fixes each finding: fixes[i] for the findings' items[i] (the
	 * plan's, persist.h ht_plan_build(): struct ht_plan's fixes), or NULL
	 * for no fix lines. The report prints them as they are.
	 */
	const struct ht_fix *fixes;
	bool color;          /* text: the severities in colour (ANSI SGR) */
	size_t width;        /* text: wrap explanations at this many columns (0: 100) */
	bool wrap_all;       /* text: wrap the headings and fix lines too (a terminal); else one line each */
	/*
	 * text: how much follows the table. HT_REPORT_QUIET: the summary line
	 * alone (no heading, no table); HT_REPORT_PROBLEMS: the explanations of
	 * the applicable findings at info and above; HT_REPORT_VERBOSE: of every
	 * finding, ok and not applicable too. JSON ignores it.
	 */
	enum ht_report_detail { HT_REPORT_PROBLEMS = 0, HT_REPORT_QUIET, HT_REPORT_VERBOSE } detail;
	/*
	 * text: called with an sd-daemon priority (3 error .. 7 debug, <syslog.h>)
	 * before each part of the report (a table row, an explanation) whose lines
	 * carry it, for a stream that prefixes lines with "<N>" (cli/journal.h);
	 * NULL when nobody asks.
	 */
	void (*priority)(FILE *out, int prio);
	/*
	 * The profile this host's services suggest when it is not the one in
	 * use (ht_profile_suggest()), and its evidence: text prints it after the
	 * heading, JSON as "recommended_profile". NULL hint_name for none.
	 */
	const char *hint_name;
	const struct ht_profile_hint *hint;
};

/* "EVIDENCE; EVIDENCE": @hint's evidence on one line, a new string; NULL on ENOMEM. */
char *ht_report_hint_text(const struct ht_profile_hint *hint);

/* {"name": @name, "evidence": [...]} of @hint; NULL on ENOMEM. */
struct json_object *ht_report_hint_json(const char *name, const struct ht_profile_hint *hint);

/*
 * Writes the text report: a waived finding shows "(waived)" after its
 * severity and "waived: REASON" under its heading, and the summary line ends
 * ", N waived" when there is one. Returns 0, -ENOMEM or -EIO.
 */
int ht_report_text(const struct ht_findings *f, const struct ht_report_info *info, FILE *out);

/*
 * Builds {"profile", "origin", "workload", "findings": [...], "summary"}; NULL on ENOMEM.
 * A finding's "waived" is its waiver's reason or null; the summary counts a
 * waived finding under "waived", not at its severity.
 */
struct json_object *ht_report_json(const struct ht_findings *f, const struct ht_report_info *info);

/* One host of a fleet report (ht_report_fleet_text()). */
struct ht_report_host {
	const char *label;   /* the HOST column: host.name or the facts file's name */
	const char *origin;  /* "facts file FILE" */
	const char *about;   /* "kernel R, collected T by hosttune V", or NULL when unknown */
	const struct ht_findings *findings;
	const struct ht_fix *fixes; /* as ht_report_info's, for this host's findings; may be NULL */
};

/*
 * ht_report_fleet_text - the text report of @n hosts' audits: the heading
 * and workload of @info->rules, a line for each host (its label, origin
 * and @about), one table of every host's findings with a HOST column (worst
 * first; within a severity, host by host in their order), then each host's
 * findings at info and above with their explanations and fixes under the
 * host's name, and a summary line for each host and for all of them.
 * @info's colour and width apply; its origin and fixes are not used.
 * Returns 0, -ENOMEM or -EIO.
 */
int ht_report_fleet_text(const struct ht_report_host *hosts, size_t n,
                         const struct ht_report_info *info, FILE *out);

/*
 * ht_report_plan - writes @len bytes of @text, what ht_plan_print() printed,
 * to @out; with @color the unified diffs it starts with in colour, as git
 * diff colours one: a file's header lines ("--- ", "+++ ") bold, hunk
 * headers ("@@ ... @@") cyan, removed lines red, added lines green, context
 * and "\ No newline at end of file" plain. A hunk's lines are told apart by
 * the counts of its header, so a removed line that reads "-- x" is still a
 * removed line. Everything from the first empty line on (the live changes,
 * restarts and notes ht_plan_print() ends with) and the "# ..." notes before
 * a file's diff stay plain. Without @color, @text as it is. The colour codes
 * go through ht_escape_raw(). Returns 0 or -EIO.
 */
int ht_report_plan(FILE *out, const char *text, size_t len, bool color);

/*
 * The highest severity among applicable findings that are not waived
 * (struct ht_finding's waived; HT_SEV_OK when none): what the exit status
 * and the summary's "worst" follow.
 */
enum ht_severity ht_findings_worst(const struct ht_findings *f);
