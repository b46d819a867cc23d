/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hosttune audit of a fleet: several --facts files (or a directory of them)
 * audited in one run, each host with its own rules, facts and findings, and
 * reported together: one text table with a host column, one JSON document
 * with a host per finding, Prometheus series with a host label.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/report.h"
#include "engine/facts.h"
#include "engine/rules.h"
#include "persist/persist.h"
#include "shared/util.h"

/* One host of the fleet: its facts file, the name it is shown by, and its audit. */
struct fleet_host {
	const char *file;    /* points into argv or into the fleet's names */
	char *label;
	char *about;         /* "kernel ..., collected ... by hosttune ..."; NULL when the file says none */
	char origin[4200];
	struct ht_ruleset *rs;
	struct ht_facts *facts;
	struct ht_findings findings;
	struct ht_plan plan;
};

struct fleet {
	struct fleet_host *hosts;
	size_t n;
	char **names; /* the files found in directories, owned */
	size_t nnames;
};

static void fleet_free(struct fleet *fl)
{
	for (size_t i = 0; i < fl->n; i++) {
		struct fleet_host *h = &fl->hosts[i];

		free(h->label);
		free(h->about);
		ht_plan_free(&h->plan);
		ht_findings_free(&h->findings);
		ht_facts_free(h->facts);
		ht_ruleset_free(h->rs);
	}
	free(fl->hosts);
	for (size_t i = 0; i < fl->nnames; i++)
		free(fl->names[i]);
	free(fl->names);
}

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool cli_fleet_wanted(const struct options *o)
{
	return o->nfacts > 1 || (o->nfacts == 1 && is_dir(o->facts_files[0]));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds @file to the fleet unless it is there already (a file named twice is one host). */
static int add_host(struct fleet *fl, const char *file)
{
	struct fleet_host *v;

	for (size_t i = 0; i < fl->n; i++)
		if (strcmp(fl->hosts[i].file, file) == 0)
			return 0;
	v = reallocarray(fl->hosts, fl->n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	fl->hosts = v;
	fl->hosts[fl->n++] = (struct fleet_host){ .file = file };
	return 0;
}

/*
 * The *.facts files of directory @dir (not those starting with '.', nor
 * subdirectories), in name order. Returns 0, EXIT_USAGE after one line
 * (unreadable, or no facts file in it) or EXIT_COLLECT (out of memory).
 */
static int add_dir(struct fleet *fl, const char *dir)
{
	_cleanup_(closedirp) DIR *d = opendir(dir);
	size_t first = fl->nnames;
	struct dirent *de;

	if (!d)
		return cli_fail(-errno, EXIT_USAGE, "--facts %s: %s", dir, strerror(errno));
	while ((errno = 0, de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char *path, **v;
		struct stat st;

		if (de->d_name[0] == '.' || len <= 6 || strcmp(de->d_name + len - 6, ".facts") != 0)
			continue;
		if (asprintf(&path, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
		             de->d_name) < 0)
			return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(path);
			continue;
		}
		v = reallocarray(fl->names, fl->nnames + 1, sizeof(*v));
		if (!v) {
			free(path);
			return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
		}
		fl->names = v;
		fl->names[fl->nnames++] = path;
	}
	if (errno)
		return cli_fail(-errno, EXIT_USAGE, "--facts %s: %s", dir, strerror(errno));
	if (fl->nnames == first) {
		cli_error("--facts %s: no *.facts file in this directory\n", dir);
		return EXIT_USAGE;
	}
	qsort(fl->names + first, fl->nnames - first, sizeof(*fl->names), cmp_str);
	for (size_t i = first; i < fl->nnames; i++)
		if (add_host(fl, fl->names[i]) < 0)
			return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
	return 0;
}

/* A string fact's value, or NULL when @f does not hold it (an older facts file). */
static const char *str_fact(const struct ht_facts *f, const char *name)
{
	const struct ht_fact *fact = ht_facts_get(f, name);

	return fact && fact->value.type == HT_T_STR ? fact->value.s : NULL;
}

/*
 * Names for the hosts: host.name, else the file's name; hosts that share a
 * name (clones still called localhost) get their file's name after it,
 * "localhost (web3)", so that each host's rows and series are its own.
 */
static int name_hosts(struct fleet *fl)
{
	for (size_t i = 0; i < fl->n; i++) {
		struct fleet_host *h = &fl->hosts[i];
		const char *kernel = str_fact(h->facts, "kernel.release");
		const char *at = str_fact(h->facts, "host.collected_at");
		const char *ver = str_fact(h->facts, "hosttune.version");

		if (!(h->label = cli_host_label(h->facts, h->file)))
			return -ENOMEM;
		if ((kernel || at || ver) &&
		    asprintf(&h->about, "%s%s%s%s%s%s", kernel ? "kernel " : "", kernel ? kernel : "",
		             at ? (kernel ? ", collected " : "collected ") : "", at ? at : "",
		             ver ? (kernel || at ? " by hosttune " : "hosttune ") : "",
		             ver ? ver : "") < 0) {
			h->about = NULL;
			return -ENOMEM;
		}
	}
	/* Which names are shared, before any is changed; then the file's name after those. */
	_cleanup_free_ bool *shared = calloc(fl->n ? fl->n : 1, sizeof(*shared));

	if (!shared)
		return -ENOMEM;
	for (size_t i = 0; i < fl->n; i++)
		for (size_t j = 0; j < fl->n && !shared[i]; j++)
			shared[i] = j != i && strcmp(fl->hosts[i].label, fl->hosts[j].label) == 0;
	for (size_t i = 0; i < fl->n; i++) {
		_cleanup_free_ char *base = NULL;
		char *s;

		if (!shared[i])
			continue;
		if (!(base = cli_host_label(NULL, fl->hosts[i].file)) ||
		    asprintf(&s, "%s (%s)", fl->hosts[i].label, base) < 0)
			return -ENOMEM;
		free(fl->hosts[i].label);
		fl->hosts[i].label = s;
	}
	return 0;
}

/*
 * Every host's audit: the facts files of --facts (files and directories),
 * each evaluated as audit --facts FILE would (cli_evaluate()), with the
 * fixes of a plan against no disk. Returns 0, or the exit status after the
 * first failure's message (a bad facts file: EXIT_USAGE naming its line).
 */
static int fleet_load(const struct options *o, struct fleet *fl)
{
	int r;

	for (size_t i = 0; i < o->nfacts; i++) {
		if (is_dir(o->facts_files[i]))
			r = add_dir(fl, o->facts_files[i]);
		else
			r = add_host(fl, o->facts_files[i]) < 0 ?
			    cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory") : 0;
		if (r)
			return r;
	}
	for (size_t i = 0; i < fl->n; i++) {
		struct fleet_host *h = &fl->hosts[i];
		struct options ho = *o;
		struct ht_error err = { "" };

		ho.facts_file = h->file;
		ho.facts_files = &h->file;
		ho.nfacts = 1;
		r = cli_evaluate(&ho, &h->rs, &h->facts, &h->findings);
		if (r)
			return r;
		r = ht_plan_build(&h->findings, h->facts, NULL, ht_ruleset_profile(h->rs), NULL,
		                  HT_PLAN_NO_DISK, &h->plan, &err);
		if (r < 0)
			return cli_fail(r, EXIT_COLLECT, "%s: %s", h->file,
			                err.msg[0] ? err.msg : strerror(-r));
		snprintf(h->origin, sizeof(h->origin), "facts file %s", h->file);
	}
	if (name_hosts(fl) < 0)
		return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
	return 0;
}

/* The rank of a JSON finding's "severity" in the report's order: critical 0 ... n/a 4. */
static int sev_rank(struct json_object *finding)
{
	static const char *const order[] = { "critical", "warning", "info", "ok" };
	struct json_object *s;
	const char *v;

	if (!json_object_object_get_ex(finding, "severity", &s) || !(v = json_object_get_string(s)))
		return 4;
	for (size_t i = 0; i < ARRAY_SIZE(order); i++)
		if (strcmp(v, order[i]) == 0)
			return (int)i;
	return 4;
}

static struct json_object *jstr_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/*
 * The fleet as one JSON document: each host's audit document
 * (ht_report_json(), so that every key a finding has there it has here),
 * its findings given a "host" first and merged worst first (hosts in order
 * within a severity); "hosts" lists each host with its own summary; the
 * summary counts every host's findings. NULL on ENOMEM.
 */
static struct json_object *fleet_json(const struct fleet *fl, const struct options *o)
{
	struct json_object *root = json_object_new_object(), *hosts = json_object_new_array();
	struct json_object *all = json_object_new_array(), *sum = json_object_new_object();
	struct json_object **docs = calloc(fl->n ? fl->n : 1, sizeof(*docs));
	int64_t counts[5] = { 0 };
	static const char *const keys[] = { "critical", "warning", "info", "ok", "n/a" };
	int worst = 4;

	if (!root || !hosts || !all || !sum || !docs)
		goto oom;
	for (size_t i = 0; i < fl->n; i++) {
		const struct fleet_host *h = &fl->hosts[i];
		struct ht_report_info info = { .origin = h->origin, .rules = h->rs, .values = NULL,
			                       .fixes = h->plan.fixes, .color = false,
			                       .width = o->width };
		struct json_object *e = json_object_new_object(), *s;

		if (!e || !(docs[i] = ht_report_json(&h->findings, &info))) {
			json_object_put(e);
			goto oom;
		}
		json_object_array_add(hosts, e);
		json_object_object_add(e, "host", json_object_new_string(h->label));
		json_object_object_add(e, "origin", json_object_new_string(h->origin));
		json_object_object_add(e, "name", jstr_or_null(str_fact(h->facts, "host.name")));
		json_object_object_add(e, "kernel", jstr_or_null(str_fact(h->facts, "kernel.release")));
		json_object_object_add(e, "collected_at",
		                       jstr_or_null(str_fact(h->facts, "host.collected_at")));
		json_object_object_add(e, "hosttune_version",
		                       jstr_or_null(str_fact(h->facts, "hosttune.version")));
		if (json_object_object_get_ex(docs[i], "summary", &s))
			json_object_object_add(e, "summary", json_object_get(s));
	}
	json_object_object_add(root, "profile", jstr_or_null(ht_ruleset_profile(fl->hosts[0].rs)));
	json_object_object_add(root, "origin", json_object_new_string("facts files"));
	{
		struct json_object *wl;

		if (json_object_object_get_ex(docs[0], "workload", &wl))
			json_object_object_add(root, "workload", json_object_get(wl));
	}
	json_object_object_add(root, "hosts", hosts);
	hosts = NULL;
	/* Worst first across the fleet; within a severity, host by host in their order. */
	for (int rank = 0; rank < 5; rank++)
		for (size_t i = 0; i < fl->n; i++) {
			struct json_object *arr;

			if (!json_object_object_get_ex(docs[i], "findings", &arr))
				continue;
			for (size_t k = 0; k < json_object_array_length(arr); k++) {
				struct json_object *fi = json_object_array_get_idx(arr, k);
				struct json_object *o2;

				if (sev_rank(fi) != rank)
					continue;
				if (!(o2 = json_object_new_object()))
					goto oom;
				json_object_array_add(all, o2);
				json_object_object_add(o2, "host",
				                       json_object_new_string(fl->hosts[i].label));
				json_object_object_foreach(fi, key, val)
					json_object_object_add(o2, key, json_object_get(val));
				counts[rank]++;
				if (rank < worst && rank < 4)
					worst = rank;
			}
		}
	json_object_object_add(root, "findings", all);
	all = NULL;
	for (int rank = 3; rank >= 0; rank--)
		json_object_object_add(sum, keys[rank], json_object_new_int64(counts[rank]));
	json_object_object_add(sum, "n/a", json_object_new_int64(counts[4]));
	json_object_object_add(sum, "worst", json_object_new_string(worst < 4 ? keys[worst] : "ok"));
	json_object_object_add(root, "summary", sum);
	for (size_t i = 0; i < fl->n; i++)
		json_object_put(docs[i]);
	free(docs);
	return root;
oom:
	for (size_t i = 0; docs && i < fl->n; i++)
		json_object_put(docs[i]);
	free(docs);
	json_object_put(root);
	json_object_put(hosts);
	json_object_put(all);
	json_object_put(sum);
	return NULL;
}

int cli_fleet_audit(const struct options *o)
{
	struct fleet fl = { 0 };
	enum ht_severity worst = HT_SEV_OK;
	int r = fleet_load(o, &fl);

	if (r)
		goto out;
	for (size_t i = 0; i < fl.n; i++) {
		enum ht_severity w = ht_findings_worst(&fl.hosts[i].findings);

		if (w > worst)
			worst = w;
	}
	if (o->prometheus) {
		_cleanup_free_ struct cli_metrics_host *mh = calloc(fl.n, sizeof(*mh));

		if (!mh) {
			r = cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < fl.n; i++)
			mh[i] = (struct cli_metrics_host){ .label = fl.hosts[i].label,
				                           .findings = &fl.hosts[i].findings,
				                           .rs = fl.hosts[i].rs };
		r = cli_printed(cli_metrics_write_hosts(mh, fl.n, (int64_t)time(NULL), stdout));
	} else if (o->json) {
		r = cli_print_json(fleet_json(&fl, o));
	} else {
		_cleanup_free_ struct ht_report_host *rh = calloc(fl.n, sizeof(*rh));
		struct ht_report_info info = { .rules = fl.hosts[0].rs, .color = o->color,
			                       .width = o->width, .wrap_all = o->terminal,
			                       .detail = (enum ht_report_detail)o->detail,
			                       .priority = cli_journal_priority };

		if (!rh) {
			r = cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < fl.n; i++)
			rh[i] = (struct ht_report_host){ .label = fl.hosts[i].label,
				                         .origin = fl.hosts[i].origin,
				                         .about = fl.hosts[i].about,
				                         .findings = &fl.hosts[i].findings,
				                         .fixes = fl.hosts[i].plan.fixes };
		r = cli_printed(ht_report_fleet_text(rh, fl.n, &info, stdout));
	}
	if (r == 0 && fflush(stdout) != 0)
		r = cli_printed(-EIO);
	if (r == 0 && worst >= o->fail_on)
		r = EXIT_FINDINGS;
out:
	fleet_free(&fl);
	return r;
}
