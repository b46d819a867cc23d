/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hosttune audit --format prometheus: the findings and the conntrack figures
 * in the Prometheus text format that node_exporter's textfile collector
 * reads; and audit --output FILE, written atomically for that collector.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/report.h"
#include "engine/facts.h"
#include "engine/rules.h"
#include "engine/value.h"
#include "shared/escape.h"
#include "shared/fsutil.h"
#include "shared/util.h"

/*
 * One metric family: its HELP and TYPE lines go out before its first sample,
 * so that a family with no sample (nf_conntrack absent) is not printed at all
 * and every family's samples stay together (the format allows no
 * interleaving). All of hosttune's families are gauges.
 */
struct family {
	const char *name;
	const char *help; /* one line; no backslash, no newline (no escape needed) */
	bool started;
};

#define FAMILY(n, h) { .name = (n), .help = (h), .started = false }

/* A label of a sample; a NULL value leaves the label out. */
struct label {
	const char *name;
	const char *value;
};

/*
 * A label value between double quotes: backslash, double quote and line feed
 * escaped as the text format wants (\\ \" \n); a byte that is not UTF-8 (an
 * interface name may hold any byte but '/' and white space; node_exporter's
 * parser refuses such a file) and any other control character (C0, DEL, C1:
 * a rule's unit from a site's rules file) as the four characters \xHH, as
 * the text report shows them (shared/escape.h), so that the file parses and
 * no terminal that shows it obeys one.
 */
static void put_label_value(FILE *out, const char *v)
{
	const unsigned char *s = (const unsigned char *)v;

	fputc('"', out);
	for (size_t i = 0; s[i];) {
		size_t len = (size_t)ht_utf8_len(v + i);

		if (s[i] == '\\' || s[i] == '"') {
			fputc('\\', out);
			fputc(s[i++], out);
		} else if (s[i] == '\n') {
			fputs("\\n", out);
			i++;
		} else if (len == 0 || s[i] < 0x20 || s[i] == 0x7f ||
		           (s[i] == 0xc2 && s[i + 1] < 0xa0)) {
			/* A C1 control is two bytes, each escaped. */
			for (size_t k = 0; k < (len ? len : 1); k++)
				fprintf(out, "\\\\x%02x", s[i + k]);
			i += len ? len : 1;
		} else {
			fwrite(s + i, 1, len, out);
			i += len;
		}
	}
	fputc('"', out);
}

/* One sample of @fam: "NAME{LABEL="VALUE",...} VALUE", after the family's HELP and TYPE. */
static void put_sample(FILE *out, struct family *fam, const struct label *labels, size_t n,
                       const char *value)
{
	bool first = true;

	if (!fam->started) {
		fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", fam->name, fam->help, fam->name);
		fam->started = true;
	}
	fputs(fam->name, out);
	for (size_t i = 0; i < n; i++) {
		if (!labels[i].value)
			continue;
		fprintf(out, "%s%s=", first ? "{" : ",", labels[i].name);
		put_label_value(out, labels[i].value);
		first = false;
	}
	if (!first)
		fputc('}', out);
	fprintf(out, " %s\n", value);
}

/*
 * A number as the sample's value: integers exactly, decimals in the shortest
 * form that reads back to the same double (ht_value_format()). NULL for any
 * other type (nothing to print) or ENOMEM, with *@oom set for the latter.
 */
static char *number_text(const struct ht_value *v, bool *oom)
{
	char *s;

	if (!ht_type_is_number(v->type))
		return NULL;
	s = ht_value_format(v);
	if (!s)
		*oom = true;
	return s;
}

/* A sample without labels from an integer. */
static void put_int(FILE *out, struct family *fam, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	put_sample(out, fam, NULL, 0, buf);
}

/*
 * The label of a per-instance finding's instance: "device" for an
 * interface, "port" for a listening port, "process" for a process,
 * "directory" for a storage directory (never
 * "instance": Prometheus sets that from the target). Labels with a NULL
 * value are left out, so a host rule's is never printed.
 */
static const char *instance_label(const struct ht_finding *fi)
{
	switch (ht_rule_each(fi->rule)) {
	case HT_EACH_LISTENER:
		return "port";
	case HT_EACH_PROCESS:
		return "process";
	case HT_EACH_STORAGE:
		return "directory";
	case HT_EACH_NIC:
	case HT_EACH_NONE:
		break;
	}
	return "device";
}

/* True when an earlier finding than @k has the same rule and instance: one series each. */
static bool seen_before(const struct ht_findings *f, size_t k)
{
	const struct ht_finding *a = &f->items[k];

	for (size_t i = 0; i < k; i++) {
		const struct ht_finding *b = &f->items[i];

		if (b->rule == a->rule && ((!a->instance && !b->instance) ||
		                           (a->instance && b->instance &&
		                            strcmp(a->instance, b->instance) == 0)))
			return true;
	}
	return false;
}

/*
 * The named value @id (rules/conntrack.rules) as a sample of @fam, when it
 * is a number; nothing when it needs a fact this host lacks (no conntrack).
 */
static int put_rule_value(FILE *out, struct family *fam, struct ht_ruleset *rs, const char *id)
{
	struct ht_value v = { 0 };
	struct ht_error e = { "" };
	_cleanup_free_ char *text = NULL;
	bool oom = false;

	if (ht_ruleset_value(rs, id, &v, &e) < 0)
		return 0;
	text = number_text(&v, &oom);
	ht_value_clear(&v);
	if (oom)
		return -ENOMEM;
	if (text)
		put_sample(out, fam, NULL, 0, text);
	return 0;
}

int cli_metrics_write(const struct ht_findings *f, struct ht_ruleset *rs, int64_t now, FILE *out)
{
	struct family build = FAMILY("hosttune_build_info",
		                "hosttune's version, as a label; the value is always 1.");
	struct family last_run = FAMILY("hosttune_last_run_timestamp_seconds",
		                   "When this audit ran, in seconds since the Unix epoch.");
	struct family profile = FAMILY("hosttune_profile_info",
		                  "The workload profile the audit used, as a label; the value is always 1.");
	struct family worst = FAMILY("hosttune_audit_worst_severity",
		                "Highest severity among the applicable findings: 0 ok, 1 info, 2 warning, 3 critical.");
	struct family counts = FAMILY("hosttune_audit_findings",
		                 "Number of findings at each severity; n/a counts the findings a missing fact left undecided, waived those the site's configuration waives.");
	struct family applicable = FAMILY("hosttune_finding_applicable",
		                     "1 when the rule could judge this host, 0 when a fact it needs is unavailable.");
	struct family severity = FAMILY("hosttune_finding_severity",
		                   "Severity of an applicable finding: 0 ok, 1 info, 2 warning, 3 critical.");
	struct family waived = FAMILY("hosttune_finding_waived",
		                 "1 for a finding the site's configuration waives (hosttune.conf [waive]), with its reason; left out of the worst severity and the exit status.");
	struct family current = FAMILY("hosttune_finding_current_value",
		                  "The value the rule judged, in the unit of the unit label (numeric findings only).");
	struct family recommended = FAMILY("hosttune_finding_recommended_value",
		                      "The value hosttune recommends, in the unit of the unit label (numeric findings only).");
	struct family buckets = FAMILY("hosttune_conntrack_buckets",
		                  "Buckets of the conntrack hash table (nf_conntrack_buckets).");
	struct family time_wait = FAMILY("hosttune_conntrack_time_wait_seconds",
		                    "How long a closed TCP connection stays in the conntrack table (nf_conntrack_tcp_timeout_time_wait).");
	struct family ceiling = FAMILY("hosttune_conntrack_new_connection_ceiling_per_second",
		                  "New connections a second the table admits when full: nf_conntrack_max / TIME_WAIT.");
	struct family expected = FAMILY("hosttune_conntrack_expected_rate_per_second",
		                   "New connections a second to plan for: a recorded peak (--observed), else the profile's workload.conn_rate.");
	struct family planned = FAMILY("hosttune_conntrack_planned_peak_rate_per_second",
		                  "The expected rate times the profile's burst headroom (workload.burst): what the recommendation sizes for.");
	size_t n_sev[HT_SEV_CRITICAL + 1] = { 0 }, n_na = 0, n_waived = 0;
	char buf[64];
	int r;

	{
		struct label l[] = { { "version", PACKAGE_VERSION } };

		put_sample(out, &build, l, ARRAY_SIZE(l), "1");
	}
	put_int(out, &last_run, now);
	{
		struct label l[] = { { "profile", ht_ruleset_profile(rs) ? ht_ruleset_profile(rs) :
		                                                           "default" } };

		put_sample(out, &profile, l, ARRAY_SIZE(l), "1");
	}
	put_int(out, &worst, (int64_t)ht_findings_worst(f));
	for (size_t k = 0; k < f->n; k++) {
		if (seen_before(f, k))
			continue;
		if (f->items[k].waived)
			n_waived++;
		else if (f->items[k].applicable)
			n_sev[f->items[k].severity]++;
		else
			n_na++;
	}
	for (int s = HT_SEV_OK; s <= HT_SEV_CRITICAL; s++) {
		struct label l[] = { { "severity", ht_severity_name((enum ht_severity)s) } };

		snprintf(buf, sizeof(buf), "%zu", n_sev[s]);
		put_sample(out, &counts, l, ARRAY_SIZE(l), buf);
	}
	{
		struct label l[] = { { "severity", "n/a" } };

		snprintf(buf, sizeof(buf), "%zu", n_na);
		put_sample(out, &counts, l, ARRAY_SIZE(l), buf);
	}
	if (n_waived) {
		struct label l[] = { { "severity", "waived" } };

		snprintf(buf, sizeof(buf), "%zu", n_waived);
		put_sample(out, &counts, l, ARRAY_SIZE(l), buf);
	}

	/* The per-finding families, each a pass over the findings: no interleaving. */
	for (size_t k = 0; k < f->n; k++) {
		const struct ht_finding *fi = &f->items[k];
		struct label l[] = { { "rule", ht_rule_id(fi->rule) }, { instance_label(fi), fi->instance } };

		if (!seen_before(f, k))
			put_sample(out, &applicable, l, ARRAY_SIZE(l), fi->applicable ? "1" : "0");
	}
	for (size_t k = 0; k < f->n; k++) {
		const struct ht_finding *fi = &f->items[k];
		struct label l[] = { { "rule", ht_rule_id(fi->rule) }, { instance_label(fi), fi->instance } };

		if (fi->applicable && !seen_before(f, k)) {
			snprintf(buf, sizeof(buf), "%d", (int)fi->severity);
			put_sample(out, &severity, l, ARRAY_SIZE(l), buf);
		}
	}
	for (size_t k = 0; k < f->n; k++) {
		const struct ht_finding *fi = &f->items[k];
		struct label l[] = { { "rule", ht_rule_id(fi->rule) }, { instance_label(fi), fi->instance },
			             { "reason", fi->waived } };

		if (fi->waived && !seen_before(f, k))
			put_sample(out, &waived, l, ARRAY_SIZE(l), "1");
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t k = 0; k < f->n; k++) {
			const struct ht_finding *fi = &f->items[k];
			const struct ht_value *v = pass == 0 ? &fi->current : &fi->recommended;
			struct label l[] = { { "rule", ht_rule_id(fi->rule) }, { instance_label(fi), fi->instance },
				             { "key", ht_rule_target(fi->rule) },
				             { "unit", ht_rule_unit(fi->rule) } };
			_cleanup_free_ char *text = NULL;
			bool oom = false;

			/* As in the JSON report: no recommendation from a rule that could not judge. */
			if (seen_before(f, k) || (pass == 1 && !fi->applicable))
				continue;
			text = number_text(v, &oom);
			if (oom)
				return -ENOMEM;
			if (text)
				put_sample(out, pass == 0 ? &current : &recommended, l, ARRAY_SIZE(l), text);
		}

	/* What node_exporter's conntrack collector (entries, limit, stat_*) does not have. */
	r = put_rule_value(out, &buckets, rs, "conntrack.buckets_now");
	if (r >= 0)
		r = put_rule_value(out, &time_wait, rs, "conntrack.time_wait_now");
	if (r >= 0)
		r = put_rule_value(out, &ceiling, rs, "conntrack.ceiling");
	if (r >= 0)
		r = put_rule_value(out, &expected, rs, "conntrack.rate");
	if (r >= 0)
		r = put_rule_value(out, &planned, rs, "conntrack.peak_rate");
	if (r < 0)
		return r;
	return ferror(out) ? -EIO : 0;
}

int cmd_metrics(const struct options *o)
{
	struct ht_facts *facts = NULL;
	struct ht_ruleset *rs = NULL;
	struct ht_findings findings = { 0 };
	int r;

	/* As audit: what the boot configuration gives a value raises its finding. */
	r = cli_evaluate(o, &rs, &facts, &findings);
	if (r)
		goto out;
	r = cli_printed(cli_metrics_write(&findings, rs, (int64_t)time(NULL), stdout));
	if (r == 0 && ht_findings_worst(&findings) >= o->fail_on)
		r = EXIT_FINDINGS;
out:
	ht_findings_free(&findings);
	ht_facts_free(facts);
	ht_ruleset_free(rs);
	return r;
}

/*
 * The full path --output names: its directory resolved (relative to the
 * working directory, ".." and symbolic links of directories followed, as any
 * command-line path), its last component as given. -ENOENT, -ENOTDIR, ...
 * from realpath(3) for a directory that is not there; -EINVAL when the path
 * names no file ("", "dir/", ".", "..").
 */
static int output_path(const char *arg, char **out)
{
	const char *slash = strrchr(arg, '/');
	const char *base = slash ? slash + 1 : arg;
	_cleanup_free_ char *dir = NULL, *real = NULL;

	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return -EINVAL;
	dir = slash ? strndup(arg, slash == arg ? 1 : (size_t)(slash - arg)) : strdup(".");
	if (!dir)
		return -ENOMEM;
	real = realpath(dir, NULL);
	if (!real)
		return -errno;
	if (asprintf(out, "%s%s%s", real, strcmp(real, "/") == 0 ? "" : "/", base) < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Writes @content to --output @arg atomically; prints the one-line error. 0 or EXIT_COLLECT. */
static int write_output(const char *arg, const char *content)
{
	_cleanup_free_ char *path = NULL;
	struct ht_error err = { "" };
	bool changed;
	int r = output_path(arg, &path);

	if (r == -EINVAL) {
		cli_error("--output %s: does not name a file\n", arg);
		return EXIT_COLLECT;
	}
	if (r < 0)
		return cli_fail(r, EXIT_COLLECT, "--output %s: %s", arg, strerror(-r));
	/* A temp file ".NAME.hosttune-XXXXXX" beside it (not *.prom: the collector skips it). */
	r = ht_file_write_at(NULL, path, content, 0644, &changed, &err);
	if (r < 0)
		return cli_fail(r, EXIT_COLLECT, "--output %s: %s", arg,
		                err.msg[0] ? err.msg : strerror(-r));
	return 0;
}

int cli_run_output(const struct options *o, int (*run)(const struct options *o))
{
	_cleanup_close_ int mfd = -1, saved = -1;
	_cleanup_free_ char *content = NULL;
	size_t len = 0;
	bool had_json;
	int r, e = 0;

	if (ht_escape_flush(stdout) != 0) {
		cli_error("writing the output: %s\n", strerror(errno));
		return EXIT_COLLECT;
	}
	/* Above 2, so that it is never fd 1 itself when standard output is closed. */
	{
		_cleanup_close_ int fd = memfd_create("hosttune-output", MFD_CLOEXEC);

		mfd = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 3);
	}
	if (mfd < 0)
		return cli_fail(-errno, EXIT_COLLECT, "--output %s: %s", o->output,
		                strerror(errno));
	/* fd 1 may be closed (saved is -1 then): it is closed again afterwards. */
	saved = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (saved < 0 && errno != EBADF) {
		cli_error("--output %s: %s\n", o->output, strerror(errno));
		return EXIT_COLLECT;
	}
	if (dup2(mfd, STDOUT_FILENO) < 0) {
		cli_error("--output %s: %s\n", o->output, strerror(errno));
		return EXIT_COLLECT;
	}
	r = run(o);
	if (ht_escape_flush(stdout) != 0 || ferror(stdout))
		e = errno ? errno : EIO;
	clearerr(stdout);
	if (saved >= 0)
		dup2(saved, STDOUT_FILENO);
	else
		close(STDOUT_FILENO);
	/* What was printed is in the memfd, not on stdout (a later error object goes there). */
	had_json = cli_swap_printed(false);
	if (!e && lseek(mfd, 0, SEEK_SET) < 0)
		e = errno;
	if (!e) {
		int rr = ht_read_fd(mfd, (size_t)256 << 20, &content, &len);

		e = rr < 0 ? -rr : 0;
	}
	if (e)
		return cli_fail(-e, EXIT_COLLECT, "--output %s: keeping the report: %s", o->output,
		                strerror(e));
	/*
	 * A report: into the file. A failure (a usage error, collection failed):
	 * the file keeps its last report, and whatever the command printed goes
	 * to standard output as it would without --output.
	 */
	if (r != EXIT_CLEAN && r != EXIT_FINDINGS) {
		fwrite(content, 1, len, stdout);
		cli_swap_printed(had_json);
		return r;
	}
	if (strlen(content) != len) {
		cli_error("--output %s: the report holds a NUL byte\n", o->output);
		return EXIT_COLLECT;
	}
	return write_output(o->output, content) ? EXIT_COLLECT : r;
}
