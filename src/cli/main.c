/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hosttune's entry point: the options, then one command (cli.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "engine/rules.h"
#include "persist/persist.h"
#include "shared/util.h"

static void help(FILE *out)
{
	fprintf(out,
	        "Usage: hosttune [OPTIONS] COMMAND\n"
	        "Audit the kernel defaults of a Linux host that serves storage.\n"
	        "\n"
	        "Commands:\n"
	        "  audit          collect facts, evaluate the rules, report findings\n"
	        "  facts          print the facts of this host (the --facts file format)\n"
	        "  explain RULE   print a rule's rationale and its formula\n"
	        "  rules          list the rules with their targets\n"
	        "  plan           what apply would change: a unified diff of the files and\n"
	        "                 a table of live values (same as apply --dry-run)\n"
	        "  apply          write the files and live values, with rollback on failure\n"
	        "  revert         undo what apply did (from its state file)\n"
	        "  verify         do hosttune's settings hold now and after a reboot?\n"
	        "  watch          sample the conntrack table: count, new connections/s,\n"
	        "                 drops; the peak and the nf_conntrack_max it needs\n"
	        "\n"
	        "Options:\n"
	        "  -r, --root DIR        read /proc, /sys and /etc below DIR\n"
	        "  -F, --facts FILE      audit the facts in FILE instead of collecting them\n"
	        "      --rules DIR       read rules and profiles from DIR only\n"
	        "  -p, --profile NAME    workload profile (default: default)\n"
	        "  -s, --set NAME=VALUE  override a workload variable, e.g. workload.conn_rate=570\n"
	        "  -f, --format FORMAT   text (default) or json\n"
	        "      --fail-on LEVEL   exit 1 when a finding is at or above LEVEL:\n"
	        "                        info, warning (default) or critical\n"
	        "      --no-measure      skip the AES-GCM / ChaCha20 throughput measurement\n"
	        "  -n, --dry-run         apply: only show the plan\n"
	        "      --persist-only    apply: files only, no live values\n"
	        "      --live-only       apply: live values only, no files\n"
	        "      --only RULE,...   apply: these rules' settings only\n"
	        "      --force           apply: take over files hosttune did not write\n"
	        "                        (a copy is kept as FILE.hosttune-orig)\n"
	        "      --interval TIME   watch: between samples (default 1s; 250ms, 2min)\n"
	        "      --duration TIME   watch: how long (default 60s; 0 until Ctrl-C)\n"
	        "      --record FILE     watch: keep the samples for audit --observed\n"
	        "      --observed FILE   audit/plan/apply: size from a watch recording\n"
	        "      --state FILE      apply/revert: state file (default ROOT"
	        HT_STATE_FILE ")\n"
	        "  -h, --help            this help\n"
	        "  -V, --version         print the version\n"
	        "\n"
	        "Exit status: 0 no finding at or above --fail-on, or apply/revert succeeded;\n"
	        "1 findings at or above it; 2 usage, rules or facts input error, or a file\n"
	        "hosttune did not write is in the way, or nothing to revert; 3 could not\n"
	        "collect, apply or revert\n"
	        "(an apply is rolled back).\n"
	        "See hosttune(8) and hosttune.rules(5).\n");
}

/* "250ms", "1s", "2min", "1h" or plain seconds, in decimal digits; 0 or -EINVAL. */
static int parse_seconds(const char *s, double *out)
{
	size_t n = strspn(s, "0123456789.");
	const char *unit = s + n;
	char *end;
	double v;

	if (n == 0 || (*unit && strcmp(unit, "ms") != 0 && strcmp(unit, "s") != 0 &&
	               strcmp(unit, "min") != 0 && strcmp(unit, "h") != 0))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end != unit || v > 1e9)
		return -EINVAL;
	if (strcmp(unit, "ms") == 0)
		v /= 1000;
	else if (strcmp(unit, "min") == 0)
		v *= 60;
	else if (strcmp(unit, "h") == 0)
		v *= 3600;
	*out = v;
	return 0;
}

/*
 * The options before the command, and their checks: -1 to go on, else the
 * exit status (--help and --version print and return EXIT_CLEAN).
 */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "facts", required_argument, NULL, 'F' },
		{ "rules", required_argument, NULL, 'R' },
		{ "profile", required_argument, NULL, 'p' },
		{ "set", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "fail-on", required_argument, NULL, 'x' },
		{ "no-measure", no_argument, NULL, 'M' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "persist-only", no_argument, NULL, 'P' },
		{ "live-only", no_argument, NULL, 'L' },
		{ "only", required_argument, NULL, 'O' },
		{ "force", no_argument, NULL, 'X' },
		{ "state", required_argument, NULL, 'S' },
		{ "observed", required_argument, NULL, 'B' },
		{ "record", required_argument, NULL, 'W' },
		{ "interval", required_argument, NULL, 'I' },
		{ "duration", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	int c;

	opterr = 0; /* one line of our own for every usage error */
	while ((c = getopt_long(argc, argv, "r:F:p:s:f:nhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			o->root = optarg;
			break;
		case 'F':
			o->facts_file = optarg;
			break;
		case 'R':
			o->rules_dir = optarg;
			break;
		case 'p':
			o->profile = optarg;
			break;
		case 's':
			o->sets[o->nsets++] = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "json") == 0)
				o->json = true;
			else if (strcmp(optarg, "text") != 0)
				return cli_usage_error("--format: expected text or json, got '%s'", optarg);
			break;
		case 'x':
			if (ht_severity_from_name(optarg, &o->fail_on) < 0 || o->fail_on == HT_SEV_OK)
				return cli_usage_error("--fail-on: expected info, warning or critical, got '%s'",
				                   optarg);
			break;
		case 'M':
			o->no_measure = true;
			break;
		case 'n':
			o->dry_run = true;
			break;
		case 'P':
			o->plan_flags |= HT_PLAN_PERSIST;
			break;
		case 'L':
			o->plan_flags |= HT_PLAN_LIVE;
			break;
		case 'O':
			o->only = optarg;
			break;
		case 'X':
			o->force = true;
			break;
		case 'S':
			o->state = optarg;
			break;
		case 'B':
			o->observed = optarg;
			break;
		case 'W':
			o->record = optarg;
			break;
		case 'I':
			if (parse_seconds(optarg, &o->interval) < 0 || o->interval < 0.001 ||
			    o->interval > 86400)
				return cli_usage_error("--interval: expected a time such as 1s, 250ms or 2min "
				                   "(1ms to 1 day), got '%s'", optarg);
			break;
		case 'D':
			if (parse_seconds(optarg, &o->duration) < 0)
				return cli_usage_error("--duration: expected a time such as 60s or 10min "
				                   "(0: until Ctrl-C), got '%s'", optarg);
			break;
		case 'h':
			help(stdout);
			return EXIT_CLEAN;
		case 'V':
			puts(PACKAGE_STRING);
			return EXIT_CLEAN;
		default:
			if (optopt)
				return cli_usage_error("unknown option '-%c'", optopt);
			return cli_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (o->root && o->facts_file)
		return cli_usage_error("--root and --facts exclude each other");
	if (o->plan_flags == (HT_PLAN_PERSIST | HT_PLAN_LIVE))
		return cli_usage_error("--persist-only and --live-only exclude each other");
	if (!o->plan_flags)
		o->plan_flags = HT_PLAN_PERSIST | HT_PLAN_LIVE;
	if (o->root) {
		struct stat st;

		if (stat(o->root, &st) < 0) {
			fprintf(stderr, "hosttune: --root %s: %s\n", o->root, strerror(errno));
			return EXIT_COLLECT;
		}
		if (!S_ISDIR(st.st_mode)) {
			fprintf(stderr, "hosttune: --root %s: not a directory\n", o->root);
			return EXIT_COLLECT;
		}
	}
	return -1;
}

/* The commands without an argument; plan is apply --dry-run. */
static const struct command {
	const char *name;
	int (*run)(const struct options *o);
	bool dry_run;
} commands[] = {
	{ "audit", cmd_audit, false },
	{ "facts", cmd_facts, false },
	{ "rules", cmd_rules, false },
	{ "plan", cmd_apply, true },
	{ "apply", cmd_apply, false },
	{ "revert", cmd_revert, false },
	{ "verify", cmd_verify, false },
	{ "watch", cmd_watch, false },
};

/* The command at argv[optind] and its argument. Returns the exit status. */
static int run_command(int argc, char **argv, struct options *o)
{
	const char *cmd;

	if (optind >= argc)
		return cli_usage_error("missing command (audit, facts, explain RULE, rules, plan, apply, "
		                       "revert, verify, watch)");
	cmd = argv[optind++];
	if (o->json && (strcmp(cmd, "explain") == 0 || strcmp(cmd, "rules") == 0))
		return cli_usage_error("--format json: '%s' prints text only", cmd);
	if (strcmp(cmd, "explain") == 0) {
		if (optind != argc - 1)
			return cli_usage_error("explain takes one rule id");
		return cmd_explain(o, argv[optind]);
	}
	if (optind != argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(cmd, commands[i].name) == 0) {
			if (commands[i].dry_run)
				o->dry_run = true;
			return commands[i].run(o);
		}
	return cli_usage_error("unknown command '%s'", cmd);
}

int main(int argc, char **argv)
{
	_cleanup_free_ const char **sets = calloc((size_t)argc, sizeof(*sets));
	struct options o = { .fail_on = HT_SEV_WARNING, .sets = sets, .interval = 1,
		             .duration = 60 };
	int r;

	if (!sets)
		return EXIT_COLLECT;
	r = parse_options(argc, argv, &o);
	if (r >= 0)
		return r;
	r = run_command(argc, argv, &o);
	/* A report that did not reach its reader (a full disk, a closed pipe) is a failure. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "hosttune: writing the output: %s\n", strerror(errno ? errno : EIO));
		return EXIT_COLLECT;
	}
	return r;
}
