/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hosttune COMMAND --help: one command's usage, what it does and the options it takes. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "shared/util.h"

/* What each command does, in more words than the global help's one line. */
static const struct {
	const char *name, *args, *text;
} command_help[] = {
	{ "audit", "",
	  "Collect the facts of this host (or read --facts, or a tree below --root),\n"
	  "evaluate the rules and report the findings: a table, then the explanation\n"
	  "and fix of each finding at info and above. Exit 1 when one is at or above\n"
	  "--fail-on (warning)." },
	{ "facts", "",
	  "Print the facts of this host in the format --facts reads back, so that an\n"
	  "audit can run elsewhere." },
	{ "explain", " RULE",
	  "Print a rule's title, target, formulas and rationale, then what the rule\n"
	  "gives on this host (or the tree of --root, or a --facts file) with the\n"
	  "profile and --set values: each instance's current and recommended value,\n"
	  "severity and explanation with this host's numbers (--no-evaluate: the\n"
	  "formulas only). RULE is a rule id as hosttune rules lists it, or as the\n"
	  "audit table shows it, with its instance (listen.backlog[2024])." },
	{ "rules", "",
	  "List the rules with their kind and target; --all adds the named values the\n"
	  "rules compute with." },
	{ "profiles", "",
	  "List the profiles of the rules directories, one line each with its\n"
	  "description; '*' marks the one in use, and a line says where it came\n"
	  "from (--profile, the configuration's FILE:LINE, the default). When this\n"
	  "host's services (a Garage configuration, a process of a profile's\n"
	  "workload.service) point to another profile, a last line names it and why." },
	{ "plan", "",
	  "What apply would change: a unified diff of every file and a table of live\n"
	  "values (the same as apply --dry-run). Changes nothing; exits 1 when apply\n"
	  "would change the host, 0 when it matches the plan (as diff does)." },
	{ "apply", "",
	  "Write the files and live values of the findings' fixes, each read back;\n"
	  "on any failure everything is rolled back. A state file keeps the previous\n"
	  "values for revert." },
	{ "revert", "",
	  "Undo what the last apply did, from its state file." },
	{ "verify", "",
	  "Tell whether hosttune's settings hold now and will hold after a reboot\n"
	  "(another file, unit or manager that overrides them). Whether the host\n"
	  "matches the profile is audit's question." },
	{ "watch", "",
	  "Sample the conntrack table: its count, new connections a second and drops;\n"
	  "then the peak and the nf_conntrack_max it needs (--record keeps the samples\n"
	  "for audit --observed)." },
};

/* The options every command takes, and what each option says. */
static const struct {
	const char *name, *text;
} option_help[] = {
	{ "facts", "-F, --facts FILE      use the facts in FILE instead of collecting them;\n"
	           "                      audit: several, or a directory of *.facts: a fleet" },
	{ "sample", "    --sample TIME     read the counters twice TIME apart (5s, 1min) and judge\n"
	            "                      the interval, not the time since boot" },
	{ "host-label", "    --host-label      prometheus: a host label on every host's series" },
	{ "profile", "-p, --profile NAME    workload profile (default: the configuration's, else\n"
	             "                      default)" },
	{ "set", "-s, --set NAME=VALUE  override a workload variable, e.g. workload.conn_rate=570" },
	{ "fail-on", "    --fail-on LEVEL   exit 1 when a finding is at or above LEVEL:\n"
	             "                      info, warning (default) or critical" },
	{ "output", "    --output FILE     write the report to FILE atomically (temp + rename)" },
	{ "verbose", "-v, --verbose         explain the ok and not applicable findings too" },
	{ "quiet", "-q, --quiet           print the summary line only" },
	{ "no-measure", "    --no-measure      skip the measurements: AES-GCM / ChaCha20 throughput,\n"
	                "                      Garage's metadata fsync rate" },
	{ "observed", "    --observed FILE   size nf_conntrack_max from a watch recording" },
	{ "dry-run", "-n, --dry-run         only show the plan" },
	{ "persist-only", "    --persist-only    files only, no live values" },
	{ "live-only", "    --live-only       live values only, no files" },
	{ "only", "    --only RULE,...   these rules' settings only" },
	{ "force", "    --force           take over files hosttune did not write\n"
	           "                      (a copy is kept as FILE.hosttune-orig), and change\n"
	           "                      a security boundary no [allow] names" },
	{ "state", "    --state FILE      state file (default ROOT" HT_STATE_FILE ")" },
	{ "wait", "    --wait TIME       for another apply or revert to finish (default 10s)" },
	{ "interval", "    --interval TIME   between samples (default 1s; 250ms, 2min)" },
	{ "duration", "    --duration TIME   how long (default 60s; 0 until Ctrl-C; 5m, 1h 30min)" },
	{ "record", "    --record FILE     keep the samples for --observed" },
	{ "all", "    --all             the named values too" },
	{ "no-evaluate", "    --no-evaluate     the formulas only, not this host's numbers" },
};

/* Prints @text, each of its lines after two spaces. */
static void print_indented(FILE *out, const char *text)
{
	while (*text) {
		size_t n = strcspn(text, "\n");

		fprintf(out, "  %.*s\n", (int)n, text);
		text += n + (text[n] ? 1 : 0);
	}
}

int cli_command_help(FILE *out, const char *name, const char *const *opts, size_t nown,
                     size_t nopts)
{
	bool times = false;
	size_t c;

	for (c = 0; c < ARRAY_SIZE(command_help); c++)
		if (strcmp(command_help[c].name, name) == 0)
			break;
	if (c == ARRAY_SIZE(command_help))
		return -EINVAL;
	fprintf(out, "Usage: hosttune [OPTIONS] %s%s\n%s\n", name, command_help[c].args,
	        command_help[c].text);
	if (nopts > 0)
		fprintf(out, "\nOptions of %s:\n", name);
	for (size_t i = 0; i < nopts; i++) {
		size_t k;

		if (i == nown)
			fprintf(out, "With --dry-run (%s --dry-run is plan), also:\n", name);

		for (k = 0; k < ARRAY_SIZE(option_help); k++)
			if (strcmp(option_help[k].name, opts[i]) == 0)
				break;
		times |= strcmp(opts[i], "wait") == 0 || strcmp(opts[i], "interval") == 0 ||
		         strcmp(opts[i], "duration") == 0 || strcmp(opts[i], "sample") == 0;
		if (k < ARRAY_SIZE(option_help))
			print_indented(out, option_help[k].text);
		else
			fprintf(out, "      --%s\n", opts[i]);
	}
	fprintf(out,
	        "\n"
	        "Every command takes -r/--root DIR, --rules DIR, -f/--format FORMAT,\n"
	        "--color WHEN, --config FILE, --no-config, -h/--help and -V/--version\n"
	        "(hosttune --help).\n");
	if (times)
		fprintf(out, "TIME is a duration as systemd.time(7) writes it: 90 (seconds), 250ms,\n"
		             "5m, 1h 30min.\n");
	fprintf(out, "See hosttune(8).\n");
	return 0;
}
