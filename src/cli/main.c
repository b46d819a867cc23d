/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hosttune's entry point: the options, then one command (cli.h). */
#include <errno.h>
#include <signal.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "cli/cli.h"
#include "cli/settings.h"
#include "shared/rootfs.h"
#include "cli/report.h"
#include "engine/rules.h"
#include "persist/persist.h"
#include "shared/escape.h"
#include "shared/units.h"
#include "shared/util.h"

/* The commands, one bit each: which command takes which option (opts[] below). */
enum {
	C_AUDIT = 1u << 0,
	C_FACTS = 1u << 1,
	C_EXPLAIN = 1u << 2,
	C_RULES = 1u << 3,
	C_PLAN = 1u << 4,
	C_APPLY = 1u << 5,
	C_REVERT = 1u << 6,
	C_VERIFY = 1u << 7,
	C_WATCH = 1u << 8,
	C_PROFILES = 1u << 9,
	C_ALL = (1u << 10) - 1,
	/* audit's first half: rules, profile, facts, findings (cli_evaluate()) */
	C_EVAL = C_AUDIT | C_PLAN | C_APPLY | C_VERIFY,
};

/* The commands; plan is apply --dry-run. */
static const struct command {
	const char *name;
	unsigned bit;
	int (*run)(const struct options *o);  /* NULL: explain, which takes a RULE */
	bool dry_run;
} commands[] = {
	{ "audit", C_AUDIT, cmd_audit, false },
	{ "facts", C_FACTS, cmd_facts, false },
	{ "explain", C_EXPLAIN, NULL, false },
	{ "rules", C_RULES, cmd_rules, false },
	{ "profiles", C_PROFILES, cmd_profiles, false },
	{ "plan", C_PLAN, cmd_apply, true },
	{ "apply", C_APPLY, cmd_apply, false },
	{ "revert", C_REVERT, cmd_revert, false },
	{ "verify", C_VERIFY, cmd_verify, false },
	{ "watch", C_WATCH, cmd_watch, false },
};

/*
 * Every option, with the commands that take it: any other command refuses
 * it (a usage error, exit 2), so that an option is never ignored silently.
 * --root and --rules say where hosttune reads and every command takes them,
 * so that one set of them serves every command of a script; --format too
 * (every command prints JSON with --format json).
 * apply --dry-run is plan: it also takes plan's options (--facts).
 * The short options are the ones --help and hosttune(8) document; the val of
 * a long-only option is a character the short option string does not have.
 */
static const struct opt {
	struct option o;
	unsigned cmds;
} opts[] = {
	{ { "root", required_argument, NULL, 'r' }, C_ALL },
	{ { "rules", required_argument, NULL, 'R' }, C_ALL },
	{ { "format", required_argument, NULL, 'f' }, C_ALL },
	{ { "color", required_argument, NULL, 'c' }, C_ALL },
	{ { "facts", required_argument, NULL, 'F' },
	  C_AUDIT | C_FACTS | C_PLAN | C_PROFILES | C_EXPLAIN },
	{ { "profile", required_argument, NULL, 'p' },
	  C_EVAL | C_WATCH | C_FACTS | C_PROFILES | C_EXPLAIN },
	{ { "set", required_argument, NULL, 's' }, C_EVAL | C_WATCH | C_FACTS | C_EXPLAIN },
	{ { "fail-on", required_argument, NULL, 'x' }, C_AUDIT },
	{ { "facts-max-age", required_argument, NULL, 'Y' }, C_AUDIT },
	{ { "output", required_argument, NULL, 'o' }, C_AUDIT },
	{ { "host-label", no_argument, NULL, 'H' }, C_AUDIT },
	{ { "verbose", no_argument, NULL, 'v' }, C_AUDIT },
	{ { "quiet", no_argument, NULL, 'q' }, C_AUDIT },
	{ { "no-measure", no_argument, NULL, 'M' }, C_EVAL | C_FACTS | C_EXPLAIN },
	{ { "no-evaluate", no_argument, NULL, 'E' }, C_EXPLAIN },
	{ { "observed", required_argument, NULL, 'B' }, C_EVAL },
	{ { "dry-run", no_argument, NULL, 'n' }, C_APPLY },
	{ { "persist-only", no_argument, NULL, 'P' }, C_PLAN | C_APPLY },
	{ { "live-only", no_argument, NULL, 'L' }, C_PLAN | C_APPLY },
	{ { "only", required_argument, NULL, 'O' }, C_PLAN | C_APPLY },
	{ { "force", no_argument, NULL, 'X' }, C_APPLY },
	{ { "state", required_argument, NULL, 'S' }, C_AUDIT | C_APPLY | C_REVERT | C_VERIFY },
	{ { "wait", required_argument, NULL, 'T' }, C_APPLY | C_REVERT },
	{ { "interval", required_argument, NULL, 'I' }, C_WATCH },
	{ { "sample", required_argument, NULL, 'Z' }, C_AUDIT | C_FACTS },
	{ { "duration", required_argument, NULL, 'D' }, C_WATCH },
	{ { "record", required_argument, NULL, 'W' }, C_WATCH },
	{ { "config", required_argument, NULL, 'C' }, C_ALL },
	{ { "no-config", no_argument, NULL, 'N' }, C_ALL },
	{ { "all", no_argument, NULL, 'A' }, C_RULES },
	{ { "lint", no_argument, NULL, 'K' }, C_RULES },
	{ { "help", no_argument, NULL, 'h' }, C_ALL },
	{ { "version", no_argument, NULL, 'V' }, C_ALL },
};
/* ':' first: a missing argument returns ':', not '?'. Each letter is documented. */
static const char shortopts[] = ":r:F:p:s:f:nvqhV";

static const struct opt *opt_by_val(int val)
{
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		if (opts[i].o.val == val)
			return &opts[i];
	return NULL;
}

/*
 * "audit, facts, plan and apply --dry-run": the commands of @cmds in
 * commands[] order, in @buf; apply --dry-run when @cmds has plan, not apply.
 */
static const char *commands_text(unsigned cmds, char *buf, size_t len)
{
	const char *v[ARRAY_SIZE(commands) + 1];
	size_t n = 0, at = 0;

	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (cmds & commands[i].bit)
			v[n++] = commands[i].name;
	if ((cmds & C_PLAN) && !(cmds & C_APPLY))
		v[n++] = "apply --dry-run";
	buf[0] = '\0';
	for (size_t i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
		                       i == 0 ? "" : i == n - 1 ? " and " : ", ", v[i]);
	return buf;
}

/* Prints " --NAME" for each option of @cmds that not every command takes; the count. */
static size_t print_opts(FILE *out, unsigned cmds, unsigned without, int *col)
{
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
		int w = (int)strlen(opts[i].o.name) + 3;

		if (!(opts[i].cmds & cmds) || (opts[i].cmds & without) || opts[i].cmds == C_ALL)
			continue;
		if (*col + w > 79)
			*col = fprintf(out, "\n%11s", "") - 1;
		*col += fprintf(out, " --%s", opts[i].o.name);
		n++;
	}
	return n;
}

/* "  apply     --profile --set ...": the options @cmd takes but every command does not. */
static void print_command_options(FILE *out, const struct command *cmd)
{
	int col = fprintf(out, "  %-9s", cmd->name);

	if (print_opts(out, cmd->bit, 0, &col) == 0)
		fprintf(out, " no other option");
	/* apply --dry-run is plan and takes plan's options too. */
	if (cmd->bit == C_APPLY) {
		col += fprintf(out, " (--dry-run:");
		print_opts(out, C_PLAN, C_APPLY, &col);
		fputc(')', out);
	}
	fputc('\n', out);
}

static void help(FILE *out)
{
	fprintf(out,
	        "Usage: hosttune [OPTIONS] COMMAND\n"
	        "Audit the kernel defaults of a Linux host that serves storage.\n"
	        "\n"
	        "Commands:\n"
	        "  audit          collect facts, evaluate the rules, report findings\n"
	        "  facts          print the facts of this host (the --facts file format)\n"
	        "  explain RULE   print a rule's formulas and rationale, and what they give\n"
	        "                 on this host (or --root, --facts)\n"
	        "  rules          list the rules with their targets\n"
	        "  profiles       list the profiles: which is in use and why, and the one\n"
	        "                 this host's services suggest\n"
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
	        "      --rules DIR       read rules and profiles from DIR only\n"
	        "  -f, --format FORMAT   text (default) or json; prometheus: audit as\n"
	        "                        node_exporter textfile metrics\n"
	        "      --color WHEN      colour the severities, plan's diff and watch's view:\n"
	        "                        auto (default: on a terminal, unless NO_COLOR is\n"
	        "                        set), always or never\n"
	        "  -F, --facts FILE      use the facts in FILE instead of collecting them;\n"
	        "                        several, or a directory of *.facts: audit a fleet\n"
	        "  -p, --profile NAME    workload profile (default: the configuration's, else\n"
	        "                        default)\n"
	        "  -s, --set NAME=VALUE  override a workload variable, e.g. workload.conn_rate=570\n"
	        "      --fail-on LEVEL   exit 1 when a finding is at or above LEVEL:\n"
	        "                        info, warning (default) or critical\n"
	        "      --facts-max-age TIME  warn when a --facts file was collected longer\n"
	        "                        ago (default 1d; 0: never)\n"
	        "      --output FILE     write the report to FILE atomically (temp + rename)\n"
	        "      --host-label      prometheus: a host label on every host's series\n"
	        "  -v, --verbose         audit: explain the ok and not applicable findings too\n"
	        "  -q, --quiet           audit: print the summary line only\n"
	        "      --no-measure      skip the measurements: AES-GCM / ChaCha20 throughput,\n"
	        "                        Garage's metadata fsync rate\n"
	        "      --observed FILE   size nf_conntrack_max from a watch recording\n"
	        "  -n, --dry-run         only show the plan\n"
	        "      --persist-only    files only, no live values\n"
	        "      --live-only       live values only, no files\n"
	        "      --only RULE,...   these rules' settings only\n"
	        "      --force           take over files hosttune did not write\n"
	        "                        (a copy is kept as FILE.hosttune-orig), and change\n"
	        "                        a security boundary no [allow] names\n"
	        "      --state FILE      state file (default ROOT" HT_STATE_FILE ")\n"
	        "      --wait TIME       for another apply or revert to finish (default 10s)\n"
	        "      --interval TIME   between samples (default 1s; 250ms, 2min)\n"
	        "      --sample TIME     read the counters twice TIME apart (5s, 1min) and judge\n"
	        "                        the interval, not the time since boot\n"
	        "      --duration TIME   how long (default 60s; 0 until Ctrl-C; 5m, 1h 30min)\n"
	        "      --record FILE     keep the samples for --observed\n"
	        "      --config FILE     read the settings of FILE, not of\n"
	        "                        " CLI_CONFIG_FILE " and its drop-ins\n"
	        "      --no-config       read no configuration file\n"
	        "      --all             rules: list the named values too\n"
	        "      --lint            rules: conditions told twice, in severity and text\n"
	        "      --no-evaluate     explain: the formulas only, not this host's numbers\n"
	        "  -h, --help            this help\n"
	        "  -V, --version         print the version\n"
	        "\n"
	        "Every command takes --root, --rules, --format, --color, --config, --no-config,\n"
	        "--help and --version;\n"
	        "the other options only these commands (any other refuses them, exit 2):\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		print_command_options(out, &commands[i]);
	fprintf(out,
	        "\n"
	        "Exit status: 0 no finding at or above --fail-on, or apply/revert succeeded\n"
	        "(or had nothing to revert); 1 findings at or above it (a waived one never\n"
	        "counts); 2 usage, rules, facts or configuration input error, or a file\n"
	        "hosttune did not write is in the way; 3 could not collect, apply or revert\n"
	        "(an apply is rolled back); 4 another apply or revert is running (nothing\n"
	        "changed); 5 apply or revert done, but its report could not be written.\n"
	        "Any other command whose reader goes away (| head) ends quietly with the\n"
	        "status of what it found.\n"
	        "hosttune COMMAND --help prints one command's usage and options.\n"
	        "See hosttune(8) and hosttune.rules(5).\n");
}

/* --version, as GNU tools print it: name and version, copyright, licence. */
static void version(void)
{
	printf("%s\n"
	       "Copyright (C) 2026 the hosttune authors.\n"
	       "License LGPL-2.1-or-later: GNU LGPL version 2.1 or later "
	       "<https://gnu.org/licenses/lgpl-2.1.html>.\n"
	       "This is free software: you are free to change and redistribute it.\n"
	       "There is NO WARRANTY, to the extent permitted by law.\n", PACKAGE_STRING);
}

/*
 * --help: the help of the command named on the command line (argv[optind],
 * getopt_long() has moved the options before it), else the global help.
 * EXIT_CLEAN, or a usage error for a word that is no command.
 */
static int print_help(int argc, char **argv)
{
	const struct command *cmd = NULL;
	const char *names[ARRAY_SIZE(opts)];
	size_t n = 0, own;

	if (optind >= argc) {
		help(stdout);
		return EXIT_CLEAN;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(argv[optind], commands[i].name) == 0)
			cmd = &commands[i];
	if (!cmd)
		return cli_usage_error("unknown command '%s'", argv[optind]);
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		if ((opts[i].cmds & cmd->bit) && opts[i].cmds != C_ALL)
			names[n++] = opts[i].o.name;
	own = n;
	/* apply --dry-run is plan: plan's options that apply does not take. */
	for (size_t i = 0; cmd->bit == C_APPLY && i < ARRAY_SIZE(opts); i++)
		if ((opts[i].cmds & C_PLAN) && !(opts[i].cmds & C_APPLY))
			names[n++] = opts[i].o.name;
	if (cli_command_help(stdout, cmd->name, names, own, n) < 0)
		help(stdout);
	return EXIT_CLEAN;
}

/* A duration as systemd.time(7) writes one (shared/units.h): 0 or a negative errno. */
static int parse_seconds(const char *s, double *out)
{
	return ht_parse_duration(s, out);
}

/* The options given, each once, in the order of their first use. */
struct given {
	const struct opt *v[ARRAY_SIZE(opts)];
	size_t n;
};

static void given_add(struct given *g, const struct opt *opt)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i] == opt)
			return;
	g->v[g->n++] = opt;
}

/*
 * The usage error of an option getopt_long() refused (@c is ':' or '?'):
 * a missing argument, an argument to a long option that takes none, an
 * ambiguous abbreviation, an unknown option.
 */
static int bad_option(int c, char **argv)
{
	const struct opt *opt = optopt ? opt_by_val(optopt) : NULL;
	/* The word getopt_long() stopped at, when it is a long option (it is past it then). */
	const char *arg = argv[optind - 1];
	const char *name = strncmp(arg, "--", 2) == 0 ? arg + 2 : NULL;
	size_t len = name ? strcspn(name, "=") : 0;

	if (c == ':' && opt)
		return cli_usage_error("--%s: missing argument", opt->o.name);
	/* --force=yes; for a short option (-z, or -nz inside a cluster) @arg is another word. */
	if (opt && name && name[len] == '=' && len > 0 && strncmp(opt->o.name, name, len) == 0)
		return cli_usage_error("--%s: takes no argument, got '%s'", opt->o.name,
		                       name + len + 1);
	if (optopt)
		return cli_usage_error("unknown option '-%c'", optopt);
	if (name && len > 0) {
		/* An abbreviation of more than one: "--p" is --profile or --persist-only. */
		char names[256] = "";
		size_t n = 0;

		for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
			if (strncmp(opts[i].o.name, name, len) == 0) {
				size_t at = strlen(names);

				snprintf(names + at, sizeof(names) - at, "%s--%s", n++ ? ", " : "",
				         opts[i].o.name);
			}
		if (n > 1)
			return cli_usage_error("ambiguous option '--%.*s': %s", (int)len, name, names);
	}
	return cli_usage_error("unknown option '%s'", arg);
}

/*
 * The options, wherever they are on the command line, and their own checks:
 * -1 to go on, else the exit status (--help and --version print and return
 * EXIT_CLEAN). @g receives the options given.
 */
/*
 * A file or directory option given once: a second one would silently win
 * over the first (a site rules directory is not added to the shipped one).
 */
static int set_once(const char **dst, const char *name, const char *value)
{
	if (*dst && strcmp(*dst, value) != 0)
		return cli_usage_error("%s given twice ('%s', then '%s'): give it once", name, *dst,
		                       value);
	*dst = value;
	return -1;
}

/* -v/--verbose or -q/--quiet (@c): how much the text audit explains; they exclude each other. */
static int set_detail(struct options *o, int c)
{
	int detail = c == 'v' ? HT_REPORT_VERBOSE : HT_REPORT_QUIET;

	if (o->detail != HT_REPORT_PROBLEMS && o->detail != detail)
		return cli_usage_error("--verbose and --quiet exclude each other");
	o->detail = detail;
	return -1;
}

static int parse_options(int argc, char **argv, struct options *o, struct given *g)
{
	struct option longopts[ARRAY_SIZE(opts) + 1] = { 0 };
	bool help_wanted = false;
	int c;

	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		longopts[i] = opts[i].o;
	opterr = 0; /* one line of our own for every usage error */
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct opt *opt = opt_by_val(c);

		if (opt)
			given_add(g, opt);
		switch (c) {
		case 'r':
			if ((c = set_once(&o->root, "--root", optarg)) >= 0)
				return c;
			break;
		case 'F':
			/*
			 * Several files, or a directory of them: a fleet (audit
			 * only, check_fleet()). The same file again is the same host.
			 */
			c = 0;
			for (size_t i = 0; i < o->nfacts; i++)
				c |= strcmp(o->facts_files[i], optarg) == 0;
			if (!c)
				o->facts_files[o->nfacts++] = optarg;
			if (!o->facts_file)
				o->facts_file = optarg;
			break;
		case 'R':
			if ((c = set_once(&o->rules_dir, "--rules", optarg)) >= 0)
				return c;
			break;
		case 'p':
			if ((c = set_once(&o->profile, "--profile", optarg)) >= 0)
				return c;
			break;
		case 's':
			o->sets[o->nsets++] = optarg;
			break;
		case 'f':
			o->prometheus = strcmp(optarg, "prometheus") == 0;
			if (strcmp(optarg, "json") == 0)
				o->json = true;
			else if (strcmp(optarg, "text") == 0 || o->prometheus)
				o->json = false;
			else
				return cli_usage_error("--format: expected text, json or prometheus, got '%s'",
				                       optarg);
			break;
		case 'c':
			if (strcmp(optarg, "auto") == 0)
				o->color_when = CLI_COLOR_AUTO;
			else if (strcmp(optarg, "always") == 0)
				o->color_when = CLI_COLOR_ALWAYS;
			else if (strcmp(optarg, "never") == 0)
				o->color_when = CLI_COLOR_NEVER;
			else
				return cli_usage_error("--color: expected auto, always or never, got '%s'",
				                       optarg);
			break;
		case 'x':
			if (ht_severity_from_name(optarg, &o->fail_on) < 0 || o->fail_on == HT_SEV_OK)
				return cli_usage_error("--fail-on: expected info, warning or critical, got '%s'",
				                   optarg);
			break;
		case 'M':
			o->no_measure = true;
			break;
		case 'A':
			o->all = true;
			break;
		case 'K':
			o->lint = true;
			break;
		case 'E':
			o->no_evaluate = true;
			break;
		case 'v':
		case 'q':
			if ((c = set_detail(o, c)) >= 0)
				return c;
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
			if ((c = set_once(&o->state, "--state", optarg)) >= 0)
				return c;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'H':
			o->host_label = true;
			break;
		case 'B':
			o->observed = optarg;
			break;
		case 'W':
			o->record = optarg;
			break;
		case 'Y':
			if (parse_seconds(optarg, &o->facts_max_age) < 0 || o->facts_max_age < 0)
				return cli_usage_error("--facts-max-age: expected a time such as 1d, 12h "
				                   "or 0 (never warn), got '%s'", optarg);
			break;
		case 'I':
			if (parse_seconds(optarg, &o->interval) < 0 || o->interval < 0.001 ||
			    o->interval > 86400)
				return cli_usage_error("--interval: expected a time such as 1s, 250ms, 2min "
				                   "or 1min 30s (1ms to 1 day), got '%s'", optarg);
			break;
		case 'Z':
			if (parse_seconds(optarg, &o->sample) < 0 || o->sample < 0.001 ||
			    o->sample > 86400)
				return cli_usage_error("--sample: expected a time such as 5s, 500ms or 1min "
				                   "(1ms to 1 day), got '%s'", optarg);
			break;
		case 'T':
			if (parse_seconds(optarg, &o->wait) < 0 || o->wait > 86400)
				return cli_usage_error("--wait: expected a time such as 10s, 2min "
				                   "or 1min 30s (0: do not wait; at most 1 day), got '%s'", optarg);
			break;
		case 'D':
			if (parse_seconds(optarg, &o->duration) < 0)
				return cli_usage_error("--duration: expected a time such as 60s, 10min "
				                   "or 1h 30min (0: until Ctrl-C), got '%s'", optarg);
			break;
		case 'C':
			if ((c = set_once(&o->config_file, "--config", optarg)) >= 0)
				return c;
			break;
		case 'N':
			o->no_config = true;
			break;
		case 'h':
			/* After the others: the command word is known once getopt_long() is done. */
			help_wanted = true;
			break;
		case 'V':
			version();
			return EXIT_CLEAN;
		default:
			return bad_option(c, argv);
		}
	}
	if (help_wanted)
		return print_help(argc, argv);
	if (o->root && o->facts_file)
		return cli_usage_error("--root and --facts exclude each other");
	if (o->sample > 0 && o->facts_file)
		return cli_usage_error("--sample and --facts exclude each other (--sample reads the "
		                       "counters of this host or --root twice)");
	if (o->config_file && o->no_config)
		return cli_usage_error("--config and --no-config exclude each other");
	if (o->plan_flags == (HT_PLAN_PERSIST | HT_PLAN_LIVE))
		return cli_usage_error("--persist-only and --live-only exclude each other");
	if (!o->plan_flags)
		o->plan_flags = HT_PLAN_PERSIST | HT_PLAN_LIVE;
	return -1;
}

/* Every option given is one that @cmd takes (opts[]): -1, else a usage error naming it. */
static int check_applies(const struct command *cmd, const struct options *o,
                         const struct given *g)
{
	char buf[256];

	for (size_t i = 0; i < g->n; i++) {
		unsigned cmds = g->v[i]->cmds;

		/* apply --dry-run is plan: it takes plan's options too. */
		if ((cmds & cmd->bit) || (cmd->bit == C_APPLY && o->dry_run && (cmds & C_PLAN)))
			continue;
		return cli_usage_error("--%s applies to %s, not to %s", g->v[i]->o.name,
		                       commands_text(cmds, buf, sizeof(buf)), cmd->name);
	}
	return -1;
}

/* A --root that is missing or not a directory is a usage error: nothing to read below it. */
static int check_root(const struct options *o)
{
	struct stat st;

	if (!o->root)
		return -1;
	if (stat(o->root, &st) < 0) {
		cli_error("--root %s: %s\n", o->root, strerror(errno));
		return EXIT_USAGE;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_error("--root %s: not a directory\n", o->root);
		return EXIT_USAGE;
	}
	return -1;
}

/* Whether @cmd takes the option whose val is @val (opts[]). */
static bool takes(const struct command *cmd, int val)
{
	const struct opt *opt = opt_by_val(val);

	return opt && (opt->cmds & cmd->bit);
}

/*
 * The configuration (settings.h), unless --no-config: what it sets stands for
 * an option the command line did not give, for a command that takes it
 * (--profile, --set before the command line's, --fail-on; the waivers for
 * audit). -1 to go on, else the exit status: 2 for a line that is not valid
 * or a file that cannot be read.
 */
static int load_config(const struct command *cmd, struct options *o, const struct given *g,
                       struct cli_config *cfg)
{
	struct ht_error err = { "" };
	bool fail_on_given = false, max_age_given = false;
	int r;

	if (o->no_config)
		return -1;
	r = cli_config_load(o->root, o->config_file, cfg, &err);
	if (r < 0)
		return cli_fail(r, EXIT_USAGE, "%s", err.msg[0] ? err.msg : strerror(-r));
	/*
	 * A tree laid out as the package installs it (/etc/hosttune) audited by
	 * a build with another sysconfdir (/usr/local/etc): say which file counts.
	 */
	if (!o->config_file && o->root && strcmp(SYSCONFDIR, "/etc") != 0) {
		struct stat st;

		if (ht_root_stat(o->root, "/etc/hosttune/hosttune.conf", false, &st) == 0 &&
		    ht_root_stat(o->root, CLI_CONFIG_FILE, false, &st) < 0)
			cli_note("warning: %s/etc/hosttune/hosttune.conf is not read: this hosttune "
			         "reads " CLI_CONFIG_FILE " (built with --sysconfdir=" SYSCONFDIR "; "
			         "--config FILE names one)", o->root);
	}
	o->config = cfg;
	if (!o->profile && cfg->profile && takes(cmd, 'p')) {
		o->profile = cfg->profile;
		o->profile_where = cfg->profile_where;
	}
	o->config_sets = takes(cmd, 's');
	for (size_t i = 0; i < g->n; i++) {
		fail_on_given = fail_on_given || g->v[i]->o.val == 'x';
		max_age_given = max_age_given || g->v[i]->o.val == 'Y';
	}
	if (!fail_on_given && cfg->has_fail_on && takes(cmd, 'x'))
		o->fail_on = cfg->fail_on;
	if (!max_age_given && cfg->has_facts_max_age && takes(cmd, 'Y'))
		o->facts_max_age = cfg->facts_max_age;
	o->waive = cmd->bit == C_AUDIT;
	return -1;
}

/*
 * Several --facts files, or a directory of them, are a fleet: audit only
 * (facts prints one host's, plan plans for one); --observed is one host's
 * recording. Prometheus series of several hosts need their host label.
 * --host-label labels metrics only.
 */
static int check_fleet(const struct command *cmd, const struct options *o)
{
	bool fleet = cli_fleet_wanted(o);

	if (o->host_label && !o->prometheus)
		return cli_usage_error("--host-label applies to --format prometheus (text and JSON "
		                       "name the host of each finding when there are several)");
	if (!fleet)
		return -1;
	if (cmd->bit != C_AUDIT)
		return cli_usage_error("--facts %s: several hosts (more than one --facts, or a "
		                       "directory) are for audit, not for %s: give one facts file",
		                       o->nfacts > 1 ? "FILE --facts FILE" : o->facts_files[0],
		                       cmd->bit == C_APPLY && o->dry_run ? "apply --dry-run" :
		                       cmd->name);
	if (o->observed)
		return cli_usage_error("--observed is one host's recording: it applies to one "
		                       "--facts file, not to several hosts");
	if (o->prometheus && !o->host_label)
		return cli_usage_error("--format prometheus with several hosts needs --host-label "
		                       "(each host's series would otherwise be the same series)");
	return -1;
}

/*
 * The command at argv[optind] and its argument; the options it takes, then
 * --root, then the configuration (into @cfg). Returns the exit status.
 */
static int run_command(int argc, char **argv, struct options *o, const struct given *g,
                       struct cli_config *cfg)
{
	const struct command *cmd = NULL;
	int (*run)(const struct options *o);
	const char *name;
	int r;

	if (optind >= argc)
		return cli_usage_error("missing command (audit, facts, explain RULE, rules, profiles, "
		                       "plan, apply, revert, verify, watch)");
	name = argv[optind++];
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(name, commands[i].name) == 0)
			cmd = &commands[i];
	if (!cmd)
		return cli_usage_error("unknown command '%s'", name);
	o->read_only = !(cmd->bit & (C_APPLY | C_REVERT)) || o->dry_run;
	r = check_applies(cmd, o, g);
	if (r >= 0)
		return r;
	if (o->prometheus && cmd->bit != C_AUDIT)
		return cli_usage_error("--format prometheus: only audit prints metrics, not '%s'", name);
	if (cmd->bit == C_EXPLAIN && optind != argc - 1)
		return cli_usage_error("explain takes one rule id");
	if (cmd->bit != C_EXPLAIN && optind != argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	r = check_root(o);
	if (r >= 0)
		return r;
	r = load_config(cmd, o, g, cfg);
	if (r >= 0)
		return r;
	/* Only audit judges a facts file's age (--facts-max-age is audit's). */
	if (cmd->bit != C_AUDIT)
		o->facts_max_age = 0;
	r = check_fleet(cmd, o);
	if (r >= 0)
		return r;
	if (cmd->bit == C_EXPLAIN)
		return cmd_explain(o, argv[optind]);
	if (cmd->dry_run)
		o->dry_run = true;
	/*
	 * audit --format prometheus is metrics.c's, an audit of several hosts
	 * fleet.c's (any format); --output captures any format of audit.
	 */
	run = cmd->bit == C_AUDIT && cli_fleet_wanted(o) ? cli_fleet_audit :
	      o->prometheus ? cmd_metrics : cmd->run;
	if (o->output)
		return cli_run_output(o, run);
	return run(o);
}

/*
 * --format json anywhere on the command line, before any other option is
 * looked at: a usage error found before the --format (or in it) is a JSON
 * error object too. The last valid --format wins, as in parse_options();
 * getopt_long() is reset for the real parse (optind = 0).
 */
static bool prescan_json(int argc, char **argv)
{
	struct option longopts[ARRAY_SIZE(opts) + 1] = { 0 };
	/*
	 * A copy: getopt_long() permutes what it scans, and the real parse
	 * needs argv as given. On the stack for a usual command line, so that
	 * memory that has run out still gets its JSON error object.
	 */
	char *small[64];
	_cleanup_free_ char **big = (size_t)argc < ARRAY_SIZE(small) ? NULL :
	                            calloc((size_t)argc + 1, sizeof(*big));
	char **copy = big ? big : small;
	bool json = false;
	int c;

	if ((size_t)argc >= ARRAY_SIZE(small) && !big)
		return false;
	memcpy(copy, argv, (size_t)argc * sizeof(*copy));
	copy[argc] = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		longopts[i] = opts[i].o;
	opterr = 0;
	while ((c = getopt_long(argc, copy, shortopts, longopts, NULL)) != -1)
		if (c == 'f' && strcmp(optarg, "json") == 0)
			json = true;
		else if (c == 'f' && (strcmp(optarg, "text") == 0 || strcmp(optarg, "prometheus") == 0))
			json = false;
	optind = 0;
	return json;
}

int main(int argc, char **argv)
{
	/* The --set values (at most one an argument): on the stack for a usual command line. */
	const char *small[64], *fsmall[64];
	_cleanup_free_ const char **big = (size_t)argc < ARRAY_SIZE(small) ? NULL :
	                                  calloc((size_t)argc, sizeof(*big));
	/* The --facts files, as many. */
	_cleanup_free_ const char **fbig = (size_t)argc < ARRAY_SIZE(fsmall) ? NULL :
	                                   calloc((size_t)argc, sizeof(*fbig));
	struct options o = { .fail_on = HT_SEV_WARNING, .sets = big ? big : small, .interval = 1,
	                     .facts_max_age = 86400, .duration = 60, .wait = 10,
	                     .facts_files = fbig ? fbig : fsmall };
	struct given g = { .n = 0 };
	/* Freed at exit: the options point into it. */
	static struct cli_config cfg;
	int r;

	/*
	 * A reader that went away (hosttune apply | head) must not kill a run
	 * half way: writes fail with EPIPE instead. A read-only command then
	 * ends quietly with its verdict's status, as sysctl -a does; apply and
	 * revert say the report was lost (5 when they changed the host, else 3).
	 */
	signal(SIGPIPE, SIG_IGN);
	/*
	 * JSON decimals in 15 significant digits (DBL_DIG: every decimal of up
	 * to 15 digits prints as written): 0.05, not json-c's %.17g
	 * 0.050000000000000003; an integral one prints as 2.0.
	 */
	json_c_set_serialization_double_format("%.15g", JSON_C_OPTION_GLOBAL);
	cli_set_json(prescan_json(argc, argv));
	if ((size_t)argc >= ARRAY_SIZE(small) && (!big || !fbig)) {
		cli_error("out of memory");
		return cli_finish(EXIT_COLLECT);
	}
	r = parse_options(argc, argv, &o, &g);
	if (r >= 0)
		return cli_finish(r);
	cli_set_json(o.json);
	cli_terminal(&o);
	/* Text from a tree (a file name, a rule title) reaches a terminal escaped. */
	if (!o.json && !o.prometheus && (r = cli_text_stdout()) != 0)
		return cli_finish(r);
	/* --output: the report goes to a file (through fd 1), never with prefixes. */
	if ((r = cli_journal_setup(!o.json && !o.prometheus && !o.output)) < 0) {
		cli_error("writing the output: %s", strerror(-r));
		return cli_finish(EXIT_COLLECT);
	}
	r = run_command(argc, argv, &o, &g, &cfg);
	/*
	 * A report that did not reach its reader (a full disk) is a failure;
	 * apply and revert check their own (EXIT_UNREPORTED: the host changed).
	 * A reader that went away (| head) is none for a read-only command: the
	 * rest was not wanted, the verdict stands (cli_stdout_gone()).
	 */
	cli_config_free(&cfg);
	if (r != EXIT_UNREPORTED && (ht_escape_flush(stdout) != 0 || ferror(stdout))) {
		if (o.read_only && cli_stdout_gone())
			return r;
		cli_error("writing the output: %s\n", strerror(errno ? errno : EIO));
		return EXIT_COLLECT;
	}
	return cli_finish(r);
}
