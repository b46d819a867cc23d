/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hosttune audit --format prometheus: the findings and the conntrack figures
 * in the Prometheus text format that node_exporter's textfile collector
 * reads; and audit --output FILE, written atomically for that collector.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
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
 * "directory" for a storage directory, "peer" for a TCP peer, "cgroup"
 * for a control group's path (never "instance": Prometheus sets that from
 * the target). Labels with a NULL
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
	case HT_EACH_PEER:
		return "peer";
	case HT_EACH_CGROUP:
		return "cgroup";
	case HT_EACH_NETNS:
		return "netns";
	case HT_EACH_PROXY:
		return "proxy";
	case HT_EACH_NIC:
	case HT_EACH_NONE:
		break;
	}
	return "device";
}

/*
 * The value of that label: the instance, but a TCP peer's address as it is
 * written (an IPv6 instance name has '-' for ':', which fact names cannot
 * hold; an address has no '-'). @buf holds 64 bytes.
 */
static const char *instance_value(const struct ht_finding *fi, char *buf)
{
	if (!fi->instance || ht_rule_each(fi->rule) != HT_EACH_PEER || strlen(fi->instance) >= 64)
		return fi->instance;
	for (size_t i = 0;; i++) {
		buf[i] = fi->instance[i] == '-' ? ':' : fi->instance[i];
		if (!buf[i])
			break;
	}
	return buf;
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
	char ib[64];
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
		struct label l[] = { { "rule", ht_rule_id(fi->rule) },
		                     { instance_label(fi), instance_value(fi, ib) } };

		if (!seen_before(f, k))
			put_sample(out, &applicable, l, ARRAY_SIZE(l), fi->applicable ? "1" : "0");
	}
	for (size_t k = 0; k < f->n; k++) {
		const struct ht_finding *fi = &f->items[k];
		struct label l[] = { { "rule", ht_rule_id(fi->rule) },
		                     { instance_label(fi), instance_value(fi, ib) } };

		if (fi->applicable && !seen_before(f, k)) {
			snprintf(buf, sizeof(buf), "%d", (int)fi->severity);
			put_sample(out, &severity, l, ARRAY_SIZE(l), buf);
		}
	}
	for (size_t k = 0; k < f->n; k++) {
		const struct ht_finding *fi = &f->items[k];
		struct label l[] = { { "rule", ht_rule_id(fi->rule) }, { instance_label(fi), instance_value(fi, ib) },
			             { "reason", fi->waived } };

		if (fi->waived && !seen_before(f, k))
			put_sample(out, &waived, l, ARRAY_SIZE(l), "1");
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t k = 0; k < f->n; k++) {
			const struct ht_finding *fi = &f->items[k];
			const struct ht_value *v = pass == 0 ? &fi->current : &fi->recommended;
			struct label l[] = { { "rule", ht_rule_id(fi->rule) }, { instance_label(fi), instance_value(fi, ib) },
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

/* An integer fact's value as a double, false when it is absent or unavailable. */
static bool fact_number(const struct ht_facts *facts, const char *name, double *out)
{
	const struct ht_fact *f = ht_facts_get(facts, name);

	if (!f || !ht_type_is_number(f->value.type))
		return false;
	*out = f->value.type == HT_T_INT ? (double)f->value.i : f->value.d;
	return true;
}

int cli_metrics_peers(const struct ht_facts *facts, FILE *out)
{
	struct family share = FAMILY("hosttune_peer_retransmit_ratio",
		                "Segments retransmitted to the peer over segments sent to it (tcp_info): over --sample's interval, else since its connections opened.");
	struct family min_rtt = FAMILY("hosttune_peer_min_rtt_seconds",
		                  "Smallest tcpi_min_rtt among the peer's established connections: the path's RTT at best.");
	struct family rtt = FAMILY("hosttune_peer_rtt_seconds",
		              "Smoothed RTT (tcpi_rtt) of the peer's connections, weighted by their segments sent.");
	const struct ht_fact *list = ht_facts_get(facts, "peer.list");
	bool sampled = ht_facts_get(facts, "sample.seconds") &&
	               ht_facts_get(facts, "sample.seconds")->value.type != HT_T_NONE;
	_cleanup_free_ char *names = NULL;
	char buf[64];

	/* Only when a rule read the peers: the dump is not made for the metrics alone. */
	if (!list || list->value.type != HT_T_STR)
		return 0;
	names = strdup(list->value.s);
	if (!names)
		return -ENOMEM;
	for (int pass = 0; pass < 3; pass++) {
		/* Each pass splits a fresh copy (strtok_r() writes NULs into it). */
		strcpy(names, list->value.s);
		for (char *save = NULL, *p = strtok_r(names, " ", &save); p;
		     p = strtok_r(NULL, " ", &save)) {
			char fact[160], sent[160];
			const struct ht_fact *addr;
			struct label l[1];
			double a, b;

			snprintf(fact, sizeof(fact), "peer.%s.address", p);
			addr = ht_facts_get(facts, fact);
			l[0] = (struct label){ "peer", addr && addr->value.type == HT_T_STR ?
			                                       addr->value.s : p };
			if (pass == 0) {
				snprintf(fact, sizeof(fact), "peer.%s.retrans%s", p, sampled ? ".delta" : "");
				snprintf(sent, sizeof(sent), "peer.%s.segs_out%s", p, sampled ? ".delta" : "");
				if (!fact_number(facts, fact, &a) || !fact_number(facts, sent, &b) || b <= 0)
					continue;
				snprintf(buf, sizeof(buf), "%.6g", a / b);
				put_sample(out, &share, l, ARRAY_SIZE(l), buf);
			} else {
				snprintf(fact, sizeof(fact), "peer.%s.%s", p, pass == 1 ? "min_rtt" : "rtt");
				if (!fact_number(facts, fact, &a))
					continue;
				snprintf(buf, sizeof(buf), "%.6g", a / 1000);
				put_sample(out, pass == 1 ? &min_rtt : &rtt, l, ARRAY_SIZE(l), buf);
			}
		}
	}
	return ferror(out) ? -EIO : 0;
}

/* @name's value when it is a number, else NaN: a figure that cannot be printed. */
static double number_or_nan(const struct ht_facts *facts, const char *name)
{
	double v;

	return fact_number(facts, name, &v) ? v : NAN;
}

/* nic.IF.SUFFIX, or its .delta with --sample, as a number; NaN when unavailable. */
static double nic_span(const struct ht_facts *facts, const char *ifname, const char *suffix,
                       bool sampled)
{
	char name[160];

	snprintf(name, sizeof(name), "nic.%s.%s%s", ifname, suffix, sampled ? ".delta" : "");
	return number_or_nan(facts, name);
}

int cli_metrics_nics(const struct ht_facts *facts, FILE *out)
{
	struct family bad = FAMILY("hosttune_nic_bad_frame_ratio",
		              "Frames received bad or missed (rx_errors + rx_missed_errors) over the frames that arrived: over --sample's interval, else since the interface was created.");
	struct family offload = FAMILY("hosttune_nic_overlay_tunnel_segmentation",
		                  "1 when the underlay of a VXLAN or Geneve device segments its tunnelled packets (the feature in the feature label is active), 0 when the CPU does.");
	struct family fit = FAMILY("hosttune_nic_overlay_mtu_fit_bytes",
		              "The largest MTU of a VXLAN or Geneve device that its underlay carries: underlay MTU less the encapsulation's headroom.");
	struct family softnet = FAMILY("hosttune_softnet_drop_ratio",
		                  "Packets dropped at a CPU's input backlog over the packets queued to it, all CPUs (/proc/net/softnet_stat): over --sample's interval, else since boot.");
	const struct ht_fact *list = ht_facts_get(facts, "nic.list"), *sample;
	_cleanup_free_ char *names = NULL;
	bool sampled;
	char buf[64];

	sample = ht_facts_get(facts, "sample.seconds");
	sampled = sample && sample->value.type != HT_T_NONE;
	if (list && list->value.type == HT_T_STR) {
		names = strdup(list->value.s);
		if (!names)
			return -ENOMEM;
	}
	for (int pass = 0; names && pass < 3; pass++) {
		strcpy(names, list->value.s);
		for (char *save = NULL, *p = strtok_r(names, " ", &save); p;
		     p = strtok_r(NULL, " ", &save)) {
			/* The list has the names escaped as the facts do; the label the name. */
			_cleanup_free_ char *dev = ht_name_unescape(p);
			struct label l[3] = { { "device", dev ? dev : p } };
			double a, b, c;
			char name[160];
			const struct ht_fact *u, *feat;

			if (pass == 0) {
				/* Facts a rule read only: the counters are not read for the metrics. */
				a = nic_span(facts, p, "stats.rx_errors", sampled);
				b = nic_span(facts, p, "stats.rx_missed_errors", sampled);
				c = nic_span(facts, p, "stats.rx_packets", sampled);
				if (isnan(a + b + c))
					continue;
				snprintf(buf, sizeof(buf), "%.6g", a + b > 0 ? (a + b) / (a + b + c) : 0.0);
				put_sample(out, &bad, l, 1, buf);
			} else if (pass == 1) {
				snprintf(name, sizeof(name), "nic.%s.underlay_tnl_segmentation", p);
				u = ht_facts_get(facts, name);
				snprintf(name, sizeof(name), "nic.%s.underlay", p);
				l[1] = (struct label){ "underlay", NULL };
				if (ht_facts_get(facts, name) && ht_facts_get(facts, name)->value.type == HT_T_STR)
					l[1].value = ht_facts_get(facts, name)->value.s;
				snprintf(name, sizeof(name), "nic.%s.underlay_tnl_feature", p);
				feat = ht_facts_get(facts, name);
				l[2] = (struct label){ "feature", feat && feat->value.type == HT_T_STR ?
				                                          feat->value.s : NULL };
				if (!u || u->value.type != HT_T_BOOL)
					continue;
				put_sample(out, &offload, l, 3, u->value.b ? "1" : "0");
			} else {
				snprintf(name, sizeof(name), "nic.%s.underlay_mtu", p);
				a = number_or_nan(facts, name);
				snprintf(name, sizeof(name), "nic.%s.overlay_headroom", p);
				b = number_or_nan(facts, name);
				if (isnan(a + b))
					continue;
				snprintf(buf, sizeof(buf), "%.0f", a - b);
				put_sample(out, &fit, l, 1, buf);
			}
		}
	}
	{
		double d = number_or_nan(facts, sampled ? "softnet.dropped.delta" : "softnet.dropped");
		double p = number_or_nan(facts, sampled ? "softnet.processed.delta" : "softnet.processed");

		if (!isnan(d + p)) {
			snprintf(buf, sizeof(buf), "%.6g", d > 0 ? d / (d + p) : 0.0);
			put_sample(out, &softnet, NULL, 0, buf);
		}
	}
	return ferror(out) ? -EIO : 0;
}

/* process.NAME.SUFFIX as an integer fact; false when absent or unavailable. */
static bool process_int(const struct ht_facts *facts, const char *name, const char *suffix,
                        int64_t *out)
{
	char fact[160];
	const struct ht_fact *f;

	snprintf(fact, sizeof(fact), "process.%s.%s", name, suffix);
	f = ht_facts_get(facts, fact);
	if (!f || f->value.type != HT_T_INT)
		return false;
	*out = f->value.i;
	return true;
}

int cli_metrics_processes(const struct ht_facts *facts, FILE *out)
{
	struct family open_files = FAMILY("hosttune_process_open_files",
		                     "Descriptors the process has open (/proc/PID/fd): of a name's processes, the one with the largest share of its limit.");
	struct family limit = FAMILY("hosttune_process_open_files_limit",
		                "The process's soft open-file limit, RLIMIT_NOFILE (/proc/PID/limits).");
	const struct ht_fact *list = ht_facts_get(facts, "process.list");
	_cleanup_free_ char *names = NULL;

	/* Only when a rule read the processes: /proc is not walked for the metrics alone. */
	if (!list || list->value.type != HT_T_STR)
		return 0;
	names = strdup(list->value.s);
	if (!names)
		return -ENOMEM;
	for (int pass = 0; pass < 2; pass++) {
		strcpy(names, list->value.s);
		for (char *save = NULL, *p = strtok_r(names, " ", &save); p;
		     p = strtok_r(NULL, " ", &save)) {
			char pid[32], buf[32];
			int64_t fds, nofile, id;
			/* The comm as the kernel names it; an older file's name as it is. */
			_cleanup_free_ char *comm = ht_name_unescape(p);
			struct label l[2] = { { "process", comm ? comm : p }, { "pid", NULL } };

			if (!comm && errno == ENOMEM)
				return -ENOMEM;
			if (!process_int(facts, p, "fds", &fds) ||
			    !process_int(facts, p, "nofile", &nofile))
				continue;
			if (process_int(facts, p, "pid", &id)) {
				snprintf(pid, sizeof(pid), "%" PRId64, id);
				l[1].value = pid;
			}
			snprintf(buf, sizeof(buf), "%" PRId64, pass == 0 ? fds : nofile);
			put_sample(out, pass == 0 ? &open_files : &limit, l, ARRAY_SIZE(l), buf);
		}
	}
	return ferror(out) ? -EIO : 0;
}

/* ---- several hosts in one document, each series with its host label ---- */

/* The run's families: one sample for the run, not one a host. */
static bool run_family(const char *name, size_t len)
{
	static const char *const run[] = { "hosttune_build_info",
		                           "hosttune_last_run_timestamp_seconds",
		                           "hosttune_profile_info" };

	for (size_t i = 0; i < ARRAY_SIZE(run); i++)
		if (strlen(run[i]) == len && strncmp(name, run[i], len) == 0)
			return true;
	return false;
}

/* The metric name a line of cli_metrics_write() is about: "# HELP NAME ...", "NAME{...} V". */
static const char *line_family(const char *line, size_t *len)
{
	if (strncmp(line, "# HELP ", 7) == 0 || strncmp(line, "# TYPE ", 7) == 0)
		line += 7;
	*len = strcspn(line, "{ \n");
	return line;
}

/*
 * Writes the samples of family @name (length @len) from @text, one host's
 * document, with host="@label" first among the labels (none when NULL),
 * and its HELP and TYPE lines first when @head.
 */
static void put_family_from(FILE *out, const char *text, const char *name, size_t len,
                            const char *label, bool head)
{
	for (const char *line = text; *line;) {
		size_t ll = strcspn(line, "\n"), fl;
		const char *fam = line_family(line, &fl);

		if (fl == len && strncmp(fam, name, len) == 0) {
			if (line[0] == '#') {
				if (head)
					fprintf(out, "%.*s\n", (int)ll, line);
			} else if (!label) {
				fprintf(out, "%.*s\n", (int)ll, line);
			} else {
				const char *rest = line + len;

				fprintf(out, "%.*s{host=", (int)len, line);
				put_label_value(out, label);
				if (*rest == '{')
					fprintf(out, ",%.*s\n", (int)(ll - len - 1), rest + 1);
				else
					fprintf(out, "}%.*s\n", (int)(ll - len), rest);
			}
		}
		line += ll + (line[ll] == '\n');
	}
}

int cli_metrics_write_hosts(const struct cli_metrics_host *hosts, size_t n, int64_t now,
                            FILE *out)
{
	char **text = calloc(n ? n : 1, sizeof(*text));
	int r = 0;

	if (!text)
		return -ENOMEM;
	for (size_t i = 0; i < n && r >= 0; i++) {
		size_t len = 0;
		FILE *m = open_memstream(&text[i], &len);

		if (!m) {
			r = -ENOMEM;
			break;
		}
		r = cli_metrics_write(hosts[i].findings, hosts[i].rs, now, m);
		if (fclose(m) != 0 && r >= 0)
			r = -ENOMEM;
	}
	/*
	 * Each family once, in the order the hosts' documents first name it
	 * (a host without nf_conntrack has no conntrack family): its HELP and
	 * TYPE, then every host's samples.
	 */
	for (size_t i = 0; i < n && r >= 0; i++)
		for (const char *line = text[i]; *line;) {
			size_t ll = strcspn(line, "\n"), fl;
			const char *fam = line_family(line, &fl);
			bool seen = false;

			/* A family is first named by its HELP line. */
			if (strncmp(line, "# HELP ", 7) == 0) {
				for (size_t j = 0; j < i && !seen; j++)
					for (const char *l2 = text[j]; *l2 && !seen;) {
						size_t l2l = strcspn(l2, "\n"), f2l;
						const char *f2 = line_family(l2, &f2l);

						seen = strncmp(l2, "# HELP ", 7) == 0 && f2l == fl &&
						       strncmp(f2, fam, fl) == 0;
						l2 += l2l + (l2[l2l] == '\n');
					}
				if (!seen && run_family(fam, fl)) {
					put_family_from(out, text[i], fam, fl, NULL, true);
				} else if (!seen) {
					for (size_t j = i; j < n; j++)
						put_family_from(out, text[j], fam, fl, hosts[j].label, j == i);
				}
			}
			line += ll + (line[ll] == '\n');
		}
	for (size_t i = 0; i < n; i++)
		free(text[i]);
	free(text);
	if (r < 0)
		return r;
	return ferror(out) ? -EIO : 0;
}

/* One host's metrics with its host label (--host-label): host.name, else the facts file's name. */
static int metrics_with_host(const struct options *o, const struct ht_findings *findings,
                             struct ht_ruleset *rs, struct ht_facts *facts)
{
	const struct ht_fact *fact;
	struct ht_error err = { "" };
	_cleanup_free_ char *label = NULL;
	struct cli_metrics_host h;
	int r = ht_facts_need(facts, "host.name", 0, &fact, &err);

	if (r < 0)
		return cli_fail(r, EXIT_COLLECT, "%s", err.msg[0] ? err.msg : strerror(-r));
	if (!(label = cli_host_label(facts, o->facts_file)))
		return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
	h = (struct cli_metrics_host){ .label = label, .findings = findings, .rs = rs };
	return cli_printed(cli_metrics_write_hosts(&h, 1, (int64_t)time(NULL), stdout));
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
	if (o->host_label)
		r = metrics_with_host(o, &findings, rs, facts);
	else
		r = cli_printed(cli_metrics_write(&findings, rs, (int64_t)time(NULL), stdout));
	/* Per peer, interface and process (one host: no host label on these). */
	if (r == 0)
		r = cli_printed(cli_metrics_peers(facts, stdout));
	if (r == 0)
		r = cli_printed(cli_metrics_nics(facts, stdout));
	if (r == 0)
		r = cli_printed(cli_metrics_processes(facts, stdout));
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
