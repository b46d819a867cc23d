/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/facts.h"
#include "persist/persist.h"
#include "persist/verify.h"
#include "collect/watch.h"
#include "cli/report.h"
#include "engine/rules.h"
#include "shared/util.h"

/* Exit statuses, DESIGN.md "Output and persistence". */
enum {
	EXIT_CLEAN = 0,
	EXIT_FINDINGS = 1,
	EXIT_USAGE = 2,
	EXIT_COLLECT = 3,
};

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/share/hosttune"
#endif
#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

struct options {
	const char *root;
	const char *facts_file;
	const char *rules_dir;
	const char *profile;
	const char **sets;
	size_t nsets;
	bool json;
	bool no_measure;
	bool dry_run;
	bool force;
	unsigned plan_flags;
	const char *only;
	const char *state;
	const char *observed;
	const char *record;
	double interval;  /* watch, s */
	double duration;  /* watch, s; 0 until Ctrl-C */
	enum ht_severity fail_on;
};

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

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

static int usage_error(const char *fmt, ...) _printf_(1, 2);

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "hosttune: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (hosttune --help lists the usage)\n");
	return EXIT_USAGE;
}

static int load_facts(const struct options *o, struct ht_facts **out)
{
	struct ht_facts *f = ht_facts_new();
	struct ht_error err = { "" };
	int r;

	if (!f) {
		fprintf(stderr, "hosttune: out of memory\n");
		return EXIT_COLLECT;
	}
	if (o->facts_file) {
		_cleanup_fclose_ FILE *in = strcmp(o->facts_file, "-") == 0 ? NULL :
		                            fopen(o->facts_file, "re");

		if (!in && strcmp(o->facts_file, "-") != 0) {
			fprintf(stderr, "hosttune: %s: %s\n", o->facts_file, strerror(errno));
			ht_facts_free(f);
			return EXIT_USAGE;
		}
		r = ht_facts_read(f, in ? in : stdin, o->facts_file, &err);
		if (r < 0) {
			fprintf(stderr, "hosttune: %s\n", err.msg[0] ? err.msg : strerror(-r));
			ht_facts_free(f);
			return EXIT_USAGE;
		}
	} else {
		r = ht_facts_collect(f, o->root, o->no_measure ? HT_COLLECT_NO_MEASURE : 0);
		if (r < 0) {
			fprintf(stderr, "hosttune: collecting facts: %s\n", strerror(-r));
			ht_facts_free(f);
			return EXIT_COLLECT;
		}
	}
	*out = f;
	return 0;
}

static int load_rules(const struct options *o, struct ht_ruleset **out)
{
	_cleanup_free_ char *etc = NULL;
	const char *dirs[2];
	size_t n = 0;
	struct ht_ruleset *rs = NULL;
	struct ht_error err = { "" };
	int r;

	if (o->rules_dir)
		dirs[n++] = o->rules_dir;
	else {
		etc = ht_root_path(o->root, SYSCONFDIR "/hosttune/rules.d");
		if (!etc)
			return -ENOMEM;
		dirs[n++] = PKGDATADIR "/rules";
		dirs[n++] = etc;
	}
	r = ht_ruleset_load(dirs, n, &rs, &err);
	if (r >= 0)
		r = ht_ruleset_load_profile(rs, o->profile ? o->profile : "default", &err);
	for (size_t i = 0; r >= 0 && i < o->nsets; i++)
		r = ht_ruleset_set_var(rs, o->sets[i], &err);
	if (r >= 0)
		r = ht_ruleset_check(rs, &err);
	if (r < 0) {
		fprintf(stderr, "hosttune: %s\n", err.msg[0] ? err.msg : strerror(-r));
		if (r == -ENOENT && !o->rules_dir)
			fprintf(stderr, "hosttune: (not installed? run from the source tree with "
			                "--rules rules)\n");
		ht_ruleset_free(rs);
		return EXIT_USAGE;
	}
	*out = rs;
	return 0;
}

static int print_json(struct json_object *o)
{
	const char *s;

	if (!o) {
		fprintf(stderr, "hosttune: out of memory\n");
		return EXIT_COLLECT;
	}
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
	                                      JSON_C_TO_STRING_NOSLASHESCAPE);
	puts(s);
	json_object_put(o);
	return 0;
}

static int cmd_facts(const struct options *o)
{
	struct ht_facts *f = NULL;
	int r = load_facts(o, &f);

	if (r)
		return r;
	if (o->json)
		r = print_json(ht_facts_to_json(f));
	else if (ht_facts_write(f, stdout) < 0)
		r = EXIT_COLLECT;
	ht_facts_free(f);
	return r;
}

/*
 * Every real collection has the RAM and the kernel version (/proc/meminfo,
 * /proc/sys/kernel/osrelease). Without both, the root is not a host's tree
 * or the facts file is not a host's facts: no audit of nothing.
 */
static int check_basic_facts(const struct options *o, const struct ht_facts *f)
{
	static const char *const basic[] = { "mem.total", "kernel.version" };
	size_t missing = 0;

	for (size_t i = 0; i < ARRAY_SIZE(basic); i++) {
		const struct ht_fact *fact = ht_facts_get(f, basic[i]);

		if (!fact || fact->value.type == HT_T_NONE)
			missing++;
	}
	if (missing < ARRAY_SIZE(basic))
		return 0;
	if (o->facts_file) {
		fprintf(stderr, "hosttune: %s: neither mem.total nor kernel.version is given: "
		                "not the facts of a host\n", o->facts_file);
		return EXIT_USAGE;
	}
	fprintf(stderr, "hosttune: could not collect mem.total or kernel.version from %s/proc: "
	                "not a host's tree\n", o->root ? o->root : "");
	return EXIT_COLLECT;
}

static int load_observed(const struct options *o, const struct ht_ruleset *rs,
                         struct ht_facts *f);

static const char *origin_of(const struct options *o, char *buf, size_t len)
{
	if (o->facts_file)
		snprintf(buf, len, "facts file %s", o->facts_file);
	else if (o->root)
		snprintf(buf, len, "root %s", o->root);
	else
		snprintf(buf, len, "this host");
	return buf;
}

/*
 * The common first half of audit, plan/apply and verify: rules and profile,
 * facts (collected, a --root tree or a --facts file, plus --observed), and
 * the findings. Returns 0 or the exit status, with what was loaded in the
 * out-parameters for the caller to free either way.
 */
static int evaluate(const struct options *o, struct ht_ruleset **rs, struct ht_facts **facts,
                    struct ht_findings *findings)
{
	struct ht_error err = { "" };
	int r;

	r = load_rules(o, rs);
	if (r == 0)
		r = load_facts(o, facts);
	if (r == 0)
		r = check_basic_facts(o, *facts);
	if (r == 0 && o->observed)
		r = load_observed(o, *rs, *facts);
	if (r)
		return r;
	r = ht_ruleset_evaluate(*rs, *facts, findings, &err);
	if (r < 0) {
		fprintf(stderr, "hosttune: %s\n", err.msg[0] ? err.msg : strerror(-r));
		return EXIT_USAGE;
	}
	return 0;
}

static int cmd_audit(const struct options *o)
{
	struct ht_facts *facts = NULL;
	struct ht_ruleset *rs = NULL;
	struct ht_findings findings = { 0 };
	char origin[4200];
	struct ht_report_info info;
	int r;

	r = evaluate(o, &rs, &facts, &findings);
	if (r)
		goto out;
	/* A facts file's host has no configuration here to compare with. */
	if (!o->facts_file && ht_findings_add_boot(&findings, o->root) < 0) {
		fprintf(stderr, "hosttune: out of memory\n");
		r = EXIT_COLLECT;
		goto out;
	}
	info = (struct ht_report_info){ .origin = origin_of(o, origin, sizeof(origin)),
		                        .rules = rs, .values = rs };
	if (o->json)
		r = print_json(ht_report_json(&findings, &info));
	else
		r = ht_report_text(&findings, &info, stdout) < 0 ? EXIT_COLLECT : 0;
	if (r == 0 && fflush(stdout) != 0)
		r = EXIT_COLLECT;
	if (r == 0 && ht_findings_worst(&findings) >= o->fail_on)
		r = EXIT_FINDINGS;
out:
	ht_findings_free(&findings);
	ht_facts_free(facts);
	ht_ruleset_free(rs);
	return r;
}

/*
 * plan and apply: the audit's findings turned into files and live values.
 * A facts file has no host to apply to, so only plan accepts one.
 */
static int cmd_apply(const struct options *o)
{
	struct ht_facts *facts = NULL;
	struct ht_ruleset *rs = NULL;
	struct ht_findings findings = { 0 };
	struct ht_plan plan = { 0 };
	struct ht_error err = { "" };
	int r;

	if (o->facts_file && !o->dry_run)
		return usage_error("apply needs a host (live or --root), not --facts");
	r = evaluate(o, &rs, &facts, &findings);
	if (r)
		goto out;
	r = ht_plan_build(&findings, facts, o->root, ht_ruleset_profile(rs), o->only,
	                  o->plan_flags | (o->facts_file ? HT_PLAN_NO_DISK : 0), &plan, &err);
	if (r < 0) {
		fprintf(stderr, "hosttune: %s\n", err.msg[0] ? err.msg : strerror(-r));
		/* -ELOOP, -EXDEV: a target resolves through a symlink (fsutil.h). */
		r = r == -EINVAL || r == -ELOOP || r == -EXDEV ? EXIT_USAGE : EXIT_COLLECT;
		goto out;
	}
	if (o->dry_run) {
		r = o->json ? print_json(ht_plan_to_json(&plan, false)) :
		    (ht_plan_print(&plan, stdout) < 0 ? EXIT_COLLECT : 0);
		goto out;
	}
	r = ht_plan_apply(&plan, o->root, o->state, o->force, &err);
	if (r < 0) {
		const char *msg = err.msg[0] ? err.msg : strerror(-r);

		if (r == -EEXIST)
			fprintf(stderr, "hosttune: apply refused: %s\n", msg);
		else if (r == -EBADMSG)
			fprintf(stderr, "hosttune: apply refused, nothing was changed: %s\n", msg);
		else if (r == -ENOTRECOVERABLE)
			fprintf(stderr, "hosttune: apply failed and could not roll everything back: "
			        "%s\n", msg);
		else
			fprintf(stderr, "hosttune: apply failed, every change rolled back: %s\n", msg);
		r = r == -EEXIST ? EXIT_USAGE : EXIT_COLLECT;
		goto out;
	}
	if (o->json)
		r = print_json(ht_plan_to_json(&plan, true));
	else if (ht_plan_empty(&plan))
		printf("No changes: the files and live values already match the plan.\n");
	else {
		/* The paths below are host paths; say which tree they are in. */
		if (o->root)
			printf("below --root %s:\n", o->root);
		for (size_t i = 0; i < plan.nfiles; i++) {
			const struct ht_plan_file *f = &plan.files[i];

			if (f->old && f->new && strcmp(f->old, f->new) == 0)
				continue;
			printf("%s %s\n", !f->old ? "created" : !f->new ? "removed" : "updated", f->path);
		}
		for (size_t i = 0; i < plan.nlive; i++) {
			const struct ht_plan_live *l = &plan.live[i];

			if (l->note)
				printf("skipped %s: %s\n", l->key, l->note);
			else
				printf("set %s from %s to %s\n", l->key, l->old ? l->old : "-", l->new);
		}
	}
out:
	ht_plan_free(&plan);
	ht_findings_free(&findings);
	ht_facts_free(facts);
	ht_ruleset_free(rs);
	return r;
}

/* verify: exit 0 when every setting holds now and after a reboot, 1 otherwise. */
static int cmd_verify(const struct options *o)
{
	struct ht_facts *facts = NULL;
	struct ht_ruleset *rs = NULL;
	struct ht_findings findings = { 0 };
	struct ht_verify_report report = { 0 };
	int r;

	if (o->facts_file)
		return usage_error("verify needs a host (live or --root), not --facts");
	r = evaluate(o, &rs, &facts, &findings);
	if (r)
		goto out;
	if (ht_verify(rs, &findings, facts, o->root, o->state, &report) < 0) {
		fprintf(stderr, "hosttune: out of memory\n");
		r = EXIT_COLLECT;
		goto out;
	}
	if (o->json)
		r = print_json(ht_verify_to_json(&report));
	else
		r = ht_verify_print(&report, stdout) < 0 ? EXIT_COLLECT : 0;
	if (r == 0 && ht_verify_problems(&report) > 0)
		r = EXIT_FINDINGS;
out:
	ht_verify_report_free(&report);
	ht_findings_free(&findings);
	ht_facts_free(facts);
	ht_ruleset_free(rs);
	return r;
}

static int cmd_revert(const struct options *o)
{
	struct ht_error err = { "" };
	int r;

	if (o->facts_file)
		return usage_error("revert needs a host (live or --root), not --facts");
	if (o->root)
		printf("below --root %s:\n", o->root);
	r = ht_revert(o->root, o->state, stdout, &err);
	if (r < 0) {
		const char *msg = err.msg[0] ? err.msg : strerror(-r);

		if (r == -ENOENT)
			fprintf(stderr, "hosttune: revert: %s\n", msg);
		else if (r == -EBADMSG)
			fprintf(stderr, "hosttune: revert refused, nothing was changed: %s\n", msg);
		else
			fprintf(stderr, "hosttune: revert incomplete: %s\n", msg);
		return r == -ENOENT ? EXIT_USAGE : EXIT_COLLECT;
	}
	return 0;
}

/* The profile's burst factor: the headroom a recommendation leaves over a peak. */
static double profile_headroom(const struct ht_ruleset *rs)
{
	for (size_t i = 0; i < ht_ruleset_var_count(rs); i++)
		if (strcmp(ht_ruleset_var_name(rs, i), "workload.burst") == 0) {
			const struct ht_value *v = ht_ruleset_var_value(rs, i);

			if (ht_type_is_number(v->type) && ht_value_as_double(v) >= 1)
				return ht_value_as_double(v);
		}
	return 2;
}

static int cmd_watch(const struct options *o)
{
	struct ht_ruleset *rs = NULL;
	struct ht_watch *w = NULL;
	struct ht_watch_summary sum;
	struct ht_watch_config cfg;
	struct ht_error err = { "" };
	struct sigaction sa = { .sa_handler = on_interrupt };
	_cleanup_fclose_ FILE *rec = NULL;
	int r;

	if (o->facts_file)
		return usage_error("watch samples a live host, not --facts");
	r = load_rules(o, &rs);
	if (r)
		return r;
	cfg = (struct ht_watch_config){ .root = o->root, .interval = o->interval,
		                        .duration = o->duration,
		                        .headroom = profile_headroom(rs),
		                        .stop = &interrupted };
	ht_ruleset_free(rs);
	r = ht_watch_new(&cfg, &w, &err);
	if (r < 0) {
		fprintf(stderr, "hosttune: watch: %s\n", err.msg[0] ? err.msg : strerror(-r));
		return EXIT_COLLECT;
	}
	/* Only once the sources are open: a watch that cannot run keeps the old file. */
	if (o->record) {
		rec = fopen(o->record, "we");
		if (!rec) {
			fprintf(stderr, "hosttune: %s: %s\n", o->record, strerror(errno));
			ht_watch_free(w);
			return EXIT_COLLECT;
		}
		if (ht_watch_record_header(rec) < 0)
			goto write_error;
	}
	/* No SA_RESTART: Ctrl-C must end the sleep; a background job may start with it ignored. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!o->json)
		ht_watch_format_header(stdout);
	while (!interrupted) {
		struct ht_watch_sample smp;

		r = ht_watch_sample(w, &smp, &err);
		if (r < 0) {
			fprintf(stderr, "hosttune: watch: %s\n", err.msg[0] ? err.msg : strerror(-r));
			ht_watch_free(w);
			return EXIT_COLLECT;
		}
		if (!o->json) {
			ht_watch_format_sample(stdout, &smp);
			fflush(stdout);
		}
		if (rec && (ht_watch_record_sample(rec, &smp) < 0 || fflush(rec) != 0))
			goto write_error;
		if (ht_watch_done(w) || ht_watch_wait(w) == -EINTR)
			break;
	}
	r = ht_watch_summary(w, &sum);
	ht_watch_free(w);
	w = NULL;
	if (r < 0) {
		fprintf(stderr, "hosttune: watch: %s\n", strerror(-r));
		return EXIT_COLLECT;
	}
	if (o->json)
		return print_json(ht_watch_summary_json(&sum));
	return ht_watch_format_summary(stdout, &sum) < 0 ? EXIT_COLLECT : 0;
write_error:
	fprintf(stderr, "hosttune: %s: %s\n", o->record, strerror(errno ? errno : EIO));
	ht_watch_free(w);
	return EXIT_COLLECT;
}

static int set_num(struct ht_facts *f, const char *name, double v, bool integer,
                   const char *unit, const char *source)
{
	struct ht_value val = integer ? ht_int((int64_t)v) : ht_dec(v);

	return ht_facts_set(f, name, &val, unit, source);
}

/*
 * audit --observed FILE: the recording's summary as observed.* facts, which
 * the conntrack rules prefer to the profile's guessed rate.
 */
static int load_observed(const struct options *o, const struct ht_ruleset *rs,
                         struct ht_facts *f)
{
	_cleanup_free_ struct ht_watch_sample *samples = NULL;
	_cleanup_free_ char *src = NULL;
	struct ht_watch_summary sum;
	struct ht_error err = { "" };
	struct ht_value v;
	size_t n = 0;
	int r;

	r = ht_watch_record_load(o->observed, &samples, &n, &err);
	if (r >= 0)
		r = ht_watch_replay(samples, n, profile_headroom(rs), o->observed, &sum);
	if (r < 0) {
		fprintf(stderr, "hosttune: %s\n", err.msg[0] ? err.msg : strerror(-r));
		return EXIT_USAGE;
	}
	if (asprintf(&src, "--observed %s", o->observed) < 0) {
		src = NULL;
		return EXIT_COLLECT;
	}
	v = (struct ht_value){ .type = HT_T_STR, .s = (char *)o->observed };
	if (set_num(f, "observed.peak_count", (double)sum.peak_count, true, "entries", src) < 0 ||
	    set_num(f, "observed.pinned_samples", (double)sum.pinned_samples, true, "samples",
	            src) < 0 ||
	    set_num(f, "observed.samples", (double)sum.samples, true, "samples", src) < 0 ||
	    set_num(f, "observed.max", (double)sum.max, true, "entries", src) < 0 ||
	    set_num(f, "observed.time_wait", (double)sum.time_wait, true, "seconds", src) < 0 ||
	    ht_facts_set(f, "observed.source", &v, NULL, src) < 0)
		return EXIT_COLLECT;
	if (sum.have_rate &&
	    (set_num(f, "observed.peak_rate", sum.peak_rate, false, "connections/s", src) < 0 ||
	     set_num(f, "observed.mean_rate", sum.mean_rate, false, "connections/s", src) < 0))
		return EXIT_COLLECT;
	if (sum.have_drops && set_num(f, "observed.drops", (double)sum.drops, true, "packets",
	                              src) < 0)
		return EXIT_COLLECT;
	return 0;
}

/* Multi-line formulas print on one line: runs of white space become one space. */
static void print_key(const struct ht_rule *rule, const char *key, const char *label)
{
	const char *t = ht_rule_key_text(rule, key);
	bool space = false;

	if (!t)
		return;
	printf("  %-10s ", label);
	for (; *t; t++) {
		if (*t == ' ' || *t == '\n' || *t == '\t') {
			space = true;
			continue;
		}
		if (space)
			putchar(' ');
		space = false;
		putchar(*t);
	}
	putchar('\n');
}

static int cmd_explain(const struct options *o, const char *id)
{
	struct ht_ruleset *rs = NULL;
	const struct ht_rule *rule;
	const char *t;
	int r = load_rules(o, &rs);

	if (r)
		return r;
	rule = ht_ruleset_find(rs, id);
	if (!rule) {
		fprintf(stderr, "hosttune: no rule '%s' (hosttune rules lists them)\n", id);
		ht_ruleset_free(rs);
		return EXIT_USAGE;
	}
	printf("%s", ht_rule_id(rule));
	if (ht_rule_title(rule))
		printf(": %s", ht_rule_title(rule));
	printf("\n  defined at %s:%u\n", ht_rule_pos(rule)->file, ht_rule_pos(rule)->line);
	printf("  %-10s %s%s%s\n", "target", ht_target_kind_name(ht_rule_kind(rule)),
	       ht_rule_target(rule) ? " " : "", ht_rule_target(rule) ? ht_rule_target(rule) : "");
	print_key(rule, "when", "when");
	print_key(rule, "current", "current");
	print_key(rule, "value", "value");
	print_key(rule, "direction", "direction");
	print_key(rule, "severity", "severity");
	t = ht_rule_rationale(rule);
	if (t) {
		const char *p = t;

		printf("\nRationale:\n");
		while (*p) {
			size_t n = strcspn(p, "\n");

			printf("  %.*s\n", (int)n, p);
			p += n + (p[n] ? 1 : 0);
		}
	}
	ht_ruleset_free(rs);
	return 0;
}

static int cmd_rules(const struct options *o)
{
	struct ht_ruleset *rs = NULL;
	int r = load_rules(o, &rs);

	if (r)
		return r;
	for (size_t i = 0; i < ht_ruleset_rule_count(rs); i++) {
		const struct ht_rule *rule = ht_ruleset_rule_at(rs, i);

		printf("%-34s %-7s %s\n", ht_rule_id(rule), ht_target_kind_name(ht_rule_kind(rule)),
		       ht_rule_target(rule) ? ht_rule_target(rule) :
		       (ht_rule_title(rule) ? ht_rule_title(rule) : ""));
	}
	ht_ruleset_free(rs);
	return 0;
}

int main(int argc, char **argv)
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
	_cleanup_free_ const char **sets = calloc((size_t)argc, sizeof(*sets));
	struct options o = { .fail_on = HT_SEV_WARNING, .sets = sets, .interval = 1,
		             .duration = 60 };
	const char *cmd;
	int c, r;

	if (!sets)
		return EXIT_COLLECT;
	opterr = 0; /* one line of our own for every usage error */
	while ((c = getopt_long(argc, argv, "r:F:p:s:f:nhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			o.root = optarg;
			break;
		case 'F':
			o.facts_file = optarg;
			break;
		case 'R':
			o.rules_dir = optarg;
			break;
		case 'p':
			o.profile = optarg;
			break;
		case 's':
			o.sets[o.nsets++] = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "json") == 0)
				o.json = true;
			else if (strcmp(optarg, "text") != 0)
				return usage_error("--format: expected text or json, got '%s'", optarg);
			break;
		case 'x':
			if (ht_severity_from_name(optarg, &o.fail_on) < 0 || o.fail_on == HT_SEV_OK)
				return usage_error("--fail-on: expected info, warning or critical, got '%s'",
				                   optarg);
			break;
		case 'M':
			o.no_measure = true;
			break;
		case 'n':
			o.dry_run = true;
			break;
		case 'P':
			o.plan_flags |= HT_PLAN_PERSIST;
			break;
		case 'L':
			o.plan_flags |= HT_PLAN_LIVE;
			break;
		case 'O':
			o.only = optarg;
			break;
		case 'X':
			o.force = true;
			break;
		case 'S':
			o.state = optarg;
			break;
		case 'B':
			o.observed = optarg;
			break;
		case 'W':
			o.record = optarg;
			break;
		case 'I':
			if (parse_seconds(optarg, &o.interval) < 0 || o.interval < 0.001 ||
			    o.interval > 86400)
				return usage_error("--interval: expected a time such as 1s, 250ms or 2min "
				                   "(1ms to 1 day), got '%s'", optarg);
			break;
		case 'D':
			if (parse_seconds(optarg, &o.duration) < 0)
				return usage_error("--duration: expected a time such as 60s or 10min "
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
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (o.root && o.facts_file)
		return usage_error("--root and --facts exclude each other");
	if (o.plan_flags == (HT_PLAN_PERSIST | HT_PLAN_LIVE))
		return usage_error("--persist-only and --live-only exclude each other");
	if (!o.plan_flags)
		o.plan_flags = HT_PLAN_PERSIST | HT_PLAN_LIVE;
	if (o.root) {
		struct stat st;

		if (stat(o.root, &st) < 0) {
			fprintf(stderr, "hosttune: --root %s: %s\n", o.root, strerror(errno));
			return EXIT_COLLECT;
		}
		if (!S_ISDIR(st.st_mode)) {
			fprintf(stderr, "hosttune: --root %s: not a directory\n", o.root);
			return EXIT_COLLECT;
		}
	}
	if (optind >= argc)
		return usage_error("missing command (audit, facts, explain RULE, rules, plan, apply, "
		                   "revert, verify, watch)");
	cmd = argv[optind++];
	if (o.json && (strcmp(cmd, "explain") == 0 || strcmp(cmd, "rules") == 0))
		return usage_error("--format json: '%s' prints text only", cmd);
	if (strcmp(cmd, "explain") == 0) {
		if (optind != argc - 1)
			return usage_error("explain takes one rule id");
		r = cmd_explain(&o, argv[optind]);
	} else if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	else if (strcmp(cmd, "audit") == 0)
		r = cmd_audit(&o);
	else if (strcmp(cmd, "facts") == 0)
		r = cmd_facts(&o);
	else if (strcmp(cmd, "rules") == 0)
		r = cmd_rules(&o);
	else if (strcmp(cmd, "plan") == 0) {
		o.dry_run = true;
		r = cmd_apply(&o);
	} else if (strcmp(cmd, "apply") == 0)
		r = cmd_apply(&o);
	else if (strcmp(cmd, "revert") == 0)
		r = cmd_revert(&o);
	else if (strcmp(cmd, "verify") == 0)
		r = cmd_verify(&o);
	else if (strcmp(cmd, "watch") == 0)
		r = cmd_watch(&o);
	else
		return usage_error("unknown command '%s'", cmd);
	/* A report that did not reach its reader (a full disk, a closed pipe) is a failure. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "hosttune: writing the output: %s\n", strerror(errno ? errno : EIO));
		return EXIT_COLLECT;
	}
	return r;
}
