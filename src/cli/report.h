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
};

/* Writes the text report. Returns 0, -ENOMEM or -EIO. */
int ht_report_text(const struct ht_findings *f, const struct ht_report_info *info, FILE *out);

/* Builds {"profile", "origin", "workload", "findings": [...], "summary"}; NULL on ENOMEM. */
struct json_object *ht_report_json(const struct ht_findings *f, const struct ht_report_info *info);

/* The highest severity among applicable findings (HT_SEV_OK when none). */
enum ht_severity ht_findings_worst(const struct ht_findings *f);
